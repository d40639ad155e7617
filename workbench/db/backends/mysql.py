"""MySQL and MariaDB: SELECT … FOR UPDATE SKIP LOCKED where the server really locks, READ COMMITTED, UTC sessions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy import event

from workbench.db import odbc
from workbench.db.backends import indexes
from workbench.db.backends.base import LIKE_ESCAPE, Backend, NewRow, like_pattern

if TYPE_CHECKING:
    from workbench.config import model

# MySQL look-alikes that report a MySQL 8 version and accept FOR UPDATE SKIP LOCKED but do not
# lock the rows it reads (TiDB: pingcap/tidb#69720), so a stepwise claim would not be exclusive.
_SKIP_LOCKED_IGNORED = ("tidb",)


class MysqlBackend(Backend):
    uuid_as_text = True
    name = "mysql"
    label = "MySQL"
    logins_kind = "accounts"
    default_port = 3306
    claim_methods = ("select-skip-locked",)
    board_activity = "packed"
    hours_in_sql = True
    durations_in_sql = True
    create_grant = "GRANT CREATE, ALTER, INDEX ON {schema}.* TO {login}"

    def engine_options(
        self, url: sa.URL, db: model.DatabaseConfig, create: bool
    ) -> tuple[sa.URL, dict[str, Any], dict[str, Any]]:
        connect_args: dict[str, Any] = {}
        if url.get_driver_name() == "pymysql":
            connect_args = {
                "connect_timeout": db.connect_timeout,
                "read_timeout": db.statement_timeout,
                "write_timeout": db.statement_timeout,
            }
        elif url.get_driver_name() == "pyodbc":
            connect_args = {"timeout": db.connect_timeout}
            # MariaDB Connector/ODBC ignores the login timeout while it waits for the server's
            # greeting (a server that accepts and never answers); its CONN_TIMEOUT covers that.
            url = odbc.odbc_option(found_rows(url), "CONN_TIMEOUT", str(db.connect_timeout))
        return url, {"isolation_level": "READ COMMITTED"}, connect_args

    def probe_options(self, url: sa.URL, timeout: int) -> tuple[sa.URL, dict[str, Any]]:
        if url.get_driver_name() in ("pymysql", "mysqldb"):
            # connect_timeout covers only the TCP connect: a server that accepts and then never sends
            # its greeting would hang the read forever without read_timeout.
            return url, {"connect_timeout": timeout, "read_timeout": timeout, "write_timeout": timeout}
        if url.get_driver_name() == "pyodbc":
            # MariaDB Connector/ODBC ignores the login timeout (pyodbc's timeout) while it waits for the
            # server's greeting; its own CONN_TIMEOUT keyword covers that. Other drivers ignore the keyword.
            return odbc.odbc_option(url, "CONN_TIMEOUT", str(timeout)), {"timeout": timeout}
        return super().probe_options(url, timeout)

    def probe_problem(self, url: sa.URL) -> str | None:
        if url.get_driver_name() == "pyodbc" and url.port:
            return (
                f"Put the port in the URL's query string ({url.host}/{url.database or ''}?…&port={url.port}), "
                f"not after the host: over ODBC, SQLAlchemy writes '{url.host},{url.port}', which "
                f"{self.label}'s driver does not understand."
            )
        return None

    def server_version(self, conn: sa.Connection) -> str:
        text = str(conn.exec_driver_sql("SELECT VERSION()").scalar())  # e.g. 10.11.19-MariaDB-0+deb12u1
        return f"{'MariaDB' if 'mariadb' in text.lower() else 'MySQL'} {text.split('-')[0]}"

    def busy_attempts(self, conn: sa.Connection) -> int:
        # A Galera cluster: each node's row locks are its own, so claims through different nodes can
        # pick the same row, and the cluster rolls one back at commit (a certification conflict,
        # reported as a deadlock). Such a conflict is the normal cost of writing through several
        # nodes, not an outage: run the claim again rather than tell the operator.
        try:
            wsrep = conn.exec_driver_sql("SELECT @@wsrep_on").scalar()
        except sa.exc.DBAPIError:  # MySQL, or MariaDB without Galera's variables
            return 5
        return 40 if wsrep in (1, "1", "ON") else 5

    def session_setup(self, engine: sa.Engine, db: model.DatabaseConfig) -> None:
        if db.clock != "utc":
            return

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_conn: Any, _record: Any) -> None:
            # TIMESTAMP columns convert through the session time zone; pin it to UTC so NOW() and
            # UTC_TIMESTAMP() agree and stored lock times mean the same for every operator.
            cursor = dbapi_conn.cursor()
            cursor.execute("SET time_zone = '+00:00'")
            cursor.close()

    def fast_pool_isolation(self, url: sa.URL) -> str:
        # Batches (batches.py) run in transactions they end themselves. Not in autocommit with
        # START TRANSACTION: on a Galera cluster (MariaDB 10.11), a COMMIT so begun that failed
        # certification answered OK, and two claimers through two nodes both got the row (in
        # about one run of tests/test_galera.py in two; none in eight without autocommit).
        return "READ COMMITTED" if _sends_batches(url.get_driver_name()) else "AUTOCOMMIT"

    def fast_pool_setup(self, engine: sa.Engine) -> None:
        if not _sends_batches(engine.dialect.driver):
            return

        @event.listens_for(engine, "do_connect")
        def _batches(_dialect: Any, _record: Any, _cargs: Any, cparams: dict[str, Any]) -> None:
            # These connections run the claim and Complete as batches of statements (batches.py).
            # Every value in them is escaped by the driver; only this pool accepts batches.
            from pymysql.constants import CLIENT  # type: ignore[import-untyped]

            cparams["client_flag"] = cparams.get("client_flag", 0) | CLIENT.MULTI_STATEMENTS

    def held_connections(self, engine: sa.Engine) -> Any:
        if not _sends_batches(engine.dialect.driver):
            return super().held_connections(engine)
        from workbench.db import batches

        return batches.BatchConnections(engine)

    def index_serves(self, conn: sa.Connection, table: sa.Table, found: Mapping[str, Any], wanted: sa.Index) -> bool:
        # No partial indexes here; an index on column prefixes (mysql_length) orders only the prefix.
        options = found.get("dialect_options") or {}
        return "mysql_length" not in options and indexes.leads_with(found, wanted, directions_known=False)

    def normalise_own_tables(self, conn: sa.Connection, tables: list[sa.Table]) -> None:
        # Servers often default to latin1: a release reason in Greek or with an arrow was refused,
        # and the audit key could not be compared with a utf8mb4 item key through its index.
        preparer = conn.dialect.identifier_preparer
        for table in tables:
            conn.exec_driver_sql(f"ALTER TABLE {preparer.format_table(table)} CONVERT TO CHARACTER SET utf8mb4")

    def token_digest(self, token: sa.ColumnElement[Any]) -> sa.ColumnElement[str]:
        from sqlalchemy.dialects import mysql  # here, not at the top: a command on another database skips it

        return sa.func.sha2(
            sa.func.lower(sa.cast(token, mysql.CHAR(charset="utf8mb4"))),
            sa.literal(256, literal_execute=True),
            type_=sa.String(),
        )

    def audit_key(
        self, conn: sa.Connection, key: sa.ColumnElement[Any], item_key: sa.Column[Any], cache: dict[str, Any]
    ) -> sa.ColumnElement[Any]:
        # MySQL/MariaDB compare text in one character set and collation: the key is cast to
        # item_key's, read once from the server (see AuditTrail.key_text).
        if "charset" not in cache:
            cache["charset"] = _column_charset(conn, item_key.table, item_key.name)
        charset, collation = cache["charset"]
        from sqlalchemy.dialects import mysql

        text: sa.ColumnElement[str] = sa.cast(key, mysql.CHAR(charset=charset or "utf8mb4"))
        return sa.collate(text, collation) if collation else text

    def text_match(self, column: sa.ColumnElement[Any], text: str, how: str) -> sa.ColumnElement[bool]:
        # LIKE compares in the column's collation, case-insensitive by default (…_ci); plain, an
        # index on the column serves a prefix.
        return column.like(like_pattern(text, how), escape=LIKE_ESCAPE)

    def lock_row(self, stmt: sa.Select[Any], table: sa.Table) -> sa.Select[Any]:
        return stmt.with_for_update()  # MariaDB has no FOR UPDATE OF; an outer join's missing side locks nothing

    def new_row(self, table: sa.Table, row: Mapping[str, sa.ColumnElement[Any]]) -> NewRow:
        # INSERT IGNORE, not a savepoint: a deadlock rolls back the whole transaction, and rolling
        # back to the savepoint would then fail instead of reporting the deadlock (which is retried).
        # IGNORE also downgrades a too-long value: the lock table's columns fit every value workbench
        # writes there (LockTable.check_key limits the key's length).
        insert = sa.insert(table).prefix_with("IGNORE").values(dict(row))
        # Where the driver reports no row count: is the row there with our values (the bound ones)?
        bound = [table.c[name] == value for name, value in row.items() if isinstance(value, sa.BindParameter)]
        return NewRow(insert, sa.select(sa.literal(1)).where(*bound))

    def insert_new(self, conn: sa.Connection, new: NewRow, params: Mapping[str, Any]) -> bool:
        count = conn.execute(new.insert, params).rowcount
        if count >= 0:
            return count == 1
        # MariaDB's ODBC driver under SQLAlchemy reports -1: is the row there with our values? (Our
        # own insert is visible to us whatever the snapshot; another's differs in its token.)
        assert new.check is not None
        return conn.execute(new.check, params).first() is not None

    def auto_claim_method(self, engine: sa.Engine) -> str:
        return "select-skip-locked" if skip_locked_works(engine) else "portable"

    def check_claim_method(self, engine: sa.Engine, name: str) -> str | None:
        if name == "select-skip-locked" and not skip_locked_works(engine):
            return (
                "needs a server whose FOR UPDATE SKIP LOCKED locks rows (MySQL 8.0.1+, MariaDB 10.6+; "
                f"not TiDB: {server_version_text(engine)})"
            )
        return None


def _sends_batches(driver: str) -> bool:
    """Does the fast pool send the claim and Complete as batches (batches.py)? Through PyMySQL; over
    ODBC every statement is its own call."""
    return driver == "pymysql"


def found_rows(url: sa.URL) -> sa.URL:
    """Make MySQL/MariaDB ODBC drivers report matched rows, not changed rows.

    Every compare-and-set here checks "exactly one row"; without FLAG_FOUND_ROWS (OPTION=2) a
    Save that writes the values already stored reports 0 rows and would look like a lost lock.
    SQLAlchemy sets the flag for its native MySQL drivers but not over ODBC.
    """
    return odbc.odbc_option(url, "OPTION", "2")


def server_version_text(engine: sa.Engine) -> str:
    """The server's own version string (SQLAlchemy keeps only the numbers, not "…-TiDB-v7.5.0")."""
    with engine.connect() as conn:
        return str(conn.execute(sa.select(sa.func.version())).scalar() or "")


def skip_locked_works(engine: sa.Engine) -> bool:
    """Does this MySQL-family server really lock the rows SELECT … FOR UPDATE SKIP LOCKED reads?"""
    if engine.dialect.server_version_info is None:
        with engine.connect():  # the version is read on first connect
            pass
    version = engine.dialect.server_version_info or ()
    if getattr(engine.dialect, "is_mariadb", False):
        return tuple(version[:2]) >= (10, 6)
    if tuple(version[:3]) < (8, 0, 1):
        return False
    text = server_version_text(engine).lower()
    return not any(name in text for name in _SKIP_LOCKED_IGNORED)


def _column_charset(conn: sa.Connection, table: sa.Table, column: str) -> tuple[str | None, str | None]:
    """(character set, collation) of a text column on MySQL/MariaDB; (None, None) if not found."""
    columns = sa.table(
        "COLUMNS",
        sa.column("TABLE_SCHEMA"),
        sa.column("TABLE_NAME"),
        sa.column("COLUMN_NAME"),
        sa.column("CHARACTER_SET_NAME"),
        sa.column("COLLATION_NAME"),
        schema="information_schema",
    )
    schema = sa.literal(table.schema) if table.schema else sa.func.database()
    row = conn.execute(
        sa.select(columns.c.CHARACTER_SET_NAME, columns.c.COLLATION_NAME).where(
            schema == columns.c.TABLE_SCHEMA,
            sa.literal(table.name) == columns.c.TABLE_NAME,
            sa.literal(column) == columns.c.COLUMN_NAME,
        )
    ).first()
    return (row[0], row[1]) if row is not None else (None, None)
