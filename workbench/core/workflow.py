"""The workflow, declared once: every transition an item may go through, who may make it, on which row
and lock, what it writes, what it records and how a refusal is said.

The rules are enforced in several places: the engine's guarded writes and operations
(db/guarded.py, db/workqueue.py), PostgreSQL's check functions under `workbench grants`
(db/rules/pg_*.py) and SQL Server's procedures (db/rules/mssql_*.py,
db/procedures.py). Each of them reads its per-transition parts from this table (the events a
branch records, whose reason or note is required, who may do it) and marks each branch it renders
with `-- transition: NAME` (branch_mark), so tests/test_workflow_table.py can hold every rendering
to the table: a transition missing from one, or one handled there that the table does not know,
fails it. docs/develop/workflow.md says where a new transition goes.

Plain data only (no SQLAlchemy, no Qt): the renderings turn the enums below into their SQL or
Python (a rendering's Rules lists what it renders per kind; a kind it lacks fails when it is
generated), and every member is used by some transition (the test).
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any

from workbench.core import errors, problems
from workbench.core.models import EventKind


class Actor(enum.Enum):
    """Who may make a transition."""

    OPERATOR = "operator"  # any login the queue serves (supervisors are operators too)
    SUPERVISOR = "supervisor"  # workbench_supervisor under grants; refused to an operator
    CLOCK = "clock"  # the database clock: a lock that ran out goes back, whoever notices it
    # Whom escalated items are handed to: the queue's `escalate_to` group and the supervisors (without
    # escalate_to, the supervisors alone); refused to everyone else.
    ESCALATED_TO = "escalated to"


class LockRule(enum.Enum):
    """The precondition on the row's lock."""

    FREE_OR_STALE = "free or stale"  # nobody holds it, or the lock ran out
    OWN_LIVE_HERE = "own live lock taken in this queue"  # the caller's token, live, and this queue's
    STALE_HERE = "stale, taken in this queue"  # a lock that ran out, this queue's
    HELD_HERE = "held (live or stale), taken in this queue"  # anyone's lock, this queue's
    # Nobody holds it before; after, the lock is what the transition writes: none (a move, a reopen: still
    # nobody's), or a fresh lock of the caller's (Write.LOCK_TAKEN: an undo, a take).
    FREE = "free"
    ANY = "any"  # the lock does not matter


class RowRule(enum.Enum):
    """The precondition on the row's state."""

    CLAIMABLE = "waiting in this queue's todo (or stale in on_claim's state)"
    HELD = "inside this queue's todo or held state"  # BoundQueue.held_here
    # In the queue's scope but out of its work (a lock row left behind once the item was escalated or
    # finished by hand or by another program): no transition under the lock is the item's any more.
    OUT_OF_WORK = "outside this queue's todo and held state"
    WAITING = "waiting in this queue's todo"
    FINISHED = "finished: outside this queue's todo"
    COMPLETED_BY_CALLER = "finished, holding the values of the caller's Complete (its TrailRule: the last event)"
    ESCALATED = "escalated: outside this queue's todo, holding on_escalate's values"
    EXISTS = "exists"


class TrailRule(enum.Enum):
    """The precondition on the item's history (the audit trail), beside its row (db/rowrules.py renders it as a
    subquery over the trail)."""

    ANY = "whatever happened before"
    # With Check.UNDO_WINDOW: and no longer ago than the queue's undo_within.
    LAST_OWN_COMPLETE = "the item's last event is the caller's Complete"


class After(enum.Enum):
    """What state the row must be in after the change, beside what the transition writes (db/rowrules.py
    renders it over the row after)."""

    ANY = "what its writes leave"
    WAITING = "waiting in this queue's todo"  # a reopen puts the item back to work here
    WAITING_OR_OUT = "waiting in this queue's todo, or out of its scope"  # a move: here, or another queue's


class Check(enum.Enum):
    """A further condition a transition is refused without."""

    SERVED = "the queue serves the caller (its `serves` group)"
    NOT_DOER = "a reviewing queue never serves (nor hands) the doer their own work (four eyes)"
    ALLOW_PICK = "the queue lets items be picked by key (allow_pick)"
    ALLOW_DEFER = "the queue lets items be deferred (allow_defer)"
    WITHIN_LIMITS = "the new lock is within lock_duration and max_lock_duration"
    FIRST_ITEMS_REVIEWED = "a doer's first items go to review (review.first_items)"
    REVIEWED_OUTCOME = "the outcome is the reviewing queue's accept or send-back"
    UNDO_WINDOW = "within the queue's undo_within"
    ON_REOPEN_SET = "the queue says how an item goes back to work (on_reopen)"
    OTHER_USER = "the new holder is someone else"
    ON_ESCALATE_SET = "the queue says how an item is handed to a supervisor (on_escalate)"


class Write(enum.Enum):
    """What a transition writes (to the row, the lock, or workbench's own tables besides the audit row)."""

    LOCK_TAKEN = "a fresh lock of the caller's"
    LOCK_CLEARED = "the lock columns cleared"
    LOCK_EXTENDED = "the expiry moved on"
    LOCK_HANDED = "a fresh lock of another user's"
    ON_CLAIM = "the queue's on_claim values"
    ON_RELEASE = "the queue's on_release values"
    REASON_VALUES = "a configured release reason's own values"
    EDITS = "the operator's edits (editable columns only)"
    OUTCOME = "the outcome's values"
    REVIEW_HANDOVER = "a Complete chosen for review: the review's values and its record"
    REVIEW_VERDICT = "the reviewer's verdict on the review record"
    REVIEW_WITHDRAWN = "an undone Complete's review withdrawn"
    ON_REOPEN = "the queue's on_reopen values"
    ON_ESCALATE = "the queue's on_escalate values (out of todo: for a supervisor)"
    MOVED_VALUES = "a supervisor's values (category, tier, queue)"
    DEFERRAL = "the item's deferral (until, reason)"
    DEFERRAL_FORGOTTEN = "the item's deferral forgotten"
    COOLDOWN = "the release cool-down for the caller"
    NOTE = "a note with it"


class Text(enum.Enum):
    """Whether a transition takes a text (a note, a reason) and whether it must be given."""

    NONE = "none"
    OPTIONAL = "optional"
    CONFIGURED = "required where the queue says so (notes_required)"
    REQUIRED = "required"


class Rendering(enum.Enum):
    """The places a transition is enforced; each marks the transitions it handles (branch_mark)."""

    PYTHON = "db/workqueue.py and db/guarded.py"
    PG_TRIGGER = "db/rules/pg_row_check.py: the queue's check function"
    PG_LOCK_TABLE = "db/rules/pg_locks.py: a lock-table queue's checks"
    MSSQL = "db/rules/mssql_parts.py: the queue's procedures"


# What to add to a rendering for a transition it lacks (NotRendered says it).
_TO_ADD: Mapping[Rendering, str] = MappingProxyType(
    {
        Rendering.PYTHON: "its `operation`, a method of the engine (db/workqueue.py for an operator's, "
        "db/supervision.py for a supervisor's; a write under the caller's own lock through guarded.Shape.of)",
        Rendering.PG_TRIGGER: "a branch of pg_row_check.queue_check marked workflow.branch_mark(NAME)",
        Rendering.PG_LOCK_TABLE: "a branch of pg_lock_check.lock_check or pg_locks.item_check marked "
        "workflow.branch_mark(NAME)",
        Rendering.MSSQL: "a procedure carrying it (mssql_parts.CARRIES and its method in mssql_operator.py "
        "or mssql_script.py)",
    }
)


class NotRendered(LookupError):
    """A rendering and the table disagree: a transition of the table it does not render (or one it
    renders that the table does not know). The message names the file to change."""

    def __init__(self, rendering: Rendering, missing: Iterable[str] = (), unknown: Iterable[str] = ()) -> None:
        self.rendering, self.missing, self.unknown = rendering, sorted(missing), sorted(unknown)
        file, _, what = rendering.value.partition(": ")
        where = f"workbench/{file}" + (f" ({what})" if what else "")
        said = []
        if self.missing:
            said.append(
                f"core/workflow.py declares {', '.join(map(repr, self.missing))} but {where} does not render "
                f"{'it' if len(self.missing) == 1 else 'them'}: "
                f"add {_TO_ADD[rendering]}, or say why it cannot be there in its row's `not_in` "
                "(docs/develop/workflow.md, 'Where a new transition goes')"
            )
        if self.unknown:
            said.append(
                f"{where} renders {', '.join(map(repr, self.unknown))}, which core/workflow.py does not declare"
            )
        super().__init__("; ".join(said))


@dataclasses.dataclass(frozen=True)
class Transition:
    """One transition: who may make it, on which row and lock, what it writes and records, how a
    refusal is said. Its renderings read these fields; none of them restates them."""

    name: str
    who: Actor
    lock: LockRule
    row: RowRule
    event: EventKind | None  # the audit row it writes (None: a note, which is its own record)
    refusal: type[errors.WorkbenchError]  # the error class a refused attempt raises in the engine
    writes: frozenset[Write] = frozenset()
    checks: frozenset[Check] = frozenset()
    also: tuple[EventKind, ...] = ()  # further audit rows (a reassign's claim for the new holder, …)
    note: Text = Text.NONE
    reason: Text = Text.NONE
    # The database sees the same change as for this transition (a pick is a claim by key): its
    # renderings check them in one branch; the difference is in `checks`.
    same_change_as: str | None = None
    # The renderings it is absent from, and why (a lock-table queue has no undo).
    not_in: Mapping[Rendering, str] = dataclasses.field(default_factory=lambda: MappingProxyType({}))
    operation: str = ""  # the engine's method that makes it (in db/): the name itself unless _t says otherwise
    after: After = After.ANY  # the row's state after the change (beside `writes`)
    trail: TrailRule = TrailRule.ANY  # what the item's history must say (an undo: its last event)

    def __hash__(self) -> int:
        return hash(self.name)

    @property
    def events(self) -> tuple[EventKind, ...]:
        """Every audit row the transition writes, its own first."""
        return ((self.event,) if self.event is not None else ()) + self.also


def _t(
    name: str,
    who: Actor,
    lock: LockRule,
    row: RowRule,
    event: EventKind | None,
    refusal: type[errors.WorkbenchError],
    *,
    writes: Iterable[Write] = (),
    checks: Iterable[Check] = (),
    also: tuple[EventKind, ...] = (),
    note: Text = Text.NONE,
    reason: Text = Text.NONE,
    same_change_as: str | None = None,
    not_in: Mapping[Rendering, str] | None = None,
    operation: str | None = None,
    after: After = After.ANY,
    trail: TrailRule = TrailRule.ANY,
) -> Transition:
    return Transition(
        name,
        who,
        lock,
        row,
        event,
        refusal,
        frozenset(writes),
        frozenset(checks),
        also,
        note,
        reason,
        same_change_as,
        MappingProxyType(dict(not_in or {})),
        operation or name,
        after,
        trail,
    )


_W, _C = Write, Check


def _own(name: str, event: EventKind, *writes: Write, **kw: Any) -> Transition:
    """An operator's write under their own live lock taken in this queue; refused as a lost lock."""
    return _t(name, Actor.OPERATOR, LockRule.OWN_LIVE_HERE, RowRule.HELD, event, errors.LockLost, writes=writes, **kw)


def _claim(name: str, *checks: Check, **kw: Any) -> Transition:
    """A lock taken on a waiting row nobody holds (or whose lock ran out)."""
    served = (_C.SERVED, _C.NOT_DOER, _C.WITHIN_LIMITS, *checks)
    return _t(
        name,
        Actor.OPERATOR,
        LockRule.FREE_OR_STALE,
        RowRule.CLAIMABLE,
        EventKind.CLAIM,
        errors.NothingToClaim,
        writes=(_W.LOCK_TAKEN, _W.ON_CLAIM),
        checks=served,
        **kw,
    )


def _supervisor(name: str, lock: LockRule, row: RowRule, event: EventKind, *writes: Write, **kw: Any) -> Transition:
    """A supervisor's action, with a reason kept in the item's history; refused to operators."""
    return _t(name, Actor.SUPERVISOR, lock, row, event, errors.NotPermitted, writes=writes, reason=Text.REQUIRED, **kw)


# A Complete's writes, and a reviewing queue's Complete: a verdict under a lock the doer could not
# take (the claim's NOT_DOER), recorded with it.
_FINISH = (_W.LOCK_CLEARED, _W.EDITS, _W.OUTCOME, _W.NOTE)
_VERDICT = {"checks": (_C.NOT_DOER, _C.REVIEWED_OUTCOME), "note": Text.CONFIGURED, "same_change_as": "complete"}
_GIVE_BACK = (_W.LOCK_CLEARED, _W.ON_RELEASE, _W.NOTE)

# The table (TRANSITIONS is its read-only view).
_TABLE: dict[str, Transition] = {
    t.name: t
    for t in (
        _claim("claim", operation="claim_next"),
        _claim("pick", _C.ALLOW_PICK, same_change_as="claim", operation="claim"),
        _own("save", EventKind.SAVE, _W.EDITS),
        # errors.ExtendLimitReached where only the limit is in the way.
        _own("extend", EventKind.EXTEND, _W.LOCK_EXTENDED, checks=(_C.WITHIN_LIMITS,)),
        _own(
            "release",
            EventKind.RELEASE,
            *_GIVE_BACK,
            _W.REASON_VALUES,
            _W.COOLDOWN,
            _W.DEFERRAL_FORGOTTEN,
            note=Text.CONFIGURED,
            reason=Text.OPTIONAL,
        ),
        _own(
            "defer",
            EventKind.DEFER,
            *_GIVE_BACK,
            _W.DEFERRAL,
            checks=(_C.ALLOW_DEFER,),
            note=Text.CONFIGURED,
            reason=Text.REQUIRED,
        ),
        # An operator hands the item he holds to a supervisor (the queue's on_escalate values take it
        # out of todo), saying why.
        _own(
            "escalate",
            EventKind.ESCALATE,
            _W.LOCK_CLEARED,
            _W.ON_ESCALATE,
            checks=(_C.ON_ESCALATE_SET,),
            reason=Text.REQUIRED,
        ),
        _own(
            "complete",
            EventKind.COMPLETE,
            *_FINISH,
            _W.REVIEW_HANDOVER,
            checks=(_C.FIRST_ITEMS_REVIEWED,),
            note=Text.CONFIGURED,
        ),
        _own("review_accept", EventKind.COMPLETE, *_FINISH, _W.REVIEW_VERDICT, operation="complete", **_VERDICT),
        # A sent-back item is deferred to its doer.
        _own(
            "review_send_back",
            EventKind.COMPLETE,
            *_FINISH,
            _W.REVIEW_VERDICT,
            _W.DEFERRAL,
            operation="complete",
            **_VERDICT,
        ),
        _t(
            "undo",
            Actor.OPERATOR,
            LockRule.FREE,
            RowRule.COMPLETED_BY_CALLER,
            EventKind.UNDO,
            errors.UsageError,
            writes=(_W.ON_REOPEN, _W.LOCK_TAKEN, _W.ON_CLAIM, _W.REVIEW_WITHDRAWN),
            checks=(_C.UNDO_WINDOW, _C.ON_REOPEN_SET, _C.WITHIN_LIMITS),
            also=(EventKind.CLAIM,),
            not_in={Rendering.PG_LOCK_TABLE: "a lock-table queue has no undo (a supervisor reopens)"},
            operation="undo_complete",
            trail=TrailRule.LAST_OWN_COMPLETE,
        ),
        # Whoever notices a run-out lock gives it back (a sweep, or a claim taking the row); the
        # holder learns they lost it.
        _t(
            "expire",
            Actor.CLOCK,
            LockRule.STALE_HERE,
            RowRule.HELD,
            EventKind.EXPIRE,
            errors.LockLost,
            writes=(_W.LOCK_CLEARED, _W.ON_RELEASE),
            operation="sweep",
        ),
        # A run-out lock whose item left the queue's work (changed by hand, by another program, or by a claim
        # by hand beside a twin's run-out lock row) goes back too, the item left as it is: on_release is not
        # that item's (it is escalated or finished), and nothing else may remove the lock (every transition
        # under it asks HELD; take, reopen and move ask FREE). Whoever notices it: the sweep, or a
        # supervisor's force-release of it (Supervision._give_back); recorded as an expiry.
        _t(
            "expire_out_of_work",
            Actor.CLOCK,
            LockRule.STALE_HERE,
            RowRule.OUT_OF_WORK,
            EventKind.EXPIRE,
            errors.LockLost,
            writes=(_W.LOCK_CLEARED,),
            not_in={
                Rendering.PG_TRIGGER: "where the lock lives in the row, a lock is this queue's only while the "
                "row is in its work (BoundQueue.held_here, lockrules.owned): no lock is this queue's (STALE_HERE) "
                "on a row out of its work",
                Rendering.MSSQL: "SQL Server's procedures cover no lock-table queue (mssql_script._require_covered): "
                "the engine's own statements give the lock row back there; and in the row, as for PostgreSQL's "
                "trigger, no lock is this queue's on a row out of its work",
            },
            operation="sweep",
        ),
        _supervisor(
            "force_release",
            LockRule.HELD_HERE,
            RowRule.HELD,
            EventKind.FORCE_RELEASE,
            _W.LOCK_CLEARED,
            _W.ON_RELEASE,
        ),
        _supervisor(
            "reassign",
            LockRule.HELD_HERE,
            RowRule.HELD,
            EventKind.REASSIGN,
            _W.LOCK_HANDED,
            # In a reviewing queue the new holder is not the doer either (four eyes), as for a claim.
            checks=(_C.OTHER_USER, _C.NOT_DOER, _C.WITHIN_LIMITS),
            also=(EventKind.CLAIM,),
        ),
        _supervisor(
            "reopen",
            LockRule.FREE,
            RowRule.FINISHED,
            EventKind.REOPEN,
            _W.ON_REOPEN,
            checks=(_C.ON_REOPEN_SET,),
            after=After.WAITING,
        ),
        # A move keeps items waiting, here or (out of this queue's scope) for another queue: finishing an
        # item is work, with a claim and an outcome.
        _supervisor(
            "move", LockRule.FREE, RowRule.WAITING, EventKind.MOVE, _W.MOVED_VALUES, after=After.WAITING_OR_OUT
        ),
        # A supervisor (or a member of the queue's escalate_to group) takes an escalated item to work it:
        # back in the work (on_reopen's values) under a fresh lock of his, as after a claim (on_claim's);
        # recorded as his claim, so no reason asked. The row's UPDATE takes the lock, as undo's does; a lock
        # table's lock is a row of its own, inserted first in the same transaction, as a claim inserts it.
        _t(
            "take",
            Actor.ESCALATED_TO,
            LockRule.FREE,
            RowRule.ESCALATED,
            EventKind.CLAIM,
            errors.NotPermitted,  # to anyone else; an item not (or no longer) escalated: errors.UsageError
            writes=(_W.ON_REOPEN, _W.LOCK_TAKEN, _W.ON_CLAIM),
            checks=(_C.ON_ESCALATE_SET, _C.ON_REOPEN_SET, _C.WITHIN_LIMITS),
        ),
        # Anyone may add a note to an item; it is its own record (no audit row).
        _t(
            "note",
            Actor.OPERATOR,
            LockRule.ANY,
            RowRule.EXISTS,
            None,
            errors.InvalidValue,
            writes=(_W.NOTE,),
            note=Text.REQUIRED,
            not_in={
                Rendering.PG_TRIGGER: "a note is a row of workbench's notes table, under its policies "
                "(db/pg_policies.py), not a change of the queue's row",
                Rendering.PG_LOCK_TABLE: "as for the PostgreSQL trigger",
            },
            operation="add_note",
        ),
    )
}
TRANSITIONS: Mapping[str, Transition] = MappingProxyType(_TABLE)

# The mark a rendering puts on each branch it renders (a SQL comment; Python dispatch is checked apart).
MARK = "-- transition: "


def branch_mark(*names: str) -> str:
    """The comment a generated branch carries: the transitions it handles (checked by name here)."""
    for name in names:
        if name not in TRANSITIONS:
            raise KeyError(f"no transition {name!r} in core/workflow.py's table")
    return MARK + " ".join(names)


def rendered_in(rendering: Rendering) -> frozenset[str]:
    """The transitions `rendering` must render: all but those whose row says why not (`not_in`)."""
    return frozenset(name for name, t in TRANSITIONS.items() if rendering not in t.not_in)


def require_rendered(rendering: Rendering, handled: Iterable[str]) -> None:
    """Refuse (NotRendered, naming the file to change) a rendering that lacks a transition of the
    table, or renders one the table does not know; `handled`: the transitions it renders."""
    handled = set(handled)
    missing, unknown = rendered_in(rendering) - handled, handled - set(TRANSITIONS)
    if missing or unknown:
        raise NotRendered(rendering, missing, unknown)


def of_event(kind: EventKind, lock: LockRule = LockRule.OWN_LIVE_HERE) -> Transition:
    """The transition whose own audit row is `kind` and whose lock precondition is `lock` (the first
    declared: a reviewing queue's Complete records as a Complete does)."""
    for t in TRANSITIONS.values():
        if t.event is kind and t.lock is lock:
            return t
    raise KeyError(f"no transition records {kind.value} under {lock.value}")


def events_where(test: Callable[[Transition], bool]) -> frozenset[EventKind]:
    """The audit events of the transitions `test` picks: e.g. the writes under the caller's own
    lock that take a reason from them (release, defer)."""
    return frozenset(t.event for t in TRANSITIONS.values() if t.event is not None and test(t))


def under_own_lock(t: Transition) -> bool:
    """Is `t` one of the engine's guarded writes (a reviewing queue's verdict is written as its Complete)?"""
    return t.lock is LockRule.OWN_LIVE_HERE and t.same_change_as is None


def writes(kind: EventKind, what: Write) -> bool:
    """Does the write under the caller's own lock that records `kind` write `what`?"""
    return what in _OWN_LOCK_WRITES[kind]


# The writes whose values the caller gives, naming the columns (an operator's edits, a supervisor's move's
# values), not the queue's configuration: every rendering checks the names given against the columns
# that kind may write (db/mapping.py BoundQueue.given), and writes no other.
GIVEN: frozenset[Write] = frozenset({Write.EDITS, Write.MOVED_VALUES})


def given(name: str) -> Write | None:
    """The kind of values the caller gives with transition `name` (one of GIVEN), or None where it takes
    none; refused where it would take two (a rendering takes them as one argument)."""
    kinds = TRANSITIONS[name].writes & GIVEN
    if len(kinds) > 1:
        raise ValueError(f"{name} writes {len(kinds)} kinds of given values: one argument cannot carry them")
    return next(iter(kinds), None)


def needs_text(rule: Text, configured: Callable[[], bool]) -> bool:
    """Must the text be given? `configured`: the queue's own say, asked for a CONFIGURED rule only."""
    return rule is Text.REQUIRED or (rule is Text.CONFIGURED and configured())


def needs_reason(name: str) -> bool:
    """Must transition `name` be given a reason (Text.REQUIRED: a defer, a supervisor's action)?"""
    return needs_text(TRANSITIONS[name].reason, lambda: False)  # no queue setting makes a reason required


def command(name: str) -> str:
    """How a user asks for transition `name` (the CLI's command): force-release for force_release."""
    return name.replace("_", "-")


def reason_given(name: str, reason: object) -> str:
    """The reason for `name` without surrounding blanks ("" when none is given and none is needed);
    refused with REASON_NEEDED where the table requires one and it is missing or blank."""
    kept = reason.strip() if isinstance(reason, str) else ""
    if not kept and needs_reason(name):
        raise errors.UsageError.of(problems.REASON_NEEDED, command(name))
    return kept


# Events whose own-lock write takes the operator's reason (the audit row keeps it).
REASONED: frozenset[EventKind] = events_where(lambda t: under_own_lock(t) and t.reason is not Text.NONE)

# What each write under the caller's own lock writes, by its audit event (read on every write).
_OWN_LOCK_WRITES: Mapping[EventKind, frozenset[Write]] = {
    kind: of_event(kind).writes for kind in events_where(under_own_lock)
}
