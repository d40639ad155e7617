"""Comparing an index the table has with one attach would add: their columns and directions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy.sql import operators


def column_name(expr: Any) -> str:
    """The name of the column an index term sorts by (`col DESC` is the column `col`)."""
    column = expr.element if isinstance(expr, sa.UnaryExpression) else expr
    return str(getattr(column, "name", column))


def wanted_columns(index: sa.Index) -> list[tuple[str, bool]]:
    """(column name, descending) of each of an index's expressions, in order."""
    return [
        (column_name(expr), isinstance(expr, sa.UnaryExpression) and expr.modifier is operators.desc_op)
        for expr in index.expressions
    ]


def leads_with(found: Mapping[str, Any], wanted: sa.Index, *, directions_known: bool) -> bool:
    """Do the reflected index's columns start with the wanted ones, in the same directions? Without
    reflected directions, only an all-ascending wanted index can be matched."""
    names = [str(name) for name in found.get("column_names") or []]
    columns = wanted_columns(wanted)
    if None in (found.get("column_names") or []) or len(names) < len(columns):
        return False  # an expression index, or too short
    sorting = found.get("column_sorting") or {}
    for name, (want, descending) in zip(names, columns, strict=False):
        if name.lower() != want.lower():
            return False
        if directions_known:
            if ("desc" in sorting.get(name, ())) != descending or any(
                flag in sorting.get(name, ()) for flag in ("nulls_first", "nulls_last")
            ):
                return False
        elif descending:
            return False
    return True
