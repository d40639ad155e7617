"""The way every write can run: the fenced UPDATE and its audit row as statements in one transaction (two steps)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa

from workbench.core import workflow
from workbench.db import audit as audit_mod
from workbench.db import guarded, lockshapes, writes

_W = workflow.Write


class TwoSteps:
    """writes.Way: the write's statements (LockShape.guarded_statements), then its audit row and what it
    records besides (cool-down, deferral, note, review), in one transaction; a write with edits keeps
    each changed column's value before and after, read in the same transaction.

    Where the database's UPDATE returns what it reads FROM (Backend.update_returns_from) and the write is one
    UPDATE of the queue's row (LockShape.single_write), a write with edits reads the edited columns before it
    (the row locked, FOR UPDATE) and the lock after it in that UPDATE (returning): two statements with the audit
    row, not four. Each is parsed and planned anew through a transaction pooler."""

    def __init__(self, writer: guarded.GuardedWriter) -> None:
        self.w = writer
        q = writer.q
        now = q.now()
        self._read_now = sa.select(sa.type_coerce(now, sa.DateTime(timezone=q.aware)))
        self._read_lock = (
            sa.select(*q.lock_select_columns(now))
            .select_from(q.source)
            .where(q.key == sa.bindparam("wb_key", type_=q.key.type))
        )
        self._before: dict[writes.Shape, sa.Select[Any]] = {}  # the edited columns' values before a write
        # Per shape with edits: its UPDATE returning the edited columns before and the lock after (None: not so).
        self._returning: dict[writes.Shape, sa.Update | None] = {}

    def takes(self, shape: writes.Shape) -> bool:
        return True

    def finish(self, shape: writes.Shape) -> None:
        return None  # a transaction of several statements: no part of a claim's one call

    def run(self, write: writes.Write) -> writes.Row | None:
        shape = write.shape
        params, detail = self.w.values(write)
        audit = {
            "wb_a_actor": write.user,
            "wb_a_reason": write.reason,
            "wb_a_detail": json.dumps(detail, sort_keys=True, default=str) if detail else None,
        }
        statements = self.w.statement(shape)
        if workflow.writes(shape.kind, _W.DEFERRAL):
            params["wb_until"] = write.until
        try:
            return self.w.db.write(lambda conn: self._two_step(conn, statements, shape, params, audit, write.token))
        except lockshapes.FenceFailed:  # rolled back
            return None

    def _two_step(
        self,
        conn: sa.Connection,
        statements: list[sa.Executable],
        shape: writes.Shape,
        params: dict[str, Any],
        audit: dict[str, Any],
        token: str,
    ) -> Mapping[Any, Any] | None:
        q, trail = self.w.q, self.w.trail
        row: Mapping[Any, Any] | None = None
        returning = self._update_returning(shape) if shape.edits else None
        if returning is not None:
            found = conn.execute(returning, params).mappings().all()
            if len(found) != 1:
                return None
            before: Any = [found[0][f"wb_b{i}"] for i in range(len(shape.edits))]
            row = {name: value for name, value in found[0].items() if not name.startswith("wb_b")}
        else:
            before = (
                conn.execute(self._read_before(shape), {"wb_key": params["wb_key"]}).first() if shape.edits else None
            )
            if not q.shape.run_guarded(conn, statements, params):
                return None
        if before is not None:
            audit = {**audit, "wb_a_detail": self._with_changes(audit["wb_a_detail"], shape, before, params)}
        if row is None:  # not returned by the UPDATE: read after it
            row = (
                {"wb_key": params["wb_key"], "wb_now": conn.execute(self._read_now).scalar()}
                if shape.unlock
                else conn.execute(self._read_lock, {"wb_key": params["wb_key"]}).mappings().one()
            )
        if not shape.unlock:
            token = q.lock_from_row(row).token  # an extend may move the lock time, and with it the token
        detail = json.loads(audit["wb_a_detail"]) if audit["wb_a_detail"] else None
        actor = audit["wb_a_actor"]
        trail.write(
            conn,
            [
                trail.row(
                    shape.kind,
                    params["wb_key"],
                    actor,
                    owner=actor,
                    token=token,
                    reason=audit["wb_a_reason"],
                    outcome=shape.outcome,
                    detail=detail,
                )
            ],
        )
        if workflow.writes(shape.kind, _W.COOLDOWN):
            trail.cool_down(conn, params["wb_key"], actor, q.config.release_cooldown_seconds)
        deferrals = trail.deferrals
        if deferrals is not None and workflow.writes(shape.kind, _W.DEFERRAL_FORGOTTEN):
            deferrals.forget(conn, params["wb_key"])
        if deferrals is not None and workflow.writes(shape.kind, _W.DEFERRAL):
            deferrals.replace(conn, params["wb_key"], actor, params["wb_until"], audit["wb_a_reason"])
        if shape.note:
            self.w.notes().add(conn, params["wb_key"], actor, params["wb_note"], shape.kind.value)
        if shape.to_review:
            self.w.to_review().open(conn, params["wb_key"], actor, params["wb_why"])
        if trail.reviews is not None and shape.outcome is not None:
            trail.reviews.decide(conn, params["wb_key"], actor, shape.outcome)
        return {**row, writes.RECORDED: detail}

    def _update_returning(self, shape: writes.Shape) -> sa.Update | None:
        """The write's UPDATE (GuardedWriter.statement: its fence and values as compiled there, unchanged)
        joined to its row as it is before, read FOR UPDATE, returning the edited columns' values before it
        (wb_b0, wb_b1, …) and, as _read_lock and _read_now would read them after it, the lock or the time;
        None where the database or the lock shape does not allow it (see the class). Built once per shape."""
        if shape not in self._returning:
            q = self.w.q
            statements = self.w.statement(shape)
            update = statements[0] if len(statements) == 1 else None
            if not (q.backend.update_returns_from and q.shape.single_write and isinstance(update, sa.Update)):
                self._returning[shape] = None
            else:
                now = q.now()
                key = q.key
                read = sa.select(key.label("wb_bkey"), *(q.table.c[name] for name in shape.edits)).where(
                    key == sa.bindparam("wb_key", type_=key.type)
                )
                old = q.backend.lock_row(read, q.table).subquery("wb_before")
                edited = [old.c[name].label(f"wb_b{i}") for i, name in enumerate(shape.edits)]
                after = (
                    [key.label("wb_key"), sa.type_coerce(now, sa.DateTime(timezone=q.aware)).label("wb_now")]
                    if shape.unlock
                    else q.lock_select_columns(now)
                )
                self._returning[shape] = update.where(key == old.c.wb_bkey).returning(*edited, *after)
        return self._returning[shape]

    def _read_before(self, shape: writes.Shape) -> sa.Select[Any]:
        """The edited columns as they are before the write (read in its transaction); built once per shape."""
        if shape not in self._before:
            q = self.w.q
            self._before[shape] = sa.select(*(q.table.c[name] for name in shape.edits)).where(
                q.key == sa.bindparam("wb_key", type_=q.key.type)
            )
        return self._before[shape]

    def _with_changes(self, detail: str | None, shape: writes.Shape, before: Any, params: Mapping[str, Any]) -> str:
        """The audit detail with {"changes": {column: [before, after]}} for each column the write changed
        (`audit_hidden` columns: [null, null], their values left out)."""
        data = json.loads(detail) if detail else {}
        changes = self.w.q.changes(
            dict(zip(shape.edits, before, strict=True)),
            {name: params[f"wb_e{i}"] for i, name in enumerate(shape.edits)},
        )
        if changes:
            data["changes"] = changes
        return json.dumps(data, sort_keys=True, default=audit_mod.json_value)
