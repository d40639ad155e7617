"""Lookups: a column whose value is a key of another table, searched and checked in that table."""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol

import sqlalchemy as sa

from workbench.config import model
from workbench.core import errors, models, problems
from workbench.db import values
from workbench.db.backends.base import Backend
from workbench.db.binding import reflector
from workbench.db.names import AmbiguousName, resolve_name

SEARCH_LIMIT = 50  # rows a search returns at most: a picker shows a screenful, never the table
# A related table of this many rows or more is large: `attach` suggests the index its search reads,
# and a search lists rows containing the text (after those starting with it) only from CONTAINS_FROM
# characters. One or two letters inside names are no index's to find (pg_trgm's trigrams start at
# three): a search that finds no row read the whole table, 85 ms on 100,000 rows
# (docs/explanation/performance.md, "Lookups"); a small table is read in a few milliseconds.
LARGE_ROWS = 10_000
CONTAINS_FROM = 3


class Bound(Protocol):
    """What a queue's lookups are found from: the queue bound to its table (db/mapping.py's BoundQueue)."""

    @property
    def config(self) -> model.QueueConfig: ...

    @property
    def table(self) -> sa.Table: ...

    @property
    def backend(self) -> Backend: ...


@dataclasses.dataclass(frozen=True)
class Lookup:
    """One field's related table: the key its value is, the column shown and searched, a second one."""

    field: str  # the queue's column
    table: sa.Table
    key: sa.Column[Any]
    display: sa.Column[Any]
    detail: sa.Column[Any] | None
    backend: Backend
    # LARGE_ROWS or more at the first search (no short text inside names then); counted there, not
    # when the queue is bound: a login may work the queue without the right to read this table.
    large: bool | None = None

    @property
    def label(self) -> str:
        """The related table as messages name it."""
        return self.table.name

    def _select(self) -> sa.Select[Any]:
        columns = [self.key, self.display] + ([self.detail] if self.detail is not None else [])
        return sa.select(*columns)

    def _choices(self, rows: Any) -> list[models.Choice]:
        return [
            models.Choice(
                key=row[0],
                display="" if row[1] is None else str(row[1]),
                detail=None if self.detail is None or row[2] is None else str(row[2]),
            )
            for row in rows
        ]

    def search(self, conn: sa.Connection, text: str, limit: int = SEARCH_LIMIT) -> list[models.Choice]:
        """Rows whose display starts with `text` (whatever the case), then those containing it (in a
        large table from CONTAINS_FROM characters), in display order, at most `limit`: two bounded
        queries, the first one an index can serve."""
        found, inside = self.search_start(conn, text, limit)
        return found + (self.search_inside(conn, text, limit - len(found)) if inside else [])

    def search_start(
        self, conn: sa.Connection, text: str, limit: int = SEARCH_LIMIT
    ) -> tuple[list[models.Choice], bool]:
        """What a picker shows at once for `text`: the rows starting with it (an index's range), and in a
        small table those containing it too; and whether search_inside may add rows. In a large table
        the search inside names reads every row where no index finds text inside them (SQLite, MariaDB:
        85 ms on 100,000 rows), so a picker asks for it apart and adds its rows when they come."""
        text, limit = text.strip(), max(1, min(limit, SEARCH_LIMIT))
        order = (*self.backend.search_order(self.display, "prefix"), self.key)
        if not text:
            return self._choices(conn.execute(self._select().order_by(*order).limit(limit))), False
        starts = self.backend.text_match(self.display, text, "prefix")
        found = self._choices(conn.execute(self._select().where(starts).order_by(*order).limit(limit)))
        if self.large is None:
            object.__setattr__(self, "large", is_large(conn, self.table))  # frozen: a cache, the same for all
        if len(found) >= limit or (self.large and len(text) < CONTAINS_FROM):
            return found, False
        if self.large:
            return found, True
        return found + self.search_inside(conn, text, limit - len(found)), False

    def search_inside(self, conn: sa.Connection, text: str, limit: int = SEARCH_LIMIT) -> list[models.Choice]:
        """The rows containing `text` but not starting with it, in display order, at most `limit`."""
        text, limit = text.strip(), max(1, min(limit, SEARCH_LIMIT))
        starts = self.backend.text_match(self.display, text, "prefix")
        inside = sa.and_(self.backend.text_match(self.display, text, "contains"), sa.not_(starts))
        order = (*self.backend.search_order(self.display, "contains"), self.key)
        return self._choices(conn.execute(self._select().where(inside).order_by(*order).limit(limit)))

    def named(self, conn: sa.Connection, text: str, limit: int = 10) -> list[models.Choice]:
        """Rows whose display is `text`, whatever the case (the command line's `--set col="Acme"`)."""
        match = self.backend.text_match(self.display, text.strip(), "exact")
        return self._choices(conn.execute(self._select().where(match).order_by(self.key).limit(limit)))

    def typed_key(self, value: Any) -> Any:
        """`value` as the related key column stores it; None when it cannot be one."""
        try:
            return values.coerce(self.key, value)
        except errors.InvalidValue:
            return None

    def resolve(self, conn: sa.Connection, keys: list[Any]) -> dict[Any, models.Choice]:
        """The rows of these keys, by key (a key not in the table is left out)."""
        typed = [k for k in (self.typed_key(v) for v in keys) if k is not None]
        if not typed:
            return {}
        found = self._choices(conn.execute(self._select().where(self.key.in_(typed))))
        return {c.key: c for c in found}

    def missing(self, value: Any) -> errors.InvalidValue:
        """The message for a value the related table does not have, naming the field and the value."""
        return errors.InvalidValue.at(self.field, problems.NOT_IN_LOOKUP, value, self.label)


def check_values(conn: sa.Connection, lookups: dict[str, Lookup], typed: dict[str, Any]) -> None:
    """Every lookup value among `typed` (an edit, as coerce_edits typed it) is a key of its related
    table; InvalidValue names the first field whose value is not."""
    for name, value in typed.items():
        lookup = lookups.get(name)
        if lookup is None or value is None or value == "":
            continue
        if not lookup.resolve(conn, [value]):
            raise lookup.missing(value)


def bind(shapes: reflector.Reflector, q: Bound, config_path: str) -> dict[str, Lookup]:
    """The queue's lookups by column: each configured `fields.COL.lookup`, and each column with a
    one-column foreign key (reflected) whose related table has a text column to show. Every
    configured name is checked against the reflected tables (`shapes`: the connection's, each read
    once); ConfigError names the key and the fix."""
    found = {}
    for column in q.table.c:
        field = _field_of(q, column.name)
        if field is not None and field.lookup is not None:
            found[column.name] = _configured(shapes, q, column, field.lookup, config_path)
        else:
            reflected = _from_foreign_key(q, column)
            if reflected is not None:
                found[column.name] = reflected
    return found


def is_large(conn: sa.Connection, table: sa.Table) -> bool:
    """Has `table` LARGE_ROWS rows or more? (Counts no further: a few milliseconds at most.)"""
    first = sa.select(sa.literal(1)).select_from(table).limit(LARGE_ROWS).subquery()
    return (conn.execute(sa.select(sa.func.count()).select_from(first)).scalar() or 0) >= LARGE_ROWS


def _field_of(q: Bound, column: str) -> model.FieldConfig | None:
    try:
        name = resolve_name(column, q.config.fields)
    except AmbiguousName:
        return None
    return q.config.fields[name] if name is not None else None


def _foreign_key(column: sa.Column[Any]) -> sa.Column[Any] | None:
    """The column a one-column foreign key of `column` refers to (None: none, or one of several columns)."""
    for fk in column.foreign_keys:
        if fk.constraint is not None and len(fk.constraint.columns) == 1:
            try:
                return fk.column
            except sa.exc.NoReferencedTableError:  # a table reflection could not read (another schema, no right)
                return None
    return None


def _first_text(table: sa.Table, skip: sa.Column[Any]) -> sa.Column[Any] | None:
    return next(
        (c for c in table.c if c is not skip and isinstance(c.type, sa.String) and not isinstance(c.type, sa.Enum)),
        None,
    )


def _from_foreign_key(q: Bound, column: sa.Column[Any]) -> Lookup | None:
    target = _foreign_key(column)
    if target is None or target.table is q.table:
        return None  # a row referring to its own table (a parent case) is no lookup
    display = _first_text(target.table, target)
    if display is None:
        return None  # nothing to show but the key itself: a plain field
    return Lookup(column.name, target.table, target, display, None, q.backend)


def _configured(
    shapes: reflector.Reflector, q: Bound, column: sa.Column[Any], config: model.LookupConfig, config_path: str
) -> Lookup:
    def fail(name: str, problem: str) -> errors.ConfigError:
        return errors.ConfigError(problem, file=config_path, key=f"{config.key}.{name}" if name else config.key)

    target = _foreign_key(column)
    if config.table is not None:
        names = shapes.names(q.config.schema)
        try:
            name = resolve_name(config.table, names)
        except AmbiguousName as exc:
            raise fail("table", f"table {exc}") from None
        if name is None:
            import difflib  # only for a hint in a message: no part of a command that works

            hint = difflib.get_close_matches(config.table, names, n=1)
            raise fail(
                "table", f"table '{config.table}' does not exist" + (f"; did you mean '{hint[0]}'?" if hint else "")
            )
        table = shapes.named(name, q.config.schema)
        if target is not None and target.table.name != table.name:
            target = None  # the configured table wins over the foreign key
    elif target is not None:
        table = target.table
    else:
        raise fail(
            "table", f"'{column.name}' has no foreign key: name the related table, e.g. lookup = {{ table = \"…\" }}"
        )

    def named(key: str, wanted: str | None) -> sa.Column[Any] | None:
        if wanted is None:
            return None
        try:
            found = resolve_name(wanted, [c.name for c in table.c])
        except AmbiguousName as exc:
            raise fail(key, f"column {exc}") from None
        if found is None:
            import difflib  # only for a hint in a message: no part of a command that works

            hint = difflib.get_close_matches(wanted, [c.name for c in table.c], n=1)
            raise fail(
                key,
                f"'{table.name}' has no column '{wanted}'"
                + (f"; did you mean '{hint[0]}'?" if hint else f" (columns: {', '.join(c.name for c in table.c)})"),
            )
        return table.c[found]

    key = named("key", config.key_column)
    if key is None:
        if target is not None:
            key = table.c[target.name]
        elif len(table.primary_key.columns) == 1:
            key = next(iter(table.primary_key.columns))
        else:
            raise fail("key", f"'{table.name}' has no one-column primary key: name the column, e.g. key = \"id\"")
    display = named("display", config.display)
    if display is None:
        display = _first_text(table, key)
    if display is None:
        raise fail("display", f"'{table.name}' has no text column: name the column shown, e.g. display = \"name\"")
    if not isinstance(display.type, sa.String):
        raise fail("display", f"'{display.name}' is {display.type}; a lookup shows and searches a text column")
    return Lookup(column.name, table, key, display, named("detail", config.detail), q.backend)
