"""A queue's configured conditions and assignments bound to their columns, and what they leave of a row."""

from __future__ import annotations

import dataclasses
from typing import Any

import sqlalchemy as sa

from workbench.config import model
from workbench.db import backends, clock, filters
from workbench.db.binding.binder import Binder


@dataclasses.dataclass(frozen=True)
class BoundCondition:
    condition: model.Condition
    column: sa.Column[Any]
    value: Any
    now: sa.ColumnElement[Any] | None = None  # the database's clock as this column keeps time

    def clause(self, user: Any = None) -> sa.ColumnElement[bool]:
        """The condition in SQL; one on the claiming user compares with `user`, or holds for all when None."""
        return filters.clause(self.column, self.condition, self.value, user=user, now=self.now)


@dataclasses.dataclass(frozen=True)
class BoundAssignment:
    assignment: model.Assignment
    column: sa.Column[Any]
    value: Any

    def holds(self, user: Any) -> sa.ColumnElement[bool]:
        """The row still holds what this assignment wrote for `user` (a time: some time)."""
        kind = self.assignment.kind
        if kind == "value":
            return self.column == sa.bindparam(None, self.value, type_=self.column.type)
        if kind == "user":
            return self.column == sa.type_coerce(user, self.column.type)
        return self.column.is_(None) if kind == "null" else self.column.is_not(None)

    def held(self) -> sa.ColumnElement[bool]:
        """The row still holds what this assignment wrote, whoever wrote it (a user's name: some name)."""
        return self.column.is_not(None) if self.assignment.kind == "user" else self.holds(None)


@dataclasses.dataclass(frozen=True)
class Context:
    """What binding a condition or an assignment checks it against: the lock's columns, the key, the
    database's clock."""

    binder: Binder
    lock_columns: list[sa.Column[Any]]
    key: sa.Column[Any]
    backend: backends.Backend
    db_local_clock: bool


def bind_condition(at: Context, condition: model.Condition) -> BoundCondition:
    """A configured condition (scope, todo) on its column, its value of the column's type."""
    binder = at.binder
    key = binder.key_of(condition.key)
    column = binder.column(condition.column, key)
    if column in at.lock_columns:
        # Every claim writes the lock columns: a row filtered on them would leave the queue when
        # claimed and never come back when its lock expired.
        raise binder.fail(
            key, f"column '{column.name}' holds the lock, which workbench tests itself; remove it from the filter"
        )
    if condition.dynamic:
        return _bind_relative(at, condition, column, key)
    if condition.op == "null":
        value: Any = condition.value
    elif condition.op in ("in", "not_in"):
        value = tuple(binder.value(column, v, condition.key) for v in condition.value)
    else:
        value = binder.value(column, condition.value, condition.key)
    return BoundCondition(condition, column, value)


def _bind_relative(at: Context, condition: model.Condition, column: sa.Column[Any], key: str) -> BoundCondition:
    """A condition on the database's time or on the claiming user, checked against the column's type."""
    if condition.value.kind == "user":
        if not isinstance(column.type, (sa.String, sa.types.NullType)):
            raise at.binder.fail(
                key, f"column '{column.name}' holds {column.type}, not text: it cannot hold a user's name"
            )
        return BoundCondition(condition, column, condition.value)
    if not at.backend.holds_dates(column):
        raise at.binder.fail(
            key,
            f"column '{column.name}' must be a date or date-time column to compare with the time (it is {column.type})",
        )
    aware = bool(getattr(column.type, "timezone", False))
    return BoundCondition(
        condition, column, condition.value, now=clock.db_now(aware=aware, local=at.db_local_clock and not aware)
    )


def bind_assignment(at: Context, assignment: model.Assignment) -> BoundAssignment:
    """A configured assignment (on_claim, an outcome, …) on its column, its value of the column's type."""
    binder = at.binder
    column = binder.column(assignment.column, binder.key_of(assignment.key))
    if column in at.lock_columns or column is at.key:
        raise binder.fail(
            binder.key_of(assignment.key),
            f"column '{column.name}' is managed by workbench (key or lock) and cannot be set here",
        )
    value = binder.value(column, assignment.value, assignment.key) if assignment.kind == "value" else None
    return BoundAssignment(assignment, column, value)


def holds_after(cond: BoundCondition, assignment: BoundAssignment) -> bool | None:
    """Does `cond` hold on a row once `assignment` wrote its column? None when that cannot be known."""
    kind = assignment.assignment.kind
    if kind in ("value", "null"):
        return filters.holds(cond.condition, cond.value, assignment.value if kind == "value" else None)
    # The acting user or the database time: some value, never NULL; only a NULL test can tell.
    return (not cond.value) if cond.condition.op == "null" else None


def leaves(conditions: list[BoundCondition], assignments: list[BoundAssignment]) -> bool | None:
    """True when the assignments surely make a row fail `conditions`; None when unknown."""
    written = {b.column.name: b for b in assignments}
    unknown = False
    for cond in conditions:
        assignment = written.get(cond.column.name)
        if assignment is None:
            continue
        holds = holds_after(cond, assignment)
        if holds is False:
            return True
        unknown = unknown or holds is None
    return None if unknown else False
