"""PostgreSQL: one statement picks rows FOR NO KEY UPDATE SKIP LOCKED, locks them and writes the audit rows."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from workbench.core import models
from workbench.db import audit as audit_mod
from workbench.db import clock, connect, fastpath, mapping
from workbench.db.claims import base


class SkipLockedClaim(base.ClaimMethod):
    """`WITH cand AS (SELECT … FOR NO KEY UPDATE SKIP LOCKED) UPDATE … FROM cand RETURNING …`.

    Runs in autocommit: the single statement is its own transaction, so a claim is one round
    trip, and the audit rows are inserted by data-modifying CTEs of the same statement.
    """

    name = "skip-locked"

    def __init__(self) -> None:
        self._cache: dict[tuple[Any, ...], sa.Select[Any]] = {}
        self._fast: dict[tuple[Any, ...], fastpath.FastStatement] = {}
        self._next: dict[tuple[int, int], _NextClaims] = {}

    def claim_next(self, db: connect.Database, q: mapping.BoundQueue, trail: audit_mod.AuditTrail,
                   user: str, count: int) -> list[models.Claim]:
        # The hot path (Next item): the statement's rows go straight into Claims, without the
        # dicts and records claim() builds for every caller.
        reader = self._next.get((id(q), count))
        if reader is None:
            if not q.shape.all_in_row or (q.config.max_locks_per_user and count > 1):
                return super().claim_next(db, q, trail, user, count)
            request = base.ClaimRequest(user=user, count=count)
            reader = _NextClaims(q, self._fast_statement(db, q, trail, request, count,
                                                         bool(q.config.max_locks_per_user)))
            self._next[(id(q), count)] = reader
        return reader.claims(user)

    def claim(self, db: connect.Database, q: mapping.BoundQueue, trail: audit_mod.AuditTrail,
              request: base.ClaimRequest) -> list[base.Claimed]:
        count, check_limit = request.count, bool(q.config.max_locks_per_user)
        if check_limit and count > 1:
            # Several at once under a per-user limit: find the room first (a rare, second round trip),
            # so that the one statement can keep a constant LIMIT.
            count = db.read(lambda conn: self.room(conn, q, request))
            check_limit = False
        params: dict[str, Any] = {"wb_user": request.user}
        if request.key is not None:
            params["wb_key"] = request.key
        fast = self._fast_statement(db, q, trail, request, count, check_limit)
        rows = [q.with_lock_aliases(row) for row in fast.run(params)]
        claimed = [base.Claimed(row=row, prev_owner=row["wb_prev_owner"], prev_token=self.prev_token(q, row))
                   for row in rows]
        if claimed and not q.shape.token_in_row:
            # No token column to copy in SQL: audit in a second short statement.
            db.write(lambda conn: trail.write(conn, self.audit_rows(q, trail, request.user, claimed)))
        return claimed

    def _fast_statement(self, db: connect.Database, q: mapping.BoundQueue, trail: audit_mod.AuditTrail,
                        request: base.ClaimRequest, count: int, check_limit: bool) -> fastpath.FastStatement:
        shape = (id(q), request.key is not None, request.use_cooldown, count, check_limit)
        fast = self._fast.get(shape)
        if fast is None:
            stmt = self.statement(q, trail, request, count=count, check_limit=check_limit)
            sample = {"wb_user": request.user, **({"wb_key": request.key} if request.key is not None else {})}
            fast = self._fast[shape] = fastpath.FastStatement(db.held, stmt, sample)
        return fast

    def statement(self, q: mapping.BoundQueue, trail: audit_mod.AuditTrail, request: base.ClaimRequest,
                  *, count: int | None = None, check_limit: bool | None = None) -> sa.Select[Any]:
        """The claim statement for `count` items (cached per queue and request shape)."""
        count = request.count if count is None else count
        check_limit = bool(q.config.max_locks_per_user) if check_limit is None else check_limit
        shape = (id(q), request.key is not None, request.use_cooldown, count, check_limit)
        if shape not in self._cache:
            self._cache[shape] = self._build(q, trail, request, count, check_limit)
        return self._cache[shape]

    def _build(self, q: mapping.BoundQueue, trail: audit_mod.AuditTrail, request: base.ClaimRequest,
               count: int, check_limit: bool) -> sa.Select[Any]:
        now = q.now()
        user = sa.bindparam("wb_user", type_=sa.String())
        shaped = base.ClaimRequest(user="", key=sa.bindparam("wb_key", type_=q.key.type) if request.key is not None
                                   else None, use_cooldown=request.use_cooldown)
        # A constant LIMIT: with a parameter there, PostgreSQL cannot trust a generic plan for the
        # prepared statement and re-plans this statement on every execution (measured: ~3 ms).
        limit = sa.bindparam("wb_count", count, type_=sa.Integer(), literal_execute=True)
        extra: list[sa.ColumnElement[bool]] = []
        if check_limit:
            held = (sa.select(sa.func.count()).select_from(q.table)
                    .where(*q.scope_clause(), q.user == user, q.live(now)).scalar_subquery())
            extra.append(held < sa.bindparam("wb_limit", q.config.max_locks_per_user, type_=sa.Integer(),
                                             literal_execute=True))
        branches = []
        for i, where in enumerate(self._branches(q, now, shaped, trail, user)):
            branches.append(sa.select(*self.candidate_columns(q)).where(where, *extra).order_by(*q.order_by())
                            .limit(limit).with_for_update(skip_locked=True, key_share=True)
                            .cte(f"wb_branch{i}").prefix_with("MATERIALIZED"))
        if len(branches) == 1:
            cand = branches[0]
        else:
            merged = sa.union_all(*(sa.select(b) for b in branches)).subquery("wb_merged")
            cand = sa.select(merged).limit(limit).cte("wb_cand")
        writes = {**q.lock_writes(user, now, q.shape.new_token()), **q.writes(q.on_claim, user, now)}
        # The row's own columns carry the lock (see with_lock_aliases); only the clock is extra.
        returning = [*q.table.c, now.label("wb_now"), cand.c.wb_prev_owner, cand.c.wb_prev_token,
                     cand.c.wb_prev_time]
        upd = (sa.update(q.table).where(q.key == cand.c.wb_ckey).values(writes)
               .returning(*returning).cte("wb_locked"))
        stmt = sa.select(upd)
        if count > 1:
            # RETURNING comes back in no particular order; hand several items out in queue order.
            stmt = stmt.order_by(*[upd.c[col.name].desc() if desc else upd.c[col.name] for col, desc in q.order],
                                 upd.c[q.key.name])
        if q.shape.token_in_row:
            stmt = stmt.add_cte(self._audit_cte(q, trail, upd, user))
        return stmt

    def _branches(self, q: mapping.BoundQueue, now: sa.ColumnElement[Any], shaped: base.ClaimRequest,
                  trail: audit_mod.AuditTrail, user: sa.BindParameter[Any]) -> list[sa.ColumnElement[bool]]:
        # Same predicates as the other methods, with the user bound once for the whole statement.
        cooled = base.ClaimRequest(user="", key=shaped.key, use_cooldown=False)
        result = self.branches(q, now, cooled, trail)  # [expired locks, free rows]
        if shaped.use_cooldown and shaped.key is None and q.config.release_cooldown_seconds > 0:
            result[-1] = sa.and_(result[-1], ~self.recently_released(q, now, user, trail))
        return result

    @staticmethod
    def _audit_cte(q: mapping.BoundQueue, trail: audit_mod.AuditTrail, upd: sa.CTE,
                   user: sa.BindParameter[Any]) -> sa.CTE:
        a = trail.table
        at = clock.db_now()
        key = sa.cast(upd.c[q.key.name], sa.String(200))
        def constant(value: Any) -> sa.BindParameter[Any]:
            return sa.literal(value, literal_execute=True)  # part of the statement text, not a parameter

        expired = sa.select(
            constant(q.name), key, constant(models.EventKind.EXPIRE.value), user, upd.c.wb_prev_owner,
            upd.c.wb_prev_token, at, constant('{"noticed_by": "claim"}'), constant(1).label("wb_seq"),
        ).where(upd.c.wb_prev_owner.is_not(None))
        assert q.token is not None  # audit rows are written here only when the token is a column of the row
        token_name = q.token.name
        claimed = sa.select(
            constant(q.name), key, constant(models.EventKind.CLAIM.value), user, user,
            q.shape.as_text(upd.c[token_name]), at, sa.null(),
            constant(2).label("wb_seq"),
        )
        both = sa.union_all(expired, claimed).subquery("wb_events")
        # Expiry before claim, so the item's history reads in the order things happened: UNION
        # ALL yields its branches in order in PostgreSQL's executor, so no sort is needed for it.
        ordered = sa.select(*list(both.c)[:-1])
        cols = ["queue", "item_key", "event", "actor", "owner", "token", "at", "detail"]
        return sa.insert(a).from_select(cols, ordered).cte("wb_audit")


class _NextClaims:
    """claim_next's statement for one queue and count, and its rows turned into Claims.

    The statement returns the table's columns first (the item), then the lock's clock reading;
    their positions are read once from the first result.
    """

    def __init__(self, q: mapping.BoundQueue, fast: fastpath.FastStatement) -> None:
        self.q, self.fast = q, fast
        self.time = q.time_reader()
        self._items = [c.name for c in q.table.c]
        self._at: tuple[int, ...] | None = None
        # The lock time is the statement's now(), the same reading as wb_now, unless the column
        # rounds it (timestamp(0)); then wb_now is read as well.
        precision = getattr(q.time.type, "precision", None)
        self._now_is_lock_time = precision is None or precision >= 6

    def claims(self, user: str) -> list[models.Claim]:
        rows = self.fast.rows({"wb_user": user})
        if not rows:
            return []
        if self._at is None:
            where = {name: i for i, name in enumerate(self.fast.columns)}
            q = self.q
            assert q.expires is not None and q.token is not None
            self._at = tuple(where[name] for name in (q.key.name, q.user.name, q.time.name, q.expires.name,
                                                      q.token.name, "wb_now"))
        key, user_at, time_at, expires_at, token_at, now_at = self._at
        name, items, time, same = self.q.name, self._items, self.time, self._now_is_lock_time
        claims = []
        for row in rows:  # positional arguments: Lock(queue, key, owner, token, locked_at, expires_at, db_now)
            locked = time(row[time_at])
            lock = models.Lock(name, row[key], row[user_at], str(row[token_at]), locked, time(row[expires_at]),
                               locked if same else time(row[now_at]))
            claims.append(models.Claim(lock, dict(zip(items, row, strict=False))))
        return claims
