"""Throughput: completions and claims per hour of the queue's clock, counted by the database."""

from __future__ import annotations

import collections
import datetime as dt
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.expression import FunctionElement

from workbench.core import models
from workbench.db import audit as audit_mod
from workbench.db import clock, mapping
from workbench.db.figures import common


class _hour_of(FunctionElement[Any]):
    """The start of the hour of a date-time (text on SQLite and MySQL/MariaDB, parsed by the caller)."""

    inherit_cache = True
    type = sa.String()


@compiles(_hour_of)
def _hour_default(element: _hour_of, compiler: Any, **kw: Any) -> str:
    raise sa.exc.CompileError("no hour truncation for this database")


@compiles(_hour_of, "postgresql")
def _hour_pg(element: _hour_of, compiler: Any, **kw: Any) -> str:
    return f"to_char(date_trunc('hour', {compiler.process(element.clauses, **kw)}), 'YYYY-MM-DD HH24:00:00')"


@compiles(_hour_of, "sqlite")
def _hour_sqlite(element: _hour_of, compiler: Any, **kw: Any) -> str:
    return f"strftime('%Y-%m-%d %H:00:00', {compiler.process(element.clauses, **kw)})"


@compiles(_hour_of, "mysql")
@compiles(_hour_of, "mariadb")
def _hour_mysql(element: _hour_of, compiler: Any, **kw: Any) -> str:
    pattern = "%Y-%m-%d %H:00:00"
    if compiler.dialect.paramstyle in ("format", "pyformat"):  # PyMySQL: a literal % is written %%
        pattern = pattern.replace("%", "%%")
    return f"DATE_FORMAT({compiler.process(element.clauses, **kw)}, '{pattern}')"


@compiles(_hour_of, "mssql")
def _hour_mssql(element: _hour_of, compiler: Any, **kw: Any) -> str:
    return f"CONVERT(VARCHAR(13), {compiler.process(element.clauses, **kw)}, 120) + ':00:00'"


def throughput(
    conn: sa.Connection,
    q: mapping.BoundQueue,
    trail: audit_mod.AuditTrail,
    since: dt.datetime,
    until: dt.datetime | None = None,
) -> list[models.HourCount]:
    """Completions and claims per hour of the queue's clock, every hour of [since, until) included.

    The database counts per hour (one range of the audit time index, a row per hour and kind
    back), so a week costs little more than a day. Hours are those of the queue's clock: the
    audit times (UTC) are shifted by the clock's offset from UTC as it is now (a change to or from
    summer time inside the period shifts the hours before it by one). Claims are the claims
    operators made; a reassignment's claim moves an existing lock and is not counted.
    """
    reading, start, end = common.period(conn, q, since, until)
    a = trail.table
    where = [
        a.c.queue == q.name,
        *common.in_period(a, start, end),
        sa.or_(a.c.event == common.COMPLETE, sa.and_(a.c.event == common.CLAIM, a.c.actor == a.c.owner)),
    ]
    offset = int(reading.offset.total_seconds())
    # A constant in the statement text, not a parameter: the same expression is in GROUP BY.
    at = clock.add_seconds(a.c.at, sa.literal(offset, literal_execute=True)) if offset else a.c.at
    counts: dict[dt.datetime, list[int]] = collections.defaultdict(lambda: [0, 0])
    shift = common.queue_time(reading)
    if q.backend.hours_in_sql:
        hour = _hour_of(at)
        for text, event, n in conn.execute(
            sa.select(hour, a.c.event, sa.func.count()).where(*where).group_by(hour, a.c.event)
        ):
            counts[shift(dt.datetime.fromisoformat(text))][0 if event == common.COMPLETE else 1] += n
    else:  # count in Python: one row per event
        for event, when in conn.execute(sa.select(a.c.event, a.c.at).where(*where)):
            counts[common.hour(reading.from_utc(when))][0 if event == common.COMPLETE else 1] += 1
    first = common.hour(reading.from_utc(start))
    last = common.hour(reading.from_utc((end if end is not None else reading.utc) - dt.timedelta(microseconds=1)))
    last = max([last, *counts])  # an event written after the clock was read
    hours = []
    hour_start = first
    while hour_start <= last:
        done, claimed = counts.get(hour_start, (0, 0))
        hours.append(models.HourCount(hour=hour_start, completed=done, claimed=claimed))
        hour_start += dt.timedelta(hours=1)
    return hours
