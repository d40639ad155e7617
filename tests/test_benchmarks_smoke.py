"""Every benchmark in tests/benchmarks runs at a tiny size and prints its table, so that a refactor
that breaks one fails here instead of the next time someone measures (issue 42: gui_bench and
board_bench no longer ran). Each runs as `python -m tests.benchmarks.NAME`, as people run them;
figures are not checked, only that the run completes and prints them."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests import servers

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "tests" / "benchmarks"

# Each benchmark's arguments for a tiny run. On SQLite: no server needed (the fast tier runs them).
ON_SQLITE = {
    "claim_bench": "--backend sqlite --processes 2 --rows 300 --seconds 0.5 --rounds 1",
    "growth_bench": "--backend sqlite --small 300 --large 600 --pairs 5 --warmup 1",
    "live_locks_bench": "--backend sqlite --rows 500 --pairs 5 --levels 0 20",
    "lock_table_bench": "--backend sqlite --rows 500 --pairs 5 --rounds 1",
    "board_bench": "--backend sqlite --rows 500 --locks 20 --expired 2 --days 2 --runs 1 --gui-locks ''",
    # No unmeasured start first: the measured start is the same child, here in a fresh home.
    "gui_bench": "--backend sqlite --rows 300 --starts 1 --warm-starts 0 --clicks 3 --warmup 1 --cycles 2",
    "cli_bench": "--pairs 1 --rounds 1",
    "lookup_bench": "--backend sqlite --rows 2000 --searches 5",
    "bind_bench": "--backend sqlite --binds 2 --rounds 1",
    "empty_poll_bench": "--polls 5 --rounds 1",
}
# PostgreSQL only: run against the test session's server (--url).
ON_POSTGRES = {
    "wal_bench": "--rows 300 --pairs 20 --warmup 2 --quick --no-checkpoint",
    "lookup_bench": "--rows 2000 --searches 5",
    "empty_poll_bench": "--backend postgresql --polls 5 --rounds 1",
    # With its experiment: the same claims on a database whose audit table is thinned.
    "claim_bench": "--processes 2 --rows 300 --seconds 0.5 --rounds 1 --no-references --then-next --thin-audit",
    # Six rounds, each through every step once: waits cut to what a round needs to start and end; the
    # supervisor force-releases and reassigns every 0.1 s (its default 5 s is longer than a round).
    "seats_bench": "--seats 3 --duration 0.5 --ramp 0.2 --rows 300 --processes 1 --supervisors 1 --think 0.1,0.2 "
    "--check-every 1 --no-reference --relay --settle 0.2 --lead 0.2 --stats-wait 0.1 --act-every 0.1",
}
# MariaDB only: against the test session's MariaDB.
ON_MARIADB = {
    "round_trips_bench": "--rows 300 --pairs 10 --rounds 1",
    # Statements and schema only: callgrind takes minutes.
    "pair_cost_bench": "--backend mariadb --aa --pairs 60 --no-callgrind",
}
# Need what a test run does not have: a three-node Galera cluster, a built bundle (dist/workbench).
ELSEWHERE = {"galera_bench", "bundle_bench"}


def _run(name: str, args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run(
        [sys.executable, "-m", f"tests.benchmarks.{name}", *shlex.split(args)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, f"{name} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert done.stdout.strip(), f"{name} printed nothing"
    # gui_bench goes on to its other steps when one fails, and says so: that is a failure here too.
    assert ": FAILED: " not in done.stdout, f"{name}: a step failed:\n{done.stdout[-3000:]}"
    return done.stdout


def _row(out: str, name: str) -> list[float]:
    """The figures of a row of a benchmark's table (one per column that has one: "-" is none), by the row's name."""
    for line in out.splitlines():
        if line.startswith(name + "  "):
            return [float(cell.replace(",", "")) for cell in line[len(name) :].split() if cell != "-"]
    raise AssertionError(f"no row {name!r} in:\n{out}")


def test_every_benchmark_has_a_smoke_run() -> None:
    found = {path.stem for path in BENCHMARKS.glob("*_bench.py")}
    assert found == set(ON_SQLITE) | set(ON_POSTGRES) | set(ON_MARIADB) | ELSEWHERE


@pytest.mark.parametrize("name", sorted(ON_SQLITE))
def test_benchmark_runs_tiny_on_sqlite(name: str) -> None:
    out = _run(name, ON_SQLITE[name])
    assert "load average" in out and "cores" in out, out  # the machine's load beside the figures


@pytest.mark.parametrize("name", sorted(ON_POSTGRES))
def test_benchmark_runs_tiny_on_postgresql(name: str, pg_server: servers.Server) -> None:
    out = _run(name, f"{ON_POSTGRES[name]} --url {pg_server.admin_url()}")
    if name == "seats_bench":  # its rounds through a throwaway PgBouncer too
        assert "3 PgBouncer" in out and "3 direct" in out and "3 PgBouncer, relay" in out, out
        # Each round says whether its latencies are the server's or the clients' (issue 54).
        # direct, PgBouncer, each with a relay (direct: reading and listening), counts per window
        rounds = out.count("done; load average")
        assert "3 direct, relay reading" in out and "3 direct, relay done" in out, out
        assert rounds == 6 and out.count("latencies are the server's") + out.count("WARNING 3 ") == rounds, out
        # The supervisor's force-releases and reassigns ran, and no call of any round failed.
        acts = sum(sum(_row(out, name)) for name in ("force-releases", "reassigns"))
        assert acts > 0 and _row(out, "errors") == [0] * rounds, out
    if name == "claim_bench":  # the thinned contenders ran, every pair done, and their server CPU is said
        assert _row(out, "errors") == [0, 0, 0, 0] and min(_row(out, "pairs")) > 0, out
        assert "workbench, audit thinned 0." in out and "workbench, then next, audit thinned 0." in out, out
    assert "load average" in out and "cores" in out, out  # the machine's load beside the figures


@pytest.mark.parametrize("name", sorted(ON_MARIADB))
def test_benchmark_runs_tiny_on_mariadb(name: str, mariadb_server: servers.Server) -> None:
    out = _run(name, f"{ON_MARIADB[name]} --url {mariadb_server.admin_url()}")
    assert "load average" in out and "cores" in out, out
    if name == "pair_cost_bench":  # a tree against a copy of itself: the same statements and schema
        assert "statements and schema: the same" in out and "3.00 statements per pair" in out, out
