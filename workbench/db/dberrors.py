"""Translate driver and SQLAlchemy exceptions into workbench errors with messages users can act on."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator

import sqlalchemy as sa

from workbench.core import errors


class Busy(Exception):
    """A lock wait timed out or a deadlock was detected; the transaction was rolled back."""


_BUSY_MARKERS = (
    "database is locked",
    "database table is locked",
    "deadlock",
    "lock wait timeout",
    "could not serialize",
)
_BUSY_SQLSTATES = ("40001", "40p01")  # serialization failure, deadlock (PostgreSQL)
_UNREACHABLE_MARKERS = (
    "could not connect",
    "connection refused",
    "connection timed out",
    "timeout expired",
    "can't connect",
    "could not translate host",
    "name or service not known",
    "no route to host",
    "server closed the connection",
    "connection is closed",
    "terminating connection",
    "lost connection",
    "server has gone away",
    "communication link failure",
    "unable to open database",
    "connection reset",
    "broken pipe",
    "login timeout",
    "adaptive server is unavailable",
    "the connection is lost",
    "ssl syscall error",
    "network is unreachable",
    "the database system is starting up",
    "the database system is shutting down",
    "the database system is in recovery mode",
    "not yet accepting connections",
    # libpq with target_session_attrs: every server answered, none takes writes yet (a failover under
    # way: Patroni starts a crashed leader read-only and promotes it, or a standby is being promoted).
    "session is read-only",
    "server is in hot standby mode",
    "could not make a writable connection",
)
# The server has no connection free (PostgreSQL's max_connections or a login's CONNECTION LIMIT,
# SQLSTATE 53300; MySQL/MariaDB's max_connections and max_user_connections): for now, like an
# unreachable server, retried quietly; more seats than the server takes want a pooler (PgBouncer).
_FULL_MARKERS = (
    "too many clients",
    "too many connections",
    "remaining connection slots are reserved",
    "max_user_connections",
)
_FULL_SQLSTATES = ("53300",)
# The login was refused (PostgreSQL, MySQL/MariaDB, SQL Server, ODBC), or no password was given.
_LOGIN_MARKERS = (
    "password authentication failed",
    "no password supplied",
    "access denied for user",
    "login failed for user",
    "authentication failed",
)
# PostgreSQL: connection exceptions (class 08) and operator intervention: shutdown, crash
# shutdown, cannot connect now (a server starting or stopping; SQLSTATE 57P01-57P03).
_UNREACHABLE_SQLSTATE_PREFIXES = ("08", "57p01", "57p02", "57p03")
# What a session of its own is relied on for, lost to a transaction pooler that lends each transaction
# another server session (PgBouncer's pool_mode = transaction) when the config does not say so: a
# prepared statement made twice or not found (duplicate_prepared_statement, invalid_sql_statement_name),
# and the session's temporary function or schema gone (undefined_function, invalid_schema_name).
_POOLED_SQLSTATES = ("42p05", "26000")
_POOLED_TEMP_SQLSTATES = ("42883", "3f000")
# What such a config is told (as well where a new connection shows the pooler: backends/pg_sessions.py).
UNDECLARED_POOLER = (
    "the connection seems to go through a transaction pooler (PgBouncer's pool_mode = transaction), which "
    'lends each transaction another server session: set pooler = "transaction" under [database]'
)


def _first_line(exc: BaseException) -> str:
    original = getattr(exc, "orig", None) or exc
    text = str(original).strip().splitlines()
    return text[0] if text else type(original).__name__


# A missing privilege: PostgreSQL's insufficient_privilege, MySQL/MariaDB's "command denied" (1142)
# and "access denied … to database" (1044), SQL Server's 262 and 1088.
_DENIED_CODES = {"42501"}
_DENIED_ERRNOS = {1142, 1044, 262, 1088}
# PostgreSQL's words, and SQL Server's (229: "The UPDATE permission was denied on the object …").
_DENIED_MARKERS = ("permission denied", "permission was denied")


# MySQL/MariaDB: "Illegal mix of collations" for two or three operands (1267, 1270, 1271).
_CHARSET_ERRNOS = {1267, 1270, 1271}


def _errno(exc: sa.exc.DBAPIError) -> int | None:
    """The MySQL/MariaDB (or SQL Server) error number; through ODBC, the one the message ends with."""
    orig = exc.orig
    if orig is not None and orig.args and isinstance(orig.args[0], int):
        return orig.args[0]
    found = re.search(r"\((\d{3,5})\) \(SQL", str(orig))  # pyodbc: "…[MariaDB]Illegal mix … (1267) (SQLExecDirectW)"
    return int(found.group(1)) if found else None


def is_denied(exc: sa.exc.DBAPIError) -> bool:
    """Did the database refuse a statement for lack of a privilege?"""
    orig = exc.orig
    errno = orig.args[0] if orig is not None and orig.args and isinstance(orig.args[0], int) else None
    return (
        str(getattr(orig, "sqlstate", "") or "") in _DENIED_CODES
        or errno in _DENIED_ERRNOS
        or any(marker in str(orig).lower() for marker in _DENIED_MARKERS)
    )


def first_line(exc: BaseException) -> str:
    """The first line of the driver's message, for a message that adds what to do."""
    return _first_line(exc)


@contextlib.contextmanager
def translated() -> Iterator[None]:
    """Re-raise database exceptions as Busy, DatabaseUnavailable or InvalidValue."""
    try:
        yield
    except sa.exc.DBAPIError as exc:
        message = _first_line(exc)
        lower = str(exc.orig if exc.orig is not None else exc).lower()
        code = str(getattr(exc.orig, "sqlstate", "") or "").lower()
        if code in _BUSY_SQLSTATES or any(marker in lower for marker in _BUSY_MARKERS):
            raise Busy(message) from exc
        if code in _FULL_SQLSTATES or any(marker in lower for marker in _FULL_MARKERS):
            raise errors.DatabaseUnavailable(
                f"cannot reach the database: the server has no connection free for this login now ({message})"
            ) from exc
        # MySQL's "Access denied for user … to database" (1044) is a missing grant, not a bad login.
        if (any(marker in lower for marker in _LOGIN_MARKERS) and "to database" not in lower) or code in (
            "28p01",
            "28000",
        ):
            raise errors.LoginRefused(f"the database refused the login: {message}") from exc
        if (
            exc.connection_invalidated
            or isinstance(exc, (sa.exc.InterfaceError,))
            or (code and code.startswith(_UNREACHABLE_SQLSTATE_PREFIXES))
            or any(marker in lower for marker in _UNREACHABLE_MARKERS)
        ):
            raise errors.DatabaseUnavailable(f"cannot reach the database: {message}") from exc
        if code == "42501" and message.startswith("workbench: "):
            # The protocol trigger's own words (db/rules/pg_row_check.py): they already say what is not allowed.
            raise errors.NotPermitted(
                f"the database did not permit this: {message.removeprefix('workbench: ')}"
            ) from exc
        if code == "42501" or "row-level security" in lower or "permission was denied" in lower:
            # PostgreSQL's insufficient_privilege: a missing grant, or a row-level security policy
            # (`workbench grants`) refused the new row, e.g. a lock under someone else's name. SQL
            # Server's 229: under its script operators write only through the queue's procedures.
            hint = (
                "; with `workbench grants` each person logs in with their own database login, named like "
                "their workbench user, and only members of workbench_supervisor may change other users' "
                "locks"
                if "row-level security" in lower
                else "; with `workbench grants` on SQL Server operators and supervisors change the queue only through "
                "its procedures: `sweep` needs the table owner's login"
                if "permission was denied" in lower
                else "; ask the database administrator for the grant"
            )
            raise errors.NotPermitted(f"the database did not permit this: {message}{hint}") from exc
        if isinstance(exc, (sa.exc.DataError, sa.exc.IntegrityError)):
            raise errors.InvalidValue(f"the database rejected the value: {message}") from exc
        if code in _POOLED_SQLSTATES or (code in _POOLED_TEMP_SQLSTATES and "pg_temp" in lower):
            raise errors.ConfigError(f"{UNDECLARED_POOLER} ({message})", key="database.pooler") from exc
        if _errno(exc) in _CHARSET_ERRNOS:
            # A value compared with a column whose character set cannot hold it (a latin1 table on
            # MySQL/MariaDB, and a token, user name or --where value with other characters).
            raise errors.InvalidValue(
                f"a value holds characters the table's character set cannot compare: "
                f"{message}; use only characters the column can hold (or convert the "
                "table to utf8mb4)"
            ) from exc
        raise
    except sa.exc.TimeoutError as exc:  # pool checkout timeout
        raise errors.DatabaseUnavailable(f"no database connection became free: {exc}") from exc
