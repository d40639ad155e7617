"""Build the SQLAlchemy engine for a configured database and run short transactions on it."""

from __future__ import annotations

import contextlib
import os
import random
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy import event

from workbench.config import model
from workbench.core import errors
from workbench.db import backends, dberrors, odbc
from workbench.db.backends import base as backend_base

T = TypeVar("T")

PASSWORD_ENV = "WORKBENCH_DB_PASSWORD"
# A pooled connection idle longer than this is pinged before use (a server restart, a VPN drop);
# busy connections are not, so the hot path keeps one round trip per operation.
IDLE_PING_SECONDS = 20.0
# Each server connection is a process on the server (PostgreSQL): a pool keeps at most this many idle;
# those opened beyond it for a burst (a window's start, four calls at once) are closed when they come
# back. An idle window is left with one (issue 42: an idle window held 2, a working one 5-7).
KEPT_CONNECTIONS = 1
# At most this many at once per pool, as SQLAlchemy's default (5 + 10 overflow): a program with many
# threads on the fast path (one held per thread) keeps the ceiling it had.
POOL_CEILING = 15


def parse_url(db: model.DatabaseConfig, config_path: str) -> sa.URL:
    try:
        url = sa.make_url(db.url)
    except sa.exc.ArgumentError:
        raise errors.ConfigError(
            "not a database URL; e.g. sqlite:///cases.db or postgresql+psycopg://user@host/dbname",
            file=config_path,
            key="database.url",
        ) from None
    if url.password:
        raise errors.ConfigError(
            "must not contain a password; remove it and supply the password through the OS keyring "
            f"or the {PASSWORD_ENV} environment variable",
            file=config_path,
            key="database.url",
        )
    return url


def create_engine(
    db: model.DatabaseConfig, config_path: str = "", *, create_sqlite: bool = False, password: str | None = None
) -> sa.Engine:
    """An engine set up for short transactions and the database clock; no password ever in the URL text."""
    url = parse_url(db, config_path)
    backend = backends.for_dialect(url.get_backend_name())
    password = password or os.environ.get(PASSWORD_ENV)
    url, kwargs, connect_args = backend.engine_options(url, db, create_sqlite)
    if password:
        url = url.set(password=password)
    engine = sa.create_engine(url, connect_args=connect_args, **{**_kept(backend), **kwargs})
    engine.workbench_connect_args = connect_args  # type: ignore[attr-defined]  # for Database's 2nd pool
    engine.workbench_pooler = db.pooler  # type: ignore[attr-defined]  # read through pooled()

    def session_setup(target: sa.Engine) -> None:
        """Per-connection settings, for this engine and Database's fast pool alike."""
        if url.get_driver_name() == "pyodbc":
            odbc.query_timeout(target, db.statement_timeout)
        backend.session_setup(target, db)
        _idle_ping(target)

    engine.workbench_session_setup = session_setup  # type: ignore[attr-defined]
    session_setup(engine)
    backend.engine_events(engine)
    return engine


def pooled(engine: sa.Engine) -> bool:
    """Whether the engine's connections go through a transaction pooler (`[database] pooler`): each
    transaction may run on another server session, so none may rely on what an earlier one left
    there (a named prepared statement, a temporary function, a SET)."""
    return getattr(engine, "workbench_pooler", "none") == "transaction"


def _kept(backend: backends.Backend) -> dict[str, Any]:
    """Pool options: a file database (SQLite) has no server processes to spare."""
    return {} if backend.is_file else {"pool_size": KEPT_CONNECTIONS, "max_overflow": POOL_CEILING - KEPT_CONNECTIONS}


class Closed(errors.DatabaseUnavailable):
    """A call on a Database after its close(): it opens no connection. A DatabaseUnavailable (nothing
    was changed), so a late call of a window the launcher replaced is no failure shown to the user."""

    def __init__(self, message: str = "this connection to the database was closed; nothing was sent") -> None:
        super().__init__(message)


odbc_option = odbc.odbc_option  # for callers that build ODBC URLs themselves (probe)


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
            # The pool invalidates this connection (Database counts it) and checks out a new one.
            raise sa.exc.DisconnectionError("idle connection is gone")


def _refuse(engine: sa.Engine) -> None:
    """Close the engine's connections and give it a pool that opens none: SQLAlchemy's engine works after
    dispose(), so every path to the server (wb.engine's own users too) would open a session nothing closes.
    (Not a do_connect listener: a dialect event makes SQLAlchemy look for listeners around every statement.)"""

    def refused() -> Any:
        raise Closed

    pool, engine.pool = engine.pool, sa.pool.NullPool(refused)
    pool.dispose()


class Database:
    """An engine plus the transaction helpers every operation uses."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine
        self.dialect = engine.dialect.name
        self.backend = backends.for_dialect(self.dialect)
        self._write_lock = self.backend.write_lock(engine.url)
        self._fast_engine: sa.Engine | None = None
        self._held: Any = None
        self._busy_attempts: int | None = None  # asked of the backend at the first busy rollback
        # Bumped from any pool thread; a lost update between two racing bumps still changes the
        # value, which is all a window asks of it.
        self._interrupted = 0
        self._server: Any = None  # the server address the last new connection reached
        self._joined = threading.local()  # .conn: the read transaction one_read() opened on this thread
        # What other modules keep for this database (each queue's Enforcement, SQL Server's procedures),
        # under their module's name: it lives as long as this Database, no longer. (A module-level
        # WeakKeyDictionary cannot do that: its values refer to the Database, so no key ever died.)
        self.kept: dict[str, Any] = {}
        self._closed = False  # dispose() was called: no connection is opened again
        self._watch(engine)

    @property
    def fast_engine(self) -> sa.Engine:
        """A second pool for the claim and Complete, whose connections are held per thread and keep
        their mode: autocommit where each is one statement (one round trip: no BEGIN, no COMMIT, no
        isolation switch per checkout), or transactions that batches of statements end themselves
        (Backend.fast_pool_isolation)."""
        if self._closed:
            raise Closed
        if self._fast_engine is None:
            self._fast_engine = sa.create_engine(
                self.engine.url,
                isolation_level=self.backend.fast_pool_isolation(self.engine.url),
                pool_reset_on_return=None,
                **_kept(self.backend),
                connect_args=getattr(self.engine, "workbench_connect_args", {}),
            )
            self._fast_engine.workbench_pooler = getattr(self.engine, "workbench_pooler", "none")  # type: ignore[attr-defined]
            getattr(self.engine, "workbench_session_setup", _idle_ping)(self._fast_engine)
            self.backend.fast_pool_setup(self._fast_engine)
            self._watch(self._fast_engine)
        return self._fast_engine

    def interruptions(self) -> int:
        """How often this Database lost a connection (a dead one found in a pool, a call that met a
        dropped connection) or a new one reached another server than the last (a failover to a
        standby the URL names). A window compares it before and after its calls: when it grew, what
        it confirmed may need checking, as a switch to an asynchronous standby can undo commits.
        Counted per Database: another window's outage in the same process is not this one's."""
        return self._interrupted

    def _interrupt(self) -> None:
        self._interrupted += 1

    def _watch(self, engine: sa.Engine) -> None:
        # Pool listeners stay with the engine when it is disposed (release_idle): the pool is recreated
        # with the same dispatch.
        @event.listens_for(engine, "checkin")
        def _close_late(dbapi_conn: Any, record: Any) -> None:
            # A call that was running at close() brings its connection back afterwards (to the pool
            # close() replaced, which nothing empties again): end its session now.
            if self._closed and dbapi_conn is not None:
                record.close()

        @event.listens_for(engine, "invalidate")
        def _on_invalidate(_dbapi_conn: Any, _record: Any, _exc: BaseException | None) -> None:
            self._interrupt()

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_conn: Any, _record: Any) -> None:
            # A new connection after the pool was emptied (an idle window's) may land on another
            # server with no error on the way: only where it landed tells.
            address = self.backend.server_address(dbapi_conn)
            if address is not None and self._server is not None and address != self._server:
                self._interrupt()
            if address is not None:
                self._server = address

    @property
    def held(self) -> Any:
        """Per-thread connections of the fast pool for fastpath.FastStatement or batches (created on first use)."""
        if self._held is None:
            self._held = self.backend.held_connections(self.fast_engine)
        return self._held

    def release_idle(self) -> None:
        """Close the fast pool's connections, those held per thread included, while nothing runs on
        this Database (a window that went idle): the next claim opens one again. The main pool keeps
        its one (KEPT_CONNECTIONS) for the window's occasional reads."""
        if self._held is not None:
            self._held.close_all()
        if self._fast_engine is not None:
            self._fast_engine.dispose()

    def dispose(self) -> None:
        """Close for good (a second call does nothing more): every call after it raises Closed."""
        self._closed = True  # first: a connection a running call opens meanwhile is closed as it comes back
        if self._held is not None:
            self._held.close_all()
        _refuse(self.engine)
        if self._fast_engine is not None:
            _refuse(self._fast_engine)

    def read(self, fn: Callable[[sa.Connection], T]) -> T:
        """Run `fn` in a short read transaction (inside one_read(): in its transaction)."""
        joined: sa.Connection | None = getattr(self._joined, "conn", None)
        if joined is not None:
            return fn(joined)
        return self._run(fn, write=False)

    def read_alone(self, fn: Callable[[sa.Connection], T]) -> T:
        """Run `fn`, one read statement, on its own: in autocommit where the backend says it is cheaper
        (Backend.reads_alone; no transaction round trips, no SET LOCAL: a statement that reads a few index
        entries needs no timeout of its own), else as read() does."""
        if not self.backend.reads_alone or getattr(self._joined, "conn", None) is not None:
            return self.read(fn)

        def once() -> T:
            with dberrors.translated(), self.engine.connect() as conn:
                return fn(conn.execution_options(isolation_level="AUTOCOMMIT"))

        return self.retrying(once)

    @contextlib.contextmanager
    def one_read(self) -> Iterator[None]:
        """Every read() this thread makes inside runs in one read transaction: a window's start page reads
        its queues' figures in one transaction (one pooled session through PgBouncer) instead of one each.
        Writes still run in their own transactions. Not retried as a whole: reads are not refused as busy."""
        if getattr(self._joined, "conn", None) is not None:
            yield  # already inside one
            return
        with dberrors.translated(), self.engine.connect() as conn:
            conn.execution_options(**{backend_base.OPERATION: True})
            with conn.begin():
                self._joined.conn = conn
                try:
                    yield
                finally:
                    self._joined.conn = None

    def in_one_read(self) -> bool:
        """Is this thread inside one_read() (its reads joined in one transaction)?"""
        return getattr(self._joined, "conn", None) is not None

    def write(self, fn: Callable[[sa.Connection], T]) -> T:
        """Run `fn` in one short write transaction (BEGIN IMMEDIATE on SQLite), committed at the end."""
        return self._run(fn, write=True)

    def _attempts(self) -> int:
        if self._busy_attempts is None:
            with dberrors.translated(), self.engine.connect() as conn:
                self._busy_attempts = self.backend.busy_attempts(conn)
        return self._busy_attempts

    def _run(self, fn: Callable[[sa.Connection], T], *, write: bool) -> T:
        # Through a transaction pooler the session's settings are not ours: each transaction makes its own
        # (SET LOCAL), e.g. its statement timeout, as it begins (the backend's session_setup says which and how).

        def once() -> T:
            with dberrors.translated(), self.engine.connect() as conn:
                conn.execution_options(**{backend_base.OPERATION: True})
                if write:
                    conn = self.backend.for_writing(conn)
                    with self._write_lock, conn.begin():
                        return fn(conn)
                with conn.begin():
                    return fn(conn)

        return self.retrying(once)

    def retrying(self, once: Callable[[], T]) -> T:
        """Run `once` (a whole transaction) again while the database reports it busy."""
        attempt = 0
        while True:
            try:
                return once()
            except dberrors.Busy:
                # SQLite waited busy_timeout and the lock is still taken (or a deadlock victim on a
                # server): the transaction was rolled back, so running it again is safe.
                attempt += 1
                if attempt > self._attempts():
                    raise errors.DatabaseUnavailable("the database stayed busy; try again in a moment") from None
                time.sleep(min(0.2, random.uniform(0.01, 0.05) * attempt))
