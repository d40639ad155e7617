"""Run a prebuilt SQLAlchemy statement as a prepared statement straight on the DBAPI connection.

Claim and Complete on PostgreSQL are single statements whose shape never changes. SQLAlchemy
still builds and compiles them (every name quoted, every value a bound parameter); compiling
happens once, and each call then costs one psycopg `execute(..., prepare=True)` instead of a trip
through SQLAlchemy's execution and result machinery, which costs more client CPU per call than
the database spends on the statement (measured in tests/benchmarks/claim_bench.py).
"""

from __future__ import annotations

from typing import Any, Mapping

import sqlalchemy as sa

from workbench.db import dberrors


class FastStatement:
    """One compiled statement with its constant parameters; `run()` binds the per-call values."""

    def __init__(self, engine: sa.Engine, statement: sa.Executable, sample: Mapping[str, Any]) -> None:
        compiled = statement.compile(dialect=engine.dialect)
        # literal_execute constants (filter values) are rendered into the SQL text here, once.
        expanded = compiled.construct_expanded_state(dict(sample))
        self.sql: str = expanded.statement
        self.constants: dict[str, Any] = {k: v for k, v in expanded.parameters.items() if k not in sample}
        self.engine = engine
        # Column names of the result, read once: building them from the cursor's description on
        # every call costs psycopg more than parsing the row itself.
        self._columns: list[str] | None = None

    def run(self, values: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Execute with `values` (all of the sample's names) in autocommit; rows as dicts."""
        params = {**self.constants, **values}
        raw = self.engine.raw_connection()
        try:
            cursor = raw.cursor()
            try:
                cursor.execute(self.sql, params, prepare=True)
                if self._columns is None:
                    self._columns = [d[0] for d in cursor.description or ()]
                if not self._columns:
                    return []
                names = self._columns
                return [dict(zip(names, row)) for row in cursor.fetchall()]
            finally:
                cursor.close()
        except self.engine.dialect.loaded_dbapi.Error as exc:
            invalid = self.engine.dialect.is_disconnect(exc, raw.dbapi_connection, None)
            if invalid:
                raw.invalidate(exc)
            wrapped = sa.exc.DBAPIError.instance(self.sql, params, exc, self.engine.dialect.loaded_dbapi.Error,
                                                 connection_invalidated=invalid)
            with dberrors.translated():
                raise wrapped from exc
            raise  # pragma: no cover - translated() always raises
        finally:
            raw.close()
