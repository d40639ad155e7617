"""The operations of one operator on one queue: claim, show, save, complete, release, defer, extend, undo, lists
(a supervisor's actions are supervision.Supervision's)."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
from collections.abc import Iterator, Mapping
from typing import Any, cast

import sqlalchemy as sa

from workbench.core import errors, models, problems, workflow
from workbench.db import audit as audit_mod
from workbench.db import (
    claims,
    connect,
    enforcement,
    groups,
    guarded,
    lockloss,
    lockrules,
    lookups,
    mapping,
    permissions,
    procedures,
    rowrules,
    stats,
    writes,
)
from workbench.db import deferrals as deferrals_mod
from workbench.db import notes as notes_mod


class WorkQueue:
    """One configured queue on one database. Every method is one or a few short transactions."""

    def __init__(
        self,
        db: connect.Database,
        q: mapping.BoundQueue,
        trail: audit_mod.AuditTrail,
        method: claims.ClaimMethod,
        neighbours: tuple[str, ...] = (),
        enforced: enforcement.Enforcement | None = None,
    ) -> None:
        """`neighbours`: the other queues over the same table, one of which may hold a lock on a row
        of it (a refused write names it). `enforced`: how the writes run, as the service bound the
        queue (enforcement.py)."""
        self.db, self.q, self.trail, self.method = db, q, trail, method
        self.enforcement = enforced or enforcement.of(db, q, trail.table.schema)
        self.name = q.name
        self.config = q.config
        self.writer = guarded.GuardedWriter(db, q, trail, self.enforcement.ways)
        self.lost = lockloss.Diagnosis(q, trail, neighbours)
        self._shapes: dict[str, guarded.Shape] = {}  # a Complete without edits, per outcome: built and hashed once

    # -- claiming ---------------------------------------------------------------------------

    def claim_next(self, user: str, count: int = 1, where: Mapping[str, Any] | None = None) -> list[models.Claim]:
        """Lock up to `count` items for `user` in queue order; NothingToClaim when none is free.

        `where` narrows the claim to items whose columns hold these values ({column: value}; the
        columns the queue's `filter_by` names), e.g. {"msg_type": "INVOICE"}.
        """
        _check_user(user)
        if count < 1:
            raise errors.UsageError("count must be at least 1")
        self._check_group(user)
        if where:
            request = claims.ClaimRequest(user=user, count=count, where=self.q.coerce_filter(where))
            claimed = [
                claims.base.claim_of(self.q, c.row) for c in self.method.claim(self.db, self.q, self.trail, request)
            ]
        else:
            claimed = self.method.claim_next(self.db, self.q, self.trail, user, count)
        if not claimed:
            error = self.db.read(lambda conn: self._why_nothing(conn, user))
            if where and error.reason == "empty":
                narrowed = ", ".join(f"{name}={value}" for name, value in where.items())
                raise errors.NothingToClaim.of(problems.NOTHING_WITH, self.name, narrowed, reason="empty")
            raise error
        return claimed

    def ask_ahead(self) -> None:
        """Ask the database now how this queue's claim and Complete run (the trusted functions of
        `workbench grants`, enforcement.py): inside a window's opening read (Database.one_read) that
        costs no transaction of its own, where the first Next item would spend one."""
        self.enforcement.trusted_next()
        self.enforcement.trusted_complete()

    def claim(self, user: str, key: Any) -> models.Claim:
        """Lock one specific item; returns the caller's existing lock when they already hold it."""
        _check_user(user)
        if not self.config.allow_pick:
            raise errors.UsageError(f"queue {self.name} serves items in order only (allow_pick = false)")
        key = self.q.coerce_key(key)
        current = self.show(key)
        lock = current.lock
        if lock is not None and lock.owner == user and not lock.expired and self._took(lock):
            if not self._held_here(key):
                # The caller's own lock, taken in another queue of the table: resumed there, not here.
                taken = self.db.read(lambda conn: self.lost.elsewhere(conn, key, "work on"))
                raise errors.NothingToClaim(taken.happened, reason="unavailable")
            return models.Claim(lock=lock, item=current.item, resumed=True)
        self._check_group(user)
        claimed = self.method.claim(
            self.db, self.q, self.trail, claims.ClaimRequest(user=user, count=1, key=key, use_cooldown=False)
        )
        if claimed:
            return claims.base.claim_of(self.q, claimed[0].row)
        view = self.show(key)
        elsewhere = self.db.read(lambda conn: self._held_elsewhere(conn, key, view))
        if elsewhere is not None:
            # Held through another queue of the table (whose lock this queue may not even see).
            raise errors.NothingToClaim.of(problems.HELD_THROUGH, self.name, key, *elsewhere, reason="unavailable")
        if view.lock is not None and not view.lock.expired:
            raise errors.NothingToClaim.of(
                problems.HELD_BY if self._took(view.lock) else problems.HELD_BY_PROGRAM,
                self.name,
                key,
                view.lock.owner,
                _when(view.lock.locked_at),
                _when(view.lock.expires_at),
                reason="unavailable",
            )
        if self.config.max_locks_per_user:
            held = len([lock for lock in self.mine(user) if not lock.expired])
            if held >= self.config.max_locks_per_user:
                raise claims.base.limit_reached(self.q, held)
        reviews = self.trail.reviews
        review = self.db.read(lambda conn: reviews.open_review(conn, key)) if reviews is not None else None
        if review is not None and review[0] == user and view.state == "waiting":
            raise errors.NothingToClaim.of(problems.OWN_WORK, self.name, key, reason="unavailable")
        raise errors.NothingToClaim.of(problems.NOT_WAITING, self.name, key, view.state, reason="unavailable")

    def _held_elsewhere(self, conn: sa.Connection, key: Any, view: models.ItemView) -> tuple[str, str] | None:
        """Who holds `key` and through which other queue of the table, when a lock taken there is what
        keeps this queue from claiming it (None: it is not)."""
        q, neighbours = self.q, self.lost.neighbours
        if not neighbours:
            return None
        if view.lock is not None:
            if view.lock.expired or conn.execute(sa.select(q.key).where(q.key == key, self._owned(conn))).first():
                return None  # run out, or taken here
        elif conn.execute(sa.select(q.key).where(q.key == key, q.shape.unheld(q.key))).first() is not None:
            return None  # nobody holds it
        newest = self.trail.newest_claim(conn, key, neighbours)
        if newest is None or newest[0] == self.name:
            return None
        queue, owner = newest
        return (view.lock.owner if view.lock is not None else owner) or "someone", queue

    def _held_here(self, key: Any) -> bool:
        """Is the lock on `key` this queue's (BoundQueue.held_here)?"""
        q = self.q
        return self.db.read(
            lambda conn: conn.execute(sa.select(q.key).where(q.key == key, self._owned(conn))).first() is not None
        )

    def _owned(self, conn: sa.Connection) -> sa.ColumnElement[bool]:
        """The rows whose lock (if any) is this queue's (lockrules.owned, the key as the trail keeps it)."""
        return lockrules.owned(self.q, self.trail, lambda: self.trail.key_text(conn, self.q.key))

    def _check_group(self, user: str) -> None:
        """A queue that serves a group (`serves`) serves its members only: checked before every claim."""
        group = self.config.serves
        if group is None:
            return
        schema = self.trail.table.schema
        if not self.db.read(lambda conn: groups.is_member(conn, schema, user, group)):
            raise errors.NotPermitted.of(problems.NOT_IN_GROUP, self.name, group, user, user=user)

    def _why_nothing(self, conn: sa.Connection, user: str) -> errors.NothingToClaim:
        q = self.q
        if q.config.max_locks_per_user:
            held = conn.execute(sa.select(claims.ClaimMethod.held_count(q, q.now(), user))).scalar() or 0
            if held >= q.config.max_locks_per_user:
                return claims.base.limit_reached(q, int(held))
        reviews = self.trail.reviews
        if reviews is not None and reviews.waiting_for(conn, user):
            return errors.NothingToClaim.of(problems.NOTHING_BUT_OWN_WORK, q.name, reviews.source, reason="empty")
        # Items wait but an open transaction locked them all (under grants an operator's login may);
        # asked of rows that hold their lock (a separate lock table's claim does not lock the item's row).
        waiting = (
            sa.select(q.key)
            .select_from(q.table)
            .where(*q.scope_clause(user), q.todo_clause(user), sa.or_(q.free(), q.stale(q.now())))
        )
        if not q.shape.separate_locks and self.db.backend.held_open(conn, waiting):
            return errors.NothingToClaim.of(problems.NOTHING_FREE_NOW, q.name, reason="empty")
        return errors.NothingToClaim.of(problems.NOTHING_WAITING, q.name, reason="empty")

    # -- reading ----------------------------------------------------------------------------

    def show(self, key: Any) -> models.ItemView:
        q = self.q
        key = q.coerce_key(key)

        def read(conn: sa.Connection) -> models.ItemView:
            now = q.now()
            waiting = sa.case((sa.and_(*q.scope_clause(), q.todo_clause()), True), else_=False)
            row = (
                conn.execute(
                    sa.select(*q.item_columns(), *q.lock_select_columns(now), waiting.label("wb_waiting"))
                    .select_from(q.source)
                    .where(q.key == key)
                )
                .mappings()
                .first()
            )
            if row is None:
                raise errors.InvalidValue(
                    f"{q.name} has no item with key {key!r} (in {q.config.table_label}.{q.key.name})", column=q.key.name
                )
            return self._view(row)

        return self.db.read(read)

    def _view(self, row: Mapping[Any, Any]) -> models.ItemView:
        q = self.q
        lock = q.lock_from_row(row) if row["wb_user"] is not None and row["wb_time"] is not None else None
        if lock is not None:
            state = "expired" if lock.expired else "locked"
        elif row["wb_waiting"]:
            state = "waiting"
        else:
            state = self._done_state(row)
        return models.ItemView(queue=self.name, key=row["wb_key"], item=q.item_from_row(row), lock=lock, state=state)

    def _done_state(self, row: Mapping[Any, Any]) -> str:
        for name, assignments in self.q.outcomes.items():
            constants = [b for b in assignments if b.assignment.kind in ("value", "null")]
            if constants and all(row[b.column.name] == b.value for b in constants):
                return f"done:{name}"
        return "other"

    def mine(self, user: str) -> list[models.Lock]:
        """The user's locks in this queue, oldest first, including expired ones not yet taken over;
        only those workbench took (_took): another program's lock under the same name is not one's own."""
        return self._locks(user)

    def _took(self, lock: models.Lock) -> bool:
        return self.db.read(lambda conn: self.trail.took(conn, lock.key, lock.owner))

    def locks(self) -> list[models.Lock]:
        """Every lock in this queue (live and expired-not-yet-swept), oldest first."""
        return self._locks(None)

    def _locks(self, user: str | None) -> list[models.Lock]:
        q = self.q

        def read(conn: sa.Connection) -> list[models.Lock]:
            where = [*q.scope_clause(), self._owned(conn), q.user.is_not(None), q.time.is_not(None)]
            if user is not None:
                where.append(q.user == user)
            stmt = (
                sa.select(*q.lock_select_columns(q.now()))
                .select_from(q.locked_source)
                .where(*where)
                .order_by(q.time, q.key)
            )
            found = [q.lock_from_row(row) for row in conn.execute(stmt).mappings()]
            if user is None:
                return found
            return [lock for lock in found if self.trail.took(conn, lock.key, lock.owner)]

        return self.db.read(read)

    def open_items(self, limit: int = 200, user: str | None = None) -> list[dict[str, Any]]:
        """Waiting, unlocked items in queue order (key, list columns and the due column), for picking one
        by hand (those waiting for `user`, where the queue's conditions name the claimer).

        Served by the claim index, so it stays fast on a large table; never the whole table.
        """
        q = self.q
        stmt = (
            sa.select(*self._listed_columns())
            .select_from(q.source)
            .where(*q.scope_clause(user), q.todo_clause(user), q.free())
            .order_by(*q.order_by())
            .limit(limit)
        )
        return self.db.read(lambda conn: [dict(row) for row in conn.execute(stmt).mappings()])

    def _listed_columns(self) -> list[sa.Column[Any]]:
        """What lists show of an item: its key, the list columns and the due column."""
        q = self.q
        columns = [q.key, *(c for c in q.list_columns if c is not q.key)]
        if q.due is not None and q.due not in columns:
            columns.append(q.due)
        return columns

    def count_waiting(self, cap: int, user: str | None = None) -> int:
        """How many items wait (unlocked, in `todo`, not deferred), counted up to `cap` + 1: the count stops there, so
        that it reads at most that many index entries however large the table."""
        q = self.q
        waiting = (
            sa.select(q.key)
            .select_from(q.source)
            .where(*q.scope_clause(user), q.todo_clause(user), q.free(), *self._not_deferred())
            .limit(cap + 1)
            .subquery()
        )
        count = sa.select(sa.func.count()).select_from(waiting)
        return int(self.db.read(lambda conn: conn.execute(count).scalar_one()))

    def _not_deferred(self) -> list[sa.ColumnElement[bool]]:
        """Leaves out the items deferred to a time still to come: they are counted apart (deferred())."""
        deferrals = self.trail.deferrals
        return [] if deferrals is None else [~deferrals.held_back(self.q.key)]

    def filter_choices(self, limit: int = 50, user: str | None = None) -> dict[str, list[Any]]:
        """Per `filter_by` column: the values waiting items hold, most common first (at most `limit`)."""
        q = self.q

        return self.db.read(
            lambda conn: {
                name: self._held_values(conn, column, limit, user) for name, column in q.filter_columns.items()
            }
        )

    def _held_values(self, conn: sa.Connection, column: sa.Column[Any], limit: int, user: str | None) -> list[Any]:
        q = self.q
        n = sa.func.count().label("n")
        stmt = (
            sa.select(column, n)
            .select_from(q.source)
            .where(*q.scope_clause(user), q.todo_clause(user), q.free(), column.is_not(None))
            .group_by(column)
            .order_by(n.desc(), column)
            .limit(limit)
        )
        return [row[0] for row in conn.execute(stmt)]

    def count_overdue(self, cap: int | None = None) -> int | None:
        """Open items (waiting or held) past their due time on the database clock; None without `due`.
        With `cap`, counted up to `cap` + 1 (the start page's count after every Complete: it stops
        there instead of reading every open item of a large table)."""
        q = self.q
        if q.due is None:
            return None
        overdue = sa.select(q.key).select_from(q.source).where(q.overdue_clause(q.now()))
        if cap is not None:
            overdue = overdue.limit(cap + 1)
        stmt = sa.select(sa.func.count()).select_from(overdue.subquery())
        return int(self.db.read(lambda conn: conn.execute(stmt).scalar_one()))

    def summaries(self, keys: list[Any]) -> dict[Any, dict[str, Any]]:
        """The list columns (and the due column) of the given items, by key (for the resume panel)."""
        q = self.q
        if not keys:
            return {}
        stmt = sa.select(*self._listed_columns()).where(q.key.in_(keys))
        rows = self.db.read(lambda conn: [dict(row) for row in conn.execute(stmt).mappings()])
        return {row[q.key.name]: row for row in rows}

    def check(self, user: str, key: Any, token: str, doing: str = "work on") -> models.Lock:
        """The caller's lock if they still hold it; LockLost (with who and why) otherwise."""
        q = self.q
        key = q.coerce_key(key)

        def read(conn: sa.Connection) -> models.Lock:
            # The row rule too (in_work, as every write under the lock holds to it): where the lock lives
            # in a lock table it stays intact when another program takes the row out of the work, and
            # the window's periodic check must say so then, not at the next Save.
            where = sa.and_(self.writer.fence(), q.in_work())
            stmt = sa.select(*q.lock_select_columns(q.now())).select_from(q.source).where(where)
            params = {"wb_key": key, "wb_user": user, **q.shape.key_params(key), **q.shape.token_params(token)}
            row = conn.execute(stmt, params).mappings().first()
            if row is None:
                raise self.lost.explain(conn, key, token, user, doing)
            return q.lock_from_row(row)

        # One statement while the lock holds (every open window every check_every, and before each
        # action): on its own, without the transaction's round trips (Database.read_alone). A lost lock's
        # explanation reads the trail after it, as a later look would.
        return self.db.read_alone(read)

    def completion_kept(self, key: Any, token: str) -> bool:
        """Is the Complete made under lock `token` in this database's trail? After a failover to an
        asynchronous standby the last commits before the crash may be missing: a Complete among them
        left the item locked to its operator again."""
        key = self.q.coerce_key(key)
        last = self.db.read(lambda conn: self.trail.last_for_token(conn, key, token))
        return last is not None and last.kind is models.EventKind.COMPLETE

    def history(self, key: Any) -> list[models.Event]:
        key = self.q.coerce_key(key)
        return self.db.read(lambda conn: self.trail.history(conn, key))

    # -- writing under the lock -------------------------------------------------------------

    def save(self, user: str, key: Any, token: str, edits: Mapping[str, Any]) -> models.Lock:
        """Store edits while holding the lock (the lock is kept)."""
        key = self.q.coerce_key(key)
        values = self.q.coerce_edits(edits)
        if not values:
            return self.check(user, key, token, "save")
        self._check_lookups(values)
        shape = guarded.Shape.of("save", edits=tuple(values))
        with self._refused_as_lost(key, token, user, "save"):
            row = self.writer.run(
                shape, key=key, token=token, user=user, edits=values, detail={"columns": sorted(values)}
            )
        if row is None:
            raise self._lost(key, token, user, "save")
        return self.q.lock_from_row(row)

    def complete(
        self,
        user: str,
        key: Any,
        token: str,
        outcome: str | None = None,
        edits: Mapping[str, Any] | None = None,
        note: str | None = None,
        *,
        then_next: bool = False,
        where: Mapping[str, Any] | None = None,
    ) -> models.Completion:
        """Finish the item with an outcome (and final edits, and a note written with it); accepted
        only under the caller's live lock. With `then_next`, the next item (narrowed by `where`, as
        claim_next) is claimed for the caller once the Complete is in, and handed back as the
        Completion's `next` (None when none could be claimed: claim_next tells why); on PostgreSQL
        the Complete and the claim are then one call, one round trip and one commit (on MySQL/MariaDB
        one transaction and one commit, the Complete sent with the claim's first batch)."""
        key = self.q.coerce_key(key)
        note = self._note_for("complete", note, outcome if outcome is not None else self.config.outcomes[0].name)
        why = self._review_choice(user, outcome)
        then = None
        if then_next and not edits and note is None and why is None:
            # On PostgreSQL the Complete and the claim in one call, one round trip and one commit; on
            # MySQL/MariaDB one transaction, the Complete sent with the claim's first batch.
            # A wrong filter is refused before anything is written.
            request = claims.ClaimRequest(user=user, where=self.q.coerce_filter(where) if where else ())
            then = writes.ThenNext(
                (outcome, request.filter_shape),
                lambda finish: self.method.finish_then_claim(self.db, self.q, self.trail, finish, request),
                request.filter_params(),
                lambda: self._may_claim(user),
            )
        try:
            name = self.config.outcome(outcome).name
        except KeyError:
            names = ", ".join(o.name for o in self.config.outcomes)
            raise errors.InvalidValue.of(problems.NO_OUTCOME, self.name, outcome, names) from None
        values = self.q.coerce_edits(edits, "complete") if edits else {}
        self._check_lookups(values)
        plain = not values and note is None and why is None
        shape = self._shapes.get(name) if plain else None
        if shape is None:
            shape = guarded.Shape.of(
                "complete", edits=tuple(values), outcome=name, note=note is not None, to_review=why is not None
            )
            if plain:
                self._shapes[name] = shape  # the common case: built and hashed once
        write = writes.Write(
            shape, key, token, user, values, detail={"columns": sorted(values)} if values else None, note=note, why=why
        )
        with self._refused_as_lost(key, token, user, "complete"):
            row, claimed = self.writer.complete(write, then)  # claimed: PASS where no claim was made
        done = self._completion(user, key, token, name, row, why)
        if not then_next or claimed is not writes.PASS:
            return done if claimed is writes.PASS else dataclasses.replace(done, next=claimed)
        if done.replayed:
            # A retry of a Complete whose reply was lost: if that call claimed the next item too (in
            # its transaction, so at the same database time), that item is the one to hand back.
            kept = next((lock for lock in self.mine(user) if lock.locked_at == done.at and not lock.expired), None)
            if kept is not None:
                return dataclasses.replace(
                    done, next=models.Claim(lock=kept, item=self.show(kept.key).item, resumed=True)
                )
        try:
            next_claim = self.claim_next(user, 1, where)[0]
        except errors.WorkbenchError:
            # The Complete is in either way: next is None, and the caller's own claim_next says why
            # (nothing waiting, a limit, the database gone meanwhile).
            return done
        return dataclasses.replace(done, next=next_claim)

    def _may_claim(self, user: str) -> bool:
        """Is `user` served by this queue (its `serves` group, if it names one)?"""
        try:
            self._check_group(user)
        except errors.NotPermitted:
            return False
        return True

    def _completion(
        self, user: str, key: Any, token: str, name: str, row: Mapping[Any, Any] | None, why: str | None
    ) -> models.Completion:
        """The Complete as written (`row`), or as first written where this was a retry after a lost
        reply; LockLost (or why else) where the caller's lock was gone."""
        at = row["wb_now"] if row is not None else None
        if at is None:
            replay = self.db.read(lambda conn: self.lost.completed_by(conn, key, token, user))
            if replay is not None and replay.outcome == name:
                # The same Complete again (a retry after a lost reply): report the first one.
                return models.Completion(
                    queue=self.name,
                    key=key,
                    owner=user,
                    token=token,
                    outcome=replay.outcome or name,
                    at=replay.at,
                    replayed=True,
                    review=self._reviewer if (replay.detail or {}).get("review") is not None else None,
                )
            raise self._lost(key, token, user, "complete")
        return models.Completion(
            queue=self.name,
            key=key,
            owner=user,
            token=token,
            outcome=name,
            at=_utc(at, self.q.local_clock),
            review=self._reviewer if why is not None else None,
        )

    @property
    def _reviewer(self) -> str | None:
        """The queue that reviews this one's completions (four eyes), if any."""
        return self.trail.to_review.queue if self.trail.to_review is not None else None

    def _review_choice(self, user: str, outcome: str | None) -> str | None:
        """Whether this Complete goes to review (four eyes), decided now: why (reviews.FIRST or SHARE), or None."""
        to_review = self.trail.to_review
        if to_review is None:
            return None
        return to_review.choose(outcome if outcome is not None else self.config.outcomes[0].name, user, self.db.read)

    # -- lookups: a column whose value is a key of another table ------------------------------

    def has_lookup(self, column: str) -> bool:
        """Is `column` (in any case) a lookup of this queue?"""
        try:
            return bool(self.q.lookups) and mapping.resolve_name(column, self.q.lookups) is not None
        except mapping.AmbiguousName:
            return False

    def lookup(self, column: str) -> lookups.Lookup:
        """The lookup of `column` (its name in any case); InvalidValue when it has none."""
        name = mapping.resolve_name(column, self.q.lookups) if self.q.lookups else None
        if name is None:
            having = ", ".join(self.q.lookups) or "none"
            raise errors.InvalidValue(
                f"{column}: not a lookup of queue {self.name} (its lookups: {having})", column=column
            )
        return self.q.lookups[name]

    def lookup_search(self, column: str, text: str, limit: int = lookups.SEARCH_LIMIT) -> list[models.Choice]:
        """The related rows a picker offers for `text`: display starting with it first, then containing it."""
        found = self.lookup(column)
        return self.db.read(lambda conn: found.search(conn, text, limit))

    def lookup_search_start(
        self, column: str, text: str, limit: int = lookups.SEARCH_LIMIT
    ) -> tuple[list[models.Choice], bool]:
        """What a picker shows at once for `text`, and whether lookup_search_inside may add rows."""
        found = self.lookup(column)
        return self.db.read(lambda conn: found.search_start(conn, text, limit))

    def lookup_search_inside(self, column: str, text: str, limit: int = lookups.SEARCH_LIMIT) -> list[models.Choice]:
        """The related rows containing `text` but not starting with it (after lookup_search_start)."""
        found = self.lookup(column)
        return self.db.read(lambda conn: found.search_inside(conn, text, limit))

    def lookup_resolve(self, column: str, keys: list[Any]) -> dict[Any, models.Choice]:
        """The related rows of these keys, by key (the form shows a stored key as its display text)."""
        found = self.lookup(column)
        return self.db.read(lambda conn: found.resolve(conn, keys))

    def lookup_value(self, column: str, raw: Any) -> Any:
        """What the command line's `--set col=TEXT` stores in a lookup column: TEXT when it is a key of
        the related table, else the key of the one row whose display is TEXT (whatever the case);
        InvalidValue names the candidates when several rows have it, or says none does."""
        found = self.lookup(column)
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            return raw

        def pick(conn: sa.Connection) -> Any:
            as_key = found.resolve(conn, [raw])
            if as_key:  # the key as the related table writes it (MariaDB's collation matches "acme" to "Acme")
                return next(iter(as_key.values())).key
            named = found.named(conn, str(raw))
            if len(named) == 1:
                return named[0].key
            if named:
                listed = "; ".join(f"{c.key} = {c.text}" for c in named)
                raise errors.InvalidValue(
                    f"{found.field}: {len(named)}{'+' if len(named) >= 10 else ''} rows of {found.label} "
                    f"are named '{raw}': {listed}; give the key instead",
                    column=found.field,
                )
            near = found.search(conn, str(raw), 5)
            hint = f"; similar: {', '.join(c.text for c in near)}" if near else ""
            raise errors.InvalidValue(
                f"{found.field}: no row of {found.label} has the key or the {found.display.name} '{raw}'{hint}",
                column=found.field,
            )

        return self.db.read(pick)

    def _check_lookups(self, values: Mapping[str, Any]) -> None:
        """Refuse a lookup value its related table does not have (before the write: one short read)."""
        looked_up = {name: v for name, v in values.items() if name in self.q.lookups}
        if looked_up:
            self.db.read(lambda conn: lookups.check_values(conn, self.q.lookups, looked_up))

    def release(self, user: str, key: Any, token: str, reason: str | None = None, note: str | None = None) -> None:
        """Give the item back to the pool (not served to this user again during the cool-down),
        with a note written with it if given (or if the queue requires one)."""
        key = self.q.coerce_key(key)
        note = self._note_for("release", note)
        writes = reason if reason in self.q.reason_writes else None  # a configured reason's own values
        shape = guarded.Shape.of("release", note=note is not None, reason_writes=writes)
        with self._refused_as_lost(key, token, user, "release"):
            row = self.writer.run(shape, key=key, token=token, user=user, reason=reason or None, note=note)
        if row is None:
            already = self.db.read(lambda conn: self.lost.released_by(conn, key, token, user))
            if not already:
                raise self._lost(key, token, user, "release")

    def defer(
        self, user: str, key: Any, token: str, until: dt.datetime, reason: str, note: str | None = None
    ) -> models.Deferral:
        """Give the item back until `until` (aware; a time still to come on the database's clock):
        nobody is served it before, then it comes first, to `user` alone for the queue's
        defer_owner_first. The release's values are written, the reason is required."""
        if not self.config.allow_defer:
            raise errors.UsageError(f"queue {self.name} does not let items be deferred (allow_defer = false)")
        key = self.q.coerce_key(key)
        reason = deferrals_mod.checked_reason(reason)
        deferrals_mod.checked_until(until, self.db_clock().utc.replace(tzinfo=dt.UTC))
        note = self._note_for("defer", note)
        shape = guarded.Shape.of("defer", note=note is not None)
        with self._refused_as_lost(key, token, user, "defer"):
            row = self.writer.run(shape, key=key, token=token, user=user, reason=reason, note=note, until=until)
        if row is None:
            done = self.db.read(lambda conn: self.trail.last_for_token(conn, key, token))
            if done is None or done.kind != models.EventKind.DEFER or done.actor != user:
                raise self._lost(key, token, user, "defer")
            # The same defer again (a retry after a lost reply): it stands as first made.
        deferral = self.db.read(lambda conn: self._deferrals().of_item(conn, key))
        assert deferral is not None
        return deferral

    def escalate(self, user: str, key: Any, token: str, reason: str) -> None:
        """Hand the item `user` holds to a supervisor, saying why (required): the lock is cleared and
        the queue's on_escalate values take it out of todo (core/workflow.py's escalate)."""
        reason = workflow.reason_given("escalate", reason)
        if not self.q.on_escalate:  # Check.ON_ESCALATE_SET
            raise errors.UsageError.of(problems.ESCALATE_NOT_SET, self.name, self.name)
        key = self.q.coerce_key(key)
        shape = guarded.Shape.of("escalate")
        with self._refused_as_lost(key, token, user, "escalate"):
            row = self.writer.run(shape, key=key, token=token, user=user, reason=reason)
        if row is None:
            done = self.db.read(lambda conn: self.trail.last_for_token(conn, key, token))
            if done is None or done.kind != models.EventKind.ESCALATE or done.actor != user:
                raise self._lost(key, token, user, "escalate")
            # The same escalate again (a retry after a lost reply): it stands as first made.

    def escalations(self, user: str | None = None) -> list[tuple[models.Event, models.Event]]:
        """The items handed to a supervisor (by `user` only, if given), newest first, each with what
        became of it: the item's newest event since (the escalate itself while it waits for one)."""
        return self.db.read(lambda conn: self.trail.escalations(conn, user))

    def deferred(self) -> list[models.Deferral]:
        """The queue's items deferred to a time still to come, soonest first."""
        if self.trail.deferrals is None:
            return []
        return self.db.read(lambda conn: self._deferrals().waiting(conn))

    def count_deferred(self) -> int:
        """How many items are deferred to a time still to come (the start page's count)."""
        if self.trail.deferrals is None:
            return 0
        return self.db.read(lambda conn: self._deferrals().count_waiting(conn))

    def _deferrals(self) -> deferrals_mod.Deferrals:
        if self.trail.deferrals is None:
            raise AssertionError("this queue was opened without its deferrals")
        return self.trail.deferrals

    def _note_for(self, transition: str, note: str | None, outcome: str | None = None) -> str | None:
        """The note to write with `transition` (core/workflow.py: "release", "defer", "complete" with
        `outcome`): checked, or None when none was given; UsageError when the transition's note rule
        (the table's, and for a configured one the queue's notes_required) requires one."""
        if note is not None and note.strip():
            return notes_mod.checked(note)
        action = outcome if outcome is not None else transition
        if workflow.needs_text(workflow.TRANSITIONS[transition].note, lambda: self.config.needs_note(action)):
            what = f"a {action}" if outcome is None else f"Complete with outcome '{action}'"
            raise errors.UsageError.of(problems.NOTE_NEEDED, self.name, what)
        return None

    # -- notes ------------------------------------------------------------------------------

    def add_note(self, user: str, key: Any, text: str) -> models.Note:
        """Add a note to an item (anyone may; notes are never changed or removed)."""
        _check_user(user)
        key = self.q.coerce_key(key)
        text = notes_mod.checked(text)

        def exists(conn: sa.Connection) -> None:
            if conn.execute(sa.select(self.q.key).where(self.q.key == key)).first() is None:
                raise self.q.no_item(key)

        calls = self._procedures()
        if calls is not None:
            self.db.read(exists)  # said as without the script (the procedure checks it again)
            return notes_mod.Notes.note(calls.call(user, "note", {"p_key": key, "p_text": text})[0])

        def write(conn: sa.Connection) -> models.Note:
            exists(conn)
            return self._notebook().add(conn, key, user, text)

        return self.db.write(write)

    def notes(self, key: Any) -> list[models.Note]:
        """An item's notes, oldest first."""
        key = self.q.coerce_key(key)
        return self.db.read(lambda conn: self._notebook().of_item(conn, key))

    def _notebook(self) -> notes_mod.Notes:
        if self.trail.notes is None:
            raise AssertionError("this queue was opened without its notes")
        return self.trail.notes

    def extend(self, user: str, key: Any, token: str) -> models.Lock:
        """Push the expiry to now + lock duration (never past max_lock_duration from the claim)."""
        q = self.q
        key = q.coerce_key(key)
        extend_to = None
        if q.shape.extend_moves_time:
            extend_to = self.db.read(lambda conn: self._moved_lock_time(conn, key, token, user))
        shape = guarded.Shape.of("extend")
        with self._refused_as_lost(key, token, user, "extend"):
            row = self.writer.run(shape, key=key, token=token, user=user, extend_until=extend_to)
        if row is None:
            refused = self.db.read(lambda conn: permissions.login_mismatch(conn, q.table, user))
            if refused is not None:
                raise refused
            lock = self.check(user, key, token, "extend")  # raises LockLost if it is not ours any more
            # Still ours, and refused: the row left the queue's work (said as for Save and Complete),
            # or the extension is at its limit.
            left = self.db.read(
                lambda conn: (
                    self.lost.elsewhere(conn, key, "extend", holder=user) if self.lost.left_work(conn, key) else None
                )
            )
            if left is not None:
                raise left
            limit = q.config.max_lock_seconds
            raise errors.ExtendLimitReached(
                f"{self.name} {key}: the lock cannot be extended beyond {_when(lock.expires_at)}"
                + (
                    f"; this queue allows at most {_minutes(limit)} per lock"
                    if limit is not None
                    else "; the database clock is behind the lock's own time"
                )
            )
        return q.lock_from_row(row)

    def _moved_lock_time(self, conn: sa.Connection, key: Any, token: str, user: str) -> Any:
        """The new lock time for a table without an expiry column: now, capped by the original claim."""
        q = self.q
        now = conn.execute(sa.select(sa.type_coerce(q.now(), sa.DateTime(timezone=q.aware)))).scalar()
        assert now is not None
        if isinstance(now, str):
            now = dt.datetime.fromisoformat(now)
        result = now
        claim = self.trail.last_claim(conn, key) if q.config.max_lock_seconds is not None else None
        if claim is not None and claim.owner == user and claim.at is not None:
            claimed_at = claim.at if q.aware else claim.at.replace(tzinfo=None)
            if q.local_clock and not q.aware:  # the trail's UTC on the lock's clock (local, a zone)
                claimed_at = stats.read_clock(conn, q).from_utc(claimed_at)
            assert q.config.max_lock_seconds is not None
            latest = claimed_at + dt.timedelta(seconds=q.config.max_lock_seconds - q.config.lock_seconds)
            result = min(now, latest)
        return result.replace(microsecond=0) if q.whole_seconds else result

    def _procedures(self) -> procedures.Procedures | None:
        """SQL Server under `workbench grants`: the queue's procedures, which alone may write (else None)."""
        return cast("procedures.Procedures | None", self.enforcement.procedures())  # the whole of them

    @contextlib.contextmanager
    def _refused_as_lost(self, key: Any, token: str, user: str, doing: str) -> Iterator[None]:
        """A write under the caller's lock that the database refused (under `workbench grants` its own
        checks, which run after the fence: a lock that ran out between the two was refused there as "not
        permitted"): when the lock is no longer the caller's, that is what is said (LockLost, exit 4, as
        the fence says it); any other refusal passes unchanged."""
        try:
            yield
        except errors.NotPermitted as refused:
            if refused.template == problems.LOGIN_MISMATCH:
                raise  # another login than the user's: said as that, whatever became of the lock
            explained = self._lost(key, token, user, doing)
            # other_queue: the caller's own live lock, so the lock was not what the database refused.
            if isinstance(explained, errors.LockLost) and explained.cause != "other_queue":
                raise explained from None
            raise

    def _lost(self, key: Any, token: str, user: str, doing: str) -> errors.WorkbenchError:
        """Why a write under the lock (`doing`: "save", "complete", …) was refused."""
        return self.db.read(
            lambda conn: (
                permissions.login_mismatch(conn, self.q.table, user) or self.lost.explain(conn, key, token, user, doing)
            )
        )

    def undo_complete(self, user: str, key: Any) -> models.Claim:
        """Take back one's own Complete within the queue's undo_within: the item gets the on_reopen
        values (its edits stay) and a fresh lock of `user`'s, as after a claim. Refused when anything
        happened to it since, or its outcome's values are not there any more."""
        _check_user(user)
        q = self.q
        if not q.on_reopen:
            raise errors.UsageError(
                f"queue {self.name} does not say how an item goes back to work: set "
                f"[queues.{self.name}.on_reopen] (undo writes those values)"
            )
        problem = q.shape.undo_problem()
        if problem is not None:
            raise errors.UsageError(
                f"undo is not available on queue {self.name}: {problem}; a supervisor can reopen the item"
            )
        key = q.coerce_key(key)
        return self.db.write(lambda conn: self._undo(conn, user, key))

    def _undo(self, conn: sa.Connection, user: str, key: Any) -> models.Claim:
        q = self.q
        now = q.now()
        calls = self._procedures()
        if calls is not None:
            # The procedure decides from the same rules (its trail and row rules) and says why it refuses.
            calls.for_user(user)
            return claims.claim_of(q, calls.run(conn, "undo", {"p_key": key}, user=user)[0])
        # The last event tells which Complete's values the row must still hold (and how a refusal is said).
        event = self.trail.last_event(conn, key)
        outcome = event.outcome if event is not None else None
        chosen = event is not None and (event.detail or {}).get("review") is not None  # the review's values too
        # The table's rules (db/rowrules.py, db/lockrules.py): the row finished, holding what this Complete
        # wrote, nobody holding it (COMPLETED_BY_CALLER, FREE); the trail's last event the caller's Complete, within
        # undo_within (LAST_OWN_COMPLETE, UNDO_WINDOW), read by the UPDATE itself.
        rule = rowrules.before(q, "undo", user=user, outcome=outcome, reviewed=chosen)
        history = rowrules.trail(q, "undo", self.trail.table, item=str(key), user=user, outcome=outcome)
        token = q.shape.new_token_value()
        writes = {
            **q.writes(q.on_reopen, user, now),
            **q.lock_writes(user, now, token),
            **q.writes(q.on_claim, user, now),
        }
        free = lockrules.guard(q, "undo", now)  # the table's lock rule (FREE), on the row before
        where = [q.key == key, *rule.scope, free, *rule.state, *(() if history is None else (history,))]
        changed = conn.execute(sa.update(q.table).where(*where).values(writes)).rowcount
        if changed != 1:
            raise self._undo_refused(conn, key, user, event)
        row = (
            conn.execute(
                sa.select(*claims.ClaimMethod.returned_columns(q, now)).where(q.key == key, q.shape.pinned(user, token))
            )
            .mappings()
            .one()
        )
        claimed = claims.Claimed(row=row, prev_owner=None, prev_token=None)
        if chosen and self.trail.to_review is not None:
            self.trail.to_review.withdraw(conn, key)  # nothing waits for review any more
        self.trail.write(
            conn,
            [
                self.trail.row(models.EventKind.UNDO, key, user, owner=user, outcome=outcome),
                *claims.ClaimMethod.audit_rows(q, self.trail, user, [claimed]),
            ],
        )
        return claims.claim_of(q, row)

    def _undo_refused(self, conn: sa.Connection, key: Any, user: str, event: models.Event | None) -> errors.UsageError:
        """Why the undo's UPDATE (which decided) refused, in the words of the rule that did, read from the
        item's last event: none, not the caller's Complete, too long ago, or the row changed since."""
        if event is None:
            return errors.UsageError.of(problems.UNDO_NOTHING, self.name, key)
        if event.kind != models.EventKind.COMPLETE or event.actor != user:
            return errors.UsageError.of(problems.UNDO_NOT_YOURS, self.name, key, event.kind.value, event.actor)
        limit = rowrules.window(self.q, "undo")
        age = (stats.read_clock(conn, self.q).utc.replace(tzinfo=dt.UTC) - event.at).total_seconds()
        if limit is not None and age > limit:
            return errors.UsageError.of(problems.UNDO_TOO_LATE, self.name, key, _minutes(round(age)), _minutes(limit))
        return errors.UsageError.of(problems.UNDO_CHANGED, self.name, key)

    def db_clock(self) -> stats.Clock:
        """The database clock now: `.now` and `.today_start` on the queue's clock (e.g. for a period)."""
        return self.db.read(lambda conn: stats.read_clock(conn, self.q))


def _check_user(user: str) -> None:
    if not user or not user.strip() or len(user) > 128:
        raise errors.UsageError("a user name is required (1 to 128 characters); pass --user NAME")


def _utc(value: Any, local: bool) -> dt.datetime:
    if isinstance(value, str):
        value = dt.datetime.fromisoformat(value)
    if value.tzinfo is None and not local:
        value = value.replace(tzinfo=dt.UTC)
    assert isinstance(value, dt.datetime)
    return value


def _when(value: dt.datetime) -> str:
    text = value.strftime("%Y-%m-%d %H:%M:%S")
    return f"{text} UTC" if value.utcoffset() == dt.timedelta(0) else text


def _minutes(seconds: int | None) -> str:
    if seconds is None:
        return "no limit"
    return f"{seconds // 60} min" if seconds >= 60 else f"{seconds} s"
