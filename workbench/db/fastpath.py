"""Run a prebuilt SQLAlchemy statement as a prepared statement straight on the DBAPI connection.

Claim and Complete on PostgreSQL are single statements whose shape never changes. SQLAlchemy
still builds and compiles them (every name quoted, every value a bound parameter); compiling
happens once, and each call then costs one psycopg `execute(..., prepare=True)` instead of a trip
through SQLAlchemy's execution and result machinery, which costs more client CPU per call than
the database spends on the statement (measured in tests/benchmarks/claim_bench.py).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any, NoReturn

import sqlalchemy as sa

from workbench.db import dberrors

# A held connection unused for this long goes back to the pool and is checked out again, so the
# pool's idle ping (connect.py) runs before the next statement instead of the statement failing.
IDLE_RETURN_SECONDS = 20.0


class _Held:
    """A checked-out connection, its reused cursor, and when it was last used."""

    __slots__ = ("conn", "cursor", "used")

    def __init__(self, conn: Any, cursor: Any, used: float) -> None:
        self.conn = conn  # SQLAlchemy's pooled connection wrapper
        self.cursor = cursor  # reused: creating a cursor per call is cheap, not free
        self.used = used


class HeldConnections:
    """One checked-out DBAPI connection per thread, kept between calls.

    Checking a connection out of SQLAlchemy's pool and back in costs about 0.1 ms of client CPU,
    as much as the claim statement itself; a desktop user or a worker makes one call after
    another on the same thread, so the connection stays with the thread.

    Keyed by thread id, not a threading.local: a QThreadPool job runs with a fresh Python thread
    state on the same OS thread, so a threading.local would be empty on every job and each call
    would check out (and keep) one more connection until the pool ran dry.
    """

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine
        self._held: dict[int, _Held] = {}
        self._lock = threading.Lock()

    def get(self) -> _Held:
        """This thread's connection and cursor, checked out on first use and again after an idle spell."""
        held = self._held.get(threading.get_ident())
        now = time.monotonic()
        if held is None or now - held.used > IDLE_RETURN_SECONDS:
            if held is not None:
                self.drop(invalidate=None)
            conn = self._connect()
            held = _Held(conn, conn.dbapi_connection.cursor(), now)
            with self._lock:
                self._held[threading.get_ident()] = held
        held.used = now
        return held

    def _connect(self) -> Any:
        # raw_connection() raises the driver's own exception (SQLAlchemy wraps only what runs
        # through a Connection): wrap it the same way, so "connection refused" reads as
        # DatabaseUnavailable like everywhere else.
        try:
            return self.engine.raw_connection()
        except self.engine.dialect.loaded_dbapi.Error as exc:
            _raise_translated(self.engine.dialect, None, None, exc, invalidated=True)

    def drop(self, invalidate: BaseException | None) -> None:
        with self._lock:
            held = self._held.pop(threading.get_ident(), None)
        if held is None:
            return
        if invalidate is not None:
            held.conn.invalidate(invalidate)
        held.conn.close()

    def count(self) -> int:
        """How many connections are held (tests, diagnostics)."""
        return len(self._held)

    def close_all(self) -> None:
        with self._lock:
            held, self._held = list(self._held.values()), {}
        for item in held:
            try:
                item.conn.close()
            except Exception:  # noqa: BLE001 - closing at shutdown; the server may be gone
                pass


class FastStatement:
    """One compiled statement with its constant parameters; `rows()` / `run()` bind the per-call values."""

    def __init__(self, held: HeldConnections, statement: sa.Executable, sample: Mapping[str, Any]) -> None:
        engine = held.engine
        compiled = statement.compile(dialect=engine.dialect)
        # literal_execute constants (filter values) are rendered into the SQL text here, once.
        expanded = compiled.construct_expanded_state(dict(sample))
        self.sql: str = expanded.statement
        self.constants: dict[str, Any] = {k: v for k, v in expanded.parameters.items() if k not in sample}
        self.held = held
        self.dialect = engine.dialect
        # Column names of the result, read once: building them from the cursor's description on
        # every call costs psycopg more than parsing the row itself.
        self._columns: list[str] | None = None

    def rows(self, values: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        """Execute with `values` (all of the sample's names) in autocommit; the rows as the driver returns them."""
        params = {**self.constants, **values} if self.constants else values
        held = self.held.get()
        try:
            cursor = held.cursor
            cursor.execute(self.sql, params, prepare=True)
            if self._columns is None:
                self._columns = [d[0] for d in cursor.description or ()]
            return cursor.fetchall() if self._columns else []
        except self.dialect.loaded_dbapi.Error as exc:
            invalid = self.dialect.is_disconnect(exc, held.conn.dbapi_connection, None)
            # An error leaves nothing open (autocommit), but a lost connection must not be reused.
            self.held.drop(invalidate=exc if invalid else None)
            _raise_translated(self.dialect, self.sql, params, exc, invalidated=invalid)

    @property
    def columns(self) -> list[str]:
        """The result's column names (known after the first call)."""
        return self._columns or []

    def run(self, values: Mapping[str, Any]) -> list[dict[str, Any]]:
        """As rows(), each row as a dict by column name."""
        rows = self.rows(values)
        names = self.columns
        return [dict(zip(names, row)) for row in rows]


def _raise_translated(dialect: Any, sql: str | None, params: Any, exc: Exception, *, invalidated: bool) -> NoReturn:
    """A driver exception as SQLAlchemy would have wrapped it, then as a workbench error."""
    wrapped = sa.exc.DBAPIError.instance(sql, params, exc, dialect.loaded_dbapi.Error,
                                         connection_invalidated=invalidated)
    with dberrors.translated():
        raise wrapped from exc
    raise AssertionError("unreachable")  # translated() always raises
