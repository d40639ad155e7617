"""Defer: an item put off until a time is served to nobody before it (on the database clock), then first,
to its operator alone for a while; refused without the lock, recorded in the trail."""

from __future__ import annotations

import datetime as dt
import math
import time
from typing import Any

import pytest
import sqlalchemy as sa

from tests import support
from workbench.core import errors, models
from workbench.db import claims

OPEN = {"cases": {"max_locks_per_user": 0, "release_cooldown_seconds": 0}}


def _last_waiting(q: Any) -> Any:
    """The waiting item the queue would serve last: deferring it shows whether a deferral comes first."""
    return q.open_items(200)[-1][q.q.key.name]


def _soon(q: Any, seconds: float) -> dt.datetime:
    return q.db_clock().utc.replace(tzinfo=dt.UTC) + dt.timedelta(seconds=seconds)


def _until_due(deferral: models.Deferral) -> None:
    """Wait for the deferral's time to come, on the clock."""
    time.sleep(max(0.0, (deferral.until - dt.datetime.now(dt.UTC)).total_seconds()) + 1.2)


def _made_due(wb: Any, q: Any, deferral: models.Deferral) -> None:
    """As if the deferral's time had come a second ago: its time moved back on the database's clock
    (waiting for it cost the suite a minute; test_after_the_owners_turn… still waits for real)."""
    left = (deferral.until - q.db_clock().utc.replace(tzinfo=dt.UTC)).total_seconds()
    support.age_deferral(wb, q.name, deferral.key, math.ceil(left) + 1)


def test_not_served_before_its_time_then_first_to_its_operator(env: support.Env) -> None:
    wb = env.demo(case_rows=8, import_rows=1, queues=OPEN)
    q = wb.queue("cases")
    last = _last_waiting(q)
    lock = q.claim("alice", last).lock
    deferral = q.defer("alice", last, lock.token, _soon(q, 2), "customer calls back")
    assert (deferral.actor, deferral.reason, str(deferral.key)) == ("alice", "customer calls back", str(last))
    assert [str(d.key) for d in q.deferred()] == [str(last)]
    # Before its time: nobody is served it, even with nothing else waiting.
    taken = [c.lock.key for user in ("bob", "alice", "carol") for c in q.claim_next(user, 3)]
    assert last not in taken and len(taken) == 7
    with pytest.raises(errors.NothingToClaim):
        q.claim_next("alice")
    for key in taken[:4]:  # four items wait again, all ahead of the deferred one in queue order
        holder = next(lock for lock in q.locks() if lock.key == key)
        q.release(holder.owner, key, holder.token, "later")
    _made_due(wb, q, deferral)
    # Its time has come: first, but for the first defer_owner_first only to alice.
    assert last not in [c.lock.key for c in q.claim_next("bob")]
    assert q.claim_next("alice")[0].lock.key == last
    assert q.deferred() == []


def test_after_the_owners_turn_anyone_is_served_it_first(native_env: support.Env) -> None:
    queues = {"cases": {**OPEN["cases"], "defer_owner_first_seconds": 0}}
    wb = native_env.demo(case_rows=6, import_rows=1, queues=queues)
    q = wb.queue("cases")
    last = _last_waiting(q)
    lock = q.claim("alice", last).lock
    _until_due(q.defer("alice", last, lock.token, _soon(q, 1), "parts on order"))
    assert q.claim_next("bob")[0].lock.key == last


def test_refused_without_the_lock_or_a_time_to_come_and_recorded_when_done(native_env: support.Env) -> None:
    wb = native_env.demo(case_rows=4, import_rows=1, queues=OPEN)
    q = wb.queue("cases")
    lock = q.claim_next("alice")[0].lock
    later = _soon(q, 3600)
    bob = q.claim_next("bob")[0].lock
    with pytest.raises(errors.LockLost):
        q.defer("bob", lock.key, bob.token, later, "not mine")
    with pytest.raises(errors.UsageError, match="still to come"):
        q.defer("alice", lock.key, lock.token, _soon(q, -60), "yesterday")
    with pytest.raises(errors.UsageError, match="at most 366 days"):
        q.defer("alice", lock.key, lock.token, _soon(q, 400 * 86400), "next year")
    with pytest.raises(errors.UsageError, match="say why"):
        q.defer("alice", lock.key, lock.token, later, "  ")
    with pytest.raises(errors.UsageError, match="zone"):
        q.defer("alice", lock.key, lock.token, later.replace(tzinfo=None), "no zone")
    assert q.check("alice", lock.key, lock.token).owner == "alice" and q.deferred() == []

    q.defer("alice", lock.key, lock.token, later, "customer calls back Thursday", note="Call +49 30 1234.")
    assert not [lk for lk in q.locks() if lk.key == lock.key]
    event = q.history(lock.key)[-1]
    assert (event.kind, event.actor, event.reason) == (models.EventKind.DEFER, "alice", "customer calls back Thursday")
    assert event.detail == {"until": later.isoformat()}
    assert [(n.kind, n.text) for n in q.notes(lock.key)] == [("defer", "Call +49 30 1234.")]
    with pytest.raises(errors.LockLost):  # the lock went with the defer
        q.save("alice", lock.key, lock.token, {"resolution": "x"})
    # Picked by key it can be taken early (a call came sooner); a release then forgets the deferral.
    early = q.claim("carol", lock.key).lock
    q.release("carol", lock.key, early.token, "not now")
    assert q.deferred() == []


def test_a_lock_table_queue_holds_a_deferred_item_back_too(env: support.Env) -> None:
    """Shape 5 (locks in their own table): held back until due, then served in its place in the queue."""
    from tests.contract import test_lock_table

    wb = test_lock_table._tickets(env, rows=3)
    q = wb.queue("tickets")
    first = q.claim_next("alice")[0].lock
    deferral = q.defer("alice", first.key, first.token, _soon(q, 2), "vendor answers tomorrow")
    others = sorted(c.lock.key for c in q.claim_next("bob", 5))
    assert len(others) == 2 and first.key not in others  # not the deferred one
    with pytest.raises(errors.NothingToClaim):
        q.claim_next("alice")
    _made_due(wb, q, deferral)
    assert q.claim_next("alice")[0].lock.key == first.key


def test_a_queue_may_refuse_defer_and_its_claim_then_ignores_deferrals(native_env: support.Env) -> None:
    wb = native_env.demo(case_rows=3, import_rows=1, queues=OPEN)
    q = wb.queue("cases")
    lock = q.claim_next("alice")[0].lock
    q.defer("alice", lock.key, lock.token, _soon(q, 3600), "customer calls back")
    off = native_env.open(native_env.demo_config({"cases": {**OPEN["cases"], "allow_defer": False}})).queue("cases")
    other = off.claim_next("bob")[0].lock
    with pytest.raises(errors.UsageError, match="allow_defer = false"):
        off.defer("bob", other.key, other.token, _soon(off, 3600), "later")
    assert off.deferred() == [] and off.check("bob", other.key, other.token).owner == "bob"
    # Without deferrals the claim does not look at them: the deferred item is served like any other.
    assert lock.key in [other.key, *(c.lock.key for c in off.claim_next("carol", 3))]
    if native_env.backend == "postgresql":
        statement = off.method.statement(off.q, off.trail, claims.ClaimRequest(user="x"))
        assert "workbench_deferrals" not in str(statement.compile(dialect=wb.engine.dialect))


DAYS = """
[database]
url = "{url}"

[queues.days]
table = "day_reports"
key = "day"
release_cooldown = 0

[queues.days.lock]
user = "wb_locked_by"
time = "wb_locked_at"
expires = "wb_lock_expires"
token = "wb_lock_token"

[queues.days.todo]
state = "open"

[queues.days.outcomes.done]
set = { state = "done" }
"""


def test_a_date_key_is_matched_as_the_text_it_was_stored_as(native_env: support.Env) -> None:
    """A key that is neither a number nor text: SQLite cannot cast the stored text back to a date."""
    md = sa.MetaData()
    table = sa.Table(
        "day_reports",
        md,
        sa.Column("day", sa.Date, primary_key=True),
        sa.Column("state", sa.String(10), nullable=False),
        sa.Column("wb_locked_by", sa.String(100)),
        sa.Column("wb_locked_at", sa.DateTime),
        sa.Column("wb_lock_expires", sa.DateTime),
        sa.Column("wb_lock_token", sa.String(64)),
    )
    md.create_all(native_env.engine)
    with native_env.engine.begin() as conn:
        conn.execute(sa.insert(table), [{"day": dt.date(2026, 11, d), "state": "open"} for d in (1, 2, 3)])
    wb = native_env.open(native_env.load(DAYS))
    wb.init()
    q = wb.queue("days")
    last = q.claim("alice", dt.date(2026, 11, 3)).lock
    deferral = q.defer("alice", last.key, last.token, _soon(q, 2), "figures come tomorrow")
    assert sorted(c.lock.key for c in q.claim_next("bob", 5)) == [dt.date(2026, 11, 1), dt.date(2026, 11, 2)]
    _made_due(wb, q, deferral)
    assert q.claim_next("alice")[0].lock.key == dt.date(2026, 11, 3)
