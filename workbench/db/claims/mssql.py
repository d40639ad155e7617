"""SQL Server: UPDATE … OUTPUT over a TOP(n) pick read WITH (UPDLOCK, READPAST, ROWLOCK)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from workbench.db import audit as audit_mod
from workbench.db import connect, enforcement, mapping, writes
from workbench.db.claims import base

# UPDLOCK: the pick holds an update lock until the UPDATE converts it; READPAST: rows another
# claimer holds are skipped instead of waited for; ROWLOCK: no page locks for READPAST to stall
# on; READCOMMITTEDLOCK: keep locking reads even when the database runs READ_COMMITTED_SNAPSHOT,
# where READPAST would otherwise misbehave (rebus-org/Rebus.SqlServer#35).
# SQLAlchemy drops with_for_update() on SQL Server without a word, so the hint is explicit.
PICK_HINT = "WITH (UPDLOCK, READPAST, ROWLOCK, READCOMMITTEDLOCK)"


class ReadpastClaim(base.ClaimMethod):
    """One UPDATE per candidate branch; the lock is written and the row returned by OUTPUT inserted.*."""

    name = "readpast"

    def claim(
        self, db: connect.Database, q: mapping.BoundQueue, trail: audit_mod.AuditTrail, request: base.ClaimRequest
    ) -> list[base.Claimed]:
        # Where the queue's writes run another way that claims too (under `workbench grants` operators
        # claim only through the queue's procedure, which serves items in order, narrowed or the one asked
        # for, one per call, and writes the audit rows itself): the rows it locked.
        rows = enforcement.of(db, q, trail.table.schema).claim(request.user, request.count, request.key, request.where)
        if rows is not writes.PASS:
            return [base.Claimed(row=row, prev_owner=None, prev_token=None) for row in rows]
        return db.write(lambda conn: self._claim(conn, q, trail, request))

    def statements(
        self, q: mapping.BoundQueue, trail: audit_mod.AuditTrail, request: base.ClaimRequest, room: int
    ) -> list[sa.Update]:
        """The UPDATE statement of each branch (compiled by the tests, as no SQL Server runs here)."""
        return [self.statement(q, where, request, room) for where in self.branches(q, q.now(), request, trail)]

    def statement(
        self, q: mapping.BoundQueue, where: sa.ColumnElement[bool], request: base.ClaimRequest, room: int
    ) -> sa.Update:
        now = q.now()
        pick = (
            sa.select(*self.candidate_columns(q))
            .where(where)
            .order_by(*q.order_by())
            .limit(room)
            .with_hint(q.table, PICK_HINT, "mssql")
            .subquery("wb_pick")
        )
        writes = {**q.lock_writes(request.user, now, q.shape.new_token()), **q.writes(q.on_claim, request.user, now)}
        return (
            sa.update(q.table)
            .where(q.key == pick.c.wb_ckey)
            .values(writes)
            .returning(*self.returned_columns(q, now), pick.c.wb_prev_owner, pick.c.wb_prev_token, pick.c.wb_prev_time)
        )

    def _claim(
        self, conn: sa.Connection, q: mapping.BoundQueue, trail: audit_mod.AuditTrail, request: base.ClaimRequest
    ) -> list[base.Claimed]:
        room = self.room(conn, q, request)
        claimed: list[base.Claimed] = []
        for where in self.branches(q, q.now(), request, trail):
            if len(claimed) >= room:
                break
            rows: Sequence[Any] = conn.execute(self.statement(q, where, request, room - len(claimed))).mappings().all()
            claimed += [
                base.Claimed(row=row, prev_owner=row["wb_prev_owner"], prev_token=self.prev_token(q, row))
                for row in rows
            ]
        claimed = base.sort_claimed(q, claimed)
        trail.write(conn, self.audit_rows(q, trail, request.user, claimed))
        return claimed
