"""Seats: N simulated operator windows working one PostgreSQL queue at human speed, plus a few
supervisors' lock boards refreshing.

Each seat does what an open window does, through the same services (workbench.services): its own
Workbench opened from the config (its own pools and connection set-up), the start page (layout,
the user's locks, the queue counts), then over and over: Next item (claim), think 2-5 s with the
lock checked every `check_every`, Save, Complete, and the start page's counts again
(next-after-complete off: the costly case of issue 42). A failed call waits a second, as the
window's retry does, and counts as an error. Seats run as threads in `--processes` processes and
start spread over `--ramp` seconds (0.1 s per seat); only the `--duration` after that is measured.

For each N of `--seats` it prints p50/p99 of claim and Complete, the errors, the peak of server
connections (pg_stat_activity, sampled twice a second) and the server's CPU per seat-hour (from
/proc: the postmaster of this port and its children, ended ones included). Each round runs on a
fresh copy of the table: directly ("direct"); directly with the start page counted after every
Complete (`counts_every` 0, the reference: what a window asked of the server before issue 42;
`--no-reference` leaves it out); then through `--dsn` when given (e.g. a PgBouncer started by hand
in front of the same server; it must reach the database named `wb_seats`).

    python -m tests.benchmarks.seats_bench --seats 100 --duration 60
    python -m tests.benchmarks.seats_bench --seats 100,300,1000 --max-connections 2100
    python -m tests.benchmarks.seats_bench --url postgresql+psycopg://postgres@127.0.0.1:5432/postgres \\
        --dsn postgresql+psycopg://postgres@127.0.0.1:6432/wb_seats
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import multiprocessing
import os
import random
import sys
import threading
import time
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from tests.benchmarks import harness
from workbench import services
from workbench.config import model
from workbench.core import errors
from workbench.db import service

DATABASE = "wb_seats"
BOARD_EVERY = 5.0  # seconds between a supervisor's board refreshes
# Seats start spread over this much time each (a window's start costs its process ~80 ms of CPU:
# 300 seats started within 15 s kept two cores busy with starting alone).
RAMP_PER_SEAT = 0.1


@dataclasses.dataclass
class SeatResult:
    """What the seats of one process saw within the measured window."""

    claim: list[float] = dataclasses.field(default_factory=list)
    complete: list[float] = dataclasses.field(default_factory=list)
    boards: list[float] = dataclasses.field(default_factory=list)
    errors: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    nothing: int = 0  # claims that found nothing waiting

    def merge(self, other: SeatResult) -> None:
        self.claim += other.claim
        self.complete += other.complete
        self.boards += other.boards
        self.errors.update(other.errors)
        self.nothing += other.nothing


@dataclasses.dataclass(frozen=True)
class Plan:
    """One round as a worker process runs it (pickled to it)."""

    url: str
    seats: list[int]  # this process's seat numbers
    supervisors: int
    total: int  # seats of all processes (the ramp spreads them all)
    start: float  # time.time() when seat 0 starts
    measure_from: float  # time.time(): the end of the ramp
    end: float
    think: tuple[float, float]
    check_every: int
    counts_every: int


def config_for(url: str, check_every: int, counts_every: int) -> model.Config:
    app = model.AppConfig(check_every=check_every, counts_every=counts_every, next_after_complete=False)
    return dataclasses.replace(harness.bench_config(url), app=app)


def _wait_until(at: float) -> None:
    time.sleep(max(0.0, at - time.time()))


def _measured(plan: Plan) -> bool:
    return plan.measure_from <= time.time() < plan.end


def _failed(result: SeatResult, plan: Plan, exc: BaseException) -> None:
    if _measured(plan):
        result.errors[harness.describe(exc)] += 1
    time.sleep(1.0)  # the window's first retry comes after a second


def seat(plan: Plan, number: int, result: SeatResult) -> None:
    """One operator's window, from its start to the end of the round."""
    rng = random.Random(number)
    _wait_until(plan.start + (plan.measure_from - plan.start) * number / max(1, plan.total))
    config = config_for(plan.url, plan.check_every, plan.counts_every)
    wb: service.Workbench | None = None
    while wb is None and time.time() < plan.end:
        try:
            wb = service.Workbench.open(config)
            op = services.Operator(wb, f"op{number:04d}")
            op.layout(harness.QUEUE)  # the window's start: bind the queue, the user's locks, the counts
            op.mine(harness.QUEUE)
            op.queue_counts()
        except Exception as exc:  # noqa: BLE001 - counted, as the window shows it and retries
            if wb is not None:
                wb.close()
                wb = None
            _failed(result, plan, exc)
    if wb is None:
        return
    try:
        while time.time() < plan.end:
            try:
                _one_item(plan, op, rng, result)
            except Exception as exc:  # noqa: BLE001 - counted, as the window shows it and retries
                _failed(result, plan, exc)
    finally:
        wb.close()


def _one_item(plan: Plan, op: services.Operator, rng: random.Random, result: SeatResult) -> None:
    started = time.perf_counter()
    try:
        claim = op.next_item(harness.QUEUE)
    except errors.NothingToClaim:
        result.nothing += _measured(plan)
        time.sleep(rng.uniform(*plan.think))
        return
    if _measured(plan):
        result.claim.append(time.perf_counter() - started)
    lock, checked = claim.lock, time.monotonic()
    think_until = time.monotonic() + rng.uniform(*plan.think)
    while (left := think_until - time.monotonic()) > 0:  # the lock timer checks while the user reads
        time.sleep(min(left, max(0.0, checked + plan.check_every - time.monotonic())))
        if time.monotonic() - checked >= plan.check_every:
            lock, checked = op.check(lock), time.monotonic()
    lock = op.save(lock, {"priority": rng.randint(1, 4)})
    started = time.perf_counter()
    op.complete(lock)
    if _measured(plan):
        result.complete.append(time.perf_counter() - started)
    op.queue_counts()  # the start page, shown after the Complete


def supervisor(plan: Plan, number: int, result: SeatResult) -> None:
    """A supervisor's lock board, refreshed every BOARD_EVERY seconds."""
    _wait_until(plan.start)
    with service.Workbench.open(config_for(plan.url, plan.check_every, plan.counts_every)) as wb:
        boss = services.Supervisor(wb, f"boss{number}")
        while time.time() < plan.end:
            started = time.perf_counter()
            try:
                boss.board([harness.QUEUE])
                if _measured(plan):
                    result.boards.append(time.perf_counter() - started)
            except Exception as exc:  # noqa: BLE001 - counted
                _failed(result, plan, exc)
            time.sleep(BOARD_EVERY)


def worker_main(plan: Plan, out: Any) -> None:
    """A process of seats (and supervisors): one thread each; the merged result goes to `out`."""
    results: list[SeatResult] = []
    threads = []
    for number in plan.seats:
        results.append(SeatResult())
        threads.append(threading.Thread(target=seat, args=(plan, number, results[-1]), daemon=True))
    for number in range(plan.supervisors):
        results.append(SeatResult())
        threads.append(threading.Thread(target=supervisor, args=(plan, number, results[-1]), daemon=True))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=max(1.0, plan.end - time.time() + 60))
    merged = SeatResult()
    for result in results:
        merged.merge(result)
    out.put(merged)


# -- the server, seen from outside ----------------------------------------------------------------


def server_cpu_seconds(port: int) -> float:
    """CPU seconds (user + system) of the PostgreSQL listening on `port` on this machine: its
    postmaster's own and its ended children's, plus its live children's; the whole machine's
    postgres processes (harness.server_cpu_seconds) where the postmaster is not found here."""
    stats: dict[str, list[str]] = {}  # pid -> the fields of /proc/pid/stat after the name
    matching = set()  # the postmaster, and backends just forked that still carry its command line
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            text = (proc / "stat").read_text()
        except OSError:
            continue  # ended meanwhile
        stats[proc.name] = text[text.rindex(")") + 2 :].split()
        if argv and argv[0].endswith(b"postgres") and str(port).encode() in argv and b"-p" in argv:
            matching.add(proc.name)
    postmaster = next((pid for pid in matching if stats[pid][1] not in matching), None)
    if postmaster is None:
        return harness.server_cpu_seconds()
    total = sum(int(field) for field in stats[postmaster][11:15])  # utime, stime, cutime, cstime
    total += sum(sum(int(field) for field in rest[11:13]) for rest in stats.values() if rest[1] == postmaster)
    return total / os.sysconf("SC_CLK_TCK")


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


def run_round(
    target: harness.Target, url: str, seats: int, args: argparse.Namespace
) -> tuple[SeatResult, dict[str, float]]:
    """`seats` seats on `url` for args.duration seconds; the merged result and the server's figures."""
    ramp = args.ramp if args.ramp is not None else max(5.0, seats * RAMP_PER_SEAT)
    start = time.time() + 2.0
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
            counts_every=args.counts_every,
        )
        for index in range(processes)
    ]
    context = multiprocessing.get_context("spawn")
    out = context.Queue()
    workers = [context.Process(target=worker_main, args=(plan, out), daemon=True) for plan in plan_of]
    assert target.server is not None
    admin_url = target.url(target.admin_database, with_password=True)
    with ConnectionWatch(admin_url) as watch:
        for worker in workers:
            worker.start()
        _wait_until(start + ramp)
        cpu_before = server_cpu_seconds(target.server.port)
        _wait_until(start + ramp + args.duration)
        cpu = server_cpu_seconds(target.server.port) - cpu_before
        merged = SeatResult()
        for _ in workers:
            merged.merge(out.get(timeout=120))
        for worker in workers:
            worker.join(timeout=30)
    window = args.duration
    return merged, {
        "peak connections": float(watch.peak),
        "server CPU s per seat-hour": cpu / (seats * window / 3600),
        "measured s": window,
    }


def figures(result: SeatResult, server: dict[str, float], window: float) -> dict[str, float]:
    ms = 1000.0
    return {
        "claims/s": len(result.claim) / window,
        "claim p50 ms": harness.percentile(result.claim, 50) * ms,
        "claim p99 ms": harness.percentile(result.claim, 99) * ms,
        "complete p50 ms": harness.percentile(result.complete, 50) * ms,
        "complete p99 ms": harness.percentile(result.complete, 99) * ms,
        "board p99 ms": harness.percentile(result.boards, 99) * ms,
        "errors": float(sum(result.errors.values())),
        "nothing to claim": float(result.nothing),
        **server,
    }


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
    parser.add_argument("--url", help="admin URL of an existing PostgreSQL (default: a throwaway server)")
    parser.add_argument("--dsn", help="another URL of the same database, e.g. through PgBouncer; measured after direct")
    parser.add_argument("--rows", type=int, default=50_000, help="waiting rows in each round's fresh table")
    parser.add_argument("--processes", type=int, default=2, help="processes the seats' threads run in")
    parser.add_argument("--supervisors", type=int, default=3, help="lock boards refreshing every 5 s")
    parser.add_argument("--think", default="2,5", help="seconds a seat thinks between claim and Save: min,max")
    parser.add_argument("--check-every", type=int, default=model.AppConfig().check_every)
    parser.add_argument("--counts-every", type=int, default=model.AppConfig().counts_every)
    parser.add_argument(
        "--no-reference",
        dest="reference",
        action="store_false",
        help="leave out the reference round whose start page counts after every Complete (counts_every 0)",
    )
    parser.add_argument(
        "--max-connections",
        type=int,
        default=0,
        help="max_connections of the throwaway server (default: 3 per seat of the largest round + 50)",
    )
    args = parser.parse_args(argv)
    args.seat_counts = [int(n) for n in args.seats.split(",") if n.strip()]
    low, high = (float(x) for x in args.think.split(","))
    args.think = (low, high)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    limit = args.max_connections or 3 * max(args.seat_counts) + 50
    target = harness.Target.open("postgresql", args.url, options=f"-c max_connections={limit}")
    columns: dict[str, dict[str, float]] = {}
    error_lines: list[str] = []
    try:
        print(f"# seats_bench on {target.description}; max_connections {limit} (throwaway server)", flush=True)
        # (name, another URL or None for direct, counts_every)
        routes = [("direct", None, args.counts_every)]
        if args.reference:  # the start page counted after every Complete, as before issue 42
            routes.append(("direct, counts each time", None, 0))
        if args.dsn:
            routes.append(("dsn", args.dsn, args.counts_every))
        for seats in args.seat_counts:
            for route, dsn, counts_every in routes:
                url, _ = harness.build_workbench_db(target, DATABASE, args.rows)
                round_args = argparse.Namespace(**{**vars(args), "counts_every": counts_every})
                result, server = run_round(target, dsn or url, seats, round_args)
                name = f"{seats} {route}"
                columns[name] = figures(result, server, server["measured s"])
                error_lines += [f"{name}: {count} x {what}" for what, count in result.errors.most_common(5)]
                print(f"# {name} done", flush=True)
    finally:
        target.close()
    print(harness.table(columns))
    for line in error_lines:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
