"""Claims in one short transaction of a few statements: SQLite (BEGIN IMMEDIATE) and MySQL/MariaDB (SKIP LOCKED)."""

from __future__ import annotations

import sqlite3
from typing import Any

import sqlalchemy as sa

from workbench.db import audit as audit_mod
from workbench.db import clock, connect, mapping
from workbench.db.claims import base


class StepwiseClaim(base.ClaimMethod):
    """Pick candidate keys, write the lock on exactly those rows, read them back, audit; one transaction.

    Atomic because the candidates are protected for the whole transaction: by the database-wide
    write lock taken with BEGIN IMMEDIATE on SQLite, by row locks taken with SELECT … FOR UPDATE
    SKIP LOCKED on MySQL 8 / MariaDB 10.6+ (rows another claimer holds are skipped, not waited for).
    """

    def __init__(self, *, lock_candidates: bool, returning: bool, name: str) -> None:
        self.lock_candidates, self.returning, self.name = lock_candidates, returning, name

    def claim(self, db: connect.Database, q: mapping.BoundQueue, trail: audit_mod.AuditTrail,
              request: base.ClaimRequest) -> list[base.Claimed]:
        return db.write(lambda conn: self._claim(conn, q, trail, request))

    def _claim(self, conn: sa.Connection, q: mapping.BoundQueue, trail: audit_mod.AuditTrail,
               request: base.ClaimRequest) -> list[base.Claimed]:
        room = self.room(conn, q, request)
        now = q.now()
        candidates: list[Any] = []
        for where in self.branches(q, now, request, trail):
            if len(candidates) >= room:
                break
            stmt = (sa.select(*self.candidate_columns(q)).where(where).order_by(*q.order_by())
                    .limit(room - len(candidates)))
            if self.lock_candidates:
                stmt = stmt.with_for_update(skip_locked=True)
            candidates += conn.execute(stmt).mappings().all()
        if not candidates:
            return []
        keys = [c["wb_ckey"] for c in candidates]
        writes = {**q.lock_writes(request.user, now, clock.new_token()), **q.writes(q.on_claim, request.user, now)}
        update = sa.update(q.table).where(q.key.in_(keys)).values(writes)
        if self.returning:
            rows = conn.execute(update.returning(*self.returned_columns(q, now))).mappings().all()
        else:
            conn.execute(update)
            rows = conn.execute(sa.select(*self.returned_columns(q, now)).where(q.key.in_(keys))).mappings().all()
        by_key = {c["wb_ckey"]: c for c in candidates}
        claimed = [base.Claimed(row=row, prev_owner=by_key[row["wb_key"]]["wb_prev_owner"],
                                prev_token=self.prev_token(q, by_key[row["wb_key"]])) for row in rows]
        order = {key: i for i, key in enumerate(keys)}
        claimed.sort(key=lambda c: order[c.row["wb_key"]])
        trail.write(conn, self.audit_rows(q, trail, request.user, claimed))
        return claimed


def sqlite_claim() -> StepwiseClaim:
    # UPDATE … RETURNING needs SQLite 3.35 (2021); older builds read the rows back instead.
    returning = sqlite3.sqlite_version_info >= (3, 35, 0)
    return StepwiseClaim(lock_candidates=False, returning=returning, name="immediate")


def mysql_claim() -> StepwiseClaim:
    # MySQL and MariaDB have no UPDATE … RETURNING: read the locked rows back in the transaction.
    return StepwiseClaim(lock_candidates=True, returning=False, name="select-skip-locked")
