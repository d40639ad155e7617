"""How an operator's operations check a user's name and say times and durations in their messages."""

from __future__ import annotations

import datetime as dt
from typing import Any

from workbench.core import errors


def check_user(user: str) -> None:
    if not user or not user.strip() or len(user) > 128:
        raise errors.UsageError("a user name is required (1 to 128 characters); pass --user NAME")


def utc(value: Any, local: bool) -> dt.datetime:
    if isinstance(value, str):
        value = dt.datetime.fromisoformat(value)
    if value.tzinfo is None and not local:
        value = value.replace(tzinfo=dt.UTC)
    assert isinstance(value, dt.datetime)
    return value


def when(value: dt.datetime) -> str:
    text = value.strftime("%Y-%m-%d %H:%M:%S")
    return f"{text} UTC" if value.utcoffset() == dt.timedelta(0) else text


def minutes(seconds: int | None) -> str:
    if seconds is None:
        return "no limit"
    return f"{seconds // 60} min" if seconds >= 60 else f"{seconds} s"
