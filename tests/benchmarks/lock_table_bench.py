"""Claim + complete latency of a separate-lock-table queue on a large table, beside the own-columns shape."""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from typing import Any

import sqlalchemy as sa

from tests.benchmarks import harness
from workbench.config import model
from workbench.core import errors
from workbench.db import attach, service

ROWS = ["pairs/s", "claim p50 ms", "claim p99 ms", "complete p50 ms", "complete p99 ms", "pairs", "errors"]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.lock_table_bench", description=__doc__)
    parser.add_argument("--backend", choices=harness.BACKENDS, default="postgresql")
    parser.add_argument("--url", help="admin URL of an existing server; default: start a throwaway server")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--waiting", type=float, default=0.1, help="fraction of rows waiting (the newest)")
    parser.add_argument("--pairs", type=int, default=300, help="measured pairs per shape and round")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds per phase")
    parser.add_argument("--max-seconds", type=float, default=60.0, help="cap on one round of one shape")
    args = parser.parse_args(argv)
    if not 0 < args.waiting <= 1 or min(args.rows, args.pairs, args.rounds) < 1:
        parser.error("--rows, --pairs and --rounds must be positive, --waiting in (0, 1]")
    return args


def lock_table_config(url: str, method: str = "auto") -> model.Config:
    """The benchmark's demo config with the cases queue's locks in workbench's lock table."""
    config = harness.bench_config(url)
    cases = dataclasses.replace(
        config.queues[harness.QUEUE],
        lock=model.LockColumns(
            user="lock_user", time="locked_at", expires="expires_at", token="token", table="workbench_locks"
        ),
    )
    database = dataclasses.replace(config.database, claim_method=method)
    return dataclasses.replace(config, database=database, queues={**config.queues, harness.QUEUE: cases})


class QueueOps:
    """One operator on a config's cases queue (harness.Ops)."""

    def __init__(self, config: model.Config, password: str | None) -> None:
        self.wb = service.Workbench.open(config, password=password)
        self.queue = self.wb.queue(harness.QUEUE)

    def claim(self) -> tuple[Any, str] | None:
        try:
            claimed = self.queue.claim_next("bench", 1)
        except errors.NothingToClaim:
            return None
        return claimed[0].lock.key, claimed[0].lock.token

    def complete(self, handle: tuple[Any, str]) -> None:
        self.queue.complete("bench", handle[0], handle[1], outcome=harness.OUTCOME)

    def close(self) -> None:
        self.wb.close()

    def driver_errors(self) -> dict[str, int]:
        return {}


def build_lock_table_db(target: harness.Target, rows: int, waiting: float) -> str:
    """A fresh database with the cases table filled and workbench initialised; nothing attached."""
    name = "wbbench_locktable"
    url = target.fresh(name)
    load = sa.create_engine(target.url(name, with_password=True, native=True))
    try:
        harness.fill_cases(load, harness.create_demo_tables(load), rows, fraction=waiting)
    finally:
        load.dispose()
    with service.Workbench.open(lock_table_config(url), password=target.password) as wb:
        wb.init()
        harness.analyze(wb.engine, "cases")
    return url


def suggest_index(url: str, password: str | None) -> str:
    """Create the index `attach` suggests for the lock-table queue; returns its DDL."""
    config = lock_table_config(url)
    with service.Workbench.open(config, password=password) as wb:
        with wb.engine.begin() as conn:
            plan = attach.plan(conn, config.queues[harness.QUEUE], config.path)
            ddl = attach.render(conn, plan)
            for index in plan.suggested:
                index.create(conn)
        harness.analyze(wb.engine, "cases")
    return ddl


def measure(ops: QueueOps, pairs: int, seconds: float) -> harness.LoopResult:
    return harness.run_loop(ops, pairs=pairs, seconds=seconds)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    target = harness.Target.open(args.backend, args.url)
    try:
        started = time.perf_counter()
        own_url, _ = harness.build_workbench_db(target, "wbbench_own", args.rows, fraction=args.waiting)
        lt_url = build_lock_table_db(target, args.rows, args.waiting)
        print(
            f"{target.description}; {args.rows:,} rows, {args.waiting:.0%} waiting; "
            f"set up in {time.perf_counter() - started:.0f} s",
            flush=True,
        )
        own = QueueOps(harness.bench_config(own_url), target.password)
        # The database's own lock-table claim (one statement on PostgreSQL) and, with the index, the
        # portable claim every database can run, for the comparison in the same run.
        phases = {"lock table": "auto", "lock table + index": "auto", "lock table + index, portable": "portable"}
        results = {name: harness.LoopResult() for name in ("own columns", *phases)}
        for phase, method in phases.items():
            if phase == "lock table + index":
                print("suggested by attach:\n" + suggest_index(lt_url, target.password), flush=True)
            lt = QueueOps(lock_table_config(lt_url, method), target.password)
            for ops in (own, lt):
                harness.warm_up(ops, 5)
            for _ in range(args.rounds):  # alternating, so that both see the same machine
                results["own columns"].merge(measure(own, args.pairs, args.max_seconds), concurrent=False)
                results[phase].merge(measure(lt, args.pairs, args.max_seconds), concurrent=False)
            lt.close()
        own.close()
        columns = {name: harness.figures(result) for name, result in results.items()}
        print(
            harness.table(
                columns,
                [
                    ("no index / own", "lock table", "own columns"),
                    ("index / own", "lock table + index", "own columns"),
                    ("own claim / portable", "lock table + index", "lock table + index, portable"),
                ],
                rows=ROWS,
            )
        )
        for name, result in results.items():
            for line in harness.error_report(name, result):
                print(line)
    finally:
        target.close()
    print(f"machine: {harness.machine_load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
