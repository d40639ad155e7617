"""A Save hands back the audit row it wrote, as a read of the trail gives it: a window adds it to the item's log
it shows instead of reading the log again after every Save (issue 51: one transaction per Save, not two)."""

from __future__ import annotations

import dataclasses
import datetime as dt

from tests import support
from workbench import services
from workbench.core import models


def test_a_save_says_the_audit_row_it_wrote(native_env: support.Env) -> None:
    wb = native_env.demo(case_rows=4)
    op = services.Operator(wb, "alice")
    claim = op.next_item("cases")
    first = op.save_recorded(claim.lock, {"resolution": "first"})
    again = op.save_recorded(first.lock, {"resolution": "second", "time_spent_min": 12})
    unchanged = op.save_recorded(again.lock, {})
    log = op.item_log("cases", claim.lock.key)
    assert [e.kind for e in log.events] == [models.EventKind.CLAIM, models.EventKind.SAVE, models.EventKind.SAVE]
    for said, read in zip([first.event, again.event], log.events[1:], strict=True):
        assert said is not None
        # All as read, but its number (not read back) and its time: the lock's clock reading in the same transaction.
        assert dataclasses.replace(said, id=read.id, at=read.at) == read
        assert abs(said.at - read.at) < dt.timedelta(seconds=1) and said.at.utcoffset() == dt.timedelta(0)
    assert again.event is not None and again.event.detail == {
        "columns": ["resolution", "time_spent_min"],
        "changes": {"resolution": ["first", "second"], "time_spent_min": [None, 12]},
    }
    assert unchanged.event is None  # nothing written: nothing to add
    # The log a window holds, with the Save added, is the log read after it.
    before = dataclasses.replace(log, events=log.events[:2])
    assert before.with_event(again.event).as_imported() == log.as_imported()
