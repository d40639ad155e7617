"""Benchmarks that tell the truth (issues 52 and 54): their "server CPU" is their own server's (its
process tree), never another server's on the same machine (claim_bench summed every postgres/mariadbd
process, so another server's work showed up, even negative, and SQLite reported server CPU it has no
server for); seats_bench's simulated windows run on a schedule, never two calls of one window at once,
and a round whose clients took more than half of the cores is not called the server's; claim_bench's
two sides of a --reference (or --aa) run are built by the same steps, in alternating order, and run
one right after the other, the first alternating."""

from __future__ import annotations

import itertools
import os
import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from tests import servers
from tests.benchmarks import harness, seats_bench, sides

ROOT = Path(__file__).resolve().parent.parent
BURN = {  # a query that keeps one server process busy for about a quarter of a second (run until BURNED is spent)
    "postgresql": "SELECT count(*) FROM generate_series(1, 2000000)",
    "mariadb": "SELECT BENCHMARK(1000000, MD5('workbench'))",
}
# CPU seconds the other server must have spent before the figures are compared: counted as the idle one's, they
# would be well above the 0.3 s that fails the test.
BURNED = 0.6


def _burn(server: servers.Server, seconds: float) -> None:
    """Run BURN on `server` until its own process tree has used `seconds` of CPU more."""
    target = harness.Target.open(server.kind, server.admin_url())
    try:
        cpu = harness.ServerCpu(target)
        assert cpu.pid is not None, "the burning server's process was not found"
        start = cpu.seconds()
        assert start is not None
        engine = sa.create_engine(server.admin_url())
        try:
            with engine.connect() as conn:
                while (cpu.seconds() or 0.0) - start < seconds:
                    conn.exec_driver_sql(BURN[server.kind]).fetchall()
        finally:
            engine.dispose()
    finally:
        target.close()


@pytest.fixture(params=["postgresql", "mariadb"])
def two_servers(request: pytest.FixtureRequest) -> Iterator[tuple[harness.Target, servers.Server]]:
    """The benchmark's own throwaway server (a Target, as the benchmarks open it) and, beside it on the
    same machine, the test session's server of the same kind."""
    kind = request.param
    other: servers.Server = request.getfixturevalue("pg_server" if kind == "postgresql" else "mariadb_server")
    try:
        target = harness.Target.open(kind, None)
    except SystemExit as exc:
        pytest.skip(str(exc))
    yield target, other
    target.close()


@pytest.mark.servers
def test_another_servers_cpu_is_not_counted(two_servers: tuple[harness.Target, servers.Server]) -> None:
    target, other = two_servers
    own = harness.ServerCpu(target)
    assert own.pid is not None, "the benchmark's own server process was not found"
    before = own.seconds()
    assert before is not None
    _burn(other, BURNED)
    idle = (own.seconds() or 0.0) - before
    assert idle < 0.3, f"{idle:.2f} s of CPU counted for the benchmark's idle server while another one burned"

    # The same burn on the benchmark's own server is counted: the figure is not just always small.
    before = own.seconds() or 0.0
    _burn(target.server, BURNED)  # type: ignore[arg-type]
    busy = (own.seconds() or 0.0) - before
    assert busy >= BURNED, f"only {busy:.2f} s counted for {BURNED} s burned on the benchmark's own server"


@pytest.mark.servers
def test_sqlite_reports_no_server_cpu_while_a_server_works(pg_server: servers.Server) -> None:
    """claim_bench on SQLite beside a busy PostgreSQL: it says it measured no server CPU, not the
    other server's as its own."""
    stop = threading.Event()

    def keep_busy() -> None:  # a fifth of the time: every run of the benchmark sees the server's CPU grow
        while not stop.is_set():
            _burn(pg_server, 0.2)
            stop.wait(0.8)

    burner = threading.Thread(target=keep_busy)
    burner.start()
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "tests.benchmarks.claim_bench",
                *shlex.split("--backend sqlite --processes 1 --rows 300 --seconds 0.5 --rounds 1"),
            ],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
    finally:
        stop.set()
        burner.join()
    assert done.returncode == 0, done.stderr[-3000:]
    assert "database server CPU per pair" not in done.stdout, done.stdout
    assert "database server CPU: not measured" in done.stdout, done.stdout
    assert "load average" in done.stdout and "cores" in done.stdout, done.stdout


def _row(client_cores: float, lag_ms: float) -> dict[str, float]:
    return {"client CPU cores": client_cores, "step lag p99 ms": lag_ms}


def test_seats_latencies_are_not_the_servers_when_the_clients_take_half_the_cores() -> None:
    cores = os.cpu_count() or 1
    calm = seats_bench.verdict("1000 PgBouncer", _row(0.4 * cores, 20.0))
    assert calm.startswith("1000 PgBouncer: latencies are the server's"), calm
    busy = seats_bench.verdict("1000 PgBouncer", _row(0.64 * cores, 20.0))
    assert busy.startswith("WARNING 1000 PgBouncer") and "not the server's" in busy, busy
    assert "latencies are the server's" not in busy
    late = seats_bench.verdict("1000 PgBouncer", _row(0.1, 5_000.0))  # few cores, but steps ran late
    assert late.startswith("WARNING") and "late" in late, late


def test_seats_scheduler_runs_every_window_step_by_step_never_early() -> None:
    """Many windows' schedules on a few threads: every step runs, none before its time, and no window
    has two steps running at once (a generator stepped from two threads at once raises ValueError)."""
    start = time.time()
    plan = seats_bench.Plan(
        url="",
        seats=[],
        supervisors=0,
        total=1,
        start=start,
        measure_from=start,
        end=start + 1.5,
        think=(0.0, 0.0),
        check_every=1,
        counts_every=1,
        pooler="none",
    )
    lag: list[float] = []
    running: set[int] = set()
    overlaps: list[int] = []
    early: list[float] = []
    steps = [0] * 200

    def window(number: int) -> seats_bench.Schedule:
        due = start + number / 400
        while due < plan.end:
            yield due
            early.append(max(0.0, due - time.time()))
            if number in running:
                overlaps.append(number)
            running.add(number)
            time.sleep(0.002)  # a call to the database
            running.discard(number)
            steps[number] += 1
            due = time.time() + 0.05 + (number % 7) / 100

    scheduler = seats_bench.Scheduler(plan, lag)
    for number in range(len(steps)):
        scheduler.add(window(number))
    threads = [threading.Thread(target=scheduler.run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads), "the scheduler did not end with its windows"
    assert all(steps), f"windows that never ran: {[n for n, s in enumerate(steps) if not s]}"
    assert not overlaps
    assert max(early) == 0.0, f"a step ran {max(early):.3f} s before it was due"
    assert 0 < len(lag) <= sum(steps) and min(lag) >= 0.0  # steps run after the end are not measured


# A process that burns CPU for the given seconds (its own CPU time), then waits for a line on stdin.
_BURN_THEN_WAIT = (
    "import sys, time\n"
    "end = time.process_time() + float(sys.argv[1])\n"
    "while time.process_time() < end: pass\n"
    "print('burnt', flush=True)\n"
    "sys.stdin.readline()\n"
)
# The root of a process tree: on "live S" it starts a child that burns S seconds and stays alive; on
# "ended S" a child that burns S seconds and ends (reaped: its time moves into the root's cutime).
_TREE = (
    "import subprocess, sys\n"
    "BURN = sys.argv[1]\n"
    "kept = []\n"
    "for line in sys.stdin:\n"
    "    how, seconds = line.split()\n"
    "    child = subprocess.Popen([sys.executable, '-c', BURN, seconds], stdin=subprocess.PIPE,\n"
    "                             stdout=subprocess.PIPE, text=True)\n"
    "    child.stdout.readline()\n"
    "    if how == 'ended':\n"
    "        child.communicate('\\n')\n"
    "    else:\n"
    "        kept.append(child)\n"
    "    print('ok', flush=True)\n"
)


def _ask(proc: subprocess.Popen[str], line: str) -> str:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(line + "\n")
    proc.stdin.flush()
    return proc.stdout.readline().strip()


def test_process_tree_cpu_counts_the_given_tree_only() -> None:
    """The reader behind every benchmark's server CPU (no server needed): a sibling process that burns
    CPU beside the tree is not counted; the tree's live child's CPU is, and an ended child's too."""
    pipes: dict[str, Any] = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "text": True}
    tree = subprocess.Popen([sys.executable, "-c", _TREE, _BURN_THEN_WAIT], **pipes)
    sibling = subprocess.Popen([sys.executable, "-c", _BURN_THEN_WAIT, "0.4"], **pipes)
    try:
        before = harness.process_tree_cpu_seconds(tree.pid)
        assert sibling.stdout is not None and sibling.stdout.readline().strip() == "burnt"
        beside = harness.process_tree_cpu_seconds(tree.pid) - before
        assert beside < 0.15, f"{beside:.2f} s of a sibling's 0.4 s counted in the tree's CPU"

        assert _ask(tree, "live 0.3") == "ok"
        live = harness.process_tree_cpu_seconds(tree.pid) - before
        assert 0.28 <= live < 0.6, f"a live child's 0.3 s burnt counted as {live:.2f} s"

        assert _ask(tree, "ended 0.3") == "ok"
        ended = harness.process_tree_cpu_seconds(tree.pid) - before
        assert 0.58 <= ended < 0.9, f"a live child's and an ended child's 0.3 s each counted as {ended:.2f} s"
        assert harness.process_tree_cpu_seconds(sibling.pid) >= 0.38, "the sibling's own tree is counted"
    finally:
        for proc in (tree, sibling):
            proc.kill()
            proc.communicate()


# -- claim_bench --reference / --aa: both sides built and run alike ---------------------------------


def test_a_contenders_two_sides_are_built_in_alternating_order() -> None:
    order = sides.build_order([("wb", "wb ref"), ("next", "next ref"), ("nodefer", "nodefer ref")])
    assert order == ["wb", "wb ref", "next ref", "next", "nodefer", "nodefer ref"]


@pytest.mark.parametrize("contenders", [2, 3, 4])
@pytest.mark.parametrize("alone", [[], [["hand-written"], ["procrastinate"]]])
def test_the_sides_run_together_first_in_turn_never_one_database_twice_in_a_row(
    contenders: int, alone: list[list[str]]
) -> None:
    groups = [[f"c{n}", f"c{n} ref"] for n in range(contenders)] + alone
    plan = sides.schedule(groups, 8)
    flat = [run for runs in plan for run in runs]
    assert all(sorted(runs) == sorted(run for group in groups for run in group) for runs in plan)
    # (a contender alone at the end of one round and the start of the next runs twice: no side to swap)
    assert all(a != b for a, b in itertools.pairwise(flat) if [a] not in alone), plan
    for n in range(contenders):
        this, ref = f"c{n}", f"c{n} ref"
        for runs in plan:  # one right after the other
            assert abs(runs.index(this) - runs.index(ref)) == 1, runs
        for first in range(0, 8, 4):  # each side first in two of every four rounds
            firsts = [runs.index(this) < runs.index(ref) for runs in plan[first : first + 4]]
            assert firsts.count(True) == 2, (n, plan)
    assert plan[1][0] in groups[-1], "the blocks' order reverses from round to round"


def test_one_pair_alone_runs_abba() -> None:
    assert sides.schedule([["wb", "wb ref"]], 4) == [["wb", "wb ref"], ["wb ref", "wb"]] * 2


def test_top_up_refills_a_drained_queue_behind_the_rows_there() -> None:
    target = harness.Target.open("sqlite", None)
    try:
        url, _ = harness.build_workbench_db(target, "topup", 50)
        engine = sa.create_engine(url)
        try:
            with engine.begin() as conn:
                conn.exec_driver_sql("UPDATE cases SET status = 'resolved' WHERE case_id <= 40")
            assert harness.top_up(target, "topup", "cases", 50) == 40
            assert harness.top_up(target, "topup", "cases", 50) == 0
            with engine.connect() as conn:
                waiting = conn.exec_driver_sql("SELECT min(case_id), max(case_id) FROM cases WHERE status = 'new'")
                assert tuple(waiting.one()) == (41, 90)
        finally:
            engine.dispose()
    finally:
        target.close()


def test_claim_bench_aa_builds_and_runs_both_sides_alike() -> None:
    """An A/A run (this tree against a copy of itself) on SQLite: both sides' databases built by the same
    steps (each by its own tree, in a process of its own), the build order alternating by contender,
    each contender's two sides run one right after the other with the first alternating, and the
    this/ref ratio printed round by round with its min–max."""
    # 20 rows: every run drains its queue; the runs' order and both sides' steps are what is read, not figures.
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.benchmarks.claim_bench",
            *shlex.split("--backend sqlite --processes 1 --rows 20 --seconds 0.2 --rounds 2 --then-next --aa"),
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "A/A: the reference is a copy of this tree" in out, out
    built = [line.split(":")[0].removeprefix("setup ") for line in out.splitlines() if line.startswith("setup ")]
    assert built == [
        "workbench",
        "workbench (reference)",
        "workbench, then next (reference)",
        "workbench, then next",
    ], out
    steps = {line.split(":")[1].split(",")[1].split()[0] for line in out.splitlines() if line.startswith("setup ")}
    assert steps == {"init+attach+analyze"}, out  # the same steps on both sides
    ran = [line.split(" (round")[0].removeprefix("running ") for line in out.splitlines() if line.startswith("running")]
    assert ran == [
        "workbench",
        "workbench (reference)",
        "workbench, then next (reference)",
        "workbench, then next",
        "workbench, then next (reference)",  # no database twice in a row: the first block keeps its order
        "workbench, then next",
        "workbench (reference)",
        "workbench",
    ], out
    for short in ("wb", "next"):
        line = next(line for line in out.splitlines() if line.startswith(f"{short} this/ref pairs/s by round: "))
        assert "median" in line and "min–max" in line, line
    assert "load average" in out, out
