"""Deferred items ("call back Thursday 10:00"), kept in workbench_deferrals: what the claim leaves out
until their time, and serves first after it."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa

from workbench.core import durations, errors, models, problems, workflow
from workbench.db import clock, values

MAX_DAYS = durations.MAX_DEFER_DAYS
LAPSED_DAYS = 30  # rows whose time passed this long ago are dropped when the queue defers again
REASON_LENGTH = 500


class Deferrals:
    """The deferrals of one queue. Writes run inside the caller's transaction.

    A deferral stays until the item is deferred again or released; once its time has come the
    claim serves the item first (see `due`), whether or not the row is still there after the item
    is completed, since a completed item is no longer work to do.
    """

    def __init__(self, table: sa.Table, queue: str, owner_first_seconds: int) -> None:
        self.table, self.queue, self.owner_first = table, queue, owner_first_seconds

    # -- writes ----------------------------------------------------------------------------------

    def replace(self, conn: sa.Connection, key: Any, actor: str, until: dt.datetime, reason: str | None) -> None:
        """`actor` defers `key` until `until` (aware); an earlier deferral of the item goes."""
        d = self.table
        conn.execute(sa.delete(d).where(d.c.queue == self.queue, sa.or_(d.c.item_key == str(key), lapsed(d))))
        conn.execute(
            sa.insert(d).values(
                queue=self.queue, item_key=str(key), actor=actor, until=stored(until), at=clock.db_now(), reason=reason
            )
        )

    def forget(self, conn: sa.Connection, key: Any) -> None:
        """The item was released: whoever released it decided anew."""
        d = self.table
        conn.execute(sa.delete(d).where(d.c.queue == self.queue, d.c.item_key == str(key)))

    # -- what the claim asks -----------------------------------------------------------------------

    def deferred(self, key: sa.ColumnElement[Any]) -> sa.ColumnElement[bool]:
        """Has the item `key` (the queue's key column) a deferral: the claim serves it only through
        `due`, never as a plain free row."""
        d = self.table
        return sa.exists().where(d.c.queue == self.queue, d.c.item_key == sa.cast(key, sa.String(200)))

    def held_back(self, key: sa.ColumnElement[Any]) -> sa.ColumnElement[bool]:
        """Is the item `key` deferred to a time still to come (not waiting: nobody is served it yet)?"""
        d = self.table
        return sa.exists().where(
            d.c.queue == self.queue, d.c.item_key == sa.cast(key, sa.String(200)), d.c.until > clock.db_now()
        )

    def not_held_back(self, key: sa.Column[Any], user: Any) -> sa.ColumnElement[bool]:
        """Not deferred, or deferred and due for `user`: for the claims of queues whose locks live in
        a separate table, which serve a due item in its place in the queue rather than first."""
        return sa.or_(~self.deferred(key), self.due(key, user))

    def due(self, key: sa.Column[Any], user: Any) -> sa.ColumnElement[bool]:
        """Is the item `key` deferred and its time come for `user`: the claim serves these first.

        Whole-number and text keys are matched from the deferrals' side (a few rows), so the claim
        finds the items through the key's index, never by scanning the queue. Other keys (dates,
        UUIDs) are matched as text, as they were stored: SQLite cannot cast text back to a date."""
        d, now = self.table, clock.db_now()
        due = sa.select(d.c.item_key).where(
            d.c.queue == self.queue, d.c.until <= now, sa.or_(d.c.actor == user, sa.not_(self._owner_window(now)))
        )
        if values.python_type(key) in (int, str):
            return key.in_(due.with_only_columns(sa.cast(d.c.item_key, key.type)))
        return sa.cast(key, sa.String(200)).in_(due)

    def any_due(self) -> sa.ColumnElement[bool]:
        """Is any deferral of the queue due, for anyone? One probe of the (queue, until) index, for a
        claim to skip its deferred branch while this is false."""
        d = self.table
        return sa.exists().where(d.c.queue == self.queue, d.c.until <= clock.db_now())

    def _owner_window(self, now: sa.ColumnElement[Any]) -> sa.ColumnElement[bool]:
        """Within the time after `until` when only the deferring operator is served the item."""
        d = self.table
        return clock.add_seconds(d.c.until, sa.literal(self.owner_first, literal_execute=True)) > now

    # -- reads -------------------------------------------------------------------------------------

    def of_item(self, conn: sa.Connection, key: Any) -> models.Deferral | None:
        d = self.table
        row = (
            conn.execute(
                sa.select(d).where(d.c.queue == self.queue, d.c.item_key == str(key)).order_by(d.c.id.desc()).limit(1)
            )
            .mappings()
            .first()
        )
        return self.deferral(row) if row else None

    def waiting(self, conn: sa.Connection) -> list[models.Deferral]:
        """The queue's deferrals whose time has not come, soonest first."""
        d = self.table
        rows = conn.execute(
            sa.select(d).where(d.c.queue == self.queue, d.c.until > clock.db_now()).order_by(d.c.until, d.c.id)
        ).mappings()
        return [self.deferral(row) for row in rows]

    def count_waiting(self, conn: sa.Connection) -> int:
        """How many of the queue's deferrals have a time still to come (waiting() without reading them)."""
        d = self.table
        stmt = sa.select(sa.func.count()).select_from(d).where(d.c.queue == self.queue, d.c.until > clock.db_now())
        return int(conn.execute(stmt).scalar_one())

    @staticmethod
    def deferral(row: Mapping[Any, Any]) -> models.Deferral:
        return models.Deferral(
            queue=row["queue"],
            key=row["item_key"],
            actor=row["actor"],
            until=clock.stored_utc(row["until"]),
            at=clock.stored_utc(row["at"]),
            reason=row["reason"],
        )


def checked_until(until: Any, now: dt.datetime) -> dt.datetime:
    """A deferral's time (aware), or UsageError saying what to fix: in the future, within MAX_DAYS."""
    if not isinstance(until, dt.datetime) or until.tzinfo is None:
        raise errors.UsageError(
            "a deferral needs a date and time with its zone (the window and the CLI add the computer's own)"
        )
    if until <= now:
        raise errors.UsageError.of(problems.DEFER_PAST, f"{now:%Y-%m-%d %H:%M}")
    if until - now > dt.timedelta(days=MAX_DAYS):
        raise errors.UsageError.of(problems.DEFER_TOO_FAR, MAX_DAYS)
    return until


def checked_reason(reason: Any) -> str:
    kept = workflow.reason_given("defer", reason)
    if len(kept) > REASON_LENGTH:
        raise errors.UsageError(f"a deferral's reason holds at most {REASON_LENGTH} characters ({len(kept)} given)")
    return kept


def too_soon(until: sa.ColumnElement[Any]) -> sa.ColumnElement[bool]:
    """A deferral's time `until` (SQL) not still to come on the database's clock (checked_until's first rule)."""
    return sa.or_(until.is_(None), until <= clock.db_now())


def too_far(until: sa.ColumnElement[Any]) -> sa.ColumnElement[bool]:
    """A deferral's time `until` (SQL) more than MAX_DAYS ahead (checked_until's second rule)."""
    return until > clock.add_seconds(clock.db_now(), sa.literal(MAX_DAYS * 86400, literal_execute=True))


def lapsed(table: sa.Table) -> sa.ColumnElement[bool]:
    """Deferrals whose time passed long ago: a new defer in the queue drops them."""
    return table.c.until < clock.add_seconds(clock.db_now(), sa.literal(-LAPSED_DAYS * 86400, literal_execute=True))


def stored(value: dt.datetime) -> dt.datetime:
    """A deferral's time as workbench's tables keep times."""
    return _utc_naive(value)


def _utc_naive(value: dt.datetime) -> dt.datetime:
    """As workbench's tables keep times: UTC without zone (as clock.db_now() writes them)."""
    return value.astimezone(dt.UTC).replace(tzinfo=None)
