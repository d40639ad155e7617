"""PostgreSQL: the claim of the next item as the connection's own function (db/claims/pg_function.py)."""

from __future__ import annotations

import dataclasses
import threading
import time
import uuid

import pytest
import sqlalchemy as sa

from tests import support
from workbench.core import errors
from workbench.db import service

pytestmark = pytest.mark.parametrize("backend", ["postgresql"])

_OWN_FUNCTIONS = (
    "SELECT count(*) FROM pg_proc WHERE starts_with(proname::text, 'wb_claim_') AND pronamespace = pg_my_temp_schema()"
)


def _own_functions(wb: service.Workbench) -> int:
    row = wb.db.held.get().dbapi.execute(_OWN_FUNCTIONS).fetchone()
    return int(row[0])


def test_next_item_and_then_next_run_as_functions_of_the_connections_own(native_env: support.Env) -> None:
    wb = native_env.demo()
    q = wb.queue("cases")
    first = q.claim_next("ann")[0]
    assert _own_functions(wb) == 1
    done = q.complete("ann", first.lock.key, first.lock.token, then_next=True)
    assert done.next is not None and _own_functions(wb) == 2
    with wb.engine.connect() as other:  # temporary: no other session sees them, nothing stays behind
        everywhere = "SELECT count(*) FROM pg_proc WHERE starts_with(proname::text, 'wb_claim_')"
        assert other.exec_driver_sql(everywhere).scalar() == 2
        assert other.exec_driver_sql(_OWN_FUNCTIONS).scalar() == 0


def test_a_session_that_dropped_its_temporary_objects_makes_the_function_again(native_env: support.Env) -> None:
    wb = native_env.demo()
    q = wb.queue("cases")
    first = q.claim_next("ann")[0]
    connection = wb.db.held.get().dbapi
    connection.execute("DISCARD TEMP")  # e.g. a pooler resetting the session; the prepared call stays
    assert _own_functions(wb) == 0
    second = q.claim_next("ann")[0]
    assert second.lock.key != first.lock.key and _own_functions(wb) == 1
    assert [e.kind.value for e in q.history(second.lock.key)] == ["claim"]


def test_a_login_without_temporary_objects_claims_with_the_one_statement(native_env: support.Env) -> None:
    """The function is an optimisation: a login that may not create temporary objects claims,
    completes and takes the next item as before."""
    admin = native_env.demo(case_rows=12)
    login = f"wbt_notemp_{uuid.uuid4().hex[:8]}"
    database = sa.make_url(native_env.url).database
    with admin.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.exec_driver_sql(f'CREATE ROLE "{login}" LOGIN')
        conn.exec_driver_sql(f'REVOKE TEMPORARY ON DATABASE "{database}" FROM PUBLIC')
        conn.exec_driver_sql(f'GRANT ALL ON ALL TABLES IN SCHEMA public TO "{login}"')
        conn.exec_driver_sql(f'GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO "{login}"')
    try:
        url = sa.make_url(native_env.url).set(username=login).render_as_string(hide_password=False)
        config = native_env.demo_config()
        wb = native_env.open(dataclasses.replace(config, database=dataclasses.replace(config.database, url=url)))
        q = wb.queue("cases")
        first = q.claim_next("ann")[0]
        done = q.complete("ann", first.lock.key, first.lock.token, then_next=True)
        assert done.next is not None and _own_functions(wb) == 0
        assert native_env.row(admin, "cases", done.next.lock.key)["wb_locked_by"] == "ann"
        with pytest.raises(errors.LockLost):  # a fence that fails claims nothing
            q.complete("ann", done.next.lock.key, "0" * 32, then_next=True)
        assert [lock.key for lock in q.mine("ann")] == [done.next.lock.key]
        wb.close()
    finally:
        with admin.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.exec_driver_sql(f'DROP OWNED BY "{login}"')
            conn.exec_driver_sql(f'DROP ROLE "{login}"')


def test_the_claim_after_a_complete_that_waited_sees_the_queue_as_it_is_after_the_wait(native_env: support.Env) -> None:
    """The claim reads the queue with a snapshot taken after the Complete (one of its own), not the
    one the call started with: a case that arrived while the Complete waited for a row lock is the
    next item, where one statement would see an empty queue."""
    wb = native_env.demo(case_rows=6)
    q = wb.queue("cases")
    mine = q.claim_next("ann")[0]
    while True:  # everything else waiting goes to bob: the queue is empty
        try:
            q.claim_next("bob")
        except errors.NothingToClaim:
            break
    t = q.q.table
    arriving = {
        **native_env.row(wb, "cases", mine.lock.key),
        "case_id": 9000,
        "status": "new",
        "wb_locked_by": None,
        "wb_locked_at": None,
        "wb_lock_expires": None,
        "wb_lock_token": None,
    }
    result: dict[str, object] = {}
    with wb.engine.connect() as holder, wb.engine.connect() as watcher:
        tx = holder.begin()  # a reader holding a share lock on ann's row, as a report run FOR SHARE would
        holder.execute(sa.select(t.c.case_id).where(t.c.case_id == mine.lock.key).with_for_update(read=True))

        def complete() -> None:
            result["done"] = q.complete("ann", mine.lock.key, mine.lock.token, then_next=True)

        worker = threading.Thread(target=complete)
        worker.start()
        deadline = time.monotonic() + 10
        waiting = (
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()"
        )
        while watcher.exec_driver_sql(waiting).scalar() == 0:
            assert time.monotonic() < deadline, "the Complete never waited for the row lock"
            time.sleep(0.02)
            watcher.rollback()
        holder.execute(sa.insert(t).values(arriving))  # a case arrives while the Complete waits
        tx.commit()
        worker.join(10)
    done = result["done"]
    assert done.next is not None and done.next.lock.key == 9000  # type: ignore[attr-defined]
    assert native_env.row(wb, "cases", mine.lock.key)["wb_locked_by"] is None


def test_a_column_type_changed_under_a_running_workbench_falls_back_to_the_statement(native_env: support.Env) -> None:
    """The function returns the columns as reflected when workbench opened; a type changed since
    makes PostgreSQL refuse its result (the call rolled back as a whole), and the claim goes on as
    the one statement."""
    wb = native_env.demo()
    q = wb.queue("cases")
    first = q.claim_next("ann")[0]
    with wb.engine.begin() as conn:
        conn.exec_driver_sql("ALTER TABLE cases ALTER COLUMN resolution TYPE varchar(500)")
    second = q.claim_next("ann")[0]
    done = q.complete("ann", second.lock.key, second.lock.token, then_next=True)
    assert second.lock.key != first.lock.key and done.next is not None
    assert [e.kind.value for e in q.history(second.lock.key)] == ["claim", "complete"]
    assert sorted(lock.key for lock in q.mine("ann")) == sorted([first.lock.key, done.next.lock.key])


def test_a_stale_lock_the_claim_cannot_serve_leaves_the_free_items_to_it(native_env: support.Env) -> None:
    """A stale lock anywhere in the table makes the function run its branches before the free rows
    (ClaimMethod.served_first); on a finished item they find nothing, and the free items are served."""
    wb = native_env.demo()
    q = wb.queue("cases")
    with wb.engine.begin() as conn:
        finished = conn.exec_driver_sql(
            "UPDATE cases SET status = 'resolved', wb_locked_by = 'zed', wb_lock_token = 'old', "
            "wb_locked_at = timezone('UTC', now()) - interval '2 hours', "
            "wb_lock_expires = timezone('UTC', now()) - interval '1 hour' "
            "WHERE case_id = (SELECT min(case_id) FROM cases WHERE status IN ('new', 'open')) "
            "RETURNING case_id"
        ).scalar()
    first = q.claim_next("ann")[0]
    done = q.complete("ann", first.lock.key, first.lock.token, then_next=True)
    assert done.next is not None
    assert finished not in (first.lock.key, done.next.lock.key)
    assert [e.kind.value for e in q.history(done.next.lock.key)] == ["claim"]
    with wb.engine.connect() as conn:
        kept = conn.execute(sa.text("SELECT wb_locked_by FROM cases WHERE case_id = :k"), {"k": finished}).scalar()
    assert kept == "zed"  # not the claim's to take: its item is finished


def test_a_first_call_that_fails_rolls_its_function_back_and_the_next_makes_it_again(
    native_env: support.Env,
) -> None:
    """The first call on a connection makes the function, prepares the call and runs it in one
    transaction (fastpath's setup): a run that fails takes the function with it while the prepared
    call stays with the session, and the next call makes the function again instead of failing."""
    from workbench.db import fastpath

    wb = native_env.demo(case_rows=2)
    setup = "CREATE OR REPLACE FUNCTION pg_temp.wb_test_div(integer) RETURNS integer LANGUAGE sql AS 'SELECT 10 / $1'"
    call = sa.text("SELECT pg_temp.wb_test_div(:n) AS q").bindparams(sa.bindparam("n", type_=sa.Integer()))
    fast = fastpath.FastStatement(wb.db.held, call, {"n": 0}, setup=setup)
    with pytest.raises(errors.InvalidValue, match="division by zero"):
        fast.rows({"n": 0})
    assert fast.rows({"n": 5}) == [(2,)]
    assert fast.rows({"n": 2}) == [(5,)]
    # A setup the database refuses is said as such: nothing was prepared or run.
    refused = fastpath.FastStatement(wb.db.held, call, {"n": 0}, setup="CREATE FUNCTION nowhere.f() RETURNS int")
    with pytest.raises(fastpath.SetupRefused):
        refused.rows({"n": 1})
