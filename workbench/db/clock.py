"""Database-clock expressions (now, now + n seconds) and server-side lock tokens, per dialect.

Lock times are always computed by the database server, never by the desktop, so that operators
with wrong PC clocks still agree on who holds what. Each construct compiles to the dialect's own
function; anything else falls back to CURRENT_TIMESTAMP.
"""

from __future__ import annotations

import datetime as dt
import functools
import zoneinfo
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.expression import ColumnElement, FunctionElement

# SQLite keeps times as text. We write exactly the format SQLAlchemy's DateTime type writes
# ("YYYY-MM-DD HH:MM:SS.ffffff"), so that text comparison orders times correctly and a value
# read back and bound again compares equal (the legacy fence depends on that).
_SQLITE_FORMAT = "%Y-%m-%d %H:%M:%f"


def stored_utc(value: Any) -> dt.datetime:
    """A time workbench's own tables keep (db_now(), UTC, naive; text on SQLite) as aware UTC."""
    at: dt.datetime = dt.datetime.fromisoformat(value) if isinstance(value, str) else value
    return at if at.tzinfo is not None else at.replace(tzinfo=dt.UTC)


class _Now(FunctionElement[Any]):
    """Base of the database-time constructs; subclasses fix the flavour so caching stays exact."""

    inherit_cache = True
    aware = False
    local = False
    type = sa.DateTime()


class UtcNow(_Now):
    inherit_cache = True


class AwareNow(_Now):
    inherit_cache = True
    aware = True
    type = sa.DateTime(timezone=True)


class LocalNow(_Now):
    inherit_cache = True
    local = True


def db_now(*, aware: bool = False, local: bool = False, zone: str | None = None) -> ColumnElement[Any]:
    """The database's current time: UTC (naive or aware), the server's local time, or the wall time
    of the IANA zone `zone` (a queue's `lock.clock`, for another program that writes that zone's
    time): the server's UTC plus the zone's offset, which is asked at every execution (a bound value
    made when the statement runs), so that a process running across a daylight-saving change
    follows it. Zones come from Python's time zone data, which every database can use alike."""
    if aware:
        return AwareNow()
    if zone is not None:
        offset = sa.bindparam(None, callable_=functools.partial(zone_offset, zone), type_=sa.Integer())
        return add_seconds(UtcNow(), offset)
    return LocalNow() if local else UtcNow()


def zone_offset(zone: str, at: dt.datetime | None = None) -> int:
    """The offset of IANA zone `zone` from UTC at `at` (now), in whole seconds."""
    moment = at or dt.datetime.now(dt.UTC)
    offset = moment.astimezone(zoneinfo.ZoneInfo(zone)).utcoffset()
    return int(offset.total_seconds()) if offset is not None else 0


@compiles(_Now)
def _now_default(element: _Now, compiler: Any, **kw: Any) -> str:
    return "CURRENT_TIMESTAMP"


@compiles(_Now, "postgresql")
def _now_pg(element: _Now, compiler: Any, **kw: Any) -> str:
    if element.aware:
        return "now()"
    return "LOCALTIMESTAMP" if element.local else "timezone('UTC', now())"


@compiles(_Now, "mysql")
@compiles(_Now, "mariadb")
def _now_mysql(element: _Now, compiler: Any, **kw: Any) -> str:
    return "NOW(6)" if element.local else "UTC_TIMESTAMP(6)"


@compiles(_Now, "mssql")
def _now_mssql(element: _Now, compiler: Any, **kw: Any) -> str:
    if element.aware:
        return "SYSDATETIMEOFFSET()"
    return "SYSDATETIME()" if element.local else "SYSUTCDATETIME()"


@compiles(_Now, "sqlite")
def _now_sqlite(element: _Now, compiler: Any, **kw: Any) -> str:
    modifier = ", 'localtime'" if element.local else ""
    return f"(strftime('{_SQLITE_FORMAT}', 'now'{modifier}) || '000')"


class add_seconds(FunctionElement[Any]):
    """`when` plus a whole number of seconds (negative to subtract), in database arithmetic."""

    inherit_cache = True

    def __init__(self, when: ColumnElement[Any], seconds: ColumnElement[Any]) -> None:
        self.type = when.type if isinstance(when.type, sa.DateTime) else sa.DateTime()
        super().__init__(when, seconds)


def _args(element: add_seconds, compiler: Any, **kw: Any) -> tuple[str, str]:
    when, seconds = list(element.clauses)
    return compiler.process(when, **kw), compiler.process(seconds, **kw)


@compiles(add_seconds)
def _add_default(element: add_seconds, compiler: Any, **kw: Any) -> str:
    when, seconds = _args(element, compiler, **kw)
    return f"({when} + {seconds} * INTERVAL '1' SECOND)"


@compiles(add_seconds, "postgresql")
def _add_pg(element: add_seconds, compiler: Any, **kw: Any) -> str:
    when, seconds = _args(element, compiler, **kw)
    return f"({when} + make_interval(secs => {seconds}))"


@compiles(add_seconds, "mysql")
@compiles(add_seconds, "mariadb")
def _add_mysql(element: add_seconds, compiler: Any, **kw: Any) -> str:
    when, seconds = _args(element, compiler, **kw)
    return f"DATE_ADD({when}, INTERVAL {seconds} SECOND)"


@compiles(add_seconds, "mssql")
def _add_mssql(element: add_seconds, compiler: Any, **kw: Any) -> str:
    when, seconds = _args(element, compiler, **kw)
    return f"DATEADD(second, {seconds}, {when})"


@compiles(add_seconds, "sqlite")
def _add_sqlite(element: add_seconds, compiler: Any, **kw: Any) -> str:
    when, seconds = _args(element, compiler, **kw)
    return f"(strftime('{_SQLITE_FORMAT}', {when}, ({seconds}) || ' seconds') || '000')"


class new_token(FunctionElement[str]):
    """A fresh random 32-hex-digit lock token made by the server, one per updated row."""

    type = sa.String(32)
    inherit_cache = True


@compiles(new_token)
def _token_default(element: new_token, compiler: Any, **kw: Any) -> str:
    raise sa.exc.CompileError("this database has no server-side token; use the portable claim method")


@compiles(new_token, "postgresql")
def _token_pg(element: new_token, compiler: Any, **kw: Any) -> str:
    return "md5(random()::text || clock_timestamp()::text)"


@compiles(new_token, "mysql")
@compiles(new_token, "mariadb")
def _token_mysql(element: new_token, compiler: Any, **kw: Any) -> str:
    return "MD5(CONCAT(UUID(), RAND()))"


@compiles(new_token, "mssql")
def _token_mssql(element: new_token, compiler: Any, **kw: Any) -> str:
    return "LOWER(REPLACE(CONVERT(VARCHAR(36), NEWID()), '-', ''))"


@compiles(new_token, "sqlite")
def _token_sqlite(element: new_token, compiler: Any, **kw: Any) -> str:
    return "lower(hex(randomblob(16)))"


class new_uuid(FunctionElement[Any]):
    """A fresh random UUID made by the server, for a token column of the database's UUID type."""

    type = sa.Uuid()
    inherit_cache = True


@compiles(new_uuid)
def _uuid_default(element: new_uuid, compiler: Any, **kw: Any) -> str:
    raise sa.exc.CompileError("this database has no server-side UUID; use the portable claim method")


@compiles(new_uuid, "postgresql")
def _uuid_pg(element: new_uuid, compiler: Any, **kw: Any) -> str:
    return "gen_random_uuid()"  # PostgreSQL 13+


@compiles(new_uuid, "mssql")
def _uuid_mssql(element: new_uuid, compiler: Any, **kw: Any) -> str:
    return "NEWID()"


class add_milliseconds(FunctionElement[Any]):
    """`when` plus a (small) whole number of milliseconds; used for SQL Server's legacy fence."""

    inherit_cache = True
    type = sa.DateTime()

    def __init__(self, when: ColumnElement[Any], milliseconds: int) -> None:
        super().__init__(when, sa.literal_column(str(int(milliseconds))))


@compiles(add_milliseconds)
def _add_ms_default(element: add_milliseconds, compiler: Any, **kw: Any) -> str:
    when, ms = [compiler.process(c, **kw) for c in element.clauses]
    return f"({when} + {ms} * INTERVAL '0.001' SECOND)"


@compiles(add_milliseconds, "mssql")
def _add_ms_mssql(element: add_milliseconds, compiler: Any, **kw: Any) -> str:
    when, ms = [compiler.process(c, **kw) for c in element.clauses]
    return f"DATEADD(millisecond, {ms}, {when})"


# The date-times a lock listing shows are kept inside what Python's datetime can hold: another
# program may have written 'infinity' (PostgreSQL) or a year past 9999, and one such row must not
# break every listing of the queue. A week of margin leaves room for adding a lock duration.
READABLE_FIRST, READABLE_LAST = "0001-01-02 00:00:00", "9999-12-24 00:00:00"


class readable(FunctionElement[Any]):
    """`when` clamped into the range Python can read (a no-op where the column cannot leave it)."""

    inherit_cache = True

    def __init__(self, when: ColumnElement[Any]) -> None:
        self.type = when.type
        super().__init__(when)


@compiles(readable)
def _readable_default(element: readable, compiler: Any, **kw: Any) -> str:
    return str(compiler.process(next(iter(element.clauses)), **kw))


@compiles(readable, "postgresql")
def _readable_pg(element: readable, compiler: Any, **kw: Any) -> str:
    when = compiler.process(next(iter(element.clauses)), **kw)
    return f"LEAST(GREATEST({when}, '{READABLE_FIRST}'), '{READABLE_LAST}')"


@compiles(readable, "mysql")
@compiles(readable, "mariadb")
def _readable_mysql(element: readable, compiler: Any, **kw: Any) -> str:
    when = compiler.process(next(iter(element.clauses)), **kw)
    return f"LEAST({when}, '{READABLE_LAST}')"


class ExactTime(sa.types.TypeDecorator[Any]):
    """A date-time parameter that reaches the server with all its microseconds.

    The fence of a table without a token column compares the lock time exactly. MariaDB's ODBC
    driver drops the fraction of a bound datetime (so `lock_time = ?` never matched a DATETIME(6)
    lock), hence MySQL and MariaDB get it as text, which the server converts exactly.
    """

    impl = sa.DateTime
    cache_ok = True

    def load_dialect_impl(self, dialect: Any) -> Any:
        if dialect.name in ("mysql", "mariadb"):
            return dialect.type_descriptor(sa.String(26))
        return dialect.type_descriptor(sa.DateTime())

    def process_bind_param(self, value: Any, dialect: Any) -> Any:
        if dialect.name in ("mysql", "mariadb") and hasattr(value, "strftime"):
            return value.strftime("%Y-%m-%d %H:%M:%S.%f")
        return value
