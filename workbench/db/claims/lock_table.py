"""The claim of a queue whose locks live in a separate lock table: insert the lock row, or take over an expired one."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa

from workbench.db import audit as audit_mod
from workbench.db import connect, lockshapes, mapping, rowrules
from workbench.db.claims import base, portable

WINDOW = portable.WINDOW  # candidates read per attempt


class NotWaiting(Exception):
    """The item stopped waiting between reading the candidates and locking it."""


class LockTableClaim(portable.PortableClaim):
    """The lock row's primary key (queue, item key) admits one lock per item, on every database.

    A free item is claimed by inserting its lock row (a second insert finds the key taken); an
    expired lock by rewriting its row under the token it had, so that of two claimers of one expired
    lock exactly one changes the row. Only then is the item read, and its row checked to be still
    waiting: it may have been completed between reading the candidates and taking the lock, and then
    the lock row is removed again.
    """

    name = "lock-table"

    def _attempt(
        self,
        db: connect.Database,
        q: mapping.BoundQueue,
        trail: audit_mod.AuditTrail,
        request: base.ClaimRequest,
        cand: Mapping[Any, Any],
        where: Any,
    ) -> base.Claimed | None:
        try:
            return db.write(lambda conn: self._take(conn, q, trail, request, cand))
        except (NotWaiting, lockshapes.FenceFailed):  # what was written is rolled back with the transaction
            return None

    @staticmethod
    def _item_waits(q: mapping.BoundQueue, expired: bool, user: Any) -> sa.ColumnElement[bool]:
        """The queue row may be claimed by `user`: waiting, or (for an expired lock) in the state a
        claim left it, and held through no other queue of the table (LockTable.held_elsewhere)."""
        row = rowrules.before_all(q, "claim", "pick", user=user)  # the table's CLAIMABLE
        state = row.state_for("stale" if expired else "free")
        return sa.and_(*row.scope, *state, ~LockTableClaim._shape(q).held_elsewhere(q.key, q.now()))

    @staticmethod
    def _shape(q: mapping.BoundQueue) -> lockshapes.LockTable:
        assert isinstance(q.shape, lockshapes.LockTable)
        return q.shape

    def _candidates(
        self, conn: sa.Connection, q: mapping.BoundQueue, trail: audit_mod.AuditTrail, request: base.ClaimRequest
    ) -> list[tuple[Mapping[Any, Any], Any]]:
        statements = self.built("candidates", q, request, lambda: self._lock_table_candidates(q, trail, request))
        params = self.request_params(request)
        result: list[tuple[Mapping[Any, Any], Any]] = []
        for stmt in statements:
            # In queue order: operators expect the oldest first, and a lost race costs one insert
            # that finds the key taken (no lock wait), so spreading claimers out buys little here.
            result += [(row, None) for row in conn.execute(stmt, params).mappings()]
            if len(result) >= WINDOW:
                break
        return result

    def _lock_table_candidates(
        self, q: mapping.BoundQueue, trail: audit_mod.AuditTrail, request: base.ClaimRequest
    ) -> list[sa.Select[Any]]:
        """The candidates' reads for requests shaped as `request`: user, key and filter values bound when run."""
        now = q.now()
        user = sa.bindparam("wb_user", type_=sa.String())
        key_part = [q.key == sa.bindparam("wb_key", type_=q.key.type)] if request.key is not None else []
        own = [*self.not_own_work(q, trail, user), *self.chosen(q, request.bound_filter(q))]
        free = [self._item_waits(q, False, user), q.free(), *key_part, *own]
        if request.use_cooldown and request.key is None and q.config.release_cooldown_seconds > 0:
            free.append(~self.recently_released(q, now, user, trail))
        if request.key is None and trail.deferrals is not None:  # held back until due; then in queue order
            free.append(trail.deferrals.not_held_back(q.key, user))
        # Expired locks (read from the locks, which are few), then free items, each in queue order.
        branches = [
            (
                q.locked_source,
                sa.and_(self._item_waits(q, True, user), q.user.is_not(None), q.stale(now), *key_part, *own),
            ),
            (q.source, sa.and_(*free)),
        ]
        return [
            sa.select(*self.candidate_columns(q)).select_from(source).where(where).order_by(*q.order_by()).limit(WINDOW)
            for source, where in branches
        ]

    def _still_waits(self, q: mapping.BoundQueue, expired: bool) -> sa.Select[Any]:
        """The item `wb_key` may still be claimed by `wb_user` (_item_waits), as _finish checks it; and, where
        other queues keep their locks in the table, whether a run-out lock row of theirs is left on it
        (its second column: _give_back_twins), asked in the same statement."""

        def build() -> sa.Select[Any]:
            key, user = sa.bindparam("wb_key", type_=q.key.type), sa.bindparam("wb_user", type_=sa.String())
            shape = self._shape(q)
            twins = [shape.run_out_elsewhere(q.key, q.now()).label("wb_twins")] if shape.neighbours else []
            return sa.select(q.key, *twins).where(q.key == key, self._item_waits(q, expired, user))

        return self.once(("waits", id(q), expired), build)

    def _retake(self, q: mapping.BoundQueue) -> list[sa.Executable]:
        """The take-over of an expired lock (LockTable.relock_statements): its lock row rewritten under the
        token it had (`wb_prev_token`) for the claimer (`wb_user`, `wb_token`), the item's values as
        relock_params gives them. The clock stays SQL; built once per queue, as the statements below."""
        shape = self._shape(q)

        def build() -> list[sa.Executable]:
            now, old = q.now(), shape.token_param("wb_prev_token")
            user, token = sa.bindparam("wb_user", type_=shape.user.type), shape.token_param("wb_token")
            guard = sa.and_(shape.pinned(None, old), q.stale(now))
            return shape.relock_statements(q.table, q.key, guard, q.lock_writes(user, now, token))

        return self.once(("retake", id(q)), build)

    def _stamp(self, conn: sa.Connection, q: mapping.BoundQueue, key: Any, token: Any, prev_token: Any) -> bool:
        """LockTable.stamp, its statement built once per queue (one for a free item, one for an expired lock)."""
        shape, retaken = self._shape(q), prev_token is not None
        stmt = self.once(("stamp", id(q), retaken), lambda: shape.stamp_statement(q.table, q.key, retaken=retaken))
        return stmt is None or conn.execute(stmt, shape.stamp_params(key, token, prev_token)).rowcount == 1

    def _after_lock(self, q: mapping.BoundQueue) -> tuple[sa.Executable | None, sa.Executable | None, sa.Select[Any]]:
        """What _finish runs around its check, built once per queue with the item (`wb_key`), the claimer
        (`wb_user`: on_claim may write it) and the token (`wb_token`) bound by name, the clock as SQL: the
        queue row's lock where neighbours share it (None: none do), the on_claim write (None: nothing to
        write), the claimed row's read-back."""
        shape = self._shape(q)

        def build() -> tuple[sa.Executable | None, sa.Executable | None, sa.Select[Any]]:
            now, key = q.now(), q.key == sa.bindparam("wb_key", type_=q.key.type)
            user: sa.BindParameter[Any] = sa.bindparam("wb_user")
            token = shape.token_param("wb_token")
            row_lock = q.backend.lock_row(sa.select(q.key).where(key), q.table) if shape.neighbours else None
            # The user untyped: each column on_claim writes it to gives it its type, as a plain value had.
            on_claim = sa.update(q.table).where(key).values(q.writes(q.on_claim, user, now)) if q.on_claim else None
            columns = self.returned_columns(q, now)
            read_back = sa.select(*columns).select_from(q.source).where(key, shape.pinned(user, token))
            return row_lock, on_claim, read_back

        return self.once(("after lock", id(q)), build)

    def _twin_statements(self, q: mapping.BoundQueue) -> tuple[sa.Select[Any], dict[str, sa.Delete]]:
        """_give_back_twins' statements, built once per queue: the neighbours' run-out lock rows of item
        `wb_item`, and per neighbour the delete of one of them (`wb_token`) where it is still run out and its
        item still that neighbour's work (expire's row rule, LockTable.neighbour_held)."""
        shape = self._shape(q)

        def build() -> tuple[sa.Select[Any], dict[str, sa.Delete]]:
            locks, now = shape.locks, q.now()
            item = locks.c.item_key == sa.bindparam("wb_item", type_=locks.c.item_key.type)
            queues = [sa.literal(name, literal_execute=True) for name in shape.neighbours]
            c = locks.c
            rows = sa.select(c.queue, c.lock_user, c.token, c.locked_at).where(
                c.queue.in_(queues), item, shape.expired(now)
            )
            token, key = shape.token_param("wb_token"), q.key == sa.bindparam("wb_key", type_=q.key.type)
            deletes = {
                name: sa.delete(locks).where(
                    c.queue == sa.literal(name, literal_execute=True),
                    item,
                    c.token == token,
                    shape.expired(now),
                    sa.exists().where(key, shape.neighbour_held.get(name, sa.true())),
                )
                for name in shape.neighbours
            }
            return rows, deletes

        return self.once(("twins", id(q)), build)

    def _give_back_twins(
        self, conn: sa.Connection, q: mapping.BoundQueue, trail: audit_mod.AuditTrail, key: Any, user: str
    ) -> list[dict[str, Any]]:
        """Give back the neighbours' run-out lock rows of the item this claim takes (each an expire its claim
        noticed, recorded in that queue, as a claim of a run-out lock of its own queue records it): left
        beside this claim's lock, such a row would outlive the item's stay in the work (an escalate, a
        Complete) and keep a take, reopen or move off it, nobody's to delete (expire's row rule, HELD).
        Runs before on_claim's write, over the item as its holder left it; the item is not written (the
        claim's values follow, as after a claim of a run-out lock of this queue). The audit rows."""
        shape = self._shape(q)
        rows, deletes = self._twin_statements(q)
        item = shape.key_text(key)
        given: list[dict[str, Any]] = []
        for queue, owner, token, time in conn.execute(rows, {"wb_item": item}).all():
            params = {"wb_item": item, "wb_key": key, "wb_token": shape.bound_token(token)}
            if conn.execute(deletes[queue], params).rowcount == 1:  # else: freed meanwhile, or not its to free
                expire = self.expiry_noticed(trail, key, user, owner, shape.prev_token(owner, token, time))
                given.append({**expire, "queue": queue})
        return given

    def _take(
        self,
        conn: sa.Connection,
        q: mapping.BoundQueue,
        trail: audit_mod.AuditTrail,
        request: base.ClaimRequest,
        cand: Mapping[Any, Any],
    ) -> base.Claimed | None:
        shape = self._shape(q)
        key, user = cand["wb_ckey"], request.user
        token = shape.new_token_value()
        prev = cand["wb_prev_token"]
        if cand["wb_prev_owner"] is not None:  # expired
            bound = {"wb_user": user, "wb_token": token, "wb_prev_token": shape.bound_token(prev)}
            if not shape.run_guarded(conn, self._retake(q), {**shape.relock_params(key, token, prev), **bound}):
                return None
        elif not q.backend.insert_new(conn, q.lock_insert, shape.new_lock_params(key, user, token)):
            return None
        elif not self._stamp(conn, q, key, token, None):
            raise NotWaiting  # another program set the row's claim id meanwhile
        return self._finish(conn, q, trail, request, cand, token)

    def _finish(
        self,
        conn: sa.Connection,
        q: mapping.BoundQueue,
        trail: audit_mod.AuditTrail,
        request: base.ClaimRequest,
        cand: Mapping[Any, Any],
        token: str,
    ) -> base.Claimed:
        """The lock row is ours: check the item still waits, write on_claim, read it, audit the claim.

        The check is a statement of its own, after the lock row is in: the statement that read the
        item as waiting may have done so before another claimer took it, finished it and deleted
        its lock row, all before this claim's insert (which then met no conflict).
        """
        user = request.user
        params = {"wb_key": cand["wb_ckey"], "wb_user": user, "wb_token": token}
        row_lock, on_claim, read_back = self._after_lock(q)
        if row_lock is not None:
            # The primary key keeps two locks of one queue from a row, not a lock of this queue from a
            # neighbour's: the row's own lock makes a claim through a neighbour wait until this one
            # ends, and the check below (a statement of its own, so it sees what committed meanwhile)
            # then finds whichever lock came first.
            conn.execute(row_lock, params)
        waits = conn.execute(self._still_waits(q, cand["wb_prev_owner"] is not None), params).first()
        if waits is None:
            # Completed (or changed by another program, or held through a neighbour) since the candidates
            # were read: not ours to take. Raising rolls the lock row back with the transaction.
            raise NotWaiting
        # A neighbour's run-out lock row of the item (rare: one column of the check above says so) goes back.
        given = self._give_back_twins(conn, q, trail, cand["wb_ckey"], user) if len(waits) > 1 and waits[1] else []
        if on_claim is not None:
            conn.execute(on_claim, params)
        row = conn.execute(read_back, params).mappings().one()
        claimed = base.Claimed(row=row, prev_owner=cand["wb_prev_owner"], prev_token=self.prev_token(q, cand))
        trail.write(conn, [*given, *self.audit_rows(q, trail, user, [claimed])])
        return claimed
