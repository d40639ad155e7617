"""MariaDB through PyMySQL: round trips, client CPU and wall time per claim + complete pair, with the
claim and Complete sent as batches (db/batches.py) against one statement per call, alternating in one
run on the same server (one process)."""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Any

import pymysql.connections

from tests.benchmarks import harness


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.round_trips_bench", description=__doc__)
    parser.add_argument("--url", help="admin URL of an existing MariaDB/MySQL server; default: a throwaway one")
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--pairs", type=int, default=1_000, help="measured pairs per round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of each, alternating")
    parser.add_argument("--durable", action="store_true", help="the throwaway server at default durability")
    args = parser.parse_args(argv)
    if args.pairs * args.rounds * 2 + 100 > args.rows:
        parser.error("--rows is too small for the pairs of every round")
    return args


class Counter:
    """Counts the commands PyMySQL sends (each one a round trip)."""

    def __init__(self) -> None:
        self.sent = 0
        real = pymysql.connections.Connection._execute_command
        counter = self

        def counting(self: Any, command: int, sql: Any) -> Any:
            counter.sent += 1
            return real(self, command, sql)

        pymysql.connections.Connection._execute_command = counting  # type: ignore[method-assign]


def run_round(ops: harness.WorkbenchOps, counter: Counter, pairs: int) -> dict[str, float]:
    sent, cpu, wall = counter.sent, time.process_time(), time.perf_counter()
    for _ in range(pairs):
        handle = ops.claim()
        if handle is None:
            raise SystemExit("the queue ran dry; give more --rows")
        ops.complete(handle)
    return {
        "round trips per pair": (counter.sent - sent) / pairs,
        "client CPU ms per pair": (time.process_time() - cpu) * 1000 / pairs,
        "wall ms per pair": (time.perf_counter() - wall) * 1000 / pairs,
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    counter = Counter()
    target = harness.Target.open("mariadb", args.url, durable=args.durable)
    print(f"server: {target.description}")
    try:
        url, _ = harness.build_workbench_db(target, "wbbench_trips", args.rows)
        modes = {
            "batches": harness.WorkbenchOps(url, target.password, "alice"),
            "one statement per call": harness.WorkbenchOps(url, target.password, "bob"),
        }
        # The same code with batches switched off: the claim and Complete fall back to the stepwise
        # claim and the two-step write, statement by statement through SQLAlchemy.
        modes["one statement per call"].wb.db.held.batches = False
        for ops in modes.values():
            harness.warm_up(ops, 50)
        results: dict[str, list[dict[str, float]]] = {name: [] for name in modes}
        for _ in range(args.rounds):
            for name, ops in modes.items():
                results[name].append(run_round(ops, counter, args.pairs))
        names = list(next(iter(results.values()))[0])
        print(f"{args.pairs:,} pairs per round, {args.rounds} rounds each, alternating; medians:")
        print(f"{'':26}" + "".join(f"{name:>26}" for name in modes))
        for figure in names:
            print(
                f"{figure:26}"
                + "".join(f"{statistics.median(r[figure] for r in results[name]):>26.2f}" for name in modes)
            )
        for ops in modes.values():
            ops.close()
    finally:
        target.close()
    print(f"machine: {harness.machine_load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
