"""The checks that refuse a queue's config which could not work on its table: key, lock types, workflow."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa

from workbench.db import backends
from workbench.db.binding.binder import Binder
from workbench.db.binding.conditions import BoundAssignment, BoundCondition, holds_after, leaves


def check_unique_key(binder: Binder, key: sa.Column[Any]) -> None:
    """The key must be unique on its own, or two rows could share one lock."""
    table = binder.table
    if list(table.primary_key.columns) == [key]:
        return
    for index in table.indexes:
        if index.unique and list(index.columns) == [key]:
            return
    for constraint in table.constraints:
        if isinstance(constraint, sa.UniqueConstraint) and list(constraint.columns) == [key]:
            return
    raise binder.fail(
        "key",
        f"column '{key.name}' must be unique (the primary key or a unique "
        "index on that column alone), or two rows could share one lock",
    )


def check_lock_types(
    binder: Binder,
    backend: backends.Backend,
    user: sa.Column[Any],
    times: Mapping[str, sa.Column[Any] | None],
    token: sa.Column[Any] | None,
) -> None:
    """The lock's columns hold what the lock writes: a name, date-times (`times` by config key), a token."""
    if not isinstance(user.type, (sa.String, sa.types.NullType)):
        raise binder.fail("lock.user", f"column '{user.name}' must be a text column")
    for key, column in times.items():
        if column is None:
            continue
        if not backend.holds_times(column):
            raise binder.fail(key, f"column '{column.name}' must be a date-time column (it is {column.type})")
    if token is not None and not isinstance(token.type, sa.Uuid):
        length = getattr(token.type, "length", None)
        if not isinstance(token.type, (sa.String, sa.types.NullType)) or (length and length < 32):
            raise binder.fail(
                "lock.token",
                f"column '{token.name}' must be text of at least 32 characters, or of the database's UUID type",
            )


def date_column(binder: Binder, backend: backends.Backend, key: str) -> sa.Column[Any] | None:
    """The `created` (when an item arrived) or `due` column, which must hold dates or date-times."""
    name = getattr(binder.queue, key)
    if name is None:
        return None
    column = binder.column(name, key)
    if not backend.holds_dates(column):
        raise binder.fail(key, f"column '{column.name}' must be a date or date-time column (it is {column.type})")
    return column


def check_reasons(
    binder: Binder, on_release: list[BoundAssignment], reason_writes: Mapping[str, list[BoundAssignment]]
) -> None:
    """A release reason may write columns besides on_release's, not those."""
    released = {b.column.name for b in on_release}
    for writes in reason_writes.values():
        for b in writes:
            if b.column.name in released:
                raise binder.fail(
                    binder.key_of(b.assignment.key),
                    f"on_release already sets '{b.column.name}'; a reason may set other columns",
                )


def check_workflow(
    binder: Binder,
    todo: list[BoundCondition],
    *,
    on_claim: list[BoundAssignment],
    on_release: list[BoundAssignment],
    outcomes: Mapping[str, list[BoundAssignment]],
    review_writes: list[BoundAssignment],
    on_escalate: list[BoundAssignment],
    on_reopen: list[BoundAssignment],
) -> None:
    """Each transition's writes take a row out of `todo`, or bring it back, as the transition means to."""
    for name, assignments in outcomes.items():
        if leaves(todo, assignments) is not True:
            raise binder.fail(
                f"outcomes.{name}.set",
                "Complete would leave the row matching `todo`, so "
                "completed items would be served again; write a todo column (e.g. a "
                "status) to a value outside the todo filter",
            )
    _check_release(binder, todo, on_claim, on_release)
    if review_writes and leaves(todo, review_writes) is not True:
        raise binder.fail(
            "review.set",
            "a Complete chosen for review would leave the row matching `todo`, so "
            "it would be served here again; write a todo column (e.g. a status) to the value "
            "the reviewing queue's todo waits for",
        )
    if on_escalate and leaves(todo, on_escalate) is not True:
        raise binder.fail(
            "on_escalate",
            "escalate would leave the row matching `todo`, so an item handed to a supervisor would be "
            "served to operators again; write a todo column (e.g. a status) to a value outside the todo filter",
        )
    if on_reopen:
        _check_reopen(binder, todo, outcomes, on_reopen)


def _check_release(
    binder: Binder, todo: list[BoundCondition], on_claim: list[BoundAssignment], on_release: list[BoundAssignment]
) -> None:
    """A release brings the row back to `todo`: what the claim took out of it, on_release puts back."""
    if leaves(todo, on_claim) is True:
        # The claimed row no longer matches todo; a release must bring it back.
        restored = {b.column.name: b for b in on_release}
        for cond in todo:
            claimed = next((b for b in on_claim if b.column.name == cond.column.name), None)
            if claimed is None:
                continue
            back = restored.get(cond.column.name)
            if back is None or holds_after(cond, back) is not True:
                raise binder.fail(
                    "on_release",
                    f"on_claim sets '{cond.column.name}', so on_release must "
                    "set it back to a todo value, or released and expired items would "
                    "leave the queue",
                )
    elif leaves(todo, on_release) is True:
        raise binder.fail(
            "on_release", "on_release would take the row out of `todo`, so released items would leave the queue"
        )


def _check_reopen(
    binder: Binder,
    todo: list[BoundCondition],
    outcomes: Mapping[str, list[BoundAssignment]],
    on_reopen: list[BoundAssignment],
) -> None:
    """The todo columns a Complete writes must come back to a waiting value; the others keep theirs."""
    reopened = {b.column.name: b for b in on_reopen}
    finished = {b.column.name for group in outcomes.values() for b in group}
    for cond in todo:
        if cond.column.name not in finished:
            continue
        back = reopened.get(cond.column.name)
        if back is None or holds_after(cond, back) is not True:
            raise binder.fail(
                "on_reopen",
                f"on_reopen must set '{cond.column.name}' to a value `todo` "
                "waits for, or a reopened item would not be served again",
            )
