"""Configured conditions as SQL (constants inlined by SQLAlchemy) and as Python checks."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from workbench.config import model
from workbench.db import clock


def _literal(column: sa.Column[Any], value: Any) -> sa.BindParameter[Any]:
    # literal_execute: SQLAlchemy renders the (typed, escaped) config constant into the statement.
    # PostgreSQL partial indexes and SQL Server filtered indexes only serve queries whose WHERE
    # contains the same constants; with a bound parameter a generic plan would scan the table.
    return sa.bindparam(None, value, type_=column.type, literal_execute=True)


def clause(
    column: sa.Column[Any],
    condition: model.Condition,
    value: Any,
    *,
    user: Any = None,
    now: sa.ColumnElement[Any] | None = None,
) -> sa.ColumnElement[bool]:
    """SQL for one condition; `value` is the condition's value already coerced to the column.

    A condition on the claiming user compares with `user` (a name or a bound parameter); with no
    user (counts, the lock board) it holds for everyone. A condition on the time compares with
    `now`, the database's clock as the column keeps time, moved by the condition's seconds.
    """
    test = _test(column, condition, value, user, now)
    return sa.or_(test, column.is_(None)) if condition.or_null else test


def _test(
    column: sa.Column[Any], condition: model.Condition, value: Any, user: Any, now: sa.ColumnElement[Any] | None
) -> sa.ColumnElement[bool]:
    op = condition.op
    if isinstance(value, model.Relative):
        if value.kind == "user":
            if user is None:
                return sa.true()
            return _compare(column, op, user)
        assert now is not None, "a condition on the time needs the database's clock"
        moved = clock.add_seconds(now, sa.literal_column(str(int(value.seconds)))) if value.seconds else now
        return _compare(column, op, moved)
    if op == "null":
        return column.is_(None) if value else column.is_not(None)
    if op in ("in", "not_in"):
        param = sa.bindparam(None, list(value), type_=column.type, expanding=True, literal_execute=True)
        return column.in_(param) if op == "in" else column.not_in(param)
    return _compare(column, op, _literal(column, value))


def _compare(column: sa.Column[Any], op: str, other: Any) -> sa.ColumnElement[bool]:
    compared: sa.ColumnElement[bool] = {
        "eq": column == other,
        "ne": column != other,
        "lt": column < other,
        "le": column <= other,
        "gt": column > other,
        "ge": column >= other,
    }[op]
    return compared


def holds(condition: model.Condition, value: Any, candidate: Any) -> bool | None:
    """Would a row whose column equals `candidate` pass? None when that cannot be decided.

    Follows SQL: a NULL compared with anything does not pass (except `null = true` and `or_null`).
    A condition on the time or the claiming user cannot be decided without them.
    """
    op = condition.op
    if op == "null":
        return (candidate is None) == bool(value)
    if candidate is None:
        return condition.or_null
    if isinstance(value, model.Relative):
        return None
    try:
        if op == "eq":
            return bool(candidate == value)
        if op == "ne":
            return bool(candidate != value)
        if op == "in":
            return candidate in value
        if op == "not_in":
            return candidate not in value
        return bool(
            {"lt": candidate < value, "le": candidate <= value, "gt": candidate > value, "ge": candidate >= value}[op]
        )
    except TypeError:
        return None
