"""Issue 47, holes 2 to 5: what PostgreSQL under `workbench grants` admitted from an operator's own login
that core/workflow.py's table does not (a release with edits; a change relabelled to the twin queue over
the same table, skipping the first queue's notes, allow_defer or outcomes). Each attack as the issue
describes it, written by hand through ann's login; each refused, changing nothing."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest
import sqlalchemy as sa

from tests import support
from tests import test_mssql_protocol as mssql_protocol
from tests.test_permissions import Pg, pg  # noqa: F401  (the fixture: a demo database under `grants`)
from tests.test_protocol import _refused, _rows, _run, _state, _tickets
from tests.test_protocol_holes import _apply
from workbench import demo
from workbench.db.rules import pg_names

RELEASE = (
    "UPDATE cases SET wb_locked_by = NULL, wb_lock_token = NULL, wb_locked_at = NULL, wb_lock_expires = NULL "
    "WHERE case_id = :k"
)


# -- hole 2: a release writes no edits ----------------------------------------------------------------


def test_hole2_a_release_with_edits_is_refused(pg: Pg, capsys: pytest.CaptureFixture[str]) -> None:
    # Locks in the row: the edit and the lock cleared in one statement.
    lock = pg.open("ann").queue("cases").claim_next("ann")[0].lock
    before = _state(pg)
    edited = RELEASE.replace("SET ", "SET subject = 'x', ")
    assert "may not make this change" in _refused(pg.engine("ann"), edited, k=lock.key)
    assert _state(pg) == before
    # The same edit alone is a save, and the release alone a release: both still pass.
    assert _run(pg.engine("ann"), ("UPDATE cases SET subject = 'x' WHERE case_id = :k", RELEASE), {"k": lock.key}) == 1
    # Locks in a lock table: the lock row given up, then an edit with the release's values.
    text = _tickets(pg, capsys, support.sample_config("vendor-tickets"), "tickets")
    other = pg.open("ann", text).queue("tickets").claim_next("ann")[0].lock
    before_tickets = _rows(pg, "vendor_tickets", "workbench_locks", "workbench_audit")
    give_up = "DELETE FROM workbench_locks WHERE item_key = CAST(:k AS text)"
    edit = "UPDATE vendor_tickets SET subject = 'Scanner' WHERE ticket_id = :k"
    assert "may not make this change" in _refused(pg.engine("ann"), give_up, edit, k=other.key)
    assert _rows(pg, "vendor_tickets", "workbench_locks", "workbench_audit") == before_tickets


# -- holes 3 and 4: the queue a change belongs to is the queue its lock was taken in --------------------

# A twin of the vendor's tickets queue over the same table and lock table: no notes, its own outcome.
TK2 = """
[queues.tk2]
table = "vendor_tickets"
key = "ticket_id"
order = ["opened_at"]
lock_duration = "15m"

[queues.tk2.lock]
table = "workbench_locks"

[queues.tk2.todo]
state = "open"

[queues.tk2.outcomes.done]
set = { state = "solved" }
"""


def _twin_tickets(pg: Pg, capsys: pytest.CaptureFixture[str]) -> str:
    """tickets (a note with every release and solved Complete) and its twin tk2, both under grants."""
    text = support.sample_config("vendor-tickets").replace(
        "[queues.tickets.lock]", 'notes_required = ["release", "solved"]\n\n[queues.tickets.lock]', 1
    )
    return _tickets(pg, capsys, text + TK2, "tickets", "tk2")


def _settle(event: str, outcome: str | None, queue: str) -> str:
    return (
        f"SELECT {pg_names.SETTLE}(max(id), '{event}', {'NULL' if outcome is None else repr(outcome)}, NULL, NULL, "
        f"'{queue}') FROM workbench_audit WHERE item_key = CAST(:k AS text)"
    )


def _own_row(queue: str, event: str, outcome: str | None = None, detail: dict[str, Any] | None = None) -> str:
    """The operator's own audit row of ann's change, naming `queue`."""
    return (
        "INSERT INTO workbench_audit (queue, item_key, event, actor, owner, outcome, reason, detail, at) VALUES "
        f"('{queue}', CAST(:k AS text), '{event}', 'ann', 'ann', {'NULL' if outcome is None else repr(outcome)}, "
        f"'by hand', {'NULL' if detail is None else repr(json.dumps(detail))}, timezone('UTC', now()))"
    )


def test_hole3_a_change_relabelled_to_the_twin_keeps_the_first_queues_notes_rule(
    pg: Pg, capsys: pytest.CaptureFixture[str]
) -> None:
    text = _twin_tickets(pg, capsys)
    lock = pg.open("ann", text).queue("tickets").claim_next("ann")[0].lock
    give_up = "DELETE FROM workbench_locks WHERE item_key = CAST(:k AS text)"
    solve = "UPDATE vendor_tickets SET state = 'solved', solved_by = 'ann', solved_at = now() WHERE ticket_id = :k"
    watched = ("vendor_tickets", "workbench_locks", "workbench_audit", "workbench_notes")
    before = _rows(pg, *watched)
    ann = pg.engine("ann")
    for attack in (
        # The Complete settled (or recorded by ann's own row) as the twin's, which needs no note.
        (give_up, solve, _settle("complete", "done", "tk2")),
        (give_up, solve, _settle("complete", "solved", "tk2")),
        (give_up, solve, _own_row("tk2", "complete", "solved")),
        (give_up, solve, _own_row("tk2", "complete", "done")),
        # The same for a release.
        (give_up, _settle("release", None, "tk2")),
        (give_up, _own_row("tk2", "release")),
    ):
        refusal = _refused(ann, *attack, k=lock.key)
        assert refusal.startswith("workbench: "), (attack, refusal)
        assert _rows(pg, *watched) == before, attack


# A twin of the demo's cases over the same rows (its own outcome); cases lets nothing be deferred.
CASES2 = mssql_protocol.TWIN


def _twin_cases(pg: Pg, capsys: pytest.CaptureFixture[str], *order: str) -> str:
    """cases (allow_defer = false) and its twin cases2 under grants, applied in `order` (the last one's
    grants decide in which order the table's trigger asks the two checks)."""
    text = demo.config_text("{url}").replace("[queues.cases]\n", "[queues.cases]\nallow_defer = false\n", 1) + CASES2
    _apply(pg, capsys, text, *order)
    return text


def test_hole4_a_defer_is_not_relabelled_past_allow_defer(pg: Pg, capsys: pytest.CaptureFixture[str]) -> None:
    text = _twin_cases(pg, capsys, "cases2", "cases")  # the table's trigger asks cases2 first
    lock = pg.open("ann", text).queue("cases").claim_next("ann")[0].lock
    twin_deferral = (
        "INSERT INTO workbench_deferrals (queue, item_key, actor, until, at, reason) VALUES ('cases2', "
        "CAST(:k AS text), 'ann', timezone('UTC', now()) + interval '1 hour', timezone('UTC', now()), 'later')"
    )
    watched = ("cases", "workbench_audit", "workbench_deferrals")
    before = _rows(pg, *watched)
    ann = pg.engine("ann")
    for attack in (
        (RELEASE, twin_deferral, _own_row("cases", "defer", detail={"until": "2099-01-01"})),
        (RELEASE, twin_deferral, _settle("defer", None, "cases")),
        (RELEASE, _own_row("cases", "defer", detail={"until": "2099-01-01"})),
    ):
        refusal = _refused(ann, *attack, k=lock.key)
        assert refusal.startswith("workbench: "), (attack, refusal)
        assert _rows(pg, *watched) == before, attack
    # A defer of the twin's own lock, by hand, names the time its deferral has, no other.
    twin = pg.open("ann", text).queue("cases2")
    lock2 = twin.claim_next("ann")[0].lock
    other_time = _own_row("cases2", "defer", detail={"until": "2099-01-01T00:00:00+00:00"})
    refusal = _refused(ann, RELEASE, twin_deferral, other_time, k=lock2.key)
    assert refusal.startswith("workbench: "), refusal
    # workbench's own defer through the twin passes, and the trail keeps its time.
    until = twin.db_clock().utc.replace(tzinfo=dt.UTC) + dt.timedelta(hours=2)
    twin.defer("ann", lock2.key, lock2.token, until, "vendor calls back")
    last = pg.open(pg.server.user, text).queue("cases2").history(lock2.key)[-1]
    assert (last.queue, last.kind.value, last.detail) == ("cases2", "defer", {"until": until.isoformat()})


@pytest.mark.parametrize("order", [("cases", "cases2"), ("cases2", "cases")])
def test_hole5_a_lock_is_completed_in_the_queue_it_was_taken_in(
    pg: Pg, capsys: pytest.CaptureFixture[str], order: tuple[str, str]
) -> None:
    _twin_cases(pg, capsys, *order)
    ann = pg.engine("ann")
    with ann.begin() as conn:
        key = conn.execute(sa.text(f"SELECT case_id FROM {pg_names.next_function_name('cases')}()")).scalar_one()
    dropped = (
        "UPDATE cases SET status = 'dropped', wb_locked_by = NULL, wb_lock_token = NULL, wb_locked_at = NULL, "
        "wb_lock_expires = NULL WHERE case_id = :k"
    )
    before = _state(pg)
    assert "may not make this change" in _refused(ann, dropped, k=key)
    assert _state(pg) == before
    # The twin's own outcome, on a lock taken in the twin, passes and is recorded there.
    with ann.begin() as conn:
        taken = conn.execute(sa.text(f"SELECT case_id FROM {pg_names.next_function_name('cases2')}()")).scalar_one()
    assert _run(ann, (dropped,), {"k": taken}) == 1
    with pg.admin.engine.connect() as conn:
        trail = conn.execute(
            sa.text("SELECT queue, event FROM workbench_audit WHERE item_key = CAST(:k AS text) ORDER BY id"),
            {"k": taken},
        ).all()
    assert [tuple(r) for r in trail] == [("cases2", "claim"), ("cases2", "complete")]


def test_a_lock_is_force_released_and_reassigned_only_in_the_queue_it_was_taken_in(
    pg: Pg, capsys: pytest.CaptureFixture[str]
) -> None:
    """Twin queues (the same rows): a supervisor's hand force-release with the twin's on_release, or a
    reassign settled as the twin's, of a lock taken in `cases` is refused (HELD_HERE's "here": the item's
    newest claim), as the engine and SQL Server's procedures refuse it; in `cases` itself both pass."""
    text = demo.config_text("{url}") + CASES2 + '\n[queues.cases2.on_release]\nstatus = "new"\n'
    _apply(pg, capsys, text, "cases", "cases2")
    lock = pg.open("ann", text).queue("cases").claim_next("ann")[0].lock
    sue = pg.engine("sue")
    unlocked = "wb_locked_by = NULL, wb_lock_token = NULL, wb_locked_at = NULL, wb_lock_expires = NULL"
    released = f"UPDATE cases SET status = 'new', {unlocked} WHERE case_id = :k"  # cases2's on_release
    handed = (
        "UPDATE cases SET wb_locked_by = 'bob', wb_lock_token = md5(random()::text), "
        "wb_locked_at = timezone('UTC', now()) WHERE case_id = :k"
    )

    def settled(event: str, queue: str) -> str:  # sue's reason given, the row the change wrote settled
        return (
            f"SELECT {pg_names.SETTLE}(min(id), '{event}', NULL, 'stuck', NULL, '{queue}') FROM workbench_audit "
            f"WHERE item_key = CAST(:k AS text) AND event = '{event}'"
        )

    before = _state(pg)
    for attack in ((released, settled("force_release", "cases2")), (handed, settled("reassign", "cases2"))):
        refusal = _refused(sue, *attack, k=lock.key)
        assert refusal.startswith("workbench: "), (attack, refusal)
        assert _state(pg) == before, attack
    # The same acts as cases' own (its force-release writes no status) pass.
    assert _run(sue, (handed, settled("reassign", "cases")), {"k": lock.key}) == 1
    assert (
        _run(sue, (released.replace("status = 'new', ", ""), settled("force_release", "cases")), {"k": lock.key}) == 1
    )
