"""Four eyes: completions chosen for review are served to anyone but their doer, on every database and
claim method; a sent-back item goes to its doer first; the choice and the verdict are recorded."""

from __future__ import annotations

import collections
import dataclasses
import datetime as dt
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from tests import support
from tests.helpers import forked
from workbench import demo
from workbench.config import loader
from workbench.core import errors
from workbench.db import reviews, service
from workbench.db.supervision import Supervision

REPO = Path(__file__).resolve().parents[1]


def _demo(env: support.Env, *, import_rows: int = 12, **review: Any) -> service.Workbench:
    """The demo with its import review set as `review` says (every verified line reviewed by default)."""
    base = env.demo_config().queues["imports"].review
    assert base is not None
    chosen = dataclasses.replace(base, **{"percent": 100, "first_items": 0, **review})
    queues = {
        "imports": {"review": chosen, "release_cooldown_seconds": 0},
        "imports_review": {"release_cooldown_seconds": 0},
    }
    return env.demo(case_rows=1, import_rows=import_rows, queues=queues)


def _pending(wb: service.Workbench) -> None:
    table = wb.queue("imports").q.table
    with wb.engine.begin() as conn:
        conn.execute(sa.update(table).values(check_status="pending", checked_by=None, checked_at=None))


def _verify(wb: service.Workbench, user: str) -> Any:
    q = wb.queue("imports")
    claim = q.claim_next(user)[0]
    q.complete(user, claim.lock.key, claim.lock.token, "verified")
    return claim.lock.key


def _status(env: support.Env, wb: service.Workbench, key: Any) -> str:
    return str(env.row(wb, "imports", key)["check_status"])


def _review_rows(wb: service.Workbench) -> list[dict[str, Any]]:
    with wb.engine.connect() as conn:
        return [dict(r) for r in conn.execute(sa.select(wb.reviews_table).order_by(wb.reviews_table.c.id)).mappings()]


def test_never_served_to_its_doer_and_sent_back_to_them_first(env: support.Env) -> None:
    wb = _demo(env)
    _pending(wb)
    ann_items = [_verify(wb, "ann"), _verify(wb, "ann")]
    bobs = _verify(wb, "bob")
    assert [_status(env, wb, k) for k in (*ann_items, bobs)] == ["to_review"] * 3
    review = wb.queue("imports_review")
    # ann is served only bob's line, then nothing; her own she may not pick either.
    got = review.claim_next("ann")[0]
    assert got.lock.key == bobs
    with pytest.raises(errors.NothingToClaim, match="your own work"):
        review.claim_next("ann")
    with pytest.raises(errors.NothingToClaim, match="your own work"):
        review.claim("ann", ann_items[0])
    review.complete("ann", got.lock.key, got.lock.token, "accepted")
    assert _status(env, wb, bobs) == "verified"
    # bob reviews ann's two: one accepted, one sent back (a note is required).
    first = review.claim_next("bob")[0]
    with pytest.raises(errors.UsageError, match="needs a note"):
        review.complete("bob", first.lock.key, first.lock.token, "sent_back")
    review.complete("bob", first.lock.key, first.lock.token, "sent_back", note="The IBAN has a digit too few.")
    second = review.claim_next("bob")[0]
    review.complete("bob", second.lock.key, second.lock.token, "accepted")
    assert _status(env, wb, first.lock.key) == "pending"
    # The sent-back line comes first, to ann alone for defer_owner_first, though others wait ahead of it.
    imports = wb.queue("imports")
    assert first.lock.key not in [c.lock.key for c in imports.claim_next("carl", 3)]
    assert imports.claim_next("ann")[0].lock.key == first.lock.key
    assert [n.text for n in imports.notes(first.lock.key)] == ["The IBAN has a digit too few."]
    rows = {str(r["item_key"]): r for r in _review_rows(wb)}
    assert {
        k: (rows[str(k)]["doer"], rows[str(k)]["verdict"], rows[str(k)]["reviewer"])
        for k in (bobs, first.lock.key, second.lock.key)
    } == {
        bobs: ("bob", "accepted", "ann"),
        first.lock.key: ("ann", "sent_back", "bob"),
        second.lock.key: ("ann", "accepted", "bob"),
    }
    complete = [e for e in imports.history(bobs) if e.kind.value == "complete"]
    assert complete[0].detail == {"review": "share"}
    # The item's history shows both queues' events: verified by bob, accepted in review by ann.
    assert [(e.queue, e.kind.value, e.actor, e.outcome) for e in review.history(bobs)] == [
        ("imports", "claim", "bob", None),
        ("imports", "complete", "bob", "verified"),
        ("imports_review", "claim", "ann", None),
        ("imports_review", "complete", "ann", "accepted"),
    ]
    stats = {
        s.doer: (s.accepted, s.sent_back)
        for s in Supervision(review).review_verdicts(dt.datetime(2000, 1, 1, tzinfo=dt.UTC))
    }
    assert stats == {"ann": (1, 1), "bob": (1, 0)}


def test_the_share_and_an_operators_first_items_are_chosen_at_complete(native_env: support.Env) -> None:
    wb = _demo(native_env, import_rows=10, percent=0, first_items=2)
    _pending(wb)
    keys = [_verify(wb, "ann") for _ in range(3)]
    assert [_status(native_env, wb, k) for k in keys] == ["to_review", "to_review", "verified"]
    assert [(r["doer"], r["why"]) for r in _review_rows(wb)] == [("ann", "first"), ("ann", "first")]
    imports = wb.queue("imports")
    claim = imports.claim_next("ann")[0]
    imports.complete("ann", claim.lock.key, claim.lock.token, "rejected")  # not an outcome that is reviewed
    assert _status(native_env, wb, claim.lock.key) == "rejected"
    bob = _verify(wb, "bob")  # bob's first items are his own count
    assert _status(native_env, wb, bob) == "to_review"


@pytest.mark.parametrize("backend", ["sqlite"])  # the draw is the client's; recording it is tested everywhere
def test_a_sampled_share_is_about_what_was_asked(native_env: support.Env) -> None:
    wb = _demo(native_env, import_rows=200, percent=30)
    _pending(wb)
    keys = [_verify(wb, "ann") for _ in range(200)]
    chosen = sum(_status(native_env, wb, k) == "to_review" for k in keys)
    assert 30 <= chosen <= 90, chosen  # 60 expected; this range fails about once in a billion runs


def test_undo_takes_back_a_complete_chosen_for_review(native_env: support.Env) -> None:
    wb = _demo(native_env, import_rows=4)
    _pending(wb)
    imports = wb.queue("imports")
    key = _verify(wb, "ann")
    claim = imports.undo_complete("ann", key)
    assert claim.lock.owner == "ann" and _status(native_env, wb, key) == "pending"
    assert [r["verdict"] for r in _review_rows(wb)] == [reviews.SUPERSEDED]
    imports.complete("ann", key, claim.lock.token, "verified")
    assert [r["verdict"] for r in _review_rows(wb)] == [reviews.SUPERSEDED, None]
    # Once a reviewer holds it, it is not ann's to undo.
    held = wb.queue("imports_review").claim_next("bob")[0]
    assert held.lock.key == key
    with pytest.raises(errors.UsageError, match="changed since"):
        imports.undo_complete("ann", key)


LOCK_TABLE_REVIEW = """
[queues.tickets.review]
by = "tickets_review"
outcomes = ["solved"]
set = { state = "to_review" }
send_back = "again"

[queues.tickets_review]
table = "vendor_tickets"
key = "ticket_id"
order = ["opened_at"]

[queues.tickets_review.lock]
table = "workbench_locks"

[queues.tickets_review.todo]
state = "to_review"

[queues.tickets_review.outcomes.fine]
set = { state = "solved" }

[queues.tickets_review.outcomes.again]
set = { state = "open" }
"""


def test_queues_whose_locks_live_in_a_lock_table_are_reviewed_the_same(native_env: support.Env) -> None:
    from tests.contract import test_lock_table

    wb = test_lock_table._tickets(native_env, rows=4, config=test_lock_table.CONFIG + LOCK_TABLE_REVIEW)
    tickets, review = wb.queue("tickets"), wb.queue("tickets_review")
    done = {}
    for user in ("ann", "bob"):
        c = tickets.claim_next(user)[0]
        tickets.complete(user, c.lock.key, c.lock.token, "solved")
        done[user] = c.lock.key
    got = review.claim_next("ann", 2)
    assert [c.lock.key for c in got] == [done["bob"]]
    with pytest.raises(errors.NothingToClaim, match="your own work"):
        review.claim("ann", done["ann"])
    review.release("ann", got[0].lock.key, got[0].lock.token, "later")
    mine = review.claim_next("bob")[0]
    assert mine.lock.key == done["ann"]
    review.complete("bob", mine.lock.key, mine.lock.token, "again", note="Solved the wrong printer.")
    assert tickets.claim_next("ann")[0].lock.key == done["ann"]  # back, to her first


def test_the_config_names_a_reviewing_queue_that_fits(tmp_path: Path) -> None:
    text = demo.config_text("sqlite:///x.db")

    def refused(old: str, new: str, match: str) -> None:
        assert old in text
        with pytest.raises(errors.ConfigError, match=match):
            loader.parse(__import__("tomllib").loads(text.replace(old, new, 1)), "t.toml")

    refused('by = "imports_review"', 'by = "nope"', "'nope' is not another queue")
    refused('by = "imports_review"', 'by = "imports"', "'imports' is not another queue")
    refused('by = "imports_review"', 'by = "cases"', r"works cases by case_id; a review queue works the same table")
    refused('send_back = "sent_back"', 'send_back = "returned"', "'returned' is not an outcome of queue imports_review")
    refused('outcomes = ["verified"]', 'outcomes = ["fine"]', "'fine' is not an outcome of this queue")
    refused("percent = 20 ", "percent = 101 ", "must be at most 100")
    refused('set = { check_status = "to_review" }', "set = {}", "must write at least one column")


def test_a_review_that_would_leave_the_item_waiting_is_refused(native_env: support.Env) -> None:
    base = native_env.demo_config().queues["imports"].review
    assert base is not None
    writes = (dataclasses.replace(base.writes[0], value="pending"),)
    with pytest.raises(errors.ConfigError, match=r"review\.set"):
        native_env.demo(
            case_rows=1, import_rows=2, queues={"imports": {"review": dataclasses.replace(base, writes=writes)}}
        ).queue("imports")


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite", "postgresql", "mariadb"])  # ODBC: the same server, another driver
def test_processes_never_review_their_own_work(native_env: support.Env) -> None:
    """8 processes review 240 lines each of them verified 30 of: none is ever served one of their own."""
    env, rows, workers = native_env, 240, 8
    wb = _demo(env, import_rows=rows)
    _pending(wb)
    imports = wb.queue("imports")
    for i in range(rows):
        _verify(wb, f"w{i % workers}")
    assert imports.count_waiting(10) == 0
    doers = {str(r["item_key"]): r["doer"] for r in _review_rows(wb)}
    assert len(doers) == rows
    config = env.write_config(demo.config_text("{url}"))
    go = env.tmp / "go"
    procs = []
    for i in range(workers):
        out = env.tmp / f"reviewer{i}.json"
        cmd = [
            sys.executable,
            "-m",
            "tests.helpers.claim_worker",
            "--config",
            str(config),
            "--queue",
            "imports_review",
            "--user",
            f"w{i}",
            "--out",
            str(out),
            "--go",
            str(go),
        ]
        procs.append(
            (
                f"w{i}",
                forked.Popen(cmd, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}),
                out,
            )
        )
    go.write_text("go")
    reviewed: list[tuple[str, str]] = []
    for user, proc, out in procs:
        _, stderr = proc.communicate(timeout=600)
        assert out.exists(), f"worker died: {stderr[-3000:]}"
        data = json.loads(out.read_text())
        assert not data["failures"], data["failures"][0]
        reviewed += [(str(key), user) for key, _token in data["done"]]
    own = [(key, user) for key, user in reviewed if doers[key] == user]
    assert own == [], f"reviewed their own work: {own[:10]}"
    counts = collections.Counter(key for key, _ in reviewed)
    assert len(counts) == rows and max(counts.values()) == 1
    assert len({user for _, user in reviewed}) >= 2, "one worker did everything: no contention"
    assert {(r["verdict"], r["reviewer"] != r["doer"]) for r in _review_rows(wb)} == {(reviews.ACCEPTED, True)}
