"""The way a Complete without edits runs on MySQL/MariaDB: UPDATE, audit row and COMMIT as one batch (batches.py)."""

from __future__ import annotations

from collections.abc import Callable

import sqlalchemy as sa

from workbench.db import batches, guarded, writes


class BatchedComplete:
    """writes.Way: a Complete as statements of one batch, one round trip; for a lock kept in the row,
    a queue whose Complete decides no review, and where the fast pool sends batches (PyMySQL)."""

    def __init__(self, writer: guarded.GuardedWriter, sends_batches: Callable[[], bool]) -> None:
        """`sends_batches`: does the fast pool send batches (asked the first time a Complete needs to know)?"""
        self.w, self._sends_batches = writer, sends_batches
        self._batches: dict[writes.Shape, batches.FinishBatch | None] = {}
        self._commit: batches.Prepared | None = None

    def takes(self, shape: writes.Shape) -> bool:
        return self.finish(shape) is not None

    def finish(self, shape: writes.Shape) -> batches.FinishBatch | None:
        """The Complete's statements of a batch, without its COMMIT (a claim runs them ahead of its own)."""
        if shape not in self._batches:
            self._batches[shape] = self._finish_batch(shape)
        return self._batches[shape]

    def _finish_batch(self, shape: writes.Shape) -> batches.FinishBatch | None:
        w = self.w
        q = w.q
        # Chosen where the write is not one statement (Enforcement.ways): the fenced UPDATE (one, where the
        # lock is kept in the row), its audit row and the time read back are the batch.
        if not shape.finishes or not self._sends_batches():
            return None
        statements = w.statement(shape)
        if not q.shape.single_write or w.trail.reviews is not None or len(statements) != 1:
            return None
        held = w.db.held
        user = sa.bindparam("wb_user", type_=sa.String())
        event = w.audit_event(
            shape, sa.bindparam("wb_a_key", type_=sa.String()), sa.bindparam("wb_a_token", type_=sa.String()), user
        ).where(batches.CHANGED == 1)
        sample = {
            "wb_key": None,
            "wb_user": "",
            **q.shape.key_params(None),
            **q.shape.token_params(q.shape.new_token_value()),
        }
        return batches.FinishBatch(
            (
                held.prepare(statements[0], sample),
                held.prepare(batches.REMEMBER_CHANGED),
                held.prepare(
                    sa.insert(w.trail.table).from_select(guarded.AUDIT_COLUMNS, event),
                    {"wb_user": "", "wb_a_key": "", "wb_a_token": ""},
                ),
                held.prepare(sa.select(batches.CHANGED, sa.type_coerce(q.now(), sa.DateTime(timezone=q.aware)))),
            )
        )

    def run(self, write: writes.Write) -> writes.Row | None:
        finish = self.finish(write.shape)
        assert finish is not None  # takes() said so
        held = self.w.db.held
        if self._commit is None:
            self._commit = held.prepare(batches.COMMIT)
        commit = self._commit
        params = self.w.finish_params(write.key, write.token, write.user)

        def once() -> writes.Row | None:
            results = held.run([*finish.runs(params), (commit, {})])
            held_fence, at = finish.outcome(results[:-1])
            return {"wb_now": at} if held_fence else None

        return self.w.db.retrying(once)
