"""A write under the caller's lock as its operation states it (Shape, Write), and the protocol of the ways it runs;
the queue's other operations (undo, a note, a supervisor's) likewise (Act, ActWay, and their one executor, Acts)."""

from __future__ import annotations

import dataclasses
import enum
import typing
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, TypeVar

from workbench.core import models, workflow

_W = workflow.Write
T = TypeVar("T")


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

    @property
    def finishes(self) -> bool:
        """Is this a Complete with nothing but its outcome (no edits, note or review: it clears the lock
        without a reason), which some ways run in one call, or with a claim of the next item?"""
        return self.unlock and self.kind not in workflow.REASONED and not (self.edits or self.note or self.to_review)


@dataclasses.dataclass(frozen=True, slots=True)
class Write:
    """One write under the lock: its shape and the values it is run with, stated once by the operation."""

    shape: Shape
    key: Any
    token: str
    user: str
    edits: Mapping[str, Any] | None = None
    reason: str | None = None
    detail: Mapping[str, Any] | None = None
    extend_until: Any = None
    note: str | None = None
    until: Any = None  # a defer: the item is kept back until then (aware)
    why: str | None = None  # a Complete chosen for review: why it was


class Pass(enum.Enum):
    """A way's answer where it does not run this write (not there, or gone since): the next way does."""

    ON = "the next way"


PASS = Pass.ON


class Gone(Exception):
    """A way that went away while this process ran (`grants --revoke`): what was made with it is made again."""


Row = Mapping[Any, Any]
# Where a way knows the audit detail it wrote (it computed a Save's changes itself), it hands it back in the
# returned row under this name: the caller can then say what the trail holds without reading it.
RECORDED = "wb_recorded"
# A claim method's Complete followed by the claim of the next item, run with the Complete's and the
# filter's values: (the database time of the Complete, the claim or None), or None if the fence failed.
ThenClaim = Callable[[Mapping[str, Any]], tuple[Any, Any] | None]


@dataclasses.dataclass(frozen=True, slots=True)
class ThenNext:
    """A Complete's request that the next item be claimed in the same call, where its way allows."""

    cached: Hashable  # what the call is made once for (the outcome and the filter's columns)
    make: Callable[[Any], ThenClaim | None]  # the claim method's call around the way's part (Way.finish)
    filters: Mapping[str, Any]  # the filter's values
    allowed: Callable[[], bool]  # may the caller claim here (asked only where the call is there)


class Way(typing.Protocol):
    """One way a queue's writes run (enforcement.py says which there are and chooses them).
    The queue's Enforcement hands its writer the ways in order once, when the queue is bound; each write
    runs by the first that takes its shape and does not pass."""

    def takes(self, shape: Shape) -> bool:
        """Can this way run writes of `shape`? Asked once per shape."""
        ...

    def run(self, write: Write) -> Row | Pass | None:
        """The row's new lock columns (wb_*; a Complete's: wb_now) if the write happened, None if the
        fence failed, PASS where this way does not run it now."""
        ...

    def finish(self, shape: Shape) -> Any:
        """For a Complete without edits: what a claim method runs ahead of the claim of the next item
        in one call (a statement, or statements of a batch), None where this way has none, PASS: ask the next."""
        ...


@dataclasses.dataclass(frozen=True, slots=True)
class Act:
    """An operation that is not a write under the caller's own lock (undo, a note, reopen, take, move,
    force-release, reassign), stated once: its transition, who does it, the items, and its values by name
    (reason, to, changes, text)."""

    transition: str
    user: str
    keys: tuple[Any, ...]
    values: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    action: Any = None  # errors.Phrase: what a refusal says was refused (a supervisor's)
    refused: Callable[[], Exception] | None = None  # raised where a way answers no row: the item changed meanwhile


class ActWay(typing.Protocol):
    """A way a queue's acts run other than workbench's own statements (enforcement.py chooses them)."""

    def act(self, conn: Any, act: Act) -> list[Row] | Pass:
        """The rows the act answers, run in the caller's transaction (`conn`): [] where an item had
        changed meanwhile; PASS where this way does not run it now (then workbench's own statements do)."""
        ...


class Acts:
    """The one executor of a queue's acts: by the first of the ways its Enforcement chose that does not pass,
    else by the operation's own statements."""

    def __init__(self, ways: Sequence[ActWay] = ()) -> None:
        self.ways = tuple(ways)

    def run(self, conn: Any, act: Act, own: Callable[[], T], answer: Callable[[list[Row]], T]) -> T:
        """`act` in the caller's transaction: `answer(the rows)` where a way ran it (`act.refused()` raised
        where it answered none), else `own()`, the operation's own statements."""
        for way in self.ways:
            rows = way.act(conn, act)
            if rows is PASS:
                continue
            if not rows and act.refused is not None:
                raise act.refused()
            return answer(rows)
        return own()
