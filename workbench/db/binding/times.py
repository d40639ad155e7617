"""Lock times as read back: aware datetimes on the lock's clock, fast for a board of many locks."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

_UTC = dt.UTC
# What a lock time or expiry that cannot be read is listed as: no expiry at all (the claim treats
# the lock as expired), or text that is not a date-time (it never expires for the claim).
UNREADABLE_PAST = dt.datetime(1, 1, 2, tzinfo=_UTC)
UNREADABLE_FUTURE = dt.datetime(9999, 12, 24, tzinfo=_UTC)


def aware(value: dt.datetime | str | None, *, local_clock: bool) -> dt.datetime:
    """A lock time as read (a datetime, SQLite's text, NULL) as an aware datetime; naive on a local clock."""
    if value is None:  # no expiry: the claim treats the lock as expired
        return UNREADABLE_PAST
    if value.__class__ is str:  # SQLite keeps times as text
        try:
            value = dt.datetime.fromisoformat(str(value))
        except ValueError:  # written by another program; it sorts after every date as text
            return UNREADABLE_FUTURE
    assert isinstance(value, dt.datetime)
    if value.tzinfo is None and not local_clock:
        return value.replace(tzinfo=_UTC)
    return value


def reader(plain: Callable[[Any], dt.datetime], *, in_utc: bool) -> Callable[[Any], dt.datetime]:
    """A fast `plain` (aware() on the queue's clock) for many lock times that the driver already parsed
    into datetimes; `in_utc`: naive times on the UTC clock (else there is nothing to add)."""
    if not in_utc:
        return plain  # nothing to add (and SQLite's text is parsed)
    # datetime.combine is about five times faster than replace(tzinfo=…), whose keyword
    # arguments cost over 1 µs a call: it counts on a board of 10,000 locks.
    combine, parse = dt.datetime.combine, dt.datetime.fromisoformat

    def read(value: Any) -> dt.datetime:
        if value.__class__ is not dt.datetime:
            if value.__class__ is str:  # SQLite's text: parsed with its zone, five times faster than replace()
                try:
                    parsed = parse(str(value) + "+00:00")
                except ValueError:  # an offset of its own, another program's text
                    parsed = None
                if parsed is not None and parsed.tzinfo is not None:  # a date alone ignores the zone
                    return parsed
            return plain(value)  # NULL or unusual text: see aware()
        return combine(value.date(), value.time(), _UTC)

    return read
