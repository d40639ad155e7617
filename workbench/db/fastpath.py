"""Run a prebuilt SQLAlchemy statement as a prepared statement straight on libpq (PostgreSQL, psycopg 3).

Claim and Complete on PostgreSQL are single statements whose shape never changes. SQLAlchemy
still builds and compiles them (every name quoted, every value a bound parameter, `$n`
placeholders); compiling happens once. Each connection prepares the statement the first time it
runs it, and every call after that sends the values only (Bind + Execute) through psycopg's libpq
wrapper (`psycopg.pq`), with psycopg's own dumpers, loaders, waiting and error classes.

That skips two layers that each cost more client CPU per call than the database spends on the
statement (measured in tests/benchmarks/claim_bench.py, 8 processes on 2 cores): SQLAlchemy's
execution and result machinery, and then the psycopg cursor's (query conversion, prepared
statement cache, result bookkeeping), which alone doubled the client CPU of a claim + complete
pair next to the libpq calls it makes.

Through a transaction pooler (`[database] pooler = "transaction"`, PgBouncer's pool_mode =
transaction) the next call may run on another server session, which knows no statement this one
prepared: there each call sends its statement unnamed, parsed and planned anew each time, and
nothing is made on the session first (no `setup`). The session's timeouts are not ours either: the
statement follows the transaction's own (SET LOCAL, the engine's workbench_transaction_settings) in
one pipeline, one round trip and one implicit transaction.
"""

from __future__ import annotations

import contextlib
import copy
import itertools
import operator
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn

import sqlalchemy as sa

from workbench.db import dberrors

# A held connection unused for this long goes back to the pool and is checked out again, so the
# pool's idle ping (connect.py) runs before the next statement instead of the statement failing.
IDLE_RETURN_SECONDS = 20.0

# Names of the statements prepared on each DBAPI connection; it outlives a check-out (a connection
# that went back to the pool keeps its prepared statements) and goes with the connection.
_PREPARED: weakref.WeakKeyDictionary[Any, set[bytes]] = weakref.WeakKeyDictionary()
_NAMES = itertools.count(1)


class _Held:
    """A checked-out connection, what runs statements on it, and when it was last used."""

    __slots__ = ("conn", "dbapi", "pgconn", "prepared", "tx", "used")

    def __init__(self, conn: Any, used: float) -> None:
        from psycopg.adapt import Transformer

        self.conn = conn  # SQLAlchemy's pooled connection wrapper
        self.dbapi = conn.dbapi_connection  # psycopg.Connection
        self.pgconn = self.dbapi.pgconn  # its libpq connection
        self.prepared = _PREPARED.setdefault(self.dbapi, set())
        self.tx = Transformer(self.dbapi)  # the connection's dumpers and loaders (SQLAlchemy's adapters)
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

    # libpq's $n placeholders (no %% for a literal %, as pyformat needs).
    paramstyle = "numeric_dollar"
    batches = False  # several statements in one round trip (batches.BatchConnections)

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine
        self._held: dict[int, Any] = {}
        self._lock = threading.Lock()
        # The engine's own dialect (server version, a cast on every bind) with positional
        # placeholders in the driver's style, and a preparer to match.
        dialect = self.positional_dialect = copy.copy(engine.dialect)
        dialect.paramstyle, dialect.positional = self.paramstyle, True
        dialect.identifier_preparer = dialect.preparer(dialect)

    def get(self) -> Any:
        """This thread's connection, checked out on first use and again after an idle spell."""
        held = self._held.get(threading.get_ident())
        now = time.monotonic()
        if held is None or now - held.used > IDLE_RETURN_SECONDS:
            if held is not None:
                self.drop(invalidate=None)
            held = self.wrap(self._connect(), now)
            with self._lock:
                self._held[threading.get_ident()] = held
        held.used = now
        return held

    def current(self) -> Any:
        """This thread's connection if it holds one (None: the next get() checks one out)."""
        return self._held.get(threading.get_ident())

    def wrap(self, conn: Any, used: float) -> Any:
        """A checked-out connection with what runs statements on it (psycopg's libpq wrapper here)."""
        return _Held(conn, used)

    def _connect(self) -> Any:
        # raw_connection() raises the driver's own exception (SQLAlchemy wraps only what runs
        # through a Connection): wrap it the same way, so "connection refused" reads as
        # DatabaseUnavailable like everywhere else.
        try:
            return self.engine.raw_connection()
        except self.engine.dialect.loaded_dbapi.Error as exc:
            raise_translated(self.engine.dialect, None, None, exc, invalidated=True)

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
            with contextlib.suppress(Exception):  # closing at shutdown; the server may be gone
                item.conn.close()


class SetupRefused(Exception):
    """A statement's setup (FastStatement's `setup`) was refused by the database: e.g. no TEMPORARY
    privilege for a function of the session's own. Nothing was prepared or run; `error` says why."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


class FastStatement:
    """One compiled statement with its constant parameters; `rows()` / `run()` bind the per-call values."""

    def __init__(
        self, held: HeldConnections, statement: sa.Executable, sample: Mapping[str, Any], *, setup: str | None = None
    ) -> None:
        """`setup`: SQL run on each connection before the statement is prepared there (a function of
        the session's own that the statement calls, e.g.)."""
        # psycopg is optional (SQLite-only installs): imported here, what the hot path needs kept.
        from psycopg import generators, pq
        from psycopg.adapt import PyFormat

        assert isinstance(statement, sa.sql.ClauseElement)
        compiled = statement.compile(dialect=held.positional_dialect)
        assert isinstance(compiled, sa.sql.compiler.SQLCompiler)
        # literal_execute constants (filter values) are rendered into the SQL text here, once.
        expanded = compiled.construct_expanded_state(dict(sample))
        self.sql: str = expanded.statement
        order = list(expanded.positiontup or ())  # the names of $1, $2, …
        self.constants: dict[str, Any] = {k: v for k, v in expanded.parameters.items() if k not in sample}
        self.held = held
        self.dialect = held.engine.dialect
        self.name = f"wb_fast_{next(_NAMES)}".encode()
        self._query = self.sql.encode()
        self._values = (
            (lambda params: [params[order[0]]])
            if len(order) == 1
            else operator.itemgetter(*order)
            if order
            else (lambda params: ())
        )
        # Values go as text; the server reads each with the type of its cast ($1::VARCHAR).
        self._formats = [PyFormat.TEXT] * len(order)
        self._exchange, self._tuples_ok = generators.execute, pq.ExecStatus.TUPLES_OK
        self._columns: list[str] | None = None
        self._setup = setup.encode() if setup is not None else None
        self._pooled = getattr(held.engine, "workbench_pooler", "none") == "transaction"
        if self._pooled and setup is not None:
            raise ValueError("a statement run through a transaction pooler cannot rely on a setup of its session")
        local = getattr(held.engine, "workbench_transaction_settings", None) if self._pooled else None
        self._local = (
            str(local.compile(dialect=held.positional_dialect, compile_kwargs={"literal_binds": True})).encode()
            if local is not None
            else None
        )

    def rows(self, values: Mapping[Any, Any]) -> list[tuple[Any, ...]]:
        """Execute with `values` (all of the sample's names) in autocommit; the rows as tuples."""
        params = {**self.constants, **values} if self.constants else values
        held = self.held.get()
        try:
            return self._execute(held, self._values(params))
        except self.dialect.loaded_dbapi.Error as exc:
            invalid = self.dialect.is_disconnect(exc, held.dbapi, None)
            # An error leaves nothing open (autocommit), but a lost connection must not be reused.
            self.held.drop(invalidate=exc if invalid else None)
            raise_translated(self.dialect, self.sql, params, exc, invalidated=invalid)

    def _execute(self, held: _Held, values: Sequence[Any], *, repaired: bool = False) -> list[tuple[Any, ...]]:
        """`repaired`: the statement or its setup was made again after the session lost it; the same
        error once more is the database's own, raised as it is."""
        conn, pgconn, tx = held.dbapi, held.pgconn, held.tx
        with conn.lock:
            if self._local is not None:
                results = self._pipelined(held, tx.dump_sequence(values, self._formats))
            elif self._pooled:
                pgconn.send_query_params(self._query, tx.dump_sequence(values, self._formats))
                results = conn.wait(self._exchange(pgconn))
            else:
                if self.name not in held.prepared and self._setup is not None and not repaired:
                    results = self._made_and_run(held, tx.dump_sequence(values, self._formats))
                else:
                    if self.name not in held.prepared:
                        self._run_setup(held)
                        pgconn.send_prepare(self.name, self._query)
                        _one_result(conn, conn.wait(self._exchange(pgconn)))
                        held.prepared.add(self.name)
                    pgconn.send_query_prepared(self.name, tx.dump_sequence(values, self._formats))
                    results = conn.wait(self._exchange(pgconn))
        if len(results) != 1 or results[0].status != self._tuples_ok:
            from psycopg import errors

            try:
                _one_result(conn, results)
            except errors.InvalidSqlStatementName:
                if repaired:
                    raise
                # Someone deallocated our statements on this connection (DISCARD ALL): prepare again.
                held.prepared.discard(self.name)
                return self._execute(held, values, repaired=True)
            except (errors.UndefinedFunction, errors.InvalidSchemaName):
                if self._setup is None or repaired:
                    raise
                # The session's own function went (DISCARD TEMP, or the first call's transaction
                # failed and took the function, and the session's temporary schema made with it)
                # while the statement stayed: make it again; the statement is planned anew.
                with conn.lock:
                    self._run_setup(held)
                return self._execute(held, values, repaired=True)
            return []  # a statement without a result set
        result = results[0]
        if self._columns is None:
            self._columns = [result.fname(i).decode() for i in range(result.nfields)]
        tx.set_pgresult(result)
        return tx.load_rows(0, result.ntuples, tuple)

    def _pipelined(self, held: _Held, params: Sequence[Any]) -> list[Any]:
        """The transaction's settings, then the statement, in one pipeline: SET LOCAL applies to the
        statement and ends with it. The statement's results (an error of the settings' query raised
        as it is)."""
        assert self._local is not None
        local, query = self._local, self._query
        settings, results = _in_one_pipeline(
            held, lambda pg: pg.send_query_params(local, None), lambda pg: pg.send_query_params(query, params)
        )
        _one_result(held.dbapi, settings)
        return results

    def _made_and_run(self, held: _Held, params: Sequence[Any]) -> list[Any]:
        """The first call on a connection: the setup, the statement's preparation and its first run in
        one pipeline (a window's first Next item makes its claim function and claims in one
        transaction). The statement's results; SetupRefused where the setup itself failed (nothing
        prepared, nothing run)."""
        assert self._setup is not None
        setup, name, query = self._setup, self.name, self._query
        made, prepared, results = _in_one_pipeline(
            held,
            lambda pg: pg.send_query_params(setup, None),
            lambda pg: pg.send_prepare(name, query),
            lambda pg: pg.send_query_prepared(name, params),
        )
        try:
            _one_result(held.dbapi, made)
        except self.dialect.loaded_dbapi.Error as exc:
            raise SetupRefused(exc) from exc
        _one_result(held.dbapi, prepared)
        # Prepared statements are the session's, not the transaction's: this one stays when the run
        # fails and rolls the setup back, and its next run finds the setup gone and makes it again
        # (UndefinedFunction or InvalidSchemaName, _execute).
        held.prepared.add(self.name)
        return results

    def _run_setup(self, held: _Held) -> None:
        if self._setup is not None:
            held.pgconn.send_query(self._setup)
            _one_result(held.dbapi, held.dbapi.wait(self._exchange(held.pgconn)))

    @property
    def columns(self) -> list[str]:
        """The result's column names (known after the first call)."""
        return self._columns or []

    def run(self, values: Mapping[str, Any]) -> list[dict[str, Any]]:
        """As rows(), each row as a dict by column name."""
        rows = self.rows(values)
        names = self.columns
        return [dict(zip(names, row, strict=False)) for row in rows]


def _in_one_pipeline(held: _Held, *sends: Callable[[Any], None]) -> list[list[Any]]:
    """Each of `sends` on the connection in one pipeline ending in one Sync: one implicit transaction,
    one round trip. Each one's results, in order (errors left in them for the caller to raise)."""
    from psycopg import OperationalError, generators

    conn, pgconn = held.dbapi, held.pgconn
    pgconn.enter_pipeline_mode()
    try:
        for send in sends:
            send(pgconn)
        pgconn.pipeline_sync()
        conn.wait(generators.send(pgconn))
        out = [conn.wait(generators.fetch_many(pgconn)) for _ in sends]
        conn.wait(generators.fetch_many(pgconn))  # the Sync's
    finally:
        # A connection lost half way cannot leave pipeline mode; it is dropped (rows()).
        with contextlib.suppress(OperationalError):
            pgconn.exit_pipeline_mode()
    return out


def begin_with_settings(conn: Any, settings: str) -> None:
    """Open the transaction psycopg would open at the first statement on `conn` (not in autocommit) with the
    transaction's `settings` (SET LOCAL …) in the same simple query as its BEGIN: one round trip, nothing
    planned. psycopg sends no BEGIN of its own then (the server says a transaction is open), and its commit()
    and rollback() end this one. The BEGIN says what psycopg's would (SQLAlchemy sets the isolation level on
    a connection again after its use in autocommit)."""
    from psycopg import IsolationLevel, errors, generators, pq

    if conn.autocommit or conn.pgconn.transaction_status != pq.TransactionStatus.IDLE:
        return
    begin = ["BEGIN"]
    if conn.isolation_level is not None:
        begin.append("ISOLATION LEVEL " + IsolationLevel(conn.isolation_level).name.replace("_", " "))
    if conn.read_only is not None:
        begin.append("READ ONLY" if conn.read_only else "READ WRITE")
    if conn.deferrable is not None:
        begin.append("DEFERRABLE" if conn.deferrable else "NOT DEFERRABLE")
    with conn.lock:
        conn.pgconn.send_query(f"{' '.join(begin)}; {settings}".encode())
        results = conn.wait(generators.execute(conn.pgconn))
    for result in results:
        if result.status == pq.ExecStatus.FATAL_ERROR:
            raise errors.error_from_result(result, encoding=conn.info.encoding)


def _one_result(conn: Any, results: list[Any]) -> Any:
    """The one result of a statement, or the database's error as psycopg's exception for it."""
    from psycopg import errors, pq

    for result in results:  # rows may come before an error (a trigger refusing a later row)
        if result.status == pq.ExecStatus.FATAL_ERROR:
            raise errors.error_from_result(result, encoding=conn.info.encoding)
    if len(results) != 1:
        raise errors.InternalError(f"expected one result from the statement, got {len(results)}")
    result = results[0]
    if result.status == pq.ExecStatus.FATAL_ERROR:
        raise errors.error_from_result(result, encoding=conn.info.encoding)
    if result.status not in (pq.ExecStatus.TUPLES_OK, pq.ExecStatus.COMMAND_OK):
        raise errors.InternalError(f"unexpected result status: {pq.ExecStatus(result.status).name}")
    return result


def raise_translated(dialect: Any, sql: str | None, params: Any, exc: BaseException, *, invalidated: bool) -> NoReturn:
    """A driver exception as SQLAlchemy would have wrapped it, then as a workbench error."""
    wrapped = sa.exc.DBAPIError.instance(
        sql, params, exc, dialect.loaded_dbapi.Error, connection_invalidated=invalidated
    )
    with dberrors.translated():
        raise wrapped from exc
    raise AssertionError("unreachable")  # translated() always raises
