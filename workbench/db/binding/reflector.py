"""The queues' tables read from the database together: a few catalog queries per schema, not a dozen per table."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

import sqlalchemy as sa

from workbench.config import model
from workbench.core import errors
from workbench.db.names import AmbiguousName, resolve_name


class Reflector:
    """Reads one connection's tables, each once.

    SQLAlchemy reflects a table with about ten catalog queries (columns, keys, foreign keys, indexes,
    constraints, comment, options), and the tables its foreign keys name with as many again; its batch
    form reads those for many tables at once. A config's queues usually name several tables of one
    schema (the demo's three tables cost 47 queries on PostgreSQL one by one), so the
    tables the queues name are read together, a batch per schema, when the first of them is asked for.
    A view, which the table list does not hold, is read alone as before.

    `read`: what a Reflector read before on this database as it is now (or on an exact copy of it): its tables
    and table lists are taken, not read again; what it lacks is read.
    """

    def __init__(self, conn: sa.Connection, queues: Iterable[model.QueueConfig] = (), read: Read | None = None) -> None:
        self._conn = conn
        self._inspector = sa.inspect(conn)
        # One MetaData: a table named by two queues, or by a queue and another's foreign key, is read once.
        self._metadata = sa.MetaData()
        self._wanted: dict[str | None, list[str]] = {}
        for queue in queues:
            wanted = self._wanted.setdefault(queue.schema, [])
            wanted.append(queue.table)
            # The related tables its lookups name (db/lookups.py finds them in this MetaData).
            wanted += [f.lookup.table for f in queue.fields.values() if f.lookup is not None and f.lookup.table]
        self._names: dict[str | None, list[str]] = {}
        self._batched: set[str | None] = set()
        if read is not None:  # copies: what this binding adds to its tables (an index, a lookup) stays its own
            self._names = {schema: list(names) for schema, names in read.names.items()}
            for table in read.metadata.tables.values():
                table.to_metadata(self._metadata)

    def read(self) -> Read:
        """What this Reflector has read so far, for another on the same database (Reflector's `read`)."""
        return Read(self._metadata, {schema: list(names) for schema, names in self._names.items()})

    def names(self, schema: str | None) -> list[str]:
        """The schema's tables (not views), listed once."""
        if schema not in self._names:
            self._names[schema] = self._inspector.get_table_names(schema=schema)
        return self._names[schema]

    def table(self, queue: model.QueueConfig, config_path: str) -> sa.Table:
        """The queue's table as the database has it; a config error when it does not exist."""
        names = self.names(queue.schema)
        try:
            # By the name the database keeps, even where it would find `TBLQUEUE` itself: SQLite does, but
            # then reflects no primary key for it (it looks the table's SQL up by the exact name).
            found = resolve_name(queue.table, names) or queue.table
        except AmbiguousName as exc:
            raise errors.ConfigError(f"table {exc}", file=config_path, key=f"queues.{queue.name}.table") from None
        try:
            return self.named(found, queue.schema)
        except sa.exc.NoSuchTableError:
            import difflib  # only for a hint in a message: no part of a command that works

            hint = difflib.get_close_matches(queue.table, names, n=1)
            more = (
                f"; did you mean '{hint[0]}'?"
                if hint
                else (f" (tables: {', '.join(sorted(names)[:20])})" if names else " (the database has no tables)")
            )
            raise errors.ConfigError(
                f"table '{queue.table_label}' does not exist{more}", file=config_path, key=f"queues.{queue.name}.table"
            ) from None

    def named(self, name: str, schema: str | None) -> sa.Table:
        """The table of exactly this name (a lookup's related table; a view too); NoSuchTableError when none."""
        self._batch(schema)
        have = self._metadata.tables.get(_key(schema, name))
        return have if have is not None else sa.Table(name, self._metadata, schema=schema, autoload_with=self._conn)

    def _batch(self, schema: str | None) -> None:
        """Read every wanted table of `schema` that the table list holds, in one go (with the tables their
        foreign keys name). Names that are ambiguous or missing are left to table(), which names the problem."""
        if schema in self._batched:
            return
        self._batched.add(schema)
        names = self.names(schema)
        found: list[str] = []
        for wanted in self._wanted.get(schema, []):
            try:
                name = resolve_name(wanted, names)
            except AmbiguousName:
                continue
            if name is not None and name not in found and _key(schema, name) not in self._metadata.tables:
                found.append(name)
        if not found:
            return
        # Foreign keys resolved by hand, not by SQLAlchemy's resolve_fks: that reads each named table alone,
        # as many queries again per table; here the tables they name (the lookups' related tables) are one
        # more batch per schema. One step deep: a related table's own foreign keys are not followed.
        self._metadata.reflect(bind=self._conn, schema=schema, only=found, resolve_fks=False)
        named: dict[str | None, list[str]] = {}
        for name in found:
            for fk in self._metadata.tables[_key(schema, name)].foreign_keys:
                target = fk.target_fullname.split(".")
                where, table = (".".join(target[:-2]) or None, target[-2]) if len(target) > 2 else (schema, target[0])
                if _key(where, table) not in self._metadata.tables and table not in named.setdefault(where, []):
                    named[where].append(table)
        for where, tables in named.items():
            present = [table for table in tables if table in self.names(where)]
            if present:
                self._metadata.reflect(bind=self._conn, schema=where, only=present, resolve_fks=False)


@dataclasses.dataclass(frozen=True)
class Read:
    """Tables a Reflector read (by their MetaData's keys) and the schemas' table lists it read."""

    metadata: sa.MetaData
    names: dict[str | None, list[str]]


def _key(schema: str | None, name: str) -> str:
    """A table's key in a MetaData."""
    return f"{schema}.{name}" if schema else name


def reflect_table(conn: sa.Connection, queue: model.QueueConfig, config_path: str) -> sa.Table:
    """One queue's table as the database has it (attach, a single check); a config error when it does not exist."""
    return Reflector(conn).table(queue, config_path)
