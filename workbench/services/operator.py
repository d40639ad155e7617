"""What one person does at a queue: claim, save, complete, release, extend, check, and what they see."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Protocol

import workbench.services.sources as sources  # not `from workbench.services`: no cycle with the package
from workbench import fieldspec
from workbench.core import errors, models
from workbench.db import counts, published, service
from workbench.services import door, yours
from workbench.services.base import QueueLayout, Service


@dataclasses.dataclass(frozen=True)
class ItemLine:
    """An item as lists show it: its list columns as one line, and its due time (None: none)."""

    text: str
    due: Any = None


@dataclasses.dataclass(frozen=True)
class PickList:
    """The first waiting items of a queue, for picking one by hand, and how many wait in all."""

    key_name: str
    rows: list[dict[str, Any]]  # key and list columns, in queue order
    labels: dict[str, str]  # a column's label, as the form shows it
    waiting: int  # how many wait in all, counted up to WAITING_CAP + 1
    due_name: str | None = None  # the queue's due column, among the rows' columns
    db_now: dt.datetime | None = None  # the database clock when the list was read (to tell overdue items)

    @property
    def more_than(self) -> bool:
        """Were there more waiting items than were counted?"""
        return self.waiting > WAITING_CAP


@dataclasses.dataclass(frozen=True)
class QueueCount:
    """One queue on the start page: how many items wait and how many this user holds."""

    queue: str
    title: str
    waiting: int  # counted up to WAITING_CAP + 1
    mine: int
    overdue: int | None = None  # open items past due, up to WAITING_CAP + 1 (None: the queue names no `due`)
    deferred: int = 0  # deferred to a time still to come: not waiting, nobody is served them yet

    @property
    def more_than(self) -> bool:
        return self.waiting > WAITING_CAP

    @property
    def overdue_more_than(self) -> bool:
        return self.overdue is not None and self.overdue > WAITING_CAP


@dataclasses.dataclass(frozen=True)
class ItemLog:
    """What people wrote and did on one item: its notes and its audit trail, each oldest first."""

    queue: str
    key: Any
    notes: list[models.Note]
    events: list[models.Event]

    @classmethod
    def read(cls, work: Any, queue: str, key: Any) -> ItemLog:
        """The log of `key` in `work` (a db.workqueue.WorkQueue)."""
        notes, events = work.item_log(key)
        return cls(queue=queue, key=key, notes=notes, events=events)

    def with_event(self, event: models.Event) -> ItemLog:
        """The log with `event` (newer than all it holds) at its end, as a read after it would give it."""
        return dataclasses.replace(self, events=[*self.events, event])

    def as_imported(self) -> dict[str, Any]:
        """Each column a Save or Complete changed, with the value it had before the first change (as
        the audit trail keeps it: text for times and numbers). Columns kept without values are left out."""
        first: dict[str, Any] = {}
        for event in self.events:
            for column, change in ((event.detail or {}).get("changes") or {}).items():
                if isinstance(change, list) and len(change) == 2 and change != [None, None]:
                    first.setdefault(column, change[0])
        return first

    def in_order(self) -> list[models.Note | models.Event]:
        """Notes and events as they happened; a note after the action it was written with."""
        merged = [(e.at, 0, e) for e in self.events] + [(n.at, 1, n) for n in self.notes]
        return [entry for _, _, entry in sorted(merged, key=lambda m: (m[0], m[1]))]

    def sent_back(self, reviewing_queue: str, outcome: str) -> tuple[str, str] | None:
        """(reviewer, their note) when the item's last Complete was a review sending it back (in
        `reviewing_queue` with `outcome`), None once anyone completed it after that."""
        completes = [e for e in self.events if e.kind == models.EventKind.COMPLETE]
        if not completes or (completes[-1].queue, completes[-1].outcome) != (reviewing_queue, outcome):
            return None
        review = completes[-1]
        # The note the send-back required: the reviewer's latest written with a Complete.
        written = [n for n in self.notes if n.author == review.actor and n.kind == "complete"]
        return review.actor, written[-1].text if written else ""


@dataclasses.dataclass(frozen=True)
class Opening:
    """What a window shows first (Operator.opening): per queue its layout, this user's locks (oldest first)
    and their list lines by key; the start page's counts."""

    layouts: dict[str, QueueLayout]
    mine: dict[str, list[models.Lock]]
    lines: dict[str, dict[Any, ItemLine]]
    counts: list[QueueCount]


WAITING_CAP = 10_000  # "first 200 of more than 10,000" is all a person needs; counting further costs


class Held(Protocol):
    """A lock as its holder names it: a models.Lock, or a queue, key and token from the command line."""

    @property
    def queue(self) -> str: ...
    @property
    def key(self) -> Any: ...
    @property
    def token(self) -> str: ...


@dataclasses.dataclass(frozen=True)
class HeldLock:
    """The lock a command names (`workbench save QUEUE KEY TOKEN`): what a write under it checks."""

    queue: str
    key: Any
    token: str


def _counter(work: Any, user: str | None) -> Callable[[], counts.Figures]:
    """A queue's count for the start page (db/counts.py keeps it for every window): waiting, overdue, deferred."""

    def count() -> counts.Figures:
        return (work.count_waiting(WAITING_CAP, user), work.count_overdue(WAITING_CAP), work.count_deferred())

    return count


def shared_figures(wb: door.Workbench | service.Workbench) -> dict[str, tuple[counts.Figures, float]]:
    """The start page's figures of every queue whose conditions do not name the user, and their age in
    seconds: read, and counted for everyone where stale, as a window's start page does (_queue_figures);
    the change relay's one read for all its windows."""
    engine = door.engine(wb)
    queues = {name: engine.queue(name) for name in engine.config.queues}
    counters = {name: _counter(queue, None) for name, queue in queues.items() if not queue.q.names_user}
    return engine.counts.figures(counters, engine.config.app.counts_every)


class Operator(Service):
    """One user's operations on the queues of one database.

    Every method is one or a few short transactions and may block on the database: a window
    calls them off its GUI thread (gui/dispatch.py). Errors are workbench.core.errors: LockLost
    when a lock is no longer the caller's, NothingToClaim, InvalidValue, DatabaseUnavailable …
    """

    def __init__(self, wb: door.Workbench | service.Workbench, user: str) -> None:
        super().__init__(wb, user)
        # The start page's counts per queue, (monotonic time, waiting, overdue, deferred): read again
        # only after `[app] counts_every`, as the start page shows after every Complete.
        self._counted: dict[str, tuple[float, int, int | None, int]] = {}
        self._counted_lock = threading.Lock()  # a window may ask from two of its threads at once
        self._shared: set[str] = set()  # the queues counted for every window (not naming the user): take_figures
        # "Yours" on the start page, not read again after every Complete while the change feed is read (a look
        # at least every backstop_every: trusted twice that long).
        self._yours = yours.Yours(2.0 * wb.config.app.backstop_every)

    # -- claiming -----------------------------------------------------------------------------

    def next_item(self, queue: str, where: Mapping[str, Any] | None = None) -> models.Claim:
        """Lock the next waiting item of `queue` for this user (narrowed by `where`, {column: value});
        NothingToClaim when none is free."""
        return self.next_items(queue, 1, where)[0]

    def next_items(self, queue: str, count: int, where: Mapping[str, Any] | None = None) -> list[models.Claim]:
        """Lock up to `count` waiting items at once (a batch); NothingToClaim when none is free."""
        claims = self._wb.queue(queue).claim_next(self.user, count, where)
        self._counted_change(queue, waiting=-len(claims))
        for claim in claims:
            self._took(queue, claim)
        return claims

    def _took(self, queue: str, claim: models.Claim) -> None:
        if claim.resumed:  # a lock of this user's already counted; the trail has no new claim of it
            return
        self._yours.acted(queue, models.EventKind.CLAIM, claim.lock.token, +1)

    def filter_choices(self, queue: str, limit: int = 50) -> dict[str, list[Any]]:
        """For each column the queue may be narrowed by (`filter_by`): the values its waiting items
        hold, most common first (at most `limit` each)."""
        return self._wb.queue(queue).filter_choices(limit, self.user)

    def claim(self, queue: str, key: Any) -> models.Claim:
        """Lock one chosen item (or resume this user's own lock on it)."""
        claim = self._wb.queue(queue).claim(self.user, key)
        if not claim.resumed:
            self._counted_change(queue, waiting=-1)
        self._took(queue, claim)
        return claim

    # -- lookups: fields whose value is a row of another table ----------------------------------

    def lookup_search(self, queue: str, column: str, text: str, limit: int = 50) -> list[models.Choice]:
        """Rows of `column`'s related table for a picker: display starting with `text`, then containing it."""
        return self._wb.queue(queue).lookup_search(column, text, limit)

    def lookup_search_start(
        self, queue: str, column: str, text: str, limit: int = 50
    ) -> tuple[list[models.Choice], bool]:
        """A picker's first answer for `text` (rows starting with it; all of a small table's matches), and
        whether lookup_search_inside may add rows containing it (a large table's, asked for apart)."""
        return self._wb.queue(queue).lookup_search_start(column, text, limit)

    def lookup_search_inside(self, queue: str, column: str, text: str, limit: int = 50) -> list[models.Choice]:
        """Rows of `column`'s related table containing `text` but not starting with it."""
        return self._wb.queue(queue).lookup_search_inside(column, text, limit)

    def lookup_resolve(self, queue: str, column: str, keys: list[Any]) -> dict[Any, models.Choice]:
        """The related rows of these keys, by key: what the form shows for a stored key."""
        return self._wb.queue(queue).lookup_resolve(column, keys)

    def resolve_lookups(self, queue: str, edits: Mapping[str, Any]) -> dict[str, Any]:
        """`edits` with every lookup value given by its display text replaced by its key (the
        command line's `--set customer="Acme"`); InvalidValue when none or several rows match."""
        wq = self._wb.queue(queue)
        result = dict(edits)
        for name, raw in edits.items():
            if wq.has_lookup(name):
                result[name] = wq.lookup_value(name, raw)
        return result

    # -- working under the lock ---------------------------------------------------------------

    def save(self, lock: Held, edits: Mapping[str, Any]) -> models.Lock:
        """Store edits and keep the item; the lock as it is now."""
        return self._wb.queue(lock.queue).save(self.user, lock.key, lock.token, edits)

    def save_recorded(self, lock: Held, edits: Mapping[str, Any]) -> models.Saved:
        """save, with the audit row it wrote where the database does not write it by itself: a window adds
        it to the item's log it shows (ItemLog.with_event) instead of reading the log again."""
        return self._wb.queue(lock.queue).save_recorded(self.user, lock.key, lock.token, edits)

    def complete(
        self,
        lock: Held,
        outcome: str | None = None,
        edits: Mapping[str, Any] | None = None,
        note: str | None = None,
        *,
        then_next: bool = False,
        where: Mapping[str, Any] | None = None,
    ) -> models.Completion:
        """Finish the item with an outcome (the queue's first when None), final edits and a note;
        with `then_next`, also claim the next item (narrowed by `where`) as the Completion's `next`
        (None when none was claimed: next_item says why), on PostgreSQL in the same statement."""
        with self._ending(lock, models.EventKind.COMPLETE):
            done = self._wb.queue(lock.queue).complete(
                self.user, lock.key, lock.token, outcome, edits, note=note, then_next=then_next, where=where
            )
        if done.next is not None:
            self._counted_change(lock.queue, waiting=-1)
            self._took(lock.queue, done.next)
        return done

    @contextlib.contextmanager
    def _ending(self, lock: Held, kind: models.EventKind) -> Iterator[None]:
        """An act that ends `lock`: one lock fewer for "Yours" once it is done; refused or failed (the lock may
        be gone for another reason, or the act done unseen), the figures are read again."""
        try:
            yield
        except BaseException:
            self._yours.unknown()
            raise
        self._yours.acted(lock.queue, kind, lock.token, -1)

    def release(self, lock: Held, reason: str | None = None, note: str | None = None) -> None:
        """Give the item back to the queue (with a note for whoever takes it next)."""
        with self._ending(lock, models.EventKind.RELEASE):
            self._wb.queue(lock.queue).release(self.user, lock.key, lock.token, reason, note=note)
        self._counted_change(lock.queue, waiting=1)

    def defer(self, lock: Held, until: dt.datetime, reason: str, note: str | None = None) -> models.Deferral:
        """Give the item back until `until` (aware): nobody gets it before, then it comes first."""
        with self._ending(lock, models.EventKind.DEFER):
            deferral = self._wb.queue(lock.queue).defer(self.user, lock.key, lock.token, until, reason, note=note)
        self._counted_change(lock.queue, deferred=1)
        return deferral

    def escalate(self, lock: Held, reason: str) -> None:
        """Hand the item to a supervisor, saying why: the queue's on_escalate values take it out of the work."""
        with self._ending(lock, models.EventKind.ESCALATE):
            self._wb.queue(lock.queue).escalate(self.user, lock.key, lock.token, reason)

    def escalated_to(self, queue: str) -> str:
        """Whom `queue` hands its escalated items to, as said to a user: its escalate_to group, or a supervisor."""
        group = self._wb.queue(queue).config.escalate_to
        return "a supervisor" if group is None else f"the group {group}"

    def escalations(self, queue: str, mine: bool = False) -> list[tuple[models.Event, models.Event]]:
        """The items of `queue` handed to a supervisor (this user's only, with `mine`), newest first, each
        with the item's newest event since: the escalate itself while it waits for a supervisor."""
        return self._wb.queue(queue).escalations(self.user if mine else None)

    def undo_complete(self, queue: str, key: Any) -> models.Claim:
        """Take back this user's Complete of `key` (within the queue's undo_within): theirs again."""
        self._yours.unknown()  # theirs again, under a lock the trail records as it undoes
        return self._wb.queue(queue).undo_complete(self.user, key)

    def needs_note(self, queue: str, action: str) -> bool:
        """Does `action` ("release", or an outcome's name) in `queue` need a note?"""
        return self._wb.config.queues[queue].needs_note(action)

    def add_note(self, queue: str, key: Any, text: str) -> models.Note:
        """Add a note to an item (held or not)."""
        return self._wb.queue(queue).add_note(self.user, key, text)

    def item_log(self, queue: str, key: Any) -> ItemLog:
        """An item's notes and history (one statement, or one read transaction: WorkQueue.item_log)."""
        return ItemLog.read(self._wb.queue(queue), queue, key)

    def source(self, queue: str, item: Mapping[str, Any]) -> sources.Source:
        """The source an item's `source` column names (a PDF, an image, text), read from disk or the
        network: may take seconds, so a window calls it off its GUI thread."""
        q = self._wb.queue(queue).q
        if q.source_column is None:
            return sources.Source("none")
        # The item is keyed by the table's names: `source = "ScanPath"` may be column `scanpath`.
        return sources.read(item.get(q.source_column.name), sources.base_dir(self._wb.config.path, q.config.source_dir))

    def changes(self) -> list[models.Event]:
        """What the audit trail recorded about this user's items since the last call, oldest first: their
        lock taken away (force-release, reassign, a takeover after expiry), an item handed to them, their
        own actions on their locks (from this or another window). The first call only marks where to
        start: []."""
        events = self._read_changes(concerning=self.user)
        self._yours.looked(events, self.user)
        return events

    def interruptions(self) -> int:
        """How often this user's database lost a connection or was reached on another server so far (a
        window checks what it confirmed after the count grows: the server may have changed)."""
        return self._wb.db.interruptions()

    def lost_completions(self, done: list[models.Lock]) -> list[models.Lock]:
        """Of the locks this user completed, those whose Complete the database does not have (after a
        switch to a standby that had not received it)."""
        return [lock for lock in done if not self._wb.queue(lock.queue).completion_kept(lock.key, lock.token)]

    def extend(self, lock: Held) -> models.Lock:
        """Push the lock's expiry out (never past the queue's maximum); the new lock."""
        return self._wb.queue(lock.queue).extend(self.user, lock.key, lock.token)

    def check(self, lock: Held) -> models.Lock:
        """The lock as the database has it now; LockLost (who, why) when it is no longer this user's."""
        try:
            return self._wb.queue(lock.queue).check(self.user, lock.key, lock.token)
        except errors.LockLost as lost:
            if lost.cause != "reassigned" or lost.to != self.user or lost.holder != self.user:
                raise
            # A supervisor gave the item to this user again, with a fresh lock (a bulk reassignment may):
            # it is still theirs, and the window carries on under the new lock instead of calling it lost.
            again = next((m for m in self.mine(lock.queue) if m.key == lock.key and not m.expired), None)
            if again is None:
                raise
            return again

    # -- looking ------------------------------------------------------------------------------

    def mine(self, queue: str) -> list[models.Lock]:
        """This user's locks in `queue`, oldest first, expired ones not yet taken over included."""
        locks = self._wb.queue(queue).mine(self.user)
        self._yours.read_queue(queue, len(locks))
        return locks

    def summaries(self, queue: str, keys: list[Any]) -> dict[Any, ItemLine]:
        """Per item, by key: one line of text (its list columns) and when it is due."""
        q = self._wb.queue(queue).q
        shown = {c.name for c in q.list_columns if c is not q.key}
        due = q.due.name if q.due is not None else None
        return {
            key: ItemLine(
                " — ".join(str(value) for name, value in row.items() if name in shown and value not in (None, "")),
                row.get(due) if due is not None else None,
            )
            for key, row in self._wb.queue(queue).summaries(keys).items()
        }

    def open_items(self, queue: str, limit: int = 200) -> list[dict[str, Any]]:
        """Waiting items in queue order (their list columns), at most `limit`."""
        return self._wb.queue(queue).open_items(limit, self.user)

    def queue_counts(self) -> list[QueueCount]:
        """Per queue, in the config's order: items waiting (up to WAITING_CAP + 1) and this user's locks
        (one read transaction for them all; none where all are known: the waiting figures counted within
        `[app] counts_every`, the user's locks moved by this window's own acts)."""
        held, figures = self._yours.known(), self._cached_figures()
        if held is not None and figures is not None:
            return self._counts_of(figures, held)
        try:
            with self._wb.db.one_read():
                return self._queue_counts()
        except counts.Refused:  # the counts table refused this login: counted here from now on
            with self._wb.db.one_read():
                return self._queue_counts()

    def opening(self) -> Opening:
        """What a window shows first, in one read transaction: every queue's layout (binding the config
        to the tables), this user's locks with their list lines, the start page's counts, how each queue's
        claim runs (asked here, not at the first Next item); and where the change feed starts (the first
        changes() answers from there)."""
        try:
            return self._opening()
        except counts.Refused:  # the counts table refused this login: counted here from now on
            return self._opening()

    def _opening(self) -> Opening:
        with self._wb.db.one_read():
            layouts = {name: self.layout(name) for name in self.queues}
            mine = {name: self.mine(name) for name in self.queues}
            lines = {name: self.summaries(name, [lock.key for lock in locks]) for name, locks in mine.items() if locks}
            counts = self._queue_counts({name: len(locks) for name, locks in mine.items()})
            for name in self.queues:
                self._wb.queue(name).ask_ahead()
            self.changes()
        return Opening(layouts, mine, lines, counts)

    def _queue_counts(self, mine: Mapping[str, int] | None = None) -> list[QueueCount]:
        """`mine`: the user's locks per queue where the caller has just read them."""
        figures = self._queue_figures()
        # The user's own locks: few, by index, always current; every queue's in one statement.
        held = mine if mine is not None else self._yours.known()
        if held is None:
            held = self._wb.mine_counts(self.user)
        self._yours.read(held)
        return self._counts_of(figures, held)

    def _counts_of(
        self, figures: Mapping[str, tuple[int, int | None, int]], held: Mapping[str, int]
    ) -> list[QueueCount]:
        return [
            QueueCount(
                queue=name,
                title=config.title,
                waiting=figures[name][0],
                mine=held[name],
                overdue=figures[name][1],
                deferred=figures[name][2],
            )
            for name, config in self._wb.config.queues.items()
        ]

    def _cached_figures(self) -> dict[str, tuple[int, int | None, int]] | None:
        """Every queue's figures as counted within `[app] counts_every` (_queue_figures), None if any is older."""
        now, every = time.monotonic(), self._wb.config.app.counts_every
        with self._counted_lock:
            cached = {name: self._counted.get(name) for name in self._wb.config.queues}
        if any(entry is None or now - entry[0] >= every for entry in cached.values()):
            return None
        return {name: entry[1:] for name, entry in cached.items() if entry is not None}

    def _queue_figures(self) -> dict[str, tuple[int, int | None, int]]:
        """Waiting, overdue and deferred items per queue, as counted within `[app] counts_every`:
        with next-after-complete off the start page shows after every Complete, and a hundred windows
        counting each time cost the server more than their claims and Completes (issue 42). The
        figures come from the database's counts table, counted there by one window per queue and
        interval for every window (db/counts.py), except a queue whose conditions name the user."""
        now = time.monotonic()
        every = self._wb.config.app.counts_every
        found: dict[str, tuple[int, int | None, int]] = {}
        shared: dict[str, Any] = {}
        cached_names: set[str] = set()
        for name in self._wb.config.queues:
            with self._counted_lock:
                cached = self._counted.get(name)
            if cached is not None and now - cached[0] < every:
                found[name] = cached[1:]
                cached_names.add(name)
                continue
            work = self._wb.queue(name)
            if work.q.names_user:
                found[name] = _counter(work, self.user)()
            else:
                shared[name] = _counter(work, self.user)
                self._shared.add(name)
        ages: dict[str, float] = {}
        for name, (figures, age) in self._wb.counts.figures(shared, every).items():
            found[name], ages[name] = figures, age
        with self._counted_lock:
            for name, figures in found.items():
                if name not in cached_names:
                    # Kept for what is left of the interval: figures another window counted 20 s ago
                    # are counted again 10 s from now (counts_every the ceiling).
                    self._counted[name] = (now - ages.get(name, 0.0), *figures)
        return found

    def take_figures(self, figures: Mapping[str, tuple[counts.Figures, float]]) -> None:
        """Figures counted for every window ({queue: (figures, age in seconds)}: the change relay's,
        services/relay.py): kept as this window's own count, so its start page reads none within
        `[app] counts_every` of their count. Where this window counted later, its own stay. Any thread."""
        now = time.monotonic()
        with self._counted_lock:
            for name, (found, age) in figures.items():
                if name not in self._shared or not 0 <= age < self._wb.config.app.counts_every:
                    continue  # a queue counted per user, or not counted here yet (the opening counts it)
                cached = self._counted.get(name)
                if cached is None or cached[0] < now - age:
                    self._counted[name] = (now - age, *found)

    def _counted_change(self, queue: str, waiting: int = 0, deferred: int = 0) -> None:
        """This user's own claim, release or deferral changes the counted figures at once: the start
        page after a Next item shows one item fewer waiting without counting again."""
        with self._counted_lock:
            cached = self._counted.get(queue)
            if cached is not None:
                at, counted, overdue, held_back = cached
                if counted <= WAITING_CAP:  # "more than 10,000" stays that
                    counted = max(0, counted + waiting)
                self._counted[queue] = (at, counted, overdue, max(0, held_back + deferred))

    def release_connections(self) -> None:
        """Close the connections kept for claims and Completes but one (the window went idle): call
        only while no other call of this process runs on the database."""
        self._wb.db.release_idle()

    def pick_list(self, queue: str, limit: int = 200) -> PickList:
        """The first `limit` waiting items with their columns' labels, and how many wait in all."""
        work = self._wb.queue(queue)
        rows = work.open_items(limit, self.user)
        waiting = len(rows) if len(rows) < limit else work.count_waiting(WAITING_CAP, self.user)
        specs = {spec.name: spec.label for spec in fieldspec.field_specs(work.q)}
        names = [work.q.key.name, *(c.name for c in work.q.list_columns if c is not work.q.key)]
        due = work.q.due.name if work.q.due is not None else None
        if due is not None:
            names.append(due)
        return PickList(
            key_name=work.q.key.name,
            rows=rows,
            waiting=waiting,
            due_name=due,
            db_now=work.db_clock().now if due is not None else None,
            labels={name: specs.get(name) or fieldspec.label_of(name) for name in names},
        )

    def show(self, queue: str, key: Any) -> models.ItemView:
        """An item with its lock and state, whoever holds it."""
        return self._wb.queue(queue).show(key)

    def shown_item(self, queue: str, item: Mapping[str, Any]) -> dict[str, Any]:
        """An item's columns as anyone may see them: no token among them, lock times to the second."""
        return self._wb.queue(queue).q.shape.shown_item(item)

    def lock_columns(self, queue: str) -> set[str]:
        """The queue's lock columns: what a listing of an item's fields leaves out."""
        return {c.name for c in self._wb.queue(queue).q.lock_columns}

    def locks(self, queue: str) -> list[models.Lock]:
        """Every lock of `queue`, whoever holds it, oldest first (tokens included: leave them out when shown)."""
        return self._wb.queue(queue).locks()

    def deferred(self, queue: str) -> list[models.Deferral]:
        """The items of `queue` deferred to a time still to come."""
        return self._wb.queue(queue).deferred()

    def notes(self, queue: str, key: Any) -> list[models.Note]:
        """An item's notes, oldest first."""
        return self._wb.queue(queue).notes(key)

    def history(self, queue: str, key: Any) -> list[models.Event]:
        """An item's audit trail, oldest first."""
        return self._wb.queue(queue).history(key)

    def settings_version(self) -> int:
        """The newest version of the queue settings a supervisor published (0: none)."""
        return published.latest_version(self._wb.engine, self._wb.config.database.workbench_schema)
