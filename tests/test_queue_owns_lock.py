"""A lock belongs to the queue it was taken in: two queues over one table (the demo's `imports` and the
`imports_review` that reviews it) never save, complete, release, force-release or reassign each other's
locks, on every database, and under `workbench grants` not from an operator's own login either."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
import sqlalchemy as sa

from tests import support
from tests.test_permissions import Pg, pg  # noqa: F401  (the fixture: a demo database under `grants`)
from tests.test_protocol import FOLLOWUPS
from workbench import demo
from workbench.config import model
from workbench.core import errors
from workbench.db import service
from workbench.db.supervision import Supervision
from workbench.services import operator as operator_mod


def _assign(queue: str, status: str) -> model.Assignment:
    return model.Assignment("check_status", "value", status, f"queues.{queue}.on_release.check_status")


def _demo(env: support.Env) -> service.Workbench:
    """The demo with each import queue's release writing its own todo value: a release through the
    wrong queue would move the line between verification and review."""
    queues = {
        "imports": {"on_release": (_assign("imports", "pending"),), "release_cooldown_seconds": 0},
        "imports_review": {"on_release": (_assign("imports_review", "to_review"),)},
    }
    wb = env.demo(case_rows=1, import_rows=6, queues=queues)
    with wb.engine.begin() as conn:
        conn.execute(
            sa.update(wb.queue("imports").q.table).values(check_status="pending", checked_by=None, checked_at=None)
        )
    return wb


def _row(env: support.Env, wb: service.Workbench, key: Any) -> tuple[Any, ...]:
    row = env.row(wb, "imports", key)
    return row["check_status"], row["wb_locked_by"], row["wb_lock_token"]


def test_a_lock_is_written_only_through_the_queue_it_was_taken_in(native_env: support.Env) -> None:
    wb = _demo(native_env)
    imports, review = wb.queue("imports"), wb.queue("imports_review")
    lock = imports.claim_next("ann")[0].lock
    before = _row(native_env, wb, lock.key)
    elsewhere = "this item was taken in imports; {} it there"
    attempts = {
        "complete": lambda: review.complete("ann", lock.key, lock.token, "accepted"),
        "save": lambda: review.save("ann", lock.key, lock.token, {"checker_note": "fine"}),
        "extend": lambda: review.extend("ann", lock.key, lock.token),
        "release": lambda: review.release("ann", lock.key, lock.token),
        "defer": lambda: review.defer(
            "ann", lock.key, lock.token, dt.datetime.now(dt.UTC) + dt.timedelta(hours=1), "later"
        ),
    }
    for doing, attempt in attempts.items():
        with pytest.raises(errors.LockLost, match=elsewhere.format(doing)) as caught:
            attempt()
        assert caught.value.cause == "other_queue", doing
    with pytest.raises(errors.LockLost, match=elsewhere.format("work on")):
        review.check("ann", lock.key, lock.token)
    # Picked by key in the other queue, ann's own lock is not handed back as that queue's.
    with pytest.raises(errors.NothingToClaim, match="is held by ann through queue imports: it is worked on there"):
        review.claim("ann", lock.key)
    # Nothing changed: still ann's, still waiting for verification, nothing recorded under the review.
    assert _row(native_env, wb, lock.key) == before
    assert [e.kind.value for e in review.history(lock.key) if e.queue == "imports_review"] == []
    # Through its own queue it goes on as ever: one of ann's first items, so to review.
    imports.complete("ann", lock.key, lock.token, "verified")
    assert _row(native_env, wb, lock.key) == ("to_review", None, None)


def test_a_held_item_another_program_took_out_of_the_queue_is_not_written(native_env: support.Env) -> None:
    wb = _demo(native_env)
    imports = wb.queue("imports")
    lock = imports.claim_next("ann")[0].lock
    with wb.engine.begin() as conn:  # the feeding program finished the line meanwhile
        conn.execute(sa.update(imports.q.table).where(imports.q.key == lock.key).values(check_status="rejected"))
    for attempt in (
        lambda: imports.complete("ann", lock.key, lock.token, "verified"),
        lambda: imports.release("ann", lock.key, lock.token),
    ):
        with pytest.raises(errors.LockLost, match="no longer in this queue's work to do"):
            attempt()
    # Not put back to work by the release's on_release, not verified: the program's verdict stands.
    assert _row(native_env, wb, lock.key)[:2] == ("rejected", "ann")


def test_force_release_and_reassign_go_through_the_lock_queue_only(native_env: support.Env) -> None:
    wb = _demo(native_env)
    imports, review = wb.queue("imports"), wb.queue("imports_review")
    line = imports.claim_next("ann")[0].lock
    imports.complete("ann", line.key, line.token, "verified")
    held = review.claim_next("bob")[0].lock  # under review, held by bob
    working = imports.claim_next("carl")[0].lock  # being verified, held by carl
    before = {k: _row(native_env, wb, k) for k in (held.key, working.key)}
    refusals = [
        (lambda: Supervision(imports).force_release("sue", held.key, "stuck"), "imports_review", "force-release"),
        (lambda: Supervision(imports).reassign("sue", held.key, "dan", "away"), "imports_review", "reassign"),
        (lambda: Supervision(review).force_release("sue", working.key, "stuck"), "imports", "force-release"),
        (lambda: Supervision(review).reassign("sue", working.key, "dan", "away"), "imports", "reassign"),
    ]
    for attempt, queue, doing in refusals:
        with pytest.raises(errors.LockLost, match=f"this item was taken in {queue}; {doing} it there"):
            attempt()
    # The line under review did not go back to verification; the one being verified did not skip it.
    assert {k: _row(native_env, wb, k) for k in before} == before
    # The sweep of one queue leaves the other's expired locks alone.
    native_env.age_lock(wb, "imports", working.key, 3600)
    assert Supervision(review).sweep("sue") == []
    assert _row(native_env, wb, working.key) == before[working.key]
    assert [lock.key for lock in Supervision(imports).sweep("sue")] == [working.key]
    # Each through its own queue.
    Supervision(review).reassign("sue", held.key, "dan", "away")
    assert native_env.row(wb, "imports", held.key)["wb_locked_by"] == "dan"
    Supervision(review).force_release("sue", held.key, "stuck")
    assert _row(native_env, wb, held.key) == ("to_review", None, None)


def test_a_lock_is_listed_once_under_its_own_queue(native_env: support.Env) -> None:
    wb = _demo(native_env)
    ann = operator_mod.Operator(wb, "ann")
    mine = ann.next_item("imports").lock
    # The resume panel lists what `mine` gives per queue; the board and the counts agree.
    listed = [(lock.queue, lock.key) for queue in ann.queues for lock in ann.mine(queue)]
    assert listed == [("imports", mine.key)]
    assert [lock.key for lock in wb.queue("imports_review").locks()] == []
    assert wb.supervision("imports_review").count_locks() == 0
    assert [row.key for row in wb.supervision("imports_review").board()] == []
    assert wb.supervision("imports_review").health().locked == 0
    assert wb.supervision("imports").health().locked == 1
    assert {c.queue: c.mine for c in ann.queue_counts()} == {"cases": 0, "imports": 1, "imports_review": 0}


def _import_row(pg: Pg, key: Any) -> tuple[Any, ...]:
    with pg.admin.engine.connect() as conn:
        row = conn.execute(
            sa.text("SELECT check_status, wb_locked_by, wb_lock_token FROM import_rows WHERE row_id = :k"), {"k": key}
        ).one()
    return tuple(row)


def test_under_grants_the_other_queues_function_does_not_complete_a_lock(
    pg: Pg,
    capsys: pytest.CaptureFixture[str],
) -> None:
    pg.imports_enforced(capsys)
    ann = pg.open("ann")
    lock = ann.queue("imports").claim_next("ann")[0].lock  # one of ann's first items: it goes to review
    before = _import_row(pg, lock.key)
    # From ann's own login, the reviewing queue's trusted Complete: no row, nothing written.
    with pg.engine("ann").begin() as conn:
        done = conn.execute(
            sa.text("SELECT * FROM wb_imports_review_complete(:k, :t, 'accepted')"), {"k": lock.key, "t": lock.token}
        ).all()
    assert done == []
    assert _import_row(pg, lock.key) == before
    # By hand, with the review's values: the table's trigger admits no queue's operation in it.
    with pytest.raises(sa.exc.DBAPIError, match="may not make this change"), pg.engine("ann").begin() as conn:
        conn.execute(
            sa.text(
                "UPDATE import_rows SET check_status = 'verified', wb_locked_by = NULL, "
                "wb_locked_at = NULL, wb_lock_expires = NULL, wb_lock_token = NULL WHERE row_id = :k"
            ),
            {"k": lock.key},
        )
    assert _import_row(pg, lock.key) == before
    # Workbench says where the lock was taken.
    with pytest.raises(errors.LockLost, match="this item was taken in imports; complete it there"):
        ann.queue("imports_review").complete("ann", lock.key, lock.token, "accepted")
    assert _import_row(pg, lock.key) == before
    # A supervisor's force-release through the other queue is refused as well.
    with pytest.raises(errors.LockLost, match="this item was taken in imports; force-release it there"):
        pg.open("sue").supervision("imports_review").force_release("sue", lock.key, "stuck")
    assert _import_row(pg, lock.key) == before
    ann.queue("imports").complete("ann", lock.key, lock.token, "verified")
    assert _import_row(pg, lock.key) == ("to_review", None, None)


# A second queue over the demo's cases that serves the very same rows (the same todo), with an
# outcome of its own: the rows' state cannot tell whose lock it is, the audit trail's claims can.
TWIN = (
    FOLLOWUPS.replace("followups", "twin")
    .replace('["waiting_customer"]', '["new", "open"]')
    .replace('outcomes.resolved]\nset = { status = "resolved" }', 'outcomes.spam]\nset = { status = "spam" }')
)


def test_queues_serving_the_same_rows_tell_their_locks_apart_by_the_claim(native_env: support.Env) -> None:
    config = native_env.load(demo.config_text("{url}") + TWIN)
    wb = native_env.open(config)
    demo.populate(wb.engine, cases=4, imports=1)
    wb.init()
    demo.attach_all(wb)
    cases, twin = wb.queue("cases"), wb.queue("twin")
    assert cases.q.rivals == ("twin",) and twin.q.rivals == ("cases",)
    assert wb.queue("imports").q.rivals == ()  # its review queue's rows are told apart by their state
    lock = cases.claim_next("ann")[0].lock
    with pytest.raises(errors.LockLost, match="this item was taken in cases; complete it there"):
        twin.complete("ann", lock.key, lock.token, "spam")
    with pytest.raises(errors.LockLost, match="this item was taken in cases; force-release it there"):
        Supervision(twin).force_release("sue", lock.key, "stuck")
    assert [(lk.queue, lk.key) for name in ("cases", "twin") for lk in wb.queue(name).mine("ann")] == [
        ("cases", lock.key)
    ]
    assert native_env.row(wb, "cases", lock.key)["wb_locked_by"] == "ann"
    cases.complete("ann", lock.key, lock.token, "resolved")
    # The other way round: claimed in the twin, it is the twin's.
    other = twin.claim_next("bob")[0].lock
    with pytest.raises(errors.LockLost, match="this item was taken in twin; save it there"):
        cases.save("bob", other.key, other.token, {"resolution": "x"})
    twin.complete("bob", other.key, other.token, "spam")
    assert native_env.row(wb, "cases", other.key)["status"] == "spam"


def test_a_users_limit_counts_the_locks_taken_in_that_queue_only(native_env: support.Env) -> None:
    """`max_locks_per_user` is per queue: three cases held do not use up the one follow-up allowed."""
    text = demo.config_text("{url}") + FOLLOWUPS.replace(
        'lock_duration = "15m"', 'lock_duration = "15m"\nmax_locks_per_user = 1'
    )
    wb = native_env.open(native_env.load(text))
    demo.populate(wb.engine, cases=12, imports=1)
    wb.init()
    demo.attach_all(wb)
    cases, followups = wb.queue("cases"), wb.queue("followups")
    with wb.engine.begin() as conn:
        conn.execute(sa.update(cases.q.table).values(status="new"))
        conn.execute(sa.update(cases.q.table).where(cases.q.key > 9).values(status="waiting_customer"))
    assert len([cases.claim_next("ann")[0] for _ in range(3)]) == 3  # the cases limit, 3, reached
    with pytest.raises(errors.NothingToClaim):
        cases.claim_next("ann")
    taken = followups.claim_next("ann")[0].lock  # the cases locks are not follow-ups
    with pytest.raises(errors.NothingToClaim):
        followups.claim_next("ann")  # its own limit, 1
    cases.complete("ann", cases.mine("ann")[0].key, cases.mine("ann")[0].token)
    assert cases.claim_next("ann")  # room again in cases; the follow-up held does not count there
    assert [m.key for m in followups.mine("ann")] == [taken.key]
