"""A queue's due column: overdue items counted on the database clock, and the time to due."""

from __future__ import annotations

import datetime as dt

import sqlalchemy as sa

from tests import support
from workbench.core import durations
from workbench.db import clock
from workbench.db.supervision import Supervision


def test_overdue_items_are_counted_on_the_database_clock(native_env: support.Env) -> None:
    wb = native_env.demo(case_rows=8, import_rows=1)
    q = wb.queue("cases")
    assert wb.config.queues["cases"].due == "due_at"  # the demo names it
    cases = q.q.table
    held = q.claim_next("alice")[0].lock.key
    done = q.claim_next("alice")[0].lock
    q.complete("alice", done.key, done.token)
    with wb.engine.connect() as conn:
        keys = list(
            conn.execute(
                sa.select(cases.c.case_id).where(cases.c.case_id.not_in([held, done.key])).order_by(cases.c.case_id)
            ).scalars()
        )
    hour = sa.literal(3600)
    with wb.engine.begin() as conn:
        conn.execute(sa.update(cases).values(due_at=None))
        past = clock.add_seconds(clock.db_now(), -hour)
        future = clock.add_seconds(clock.db_now(), hour)
        for key, due in ((keys[0], past), (keys[1], past), (keys[2], future), (held, past), (done.key, past)):
            conn.execute(sa.update(cases).where(cases.c.case_id == key).values(due_at=due))
    # Two waiting and one held are past due; the completed one and the future one are not.
    assert Supervision(q).health().overdue == 3
    assert q.count_overdue() == 3
    assert q.count_overdue(cap=1) == 2  # the start page's count stops at cap + 1
    imports = wb.queue("imports")
    assert Supervision(imports).health().overdue is None and imports.count_overdue() is None


def test_seconds_between_reads_what_the_databases_return() -> None:
    start = dt.datetime(2026, 11, 25, 12, 0, tzinfo=dt.UTC)
    assert durations.seconds_between(start, dt.datetime(2026, 11, 25, 13, 0)) == 3600  # naive: same clock, UTC
    assert durations.seconds_between(start, "2026-11-25 11:00:00.000000") == -3600  # SQLite's text
    assert durations.seconds_between(start, dt.date(2026, 11, 26)) == 12 * 3600  # a DATE: its midnight
    assert durations.seconds_between(start.replace(tzinfo=None), start + dt.timedelta(minutes=5)) == 300
    assert durations.seconds_between(start, None) is None
    assert durations.seconds_between(start, "not a time") is None
