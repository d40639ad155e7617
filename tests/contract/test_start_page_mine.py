"""The start page's count of the user's own locks (issue 51): every queue's in one statement, where it was one
statement per queue (through PgBouncer each is parsed and planned anew, and the start page shows after every
Complete), and the same number as the resume panel's list (Operator.mine) on every backend and lock shape."""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

import sqlalchemy as sa

from tests import support
from tests.contract import test_lock_table, test_shapes
from workbench import services
from workbench.config import model
from workbench.services import door


def _selects(op: services.Operator) -> list[str]:
    """The SELECT statements the operator's engine runs from now on (not the transactions' own BEGIN and SET)."""
    seen: list[str] = []

    @sa.event.listens_for(door.engine(op.database).engine, "before_cursor_execute")
    def _seen(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if statement.lstrip().lower().startswith(("select", "with")):
            seen.append(statement)

    return seen


def _counts(op: services.Operator) -> dict[str, int]:
    return {c.queue: c.mine for c in op.queue_counts()}


def test_the_own_locks_of_every_queue_are_counted_in_one_statement(native_env: support.Env) -> None:
    env = native_env
    env.demo(case_rows=10, import_rows=6)
    # The waiting figures counted for an hour: what the start page reads again is the own locks.
    config = env.demo_config()
    op = services.Operator(env.open(dataclasses.replace(config, app=model.AppConfig(counts_every=3600))), "alice")
    assert _counts(op) == {"cases": 0, "imports": 0, "imports_review": 0}  # the waiting figures counted here
    seen = _selects(op)
    assert _counts(op) == {"cases": 0, "imports": 0, "imports_review": 0}
    assert len(seen) == 1, seen  # 3 before (one per queue)
    first, second = op.next_item("cases"), op.next_item("cases")
    op.next_item("imports")
    seen.clear()
    assert _counts(op) == {"cases": 2, "imports": 1, "imports_review": 0}
    # Where the user's name holds a lock, that queue's locks are read as the resume panel reads them (the trail
    # says which workbench took): one statement for all, and those queues' own.
    assert len(seen) == 1 + (1 + 1) + (1 + 1), seen  # each: its locks, and the trail asked for all of them at once
    assert {q: len(op.mine(q)) for q in op.queues} == _counts(op)
    op.complete(first.lock)
    op.release(second.lock)
    assert _counts(op)["cases"] == 0


def test_a_lock_another_program_holds_under_the_users_name_is_not_counted(native_env: support.Env) -> None:
    env = native_env
    wb = test_shapes._legacy(env)
    t = sa.table("legacy_orders", sa.column("order_no"), sa.column("lock_user"), sa.column("lock_time", sa.DateTime))
    with env.engine.begin() as conn:  # alice's old program locks SO-00003 under her login
        now = dt.datetime.now(dt.UTC).replace(tzinfo=None, microsecond=0)
        conn.execute(sa.update(t).where(t.c.order_no == "SO-00003").values(lock_user="alice", lock_time=now))
    op = services.Operator(wb, "alice")
    assert _counts(op) == {"orders": 0}  # not hers in workbench (Operator.mine says so too)
    op.next_item("orders")
    assert _counts(op) == {"orders": 1} == {"orders": len(op.mine("orders"))}


def test_the_lock_tables_own_locks_are_counted(native_env: support.Env) -> None:
    wb = test_lock_table._tickets(native_env, rows=5)
    op = services.Operator(wb, "alice")
    assert _counts(op) == {"tickets": 0}
    op.next_item("tickets")
    op.next_item("tickets")
    assert _counts(op) == {"tickets": 2} == {"tickets": len(op.mine("tickets"))}
    assert services.Operator(wb, "bob").queue_counts()[0].mine == 0
