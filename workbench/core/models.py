"""Frozen records the engine hands out: locks, claims, completions and audit events."""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
from collections.abc import Mapping
from typing import Any


class EventKind(str, enum.Enum):
    """What an audit row records."""

    CLAIM = "claim"
    SAVE = "save"
    EXTEND = "extend"
    RELEASE = "release"
    EXPIRE = "expire"
    FORCE_RELEASE = "force_release"
    REASSIGN = "reassign"
    COMPLETE = "complete"


@dataclasses.dataclass(frozen=True)
class Lock:
    """One live (or just-expired) lock, with the database clock reading taken with it."""

    queue: str
    key: Any
    owner: str
    token: str
    locked_at: dt.datetime
    expires_at: dt.datetime
    db_now: dt.datetime

    @property
    def age(self) -> dt.timedelta:
        return self.db_now - self.locked_at

    @property
    def remaining(self) -> dt.timedelta:
        return self.expires_at - self.db_now

    @property
    def expired(self) -> bool:
        return self.expires_at <= self.db_now

    def to_dict(self) -> dict[str, Any]:
        return {
            "queue": self.queue, "key": self.key, "owner": self.owner, "token": self.token,
            "locked_at": self.locked_at, "expires_at": self.expires_at,
            "age_seconds": round(self.age.total_seconds(), 3),
            "remaining_seconds": round(self.remaining.total_seconds(), 3),
            "expired": self.expired,
        }


@dataclasses.dataclass(frozen=True)
class Claim:
    """A lock just taken (or resumed) and the row as read after the lock was written."""

    lock: Lock
    item: Mapping[str, Any]
    resumed: bool = False  # True when the caller already held this lock

    def to_dict(self) -> dict[str, Any]:
        data = self.lock.to_dict()
        data["item"] = dict(self.item)
        data["resumed"] = self.resumed
        return data


@dataclasses.dataclass(frozen=True)
class Completion:
    """A Complete the database accepted."""

    queue: str
    key: Any
    owner: str
    token: str
    outcome: str
    at: dt.datetime
    replayed: bool = False  # True when this token had already completed (a retried call)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class Event:
    """One audit row: who did what to which item, when, under which token."""

    id: int
    queue: str
    key: str
    kind: EventKind
    actor: str
    owner: str | None
    token: str | None
    at: dt.datetime
    reason: str | None = None
    outcome: str | None = None
    detail: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["kind"] = self.kind.value
        return data


@dataclasses.dataclass(frozen=True)
class ItemView:
    """A row as it is now, with its lock if it has one."""

    queue: str
    key: Any
    item: Mapping[str, Any]
    lock: Lock | None
    state: str  # "waiting", "locked", "expired", "done" or "other"

    def to_dict(self) -> dict[str, Any]:
        return {"queue": self.queue, "key": self.key, "state": self.state,
                "lock": self.lock.to_dict() if self.lock else None, "item": dict(self.item)}
