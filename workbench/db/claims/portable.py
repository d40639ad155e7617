"""Any database: conditional UPDATE of one candidate, check that one row changed, then read it by token."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import sqlalchemy as sa

from workbench.db import audit as audit_mod
from workbench.db import connect, mapping
from workbench.db.claims import base

# Candidates read per attempt. Claimers all aim at the head of the queue; trying the head rows
# in random order spreads them out so that most first attempts win (claim-sql.md §1.6).
WINDOW = 16
ROUNDS = 6
T = TypeVar("T")


class PortableClaim(base.ClaimMethod):
    """Optimistic compare-and-set; correct wherever an UPDATE re-checks its WHERE after a lock wait."""

    name = "portable"

    def __init__(self) -> None:
        # Statements built once per queue and request shape, their values bound when they run (as
        # stepwise.StepwiseClaim's): building them anew was much of a claim's CPU, and a contended claim
        # reads its candidates several times.
        self._built: dict[tuple[Any, ...], Any] = {}

    def built(self, kind: str, q: mapping.BoundQueue, request: base.ClaimRequest, build: Callable[[], T]) -> T:
        """`build()` (statements of `kind` for `q`) made once per queue and request shape: what a request's
        values change is bound when the statements run (request_params), so one build serves every claim."""
        return self.once((kind, id(q), request.key is not None, request.use_cooldown, request.filter_shape), build)

    def once(self, shape: tuple[Any, ...], build: Callable[[], T]) -> T:
        """`build()` made once for `shape` (a kind of statement, the queue's id, and whatever else it depends
        on), kept with the statements `built` keeps: for those a claim runs whatever the request."""
        if shape not in self._built:
            self._built[shape] = build()
        return self._built[shape]  # type: ignore[no-any-return]

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
        statements = self.built("candidates", q, request, lambda: self._candidate_statements(q, trail, request))
        params = self.request_params(request)
        result: list[tuple[Mapping[Any, Any], Any]] = []
        for where, stmt in statements:
            rows = list(conn.execute(stmt, params).mappings().all())
            random.shuffle(rows)  # within a branch only: expired locks still go first
            result += [(row, (where, params)) for row in rows]
            if len(result) >= WINDOW:
                break
        return result

    def _candidate_statements(
        self, q: mapping.BoundQueue, trail: audit_mod.AuditTrail, request: base.ClaimRequest
    ) -> list[tuple[sa.ColumnElement[bool], sa.Select[Any]]]:
        """Each branch's condition and read, for requests shaped as `request` (values: request_params)."""
        shaped = base.ClaimRequest(
            user=sa.bindparam("wb_user", type_=sa.String()),  # type: ignore[arg-type]  # bound at execution
            count=request.count,
            key=sa.bindparam("wb_key", type_=q.key.type) if request.key is not None else None,
            use_cooldown=request.use_cooldown,
            where=request.bound_filter(q),
        )
        return [
            (where, sa.select(*self.candidate_columns(q)).where(where).order_by(*q.order_by()).limit(WINDOW))
            for where in self.branches(q, q.now(), shaped, trail)
        ]

    @staticmethod
    def request_params(request: base.ClaimRequest) -> dict[str, Any]:
        """The values of a request for the statements built by _candidate_statements."""
        params: dict[str, Any] = {"wb_user": request.user, **request.filter_params()}
        if request.key is not None:
            params["wb_key"] = request.key
        return params

    def _try(
        self,
        conn: sa.Connection,
        q: mapping.BoundQueue,
        trail: audit_mod.AuditTrail,
        user: str,
        cand: Mapping[Any, Any],
        where: tuple[sa.ColumnElement[bool], dict[str, Any]],
    ) -> base.Claimed | None:
        branch, params = where  # the candidate's branch (_candidates), and the values it was read with
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
        result = conn.execute(sa.update(q.table).where(q.key == key, branch, unchanged).values(writes), params)
        if result.rowcount != 1:
            return None
        fence = q.shape.pinned(user, token)
        row = conn.execute(sa.select(*self.returned_columns(q, now)).where(q.key == key, fence)).mappings().one()
        claimed = base.Claimed(row=row, prev_owner=cand["wb_prev_owner"], prev_token=self.prev_token(q, cand))
        trail.write(conn, self.audit_rows(q, trail, user, [claimed]))
        return claimed
