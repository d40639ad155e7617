"""Notes on items: anyone adds them, nobody changes them; a queue may require one with a release or Complete."""

from __future__ import annotations

import datetime as dt
import tomllib

import pytest

from tests import support
from workbench import demo
from workbench.config import loader
from workbench.core import errors
from workbench.db import notes
from workbench.db.supervision import Supervision

REQUIRED = {"cases": {"notes_required": ("release", "resolved")}}


def test_notes_are_kept_in_order_under_their_authors(native_env: support.Env) -> None:
    wb = native_env.demo(case_rows=3, import_rows=1)
    q = wb.queue("cases")
    key = q.claim_next("alice")[0].lock.key
    before = q.db_clock().now
    first = q.add_note("alice", key, "  Customer calls back after 15:00.\n")
    second = q.add_note("bob", key, "Called: the printer is on the 2nd floor. Ελλάδα → ok")
    assert first.text == "Customer calls back after 15:00." and first.author == "alice" and first.kind is None
    assert [(n.author, n.text) for n in q.notes(key)] == [("alice", first.text), ("bob", second.text)]
    assert first.at.tzinfo is not None and abs(first.at - before) < dt.timedelta(minutes=1)  # the database clock
    assert q.notes(str(key)) == q.notes(key)  # a key typed on the command line finds the same notes
    other = q.claim_next("carol")[0].lock.key
    assert q.notes(other) == []
    with pytest.raises(errors.InvalidValue, match="no item with key"):
        q.add_note("alice", 999_999, "lost")
    with pytest.raises(errors.UsageError, match="needs some text"):
        q.add_note("alice", key, " \n ")
    with pytest.raises(errors.UsageError, match="at most 4000 characters"):
        q.add_note("alice", key, "x" * (notes.MAX_LENGTH + 1))
    assert len(q.notes(key)) == 2


def test_a_required_note_comes_with_the_release_or_complete_or_nothing_happens(native_env: support.Env) -> None:
    wb = native_env.demo(case_rows=4, import_rows=1, queues=REQUIRED)
    q = wb.queue("cases")
    lock = q.claim_next("alice")[0].lock
    with pytest.raises(errors.UsageError, match="needs a note with a release"):
        q.release("alice", lock.key, lock.token, "later")
    with pytest.raises(errors.UsageError, match="needs a note with Complete with outcome 'resolved'"):
        q.complete("alice", lock.key, lock.token, "resolved", {"resolution": "fixed"})
    assert q.check("alice", lock.key, lock.token).owner == "alice"  # still hers, nothing written
    assert q.notes(lock.key) == []
    # Another outcome needs none.
    other = q.claim_next("alice")[0].lock
    assert q.complete("alice", other.key, other.token, "waiting").outcome == "waiting"

    q.release("alice", lock.key, lock.token, "needs a specialist", note="Tried a new cable; still no link.")
    assert [(n.kind, n.author, n.text) for n in q.notes(lock.key)] == [
        ("release", "alice", "Tried a new cable; still no link.")
    ]
    again = q.claim("bob", lock.key).lock
    done = q.complete(
        "bob",
        again.key,
        again.token,
        "resolved",
        {"resolution": "Switch port replaced"},
        note="Port 14 on the 2nd floor switch was dead.",
    )
    assert done.outcome == "resolved"
    assert [n.kind for n in q.notes(lock.key)] == ["release", "complete"]
    # Complete without edits, through each database's fastest path, writes its note too.
    third = q.claim_next("carol")[0].lock
    q.complete("carol", third.key, third.token, "resolved", note="Duplicate of an earlier case.")
    assert [(n.kind, n.author) for n in q.notes(third.key)] == [("complete", "carol")]


def test_a_note_is_not_kept_when_the_lock_was_lost(native_env: support.Env) -> None:
    wb = native_env.demo(case_rows=3, import_rows=1, queues=REQUIRED)
    q = wb.queue("cases")
    lock = q.claim_next("alice")[0].lock
    Supervision(q).force_release("sue", lock.key, "needed now")
    with pytest.raises(errors.LockLost):
        q.complete("alice", lock.key, lock.token, "resolved", note="Done, I think.")
    with pytest.raises(errors.LockLost):
        q.release("alice", lock.key, lock.token, note="Giving it back.")
    assert q.notes(lock.key) == []


def test_notes_required_names_only_actions_of_the_queue() -> None:
    data = tomllib.loads(demo.config_text("sqlite:///x.db"))
    data["queues"]["cases"]["notes_required"] = ["release", "closed"]
    with pytest.raises(
        errors.ConfigError,
        match=r"notes_required: 'closed' is not an action of this queue; "
        r"actions: release, defer, resolved, waiting",
    ):
        loader.parse(data, "x.toml")
