"""What the console's figures share: the events they count, the database clock's reading, a period, fast rows."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import sqlalchemy as sa

from workbench.core import clocks, models
from workbench.db import clock, mapping

UTC = dt.UTC
CLAIM, SAVE, EXTEND, REASSIGN = (
    models.EventKind.CLAIM.value,
    models.EventKind.SAVE.value,
    models.EventKind.EXTEND.value,
    models.EventKind.REASSIGN.value,
)
COMPLETE, RELEASE, EXPIRE, FORCE = (
    models.EventKind.COMPLETE.value,
    models.EventKind.RELEASE.value,
    models.EventKind.EXPIRE.value,
    models.EventKind.FORCE_RELEASE.value,
)
# Events that show someone working under a lock (the board's "last activity").
ACTIVITY = (CLAIM, SAVE, EXTEND, REASSIGN)
NO_REASON = "(no reason)"

# -- the database clock ---------------------------------------------------------------------------

Clock = clocks.Clock  # a reading of the database clock, read here (read_clock), handed out as core's
as_datetime, in_zone = clocks.as_datetime, clocks.in_zone


def clock_columns(q: mapping.BoundQueue) -> list[sa.ColumnElement[Any]]:
    """The two columns a statement selects so that `clock_from_row` can read the clock from it."""
    return [
        sa.type_coerce(q.now(), sa.DateTime(timezone=q.aware)).label("wb_now"),
        sa.type_coerce(clock.db_now(), sa.DateTime()).label("wb_utc"),
    ]


def clock_from_row(q: mapping.BoundQueue, row: Mapping[Any, Any]) -> Clock:
    """The reading of the database clock `clock_columns` selected, on the queue's clock."""
    raw, utc = as_datetime(row["wb_now"]), as_datetime(row["wb_utc"])
    if raw.tzinfo is not None:
        return Clock(
            now=raw,
            utc=raw.astimezone(UTC).replace(tzinfo=None),
            offset=raw.utcoffset() or dt.timedelta(0),
            local=False,
        )
    if not q.local_clock:
        return Clock(now=raw.replace(tzinfo=UTC), utc=raw, offset=dt.timedelta(0), local=False)
    minutes = round((raw - utc).total_seconds() / 60)
    return Clock(now=raw, utc=utc, offset=dt.timedelta(minutes=minutes), local=True)


def read_clock(conn: sa.Connection, q: mapping.BoundQueue) -> Clock:
    return clock_from_row(q, conn.execute(sa.select(*clock_columns(q))).mappings().one())


# -- a period, times, rows ------------------------------------------------------------------------


def period(
    conn: sa.Connection, q: mapping.BoundQueue, since: dt.datetime, until: dt.datetime | None
) -> tuple[Clock, dt.datetime, dt.datetime | None]:
    """The clock and the period as naive UTC bounds for the audit trail."""
    reading = read_clock(conn, q)
    return reading, reading.to_utc(since), reading.to_utc(until) if until is not None else None


def in_period(a: sa.Table, since: dt.datetime, until: dt.datetime | None) -> list[sa.ColumnElement[bool]]:
    where = [a.c.at >= since]
    if until is not None:
        where.append(a.c.at < until)
    return where


def queue_time(reading: Clock) -> Callable[[dt.datetime], dt.datetime]:
    """A naive time already shifted to the queue's clock, as the queue hands times out."""
    if reading.local:
        return lambda value: value
    return in_zone(UTC if not reading.offset else dt.timezone(reading.offset))


def hour(value: dt.datetime) -> dt.datetime:
    return value.replace(minute=0, second=0, microsecond=0)


class _IsoDateTime(sa.types.TypeDecorator[dt.datetime]):
    """A date-time selected as text and parsed with datetime.fromisoformat."""

    impl = sa.String
    cache_ok = True

    def process_result_value(self, value: Any, dialect: Any) -> Any:  # a datetime, or unreadable text
        try:
            return None if value is None else dt.datetime.fromisoformat(value)
        except ValueError:  # e.g. a zero date another program wrote: listed as unreadable (mapping._aware)
            return str(value)


def streamed(conn: sa.Connection, stmt: sa.Select[Any]) -> Iterable[Any]:
    """The rows of `stmt`, for a loop that reads them once (thousands of rows).

    Over PyMySQL, which decodes rows in Python, they are streamed (an unbuffered cursor): the
    client decodes and handles each row while the server works on the next ones, on the other
    core, instead of first reading every row and only then handling them; and each raw row is
    freed at once rather than kept to the end, so fewer objects reach the garbage collector's
    older generations. The board of 10,000 locks took 104 instead of 159 ms that way. Other
    drivers hand the loop one buffered row at a time too (over MariaDB's ODBC driver that was
    faster than all rows in one list: 152 against 180 ms for the board).
    """
    if conn.dialect.driver == "pymysql":
        stmt = stmt.execution_options(stream_results=True)
    return conn.execute(stmt)


def fast_time(conn: sa.Connection, column: sa.ColumnElement[Any]) -> sa.ColumnElement[Any]:
    """`column` (a date-time) for a select list that may return thousands of rows.

    PyMySQL parses DATETIME values in Python, about 30 times slower than fromisoformat; thousands of
    them cost more than the query. Over PyMySQL the value is selected as text and parsed here.
    """
    if conn.dialect.driver != "pymysql":
        return column
    return sa.type_coerce(sa.cast(column, sa.String()), _IsoDateTime())
