"""Parse and print durations written as "90s", "30m", "1h30m" or a number of seconds; the time between two moments."""

from __future__ import annotations

import datetime as dt
import math
import re

_PART = re.compile(r"(\d+(?:\.\d+)?)\s*(d|h|m|s)")
_UNIT_SECONDS = {"d": 86400, "h": 3600, "m": 60, "s": 1}
# How far ahead an item may be deferred: further out is a typo, or a job for a status column. The command
# line checks it while parsing; db/deferrals.py checks it again on the database's clock.
MAX_DEFER_DAYS = 366


def parse_duration(value: object) -> int:
    """Whole seconds in `value`; raises ValueError with a hint when it is not a duration."""
    if isinstance(value, bool):
        raise ValueError('expected a duration such as "30m", "90s" or "2h", not true/false')
    if isinstance(value, (int, float)):
        seconds = float(value)
    elif isinstance(value, str):
        text = value.strip().lower().replace(" ", "")
        if re.fullmatch(r"\d+(\.\d+)?", text):
            seconds = float(text)
        else:
            pos, seconds = 0, 0.0
            for match in _PART.finditer(text):
                if match.start() != pos:
                    break
                seconds += float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
                pos = match.end()
            if pos != len(text) or not text:
                raise ValueError(f'{value!r} is not a duration; write e.g. "30m", "90s", "1h30m"')
    else:
        raise ValueError(f'expected a duration such as "30m", got {type(value).__name__}')
    if not math.isfinite(seconds):
        raise ValueError(f'{value!r} is not a duration; write e.g. "30m", "90s", "1h30m"')
    if seconds < 0:
        raise ValueError("a duration cannot be negative")
    return round(seconds)


def split(seconds: float) -> tuple[str, int, int]:
    """The two largest units of a duration's size: ("d", days, hours), ("h", hours, minutes),
    ("m", minutes, seconds) or ("s", seconds, 0). "561h27m" made people count: 23d09h."""
    total = int(abs(seconds))
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return "d", days, hours
    if hours:
        return "h", hours, minutes
    if minutes:
        return "m", minutes, secs
    return "s", secs, 0


def format_duration(seconds: float) -> str:
    """Short human form: 45s, 12m05s, 2h03m, 23d09h; negative values get a minus sign."""
    unit, big, small = split(seconds)
    sign = "-" if seconds < 0 else ""
    smaller = {"d": "h", "h": "m", "m": "s"}
    return f"{sign}{big}{unit}" + (f"{small:02d}{smaller[unit]}" if unit in smaller else "")


def format_bound(seconds: int) -> str:
    """A bound as people write it: "7 days", "1 day", "90 minutes", "45 s"."""
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size and seconds % size == 0:
            count = seconds // size
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return f"{seconds} s"


def format_setting(seconds: int) -> str:
    """A duration as a config writes it, and parse_duration reads back: "30m", "1h30m", "2d", "45s"."""
    parts = []
    rest = int(seconds)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        count, rest = divmod(rest, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts) or "0s"


def seconds_between(start: dt.datetime, end: object) -> float | None:
    """Seconds from `start` to `end` (a date-time, a date taken as its midnight, or ISO text as SQLite
    keeps it; None: None). A naive value beside an aware one is taken to be on the same clock, UTC."""
    if end is None or end == "":
        return None
    if isinstance(end, str):
        try:
            end = dt.datetime.fromisoformat(end)
        except ValueError:
            return None
    if isinstance(end, dt.date) and not isinstance(end, dt.datetime):
        end = dt.datetime.combine(end, dt.time.min)
    if not isinstance(end, dt.datetime):
        return None
    if end.tzinfo is None and start.tzinfo is not None:
        end = end.replace(tzinfo=dt.UTC)
    elif end.tzinfo is not None and start.tzinfo is None:
        end = end.astimezone(dt.UTC).replace(tzinfo=None)
    return (end - start).total_seconds()
