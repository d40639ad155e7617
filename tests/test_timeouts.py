"""Every connection carries the configured statement timeout, so a hung server cannot hold a call."""

from __future__ import annotations

import dataclasses

import pytest

from tests import support


@pytest.mark.parametrize("backend", ["postgresql", "mariadb-odbc"])
def test_statement_timeout_on_both_pools(native_env: support.Env, backend: str) -> None:
    config = native_env.demo_config()
    config = dataclasses.replace(config, database=dataclasses.replace(config.database, statement_timeout=7))
    wb = native_env.open(config)
    for engine in (wb.engine, wb.db.fast_engine):
        with engine.connect() as conn:
            if backend == "postgresql":
                assert conn.exec_driver_sql("SHOW statement_timeout").scalar() == "7s"
            else:  # pyodbc's query timeout (SQL_ATTR_QUERY_TIMEOUT), set per connection
                assert conn.connection.dbapi_connection.timeout == 7
