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
        expired, free = self.branches(q, now, request, trail)
        candidates: list[Any] = self._pick(conn, q, expired, room)
        need = room - len(candidates)
        if need > 0:
            if not self.lock_candidates:
                candidates += self._pick(conn, q, free, need)  # SQLite: the partial index is in order
            elif not q.index_ordered:
                candidates += self._windowed(conn, q, free, need)
            else:
                candidates += self._merged(conn, q, self.free_variants(q, now, request, trail), need)
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


    def _pick(self, conn: sa.Connection, q: mapping.BoundQueue, where: sa.ColumnElement[bool],
              need: int) -> list[Any]:
        stmt = sa.select(*self.candidate_columns(q)).where(where).order_by(*q.order_by()).limit(need)
        if self.lock_candidates:
            stmt = stmt.with_for_update(skip_locked=True)
        return list(conn.execute(stmt).mappings().all())

    def _merged(self, conn: sa.Connection, q: mapping.BoundQueue, variants: list[sa.ColumnElement[bool]],
                need: int) -> list[Any]:
        """One index-ordered locking read per IN-list value, merged in queue order.

        MySQL/MariaDB have no partial index; `status IN ('new', 'open')` would make every claim
        sort all waiting rows. Each `status = 'new'` read is a short ordered index range instead.
        Rows locked but not used stay locked only until this short transaction commits.
        """
        if len(variants) == 1:
            return self._pick(conn, q, variants[0], need)
        rows: list[Any] = []
        for where in variants:
            stmt = (sa.select(*self.candidate_columns(q, with_order=True)).where(where).order_by(*q.order_by())
                    .limit(need).with_for_update(skip_locked=True))
            rows += conn.execute(stmt).mappings().all()
        return base.sort_candidates(q, rows)[:need]

    def _windowed(self, conn: sa.Connection, q: mapping.BoundQueue, where: sa.ColumnElement[bool],
                  need: int) -> list[Any]:
        """Lock `need` rows near the head of the queue when no index returns them in order.

        A locking read that has to sort locks every row it sorts, until commit, so SKIP LOCKED
        would make every other claimer find nothing. Instead the head is read without locks and
        the rows are then locked one by one by key (each a primary-key lookup; taken ones are
        skipped, and the predicate is checked again on the latest committed row).
        """
        got: list[Any] = []
        tried: set[Any] = set()
        for _ in range(WINDOW_ROUNDS):
            window = conn.execute(sa.select(q.key).where(where).order_by(*q.order_by()).limit(WINDOW)).scalars().all()
            fresh = [key for key in window if key not in tried]
            if not fresh:
                break
            for key in fresh:
                tried.add(key)
                row = conn.execute(sa.select(*self.candidate_columns(q)).where(q.key == key, where)
                                   .with_for_update(skip_locked=True)).mappings().first()
                if row is not None:
                    got.append(row)
                    if len(got) >= need:
                        return got
            if len(window) < WINDOW:
                break
        return got


WINDOW = 16
WINDOW_ROUNDS = 3


def sqlite_claim() -> StepwiseClaim:
    # UPDATE … RETURNING needs SQLite 3.35 (2021); older builds read the rows back instead.
    returning = sqlite3.sqlite_version_info >= (3, 35, 0)
    return StepwiseClaim(lock_candidates=False, returning=returning, name="immediate")


def mysql_claim() -> StepwiseClaim:
    # MySQL and MariaDB have no UPDATE … RETURNING: read the locked rows back in the transaction.
    return StepwiseClaim(lock_candidates=True, returning=False, name="select-skip-locked")
