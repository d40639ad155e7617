"""MySQL/MariaDB through PyMySQL: a claim in three round trips, its locking reads one UNION, its writes batches."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa

from workbench.core import errors, models
from workbench.db import audit as audit_mod
from workbench.db import batches, connect, dberrors, mapping
from workbench.db.claims import base, stepwise

_EXPIRED, _DUE, _FREE = 0, 1, 2  # the branches, in the order they are served


@dataclasses.dataclass(frozen=True)
class _Plan:
    """The statements of one claim shape, compiled once for batches."""

    held: batches.Prepared | None  # the user's live locks (a per-user limit)
    candidates: batches.Prepared  # every branch's locking read, as one UNION ALL
    update: batches.Prepared  # lock one candidate (wb_one), checking again that it may be claimed
    read_back: batches.Prepared  # the row as locked
    audit: batches.Prepared  # one audit row
    stamped: bool  # the audit rows carry the lock's time (StepwiseClaim.stamped_audit)
    commit: batches.Prepared


class BatchedClaim(stepwise.StepwiseClaim):
    """The stepwise claim (SELECT … FOR UPDATE SKIP LOCKED, UPDATE, read back, audit) in three round trips.

    1. The user's lock count (under a per-user limit) and the candidates: each
       branch (expired locks, deferred items now due, free rows per IN-list value) is a locking
       read with its own ORDER BY and LIMIT, and the branches are one UNION ALL, so each still
       reads its own index in order and skips rows others hold; the rows are ordered here.
    2. One UPDATE per chosen row, by key and checking again that it may be claimed, then each row
       read back: every candidate must have changed, or the claim is rolled back and tried again.
    3. The audit rows and COMMIT.

    Where the stepwise claim reads a window of the queue and locks rows one by one (no index
    returns the rows in order, or a reviewing queue), or the driver cannot send batches (ODBC),
    it runs as it is.
    """

    def __init__(self) -> None:
        super().__init__(lock_candidates=True, returning=False, name="select-skip-locked", stamps_audit=True)
        self._plans: dict[tuple[Any, ...], _Plan] = {}

    def claim(
        self, db: connect.Database, q: mapping.BoundQueue, trail: audit_mod.AuditTrail, request: base.ClaimRequest
    ) -> list[base.Claimed]:
        held = db.held
        if not held.batches or not q.index_ordered or trail.reviews is not None:
            return super().claim(db, q, trail, request)
        plan = self._plan(held, q, trail, request)
        return db.retrying(lambda: self._claim_batched(held, plan, q, trail, request))

    def finish_then_claim(
        self,
        db: connect.Database,
        q: mapping.BoundQueue,
        trail: audit_mod.AuditTrail,
        finish: object,
        request: base.ClaimRequest,
    ) -> base.FinishThenClaim | None:
        """The Complete's statements sent with the claim's first batch, in its transaction: one commit
        per item instead of two, one round trip fewer. Whatever fails in it is rolled back whole and the
        queue completes and claims one after the other (the Complete never waits on the claim)."""
        held = db.held
        if not isinstance(finish, batches.FinishBatch) or not held.batches:
            return None
        if not q.index_ordered or trail.reviews is not None:
            return None
        plan = self._plan(held, q, trail, request)

        def run(params: Mapping[str, Any]) -> tuple[Any, models.Claim | None] | None:
            given = base.ClaimRequest(user=params["wb_user"], count=1, where=request.where)
            try:
                return db.retrying(lambda: self._finish_then_claim(held, plan, finish, q, trail, given, params))
            except errors.WorkbenchError:
                # Busy too long, or the database went away (perhaps after its COMMIT): the caller's
                # plain Complete tells a done Complete (a replay) from a lost lock.
                return None

        return run

    def _finish_then_claim(
        self,
        held: batches.BatchConnections,
        plan: _Plan,
        finish: batches.FinishBatch,
        q: mapping.BoundQueue,
        trail: audit_mod.AuditTrail,
        request: base.ClaimRequest,
        params: Mapping[str, Any],
    ) -> tuple[Any, models.Claim | None] | None:
        complete = finish.runs(params)
        first = held.run([*complete, *self._first_batch(plan, params)])
        committed = False
        try:
            fenced, at = finish.outcome(first[: len(complete)])
            if not fenced:
                return None  # rolled back below: the candidates' row locks go with it
            # Read in the Complete's transaction: the lock just given back does not count.
            claimed = self._take(held, plan, q, trail, request, params, first[len(complete) :], limit_raises=False)
            if not claimed:
                held.run([(plan.commit, {})])  # the Complete alone
            committed = True
            return at, (base.claim_of(q, claimed[0].row) if claimed else None)
        finally:
            if not committed:
                held.rollback()

    def _claim_batched(
        self,
        held: batches.BatchConnections,
        plan: _Plan,
        q: mapping.BoundQueue,
        trail: audit_mod.AuditTrail,
        request: base.ClaimRequest,
    ) -> list[base.Claimed]:
        params: dict[str, Any] = {"wb_user": request.user, **request.filter_params()}
        if request.key is not None:
            params["wb_key"] = request.key
        first = held.run(self._first_batch(plan, params))
        committed = False
        try:
            claimed = self._take(held, plan, q, trail, request, params, first, limit_raises=True)
            committed = bool(claimed)
            return claimed
        finally:
            if not committed:
                held.rollback()  # the locking reads' row locks go with it

    @staticmethod
    def _first_batch(plan: _Plan, params: Mapping[str, Any]) -> list[tuple[batches.Prepared, Mapping[str, Any]]]:
        """Step 1: the user's lock count (under a per-user limit) and the candidates' locking read."""
        return [*([(plan.held, params)] if plan.held else []), (plan.candidates, params)]

    def _take(
        self,
        held: batches.BatchConnections,
        plan: _Plan,
        q: mapping.BoundQueue,
        trail: audit_mod.AuditTrail,
        request: base.ClaimRequest,
        params: Mapping[str, Any],
        first: list[batches.Result],
        *,
        limit_raises: bool,
    ) -> list[base.Claimed]:
        """Steps 2 and 3 after the first batch's results: lock the chosen candidates, read them back,
        write their audit rows and COMMIT. [] without committing when none may be taken (or, with
        `limit_raises`, LimitReached at the user's limit); Busy when a candidate went to someone else."""
        room = request.count
        if plan.held is not None:
            held_now = int(first[0].rows[0][0] or 0)
            room = min(room, q.config.max_locks_per_user - held_now)
            if room <= 0:
                if limit_raises:
                    raise base.limit_reached(q, held_now)
                return []
        candidates = self._ordered(q, first[-1].mappings())[:room]
        if not candidates:
            return []
        keys = [c["wb_ckey"] for c in candidates]
        written = held.run(
            [
                *((plan.update, {**params, "wb_one": key}) for key in keys),
                *((plan.read_back, {"wb_one": key}) for key in keys),
            ]
        )
        changed = sum(result.rowcount for result in written[: len(keys)])
        rows = [row for result in written[len(keys) :] for row in result.mappings()]
        if changed != len(keys) or len(rows) != len(keys):
            # A candidate was taken by someone else after we read it, so the database did not
            # hold the row lock; roll back (the caller) and pick again.
            raise dberrors.Busy(f"{q.name}: a row was claimed by someone else while this claim read it")
        claimed = [
            base.Claimed(row=row, prev_owner=c["wb_prev_owner"], prev_token=self.prev_token(q, c))
            for c, row in zip(candidates, rows, strict=True)
        ]
        held.run(
            [
                *(
                    (plan.audit, row)
                    for row in self.audit_rows(q, trail, request.user, claimed, at_lock_time=plan.stamped)
                ),
                (plan.commit, {}),
            ]
        )
        return claimed

    @staticmethod
    def _ordered(q: mapping.BoundQueue, rows: list[dict[str, Any]]) -> list[Mapping[Any, Any]]:
        """The candidates as the claim serves them: expired locks, due deferrals, free rows, each in
        queue order (UNION ALL keeps no order between or within its branches)."""
        return [
            row
            for arm in (_EXPIRED, _DUE, _FREE)
            for row in base.sort_candidates(q, [r for r in rows if r["wb_arm"] == arm])
        ]

    def _plan(
        self,
        held: batches.BatchConnections,
        q: mapping.BoundQueue,
        trail: audit_mod.AuditTrail,
        request: base.ClaimRequest,
    ) -> _Plan:
        shape = (id(q), request.key is not None, request.use_cooldown, request.count, request.filter_shape)
        plan = self._plans.get(shape)
        if plan is None:
            plan = self._plans[shape] = self._build_plan(held, q, trail, request)
        return plan

    def _build_plan(
        self,
        held: batches.BatchConnections,
        q: mapping.BoundQueue,
        trail: audit_mod.AuditTrail,
        request: base.ClaimRequest,
    ) -> _Plan:
        now = q.now()
        user = sa.bindparam("wb_user", type_=sa.String())
        key = sa.bindparam("wb_key", type_=q.key.type) if request.key is not None else None
        shaped = base.ClaimRequest(
            user=user,  # type: ignore[arg-type]  # bound later
            count=request.count,
            key=key,
            use_cooldown=request.use_cooldown,
            where=request.bound_filter(q),
        )
        expired, *due, free = self.branches(q, now, shaped, trail)
        variants = self.free_variants(q, now, shaped, trail)
        arms = [
            (_EXPIRED, expired),
            *((_DUE, d) for d in due),
            *((_FREE, v) for v in (variants if len(variants) > 1 else [free])),
        ]

        def pick(arm: int, where: sa.ColumnElement[bool]) -> sa.Select[Any]:
            return (
                sa.select(
                    *self.candidate_columns(q, with_order=True),
                    sa.literal(arm, sa.Integer(), literal_execute=True).label("wb_arm"),
                )
                .where(where)
                .order_by(*q.order_by())
                .limit(request.count)
                .with_for_update(skip_locked=True)
            )

        one = q.key == sa.bindparam("wb_one", type_=q.key.type)
        writes = {**q.lock_writes(user, now, q.shape.new_token()), **q.writes(q.on_claim, user, now)}
        sample: dict[str, Any] = {
            "wb_user": "",
            **({"wb_key": None} if key is not None else {}),
            **{f"wb_f{i}": None for i in range(len(request.where))},
        }
        held_count = (
            held.prepare(sa.select(self.held_count(q, now, user)), sample) if q.config.max_locks_per_user else None
        )
        stamped = self.stamped_audit(q)
        audit = dict.fromkeys(trail.row(models.EventKind.CLAIM, "", ""))
        if stamped:
            audit["at"] = None
        return _Plan(
            held=held_count,
            candidates=held.prepare(sa.union_all(*(pick(arm, where) for arm, where in arms)), sample),
            update=held.prepare(
                sa.update(q.table).where(one, sa.or_(expired, *due, free)).values(writes), {**sample, "wb_one": None}
            ),
            read_back=held.prepare(sa.select(*self.returned_columns(q, now)).where(one), {"wb_one": None}),
            audit=held.prepare(trail.stamped if stamped else trail.insert, audit, insert_columns=True),
            stamped=stamped,
            commit=held.prepare(batches.COMMIT),
        )
