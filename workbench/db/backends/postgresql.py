"""PostgreSQL: the one-statement SKIP LOCKED claim, one-statement guarded writes, roles and row-level security."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from workbench.db.backends.base import Backend

if TYPE_CHECKING:
    from workbench.config import model


class PostgresqlBackend(Backend):
    name = "postgresql"
    label = "PostgreSQL"
    default_port = 5432
    claim_methods = ("skip-locked", "select-skip-locked")
    board_activity = "lateral"
    hours_in_sql = True
    one_statement_writes = True
    roles = True
    partial_index_keyword = "postgresql_where"
    create_grant = "GRANT CREATE ON SCHEMA {schema} TO {login}"

    def engine_options(self, url: sa.URL, db: model.DatabaseConfig,
                       create: bool) -> tuple[sa.URL, dict[str, Any], dict[str, Any]]:
        return url, {}, {"connect_timeout": db.connect_timeout, "application_name": "workbench",
                         # Our transactions are one statement or a few; anything slower is a hung
                         # server or a lock wait, and must not freeze the operator's window.
                         "options": f"-c statement_timeout={db.statement_timeout * 1000} "
                                    f"-c idle_in_transaction_session_timeout={db.statement_timeout * 2000}"}

    def probe_options(self, url: sa.URL, timeout: int) -> tuple[sa.URL, dict[str, Any]]:
        if url.get_driver_name() in ("psycopg", "psycopg2"):
            return url, {"connect_timeout": timeout, "application_name": "workbench"}
        return super().probe_options(url, timeout)

    def server_version(self, conn: sa.Connection) -> str:
        return " ".join(str(conn.exec_driver_sql("SELECT version()").scalar()).split()[:2])

    def hides_rows(self, conn: sa.Connection) -> bool:
        return True  # row-level security (`workbench grants`) hides rows from an UPDATE's view

    def auto_claim_method(self, engine: sa.Engine) -> str:
        return "skip-locked"
