"""Shapes 5 and 6: a row another program took out of the queue's work is never written under a lock taken
before (the row rule is the same for every shape: Save, Release, Complete and extend refused, exit 4)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import sqlalchemy as sa

from tests import support
from tests.contract import test_claim_id, test_lock_table
from workbench.core import errors

THREE = ["sqlite", "postgresql", "mariadb"]
GONE = "no longer in this queue's work to do"
# (queue, how the tables are made, the status column, the value another program writes, an outcome)
SHAPES = {
    "tickets": (test_lock_table._tickets, "vendor_tickets", "state", "spam", "solved"),
    "payments": (test_claim_id._tables, "payments", "status", "cancelled", "processed"),
    "exports": (test_claim_id._tables, "export_rows", "processed", 2, "done"),
}


def _row(env: support.Env, table: str, key: Any) -> dict[str, Any]:
    with env.engine.connect() as conn:
        t = sa.Table(table, sa.MetaData(), autoload_with=conn)
        return dict(conn.execute(sa.select(t).where(next(iter(t.primary_key.columns)) == key)).mappings().one())


@pytest.mark.parametrize("backend", THREE)
@pytest.mark.parametrize("queue", list(SHAPES))
def test_a_row_another_program_took_out_of_the_work_is_not_written(native_env: support.Env, queue: str) -> None:
    env = native_env
    make, table, status, theirs, outcome = SHAPES[queue]
    wb = make(env)
    q = wb.queue(queue)
    lock = q.claim_next("ann")[0].lock
    t = sa.Table(table, sa.MetaData(), autoload_with=env.engine)
    with env.engine.begin() as conn:  # the old program decides the row meanwhile (spam, cancelled)
        conn.execute(sa.update(t).where(t.c[q.q.key.name] == lock.key).values({status: theirs}))
    before = _row(env, table, lock.key)
    edit = "subject" if queue == "tickets" else "amount" if queue == "payments" else "payload"
    attempts: dict[str, Callable[[], Any]] = {
        # The window's periodic check says so first (the lock row itself is intact).
        "check": lambda: q.check("ann", lock.key, lock.token),
        "save": lambda: q.save("ann", lock.key, lock.token, {edit: "7" if queue == "payments" else "mine"}),
        "complete": lambda: q.complete("ann", lock.key, lock.token, outcome),
        "release": lambda: q.release("ann", lock.key, lock.token),
        "extend": lambda: q.extend("ann", lock.key, lock.token),
    }
    for doing, attempt in attempts.items():
        with pytest.raises(errors.LockLost, match=GONE) as caught:
            attempt()
        assert caught.value.cause == "other_queue", doing
    assert _row(env, table, lock.key) == before  # the other program's decision stands, nothing else written
    assert [e.kind.value for e in q.history(lock.key)] == ["claim"]


@pytest.mark.parametrize("backend", ["sqlite"])
def test_the_command_exits_4(native_env: support.Env, capsys: Any) -> None:
    env = native_env
    test_lock_table._tickets(env)
    config = env.write_config(test_lock_table.CONFIG)
    code, lock, _ = support.run_cli(capsys, "--config", config, "--user", "ann", "--json", "next", "tickets")
    assert code == 0
    with env.engine.begin() as conn:
        conn.execute(sa.text("UPDATE vendor_tickets SET state = 'spam' WHERE ticket_id = :k"), {"k": lock["key"]})
    args = ["--config", config, "--user", "ann", "complete", "tickets", lock["key"], "--token", lock["token"]]
    code, _, err = support.run_cli(capsys, *args, "--outcome", "solved")
    assert code == 4 and GONE in err


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_the_lock_check_states_the_row_rule_once(native_env: support.Env) -> None:
    """The window's lock check holds the row to the row rule once: where the lock lives in the row the fence
    carries it (BoundQueue.held_here), where it lives in a lock table the check adds it. Through PgBouncer each
    repeat is planned again at every check (issue 51). Either way a row taken out of the work is refused."""
    env = native_env
    sent: list[str] = []
    shapes = {
        "cases": (env.demo(), "cases", "status", "closed"),
        "tickets": (test_lock_table._tickets(env), *SHAPES["tickets"][1:4]),
    }
    for queue, (wb, table, status, theirs) in shapes.items():
        sa.event.listen(wb.engine, "before_cursor_execute", lambda _c, _cur, statement, *_a: sent.append(statement))
        q = wb.queue(queue)
        lock = q.claim_next("ann")[0].lock
        sent.clear()
        assert q.check("ann", lock.key, lock.token).owner == "ann"
        checked = [s for s in sent if "wb_now" in s]
        assert len(checked) == 1 and checked[0].count(f"{table}.{status} ") == 1, checked
        t = sa.Table(table, sa.MetaData(), autoload_with=env.engine)
        with env.engine.begin() as conn:
            conn.execute(sa.update(t).where(t.c[q.q.key.name] == lock.key).values({status: theirs}))
        with pytest.raises(errors.LockLost, match=GONE):
            q.check("ann", lock.key, lock.token)
