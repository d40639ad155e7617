"""What a caller gives a queue (a claim's filter, an edit, a move) checked against the columns it may write."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

import sqlalchemy as sa

from workbench import fieldspec
from workbench.config import model
from workbench.core import errors, workflow
from workbench.db import values
from workbench.db.names import AmbiguousName, resolve_name


class Bound(Protocol):
    """What the checks use of a queue bound to its table (db/mapping.py's BoundQueue)."""

    name: str
    config: model.QueueConfig
    table: sa.Table
    key: sa.Column[Any]
    filter_columns: dict[str, sa.Column[Any]]
    specs: dict[str, fieldspec.FieldSpec]
    protected: dict[str, str]
    editable: list[sa.Column[Any]]

    @property
    def lock_columns(self) -> list[sa.Column[Any]]: ...


def _hint(name: str, names: list[str]) -> str:
    import difflib  # only for a hint in a message: no part of a command that works

    hint = difflib.get_close_matches(name, names, n=1)
    return f"; did you mean '{hint[0]}'?" if hint else ""


def named_column(q: Bound, name: str) -> sa.Column[Any] | None:
    """The table's column called `name` (see resolve_name), e.g. `--set Subject=…` from a script
    written for a database that kept the name's case; None when there is none."""
    try:
        found = resolve_name(name, [c.name for c in q.table.c])
    except AmbiguousName as exc:
        raise errors.InvalidValue(f"column {exc}", column=name) from None
    return None if found is None else q.table.c[found]


def coerce_filter(q: Bound, where: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """A claim-time filter ({column: value}) checked against `filter_by` and converted to the
    columns' types, as (column, value) pairs in the order given."""
    chosen = []
    for name, raw in where.items():
        column = q.filter_columns.get(name)
        if column is None:  # `--where category=…` for `filter_by = ["Category"]`: the column, however written
            named = named_column(q, name)
            column = next((c for c in q.filter_columns.values() if c is named), None)
        if column is None:
            allowed = ", ".join(q.filter_columns) or "none: set filter_by in the queue's config"
            raise errors.UsageError(f"queue {q.name} cannot be narrowed by '{name}' (columns it can: {allowed})")
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            raise errors.UsageError(f"give a value to narrow {q.name} by: {name}=VALUE")
        value = values.coerce(column, raw)
        chosen.append((column.name, value))
    return tuple(chosen)


def movable(q: Bound, column: sa.Column[Any]) -> bool:
    """May a supervisor's move select by `column` or write it (not the key, the lock, or computed)?"""
    return column is not q.key and column not in q.lock_columns and column.computed is None


def movable_column(q: Bound, name: str, what: str = "column") -> sa.Column[Any]:
    """The column called `name` if a move may select by it or write it (not the key, the lock, or
    computed); InvalidValue says why not."""
    column = named_column(q, name)
    if column is None:
        raise errors.InvalidValue(
            f"{what} {name}: no such column in {q.config.table_label}" + _hint(name, [c.name for c in q.table.c]),
            column=name,
        )
    if not movable(q, column):
        why = (
            "is the key"
            if column is q.key
            else ("holds the lock" if column.computed is None else "is computed by the database")
        )
        raise errors.InvalidValue(f"{what} {column.name}: a move cannot use it: it {why}", column=column.name)
    return column


def coerce_moves(q: Bound, changes: Mapping[str, Any], what: str) -> dict[str, Any]:
    """Typed values for a supervisor's move of waiting items (`--set`) or its selection (`--where`):
    any column but the key and the lock, checked by the column's field rules."""
    result = {}
    written = {c.name for c in given(q, "move")} if what == "--set" else None
    for name, raw in changes.items():
        column = movable_column(q, name, what)
        if written is not None and column.name not in written:
            # Beside what a move may select by: what the table says a move writes (its Write.MOVED_VALUES).
            raise errors.InvalidValue(f"{what} {column.name}: a move does not write it", column=column.name)
        if what == "--where" and (raw is None or (isinstance(raw, str) and not raw.strip())):
            raise errors.UsageError(f"give a value to select by: --where {column.name}=VALUE")
        result[column.name] = fieldspec.check(q.specs[column.name], raw)
    return result


def given(q: Bound, transition: str) -> list[sa.Column[Any]]:
    """The columns the values a caller gives with `transition` may write, in table order: by the kind
    its row of core/workflow.py says it takes (workflow.given: Write.EDITS, the editable columns;
    Write.MOVED_VALUES, the movable ones), none where it takes none. The engine checks an edit's and a
    move's names against it (coerce_edits, coerce_moves), SQL Server's procedures their JSON argument."""
    kind = workflow.given(transition)
    if kind is None:
        return []
    names = {c.name for c in _GIVEN[kind](q)}
    return [c for c in q.table.c if c.name in names]


def coerce_edits(q: Bound, edits: Mapping[str, Any], transition: str = "save") -> dict[str, Any]:
    """Typed values for an edit made with `transition` (a save, a Complete), checked against the columns
    it may write (given) and the field rules; InvalidValue names the first column that cannot take its value."""
    editable = {c.name: c for c in given(q, transition)}
    result = {}
    for name, raw in edits.items():
        column = editable.get(name)
        if column is None:
            column = named_column(q, name)
        if column is None or column.name not in editable:
            if column is not None and column.name in q.protected:
                raise errors.InvalidValue(
                    f"{name}: cannot be edited: it {q.protected[column.name]}", column=column.name
                )
            raise errors.InvalidValue(
                f"{name}: no such column in {q.config.table_label}" + _hint(name, list(editable)), column=name
            )
        result[column.name] = fieldspec.check(q.specs[column.name], raw)
    return result


# The columns each kind of given values (core/workflow.py GIVEN) may write: which columns is the queue's.
_GIVEN: Mapping[workflow.Write, Callable[[Bound], list[sa.Column[Any]]]] = {
    workflow.Write.EDITS: lambda q: q.editable,
    workflow.Write.MOVED_VALUES: lambda q: [c for c in q.table.c if movable(q, c)],
}
