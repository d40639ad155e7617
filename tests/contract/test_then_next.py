"""Complete with then_next: the next item comes with the Complete, and never without it."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa

from tests import support
from tests.conftest import POOLED
from workbench.core import errors
from workbench.db import audit, batches
from workbench.db.supervision import Supervision


def _queue_order(wb) -> list[int]:
    t = wb.queue("cases").q.table
    with wb.engine.connect() as conn:
        return [
            r[0]
            for r in conn.execute(
                sa.select(t.c.case_id)
                .where(t.c.status.in_(("new", "open")), t.c.wb_locked_by.is_(None))
                .order_by(t.c.priority, t.c.opened_at, t.c.case_id)
            )
        ]


def test_the_next_item_comes_with_the_complete(env: support.Env) -> None:
    wb = env.demo()
    q = wb.queue("cases")
    first = q.claim_next("alice")[0]
    waiting = _queue_order(wb)
    done = q.complete("alice", first.lock.key, first.lock.token, then_next=True)
    assert done.key == first.lock.key and done.outcome == "resolved" and done.next is not None
    nxt = done.next
    if env.method == "native":
        assert nxt.lock.key == waiting[0]  # the queue's order, as a Next item gives it
    else:
        assert nxt.lock.key in waiting[:16]  # the portable method picks among the head of the queue
    assert nxt.lock.owner == "alice" and not nxt.resumed
    assert env.row(wb, "cases", first.lock.key)["status"] == "resolved"
    assert env.row(wb, "cases", first.lock.key)["wb_locked_by"] is None
    stored = env.row(wb, "cases", nxt.lock.key)
    assert stored["wb_locked_by"] == "alice" and stored["wb_lock_token"] == nxt.lock.token
    assert nxt.item["wb_lock_token"] == nxt.lock.token  # the row as read after its lock was written
    events = sorted((e["event"], e["item_key"], e["token"]) for e in env.audit(wb, "cases"))
    assert events == sorted(
        [
            ("claim", str(first.lock.key), audit.token_digest(first.lock.token)),
            ("complete", str(first.lock.key), audit.token_digest(first.lock.token)),
            ("claim", str(nxt.lock.key), audit.token_digest(nxt.lock.token)),
        ]
    )
    if env.backend == "postgresql" and env.method == "native":
        # One statement, one transaction: the claim's lock time is the Complete's database time.
        assert nxt.lock.locked_at == done.at
    assert [lock.key for lock in q.mine("alice")] == [nxt.lock.key]


def test_a_complete_refused_claims_nothing(env: support.Env) -> None:
    wb = env.demo()
    q = wb.queue("cases")
    claim = q.claim_next("alice")[0]
    Supervision(q).force_release("sam", claim.lock.key, "needed elsewhere")
    before = len(env.audit(wb, "cases"))
    with pytest.raises(errors.LockLost):
        q.complete("alice", claim.lock.key, claim.lock.token, then_next=True)
    assert q.mine("alice") == []
    assert len(env.audit(wb, "cases")) == before  # nothing completed, nothing claimed
    with pytest.raises(errors.LockLost):  # a token that never was: the same
        q.complete("alice", claim.lock.key, "0" * 32, then_next=True)
    assert q.mine("alice") == []


def test_the_last_complete_brings_no_next_item(env: support.Env) -> None:
    wb = env.demo(case_rows=3, queues={"cases": {"release_cooldown_seconds": 0}})
    q = wb.queue("cases")
    claim = q.claim_next("alice")[0]
    completed = []
    while claim is not None:
        done = q.complete("alice", claim.lock.key, claim.lock.token, then_next=True)
        completed.append(done.key)
        claim = done.next
    assert len(completed) == len(set(completed)) and len(completed) >= 2
    assert q.mine("alice") == []
    with pytest.raises(errors.NothingToClaim):  # and Next item says why
        q.claim_next("alice")


def test_the_lock_being_completed_does_not_count_against_the_limit(native_env: support.Env) -> None:
    wb = native_env.demo(queues={"cases": {"max_locks_per_user": 2}})
    q = wb.queue("cases")
    held = q.claim_next("alice", 2)
    done = q.complete("alice", held[0].lock.key, held[0].lock.token, then_next=True)
    assert done.next is not None  # two held, one completed: room for one more
    assert sorted(lock.key for lock in q.mine("alice")) == sorted([held[1].lock.key, done.next.lock.key])
    again = q.complete("alice", done.next.lock.key, done.next.lock.token, then_next=True)
    assert again.next is not None and len(q.mine("alice")) == 2  # never past the limit


def test_a_filtered_next_comes_with_the_complete(native_env: support.Env) -> None:
    wb = native_env.demo(case_rows=40, queues={"cases": {"filter_by": ("category",)}})
    q = wb.queue("cases")
    claim = q.claim_next("alice")[0]
    category = next(item["category"] for item in q.open_items(500) if item["category"] != claim.item["category"])
    with pytest.raises(errors.WorkbenchError, match="nosuch"):  # refused before anything is written
        q.complete("alice", claim.lock.key, claim.lock.token, then_next=True, where={"nosuch": "x"})
    assert [lock.key for lock in q.mine("alice")] == [claim.lock.key]
    done = q.complete("alice", claim.lock.key, claim.lock.token, then_next=True, where={"category": category})
    assert done.next is not None and done.next.item["category"] == category
    if native_env.backend == "postgresql":  # in the same statement, the filter's value bound
        assert done.next.lock.locked_at == done.at


@pytest.mark.parametrize("backend", ["postgresql", POOLED])
def test_a_retried_complete_hands_back_the_item_its_lost_reply_carried(native_env: support.Env) -> None:
    """The reply of a Complete with then_next was lost; the retry must not strand the item the first
    call claimed by claiming another one: it hands that one back."""
    wb = native_env.demo()
    q = wb.queue("cases")
    claim = q.claim_next("alice")[0]
    first = q.complete("alice", claim.lock.key, claim.lock.token, then_next=True)
    retried = q.complete("alice", claim.lock.key, claim.lock.token, then_next=True)
    assert retried.replayed and retried.next is not None and first.next is not None
    same = ("key", "owner", "token", "locked_at", "expires_at")
    assert [getattr(retried.next.lock, a) for a in same] == [getattr(first.next.lock, a) for a in same]
    assert retried.next.resumed
    assert [lock.key for lock in q.mine("alice")] == [first.next.lock.key]


def test_on_mariadb_the_complete_goes_with_the_claims_first_batch(
    native_env: support.Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """MySQL/MariaDB through PyMySQL: the Complete and the claim of the next item are one transaction
    with one COMMIT, the Complete sent with the claim's locking read (three round trips, not four)."""
    if native_env.backend != "mariadb":
        pytest.skip("batches of statements: MySQL/MariaDB through PyMySQL")
    wb = native_env.demo()
    q = wb.queue("cases")
    first = q.claim_next("alice")[0]
    # The first Complete of an outcome also builds its statements; the second runs as every later one.
    second = q.complete("alice", first.lock.key, first.lock.token, then_next=True).next
    assert second is not None
    sent: list[str] = []
    run = batches.BatchConnections.run

    def spy(self: batches.BatchConnections, parts: Any) -> list[batches.Result]:
        sent.append(";".join(part.sql for part, _ in parts).upper())
        return run(self, parts)

    monkeypatch.setattr(batches.BatchConnections, "run", spy)
    done = q.complete("alice", second.lock.key, second.lock.token, then_next=True)
    assert done.next is not None and native_env.row(wb, "cases", second.lock.key)["status"] == "resolved"
    assert len(sent) == 3, sent
    assert sent[0].startswith("UPDATE") and "FOR UPDATE SKIP LOCKED" in sent[0], sent[0]  # the Complete first
    assert sum(batch.count("COMMIT") for batch in sent) == 1, sent
    assert [lock.key for lock in q.mine("alice")] == [done.next.lock.key]
