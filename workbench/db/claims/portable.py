"""Any database: conditional UPDATE of one candidate, check that one row changed, then read it by token."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa

from workbench.db import audit as audit_mod
from workbench.db import connect, mapping
from workbench.db.claims import base

# Candidates read per attempt. Claimers all aim at the head of the queue; trying the head rows
# in random order spreads them out so that most first attempts win (claim-sql.md §1.6).
WINDOW = 16
ROUNDS = 6


class PortableClaim(base.ClaimMethod):
    """Optimistic compare-and-set; correct wherever an UPDATE re-checks its WHERE after a lock wait."""

    name = "portable"

    def claim(
        self, db: connect.Database, q: mapping.BoundQueue, trail: audit_mod.AuditTrail, request: base.ClaimRequest
    ) -> list[base.Claimed]:
        claimed: list[base.Claimed] = []
        room = db.read(lambda conn: self.room(conn, q, request))
        for _ in range(ROUNDS):
            if len(claimed) >= room:
                break
            candidates = db.read(lambda conn: self._candidates(conn, q, trail, request))
            if not candidates:
                break
            for cand, where in candidates:
                if len(claimed) >= room:
                    break
                won = self._attempt(db, q, trail, request, cand, where)
                if won is not None:
                    claimed.append(won)
        return claimed

    def _attempt(
        self,
        db: connect.Database,
        q: mapping.BoundQueue,
        trail: audit_mod.AuditTrail,
        request: base.ClaimRequest,
        cand: Mapping[Any, Any],
        where: Any,
    ) -> base.Claimed | None:
        """Try to take one candidate, in a transaction of its own; None when another claimer was first."""
        return db.write(lambda conn: self._try(conn, q, trail, request.user, cand, where))

    def _candidates(
        self, conn: sa.Connection, q: mapping.BoundQueue, trail: audit_mod.AuditTrail, request: base.ClaimRequest
    ) -> list[tuple[Mapping[Any, Any], Any]]:
        now = q.now()
        result: list[tuple[Mapping[Any, Any], Any]] = []
        for where in self.branches(q, now, request, trail):
            stmt = sa.select(*self.candidate_columns(q)).where(where).order_by(*q.order_by()).limit(WINDOW)
            rows = list(conn.execute(stmt).mappings().all())
            random.shuffle(rows)  # within a branch only: expired locks still go first
            result += [(row, where) for row in rows]
            if len(result) >= WINDOW:
                break
        return result

    def _try(
        self,
        conn: sa.Connection,
        q: mapping.BoundQueue,
        trail: audit_mod.AuditTrail,
        user: str,
        cand: Mapping[Any, Any],
        where: sa.ColumnElement[bool],
    ) -> base.Claimed | None:
        now = q.now()
        key = cand["wb_ckey"]
        token = q.shape.new_token_value()
        # The guard repeats the candidate predicate and pins the lock we saw, so that the lock we
        # replace (and record as expired) is exactly the one we read.
        if cand["wb_prev_owner"] is None:
            unchanged = q.free()
        else:
            unchanged = q.shape.pinned(cand["wb_prev_owner"], cand["wb_prev_token"])
        writes = {**q.lock_writes(user, now, token), **q.writes(q.on_claim, user, now)}
        result = conn.execute(sa.update(q.table).where(q.key == key, where, unchanged).values(writes))
        if result.rowcount != 1:
            return None
        fence = q.shape.pinned(user, token)
        row = conn.execute(sa.select(*self.returned_columns(q, now)).where(q.key == key, fence)).mappings().one()
        claimed = base.Claimed(row=row, prev_owner=cand["wb_prev_owner"], prev_token=self.prev_token(q, cand))
        trail.write(conn, self.audit_rows(q, trail, user, [claimed]))
        return claimed
