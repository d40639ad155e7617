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
from typing import Any, Mapping

import sqlalchemy as sa

from workbench.db import dberrors

# A held connection unused for this long goes back to the pool and is checked out again, so the
# pool's idle ping (connect.py) runs before the next statement instead of the statement failing.
IDLE_RETURN_SECONDS = 20.0


class HeldConnections:
    """One checked-out DBAPI connection per thread, kept between calls.

    Checking a connection out of SQLAlchemy's pool and back in costs about 0.1 ms of client CPU,
    as much as the claim statement itself; a desktop user or a worker makes one call after
    another on the same thread, so the connection stays with the thread.
    """

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine
        self._local = threading.local()
        self._all: set[Any] = set()
        self._lock = threading.Lock()

    def get(self) -> Any:
        local = self._local
        held = getattr(local, "conn", None)
        now = time.monotonic()
        if held is not None and now - local.used > IDLE_RETURN_SECONDS:
            self.drop(invalidate=None)
            held = None
        if held is None:
            held = self.engine.raw_connection()
            local.conn = held
            local.cursor = held.dbapi_connection.cursor()  # reused: psycopg cursors are cheap but not free
            with self._lock:
                self._all.add(held)
        local.used = now
        return held

    def cursor(self) -> Any:
        """The held connection's cursor (get() first)."""
        return self._local.cursor

    def drop(self, invalidate: BaseException | None) -> None:
        held = getattr(self._local, "conn", None)
        self._local.conn = None
        self._local.cursor = None
        if held is None:
            return
        with self._lock:
            self._all.discard(held)
        if invalidate is not None:
            held.invalidate(invalidate)
        held.close()

    def close_all(self) -> None:
        with self._lock:
            held, self._all = list(self._all), set()
        for conn in held:
            try:
                conn.close()
            except Exception:  # noqa: BLE001 - closing at shutdown; the server may be gone
                pass
        self._local = threading.local()


class FastStatement:
    """One compiled statement with its constant parameters; `run()` binds the per-call values."""

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

    def run(self, values: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Execute with `values` (all of the sample's names) in autocommit; rows as dicts."""
        params = {**self.constants, **values}
        raw = self.held.get()
        try:
            cursor = self.held.cursor()
            cursor.execute(self.sql, params, prepare=True)
            if self._columns is None:
                self._columns = [d[0] for d in cursor.description or ()]
            names = self._columns
            return [dict(zip(names, row)) for row in cursor.fetchall()] if names else []
        except self.dialect.loaded_dbapi.Error as exc:
            invalid = self.dialect.is_disconnect(exc, raw.dbapi_connection, None)
            # An error leaves nothing open (autocommit), but a lost connection must not be reused.
            self.held.drop(invalidate=exc if invalid else None)
            wrapped = sa.exc.DBAPIError.instance(self.sql, params, exc, self.dialect.loaded_dbapi.Error,
                                                 connection_invalidated=invalid)
            with dberrors.translated():
                raise wrapped from exc
            raise  # pragma: no cover - translated() always raises
