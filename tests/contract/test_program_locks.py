"""A lock another program holds is a lock: the board and a pick say whose (another program, under which
name, since when), workbench never takes it before its maximum age, and a supervisor releases it with a
reason that the trail keeps."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
import sqlalchemy as sa

from tests import support
from tests.contract import test_shapes
from workbench.core import errors
from workbench.services.supervisor import Supervisor

THREE = ["sqlite", "postgresql", "mariadb"]


def _board(wb: Any, queue: str) -> dict[Any, Any]:
    return {row.key: row for row in Supervisor(wb, "sue").board([queue]).rows}


def _lock(env: support.Env, table: str, key_column: str, key: Any, **values: Any) -> None:
    t = sa.Table(table, sa.MetaData(), autoload_with=env.engine)
    with env.engine.begin() as conn:
        conn.execute(sa.update(t).where(t.c[key_column] == key).values(values))


@pytest.mark.parametrize("backend", THREE)
def test_the_old_programs_locks_are_shown_as_its_own_and_released_with_a_reason(native_env: support.Env) -> None:
    env = native_env
    wb = test_shapes._legacy(env)  # SO-00002 is held by "legacyapp" (a name workbench does not know)
    q = wb.queue("orders")
    done = q.claim_next("alice")[0].lock  # SO-00001: worked in workbench, finished
    q.complete("alice", done.key, done.token)
    mine = q.claim_next("alice")[0].lock  # SO-00003: alice's own lock in workbench
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None, microsecond=0)
    # The old program, run by alice under her login, locks SO-00004, and SO-00001 once more (its own
    # rules put it back to work); the trail has a claim of SO-00001 by alice, of an earlier lock.
    _lock(env, "legacy_orders", "order_no", "SO-00004", lock_user="alice", lock_time=now)
    _lock(env, "legacy_orders", "order_no", "SO-00001", lock_user="alice", lock_time=now, processed=0)
    # Alice's own locks are the one workbench gave her, not the two written under her name; found in two
    # reads whatever their number (the locks, then the trail's newest claim of each), not one per lock.
    sent: list[str] = []

    def count(*args: Any) -> None:
        if args[2].lstrip().upper().startswith("SELECT"):  # not SQLite's BEGIN
            sent.append(args[2])

    sa.event.listen(wb.engine, "before_cursor_execute", count)
    try:
        assert [lock.key for lock in q.mine("alice")] == ["SO-00003"]
    finally:
        sa.event.remove(wb.engine, "before_cursor_execute", count)
    assert len(sent) <= 2, sent
    board = _board(wb, "orders")
    assert {key: row.foreign for key, row in board.items()} == {
        "SO-00001": True,
        "SO-00002": True,
        "SO-00003": False,
        "SO-00004": True,
    }
    assert board["SO-00001"].extensions == 0 and board["SO-00001"].last_activity == board["SO-00001"].locked_at
    assert board["SO-00002"].to_dict()["another_program"] is True
    # A pick says whose lock it is, and when workbench may take it.
    with pytest.raises(errors.NothingToClaim, match="SO-00002 is held by another program under the name legacyapp"):
        q.claim("bob", "SO-00002")
    with pytest.raises(errors.NothingToClaim, match="held by alice since"):
        q.claim("bob", mine.key)  # workbench's own lock: said as ever
    # Never taken before its maximum age: bob gets only the two free orders.
    assert sorted(c.lock.key for c in q.claim_next("bob", 5)) == ["SO-00005", "SO-00006"]
    # A supervisor releases it with a reason: the row is free for workbench, the trail says who and why.
    Supervisor(wb, "sue").force_release("orders", "SO-00002", "the old program crashed on it")
    row = env.row(wb, "orders", "SO-00002")
    assert (row["lock_user"], row["lock_time"]) == (None, None)
    (event,) = q.history("SO-00002")
    assert (event.kind.value, event.actor, event.reason) == (
        "force_release",
        "sue",
        "the old program crashed on it",
    )
    assert q.claim_next("bob")[0].lock.key == "SO-00002"
    assert not _board(wb, "orders")["SO-00002"].foreign


@pytest.mark.parametrize("backend", THREE)
def test_a_lock_written_with_a_token_workbench_never_gave_is_another_programs(native_env: support.Env) -> None:
    env = native_env
    wb = test_shapes._messages(env)
    q = wb.queue("invoices")
    mine = q.claim_next("alice")[0].lock
    stranger = next(k for k in (2, 4, 5, 7, 8) if k != mine.key)
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None, microsecond=0)
    _lock(env, "messages", "id", stranger, locked_by="importer", locked_at=now, lock_token="f" * 32, status="Active")
    board = _board(wb, "invoices")
    assert (board[mine.key].foreign, board[stranger].foreign) == (False, True)
    with pytest.raises(errors.NothingToClaim, match="held by another program under the name importer"):
        q.claim("bob", stranger)
