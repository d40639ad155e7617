"""The states a queue's row may be in while it is the queue's work: waiting, or as its claim left it."""

from __future__ import annotations

import dataclasses
from typing import Any

import sqlalchemy as sa

from workbench.config import model
from workbench.db import filters
from workbench.db.binding.conditions import BoundAssignment, BoundCondition, leaves

# A state, per column: the conditions (and their bound values) the column's value meets in it.
State = dict[str, list[tuple[model.Condition, Any]]]


@dataclasses.dataclass(frozen=True)
class Work:
    """What tells a queue's rows: its scope, what waits (todo), what its claim writes, the lock's user column."""

    scope: list[BoundCondition]
    todo: list[BoundCondition]
    on_claim: list[BoundAssignment]
    lock_user: sa.Column[Any]

    def claimed_state_clause(self, user: Any = None, *, fixed: bool = False) -> sa.ColumnElement[bool] | None:
        """Rows in the state a claim puts them in: `todo` with each column the claim writes replaced
        by what it writes (None when the claim surely leaves a row matching `todo`).

        An expired lock is served again when its row is waiting or in this state, whatever the claim
        wrote: a value, NULL, the claimer's name (still in the lock user column) or the claim time.
        `fixed`: without todo's conditions on the time or the claiming user (see BoundQueue.held_here).
        """
        if leaves(self.todo, self.on_claim) is False:
            return None
        written = {b.column.name: b for b in self.on_claim}
        parts = []
        for cond in self.todo:
            b = written.get(cond.column.name)
            kind = b.assignment.kind if b is not None else None
            if b is None:
                if not (fixed and cond.condition.dynamic):
                    parts.append(cond.clause(user))
            elif kind == "value":
                parts.append(b.column == sa.bindparam(None, b.value, type_=b.column.type, literal_execute=True))
            elif kind == "null":
                parts.append(b.column.is_(None))
            elif kind == "user":
                parts.append(b.column == self.lock_user)
            else:  # the claim time; an extension moves the lock time, so only "set" is known
                parts.append(b.column.is_not(None))
        return sa.and_(sa.true(), *parts)

    def in_work(self) -> sa.ColumnElement[bool]:
        """The row rule, the same for every lock shape: the row is still this queue's work, in its
        scope and waiting or in the state its claim put it in (not moved out of it since, by another
        program or by hand). A write under a lock (Save, Release, Complete, extend) is refused when
        it fails: "the item is no longer in this queue's work". A condition on the queue's row."""
        scope = [b.clause() for b in self.scope if not b.condition.dynamic]
        todo = [b.clause() for b in self.todo if not b.condition.dynamic]
        claimed = self.claimed_state_clause(fixed=True)
        if not todo:
            return sa.and_(sa.true(), *scope)
        waiting = sa.and_(*todo)
        return sa.and_(sa.true(), *scope, waiting if claimed is None else sa.or_(waiting, claimed))

    def held_states(self) -> list[State]:
        """What held_here allows, per column: the conditions (and their bound values) of a waiting row
        and, if the claim changes it, of a claimed one (each column on_claim writes: what it writes)."""
        states = [self._state([])]
        if self.claimed_state_clause() is not None:
            states.append(self._state(self.on_claim))
        return states

    def _state(self, written: list[BoundAssignment]) -> State:
        replaced = {b.column.name: b for b in written}
        found: State = {}
        kept = [*self.scope, *(b for b in self.todo if b.column.name not in replaced)]
        for b in kept:
            if not b.condition.dynamic:
                found.setdefault(b.column.name, []).append((b.condition, b.value))
        for name, a in replaced.items():
            if any(b.column.name == name for b in self.todo):
                kind = a.assignment.kind
                wrote = (
                    model.Condition(name, "eq", a.value, a.assignment.key)
                    if kind == "value"
                    else model.Condition(name, "null", kind == "null", a.assignment.key)
                )
                found.setdefault(name, []).append((wrote, wrote.value))
        return found

    def may_share_rows(self, other: Work) -> bool:
        """Could a row be held in this queue and in `other` (over the same table) alike, so that its
        state does not tell whose lock it is? False only where some column's values set them apart
        (a status, a type: each value one of them allows, the other refuses)."""
        return any(
            not any(_apart(a[name], b[name]) or _apart(b[name], a[name]) for name in a.keys() & b.keys())
            for a in self.held_states()
            for b in other.held_states()
        )


def _values(conditions: list[tuple[model.Condition, Any]]) -> set[Any] | None:
    """The few values a column may hold under `conditions` (None: too many to list)."""
    found: set[Any] | None = None
    for condition, value in conditions:
        some = (
            {value}
            if condition.op == "eq"
            else set(value)
            if condition.op == "in"
            else {None}
            if condition.op == "null" and value
            else None
        )
        if some is not None and condition.or_null:
            some.add(None)
        if some is not None:
            found = some if found is None else found & some
    return found


def _apart(mine: list[tuple[model.Condition, Any]], theirs: list[tuple[model.Condition, Any]]) -> bool:
    listed = _values(mine)
    return listed is not None and all(
        any(filters.holds(c, v, candidate) is False for c, v in theirs) for candidate in listed
    )
