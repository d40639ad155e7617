"""SQLite: the embedded demo. Date-times kept as text, BEGIN IMMEDIATE writers, one file lock per machine."""

from __future__ import annotations

import contextlib
import functools
import os
import sqlite3
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy import event

from workbench.core import errors
from workbench.db import digests
from workbench.db.backends import indexes
from workbench.db.backends.base import LIKE_ESCAPE, Backend, NewRow, like_pattern, search_index_name

if TYPE_CHECKING:
    from workbench.config import model

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

BUSY_MS = 30_000
DIGEST_FUNCTION = "workbench_token_digest"  # SQLite has no SHA-256 of its own: ours, on every connection
FOLD_FUNCTION = "workbench_casefold"  # SQLite's lower() and LIKE fold ASCII letters only: ours folds all


def _casefold(text: Any) -> Any:
    return text.casefold() if isinstance(text, str) else text


# No character above this one folds to another (Unicode 15.1: the last cased letters are Adlam's,
# U+1E900-U+1E943); tests/test_lookups.py checks it against Python's tables in full.
LAST_FOLDING = 0x1E943


@functools.cache
def _folds() -> dict[str, frozenset[str]]:
    """Each letter beyond ASCII that casefold gives, with every other character whose casefold holds
    it (Python's tables, read once: 120,000 code points, a few milliseconds)."""
    found: dict[str, set[str]] = {}
    for char in map(chr, range(0x80, LAST_FOLDING + 1)):
        folded = char.casefold()
        if folded != char:
            for part in folded:
                if not part.isascii():
                    found.setdefault(part, set()).add(char)
    return {part: frozenset(chars) for part, chars in found.items()}


def folding_to(letter: str) -> frozenset[str]:
    """The characters a row must have one of for its casefold to hold `letter` (beyond ASCII)."""
    return _folds().get(letter, frozenset()) | {letter}


def _add_functions(dbapi_conn: Any) -> None:
    dbapi_conn.create_function(DIGEST_FUNCTION, 1, digests.token_digest, deterministic=True)
    dbapi_conn.create_function(FOLD_FUNCTION, 1, _casefold, deterministic=True)


class SqliteBackend(Backend):
    name = "sqlite"
    label = "SQLite"
    is_file = True
    claim_methods = ("immediate",)
    board_activity = "derived"
    hours_in_sql = True
    partial_index_keyword = "sqlite_where"
    stale_by_union = True  # see Backend.stale_by_union

    def engine_options(
        self, url: sa.URL, db: model.DatabaseConfig, create: bool
    ) -> tuple[sa.URL, dict[str, Any], dict[str, Any]]:
        url, connect_args = file_url(url, create)
        return url, {}, connect_args

    def session_setup(self, engine: sa.Engine, db: model.DatabaseConfig) -> None:
        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_conn: Any, _record: Any) -> None:
            _add_functions(dbapi_conn)

    def token_digest(self, token: sa.ColumnElement[Any]) -> sa.ColumnElement[str]:
        return sa.func.workbench_token_digest(token, type_=sa.String())  # DIGEST_FUNCTION

    def digest_tokens(self, conn: sa.Connection, table: sa.Table) -> None:
        _add_functions(conn.connection.driver_connection)  # an engine made without session_setup
        super().digest_tokens(conn, table)

    def engine_events(self, engine: sa.Engine) -> None:
        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_conn: Any, _record: Any) -> None:
            cursor = dbapi_conn.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")  # readers never wait for the writer
            cursor.execute(f"PRAGMA busy_timeout={BUSY_MS}")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _on_begin(conn: sa.Connection) -> None:
            # Writers take the write lock up front: a deferred transaction that reads and then
            # writes fails with SQLITE_BUSY at once in WAL mode instead of waiting (busy_timeout
            # does not help there). See claim-sql.md §1.4.
            immediate = conn.get_execution_options().get("workbench_write", False)
            conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    def describe(self, url: sa.URL) -> str:
        return f"SQLite {(url.database or '').split('?')[0].removeprefix('file:')}"

    def probe_options(self, url: sa.URL, timeout: int) -> tuple[sa.URL, dict[str, Any]]:
        database = url.database or ""
        if database and database != ":memory:" and not database.startswith("file:"):
            # mode=rw: a test must never create an empty database where the operator mistyped the path.
            url = url.set(database=f"file:{Path(database).as_posix()}?mode=rw", query={"uri": "true"})
        return url, {}

    def server_version(self, conn: sa.Connection) -> str:
        # sqlite_version() never reads the file; the schema query does, so a file that is not a
        # database fails here and not at the first real query.
        conn.exec_driver_sql("SELECT count(*) FROM sqlite_master").scalar()
        return f"SQLite {conn.exec_driver_sql('SELECT sqlite_version()').scalar()}"

    def write_lock(self, url: sa.URL) -> contextlib.AbstractContextManager[Any]:
        database = url.database or ""
        if database.startswith("file:"):
            database = database[len("file:") :].split("?", 1)[0]
        if database in ("", ":memory:"):
            return contextlib.nullcontext()
        return _WriteLock(database)

    def for_writing(self, conn: sa.Connection) -> sa.Connection:
        return conn.execution_options(workbench_write=True)  # BEGIN IMMEDIATE (engine_events)

    # Date-times are text in SQLite; a column declared without a type may hold them too. They are
    # read as text (the queue's time reader parses them: SQLAlchemy's parser raises on text
    # another program wrote) and compared as DateTime, so a bound value has the text form we write.

    def holds_times(self, column: sa.Column[Any]) -> bool:
        return isinstance(column.type, (sa.DateTime, sa.String, sa.types.NullType))

    def holds_dates(self, column: sa.Column[Any]) -> bool:
        return isinstance(column.type, (sa.DateTime, sa.Date, sa.types.NullType))

    def time_read_type(self, aware: bool) -> sa.types.TypeEngine[Any]:
        return sa.String()

    def time_written(self, now: sa.ColumnElement[Any], column: sa.Column[Any]) -> sa.ColumnElement[Any]:
        return now

    def time_param(self, name: str) -> sa.ColumnElement[Any]:
        return sa.bindparam(name, type_=sa.DateTime())

    def time_param_written(self, name: str, column: sa.Column[Any]) -> sa.ColumnElement[Any]:
        return sa.type_coerce(self.time_param(name), column.type)

    def comparable_time(self, column: sa.Column[Any]) -> sa.ColumnElement[Any]:
        return sa.type_coerce(column, sa.DateTime())

    def time_equals(self, column: sa.Column[Any], value: Any) -> sa.ColumnElement[bool]:
        return sa.type_coerce(column, sa.DateTime()) == sa.type_coerce(value, sa.DateTime())

    def index_serves(self, conn: sa.Connection, table: sa.Table, found: Mapping[str, Any], wanted: sa.Index) -> bool:
        # The inspector does not say which columns are descending: only an ascending index is matched.
        if not indexes.leads_with(found, wanted, directions_known=False):
            return False
        have = (found.get("dialect_options") or {}).get("sqlite_where")
        want = wanted.dialect_options["sqlite"]["where"]
        if want is None or have is None:
            return want is None and have is None
        text = str(want.compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True, "include_table": False}))
        return _spelling(str(have)) == _spelling(text)

    def lock_one(
        self, conn: sa.Connection, table: sa.Table, key_column: sa.Column[Any], key: Any, *, lock: bool = True
    ) -> bool:
        # One writer at a time: a claim takes the write lock (BEGIN IMMEDIATE) before it reads.
        # Here the connection's deferred BEGIN has read nothing yet; it is ended and the write
        # lock asked for without waiting, which fails while another connection holds it.
        if lock:
            raw = conn.connection.driver_connection
            assert raw is not None
            raw.execute("PRAGMA busy_timeout = 0")
            try:
                if raw.in_transaction:
                    raw.execute("COMMIT")
                raw.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError:
                return False
            finally:
                raw.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
        return conn.execute(sa.select(key_column).where(key_column == key)).first() is not None

    def new_row(self, table: sa.Table, row: Mapping[str, sa.ColumnElement[Any]]) -> NewRow:
        from sqlalchemy.dialects import sqlite

        # RETURNING says whether a row went in (the driver's rowcount may be -1 here).
        return NewRow(sqlite.insert(table).values(dict(row)).on_conflict_do_nothing().returning(sa.literal(1)))

    def insert_new(self, conn: sa.Connection, new: NewRow, params: Mapping[str, Any]) -> bool:
        return conn.execute(new.insert, params).first() is not None

    def text_match(self, column: sa.ColumnElement[Any], text: str, how: str) -> sa.ColumnElement[bool]:
        # LIKE ignores the case of ASCII letters only ("mül" would miss "MÜLLER"). ASCII text: the
        # column plain, so an index with COLLATE NOCASE on it serves a prefix (SQLite's LIKE
        # optimisation). Other text: both sides case-folded by Python (str.casefold, registered on
        # every connection), which reads every row it is asked of.
        if text.isascii():
            return column.like(like_pattern(text, how), escape=LIKE_ESCAPE)
        wanted = text.casefold()
        folded = sa.func.workbench_casefold(column, type_=sa.String())  # FOLD_FUNCTION
        match = folded.like(like_pattern(wanted, how), escape=LIKE_ESCAPE)
        if how == "contains":
            # Anywhere in the text: every row is read, but folded only where it has a letter that
            # folds to the first one beyond ASCII ("ö": "ö" or "Ö"), which instr() looks for in C.
            first = next(c for c in wanted if not c.isascii())
            has = [sa.func.instr(column, sa.literal(c, sa.String())) > 0 for c in sorted(folding_to(first))]
            return sa.and_(sa.or_(*has), match)
        # A prefix (or the whole text): ranges of the NOCASE index that search_index suggests, one
        # per character folding to the first letter beyond ASCII, with the ASCII letters around it:
        # "mÖz" reads the rows starting with "möz" or "mÖz" (NOCASE takes M for m, Z for z). Where
        # that range is the whole match (each character folds to that letter alone, and no other
        # letter beyond ASCII follows) no row is folded; elsewhere only the rows in the ranges. A
        # row whose first letters fold to ASCII from beyond it (the Kelvin sign, "ſ", "ﬁ") escapes
        # the narrowing: the "contains" search finds it from the third letter on.
        run = next(i for i, c in enumerate(wanted) if not c.isascii())
        rest = wanted[run + 1 :]
        tail = rest[: next((i for i, c in enumerate(rest) if not c.isascii()), len(rest))]
        nocase = sa.collate(column, "NOCASE")
        ranges = []
        for char in sorted(folding_to(wanted[run])):
            start = wanted[:run] + char + tail
            last = start[-1].lower() if start[-1].isascii() else start[-1]  # NOCASE compares A-Z as a-z
            end = start[:-1] + chr(ord(last) + 1)
            whole = how == "prefix" and char.casefold() == wanted[run] and tail == rest
            within = sa.and_(nocase >= sa.literal(start, sa.String()), nocase < sa.literal(end, sa.String()))
            ranges.append(within if whole else sa.and_(within, match))
        return sa.or_(*ranges)

    def search_order(self, column: sa.ColumnElement[Any], how: str) -> list[sa.ColumnElement[Any]]:
        # The order of the NOCASE index search_index suggests: a search walks it and stops at its
        # 50th row, where in the column's own (BINARY) order it sorted every row the letters match.
        return [sa.collate(column, "NOCASE")]

    def search_index(self, conn: sa.Connection, column: sa.Column[Any]) -> tuple[list[sa.Index], str | None]:
        # LIKE reads an index range only where the index compares as LIKE does: COLLATE NOCASE (an
        # index in the default BINARY collation does not serve it, whatever its columns).
        nocase = sa.text(
            "SELECT 1 FROM pragma_index_list(:table) AS il JOIN pragma_index_xinfo(il.name) AS ix "
            "WHERE ix.seqno = 0 AND ix.name = :column AND upper(ix.coll) = 'NOCASE' AND il.partial = 0"
        )
        if conn.execute(nocase, {"table": column.table.name, "column": column.name}).first():
            return [], None
        return [sa.Index(search_index_name(column), sa.collate(column, "NOCASE"))], None

    def lock_row(self, stmt: sa.Select[Any], table: sa.Table) -> sa.Select[Any]:
        return stmt  # the write transaction (BEGIN IMMEDIATE) already excludes every other writer

    def auto_claim_method(self, engine: sa.Engine) -> str:
        return "immediate"


def file_url(url: sa.URL, create: bool = False) -> tuple[sa.URL, dict[str, Any]]:
    """The URL that opens an existing file only (unless `create`), and the sqlite3 connect arguments."""
    database = url.database or ""
    if database and database != ":memory:" and not database.startswith("file:"):
        path = Path(database)
        if not path.exists() and not create:
            raise errors.DatabaseUnavailable(
                f"the SQLite database file {path} does not exist; check "
                "database.url in the config (relative paths are relative "
                "to the config file)"
            )
        # mode=rw: never create an empty database by accident because of a typo in the path.
        mode = "rwc" if create else "rw"
        url = url.set(database=f"file:{path.as_posix()}?mode={mode}", query={"uri": "true"})
    # check_same_thread: the GUI hands connections to a worker thread. isolation_level=None stops
    # the sqlite3 module from issuing its own BEGIN; we issue BEGIN or BEGIN IMMEDIATE ourselves.
    return url, {"check_same_thread": False, "timeout": BUSY_MS / 1000, "isolation_level": None}


class _WriteLock:
    """Serialises this machine's workbench writers on an OS file lock next to the SQLite file.

    SQLite's own busy handler sleeps in growing steps (up to 100 ms) and re-tries, so under
    contention a writer often sleeps while the lock is free: claim p99 was 190 ms with 8
    processes. A blocking flock() wakes the next writer as soon as the previous one commits.
    POSIX only; elsewhere (and for writers that are not workbench) busy_timeout still applies.
    """

    def __init__(self, database: str) -> None:
        self.path = database + ".wblock"
        self._thread_lock = threading.Lock()
        self._fd: int | None = None
        self._usable = fcntl is not None

    def __enter__(self) -> None:
        self._thread_lock.acquire()  # flock() does not exclude threads sharing one descriptor
        if not self._usable:
            return
        try:
            if self._fd is None:
                self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            fcntl.flock(self._fd, fcntl.LOCK_EX)
        except OSError:
            self._usable = False  # e.g. a read-only directory: fall back to busy_timeout

    def __exit__(self, *exc: object) -> None:
        try:
            if self._usable and self._fd is not None:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
        finally:
            self._thread_lock.release()


def _spelling(sql: str) -> str:
    """SQL text without the differences that do not change its meaning: case, spaces, quotes, parentheses."""
    return "".join(ch for ch in sql.lower() if not ch.isspace() and ch not in '()"`')
