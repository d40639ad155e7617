"""The way a write without edits runs on PostgreSQL: write and audit row as one prepared statement (fastpath.py)."""

from __future__ import annotations

import json
import typing
from typing import Any

import sqlalchemy as sa

from workbench.core import workflow
from workbench.db import audit as audit_mod
from workbench.db import clock, fastpath, guarded, writes
from workbench.db import deferrals as deferrals_mod

_W = workflow.Write


def takes(shape: writes.Shape) -> bool:
    """Is a write of this shape one statement where the queue's writes may be? A write with edits is not:
    the audit keeps each changed column's value before and after, read in the same transaction (a Save or a
    Complete with edits, a few round trips more)."""
    return not shape.edits


class OneStatement:
    """writes.Way: the write's one statement (a data-modifying CTE that also writes the audit row, built by
    statement()), prepared once per connection and run with the values only, one round trip."""

    def __init__(self, writer: guarded.GuardedWriter) -> None:
        self.w = writer
        self._built: dict[writes.Shape, sa.Select[Any]] = {}
        self._fast: dict[writes.Shape, fastpath.FastStatement] = {}

    def takes(self, shape: writes.Shape) -> bool:
        return takes(shape)

    def statement(self, shape: writes.Shape) -> sa.Select[Any]:
        if shape not in self._built:
            self._built[shape] = statement(self.w, shape)
        return self._built[shape]

    def finish(self, shape: writes.Shape) -> sa.Select[Any] | None:
        """A Complete's statement (returning the time only), for a claim method to run with its claim."""
        return self.statement(shape) if shape.finishes else None

    def run(self, write: writes.Write) -> writes.Row | None:
        shape = write.shape
        params, detail = self.w.values(write)
        if shape.kind in workflow.REASONED:
            params["wb_a_reason"] = write.reason
        if shape.to_review:
            params["wb_a_detail"] = json.dumps(detail, sort_keys=True)
        if workflow.writes(shape.kind, _W.DEFERRAL):
            params["wb_until"] = deferrals_mod.stored(write.until)
            params["wb_a_detail"] = json.dumps(detail, sort_keys=True)
        if shape.unlock:
            params["wb_a_token"] = audit_mod.token_digest(write.token)  # what the trail keeps of it
        fast = self._fast.get(shape)
        if fast is None:
            fast = self._fast[shape] = fastpath.FastStatement(self.w.db.held, self.statement(shape), params)
        rows = fast.run(params)
        return rows[0] if rows else None


def statement(w: guarded.GuardedWriter, shape: writes.Shape) -> sa.Select[Any]:
    """A write's fenced UPDATE (GuardedWriter.statement: one, the lock kept in the row) with its audit row
    and what it records besides (note, review, deferral, cool-down) as one statement: each a data-modifying
    CTE over the rows the UPDATE returned, so nothing is written where the fence failed."""
    q = w.q
    now = q.now()
    user = sa.bindparam("wb_user", type_=sa.String())
    update = w.statement(shape)[0]
    assert isinstance(update, sa.Update)
    # Complete and Release only need the time; the others return the lock as it is now.
    returned = (
        [q.key.label("wb_key"), sa.type_coerce(now, sa.DateTime(timezone=q.aware)).label("wb_now")]
        if shape.unlock
        else q.lock_select_columns(now)
    )
    upd = update.returning(*returned).cte("wb_written")
    token = sa.bindparam("wb_a_token", type_=sa.String()) if shape.unlock else q.backend.token_digest(upd.c.wb_token)
    written_key = sa.cast(upd.c.wb_key, sa.String(200))
    event = w.audit_event(shape, written_key, token, user).select_from(upd)
    # Complete and Release send back only the time: the caller knows the key.
    result = sa.select(upd.c.wb_now) if shape.unlock else sa.select(upd)
    stmt = result.add_cte(sa.insert(w.trail.table).from_select(guarded.AUDIT_COLUMNS, event).cte("wb_event"))
    if shape.note:
        stmt = _with_note(stmt, w, shape, upd, user)
    stmt = _with_reviews(stmt, w, shape, upd, user)
    stmt = _with_deferral(stmt, w, shape, upd, user)
    return _with_cooldown(stmt, w, shape, upd, user)


def _with_note(
    stmt: sa.Select[Any], w: guarded.GuardedWriter, shape: writes.Shape, upd: sa.CTE, user: sa.BindParameter[Any]
) -> sa.Select[Any]:
    """The note written with the write (shape.note)."""
    n, notebook = w.notes().table, w.notes().queue
    written = sa.select(
        sa.literal(notebook, literal_execute=True),
        sa.cast(upd.c.wb_key, sa.String(200)),
        user,
        clock.db_now(),
        sa.literal(shape.kind.value, literal_execute=True),
        sa.bindparam("wb_note", type_=n.c.text.type),
    ).select_from(upd)
    return stmt.add_cte(
        sa.insert(n).from_select(["queue", "item_key", "author", "at", "kind", "text"], written).cte("wb_note")
    )


def _with_reviews(
    stmt: sa.Select[Any], w: guarded.GuardedWriter, shape: writes.Shape, upd: sa.CTE, user: sa.BindParameter[Any]
) -> sa.Select[Any]:
    """A Complete chosen for review records who did it; one in a reviewing queue, the verdict."""

    def matches(column: sa.ColumnElement[Any]) -> sa.ColumnElement[bool]:
        return column.in_(sa.select(sa.cast(upd.c.wb_key, sa.String(200))))

    written: list[sa.Executable] = []
    if shape.to_review:
        written += w.to_review().open_statements(
            matches, sa.cast(upd.c.wb_key, sa.String(200)), upd, user, sa.bindparam("wb_why", type_=sa.String())
        )
    if w.trail.reviews is not None and shape.outcome is not None:
        written += w.trail.reviews.decide_statements(matches, user, shape.outcome)
    for i, statement in enumerate(written):
        stmt = stmt.add_cte(typing.cast(Any, statement).cte(f"wb_review{i}"))
    return stmt


def _with_deferral(
    stmt: sa.Select[Any], w: guarded.GuardedWriter, shape: writes.Shape, upd: sa.CTE, user: sa.BindParameter[Any]
) -> sa.Select[Any]:
    """A release forgets the item's deferral; a defer replaces it."""
    q, d = w.q, w.trail.deferrals
    deferral = workflow.writes(shape.kind, _W.DEFERRAL)
    if d is None or not (deferral or workflow.writes(shape.kind, _W.DEFERRAL_FORGOTTEN)):
        return stmt
    gone: sa.ColumnElement[bool] = d.table.c.item_key.in_(sa.select(sa.cast(upd.c.wb_key, sa.String(200))))
    if deferral:
        gone = sa.or_(gone, deferrals_mod.lapsed(d.table))
    stmt = stmt.add_cte(sa.delete(d.table).where(d.table.c.queue == q.name, gone).cte("wb_undeferred"))
    if not deferral:
        return stmt
    kept = sa.select(
        sa.literal(q.name, literal_execute=True),
        sa.cast(upd.c.wb_key, sa.String(200)),
        user,
        sa.bindparam("wb_until", type_=d.table.c.until.type),
        clock.db_now(),
        sa.bindparam("wb_a_reason", type_=sa.String()),
    ).select_from(upd)
    return stmt.add_cte(
        sa.insert(d.table).from_select(["queue", "item_key", "actor", "until", "at", "reason"], kept).cte("wb_deferred")
    )


def _with_cooldown(
    stmt: sa.Select[Any], w: guarded.GuardedWriter, shape: writes.Shape, upd: sa.CTE, user: sa.BindParameter[Any]
) -> sa.Select[Any]:
    """A release keeps the releaser from claiming the item again for a while (release_cooldown_seconds)."""
    q, c = w.q, w.trail.cooldown
    if not workflow.writes(shape.kind, _W.COOLDOWN) or c is None or q.config.release_cooldown_seconds <= 0:
        return stmt
    until = clock.add_seconds(
        clock.db_now(),
        sa.bindparam(None, q.config.release_cooldown_seconds, type_=sa.Integer(), literal_execute=True),
    )
    remember = sa.select(
        sa.literal(q.name, literal_execute=True), user, sa.cast(upd.c.wb_key, sa.String(200)), until
    ).select_from(upd)
    return stmt.add_cte(
        sa.insert(c).from_select(["queue", "actor", "item_key", "until"], remember).cte("wb_cool"),
        sa.delete(c).where(c.c.queue == q.name, c.c.actor == user, c.c.until <= clock.db_now()).cte("wb_lapsed"),
    )
