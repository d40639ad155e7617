"""A Save (and a Complete with edits) in fewer statements where the database allows it (issue 51): on PostgreSQL
the guarded UPDATE reads the edited columns before it (the row locked) and returns the lock after it, so the
write is its UPDATE and its audit row, two statements where it was four (the before-read, the UPDATE, the lock
read, the audit row; through PgBouncer each parsed and planned anew). What it writes and records is the same
on every backend: the lock handed back, the audit row's changes, a lost lock refused with nothing written."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa

from tests import support
from workbench.core import errors, models


def _statements(engine: sa.Engine) -> list[str]:
    """The statements `engine` runs from now on (not the transactions' own BEGIN, SET and COMMIT)."""
    seen: list[str] = []

    @sa.event.listens_for(engine, "before_cursor_execute")
    def _seen(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if statement.lstrip().lower().startswith(("select", "with", "update", "insert", "delete")):
            seen.append(statement)

    return seen


def _expected(env: support.Env, before: int) -> int:
    """A write with edits: 2 statements on PostgreSQL (directly and through PgBouncer), `before` elsewhere."""
    return 2 if env.backend == "postgresql" else before


def test_a_save_is_its_update_and_its_audit_row(native_env: support.Env) -> None:
    env = native_env
    wb = env.demo(case_rows=6)
    q = wb.queue("cases")
    claim = q.claim_next("alice")[0]
    first = q.save("alice", claim.lock.key, claim.lock.token, {"resolution": "a"})  # the statements built
    seen = _statements(wb.engine)
    priority = claim.item["priority"] % 4 + 1  # another priority than the item's
    lock = q.save("alice", claim.lock.key, claim.lock.token, {"resolution": "b", "priority": priority})
    assert len(seen) == _expected(env, 4), seen
    assert (lock.key, lock.owner, lock.token) == (claim.lock.key, "alice", claim.lock.token)
    assert (lock.locked_at, lock.expires_at) == (first.locked_at, first.expires_at) and not lock.expired
    assert q.show(claim.lock.key).item["priority"] == priority
    saves = [e.detail for e in q.history(claim.lock.key) if e.kind is models.EventKind.SAVE]
    assert saves == [
        {"columns": ["resolution"], "changes": {"resolution": [None, "a"]}},
        {
            "columns": ["priority", "resolution"],
            "changes": {"priority": [claim.item["priority"], priority], "resolution": ["a", "b"]},
        },
    ]


def test_a_save_under_a_lost_lock_writes_nothing(native_env: support.Env) -> None:
    env = native_env
    wb = env.demo(case_rows=6)
    q = wb.queue("cases")
    claim = q.claim_next("alice")[0]
    q.save("alice", claim.lock.key, claim.lock.token, {"resolution": "a"})
    with pytest.raises(errors.LockLost):
        q.save("bob", claim.lock.key, claim.lock.token, {"resolution": "bob's"})  # not bob's lock
    with pytest.raises(errors.LockLost):
        q.save("alice", claim.lock.key, "0" * 32, {"resolution": "stale"})  # not her token
    q.release("alice", claim.lock.key, claim.lock.token, "lunch")
    with pytest.raises(errors.LockLost):
        q.save("alice", claim.lock.key, claim.lock.token, {"resolution": "after"})  # released
    assert q.show(claim.lock.key).item["resolution"] == "a"
    saves = [e for e in q.history(claim.lock.key) if e.kind is models.EventKind.SAVE]
    assert len(saves) == 1


def test_a_complete_with_edits_is_its_update_and_its_audit_row(native_env: support.Env) -> None:
    env = native_env
    wb = env.demo(case_rows=6)
    q = wb.queue("cases")
    warm, claim = q.claim_next("alice", 2)
    q.complete("alice", warm.lock.key, warm.lock.token, "resolved", edits={"resolution": "warm"})  # built
    seen = _statements(wb.engine)
    done = q.complete("alice", claim.lock.key, claim.lock.token, "resolved", edits={"resolution": "fixed"})
    assert len(seen) == _expected(env, 4), seen
    assert done.at is not None
    item = q.show(claim.lock.key)
    assert item.lock is None and item.item["resolution"] == "fixed" and item.state == "done:resolved"
    complete = [e for e in q.history(claim.lock.key) if e.kind is models.EventKind.COMPLETE]
    assert [(e.outcome, e.detail) for e in complete] == [
        ("resolved", {"columns": ["resolution"], "changes": {"resolution": [None, "fixed"]}})
    ]
