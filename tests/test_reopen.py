"""Reopen: a supervisor puts a finished item back to waiting with the queue's on_reopen values; refused with
a reason that says what to do when the item is not finished, or the queue does not say how."""

from __future__ import annotations

import pytest

from tests import support
from workbench.core import errors, models
from workbench.db import permissions
from workbench.db.supervision import Supervision


def test_a_completed_item_waits_again_and_is_served(native_env: support.Env) -> None:
    wb = native_env.demo(case_rows=2, import_rows=2)
    q = wb.queue("cases")
    lock = q.claim_next("alice")[0].lock
    q.complete("alice", lock.key, lock.token, "resolved", {"resolution": "rebooted"})
    Supervision(q).reopen("sue", lock.key, "  customer says it still fails ")
    row = native_env.row(wb, "cases", lock.key)
    assert (row["status"], row["resolution"], row["wb_locked_by"]) == ("open", "rebooted", None)
    event = q.history(lock.key)[-1]
    assert (event.kind, event.actor, event.reason) == (models.EventKind.REOPEN, "sue", "customer says it still fails")
    assert lock.key in [c.lock.key for c in q.claim_next("bob", 2)]
    # The import queue's reopen also clears who checked it and when.
    imports = wb.queue("imports")
    line = imports.claim_next("alice")[0].lock
    imports.complete("alice", line.key, line.token, "verified")
    assert native_env.row(wb, "imports", line.key)["checked_by"] == "alice"
    Supervision(imports).reopen("sue", line.key, "amount was wrong")
    checked = native_env.row(wb, "imports", line.key)
    assert (checked["check_status"], checked["checked_by"], checked["checked_at"]) == ("pending", None, None)


def test_refused_unless_finished_with_a_reason_by_a_supervisor(native_env: support.Env) -> None:
    wb = native_env.demo(case_rows=3, import_rows=1)
    q = wb.queue("cases")
    waiting = q.open_items(1)[0]["case_id"]
    with pytest.raises(errors.UsageError, match="waiting already"):
        Supervision(q).reopen("sue", waiting, "why not")
    held = q.claim_next("alice")[0].lock
    with pytest.raises(errors.UsageError, match="held by alice"):
        Supervision(q).reopen("sue", held.key, "why not")
    q.complete("alice", held.key, held.token, "resolved")
    with pytest.raises(errors.UsageError, match="needs a reason"):
        Supervision(q).reopen("sue", held.key, " ")
    with pytest.raises(errors.InvalidValue, match="no item"):
        Supervision(q).reopen("sue", 999_999, "gone")
    with wb.engine.begin() as conn:
        permissions.grant(conn, None, "root", "sue", "supervisor")
    with pytest.raises(errors.NotPermitted):
        Supervision(q).reopen("bob", held.key, "not a supervisor")
    assert native_env.row(wb, "cases", held.key)["status"] == "resolved"
    unset = native_env.open(native_env.demo_config({"cases": {"on_reopen": ()}})).queue("cases")
    with pytest.raises(errors.UsageError, match=r"on_reopen\]"):
        Supervision(unset).reopen("sue", held.key, "no way back")
    Supervision(q).reopen("sue", held.key, "by the supervisor")
    assert [e.kind for e in q.history(held.key)][-1] == models.EventKind.REOPEN
