"""Reopen: a supervisor puts a finished item back to waiting with the queue's on_reopen values; refused with
a reason that says what to do when the item is not finished, or the queue does not say how."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import sqlalchemy as sa

from tests import support
from workbench import demo
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


class _Interleaved:
    """A Database whose write transactions run `between` once, just before their first UPDATE: what
    another session commits between a supervisor's read of a row and the statement that changes it."""

    def __init__(self, db: Any, between: Callable[[sa.Connection], None]) -> None:
        self._db, self._between, self.ran = db, between, False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)

    def write(self, fn: Callable[[Any], Any]) -> Any:
        return self._db.write(lambda conn: fn(_Spy(conn, self)))


class _Spy:
    def __init__(self, conn: sa.Connection, owner: _Interleaved) -> None:
        self._conn, self._owner = conn, owner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)

    def execute(self, stmt: Any, *args: Any, **kw: Any) -> Any:
        if isinstance(stmt, sa.Update) and not self._owner.ran:
            self._owner.ran = True
            self._owner._between(self._conn)
        return self._conn.execute(stmt, *args, **kw)


def test_an_undo_between_the_read_and_the_write_is_never_overwritten(native_env: support.Env) -> None:
    """Hole 1 of issue 47: the reopen read the row (finished, free); the doer's undo gave it a fresh lock
    in on_claim's state (here outside `todo`); the reopen's UPDATE, without the table's lock rule (FREE),
    put the held row back to waiting under the new holder. The statement carries the rule now: refused,
    saying who holds it, and the undo's lock stays."""
    working = '[queues.cases.on_claim]\nstatus = "working"\n\n[queues.cases.on_release]\nstatus = "open"\n'
    text = demo.config_text("{url}").replace('[queues.cases.on_claim]\nstatus = "open"\n', working)
    assert working in text
    wb = native_env.open(native_env.load(text))
    demo.populate(wb.engine, cases=3, imports=1)
    wb.init()
    demo.attach_all(wb)
    q = wb.queue("cases")
    lock = q.claim_next("alice")[0].lock
    q.complete("alice", lock.key, lock.token, "resolved")
    undone: list[Any] = []

    def undo(conn: sa.Connection) -> None:
        if native_env.backend == "sqlite":
            # One writer at a time (BEGIN IMMEDIATE): the undo can only come in inside the reopen's transaction.
            undone.append(q._undo(conn, "alice", lock.key))
        else:
            undone.append(q.undo_complete("alice", lock.key))  # its own connection, committed

    supervisor = Supervision(q)
    supervisor.db = _Interleaved(supervisor.db, undo)  # type: ignore[assignment]
    with pytest.raises(errors.UsageError, match=f"cases {lock.key} is held by alice"):
        supervisor.reopen("sue", lock.key, "customer called back")
    assert undone and undone[0].lock.owner == "alice"
    row = native_env.row(wb, "cases", lock.key)
    assert models.EventKind.REOPEN not in [e.kind for e in q.history(lock.key)]
    if native_env.backend == "sqlite":  # the undo was part of the refused transaction
        assert (row["status"], row["wb_locked_by"]) == ("resolved", None)
        return
    # The undo's lock and state survive: alice works on and completes it.
    assert (row["status"], row["wb_locked_by"], row["wb_lock_token"]) == ("working", "alice", undone[0].lock.token)
    assert q.complete("alice", lock.key, undone[0].lock.token, "waiting").outcome == "waiting"
