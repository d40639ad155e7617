"""The lock's writes compiled from the lock shape (db/lockshapes/: taken, extended, cleared) by the table's
Write.LOCK_*: PostgreSQL's in-row check follows a changed transition or a changed shape's write with no edit
to db/rules/pg_row_rules.py. Fast tier: the check's text generated offline, as tests/test_rowrules.py does."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa

from tests.test_rowrules import _bound, _branch, _check, _patched
from workbench import demo
from workbench.core import workflow
from workbench.core.workflow import LockRule, Write
from workbench.db.lockshapes import base, token_column
from workbench.db.rules import pg_row_rules


def _condition(text: str, name: str) -> str:
    """The IF (or ELSIF) whose branch transition `name`'s mark opens (the condition comes before it)."""
    at = text.index(workflow.branch_mark(name))
    return text[text.rfind("IF ", 0, at) : at]


def test_every_lock_write_of_the_table_is_rendered() -> None:
    kinds = {w for w in Write if w.name.startswith("LOCK_")}
    assert kinds == set(pg_row_rules._LOCK_AFTER)


def test_a_fresh_lock_is_the_callers_or_another_users_as_the_transition_writes_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    q = _bound()
    take, claim = _branch(_check(q), "take"), _branch(_check(q), "claim")
    # The table: take and claim write a fresh lock of the caller's (LOCK_TAKEN), another token than before.
    for branch in (take, claim):
        assert "n.wb_locked_by = login" in branch
        assert "n.wb_lock_token IS NOT NULL AND n.wb_lock_token IS DISTINCT FROM o.wb_lock_token" in branch
    # Take made to hand the lock to someone (LOCK_HANDED, as a reassign): any holder, no longer the caller.
    writes = workflow.TRANSITIONS["take"].writes - {Write.LOCK_TAKEN} | {Write.LOCK_HANDED}
    _patched(monkeypatch, "take", writes=writes)
    take = _branch(_check(q), "take")
    assert "n.wb_locked_by = login" not in take and "n.wb_locked_by IS NOT NULL" in take
    # A transition that writes no lock keeps it as it was (its kept columns), with no fresh lock asked.
    _patched(monkeypatch, "take", writes=writes - {Write.LOCK_HANDED})
    take = _branch(_check(q), "take")
    assert "IS DISTINCT FROM o.wb_lock_token" not in take
    assert "(o.wb_lock_token) IS NOT DISTINCT FROM (n.wb_lock_token)" in take


def test_the_check_follows_the_lock_shapes_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    q = _bound()  # the demo's `cases`: max_lock_duration 2h, so an extend moves the lock strictly on
    text = _check(q)
    extend, release = _condition(text, "extend"), _condition(text, "release")
    assert "n.wb_lock_expires > o.wb_lock_expires" in extend
    assert "n.wb_locked_at IS NOT DISTINCT FROM o.wb_locked_at" in extend
    assert "n.wb_locked_at IS NULL" in release
    original = token_column.TokenColumn.extend_writes

    def moves_time_too(self: base.LockShape, new_expiry: sa.ColumnElement[Any]) -> dict[str, Any]:
        return {**original(self, new_expiry), self.time.name: sa.null()}

    # A shape whose extension moves the lock time as well: the check lets it move on, never back.
    monkeypatch.setattr(token_column.TokenColumn, "extend_writes", moves_time_too)
    # A shape whose release keeps the lock time (the other lock columns cleared): no longer asked NULL.
    monkeypatch.setattr(
        token_column.TokenColumn,
        "unlock_writes",
        lambda self: {c.name: sa.null() for c in self.columns if c is not self.time},
    )
    text = _check(q)
    extend, release = _condition(text, "extend"), _condition(text, "release")
    assert "n.wb_locked_at > o.wb_locked_at" in extend and "n.wb_lock_expires > o.wb_lock_expires" in extend
    assert "n.wb_locked_at IS NULL" not in release and "n.wb_lock_token IS NULL" in release
    # A claim whose lock writes no expiry column: the claim's fresh lock no longer asks for one.
    monkeypatch.setattr(
        token_column.TokenColumn,
        "lock_writes",
        lambda self, user, now, token: {self.user.name: user, self.time.name: now, self.token.name: token},
    )
    claim = _branch(_check(q), "claim")
    assert "n.wb_lock_expires IS NOT NULL" not in claim and "n.wb_locked_at IS NOT NULL" in claim


def test_an_extend_leaves_the_lock_where_it_was_only_without_a_cap() -> None:
    """The check's extend moves the lock as the engine's guard does (LockShape.extends_something, both from
    base.moved_on): strictly on under max_lock_duration, at least where it was without one (an extend in the
    claim's clock instant writes the expiry the lock has). So does the save branch's reading of a row left as
    it was: an extend too (the client settles which) only where an extend may leave the lock so."""
    capped = _bound()
    uncapped = _bound(text=demo.config_text().replace('max_lock_duration = "2h"', "", 1))
    assert capped.capped and not uncapped.capped
    for q, moved in ((capped, ">"), (uncapped, ">=")):
        text = _check(q)
        assert f"n.wb_lock_expires {moved} o.wb_lock_expires" in _condition(text, "extend")
        save = _branch(text, "save")
        assert f"n.wb_lock_expires {moved} o.wb_lock_expires" in save
        assert "THEN ARRAY['extend:', 'save:']" in save and "ELSE ARRAY['save:'] END" in save
        guard = q.shape.extends_something(sa.literal_column("x"), capped=q.capped)  # the engine's, as written
        assert str(guard) == f"{q.shape.expires} {moved.replace('>', '<')} x"


def test_a_free_lock_rule_is_on_the_row_before_and_the_writes_say_what_is_after(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    q = _bound()
    take = _branch(_check(q), "take")
    # LockRule.FREE is on the row before; after, the lock is what the transition writes.
    assert "(o.wb_locked_by IS NULL)" in take and "(n.wb_locked_by IS NULL)" not in take
    assert "n.wb_locked_by = login" in take
    # Take made to hold a lock that ran out (STALE_HERE) instead: its branch asks that, not free.
    _patched(monkeypatch, "take", lock=LockRule.STALE_HERE)
    take = _branch(_check(q), "take")
    assert "(o.wb_locked_by IS NULL)" not in take and "o.wb_lock_expires <= timezone('UTC', now())" in take
    # A move writes no lock: free before and, its lock columns kept, free after.
    move = _branch(_check(q), "move")
    assert "(o.wb_locked_by IS NULL)" in move and "(o.wb_locked_by) IS NOT DISTINCT FROM (n.wb_locked_by)" in move
