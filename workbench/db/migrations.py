"""Versioned migrations of workbench's own tables (`workbench init`), and the version check."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator

import sqlalchemy as sa

from workbench.core import errors
from workbench.db import backends, clock, dberrors, tables


@dataclasses.dataclass(frozen=True)
class Migration:
    version: int
    description: str
    apply: Callable[[sa.Connection, sa.MetaData], None]


def _v1(conn: sa.Connection, metadata: sa.MetaData) -> None:
    for name in (tables.AUDIT_TABLE, tables.COOLDOWN_TABLE):
        metadata.tables[_qualified(metadata, name)].create(conn, checkfirst=True)


def _v2(conn: sa.Connection, metadata: sa.MetaData) -> None:
    metadata.tables[_qualified(metadata, tables.SETTINGS_TABLE)].create(conn, checkfirst=True)


def _v3(conn: sa.Connection, metadata: sa.MetaData) -> None:
    metadata.tables[_qualified(metadata, tables.ROLES_TABLE)].create(conn, checkfirst=True)


def _v4(conn: sa.Connection, metadata: sa.MetaData) -> None:
    own = [
        metadata.tables[_qualified(metadata, name)]
        for name in (tables.AUDIT_TABLE, tables.COOLDOWN_TABLE, tables.ROLES_TABLE, tables.VERSION_TABLE)
    ]
    backends.of(conn).normalise_own_tables(conn, own)


def _v5(conn: sa.Connection, metadata: sa.MetaData) -> None:
    metadata.tables[_qualified(metadata, tables.LOCKS_TABLE)].create(conn, checkfirst=True)


def _v6(conn: sa.Connection, metadata: sa.MetaData) -> None:
    backends.of(conn).digest_tokens(conn, metadata.tables[_qualified(metadata, tables.AUDIT_TABLE)])


def _v7(conn: sa.Connection, metadata: sa.MetaData) -> None:
    metadata.tables[_qualified(metadata, tables.NOTES_TABLE)].create(conn, checkfirst=True)


def _v8(conn: sa.Connection, metadata: sa.MetaData) -> None:
    metadata.tables[_qualified(metadata, tables.DEFERRALS_TABLE)].create(conn, checkfirst=True)


def _v9(conn: sa.Connection, metadata: sa.MetaData) -> None:
    metadata.tables[_qualified(metadata, tables.REVIEWS_TABLE)].create(conn, checkfirst=True)


def _v10(conn: sa.Connection, metadata: sa.MetaData) -> None:
    metadata.tables[_qualified(metadata, tables.GROUPS_TABLE)].create(conn, checkfirst=True)


def _v11(conn: sa.Connection, metadata: sa.MetaData) -> None:
    # The audit trail's key as tables.py declares it now: by item on PostgreSQL, and its item index
    # gone (elsewhere nothing changes). The step holds the table while the key is built.
    audit = metadata.tables[_qualified(metadata, tables.AUDIT_TABLE)]
    found = sa.inspect(conn).get_pk_constraint(audit.name, schema=audit.schema)
    wanted = [column.name for column in audit.primary_key.columns]
    if found["constrained_columns"] == wanted:
        return
    # The key and index as an earlier version built them, to name them in DROP statements.
    old_key = found["constrained_columns"]
    before = sa.Table(
        audit.name,
        sa.MetaData(schema=audit.schema),
        *(sa.Column(name, sa.Integer) for name in dict.fromkeys([*old_key, *wanted])),
        sa.PrimaryKeyConstraint(*old_key, name=found["name"]),
    )
    conn.execute(sa.schema.DropConstraint(before.primary_key))
    conn.execute(sa.schema.AddConstraint(audit.primary_key))
    item_index = sa.Index(tables.AUDIT_ITEM_INDEX, *(before.c[name] for name in wanted))
    conn.execute(sa.schema.DropIndex(item_index, if_exists=True))


def _v12(conn: sa.Connection, metadata: sa.MetaData) -> None:
    metadata.tables[_qualified(metadata, tables.COUNTS_TABLE)].create(conn, checkfirst=True)


def _v13(conn: sa.Connection, metadata: sa.MetaData) -> None:
    audit = metadata.tables[_qualified(metadata, tables.AUDIT_TABLE)]
    for index in audit.indexes:
        if index.name in (tables.AUDIT_OWNER_INDEX, tables.AUDIT_ID_INDEX):
            index.create(conn, checkfirst=True)  # by id on PostgreSQL only (its ddl_if; BRIN until 15)


def _v14(conn: sa.Connection, metadata: sa.MetaData) -> None:
    backends.of(conn).notify_changes(conn, metadata.tables[_qualified(metadata, tables.AUDIT_TABLE)])


def _v15(conn: sa.Connection, metadata: sa.MetaData) -> None:
    # The feed's BRIN index by id on PostgreSQL replaced by a B-tree (tables.py says why). The step holds
    # the trail's writes while the index is built: seconds per million rows.
    audit = metadata.tables[_qualified(metadata, tables.AUDIT_TABLE)]
    before = sa.Table(audit.name, sa.MetaData(schema=audit.schema), sa.Column("id", sa.BigInteger))
    sa.Index(tables.AUDIT_BRIN_ID_INDEX, before.c.id).ddl_if(dialect="postgresql").drop(conn, checkfirst=True)
    for index in audit.indexes:
        if index.name == tables.AUDIT_ID_INDEX:
            index.create(conn, checkfirst=True)


def create_lock_tables(engine: sa.Engine, schema: str | None, names: set[str]) -> list[str]:
    """Create the separate lock tables a config names besides workbench's own; returns those created."""
    metadata, _, _ = tables.build_metadata(schema, engine)
    created = []
    for name in sorted(names - {tables.LOCKS_TABLE}):
        table = tables.lock_table(metadata, name)
        with _creating(engine, schema), engine.begin() as conn:
            if not sa.inspect(conn).has_table(name, schema=schema):
                table.create(conn)
                created.append(name)
    return created


def _qualified(metadata: sa.MetaData, name: str) -> str:
    return f"{metadata.schema}.{name}" if metadata.schema else name


# Append new steps here; never edit a released one. Each runs in its own transaction.
MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "audit trail and release cool-down tables", _v1),
    Migration(2, "published queue settings", _v2),
    Migration(3, "supervisor and operator roles", _v3),
    Migration(4, "workbench's tables in utf8mb4 on MySQL/MariaDB", _v4),
    Migration(5, "the separate lock table (queues with [queues.Q.lock] table)", _v5),
    Migration(6, "the audit trail keeps lock tokens' digests, not the tokens", _v6),
    Migration(7, "notes on items", _v7),
    Migration(8, "deferred items", _v8),
    Migration(9, "reviews (four eyes)", _v9),
    Migration(10, "groups of users a queue may serve only", _v10),
    Migration(11, "the audit trail keyed by item on PostgreSQL", _v11),
    Migration(12, "the start page's counts per queue, shared by every window", _v12),
    Migration(13, "the audit trail indexed for the change feed (by owner and id)", _v13),
    Migration(14, "each audit row notifies listeners as it commits (PostgreSQL's NOTIFY)", _v14),
    Migration(15, "the change feed's index by id a B-tree on PostgreSQL", _v15),
)
assert MIGRATIONS[-1].version == tables.SCHEMA_VERSION


def current_version(conn: sa.Connection, schema: str | None) -> int:
    """Highest applied version, or 0 when workbench's tables are not there."""
    if not sa.inspect(conn).has_table(tables.VERSION_TABLE, schema=schema):
        return 0
    # The one column read, not every table of build_metadata (its tables and indexes: ~10 ms of
    # every command and window start).
    version = sa.table(tables.VERSION_TABLE, sa.column("version", sa.Integer), schema=schema)
    return _latest(conn, version)


def _latest(conn: sa.Connection, version: sa.TableClause) -> int:
    """The highest version recorded in the version table (0 while it is empty)."""
    return int(conn.execute(sa.select(sa.func.max(version.c.version))).scalar() or 0)


def upgrade(engine: sa.Engine, schema: str | None = None) -> list[Migration]:
    """Apply every missing migration in order; returns those applied."""
    metadata, _, version = tables.build_metadata(schema, engine)
    with _creating(engine, schema), engine.begin() as conn:
        version.create(conn, checkfirst=True)
    applied = []
    for migration in MIGRATIONS:
        with _creating(engine, schema), engine.begin() as conn:
            # Read again in each step's transaction: another `workbench init` may have applied it
            # meanwhile. The version table exists by now, so no catalogue look-up is needed.
            if _latest(conn, version) >= migration.version:
                continue
            migration.apply(conn, metadata)
            conn.execute(sa.insert(version).values(version=migration.version, applied_at=clock.db_now()))
        applied.append(migration)
    return applied


# The grant that lets a login create tables, per database (PostgreSQL 15+ no longer grants
# CREATE on schema public to everyone).


@contextlib.contextmanager
def _creating(engine: sa.Engine, schema: str | None) -> Iterator[None]:
    """Say which statement (workbench's own tables) and which grant is missing when the login may
    not create tables."""
    try:
        yield
    except sa.exc.DBAPIError as exc:
        if not dberrors.is_denied(exc):
            raise
        where = schema or engine.dialect.default_schema_name or engine.url.database or "the default schema"
        login = engine.url.username or "<login>"
        grant = backends.of(engine).create_grant
        how = f"or {grant.format(schema=where, login=login)}" if grant else "or grant this login CREATE there"
        raise errors.NotPermitted(
            f"cannot create workbench's tables in schema {where}: {dberrors.first_line(exc)}; run "
            f"`workbench init` as the schema's owner, {how}",
            user=engine.url.username,
        ) from exc


def check(conn: sa.Connection, schema: str | None) -> None:
    """Raise NotInitialized unless the database has exactly this program's schema version."""
    found = current_version(conn, schema)
    if found == 0:
        raise errors.NotInitialized(
            "workbench's tables are not in this database yet: run `workbench init` "
            "(it creates the audit table; it needs permission to create tables)"
        )
    if found < tables.SCHEMA_VERSION:
        raise errors.NotInitialized(
            f"workbench's tables are at version {found}, this program needs {tables.SCHEMA_VERSION}: "
            "run `workbench init` to upgrade them"
        )
    if found > tables.SCHEMA_VERSION:
        raise errors.NotInitialized(
            f"workbench's tables are at version {found}, newer than this program understands "
            f"({tables.SCHEMA_VERSION}): install the newer workbench"
        )
