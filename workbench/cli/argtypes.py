"""Argument types the command line shares: each says what is wrong with a value in plain words.

Every argument is text in the system's encoding, and every number has a range: bytes that are not
text (Linux hands them over as surrogate escapes) and numbers no database takes are refused here, as
usage errors that name the argument, before they reach a query or a terminal.
"""

from __future__ import annotations

import argparse
import codecs
import datetime as dt
import functools
import re
import sys
from collections.abc import Callable
from typing import Any

from workbench.core import durations

# The ranges, chosen so that every supported database takes the values (a LIMIT or a date past
# 64 bits or year 9999 is an error there, and MariaDB's error quotes the whole statement).
MAX_COUNT = 10_000  # `next --count`: items claimed in one go
MAX_LIMIT = 1_000_000  # `board --limit`: locks listed
MAX_BACK_DAYS = 36500  # `stats --since/--until` as a duration back from now: a hundred years
EARLIEST = dt.datetime(1900, 1, 1)  # `stats` periods as dates (SQL Server's datetime starts in 1753)
LATEST = dt.datetime(9999, 1, 1)  # a year short of the end: a time zone may still move it

_ENCODING = codecs.lookup(sys.getfilesystemencoding()).name.upper()  # "UTF-8"
_ESCAPED_BYTE = re.compile(r"\\udc([89a-f][0-9a-f])")  # repr() of an undecodable byte


def shown(text: str) -> str:
    """`text` with the bytes that are not text in the system's encoding written as \\xNN (as `ls -b`
    does): printable on any terminal, and in JSON, where a lone surrogate cannot be written."""
    encoding = sys.getfilesystemencoding()
    return _ESCAPED_BYTE.sub(r"\\x\1", text.encode(encoding, "backslashreplace").decode(encoding))


def is_text(value: str) -> bool:
    """Is `value` text in the system's encoding (a file name or value in Latin-1 on a UTF-8 system is not)?"""
    try:
        value.encode(sys.getfilesystemencoding())
    except UnicodeEncodeError:
        return False
    return True


def text(value: str) -> str:
    """Any argument: text in the system's encoding."""
    if not is_text(value):
        raise argparse.ArgumentTypeError(
            f"'{_short(shown(value))}' is not valid text in this system's encoding ({_ENCODING}): write it in "
            f"{_ENCODING} (e.g. convert it with iconv)"
        ) from None
    return value


def require_text(parser: argparse.ArgumentParser) -> None:
    """Check every argument of `parser` and its sub-commands with `text` before its own type."""
    for action in parser._actions:
        if action.nargs == argparse.PARSER:  # the sub-commands
            for sub in dict.fromkeys(action.choices.values()):  # type: ignore[union-attr]
                require_text(sub)
        elif action.nargs != 0 and not getattr(action.type, "checks_text", False):
            action.type = _textual(action.type)


def _textual(convert: Any) -> Callable[[str], Any]:
    if convert is None:
        return text

    @functools.wraps(convert)  # argparse names the type by its __name__ in its own messages
    def checked(value: str) -> Any:
        return convert(text(value))

    checked.checks_text = True  # type: ignore[attr-defined]
    return checked


text.checks_text = True  # type: ignore[attr-defined]


def _short(value: str) -> str:
    return value if len(value) <= 40 else value[:37] + "..."


def whole(minimum: int, maximum: int) -> Callable[[str], int]:
    """A whole number from `minimum` to `maximum`."""

    def whole_number(value: str) -> int:
        digits = value.strip()
        if len(digits) > 30 and digits.lstrip("+-").isdigit():
            number = None  # past any range (and int() reads 4300 digits at most)
        else:
            try:
                number = int(digits)
            except ValueError:
                raise argparse.ArgumentTypeError(f"{_short(value)!r} is not a whole number") from None
        if number is None or not minimum <= number <= maximum:
            raise argparse.ArgumentTypeError(f"must be between {minimum} and {maximum}, got {_short(digits)}")
        return number

    return whole_number


count = whole(1, MAX_COUNT)
limit = whole(1, MAX_LIMIT)
port = whole(1, 65535)


def moment(value: str) -> dt.datetime | dt.timedelta:
    """A time to come: "2026-11-26 10:00" (this computer's zone unless one is given, e.g. "…+01:00" or
    "…Z"), or a duration from now on the database's clock ("2h", "1d", "90m"); at most the days ahead
    a deferral may be (durations.MAX_DEFER_DAYS; db/deferrals.py checks it again on the database's clock)."""
    written = value.strip()
    too_far = argparse.ArgumentTypeError(
        f'must be at most {durations.MAX_DEFER_DAYS} days ahead ("{durations.MAX_DEFER_DAYS}d"), got {_short(written)}'
    )
    try:
        seconds = durations.parse_duration(written.removeprefix("+"))
    except ValueError:
        seconds = None
    if seconds is not None:
        if seconds > durations.MAX_DEFER_DAYS * 86400:
            raise too_far
        return dt.timedelta(seconds=seconds)
    try:
        at = dt.datetime.fromisoformat(written.replace("Z", "+00:00"))
        at = at if at.tzinfo is not None else at.astimezone()  # the computer's own zone
        ahead = at - dt.datetime.now(dt.UTC)
    except (ValueError, OverflowError):
        raise argparse.ArgumentTypeError(
            f'{_short(value)!r} is neither a date and time ("2026-11-26 10:00") nor a duration from now ("2h", "1d")'
        ) from None
    if ahead > dt.timedelta(days=durations.MAX_DEFER_DAYS + 1):  # a day's margin: the database's clock decides
        raise too_far
    return at


def since(value: str) -> dt.datetime | dt.timedelta:
    """A time past: an ISO date or time (2026-11-21, 2026-11-21T08:00; without a zone on the queue's
    clock) from EARLIEST to LATEST, or a duration back from now (8h, 1d, 90m) of at most MAX_BACK_DAYS."""
    written = value.strip()
    try:
        seconds = durations.parse_duration(written)
    except ValueError:
        seconds = None
    if seconds is not None:
        if seconds > MAX_BACK_DAYS * 86400:
            raise argparse.ArgumentTypeError(
                f"a duration back from now must be at most {MAX_BACK_DAYS} days "
                f'("{MAX_BACK_DAYS}d"), got {_short(written)}'
            )
        return dt.timedelta(seconds=seconds)
    try:
        at = dt.datetime.fromisoformat(written)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{_short(value)!r}: write an ISO date or time (2026-11-21, "
            "2026-11-21T08:00) or a duration back from now (8h, 1d, 90m)"
        ) from None
    if not EARLIEST <= at.replace(tzinfo=None) <= LATEST:
        raise argparse.ArgumentTypeError(f"must be between {EARLIEST.date()} and {LATEST.date()}, got {written}")
    return at
