"""workbench's own tables (audit, notes, deferrals, reviews, cool-down, settings, roles, groups, counts, locks,
version) in one MetaData."""

from __future__ import annotations

import datetime as dt
import functools
from typing import Any

import sqlalchemy as sa

SCHEMA_VERSION = 15

AUDIT_TABLE = "workbench_audit"
AUDIT_ITEM_INDEX = "ix_workbench_audit_item"  # the trail by item, where `id` is its key (not PostgreSQL)
AUDIT_OWNER_INDEX = "ix_workbench_audit_owner"  # the change feed: a user's rows past an id
AUDIT_ID_INDEX = "ix_workbench_audit_by_id"  # the relay's and consoles' change feed on PostgreSQL: rows past an id
AUDIT_BRIN_ID_INDEX = "ix_workbench_audit_id"  # its BRIN forerunner (migrations 13 to 14), dropped by 15
COOLDOWN_TABLE = "workbench_cooldown"
SETTINGS_TABLE = "workbench_settings"
VERSION_TABLE = "workbench_schema_version"
ROLES_TABLE = "workbench_roles"
NOTES_TABLE = "workbench_notes"
DEFERRALS_TABLE = "workbench_deferrals"
REVIEWS_TABLE = "workbench_reviews"
GROUPS_TABLE = "workbench_groups"
COUNTS_TABLE = "workbench_counts"
LOCKS_TABLE = "workbench_locks"  # the separate lock table (shape 5) unless a queue names another
ROLE_NAMES = ("supervisor", "operator")
DIALECT = "workbench_dialect"  # MetaData.info key: the database the tables are built for (None: any)


def own(schema: str | None, name: str) -> sa.Table:
    """One of workbench's tables, in `schema` (None: the connection's default)."""
    metadata = _own_metadata(schema)
    return metadata.tables[f"{schema}.{name}" if schema else name]


@functools.lru_cache(maxsize=16)
def _own_metadata(schema: str | None) -> sa.MetaData:
    # Built once per schema: the tables are the same every time, and building them all is ~10 ms of
    # CPU (each supervisor's change asks for the roles table).
    return build_metadata(schema)[0]


def _datetime(metadata: sa.MetaData) -> sa.types.TypeEngine[dt.datetime]:
    # Microseconds on MySQL/MariaDB (DATETIME defaults to whole seconds) and DATETIME2 on SQL Server.
    dialect = metadata.info.get(DIALECT)
    kind: sa.types.TypeEngine[dt.datetime] = sa.DateTime()
    if dialect in (None, "mysql", "mariadb"):
        from sqlalchemy.dialects import mysql

        kind = kind.with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")
    if dialect in (None, "mssql"):
        from sqlalchemy.dialects import mssql

        kind = kind.with_variant(mssql.DATETIME2(), "mssql")  # type: ignore[no-untyped-call]
    return kind


def _long_text(metadata: sa.MetaData) -> sa.types.TypeEngine[str]:
    # TEXT holds only 64 KB on MySQL/MariaDB; NVARCHAR(max) on SQL Server keeps non-ASCII text.
    if metadata.info.get(DIALECT) not in (None, "mysql", "mariadb"):
        return sa.UnicodeText()
    from sqlalchemy.dialects import mysql

    return sa.UnicodeText().with_variant(mysql.MEDIUMTEXT(), "mysql", "mariadb")


def _only(metadata: sa.MetaData, **options: Any) -> dict[str, Any]:
    """Dialect options (postgresql_using=…, mysql_charset=…) for the dialect the metadata is built for:
    naming another dialect's option makes SQLAlchemy import that dialect (~40 ms a command)."""
    dialect = metadata.info.get(DIALECT)
    if dialect is None:
        return options
    prefixes = ("mysql_", "mariadb_") if dialect in ("mysql", "mariadb") else (f"{dialect}_",)
    return {name: value for name, value in options.items() if name.startswith(prefixes)}


def _id_column(primary_key: bool = True) -> sa.Column[int]:
    # BIGINT identity on servers; on SQLite only INTEGER PRIMARY KEY is the auto-numbered rowid.
    return sa.Column(
        "id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=primary_key, autoincrement=True
    )


def _audit_keys(metadata: sa.MetaData) -> tuple[sa.Column[int], sa.schema.SchemaItem]:
    """The audit trail's `id` and its key by item: history is read by (queue, item_key, id).

    On PostgreSQL that is the primary key itself, and `id` (still numbered by its sequence) has no
    index of its own: the table is a heap, so every index costs an entry on each claim and Complete,
    and one entry fewer per audit row measured 12 % more `then_next` pairs/s at 8 processes.
    Elsewhere `id` stays the key: InnoDB stores rows in primary-key order (an item-first key would
    insert all over the table instead of at its end), and SQLite's `id` is the rowid.
    """
    if metadata.info.get(DIALECT) == "postgresql":
        return _id_column(primary_key=False), sa.PrimaryKeyConstraint("queue", "item_key", "id")
    return _id_column(), sa.Index(AUDIT_ITEM_INDEX, "queue", "item_key", "id")


def lock_table(metadata: sa.MetaData, name: str) -> sa.Table:
    """A separate lock table (shape 5): the locks of queues whose own table is only read.

    One row per locked item, keyed by queue and the item's key as text; the primary key makes a
    second claim of one item impossible, whatever program writes here. Rows exist only while an
    item is locked (a release or Complete deletes them), so the table stays small.
    """
    if name in metadata.tables or (metadata.schema and f"{metadata.schema}.{name}" in metadata.tables):
        return metadata.tables[f"{metadata.schema}.{name}" if metadata.schema else name]
    return sa.Table(
        name,
        metadata,
        sa.Column("queue", sa.String(100), primary_key=True),
        sa.Column("item_key", sa.String(200), primary_key=True),
        sa.Column("lock_user", sa.String(128), nullable=False),
        sa.Column("locked_at", _datetime(metadata), nullable=False),  # database clock, UTC
        sa.Column("expires_at", _datetime(metadata), nullable=False),
        sa.Column("token", sa.String(36), nullable=False),
        # Expired locks first in a claim, the sweep, the board; a user's locks (and the per-user limit).
        sa.Index(f"ix_{name}_expires", "queue", "expires_at"),
        sa.Index(f"ix_{name}_user", "queue", "lock_user"),
        **_only(metadata, mysql_charset="utf8mb4", mariadb_charset="utf8mb4"),
    )


def _not_postgresql(
    ddl: Any,
    target: Any,
    bind: Any,
    tables: Any = None,
    state: Any = None,
    *,
    dialect: Any,
    compiler: Any = None,
    checkfirst: bool = False,
) -> bool:
    return bool(dialect is not None and dialect.name != "postgresql")


def _audit_table(metadata: sa.MetaData) -> sa.Table:
    """The audit trail: one row per claim, save, extend, release, completion; and its indexes."""
    audit_id, by_item = _audit_keys(metadata)
    audit = sa.Table(
        AUDIT_TABLE,
        metadata,
        audit_id,
        sa.Column("queue", sa.String(100), nullable=False),
        sa.Column("item_key", sa.String(200), nullable=False),
        sa.Column("event", sa.String(20), nullable=False),
        sa.Column("actor", sa.String(128), nullable=False),  # who did it
        sa.Column("owner", sa.String(128)),  # whose lock it concerned
        sa.Column("token", sa.String(64)),
        sa.Column("at", _datetime(metadata), nullable=False),  # database clock
        sa.Column("reason", sa.String(1000)),
        sa.Column("outcome", sa.String(100)),
        sa.Column("detail", sa.Text()),  # JSON
        # History of one item, in order; also "why was my lock lost".
        by_item,
    )
    # Statistics over a period. Every audit row pays for each index on every claim and
    # completion; rows arrive in time order, so on PostgreSQL a BRIN index (a summary per block
    # range, nearly free to maintain) serves time ranges as well as a B-tree would.
    sa.Index("ix_workbench_audit_time", audit.c.at, **_only(metadata, postgresql_using="brin")).ddl_if(
        dialect="postgresql"
    )
    sa.Index("ix_workbench_audit_time", audit.c.queue, audit.c.at).ddl_if(callable_=_not_postgresql)
    # The change feed (db/feed.py): every window reads its user's rows past the last id it saw, every
    # second. By owner first, that is a few index entries, however busy the queue; without it each look
    # read every row of the last seconds (and on PostgreSQL, where `id` has no index of its own, the
    # whole trail).
    sa.Index(AUDIT_OWNER_INDEX, audit.c.owner, audit.c.id)
    # The relay's and the consoles' feed reads every row past an id, twice a second: on PostgreSQL a
    # B-tree by id (elsewhere `id` is the key). A BRIN index (until migration 15) made each look read
    # every row appended since the last VACUUM (its unsummarized tail: up to a fifth of the trail before
    # autovacuum comes) or, the queues named, let the planner scan the whole item key instead; a
    # B-tree's entries arrive at its right end, the cheapest insert it has.
    sa.Index(AUDIT_ID_INDEX, audit.c.id).ddl_if(dialect="postgresql")
    return audit


def _cooldown_table(metadata: sa.MetaData) -> None:
    """The cool-down: items a user released recently."""
    # Items a user released recently, so that the claim does not hand them straight back. Written
    # only on release (rare), so it costs claims and completions nothing; the claim looks up the
    # user's few live entries through the index.
    sa.Table(
        COOLDOWN_TABLE,
        metadata,
        _id_column(),
        sa.Column("queue", sa.String(100), nullable=False),
        sa.Column("actor", sa.String(128), nullable=False),
        sa.Column("item_key", sa.String(200), nullable=False),
        sa.Column("until", _datetime(metadata), nullable=False),
        sa.Index("ix_workbench_cooldown_actor", "queue", "actor", "until"),
    )


def _settings_table(metadata: sa.MetaData) -> None:
    """Queue settings a supervisor published, every version kept."""
    # Queue settings a supervisor published for every operator (workbench.db.published). Every
    # version is kept, for history and roll-back; the newest is in force. `version` is not
    # auto-numbered: a publish inserts max + 1, and the primary key makes a concurrent loser fail.
    sa.Table(
        SETTINGS_TABLE,
        metadata,
        sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("body", _long_text(metadata), nullable=False),  # TOML: [app] and [queues.*], never [database]
        sa.Column("published_by", sa.String(128), nullable=False),
        sa.Column("published_at", _datetime(metadata), nullable=False),  # database clock, UTC
        sa.Column("note", sa.String(1000)),
        # The body is a whole UTF-8 file; a server whose default character set is latin1 would
        # refuse or mangle characters outside it.
        **_only(metadata, mysql_charset="utf8mb4", mariadb_charset="utf8mb4"),
    )


def _roles_table(metadata: sa.MetaData) -> None:
    """Who is a supervisor where the database cannot say so itself."""
    # Who is a supervisor where the database cannot say so itself (workbench.db.permissions): no
    # supervisor row means roles are not set up and everyone may supervise.
    sa.Table(
        ROLES_TABLE,
        metadata,
        sa.Column("user_name", sa.String(128), primary_key=True),
        sa.Column("role", sa.String(20), nullable=False),
        sa.Column("granted_by", sa.String(128), nullable=False),
        sa.Column("granted_at", _datetime(metadata), nullable=False),  # database clock, UTC
        sa.CheckConstraint("role IN ('supervisor', 'operator')", name="ck_workbench_roles_role"),
    )


def _notes_table(metadata: sa.MetaData) -> None:
    """Notes on items: append-only, read per item in order."""
    # Notes on items (workbench.db.notes): append-only, read per item in order.
    sa.Table(
        NOTES_TABLE,
        metadata,
        _id_column(),
        sa.Column("queue", sa.String(100), nullable=False),
        sa.Column("item_key", sa.String(200), nullable=False),
        sa.Column("author", sa.String(128), nullable=False),
        sa.Column("at", _datetime(metadata), nullable=False),  # database clock, UTC
        sa.Column("kind", sa.String(20)),  # NULL: a note; "release", "complete": written with that action
        sa.Column("text", _long_text(metadata), nullable=False),
        sa.Index("ix_workbench_notes_item", "queue", "item_key", "id"),
        **_only(metadata, mysql_charset="utf8mb4", mariadb_charset="utf8mb4"),
    )


def _deferrals_table(metadata: sa.MetaData) -> None:
    """Deferred items: not served before their time, then first."""
    # Items an operator deferred ("call back Thursday 10:00"): not served before `until` (database
    # clock, UTC), then first. Written on defer (rare); the claim looks items up by key.
    sa.Table(
        DEFERRALS_TABLE,
        metadata,
        _id_column(),
        sa.Column("queue", sa.String(100), nullable=False),
        sa.Column("item_key", sa.String(200), nullable=False),
        sa.Column("actor", sa.String(128), nullable=False),
        sa.Column("until", _datetime(metadata), nullable=False),
        sa.Column("at", _datetime(metadata), nullable=False),
        sa.Column("reason", sa.String(500)),
        sa.Index("ix_workbench_deferrals_item", "queue", "item_key"),
        sa.Index("ix_workbench_deferrals_until", "queue", "until"),
        **_only(metadata, mysql_charset="utf8mb4", mariadb_charset="utf8mb4"),
    )


def _reviews_table(metadata: sa.MetaData) -> None:
    """Completions chosen for review (four eyes) and their verdicts."""
    # Completions chosen for review (four eyes): who did the work, so the reviewing queue's claim never
    # serves it to them, and, once reviewed, the verdict. Written at Complete; the claim looks items
    # up by key; the console counts verdicts per operator.
    sa.Table(
        REVIEWS_TABLE,
        metadata,
        _id_column(),
        sa.Column("queue", sa.String(100), nullable=False),  # the reviewing queue
        sa.Column("item_key", sa.String(200), nullable=False),
        sa.Column("source", sa.String(100), nullable=False),  # the queue whose Complete is reviewed
        sa.Column("doer", sa.String(128), nullable=False),
        sa.Column("at", _datetime(metadata), nullable=False),  # database clock, UTC
        sa.Column("why", sa.String(20), nullable=False),  # "first" (an operator's first items) or "share"
        sa.Column("verdict", sa.String(20)),  # NULL: waiting for review; "accepted", "sent_back"
        sa.Column("reviewer", sa.String(128)),
        sa.Column("reviewed_at", _datetime(metadata)),
        sa.Index("ix_workbench_reviews_item", "queue", "item_key"),
        sa.Index("ix_workbench_reviews_doer", "source", "doer", "at"),
        **_only(metadata, mysql_charset="utf8mb4", mariadb_charset="utf8mb4"),
    )


def _groups_table(metadata: sa.MetaData) -> None:
    """Who belongs to which group."""
    # Who belongs to which group (level 1, level 2, "experienced"): a queue with `serves` serves its
    # members only. A user may be in many groups; supervisors keep the list.
    sa.Table(
        GROUPS_TABLE,
        metadata,
        sa.Column("user_name", sa.String(128), primary_key=True),
        sa.Column("group_name", sa.String(100), primary_key=True),
        sa.Column("added_by", sa.String(128), nullable=False),
        sa.Column("added_at", _datetime(metadata), nullable=False),
        **_only(metadata, mysql_charset="utf8mb4", mariadb_charset="utf8mb4"),
    )


def _counts_table(metadata: sa.MetaData) -> None:
    """The start page's counts per queue, kept for every window."""
    # The start page's counts per queue, kept for every window (workbench.db.counts): one row per
    # queue, counted again by one window when older than `[app] counts_every`; `turn` says which.
    sa.Table(
        COUNTS_TABLE,
        metadata,
        sa.Column("queue", sa.String(100), primary_key=True),
        sa.Column("waiting", sa.Integer, nullable=False),
        sa.Column("overdue", sa.Integer),  # NULL: the queue names no due column
        sa.Column("deferred", sa.Integer, nullable=False),
        sa.Column("turn", sa.Integer, nullable=False),
        sa.Column("counted_at", _datetime(metadata), nullable=False),  # database clock, UTC
    )


def build_metadata(
    schema: str | None = None, bind: sa.Engine | sa.Connection | None = None
) -> tuple[sa.MetaData, sa.Table, sa.Table]:
    """MetaData holding the audit, cool-down, published-settings, roles and version tables, optionally in
    `schema`; returns (metadata, audit, version). With `bind`, only its database's types and options (the
    other SQLAlchemy dialects stay unimported: ~80 ms of every command)."""
    metadata = sa.MetaData(schema=schema, info={DIALECT: bind.dialect.name if bind is not None else None})
    audit = _audit_table(metadata)
    _cooldown_table(metadata)
    _settings_table(metadata)
    _roles_table(metadata)
    _notes_table(metadata)
    _deferrals_table(metadata)
    _reviews_table(metadata)
    _groups_table(metadata)
    _counts_table(metadata)
    lock_table(metadata, LOCKS_TABLE)
    version = sa.Table(
        VERSION_TABLE,
        metadata,
        sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("applied_at", _datetime(metadata), nullable=False),
    )
    return metadata, audit, version
