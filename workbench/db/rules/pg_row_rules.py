"""PostgreSQL under grants: the table's row rules and writes rendered on a queue row before (o) and after (n)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import sqlalchemy as sa

from workbench.core import workflow
from workbench.db import mapping, rowrules
from workbench.db.binding import conditions
from workbench.db.rules.pg_names import Renderer, checked_columns


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
_LOCK_AFTER: Mapping[
    workflow.Write, Callable[[mapping.BoundQueue, sa.FromClause, sa.FromClause], sa.ColumnElement[bool]]
] = {
    workflow.Write.LOCK_TAKEN: lambda q, o, n: q.shape.taken(o, n, sa.literal_column(Renderer.login)),
    workflow.Write.LOCK_HANDED: lambda q, o, n: q.shape.taken(o, n, None),
    workflow.Write.LOCK_EXTENDED: lambda q, o, n: q.shape.extended(o, n, capped=q.capped),
    workflow.Write.LOCK_CLEARED: lambda q, o, n: q.shape.cleared(n),
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
    return "true" if not kind else r.sql(_LOCK_AFTER[next(iter(kind))](q, r.old, r.new))


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
