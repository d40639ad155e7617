"""The table's lock rules (core/workflow.py LockRule) as the guard of the engine's supervisor statements."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sqlalchemy as sa

from workbench.core import models, workflow
from workbench.db import audit, mapping

_R = workflow.LockRule
# The row rules of rows that left the queue's work (a finished row may keep a claim id as its history).
_OUT_OF_WORK = (workflow.RowRule.FINISHED, workflow.RowRule.COMPLETED_BY_CALLER, workflow.RowRule.ESCALATED)


def guard(
    q: mapping.BoundQueue,
    transition: str,
    now: sa.ColumnElement[Any],
    *,
    lock: models.Lock | None = None,
    owned: sa.ColumnElement[bool] | None = None,
    read_here: bool = False,
) -> sa.ColumnElement[bool]:
    """The condition on the queue's row under which `transition` may change it, from its LockRule: the
    statement that writes carries it, so that whatever happened since the row was read (an undo's
    fresh lock, a claim) is never overwritten. `lock`: the lock read (a rule on a held row holds to that
    very lock, its owner and token); `owned`: the rows whose lock is this queue's (WorkQueue._owned).
    `read_here`: no lock was read before; the statement that carries the condition reads the lock
    itself (SQL Server's procedures read and lock the row in their own SELECT and UPDATE), so a rule on
    a held row holds to whichever lock of this queue the row has, with no owner or token to pin.
    A rule is on the row before (the statement's WHERE): what the lock is after is what the statement
    writes (FREE: kept by a reopen or a move, a fresh lock of the caller's by an undo or a take)."""
    rule = workflow.TRANSITIONS[transition].lock
    if rule is _R.FREE:
        out_of_work = workflow.TRANSITIONS[transition].row in _OUT_OF_WORK
        return q.shape.unheld(q.key, finished=out_of_work)
    if rule is _R.ANY:
        return sa.true()
    if rule in (_R.HELD_HERE, _R.STALE_HERE):
        if owned is None or (lock is None) is not read_here:
            raise ValueError(
                f"{transition}: a rule on a held row needs this queue's rows, and the lock read or read_here"
            )
        pinned = sa.and_(_held(q) if lock is None else q.shape.pinned(lock.owner, lock.token), owned)
        return pinned if rule is _R.HELD_HERE else sa.and_(pinned, q.expired(now))
    # The caller's own lock and the claim's are the guarded writes' (db/guarded.py) and the claim
    # methods' (db/claims/): their fences carry tokens and limits this module does not know.
    raise ValueError(f"{transition}: the lock rule {rule.value!r} is not a supervisor's")


def owned(
    q: mapping.BoundQueue, trail: audit.AuditTrail, item: Callable[[], sa.ColumnElement[Any]]
) -> sa.ColumnElement[bool]:
    """The rows whose lock (if any) is this queue's, the "here" of the lock rules taken in this queue
    (OWN_LIVE_HERE, STALE_HERE, HELD_HERE): in its state (BoundQueue.held_here), and where other queues
    over the table may hold the same rows (`q.rivals`: the state does not tell whose lock it is), the
    item's newest claim among them is this queue's (AuditTrail.claimed_here). One clause for the engine's
    guarded writes and supervisor statements and SQL Server's procedures. `item`: the key as the trail
    keeps it, asked for only where there are rivals (MySQL's reads a collation)."""
    if not q.rivals:
        return q.held_here()
    return sa.and_(q.held_here(), trail.claimed_here(item(), q.rivals))


def _held(q: mapping.BoundQueue) -> sa.ColumnElement[bool]:
    """Somebody's lock is in the row (its holder and time set), read by the statement that carries it: a
    condition on the row itself, so only where the lock lives in the queue's row."""
    if q.shape.separate_locks:
        raise ValueError(f"queue {q.name}: a lock read in the statement must be in the queue's row")
    return sa.and_(q.user.is_not(None), q.time.is_not(None))
