"""A lock-table queue's checks (db/rules/pg_lock_check.py, pg_locks.py) take what a transition does to the
lock from the table: a transition's lock Write (core/workflow.py) picks the lock row's change, as the lock shape says it
(db/lockshapes/lock_table.py, claim_id.py), and the crumb that joins it to the queue row's change. Fast tier
(SQL text generated offline); what PostgreSQL admits is tests/test_protocol*.py's and the matrix's."""

from __future__ import annotations

import pytest

from tests.test_rowrules import LOCK_TABLE, _bound, _branch, _Conn, _patched
from workbench import demo
from workbench.core import workflow
from workbench.db import mapping
from workbench.db.rules import pg_lock_check, pg_locks

W = workflow.Write


def _checks(q: mapping.BoundQueue) -> tuple[str, str]:
    return (
        pg_lock_check.lock_check(_Conn(), q, "public", None),  # type: ignore[arg-type]
        pg_locks.item_check(_Conn(), q, "public"),  # type: ignore[arg-type]
    )


def _crumb(kind: str) -> str:
    return f"coalesce('{kind}', '')"


def test_the_lock_table_checks_follow_a_transitions_lock_write(monkeypatch: pytest.MonkeyPatch) -> None:
    q = _bound("casesl", demo.config_text() + LOCK_TABLE)
    locks, item = _checks(q)
    # As the table says: a reassign hands a fresh lock to another user (the crumb "handed"), an extend
    # moves the expiry on and never back.
    reassign = _branch(locks, "reassign")
    assert "n.token IS NOT NULL AND n.token IS DISTINCT FROM o.token)" in reassign
    assert "n.lock_user = login" not in reassign and _crumb("handed") in reassign
    assert _crumb("handed") in item and _crumb("took") in item
    assert "n.expires_at >= o.expires_at" in locks  # `casesl` has no max_lock_duration
    # Under a cap an extend moves the lock row's expiry strictly on, as the engine's guard (base.moved_on), and
    # a lock row left as it was reads as a save only. Each of the two is offered where its own lock write is
    # what the row shows: a lock row whose expiry moved on is an extend, never a save too.
    capped, _ = _checks(
        _bound("casesl", demo.config_text() + LOCK_TABLE.replace("15m", '15m"\nmax_lock_duration = "1h', 1))
    )
    assert "n.expires_at > o.expires_at" in capped and "n.expires_at >= o.expires_at" not in capped
    for text in (locks, capped):
        assert "THEN ARRAY['extend:']" in text and "THEN ARRAY['save:']" in text
        assert "ARRAY['extend:', 'save:']" not in text
    # The reassign made the caller's own fresh lock (LOCK_TAKEN) and the extend a lock left as it was:
    # the lock check asks for the caller as the new holder and leaves the crumb a lock taken leaves; the
    # extend's branch admits only the lock row unchanged.
    table = workflow.TRANSITIONS
    _patched(monkeypatch, "reassign", writes=table["reassign"].writes - {W.LOCK_HANDED} | {W.LOCK_TAKEN})
    _patched(monkeypatch, "extend", writes=table["extend"].writes - {W.LOCK_EXTENDED})
    locks, item = _checks(q)
    reassign = _branch(locks, "reassign")
    assert "n.token IS DISTINCT FROM o.token AND n.lock_user = login)" in reassign
    assert _crumb("took") in reassign and _crumb("handed") not in reassign
    assert _crumb("handed") not in item
    assert "n.expires_at >= o.expires_at" not in locks and "n.expires_at IS NOT DISTINCT FROM o.expires_at" in locks


def test_a_transition_that_gives_a_lock_up_is_read_from_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lock row deleted by its holder is read as the transitions that clear the caller's own lock; one
    that stops clearing it (here: escalate) is no longer among them, and is left no crumb to find."""
    q = _bound("casesl", demo.config_text() + LOCK_TABLE)
    assert pg_lock_check.given_up(False) == ("release", "defer", "escalate", "complete")
    assert pg_lock_check.crumb_of("escalate") == pg_lock_check.GAVE
    locks, _ = _checks(q)
    assert workflow.branch_mark("release", "defer", "escalate", "complete") in locks
    _patched(monkeypatch, "escalate", writes=workflow.TRANSITIONS["escalate"].writes - {W.LOCK_CLEARED})
    assert pg_lock_check.given_up(False) == ("release", "defer", "complete")
    locks, _ = _checks(q)
    assert workflow.branch_mark("release", "defer", "complete") in locks
    with pytest.raises(ValueError, match="leaves no crumb"):
        pg_lock_check.crumb_of("escalate")


def _deleted(q: mapping.BoundQueue) -> str:
    """The lock check's part for a lock row deleted (up to the UPDATE's)."""
    locks, _ = _checks(q)
    return locks[locks.index("IF op = 'DELETE'") : locks.index("IF n.queue IS DISTINCT FROM o.queue")]


def test_a_lock_row_is_given_up_or_freed_only_while_its_item_is_the_queues_work(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A DELETE of a lock row asks each branch's row rule (HELD: the item in the queue's work) of the item
    before, from the table: a transition whose row rule asks nothing of the row (here: expire and
    force-release made EXISTS) no longer asks it."""
    q = _bound("casesl", demo.config_text() + LOCK_TABLE)
    held = "(NOT FOUND OR (item.status IN ('new', 'open')))"
    deleted = _deleted(q)
    assert "CAST(o.item_key AS INTEGER)" in deleted, deleted
    given_up, freed = deleted.split(workflow.branch_mark("expire", "force_release"))
    assert held in given_up and held in freed, deleted
    _patched(monkeypatch, "expire", "force_release", row=workflow.RowRule.EXISTS)
    given_up, freed = _deleted(q).split(workflow.branch_mark("expire", "force_release"))
    assert held in given_up and held not in freed and "(NOT FOUND OR (true))" in freed


def test_a_run_out_lock_row_out_of_the_work_is_given_back_as_the_table_says(monkeypatch: pytest.MonkeyPatch) -> None:
    """expire_out_of_work's branch: a run-out lock row of this queue (STALE_HERE) deleted by anyone (the clock's)
    while its item is out of the queue's work (OUT_OF_WORK, over the item before), recorded as an expiry and
    leaving no crumb (the queue row's check admits no on_release after it). Its row rule is the table's: made
    EXISTS, the branch asks nothing of the item."""
    q = _bound("casesl", demo.config_text() + LOCK_TABLE)
    out = "(CASE WHEN (item.status IN ('new', 'open')) THEN 0 ELSE 1 END = 1)"
    given = _branch(_deleted(q), "expire_out_of_work")
    assert "o.queue = ('casesl') AND (o.expires_at IS NULL OR o.expires_at <= " in given, given
    assert f"AND FOUND AND {out} THEN" in given and "'expire'" in given, given
    assert "workbench.locks" not in given and "pg_has_role" not in given, given
    _patched(monkeypatch, "expire_out_of_work", row=workflow.RowRule.EXISTS)
    given = _branch(_deleted(q), "expire_out_of_work")
    assert out not in given and "AND FOUND AND (true) THEN" in given, given
