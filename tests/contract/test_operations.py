"""The engine contract, run on every backend with its own claim method and with the portable one."""

from __future__ import annotations

import datetime as dt

import pytest
import sqlalchemy as sa

from tests import support
from workbench.core import errors, models
from workbench.db import audit
from workbench.db.claims import base, portable
from workbench.db.supervision import Supervision

WAITING = ("new", "open")


def _waiting(wb, env: support.Env) -> int:
    q = wb.queue("cases").q
    return env.count(wb, "cases", sa.and_(q.table.c.status.in_(WAITING), q.user.is_(None)))


def test_claim_writes_lock_then_returns_row_read_after_it(env: support.Env) -> None:
    wb = env.demo()
    claim = wb.queue("cases").claim_next("alice")[0]
    lock = claim.lock
    assert lock.owner == "alice" and len(lock.token) == 32
    assert lock.expires_at - lock.locked_at == dt.timedelta(minutes=15)
    # The row handed out already shows the lock: it was read after the lock was written.
    assert claim.item["wb_locked_by"] == "alice"
    assert claim.item["wb_lock_token"] == lock.token
    assert claim.item["status"] == "open"  # on_claim
    stored = env.row(wb, "cases", lock.key)
    assert stored["wb_locked_by"] == "alice" and stored["wb_lock_token"] == lock.token
    kinds = [(e["event"], e["actor"], e["token"]) for e in env.audit(wb, "cases")]
    assert kinds == [("claim", "alice", audit.token_digest(lock.token))]  # never the token itself


def test_claim_serves_queue_order(env: support.Env) -> None:
    wb = env.demo()
    q = wb.queue("cases")
    with wb.engine.connect() as conn:
        t = q.q.table
        expected = [
            r[0]
            for r in conn.execute(
                sa.select(t.c.case_id)
                .where(t.c.status.in_(WAITING))
                .order_by(t.c.priority, t.c.opened_at, t.c.case_id)
                .limit(3)
            )
        ]
    got = [c.lock.key for c in q.claim_next("alice", 3)]
    if env.method == "native":
        assert got == expected
    else:
        # The portable method picks at random among the head of the queue to avoid collisions.
        assert len(set(got)) == 3 and set(got) <= set(_head(wb, 16))


def _head(wb, n: int) -> list[int]:
    t = wb.queue("cases").q.table
    with wb.engine.connect() as conn:
        return [
            r[0]
            for r in conn.execute(
                sa.select(t.c.case_id)
                .where(t.c.status.in_(WAITING))
                .order_by(t.c.priority, t.c.opened_at, t.c.case_id)
                .limit(n)
            )
        ]


def test_two_users_never_get_the_same_item(env: support.Env) -> None:
    wb = env.demo()
    q = wb.queue("cases")
    a = {c.lock.key for c in q.claim_next("alice", 3)}
    b = {c.lock.key for c in q.claim_next("bob", 3)}
    assert len(a) == 3 and len(b) == 3 and not a & b


def test_nothing_to_claim_when_queue_is_empty(env: support.Env) -> None:
    wb = env.demo(case_rows=5, queues={"cases": {"max_locks_per_user": 0}})
    q = wb.queue("cases")
    waiting = _waiting(wb, env)
    claims = q.claim_next("alice", 50)
    assert len(claims) == waiting
    with pytest.raises(errors.NothingToClaim) as info:
        q.claim_next("bob")
    assert info.value.reason == "empty" and info.value.exit_code == 3


def test_per_user_limit(env: support.Env) -> None:
    wb = env.demo(queues={"cases": {"max_locks_per_user": 2}})
    q = wb.queue("cases")
    assert len(q.claim_next("alice", 5)) == 2
    with pytest.raises(errors.NothingToClaim) as info:
        q.claim_next("alice")
    assert info.value.reason == "limit" and "2" in str(info.value)
    assert len(q.claim_next("bob")) == 1  # the limit is per user


def test_save_keeps_lock_and_stores_values(env: support.Env) -> None:
    wb = env.demo()
    q = wb.queue("cases")
    c = q.claim_next("alice")[0]
    lock = q.save("alice", c.lock.key, c.lock.token, {"resolution": "Replaced the cable", "time_spent_min": "15"})
    assert lock.token == c.lock.token and lock.owner == "alice"
    row = env.row(wb, "cases", c.lock.key)
    assert row["resolution"] == "Replaced the cable" and row["time_spent_min"] == 15
    assert row["wb_locked_by"] == "alice"
    # Saving the very same values again is still a success (matched rows, not changed rows).
    q.save("alice", c.lock.key, c.lock.token, {"resolution": "Replaced the cable"})
    saves = [e for e in env.audit(wb, "cases") if e["event"] == "save"]
    assert len(saves) == 2 and saves[0]["token"] == audit.token_digest(c.lock.token)


def test_save_refuses_bad_values_and_protected_columns(env: support.Env) -> None:
    wb = env.demo()
    q = wb.queue("cases")
    c = q.claim_next("alice")[0]
    with pytest.raises(errors.InvalidValue, match="time_spent_min: 'soon' is not a whole number"):
        q.save("alice", c.lock.key, c.lock.token, {"time_spent_min": "soon"})
    with pytest.raises(errors.InvalidValue, match="status: cannot be edited: it is set by the workflow"):
        q.save("alice", c.lock.key, c.lock.token, {"status": "resolved"})
    with pytest.raises(errors.InvalidValue, match="wb_locked_by: cannot be edited: it holds the lock"):
        q.save("alice", c.lock.key, c.lock.token, {"wb_locked_by": "mallory"})
    with pytest.raises(errors.InvalidValue, match=r"resolutoin: no such column.*did you mean 'resolution'"):
        q.save("alice", c.lock.key, c.lock.token, {"resolutoin": "x"})
    with pytest.raises(errors.InvalidValue, match=r"subject: at most 200 characters \(201 given\)"):
        q.save("alice", c.lock.key, c.lock.token, {"subject": "x" * 201})
    assert env.row(wb, "cases", c.lock.key)["status"] == "open"


def test_wrong_token_is_refused_everywhere(env: support.Env) -> None:
    wb = env.demo()
    q = wb.queue("cases")
    c = q.claim_next("alice")[0]
    stale = "0" * 32
    for call in (
        lambda: q.save("alice", c.lock.key, stale, {"resolution": "x"}),
        lambda: q.complete("alice", c.lock.key, stale),
        lambda: q.release("alice", c.lock.key, stale),
        lambda: q.extend("alice", c.lock.key, stale),
    ):
        with pytest.raises(errors.LockLost) as info:
            call()
        assert info.value.cause == "not_held" and info.value.exit_code == 4
        assert "held by you (with a newer token)" in str(info.value)
    # Another user with the right token is refused too.
    with pytest.raises(errors.LockLost):
        q.complete("mallory", c.lock.key, c.lock.token) if q.q.token is None else q.complete(
            "mallory", c.lock.key, "f" * 32
        )
    assert env.row(wb, "cases", c.lock.key)["status"] == "open"


def test_complete_writes_outcome_clears_lock_and_never_serves_again(env: support.Env) -> None:
    wb = env.demo(case_rows=3)
    q = wb.queue("cases")
    waiting = _waiting(wb, env)
    c = q.claim_next("alice")[0]
    done = q.complete("alice", c.lock.key, c.lock.token, "waiting", {"resolution": "Asked for a screenshot"})
    assert done.outcome == "waiting" and not done.replayed
    row = env.row(wb, "cases", c.lock.key)
    assert row["status"] == "waiting_customer" and row["resolution"] == "Asked for a screenshot"
    assert row["wb_locked_by"] is None and row["wb_lock_token"] is None and row["wb_locked_at"] is None
    served = {x.lock.key for x in q.claim_next("bob", 10)}
    assert c.lock.key not in served and len(served) == waiting - 1
    events = [e for e in env.audit(wb, "cases") if e["item_key"] == str(c.lock.key)]
    assert [(e["event"], e["outcome"]) for e in events] == [("claim", None), ("complete", "waiting")]


def test_complete_retry_is_idempotent_but_a_different_outcome_is_refused(env: support.Env) -> None:
    wb = env.demo()
    q = wb.queue("imports")
    c = q.claim_next("clerk")[0]
    first = q.complete("clerk", c.lock.key, c.lock.token, "verified")
    again = q.complete("clerk", c.lock.key, c.lock.token, "verified")
    assert again.replayed and again.outcome == "verified" and not first.replayed
    with pytest.raises(errors.LockLost) as info:
        q.complete("clerk", c.lock.key, c.lock.token, "rejected")
    assert info.value.cause == "completed" and "already completed by clerk" in str(info.value)
    row = env.row(wb, "imports", c.lock.key)
    # A clerk's first lines all go to review in the demo: the Complete wrote "to_review" over "verified".
    assert row["check_status"] == "to_review" and row["checked_by"] == "clerk" and row["checked_at"] is not None
    assert [e["event"] for e in env.audit(wb, "imports")].count("complete") == 1


def test_unknown_outcome_is_an_invalid_value(env: support.Env) -> None:
    wb = env.demo()
    q = wb.queue("cases")
    c = q.claim_next("alice")[0]
    with pytest.raises(errors.InvalidValue, match=r"no outcome 'closed' .*resolved, waiting"):
        q.complete("alice", c.lock.key, c.lock.token, "closed")


def test_release_returns_item_with_cooldown_for_the_releaser(env: support.Env) -> None:
    wb = env.demo(case_rows=4)
    q = wb.queue("cases")
    first = q.claim_next("alice")[0]
    q.release("alice", first.lock.key, first.lock.token, "needs a specialist")
    row = env.row(wb, "cases", first.lock.key)
    assert row["wb_locked_by"] is None and row["status"] in WAITING
    # Alice is not served the item she just skipped; Bob is.
    alice_next = {c.lock.key for c in q.claim_next("alice", 10)}
    assert first.lock.key not in alice_next
    event = next(e for e in env.audit(wb, "cases") if e["event"] == "release")
    assert event["reason"] == "needs a specialist" and event["token"] == audit.token_digest(first.lock.token)
    for c in q.mine("alice"):
        q.release("alice", c.key, c.token, "done looking")
    bob = q.claim("bob", first.lock.key)
    assert bob.lock.owner == "bob"
    # Releasing twice is harmless; releasing someone else's lock is not allowed.
    q.release("alice", first.lock.key, first.lock.token)
    with pytest.raises(errors.LockLost):
        q.release("alice", bob.lock.key, bob.lock.token if q.q.token is None else "1" * 32)


def test_release_cooldown_expires(env: support.Env) -> None:
    wb = env.demo(queues={"cases": {"release_cooldown_seconds": 0}})
    q = wb.queue("cases")
    first = q.claim_next("alice")[0]
    q.release("alice", first.lock.key, first.lock.token)
    if env.method == "native":
        assert q.claim_next("alice")[0].lock.key == first.lock.key


def test_extend_moves_expiry_within_the_cap(env: support.Env) -> None:
    wb = env.demo(queues={"cases": {"lock_seconds": 600, "max_lock_seconds": 900}})
    q = wb.queue("cases")
    c = q.claim_next("alice")[0]
    env.age_lock(wb, "cases", c.lock.key, 100)
    first = q.extend("alice", c.lock.key, c.lock.token)
    # Claimed 100 s ago: now + 10 min is within claim + 15 min, so it is granted in full.
    assert first.token == c.lock.token
    assert abs((first.expires_at - first.db_now).total_seconds() - 600) < 2
    env.age_lock(wb, "cases", c.lock.key, 300)
    extended = q.extend("alice", c.lock.key, c.lock.token)
    # Claimed 400 s ago: now + 10 min would pass claim + 15 min, so the cap is granted.
    assert extended.expires_at == extended.locked_at + dt.timedelta(seconds=900)
    with pytest.raises(errors.ExtendLimitReached, match="at most 15 min"):
        q.extend("alice", c.lock.key, c.lock.token)
    assert [e["event"] for e in env.audit(wb, "cases")] == ["claim", "extend", "extend"]


def test_stale_token_refused_after_expiry_and_item_reclaimed(env: support.Env) -> None:
    wb = env.demo(case_rows=2)
    q = wb.queue("cases")
    mine = q.claim_next("alice", 5)
    target = mine[0]
    for other in mine[1:]:
        q.complete("alice", other.lock.key, other.lock.token)
    env.age_lock(wb, "cases", target.lock.key, 16 * 60)
    # Expired but not taken: the holder is told it expired, and may claim it again.
    with pytest.raises(errors.LockLost) as info:
        q.complete("alice", target.lock.key, target.lock.token)
    assert info.value.cause == "expired" and "nobody has taken it since" in str(info.value)
    # What happened, apart from who holds it now (which goes stale: the window reads that again).
    expired_only = info.value.happened
    assert "expired at" in expired_only and "nobody" not in expired_only and str(info.value).startswith(expired_only)
    # The claim query itself serves expired items: no background job needed.
    bob = q.claim_next("bob")[0]
    assert bob.lock.key == target.lock.key and bob.lock.token != target.lock.token
    with pytest.raises(errors.LockLost) as info:
        q.save("alice", target.lock.key, target.lock.token, {"resolution": "late"})
    assert info.value.cause == "expired" and info.value.holder == "bob" and "now held by bob" in str(info.value)
    assert "bob" not in info.value.happened and str(info.value).startswith(info.value.happened)
    events = [(e["event"], e["owner"]) for e in env.audit(wb, "cases") if e["item_key"] == str(target.lock.key)]
    assert events == [("claim", "alice"), ("expire", "alice"), ("claim", "bob")]
    q.complete("bob", bob.lock.key, bob.lock.token)


def test_force_release_refuses_the_old_token_and_says_who(env: support.Env) -> None:
    wb = env.demo()
    q = wb.queue("cases")
    c = q.claim_next("alice")[0]
    removed = Supervision(q).force_release("sue", c.lock.key, "customer called, needs it now")
    assert removed.owner == "alice" and removed.token == c.lock.token
    with pytest.raises(errors.LockLost) as info:
        q.complete("alice", c.lock.key, c.lock.token)
    lost = info.value
    assert lost.cause == "force_released" and lost.by == "sue" and lost.reason == "customer called, needs it now"
    assert "supervisor sue force-released" in str(lost)
    with pytest.raises(errors.UsageError):
        Supervision(q).force_release("sue", c.lock.key, " ")
    with pytest.raises(errors.LockLost, match="not locked by anyone"):
        Supervision(q).force_release("sue", c.lock.key, "again")


def test_reassign_moves_the_lock_with_a_fresh_token(env: support.Env) -> None:
    wb = env.demo()
    q = wb.queue("cases")
    c = q.claim_next("alice")[0]
    new = Supervision(q).reassign("sue", c.lock.key, "bob", "alice is on leave")
    assert new.owner == "bob" and new.token != c.lock.token and not new.expired
    with pytest.raises(errors.LockLost) as info:
        q.save("alice", c.lock.key, c.lock.token, {"resolution": "x"})
    assert info.value.cause == "reassigned" and "to bob" in str(info.value) and info.value.holder == "bob"
    q.complete("bob", c.lock.key, new.token)
    history = [(e.kind.value, e.actor, e.owner) for e in q.history(c.lock.key)]
    assert history == [
        ("claim", "alice", "alice"),
        ("reassign", "sue", "alice"),
        ("claim", "sue", "bob"),
        ("complete", "bob", "bob"),
    ]


def test_sweep_returns_expired_items_and_records_them(env: support.Env) -> None:
    wb = env.demo()
    q = wb.queue("cases")
    a, b = q.claim_next("alice", 2)
    env.age_lock(wb, "cases", a.lock.key, 3600)
    expired = Supervision(q).sweep("cron")
    assert [lock.key for lock in expired] == [a.lock.key]
    assert env.row(wb, "cases", a.lock.key)["wb_locked_by"] is None
    assert env.row(wb, "cases", b.lock.key)["wb_locked_by"] == "alice"
    assert Supervision(q).sweep("cron") == []
    event = next(e for e in env.audit(wb, "cases") if e["event"] == "expire")
    assert event["owner"] == "alice" and event["actor"] == "cron" and event["token"] == audit.token_digest(a.lock.token)
    with pytest.raises(errors.LockLost) as info:
        q.complete("alice", a.lock.key, a.lock.token)
    assert info.value.cause == "expired"


def test_claim_specific_item(env: support.Env) -> None:
    wb = env.demo()
    q = wb.queue("cases")
    key = _head(wb, 5)[3]
    got = q.claim("alice", str(key))  # keys typed on a command line arrive as text
    assert got.lock.key == key and not got.resumed
    again = q.claim("alice", key)
    assert again.resumed and again.lock.token == got.lock.token
    with pytest.raises(errors.NothingToClaim, match="held by alice"):
        q.claim("bob", key)
    q.complete("alice", key, got.lock.token)
    with pytest.raises(errors.NothingToClaim, match=r"not waiting .*done:resolved"):
        q.claim("bob", key)
    with pytest.raises(errors.InvalidValue, match="no item with key 999999"):
        q.claim("bob", 999999)
    with pytest.raises(errors.InvalidValue, match="not a whole number"):
        q.claim("bob", "abc")


def test_the_portable_claim_reads_the_candidates_of_each_request_shape(native_env: support.Env) -> None:
    """It keeps its candidates' reads per request shape: a named item's is not the queue head's, whichever
    ran first (through the API a named claim also skips the cool-down, so only this call tells them apart)."""
    wb = native_env.demo()
    q = wb.queue("cases")
    key = _head(wb, 5)[3]
    method = portable.PortableClaim()
    for request, keys in (
        (base.ClaimRequest(user="fred", use_cooldown=False), set(_head(wb, portable.WINDOW))),
        (base.ClaimRequest(user="fred", key=key, use_cooldown=False), {key}),
    ):
        got = wb.db.read(lambda conn, request=request: method._candidates(conn, q.q, q.trail, request))
        assert {c["wb_ckey"] for c, _ in got} == keys


def test_mine_and_locks_show_age_and_time_left(env: support.Env) -> None:
    wb = env.demo()
    q = wb.queue("cases")
    a = q.claim_next("alice", 2)
    b = q.claim_next("bob")[0]
    env.age_lock(wb, "cases", a[0].lock.key, 120)
    mine = q.mine("alice")
    assert {lock.key for lock in mine} == {c.lock.key for c in a}
    assert all(lock.owner == "alice" for lock in mine)
    aged = next(lock for lock in mine if lock.key == a[0].lock.key)
    assert 119 <= aged.age.total_seconds() <= 150
    assert 13 * 60 - 30 <= aged.remaining.total_seconds() <= 13 * 60
    everyone = q.locks()
    assert {lock.owner for lock in everyone} == {"alice", "bob"} and len(everyone) == 3
    assert everyone[0].key == a[0].lock.key  # oldest first
    assert b.lock.key in {lock.key for lock in everyone}


def test_check_reports_current_lock_or_why_it_was_lost(env: support.Env) -> None:
    wb = env.demo()
    q = wb.queue("cases")
    c = q.claim_next("alice")[0]
    assert q.check("alice", c.lock.key, c.lock.token).token == c.lock.token
    Supervision(q).force_release("sue", c.lock.key, "stuck")
    with pytest.raises(errors.LockLost) as info:
        q.check("alice", c.lock.key, c.lock.token)
    assert info.value.cause == "force_released" and info.value.by == "sue"


def test_show_reports_state(env: support.Env) -> None:
    wb = env.demo()
    q = wb.queue("cases")
    key = _head(wb, 1)[0]
    assert q.show(key).state == "waiting" and q.show(key).lock is None
    c = q.claim("alice", key)
    view = q.show(key)
    assert view.state == "locked" and view.lock.owner == "alice"
    env.age_lock(wb, "cases", key, 3600)
    assert q.show(key).state == "expired"
    bob = q.claim("bob", key)
    q.complete("bob", key, bob.lock.token, "resolved")
    assert q.show(key).state == "done:resolved"
    assert c.lock.token != bob.lock.token


def test_lock_times_come_from_the_database_clock(env: support.Env) -> None:
    wb = env.demo()
    q = wb.queue("cases")
    c = q.claim_next("alice")[0]
    with wb.engine.connect() as conn:
        db_now = conn.execute(sa.select(sa.type_coerce(q.q.now(), sa.DateTime()))).scalar()
    if isinstance(db_now, str):
        db_now = dt.datetime.fromisoformat(db_now)
    db_now = db_now.replace(tzinfo=dt.UTC)
    assert abs((db_now - c.lock.locked_at).total_seconds()) < 5
    assert c.lock.db_now.tzinfo is not None


def test_history_lists_every_event_in_order(env: support.Env) -> None:
    wb = env.demo()
    q = wb.queue("cases")
    c = q.claim_next("alice")[0]
    q.save("alice", c.lock.key, c.lock.token, {"resolution": "a"})
    q.extend("alice", c.lock.key, c.lock.token)
    q.release("alice", c.lock.key, c.lock.token, "lunch")
    d = q.claim("bob", c.lock.key)
    q.complete("bob", c.lock.key, d.lock.token, "resolved")
    events = q.history(c.lock.key)
    assert [e.kind for e in events] == [
        models.EventKind.CLAIM,
        models.EventKind.SAVE,
        models.EventKind.EXTEND,
        models.EventKind.RELEASE,
        models.EventKind.CLAIM,
        models.EventKind.COMPLETE,
    ]
    assert (
        events[3].reason == "lunch"
        and events[5].outcome == "resolved"
        and events[1].detail == {"columns": ["resolution"], "changes": {"resolution": [None, "a"]}}
    )
    assert all(events[i].at <= events[i + 1].at for i in range(len(events) - 1))
