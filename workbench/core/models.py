"""Frozen records the engine hands out: locks, claims, completions and audit events."""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
from collections.abc import Callable, Mapping
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
    DEFER = "defer"
    REOPEN = "reopen"
    UNDO = "undo"  # a Complete taken back by the one who made it
    ESCALATE = "escalate"  # an operator handed the item he held to a supervisor, with a reason
    MOVE = "move"  # a supervisor changed a waiting item's values (another category, tier, queue)


def shown(value: Any) -> Any:
    """A lock time as workbench prints it (text, --json, CSV): whole seconds.

    A table without a token column fences on the lock time at the full precision it stores
    (microseconds), and its token is built from that time; printing fewer digits keeps the token
    from being rebuilt from what `locks`, `show`, `board` or `history` show anyone.
    """
    if isinstance(value, str):  # SQLite may keep a lock time as text
        try:
            value = dt.datetime.fromisoformat(value)
        except ValueError:
            return value
        return value.replace(microsecond=0).isoformat(sep=" ")
    if isinstance(value, (dt.datetime, dt.time)):
        return value.replace(microsecond=0)
    return value


def seconds(value: dt.timedelta) -> int:
    """A duration as workbench prints it: whole seconds (finer would give away the lock time)."""
    return round(value.total_seconds())


class _LockTimes:
    """Age, time left and expiry of a lock, on the database clock reading taken with it."""

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


@dataclasses.dataclass(frozen=True)
class Lock(_LockTimes):
    """One live (or just-expired) lock, with the database clock reading taken with it."""

    queue: str
    key: Any
    owner: str
    token: str
    locked_at: dt.datetime
    expires_at: dt.datetime
    db_now: dt.datetime

    def to_dict(self) -> dict[str, Any]:
        return {
            "queue": self.queue,
            "key": self.key,
            "owner": self.owner,
            "token": self.token,
            "locked_at": shown(self.locked_at),
            "expires_at": shown(self.expires_at),
            "age_seconds": seconds(self.age),
            "remaining_seconds": seconds(self.remaining),
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
    # Chosen for review (four eyes): the reviewing queue it went to, where it waits before its outcome counts.
    review: str | None = None
    # Asked for with the Complete (then_next): the item claimed next in the same step, None when none was.
    next: Claim | None = None

    def to_dict(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "next"}
        if self.next is not None:
            data["next"] = self.next.to_dict()
        return data


@dataclasses.dataclass(frozen=True)
class Event:
    """One audit row: who did what to which item, when, under which lock (`token`: the digest the
    trail keeps of the lock's token, see db/audit.token_digest)."""

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
        data["at"] = shown(self.at)  # a claim's time is its lock time
        return data


@dataclasses.dataclass(frozen=True)
class Saved:
    """A Save's lock as it is now, and the audit row it wrote as a read of the trail would give it (its `id` 0:
    not read back), so a window shows the Save in the item's history without reading it again; `event` None
    where the way the Save ran does not say (a database function wrote the row) or nothing was written."""

    lock: Lock
    event: Event | None


@dataclasses.dataclass(frozen=True)
class Notice:
    """The database's word that an audit row was written (PostgreSQL's NOTIFY, db/backends/postgresql.py):
    its id and whom it concerns, never the row. A hint: a reader woken by it still reads the change feed
    under its own login, and a notice anyone could have sent costs at most that look."""

    id: int
    queue: str
    owner: str | None
    actor: str


@dataclasses.dataclass(frozen=True)
class Deferral:
    """An item an operator put off until a time: not served before it, then first (to them, for a while)."""

    queue: str
    key: str
    actor: str
    until: dt.datetime  # UTC, on the database clock
    at: dt.datetime
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["until"], data["at"] = shown(self.until), shown(self.at)
        return data


@dataclasses.dataclass(frozen=True)
class Note:
    """A note on an item: free text by one person, never changed once written."""

    id: int
    queue: str
    key: str
    author: str
    at: dt.datetime
    text: str
    kind: str | None = None  # None: a note on its own; "release" or "complete": written with that action

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["at"] = shown(self.at)
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
        return {
            "queue": self.queue,
            "key": self.key,
            "state": self.state,
            "lock": self.lock.to_dict() if self.lock else None,
            "item": dict(self.item),
        }


# -- the supervisor console's figures (workbench.db.figures) --------------------------------------


@dataclasses.dataclass(frozen=True)
class BoardRow(_LockTimes):
    """One lock on the supervisor's lock board (live, or expired and not yet taken), never its token.

    Times are on the database clock, as in Lock: aware UTC, or naive server-local time with
    `database.clock = "local"`.
    """

    queue: str
    key: Any
    owner: str
    locked_at: dt.datetime
    expires_at: dt.datetime
    db_now: dt.datetime
    last_activity: dt.datetime  # the latest claim, save, extend or reassign under this lock (locked_at if none)
    extensions: int  # extend events under this lock
    summary: dict[str, Any]  # the queue's list columns of the item (the key is in `key`)
    due: Any = None  # the item's due time (the queue's `due` column: a date or date-time), None without one
    # Held by another program: workbench's audit trail has no claim of this lock (a name workbench
    # does not know, or the same name written by the old program); a supervisor may release it.
    foreign: bool = False

    @classmethod
    def maker(
        cls,
    ) -> Callable[
        [str, Any, str, dt.datetime, dt.datetime, dt.datetime, dt.datetime, int, dict[str, Any], Any, bool], BoardRow
    ]:
        """`BoardRow(...)` with the fields in order, for a board of thousands of locks.

        A frozen dataclass's __init__ sets each field through object.__setattr__: some 4 µs a row,
        40 ms of a 10,000-lock refresh. This fills the new instance's dict in one call (1.6 µs); the
        rows are equal to those of the constructor (every field given, no __post_init__ to skip).
        """
        new = object.__new__

        def make(
            queue: str,
            key: Any,
            owner: str,
            locked_at: dt.datetime,
            expires_at: dt.datetime,
            db_now: dt.datetime,
            last_activity: dt.datetime,
            extensions: int,
            summary: dict[str, Any],
            due: Any,
            foreign: bool = False,
        ) -> BoardRow:
            row = new(cls)
            row.__dict__.update(
                queue=queue,
                key=key,
                owner=owner,
                locked_at=locked_at,
                expires_at=expires_at,
                db_now=db_now,
                last_activity=last_activity,
                extensions=extensions,
                summary=summary,
                due=due,
                foreign=foreign,
            )
            return row

        return make

    @property
    def idle(self) -> dt.timedelta:
        return self.db_now - self.last_activity

    def to_dict(self) -> dict[str, Any]:
        return {
            "queue": self.queue,
            "key": self.key,
            "owner": self.owner,
            "locked_at": shown(self.locked_at),
            "expires_at": shown(self.expires_at),
            "last_activity": shown(self.last_activity),
            "age_seconds": seconds(self.age),
            "remaining_seconds": seconds(self.remaining),
            "idle_seconds": seconds(self.idle),
            "extensions": self.extensions,
            "expired": self.expired,
            "summary": dict(self.summary),
            "due": self.due_shown,
            "another_program": self.foreign,
        }

    @property
    def due_shown(self) -> Any:
        """The due time as printed (text, --json, CSV): a time like the lock times, a date as ISO."""
        if isinstance(self.due, dt.datetime):
            return shown(self.due)
        return self.due.isoformat() if isinstance(self.due, dt.date) else None


@dataclasses.dataclass(frozen=True)
class QueueHealth:
    """How a queue stands now, and what happened to it today (since midnight on the database clock)."""

    queue: str
    waiting: int  # work to do that nobody holds: free rows plus rows whose lock expired
    locked: int  # live locks
    expired_locks: int  # locks past their expiry that nobody has taken over or swept yet
    completed_today: int
    oldest_waiting_age_seconds: float | None  # None unless the queue names its `created` column
    releases_today: int
    expiries_today: int  # expiries recorded (by `sweep` or by a claim taking the item over)
    force_releases_today: int
    release_reasons_today: list[tuple[str, int]]  # (reason, count), most frequent first
    db_now: dt.datetime
    overdue: int | None = None  # open items (waiting or held) past their due time; None unless the queue names `due`

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["release_reasons_today"] = [{"reason": r, "count": n} for r, n in self.release_reasons_today]
        data["db_now"] = shown(self.db_now)
        return data


@dataclasses.dataclass(frozen=True)
class OperatorStats:
    """One operator's work in a period, from the audit trail."""

    operator: str
    completed: int
    median_handle_seconds: float | None  # claim (or reassignment) to completion, per completed lock
    p90_handle_seconds: float | None  # nearest-rank 90th percentile
    releases: int
    expiries: int
    force_released: int  # force releases this operator suffered
    accepted: int | None = None  # of their work reviewed in the period: accepted (None: the queue is not reviewed)
    sent_back: int | None = None  # … and sent back

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class HourCount:
    """Completions and claims in the hour starting at `hour` (on the database clock), for charts."""

    hour: dt.datetime
    completed: int
    claimed: int

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class Choice:
    """One row of a lookup's related table, as a picker offers it: the key stored, the text shown."""

    key: Any
    display: str
    detail: str | None = None  # the second column, telling rows with one display apart

    @property
    def text(self) -> str:
        """How lists and messages write it: "Acme (Berlin)"."""
        return f"{self.display} ({self.detail})" if self.detail else self.display

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
