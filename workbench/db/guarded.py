"""Compare-and-set writes to a locked row (save, complete, release, extend) with their audit row.

Each write succeeds only if exactly one row matches key + current token + live lock. On
PostgreSQL the UPDATE and the audit INSERT are one statement (a data-modifying CTE, one round
trip); elsewhere they are two statements in one transaction. Statements are built once per shape
and reused with bound values, which keeps the per-operation client cost small.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import typing
from collections.abc import Callable, Mapping
from typing import Any

import sqlalchemy as sa

from workbench.core import models, workflow
from workbench.db import audit as audit_mod
from workbench.db import batches, clock, connect, enforcement, fastpath, lockrules, lockshapes, mapping, roles
from workbench.db import deferrals as deferrals_mod
from workbench.db import notes as notes_mod
from workbench.db import reviews as reviews_mod
from workbench.db.rules import pg_names

# The audit trail's columns an audit row written in SQL fills (GuardedWriter._audit_event).
_AUDIT_COLUMNS = ["queue", "item_key", "event", "actor", "owner", "token", "at", "reason", "outcome", "detail"]
# Writes that give the item back with a reason the operator chose (the audit row keeps it): the
# own-lock transitions of core/workflow.py that take a reason.
_REASONED = workflow.REASONED
_W = workflow.Write
# The names plain_finish's statement takes per call (finish_params), as a fast statement's sample.
FINISH_SAMPLE: Mapping[str, Any] = {"wb_key": None, "wb_token": None, "wb_a_token": "", "wb_user": ""}


@dataclasses.dataclass(frozen=True)
class Shape:
    """What a guarded write does; statements are cached per shape."""

    kind: models.EventKind
    edits: tuple[str, ...] = ()
    outcome: str | None = None  # complete: which outcome's writes
    unlock: bool = False  # complete and release clear the lock columns
    release_writes: bool = False  # release: the queue's on_release writes
    escalate_writes: bool = False  # escalate: the queue's on_escalate writes
    extend: bool = False
    note: bool = False  # a note (release, complete) written with it: the parameter wb_note
    reason_writes: str | None = None  # release: the configured reason whose values it also writes
    to_review: bool = False  # complete: chosen for review (four eyes): the review's values, its record

    @classmethod
    def of(cls, transition: str, **given: Any) -> Shape:
        """The write of `transition`, one under the caller's own live lock (core/workflow.py): its audit
        event, and whether it clears the lock, writes on_release or moves the expiry, as the table says."""
        t = workflow.TRANSITIONS[transition]
        if t.lock is not workflow.LockRule.OWN_LIVE_HERE or t.event is None:
            raise ValueError(f"{transition} is not a write under the caller's own lock")
        return cls(
            t.event,
            unlock=_W.LOCK_CLEARED in t.writes,
            release_writes=_W.ON_RELEASE in t.writes,
            escalate_writes=_W.ON_ESCALATE in t.writes,
            extend=_W.LOCK_EXTENDED in t.writes,
            **given,
        )


class GuardedWriter:
    def __init__(
        self,
        db: connect.Database,
        q: mapping.BoundQueue,
        trail: audit_mod.AuditTrail,
        enforced: enforcement.Enforcement | None = None,
    ) -> None:
        self.db, self.q, self.trail = db, q, trail
        # How the writes run (procedures, trusted function, one statement, batch, two steps): asked, never probed.
        # (A writer made only to render its statements, with no database, gets one of its own.)
        self.enforcement = enforced or enforcement.Enforcement(db, q, trail.table.schema)
        self.one_statement = self.enforcement.one_statement
        self._cache: dict[Shape, Any] = {}
        now = q.now()
        self._read_now = sa.select(sa.type_coerce(now, sa.DateTime(timezone=q.aware)))
        self._read_lock = (
            sa.select(*q.lock_select_columns(now))
            .select_from(q.source)
            .where(q.key == sa.bindparam("wb_key", type_=q.key.type))
        )
        self._fast: dict[Shape, fastpath.FastStatement] = {}
        self._bind_processors: dict[Shape, list[tuple[int, Any]]] = {}
        self._before: dict[Shape, sa.Select[Any]] = {}  # the edited columns' values before a write
        self._item_text: sa.ColumnElement[Any] | None = None  # see item_text()

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
        """The row's new lock columns (wb_*) if the write happened, None if the fence failed; with
        shape.note, `note` is written with it, in the same transaction; a defer keeps the item back
        until `until` (aware); a Complete chosen for review records `why` it was."""
        q = self.q
        # SQL Server under `workbench grants`: the queue's procedure does the write and its record.
        done = self.enforcement.by_procedures(
            lambda calls: calls.write(
                shape.kind,
                key=key,
                token=token,
                user=user,
                edits=edits,
                reason=reason,
                note=note,
                until=until,
                outcome=shape.outcome,
            )
        )
        if done is not enforcement.OWN:
            return typing.cast(Mapping[Any, Any] | None, done)
        params: dict[str, Any] = {
            "wb_key": key,
            "wb_user": user,
            **q.shape.key_params(key),
            **q.shape.token_params(token),
        }
        if shape.edits:
            for i, name in enumerate(shape.edits):
                params[f"wb_e{i}"] = (edits or {})[name]
        if shape.extend and q.shape.extend_moves_time:
            params["wb_extend_to"] = extend_until
        if shape.note:
            params["wb_note"] = notes_mod.checked(note)
        if shape.to_review:
            params["wb_why"] = why
            detail = {**(detail or {}), "review": why}
        deferring = workflow.writes(shape.kind, _W.DEFERRAL)
        if deferring:
            detail = {"until": until.astimezone(dt.UTC).isoformat()}
        if self._one_statement(shape):
            if shape.kind in _REASONED:
                params["wb_a_reason"] = reason
            if shape.to_review:
                params["wb_a_detail"] = json.dumps(detail, sort_keys=True)
            if deferring:
                params["wb_until"] = deferrals_mod.stored(until)
                params["wb_a_detail"] = json.dumps(detail, sort_keys=True)
            if shape.unlock:
                params["wb_a_token"] = audit_mod.token_digest(token)  # what the trail keeps of it
            fast = self._fast_statement(shape, params)
            if shape.edits:
                for i, processor in self._processors(shape):
                    params[f"wb_e{i}"] = processor(params[f"wb_e{i}"])
            rows = fast.run(params)
            return rows[0] if rows else None
        audit = {
            "wb_a_actor": user,
            "wb_a_reason": reason,
            "wb_a_detail": json.dumps(detail, sort_keys=True, default=str) if detail else None,
        }
        stmt = self._statement(shape)
        if deferring:
            params["wb_until"] = until
        try:
            return self.db.write(lambda conn: self._two_step(conn, stmt, shape, params, audit, token))
        except lockshapes.FenceFailed:  # rolled back
            return None

    def finisher(self, shape: Shape) -> Callable[[Any, str, str], Any] | None:
        """For a write without edits or reason that clears the lock (Complete) in one round trip (one
        statement, or one batch of them): a function (key, token, user) -> the database time of the
        write, or None if the fence failed. None where the write takes more round trips."""
        if not self.finisher_shape(shape):
            return None
        if not self._one_statement(shape):
            return self._batched_finisher(shape) if self.enforcement.batches else None
        login = self.enforcement.trusted_complete()
        if login is not None:
            return self._trusted_finisher(shape, login)
        return self._plain_finisher(shape)

    def plain_finish(self, shape: Shape) -> sa.Select[Any] | None:
        """The one statement of a Complete without edits as it runs without grants (returning the
        time only), for a claim method to run in one call with the claim of the next item
        (ClaimMethod.finish_then_claim); None where the Complete is not one statement, or where
        `workbench grants` has the database's own function do it."""
        if not self.finisher_shape(shape) or not self._one_statement(shape):
            return None
        if self.enforcement.trusted_complete() is not None:
            return None
        return typing.cast(sa.Select[Any], self._statement(shape))

    def finish_params(self, key: Any, token: str, user: str) -> dict[str, Any]:
        """The values plain_finish's statement is run with."""
        shape = self.q.shape
        return {
            "wb_key": key,
            **shape.key_params(key),
            **shape.token_params(token),
            "wb_a_token": audit_mod.token_digest(token),
            "wb_user": user,
        }

    @staticmethod
    def finisher_shape(shape: Shape) -> bool:
        """Is this a write that clears the lock without a reason (a Complete)?"""
        return shape.unlock and shape.kind not in _REASONED

    def _trusted_finisher(self, shape: Shape, login: str) -> Callable[[Any, str, str], Any]:
        """Under `workbench grants`: the database's own Complete (db/rules/pg_trusted.py), the same statement
        run as the table's owner for this login; back to the plain statement if it went away."""
        fast = fastpath.FastStatement(
            self.db.held,
            pg_names.complete_call(self.db.held.engine.dialect, self.q, self.trail.table.schema),
            {"wb_key": None, "wb_token": "", "wb_outcome": ""},
        )
        plain: list[Callable[[Any, str, str], Any]] = []

        def finish(key: Any, token: str, user: str) -> Any:
            if plain:
                return plain[0](key, token, user)
            if user != login:  # the function completes for the login only
                raise roles.login_mismatch_error(user, login)
            try:
                rows = fast.rows({"wb_key": key, "wb_token": str(token), "wb_outcome": shape.outcome})
            except sa.exc.DBAPIError as exc:
                if not self.enforcement.function_gone(exc):
                    raise
                plain.append(self._plain_finisher(shape))  # `grants --revoke` while this process ran
                return plain[0](key, token, user)
            return rows[0][0] if rows else None

        return finish

    def _one_statement(self, shape: Shape) -> bool:
        """Is this write one statement (PostgreSQL), or statements in a transaction? A write with edits
        takes the latter everywhere: the audit keeps each changed column's value before and after,
        read in the same transaction (a Save or a Complete with edits, a few round trips more)."""
        return self.one_statement and not shape.edits

    def statement(self, shape: Shape) -> Any:
        """The statement (or statements) of a write of this shape, as run without grants."""
        return self._statement(shape)

    def _plain_finisher(self, shape: Shape) -> Callable[[Any, str, str], Any]:
        fast = self._fast_statement(shape, FINISH_SAMPLE)

        def finish(key: Any, token: str, user: str) -> Any:
            rows = fast.rows(self.finish_params(key, token, user))
            return rows[0][0] if rows else None  # the statement returns wb_now only

        return finish

    def finish_batch(self, shape: Shape) -> batches.FinishBatch | None:
        """A Complete without edits as statements of a batch (MySQL/MariaDB, batches.py), without its
        COMMIT. None where writes are not batched, for a lock kept outside the row or a queue whose
        Complete also decides a review."""
        q = self.q
        if not self.finisher_shape(shape) or self._one_statement(shape) or not self.enforcement.batches:
            return None
        statements = self._statement(shape)
        if not q.shape.one_statement or self.trail.reviews is not None or len(statements) != 1:
            return None
        held = self.db.held
        user = sa.bindparam("wb_user", type_=sa.String())
        event = self._audit_event(
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
                    sa.insert(self.trail.table).from_select(_AUDIT_COLUMNS, event),
                    {"wb_user": "", "wb_a_key": "", "wb_a_token": ""},
                ),
                held.prepare(sa.select(batches.CHANGED, sa.type_coerce(q.now(), sa.DateTime(timezone=q.aware)))),
            )
        )

    def _batched_finisher(self, shape: Shape) -> Callable[[Any, str, str], Any] | None:
        """A Complete as one batch of statements (MySQL/MariaDB, batches.py): finish_batch's and
        COMMIT, one round trip."""
        finish = self.finish_batch(shape)
        if finish is None:
            return None
        held = self.db.held
        commit = held.prepare(batches.COMMIT)

        def once(key: Any, token: str, user: str) -> Any:
            results = held.run([*finish.runs(self.finish_params(key, token, user)), (commit, {})])
            held_fence, at = finish.outcome(results[:-1])
            return at if held_fence else None

        return lambda key, token, user: self.db.retrying(lambda: once(key, token, user))

    def _fast_statement(self, shape: Shape, sample: Mapping[str, Any]) -> fastpath.FastStatement:
        fast = self._fast.get(shape)
        if fast is None:
            fast = self._fast[shape] = fastpath.FastStatement(self.db.held, self._statement(shape), sample)
        return fast

    def _processors(self, shape: Shape) -> list[tuple[int, Any]]:
        """Bind processors of edited columns (e.g. JSON), which the fast path must apply itself."""
        if shape not in self._bind_processors:
            dialect = self.db.fast_engine.dialect
            found = []
            for i, name in enumerate(shape.edits):
                processor = self.q.table.c[name].type._cached_bind_processor(dialect)
                if processor is not None:
                    found.append((i, processor))
            self._bind_processors[shape] = found
        return self._bind_processors[shape]

    def _two_step(
        self,
        conn: sa.Connection,
        statements: list[sa.Executable],
        shape: Shape,
        params: dict[str, Any],
        audit: dict[str, Any],
        token: str,
    ) -> Mapping[Any, Any] | None:
        q = self.q
        before = conn.execute(self._read_before(shape), {"wb_key": params["wb_key"]}).first() if shape.edits else None
        if not q.shape.run_guarded(conn, statements, params):
            return None
        if before is not None:
            audit = {**audit, "wb_a_detail": self._with_changes(audit["wb_a_detail"], shape, before, params)}
        row: Mapping[Any, Any]
        if shape.unlock:
            row = {"wb_key": params["wb_key"], "wb_now": conn.execute(self._read_now).scalar()}
        else:
            row = conn.execute(self._read_lock, {"wb_key": params["wb_key"]}).mappings().one()
            token = q.lock_from_row(row).token  # an extend may move the lock time, and with it the token
        detail = json.loads(audit["wb_a_detail"]) if audit["wb_a_detail"] else None
        self.trail.write(
            conn,
            [
                self.trail.row(
                    shape.kind,
                    params["wb_key"],
                    audit["wb_a_actor"],
                    owner=audit["wb_a_actor"],
                    token=token,
                    reason=audit["wb_a_reason"],
                    outcome=shape.outcome,
                    detail=detail,
                )
            ],
        )
        if workflow.writes(shape.kind, _W.COOLDOWN):
            self.trail.cool_down(conn, params["wb_key"], audit["wb_a_actor"], q.config.release_cooldown_seconds)
        deferrals = self.trail.deferrals
        if deferrals is not None and workflow.writes(shape.kind, _W.DEFERRAL_FORGOTTEN):
            deferrals.forget(conn, params["wb_key"])
        if deferrals is not None and workflow.writes(shape.kind, _W.DEFERRAL):
            deferrals.replace(conn, params["wb_key"], audit["wb_a_actor"], params["wb_until"], audit["wb_a_reason"])
        if shape.note:
            self._notes().add(conn, params["wb_key"], audit["wb_a_actor"], params["wb_note"], shape.kind.value)
        if shape.to_review:
            self._to_review().open(conn, params["wb_key"], audit["wb_a_actor"], params["wb_why"])
        if self.trail.reviews is not None and shape.outcome is not None:
            self.trail.reviews.decide(conn, params["wb_key"], audit["wb_a_actor"], shape.outcome)
        return row

    def _read_before(self, shape: Shape) -> sa.Select[Any]:
        """The edited columns as they are before the write (read in its transaction); built once per shape."""
        if shape not in self._before:
            q = self.q
            self._before[shape] = sa.select(*(q.table.c[name] for name in shape.edits)).where(
                q.key == sa.bindparam("wb_key", type_=q.key.type)
            )
        return self._before[shape]

    def _with_changes(self, detail: str | None, shape: Shape, before: Any, params: Mapping[str, Any]) -> str:
        """The audit detail with {"changes": {column: [before, after]}} for each column the write changed
        (`audit_hidden` columns: [null, null], their values left out)."""
        data = json.loads(detail) if detail else {}
        changes = self.q.changes(
            dict(zip(shape.edits, before, strict=True)),
            {name: params[f"wb_e{i}"] for i, name in enumerate(shape.edits)},
        )
        if changes:
            data["changes"] = changes
        return json.dumps(data, sort_keys=True, default=audit_mod.json_value)

    def _to_review(self) -> reviews_mod.Reviews:
        if self.trail.to_review is None:
            raise AssertionError("a Complete chosen for review needs the trail's reviews")
        return self.trail.to_review

    def _notes(self) -> notes_mod.Notes:
        if self.trail.notes is None:
            raise AssertionError("a write with a note needs the trail's notes")
        return self.trail.notes

    # -- statements -------------------------------------------------------------------------

    def _statement(self, shape: Shape) -> Any:
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

    def _build(self, shape: Shape) -> Any:
        """The statements of a write (see LockShape.guarded_statements), or on PostgreSQL one
        statement that also writes the audit row."""
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
        if not self._one_statement(shape):
            return statements
        update = statements[0]
        assert isinstance(update, sa.Update)
        # Complete and Release only need the time; the others return the lock as it is now.
        returned = (
            [q.key.label("wb_key"), sa.type_coerce(now, sa.DateTime(timezone=q.aware)).label("wb_now")]
            if shape.unlock
            else q.lock_select_columns(now)
        )
        upd = update.returning(*returned).cte("wb_written")
        token = (
            sa.bindparam("wb_a_token", type_=sa.String()) if shape.unlock else q.backend.token_digest(upd.c.wb_token)
        )
        event = self._audit_event(shape, sa.cast(upd.c.wb_key, sa.String(200)), token, user).select_from(upd)
        # Complete and Release send back only the time: the caller knows the key.
        result = sa.select(upd.c.wb_now) if shape.unlock else sa.select(upd)
        stmt = result.add_cte(sa.insert(self.trail.table).from_select(_AUDIT_COLUMNS, event).cte("wb_event"))
        if shape.note:
            n, notebook = self._notes().table, self._notes().queue
            written = sa.select(
                sa.literal(notebook, literal_execute=True),
                sa.cast(upd.c.wb_key, sa.String(200)),
                user,
                clock.db_now(),
                sa.literal(shape.kind.value, literal_execute=True),
                sa.bindparam("wb_note", type_=n.c.text.type),
            ).select_from(upd)
            stmt = stmt.add_cte(
                sa.insert(n).from_select(["queue", "item_key", "author", "at", "kind", "text"], written).cte("wb_note")
            )
        stmt = self._review_ctes(stmt, shape, upd, user)
        d = self.trail.deferrals
        deferral = workflow.writes(shape.kind, _W.DEFERRAL)
        if d is not None and (deferral or workflow.writes(shape.kind, _W.DEFERRAL_FORGOTTEN)):
            # A release forgets the item's deferral; a defer replaces it.
            gone: sa.ColumnElement[bool] = d.table.c.item_key.in_(sa.select(sa.cast(upd.c.wb_key, sa.String(200))))
            if deferral:
                gone = sa.or_(gone, deferrals_mod.lapsed(d.table))
            stmt = stmt.add_cte(sa.delete(d.table).where(d.table.c.queue == q.name, gone).cte("wb_undeferred"))
            if deferral:
                kept = sa.select(
                    sa.literal(q.name, literal_execute=True),
                    sa.cast(upd.c.wb_key, sa.String(200)),
                    user,
                    sa.bindparam("wb_until", type_=d.table.c.until.type),
                    clock.db_now(),
                    sa.bindparam("wb_a_reason", type_=sa.String()),
                ).select_from(upd)
                stmt = stmt.add_cte(
                    sa.insert(d.table)
                    .from_select(["queue", "item_key", "actor", "until", "at", "reason"], kept)
                    .cte("wb_deferred")
                )
        c = self.trail.cooldown
        if workflow.writes(shape.kind, _W.COOLDOWN) and c is not None and q.config.release_cooldown_seconds > 0:
            actor = user
            until = clock.add_seconds(
                clock.db_now(),
                sa.bindparam(None, q.config.release_cooldown_seconds, type_=sa.Integer(), literal_execute=True),
            )
            remember = sa.select(
                sa.literal(q.name, literal_execute=True), actor, sa.cast(upd.c.wb_key, sa.String(200)), until
            ).select_from(upd)
            stmt = stmt.add_cte(
                sa.insert(c).from_select(["queue", "actor", "item_key", "until"], remember).cte("wb_cool"),
                sa.delete(c)
                .where(c.c.queue == q.name, c.c.actor == actor, c.c.until <= clock.db_now())
                .cte("wb_lapsed"),
            )
        return stmt

    def _audit_event(
        self, shape: Shape, key: sa.ColumnElement[Any], token: sa.ColumnElement[Any], user: sa.ColumnElement[Any]
    ) -> sa.Select[Any]:
        """The audit row of a write as a SELECT (of _AUDIT_COLUMNS), written in SQL with the write;
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

    def _review_ctes(self, stmt: Any, shape: Shape, upd: sa.CTE, user: sa.ColumnElement[Any]) -> Any:
        """A Complete chosen for review records who did it; one in a reviewing queue, the verdict."""

        def matches(column: sa.ColumnElement[Any]) -> sa.ColumnElement[bool]:
            return column.in_(sa.select(sa.cast(upd.c.wb_key, sa.String(200))))

        written: list[sa.Executable] = []
        if shape.to_review:
            written += self._to_review().open_statements(
                matches, sa.cast(upd.c.wb_key, sa.String(200)), upd, user, sa.bindparam("wb_why", type_=sa.String())
            )
        if self.trail.reviews is not None and shape.outcome is not None:
            written += self.trail.reviews.decide_statements(matches, user, shape.outcome)
        for i, statement in enumerate(written):
            stmt = stmt.add_cte(typing.cast(Any, statement).cte(f"wb_review{i}"))
        return stmt

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
        capped = self.q.config.max_lock_seconds is not None
        return self.q.shape.extends_something(self._new_expiry(now), capped=capped)
