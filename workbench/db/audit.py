"""Writing and reading the audit trail: one row per claim, save, extend, release, expiry and completion."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping
from typing import Any

import sqlalchemy as sa

from workbench.config import model
from workbench.core import models, workflow
from workbench.db import backends, clock
from workbench.db import deferrals as deferrals_mod
from workbench.db import notes as notes_mod
from workbench.db import reviews as reviews_mod
from workbench.db.digests import (
    token_digest as token_digest,  # audit.token_digest: where the trail's readers look for it
)

# The events that start or end a lock (AuditTrail.took).
_CLAIM_OR_END = ["claim", "complete", "release", "defer", "force_release", "expire", "reassign"]


def json_value(value: Any) -> Any:
    """A value of a queue's row in an audit row's detail: times in ISO 8601, other non-JSON values
    (decimals, UUIDs) as their text."""
    if isinstance(value, (dt.date, dt.datetime, dt.time)):
        return value.isoformat()
    return str(value)


# The events that end or hand over a lock (core/workflow.py: the transitions that clear it or give it
# to someone else), as the trail keeps them.
_ENDS_A_LOCK = sorted(
    kind.value
    for kind in workflow.events_where(
        lambda t: bool({workflow.Write.LOCK_CLEARED, workflow.Write.LOCK_HANDED} & t.writes)
    )
)


class AuditTrail:
    """Builds audit rows for one queue; inserts run inside the caller's transaction.

    Also keeps the release cool-down table (workbench_cooldown), the other record of what
    people did that the claim consults, and the items' notes (written with a release or Complete
    that needs one).
    """

    def __init__(
        self,
        table: sa.Table,
        queue: str,
        cooldown: sa.Table | None = None,
        notes: notes_mod.Notes | None = None,
        deferrals: deferrals_mod.Deferrals | None = None,
        to_review: reviews_mod.Reviews | None = None,
        reviews: reviews_mod.Reviews | None = None,
    ) -> None:
        self.table, self.queue, self.cooldown, self.notes = table, queue, cooldown, notes
        self.deferrals = deferrals
        self.to_review = to_review  # this queue's completions another queue reviews
        self.reviews = reviews  # the completions this queue reviews (its claim leaves each to others than its doer)
        # An item's history: its events in this queue and in the queue paired with it for review.
        partner = to_review.queue if to_review else reviews.source if reviews else None
        self.history_queues = (queue,) if partner is None else (queue, partner)
        # Audit rows (AuditTrail.row) as one INSERT each, stamped with the database clock.
        self.insert = sa.insert(table).values(at=clock.db_now())
        # Audit rows that carry their own time (`at`, UTC): a claim's, stamped with its lock's time.
        self.stamped = sa.insert(table)
        self._key_cache: dict[str, Any] = {}  # what the backend read once for key_text (a collation)

    def key_text(self, conn: sa.Connection, key: sa.ColumnElement[Any]) -> sa.ColumnElement[str]:
        """`key` (the queue table's key column) as text that `item_key = …` compares through the audit
        index (queue, item_key, id), for a join of the two tables.

        MySQL/MariaDB compare text in one character set and collation: an expression in another
        character set than `item_key`'s (an integer key cast in the connection's, a latin1 key) is
        converted, or `item_key` is, which rules the index out; one in the same character set with
        another collation is an error ("Illegal mix of collations"). So the key is cast to
        `item_key`'s character set and collation, read once from the server: migration 4 leaves
        the server's default utf8mb4 collation, which may differ from the default of a later
        server version.
        """
        return backends.of(conn).audit_key(conn, key, self.table.c.item_key, self._key_cache)

    def cool_down(self, conn: sa.Connection, key: Any, actor: str, seconds: int) -> None:
        """Remember that `actor` released `key`, for `seconds`; forget their lapsed entries."""
        if self.cooldown is None or seconds <= 0:
            return
        c = self.cooldown
        conn.execute(sa.delete(c).where(c.c.queue == self.queue, c.c.actor == actor, c.c.until <= clock.db_now()))
        conn.execute(
            sa.insert(c).values(
                queue=self.queue,
                actor=actor,
                item_key=str(key),
                until=clock.add_seconds(clock.db_now(), sa.literal(seconds)),
            )
        )

    def row(
        self,
        kind: models.EventKind,
        key: Any,
        actor: str,
        *,
        owner: str | None = None,
        token: str | None = None,
        reason: str | None = None,
        outcome: str | None = None,
        detail: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        return {
            "queue": self.queue,
            "item_key": str(key),
            "event": kind.value,
            "actor": actor,
            "owner": owner,
            "token": token_digest(token),
            "reason": reason,
            "outcome": outcome,
            "detail": json.dumps(detail, default=json_value, sort_keys=True) if detail else None,
        }

    def write(self, conn: sa.Connection, rows: Iterable[Mapping[Any, Any]]) -> None:
        rows = list(rows)
        if rows:
            conn.execute(self.stamped if "at" in rows[0] else self.insert, rows)

    def history(self, conn: sa.Connection, key: Any, limit: int | None = None) -> list[models.Event]:
        t = self.table
        stmt = sa.select(t).where(t.c.queue.in_(self.history_queues), t.c.item_key == str(key)).order_by(t.c.id)
        if limit:
            stmt = stmt.limit(limit)
        return [self.event(row) for row in conn.execute(stmt).mappings()]

    def escalations(
        self, conn: sa.Connection, actor: str | None = None, limit: int = 200
    ) -> list[tuple[models.Event, models.Event]]:
        """The queue's escalated items (by `actor` only, if given), newest first: each item's last
        escalate and the item's newest event since (the escalate itself while nobody took it up)."""
        t = self.table
        newest = (
            sa.select(sa.func.max(t.c.id))
            .where(t.c.queue == self.queue, t.c.event == models.EventKind.ESCALATE.value)
            .group_by(t.c.item_key)
        )
        if actor is not None:
            newest = newest.where(t.c.actor == actor)
        escalated = [
            self.event(row)
            for row in conn.execute(sa.select(t).where(t.c.id.in_(newest)).order_by(t.c.id.desc()).limit(limit))
            .mappings()
            .all()
        ]
        if not escalated:
            return []
        keys = [e.key for e in escalated]
        last_ids = (
            sa.select(sa.func.max(t.c.id))
            .where(t.c.queue.in_(self.history_queues), t.c.item_key.in_(keys))
            .group_by(t.c.item_key)
        )
        last = {
            row["item_key"]: self.event(row)
            for row in conn.execute(sa.select(t).where(t.c.id.in_(last_ids))).mappings()
        }
        return [(e, last.get(e.key, e)) for e in escalated]

    def last_for_token(self, conn: sa.Connection, key: Any, token: str) -> models.Event | None:
        """The newest event that ended or changed the lock `token` (for "why was my lock lost")."""
        t = self.table
        stmt = (
            sa.select(t)
            .where(
                t.c.queue == self.queue,
                t.c.item_key == str(key),
                t.c.token == token_digest(token),
                t.c.event.in_(_ENDS_A_LOCK),
            )
            .order_by(t.c.id.desc())
            .limit(1)
        )
        row = conn.execute(stmt).mappings().first()
        return self.event(row) if row else None

    def took(self, conn: sa.Connection, key: Any, user: str) -> bool:
        """Does the trail say that workbench holds `key` for `user` in this queue: is the item's newest
        claim or end of a lock a claim for `user`? A lock under a user's name that it does not name is
        another program's, written under the same name (the old program and workbench both default to
        the OS login). Asked by claim and end, not by token: an extension moves a lock time that is the
        token (shape 2) and is recorded with the new one, but aging or repair by SQL is not."""
        t = self.table
        stmt = (
            sa.select(t.c.event, t.c.owner)
            .where(t.c.queue == self.queue, t.c.item_key == str(key), t.c.event.in_(_CLAIM_OR_END))
            .order_by(t.c.id.desc())
            .limit(1)
        )
        row = conn.execute(stmt).first()
        return row is not None and row.event == models.EventKind.CLAIM.value and row.owner == user

    def holders(self, conn: sa.Connection, keys: list[str], per_statement: int) -> dict[str, str]:
        """took() for many items at once: {item key: the user the item's newest claim or end of a lock
        is a claim for}; an item whose newest such event ends a lock, or that has none, is left out.
        `keys` as the trail keeps them (text), at most `per_statement` in one statement."""
        t = self.table
        newest = (
            sa.select(t.c.item_key, sa.func.max(t.c.id).label("wb_id"))
            .where(
                t.c.queue == self.queue,
                t.c.item_key.in_(sa.bindparam("wb_keys", expanding=True)),
                t.c.event.in_(_CLAIM_OR_END),
            )
            .group_by(t.c.item_key)
            .subquery("wb_newest")
        )
        stmt = sa.select(t.c.item_key, t.c.event, t.c.owner).join(newest, t.c.id == newest.c.wb_id)
        found: dict[str, str] = {}
        unique = sorted(set(keys))
        for i in range(0, len(unique), per_statement):
            for item, event, owner in conn.execute(stmt, {"wb_keys": unique[i : i + per_statement]}):
                if event == models.EventKind.CLAIM.value and owner is not None:
                    found[item] = owner
        return found

    def last_event(self, conn: sa.Connection, key: Any) -> models.Event | None:
        """The newest event of an item, whatever it was."""
        t = self.table
        stmt = sa.select(t).where(t.c.queue == self.queue, t.c.item_key == str(key)).order_by(t.c.id.desc()).limit(1)
        row = conn.execute(stmt).mappings().first()
        return self.event(row) if row else None

    def last_claim(self, conn: sa.Connection, key: Any) -> models.Event | None:
        t = self.table
        stmt = (
            sa.select(t)
            .where(t.c.queue == self.queue, t.c.item_key == str(key), t.c.event.in_(["claim", "reassign"]))
            .order_by(t.c.id.desc())
            .limit(1)
        )
        row = conn.execute(stmt).mappings().first()
        return self.event(row) if row else None

    def taken_in(self, conn: sa.Connection, key: Any, queues: Iterable[str]) -> str | None:
        """Of this queue and `queues` (others over the same table), the one whose claim of `key` is the
        newest: the queue the lock on the item was taken in (None: no claim is recorded)."""
        return conn.execute(self._newest_claim(str(key), queues)).scalar()

    def newest_claim(self, conn: sa.Connection, key: Any, queues: Iterable[str]) -> tuple[str, str | None] | None:
        """Of this queue and `queues`, the newest claim of `key`: its queue and the one who holds it by it."""
        t = self.table
        found = conn.execute(self._newest_claim(str(key), queues).add_columns(t.c.owner)).first()
        return None if found is None else (str(found[0]), found[1])

    def claimed_here(self, item: sa.ColumnElement[Any], rivals: Iterable[str]) -> sa.ColumnElement[bool]:
        """SQL: of this queue and `rivals` (queues over the same table whose rows the state does not
        tell apart), the item's newest claim is this queue's; `item` is its key as key_text gives it."""
        return self.claimed_in(item, rivals) == sa.literal(self.queue, literal_execute=True)

    def claimed_in(self, item: sa.ColumnElement[Any], queues: Iterable[str]) -> sa.ScalarSelect[Any]:
        """SQL: of this queue and `queues`, the one of `item`'s newest claim (NULL: none recorded)."""
        return self._newest_claim(item, queues).scalar_subquery()

    def _newest_claim(self, item: Any, queues: Iterable[str]) -> sa.Select[Any]:
        """The queue of `item`'s newest claim among this queue and `queues`; the queue names and the
        event are part of the statement's text (a fence's prepared statement keeps them)."""
        t = self.table
        listed = sa.bindparam(None, [self.queue, *queues], type_=t.c.queue.type, expanding=True, literal_execute=True)
        claim = sa.literal(models.EventKind.CLAIM.value, literal_execute=True)
        return (
            sa.select(t.c.queue)
            .where(t.c.queue.in_(listed), t.c.item_key == item, t.c.event == claim)
            .order_by(t.c.id.desc())
            .limit(1)
        )

    @staticmethod
    def event(row: Mapping[Any, Any]) -> models.Event:
        at = clock.stored_utc(row["at"])  # the audit trail is always UTC
        return models.Event(
            id=int(row["id"]),
            queue=row["queue"],
            key=row["item_key"],
            kind=models.EventKind(row["event"]),
            actor=row["actor"],
            owner=row["owner"],
            token=row["token"],
            at=at,
            reason=row["reason"],
            outcome=row["outcome"],
            detail=json.loads(row["detail"]) if row["detail"] else None,
        )


def trail_of(
    queue: model.QueueConfig,
    reviewed: model.QueueConfig | None,
    audit: sa.Table,
    cooldown: sa.Table,
    notes: sa.Table | None,
    deferrals: sa.Table,
    reviews: sa.Table,
) -> AuditTrail:
    """The record a queue's operations keep and its claim consults: audit, cool-down, notes, deferrals
    (also for a reviewed queue: its sent-back items come back through them), reviews (`reviewed`: the
    queue whose completions `queue` reviews)."""

    def reviews_of(source: model.QueueConfig) -> reviews_mod.Reviews:
        assert source.review is not None
        return reviews_mod.Reviews(reviews, deferrals, source.review, source.name)

    return AuditTrail(
        # A reviewing queue keeps its notes with the reviewed queue's: the operator a line is sent back to
        # reads why beside it.
        audit,
        queue.name,
        cooldown,
        notes_mod.Notes(notes, reviewed.name if reviewed else queue.name) if notes is not None else None,
        deferrals_mod.Deferrals(deferrals, queue.name, queue.defer_owner_first_seconds)
        if queue.allow_defer or queue.review is not None
        else None,
        to_review=reviews_of(queue) if queue.review is not None else None,
        reviews=reviews_of(reviewed) if reviewed is not None else None,
    )
