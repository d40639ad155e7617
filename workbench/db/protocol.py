"""The queue protocol enforced by PostgreSQL itself: a trigger lets an operator's login change a queue
row only the way workbench does, and writes the audit row of every change itself.

`workbench grants --apply` installs, beside the roles, column grants and row-level security of
pg_grants.py:

- a BEFORE UPDATE trigger on the queue table. For a login in workbench_operator it accepts only
  the transitions workbench's own statements make (claim a free or expired row that waits, under
  the login's own name with a fresh lock inside the queue's lock limits; save or extend the login's
  own live lock; release or complete it, writing exactly the configured on_release or outcome
  values; undo the login's own Complete within undo_within; return an expired lock to the pool),
  plus for workbench_supervisor force-release, reassign, reopen and move waiting items.
  Anything else fails with SQLSTATE 42501 and changes nothing. For each change it accepts it
  writes the audit row, with session_user as the actor, on the database clock.
- a BEFORE INSERT trigger on the audit table: an operator's or supervisor's own audit row (the
  one workbench's statement writes) is dropped when the database wrote it already, settles what
  only the client knows (a release's reason, save or extend, which of two equal outcomes) of a
  row the database wrote in the same transaction, and is refused otherwise (a forged row).

- the two busiest writes as trusted functions, wb_QUEUE_next() and wb_QUEUE_complete(key, token,
  outcome): workbench's own one-statement claim and Complete, compiled with session_user as the
  claimer and run as the owner, so that they pay neither the trigger (its WHEN clause tests
  current_user) nor row-level security. The engine calls them when they exist.

The functions are SECURITY DEFINER, owned by the login that applies the grants (the table's owner,
who can change the table anyway), with a fixed search_path. Logins that are not workbench
operators (the application that feeds the queue) and the table's owner are not checked: they keep
what their grants give them. Why a trigger for the rest and not only functions the client calls:
every other write keeps workbench's own statement with and without grants, and a hand-written
statement meets the same checks and is recorded the same way as workbench's.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy.sql import util as sql_util

from workbench.config import model
from workbench.core import problems, workflow
from workbench.db import clock, mapping, rowrules, tables, workflow_sql
from workbench.db import deferrals as deferrals_mod
from workbench.db import reviews as reviews_mod
from workbench.db.binding import conditions

ENFORCED_TABLE = "workbench_enforced"
AUDIT_GUARD = "workbench_audit_guard"
DEFERRAL_GUARD = "workbench_deferral_guard"
SETTLE = "workbench_audit_settle"
SETTLE_ARGS = "bigint, text, text, text, text, text"  # its argument types
AUDITED_SETTING = "workbench.audited"  # transaction-local: the audit rows the database wrote
REVIEWED_SETTING = "workbench.reviewed"  # transaction-local: the reviews the database recorded
REVIEW_GUARD = "workbench_review_guard"
NOTES_GUARD = "workbench_notes_guard"
THIS_TRANSACTION = "pg_current_xact_id()::xid"  # a row's xmin equals it: this transaction wrote the row
OPERATOR_ROLE = "workbench_operator"
SUPERVISOR_ROLE = "workbench_supervisor"


def object_name(queue: str, kind: str) -> str:
    """The name of one of `queue`'s database objects (policy, trigger, function): wb_QUEUE_KIND, the
    queue's name cut so that the whole stays within PostgreSQL's 63 characters."""
    base = "wb_" + re.sub(r"[^A-Za-z0-9]+", "_", queue).strip("_").lower()
    return f"{base[: 63 - len(kind) - 1]}_{kind}"


def trigger_name(table: str) -> str:
    """The name of a queue table's protocol trigger and of its function (earlier: of one queue's)."""
    return object_name(table, "protocol")


def check_function_name(queue: str) -> str:
    """The name of `queue`'s check of one update (the table's trigger calls it)."""
    return object_name(queue, "check")


# The writes under the caller's own live lock: one branch of the check function tells them apart by
# what the update changed.
OWN_LOCK = ("release", "defer", "escalate", "complete", "review_accept", "review_send_back", "save", "extend")
CHECK_ROWS = ("o", "n")  # the check function's arguments: the row before and after the update

# plpgsql: a check of the protocol runs inside its trigger only. It writes audit and review rows as
# the owner, so called by hand with made-up rows it would credit a Complete that never happened (its
# EXECUTE is revoked from PUBLIC, see private(); this holds even if someone grants it).
TRIGGER_ONLY = (
    "IF pg_trigger_depth() = 0 THEN\n    RAISE EXCEPTION 'workbench: a check of the protocol is called by "
    "its trigger only' USING ERRCODE = '42501';\n  END IF;"
)


def private(function: str) -> str:
    """Nobody but the owner may call `function` (name and argument types): PostgreSQL gives EXECUTE on a
    new function to PUBLIC. A trigger's function needs no EXECUTE to fire; a check called from a
    SECURITY DEFINER trigger function runs as the owner."""
    return f"REVOKE ALL ON FUNCTION {function} FROM PUBLIC"


class Renderer:
    """SQL text for trigger bodies: values quoted by the dialect, queue columns as OLD.x / NEW.x
    (`rows` names the two aliases), the caller's login as `login`."""

    login = "login"

    def __init__(self, dialect: Any, q: mapping.BoundQueue, rows: tuple[str, str] = ("old", "new")) -> None:
        self.dialect, self.q = dialect, q
        self.prep = dialect.identifier_preparer
        self.old, self.new = q.table.alias(rows[0]), q.table.alias(rows[1])

    def sql(self, expr: sa.ColumnElement[Any], row: sa.FromClause | None = None) -> str:
        if row is not None:
            expr = sql_util.ClauseAdapter(row).traverse(expr)
        text = str(expr.compile(dialect=self.dialect, compile_kwargs={"literal_binds": True}))
        text = text.replace("%%", "%") if self.dialect.paramstyle in ("format", "pyformat") else text
        return f"({text})"  # it goes inside larger conditions: never let an OR in it bind to them

    def literal(self, value: str) -> str:
        return self.sql(sa.literal(value, sa.String()))

    @staticmethod
    def literal_value(conn: sa.Connection, value: Any, type_: Any) -> str:
        text = str(sa.literal(value, type_).compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True}))
        return text.replace("%%", "%") if conn.dialect.paramstyle in ("format", "pyformat") else text

    @staticmethod
    def literal_of(conn: sa.Connection, value: str) -> str:
        return Renderer.literal_value(conn, value, sa.String())

    def col(self, row: sa.FromClause, column: sa.Column[Any]) -> str:
        return self.sql(column, row)

    def unchanged(self, columns: list[sa.Column[Any]]) -> str:
        """None of `columns` changed (compared as text where the type has no equality, e.g. json)."""
        parts = []
        for c in columns:
            old, new = self.col(self.old, c), self.col(self.new, c)
            if isinstance(c.type, (sa.JSON, sa.types.NullType)):
                old, new = f"CAST({old} AS text)", f"CAST({new} AS text)"
            parts.append(f"{old} IS NOT DISTINCT FROM {new}")
        return " AND ".join(parts) or "true"

    def assigned(self, assignments: list[conditions.BoundAssignment], row: sa.FromClause | None = None) -> str:
        """The new row (or `row`) holds what `assignments` write (the user being this login)."""
        parts = []
        for b in assignments:
            new = self.col(self.new if row is None else row, b.column)
            kind = b.assignment.kind
            if kind == "value":
                parts.append(f"{new} IS NOT DISTINCT FROM {self.sql(sa.literal(b.value, type_=b.column.type))}")
            elif kind == "null":
                parts.append(f"{new} IS NULL")
            elif kind == "user":
                parts.append(f"{new} = {self.login}")
            else:  # a time: the database's clock at the write
                parts.append(f"{new} IS NOT NULL")
        return " AND ".join(parts) or "true"


def row_rule(r: Renderer, q: mapping.BoundQueue, *names: str, **ask: Any) -> str:
    """SQL: the row rule the transitions `names` share (db/rowrules.py) over the old row, its state only:
    a check tests the queue's scope once for all its branches (rowrules.scope)."""
    return r.sql(sa.and_(sa.true(), *rowrules.before_all(q, *names, **ask).state), r.old)


def row_after(r: Renderer, q: mapping.BoundQueue, name: str) -> str:
    """SQL: the state transition `name` leaves the row in (its Transition.after) over the new row."""
    clause = rowrules.after(q, name)
    return "true" if clause is None else r.sql(clause, r.new)


# What each kind of write (core/workflow.py's Write) writes in the queue's row, for a queue and the
# variant a branch tells apart (which outcome, which release reason, a Complete chosen for review).
# Kinds that write only workbench's own tables (the audit, deferrals, notes, reviews, cool-downs)
# write no column of the row. Every kind is listed: a new one fails here, when grants renders.
_ROW_WRITES: Mapping[workflow.Write, Callable[[mapping.BoundQueue, str | None, str | None, bool], list[Any]]] = {
    workflow.Write.LOCK_TAKEN: lambda q, o, r, v: q.lock_columns,
    workflow.Write.LOCK_CLEARED: lambda q, o, r, v: q.lock_columns,
    workflow.Write.LOCK_EXTENDED: lambda q, o, r, v: q.lock_columns,
    workflow.Write.LOCK_HANDED: lambda q, o, r, v: q.lock_columns,
    workflow.Write.ON_CLAIM: lambda q, o, r, v: q.on_claim,
    workflow.Write.ON_RELEASE: lambda q, o, r, v: q.on_release,
    workflow.Write.ON_REOPEN: lambda q, o, r, v: q.on_reopen,
    workflow.Write.ON_ESCALATE: lambda q, o, r, v: q.on_escalate,
    workflow.Write.REASON_VALUES: lambda q, o, r, v: q.reason_writes[r] if r is not None else [],
    workflow.Write.EDITS: lambda q, o, r, v: q.editable,
    workflow.Write.OUTCOME: lambda q, o, r, v: q.outcomes[o] if o is not None else [],
    workflow.Write.REVIEW_HANDOVER: lambda q, o, r, v: q.review_writes if v else [],
    # A supervisor's move may change any column the trigger checks but the lock's.
    workflow.Write.MOVED_VALUES: lambda q, o, r, v: minus(checked_columns(q), q.lock_columns),
    workflow.Write.REVIEW_VERDICT: lambda q, o, r, v: [],
    workflow.Write.REVIEW_WITHDRAWN: lambda q, o, r, v: [],
    workflow.Write.DEFERRAL: lambda q, o, r, v: [],
    workflow.Write.DEFERRAL_FORGOTTEN: lambda q, o, r, v: [],
    workflow.Write.COOLDOWN: lambda q, o, r, v: [],
    workflow.Write.NOTE: lambda q, o, r, v: [],
}


def written_by(
    q: mapping.BoundQueue, *names: str, outcome: str | None = None, reason: str | None = None, reviewed: bool = False
) -> set[str]:
    """The names of the queue-row columns the transitions `names` write, read from their Transition.writes
    (core/workflow.py): with `outcome` its values, with `reason` that release reason's, `reviewed` a
    Complete chosen for review (the review's values)."""
    found: set[str] = set()
    for name in names:
        for write in workflow.TRANSITIONS[name].writes:
            for item in _ROW_WRITES[write](q, outcome, reason, reviewed):
                found.add(item.column.name if isinstance(item, conditions.BoundAssignment) else item.name)
    return found


def kept(
    q: mapping.BoundQueue, *names: str, outcome: str | None = None, reason: str | None = None, reviewed: bool = False
) -> list[sa.Column[Any]]:
    """The checked columns (checked_columns) the transitions `names` leave as they were: every one none of
    them writes (written_by). A branch that admits them holds each to its old value."""
    written = written_by(q, *names, outcome=outcome, reason=reason, reviewed=reviewed)
    return [c for c in checked_columns(q) if c.name not in written]


# What each kind of lock write (Write.LOCK_*) leaves in the row, as the queue's lock shape says it
# (db/lockshapes/: taken, extended, cleared, from its lock_writes, extend_writes, unlock_writes), over
# the row before and after. Every LOCK_* kind is listed: a new one fails here, when grants renders.
_LOCK_AFTER: Mapping[workflow.Write, Callable[[Any, sa.FromClause, sa.FromClause], sa.ColumnElement[bool]]] = {
    workflow.Write.LOCK_TAKEN: lambda shape, o, n: shape.taken(o, n, sa.literal_column(Renderer.login)),
    workflow.Write.LOCK_HANDED: lambda shape, o, n: shape.taken(o, n, None),
    workflow.Write.LOCK_EXTENDED: lambda shape, o, n: shape.extended(o, n),
    workflow.Write.LOCK_CLEARED: lambda shape, o, n: shape.cleared(n),
}


def lock_written(r: Renderer, q: mapping.BoundQueue, *names: str) -> str:
    """SQL: the new row's lock is as the transitions `names` write it (their Write.LOCK_*: a fresh lock of
    this login's, one of another user's, the same lock extended, none), as the queue's lock shape renders
    it; "true" where they write no lock (a branch holds the lock columns to the old row: kept). Refused
    where they write the lock differently (one branch cannot render them)."""
    kinds = {frozenset(w for w in workflow.TRANSITIONS[name].writes if w.name.startswith("LOCK_")) for name in names}
    if len(kinds) != 1:
        raise AssertionError(
            f"transitions {', '.join(names)} differ in their lock writes: one branch cannot render them"
        )
    (kind,) = kinds
    if len(kind) > 1:
        raise AssertionError(f"transitions {', '.join(names)} write the lock {len(kind)} ways at once")
    return "true" if not kind else r.sql(_LOCK_AFTER[next(iter(kind))](q.shape, r.old, r.new))


# The kinds of write whose values a branch checks (Renderer.assigned), in the order the engine writes
# them (db/guarded.py, workqueue.undo_complete): a later one wins a column an earlier one writes too.
_VALUED = (
    workflow.Write.ON_REOPEN,
    workflow.Write.ON_RELEASE,
    workflow.Write.ON_ESCALATE,
    workflow.Write.REASON_VALUES,
    workflow.Write.OUTCOME,
    workflow.Write.REVIEW_HANDOVER,
    workflow.Write.ON_CLAIM,
)


def values_of(
    q: mapping.BoundQueue, *names: str, outcome: str | None = None, reason: str | None = None, reviewed: bool = False
) -> list[conditions.BoundAssignment]:
    """The values the transitions `names` write into the queue's row (their Transition.writes: on_claim,
    on_release, a reason's, an outcome's, a review's, on_reopen), each column once, as the engine writes
    it; a branch that admits them checks the new row holds them."""
    writes = {w for name in names for w in workflow.TRANSITIONS[name].writes}
    chosen: dict[str, conditions.BoundAssignment] = {}
    for write in _VALUED:
        if write in writes:
            for b in _ROW_WRITES[write](q, outcome, reason, reviewed):
                chosen[b.column.name] = b
    return list(chosen.values())


def columns_of(q: mapping.BoundQueue, *groups: list[conditions.BoundAssignment]) -> list[sa.Column[Any]]:
    names = {b.column.name for group in groups for b in group}
    return [c for c in q.table.c if c.name in names]


def minus(columns: list[sa.Column[Any]], *allowed: list[sa.Column[Any]]) -> list[sa.Column[Any]]:
    names = {c.name for group in allowed for c in group}
    return [c for c in columns if c.name not in names]


def queue_trigger(
    conn: sa.Connection, q: mapping.BoundQueue, schema: str, reviewed: model.QueueConfig | None = None
) -> list[str]:
    """`q`'s check of an update of its table by an operator or supervisor (a function of the old and
    the new row: true, with its audit rows written, when it is one of `q`'s operations), and the
    table's trigger, which admits a change that one of the table's enforced queues admits."""
    row_type = conn.dialect.identifier_preparer.format_table(q.table)
    check = _qualified(conn.dialect.identifier_preparer, schema, check_function_name(q.name))
    return [
        _queue_check(conn, q, schema, reviewed),
        private(f"{check}({row_type}, {row_type})"),
        *table_trigger(conn, q, schema, [*enforced_on(conn, q, schema), q.name]),
        enforced_row(conn, q, schema, reviewed),
    ]


def enforced_row(
    conn: sa.Connection,
    q: mapping.BoundQueue,
    schema: str,
    reviewed: model.QueueConfig | None,
    locks: int | None = None,
) -> str:
    """`q` in the list of enforced queues: its table, its lock table (if separate), and for a reviewing
    queue the queue whose completions it reviews and its outcome that sends them back."""
    reviews, send_back = "NULL", "NULL"
    if reviewed is not None and reviewed.review is not None:
        reviews, send_back = (Renderer.literal_of(conn, text) for text in (reviewed.name, reviewed.review.send_back))
    # The queue's own say for the shared guards: the actions it needs a note with (Text.CONFIGURED;
    # NULL: none) and whether it lets items be deferred (Check.ALLOW_DEFER).
    needed = [Renderer.literal_of(conn, action) for action in q.config.notes_required]
    notes = f"ARRAY[{', '.join(needed)}]::text[]" if needed else "NULL"
    defers = "true" if q.config.allow_defer else "false"
    return (
        f"INSERT INTO {conn.dialect.identifier_preparer.format_table(enforced_table(schema))} "
        f"(queue, tbl, locks, reviews, send_back, notes, defers) VALUES ({Renderer.literal_of(conn, q.name)}, "
        f"{_table_oid(conn, q.table)}, {locks if locks is not None else 'NULL'}, {reviews}, {send_back}, "
        f"{notes}, {defers}) "
        "ON CONFLICT (queue) DO UPDATE SET tbl = EXCLUDED.tbl, locks = EXCLUDED.locks, "
        "reviews = EXCLUDED.reviews, send_back = EXCLUDED.send_back, notes = EXCLUDED.notes, "
        "defers = EXCLUDED.defers"
    )


def _queue_check(conn: sa.Connection, q: mapping.BoundQueue, schema: str, reviewed: model.QueueConfig | None) -> str:
    c = _Check(conn, q, schema, reviewed)
    body = f"""
DECLARE
  login text := session_user;
  maybe text[] := ARRAY[]::text[];
  noted text;
  undone text;  -- the outcome of the Complete an undo takes back
  to_review boolean := false;
  changed jsonb;
BEGIN
  {TRIGGER_ONLY}
  -- The table's trigger calls this for operators' and supervisors' changes only (its WHEN clause).
  -- The most frequent changes (a Complete, a claim of a free row) are tested first.
  IF {c.r.unchanged([q.key])} AND {c.scope} THEN
    IF {c.rules.lock(*OWN_LOCK)} THEN
      -- This login's own live lock (a held row is in its queue's todo, or on_claim's state): release,
      -- complete, save, extend.
      IF {lock_written(c.r, q, "release", "defer", "escalate", *c.completes)} THEN{c.given_back()}
      ELSIF {c.r.unchanged(kept(q, "save"))} THEN{c.save()}
      ELSIF {lock_written(c.r, q, "extend")} AND {c.rules.checked("extend")} AND {c.r.unchanged(kept(q, "extend"))} THEN
        {workflow.branch_mark("extend")}
        -- Extend moves the expiry on (never back), the same lock, and writes nothing else.
        {c.record(c.ev("extend"), "login", c.token_old)}
        RETURN true;
      END IF;
    ELSIF {c.rules.lock("claim", "pick")} THEN{c.claim()}
    END IF;{c.undo()}{c.take()}{c.swept()}{c.supervised()}{c.move()}{c.reopen()}
  END IF;
  RETURN false;  -- not one of this queue's operations
END"""
    function = _qualified(c.prep, schema, check_function_name(q.name))
    row_type = c.prep.format_table(q.table)
    return (
        f"CREATE OR REPLACE FUNCTION {function}({CHECK_ROWS[0]} {row_type}, {CHECK_ROWS[1]} {row_type}) "
        f"RETURNS boolean LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp "
        f"AS $wb${body}\n$wb$"
    )


class _Check:
    """The parts of an in-row queue's check function (_queue_check), one method per group of branches;
    what a branch admits comes from the table (Rules, kept, values_of, lock_written, the row rules)."""

    def __init__(
        self, conn: sa.Connection, q: mapping.BoundQueue, schema: str, reviewed: model.QueueConfig | None
    ) -> None:
        self.conn, self.q, self.schema, self.reviewed = conn, q, schema, reviewed
        self.r = r = Renderer(conn.dialect, q, rows=CHECK_ROWS)
        shape, self.prep = q.shape, r.prep
        old, new = r.old, r.new
        now = q.now()
        self.user_old, self.user_new = r.col(old, q.user), r.col(new, q.user)
        expiry_new = r.sql(q.expiry(), new)
        # Check.WITHIN_LIMITS: the new lock's time and expiry within lock_duration (and max_lock_duration).
        self.limit = (
            f"{r.col(new, q.time)} <= {r.sql(now)} AND "
            f"{expiry_new} <= {r.sql(clock.add_seconds(now, shape.seconds(q.config.lock_seconds)))}"
        )
        if q.config.max_lock_seconds and not shape.extend_moves_time:
            self.limit += (
                f" AND {expiry_new} <= "
                f"{r.sql(clock.add_seconds(q.time, shape.seconds(q.config.max_lock_seconds)), new)}"
            )
        self.free_old = r.sql(q.free(), old)
        stale_old, live_old = r.sql(q.stale(now), old), r.sql(q.live(now), old)
        # The queue's scope, which every row rule of the transitions rendered here holds to (db/rowrules.py).
        self.scope = r.sql(
            sa.and_(sa.true(), *rowrules.scope(q, *workflow.rendered_in(workflow.Rendering.PG_TRIGGER))), old
        )
        # A reviewing queue's Complete is the reviewer's verdict (the review guard records it).
        completes = ("complete",) if reviewed is None else ("complete", "review_accept", "review_send_back")
        self.completes = completes
        self.queue_name = r.literal(q.name)
        self.audit = self.prep.format_table(_audit_table(schema))
        self.key = f"CAST({r.col(new, q.key)} AS text)"
        self.at = r.sql(clock.db_now())
        # What the trail keeps of the tokens (NULL without a token column).
        self.token_old, self.token_new = (r.sql(q.backend.token_digest(shape.trail_token()), row) for row in (old, new))
        self.record = recorder(self.audit, self.queue_name, self.key, self.at)
        self.ev = workflow_sql.event
        self.reviews = _own_table(schema, tables.REVIEWS_TABLE)
        self.reviews_table = self.prep.format_table(self.reviews)
        # A reviewing queue never serves an item to the one whose work it is: the new holder (the login,
        # for a claim; the one a supervisor reassigns it to) is not its doer.
        not_own = (
            "true"
            if reviewed is None
            else (
                f"NOT EXISTS (SELECT 1 FROM {self.reviews_table} rv WHERE rv.queue = {self.queue_name} "
                f"AND rv.item_key = {self.key} AND rv.doer = {self.user_new} AND rv.verdict IS NULL)"
            )
        )
        # A held row (the row rule HELD, db/rowrules.py): in `todo`, or in the state on_claim put it in (a
        # status-driven queue's Active is not in its todo), within the queue's scope: the lock is this
        # queue's, as the engine's fence decides it (BoundQueue.held_here, one declaration for both).
        held_old = row_rule(r, q, *OWN_LOCK, "expire", "force_release", "reassign")
        supervisor = f"pg_has_role(session_user, '{SUPERVISOR_ROLE}', 'USAGE')"
        here = f"{held_old} AND {taken_here(conn, q, schema, self.queue_name, self.key)}"
        # The table's precondition and actor kinds (core/workflow.py) as this function writes them: each on
        # the row before; what the row's lock is after is the transition's Write.LOCK_* (lock_written), or,
        # where it writes none, the lock as it was (kept).
        self.rules = workflow_sql.Rules(
            {
                workflow.LockRule.OWN_LIVE_HERE: f"{self.user_old} = login AND {live_old} AND {here}",
                workflow.LockRule.FREE_OR_STALE: f"({self.free_old} OR {stale_old})",
                workflow.LockRule.STALE_HERE: f"{self.user_old} IS NOT NULL AND {stale_old} AND {here}",
                workflow.LockRule.HELD_HERE: f"{self.user_old} IS NOT NULL AND {here}",
                workflow.LockRule.FREE: self.free_old,
                workflow.LockRule.ANY: "true",
            },
            {
                workflow.Actor.OPERATOR: "true",
                workflow.Actor.CLOCK: "true",
                workflow.Actor.SUPERVISOR: supervisor,
                workflow.Actor.ESCALATED_TO: escalated_to(conn, q, schema, "login", supervisor),
            },
            {
                workflow.Check.WITHIN_LIMITS: self.limit,
                workflow.Check.SERVED: serves(conn, q, schema, "login"),
                workflow.Check.NOT_DOER: not_own,
                workflow.Check.OTHER_USER: f"{self.user_new} IS NOT NULL AND {self.user_new} <> {self.user_old}",
            },
        )

    def given_back(self) -> str:
        """Release, defer, escalate and Complete: the lock cleared, each with its own values and nothing else."""
        r, q, mark = self.r, self.q, workflow.branch_mark
        completes = self.completes
        # A release writes on_release, and perhaps a configured reason's values too; every column the
        # release (or defer) does not write (core/workflow.py) stays as it was: no edits with it.
        releases = " OR ".join(
            f"({r.unchanged(kept(q, 'release', 'defer', reason=reason))} AND "
            f"{r.assigned(values_of(q, 'release', 'defer', reason=reason))})"
            for reason in (None, *q.reason_writes)
        )
        review = q.config.review
        outcome_checks = "".join(
            f"        IF {r.unchanged(kept(q, *completes, outcome=name))}"
            f" AND {r.assigned(values_of(q, *completes, outcome=name))} THEN\n"
            f"          maybe := maybe || ({workflow_sql.prefix('complete')} || {r.literal(name)});\n        END IF;\n"
            for name in q.outcomes
        )
        if review is not None:  # four eyes: a Complete chosen for review writes the review's values too
            outcome_checks += "".join(
                f"        IF {r.unchanged(kept(q, *completes, outcome=name, reviewed=True))}\n"
                f"            AND {r.assigned(values_of(q, *completes, outcome=name, reviewed=True))} THEN\n"
                f"          maybe := maybe || ({workflow_sql.prefix('complete')} || {r.literal(name)});\n"
                "          to_review := true;\n"
                f"        END IF;\n"
                for name in q.outcomes
                if name in review.outcomes
            )
        # Escalate hands the item to a supervisor: the lock cleared, on_escalate's values, nothing else
        # (Check.ON_ESCALATE_SET: a queue without on_escalate admits none).
        escalates = (
            f"{r.unchanged(kept(q, 'escalate'))} AND {r.assigned(values_of(q, 'escalate'))}"
            if q.on_escalate
            else "false"
        )
        first_outcome = "NULLIF(split_part(maybe[1], ':', 2), '')"
        chosen = (
            ""
            if review is None
            else _review_opened(r, q, review, self.reviews, self.queue_name, self.key, self.at, first_outcome)
        )
        record = self.record(
            FIRST_EVENT, "login", self.token_old, outcome=first_outcome, maybe="maybe", changes="changed"
        )
        return f"""
        {mark("release", "defer")}
        IF {releases} THEN
          maybe := {workflow_sql.may_be("release", "defer")};  -- a defer gives the item back as a release does
        END IF;
        {mark("escalate")} {workflow_sql.check_mark(workflow.Check.ON_ESCALATE_SET)}
        IF {escalates} THEN
          maybe := maybe || {workflow_sql.may_be("escalate")};
        END IF;
        {mark(*completes)}
{outcome_checks}        IF cardinality(maybe) > 0 THEN
          changed := {changes_of(r, q)};
          {record}{chosen}
          RETURN true;
        END IF;"""

    def save(self) -> str:
        """Save: the edits, the lock as it was; told from an extend that moved nothing by an edit, a change
        of a column save writes and extend does not (core/workflow.py: EDITS)."""
        r, q = self.r, self.q
        telling = [c for c in checked_columns(q) if c.name in written_by(q, "save") - written_by(q, "extend")]
        edited = " OR ".join(f"NOT ({r.unchanged([c])})" for c in telling) or "false"
        return f"""
        {workflow.branch_mark("save")}
        -- Save writes the edits and leaves the lock as it was; nothing changed at all may be an
        -- extend that did not move the expiry (the client settles which).
        maybe := CASE WHEN {edited} THEN {workflow_sql.may_be("save")}
                      ELSE {workflow_sql.may_be("extend", "save")} END;
        changed := {changes_of(r, q)};
        {self.record(FIRST_EVENT, "login", self.token_old, maybe="maybe", changes="changed")}
        RETURN true;"""

    def claim(self) -> str:
        """Claim: a free or expired row that waits, under a fresh lock of this login's inside the limits."""
        r, q = self.r, self.q
        # CLAIMABLE: waiting, or an expired lock in on_claim's state, as the claim serves it.
        claimable = row_rule(r, q, "claim", "pick", user=sa.literal_column("login"))
        return f"""
      {workflow.branch_mark("claim", "pick", "expire")}
      IF {claimable} AND {lock_written(r, q, "claim", "pick")} AND {r.unchanged(kept(q, "claim", "pick"))}
          AND {r.assigned(values_of(q, "claim"))} AND {self.rules.checked("claim")} THEN
        IF {self.user_old} IS NOT NULL THEN
          {self.record(self.ev("expire"), self.user_old, self.token_old)}
        END IF;
        {self.record(self.ev("claim"), "login", self.token_new)}
        RETURN true;
      END IF;"""

    def undo(self) -> str:
        """The trigger's undo: this login takes back its own Complete, the item's last event, within
        undo_within (database clock), while the row still holds that outcome's values (or, chosen for
        review, the review's after them: its review is withdrawn); the row gets on_reopen and on_claim
        and a fresh lock of this login's, as workbench's own undo writes. Its lock rule (FREE: nobody holds
        the row before) and checks (WITHIN_LIMITS: the fresh lock's) are the table's, as every branch's."""
        if not self.q.on_reopen:
            return ""
        r, q, rules, key = self.r, self.q, self.rules, self.key
        old = r.old
        review = q.config.review
        login: sa.ColumnElement[Any] = sa.literal_column("login")
        # The item as the trail keeps it (text), of the old row: the trail's subquery does not join the queue's table.
        item = sa.literal_column(f"CAST({r.col(old, q.key)} AS text)", sa.Text())

        def undone(name: str) -> str:
            # Per outcome: the trail rule (LAST_OWN_COMPLETE within undo_within, db/rowrules.py) says the last
            # event is this login's Complete with this outcome, and the row rule (COMPLETED_BY_CALLER) that
            # the row still holds its values (or, chosen for review, the review's after them).
            history = rowrules.trail(q, "undo", _audit_table(self.schema), item=item, user=login, outcome=name)
            ways = (False, True) if review is not None and name in review.outcomes else (False,)
            holds = sa.or_(
                *(
                    sa.and_(sa.true(), *rowrules.before(q, "undo", user=login, outcome=name, reviewed=reviewed).state)
                    for reviewed in ways
                )
            )
            return r.sql(sa.and_(sa.true(), *(() if history is None else (history,)), holds), old)

        which = "".join(f" WHEN {undone(name)} THEN {r.literal(name)}" for name in q.outcomes)
        # The review a Complete chose is no longer wanted (as workbench's undo withdraws it; by hand too,
        # or it would count as one of the operator's first items).
        withdraw = (
            ""
            if review is None
            else (
                f"\n          UPDATE {self.reviews_table} SET verdict = '{reviews_mod.SUPERSEDED}' WHERE queue = "
                f"{r.literal(review.by)} AND item_key = {key} AND verdict IS NULL;"
            )
        )
        # UNDO_WINDOW is the trail clause's window, ON_REOPEN_SET the branch's presence: marked here.
        checks = {c: workflow_sql.check_mark(c) for c in workflow.TRANSITIONS["undo"].checks}
        window = checks.get(workflow.Check.UNDO_WINDOW, "")
        return f"""
      {workflow.branch_mark("undo")} {checks[workflow.Check.ON_REOPEN_SET]}
      IF {rules.lock("undo")} AND {row_rule(r, q, "undo")} AND {lock_written(r, q, "undo")}
          AND {rules.checked("undo")}
          AND {r.unchanged(kept(q, "undo"))} AND {r.assigned(values_of(q, "undo"))} THEN
        {window}
        undone := {f"CASE{which} END" if which else "NULL"};
        IF undone IS NOT NULL THEN
          {self.record(workflow_sql.event("undo"), "login", "NULL", outcome="undone")}
          {self.record(workflow_sql.also("undo"), "login", self.token_new)}{withdraw}
          RETURN true;
        END IF;
      END IF;"""

    def take(self) -> str:
        """A supervisor's take: an escalated row nobody holds (out of todo, on_escalate's values) back to work
        under a fresh lock of this login's, within the limits, writing exactly on_reopen's and on_claim's
        values, recorded as this login's claim."""
        r, q, rules = self.r, self.q, self.rules
        # (Check.ON_ESCALATE_SET, ON_REOPEN_SET: a queue without either admits none.)
        set_up = "true" if q.on_escalate and q.on_reopen else "false"
        checks = " ".join(
            workflow_sql.check_mark(c) for c in (workflow.Check.ON_ESCALATE_SET, workflow.Check.ON_REOPEN_SET)
        )
        # The row rule ESCALATED (db/rowrules.py): out of todo, holding on_escalate's values.
        return f"""
    {workflow.branch_mark("take")} {checks}
    IF {set_up} AND {rules.who("take")} AND {rules.lock("take")} AND {row_rule(r, q, "take")}
        AND {lock_written(r, q, "take")} AND {rules.checked("take")} AND {r.unchanged(kept(q, "take"))}
        AND {r.assigned(values_of(q, "take"))} THEN
      {self.record(self.ev("take"), "login", self.token_new)}
      RETURN true;
    END IF;"""

    def swept(self) -> str:
        """Anyone may return an expired lock to the pool (the sweep)."""
        r, q, rules = self.r, self.q, self.rules
        return f"""
    -- Anyone may return an expired lock to the pool (the sweep).
    {workflow.branch_mark("expire")}
    IF {rules.lock("expire")} AND {rules.who("expire")} AND {lock_written(r, q, "expire", "force_release")}
        AND {self.returned()} THEN
      maybe := CASE WHEN {rules.who("force_release")}
                    THEN {workflow_sql.may_be("expire", "force_release")} ELSE {workflow_sql.may_be("expire")} END;
      {self.record(FIRST_EVENT, self.user_old, self.token_old, maybe="maybe")}
      RETURN true;
    END IF;"""

    def returned(self) -> str:
        """SQL: the row holds on_release's values, and nothing else changed (expire, force-release)."""
        r, q = self.r, self.q
        return f"{r.unchanged(kept(q, 'expire', 'force_release'))} AND {r.assigned(values_of(q, 'expire'))}"

    def supervised(self) -> str:
        """A supervisor's force-release (back to the pool) and reassign (a fresh lock of another user's)."""
        r, q, rules = self.r, self.q, self.rules
        return f"""
    {workflow.branch_mark("force_release", "reassign")}
    IF {rules.lock("force_release", "reassign")} AND {rules.who("force_release", "reassign")} THEN
      -- Force-release: back to the pool with the on_release values.
      IF {lock_written(r, q, "force_release")} AND {self.returned()} THEN
        {self.record(self.ev("force_release"), self.user_old, self.token_old)}
        RETURN true;
      END IF;
      -- Reassign: to another user, with a fresh lock inside the limits.
      IF {rules.checked("reassign")} AND {lock_written(r, q, "reassign")}
          AND {r.unchanged(kept(q, "reassign"))} THEN
        {self.record(self.ev("reassign"), self.user_old, self.token_old)}
        {self.record(workflow_sql.also("reassign"), self.user_new, self.token_new)}
        RETURN true;
      END IF;
    END IF;"""

    def move(self) -> str:
        """A supervisor's move: a waiting item nobody holds gets other values (another category, tier,
        priority), its lock untouched, and still waits (here, or out of this queue's scope for another
        queue); the client settles the audit row with the reason and the values."""
        r, q, rules = self.r, self.q, self.rules
        return f"""
    {workflow.branch_mark("move")}
    IF {rules.lock("move")} AND {row_rule(r, q, "move")} AND {row_after(r, q, "move")}
        AND {r.unchanged(kept(q, "move"))} AND {rules.who("move")} THEN
      changed := {changes_of(r, q, minus(checked_columns(q), kept(q, "move")))};
      {self.record(self.ev("move"), "NULL", "NULL", changes="changed")}
      RETURN true;
    END IF;"""

    def reopen(self) -> str:
        if not self.q.on_reopen:
            return ""
        r, q, rules = self.r, self.q, self.rules
        return f"""
    {workflow.branch_mark("reopen")} {workflow_sql.check_mark(workflow.Check.ON_REOPEN_SET)}
    IF {rules.lock("reopen")} AND {rules.who("reopen")} AND {row_rule(r, q, "reopen")} AND {row_after(r, q, "reopen")}
        AND {r.unchanged(kept(q, "reopen"))} AND {r.assigned(values_of(q, "reopen"))} THEN
      {self.record(self.ev("reopen"), "NULL", "NULL")}
      RETURN true;
    END IF;"""


# The first of the events a change may be (recorded until the client's own audit row settles which).
FIRST_EVENT = "split_part(maybe[1], ':', 1)"


def taken_here(conn: sa.Connection, q: mapping.BoundQueue, schema: str, queue_name: str, key: str) -> str:
    """SQL: the lock on the row `key` (SQL text, as the trail keeps it) was taken in this queue, not in
    another enforced queue over the same table: no claim of the item recorded by one of them is newer
    than this queue's newest (the engine's fence asks the same, AuditTrail.claimed_here). The queue a
    change under a lock belongs to is decided here, once, never by a label its audit row names. No
    claim recorded at all (a lock another program wrote): every queue's, as before."""
    prep = conn.dialect.identifier_preparer
    audit = prep.format_table(_audit_table(schema))
    enforced = prep.format_table(enforced_table(schema))
    claim = workflow_sql.event("claim")
    return (
        f"NOT EXISTS (SELECT 1 FROM {audit} t JOIN {enforced} s ON s.queue = t.queue "
        f"WHERE s.tbl = {_table_oid(conn, q.table)} AND t.queue <> {queue_name} AND t.item_key = {key} "
        f"AND t.event = {claim} AND t.id > coalesce((SELECT max(m.id) FROM {audit} m WHERE m.queue = {queue_name} "
        f"AND m.item_key = {key} AND m.event = {claim}), 0))"
    )


def recorder(audit: str, queue_name: str, key: str, at: str) -> Callable[..., str]:
    """record(event, owner, token, outcome, maybe, changes): plpgsql that writes one audit row of the item
    `key` (SQL text) of the queue, acted by `login` (the function's variable), and notes it for the audit
    guard. `maybe`: the events the change may be (e.g. save or extend), for the guard to settle;
    `changes`: a jsonb variable holding the edits the change made (changes_of()), which the row keeps
    whatever workbench's own audit row says."""

    def record(
        event: str, owner: str, token: str, outcome: str = "NULL", maybe: str = "NULL", changes: str | None = None
    ) -> str:
        edits = "" if changes is None else f", 'changes', NULLIF({changes}, '{{}}')"
        whens = []
        if maybe != "NULL":
            whens.append(
                f"WHEN cardinality({maybe}) > 1 THEN json_build_object('recorded_by', 'database', "
                f"'may_be', {maybe}{edits})::text"
            )
        if changes is not None:
            whens.append(f"WHEN {changes} <> '{{}}' THEN json_build_object('changes', {changes})::text")
        detail = f"CASE {' '.join(whens)} END" if whens else "NULL"
        insert = (
            f"INSERT INTO {audit} (queue, item_key, event, actor, owner, token, outcome, detail, at) VALUES "
            f"({queue_name}, {key}, {event}, login, {owner}, {token}, {outcome}, {detail}, {at});"
        )
        # A note that lets the audit guard drop workbench's own copy of a settled row without a
        # query; forging one only makes the forger's own audit row vanish.
        crumb = note(AUDITED_SETTING, queue_name, key, event, owner, outcome)
        if maybe != "NULL":
            crumb = f"IF cardinality({maybe}) = 1 THEN {crumb} END IF;"
        return f"{insert}\n        {crumb}"

    return record


def changes_of(r: Renderer, q: mapping.BoundQueue, columns: list[sa.Column[Any]] | None = None) -> str:
    """SQL (jsonb): {column: [before, after]} of each editable column (or of `columns`: a move's) the update
    changed, as workbench's audit detail keeps them (mapping.changes and audit.json_value: decimals as
    text, `audit_hidden` columns as [null, null]). The database's own account of an operator's edits: a
    hand-written audit row cannot make it say something else."""

    def value(row: sa.FromClause, column: sa.Column[Any]) -> str:
        if column.name in q.audit_hidden:
            return "'null'::jsonb"
        text = isinstance(column.type, (sa.Numeric, sa.Uuid)) and not isinstance(column.type, sa.Float)
        return f"to_jsonb(CAST({r.col(row, column)} AS text))" if text else f"to_jsonb({r.col(row, column)})"

    parts = [
        f"CASE WHEN {r.unchanged([c])} THEN '{{}}'::jsonb ELSE jsonb_build_object({r.literal(c.name)}, "
        f"jsonb_build_array({value(r.old, c)}, {value(r.new, c)})) END"
        for c in (q.editable if columns is None else columns)
    ]
    return f"({' || '.join(parts)})" if parts else "'{}'::jsonb"


def note(setting: str, *fields: str) -> str:
    """plpgsql: add a crumb of `fields` (SQL text) to a transaction-local setting."""
    return (
        f"noted := set_config('{setting}', coalesce(current_setting('{setting}', true), '') "
        f"|| {_crumb(*fields)}, true);"
    )


def noted(setting: str, *fields: str) -> str:
    """SQL: is the crumb of `fields` in the transaction-local setting?"""
    return f"(strpos(coalesce(current_setting('{setting}', true), ''), {_crumb(*fields)}) > 0)"


def _review_opened(
    r: Renderer,
    q: mapping.BoundQueue,
    review: model.Review,
    reviews: sa.Table,
    queue_name: str,
    key: str,
    at: str,
    outcome: str,
) -> str:
    """After a Complete of a reviewed queue: one chosen for review is recorded by the database (who did
    it, and why: one of their first items, or the share); one of an operator's first items that does
    not go to review is refused."""
    by = r.literal(review.by)
    reviews_table = r.prep.format_table(reviews)
    # Check.FIRST_ITEMS_REVIEWED: the count the engine's choice reads (reviews.firsts), for this login.
    firsts = r.sql(reviews_mod.firsts(reviews, q.name, sa.literal_column(r.login)).scalar_subquery())
    crumb = note(REVIEWED_SETTING, by, key)
    why = (
        f"CASE WHEN {firsts} < {review.first_items} THEN {r.literal(reviews_mod.FIRST)} "
        f"ELSE {r.literal(reviews_mod.SHARE)} END"
        if review.first_items
        else r.literal(reviews_mod.SHARE)
    )
    reviewed = ", ".join(r.literal(name) for name in review.outcomes)
    first = (
        ""
        if not review.first_items
        else f"""
          ELSIF {outcome} IN ({reviewed})
              AND {workflow_sql.check_mark(workflow.Check.FIRST_ITEMS_REVIEWED)} {firsts} < {review.first_items} THEN
            RAISE EXCEPTION 'workbench: % may not complete % item % without review: each of their first % items '
              'goes to review', login, {queue_name}, {key}, {review.first_items} USING ERRCODE = '42501';"""
    )
    return f"""
          IF to_review THEN
            INSERT INTO {reviews_table} (queue, item_key, source, doer, at, why)
              VALUES ({by}, {key}, {queue_name}, login, {at}, {why});
            {crumb}{first}
          END IF;"""


def table_trigger(conn: sa.Connection, q: mapping.BoundQueue, schema: str, queues: list[str]) -> list[str]:
    """The trigger on `q`'s table that admits an update one of `queues` (the table's enforced queues,
    each with its check function) admits, and otherwise refuses it saying why; none left: dropped."""
    prep = conn.dialect.identifier_preparer
    table = prep.format_table(q.table)
    trigger = prep.quote(trigger_name(q.table.name))
    function = _qualified(prep, schema, trigger_name(q.table.name))
    # Triggers of one queue each, as grants made them before several queues could share a table.
    statements = [
        f"DROP TRIGGER IF EXISTS {prep.quote(trigger_name(name))} ON {table}"
        for name in queues
        if trigger_name(name) != trigger_name(q.table.name)
    ]
    statements.append(f"DROP TRIGGER IF EXISTS {trigger} ON {table}")
    if not queues:
        return [*statements, f"DROP FUNCTION IF EXISTS {function}()"]
    r = Renderer(conn.dialect, q)
    old, new = r.old, r.new
    key = f"CAST({r.col(new, q.key)} AS text)"
    queue_names = r.literal(", ".join(queues))
    checks = "".join(
        f"  IF {_qualified(prep, schema, check_function_name(name))}(OLD, NEW) THEN\n    RETURN NEW;\n  END IF;\n"
        for name in dict.fromkeys(queues)
    )
    # Where the lock is in the row, say when a refusal is about someone else's name or lock.
    whose = ""
    if not q.shape.separate_locks:
        user_old, user_new = r.col(old, q.user), r.col(new, q.user)
        whose = f"""  IF {user_new} IS NOT NULL AND {user_new} <> login AND {user_new} IS DISTINCT FROM {user_old}
      AND NOT pg_has_role(session_user, '{SUPERVISOR_ROLE}', 'USAGE') THEN
    RAISE EXCEPTION 'workbench: % may not lock % item % under the name %: with workbench grants each person '
      'works under their own database login, named exactly like their workbench user', login, {queue_names}, {key},
      {user_new} USING ERRCODE = '42501';
  END IF;
  IF {user_old} IS NOT NULL AND {user_old} <> login AND {r.sql(q.live(q.now()), old)}
      AND NOT pg_has_role(session_user, '{SUPERVISOR_ROLE}', 'USAGE') THEN  -- a supervisor may use it
    RAISE EXCEPTION 'workbench: %''s lock on % item % cannot be used from the database login %: with workbench '
      'grants each person works under their own database login, named exactly like their workbench user',
      {user_old}, {queue_names}, {key}, login USING ERRCODE = '42501';
  END IF;
"""
    body = f"""
DECLARE
  login text := session_user;
BEGIN
{checks}{whose}  RAISE EXCEPTION 'workbench: % may not make this change to % item %', login, {queue_names}, {key}
    USING ERRCODE = '42501',
          HINT = 'queue rows change only through workbench''s operations (claim, save, extend, release, '
                 'complete, undo; force-release, reassign, move and reopen for supervisors), each with its '
                 'audit row';
END"""
    # current_user: inside workbench's trusted functions (SECURITY DEFINER) it is the owner, whose
    # writes are not checked; an operator's own statement runs as the operator.
    checked = (
        f"pg_has_role(current_user, '{OPERATOR_ROLE}', 'USAGE') "
        f"AND NOT pg_has_role(current_user, {_owner_oid(conn, q.table)}::oid, 'MEMBER')"
    )
    return [
        _function(function, body, security="DEFINER"),
        private(f"{function}()"),
        *statements,
        (
            f"CREATE TRIGGER {trigger} BEFORE UPDATE ON {table} FOR EACH ROW WHEN ({checked}) "
            f"EXECUTE FUNCTION {function}()"
        ),
    ]


def enforced_on(conn: sa.Connection, q: mapping.BoundQueue, schema: str) -> list[str]:
    """The other queues of `q`'s table whose protocol the database enforces (and whose check exists)."""
    return enforced_where(conn, schema, "tbl", _table_oid(conn, q.table), q.name)


def enforced_where(conn: sa.Connection, schema: str, column: str, oid: int, other_than: str) -> list[str]:
    """The enforced queues but `other_than` whose `column` (tbl: the queue's table; locks: its lock
    table) is the table `oid`, and whose check function exists."""
    assert column in ("tbl", "locks")
    enforced = conn.dialect.identifier_preparer.format_table(enforced_table(schema))
    if not conn.execute(
        sa.text(
            "SELECT to_regclass(:t) IS NOT NULL AND EXISTS (SELECT 1 FROM pg_catalog.pg_attribute "
            "WHERE attrelid = to_regclass(:t) AND attname = :c AND NOT attisdropped)"
        ),
        {"t": enforced, "c": column},
    ).scalar():
        return []
    names = (
        conn.execute(
            sa.text(f"SELECT queue FROM {enforced} WHERE {column} = :oid AND queue <> :q ORDER BY queue"),
            {"oid": oid, "q": other_than},
        )
        .scalars()
        .all()
    )
    prep = conn.dialect.identifier_preparer
    return [
        str(name)
        for name in names
        if conn.execute(
            sa.text("SELECT to_regproc(:f) IS NOT NULL"),
            {"f": _qualified(prep, schema, check_function_name(str(name)))},
        ).scalar()
    ]


def _table_oid(conn: sa.Connection, table: sa.Table) -> int:
    return int(
        conn.execute(
            sa.text("SELECT CAST(to_regclass(:t) AS oid)"), {"t": conn.dialect.identifier_preparer.format_table(table)}
        ).scalar_one()
    )


def serves(conn: sa.Connection, q: mapping.BoundQueue, schema: str, login: str) -> str:
    """SQL: may `login` (SQL text) claim from `q`? With `serves`, only a member of the group."""
    return "true" if q.config.serves is None else member_of(conn, q.config.serves, schema, login)


def escalated_to(conn: sa.Connection, q: mapping.BoundQueue, schema: str, login: str, supervisor: str) -> str:
    """SQL: may `login` take `q`'s escalated items (the table's Actor.ESCALATED_TO)? A supervisor
    (`supervisor`, SQL), or a member of the queue's escalate_to group where it names one."""
    group = q.config.escalate_to
    return supervisor if group is None else f"({supervisor} OR {member_of(conn, group, schema, login)})"


def member_of(conn: sa.Connection, name: str, schema: str, login: str) -> str:
    """SQL: is `login` (SQL text) in the group `name`: in workbench's groups table, or a member of a
    database role of that name (directly or not)?"""
    prep = conn.dialect.identifier_preparer
    groups = prep.format_table(_own_table(schema, tables.GROUPS_TABLE))
    group = Renderer.literal_of(conn, name)
    return (
        f"(EXISTS (SELECT 1 FROM {groups} g WHERE g.user_name = {login} AND g.group_name = {group}) OR "
        f"EXISTS (SELECT 1 FROM pg_catalog.pg_roles u, pg_catalog.pg_roles g WHERE u.rolname = {login} "
        f"AND g.rolname = {group} AND pg_has_role(u.oid, g.oid, 'MEMBER')))"
    )


def next_function_name(queue: str) -> str:
    """The name of `queue`'s trusted claim of the next item."""
    return object_name(queue, "next")


def complete_function_name(queue: str) -> str:
    """The name of `queue`'s trusted Complete without edits."""
    return object_name(queue, "complete")


def next_call(dialect: Any, q: mapping.BoundQueue, schema: str | None) -> sa.TextClause:
    """The trusted claim as the engine calls it: the queue's row it locked, if any."""
    return sa.text(f"SELECT * FROM {_called(dialect, schema, next_function_name(q.name))}()")


def complete_call(dialect: Any, q: mapping.BoundQueue, schema: str | None) -> sa.TextClause:
    """The trusted Complete as the engine calls it: key, token and outcome bound; the time it happened."""
    name = _called(dialect, schema, complete_function_name(q.name))
    return sa.text(f"SELECT * FROM {name}(:wb_key, :wb_token, :wb_outcome)").bindparams(
        sa.bindparam("wb_key", type_=q.key.type),
        sa.bindparam("wb_token", type_=sa.String()),
        sa.bindparam("wb_outcome", type_=sa.String()),
    )


def _called(dialect: Any, schema: str | None, function: str) -> str:
    prep = dialect.identifier_preparer
    return f"{prep.quote_schema(schema)}.{prep.quote(function)}" if schema else prep.quote(function)


def callable_next(conn: sa.Connection, q: mapping.BoundQueue, schema: str | None) -> str | None:
    """This login, if the database has `q`'s trusted claim and this login may call it; else None."""
    return _callable(conn, _called(conn.dialect, schema, next_function_name(q.name)) + "()")


def callable_complete(conn: sa.Connection, q: mapping.BoundQueue, schema: str | None) -> str | None:
    """This login, if the database has `q`'s trusted Complete and this login may call it; else None."""
    key_type = q.key.type.compile(dialect=conn.dialect)
    return _callable(conn, f"{_called(conn.dialect, schema, complete_function_name(q.name))}({key_type}, text, text)")


def _callable(conn: sa.Connection, name: str) -> str | None:
    may, login = conn.execute(
        sa.text(
            "SELECT to_regprocedure(:f) IS NOT NULL AND has_function_privilege(to_regprocedure(:f), 'EXECUTE'), "
            "CAST(session_user AS text)"
        ),
        {"f": name},
    ).one()
    return str(login) if may else None


def is_missing_function(exc: sa.exc.DBAPIError) -> bool:
    """Was a trusted function dropped (`grants --revoke`) while workbench ran?"""
    return str(getattr(exc.orig, "sqlstate", "") or "") == "42883"


def trusted_next(conn: sa.Connection, q: mapping.BoundQueue, schema: str, statement: sa.Select[Any]) -> list[str]:
    """`q`'s claim of the next item as a SECURITY DEFINER function: workbench's own one-statement
    claim (`statement`, built with session_user as the claimer), run as the table's owner. Its
    change is not checked again by the protocol trigger, whose WHEN clause tests current_user, and
    it writes its audit rows itself, as workbench's statement does."""
    sql = str(statement.compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True}))
    if conn.dialect.paramstyle in ("format", "pyformat"):
        sql = sql.replace("%%", "%")
    member = (
        ""
        if q.config.serves is None
        else (
            f"  IF NOT {serves(conn, q, schema, 'session_user')} THEN\n"
            f"    RAISE EXCEPTION 'workbench: % is not in the group %, which queue % serves', session_user, "
            f"{Renderer.literal_of(conn, q.config.serves)}, {Renderer.literal_of(conn, q.name)} USING ERRCODE = '42501';\n"  # noqa: E501
            "  END IF;\n"
        )
    )
    return _trusted_function(
        conn,
        q,
        schema,
        next_function_name(q.name),
        (),
        conn.dialect.identifier_preparer.format_table(q.table),
        f"{member}  RETURN QUERY {sql};\n",
    )


def trusted_complete(
    conn: sa.Connection, q: mapping.BoundQueue, schema: str, statements: Mapping[str, sa.Executable]
) -> list[str]:
    """`q`'s Complete without edits as a SECURITY DEFINER function of (key, token, outcome): for each
    outcome workbench's own one-statement Complete (fenced by this login, the token and a live lock;
    it writes the audit row), run as the table's owner. Returns the time of the write, or no row when
    the fence failed (the lock is not the caller's any more)."""
    kept = q.backend.token_digest(sa.literal_column("p_token"))  # what the trail keeps of the token
    params = {
        "wb_user": "CAST(session_user AS VARCHAR)",
        "wb_key": "p_key",
        "wb_token": "p_token",
        "wb_a_token": str(kept.compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True})),
    }
    review = q.config.review
    reviewed = set(review.outcomes) if review is not None and review.first_items else set()

    def first_items(outcome: str) -> str:
        """Each of an operator's first items goes to review: never through this plain Complete."""
        if outcome not in reviewed or review is None:
            return ""
        own = conn.dialect.identifier_preparer.format_table(_own_table(schema, tables.REVIEWS_TABLE))
        return (
            f"    IF (SELECT count(*) FROM {own} rv WHERE rv.source = {Renderer.literal_of(conn, q.name)} "
            f"AND rv.doer = session_user AND rv.why = 'first') < {review.first_items} THEN\n"
            f"      RAISE EXCEPTION 'workbench: % may not complete without review: each of their first % items "
            f"goes to review', session_user, {review.first_items} USING ERRCODE = '42501';\n    END IF;\n"
        )

    branches = "".join(
        f"  IF p_outcome = {Renderer.literal_of(conn, outcome)} THEN\n{first_items(outcome)}"
        f"    RETURN QUERY {with_params(conn, statement, params)};\n    RETURN;\n  END IF;\n"
        for outcome, statement in statements.items()
    )
    body = branches + "  RAISE EXCEPTION 'workbench: no outcome %', p_outcome USING ERRCODE = '22023';\n"
    arguments = (("p_key", q.key.type.compile(dialect=conn.dialect)), ("p_token", "text"), ("p_outcome", "text"))
    returns = "timestamp with time zone" if q.aware else "timestamp without time zone"
    return _trusted_function(conn, q, schema, complete_function_name(q.name), arguments, returns, body)


def _trusted_function(
    conn: sa.Connection,
    q: mapping.BoundQueue,
    schema: str,
    name: str,
    arguments: tuple[tuple[str, str], ...],
    returns: str,
    body: str,
) -> list[str]:
    """A SECURITY DEFINER plpgsql function returning SETOF `returns`, callable by operators only. Its
    search_path is fixed, built-ins first: the queue's and workbench's tables, nothing of the caller's."""
    prep = conn.dialect.identifier_preparer
    function = _qualified(prep, schema, name)
    path = search_path(prep, q, schema)
    signature = f"{function}({', '.join(f'{arg} {kind}' for arg, kind in arguments)})"
    types = f"{function}({', '.join(kind for _arg, kind in arguments)})"
    return [
        (
            f"CREATE OR REPLACE FUNCTION {signature} RETURNS SETOF {returns} LANGUAGE plpgsql SECURITY DEFINER "
            f"SET search_path = {path} AS $wb$\nBEGIN\n{body}END\n$wb$"
        ),
        f"REVOKE ALL ON FUNCTION {types} FROM PUBLIC",
        f"GRANT EXECUTE ON FUNCTION {types} TO {prep.quote(OPERATOR_ROLE)}",
    ]


def search_path(prep: Any, q: mapping.BoundQueue, schema: str) -> str:
    """A function's fixed search_path, built-ins first: the queue's and workbench's tables, nothing of
    the caller's."""
    return ", ".join(
        dict.fromkeys(["pg_catalog", prep.quote_schema(q.table.schema or schema), prep.quote_schema(schema), "pg_temp"])
    )


def with_params(conn: sa.Connection, statement: sa.Executable, params: Mapping[str, str]) -> str:
    """`statement` as SQL with its bound parameters replaced by the given SQL (function arguments)."""
    assert isinstance(statement, sa.sql.ClauseElement)
    compiled = statement.compile(dialect=conn.dialect)
    assert isinstance(compiled, sa.sql.compiler.SQLCompiler)
    # Constants (literal_execute: outcome values, the queue's name) rendered in; the rest stay %(name)s.
    sql = compiled.construct_expanded_state({name: None for name in params if name in compiled.binds}).statement
    assert conn.dialect.paramstyle == "pyformat"  # psycopg

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in params:
            return params[name]
        bind = compiled.binds.get(name)
        if bind is None or bind.required or bind.callable is not None:
            raise ValueError(f"the statement has a parameter {name} the function does not give")
        # A constant of the statement (e.g. a queue's name in a review's condition): rendered in.
        return Renderer.literal_value(conn, bind.value, bind.type)

    return re.sub(r"%\((\w+)\)s", replace, sql).replace("%%", "%")


def checked_columns(q: mapping.BoundQueue) -> list[sa.Column[Any]]:
    """The columns the trigger holds to each operation's rules: every one an operator or a supervisor
    may update (workbench's writes, and what a supervisor's move may change)."""
    written = {c.name for c in written_columns(q)}
    return [c for c in q.table.c if c.name in written or q.movable(c)]


def moved_columns(q: mapping.BoundQueue) -> list[sa.Column[Any]]:
    """The columns a supervisor's move may write and workbench's operations do not: granted to
    supervisors alone, checked by the trigger's move."""
    written = {c.name for c in written_columns(q)}
    return [c for c in q.table.c if c.name not in written and q.movable(c)]


def written_columns(q: mapping.BoundQueue) -> list[sa.Column[Any]]:
    """Every column workbench may write: lock columns, on_claim/on_release/outcome columns, edits."""
    names = (
        {c.name for c in q.lock_columns}
        | {c.name for c in q.editable}
        | {
            b.column.name
            for group in (
                q.on_claim,
                q.on_release,
                q.on_reopen,
                q.on_escalate,
                *q.outcomes.values(),
                *q.reason_writes.values(),
            )
            for b in group
        }
    )
    return [c for c in q.table.c if c.name in names]


def _crumb(*fields: str) -> str:
    """One audit row the database wrote, as text (queue, key, event, owner, outcome given as SQL)."""
    return "(chr(30) || " + " || chr(31) || ".join(f"coalesce({field}, '')" for field in fields) + " || chr(30))"


@functools.cache
def _own_table(schema: str, name: str) -> sa.Table:
    """One of workbench's own tables in `schema`, for SQL text (their metadata built once per schema)."""
    return tables.build_metadata(schema)[0].tables[f"{schema}.{name}"]


def enforced_table(schema: str) -> sa.Table:
    """The queues whose protocol the database enforces (for the audit guard, which serves them all)."""
    return sa.Table(ENFORCED_TABLE, sa.MetaData(), schema=schema)


def _audit_table(schema: str) -> sa.Table:
    return _own_table(schema, tables.AUDIT_TABLE)


def _owner_oid(conn: sa.Connection, table: sa.Table) -> int:
    """The oid of the role that owns `table` (who is not checked, and as whom the triggers write)."""
    name = conn.dialect.identifier_preparer.format_table(table)
    return int(
        conn.execute(
            sa.text("SELECT relowner FROM pg_catalog.pg_class WHERE oid = to_regclass(:t)"), {"t": name}
        ).scalar_one()
    )


def shared(conn: sa.Connection, schema: str) -> list[str]:
    """What every enforced queue shares: the audit table's guard, the function that settles an audit
    row the database wrote, and the list of enforced queues."""
    prep = conn.dialect.identifier_preparer
    audit_table = _audit_table(schema)
    audit = prep.format_table(audit_table)
    owner = _owner_oid(conn, audit_table)
    enforced = prep.format_table(enforced_table(schema))
    guard, settle = _qualified(prep, schema, AUDIT_GUARD), _qualified(prep, schema, SETTLE)
    operator = prep.quote(OPERATOR_ROLE)

    def may_be(event: str, outcome: str) -> str:
        """The row the database wrote names `event` (with `outcome`) among the events it may be."""
        return (
            f"(prior.detail LIKE '{{\"recorded_by\" : \"database\"%' AND (prior.detail::jsonb -> 'may_be') "
            f"? ({event} || ':' || coalesce({outcome}, '')))"
        )

    def sibling(queue: str, acted: str) -> str:
        """`queue` is `acted` or an enforced queue over the same table."""
        return (
            f"({queue} = {acted} OR {queue} IN (SELECT s.queue FROM {enforced} s JOIN {enforced} e "
            f"ON e.tbl = s.tbl WHERE e.queue = {acted}))"
        )

    # The events a row of another queue over the same table may be relabelled to: those of a change of
    # a row nobody holds (a claim, a supervisor's move or reopen, an undo), which the table's trigger
    # records under the first of its queues that admits it, while the client acted through another;
    # and the expire a claim of a run-out lock records with it. A change under a lock belongs to the
    # queue the lock was taken in (taken_here), whatever a label says: never relabelled.
    free = (workflow.LockRule.FREE_OR_STALE, workflow.LockRule.FREE)
    relabelled = {e.value for t in workflow.TRANSITIONS.values() if t.lock in free for e in t.events}
    relabel = "(" + ", ".join(f"'{e}'" for e in sorted(relabelled | {workflow_sql.event("expire")[1:-1]})) + ")"
    # A lock-table queue's lock row names the queue it was taken in, and the rows written with it (a
    # claim, the expire of a run-out lock) are that queue's: of its rows only those of a change of an
    # item nobody holds (LockRule.FREE, a move or a reopen, which the table's trigger records under the
    # first queue that admits it) may take a sibling's name; a take's claim is its lock row's, as a claim's.
    unheld = {
        e.value
        for t in workflow.TRANSITIONS.values()
        if t.lock is workflow.LockRule.FREE
        and workflow.Rendering.PG_LOCK_TABLE not in t.not_in
        and workflow.Write.LOCK_TAKEN not in t.writes
        for e in t.events
    }

    unheld_in = "(" + ", ".join(f"'{e}'" for e in sorted(unheld)) + ")"

    def relabels(event: str, queue: str) -> str:
        """SQL: a row of `queue` recording `event` may take a sibling queue's name."""
        return (
            f"({event} IN {unheld_in} OR {event} IN {relabel} AND NOT EXISTS "
            f"(SELECT 1 FROM {enforced} l WHERE l.queue = {queue} AND l.locks IS NOT NULL))"
        )

    written_here = f"a.xmin = {THIS_TRANSACTION}"  # rows this transaction wrote
    refuses_defer = functools.partial(_refuses_defer, enforced)
    # Runs as the caller (SECURITY INVOKER): current_user (in the trigger's WHEN clause) tells the
    # protocol trigger, which writes as the table's owner, from an operator's own statement.
    guard_body = f"""
DECLARE
  prior record;
BEGIN
  IF NEW.reason IS NULL AND NEW.detail IS NULL AND strpos(current_setting('{AUDITED_SETTING}', true),
      {_crumb("NEW.queue", "NEW.item_key", "NEW.event", "NEW.owner", "NEW.outcome")}) > 0 THEN
    RETURN NULL;  -- the database wrote this very row for the change it came with
  END IF;
  IF NOT pg_has_role(session_user, '{OPERATOR_ROLE}', 'USAGE') THEN
    RETURN NEW;  -- logins that are not workbench operators
  END IF;
  PERFORM 1 FROM {enforced} WHERE queue = NEW.queue;
  IF NOT FOUND THEN
    RETURN NEW;  -- a queue whose protocol the database does not enforce
  END IF;
  -- The database wrote this change's audit row already: this one is dropped, or settles it. Queues
  -- that share a table (one todo served twice) admit the same claims, and the table's trigger writes
  -- the row of the first that admits it: a claim's row of a sibling queue is this change's too, and
  -- takes the queue the client acted through (its own queue's rows first). A change under a lock is
  -- the queue's the lock was taken in: its row is never another's.
  FOR prior IN SELECT a.id, a.queue, a.event, a.owner, a.outcome, a.reason, a.detail FROM {audit} a
      WHERE (a.queue = NEW.queue OR {relabels("a.event", "a.queue")} AND NEW.event = a.event
             AND {sibling("a.queue", "NEW.queue")})
      AND a.item_key = NEW.item_key AND {written_here}
      ORDER BY a.queue = NEW.queue DESC, a.id DESC LIMIT 16 LOOP
    CONTINUE WHEN prior.owner IS DISTINCT FROM NEW.owner;
    IF prior.event = NEW.event AND prior.outcome IS NOT DISTINCT FROM NEW.outcome
        AND prior.reason IS NOT DISTINCT FROM NEW.reason AND prior.detail IS NOT DISTINCT FROM NEW.detail
        AND prior.queue = NEW.queue THEN
      RETURN NULL;
    END IF;
    IF prior.event = NEW.event AND prior.outcome IS NOT DISTINCT FROM NEW.outcome
        OR {may_be("NEW.event", "NEW.outcome")} THEN
      PERFORM {settle}(prior.id, NEW.event, NEW.outcome, NEW.reason, NEW.detail, NEW.queue);
      RETURN NULL;
    END IF;
  END LOOP;
  RAISE EXCEPTION 'workbench: % may not write this % row for % item %: no such change was made',
    session_user, NEW.event, NEW.queue, NEW.item_key
    USING ERRCODE = '42501', HINT = 'the database writes the audit row of every change to a queue row itself';
END"""
    settle_body = f"""
DECLARE
  prior record;
BEGIN
  SELECT a.* INTO prior FROM {audit} a WHERE a.id = settle_id AND {written_here} FOR UPDATE;
  -- A claim's row of one queue may be settled to another over the same table (see the guard); any
  -- other row keeps its queue, the one the lock was taken in.
  IF NOT FOUND OR prior.actor <> session_user OR NOT (coalesce(p_queue, prior.queue) = prior.queue
      OR {relabels("prior.event", "prior.queue")} AND p_event = prior.event AND {sibling("prior.queue", "p_queue")})
      OR NOT (prior.event = p_event AND prior.outcome IS NOT DISTINCT FROM p_outcome
              OR {may_be("p_event", "p_outcome")}) THEN
    RAISE EXCEPTION 'workbench: % may not change audit row %', session_user, settle_id USING ERRCODE = '42501';
  END IF;
  IF p_event IN ({", ".join(f"'{event}'" for event in reasoned())}) AND coalesce(btrim(p_reason), '') = '' THEN
    -- An act that needs a reason keeps it (reasoned()), also where its row was written as another event.
    {reason_refused("p_event", conn)}
  END IF;
  IF p_event = {workflow_sql.event("defer")} AND {refuses_defer("prior.queue")} THEN
    RAISE EXCEPTION 'workbench: queue % does not let items be deferred (allow_defer = false)', prior.queue
      USING ERRCODE = '42501';
  END IF;
  -- What the change edited is the database's account (written with the row), never the caller's; the
  -- rest of the caller's detail is kept if it is a JSON object, as workbench's is.
  UPDATE {audit} SET queue = coalesce(p_queue, prior.queue), event = p_event, outcome = p_outcome,
    reason = p_reason,
    detail = NULLIF((CASE WHEN jsonb_typeof(p_detail::jsonb) = 'object' THEN p_detail::jsonb - 'changes'
                          ELSE '{{}}' END) || CASE
      WHEN jsonb_typeof(prior.detail::jsonb -> 'changes') = 'object' AND prior.detail::jsonb -> 'changes' <> '{{}}'
      THEN jsonb_build_object('changes', prior.detail::jsonb -> 'changes') ELSE '{{}}' END, '{{}}')::text
    WHERE id = settle_id;
END"""
    return [
        f"CREATE TABLE IF NOT EXISTS {enforced} (queue varchar(100) PRIMARY KEY)",
        f"ALTER TABLE {enforced} ADD COLUMN IF NOT EXISTS tbl oid",  # the queue's table
        f"ALTER TABLE {enforced} ADD COLUMN IF NOT EXISTS locks oid",  # its separate lock table
        # A reviewing queue: the queue whose completions it reviews, and its outcome that sends them back.
        f"ALTER TABLE {enforced} ADD COLUMN IF NOT EXISTS reviews varchar(100)",
        f"ALTER TABLE {enforced} ADD COLUMN IF NOT EXISTS send_back varchar(100)",
        # The queue's notes_required and allow_defer (enforced_row), for the guards below.
        f"ALTER TABLE {enforced} ADD COLUMN IF NOT EXISTS notes text[]",
        f"ALTER TABLE {enforced} ADD COLUMN IF NOT EXISTS defers boolean",
        f"REVOKE ALL ON {enforced} FROM PUBLIC",
        f"GRANT SELECT ON {enforced} TO {operator}",
        # The settle before queues sharing a table could relabel a row had no queue argument.
        f"DROP FUNCTION IF EXISTS {settle}(bigint, text, text, text, text)",
        (
            f"CREATE OR REPLACE FUNCTION {settle}(settle_id bigint, p_event text, p_outcome text, "
            f"p_reason text, p_detail text, p_queue text DEFAULT NULL) RETURNS void LANGUAGE plpgsql "
            "SECURITY DEFINER "
            f"SET search_path = pg_catalog, pg_temp AS $wb${settle_body}\n$wb$"
        ),
        f"REVOKE ALL ON FUNCTION {settle}({SETTLE_ARGS}) FROM PUBLIC",
        f"GRANT EXECUTE ON FUNCTION {settle}({SETTLE_ARGS}) TO {operator}",
        _function(guard, guard_body, security="INVOKER"),
        private(f"{guard}()"),
        f"DROP TRIGGER IF EXISTS {prep.quote(AUDIT_GUARD)} ON {audit}",
        # Rows written as the owner (by the protocol trigger, or by the owner) are not checked.
        (
            f"CREATE TRIGGER {prep.quote(AUDIT_GUARD)} BEFORE INSERT ON {audit} FOR EACH ROW "
            f"WHEN (NOT pg_has_role(current_user, {owner}::oid, 'MEMBER')) EXECUTE FUNCTION {guard}()"
        ),
        *_deferral_guard(conn, schema),
        *_review_guard(conn, schema),
        *_notes_guard(conn, schema),
    ]


def _refuses_defer(enforced: str, queue: str) -> str:
    """SQL: the queue `queue` (SQL text) is enforced and lets no item be deferred (Check.ALLOW_DEFER)."""
    return (
        f"{workflow_sql.check_mark(workflow.Check.ALLOW_DEFER)} "
        f"EXISTS (SELECT 1 FROM {enforced} e WHERE e.queue = {queue} AND e.defers = false)"
    )


def reason_refused(event: str, conn: sa.Connection) -> str:
    """plpgsql: refuse the act `event` (SQL text, one of reasoned()'s) for want of a reason."""
    texts = " ".join(
        f"WHEN '{name}' THEN {Renderer.literal_of(conn, text)}" for name, text in sorted(reasoned().items())
    )
    return (
        f"RAISE EXCEPTION 'workbench: %', CASE {event} {texts} END USING ERRCODE = '42501',\n"
        "      HINT = 'write your own audit row of the change with its reason in the same transaction, as "
        "workbench does';"
    )


def reasoned() -> dict[str, str]:
    """The events of the transitions that need a reason (workflow.needs_reason, as workflow.reason_given
    asks it: a supervisor's act, a defer, an escalate), whoever makes them, each with the engine's refusal
    (problems.REASON_NEEDED)."""
    return {
        t.event.value: problems.REASON_NEEDED.format(workflow.command(t.name))
        for t in workflow.TRANSITIONS.values()
        if t.event is not None and workflow.needs_reason(t.name)
    }


def reasoned_deferrals() -> dict[str, str]:
    """Those of reasoned() whose reason is kept in the deferral they write (Write.DEFERRAL: a defer's
    deferral keeps its reason, shown to whoever looks at the deferred item)."""
    return {
        t.event.value: reasoned()[t.event.value]
        for t in workflow.TRANSITIONS.values()
        if t.event is not None and workflow.needs_reason(t.name) and workflow.Write.DEFERRAL in t.writes
    }


def _deferral_reason(conn: sa.Connection, deferrals: str, enforced: str, release: str) -> str:
    """plpgsql for the notes guard: an act whose reason is its deferral's (reasoned_deferrals()) keeps one
    that is not blank in the deferral this transaction wrote for the item; a release that left a
    deferral is a defer (the row the database wrote for it says release until a client settles it)."""
    out = ""
    for event, text in sorted(reasoned_deferrals().items()):
        out += f"""
  IF a.event IN ('{event}', {release}) AND EXISTS (SELECT 1 FROM {deferrals} d WHERE d.queue = a.queue
      AND d.item_key = a.item_key AND d.xmin = {THIS_TRANSACTION} AND coalesce(btrim(d.reason), '') = '')
      AND EXISTS (SELECT 1 FROM {enforced} e WHERE e.queue = a.queue) THEN
    RAISE EXCEPTION 'workbench: %', {Renderer.literal_of(conn, text)} USING ERRCODE = '42501',
      HINT = 'the reason is kept in the deferral (its reason column), as workbench writes it';
  END IF;"""
    return out


def _notes_guard(conn: sa.Connection, schema: str) -> list[str]:
    """notes_required, checked by the database (Text.CONFIGURED in core/workflow.py): at commit, each
    release, defer or Complete an operator's login made on a queue that needs a note with that action
    (a Complete: with its outcome) comes with a note of that kind, by that login, written in the same
    transaction. At commit, because workbench writes the note in the change's own statement or just
    after it. A row the database wrote and nobody settled may still be any of the changes it names:
    each of them that needs a note needs its note; a release that left a deferral is a defer.

    An act the table requires a reason for (Text.REQUIRED, reasoned(): a supervisor's, a defer) as
    settled by commit keeps a reason: the database writes its row with the change, and the client's own
    audit row settles it with the reason; a defer's reason is also its deferral's, which must not be
    blank either (reasoned_deferrals())."""
    prep = conn.dialect.identifier_preparer
    audit_table = _audit_table(schema)
    audit = prep.format_table(audit_table)
    enforced = prep.format_table(enforced_table(schema))
    notes = prep.format_table(_own_table(schema, tables.NOTES_TABLE))
    deferrals = prep.format_table(_own_table(schema, tables.DEFERRALS_TABLE))
    guard = _qualified(prep, schema, NOTES_GUARD)
    needs_reason = reasoned()
    events = ", ".join(
        dict.fromkeys(
            [workflow_sql.event(name) for name in workflow_sql.noted()] + [f"'{event}'" for event in needs_reason]
        )
    )
    release, defer, complete = (workflow_sql.event(name) for name in ("release", "defer", "complete"))
    body = f"""
DECLARE
  a record;
  needed text[];
  notebook text;
  candidate record;
  ev text;
BEGIN
  IF NOT pg_has_role(session_user, '{OPERATOR_ROLE}', 'USAGE') THEN
    RETURN NULL;  -- logins that are not workbench operators
  END IF;
  SELECT x.* INTO a FROM {audit} x WHERE x.id = NEW.id;  -- as settled by now
  IF a.event IN ({", ".join(f"'{event}'" for event in needs_reason)}) AND coalesce(btrim(a.reason), '') = ''
      AND EXISTS (SELECT 1 FROM {enforced} e WHERE e.queue = a.queue) THEN
    {reason_refused("a.event", conn)}
  END IF;{_deferral_reason(conn, deferrals, enforced, release)}
  -- A defer is its queue's (the one the lock was taken in), with the deferral this transaction wrote
  -- for it, and names no other time than that deferral's.
  IF a.event = {defer} AND EXISTS (SELECT 1 FROM {enforced} e WHERE e.queue = a.queue) THEN
    IF {_refuses_defer(enforced, "a.queue")} THEN
      RAISE EXCEPTION 'workbench: queue % does not let items be deferred (allow_defer = false)', a.queue
        USING ERRCODE = '42501';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM {deferrals} d WHERE d.queue = a.queue AND d.item_key = a.item_key
        AND d.actor = a.actor AND d.xmin = {THIS_TRANSACTION}
        AND (a.detail IS NULL OR jsonb_typeof(a.detail::jsonb -> 'until') IS DISTINCT FROM 'string'
             OR d.until = CAST(CAST(a.detail::jsonb ->> 'until' AS timestamptz) AT TIME ZONE 'UTC' AS timestamp))) THEN
      RAISE EXCEPTION 'workbench: the defer of % item % has no deferral of its own until the time it names',
        a.queue, a.item_key USING ERRCODE = '42501', HINT = 'an item is deferred by a deferral of its queue '
                                                             'written with it, as workbench does';
    END IF;
  END IF;
  -- A reviewing queue keeps its notes with the reviewed queue's (its doer reads them there).
  SELECT e.notes, coalesce(e.reviews, e.queue) INTO needed, notebook FROM {enforced} e WHERE e.queue = a.queue;
  IF needed IS NULL THEN
    RETURN NULL;  -- not enforced, or no note required
  END IF;
  FOR candidate IN SELECT split_part(m, ':', 1) AS event, NULLIF(split_part(m, ':', 2), '') AS outcome
      FROM unnest(CASE WHEN a.detail LIKE '{{"recorded_by" : "database"%'
                       THEN ARRAY(SELECT jsonb_array_elements_text(a.detail::jsonb -> 'may_be'))
                       ELSE ARRAY[a.event || ':' || coalesce(a.outcome, '')] END) m LOOP
    ev := CASE WHEN candidate.event = {release} AND EXISTS (SELECT 1 FROM {deferrals} d WHERE d.queue = a.queue
                    AND d.item_key = a.item_key AND d.xmin = {THIS_TRANSACTION}) THEN {defer}
               ELSE candidate.event END;
    CONTINUE WHEN ev NOT IN ({events})
      OR NOT (CASE WHEN ev = {complete} THEN candidate.outcome ELSE ev END) = ANY (needed);
    IF NOT EXISTS (SELECT 1 FROM {notes} n WHERE n.queue = notebook AND n.item_key = a.item_key
                   AND n.author = a.actor AND n.kind = ev AND n.xmin = {THIS_TRANSACTION}) THEN
      RAISE EXCEPTION 'workbench: queue % needs a note with this % of item %: say what happened', a.queue,
        CASE WHEN ev = {complete} THEN 'Complete as ' || candidate.outcome ELSE ev END, a.item_key
        USING ERRCODE = '42501', HINT = 'write the note in the same transaction, as workbench does (--note TEXT)';
    END IF;
  END LOOP;
  RETURN NULL;
END"""
    return [
        (
            f"CREATE OR REPLACE FUNCTION {guard}() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER "
            f"SET search_path = pg_catalog, pg_temp AS $wb${body}\n$wb$"
        ),
        private(f"{guard}()"),
        f"DROP TRIGGER IF EXISTS {prep.quote(NOTES_GUARD)} ON {audit}",
        # Deferred: it looks at the audit row, and the notes, as the transaction leaves them.
        (
            f"CREATE CONSTRAINT TRIGGER {prep.quote(NOTES_GUARD)} AFTER INSERT ON {audit} "
            f"DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.event IN ({events})) EXECUTE FUNCTION {guard}()"
        ),
    ]


def _deferral_guard(conn: sa.Connection, schema: str) -> list[str]:
    """A deferral hides an item from everyone until its time: an operator's login may add one only
    under its own name, within MAX_DAYS, for an item it gave back (released or deferred) in the same
    transaction, and remove one only of such an item or one long lapsed (workbench's clean-up)."""
    prep = conn.dialect.identifier_preparer
    table = _own_table(schema, tables.DEFERRALS_TABLE)
    deferrals = prep.format_table(table)
    audit = prep.format_table(_audit_table(schema))
    enforced = prep.format_table(enforced_table(schema))
    owner = _owner_oid(conn, table)
    guard = _qualified(prep, schema, DEFERRAL_GUARD)
    refuses_defer = _refuses_defer(enforced, "NEW.queue")

    def sql(expr: sa.ColumnElement[Any], row: str) -> str:
        adapted = sql_util.ClauseAdapter(table.alias(row)).traverse(expr)
        return str(adapted.compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True})).replace("%%", "%")

    now = clock.db_now()
    lapsed = sql(deferrals_mod.lapsed(table), "old")
    # Still to come and within MAX_DAYS: neither of the rules the engine and SQL Server refuse a deferral by.
    ahead = sql(sa.not_(sa.or_(deferrals_mod.too_soon(table.c.until), deferrals_mod.too_far(table.c.until))), "new")

    def given_back(row: str) -> str:
        return (
            f"EXISTS (SELECT 1 FROM {audit} a WHERE a.queue = {row}.queue AND a.item_key = {row}.item_key "
            f"AND a.xmin = {THIS_TRANSACTION} AND a.actor = session_user "
            f"AND a.event IN ('release', 'defer'))"
        )

    def sent_back(row: str) -> str:
        """This login's review sent the item back to `row`'s queue in this transaction (a Complete of the
        reviewing queue with its send_back outcome): its deferral to the doer is the review's."""
        return (
            f"EXISTS (SELECT 1 FROM {enforced} e JOIN {audit} a ON a.queue = e.queue WHERE e.reviews = {row}.queue "
            f"AND a.item_key = {row}.item_key AND a.xmin = {THIS_TRANSACTION} AND a.actor = session_user "
            f"AND a.event = 'complete' AND a.outcome = e.send_back)"
        )

    reviews = prep.format_table(_own_table(schema, tables.REVIEWS_TABLE))
    # Due at once, to the doer of the item's latest review (whose verdict may be written already:
    # the parts of one statement run in no fixed order).
    to_doer = (
        f"NEW.until <= {sql(now, 'new')} AND NEW.actor = (SELECT rv.doer FROM {reviews} rv "
        "WHERE rv.source = NEW.queue AND rv.item_key = NEW.item_key ORDER BY rv.id DESC LIMIT 1)"
    )

    body = f"""
BEGIN
  IF NOT pg_has_role(session_user, '{OPERATOR_ROLE}', 'USAGE') THEN
    RETURN CASE TG_OP WHEN 'DELETE' THEN OLD ELSE NEW END;  -- logins that are not workbench operators
  END IF;
  IF TG_OP = 'DELETE' THEN
    IF ({lapsed}) OR NOT EXISTS (SELECT 1 FROM {enforced} WHERE queue = OLD.queue) OR {given_back("OLD")}
        OR {sent_back("OLD")} THEN
      RETURN OLD;
    END IF;
    RAISE EXCEPTION 'workbench: % may not remove the deferral of % item %', session_user, OLD.queue, OLD.item_key
      USING ERRCODE = '42501', HINT = 'a deferral goes when its item is released or deferred again';
  END IF;
  IF NOT EXISTS (SELECT 1 FROM {enforced} WHERE queue = NEW.queue)
      OR NEW.actor = session_user AND ({ahead}) AND {given_back("NEW")} AND NOT {refuses_defer}
      OR {to_doer} AND {sent_back("NEW")} THEN
    RETURN NEW;
  END IF;
  IF {refuses_defer} THEN
    RAISE EXCEPTION 'workbench: queue % does not let items be deferred (allow_defer = false)', NEW.queue
      USING ERRCODE = '42501';
  END IF;
  RAISE EXCEPTION 'workbench: % may not defer % item % this way', session_user, NEW.queue, NEW.item_key
    USING ERRCODE = '42501',
          HINT = 'an item is deferred by the one who holds it, under their own login, '
                 'at most {deferrals_mod.MAX_DAYS} days ahead';
END"""
    return [
        (
            f"CREATE OR REPLACE FUNCTION {guard}() RETURNS trigger LANGUAGE plpgsql SECURITY INVOKER "
            f"SET search_path = pg_catalog, pg_temp AS $wb${body}\n$wb$"
        ),
        private(f"{guard}()"),
        f"DROP TRIGGER IF EXISTS {prep.quote(DEFERRAL_GUARD)} ON {deferrals}",
        (
            f"CREATE TRIGGER {prep.quote(DEFERRAL_GUARD)} BEFORE INSERT OR DELETE ON {deferrals} FOR EACH ROW "
            f"WHEN (NOT pg_has_role(current_user, {owner}::oid, 'MEMBER')) EXECUTE FUNCTION {guard}()"
        ),
    ]


def _review_guard(conn: sa.Connection, schema: str) -> list[str]:
    """Four eyes, checked by the database: an operator's login does not add a review (the protocol
    check records the one a Complete chose; workbench's own copy is dropped), and changes one only
    the ways workbench does: superseded by its doer's new Complete or undo in the same transaction,
    or given its verdict by the reviewer whose Complete in the reviewing queue, in the same
    transaction, says which (the send-back outcome, or any other), never by the doer. Reviews of
    queues the database does not enforce keep what the grants give."""
    prep = conn.dialect.identifier_preparer
    table = _own_table(schema, tables.REVIEWS_TABLE)
    reviews = prep.format_table(table)
    audit = prep.format_table(_audit_table(schema))
    enforced = prep.format_table(enforced_table(schema))
    guard = _qualified(prep, schema, REVIEW_GUARD)
    now = str(clock.db_now().compile(dialect=conn.dialect))
    here = THIS_TRANSACTION

    def enforced_for(row: str) -> str:
        return f"EXISTS (SELECT 1 FROM {enforced} WHERE queue IN ({row}.queue, {row}.source))"

    same = " AND ".join(
        f"NEW.{c} IS NOT DISTINCT FROM OLD.{c}" for c in ("id", "queue", "item_key", "source", "doer", "at", "why")
    )
    body = f"""
DECLARE
  e record;
BEGIN
  IF NOT pg_has_role(session_user, '{OPERATOR_ROLE}', 'USAGE') THEN
    RETURN CASE TG_OP WHEN 'DELETE' THEN OLD ELSE NEW END;  -- logins that are not workbench operators
  END IF;
  IF TG_OP = 'INSERT' THEN
    IF NOT {enforced_for("NEW")} THEN
      RETURN NEW;
    END IF;
    IF strpos(coalesce(current_setting('{REVIEWED_SETTING}', true), ''), {_crumb("NEW.queue", "NEW.item_key")}) > 0 THEN
      RETURN NULL;  -- the database recorded this review with the Complete that chose it
    END IF;
  ELSIF TG_OP = 'DELETE' THEN
    IF NOT {enforced_for("OLD")} THEN
      RETURN OLD;
    END IF;
  ELSIF NOT {enforced_for("OLD")} THEN
    RETURN NEW;
  ELSIF OLD.verdict IS NULL AND {same} AND NEW.verdict = '{reviews_mod.SUPERSEDED}' THEN
    IF EXISTS (SELECT 1 FROM {reviews} rv WHERE rv.id = OLD.id AND rv.xmin = {here}) THEN
      RETURN NULL;  -- the review the database recorded in this transaction stays open
    END IF;
    IF EXISTS (SELECT 1 FROM {audit} a WHERE a.queue = OLD.source AND a.item_key = OLD.item_key AND a.xmin = {here}
               AND a.actor = session_user AND a.event IN ('complete', 'undo')) THEN
      RETURN NEW;
    END IF;
  ELSIF OLD.verdict IS NULL AND {same} AND OLD.doer <> session_user THEN
    SELECT * INTO e FROM {enforced} WHERE queue = OLD.queue;
    IF NOT FOUND THEN
      RETURN NEW;  -- the reviewing queue is not enforced
    END IF;
    IF EXISTS (SELECT 1 FROM {audit} a WHERE a.queue = OLD.queue AND a.item_key = OLD.item_key AND a.xmin = {here}
               AND a.actor = session_user AND a.event = 'complete'
               AND {workflow_sql.check_mark(workflow.Check.REVIEWED_OUTCOME)}
               NEW.verdict = CASE WHEN a.outcome = e.send_back THEN '{reviews_mod.SENT_BACK}'
                                  ELSE '{reviews_mod.ACCEPTED}' END) THEN
      NEW.reviewer := session_user;
      NEW.reviewed_at := {now};
      RETURN NEW;
    END IF;
  END IF;
  RAISE EXCEPTION 'workbench: % may not write this review of % item %', session_user,
    CASE TG_OP WHEN 'DELETE' THEN OLD.queue ELSE NEW.queue END,
    CASE TG_OP WHEN 'DELETE' THEN OLD.item_key ELSE NEW.item_key END
    USING ERRCODE = '42501', HINT = 'reviews are recorded by the Complete that chooses them and decided by '
                                    'the reviewer''s Complete, someone else than the one who did the work';
END"""
    return [
        (
            f"CREATE OR REPLACE FUNCTION {guard}() RETURNS trigger LANGUAGE plpgsql SECURITY INVOKER "
            f"SET search_path = pg_catalog, pg_temp AS $wb${body}\n$wb$"
        ),
        private(f"{guard}()"),
        f"DROP TRIGGER IF EXISTS {prep.quote(REVIEW_GUARD)} ON {reviews}",
        (
            f"CREATE TRIGGER {prep.quote(REVIEW_GUARD)} BEFORE INSERT OR UPDATE OR DELETE ON {reviews} FOR EACH ROW "
            f"WHEN (NOT pg_has_role(current_user, {_owner_oid(conn, table)}::oid, 'MEMBER')) EXECUTE FUNCTION {guard}()"
        ),
    ]


def _function(name: str, body: str, *, security: str) -> str:
    # A fixed search_path: nothing a caller puts on their path runs inside (as the owner, for DEFINER).
    return (
        f"CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql SECURITY {security} "
        f"SET search_path = pg_catalog, pg_temp AS $wb${body}\n$wb$"
    )


def _qualified(prep: Any, schema: str, name: str) -> str:
    return f"{prep.quote_schema(schema)}.{prep.quote(name)}"


def drop_queue_trigger(conn: sa.Connection, q: mapping.BoundQueue, schema: str, others: list[str]) -> list[str]:
    """What undoes queue_trigger() and the trusted functions for `q`; the table's trigger stays for
    `others`, the table's other enforced queues."""
    prep = conn.dialect.identifier_preparer
    row_type = prep.format_table(q.table)
    return [
        *table_trigger(conn, q, schema, others),
        f"DROP TRIGGER IF EXISTS {prep.quote(trigger_name(q.name))} ON {prep.format_table(q.table)}",
        f"DROP FUNCTION IF EXISTS {_qualified(prep, schema, trigger_name(q.name))}()",
        f"DROP FUNCTION IF EXISTS {_qualified(prep, schema, check_function_name(q.name))}({row_type}, {row_type})",
        f"DROP FUNCTION IF EXISTS {_qualified(prep, schema, next_function_name(q.name))}()",
        (
            f"DROP FUNCTION IF EXISTS {_qualified(prep, schema, complete_function_name(q.name))}"
            f"({q.key.type.compile(dialect=conn.dialect)}, text, text)"
        ),
        _if_exists(
            prep.format_table(enforced_table(schema)),
            f"DELETE FROM {prep.format_table(enforced_table(schema))} WHERE queue = "
            f"{Renderer.literal_of(conn, q.name)}",
        ),
    ]


def drop_shared(conn: sa.Connection, schema: str, also: list[str]) -> str:
    """A block that removes what queues share once no enforced queue is left, with `also`."""
    prep = conn.dialect.identifier_preparer
    audit = prep.format_table(_audit_table(schema))
    enforced = prep.format_table(enforced_table(schema))
    deferrals = prep.format_table(_own_table(schema, tables.DEFERRALS_TABLE))
    statements = [
        f"DROP TRIGGER IF EXISTS {prep.quote(AUDIT_GUARD)} ON {audit}",
        f"DROP TRIGGER IF EXISTS {prep.quote(DEFERRAL_GUARD)} ON {deferrals}",
        f"DROP FUNCTION IF EXISTS {_qualified(prep, schema, DEFERRAL_GUARD)}()",
        (
            f"DROP TRIGGER IF EXISTS {prep.quote(REVIEW_GUARD)} ON "
            f"{prep.format_table(_own_table(schema, tables.REVIEWS_TABLE))}"
        ),
        f"DROP FUNCTION IF EXISTS {_qualified(prep, schema, REVIEW_GUARD)}()",
        f"DROP TRIGGER IF EXISTS {prep.quote(NOTES_GUARD)} ON {audit}",
        f"DROP FUNCTION IF EXISTS {_qualified(prep, schema, NOTES_GUARD)}()",
        f"DROP TABLE IF EXISTS {enforced}",
        f"DROP FUNCTION IF EXISTS {_qualified(prep, schema, AUDIT_GUARD)}()",
        f"DROP FUNCTION IF EXISTS {_qualified(prep, schema, SETTLE)}({SETTLE_ARGS})",
        f"DROP FUNCTION IF EXISTS {_qualified(prep, schema, SETTLE)}(bigint, text, text, text, text)",  # before 6
        *also,
    ]
    body = "".join(f"    EXECUTE {Renderer.literal_of(conn, text)};\n" for text in statements)
    return (
        "DO $wb$\nBEGIN\n"
        f"  IF to_regclass({Renderer.literal_of(conn, enforced)}) IS NULL\n"
        f"      OR NOT EXISTS (SELECT 1 FROM {enforced}) THEN\n"
        f"{body}  END IF;\nEND\n$wb$"
    )


def _if_exists(table: str, statement: str) -> str:
    return f"DO $wb$\nBEGIN\n  IF to_regclass('{table}') IS NOT NULL THEN\n    {statement};\n  END IF;\nEND\n$wb$"
