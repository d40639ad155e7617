"""Explain a refused write: whose lock it is now, and whether ours expired, was taken or was finished."""

from __future__ import annotations

import datetime as dt
from typing import Any

import sqlalchemy as sa

from workbench.core import errors, models, problems
from workbench.db import audit as audit_mod
from workbench.db import mapping


def _when(value: dt.datetime | None) -> str:
    if value is None:
        return "an unknown time"
    text = value.strftime("%Y-%m-%d %H:%M:%S")
    return f"{text} UTC" if value.utcoffset() == dt.timedelta(0) else text


class Diagnosis:
    def __init__(self, q: mapping.BoundQueue, trail: audit_mod.AuditTrail, neighbours: tuple[str, ...] = ()) -> None:
        """`neighbours`: the other queues over the same table (a lock on the row may be one of theirs)."""
        self.q, self.trail, self.neighbours = q, trail, neighbours

    def _current(self, conn: sa.Connection, key: Any) -> tuple[bool, models.Lock | None]:
        q = self.q
        row = (
            conn.execute(sa.select(*q.lock_select_columns(q.now())).select_from(q.source).where(q.key == key))
            .mappings()
            .first()
        )
        if row is None:
            return False, None
        if row["wb_user"] is None or row["wb_time"] is None:
            return True, None
        return True, q.lock_from_row(row)

    def completed_by(self, conn: sa.Connection, key: Any, token: str, user: str) -> models.Event | None:
        """The completion this very lock already made (a retried Complete), if any."""
        event = self.trail.last_for_token(conn, key, token)
        if event and event.kind == models.EventKind.COMPLETE and event.actor == user:
            return event
        return None

    def released_by(self, conn: sa.Connection, key: Any, token: str, user: str) -> bool:
        event = self.trail.last_for_token(conn, key, token)
        return bool(event and event.kind == models.EventKind.RELEASE and event.actor == user)

    def elsewhere(self, conn: sa.Connection, key: Any, doing: str, holder: str | None = None) -> errors.LockLost:
        """The lock on `key` is not this queue's (BoundQueue.held_here): which queue it was taken in,
        and that `doing` ("complete", "force-release", …) goes there."""
        q = self.q
        taken = self.trail.taken_in(conn, key, self.neighbours)
        if taken is not None and taken != q.name:
            return errors.LockLost.of(
                problems.TAKEN_ELSEWHERE,
                q.name,
                key,
                taken,
                doing,
                queue=q.name,
                key=key,
                cause="other_queue",
                holder=holder,
            )
        # Taken here, and since moved out of this queue's work by someone else (another program).
        happened = (
            f"{q.name} {key}: the item is no longer in this queue's work to do (it was changed since "
            f"it was claimed), so nothing was written; its lock lapses when it expires"
        )
        return errors.LockLost(happened, queue=q.name, key=key, cause="other_queue", holder=holder, happened=happened)

    def left_work(self, conn: sa.Connection, key: Any) -> bool:
        """The row is no longer in this queue's work (BoundQueue.in_work): another program or a hand
        moved it out since it was claimed. Where the lock lives in the row the fence says so already;
        where it lives in a lock table the lock is intact and only the row tells."""
        q = self.q
        found = conn.execute(sa.select(q.key).select_from(q.source).where(q.key == key, q.in_work())).first()
        return found is None

    def explain(
        self, conn: sa.Connection, key: Any, token: str, user: str, doing: str = "work on"
    ) -> errors.WorkbenchError:
        """Why a write under `user`'s lock `token` on `key` (`doing` it) was refused."""
        q = self.q
        name = f"{q.name} {key}"
        exists, lock = self._current(conn, key)
        if not exists:
            return q.no_item(key)
        if lock is not None and lock.token == token and lock.owner == user and not lock.expired:
            # The caller's own live lock, and still the write was refused: it was taken in another
            # queue of the table (the fence holds each lock to its queue).
            return self.elsewhere(conn, key, doing, holder=user)
        now_part = self._now_part(lock, user)
        if lock is not None and lock.token == token and lock.owner == user and lock.expired:
            happened = f"lock lost: your lock on {name} expired at {_when(lock.expires_at)}"
            return errors.LockLost(
                f"{happened}; nobody has taken it since, so you can claim it again to continue",
                queue=q.name,
                key=key,
                cause="expired",
                holder=None,
                at=lock.expires_at,
                happened=happened,
            )
        event = self.trail.last_for_token(conn, key, token)
        holder = lock.owner if lock is not None and not lock.expired else None
        common = {"queue": q.name, "key": key, "holder": holder}
        if event is None:
            happened = f"lock not held: you hold no lock on {name} with that token"
            return errors.LockLost(happened + now_part, cause="not_held", happened=happened, **common)
        by, at, reason, to = event.actor, event.at, event.reason, None
        kind = event.kind
        if kind == models.EventKind.COMPLETE:
            message = f"lock lost: {name} was already completed by {by} at {_when(at)}"
            cause = "completed"
        elif kind == models.EventKind.RELEASE:
            message = f"lock lost: {name} was released by {by} at {_when(at)}"
            cause = "released"
        elif kind == models.EventKind.DEFER:
            message = f"lock lost: {name} was deferred by {by} at {_when(at)}" + (f" ({reason})" if reason else "")
            cause = "released"
        elif kind == models.EventKind.ESCALATE:
            message = f"lock lost: {name} was handed to a supervisor by {by} at {_when(at)}" + (
                f" ({reason})" if reason else ""
            )
            cause = "released"
        elif kind == models.EventKind.FORCE_RELEASE:
            message = f"lock lost: supervisor {by} force-released {name} at {_when(at)}" + (
                f" (reason: {reason})" if reason else ""
            )
            cause = "force_released"
        elif kind == models.EventKind.REASSIGN:
            to = (event.detail or {}).get("to")
            message = f"lock lost: supervisor {by} reassigned {name} to {to} at {_when(at)}" + (
                f" (reason: {reason})" if reason else ""
            )
            cause = "reassigned"
        else:  # expired, and taken over by a claim or a sweep
            expired_at = (event.detail or {}).get("expired_at")
            when = dt.datetime.fromisoformat(expired_at) if isinstance(expired_at, str) else at
            message = f"lock lost: your lock on {name} expired (noticed at {_when(at)})"
            cause = "expired"
            at = when
        return errors.LockLost(
            message + now_part, cause=cause, by=by, at=at, reason=reason, happened=message, to=to, **common
        )

    @staticmethod
    def _now_part(lock: models.Lock | None, user: str) -> str:
        if lock is None:
            return "; it is not locked now"
        if lock.expired:
            return f"; {lock.owner}'s lock on it has expired and it is free to claim"
        who = "you (with a newer token)" if lock.owner == user else lock.owner
        return f"; it is now held by {who} since {_when(lock.locked_at)}"
