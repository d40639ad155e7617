"""PostgreSQL: one statement picks rows FOR NO KEY UPDATE SKIP LOCKED, locks them and writes the audit rows."""

from __future__ import annotations

import typing
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa

from workbench.core import models
from workbench.db import audit as audit_mod
from workbench.db import clock, connect, fastpath, guarded, lockshapes, mapping, writes
from workbench.db.claims import base, lock_table, pg_next, portable


class SkipLockedClaim(base.ClaimMethod):
    """`WITH cand AS (SELECT … FOR NO KEY UPDATE SKIP LOCKED) UPDATE … FROM cand RETURNING …`.

    Runs in autocommit: the single statement is its own transaction, so a claim is one round
    trip, and the audit rows are inserted by data-modifying CTEs of the same statement. Next item
    and a Complete with then_next run by the way pg_next.py chooses for the queue, which may run the
    same pieces another way.
    """

    name = "skip-locked"

    def lock_table_claim(self) -> base.ClaimMethod:
        return LockTableSkipLocked()

    def __init__(self) -> None:
        super().__init__()
        self._next: dict[tuple[int, int], _NextClaims] = {}

    def claim_next(
        self, db: connect.Database, q: mapping.BoundQueue, trail: audit_mod.AuditTrail, user: str, count: int
    ) -> list[models.Claim]:
        # The hot path (Next item): the statement's rows go straight into Claims, without the
        # dicts and records claim() builds for every caller.
        reader = self._next.get((id(q), count))
        if reader is None:
            if not q.shape.all_in_row or (q.config.max_locks_per_user and count > 1):
                return super().claim_next(db, q, trail, user, count)
            request = base.ClaimRequest(user=user, count=count)
            check_limit = bool(q.config.max_locks_per_user)

            def statement() -> fastpath.FastStatement:
                return self._fast_statement(db, q, trail, request, count, check_limit)

            exact = _NextClaims.reads_lock_time(q)
            reader = _NextClaims(q, pg_next.call(self, db, q, trail, request, check_limit, statement, exact_time=exact))
            self._next[(id(q), count)] = reader
        try:
            return reader.claims(user)
        except writes.Gone:
            # The way it was chosen with went away while this process ran (`workbench grants --revoke`).
            del self._next[(id(q), count)]
            return self.claim_next(db, q, trail, user, count)

    def prepare(self, db: connect.Database, q: mapping.BoundQueue, trail: audit_mod.AuditTrail) -> None:
        pg_next.prepare(self, db, q, trail)

    def finish_then_claim(
        self,
        db: connect.Database,
        q: mapping.BoundQueue,
        trail: audit_mod.AuditTrail,
        finish: object,
        request: base.ClaimRequest,
    ) -> base.FinishThenClaim | None:
        if not isinstance(finish, sa.Select) or not (q.shape.all_in_row and q.shape.token_in_row):
            return None
        check_limit = bool(q.config.max_locks_per_user)

        def statement() -> fastpath.FastStatement:
            stmt = self._build(q, trail, request, 1, check_limit, after=finish.cte("wb_done"))
            return fastpath.FastStatement(db.held, stmt, {**guarded.FINISH_SAMPLE, **request.filter_params()})

        call = pg_next.after_finish(self, db, q, trail, request, check_limit, statement, finish)
        return None if call is None else _NextClaims(q, call).after_finish

    def claim(
        self, db: connect.Database, q: mapping.BoundQueue, trail: audit_mod.AuditTrail, request: base.ClaimRequest
    ) -> list[base.Claimed]:
        count, check_limit = request.count, bool(q.config.max_locks_per_user)
        if check_limit and count > 1:
            # Several at once under a per-user limit: find the room first (a rare, second round trip),
            # so that the one statement can keep a constant LIMIT.
            count = db.read(lambda conn: self.room(conn, q, request))
            check_limit = False
        params: dict[str, Any] = {"wb_user": request.user, **request.filter_params()}
        if request.key is not None:
            params["wb_key"] = request.key
        if not q.shape.token_in_row:
            # No token column to copy in SQL: the audit rows follow in the same transaction (with
            # `workbench grants` the database refuses a claim that commits without them).
            stmt = self.statement(q, trail, request, count=count, check_limit=check_limit)
            return db.write(lambda conn: self._claim_then_audit(conn, q, trail, request.user, stmt, params))
        fast = self._fast_statement(db, q, trail, request, count, check_limit)
        return self._claimed(q, [q.with_lock_aliases(row) for row in fast.run(params)])

    def _claim_then_audit(
        self,
        conn: sa.Connection,
        q: mapping.BoundQueue,
        trail: audit_mod.AuditTrail,
        user: str,
        stmt: sa.Executable,
        params: dict[str, Any],
    ) -> list[base.Claimed]:
        claimed = self._claimed(q, [q.with_lock_aliases(dict(row)) for row in conn.execute(stmt, params).mappings()])
        trail.write(conn, self.audit_rows(q, trail, user, claimed))
        return claimed

    def _claimed(self, q: mapping.BoundQueue, rows: list[dict[str, Any]]) -> list[base.Claimed]:
        return [
            base.Claimed(row=row, prev_owner=row["wb_prev_owner"], prev_token=self.prev_token(q, row)) for row in rows
        ]

    def _fast_statement(
        self,
        db: connect.Database,
        q: mapping.BoundQueue,
        trail: audit_mod.AuditTrail,
        request: base.ClaimRequest,
        count: int,
        check_limit: bool,
    ) -> fastpath.FastStatement:
        def build() -> fastpath.FastStatement:
            stmt = self.statement(q, trail, request, count=count, check_limit=check_limit)
            sample = {
                "wb_user": request.user,
                **({"wb_key": request.key} if request.key is not None else {}),
                **request.filter_params(),
            }
            return fastpath.FastStatement(db.held, stmt, sample)

        return self.once(("fast", *_shape(q, request, count, check_limit)), build)

    def statement(
        self,
        q: mapping.BoundQueue,
        trail: audit_mod.AuditTrail,
        request: base.ClaimRequest,
        *,
        count: int | None = None,
        check_limit: bool | None = None,
    ) -> sa.Select[Any]:
        """The claim statement for `count` items (cached per queue and request shape)."""
        count = request.count if count is None else count
        check_limit = bool(q.config.max_locks_per_user) if check_limit is None else check_limit
        shape = ("claim", *_shape(q, request, count, check_limit))
        return self.once(shape, lambda: self._build(q, trail, request, count, check_limit))

    def _build(
        self,
        q: mapping.BoundQueue,
        trail: audit_mod.AuditTrail,
        request: base.ClaimRequest,
        count: int,
        check_limit: bool,
        *,
        user: Any = None,
        table_row: bool = False,
        after: sa.CTE | None = None,
    ) -> sa.Select[Any]:
        """The claim statement; with `after` (a Complete's statement as a CTE returning wb_now) one
        that claims only if the Complete matched its row, returning one row either way then (the
        claimed item's columns NULL when nothing was claimed) and the Complete's time as wb_done_at."""
        now = q.now()
        user = sa.bindparam("wb_user", type_=sa.String()) if user is None else user
        shaped = base.ClaimRequest(
            user="",
            key=sa.bindparam("wb_key", type_=q.key.type) if request.key is not None else None,
            use_cooldown=request.use_cooldown,
            where=request.bound_filter(q),
        )
        # A constant LIMIT: with a parameter there, PostgreSQL cannot trust a generic plan for the
        # prepared statement and re-plans this statement on every execution (measured: ~3 ms).
        limit = sa.bindparam("wb_count", count, type_=sa.Integer(), literal_execute=True)
        # After a Complete in the same statement, the lock it clears still counts in its snapshot.
        extra = self.limit_checks(q, user, now, check_limit, completed_before=after is not None)
        if after is not None:
            # An InitPlan: evaluated once, before any candidate row is read or locked.
            extra.append(sa.exists(sa.select(after.c.wb_now)))
        branches = [
            self.pick(q, where, extra, limit).cte(f"wb_branch{i}").prefix_with("MATERIALIZED")
            for i, where in enumerate(self._branches(q, now, shaped, trail, user))
        ]
        return self.write(q, trail, self.merged(branches, limit), user, count=count, table_row=table_row, after=after)

    @staticmethod
    def merged(branches: list[sa.CTE], limit: Any) -> sa.CTE:
        """The candidates: the one branch's, or the branches' together, at most `limit` of them."""
        if len(branches) == 1:
            return branches[0]
        merged = sa.union_all(*(sa.select(b) for b in branches)).subquery("wb_merged")
        return sa.select(merged).limit(limit).cte("wb_cand")

    @staticmethod
    def limit_checks(
        q: mapping.BoundQueue, user: Any, now: sa.ColumnElement[Any], check_limit: bool, *, completed_before: bool
    ) -> list[sa.ColumnElement[bool]]:
        """The claimer's live locks under the queue's limit (when `check_limit`); `completed_before`:
        one of them is being completed in the same snapshot and does not count."""
        if not check_limit:
            return []
        held = base.ClaimMethod.held_count(q, now, user)
        limit = q.config.max_locks_per_user + (1 if completed_before else 0)
        return [held < sa.bindparam("wb_limit", limit, type_=sa.Integer(), literal_execute=True)]

    def pick(
        self, q: mapping.BoundQueue, where: sa.ColumnElement[bool], extra: list[sa.ColumnElement[bool]], limit: Any
    ) -> sa.Select[Any]:
        """One branch's rows, first in queue order, locked (FOR NO KEY UPDATE SKIP LOCKED)."""
        return (
            sa.select(*self.candidate_columns(q))
            .where(where, *extra)
            .order_by(*q.order_by())
            .limit(limit)
            .with_for_update(skip_locked=True, key_share=True)
        )

    def write(
        self,
        q: mapping.BoundQueue,
        trail: audit_mod.AuditTrail,
        cand: sa.CTE,
        user: Any,
        *,
        count: int = 1,
        table_row: bool = False,
        after: sa.CTE | None = None,
    ) -> sa.Select[Any]:
        """The lock written on the rows of `cand` (picked and locked already) and the audit rows, the
        rows as they are now returned (see _build)."""
        now = q.now()
        writes = {**q.lock_writes(user, now, q.shape.new_token()), **q.writes(q.on_claim, user, now)}
        # The row's own columns carry the lock (see with_lock_aliases); only the clock is extra.
        returning = [*q.table.c, now.label("wb_now"), cand.c.wb_prev_owner, cand.c.wb_prev_token, cand.c.wb_prev_time]
        upd = sa.update(q.table).where(q.key == cand.c.wb_ckey).values(writes).returning(*returning).cte("wb_locked")
        stmt = sa.select(*(upd.c[c.name] for c in q.table.c)) if table_row else sa.select(upd)
        if after is not None:
            stmt = sa.select(upd, after.c.wb_now.label("wb_done_at")).select_from(after.outerjoin(upd, sa.true()))
        if count > 1:
            # RETURNING comes back in no particular order; hand several items out in queue order.
            stmt = stmt.order_by(
                *[upd.c[col.name].desc() if desc else upd.c[col.name] for col, desc in q.order], upd.c[q.key.name]
            )
        if q.shape.token_in_row:
            stmt = stmt.add_cte(self._audit_cte(q, trail, upd, user))
        return stmt

    def _branches(
        self,
        q: mapping.BoundQueue,
        now: sa.ColumnElement[Any],
        shaped: base.ClaimRequest,
        trail: audit_mod.AuditTrail,
        user: sa.ColumnElement[Any],
    ) -> list[sa.ColumnElement[bool]]:
        # Same predicates as the other methods, with the user bound once for the whole statement.
        return self.branches(q, now, shaped, trail, user=user)

    @staticmethod
    def _audit_cte(
        q: mapping.BoundQueue, trail: audit_mod.AuditTrail, upd: sa.CTE, user: sa.ColumnElement[Any]
    ) -> sa.CTE:
        a = trail.table
        at = clock.db_now()
        key = sa.cast(upd.c[q.key.name], sa.String(200))

        def constant(value: Any) -> sa.BindParameter[Any]:
            return sa.literal(value, literal_execute=True)  # part of the statement text, not a parameter

        expired = sa.select(
            constant(q.name),
            key,
            constant(models.EventKind.EXPIRE.value),
            user,
            upd.c.wb_prev_owner,
            q.backend.token_digest(upd.c.wb_prev_token),
            at,
            constant('{"noticed_by": "claim"}'),
            constant(1).label("wb_seq"),
        ).where(upd.c.wb_prev_owner.is_not(None))
        assert q.token is not None  # audit rows are written here only when the token is a column of the row
        token_name = q.token.name
        claimed = sa.select(
            constant(q.name),
            key,
            constant(models.EventKind.CLAIM.value),
            user,
            user,
            q.backend.token_digest(q.shape.as_text(upd.c[token_name])),
            at,
            sa.null(),
            constant(2).label("wb_seq"),
        )
        both = sa.union_all(expired, claimed).subquery("wb_events")
        # Expiry before claim, so the item's history reads in the order things happened: UNION
        # ALL yields its branches in order in PostgreSQL's executor, so no sort is needed for it.
        ordered = sa.select(*list(both.c)[:-1])
        cols = ["queue", "item_key", "event", "actor", "owner", "token", "at", "detail"]
        return sa.insert(a).from_select(cols, ordered).cte("wb_audit")


def _shape(q: mapping.BoundQueue, request: base.ClaimRequest, count: int, check_limit: bool) -> tuple[Any, ...]:
    """What a claim statement is built for: the queue, the request's shape, how many items, the limit checked."""
    return (id(q), request.key is not None, request.use_cooldown, count, check_limit, request.filter_shape)


class _NextClaims:
    """claim_next's statement for one queue and count, and its rows turned into Claims.

    The statement returns the table's columns first (the item), then the lock's clock reading;
    their positions are read once from the first result.
    """

    def __init__(self, q: mapping.BoundQueue, fast: pg_next.Call) -> None:
        self.q, self.fast = q, fast
        self.time = q.time_reader()
        self._items = [c.name for c in q.table.c]
        self._at: tuple[int, ...] | None = None
        self._done_at: tuple[int, int] | None = None  # after_finish's: the Complete's time, the item's key
        # The lock time is the statement's now(), the same reading as wb_now, unless the column
        # rounds it (timestamp(0)); then wb_now is read as well.
        self._now_is_lock_time = self.reads_lock_time(q)

    @staticmethod
    def reads_lock_time(q: mapping.BoundQueue) -> bool:
        """Is the lock time as stored the claim's time (not rounded), so that wb_now is not needed?"""
        precision = getattr(q.time.type, "precision", None)
        return precision is None or precision >= 6

    def claims(self, user: str) -> list[models.Claim]:
        return self._claims(self.fast.rows({"wb_user": user}))

    def after_finish(self, values: Mapping[str, Any]) -> tuple[Any, models.Claim | None] | None:
        """Run the statement built with a Complete before the claim (finish_then_claim)."""
        rows = self.fast.rows(values)
        if not rows:
            return None  # the Complete's fence failed; nothing was claimed
        if self._done_at is None:
            columns = self.fast.columns
            self._done_at = (columns.index("wb_done_at"), columns.index(self.q.key.name))
        at, key = self._done_at
        if rows[0][key] is None:
            return rows[0][at], None  # completed; nothing to claim (the outer join's empty side)
        return rows[0][at], self._claims(rows)[0]

    def _claims(self, rows: list[tuple[Any, ...]]) -> list[models.Claim]:
        if not rows:
            return []
        if self._at is None:
            where = {name: i for i, name in enumerate(self.fast.columns)}
            q = self.q
            assert q.expires is not None and q.token is not None
            self._at = tuple(
                where.get(name, 0)
                for name in (q.key.name, q.user.name, q.time.name, q.expires.name, q.token.name, "wb_now")
            )
        key, user_at, time_at, expires_at, token_at, now_at = self._at
        name, items, time, same = self.q.name, self._items, self.time, self._now_is_lock_time
        claims = []
        for row in rows:  # positional arguments: Lock(queue, key, owner, token, locked_at, expires_at, db_now)
            locked = time(row[time_at])
            lock = models.Lock(
                name,
                row[key],
                row[user_at],
                str(row[token_at]),
                locked,
                time(row[expires_at]),
                locked if same else time(row[now_at]),
            )
            claims.append(models.Claim(lock, dict(zip(items, row, strict=False))))
        return claims


class LockTableSkipLocked(lock_table.LockTableClaim):
    """Shapes 5 and 6 on PostgreSQL: one statement finds the item and writes its lock row.

    An expired lock of a waiting item is taken over first (its lock row read FOR UPDATE SKIP LOCKED
    and rewritten); otherwise the head of the queue is read in order, and the first item whose
    transaction-scoped advisory lock can be taken gets a new lock row (ON CONFLICT DO NOTHING: a lock
    row committed meanwhile wins). The advisory lock is what SKIP LOCKED is to a row: concurrent
    claimers pass over each other's items instead of colliding on one, without locking (or needing
    any right to write) the queue's own rows (unless other queues of the table keep their locks here:
    see LockTableClaim._finish). The rest (the item still waits, on_claim, the row read
    back, the audit rows) follows in the same transaction, as for every database.
    """

    name = "lock-table-skip-locked"

    def claim(
        self, db: connect.Database, q: mapping.BoundQueue, trail: audit_mod.AuditTrail, request: base.ClaimRequest
    ) -> list[base.Claimed]:
        if request.key is not None:  # one named item: nothing to choose, the portable path is as short
            return super().claim(db, q, trail, request)
        claimed: list[base.Claimed] = []
        room = db.read(lambda conn: self.room(conn, q, request))
        misses = 0
        while len(claimed) < room and misses < portable.ROUNDS:
            try:
                taken = db.write(lambda conn: self._take_next(conn, q, trail, request))
            except (lock_table.NotWaiting, lockshapes.FenceFailed):  # rolled back with the transaction
                taken = None
            if taken is not None:
                claimed.append(taken)
                continue
            # Lost a race (a lock row committed after this statement's snapshot, or the item was
            # finished meanwhile), or nothing waits: only the candidates can tell which.
            if not db.read(lambda conn: self._candidates(conn, q, trail, request)):
                break
            misses += 1
        return claimed

    def _take_next(
        self, conn: sa.Connection, q: mapping.BoundQueue, trail: audit_mod.AuditTrail, request: base.ClaimRequest
    ) -> base.Claimed | None:
        shape = q.shape
        assert isinstance(shape, lockshapes.LockTable)
        token = shape.new_token_value()
        params = {"wb_user": request.user, "wb_token": token, **request.filter_params()}
        row = conn.execute(self._statement(q, trail, request), params).mappings().first()
        if row is None:
            return None
        cand = {**row, "wb_ckey": q.coerce_key(row["wb_item"])}
        # What the shape writes into the queue's row (a claim id); False: another program got there.
        prev_token = row["wb_prev_token"] if row["wb_prev_owner"] is not None else None
        if not self._stamp(conn, q, cand["wb_ckey"], token, prev_token):
            raise lock_table.NotWaiting
        return self._finish(conn, q, trail, request, cand, token)

    def _statement(
        self, q: mapping.BoundQueue, trail: audit_mod.AuditTrail, request: base.ClaimRequest
    ) -> sa.Select[Any]:
        return self.built("skip-locked", q, request, lambda: self._build(q, trail, request))

    def _build(self, q: mapping.BoundQueue, trail: audit_mod.AuditTrail, request: base.ClaimRequest) -> sa.Select[Any]:
        from sqlalchemy.dialects import postgresql

        shape = q.shape
        assert isinstance(shape, lockshapes.LockTable)
        locks, now = shape.locks, q.now()
        user = sa.bindparam("wb_user", type_=sa.String())
        chosen = self.chosen(q, request.bound_filter(q))
        token = sa.bindparam("wb_token", type_=locks.c.token.type)
        writes = q.lock_writes(user, now, token)
        mine = sa.and_(locks.c.queue == sa.literal(q.name, literal_execute=True))

        expired = self._expired(q, trail, user, now, chosen)
        retaken = (
            sa.update(locks)
            .where(mine, locks.c.item_key == expired.c.wb_item)
            .values(writes)
            .returning(expired.c.wb_item, expired.c.wb_prev_owner, expired.c.wb_prev_token, expired.c.wb_prev_time)
            .cte("wb_retaken")
        )

        free = [self._item_waits(q, False, user), q.free(), *self.not_own_work(q, trail, user), *chosen]
        if request.use_cooldown and q.config.release_cooldown_seconds > 0:
            free.append(~self.recently_released(q, now, user, trail))
        if trail.deferrals is not None:  # held back until due; then in queue order
            free.append(trail.deferrals.not_held_back(q.key, user))
        head = (
            sa.select(q.key.label("wb_ckey"))
            .select_from(q.source)
            .where(*free)
            .order_by(*q.order_by())
            .limit(lock_table.WINDOW)
            .subquery("wb_head")
        )
        item_text = sa.cast(head.c.wb_ckey, locks.c.item_key.type)
        # Volatile, so evaluated row by row over the head in its order, after the ORDER BY … LIMIT.
        taken = sa.func.pg_try_advisory_xact_lock(
            sa.func.hashtext(sa.literal(q.name, literal_execute=True)), sa.func.hashtext(item_text)
        )
        pick = (
            sa.select(item_text.label("wb_item"))
            .select_from(head)
            .where(~sa.exists(sa.select(expired.c.wb_item)), taken)
            .limit(1)
            .cte("wb_pick")
            .prefix_with("MATERIALIZED")
        )
        names = ["queue", "item_key", *writes]
        inserted = (
            postgresql.insert(locks)
            .from_select(names, sa.select(sa.literal(q.name, literal_execute=True), pick.c.wb_item, *writes.values()))
            .on_conflict_do_nothing()
            .returning(
                locks.c.item_key.label("wb_item"),
                sa.cast(sa.null(), locks.c.lock_user.type).label("wb_prev_owner"),
                sa.cast(sa.null(), locks.c.token.type).label("wb_prev_token"),
                sa.cast(sa.null(), locks.c.locked_at.type).label("wb_prev_time"),
            )
            .cte("wb_inserted")
        )
        both = sa.union_all(sa.select(retaken), sa.select(inserted)).subquery("wb_taken")
        return sa.select(both)

    def _expired(
        self,
        q: mapping.BoundQueue,
        trail: audit_mod.AuditTrail,
        user: Any,
        now: sa.ColumnElement[Any],
        chosen: list[sa.ColumnElement[bool]],
    ) -> sa.CTE:
        """The first expired lock row of this queue another may take over, its row locked (SKIP LOCKED)."""
        locks = typing.cast(lockshapes.LockTable, q.shape).locks
        return (
            sa.select(
                locks.c.item_key.label("wb_item"),
                locks.c.lock_user.label("wb_prev_owner"),
                locks.c.token.label("wb_prev_token"),
                locks.c.locked_at.label("wb_prev_time"),
            )
            .select_from(q.locked_source)
            .where(
                self._item_waits(q, True, user),
                q.user.is_not(None),
                q.stale(now),
                *self.not_own_work(q, trail, user),
                *chosen,
            )
            .order_by(*q.order_by())
            .limit(1)
            .with_for_update(skip_locked=True, of=locks)
            .cte("wb_expired")
            .prefix_with("MATERIALIZED")
        )
