"""Next item on an empty queue: client CPU and statements per empty claim_next, per queue of the demo (a limit
in `cases`, none in `imports`, a review in `imports_review`), this tree against another (`--reference TREE`),
alternating, each run in a process of its own on a fresh database."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

QUEUES = ("cases", "imports", "imports_review")
THIS_TREE = Path(__file__).resolve().parents[2]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.empty_poll_bench", description=__doc__)
    parser.add_argument("--backend", default="sqlite", help="sqlite (default), postgresql, mariadb")
    parser.add_argument("--url", help="admin URL of an existing server; default: a throwaway one")
    parser.add_argument("--polls", type=int, default=2_000, help="measured empty claims per queue and run")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each tree, alternating")
    parser.add_argument("--reference", metavar="TREE", help="a checkout of another commit to run beside this tree")
    parser.add_argument("--one", metavar="URL", help=argparse.SUPPRESS)  # a run's own process: measure on URL
    return parser.parse_args(argv)


def measure(url: str, backend: str, polls: int) -> dict[str, Any]:
    """In the tree first on sys.path: the demo with nothing waiting, then `polls` empty Next items per queue."""
    import sqlalchemy as sa

    from tests import support
    from workbench.core import errors

    env = support.Env(backend, "native", url, Path(tempfile.mkdtemp(prefix="wb-empty-poll-")))
    wb = env.build_demo(case_rows=2, import_rows=2)
    with wb.engine.begin() as conn:
        conn.exec_driver_sql("UPDATE cases SET status = 'resolved'")
        conn.exec_driver_sql("UPDATE import_rows SET check_status = 'verified'")
    sent = [0]
    sa.event.listen(wb.engine, "before_cursor_execute", lambda *args: sent.__setitem__(0, sent[0] + 1))
    found: dict[str, Any] = {}
    for name in QUEUES:
        queue = wb.queue(name)

        def poll(queue: Any = queue) -> None:
            try:
                queue.claim_next("alice")
            except errors.NothingToClaim:
                return
            raise SystemExit(f"{queue.name} is not empty")

        for _ in range(50):  # statements built and compiled, connections open
            poll()
        before = sent[0]
        poll()
        statements = sent[0] - before
        cpu = time.process_time()
        for _ in range(polls):
            poll()
        found[name] = {"us": (time.process_time() - cpu) * 1e6 / polls, "statements": statements}
    env.close()
    return found


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.one:
        print(json.dumps(measure(args.one, args.backend, args.polls)))
        return 0
    from tests.benchmarks import harness, sides

    trees = {"this": THIS_TREE}
    if args.reference:
        trees["reference"] = sides.prepare(args.reference)
    target = harness.Target.open(args.backend, args.url)
    print(f"server: {target.description}; {args.polls} empty Next items per queue and run", flush=True)
    results: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
    try:
        for number in range(args.rounds):
            order = list(trees) if number % 2 == 0 else list(reversed(trees))
            for name in order:
                url = target.fresh(f"wbemptypoll{number}{name}")
                run = subprocess.run(
                    # This file, run with the tree's own workbench and tests first on the path.
                    [sys.executable, __file__, "--one", url, "--backend", args.backend, "--polls", str(args.polls)],
                    cwd=trees[name],
                    env={**os.environ, "PYTHONPATH": str(trees[name])},
                    capture_output=True,
                    text=True,
                    check=False,
                )
                if run.returncode:
                    raise SystemExit(f"{name} failed:\n{run.stderr[-3000:]}")
                found = json.loads(run.stdout.strip().splitlines()[-1])
                results[name].append(found)
                figures = ", ".join(f"{q} {found[q]['us']:.0f} µs/{found[q]['statements']} st" for q in QUEUES)
                print(f"round {number} {name:9}: {figures}; {harness.machine_load()}", flush=True)
    finally:
        target.close()
    for name, runs in results.items():
        medians = ", ".join(f"{q} {statistics.median(r[q]['us'] for r in runs):.0f} µs" for q in QUEUES)
        print(f"{name:9} median client CPU per empty Next item: {medians}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
