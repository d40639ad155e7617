"""Several prebuilt statements in one round trip on MySQL/MariaDB (PyMySQL's multi-statement mode).

Through PyMySQL every statement is a round trip, and a claim + Complete pair took 14 of them
(candidates per branch, UPDATE, read back, audit INSERT, COMMIT, the pool's ROLLBACK), more time
than the server spent on them. A batch sends statements together and reads their results in
order, so the same writes take four round trips: a claim's locking reads, its writes, its audit
rows with COMMIT; a Complete's UPDATE, audit row and COMMIT at once.

The statements are SQLAlchemy constructs compiled once with the engine's dialect (positional
`%s` placeholders); PyMySQL escapes every value into the text as it does for any query. The
connections are the fast pool's (Database.fast_engine: READ COMMITTED, not autocommit), held per
thread (fastpath.HeldConnections), opened with CLIENT.MULTI_STATEMENTS (backends/mysql.py); every
transaction a batch begins ends with COMMIT or ROLLBACK before the thread's next call, and one
that fails is rolled back before the connection is used again.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

import sqlalchemy as sa

from workbench.db import fastpath

COMMIT = sa.text("COMMIT")
# How many rows the statement before changed (matched, with CLIENT.FOUND_ROWS), for later ones.
REMEMBER_CHANGED = sa.text("SET @wb_changed = ROW_COUNT()")
CHANGED: sa.ColumnElement[int] = sa.literal_column("@wb_changed", sa.Integer())


@dataclasses.dataclass
class Result:
    """One statement's outcome in a batch: rows changed (or read), and the rows it returned."""

    rowcount: int
    rows: list[tuple[Any, ...]]
    columns: list[str]

    def mappings(self) -> list[dict[str, Any]]:
        return [dict(zip(self.columns, row, strict=True)) for row in self.rows]


class _Plain:
    """A checked-out connection and when it was last used."""

    __slots__ = ("conn", "dbapi", "used")

    def __init__(self, conn: Any, used: float) -> None:
        self.conn = conn  # SQLAlchemy's pooled connection wrapper
        self.dbapi = conn.dbapi_connection  # pymysql.Connection
        self.used = used


class Prepared:
    """One statement compiled for batches, with its constant parameters and value conversions."""

    def __init__(
        self,
        held: BatchConnections,
        statement: sa.Executable,
        sample: Mapping[str, Any],
        column_keys: Sequence[str] | None = None,
    ) -> None:
        assert isinstance(statement, sa.sql.ClauseElement)
        dialect = held.positional_dialect
        compiled = statement.compile(dialect=dialect, column_keys=list(column_keys) if column_keys else None)
        assert isinstance(compiled, sa.sql.compiler.SQLCompiler)
        # literal_execute constants (config values) are rendered into the SQL text here, once.
        expanded = compiled.construct_expanded_state(dict(sample))
        self.sql: str = expanded.statement
        self.constants = {k: v for k, v in expanded.parameters.items() if k not in sample}
        # What SQLAlchemy would do to each value on the way in (JSON, booleans) and each column on
        # the way out; the latter needs the driver's column types, known with the first result.
        bind = compiled._bind_processors
        self._binds: list[tuple[str, Any]] = [(name, bind.get(name)) for name in expanded.positiontup or ()]
        self._types = [(entry.keyname, entry.type) for entry in compiled._result_columns]
        self._dialect = dialect
        self._processors: list[Any] | None = None

    def values(self, params: Mapping[str, Any]) -> list[Any]:
        params = {**self.constants, **params} if self.constants else params
        return [params[name] if process is None else process(params[name]) for name, process in self._binds]

    def result(self, cursor: Any) -> Result:
        if cursor.description is None:
            return Result(cursor.rowcount, [], [])
        rows = list(cursor.fetchall())
        if self._processors is None:
            self._processors = [
                type_._cached_result_processor(self._dialect, column[1])
                for (_, type_), column in zip(self._types, cursor.description, strict=False)
            ]
        if any(self._processors):
            processors = self._processors
            rows = [
                tuple(value if p is None else p(value) for p, value in zip(processors, row, strict=False))
                for row in rows
            ]
        columns = [name for name, _ in self._types] or [column[0] for column in cursor.description]
        return Result(cursor.rowcount, rows, columns)


@dataclasses.dataclass(frozen=True)
class FinishBatch:
    """A Complete without edits as statements of a batch, without its COMMIT: the fenced UPDATE, how
    many rows it changed, the audit row (written only if it changed one), then one row (changed, the
    database time). A claim runs it ahead of its own statements, in its transaction
    (batch_writes.BatchedComplete, BatchedClaim.finish_then_claim)."""

    parts: tuple[Prepared, ...]

    def runs(self, params: Mapping[str, Any]) -> list[tuple[Prepared, Mapping[str, Any]]]:
        """The statements with their values, from GuardedWriter.finish_params' names."""
        given = {**params, "wb_a_key": str(params["wb_key"])}  # the audit trail keeps the key as text
        return [(part, given) for part in self.parts]

    @staticmethod
    def outcome(results: Sequence[Result]) -> tuple[bool, Any]:
        """(did the fence hold, the database time) from the results of runs()' statements."""
        changed, at = results[-1].rows[0]
        return changed == 1, at


class BatchConnections(fastpath.HeldConnections):
    """Per-thread connections that run several statements in one round trip."""

    paramstyle = "format"
    batches = True

    def wrap(self, conn: Any, used: float) -> Any:
        return _Plain(conn, used)

    def prepare(
        self, statement: sa.Executable, sample: Mapping[str, Any] | None = None, *, insert_columns: bool = False
    ) -> Prepared:
        """`statement` compiled once; `sample` names the parameters given on each run (and with
        `insert_columns`, the columns an INSERT writes from them, as an executemany would)."""
        sample = sample or {}
        return Prepared(self, statement, sample, list(sample) if insert_columns else None)

    def run(self, parts: Sequence[tuple[Prepared, Mapping[str, Any]]]) -> list[Result]:
        """Run the statements in one round trip; each one's result. On an error, anything the
        batch began is rolled back and the error raised as a workbench error (Busy: try again)."""
        sql = ";\n".join(part.sql for part, _ in parts)
        args = tuple(value for part, params in parts for value in part.values(params))
        held = self.get()
        results: list[Result] = []
        try:
            with contextlib.closing(held.dbapi.cursor()) as cursor:
                cursor.execute(sql, args)  # PyMySQL: the values escaped into the text, %% read as %
                for part, _ in parts:
                    results.append(part.result(cursor))
                    if not cursor.nextset():
                        break
        except self.engine.dialect.loaded_dbapi.Error as exc:
            self._failed(held, sql, args, exc)
        return results

    def rollback(self) -> None:
        """End this thread's transaction without writing (a batch began it and a later step refused).
        Nothing to do after a failed batch: that rolled back and gave the connection up."""
        held = self.current()
        if held is None:
            return
        try:
            held.dbapi.rollback()
        except self.engine.dialect.loaded_dbapi.Error as exc:
            self._failed(held, "ROLLBACK", (), exc)

    def _failed(self, held: Any, sql: str, args: Any, exc: Any) -> NoReturn:
        dialect = self.engine.dialect
        invalid = dialect.is_disconnect(exc, held.dbapi, None)
        if not invalid:
            try:
                # A statement failed: MySQL stops the batch there and keeps the transaction (and
                # the row locks its statements took) open until told otherwise.
                held.dbapi.rollback()
            except dialect.loaded_dbapi.Error as again:
                exc, invalid = again, True
        self.drop(invalidate=exc if invalid else None)
        fastpath.raise_translated(dialect, sql, args, exc, invalidated=invalid)
