"""Compare-and-set writes to a locked row (save, complete, release, extend) with their audit row: their statements,
and the one executor that runs each by the ways its queue was bound with.

Each write succeeds only if exactly one row matches key + current token + live lock. Statements are built
once per shape and reused with bound values, which keeps the per-operation client cost small. How a write
runs (writes.Way: its statements and audit row in one transaction, one statement, a batch, a procedure) is
the queue's Enforcement's choice, handed in when the queue is bound (enforcement.py).
"""

from __future__ import annotations

import datetime as dt
import json
import typing
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa

from workbench.core import workflow
from workbench.db import audit as audit_mod
from workbench.db import clock, connect, lockrules, mapping, writes
from workbench.db import notes as notes_mod
from workbench.db import reviews as reviews_mod
from workbench.db.writes import Shape

# The audit trail's columns an audit row written in SQL fills (GuardedWriter.audit_event).
AUDIT_COLUMNS = ["queue", "item_key", "event", "actor", "owner", "token", "at", "reason", "outcome", "detail"]
# Writes that give the item back with a reason the operator chose (the audit row keeps it): the
# own-lock transitions of core/workflow.py that take a reason.
_REASONED = workflow.REASONED
_W = workflow.Write
# The names a Complete's statement takes per call (finish_params), as a fast statement's sample.
FINISH_SAMPLE: Mapping[str, Any] = {"wb_key": None, "wb_token": None, "wb_a_token": "", "wb_user": ""}
_UNBUILT = object()
__all__ = ["AUDIT_COLUMNS", "FINISH_SAMPLE", "GuardedWriter", "Shape"]


class GuardedWriter:
    """A queue's guarded writes: their statements, and run() — the one executor — which runs each write by
    the first of the queue's ways (writes.Way, in the order its Enforcement chose) that takes it."""

    def __init__(
        self,
        db: connect.Database,
        q: mapping.BoundQueue,
        trail: audit_mod.AuditTrail,
        ways: Callable[[GuardedWriter], Sequence[writes.Way]] | None = None,
    ) -> None:
        """`ways`: the queue's ways, made for this writer (Enforcement.ways); none for a writer made
        only to render its statements, with no database."""
        self.db, self.q, self.trail = db, q, trail
        self._cache: dict[Shape, list[sa.Executable]] = {}
        self._item_text: sa.ColumnElement[Any] | None = None  # see item_text()
        self._taking: dict[Shape, tuple[writes.Way, ...]] = {}  # per shape: the ways that take it
        self._then: dict[Hashable, writes.ThenClaim | None] = {}
        self.ways: tuple[writes.Way, ...] = tuple(ways(self)) if ways is not None else ()

    def run(
        self,
        shape: Shape,
        *,
        key: Any,
        token: str,
        user: str,
        edits: Mapping[str, Any] | None = None,
        reason: str | None = None,
        detail: Mapping[str, Any] | None = None,
        extend_until: Any = None,
        note: str | None = None,
        until: Any = None,
        why: str | None = None,
    ) -> Mapping[Any, Any] | None:
        """The row's new lock columns (wb_*; a Complete's and a Release's: wb_now) if the write happened,
        None if the fence failed; with shape.note, `note` is written with it, in the same transaction; a
        defer keeps the item back until `until` (aware); a Complete chosen for review records `why` it was."""
        return self.execute(
            writes.Write(shape, key, token, user, edits, reason, detail, extend_until, note, until, why)
        )

    def execute(self, write: writes.Write) -> writes.Row | None:
        """`write` by the first way that takes its shape and does not pass."""
        ways = self._taking.get(write.shape)
        if ways is None:
            ways = self._taking[write.shape] = tuple(way for way in self.ways if way.takes(write.shape))
        for way in ways:
            done = way.run(write)
            if done is not writes.PASS:
                return done
        raise AssertionError(f"no way of {self.q.name} runs {write.shape}")

    def complete(self, write: writes.Write, then: writes.ThenNext | None = None) -> tuple[writes.Row | None, Any]:
        """A Complete (`write`); with `then`, followed by the claim of the next item in one call where the
        way that runs it has a part a claim method takes: (the row, the claim or None). Else, and where
        the fence failed and nothing was claimed, the Complete on its own: (the row, PASS)."""
        run = None
        if then is not None:
            run = self._then.get(then.cached, _UNBUILT)
            if run is _UNBUILT:
                part = self._finish(write.shape)
                run = self._then[then.cached] = then.make(part) if part is not None else None
        if run is not None and then is not None and then.allowed():
            params = {**self.finish_params(write.key, write.token, write.user), **then.filters}
            result = typing.cast(writes.ThenClaim, run)(params)
            if result is not None:
                at, claimed = result
                return {"wb_key": write.key, "wb_now": at}, claimed
            # The fence failed and nothing was claimed: the Complete alone tells a retry of an accepted
            # Complete from a lost lock.
        return self.execute(write), writes.PASS

    def _finish(self, shape: Shape) -> Any:
        """The part of a Complete a claim method runs with its claim: the first way's that has an answer."""
        for way in self.ways:
            if way.takes(shape):
                part = way.finish(shape)
                if part is not writes.PASS:
                    return part
        return None

    def values(self, write: writes.Write) -> tuple[dict[str, Any], Mapping[str, Any] | None]:
        """The values every way's statements take (wb_*), and the audit row's detail."""
        shape, q = write.shape, self.q
        params: dict[str, Any] = {
            "wb_key": write.key,
            "wb_user": write.user,
            **q.shape.key_params(write.key),
            **q.shape.token_params(write.token),
        }
        if shape.edits:
            edits = write.edits or {}
            for i, name in enumerate(shape.edits):
                params[f"wb_e{i}"] = edits[name]
        if shape.extend and q.shape.extend_moves_time:
            params["wb_extend_to"] = write.extend_until
        if shape.note:
            params["wb_note"] = notes_mod.checked(write.note)
        detail = write.detail
        if shape.to_review:
            params["wb_why"] = write.why
            detail = {**(detail or {}), "review": write.why}
        if workflow.writes(shape.kind, _W.DEFERRAL):
            detail = {"until": write.until.astimezone(dt.UTC).isoformat()}
        return params, detail

    def finish_params(self, key: Any, token: str, user: str) -> dict[str, Any]:
        """The values a Complete's one statement (or batch) is run with."""
        shape = self.q.shape
        return {
            "wb_key": key,
            **shape.key_params(key),
            **shape.token_params(token),
            "wb_a_token": audit_mod.token_digest(token),
            "wb_user": user,
        }

    def statement(self, shape: Shape) -> list[sa.Executable]:
        """The statements of a write of this shape (LockShape.guarded_statements), built once; its audit row
        is the way's to write (two_steps.py after them, one_statement.py with them in one statement)."""
        return self._statement(shape)

    def to_review(self) -> reviews_mod.Reviews:
        if self.trail.to_review is None:
            raise AssertionError("a Complete chosen for review needs the trail's reviews")
        return self.trail.to_review

    def notes(self) -> notes_mod.Notes:
        if self.trail.notes is None:
            raise AssertionError("a write with a note needs the trail's notes")
        return self.trail.notes

    # -- statements -------------------------------------------------------------------------

    def _statement(self, shape: Shape) -> list[sa.Executable]:
        if shape not in self._cache:
            self._cache[shape] = self._build(shape)
        return self._cache[shape]

    def fence(self) -> sa.ColumnElement[bool]:
        """The table's LockRule.OWN_LIVE_HERE (core/workflow.py), the precondition of every write built
        here (Shape.of admits no other transition): the caller's own live lock, taken in this queue."""
        q = self.q
        now = q.now()
        # The user is part of the fence too: a token that leaked (a screenshot, a log) must not let
        # someone else write under another person's lock.
        key = q.shape.key_clause(q.key)
        user = sa.bindparam("wb_user", type_=q.user.type)
        # And the lock is this queue's (lockrules.owned: in its state, and claimed last in this queue where
        # other queues over the table serve the same rows): one taken in another queue of the same table is
        # written only through that one, never with this queue's outcomes or on_release.
        return sa.and_(
            q.shape.fence_clause(key, q.shape.held_live(user, now)), lockrules.owned(q, self.trail, self.item_text)
        )

    def held(self) -> sa.ColumnElement[bool]:
        """The fence and the row rule (BoundQueue.in_work) as one condition on the queue's source: what a read
        of the caller's lock (QueueReading.check) holds the row to, as every write built here does. Where the
        lock lives in the row the fence carries the rule already (BoundQueue.held_here), and it is not said
        twice: through PgBouncer every condition is planned again at each of the window's checks (issue 51)."""
        q = self.q
        return sa.and_(self.fence(), q.in_work()) if q.shape.separate_locks else self.fence()

    def item_text(self) -> sa.ColumnElement[Any]:
        """The key (:wb_key) as the trail keeps it (a collation read once on MySQL), for lockrules.owned."""
        if self._item_text is None:
            item = sa.bindparam("wb_key", type_=self.q.key.type)
            self._item_text = (
                self.db.read(lambda conn: self.trail.key_text(conn, item))
                if self.db is not None
                else sa.cast(item, self.trail.table.c.item_key.type)
            )
        return self._item_text

    def _build(self, shape: Shape) -> list[sa.Executable]:
        """The statements of a write (see LockShape.guarded_statements)."""
        q = self.q
        now = q.now()
        user = sa.bindparam("wb_user", type_=sa.String())
        values: dict[str, Any] = {}  # the queue's row
        lock_values: dict[str, Any] = {}
        columns = {c.name: c for c in q.table.c}
        for i, name in enumerate(shape.edits):
            values[name] = sa.bindparam(f"wb_e{i}", type_=columns[name].type)
        if shape.outcome is not None:
            values.update(q.writes(q.outcomes[shape.outcome], user, now))
        if shape.to_review:
            values.update(q.writes(q.review_writes, user, now))
        if shape.release_writes:
            values.update(q.writes(q.on_release, user, now))
        if shape.reason_writes is not None:
            values.update(q.writes(q.reason_writes[shape.reason_writes], user, now))
        if shape.escalate_writes:
            values.update(q.writes(q.on_escalate, user, now))
        where = self.fence()
        if shape.extend:
            lock_values.update(self._extend_writes(now))
            where = sa.and_(where, self._extends_something(now))
        statements = q.shape.guarded_statements(
            q.table,
            q.key,
            where,
            values,
            lock_values,
            shape.unlock,
            completes=shape.outcome is not None,
            in_work=q.in_work(),
        )
        return statements

    def audit_event(
        self, shape: Shape, key: sa.ColumnElement[Any], token: sa.ColumnElement[Any], user: sa.ColumnElement[Any]
    ) -> sa.Select[Any]:
        """The audit row of a write as a SELECT (of AUDIT_COLUMNS), written in SQL with the write;
        the caller gives the key and the token's digest as the statement has them."""
        q = self.q
        # Everything but key, token, user (and a release's reason) is fixed by the shape, so it
        # is part of the statement text instead of a parameter sent on every call.
        detail = json.dumps({"columns": sorted(shape.edits)}, sort_keys=True) if shape.edits else None
        return sa.select(
            sa.literal(q.name, literal_execute=True),
            key,
            sa.literal(shape.kind.value, literal_execute=True),
            user,
            user,
            token,
            clock.db_now(),
            sa.bindparam("wb_a_reason", type_=sa.String()) if shape.kind in _REASONED else sa.null(),
            sa.literal(shape.outcome, literal_execute=True) if shape.outcome else sa.null(),
            sa.bindparam("wb_a_detail", type_=sa.Text())
            if workflow.writes(shape.kind, _W.DEFERRAL) or shape.to_review
            else sa.literal(detail, sa.Text(), literal_execute=True)
            if detail
            else sa.null(),
        )

    def _new_expiry(self, now: sa.ColumnElement[Any]) -> sa.ColumnElement[Any]:
        """now + lock duration, but never past claim time + max_lock_duration."""
        q = self.q
        wanted = clock.add_seconds(now, sa.bindparam(None, q.config.lock_seconds, type_=sa.Integer()))
        if q.config.max_lock_seconds is None:
            return wanted
        cap = clock.add_seconds(q.time, sa.bindparam(None, q.config.max_lock_seconds, type_=sa.Integer()))
        return sa.case((wanted > cap, cap), else_=wanted)

    def _extend_writes(self, now: sa.ColumnElement[Any]) -> dict[str, Any]:
        # Without an expiry column the lock time moves (and with it the token); the caller applies
        # the cap then, as it knows the original claim time.
        return self.q.shape.extend_writes(self._new_expiry(now))

    def _extends_something(self, now: sa.ColumnElement[Any]) -> sa.ColumnElement[bool]:
        # Without a cap an extension always reaches now + lock duration, even where that is the
        # expiry the lock has (an extend in the claim's clock instant): it only may not go back.
        return self.q.shape.extends_something(self._new_expiry(now), capped=self.q.capped)
