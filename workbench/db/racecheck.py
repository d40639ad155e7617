"""The claim self-check: two connections race to lock one row; exactly one may win.

Some servers and proxies accept `SELECT … FOR UPDATE SKIP LOCKED` and then do not lock (TiDB:
pingcap/tidb#69720); a connection pooler in statement mode can spread one transaction over
several server connections. Either would hand one item to two people. This check finds that out
before any operator does: connection A locks one row of a queue table (and keeps its transaction
open), connection B then tries the same row the way the claim would; B must get nothing. Both
transactions are rolled back: nothing is written.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from workbench.core.records import RaceResult  # what the admin services hand out: core's records
from workbench.db import backends, dberrors, service


def check(wb: service.Workbench) -> RaceResult:
    """Race two connections for one row of the first queue's table that has a row."""
    for name in wb.config.queues:
        q = wb.queue(name).q
        with dberrors.translated(), wb.engine.connect() as conn:
            key = conn.execute(sa.select(q.key).order_by(q.key).limit(1)).scalar()
        if key is not None:
            return race(wb.engine, q.table, q.key, key)
    return RaceResult(None, "claim check skipped: no queue table has a row to race for yet")


def race(engine: sa.Engine, table: sa.Table, key_column: sa.Column[Any], key: Any, *, lock: bool = True) -> RaceResult:
    """A locks the row `key`; B then asks for it as a claim does. `lock=False` reads without
    locking (what a server that ignores row locks does), so that the check can be seen to fail."""
    backend = backends.of(engine)
    where = f"{table.name} {key_column.name} = {key!r}"
    with dberrors.translated(), engine.connect() as a, engine.connect() as b:
        first = a.begin()
        try:
            got_a = backend.lock_one(a, table, key_column, key, lock=lock)
            if not got_a:
                return RaceResult(None, f"claim check skipped: {where} is locked by someone else right now")
            second = b.begin()
            try:
                got_b = backend.lock_one(b, table, key_column, key, lock=lock)
            finally:
                second.rollback()
        finally:
            first.rollback()
    if got_b:
        return RaceResult(
            False,
            f"claims are NOT exclusive here: two connections both locked {where}. "
            "This server (or a proxy or pooler between it and workbench) ignores row "
            "locks, so one item could be handed to two people. Connect to the database "
            "server directly (a pooler in session mode only), or use a server whose "
            "FOR UPDATE SKIP LOCKED locks rows (PostgreSQL, MySQL 8, MariaDB 10.6+).",
        )
    return RaceResult(
        True, f"claims are exclusive: two connections raced for {where}; one won, the other was turned away"
    )
