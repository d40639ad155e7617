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


def test_yours_moves_with_the_windows_own_acts_and_is_read_again_on_anything_else(native_env: support.Env) -> None:
    """While its change feed is read, a window's start page after a Complete reads no own locks (issue 51): its own
    claims and ends move the figure, and the feed's word of anything else (a lock of the user's taken in another
    window, a supervisor's force-release) makes it read again."""
    env = native_env
    env.demo(case_rows=10, import_rows=6)
    config = env.demo_config()
    wb = env.open(dataclasses.replace(config, app=model.AppConfig(counts_every=3600)))
    op = services.Operator(wb, "alice")
    op.opening()  # the start page read, the feed started
    seen = _selects(op)
    begun: list[object] = []  # transactions begun (through a pooler each sends BEGIN and its settings)
    sa.event.listen(door.engine(op.database).engine, "begin", begun.append)
    claim = op.next_item("cases")
    done = op.complete(claim.lock, then_next=True)
    assert done.next is not None
    op.changes()  # the window's own claim, Complete and claim again, told back
    seen.clear()
    begun.clear()
    assert _counts(op) == {"cases": 1, "imports": 0, "imports_review": 0}
    # Nothing read, no transaction: the waiting figures counted for an hour, the own locks known.
    assert seen == [] and begun == []
    op.release(done.next.lock, "lunch")
    imported = op.next_item("imports")
    op.release(imported.lock)
    op.changes()
    seen.clear()
    assert _counts(op) == {"cases": 0, "imports": 0, "imports_review": 0} and seen == []
    # Another window of alice's takes one: this window's start page shows it once its feed has told it.
    other = services.Operator(env.open(config), "alice")
    elsewhere = other.next_item("cases")
    op.changes()
    assert _counts(op) == {"cases": 1, "imports": 0, "imports_review": 0} and seen, seen
    # A supervisor takes it away.
    services.Supervisor(env.open(config), "sam").force_release("cases", elsewhere.lock.key, "needed")
    op.changes()
    seen.clear()
    assert _counts(op)["cases"] == 0 and seen
    assert {q: len(op.mine(q)) for q in op.queues} == _counts(op)
    # A window whose feed is not read reads them every time.
    quiet = services.Operator(env.open(config), "alice")
    quiet_seen = _selects(quiet)
    _counts(quiet)
    quiet_seen.clear()
    _counts(quiet)
    assert len(quiet_seen) == 1, quiet_seen
