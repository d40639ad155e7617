"""SQL Server: UPDLOCK/READPAST claims, READ COMMITTED, DATETIME precision, 2,100 parameters per statement."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from workbench.db import clock
from workbench.db.backends.base import Backend

if TYPE_CHECKING:
    from workbench.config import model


class MssqlBackend(Backend):
    name = "mssql"
    label = "SQL Server"
    default_port = 1433
    claim_methods = ("readpast",)
    keys_per_statement = 2000  # SQL Server takes at most 2,100 parameters per statement
    hours_in_sql = True
    partial_index_keyword = "mssql_where"
    create_grant = "GRANT CREATE TABLE TO {login}; GRANT ALTER ON SCHEMA::{schema} TO {login}"

    def engine_options(self, url: sa.URL, db: model.DatabaseConfig,
                       create: bool) -> tuple[sa.URL, dict[str, Any], dict[str, Any]]:
        return url, {"isolation_level": "READ COMMITTED"}, {"timeout": db.connect_timeout}

    def server_version(self, conn: sa.Connection) -> str:
        # SERVERPROPERTY returns sql_variant, which pyodbc cannot fetch (ODBC type -150).
        number = conn.exec_driver_sql("SELECT CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128))").scalar()
        return f"SQL Server {number}"

    def time_equals(self, column: sa.Column[Any], value: Any) -> sa.ColumnElement[bool]:
        # DATETIME keeps 1/300 s and DATETIME2(7) 100 ns, neither of which survives a round trip
        # through Python's microseconds exactly; a window of a few milliseconds is still a fence,
        # as one user cannot claim the same row twice within it.
        if not isinstance(value, sa.ColumnElement):
            value = sa.bindparam(None, value, type_=clock.ExactTime())
        return sa.and_(column > clock.add_milliseconds(value, -4), column < clock.add_milliseconds(value, 4))

    def lock_one(self, conn: sa.Connection, table: sa.Table, key_column: sa.Column[Any], key: Any, *,
                 lock: bool = True) -> bool:
        stmt = sa.select(key_column).where(key_column == key)
        if lock:
            stmt = stmt.with_hint(table, "WITH (UPDLOCK, ROWLOCK, READPAST)", "mssql")
        return conn.execute(stmt).first() is not None

    def lock_row(self, stmt: sa.Select[Any], table: sa.Table) -> sa.Select[Any]:
        return stmt.with_hint(table, "WITH (UPDLOCK, ROWLOCK)", "mssql")

    def auto_claim_method(self, engine: sa.Engine) -> str:
        return "readpast"
