"""What every lock shape shares: the lock's holder and time columns, its expiry, the claim's writes."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import sqlalchemy as sa

from workbench.core import models
from workbench.db import backends, clock


class FenceFailed(Exception):
    """A guarded write's later statement found the lock gone: the transaction must roll back."""


def moved_on(new: sa.ColumnElement[Any], old: sa.ColumnElement[Any], *, capped: bool) -> sa.ColumnElement[bool]:
    """An extension's move of the lock from `old` to `new`, the one comparison of the engine's guard
    (extends_something) and the databases' checks (extended, LockTable.lock_row_change): under a cap
    (max_lock_duration) strictly on, else the cap is reached and nothing is extended; without one at
    least where it was (an extend in the claim's clock instant, or on a coarse time column, writes the
    expiry the lock has), never back."""
    return new > old if capped else new >= old


class LockShape:
    """The lock columns of one queue table and everything that depends on which of them it has.

    The holder and the lock time are always there; the expiry is a column of its own or the lock
    time plus the lock duration. Subclasses say what the token is and so what the fence compares.
    """

    # The token is a column of the row: SQL can copy it into audit rows (which then name one lock,
    # not only the item) and a guarded write is fenced by the bound token alone, in one statement.
    token_in_row: ClassVar[bool] = False
    # A lock keeps one token all its life (an extension does not change it), so the audit rows of
    # one lock are those with its token; otherwise they are the item's rows since its latest claim.
    stable_token: ClassVar[bool] = False

    def __init__(
        self,
        *,
        queue: str,
        user: sa.Column[Any],
        time: sa.Column[Any],
        expires: sa.Column[Any] | None,
        token: sa.Column[Any] | None,
        backend: backends.Backend,
        lock_seconds: int,
        aware: bool,
        aware_time: Callable[[Any], dt.datetime],
    ) -> None:
        self.queue = queue  # its name, for messages
        self.user, self.time, self.expires, self.token = user, time, expires, token
        self.backend, self.lock_seconds, self.aware = backend, lock_seconds, aware
        self._aware = aware_time  # a lock time as read, as an aware datetime

    @property
    def separate_locks(self) -> bool:
        """Do the locks live in a separate lock table (the queue's row holds none of them)?"""
        return False

    @property
    def all_in_row(self) -> bool:
        """Is every part of a lock (holder, time, expiry, token) a column of the row, so that a
        claim's RETURNING gives the whole lock?"""
        return self.token_in_row and self.expires is not None

    @property
    def columns(self) -> list[sa.Column[Any]]:
        return [c for c in (self.user, self.time, self.expires, self.token) if c is not None]

    @property
    def columns_in_table(self) -> list[sa.Column[Any]]:
        """The lock columns that are columns of the queue's own table (not editable, not filters)."""
        return self.columns

    @property
    def single_write(self) -> bool:
        """Is a guarded write one UPDATE of the queue's row that carries the token, so that its audit row
        can go with it where the database allows (one statement on PostgreSQL, one batch on MySQL/MariaDB)?"""
        return self.token_in_row

    # -- where the lock is --------------------------------------------------------------------

    def check_key(self, key: sa.Column[Any]) -> str | None:
        """Why this shape cannot serve a queue keyed by `key` (None: it can)."""
        return None

    def source(self, table: sa.FromClause, key: sa.ColumnElement[Any]) -> sa.FromClause:
        """What a statement reads a row and its lock from: the queue's table, or it joined to the locks."""
        return table

    def locked_source(self, table: sa.FromClause, key: sa.ColumnElement[Any]) -> sa.FromClause:
        """What locked rows only are read from: an inner join where the locks are elsewhere, so the
        planner may start from the (few) locks instead of the whole table."""
        return table

    def key_clause(self, key: sa.Column[Any]) -> sa.ColumnElement[bool]:
        """The lock of the item bound as key_params() (the fence's "this row")."""
        return key == sa.bindparam("wb_key", type_=key.type)

    def key_params(self, key: Any) -> dict[str, Any]:
        """The bound values of key_clause() besides `wb_key`."""
        return {}

    def grants_problem(self) -> str | None:
        """Why `workbench grants` cannot enforce the protocol for this shape (None: it can)."""
        return None

    def undo_problem(self) -> str | None:
        """Why an operator cannot take back a Complete on this shape (None: they can). Undo writes a
        fresh lock into the item's row in the same fenced UPDATE that undoes the outcome, and reads it
        back by its token: the row must hold the whole lock, token and expiry."""
        if not self.token_in_row:
            return "its rows have no lock token column (the lock time stands in for one)"
        if self.expires is None:
            return "its rows have no lock expiry column"
        return None

    def claim_method(self, configured: Any) -> Any:
        """The claim method for this shape: the database's configured one, unless the shape needs its own."""
        return configured

    # -- writes that end or move a lock -------------------------------------------------------

    def unlock(
        self,
        conn: sa.Connection,
        table: sa.Table,
        key_column: sa.Column[Any],
        key: Any,
        guard: sa.ColumnElement[bool],
        item_values: Mapping[str, Any],
    ) -> bool:
        """Remove the lock of `key` if `guard` holds (force-release, sweep), writing `item_values` to
        its row; True when it did."""
        stmt = sa.update(table).where(key_column == key, guard).values({**item_values, **self.unlock_writes()})
        return conn.execute(stmt).rowcount == 1

    def relock(
        self,
        conn: sa.Connection,
        table: sa.Table,
        key_column: sa.Column[Any],
        key: Any,
        guard: sa.ColumnElement[bool],
        lock_values: Mapping[str, Any],
        prev_token: Any,
    ) -> bool:
        """Replace the lock of `key`, whose token was `prev_token`, if `guard` holds (reassign, the
        take-over of an expired lock); True when it did."""
        return conn.execute(sa.update(table).where(key_column == key, guard).values(dict(lock_values))).rowcount == 1

    def guarded_statements(
        self,
        table: sa.Table,
        key_column: sa.Column[Any],
        fence: sa.ColumnElement[bool],
        item_values: Mapping[str, Any],
        lock_values: Mapping[str, Any],
        unlock: bool,
        completes: bool = False,
        in_work: sa.ColumnElement[bool] | None = None,
    ) -> list[sa.Executable]:
        """The statements of a guarded write (save, complete, release, extend) that run_guarded runs;
        `completes`: the write is a Complete (not a release); `in_work`: the row rule
        (BoundQueue.in_work), which every statement that writes holds the row to. Here `fence`
        carries it already (BoundQueue.held_here is the rule where the lock is in the row)."""
        values = {**item_values, **lock_values, **(self.unlock_writes() if unlock else {})}
        return [sa.update(table).where(fence).values(values)]

    def run_guarded(self, conn: sa.Connection, statements: list[sa.Executable], params: Mapping[str, Any]) -> bool:
        """Run a guarded write; False (and nothing written) when the fence did not hold, or FenceFailed
        (which rolls the transaction back) when it failed after a first statement wrote."""
        return conn.execute(statements[0], dict(params)).rowcount == 1

    # -- expiry -----------------------------------------------------------------------------

    @staticmethod
    def seconds(seconds: int) -> sa.BindParameter[int]:
        # A config constant: rendered into the statement (by SQLAlchemy, typed) rather than sent
        # as a parameter on every call.
        return sa.bindparam(None, seconds, type_=sa.Integer(), literal_execute=True)

    def expiry(self) -> sa.ColumnElement[Any]:
        if self.expires is not None:
            return self.expires
        return clock.add_seconds(self.time, self.seconds(self.lock_seconds))

    def expired(self, now: sa.ColumnElement[Any]) -> sa.ColumnElement[bool]:
        # Written so that an index on the expiry (or lock time) column serves it.
        if self.expires is not None:
            return self.expires <= now
        return self.time <= clock.add_seconds(now, self.seconds(-self.lock_seconds))

    def live(self, now: sa.ColumnElement[Any]) -> sa.ColumnElement[bool]:
        return sa.and_(self.user.is_not(None), self._unexpired(now))

    def held_live(self, user: sa.ColumnElement[Any], now: sa.ColumnElement[Any]) -> sa.ColumnElement[bool]:
        """`user` (a bound name, never empty) holds the row's live lock, for a write that finds its
        row by key. Written so that no index of the lock columns can serve it: the partial index of
        held rows keeps, until vacuum, an entry for every lock taken since, released or not, and a plan
        through it (PostgreSQL chose one for the Complete while its statistics showed few locks) read
        them all on every write, instead of one row by its key."""
        return sa.and_(sa.func.coalesce(self.user, sa.literal_column("''")) == user, self._unexpired(now))

    def _unexpired(self, now: sa.ColumnElement[Any]) -> sa.ColumnElement[bool]:
        if self.expires is not None:
            return self.expires > now
        return self.time > clock.add_seconds(now, self.seconds(-self.lock_seconds))

    def free(self) -> sa.ColumnElement[bool]:
        """Rows nobody holds."""
        return self.user.is_(None)

    def unheld(self, key: sa.ColumnElement[Any], *, finished: bool = False) -> sa.ColumnElement[bool]:
        """Rows nobody holds, as a condition on the queue table alone (an UPDATE of it can carry it);
        `finished`: of rows that left the queue's work (a reopen's), where a shape may read less as held."""
        return self.free()

    def stale(self, now: sa.ColumnElement[Any]) -> sa.ColumnElement[bool]:
        """A lock (the user column is set) that no longer holds: expired, or without an expiry.

        Both tests are on the one column the expiry index holds; where the planner does not combine
        the two index conditions on it, the claim uses stale_rows.
        """
        column = self.expires if self.expires is not None else self.time
        return sa.or_(column.is_(None), self.expired(now))

    def any_stale(self, now: sa.ColumnElement[Any]) -> sa.ColumnElement[bool]:
        """Is any lock of the table stale, whatever its row's queue or state? Two probes of the
        expiry index (see stale), for a claim to skip its expired branch while this is false."""
        held = self.user.is_not(None)
        column = self.expires if self.expires is not None else self.time
        return sa.or_(sa.exists().where(held, self.expired(now)), sa.exists().where(held, column.is_(None)))

    def stale_rows(self, now: sa.ColumnElement[Any], key: sa.ColumnElement[Any]) -> sa.ColumnElement[bool]:
        """Locked rows whose lock no longer holds, as the claim's expired branch looks them up: `user IS NOT
        NULL AND stale(now)`, or, where the planner would read every locked row for the OR
        (Backend.stale_by_union), the keys of two index searches, one per side of it."""
        held = self.user.is_not(None)
        if not self.backend.stale_by_union:
            return sa.and_(held, self.stale(now))
        column = self.expires if self.expires is not None else self.time
        table = column.table
        both = sa.union_all(
            sa.select(key).select_from(table).where(held, self.expired(now)),
            sa.select(key).select_from(table).where(held, column.is_(None)),
        )
        # The keys alone, without `held` beside them as well: with it, the plan made while few
        # locks were live read every live lock (its index's `user IS NOT NULL`) and hashed it
        # against the two searches, which at 100,000 live locks is a millisecond per claim; without
        # it the searches drive the lookup at any count. The row's own staleness is tested as well:
        # the keys come from the statement's snapshot, and when another claimer takes the same
        # expired lock and commits before this one locks the row, PostgreSQL re-checks the row's new
        # version against the conditions on the row only; without this one the new, live lock was
        # taken over (tests/contract/test_no_takeover.py).
        return sa.and_(key.in_(both), self.stale_on_row(now))

    def stale_on_row(self, now: sa.ColumnElement[Any]) -> sa.ColumnElement[bool]:
        """stale(now) as a test of the row itself that no index serves (so that it does not change
        how stale_rows finds its rows, only which of them pass)."""
        limit = now if self.expires is not None else clock.add_seconds(now, self.seconds(-self.lock_seconds))
        column = self.expires if self.expires is not None else self.time
        return sa.func.coalesce(column, limit) <= limit

    def readable_times(self) -> tuple[sa.ColumnElement[Any], sa.ColumnElement[Any]]:
        """The lock time and the expiry for reading, kept inside Python's range (clock.readable):
        a far-future or infinite value written by another program is listed, not a crash."""
        time = clock.readable(self.time)
        if self.expires is not None:
            return time, clock.readable(self.expires)
        return time, clock.readable(clock.add_seconds(time, self.seconds(self.lock_seconds)))

    def readable_columns(self) -> dict[str, sa.ColumnElement[Any]]:
        """The lock's time columns by name, for reading a whole row (see readable_times)."""
        times = {self.time.name: self.readable_times()[0]}
        if self.expires is not None:
            times[self.expires.name] = clock.readable(self.expires)
        return times

    def expires_in_row(self, row: dict[str, Any]) -> Any:
        """The expiry of a row read with all its columns (None when not locked)."""
        if self.expires is not None:
            return row[self.expires.name]
        time = row[self.time.name]
        return time + dt.timedelta(seconds=self.lock_seconds) if time is not None else None

    # -- writes -----------------------------------------------------------------------------

    def lock_writes(self, user: Any, now: sa.ColumnElement[Any], token: Any) -> dict[str, Any]:
        """What a claim (or a reassignment) writes."""
        result = {self.user.name: user, self.time.name: now}
        if self.expires is not None:
            result[self.expires.name] = clock.add_seconds(now, self.seconds(self.lock_seconds))
        return result

    def cleared_on_reopen(self) -> list[sa.Column[Any]]:
        """Columns of the queue's row that a reopen sets to NULL besides on_reopen (a kept claim id,
        which would otherwise mark the reopened row as held)."""
        return []

    def unlock_writes(self) -> dict[str, Any]:
        """What a release or a Complete writes."""
        return {c.name: sa.null() for c in self.columns}

    @property
    def identity(self) -> list[sa.Column[Any]]:
        """The columns that tell one lock on a row from the next: what a new claim must change."""
        return [self.time]

    @property
    def extend_moves_time(self) -> bool:
        """Does an extension move the lock time (no expiry column), and with it a time-based token?"""
        return self.expires is None

    def extend_writes(self, new_expiry: sa.ColumnElement[Any]) -> dict[str, Any]:
        """What an extension writes: the new expiry, or (without an expiry column) the lock time
        bound as `wb_extend_to` by the caller, who knows the original claim time."""
        if self.expires is not None:
            return {self.expires.name: new_expiry}
        return {self.time.name: self.backend.time_param_written("wb_extend_to", self.time)}

    def extends_something(self, new_expiry: sa.ColumnElement[Any], *, capped: bool) -> sa.ColumnElement[bool]:
        """The extension's guard: it moves the lock on (under a cap: strictly, else the cap is
        reached), or without a cap at least leaves it where it is (never back)."""
        new, old = (
            (new_expiry, self.expires)
            if self.expires is not None
            else (self.backend.time_param("wb_extend_to"), self.backend.comparable_time(self.time))
        )
        return moved_on(new, old, capped=capped)

    # -- the writes as conditions over the row before and after (PostgreSQL's checks) -------------
    # `old` and `new` are the row before and after the change (aliases of the table that holds the lock
    # columns); the check that asks renders them (db/rules/pg_row_rules.py, by the transition's Write.LOCK_*).

    def taken(
        self, old: sa.FromClause, new: sa.FromClause, user: sa.ColumnElement[Any] | None
    ) -> sa.ColumnElement[bool]:
        """`new` holds a fresh lock of `user` (None: of someone) as lock_writes writes one: its holder,
        every column it writes set, and another identity than `old`'s (what tells one lock from the
        next: a new claim's own token or lock time). How far its times reach is the transition's
        Check.WITHIN_LIMITS, tested beside it."""
        identity = {c.name for c in self.identity}
        parts: list[sa.ColumnElement[bool]] = []
        for name in self.lock_writes(user, clock.db_now(), None):
            if name == self.user.name:
                parts.append(new.c[name].is_not(None) if user is None else new.c[name] == user)
            elif name not in identity:
                parts.append(new.c[name].is_not(None))
        for name in identity:  # in the order the shape names them
            parts += [new.c[name].is_not(None), new.c[name].is_distinct_from(old.c[name])]
        return sa.and_(*parts)

    def extended(self, old: sa.FromClause, new: sa.FromClause, *, capped: bool) -> sa.ColumnElement[bool]:
        """`new` holds `old`'s lock extended as extend_writes writes it: what it moves moved on as
        extends_something guards it (moved_on: strictly under a cap), every other lock column as it was
        (the holder, the token, the lock time where an expiry column moves instead). How far is
        Check.WITHIN_LIMITS."""
        moved = set(self.extend_writes(sa.null()))
        return sa.and_(
            *(
                moved_on(new.c[c.name], old.c[c.name], capped=capped)
                if c.name in moved
                else new.c[c.name].is_not_distinct_from(old.c[c.name])
                for c in self.columns
            )
        )

    def cleared(self, new: sa.FromClause) -> sa.ColumnElement[bool]:
        """`new` holds what unlock_writes writes: no lock at all (not the holder alone: a token, time or
        expiry left would be a lock half given back)."""
        return sa.and_(
            *(
                new.c[name].is_(None) if isinstance(value, sa.Null) else new.c[name].is_not_distinct_from(value)
                for name, value in self.unlock_writes().items()
            )
        )

    def shown_item(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """A row's columns as anyone may see them: no token, lock times to the second (a lock time
        at full precision is the token of a table without a token column)."""
        shown = dict(item)
        for column in (self.time, self.expires):
            if column is not None and column.name in shown:
                shown[column.name] = models.shown(shown[column.name])
        return shown

    # -- the token and the fence --------------------------------------------------------------

    def token_column(self) -> sa.ColumnElement[Any]:
        """The token as stored in the row (NULL where the shape has no token column)."""
        return sa.null()

    def trail_token(self) -> sa.ColumnElement[Any]:
        """The token as SQL text, as the trail keeps it (before its digest), for the audit rows the
        database writes itself (`workbench grants`): the token column's (NULL where there is none)."""
        return self.token_column()

    def new_token(self) -> sa.ColumnElement[Any]:
        """A fresh token made by the server, for a claim's UPDATE."""
        return clock.new_token()

    def new_token_value(self) -> Any:
        """A fresh token made here, for statements that bind it."""
        return uuid.uuid4().hex

    def as_text(self, token: sa.ColumnElement[Any]) -> sa.ColumnElement[Any]:
        """A token column returned by a statement, as the text audit rows keep."""
        return token

    def stored_token(self, row: Mapping[Any, Any]) -> Any:
        """The token column's value in a row read with all its columns (None without one)."""
        return None

    def token_of(self, row: Mapping[Any, Any]) -> str:
        """The token of the lock a row (read with all its columns) holds."""
        raise NotImplementedError

    def token_from_lock_row(self, row: Mapping[Any, Any], locked_at: dt.datetime) -> str:
        """The token of a row read with the wb_* lock columns."""
        raise NotImplementedError

    def token_params(self, token: str) -> dict[str, Any]:
        """The bound values of fence_clause() for a caller's token."""
        raise NotImplementedError

    def fence_clause(self, key: sa.ColumnElement[bool], user: sa.ColumnElement[bool]) -> sa.ColumnElement[bool]:
        """This row (`key`), this holder (`user`), this exact lock, from the bound values of token_params()."""
        raise NotImplementedError

    def token_matches(self, token: str) -> sa.ColumnElement[bool]:
        """This exact lock, from a caller's token (the compare-and-set guard's lock part)."""
        raise NotImplementedError

    def prev_token(self, owner: Any, token: Any, time: Any) -> str | None:
        """The token of the lock a claim replaced, from the candidate's owner, token and lock time."""
        if owner is None:
            return None
        return self._token_of_parts(token, time)

    def _token_of_parts(self, token: Any, time: Any) -> str | None:
        raise NotImplementedError

    def pinned(self, owner: Any, token: Any) -> sa.ColumnElement[bool]:
        """The lock just read (or just written) is still the one in the row: the compare-and-set of
        a portable claim, a force-release and a reassignment."""
        raise NotImplementedError
