"""Seats: N simulated operator windows working one PostgreSQL queue at human speed, plus a few
supervisors' lock boards refreshing, directly and through PgBouncer in transaction pooling.

Each seat makes the calls an open window makes, through the same services (workbench.services): its own
Workbench opened from the config (its own pools and connection set-up), the start page (layout, the
user's locks and their summaries, the queue counts), then over and over: Next item (claim) and the
item's log, think (`--think`, 10-30 s; issue 42's stress figure was 2-5 s) with the lock checked every
`backstop_every` while its change feed is live (`check_every` while not), Save (its audit row added to
the log shown, not read again), Complete, and the start page's counts (next-after-complete off). All the
while it reads the change feed every `changes_every` (1 s) as a window does (class Window); supervisors take items away
and hand them to others every `--act-every`, and the round reports freshness: from a change's commit to
the affected window (or board) seeing it, p50/p99. A failed call waits a second, as the window's retry
does, and counts as an error. Seats start spread over `--ramp` seconds (0.2 s per seat); the measured
`--duration` begins 5 s after every seat has made its first claim (at the latest two ramps after the
planned one: a busy machine starts the windows more slowly than planned, and their start-up measured
would be the clients', not the steady state). Each seat's first claim (it also builds the statements
and opens the claim's connection) is reported apart from the rest.

The seats are cheap: no thread per window. Each of `--processes` processes keeps its windows as
schedules (generators that yield the time of their next step) in `--threads` heaps, one per
thread, and each thread runs its heap's due steps through the real services: a window's calls
always run on the same thread (it holds one claim connection, as a window does) and it never has
two calls in flight. How late the steps ran against their schedule is reported ("step
lag"), and so is the seats' own CPU: when the simulated windows use more than half of the cores,
or run their steps late, the run prints a warning and does not call the latencies the server's
(they then include the clients waiting for their own CPU).

For each N of `--seats` it prints p50/p99 of claim and Complete, the errors, the peak of server
connections (pg_stat_activity, sampled twice a second), the seats' own CPU, PgBouncer's, and the
server's CPU per seat-hour (its own process tree: the postmaster and its backends, ended ones
included), with the load average of the machine. Each round runs on a fresh copy of the database (built
once per pooler setting, then copied):
directly ("direct", where max_connections leaves room for two connections a window); through a
throwaway PgBouncer (pool_mode transaction, `pooler = "transaction"` in the config;
`--no-pgbouncer` leaves it out); at the first size also directly with the start page counted after
every Complete (`counts_every` 0, the reference: what a window asked of the server before issue 42;
`--no-reference` leaves it out) and with each window counting its start page for itself every
`counts_every` (as before issue 51, when the counts table was not shared; `--no-unshared` leaves it
out); then through `--dsn` when given (a pooler started by hand in front
of the same server; it must reach the database named `wb_seats`). With `--relay` each route's round
runs again with a change relay (`workbench relay`, services/relay.py) in a process of its own, read
through the same route: each window holds its own connection to it and reads the feed only when woken
(and every 30 s), each board every `changes_every` and when woken (at most every half of it); the relay's CPU
is reported. Straight to the server the relay listens for PostgreSQL's notices of the trail's rows
("direct, relay"), and runs once more reading the trail every 0.5 s instead ("direct, relay reading").

    python -m tests.benchmarks.seats_bench --seats 100 --duration 60
    python -m tests.benchmarks.seats_bench --seats 1000 --think 30,90 --processes 4 --durable --no-reference
    python -m tests.benchmarks.seats_bench --seats 100 --think 2,5
    python -m tests.benchmarks.seats_bench --seats 1000 --think 30,90 --processes 4 --durable --no-direct --relay
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import dataclasses
import datetime as dt
import heapq
import itertools
import json
import math
import multiprocessing
import os
import random
import sys
import threading
import time
from collections.abc import Callable, Generator
from typing import Any

import sqlalchemy as sa

from tests import servers
from tests.benchmarks import harness
from workbench import services
from workbench.config import model
from workbench.core import errors, models
from workbench.db import service
from workbench.services import relay, relay_client

DATABASE = "wb_seats"
BOARD_EVERY = 5.0  # seconds between a supervisor's board refreshes without the change feed (the console's timer)
# Seats start spread over this much time each: a window's start and first claim cost its process
# about 90 ms of CPU and the server about 40 ms (1,000 seats started within 100 s starved the server
# and PgBouncer of CPU on two cores).
RAMP_PER_SEAT = 0.2
SETTLE = 5.0  # seconds between the last window's first claim and the measured window
START_WAIT = 2.0  # the measured window begins at the latest this many ramps after the planned one
LEAD = 2.0  # seconds from starting a round's processes to its first window's start: the processes' start-up
# The server's statistics are sent at a transaction's end, at most every second: a round's last second is
# counted this long after it.
STATS_WAIT = 1.5


@dataclasses.dataclass
class SeatResult:
    """What the seats of one process saw within the measured window."""

    claim: list[float] = dataclasses.field(default_factory=list)
    first: list[float] = dataclasses.field(default_factory=list)  # each seat's first claim, measured or not
    slow: list[tuple[float, int]] = dataclasses.field(default_factory=list)  # later claims over 100 ms: s, seat
    complete: list[float] = dataclasses.field(default_factory=list)
    boards: list[float] = dataclasses.field(default_factory=list)
    other: list[float] = dataclasses.field(default_factory=list)  # lock checks, Saves, logs, start pages
    lag: list[float] = dataclasses.field(default_factory=list)  # how late each measured step started
    errors: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    nothing: int = 0  # claims that found nothing waiting
    client_cpu: float = 0.0  # CPU seconds of the seats' processes within the measured window
    looks: list[float] = dataclasses.field(default_factory=list)  # the change feed's reads
    # Freshness: from a change's commit (its audit row's time, the database clock: the start of its
    # transaction, so a little early) to the affected window seeing it in the feed, in seconds.
    fresh: list[float] = dataclasses.field(default_factory=list)  # a window: its item taken, handed to it
    fresh_board: list[float] = dataclasses.field(default_factory=list)  # a board reloaded with the change
    taken: int = 0  # items taken from a window (force-release, reassign) that it learned of from the feed
    handed: int = 0  # items handed to a window (reassign) that it learned of from the feed
    late: int = 0  # items taken that a window learned of from its own call (check, Save, Complete) first
    acts: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)  # supervisors'
    relay_drops: int = 0  # windows' connections to the relay that failed or dropped (each then tried again)

    def merge(self, other: SeatResult) -> None:
        self.claim += other.claim
        self.first += other.first
        self.slow += other.slow
        self.complete += other.complete
        self.boards += other.boards
        self.other += other.other
        self.lag += other.lag
        self.errors.update(other.errors)
        self.nothing += other.nothing
        self.client_cpu += other.client_cpu
        self.looks += other.looks
        self.fresh += other.fresh
        self.fresh_board += other.fresh_board
        self.taken += other.taken
        self.handed += other.handed
        self.late += other.late
        self.acts.update(other.acts)
        self.relay_drops += other.relay_drops


@dataclasses.dataclass(frozen=True)
class Plan:
    """One round as a worker process runs it (pickled to it)."""

    url: str
    seats: list[int]  # this process's seat numbers
    supervisors: int
    total: int  # seats of all processes (the ramp spreads them all)
    start: float  # time.time() when seat 0 starts
    measure_from: float  # time.time(): the end of the planned ramp (the measured window follows it, see below)
    end: float  # the planned end; the round's own clock (Shared) says when it really ends
    think: tuple[float, float]
    check_every: int
    counts_every: int
    pooler: str  # [database] pooler: "transaction" through PgBouncer
    backstop_every: int = model.AppConfig().backstop_every  # [app] backstop_every: the check's pace, feed live
    shared_counts: bool = True  # False: each window counts its start page itself (before issue 51)
    threads: int = 4  # threads of this process that run the windows' due steps
    changes_every: float = 1.0  # [app] changes_every: each window and board reads the change feed this often
    act_every: float = 10.0  # seconds between one supervisor's force-releases and reassigns (0: none)
    board_every: float = float(model.AppConfig().board_every)  # [app] board_every: a whole board read with the feed on
    relay: str | None = None  # host:port of a change relay: windows look when woken (and every backstop_every)
    listen: bool = True  # the relay listens for the notices where it can (direct); False: it reads by the clock


def config_for(plan: Plan) -> model.Config:
    app = model.AppConfig(
        check_every=plan.check_every,
        backstop_every=plan.backstop_every,
        counts_every=plan.counts_every,
        changes_every=int(plan.changes_every),
        next_after_complete=False,
    )
    return dataclasses.replace(harness.bench_config(plan.url, pooler=plan.pooler), app=app)


def _wait_until(at: float) -> None:
    time.sleep(max(0.0, at - time.time()))


# Set in each worker process: when the measured window starts and ends (time.time(); infinite until
# the main process sees every window started), and how many windows have made their first claim.
_window: Any = None
_started: Any = None
_wakes: Wakes | None = None  # this process's windows' connections to the change relay (Plan.relay)
_handles: dict[str, tuple[Scheduler, Schedule]] = {}  # a window's user -> where its schedule is stepped


def _window_of(plan: Plan) -> tuple[float, float]:
    """(start, end) of the measured window: the main process's, or the plan's (where none is shared)."""
    return (_window[0], _window[1]) if _window is not None else (plan.measure_from, plan.end)


def _measured(plan: Plan) -> bool:
    start, end = _window_of(plan)
    return start <= time.time() < end


def _going(plan: Plan) -> bool:
    """Whether the round still runs."""
    return time.time() < _window_of(plan)[1]


def _count_started() -> None:
    if _started is not None:
        with _started.get_lock():
            _started.value += 1


# A window's schedule: a generator that makes the window's calls for one step and yields the time
# (time.time()) its next step is due; it returns when the round is over.
Schedule = Generator[float, None, None]


class Timed:
    """Runs one service call and notes how long it took (in `into`, when within the measured window)."""

    def __init__(self, plan: Plan, result: SeatResult) -> None:
        self.plan, self.result = plan, result

    def __call__(self, into: list[float], call: Callable[..., Any], *args: Any) -> Any:
        started = time.perf_counter()
        value = call(*args)
        if _measured(self.plan):
            into.append(time.perf_counter() - started)
        return value


def _failed(result: SeatResult, plan: Plan, exc: BaseException) -> float:
    """Count a failed call; the time of the window's retry (a second later)."""
    if _measured(plan):
        result.errors[harness.describe(exc)] += 1
    return time.time() + 1.0


def committed_at(event: models.Event) -> float:
    """An audit row's time (the database clock, UTC) as time.time() tells it: the server runs here."""
    at = event.at if event.at.tzinfo is not None else event.at.replace(tzinfo=dt.UTC)
    return at.timestamp()


class Window:
    """What an open window does besides its user's calls: it reads the change feed every `changes_every`
    (gui/session.py look_for_changes), and on a change by someone else to its open item checks the lock
    (which says who took it and why), on an item handed to it reloads its items and its start page."""

    def __init__(self, plan: Plan, op: services.Operator, timed: Timed) -> None:
        self.plan, self.op, self.timed, self.result = plan, op, timed, timed.result
        every = plan.changes_every
        # With a relay the window's own look is the slow safety one, every backstop_every (gui/session.py
        # passes it to relay_link); a wake-up makes one at once.
        self.every = (float(plan.backstop_every) if plan.relay else float(every)) if every > 0 else math.inf
        self.next_look = time.time() + self.every
        self.woken = False  # set by the relay's connection (Wakes), read by the window's step
        self.relayed = False  # the relay's connection is up (Wakes): the feed is live
        self.lock: models.Lock | None = None  # the open item's
        self.handed: list[Any] = []  # keys handed to this user, not yet worked

    def check_every(self) -> float:
        """Seconds between two periodic lock checks now: backstop_every while the feed is live (the relay's
        connection up, or without a relay the window polls the feed), check_every otherwise (gui/session.py)."""
        # gui/session.py _check_interval's rule (without its tenth-of-the-lock cap: the bench's lock is long);
        # not imported from there, as that would load Qt into every seats process.
        plan = self.plan  # its [app] check_every and backstop_every (config_for)
        live = self.every < math.inf and (self.relayed or not plan.relay)
        return float(max(plan.check_every, plan.backstop_every) if live else plan.check_every)

    def wait(self, until: float) -> Generator[float, None, bool]:
        """Until `until`, reading the feed when due or woken; True as soon as the open item was taken away."""
        while True:
            due = min(until, self.next_look)
            yield due
            now = time.time()  # a wake-up (Scheduler.poke) may step the window before `due`
            if self.woken or self.next_look <= now:
                # A periodic timer: the next look one interval on (a late one does not make up the missed).
                self.next_look = now + self.every if self.woken else max(self.next_look + self.every, now)
                self.woken = False
                if self.look():
                    return True
            if until <= now or not _going(self.plan):  # the round's end steps it at once (Scheduler)
                return False

    def look(self) -> bool:
        """One read of the feed, and what the window does with it; True when the open item was taken."""
        events = self.timed(self.result.looks, self.op.changes)
        seen = time.time()
        user = self.op.user
        theirs = [e for e in events if e.actor != user]
        measured = _measured(self.plan)
        if measured:
            self.result.fresh += [seen - committed_at(e) for e in theirs if e.owner == user]
        handed = [e for e in theirs if e.kind is models.EventKind.CLAIM and e.owner == user]
        taken = False
        if self.lock is not None and any(e.key == str(self.lock.key) for e in theirs):
            try:
                self.lock = self.timed(self.result.other, self.op.check, self.lock)
            except errors.LockLost:
                self.lock, taken = None, True
                self.result.taken += measured
        if handed:
            self.result.handed += measured * len(handed)
            self.handed += [e.key for e in handed if self.lock is None or e.key != str(self.lock.key)]
            mine = self.timed(self.result.other, self.op.mine, harness.QUEUE)  # the resume panel
            self.timed(self.result.other, self.op.summaries, harness.QUEUE, [lock.key for lock in mine])
            self.timed(self.result.other, self.op.queue_counts)  # "Yours" on the start page
        return taken


def seat(plan: Plan, number: int, result: SeatResult) -> Schedule:
    """One operator's window, from its start to the end of the round."""
    rng = random.Random(number)
    yield plan.start + (plan.measure_from - plan.start) * number / max(1, plan.total)
    timed = Timed(plan, result)
    config = config_for(plan)
    wb: service.Workbench | None = None
    while wb is None and _going(plan):
        try:
            wb = service.Workbench.open(config)
            wb.counts.shared = plan.shared_counts
            op = services.Operator(wb, f"op{number:04d}")
            # The window's start (one read transaction): every queue bound, the user's locks and their
            # lines, the counts, where the change feed starts.
            op.opening()
        except Exception as exc:  # noqa: BLE001 - counted, as the window shows it and retries
            if wb is not None:
                wb.close()
                wb = None
            yield _failed(result, plan, exc)
    if wb is None:
        return
    window = Window(plan, op, timed)
    if _wakes is not None:
        _wakes.subscribe(op.user, False, window)
    try:
        first = True
        while _going(plan):
            try:
                first = yield from _one_item(plan, window, rng, number, first)
            except errors.LockLost:
                # Taken between two looks at the feed (its check, Save or Complete said so first): the
                # window says so and the user goes on.
                window.lock = None
                result.late += _measured(plan)
                first = False
            except Exception as exc:  # noqa: BLE001 - counted, as the window shows it and retries
                yield _failed(result, plan, exc)
    finally:
        wb.close()


def _one_item(plan: Plan, window: Window, rng: random.Random, number: int, first: bool) -> Generator[float, None, bool]:
    """Next item (or one handed to the user), think with the lock checked and the feed read, Save, Complete,
    the start page; False once claimed."""
    op, timed = window.op, window.timed
    result = timed.result
    lock = None
    while window.handed and lock is None:
        # An item a supervisor handed to this user: opened from the resume panel, as the banner offers.
        key = window.handed.pop(0)
        lock = next((m for m in op.mine(harness.QUEUE) if str(m.key) == key and not m.expired), None)
    if lock is None:
        started = time.perf_counter()
        try:
            claim = op.next_item(harness.QUEUE)
        except errors.NothingToClaim:
            result.nothing += _measured(plan)
            if first:
                _count_started()
            yield from window.wait(time.time() + rng.uniform(*plan.think))
            return False
        took = time.perf_counter() - started
        if first:
            # A window's first Next item also builds its statements and opens the claim's connection
            # (about 40 ms on a quiet server): reported apart, the steady state is the rest.
            result.first.append(took)
            _count_started()
        elif _measured(plan):
            result.claim.append(took)
            if took > 0.1:
                result.slow.append((took, number))
        lock = claim.lock
    window.lock = lock
    timed(result.other, op.item_log, harness.QUEUE, lock.key)  # the form shows the item's log
    # Thinking stops at the end of the round; the lock timer checks while the user reads, the feed
    # says at once when a supervisor takes the item away.
    think_until = time.time() + min(rng.uniform(*plan.think), max(0.0, _window_of(plan)[1] - time.time()))
    checked = time.time()
    while checked + window.check_every() < think_until:
        if (yield from window.wait(checked + window.check_every())):
            return False  # taken away: the window says so, the user goes on with the next item
        window.lock = timed(result.other, op.check, window.lock)
        checked = time.time()
    if (yield from window.wait(think_until)):
        return False
    assert window.lock is not None
    saved = timed(result.other, op.save_recorded, window.lock, {"priority": rng.randint(1, 4)})
    window.lock = lock = saved.lock
    if saved.event is None:  # the window adds the Save's audit row to the log it shows, else reads the log again
        timed(result.other, op.item_log, harness.QUEUE, lock.key)
    timed(result.complete, op.complete, lock)
    window.lock = None
    timed(result.other, op.queue_counts)  # the start page, shown after the Complete
    return False


def supervisor(plan: Plan, number: int, result: SeatResult) -> Schedule:
    """A supervisor's console (gui/supervisor.py): the items the feed names (read every `changes_every`) read
    again, the whole lock board only every `board_every` (without the feed: every BOARD_EVERY seconds); every
    `act_every` an item of the board shown taken from a window (force-release) or handed to another (reassign),
    alternately, and the feed looked at at once to show it."""
    rng = random.Random(-1 - number)
    yield plan.start
    timed = Timed(plan, result)
    every = float(plan.changes_every) if plan.changes_every > 0 else math.inf
    whole = plan.board_every if plan.changes_every > 0 else BOARD_EVERY
    # With a relay the console keeps its own look every `every` (gui/supervisor.py) and a wake-up half an
    # interval after its last look makes one sooner.
    poll, gap = every, (every / 2 if plan.relay else every)
    woken = Window.__new__(Window)  # only its flag: the relay's connection sets it
    woken.woken = False
    with service.Workbench.open(config_for(plan)) as wb:
        boss = services.Supervisor(wb, f"boss{number}")
        boss.changes()  # marks where the feed starts
        if _wakes is not None:
            _wakes.subscribe(boss.user, True, woken)
        looked = 0.0
        now = time.time()
        next_board, next_look = now, now + poll
        next_act = now + rng.uniform(0, plan.act_every) if plan.act_every > 0 else math.inf
        acts = itertools.count()
        page: services.BoardPage | None = None
        while _going(plan):
            try:
                due = min(next_board, next_look, next_act)
                yield due
                now = time.time()
                if woken.woken and now >= looked + gap:
                    woken.woken, next_look = False, now  # the console looks when woken, at most every `gap`
                elif woken.woken:
                    next_look = min(next_look, looked + gap)
                if next_look <= now:
                    next_look = max(next_look + poll, now)
                    looked = now
                    changed = timed(result.looks, boss.changes)
                    if changed and page is not None:
                        # The console brings its board up to date with what the feed named (gui/supervisor.py).
                        page = timed(result.boards, boss.board_changed, page, changed, [harness.QUEUE])
                        if _measured(plan):
                            shown = time.time()
                            result.fresh_board += [shown - committed_at(e) for e in changed]
                if next_board <= now:
                    page = timed(result.boards, boss.board, [harness.QUEUE])  # its timer: the whole board
                    next_board = time.time() + whole
                if next_act <= now:
                    next_act = max(next_act + plan.act_every, time.time())
                    if page is not None and _act(plan, boss, page, rng, next(acts), result):
                        next_look = time.time()  # the console looks at once after an action
            except Exception as exc:  # noqa: BLE001 - counted
                yield _failed(result, plan, exc)


def _act(
    plan: Plan, boss: services.Supervisor, page: services.BoardPage, rng: random.Random, turn: int, result: SeatResult
) -> bool:
    """Take a random operator's item of the board shown away, or hand it to another operator (alternately);
    whether something was tried."""
    held = [row for row in page.rows if row.owner.startswith("op")]
    if not held:
        return False
    lock = rng.choice(held)
    try:
        if turn % 2 == 0:
            boss.force_release(harness.QUEUE, lock.key, "seats_bench")
            result.acts["force-release"] += _measured(plan)
        else:
            to = f"op{rng.randrange(plan.total):04d}"
            if to == lock.owner:
                return False
            boss.reassign(harness.QUEUE, lock.key, to, "seats_bench")
            result.acts["reassign"] += _measured(plan)
    except errors.WorkbenchError:
        result.acts["raced"] += _measured(plan)  # the holder completed it meanwhile
    return True


class Wakes:
    """This process's windows' connections to the change relay, one each (as each window has its own), on
    one asyncio thread: a wake-up sets the window's flag and pokes its schedule, which then looks."""

    def __init__(self, address: str) -> None:
        self.host, self.port = relay_client.parse_address(address)
        self.loop = asyncio.new_event_loop()
        self.lost = 0  # connections that dropped (each window then polls until it is back)
        self._tasks: list[Any] = []  # held: the loop keeps only weak references to its tasks
        threading.Thread(target=self.loop.run_forever, daemon=True).start()

    def subscribe(self, user: str, every: bool, window: Window) -> None:
        self._tasks.append(asyncio.run_coroutine_threadsafe(self._connection(user, every, window), self.loop))

    def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        time.sleep(0.1)  # the cancellations run on the loop's thread
        self.loop.call_soon_threadsafe(self.loop.stop)

    async def _connection(self, user: str, every: bool, window: Window) -> None:
        scheduler, schedule = _handles[user]
        while True:
            try:
                reader, writer = await asyncio.open_connection(self.host, self.port)
                # A window greets with its config's queues, as gui/session.py does (the start page counts them all).
                queues = window.op.queues if hasattr(window, "op") else [harness.QUEUE]
                writer.write(relay_client.encode(relay_client.hello(user, queues, every)))
                window.relayed = True
                while line := await reader.readline():
                    if b'"wake"' in line:
                        window.woken = True
                        scheduler.poke(schedule)
                    if b'"counts"' in line and hasattr(window, "op"):  # as gui/session.py: the start page's figures
                        window.op.take_figures(relay_client.figures_of(json.loads(line)["counts"]))
            except OSError:
                pass
            window.relayed = False
            self.lost += 1
            await asyncio.sleep(1.0)


class Scheduler:
    """The windows of one process: their schedules in one heap by due time, stepped by a few threads.

    A step is taken from the heap when due and put back with its next time once it has run, so a
    window never has two calls in flight; how late each step starts is its lag. `poke` makes a
    schedule due now (a relay's wake-up): its entry in the heap is replaced, or, while it is being
    stepped, its next step is due at once."""

    def __init__(self, plan: Plan, lag: list[float]) -> None:
        self.plan, self.lag = plan, lag
        self._heap: list[tuple[float, int, Schedule]] = []
        self._order = itertools.count()
        self._cond = threading.Condition()
        self._live = 0  # schedules not yet ended (in the heap or being stepped)
        self._entry: dict[int, int] = {}  # id(schedule) -> the order of its live heap entry (others are stale)
        self._poked: set[int] = set()  # schedules poked while being stepped

    def add(self, schedule: Schedule) -> None:
        with self._cond:
            self._live += 1
        self._after(schedule)

    def poke(self, schedule: Schedule) -> None:
        with self._cond:
            sid = id(schedule)
            if sid not in self._entry:
                self._poked.add(sid)  # being stepped: due at once when it yields
                return
            order = next(self._order)
            self._entry[sid] = order
            heapq.heappush(self._heap, (time.time(), order, schedule))
            self._cond.notify()

    def _after(self, schedule: Schedule) -> None:
        """Run `schedule` up to its next step's time and put it back in the heap (or count it ended)."""
        try:
            due = next(schedule)
        except StopIteration:
            with self._cond:
                self._live -= 1
                self._poked.discard(id(schedule))
                self._cond.notify_all()
            return
        # Past the round's end a step does nothing but end its schedule: it is taken at the end, not a
        # board's or a feed's interval later (the round's processes would wait for it).
        due = min(due, _window_of(self.plan)[1])
        with self._cond:
            sid = id(schedule)
            if sid in self._poked:
                self._poked.discard(sid)
                due = min(due, time.time())
            order = next(self._order)
            self._entry[sid] = order
            heapq.heappush(self._heap, (due, order, schedule))
            self._cond.notify()

    def run(self) -> None:
        """A stepping thread: until every schedule has ended."""
        while True:
            with self._cond:
                while True:
                    if not self._heap and not self._live:
                        self._cond.notify_all()
                        return
                    now = time.time()
                    if self._heap and self._heap[0][0] <= now:
                        due, order, schedule = heapq.heappop(self._heap)
                        if self._entry.get(id(schedule)) != order:
                            continue  # replaced by a poke
                        del self._entry[id(schedule)]
                        break
                    self._cond.wait(self._heap[0][0] - now if self._heap else None)
            if _measured(self.plan):
                self.lag.append(now - due)
            self._after(schedule)


def _processes() -> multiprocessing.context.BaseContext:
    """Where each round's windows and relay run: processes forked from a server process that imported this
    module once (a spawned one imports workbench and SQLAlchemy anew: about half a second of CPU each, for
    every process of every round)."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([__spec__.name if __spec__ is not None else __name__])
    return context


def relay_main(plan: Plan, ready: Any) -> None:
    """The change relay's process (`workbench relay`): its port goes to `ready` once it listens."""
    with service.Workbench.open(config_for(plan)) as wb:
        wb.counts.shared = plan.shared_counts
        relay.run(relay.Watcher(wb, "relay"), "127.0.0.1", 0, relay.EVERY_SECONDS, ready=ready.put, listen=plan.listen)


def worker_main(plan: Plan, out: Any, window: Any = None, started: Any = None) -> None:
    """A process of seats (and supervisors): their schedules stepped by plan.threads threads; the merged
    result goes to `out`. `window`: the measured window (shared, set by the main process), `started`:
    the count of windows that made their first claim (shared)."""
    global _window, _started, _wakes  # noqa: PLW0603 - set once per worker process
    _window, _started = window, started
    _wakes = Wakes(plan.relay) if plan.relay else None
    results: list[SeatResult] = []
    lag: list[float] = []
    # A heap per thread, each window on one of them: its calls always run on the same thread, as a
    # window's calls mostly do on its own pool's one busy thread. The claim's connection is held per
    # thread (db/fastpath.py), so a window stepped by every thread would hold one on each.
    schedulers = [Scheduler(plan, lag) for _ in range(max(1, plan.threads))]
    for index, number in enumerate(plan.seats):
        results.append(SeatResult())
        schedule = seat(plan, number, results[-1])
        _handles[f"op{number:04d}"] = (schedulers[index % len(schedulers)], schedule)
        schedulers[index % len(schedulers)].add(schedule)
    for number in range(plan.supervisors):
        results.append(SeatResult())
        schedule = supervisor(plan, number, results[-1])
        _handles[f"boss{number}"] = (schedulers[number % len(schedulers)], schedule)
        schedulers[number % len(schedulers)].add(schedule)
    threads = [threading.Thread(target=scheduler.run, daemon=True) for scheduler in schedulers]
    for thread in threads:
        thread.start()
    # This process's CPU over the measured window: where the client side is the limit, it shows.
    while time.time() < _window_of(plan)[0]:
        time.sleep(0.05)
    cpu_from = time.process_time()
    _wait_until(_window_of(plan)[1])
    cpu = time.process_time() - cpu_from
    for thread in threads:
        thread.join(timeout=60)
    merged = SeatResult(client_cpu=cpu, lag=lag, relay_drops=_wakes.lost if _wakes is not None else 0)
    if _wakes is not None:
        _wakes.close()
    for result in results:
        merged.merge(result)
    out.put(merged)


# -- the server, seen from outside ----------------------------------------------------------------


class ConnectionWatch:
    """Samples the server's client connections to the database twice a second; keeps the peak."""

    def __init__(self, admin_url: str) -> None:
        self.engine = sa.create_engine(admin_url, pool_size=1)
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> ConnectionWatch:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.engine.dispose()

    def _run(self) -> None:
        stmt = sa.text("SELECT count(*) FROM pg_stat_activity WHERE datname = :db AND backend_type = 'client backend'")
        while not self._stop.wait(0.5):
            try:
                with self.engine.connect() as conn:
                    self.peak = max(self.peak, int(conn.execute(stmt, {"db": DATABASE}).scalar_one()))
            except sa.exc.DBAPIError:
                pass  # the server is full: the seats' errors say so


# -- a round ----------------------------------------------------------------------------------------


def statements_reset(admin_url: str) -> None:
    """Forget what pg_stat_statements counted so far (the measured window starts)."""
    engine = sa.create_engine(admin_url, poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:
            conn.exec_driver_sql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
            conn.exec_driver_sql("SELECT pg_stat_statements_reset()")
            conn.commit()
    finally:
        engine.dispose()


def statements_top(admin_url: str, window_hours: float, top: int = 12) -> list[str]:
    """The statements of the benchmark's database that took the server's time (pg_stat_statements since
    the reset), most first: ms of execution per window-hour, calls per window-hour, mean ms, the text."""
    engine = sa.create_engine(admin_url, poolclass=sa.pool.NullPool)
    stmt = sa.text(
        "SELECT s.query, s.calls, s.plans, s.total_exec_time + s.total_plan_time AS ms, s.total_plan_time AS plan_ms "
        "FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = :db ORDER BY 4 DESC"
    )
    try:
        with engine.connect() as conn:
            rows = conn.execute(stmt, {"db": DATABASE}).all()
    finally:
        engine.dispose()
    total = sum(row.ms for row in rows) or 1.0
    planning = sum(row.plan_ms for row in rows)
    calls = sum(row.calls for row in rows)
    head = (
        f"statements: {total / window_hours:.0f} ms of execution and planning per window-hour in all "
        f"({planning / window_hours:.0f} ms planning), {calls / window_hours:.0f} calls per window-hour, "
        f"{len(rows)} kinds"
    )
    lines = [head]
    dump = os.environ.get("SEATS_BENCH_STATEMENTS")  # a file for every statement's whole text, to read later
    if dump:
        with open(dump, "a", encoding="utf-8") as out:
            for row in rows:
                out.write(
                    f"{row.ms / window_hours:.1f} ms/window-h, {row.calls / window_hours:.0f} calls: {row.query}\n\n"
                )
    for row in rows[:top]:
        text = " ".join(row.query.split())[:150]
        lines.append(
            f"  {row.ms / window_hours:7.1f} ms/window-h {row.ms / total:4.0%}  {row.calls / window_hours:7.0f} "
            f"calls/window-h  {row.ms / max(1, row.calls):.3f} ms (plan {row.plan_ms / max(1, row.calls):.3f} ms, "
            f"{row.plans / max(1, row.calls):.0%} planned)  {text}"
        )
    return lines


def server_transactions(admin_url: str) -> float:
    """The server's transactions in the benchmark's database so far (pg_stat_database: committed and
    rolled back; read in a transaction of its own, so the figure is the statistics' latest)."""
    engine = sa.create_engine(admin_url, poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:
            conn.exec_driver_sql("SELECT pg_stat_clear_snapshot()")
            row = conn.execute(
                sa.text("SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = :db"),
                {"db": DATABASE},
            ).scalar()
    finally:
        engine.dispose()
    return float(row or 0)


def bouncer_totals(bouncer: servers.PgBouncer) -> tuple[float, float, float]:
    """PgBouncer's totals for the database so far: transactions, their time on a server session and the
    clients' wait for a session (both in microseconds; SHOW STATS)."""
    for row in bouncer.console("SHOW STATS"):
        if row[0] == DATABASE:
            return float(row[1]), float(row[5]), float(row[7])
    return 0.0, 0.0, 0.0


def run_round(
    target: harness.Target,
    url: str,
    seats: int,
    args: argparse.Namespace,
    pooler: str = "none",
    bouncer: servers.PgBouncer | None = None,
) -> tuple[SeatResult, dict[str, float]]:
    """`seats` seats on `url` for args.duration seconds; the merged result and the server's figures."""
    ramp = args.ramp if args.ramp is not None else max(5.0, seats * RAMP_PER_SEAT)
    start = time.time() + args.lead
    processes = max(1, min(args.processes, seats))
    plan_of = [
        Plan(
            url=url,
            seats=list(range(index, seats, processes)),
            supervisors=args.supervisors if index == 0 else 0,
            total=seats,
            start=start,
            measure_from=start + ramp,
            end=start + ramp + args.duration,
            think=args.think,
            check_every=args.check_every,
            backstop_every=args.backstop_every,
            counts_every=args.counts_every,
            changes_every=args.changes_every,
            act_every=args.act_every,
            pooler=pooler,
            shared_counts=args.shared_counts,
            threads=args.threads,
            listen=getattr(args, "relay_listens", True),
        )
        for index in range(processes)
    ]
    context = _processes()
    out = context.Queue()
    relay_proc = None
    if getattr(args, "with_relay", False):
        # The site's one relay (`workbench relay`), reading the trail through the same route as the windows.
        ready = context.Queue()
        relay_proc = context.Process(target=relay_main, args=(plan_of[0], ready), daemon=True)
        relay_proc.start()
        address = f"127.0.0.1:{ready.get(timeout=120)}"
        plan_of = [dataclasses.replace(plan, relay=address) for plan in plan_of]
    # The measured window begins once every window has made its first claim (its start and first claim
    # cost its process about 170 ms of CPU: on a busy machine they take longer than the planned ramp,
    # and measured they would be the clients' start-up, not the steady state), after --settle seconds.
    window = context.RawArray("d", [math.inf, math.inf])
    started = context.Value("i", 0)
    workers = [context.Process(target=worker_main, args=(plan, out, window, started), daemon=True) for plan in plan_of]
    assert target.server is not None
    admin_url = target.url(target.admin_database, with_password=True)
    own_server = harness.ServerCpu(target)  # this benchmark's server's process tree, nothing else

    def cpu_now() -> tuple[float, float, float]:
        """CPU seconds so far of the server (NaN where it cannot be told), of PgBouncer and of the relay."""
        server = own_server.seconds()
        pooler = harness.process_tree_cpu_seconds(bouncer.proc.pid) if bouncer is not None else math.nan
        relayed = harness.process_tree_cpu_seconds(relay_proc.pid or 0) if relay_proc is not None else math.nan
        return (math.nan if server is None else server), pooler, relayed

    with ConnectionWatch(admin_url) as watch:
        for worker in workers:
            worker.start()
        _wait_until(start + ramp)
        give_up = start + ramp + max(30.0, START_WAIT * ramp)
        while started.value < seats and time.time() < give_up:
            time.sleep(0.05)
        not_started = seats - started.value
        measure_from = time.time() + args.settle
        window[1] = measure_from + args.duration
        window[0] = measure_from
        _wait_until(measure_from)
        if args.statements:
            statements_reset(admin_url)
        xacts_before = server_transactions(admin_url)
        cpu_before = cpu_now()
        pooled_before = bouncer_totals(bouncer) if bouncer is not None else None
        load_from = os.getloadavg()[0]
        _wait_until(measure_from + args.duration)
        cpu, pooler_cpu, relay_cpu = (after - before for after, before in zip(cpu_now(), cpu_before, strict=True))
        load_to = os.getloadavg()[0]
        time.sleep(args.stats_wait)
        xacts = server_transactions(admin_url) - xacts_before
        statements = statements_top(admin_url, seats * args.duration / 3600, args.top) if args.statements else []
        pooled = (
            [after - before for after, before in zip(bouncer_totals(bouncer), pooled_before, strict=True)]
            if bouncer is not None and pooled_before is not None
            else None
        )
        merged = SeatResult()
        for _ in workers:
            merged.merge(out.get(timeout=120))
        for worker in workers:
            worker.join(timeout=30)
    if relay_proc is not None:
        relay_proc.terminate()
        relay_proc.join(timeout=30)
    for line in statements:
        print(line, flush=True)
    window = args.duration
    through = {"pooler: wait per xact ms": math.nan, "pooler: xact ms": math.nan}  # direct: no pooler
    if pooled is not None and pooled[0]:
        # Where the pool of server sessions is the limit, the wait shows; the rest is the server's.
        through = {
            "pooler: wait per xact ms": pooled[2] / pooled[0] / 1000,
            "pooler: xact ms": pooled[1] / pooled[0] / 1000,
        }
    return merged, {
        **through,
        "peak connections": float(watch.peak),
        "server CPU s per seat-hour": cpu / (seats * window / 3600),
        "server transactions per seat-hour": xacts / (seats * window / 3600),
        "pooler transactions per seat-hour": pooled[0] / (seats * window / 3600) if pooled is not None else math.nan,
        "server CPU cores": cpu / window,
        "PgBouncer CPU cores": pooler_cpu / window,
        "relay CPU cores": relay_cpu / window,
        "start-up beyond the ramp s": measure_from - args.settle - (start + ramp),
        "windows not started": float(not_started),
        "load at start": load_from,
        "load at end": load_to,
        "measured s": window,
    }


def figures(result: SeatResult, server: dict[str, float], window: float) -> dict[str, float]:
    ms = 1000.0
    return {
        "claims/s": len(result.claim) / window,
        "claim p50 ms": harness.percentile(result.claim, 50) * ms,
        "claim p99 ms": harness.percentile(result.claim, 99) * ms,
        "claims over 100 ms": float(len(result.slow)),
        "first claim p50 ms": harness.percentile(result.first, 50) * ms,
        "first claim p99 ms": harness.percentile(result.first, 99) * ms,
        "complete p50 ms": harness.percentile(result.complete, 50) * ms,
        "complete p99 ms": harness.percentile(result.complete, 99) * ms,
        "board p99 ms": harness.percentile(result.boards, 99) * ms,
        "other calls p99 ms": harness.percentile(result.other, 99) * ms,
        "errors": float(sum(result.errors.values())),
        "nothing to claim": float(result.nothing),
        "client CPU cores": result.client_cpu / window,
        "step lag p99 ms": harness.percentile(result.lag, 99) * ms,
        "feed read p50 ms": harness.percentile(result.looks, 50) * ms,
        "feed read p99 ms": harness.percentile(result.looks, 99) * ms,
        "window told p50 s": harness.percentile(result.fresh, 50),
        "window told p99 s": harness.percentile(result.fresh, 99),
        "window told max s": max(result.fresh, default=math.nan),
        "board shown p50 s": harness.percentile(result.fresh_board, 50),
        "board shown p99 s": harness.percentile(result.fresh_board, 99),
        "force-releases": float(result.acts["force-release"]),
        "reassigns": float(result.acts["reassign"]),
        "windows told (taken + handed)": float(result.taken + result.handed),
        "taken, told by a call first": float(result.late),
        "relay connections dropped": float(result.relay_drops),
        **server,
    }


# Beyond these the latencies measured are the clients' as much as the server's.
CLIENT_SHARE = 0.5  # of the machine's cores, used by the simulated windows
LAG_LIMIT = 1.0  # seconds a window's step started late (p99): the clients could not keep the pace


def verdict(name: str, row: dict[str, float]) -> str:
    """Whether the round's latencies may be called the server's; a warning when the clients were the limit."""
    cores = os.cpu_count() or 1
    used = row["client CPU cores"]
    lag = row["step lag p99 ms"] / 1000
    why = []
    if used > CLIENT_SHARE * cores:
        why.append(f"the simulated windows used {used:.2f} of the {cores} cores (more than {CLIENT_SHARE:.0%})")
    if lag > LAG_LIMIT:
        why.append(f"their steps ran up to {lag:.1f} s late (p99)")
    if row.get("windows not started", 0.0) > 0:
        why.append(f"{row['windows not started']:.0f} windows had not made their first claim when it was measured")
    if why:
        return (
            f"WARNING {name}: {'; '.join(why)}: its latencies include the clients waiting for their own CPU, "
            "they are not the server's"
        )
    return f"{name}: latencies are the server's (the simulated windows used {used:.2f} of {cores} cores)"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m tests.benchmarks.seats_bench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--seats", default="100,300,1000", help="comma-separated seat counts (default 100,300,1000)")
    parser.add_argument("--duration", type=float, default=60.0, help="measured seconds per round, after the ramp")
    parser.add_argument(
        "--ramp",
        type=float,
        help=f"seconds over which the seats start, unmeasured (default {RAMP_PER_SEAT} per seat, >= 5)",
    )
    parser.add_argument(
        "--settle",
        type=float,
        default=SETTLE,
        help=f"seconds between the last window's first claim and the measured window (default {SETTLE})",
    )
    lead = f"seconds from starting a round's processes to its first window's start (default {LEAD})"
    parser.add_argument("--lead", type=float, default=LEAD, help=lead)
    stats = f"seconds after the measured window before the server's transactions are read (default {STATS_WAIT})"
    parser.add_argument("--stats-wait", type=float, default=STATS_WAIT, help=stats)
    parser.add_argument("--url", help="admin URL of an existing PostgreSQL (default: a throwaway server)")
    parser.add_argument(
        "--dsn",
        help="another URL of the same database through a transaction pooler started by hand; last in a pass",
    )
    parser.add_argument(
        "--no-pgbouncer",
        dest="pgbouncer",
        action="store_false",
        help="leave out the rounds through a throwaway PgBouncer (pool_mode transaction) in front of the server",
    )
    parser.add_argument(
        "--no-direct", dest="direct", action="store_false", help="leave out the rounds straight to the server"
    )
    parser.add_argument("--pool-size", type=int, default=20, help="PgBouncer's default_pool_size (default 20)")
    parser.add_argument(
        "--durable", action="store_true", help="the throwaway server at its default durability (commits flushed)"
    )
    parser.add_argument("--rows", type=int, default=50_000, help="waiting rows in each round's fresh table")
    parser.add_argument(
        "--passes",
        type=int,
        default=1,
        help="run the rounds of every size and route this many times, each pass in the reverse order of the one "
        "before (sizes and routes interleaved: a drift of the machine does not grow with the size)",
    )
    parser.add_argument("--processes", type=int, default=2, help="processes the seats run in")
    parser.add_argument(
        "--threads", type=int, default=4, help="threads per process that run the windows' due steps (default 4)"
    )
    parser.add_argument(
        "--supervisors",
        type=int,
        default=3,
        help="lock boards, as the console keeps them (feed, whole every board_every)",
    )
    parser.add_argument(
        "--think",
        default="10,30",
        help="seconds a seat thinks between claim and Save: min,max (default 10,30: a brisk clerk; "
        "2,5 is issue 42's stress figure)",
    )
    parser.add_argument("--check-every", type=int, default=model.AppConfig().check_every)
    parser.add_argument(
        "--backstop-every",
        type=int,
        default=model.AppConfig().backstop_every,
        help="seconds between a window's lock checks while its change feed is live ([app] backstop_every)",
    )
    parser.add_argument("--counts-every", type=int, default=model.AppConfig().counts_every)
    parser.add_argument(
        "--changes-every",
        type=int,
        default=model.AppConfig().changes_every,
        help="seconds between a window's (and a board's) reads of the change feed ([app] changes_every)",
    )
    parser.add_argument(
        "--act-every",
        type=float,
        default=5.0,
        help="seconds between one supervisor's force-releases and reassigns, alternately (0: none; default 5)",
    )
    parser.add_argument(
        "--no-unshared",
        dest="unshared",
        action="store_false",
        help="leave out the round (at the first size) whose windows count their start page each for itself",
    )
    parser.add_argument(
        "--no-reference",
        dest="reference",
        action="store_false",
        help="leave out the reference round (at the first size) whose start page counts after every Complete",
    )
    parser.add_argument(
        "--relay",
        action="store_true",
        help="run each route's round again with a change relay (`workbench relay`): windows look when woken and "
        "every --backstop-every, not every changes_every",
    )
    parser.add_argument(
        "--statements",
        action="store_true",
        help="load pg_stat_statements into the throwaway server and print where its time went in each round",
    )
    parser.add_argument("--top", type=int, default=12, help="with --statements: how many statements to print")
    parser.add_argument(
        "--only-relay",
        action="store_true",
        help="with --relay: run only the rounds with a relay (not each route's round without one)",
    )
    parser.add_argument(
        "--max-connections",
        type=int,
        default=1000,
        help="max_connections of the throwaway server (default 1000); direct rounds that would not fit are not run",
    )
    args = parser.parse_args(argv)
    args.seat_counts = [int(n) for n in args.seats.split(",") if n.strip()]
    low, high = (float(x) for x in args.think.split(","))
    args.think = (low, high)
    return args


def direct_fits(seats: int, supervisors: int, limit: int) -> bool:
    """Whether `seats` windows connected straight to the server stay within its max_connections: a
    working window holds 2 (its main pool's one and the claim's), more while it starts."""
    return 2 * seats + supervisors + 10 <= limit


def fresh_copy(target: harness.Target, rows: int, pooler: str, built: set[str]) -> str:
    """A round's fresh database (DATABASE): a copy of the one built for `pooler` the first time it is asked
    for, with its rows, workbench's tables and indexes, and its statistics (a copy takes a fraction of a
    build's time: rounds of a size are compared on the same rows); its workbench URL."""
    template = f"{DATABASE}_{pooler}"
    if pooler not in built:
        harness.build_workbench_db(target, template, rows, pooler=pooler)
        built.add(pooler)
    return target.fresh(DATABASE, template=template)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    limit = args.max_connections
    options = f"-c max_connections={limit}"
    if args.statements:
        # Planning counted too: through PgBouncer (no prepared statements before 1.21) each call is planned.
        options += " -c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track_planning=on"
    target = harness.Target.open("postgresql", args.url, durable=args.durable, options=options)
    columns: dict[str, dict[str, float]] = {}
    lines: list[str] = []
    bouncer: servers.PgBouncer | None = None
    try:
        print(f"# seats_bench on {target.description}; max_connections {limit}; {harness.machine_load()}", flush=True)
        # (name, another URL or None for direct, counts_every, pooler)
        routes: list[tuple[str, str | None, int, str]] = (
            [("direct", None, args.counts_every, "none")] if args.direct else []
        )
        if args.pgbouncer and target.server is not None and target.server.host in ("127.0.0.1", "localhost"):
            # On this machine (a throwaway server, or --url on loopback that trusts its logins).
            bouncer = servers.start_pgbouncer(
                target.server, pool_size=args.pool_size, in_turn=False, max_clients=4 * max(args.seat_counts) + 100
            )
            routes.append(("PgBouncer", bouncer.url(DATABASE), args.counts_every, "transaction"))
            print(f"# PgBouncer {bouncer.port}: pool_mode transaction, default_pool_size {args.pool_size}", flush=True)
        if args.dsn:
            routes.append(("dsn", args.dsn, args.counts_every, "transaction"))
        runs: list[tuple[int, tuple[str, str | None, int, str]]] = []
        built: set[str] = set()  # the pooler settings whose database has been built (fresh_copy)
        for index, seats in enumerate(args.seat_counts):
            # The start page counted after every Complete, as before issue 42: at the first size only.
            reference = [("direct, counts each time", None, 0, "none")] if args.reference and index == 0 else []
            # Each window counting for itself every counts_every, as before issue 51: at the first size only.
            unshared = (
                [("direct, counts per window", None, args.counts_every, "none")] if args.unshared and index == 0 else []
            )
            # Straight to the server the relay listens for the trail's notices: there it also runs reading every
            # 0.5 s (as through the pooler), the reference in the same run.
            relayed = (
                [
                    (f"{route}, relay{suffix}", dsn, every, pooler)
                    for route, dsn, every, pooler in routes
                    for suffix in ([" reading", ""] if pooler == "none" else [""])
                ]
                if args.relay
                else []
            )
            unrelayed = [] if args.relay and args.only_relay else routes
            runs += [(seats, way) for way in unrelayed + relayed + unshared + reference]
        # Sizes and routes interleaved: each pass runs every one's round, the next pass in the reverse order,
        # so that a drift of the machine (other work, a warmer cache) does not grow with the size.
        for number in range(args.passes):
            for seats, (route, dsn, counts_every, pooler) in runs if number % 2 == 0 else runs[::-1]:
                name = f"{seats} {route}" + (f" (pass {number + 1})" if args.passes > 1 else "")
                if dsn is None and not direct_fits(seats, args.supervisors, limit):
                    lines.append(
                        f"{name}: not run, {seats} windows need about {2 * seats} connections (max_connections {limit})"
                    )
                    continue
                url = fresh_copy(target, args.rows, pooler, built)
                round_args = argparse.Namespace(
                    **{
                        **vars(args),
                        "counts_every": counts_every,
                        "shared_counts": "per window" not in route,
                        "with_relay": ", relay" in route,
                        "relay_listens": not route.endswith(" reading"),
                    }
                )
                result, server = run_round(
                    target, dsn or url, seats, round_args, pooler, bouncer if route.startswith("PgBouncer") else None
                )
                columns[name] = figures(result, server, server["measured s"])
                lines.append(verdict(name, columns[name]))
                lines += [f"{name}: {count} x {what}" for what, count in result.errors.most_common(5)]
                if result.slow:
                    slowest = ", ".join(f"{s * 1000:.0f} ms (seat {seat})" for s, seat in sorted(result.slow)[-5:])
                    lines.append(f"{name}: the slowest claims after each seat's first: {slowest}")
                print(f"# {name} done; {harness.machine_load()}", flush=True)
    finally:
        if bouncer is not None:
            bouncer.stop()
        target.close()
    print(harness.table(columns))
    for line in lines:
        print(line)
    print(f"machine: {harness.machine_load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
