"""The PostgreSQL fast path (workbench.db.fastpath): prepared statements on libpq, per connection."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from tests import support
from workbench.core import errors

pytestmark = pytest.mark.parametrize("backend", ["postgresql"])


def _backend_pid(wb: object) -> int:
    return int(wb.db.held.get().dbapi.info.backend_pid)  # type: ignore[attr-defined]


def test_a_lost_connection_fails_one_call_and_the_next_one_reconnects(native_env: support.Env) -> None:
    wb = native_env.demo()
    q = wb.queue("cases")
    first = q.claim_next("ann")[0]
    q.complete("ann", first.lock.key, first.lock.token, "resolved")
    with wb.engine.connect() as admin:  # another connection ends the held one, as a server restart would
        admin.execute(sa.text("SELECT pg_terminate_backend(:pid)"), {"pid": _backend_pid(wb)})
    with pytest.raises(errors.DatabaseUnavailable):
        q.claim_next("ann")
    again = q.claim_next("ann")[0]  # a new connection, which prepares the statement again
    assert q.complete("ann", again.lock.key, again.lock.token, "resolved").outcome == "resolved"
    assert [e.kind.value for e in q.history(again.lock.key)] == ["claim", "complete"]


def test_statements_deallocated_on_the_connection_are_prepared_again(native_env: support.Env) -> None:
    wb = native_env.demo()
    q = wb.queue("cases")
    first = q.claim_next("ann")[0]
    q.complete("ann", first.lock.key, first.lock.token, "resolved")
    connection = wb.db.held.get().dbapi
    connection.execute("DEALLOCATE ALL")  # e.g. a DISCARD ALL on the session
    second = q.claim_next("ann")[0]
    prepared = connection.execute("SELECT count(*) FROM pg_prepared_statements WHERE name LIKE 'wb_fast_%'")
    assert prepared.fetchone() == (1,)  # the claim, prepared again on the same connection
    assert q.complete("ann", second.lock.key, second.lock.token, "resolved").outcome == "resolved"
    assert second.lock.key != first.lock.key


def test_values_are_sent_as_text_and_read_with_the_cast_types(native_env: support.Env) -> None:
    """A key of another Python type than the column (the API coerces it), a user with quotes and
    a percent sign: the statement text never changes, only the values."""
    wb = native_env.demo()
    q = wb.queue("cases")
    user = "o'brien 100%"
    claim = q.claim_next(user)[0]
    assert claim.lock.owner == user and claim.item["wb_locked_by"] == user
    done = q.complete(user, str(claim.lock.key), claim.lock.token, "resolved")
    assert done.key == claim.lock.key and done.at.tzinfo is not None
    with pytest.raises(errors.LockLost):
        q.complete(user, claim.lock.key, "0" * 32, "resolved")


def test_a_claims_clock_reading_is_its_lock_time(native_env: support.Env) -> None:
    wb = native_env.demo()
    q = wb.queue("cases")
    lock = q.claim_next("ann")[0].lock
    claimed = q.history(lock.key)[-1]  # the audit row's time is the statement's now() too
    assert lock.db_now == lock.locked_at == claimed.at
    assert (lock.expires_at - lock.locked_at).total_seconds() == q.config.lock_seconds


def test_a_lock_time_column_that_rounds_gets_the_clock_read_separately(native_env: support.Env) -> None:
    wb = native_env.demo()
    with wb.engine.begin() as conn:
        conn.exec_driver_sql("ALTER TABLE cases ALTER COLUMN wb_locked_at TYPE timestamp(0)")
    q = wb.queue("cases")
    lock = q.claim_next("ann")[0].lock
    assert lock.locked_at.microsecond == 0 and abs((lock.db_now - lock.locked_at).total_seconds()) <= 0.5
    assert lock.db_now == q.history(lock.key)[-1].at


def test_claims_keep_one_generic_plan_when_the_tables_statistics_change(native_env: support.Env) -> None:
    """A plan per connection, not one per call: after many locks appear and the table is analyzed,
    the plan cache would otherwise plan every claim afresh (live_locks_bench, 2-3x the claim's time)."""
    wb = native_env.demo(case_rows=300, import_rows=1, queues={"cases": {"max_locks_per_user": 0}})
    q = wb.queue("cases")
    for _ in range(8):
        done = q.claim_next("ann")[0]
        q.complete("ann", done.lock.key, done.lock.token, "resolved")
    held = q.claim_next("bob", 20)  # many live locks at once, then fresh statistics
    with wb.engine.begin() as conn:
        conn.execute(sa.text("ANALYZE cases"))
    for _ in range(8):
        done = q.claim_next("ann")[0]
        q.complete("ann", done.lock.key, done.lock.token, "resolved")
    plans = (
        wb.db.held.get()
        .dbapi.execute("SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name LIKE 'wb_fast_%'")
        .fetchall()
    )
    assert plans and all(custom == 0 for _generic, custom in plans) and max(g for g, _c in plans) >= 16, plans
    assert held
