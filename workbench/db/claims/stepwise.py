"""Claims in one short transaction of a few statements: SQLite (BEGIN IMMEDIATE) and MySQL/MariaDB (SKIP LOCKED)."""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa

from workbench.db import audit as audit_mod
from workbench.db import connect, dberrors, mapping
from workbench.db.claims import base

WINDOW = 16
WINDOW_ROUNDS = 3


@dataclasses.dataclass(frozen=True)
class _Statements:
    """The statements of one claim shape, built once; values are bound when they run."""

    expired: sa.Select[Any]
    due: sa.Select[Any] | None  # deferred items whose time has come
    free: list[sa.Select[Any]]  # one per IN-list value when merging, else one
    merge: bool
    window: sa.Select[Any] | None  # unlocked head of the queue (filters no index can order)
    lock_one: sa.Select[Any] | None  # lock one window row by key
    update: sa.Update
    read_back: sa.Select[Any] | None  # without UPDATE … RETURNING


class StepwiseClaim(base.ClaimMethod):
    """Pick candidate keys, write the lock on exactly those rows, read them back, audit; one transaction.

    Atomic because the candidates are protected for the whole transaction: by the database-wide
    write lock taken with BEGIN IMMEDIATE on SQLite, by row locks taken with SELECT … FOR UPDATE
    SKIP LOCKED on MySQL 8 / MariaDB 10.6+ (rows another claimer holds are skipped, not waited for).
    Statements are built once per shape and outside the write transaction, which on SQLite holds
    the whole database. The UPDATE checks the claim condition again and must change every
    candidate, or the transaction is rolled back and tried again, so a database that does not
    really lock (TiDB) still never hands one row to two people.
    """

    def __init__(self, *, lock_candidates: bool, returning: bool, name: str, stamps_audit: bool = False) -> None:
        super().__init__()
        self.lock_candidates, self.returning, self.name = lock_candidates, returning, name
        # The audit rows carry the lock's time as read back (stamped_audit), not their own statement's clock.
        self.stamps_audit = stamps_audit

    def claim(
        self, db: connect.Database, q: mapping.BoundQueue, trail: audit_mod.AuditTrail, request: base.ClaimRequest
    ) -> list[base.Claimed]:
        if not q.config.max_locks_per_user:
            self.statements(q, trail, request, request.count)  # build before taking the write lock
        return db.write(lambda conn: self._claim(conn, q, trail, request))

    def statements(
        self, q: mapping.BoundQueue, trail: audit_mod.AuditTrail, request: base.ClaimRequest, need: int
    ) -> _Statements:
        shape = ("statements", id(q), request.key is not None, request.use_cooldown, need, request.filter_shape)
        return self.once(shape, lambda: self._build(q, trail, request, need))

    def _build(
        self, q: mapping.BoundQueue, trail: audit_mod.AuditTrail, request: base.ClaimRequest, need: int
    ) -> _Statements:
        now = q.now()
        user = sa.bindparam("wb_user", type_=sa.String())
        shaped = base.ClaimRequest(
            user=user,  # type: ignore[arg-type]  # bound at execution
            count=need,
            key=sa.bindparam("wb_key", type_=q.key.type) if request.key is not None else None,
            use_cooldown=request.use_cooldown,
            where=request.bound_filter(q),
        )
        expired, *due, free = self.branches(q, now, shaped, trail)

        def pick(where: sa.ColumnElement[bool], with_order: bool = False) -> sa.Select[Any]:
            stmt = (
                sa.select(*self.candidate_columns(q, with_order=with_order))
                .where(where)
                .order_by(*q.order_by())
                .limit(need)
            )
            return stmt.with_for_update(skip_locked=True) if self.lock_candidates else stmt

        window = lock_one = None
        merge = False
        frees = [pick(free)]
        # A locking read keeps the lock of every row it read and then left out for a subquery's sake
        # (InnoDB, even under READ COMMITTED): in a reviewing queue, a claim that passes over the
        # claimer's own work would hide it from everyone else until it commits. So such queues, like
        # those no index orders, read the head without locks and lock rows one by one.
        if self.lock_candidates and (not q.index_ordered or trail.reviews is not None):
            window = sa.select(q.key).where(free).order_by(*q.order_by()).limit(WINDOW)
            lock_one = (
                sa.select(*self.candidate_columns(q))
                .where(q.key == sa.bindparam("wb_one", type_=q.key.type), free)
                .with_for_update(skip_locked=True)
            )
        elif self.lock_candidates:
            variants = self.free_variants(q, now, shaped, trail)
            merge = len(variants) > 1
            frees = [pick(v, with_order=merge) for v in variants]
        keys = q.key.in_(sa.bindparam("wb_keys", expanding=True, type_=q.key.type))
        writes = {**q.lock_writes(user, now, q.shape.new_token()), **q.writes(q.on_claim, user, now)}
        # The UPDATE checks again that each row may still be claimed (defence in depth): an engine
        # that accepts FOR UPDATE SKIP LOCKED without locking (TiDB) cannot hand one row to two people.
        update = sa.update(q.table).where(keys, sa.or_(expired, *due, free)).values(writes)
        read_back = None
        if self.returning:
            update = update.returning(*self.returned_columns(q, now))
        else:
            read_back = sa.select(*self.returned_columns(q, now)).where(keys)
        return _Statements(
            expired=pick(expired),
            due=pick(due[0]) if due else None,
            free=frees,
            merge=merge,
            window=window,
            lock_one=lock_one,
            update=update,
            read_back=read_back,
        )

    def _claim(
        self, conn: sa.Connection, q: mapping.BoundQueue, trail: audit_mod.AuditTrail, request: base.ClaimRequest
    ) -> list[base.Claimed]:
        room = self.room(conn, q, request)
        s = self.statements(q, trail, request, room)
        params: dict[str, Any] = {"wb_user": request.user, **request.filter_params()}
        if request.key is not None:
            params["wb_key"] = request.key
        candidates = self.candidates(conn, q, s, params, room)
        if not candidates:
            return []
        keys = [c["wb_ckey"] for c in candidates]
        values = {**params, "wb_keys": keys}
        if s.read_back is None:
            rows = conn.execute(s.update, values).mappings().all()
            changed = len(rows)
        else:
            changed = conn.execute(s.update, values).rowcount
            rows = conn.execute(s.read_back, {"wb_keys": keys}).mappings().all()
        if changed != len(keys):
            # A candidate was taken by someone else after we read it, so the database did not hold
            # the row lock; roll back and pick again (Database.write retries a Busy transaction).
            raise dberrors.Busy(f"{q.name}: a row was claimed by someone else while this claim read it")
        by_key = {c["wb_ckey"]: c for c in candidates}
        claimed = [
            base.Claimed(
                row=row,
                prev_owner=by_key[row["wb_key"]]["wb_prev_owner"],
                prev_token=self.prev_token(q, by_key[row["wb_key"]]),
            )
            for row in rows
        ]
        order = {key: i for i, key in enumerate(keys)}
        claimed.sort(key=lambda c: order[c.row["wb_key"]])
        trail.write(conn, self.audit_rows(q, trail, request.user, claimed, at_lock_time=self.stamped_audit(q)))
        return claimed

    def stamped_audit(self, q: mapping.BoundQueue) -> bool:
        """Do the claim's audit rows carry the lock's time? Where the clock is read per statement
        (MySQL/MariaDB: UTC_TIMESTAMP(6) in the UPDATE, again in the later INSERT), the claim's audit
        time would be its own, later; the lock's time, read back, is the claim's. Only where the lock
        time is UTC as the trail keeps it (not a server-local clock, not a zoned column)."""
        return self.stamps_audit and not q.local_clock and not q.aware

    def candidates(
        self, conn: sa.Connection, q: mapping.BoundQueue, s: _Statements, params: dict[str, Any], room: int
    ) -> list[Any]:
        """Up to `room` claimable rows, locked for this transaction where the database can: expired
        locks first, then free rows in queue order."""
        candidates: list[Any] = list(conn.execute(s.expired, params).mappings().all())
        if s.due is not None and len(candidates) < room:
            candidates += conn.execute(s.due, params).mappings().all()[: room - len(candidates)]
        need = room - len(candidates)
        if need > 0:
            if s.window is not None:
                candidates += self._windowed(conn, s, params, need)
            elif s.merge:
                # One index-ordered locking read per IN-list value, merged in queue order: MySQL has
                # no partial index, and `status IN ('new', 'open')` would make every claim sort all
                # waiting rows. Rows locked but not used are held only until this commit.
                rows: list[Mapping[Any, Any]] = [
                    row for stmt in s.free for row in conn.execute(stmt, params).mappings().all()
                ]
                candidates += base.sort_candidates(q, rows)[:need]
            else:
                candidates += conn.execute(s.free[0], params).mappings().all()[:need]
        return candidates

    def _windowed(self, conn: sa.Connection, s: _Statements, params: dict[str, Any], need: int) -> list[Any]:
        """Lock `need` rows near the head of the queue when no index returns them in order.

        A locking read that has to sort locks every row it sorts, until commit, so SKIP LOCKED
        would make every other claimer find nothing. Instead the head is read without locks and
        the rows are then locked one by one by key (each a primary-key lookup; taken ones are
        skipped, and the predicate is checked again on the latest committed row).
        """
        assert s.window is not None and s.lock_one is not None
        got: list[Any] = []
        tried: set[Any] = set()
        for _ in range(WINDOW_ROUNDS):
            window = conn.execute(s.window, params).scalars().all()
            fresh = [key for key in window if key not in tried]
            if not fresh:
                break
            for key in fresh:
                tried.add(key)
                row = conn.execute(s.lock_one, {**params, "wb_one": key}).mappings().first()
                if row is not None:
                    got.append(row)
                    if len(got) >= need:
                        return got
            if len(window) < WINDOW:
                break
        return got


def sqlite_claim() -> StepwiseClaim:
    # UPDATE … RETURNING needs SQLite 3.35 (2021); older builds read the rows back instead.
    returning = sqlite3.sqlite_version_info >= (3, 35, 0)
    return StepwiseClaim(lock_candidates=False, returning=returning, name="immediate")


def mysql_claim() -> StepwiseClaim:
    # MySQL and MariaDB have no UPDATE … RETURNING: read the locked rows back in the transaction.
    return StepwiseClaim(lock_candidates=True, returning=False, name="select-skip-locked", stamps_audit=True)
