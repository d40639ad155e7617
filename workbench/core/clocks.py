"""A reading of the database clock: audit times (naive UTC) turned into a queue's clock and back."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable
from typing import Any

_UTC = dt.UTC


@dataclasses.dataclass(frozen=True)
class Clock:
    """One reading of the database clock, to turn audit times (naive UTC) into the queue's clock and back
    (read by db/figures/common.py's read_clock).

    Attributes:
        now: the queue's current time as workbench hands times out: aware UTC, naive server-local
            time (`database.clock = "local"`), or aware in the session's zone (time-zone columns).
        utc: the same instant as naive UTC, as the audit trail keeps times.
        offset: the queue's clock minus UTC, in whole minutes (zero on the UTC clock).
        local: whether times are naive server-local times.
    """

    now: dt.datetime
    utc: dt.datetime
    offset: dt.timedelta
    local: bool

    def from_utc(self, value: Any) -> dt.datetime:
        """An audit time (naive UTC) on the queue's clock."""
        shifted = as_datetime(value) + self.offset
        if self.local:
            return shifted
        return shifted.replace(tzinfo=_UTC if not self.offset else dt.timezone(self.offset))

    def converter(self) -> Callable[[Any], dt.datetime]:
        """`from_utc` for thousands of values (already datetimes)."""
        if not self.offset and not self.local:
            return in_zone(_UTC)
        return self.from_utc

    def to_utc(self, value: dt.datetime) -> dt.datetime:
        """A caller's time as naive UTC, to compare with audit times. A naive time is read on the
        queue's clock: UTC, or the server's local time with `database.clock = "local"`."""
        if value.tzinfo is not None:
            return value.astimezone(_UTC).replace(tzinfo=None)
        return value - self.offset if self.local else value

    @property
    def today_start(self) -> dt.datetime:
        """Midnight at the start of the database clock's current date, on the queue's clock."""
        return self.now.replace(hour=0, minute=0, second=0, microsecond=0)


def in_zone(zone: dt.tzinfo) -> Callable[[dt.datetime], dt.datetime]:
    """`value.replace(tzinfo=zone)` for thousands of naive datetimes: replace() takes over 1 µs a
    call (its keyword arguments), datetime.combine a fifth of that."""
    combine = dt.datetime.combine

    def zoned(value: dt.datetime) -> dt.datetime:
        return combine(value.date(), value.time(), zone)

    return zoned


def as_datetime(value: Any) -> dt.datetime:
    """A time as the database hands it back (SQLite keeps text; a DATE column is its midnight)."""
    if isinstance(value, str):
        return dt.datetime.fromisoformat(value)
    if isinstance(value, dt.datetime):
        return value
    if isinstance(value, dt.date):
        return dt.datetime.combine(value, dt.time())
    raise TypeError(f"not a date-time: {value!r}")
