"""The way a write without edits runs on PostgreSQL: write and audit row as one prepared statement (fastpath.py)."""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa

from workbench.core import workflow
from workbench.db import audit as audit_mod
from workbench.db import deferrals as deferrals_mod
from workbench.db import fastpath, guarded, writes

_W = workflow.Write


class OneStatement:
    """writes.Way: the write's one statement (a data-modifying CTE that also writes the audit row, built
    by GuardedWriter), prepared once per connection and run with the values only, one round trip."""

    def __init__(self, writer: guarded.GuardedWriter) -> None:
        self.w = writer
        self._fast: dict[writes.Shape, fastpath.FastStatement] = {}

    def takes(self, shape: writes.Shape) -> bool:
        return self.w.one_statement_of(shape)

    def finish(self, shape: writes.Shape) -> sa.Select[Any] | None:
        """A Complete's statement (returning the time only), for a claim method to run with its claim."""
        return self.w.statement(shape) if shape.finishes else None

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
            fast = self._fast[shape] = fastpath.FastStatement(self.w.db.held, self.w.statement(shape), params)
        rows = fast.run(params)
        return rows[0] if rows else None
