"""Build the SQLAlchemy engine for a configured database and run short transactions on it."""

from __future__ import annotations

import contextlib
import os
import random
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy import event

from workbench.config import model
from workbench.core import errors
from workbench.db import dberrors

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

T = TypeVar("T")

PASSWORD_ENV = "WORKBENCH_DB_PASSWORD"
# A pooled connection idle longer than this is pinged before use (a server restart, a VPN drop);
# busy connections are not, so the hot path keeps one round trip per operation.
IDLE_PING_SECONDS = 20.0
SQLITE_BUSY_MS = 30_000


def parse_url(db: model.DatabaseConfig, config_path: str) -> sa.URL:
    try:
        url = sa.make_url(db.url)
    except sa.exc.ArgumentError:
        raise errors.ConfigError("not a database URL; e.g. sqlite:///cases.db or "
                                 "postgresql+psycopg://user@host/dbname", file=config_path,
                                 key="database.url") from None
    if url.password:
        raise errors.ConfigError(
            "must not contain a password; remove it and supply the password through the OS keyring "
            f"or the {PASSWORD_ENV} environment variable", file=config_path, key="database.url")
    return url


def create_engine(db: model.DatabaseConfig, config_path: str = "", *, create_sqlite: bool = False,
                  password: str | None = None) -> sa.Engine:
    """An engine set up for short transactions and the database clock; no password ever in the URL text."""
    url = parse_url(db, config_path)
    backend = url.get_backend_name()
    password = password or os.environ.get(PASSWORD_ENV)
    kwargs: dict[str, Any] = {}
    connect_args: dict[str, Any] = {}
    if backend == "sqlite":
        url, connect_args = _sqlite_url(url, create_sqlite)
    elif backend == "postgresql":
        connect_args = {"connect_timeout": db.connect_timeout, "application_name": "workbench",
                        # Our transactions are one statement or a few; anything slower is a hung
                        # server or a lock wait, and must not freeze the operator's window.
                        "options": f"-c statement_timeout={db.statement_timeout * 1000} "
                                   f"-c idle_in_transaction_session_timeout={db.statement_timeout * 2000}"}
    elif backend in ("mysql", "mariadb"):
        kwargs["isolation_level"] = "READ COMMITTED"
        if url.get_driver_name() == "pymysql":
            connect_args = {"connect_timeout": db.connect_timeout, "read_timeout": db.statement_timeout,
                            "write_timeout": db.statement_timeout}
        elif url.get_driver_name() == "pyodbc":
            connect_args = {"timeout": db.connect_timeout}
            # MariaDB Connector/ODBC ignores the login timeout while it waits for the server's
            # greeting (a server that accepts and never answers); its CONN_TIMEOUT covers that.
            url = odbc_option(_odbc_found_rows(url), "CONN_TIMEOUT", str(db.connect_timeout))
    elif backend == "mssql":
        kwargs["isolation_level"] = "READ COMMITTED"
        connect_args = {"timeout": db.connect_timeout}
    if password:
        url = url.set(password=password)
    engine = sa.create_engine(url, connect_args=connect_args, **kwargs)
    engine.workbench_connect_args = connect_args  # type: ignore[attr-defined]  # for Database's 2nd pool

    def session_setup(target: sa.Engine) -> None:
        """Per-connection settings, for this engine and Database's autocommit pool alike."""
        if url.get_driver_name() == "pyodbc":
            _odbc_query_timeout(target, db.statement_timeout)
        if backend in ("mysql", "mariadb") and db.clock == "utc":
            _mysql_utc(target)
        _idle_ping(target)

    engine.workbench_session_setup = session_setup  # type: ignore[attr-defined]
    session_setup(engine)
    if backend == "sqlite":
        _sqlite_events(engine)
    return engine


def _odbc_found_rows(url: sa.URL) -> sa.URL:
    """Make MySQL/MariaDB ODBC drivers report matched rows, not changed rows.

    Every compare-and-set here checks "exactly one row"; without FLAG_FOUND_ROWS (OPTION=2) a
    Save that writes the values already stored reports 0 rows and would look like a lost lock.
    SQLAlchemy sets the flag for its native MySQL drivers but not over ODBC.
    """
    return odbc_option(url, "OPTION", "2")


def odbc_option(url: sa.URL, key: str, value: str) -> sa.URL:
    """Add an ODBC connection-string keyword unless the URL already sets it."""
    query = dict(url.query)
    if "odbc_connect" in query:
        text = str(query["odbc_connect"])
        if f"{key.lower()}=" not in text.lower():
            query["odbc_connect"] = f"{text.rstrip(';')};{key}={value};"
    elif not any(k.lower() == key.lower() for k in query):
        query[key] = value
    return url.set(query=query)


def _sqlite_url(url: sa.URL, create: bool) -> tuple[sa.URL, dict[str, Any]]:
    database = url.database or ""
    if database and database != ":memory:" and not database.startswith("file:"):
        path = Path(database)
        if not path.exists() and not create:
            raise errors.DatabaseUnavailable(f"the SQLite database file {path} does not exist; check "
                                             "database.url in the config (relative paths are relative "
                                             "to the config file)")
        # mode=rw: never create an empty database by accident because of a typo in the path.
        mode = "rwc" if create else "rw"
        url = url.set(database=f"file:{path.as_posix()}?mode={mode}", query={"uri": "true"})
    # check_same_thread: the GUI hands connections to a worker thread. isolation_level=None stops
    # the sqlite3 module from issuing its own BEGIN; we issue BEGIN or BEGIN IMMEDIATE ourselves.
    return url, {"check_same_thread": False, "timeout": SQLITE_BUSY_MS / 1000, "isolation_level": None}


def _sqlite_events(engine: sa.Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        cursor = dbapi_conn.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")  # readers never wait for the writer
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_MS}")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: sa.Connection) -> None:
        # Writers take the write lock up front: a deferred transaction that reads and then
        # writes fails with SQLITE_BUSY at once in WAL mode instead of waiting (busy_timeout
        # does not help there). See claim-sql.md §1.4.
        immediate = conn.get_execution_options().get("workbench_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def _mysql_utc(engine: sa.Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # TIMESTAMP columns convert through the session time zone; pin it to UTC so NOW() and
        # UTC_TIMESTAMP() agree and stored lock times mean the same for every operator.
        cursor = dbapi_conn.cursor()
        cursor.execute("SET time_zone = '+00:00'")
        cursor.close()


def _odbc_query_timeout(engine: sa.Engine, seconds: int) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # The connect "timeout" above is the login timeout only; this one bounds every statement,
        # so a hung server cannot hold the operator's call (SQL_ATTR_QUERY_TIMEOUT).
        dbapi_conn.timeout = seconds


def _idle_ping(engine: sa.Engine) -> None:
    @event.listens_for(engine, "checkin")
    def _on_checkin(_dbapi_conn: Any, record: Any) -> None:
        record.info["workbench_idle_since"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _on_checkout(dbapi_conn: Any, record: Any, _proxy: Any) -> None:
        since = record.info.get("workbench_idle_since")
        if since is None or time.monotonic() - since < IDLE_PING_SECONDS:
            return
        try:
            alive = engine.dialect.do_ping(dbapi_conn)
        except Exception:  # noqa: BLE001 - any failure means: get a fresh connection
            alive = False
        if not alive:
            # The pool discards this connection and retries the checkout with a new one.
            raise sa.exc.DisconnectionError("idle connection is gone")


class _SqliteWriteLock:
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


class Database:
    """An engine plus the transaction helpers every operation uses."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine
        self.dialect = engine.dialect.name
        self.is_sqlite = self.dialect == "sqlite"
        database = engine.url.database or ""
        if self.is_sqlite and database.startswith("file:"):
            database = database[len("file:"):].split("?", 1)[0]
        self._write_lock = _SqliteWriteLock(database) if self.is_sqlite and database not in ("", ":memory:") \
            else contextlib.nullcontext()
        self._autocommit_engine: sa.Engine | None = None
        self._held: Any = None

    @property
    def autocommit_engine(self) -> sa.Engine:
        """A second pool whose connections stay in autocommit, so that a one-statement operation is
        exactly one round trip (no BEGIN, no COMMIT, no isolation switch per checkout)."""
        if self._autocommit_engine is None:
            self._autocommit_engine = sa.create_engine(
                self.engine.url, isolation_level="AUTOCOMMIT", pool_reset_on_return=None,
                connect_args=getattr(self.engine, "workbench_connect_args", {}))
            getattr(self.engine, "workbench_session_setup", _idle_ping)(self._autocommit_engine)
        return self._autocommit_engine

    @property
    def held(self) -> Any:
        """Per-thread autocommit connections for fastpath.FastStatement (created on first use)."""
        if self._held is None:
            from workbench.db import fastpath

            self._held = fastpath.HeldConnections(self.autocommit_engine)
        return self._held

    def dispose(self) -> None:
        if self._held is not None:
            self._held.close_all()
        self.engine.dispose()
        if self._autocommit_engine is not None:
            self._autocommit_engine.dispose()

    def read(self, fn: Callable[[sa.Connection], T]) -> T:
        """Run `fn` in a short read transaction."""
        return self._run(fn, write=False)

    def write(self, fn: Callable[[sa.Connection], T]) -> T:
        """Run `fn` in one short write transaction (BEGIN IMMEDIATE on SQLite), committed at the end."""
        return self._run(fn, write=True)

    def autocommit(self, fn: Callable[[sa.Connection], T]) -> T:
        """Run `fn` with autocommit: for single statements that are atomic on their own (one round trip)."""
        with dberrors.translated(), self.autocommit_engine.connect() as conn:
            return fn(conn)

    def _run(self, fn: Callable[[sa.Connection], T], *, write: bool) -> T:
        attempt = 0
        while True:
            try:
                with dberrors.translated(), self.engine.connect() as conn:
                    if write and self.is_sqlite:
                        conn = conn.execution_options(workbench_write=True)
                        with self._write_lock, conn.begin():
                            return fn(conn)
                    with conn.begin():
                        return fn(conn)
            except dberrors.Busy:
                # SQLite waited busy_timeout and the lock is still taken (or a deadlock victim on a
                # server): the transaction was rolled back, so running it again is safe.
                attempt += 1
                if attempt > 5:
                    raise errors.DatabaseUnavailable("the database stayed busy; try again in a moment") from None
                time.sleep(random.uniform(0.01, 0.05) * attempt)
