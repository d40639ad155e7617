"""Argument types the command line shares: each says what is wrong with a value in plain words."""

from __future__ import annotations

import argparse
import datetime as dt

from workbench.core import durations


def positive(text: str) -> int:
    """A whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def moment(text: str) -> dt.datetime | dt.timedelta:
    """A time to come: "2026-11-26 10:00" (this computer's zone unless one is given, e.g. "…+01:00" or
    "…Z"), or a duration from now on the database's clock ("2h", "1d", "90m")."""
    value = text.strip()
    try:
        return dt.timedelta(seconds=durations.parse_duration(value.removeprefix("+")))
    except ValueError:
        pass
    try:
        at = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is neither a date and time (\"2026-11-26 10:00\") nor a "
                                         "duration from now (\"2h\", \"1d\")") from None
    return at if at.tzinfo is not None else at.astimezone()  # the computer's own zone
