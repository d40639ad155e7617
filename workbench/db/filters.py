"""Configured conditions as SQL (constants inlined by SQLAlchemy) and as Python checks."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from workbench.config import model


def _literal(column: sa.Column[Any], value: Any) -> sa.BindParameter[Any]:
    # literal_execute: SQLAlchemy renders the (typed, escaped) config constant into the statement.
    # PostgreSQL partial indexes and SQL Server filtered indexes only serve queries whose WHERE
    # contains the same constants; with a bound parameter a generic plan would scan the table.
    return sa.bindparam(None, value, type_=column.type, literal_execute=True)


def clause(column: sa.Column[Any], condition: model.Condition, value: Any) -> sa.ColumnElement[bool]:
    """SQL for one condition; `value` is the condition's value already coerced to the column."""
    op = condition.op
    if op == "null":
        return column.is_(None) if value else column.is_not(None)
    if op in ("in", "not_in"):
        param = sa.bindparam(None, list(value), type_=column.type, expanding=True, literal_execute=True)
        return column.in_(param) if op == "in" else column.not_in(param)
    lit = _literal(column, value)
    return {
        "eq": column == lit, "ne": column != lit, "lt": column < lit,
        "le": column <= lit, "gt": column > lit, "ge": column >= lit,
    }[op]


def holds(condition: model.Condition, value: Any, candidate: Any) -> bool | None:
    """Would a row whose column equals `candidate` pass? None when that cannot be decided.

    Follows SQL: a NULL compared with anything does not pass (except `null = true`).
    """
    op = condition.op
    if op == "null":
        return (candidate is None) == bool(value)
    if candidate is None:
        return False
    try:
        if op == "eq":
            return bool(candidate == value)
        if op == "ne":
            return bool(candidate != value)
        if op == "in":
            return candidate in value
        if op == "not_in":
            return candidate not in value
        return bool({"lt": candidate < value, "le": candidate <= value,
                     "gt": candidate > value, "ge": candidate >= value}[op])
    except TypeError:
        return None
