"""The table's row rules (core/workflow.py RowRule, Transition.after) compiled once, as SQLAlchemy clauses.

Every rendering asks here by transition name: the engine puts the clauses in its statements' WHERE
(over the table itself; the row after as `BoundQueue.written` of the values it sets), PostgreSQL's
checks render them over OLD and NEW (`rules.pg_names.Renderer.sql(clause, row)`), SQL Server's procedures
over the row their statement reads. A transition's TrailRule (what the item's history must say: an
undo's last event) is a subquery over the audit trail, asked for the same way (`trail`). A rule
changed in the table changes all of them; a RowRule, After or TrailRule with no clause here fails
when a rendering is built.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Mapping
from typing import Any, Literal

import sqlalchemy as sa

from workbench.core import workflow
from workbench.core.models import EventKind
from workbench.db import clock, mapping

Clause = sa.ColumnElement[bool]
# What a claim's branch knows of the lock (CLAIMABLE differs by it): free, run out, or either.
LockSeen = Literal["free", "stale"] | None


FILE = "workbench/db/rowrules.py"


class NotCompiled(LookupError):
    """A row rule (or state after) of core/workflow.py with no clause here; the message names the file."""

    def __init__(self, member: enum.Enum, table: str) -> None:
        super().__init__(
            f"core/workflow.py declares {type(member).__name__}.{member.name} but {FILE} has no clause for it: "
            f"add one to {table} (docs/develop/workflow.md, 'Where a new transition goes')"
        )


@dataclasses.dataclass(frozen=True)
class Row:
    """A row rule as conjuncts over the row: the queue's scope, then the rule's own state. A claim's
    branch that knows the lock free or stale takes `state_for` it (the same clause, simplified)."""

    scope: tuple[Clause, ...]
    state: tuple[Clause, ...]
    by_lock: Mapping[str, tuple[Clause, ...]] = dataclasses.field(default_factory=dict)

    @property
    def all(self) -> tuple[Clause, ...]:
        return (*self.scope, *self.state)

    def state_for(self, lock: LockSeen) -> tuple[Clause, ...]:
        """The rule's state where the lock is known to be `lock` (`state` where it is not)."""
        return self.state if lock is None else self.by_lock.get(lock, self.state)


@dataclasses.dataclass(frozen=True)
class _Ask:
    user: Any
    outcome: str | None
    reviewed: bool


def _claimable(q: mapping.BoundQueue, a: _Ask) -> Row:
    # Waiting in todo, or (a lock that ran out) in the state the claim put it in.
    todo = q.todo_clause(a.user)
    claimed = q.claimed_state_clause(a.user)
    if claimed is None:
        return Row(tuple(q.scope_clause(a.user)), (todo,))
    return Row(
        tuple(q.scope_clause(a.user)),
        (sa.or_(todo, sa.and_(q.stale(q.now()), claimed)),),
        {"free": (todo,), "stale": (sa.or_(todo, claimed),)},
    )


def completed_values(q: mapping.BoundQueue, outcome: str | None, reviewed: bool, user: Any) -> list[Clause]:
    """The row still holds what the Complete with `outcome` wrote for `user` (`reviewed`: chosen for
    review, the review's values written after the outcome's)."""
    written = {b.column.name: b for b in q.outcomes.get(outcome or "", [])}
    if reviewed:
        written.update({b.column.name: b for b in q.review_writes})
    return [b.holds(user) for b in written.values()]


def escalated_values(q: mapping.BoundQueue) -> list[Clause]:
    """The row still holds what on_escalate wrote (whoever escalated: a user's name is some name, a
    time some time)."""
    return [b.held() for b in q.on_escalate]


_R = workflow.RowRule
# Each RowRule as conjuncts over the row before the change. Every member is listed: a new one fails
# in tests/test_rowrules.py (require_compiled), and here when a rendering asks for it.
_BEFORE: Mapping[workflow.RowRule, Callable[[mapping.BoundQueue, _Ask], Row]] = {
    _R.CLAIMABLE: _claimable,
    # In the queue's work (todo, or the state its claim put it in): BoundQueue.in_work, which is held_here
    # for locks in the row; a lock table's rows name their queue, but the row is still asked to be in work.
    _R.HELD: lambda q, a: Row(tuple(q.scope_clause()), (q.in_work(),)),
    # Out of the queue's work: HELD's state failing, a NULL column of it too (read through CASE, never NOT over
    # an unknown), so that a lock row left on such an item is given back, not left to nobody.
    _R.OUT_OF_WORK: lambda q, a: Row(tuple(q.scope_clause()), (sa.case((q.in_work(), 0), else_=1) == 1,)),
    _R.WAITING: lambda q, a: Row(tuple(q.scope_clause(a.user)), (q.todo_clause(a.user),)),
    _R.FINISHED: lambda q, a: Row(tuple(q.scope_clause()), (sa.not_(q.todo_clause()),)),
    _R.COMPLETED_BY_CALLER: lambda q, a: Row(
        tuple(q.scope_clause()),
        (sa.not_(q.todo_clause()), *completed_values(q, a.outcome, a.reviewed, a.user)),
    ),
    _R.ESCALATED: lambda q, a: Row(tuple(q.scope_clause()), (sa.not_(q.todo_clause()), *escalated_values(q))),
    _R.EXISTS: lambda q, a: Row((), ()),
}

_A = workflow.After
# Each After as a condition over the row after the change (None: nothing beside the writes).
_AFTER: Mapping[workflow.After, Callable[[mapping.BoundQueue], Clause | None]] = {
    _A.ANY: lambda q: None,
    _A.WAITING: lambda q: sa.and_(sa.true(), *q.scope_clause(), q.todo_clause()),
    _A.WAITING_OR_OUT: lambda q: sa.or_(q.todo_clause(), sa.not_(sa.and_(sa.true(), *q.scope_clause()))),
}


@dataclasses.dataclass(frozen=True)
class _Trail:
    """What a trail rule is asked over: the audit table, the item (its key as the trail keeps it), the
    caller, the clock (UTC, as the trail keeps times), the window (None: no limit) and the outcome."""

    audit: sa.Table
    item: Any
    user: Any
    now: Any
    within: int | None
    outcome: str | None


def _last_own_complete(q: mapping.BoundQueue, t: _Trail) -> Clause:
    # The item's newest audit row in this queue is the caller's Complete (no later row), within the
    # window; read through the trail's (queue, item_key, id) index.
    last, later = t.audit.alias("wb_last"), t.audit.alias("wb_later")
    newer = sa.select(later.c.id).where(later.c.queue == q.name, later.c.item_key == t.item, later.c.id > last.c.id)
    found = [
        last.c.queue == q.name,
        last.c.item_key == t.item,
        last.c.event == EventKind.COMPLETE.value,
        last.c.actor == t.user,
        ~sa.exists(newer),
    ]
    if t.outcome is not None:
        found.append(last.c.outcome == t.outcome)
    if t.within is not None:
        found.append(last.c.at >= clock.add_seconds(t.now, q.shape.seconds(-t.within)))
    return sa.exists(sa.select(last.c.id).where(*found))


_T = workflow.TrailRule
# Each TrailRule as a condition over the audit trail (None: nothing asked). Every member is listed.
_TRAIL: Mapping[workflow.TrailRule, Callable[[mapping.BoundQueue, _Trail], Clause | None]] = {
    _T.ANY: lambda q, t: None,
    _T.LAST_OWN_COMPLETE: _last_own_complete,
}


def window(q: mapping.BoundQueue, name: str) -> int | None:
    """The seconds transition `name`'s trail rule looks back (Check.UNDO_WINDOW: the queue's undo_within),
    or None where it has no window."""
    return q.config.undo_within_seconds if workflow.Check.UNDO_WINDOW in workflow.TRANSITIONS[name].checks else None


def trail(
    q: mapping.BoundQueue,
    name: str,
    audit: sa.Table,
    *,
    item: Any,
    user: Any,
    now: Any = None,
    outcome: str | None = None,
) -> Clause | None:
    """Transition `name`'s trail rule (its TrailRule) for `q`: a condition over `audit` (the trail's
    table) about `item` (the key as the trail keeps it: text), asked for `user` at `now` (the
    database clock, UTC, unless given) within its window; `outcome`: the Complete's outcome, where
    the rendering asks per outcome. None where the table asks nothing of the history."""
    rule = workflow.TRANSITIONS[name].trail
    if rule not in _TRAIL:
        raise NotCompiled(rule, "_TRAIL")
    asked = _Trail(audit, item, user, clock.db_now() if now is None else now, window(q, name), outcome)
    return _TRAIL[rule](q, asked)


def before(
    q: mapping.BoundQueue, name: str, *, user: Any = None, outcome: str | None = None, reviewed: bool = False
) -> Row:
    """Transition `name`'s row rule (its RowRule) for `q`, over the row before the change. `user`: the
    caller, where the rule names them (the claimer of a todo naming its claimer; the doer of an undone
    Complete); `outcome`, `reviewed`: the Complete an undo takes back."""
    rule = workflow.TRANSITIONS[name].row
    if rule not in _BEFORE:
        raise NotCompiled(rule, "_BEFORE")
    return _BEFORE[rule](q, _Ask(user, outcome, reviewed))


def before_all(q: mapping.BoundQueue, *names: str, **ask: Any) -> Row:
    """The row rule the transitions `names` share (one branch renders them), refused where they differ."""
    rules = {workflow.TRANSITIONS[name].row for name in names}
    if len(rules) != 1:
        raise AssertionError(f"transitions {', '.join(names)} differ in their row rule: one branch cannot render them")
    return before(q, names[0], **ask)


def scope(q: mapping.BoundQueue, *names: str) -> tuple[Clause, ...]:
    """The queue's scope, which the row rules of the transitions `names` all hold to (a check that renders
    them tests it once, before its branches); refused where one of them does not."""
    scopes = {str(sa.and_(sa.true(), *before(q, name).scope)) for name in names}
    if len(scopes) != 1:
        raise AssertionError(f"the row rules of {', '.join(names)} differ in the scope they hold to")
    return before(q, names[0]).scope


def after(q: mapping.BoundQueue, name: str) -> Clause | None:
    """Transition `name`'s state after the change (its Transition.after) over the row after, or None
    where the table asks nothing beside what it writes. The engine reads it for the values it sets
    with `written_after`; a trigger renders it over NEW."""
    state = workflow.TRANSITIONS[name].after
    if state not in _AFTER:
        raise NotCompiled(state, "_AFTER")
    return _AFTER[state](q)


def require_compiled() -> None:
    """Refuse (NotCompiled, naming this file) a RowRule, After or TrailRule of the table with no clause here."""
    compiled: tuple[tuple[type[enum.Enum], Mapping[Any, Any], str], ...] = (
        (workflow.RowRule, _BEFORE, "_BEFORE"),
        (workflow.After, _AFTER, "_AFTER"),
        (workflow.TrailRule, _TRAIL, "_TRAIL"),
    )
    for members, table, name in compiled:
        for member in members:
            if member not in table:
                raise NotCompiled(member, name)


def written_after(q: mapping.BoundQueue, name: str, values: Mapping[str, Any]) -> Clause:
    """`after(name)` as it reads for a row once `values` are written to it (true where it asks nothing):
    a condition on the row before, for the statement that writes them."""
    clause = after(q, name)
    return sa.true() if clause is None else q.written(clause, values)
