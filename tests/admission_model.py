"""The oracle of tests/test_admission.py: what the workflow table (core/workflow.py) admits of one change to
a queue row, decided from the table's declarations (who, lock rule, row rule, writes, checks, note rule)
and the queue's config, evaluated in Python over a snapshot of the row before and the row the change asks
for. No SQL rule is restated here: each transition's fields are read and interpreted generically."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from workbench.core import workflow
from workbench.core.models import EventKind
from workbench.core.workflow import Actor, Check, LockRule, Rendering, RowRule, Write
from workbench.db import mapping
from workbench.db.binding import conditions

NOW = "<now>"  # a time column set to the database clock
FRESH = "<fresh token>"  # a token nobody had


@dataclasses.dataclass(frozen=True)
class QueueModel:
    """What the oracle needs of one queue's config: its todo, the values each transition writes, its limits."""

    name: str
    todo: Mapping[str, frozenset[Any]]  # column -> the values `todo` admits
    on_claim: Mapping[str, Any]
    on_release: Mapping[str, Any]
    on_reopen: Mapping[str, Any]
    on_escalate: Mapping[str, Any]
    outcomes: Mapping[str, Mapping[str, Any]]
    reason_writes: tuple[Mapping[str, Any], ...]
    notes_required: frozenset[str]
    allow_defer: bool
    lock_seconds: int
    max_lock_seconds: int | None
    undo_within_seconds: int
    editable: frozenset[str]
    movable: frozenset[str]
    checked: frozenset[str]  # every column an operator or supervisor may write (others are never written)
    reviewing: bool = False  # it reviews another queue's completions (no family here has one yet)
    takers: frozenset[str] = frozenset()  # its escalate_to group's members (take, beside supervisors)

    @classmethod
    def of(cls, q: mapping.BoundQueue) -> QueueModel:
        def values(group: list[conditions.BoundAssignment]) -> dict[str, Any]:
            out: dict[str, Any] = {}
            for b in group:
                kind = b.assignment.kind
                out[b.column.name] = (
                    b.value if kind == "value" else None if kind == "null" else ("<user>" if kind == "user" else NOW)
                )
            return out

        todo: dict[str, frozenset[Any]] = {}
        for cond in q.config.todo:
            assert cond.op in ("eq", "in") and not cond.dynamic and not cond.or_null, cond  # what these families use
            todo[cond.column] = frozenset(cond.value if cond.op == "in" else [cond.value])
        lock = {c.name for c in q.lock_columns}
        movable = frozenset(c.name for c in q.table.c if q.movable(c))
        return cls(
            name=q.name,
            todo=todo,
            on_claim=values(q.on_claim),
            on_release=values(q.on_release),
            on_reopen=values(q.on_reopen),
            on_escalate=values(q.on_escalate),
            outcomes={name: values(group) for name, group in q.outcomes.items()},
            reason_writes=tuple(values(group) for group in q.reason_writes.values()),
            notes_required=frozenset(q.config.notes_required),
            allow_defer=q.config.allow_defer,
            lock_seconds=q.config.lock_seconds,
            max_lock_seconds=q.config.max_lock_seconds or None,
            undo_within_seconds=q.config.undo_within_seconds,
            editable=frozenset(c.name for c in q.editable),
            movable=movable - lock,
            checked=frozenset(c.name for c in q.table.c if c.name not in lock and c is not q.key),
        )

    def in_todo(self, row: Mapping[str, Any]) -> bool:
        return all(row.get(col) in wanted for col, wanted in self.todo.items())

    def in_claimed_state(self, row: Mapping[str, Any]) -> bool:
        """The state on_claim puts a todo row in (todo with on_claim's columns replaced)."""
        return all(
            (row.get(col) == self.on_claim[col]) if col in self.on_claim else row.get(col) in wanted
            for col, wanted in self.todo.items()
        )

    def held_state(self, row: Mapping[str, Any]) -> bool:
        return self.in_todo(row) or self.in_claimed_state(row)


@dataclasses.dataclass(frozen=True)
class Lock:
    """A row's lock as the oracle sees it: times in seconds relative to the database clock at the snapshot."""

    user: str | None = None
    token: str | None = None
    at: float | None = None  # seconds from now (negative: in the past)
    expires: float | None = None
    queue: str | None = None  # a lock table's row names the queue it was taken in

    @property
    def free(self) -> bool:
        return self.user is None

    @property
    def cleared(self) -> bool:
        return self.user is None and self.token is None and self.at is None and self.expires is None

    @property
    def live(self) -> bool:
        return self.user is not None and self.expires is not None and self.expires > 0

    @property
    def stale(self) -> bool:
        return self.user is not None and not self.live


@dataclasses.dataclass(frozen=True)
class Snapshot:
    """The row before the change, its lock, and what the trail says of it."""

    row: Mapping[str, Any]
    lock: Lock
    claim_queue: str | None  # the queue of the item's newest claim (the queue the lock was taken in)
    last_event: str | None  # the item's newest audit row: event, actor, queue, outcome, age in seconds
    last_actor: str | None = None
    last_queue: str | None = None
    last_outcome: str | None = None
    last_age: float | None = None
    lock_queues: frozenset[str] = frozenset()  # every queue with a lock row of the item (a lock table)


@dataclasses.dataclass(frozen=True)
class Side:
    """What the same transaction writes besides the row: notes (queue, kind), a deferral (queue)."""

    notes: frozenset[tuple[str, str]] = frozenset()
    deferral: str | None = None
    reason: bool = False  # an audit row of the caller's gives a reason
    deferral_reason: str | None = None  # the deferral's reason (a defer's is kept there)
    label_queue: str | None = None  # the queue that audit row names


@dataclasses.dataclass(frozen=True)
class Reading:
    """One way the table admits the change: this transition of this queue (and outcome, for a Complete)."""

    queue: str
    transition: str
    outcome: str | None = None


@dataclasses.dataclass(frozen=True)
class Leniency:
    """Today's known gaps as the oracle may model them (tests/test_admission.py's KNOWN_GAPS); a gap found
    adds its flag here, read where the oracle differs, until its fix removes both. None today."""


STRICT = Leniency()


def _holds(group: Mapping[str, Any], new: Mapping[str, Any], caller: str) -> bool:
    for col, want in group.items():
        got = new.get(col)
        if want == "<user>":
            if got != caller:
                return False
        elif want == NOW:
            if got is None:
                return False
        elif got != want:
            return False
    return True


def _alternatives(t: workflow.Transition, q: QueueModel) -> list[tuple[dict[str, Any], set[str]]]:
    """The row values `t` writes in `q`: alternatives of (required values, columns free to change)."""
    w = t.writes
    free: set[str] = set()
    if Write.EDITS in w:
        free |= q.editable
    if Write.MOVED_VALUES in w:
        free |= q.movable
    base: dict[str, Any] = {}
    if Write.ON_REOPEN in w:
        base.update(q.on_reopen)
    if Write.ON_CLAIM in w:
        base.update(q.on_claim)  # the claim's values win over reopen's (an undo)
    if Write.ON_RELEASE in w:
        base.update(q.on_release)
    if Write.ON_ESCALATE in w:
        base.update(q.on_escalate)
    alternatives = [base]
    if Write.REASON_VALUES in w:
        alternatives += [{**base, **reason} for reason in q.reason_writes]
    if Write.OUTCOME in w:
        alternatives = [{**alt, **values} for alt in alternatives for values in q.outcomes.values()]
    return [(alt, free) for alt in alternatives]


def _outcome_of(alt: Mapping[str, Any], q: QueueModel, t: workflow.Transition) -> str | None:
    if Write.OUTCOME not in t.writes:
        return None
    for name, values in q.outcomes.items():
        if all(alt.get(c) == v for c, v in values.items()):
            return name
    return None


def _lock_written(t: workflow.Transition, q: QueueModel, old: Lock, new: Lock, caller: str, lenient: Leniency) -> bool:
    w = t.writes
    fresh = new.token is not None and new.token != old.token and new.at is not None and new.at <= 0
    if Write.LOCK_TAKEN in w:
        return new.user == caller and fresh
    if Write.LOCK_HANDED in w:
        return new.user is not None and fresh and new.queue == old.queue
    if Write.LOCK_CLEARED in w:
        return new.cleared
    if Write.LOCK_EXTENDED in w:
        same = new.user == old.user and new.token == old.token and new.at == old.at
        # An extend moves the expiry on, never back; under a cap (max_lock_duration) strictly, else the cap
        # is reached and nothing is extended. Without one it may leave it where it was: an extend in the
        # claim's clock instant writes the expiry the lock has (the engine's guard, lockshapes.base.moved_on).
        if not same or new.expires is None:
            return False
        return (old.expires or 0) < new.expires if q.max_lock_seconds is not None else (old.expires or 0) <= new.expires
    return new == old


def _check(c: Check, q: QueueModel, before: Snapshot, new: Lock) -> bool:
    if c is Check.WITHIN_LIMITS:
        if new.expires is None or new.at is None or new.expires > q.lock_seconds:
            return False
        return q.max_lock_seconds is None or new.expires - new.at <= q.max_lock_seconds
    if c is Check.ALLOW_DEFER:
        return q.allow_defer
    if c is Check.UNDO_WINDOW:
        return before.last_age is not None and before.last_age <= q.undo_within_seconds
    if c is Check.ON_REOPEN_SET:
        return bool(q.on_reopen)
    if c is Check.ON_ESCALATE_SET:
        return bool(q.on_escalate)
    if c is Check.REVIEWED_OUTCOME:
        return q.reviewing  # a verdict (review_accept, review_send_back) only in a reviewing queue
    if c is Check.OTHER_USER:
        return new.user is not None and new.user != before.lock.user
    # SERVED (no `serves` in these configs), NOT_DOER and FIRST_ITEMS_REVIEWED (no queue reviews these
    # families' queues), ALLOW_PICK (a pick is the claim's change): nothing to refuse here.
    return True


def _reason_given(t: workflow.Transition, side: Side) -> bool:
    """Does the transaction give `t` its reason: where `t` writes a deferral (a defer), the deferral's
    reason, not blank; else an audit row of the caller's (with its reason)."""
    if Write.DEFERRAL in t.writes:
        return bool((side.deferral_reason or "").strip())
    return side.reason


def readings(
    queues: Iterable[QueueModel],
    before: Snapshot,
    new_row: Mapping[str, Any],
    new_lock: Lock,
    caller: str,
    supervisor: bool,
    side: Side = Side(),
    lenient: Leniency = STRICT,
    rendering: Rendering = Rendering.PG_TRIGGER,
) -> list[Reading]:
    """Every (queue, transition) of the table that admits changing `before` into (new_row, new_lock) by
    `caller`'s own login, with `side` written in the same transaction. Empty: the table refuses it."""
    found: list[Reading] = []
    old, row = before.lock, before.row
    queues = list(queues)
    for q in queues:
        here = before.claim_queue == q.name
        for t in workflow.TRANSITIONS.values():
            if rendering in t.not_in or t.event is None:
                continue  # a note is its own record, not a change of the row
            if t.who is Actor.SUPERVISOR and not supervisor:
                continue
            if t.who is Actor.ESCALATED_TO and not (supervisor or caller in q.takers):
                continue  # a take: a supervisor's, or the queue's escalate_to group's
            if workflow.needs_reason(t.name) and not _reason_given(t, side):
                continue  # a change the table requires a reason for comes with its reason
            lock_ok = {
                LockRule.FREE_OR_STALE: old.free or old.stale,
                LockRule.OWN_LIVE_HERE: old.user == caller and old.live and here,
                LockRule.STALE_HERE: old.stale and here,
                LockRule.HELD_HERE: not old.free and here,
                # Free before; after too, unless the transition takes the lock (an undo, a take).
                LockRule.FREE: old.free and (new_lock.free or Write.LOCK_TAKEN in t.writes),
                LockRule.ANY: True,
            }[t.lock]
            if not lock_ok or not _lock_written(t, q, old, new_lock, caller, lenient):
                continue
            if Write.LOCK_TAKEN in t.writes and new_lock.queue not in (None, q.name):
                continue  # a lock row taken names its queue
            row_ok = {
                RowRule.CLAIMABLE: q.in_todo(row) or (old.stale and q.in_claimed_state(row)),
                RowRule.HELD: q.held_state(row),
                RowRule.OUT_OF_WORK: not q.held_state(row),
                RowRule.WAITING: q.in_todo(row) and q.in_todo(new_row),
                RowRule.FINISHED: not q.in_todo(row),
                RowRule.COMPLETED_BY_CALLER: before.last_event == EventKind.COMPLETE.value
                and before.last_actor == caller
                and before.last_queue == q.name
                and before.last_outcome in q.outcomes
                and _holds(q.outcomes[before.last_outcome], row, caller),
                # Out of todo, holding on_escalate's values (a user's: whoever escalated).
                RowRule.ESCALATED: bool(q.on_escalate)
                and not q.in_todo(row)
                and _holds({c: v for c, v in q.on_escalate.items() if v != "<user>"}, row, caller)
                and all(row.get(c) is not None for c, v in q.on_escalate.items() if v == "<user>"),
                RowRule.EXISTS: True,
            }[t.row]
            if not row_ok or not all(_check(c, q, before, new_lock) for c in t.checks):
                continue
            if t.name == "reopen" and not q.in_todo(new_row):
                continue  # on_reopen puts it back to work
            if Write.DEFERRAL in t.writes and side.deferral != q.name:
                continue  # a defer is the deferral it writes
            if Write.DEFERRAL not in t.writes and side.deferral is not None:
                continue
            for alt, free in _alternatives(t, q):
                if not _holds(alt, new_row, caller):
                    continue
                if any(new_row.get(c) != row.get(c) for c in q.checked - set(alt) - free):
                    continue
                outcome = _outcome_of(alt, q, t)
                action = outcome if t.event is EventKind.COMPLETE else t.name
                if (
                    workflow.needs_text(t.note, lambda a=action, n=q.notes_required: a in n)
                    and (
                        q.name,
                        t.event.value if t.event is not EventKind.COMPLETE else "complete",
                    )
                    not in side.notes
                ):
                    continue
                found.append(Reading(q.name, t.name, outcome))
    return found


def events_of(found: Iterable[Reading], before: Snapshot) -> set[str]:
    """The audit events the readings may write (a claim of a run-out lock notes its expiry first)."""
    out: set[str] = set()
    for r in found:
        out |= {e.value for e in workflow.TRANSITIONS[r.transition].events}
    if before.lock.stale:
        out.add(EventKind.EXPIRE.value)
    return out
