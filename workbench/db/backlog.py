"""Open items per hour, rebuilt backwards from now: arrivals (`created`) and completions (the audit trail)."""

from __future__ import annotations

import collections
import datetime as dt
from typing import Any

import sqlalchemy as sa

from workbench.core import clocks
from workbench.db import audit as audit_mod
from workbench.db import mapping
from workbench.db.figures import hourly, queue_health

# At most this many arrivals are read for one chart (a month of a busy queue); beyond it the
# chart starts later, rather than a supervisor's refresh reading a whole table.
MAX_ARRIVALS = 200_000


def open_per_hour(
    conn: sa.Connection, q: mapping.BoundQueue, trail: audit_mod.AuditTrail, since: dt.datetime
) -> list[tuple[dt.datetime, int]] | None:
    """(hour, items open at the end of that hour) for every hour since `since`; None without `created`.

    Open = waiting or in progress. Nothing records the past, so it is rebuilt: open at the end of
    an hour = open now + completed since then − arrived since then. Items that left the queue
    without a workbench Complete (closed by another program) count as open until now: the figure
    is an upper bound where that happens.
    """
    if q.created is None:
        return None
    hours = hourly.throughput(conn, q, trail, since)
    if not hours:
        return []
    health = queue_health.health(conn, q, trail)
    open_now = health.waiting + health.locked
    zone = hours[0].hour.tzinfo
    first = hours[0].hour.replace(tzinfo=None) if zone is None else hours[0].hour
    arrived: collections.Counter[dt.datetime] = collections.Counter()
    created_since = first.replace(tzinfo=None) if zone is not None else first
    rows = conn.execute(sa.select(q.created).where(*q.scope_clause(), q.created >= created_since).limit(MAX_ARRIVALS))
    for (value,) in rows:
        arrived[_on_clock(value, zone).replace(minute=0, second=0, microsecond=0)] += 1
    result = []
    level = open_now
    for h in reversed(hours):  # the end of the last hour is now
        result.append((h.hour, level))
        level = level + h.completed - arrived.get(h.hour, 0)
    return list(reversed(result))


def _on_clock(value: Any, zone: dt.tzinfo | None) -> dt.datetime:
    """An arrival time on the queue's clock (naive values are taken to be on it already)."""
    when = clocks.as_datetime(value)
    if zone is None:
        return when.replace(tzinfo=None) if when.tzinfo is None else when.astimezone().replace(tzinfo=None)
    return when.replace(tzinfo=zone) if when.tzinfo is None else when.astimezone(zone)
