"""What may differ per database, with the portable answer; each database's module overrides its part."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, Protocol

import sqlalchemy as sa

from workbench.core import models
from workbench.db import clock, digests

if TYPE_CHECKING:
    from workbench.config import model


class NewRow(NamedTuple):
    """A row's insert unless its primary key is taken (Backend.new_row), and where the driver may not say
    whether a row went in, the read that tells (MariaDB over ODBC: mysql.py)."""

    insert: sa.Executable
    check: sa.Select[Any] | None = None


class ListenLost(Exception):
    """The connection a listener waits on cannot be made, or is gone: its reader reads by the clock meanwhile."""


class ListenRefused(ListenLost):
    """Listening cannot work here (a pooler between, a driver without notifications): not worth trying again."""

    lasting = True


class ChangeListener(Protocol):
    """A session of its own that hears the audit trail's rows as they are committed (`change_listener`).
    Blocking: one thread at a time calls it."""

    def open(self) -> None:
        """Connect and listen (again, after a loss); ListenLost when it cannot now, ListenRefused never."""

    def wait(self, timeout: float) -> list[models.Notice]:
        """The notices heard within `timeout` seconds: as soon as one is, with every other waiting then
        ([] when none came). ListenLost when the connection is gone."""
        ...

    def close(self) -> None:
        """Hang up (again: nothing)."""


class Scripts(Protocol):
    """What writes the script `workbench grants` prints where the database runs it itself (SQL Server:
    db/rules/mssql_script.py). It builds on the engine's statements, which build on the backends, so the
    caller that asks for the script hands it in (services/admin.py)."""

    def script(self, dialect: Any, q: Any, schema: str, reviewed: Any = None) -> list[str]: ...

    def revoke_script(self, dialect: Any, q: Any, schema: str) -> list[str]: ...


# How a queue's procedures are found on a database (db/procedures.py's `of`): handed in by whoever binds
# the queue's writes (the service, a work queue), for the same reason.
ProceduresOf = Callable[[Any, Any, "str | None"], Any]


class Backend:
    """One database family. Stateless: one instance serves every engine of that family."""

    name: ClassVar[str] = "portable"
    label: str = ""  # the product's name for people ("": the dialect's name)
    default_port: ClassVar[int | None] = None
    is_file: ClassVar[bool] = False  # a file on this machine, not a server
    # Claim methods that work on this database (see workbench.db.claims), besides "portable".
    claim_methods: ClassVar[tuple[str, ...]] = ()
    # The board: how each lock meets the aggregates of its audit rows (see figures/lock_board.py, board):
    # "lateral" (one join per lock), "packed" (a scalar subquery per lock returning one text),
    # "derived" (a derived table of aggregates joined on the key), "keys" (a second statement
    # over the locked keys).
    board_activity: ClassVar[str] = "keys"
    keys_per_statement: ClassVar[int] = 20_000  # bound values per statement when keys are listed
    hours_in_sql: ClassVar[bool] = False  # throughput per hour grouped by the database
    durations_in_sql: ClassVar[bool] = False  # handle times subtracted by the database
    # The guarded write as one statement that writes its audit row too (needs CTEs with
    # data-modifying statements and RETURNING).
    one_statement_writes: ClassVar[bool] = False
    roles: ClassVar[bool] = False  # database roles and row-level security (`workbench grants`)
    # An UPDATE's RETURNING may name the columns of what it reads FROM besides its table: a write with edits
    # returns the edited columns' values before it (read with a row lock) and the lock after, in its UPDATE.
    update_returns_from: ClassVar[bool] = False
    # The Index keyword of a partial (filtered) index whose WHERE the planner uses; None: no such index.
    partial_index_keyword: ClassVar[str | None] = None
    # UUIDs are bound as their text (MariaDB's UUID type over its ODBC driver, which would send a
    # Python UUID as a GUID structure in Windows byte order, stored with its first halves swapped).
    uuid_as_text: ClassVar[bool] = False
    # The claim looks stale locks up as the union of two index searches (LockShape.stale_rows), one per
    # side of `expires IS NULL OR expires <= now`: given the OR, SQLite scans its whole lock index, and
    # PostgreSQL at some sizes reads every live lock through the index's `user IS NOT NULL` alone
    # (tests/benchmarks/live_locks_bench.py). Not on MySQL/MariaDB, whose locking read would lock what
    # the subquery reads; `attach` gives them an index by expiry instead.
    stale_by_union: ClassVar[bool] = False
    # A read of one statement (the change feed's look, every window every second) runs in autocommit: one
    # round trip instead of BEGIN, the statement and COMMIT (and through a transaction pooler the
    # transaction's SET LOCAL too). Where the driver's autocommit costs nothing to switch on and off.
    reads_alone: ClassVar[bool] = False
    # The grant that lets `login` create workbench's tables in `schema` (for the refusal's message).
    create_grant: ClassVar[str | None] = None

    def __init__(self, label: str | None = None) -> None:
        if label is not None:
            self.label = label  # one family, several products (MySQL, MariaDB)

    # -- connecting --------------------------------------------------------------------------

    def engine_options(
        self, url: sa.URL, db: model.DatabaseConfig, create: bool
    ) -> tuple[sa.URL, dict[str, Any], dict[str, Any]]:
        """The URL, create_engine() keywords and driver connect arguments for this database."""
        return url, {}, {}

    def describe(self, url: sa.URL) -> str:
        """Which database a URL names, for people (never with a password)."""
        return f"{url.get_backend_name()} {url.host or ''}/{url.database or ''}"

    def probe_options(self, url: sa.URL, timeout: int) -> tuple[sa.URL, dict[str, Any]]:
        """The URL and connect arguments of a one-off connection test that gives up after `timeout` s."""
        return url, ({"timeout": timeout} if url.get_driver_name() == "pyodbc" else {})

    def probe_problem(self, url: sa.URL) -> str | None:
        """A mistake in the URL that would make the test hang or fail obscurely (None: none)."""
        return None

    def server_version(self, conn: sa.Connection) -> str:
        """The server's product and version for people, e.g. "PostgreSQL 15.18"."""
        conn.exec_driver_sql("SELECT 1")
        info = conn.dialect.server_version_info or ()
        return f"{self.label or conn.dialect.name} {'.'.join(map(str, info))}".strip()

    def session_setup(self, engine: sa.Engine, db: model.DatabaseConfig) -> None:
        """Per-connection settings (event listeners), for every pool of a Database."""

    def engine_events(self, engine: sa.Engine) -> None:
        """Listeners for the main engine only (how its transactions begin)."""

    def server_address(self, dbapi_connection: Any) -> Any:
        """Which server a new connection reached, where the URL names several (a primary and its
        standbys): a new connection that lands elsewhere than the last one means the server may have
        changed under the window (Database.interruptions). None: one server, or not known."""
        return None

    def fast_pool_isolation(self, url: sa.URL) -> str:
        """The isolation level of the fast pool (Database.fast_engine): AUTOCOMMIT, as its
        statements are one each (fastpath.py)."""
        return "AUTOCOMMIT"

    def fast_pool_setup(self, engine: sa.Engine) -> None:
        """Listeners for the fast pool only, whose connections run the prepared one-statement
        claim and Complete (fastpath.py) or their batches (batches.py)."""

    def held_connections(self, engine: sa.Engine) -> Any:
        """Per-thread connections of the fast pool `engine` for the prepared statements of
        the claim and Complete (fastpath.HeldConnections, or batches.BatchConnections)."""
        from workbench.db import fastpath

        return fastpath.HeldConnections(engine)

    def write_lock(self, url: sa.URL) -> contextlib.AbstractContextManager[Any]:
        """What a write transaction holds besides the database's own locks."""
        return contextlib.nullcontext()

    def busy_attempts(self, conn: sa.Connection) -> int:
        """How often a transaction the database rolled back as busy (a lock wait, a deadlock, a
        serialization failure) is run again before the caller is told."""
        return 5

    def for_writing(self, conn: sa.Connection) -> sa.Connection:
        """The connection as a write transaction wants it (before BEGIN)."""
        return conn

    # -- types ------------------------------------------------------------------------------

    def holds_times(self, column: sa.Column[Any]) -> bool:
        """Can this column hold a lock time?"""
        return isinstance(column.type, sa.DateTime)

    def holds_dates(self, column: sa.Column[Any]) -> bool:
        """Can this column hold when an item arrived (a date or a date-time)?"""
        return isinstance(column.type, (sa.DateTime, sa.Date))

    def time_read_type(self, aware: bool) -> sa.types.TypeEngine[Any]:
        """The type lock times are read as."""
        return sa.DateTime(timezone=aware)

    def time_written(self, now: sa.ColumnElement[Any], column: sa.Column[Any]) -> sa.ColumnElement[Any]:
        """The database clock as a value written into `column`."""
        return sa.type_coerce(now, column.type)

    def time_param(self, name: str) -> sa.ColumnElement[Any]:
        """A bound date-time, kept to the microsecond, to compare with comparable_time()."""
        return sa.bindparam(name, type_=clock.ExactTime())

    def time_param_written(self, name: str, column: sa.Column[Any]) -> sa.ColumnElement[Any]:
        """A bound date-time, kept to the microsecond, written into `column`."""
        return self.time_param(name)

    def comparable_time(self, column: sa.Column[Any]) -> sa.ColumnElement[Any]:
        """`column` for comparing with exact_time_param()."""
        return column

    def time_equals(self, column: sa.Column[Any], value: Any) -> sa.ColumnElement[bool]:
        """Does the lock time equal `value` (a time read back from it)? The fence of tables without a token."""
        if not isinstance(value, sa.ColumnElement):
            value = sa.bindparam(None, value, type_=clock.ExactTime())
        return sa.and_(column == value)

    def normalise_own_tables(self, conn: sa.Connection, tables: list[sa.Table]) -> None:
        """Bring workbench's own tables to what the statements expect (migration 4)."""

    def audit_key(
        self, conn: sa.Connection, key: sa.ColumnElement[Any], item_key: sa.Column[Any], cache: dict[str, Any]
    ) -> sa.ColumnElement[Any]:
        """An item's key compared with the audit trail's text `item_key` so that its index serves."""
        return sa.cast(key, item_key.type)

    def iso_text(self, time: sa.ColumnElement[Any], *, aware: bool, utc: bool) -> sa.ColumnElement[str]:
        """A lock time as Python's datetime.isoformat() writes the value read from it (microseconds only
        when not zero; the session's offset where the column keeps one (`aware`), else +00:00 where
        naive times are UTC (`utc`), else none): a token of a table without a token column."""
        raise NotImplementedError(f"{self.label or self.name}: no SQL text of lock times")

    def token_digest(self, token: sa.ColumnElement[Any]) -> sa.ColumnElement[str]:
        """What the audit trail keeps of a lock token (see digests.token_digest), computed by the
        database, for the statements that write or join the trail in SQL (`one_statement_writes`, a
        `board_activity` other than "keys"): the lower-case hex SHA-256 of the token's lower-case text."""
        raise NotImplementedError(f"{self.label or self.name}: no SQL digest of lock tokens")

    def digest_tokens(self, conn: sa.Connection, table: sa.Table) -> None:
        """Replace the tokens kept in clear in the audit trail `table` by their digests (migration 6)."""
        kept = table.c.token.is_not(None)
        try:
            conn.execute(sa.update(table).where(kept).values(token=self.token_digest(table.c.token)))
            return
        except NotImplementedError:  # no digest in this database's SQL: row by row
            pass
        rows = conn.execute(sa.select(table.c.id, table.c.token).where(kept)).all()
        update = sa.update(table).where(table.c.id == sa.bindparam("wb_id")).values(token=sa.bindparam("wb_token"))
        for start in range(0, len(rows), 1000):
            conn.execute(
                update,
                [{"wb_id": id_, "wb_token": digests.token_digest(token)} for id_, token in rows[start : start + 1000]],
            )

    def newest_audit_id(self, conn: sa.Connection, audit: sa.Table) -> int:
        """Where a reader of the whole change feed starts: the audit trail's newest id (0: none), one end of
        an index (here `id` is the trail's key)."""
        return int(conn.execute(sa.select(sa.func.max(audit.c.id))).scalar() or 0)

    def notify_changes(self, conn: sa.Connection, audit: sa.Table) -> None:
        """Have each audit row, as its transaction commits, tell those listening (change_listener): its id,
        queue, owner and actor, never the row. Migration 14, on workbench's own audit table only. Here:
        nothing (this database has no notifications; its readers read the trail by the clock)."""

    def change_listener(self, engine: sa.Engine) -> ChangeListener | None:
        """A listener for those notices on a session of its own, not yet connected; None where there is
        none: this database sends none, or its connections go through a transaction pooler, which lends
        each transaction another session and carries no LISTEN."""
        return None

    def index_serves(self, conn: sa.Connection, table: sa.Table, found: Mapping[str, Any], wanted: sa.Index) -> bool:
        """Does an existing index (as the inspector reflects it) serve what `wanted` would: the same
        leading columns in the same directions, and the same condition? False when unsure."""
        return False

    # -- statements -------------------------------------------------------------------------

    def lock_row(self, stmt: sa.Select[Any], table: sa.Table) -> sa.Select[Any]:
        """A SELECT that locks the row of `table` it reads until the transaction ends (not the rows
        of a table it is outer-joined to, which may not lock)."""
        return stmt.with_for_update(of=table)

    def text_match(self, column: sa.ColumnElement[Any], text: str, how: str) -> sa.ColumnElement[bool]:
        """`column` matches `text` whatever the case: how is "exact", "prefix" or "contains" (a lookup's
        search). Portable: both sides lowered, which no index serves; the backends do better."""
        return sa.func.lower(column).like(like_pattern(text.lower(), how), escape=LIKE_ESCAPE)

    def search_order(self, column: sa.ColumnElement[Any], how: str) -> list[sa.ColumnElement[Any]]:
        """The order a lookup's search lists its rows in (before the key), for its "prefix" or its
        "contains" query (text_match's `how`): here the display column."""
        return [column]

    def search_index(self, conn: sa.Connection, column: sa.Column[Any]) -> tuple[list[sa.Index], str | None]:
        """The indexes that let text_match's searches read `column` (a lookup's display column) in
        order instead of the whole table, but for those the table already has one that serves; and
        a note when the database cannot have one. Here: an ordinary index, its collation's case-
        insensitive LIKE reads its range (MariaDB, MySQL, SQL Server)."""
        from workbench.db.backends import indexes

        wanted = sa.Index(search_index_name(column), column)
        inspector = sa.inspect(conn)
        have: list[Any] = list(inspector.get_indexes(column.table.name, schema=column.table.schema))
        key = inspector.get_pk_constraint(column.table.name, schema=column.table.schema)  # not among the indexes
        have.append({"column_names": key.get("constrained_columns") or []})
        if any(indexes.leads_with(found, wanted, directions_known=False) for found in have):
            return [], None
        return [wanted], None

    def text_as(self, text: sa.ColumnElement[Any], type_: sa.types.TypeEngine[Any]) -> sa.ColumnElement[Any]:
        """Text (a separate lock table's item key) as a value of the queue key's type."""
        return sa.cast(text, type_)

    def new_row(self, table: sa.Table, row: Mapping[str, sa.ColumnElement[Any]]) -> NewRow:
        """What insert_new runs to insert `row` unless its primary key is taken (a separate lock table's
        claim): its values are SQL, the database clock as an expression, the rest bound parameters whose
        values each run binds by name. Built once by the caller (BoundQueue.lock_insert), not per claim."""
        return NewRow(sa.insert(table).values(dict(row)))

    def insert_new(self, conn: sa.Connection, new: NewRow, params: Mapping[str, Any]) -> bool:
        """Run `new` (new_row) with `params`; True when the row went in, False when its key was taken."""
        try:
            with conn.begin_nested():
                conn.execute(new.insert, params)
        except sa.exc.IntegrityError:
            return False
        return True

    def lock_one(
        self, conn: sa.Connection, table: sa.Table, key_column: sa.Column[Any], key: Any, *, lock: bool = True
    ) -> bool:
        """Lock the row `key` as a claim would, skipping it if another transaction holds it (the
        claim self-check, db/racecheck.py); True when this connection got it. `lock=False` reads
        without locking, as a server that ignores row locks would."""
        stmt = sa.select(key_column).where(key_column == key)
        if lock:
            stmt = stmt.with_for_update(skip_locked=True)
        return conn.execute(stmt).first() is not None

    def in_database_role(self, conn: sa.Connection, user: str, group: str) -> bool:
        """Is `user` a member of a database role named `group` (where the database has roles a
        group can be)? Here: no such roles."""
        return False

    def hides_rows(self, conn: sa.Connection) -> bool:
        """May the database hide rows from this login's updates (row-level security)?"""
        return False

    def held_open_reads(self, rows: sa.Select[Any]) -> Any:
        """What held_open runs to ask of `rows` (items waiting that nobody holds), built once per queue and
        run with its values bound; None where this database does not tell held rows apart (then nothing is
        asked). Here: None."""
        return None

    def held_open(self, conn: sa.Connection, reads: Any, params: dict[str, Any]) -> bool:
        """Do the rows of `reads` (held_open_reads, run with `params`) exist, every one of them row-locked by
        another open transaction (a session's SELECT … FOR UPDATE not yet committed), which a claim skips?
        Asked when a claim found nothing, to say so instead of "no item is waiting"."""
        return False

    def protocol_script(
        self, scripts: Scripts, dialect: Any, q: Any, schema: str, revoke: bool = False, reviewed: Any = None
    ) -> list[str] | None:
        """`workbench grants` where it prints a script for review instead of applying it: the batches
        that make the database enforce `q`'s protocol (or undo it), as `scripts` writes them; None where
        there is none. `reviewed`: the queue whose completions `q` reviews (four eyes), if any."""
        return None

    profile_kind: ClassVar[str | None] = None  # `profile add --kind` for this server (None: the URL's backend name)

    # How `workbench people` makes a person's login here (db/people.py): "roles" (PostgreSQL LOGIN roles),
    # "accounts" (MySQL/MariaDB accounts and privileges), "script" (T-SQL printed), None (no logins).
    logins_kind: ClassVar[str | None] = None

    # May `workbench grants` leave operators only procedures to write with (below)? Then those are tried
    # first for each write (enforcement.py).
    writes_by_procedures: ClassVar[bool] = False

    def procedures(self, of: ProceduresOf, db: Any, q: Any, schema: str | None) -> Any:
        """Where `workbench grants` leaves operators only procedures to write with (SQL Server's
        script): `q`'s procedures as `of` finds them (db/procedures.py's `of`: if they are there and this
        login may call them); None where workbench's own statements do the writes."""
        return None

    def auto_claim_method(self, engine: sa.Engine) -> str:
        """The best claim method this database supports."""
        return "portable"

    def check_claim_method(self, engine: sa.Engine, name: str) -> str | None:
        """Why a configured claim method cannot work on this server (None: it can)."""
        return None


def search_index_name(column: sa.Column[Any], kind: str = "search") -> str:
    """The name of an index Backend.search_index suggests for a lookup's display column."""
    table = column.table.name
    return f"wb_{table}_{column.name}_{kind}"[:60]


# The execution option connect.Database sets on the connections of its own transactions (read, write,
# one_read): a backend whose transactions carry settings (PostgreSQL through a pooler: its timeouts) gives
# them to these, not to init's or attach's, which may run longer than an operation may.
OPERATION = "workbench_operation"
LIKE_ESCAPE = "/"  # not a backslash: MySQL's string literals read that one themselves


def like_pattern(text: str, how: str) -> str:
    """`text` as a LIKE pattern: its own wildcards escaped, then `%` where "prefix" or "contains" wants one."""
    escaped = text.replace(LIKE_ESCAPE, LIKE_ESCAPE * 2).replace("%", LIKE_ESCAPE + "%").replace("_", LIKE_ESCAPE + "_")
    return {"exact": escaped, "prefix": f"{escaped}%", "contains": f"%{escaped}%"}[how]
