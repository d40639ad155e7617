"""The operator's working state: the open item and its lock, driven through the dispatcher."""

from __future__ import annotations

import collections
import dataclasses
import datetime as dt
import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from workbench import fieldspec, journal_guard
from workbench import journal as journal_mod
from workbench.config import model
from workbench.core import durations, errors, models
from workbench.gui import dispatch, problem_text, relay_link

if TYPE_CHECKING:  # loaded off the GUI thread, by the first database call (Engine.get)
    from workbench import services
    from workbench.services import relay_client

log = logging.getLogger("workbench.gui")
_APP = model.AppConfig()  # the declared defaults
# The reason an untouched open item is given back with when the operator undoes their last Complete:
# data in the audit trail, the same for everyone (not translated).
UNDO_RELEASE = "given back to undo the previous Complete"
CONFIRMED_KEPT = 50  # the last Completes a window checks again after a lost connection
CONFIRMED_CHECKED_SECONDS = 15 * 60  # older ones were replicated long before any failover


@dataclasses.dataclass
class SessionSettings:
    """Timing of the lock timer; seconds. The defaults are `[app]`'s (config.settings.APP)."""

    check_interval: float = float(_APP.check_every)  # how often the lock is checked with the database
    backstop_interval: float = float(_APP.backstop_every)  # how often instead while the change feed is live
    warn_before: float = float(_APP.warn_before)  # warn this long before the lock expires
    auto_extend: bool = _APP.auto_extend  # extend while the user is working in the form
    activity_window: float = 60.0  # "working" = a keystroke or click within this long (not a setting)
    retry_interval: float = float(_APP.retry_every)  # how often to try again while the database is unreachable
    next_after_complete: bool = _APP.next_after_complete
    idle_after: float = float(_APP.idle_after)  # no database call this long: close connections but one
    changes_interval: float = float(_APP.changes_every)  # how often the audit trail is read for changes (0: never)
    relay: str | None = _APP.relay  # host:port of the change relay: look when it wakes the window (gui/relay_link.py)
    listen: bool = _APP.listen  # no relay: look when the database's notice wakes the window, where it sends them

    def warn_at(self, lock_seconds: float) -> float:
        """Seconds left when the expiry warning comes: warn_before as configured, but never more
        than the whole lock (a longer one would only mean "warn as soon as it is claimed")."""
        return min(self.warn_before, lock_seconds)

    @classmethod
    def from_config(cls, app: model.AppConfig) -> SessionSettings:
        """The `[app]` section of the config (the operator may still toggle next-after-complete)."""
        return cls(
            check_interval=float(app.check_every),
            backstop_interval=float(app.backstop_every),
            warn_before=float(app.warn_before),
            auto_extend=app.auto_extend,
            retry_interval=float(app.retry_every),
            next_after_complete=app.next_after_complete,
            idle_after=float(app.idle_after),
            changes_interval=float(app.changes_every),
            relay=app.relay,
            listen=app.listen,
        )


class Engine:
    """The window's Workbench, opened by the first call that needs it, on that call's thread (a dispatcher
    worker): the window is built and painted from the config alone while SQLAlchemy loads and the engine
    is made, which is most of a start's time. Give `wb` when it is already open (the launcher's, tests')."""

    def __init__(
        self,
        config: model.Config,
        opener: Callable[[], services.Workbench] | None = None,
        wb: services.Workbench | None = None,
    ) -> None:
        self.config, self._opener, self._wb = config, opener, wb
        self._lock = threading.Lock()  # two first calls at once (counts and the opening) open it once

    @classmethod
    def of(cls, wb: services.Workbench | Engine) -> Engine:
        if isinstance(wb, Engine):
            return wb
        from workbench import services  # an open database: the engine is loaded already

        door = services.Workbench.of(wb)  # an engine a test opened itself goes behind the door too
        return cls(door.config, wb=door)

    @property
    def opened(self) -> services.Workbench | None:
        """The Workbench if it is open (never opens it: for the GUI thread)."""
        return self._wb

    def get(self) -> services.Workbench:
        """The Workbench, opened now if it is not yet (a worker thread: it imports the engine)."""
        wb = self._wb
        if wb is not None:
            return wb
        with self._lock:
            if self._wb is None:
                if self._opener is not None:
                    self._wb = self._opener()
                else:
                    from workbench import services

                    self._wb = services.Workbench.open(self.config)
            return self._wb

    def adopt(self, wb: services.Workbench) -> None:
        """Take the Workbench the launcher opened (and logged in) while the window painted."""
        with self._lock:
            assert self._wb is None  # a window adopts an engine once, before its first call
            self._wb = wb

    def close(self) -> None:
        """Close the engine if it was opened (a start still opening it closes nothing it makes later)."""
        with self._lock:
            if self._wb is not None:
                self._wb.close()


@dataclasses.dataclass
class Current:
    """The item on the form and the lock it is held under."""

    queue: str
    claim: models.Claim
    lock: models.Lock
    received: float  # time.monotonic() when `lock` (and its db_now) arrived

    def remaining(self) -> float:
        """Seconds until expiry on the database clock, counted on from the last reading."""
        return (self.lock.expires_at - self.lock.db_now).total_seconds() - (time.monotonic() - self.received)


class OperatorSession(QObject):
    """Claims, saves, completes, releases and watches the lock of one item at a time.

    All database work goes through the Dispatcher; results come back as the signals below.
    A generation number is bumped whenever the current item changes, so answers that arrive
    for an item the user has left are dropped.

    Signals:
        ready(list): the queues could be opened; the user's own locks (models.Lock) per queue.
        claimed(object, object): a models.Claim now on the form, and its journal Draft (or None).
        nothing_to_do(str): the queue has nothing waiting (a calm message, not an error).
        saved(object, dict): edits stored; the models.Lock as it is now, and the values saved.
        completed(object): a models.Completion.
        released(): the item went back to the pool.
        extended(object): the new models.Lock.
        tick(float): seconds left on the lock, every second while an item is open.
        expiry_warning(float): the lock runs out soon (seconds left); once per lock.
        lock_lost(object): the errors.LockLost that says who, when and why.
        failed(object): a user-facing error (errors.WorkbenchError) that needs no state change.
        connection_changed(bool, str): reachable or not, and the message.
        mine_loaded(list): the user's locks in the current queue (models.Lock).
        open_items_loaded(object): the waiting items the user may pick (services.operator.PickList).
        counts_loaded(list): per queue, how many wait and how many the user holds (operator.QueueCount).
        settings_changed(int): a supervisor published newer queue settings (their version).
        completions_lost(list): models.Lock of Completes this window confirmed that the database no
            longer has (it switched to a standby that had not received them).
    """

    ready = Signal(list)
    claimed = Signal(object, object)
    nothing_to_do = Signal(str)
    saved = Signal(object, dict)
    completed = Signal(object)
    released = Signal()
    deferred = Signal(object)  # models.Deferral: the item went back until its time
    escalated = Signal()  # the item was handed to a supervisor
    escalations_loaded = Signal(list)  # [(escalate, newest event since)]: this user's, in the current queue
    extended = Signal(object)
    tick = Signal(float)
    expiry_warning = Signal(float)
    lock_lost = Signal(object)
    failed = Signal(object)
    connection_changed = Signal(bool, str)
    mine_loaded = Signal(list)
    open_items_loaded = Signal(object)
    counts_loaded = Signal(list)
    filter_choices_loaded = Signal(str, object)  # queue, {column: [values waiting items hold]}
    settings_changed = Signal(int)
    item_log_loaded = Signal(object)  # operator.ItemLog of the open item
    source_loaded = Signal(object)  # sources.Source of the open item (queues with a `source` column)
    completions_lost = Signal(list)
    handed_over = Signal(object)  # models.Event: a supervisor handed this user an item (the reassign's claim row)
    relay_changed = Signal(bool)  # the change relay wakes this window (True), or it polls the feed itself (False)

    def __init__(
        self,
        wb: services.Workbench | Engine,
        user: str,
        dispatcher: dispatch.Dispatcher,
        journal: journal_guard.GuardedJournal | None,
        settings: SessionSettings | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.engine = Engine.of(wb)
        self.config = self.engine.config  # what the window is built from, known before the engine is open
        self.user, self.dispatcher, self.journal = user, dispatcher, journal
        self._operator: services.Operator | None = None
        self._operator_lock = threading.Lock()
        self.settings = settings or SessionSettings()
        self.database = _database_id(self.config)
        self.queue_name = next(iter(self.config.queues))
        self.titles = {name: queue.title for name, queue in self.config.queues.items()}  # what messages call them
        self.narrow: dict[str, Any] = {}  # Next item serves only items whose columns hold these values
        self.current: Current | None = None
        self.specs: dict[str, list[fieldspec.FieldSpec]] = {}  # filled by start(), per queue
        self._lock_seconds: dict[str, int] = {}  # a lock's time per queue (QueueLayout), filled by start()
        self.summaries: dict[tuple[str, Any], str] = {}  # (queue, key) -> list columns as text
        # Completes confirmed lately (lock, monotonic time): checked again once a connection was lost,
        # as a failover to an asynchronous standby can undo the last ones.
        self.confirmed: collections.deque[tuple[models.Lock, float]] = collections.deque(maxlen=CONFIRMED_KEPT)
        # Counted from the engine's making: an engine not yet open has lost nothing.
        self._interruptions = self.operator.interruptions() if self.engine.opened is not None else 0
        self.last_completion: tuple[str, Any, float] | None = None  # queue, key, monotonic time of the last Complete
        self.due_times: dict[tuple[str, Any], Any] = {}  # (queue, key) -> when it is due, where the queue says
        self.list_columns: dict[str, list[str]] = {}  # per queue: the columns that tell items apart
        self.due_columns: dict[str, str | None] = {}  # per queue: when an item is due, if it says
        self.source_columns: dict[str, str | None] = {}  # per queue: the column naming its source, if any
        self.lost: errors.LockLost | None = None
        self.reachable = True
        self._generation = 0
        self._warned = False
        self._last_activity = 0.0
        self._extending = False
        self._checking = False
        self._capped = False
        self._next_in_flight = False  # a Next item claim is running (see next_item)
        self._tick = QTimer(self)
        self._tick.setInterval(1000)
        self._tick.timeout.connect(self._on_tick)
        # The periodic lock check: one shot at a time, so its pace can change between two checks (_plan_check).
        self._check = QTimer(self)
        self._check.setSingleShot(True)
        self._check.timeout.connect(self._periodic_check)
        self._checked_at = 0.0  # time.monotonic() of the last periodic check (or of the claim)
        self._log: services.ItemLog | None = None  # the open item's log as last read (a Save adds to it)
        self._feed_failed = False  # the last look at the feed failed: it tells nothing until one succeeds
        self._stopped = False  # the window closed: no timer starts again
        self._retry = QTimer(self)
        self._retry.setSingleShot(True)
        self._retry.timeout.connect(self._on_retry)
        # What to try again once the database answers, by kind ("save", "check", …): the
        # periodic check must not push out a pending Save, and ten failed checks are one retry.
        self._retry_actions: dict[str, Callable[[], None]] = {}
        self._failures = 0  # consecutive unreachable answers: the retry delay doubles with each
        # Published queue settings: look for a newer version now and then (a cheap one-row query).
        self.settings_version = getattr(self.engine.opened, "settings_version", 0)
        self._settings_poll = QTimer(self)
        self._settings_poll.setInterval(int(max(30.0, self.settings.check_interval * 4) * 1000))
        self._settings_poll.timeout.connect(self.check_settings)
        # A window left open all day holds one server connection, not one per thread that ran a claim.
        self._idle = QTimer(self)
        self._idle.setSingleShot(True)
        self._idle.timeout.connect(self._release_idle)
        dispatcher.busy_changed.connect(self._on_busy)
        # The change feed: what the audit trail recorded about this user's items, read every second or so,
        # so a lock taken away or an item handed over is said at once rather than at the next lock check.
        self._changes = QTimer(self)
        self._changes.setInterval(int(self.settings.changes_interval * 1000))
        self._changes.timeout.connect(self.look_for_changes)
        self._looking = False
        # With a change relay the window looks when woken (and every backstop_every), not every second: the server's
        # cost of freshness no longer grows with the windows. Without it, or while it is away, as before.
        self.relay: relay_link.RelayLink | None = None
        if self.settings.relay and self.settings.changes_interval > 0:
            from workbench.services import relay_client

            client = relay_client.RelayClient(
                self.settings.relay, self.user, self.config.queues, on_counts=self._relay_counts
            )
            self.relay = relay_link.RelayLink(
                dispatcher,
                client,
                self._changes,
                self.look_for_changes,
                self.settings.changes_interval,
                self,
                safety_seconds=self.settings.backstop_interval,
            )
            self.relay.state_changed.connect(self.relay_changed)
            self.relay.state_changed.connect(lambda _connected: self._plan_check())
        # Without a relay, on PostgreSQL reached directly: the database's own notice of each change wakes the
        # window (a connection of its own waits for it), driven as a relay's wake-ups; made once the engine
        # is open (start), as the engine says whether there are notices. Lost: it polls, as without.
        self.notices: relay_link.RelayLink | None = None
        self._notice_client: Any = None  # services.relay_client.NoticeClient, found by start's work

    @property
    def wb(self) -> services.Workbench:
        """The open Workbench (opened here if need be: only worker threads call this before `ready`)."""
        return self.engine.get()

    def _relay_counts(self, figures: relay_client.Figures) -> None:
        """The relay's start-page figures (on its waiting thread): kept as the window's own count."""
        if self._operator is not None:  # none yet: the window's opening counts
            self._operator.take_figures(figures)

    @property
    def operator(self) -> services.Operator:
        """Every database call goes through it, off the GUI thread; the first one opens the engine."""
        op = self._operator
        if op is None:
            wb = self.engine.get()
            with self._operator_lock:
                if self._operator is None:
                    from workbench import services

                    self._operator = services.Operator(wb, self.user)
                op = self._operator
        return op

    # -- helpers ---------------------------------------------------------------------------------

    def _run(
        self,
        fn: Callable[[], Any],
        done: Callable[[Any], None],
        *,
        retry: tuple[str, Callable[[], None]] | None = None,
        keep_generation: bool = True,
        settled: Callable[[], None] | None = None,
    ) -> None:
        generation = self._generation

        def on_done(result: Any) -> None:
            if settled is not None:
                settled()
            self._after_interruption()
            if keep_generation and generation != self._generation:
                return  # the user moved on to another item
            self._set_reachable(True, "")
            done(result)

        def on_error(exc: BaseException) -> None:
            if settled is not None:
                settled()
            if keep_generation and generation != self._generation:
                return
            self._handle_error(exc, retry)

        self.dispatcher.call(fn, on_done, on_error)

    def _handle_error(self, exc: BaseException, retry: tuple[str, Callable[[], None]] | None) -> None:
        if isinstance(exc, errors.DatabaseUnavailable):
            self._set_reachable(False, str(exc))
            if retry is not None and not self._stopped:  # a late answer to a closed window starts nothing
                # One clear state and a quiet retry, never a storm of dialogs.
                self._retry_actions[retry[0]] = retry[1]
                if not self._retry.isActive():
                    self._retry.start(int(self.retry_delay() * 1000))
            return
        self._set_reachable(True, "")
        if isinstance(exc, errors.LockLost) and self.current is not None:
            self._lose(exc)
        elif isinstance(exc, errors.NothingToClaim):
            self.nothing_to_do.emit(problem_text.message(exc, self.titles))
        elif isinstance(exc, errors.WorkbenchError):
            self.failed.emit(exc)
        else:
            log.error("unexpected error", exc_info=exc)
            self.failed.emit(errors.WorkbenchError(self.tr("unexpected error: {0}").format(exc)))

    def retry_delay(self) -> float:
        """Back off: 1 s, 2 s, 4 s … up to retry_interval, so a long outage costs the server little."""
        return min(self.settings.retry_interval, 2.0 ** max(0, self._failures - 1))

    def _set_reachable(self, reachable: bool, message: str) -> None:
        self._failures = 0 if reachable else self._failures + 1
        if reachable != self.reachable or (not reachable and message):
            self.reachable = reachable
            self.connection_changed.emit(reachable, message)

    def _after_interruption(self) -> None:
        """A connection was lost since the last look, and the database answers again: it may be another
        server (a promoted standby). Check that the Completes confirmed lately are still there."""
        seen = self.operator.interruptions()
        if seen == self._interruptions:
            return
        previous, self._interruptions = self._interruptions, seen
        now = time.monotonic()
        recent = [lock for lock, at in self.confirmed if now - at < CONFIRMED_CHECKED_SECONDS]
        if not recent:
            return

        def checked(lost: list[models.Lock]) -> None:
            if lost:
                gone = {(lock.queue, lock.key, lock.token) for lock in lost}
                self.confirmed = collections.deque(
                    ((lock, at) for lock, at in self.confirmed if (lock.queue, lock.key, lock.token) not in gone),
                    maxlen=CONFIRMED_KEPT,
                )
                self.completions_lost.emit(lost)

        def unchecked(_exc: BaseException) -> None:
            # The check met the outage itself (its pooled connection was the dead one): look again
            # shortly, not only after the next call, which may be a minute away; a lost Complete is
            # said at once.
            self._interruptions = previous
            QTimer.singleShot(int(self.settings.retry_interval * 1000), self._after_interruption)

        self.dispatcher.call(lambda: self.operator.lost_completions(recent), checked, unchecked)

    @Slot()
    def _on_retry(self) -> None:
        actions, self._retry_actions = list(self._retry_actions.values()), {}
        for action in actions:
            action()

    @Slot(bool)
    def _on_busy(self, busy: bool) -> None:
        if busy:
            self._idle.stop()
        else:
            self._idle.start(int(self.settings.idle_after * 1000))

    @Slot()
    def _release_idle(self) -> None:
        # On the GUI thread, which alone starts calls: none starts meanwhile. A call dropped as
        # stale may still run on a worker thread; then wait for the next quiet spell.
        if self._operator is None:
            return  # nothing opened yet
        if self.dispatcher.busy or self.dispatcher.pool.activeThreadCount():
            self._idle.start(int(self.settings.idle_after * 1000))
            return
        try:
            self.operator.release_connections()
        except Exception:  # closing the sockets of a server that is gone; the next call reconnects
            log.debug("closing idle connections failed", exc_info=True)

    # -- starting --------------------------------------------------------------------------------

    def start(self) -> None:
        """Bind every queue (checks the config against the tables), load the user's locks and the start
        page's counts: one read transaction (Operator.opening)."""

        def work() -> Any:
            opened = self.operator.opening()  # binding reflects the tables: here, off the GUI thread
            if self.relay is None and self.settings.listen and self.settings.changes_interval > 0:
                self._notice_client = self._notice_client or self.operator.notice_client()
            for name, layout in opened.layouts.items():
                self.specs[name] = layout.fields
                self.list_columns[name] = layout.list_columns
                self.due_columns[name] = layout.due_column
                self.source_columns[name] = layout.source_column
                self._lock_seconds[name] = layout.lock_seconds
            for name, lines in opened.lines.items():
                self._keep_summaries(name, lines)
            return opened

        def done(opened: Any) -> None:
            self.ready.emit([lock for locks in opened.mine.values() for lock in locks])
            self.counts_loaded.emit(opened.counts)
            if self.relay is not None:
                self.relay.start()  # the opening marked where the feed starts
            elif self._notice_client is not None:
                if self.notices is None:
                    self.notices = relay_link.RelayLink(
                        self.dispatcher,
                        self._notice_client,
                        self._changes,
                        self.look_for_changes,
                        self.settings.changes_interval,
                        self,
                        what="notices",
                        safety_seconds=self.settings.backstop_interval,
                    )
                    self.notices.state_changed.connect(lambda _listening: self._plan_check())
                    self.notices.start()  # polls until it listens
            elif self.settings.changes_interval > 0:
                self._changes.start()  # the opening marked where the feed starts
                self._plan_check()  # an item claimed meanwhile: the feed is live now

        self._run(work, done, retry=("start", self.start))
        if self.settings_version:
            self._settings_poll.start()

    @Slot()
    def look_for_changes(self) -> bool:
        """Read the change feed once (one look at a time: False while one is in flight; a failed look is
        tried at the next tick, and the window's other calls say when the database is unreachable)."""
        if self._looking:
            return False
        self._looking = True

        def done(events: list[models.Event]) -> None:
            self._looking = False
            self._feed_told(True)
            self._on_changes(events)

        def failed(_exc: BaseException) -> None:
            self._looking = False
            self._feed_told(False)

        # a lambda: `self.operator` opens the engine, on the worker, not here

        self.dispatcher.call(lambda: self.operator.changes(), done, failed, quiet=True)  # noqa: PLW0108
        return True

    def _on_changes(self, events: list[models.Event]) -> None:
        cur = self.current
        open_item = (cur.queue, str(cur.lock.key)) if cur is not None else None
        # Others' doing only: this user's own actions (this window's, or another of theirs) the lock check tells.
        theirs = [e for e in events if e.actor != self.user]
        handed = [e for e in theirs if e.kind is models.EventKind.CLAIM and e.owner == self.user]
        if any((e.queue, e.key) == open_item for e in theirs):
            self.check_now()  # the lock check says who has it now and why, as at any other time
        for event in handed:
            if (event.queue, event.key) != open_item:
                self.handed_over.emit(event)
        if handed:
            self.refresh_mine()
            self.load_counts()  # "Yours" on the start page (its waiting figures stay cached)

    def check_settings(self) -> None:
        """Tell the window when a supervisor has published newer queue settings."""

        def done(version: int) -> None:
            if version > self.settings_version:
                self.settings_version = version
                self.settings_changed.emit(version)

        # A failed look is tried again at the next tick.
        # a lambda: `self.operator` opens the engine, on the worker, not here
        self.dispatcher.call(lambda: self.operator.settings_version(), done, lambda exc: None)  # noqa: PLW0108

    def set_queue(self, name: str) -> None:
        if name != self.queue_name:
            self.queue_name = name
            self.narrow = {}  # a filter belongs to its queue's columns
            self.refresh_mine()

    def load_filter_choices(self) -> None:
        """The values the current queue's Next item may be narrowed to (queues with `filter_by`)."""
        name = self.queue_name
        if not self.config.queues[name].filter_by:
            self.filter_choices_loaded.emit(name, {})
            return
        self._run(
            lambda: self.operator.filter_choices(name),
            lambda found: self.filter_choices_loaded.emit(name, found),
            keep_generation=False,
        )

    def refresh_mine(self) -> None:
        name = self.queue_name

        def work() -> list[models.Lock]:
            mine = self.operator.mine(name)
            self._load_summaries(name, [lock.key for lock in mine])
            return mine

        self._run(work, self.mine_loaded.emit, keep_generation=False)

    def _load_summaries(self, queue: str, keys: list[Any]) -> None:
        """A line of text per item for lists (worker thread; the GUI reads it after the signal)."""
        self._keep_summaries(queue, self.operator.summaries(queue, keys))

    def _keep_summaries(self, queue: str, lines: Mapping[Any, Any]) -> None:
        for key, line in lines.items():
            self.summaries[(queue, key)] = line.text
            if line.due is not None:
                self.due_times[(queue, key)] = line.due

    def load_counts(self) -> None:
        """Refresh the start page's figures (off the GUI thread; counts_loaded when done)."""
        # a lambda: `self.operator` opens the engine, on the worker, not here
        self._run(lambda: self.operator.queue_counts(), self.counts_loaded.emit, keep_generation=False)  # noqa: PLW0108

    def load_escalations(self) -> None:
        """The items this user handed to a supervisor in the current queue, and what became of each."""
        name = self.queue_name
        self._run(
            lambda: self.operator.escalations(name, mine=True), self.escalations_loaded.emit, keep_generation=False
        )

    def load_open_items(self, limit: int = 200) -> None:
        name = self.queue_name
        self._run(lambda: self.operator.pick_list(name, limit), self.open_items_loaded.emit, keep_generation=False)

    # -- claiming ----------------------------------------------------------------------------------

    def next_item(self) -> None:
        """Claim the next item of the current queue, exactly once however often it is asked for.

        A claim still under way (a slow or hung database) is not sent a second time: it would hold
        two items. One that failed because the database was away is retried with the Saves'
        backoff until it goes through; asking again meanwhile just tries at once instead.
        """
        if self._next_in_flight:
            return
        name = self.queue_name
        self._new_generation()  # also drops a pending retry of an earlier Next
        self._claim_next(name)

    def _claim_next(self, name: str) -> None:
        self._next_in_flight = True

        def settled() -> None:  # on the GUI thread, with the answer, even one that is dropped
            self._next_in_flight = False

        where = dict(self.narrow)
        self._run(
            lambda: self.operator.next_item(name, where),
            lambda c: self._on_claimed(name, c),
            retry=("next", lambda: self._claim_next(name)),
            settled=settled,
        )

    def open_item(self, key: Any, queue: str | None = None) -> None:
        """Open a specific item: resumes the user's own lock, or claims it if it is free."""
        name = queue or self.queue_name
        self._new_generation()
        self._run(lambda: self.operator.claim(name, key), lambda c: self._on_claimed(name, c))

    def _new_generation(self) -> None:
        self._generation += 1
        self._retry_actions.pop("next", None)  # another item was asked for: that Next is over

    def _on_claimed(self, queue: str, claim: models.Claim) -> None:
        self.queue_name = queue
        self.current = Current(queue, claim, claim.lock, time.monotonic())
        self.lost = None
        self._warned = False
        self._capped = False
        draft = self.journal.load(self.database, queue, claim.lock.key) if self.journal else None
        if draft is not None and draft.owner != self.user:
            draft = None
        self._tick.start()
        self._checked_at = time.monotonic()  # the claim said the lock: the first check one interval on
        self._plan_check()
        self.claimed.emit(claim, draft)
        self._on_tick()

    def lock_seconds(self, queue: str) -> int:
        """How long a claim of `queue` holds its lock: the queue's layout, once start() has it (before,
        the config's, which the layout is made from)."""
        return self._lock_seconds.get(queue) or self.config.queues[queue].lock_seconds

    def feed_live(self) -> bool:
        """Whether the change feed tells this window of what workbench does to its items within the
        feed's time: a relay or the database's notices wake it (connected), or, without either, it reads
        the feed every changes_interval itself; and its last look did not fail. A relay or listener
        lost counts as not live, though the window polls meanwhile: its path to the database is in
        doubt, so the lock check goes back to check_interval until the link is back."""
        if self._feed_failed or self.settings.changes_interval <= 0:
            return False
        link = self.relay if self.relay is not None else self.notices
        if link is not None:
            return link.connected is True
        return self._notice_client is None and self._changes.isActive()

    def _check_interval(self) -> float:
        """The periodic lock check's pace, decided here alone: check_interval, or backstop_interval (never
        faster) while the feed is live, as the feed then tells workbench's own changes and the check is
        left to catch those made outside it; both at most a tenth of the lock."""
        assert self.current is not None
        lock_seconds = self.lock_seconds(self.current.queue)
        every = self.settings.check_interval
        if self.feed_live():
            every = max(every, self.settings.backstop_interval)
        return max(1.0, min(every, lock_seconds / 10))

    @Slot()
    def _plan_check(self) -> None:
        """(Re)start the periodic check's timer, due one interval (as the feed's state says now) after the
        last periodic check: a relay lost makes the next check due at once if check_interval has passed."""
        if self.current is None or self._stopped:
            return
        due = self._checked_at + self._check_interval()
        self._check.start(max(0, int((due - time.monotonic()) * 1000)))

    @Slot()
    def _periodic_check(self) -> None:
        self._checked_at = time.monotonic()
        self.check_now()
        self._plan_check()

    def _feed_told(self, ok: bool) -> None:
        """A look at the feed answered (ok) or failed: when that changes, so may the check's pace."""
        failed = not ok
        if failed != self._feed_failed:
            self._feed_failed = failed
            self._plan_check()

    # -- working on the item -----------------------------------------------------------------------

    def note_activity(self) -> None:
        """The user typed or clicked in the form: counts for auto-extend."""
        self._last_activity = time.monotonic()

    def record_draft(self, values: dict[str, Any], base: dict[str, Any]) -> None:
        """Journal the form's unsaved edits (called on every change, before anything else)."""
        if self.journal is None or (self.current is None and self.lost is None):
            return
        queue, key, token = self._item_identity()
        if not values:
            self.journal.discard(self.database, queue, key)
            return
        self.journal.save(
            journal_mod.Draft(
                database=self.database,
                queue=queue,
                key=key,
                owner=self.user,
                token=token,
                values=dict(values),
                base=dict(base),
                updated_at=dt.datetime.now(dt.UTC).isoformat(),
            )
        )

    def _item_identity(self) -> tuple[str, Any, str | None]:
        if self.current is not None:
            return self.current.queue, self.current.lock.key, self.current.lock.token
        assert self.lost is not None
        return self.lost.queue, self.lost.key, None

    def save(self, edits: dict[str, Any], then: Callable[[], None] | None = None) -> None:
        """Save the edits (and keep the lock); `then` runs once they are saved."""
        cur = self._require()
        if cur is None:
            return
        lock = cur.lock

        def saved(done: models.Saved) -> None:
            self._after_save(cur, done.lock, edits)
            self._log_saved(cur, done.event)
            if then is not None:
                then()

        self._run(
            lambda: self.operator.save_recorded(lock, edits),
            saved,
            retry=("save", lambda: self.save(edits, then)),
        )

    def _log_saved(self, cur: Current, event: models.Event | None) -> None:
        """The Save in the open item's log, and what the fields were before it: the audit row the Save wrote
        added to the log this window read (no read), else the log read again."""
        if self.current is not cur:
            return  # closed with the Save (a Save before a Complete or Release): its log is gone
        log = self._log
        if event is not None and log is not None and (log.queue, str(log.key)) == (cur.queue, str(cur.lock.key)):
            self._log = log.with_event(event)
            self.item_log_loaded.emit(self._log)
        else:
            self.load_item_log()

    def _after_save(self, cur: Current, lock: models.Lock, edits: dict[str, Any]) -> None:
        self._take_lock(cur, lock)
        item = dict(cur.claim.item)
        item.update(edits)
        cur.claim = models.Claim(lock=lock, item=item, resumed=cur.claim.resumed)
        if self.journal is not None:
            self.journal.discard(self.database, cur.queue, lock.key)
        self.saved.emit(lock, dict(edits))

    def complete(self, outcome: str | None, edits: dict[str, Any], note: str | None = None) -> None:
        cur = self._require()
        if cur is None:
            return
        lock = cur.lock
        # The next item comes with the Complete (one round trip on PostgreSQL); meanwhile a Next
        # item press waits for it instead of claiming a second one.
        then_next = self.settings.next_after_complete and cur.queue == self.queue_name and not self._next_in_flight
        where = dict(self.narrow)
        if then_next:
            self._next_in_flight = True

        def settled() -> None:
            if then_next:
                self._next_in_flight = False

        self._run(
            lambda: self.operator.complete(lock, outcome, edits, note, then_next=then_next, where=where),
            lambda done: self._after_complete(cur, done),
            retry=("complete", lambda: self.complete(outcome, edits, note)),
            settled=settled,
        )

    def _after_complete(self, cur: Current, done: models.Completion) -> None:
        if self.journal is not None:
            self.journal.discard(self.database, cur.queue, cur.lock.key)
        self.last_completion = (cur.queue, cur.lock.key, time.monotonic())
        self.confirmed.append((cur.lock, time.monotonic()))
        self._close_item()
        self.completed.emit(done)
        if done.next is not None:  # claimed with the Complete: it is this user's now, whatever the setting says
            self._new_generation()
            self._on_claimed(cur.queue, done.next)
        elif self.settings.next_after_complete:
            self.next_item()  # nothing came with it: this claim says why (or gets one that is free now)

    def release(self, reason: str | None, note: str | None = None, then: Callable[[], None] | None = None) -> None:
        """Give the open item back (its draft discarded); `then` runs once it is back."""
        cur = self._require()
        if cur is None:
            return
        lock = cur.lock

        def released(_: Any) -> None:
            self._after_release(cur)
            if then is not None:
                then()

        self._run(
            lambda: self.operator.release(lock, reason, note),
            released,
            retry=("release", lambda: self.release(reason, note, then)),
        )

    def undo_seconds_left(self) -> float:
        """How long the last Complete can still be undone (0: not at all)."""
        if self.last_completion is None:
            return 0.0
        queue, _key, at = self.last_completion
        limit = self.config.queues[queue].undo_within_seconds
        return max(0.0, limit - (time.monotonic() - at))

    def undo_complete(self) -> None:
        """Take back the last Complete; an open item (untouched: the window checks) goes back first."""
        if self.last_completion is None:
            return
        queue, key, _at = self.last_completion
        cur = self.current
        lock = cur.lock if cur is not None else None

        def work() -> models.Claim:
            if lock is not None:
                self.operator.release(lock, UNDO_RELEASE)
            return self.operator.undo_complete(queue, key)

        def done(claim: models.Claim) -> None:
            if cur is not None:
                self._after_release(cur, emit=False)
            self.last_completion = None
            self._on_claimed(queue, claim)

        self._new_generation()
        self._run(work, done)

    def defer(self, until: dt.datetime, reason: str, note: str | None = None) -> None:
        """Give the open item back until `until` (deferred, then released)."""
        cur = self._require()
        if cur is None:
            return
        lock = cur.lock

        def done(deferral: models.Deferral) -> None:
            self._after_release(cur, emit=False)
            self.deferred.emit(deferral)

        self._run(
            lambda: self.operator.defer(lock, until, reason, note),
            done,
            retry=("defer", lambda: self.defer(until, reason, note)),
        )

    def escalate(self, reason: str) -> None:
        """Hand the open item to a supervisor, saying why (its draft discarded, as for a release)."""
        cur = self._require()
        if cur is None:
            return
        lock = cur.lock

        def done(_: Any) -> None:
            self._after_release(cur, emit=False)
            self.escalated.emit()

        self._run(lambda: self.operator.escalate(lock, reason), done, retry=("escalate", lambda: self.escalate(reason)))

    def can_escalate(self, queue: str | None) -> bool:
        """Does `queue` say how an item is handed to a supervisor (on_escalate)?"""
        return queue is not None and bool(self.config.queues[queue].on_escalate)

    def due_seconds(self, queue: str, claim: models.Claim) -> float | None:
        """Seconds from the claim to the item's due time (negative: overdue), on the database clock."""
        column = self.due_columns.get(queue)
        return durations.seconds_between(claim.lock.locked_at, claim.item.get(column)) if column else None

    def needs_note(self, action: str) -> bool:
        """Does `action` ("release", or an outcome's name) on the open item need a note?"""
        return self.current is not None and self.operator.needs_note(self.current.queue, action)

    def has_source(self, queue: str) -> bool:
        """Does `queue` name a source column (a scan or the source text to show beside the form)?"""
        return self.source_columns.get(queue) is not None

    def load_source(self) -> None:
        """Read the open item's source off the GUI thread (source_loaded): a file or URL may take a while."""
        cur = self.current
        if cur is None or not self.has_source(cur.queue):
            return
        queue, key, item = cur.queue, cur.lock.key, dict(cur.claim.item)

        def read_back(source: Any) -> None:
            now = self.current
            if now is not None and (now.queue, now.lock.key) == (queue, key):  # still the open item
                self.source_loaded.emit(source)

        self._run(lambda: self.operator.source(queue, item), read_back)

    def load_item_log(self) -> None:
        """Read the open item's notes and history (item_log_loaded)."""
        if self.current is None:
            return
        queue, key = self.current.queue, self.current.lock.key
        self._log = None  # until this read answers, a Save reads the log again rather than add to an older one
        self._run(lambda: self.operator.item_log(queue, key), self._item_log_read)

    def _item_log_read(self, log: services.ItemLog) -> None:
        cur = self.current
        if cur is not None and (cur.queue, cur.lock.key) == (log.queue, log.key):  # still the open item
            self._log = log
            self.item_log_loaded.emit(log)

    def add_note(self, text: str) -> None:
        """Add a note to the open item, then read its notes and history again."""
        if self.current is None:
            return
        queue, key = self.current.queue, self.current.lock.key
        self._run(lambda: self.operator.add_note(queue, key, text), lambda _: self.load_item_log())

    def _after_release(self, cur: Current, *, emit: bool = True) -> None:
        if self.journal is not None:
            self.journal.discard(self.database, cur.queue, cur.lock.key)
        self._close_item()
        if emit:
            self.released.emit()

    def extend(self, *, manual: bool = True) -> None:
        """Extend the lock (Extend button, or automatically while the user is working)."""
        cur = self._require() if manual else self.current
        if cur is None or self._extending:
            return
        self._extending = True
        lock, generation = cur.lock, self._generation

        def done(new: models.Lock) -> None:
            self._extending = False
            self._after_interruption()
            if generation != self._generation:
                return
            self._take_lock(cur, new)
            self._warned = False
            self.extended.emit(new)

        def on_error(exc: BaseException) -> None:
            self._extending = False
            if generation != self._generation:
                return
            if isinstance(exc, errors.ExtendLimitReached):
                self._capped = True  # stop trying automatically; the warning will still come
                if not manual:
                    return
            self._handle_error(exc, None)

        self.dispatcher.call(lambda: self.operator.extend(lock), done, on_error)

    @Slot()
    def check_now(self) -> None:
        """Ask the database whether the lock is still ours (periodic, see _check_interval; on a change the feed
        names; and when the user asks)."""
        cur = self.current
        if cur is None or self._checking:
            return  # one check at a time: a slow or dead database must not pile them up
        self._checking = True
        lock, generation = cur.lock, self._generation

        def done(new: models.Lock) -> None:
            self._checking = False
            self._after_interruption()  # the periodic check may be the first call to reach a new server
            if generation == self._generation:
                self._set_reachable(True, "")
                self._take_lock(cur, new)

        def on_error(exc: BaseException) -> None:
            self._checking = False
            if generation == self._generation:
                self._handle_error(exc, ("check", self.check_now))

        self.dispatcher.call(lambda: self.operator.check(lock), done, on_error)

    def _take_lock(self, cur: Current, lock: models.Lock) -> None:
        if self.current is cur:
            cur.lock, cur.received = lock, time.monotonic()

    def _require(self) -> Current | None:
        if self.current is None:
            self.failed.emit(errors.WorkbenchError(self.tr("no item is open")))
        return self.current

    def _lose(self, exc: errors.LockLost) -> None:
        """The lock is gone: leave edit mode, keep the draft (the journal still has it)."""
        self.lost = exc
        self._close_item()
        self.lock_lost.emit(exc)

    def _close_item(self) -> None:
        self._generation += 1
        self.current = None
        self._log = None
        self._tick.stop()
        self._check.stop()

    def stop(self) -> None:
        """The window closed: no more timers or retries. A Save still waiting for the database is
        not sent later behind the user's back; its edits are in the journal for the next start."""
        self._stopped = True
        for timer in (self._tick, self._check, self._retry, self._settings_poll, self._changes):
            timer.stop()
        for link in (self.relay, self.notices):
            if link is not None:
                link.stop()
        if self.notices is None and self._notice_client is not None:
            self._notice_client.close()  # found, never started
        self._retry_actions.clear()

    def discard_draft(self, queue: str, key: Any) -> None:
        if self.journal is not None:
            self.journal.discard(self.database, queue, key)
        if self.lost is not None and self.lost.key == key:
            self.lost = None

    # -- the timer -----------------------------------------------------------------------------------

    @Slot()
    def _on_tick(self) -> None:
        cur = self.current
        if cur is None:
            return
        left = cur.remaining()
        self.tick.emit(left)
        if left <= 0:
            self.check_now()  # the database says what happened (expired, or taken)
            return
        lock_seconds = self.lock_seconds(cur.queue)
        warn_at = self.settings.warn_at(lock_seconds)
        working = time.monotonic() - self._last_activity < self.settings.activity_window
        if self.settings.auto_extend and working and not self._capped and left < lock_seconds / 2:
            self.extend(manual=False)  # a slow worker keeps the item; an absent one loses it on time
        elif left <= warn_at and not self._warned:
            self._warned = True
            self.expiry_warning.emit(left)


def _database_id(config: model.Config) -> str:
    """Which database drafts belong to: its URL (which never holds a password)."""
    return config.database.url
