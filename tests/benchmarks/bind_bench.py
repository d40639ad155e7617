"""Binding a config's queues to their tables (what every window's start and every command does first): the
statements, the client's CPU and the server's CPU per bind of the demo's queues, this tree against another
commit's tree run beside it in alternating rounds (--reference), each in its own process."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

from tests.benchmarks import harness
from workbench import demo
from workbench.config import loader
from workbench.db import service

# Run in the tree measured (its own workbench on sys.path): open the config, bind its queues, close; n times.
_CHILD = r"""
import sys, time
from sqlalchemy import event
from workbench.config import loader
from workbench.db import service
config, n = loader.load(sys.argv[1]), int(sys.argv[2])
statements = 0
def counted(*_args):
    global statements
    statements += 1
started = time.process_time()
for _ in range(n):
    with service.Workbench.open(config) as wb:
        event.listen(wb.engine, "before_cursor_execute", counted)
        wb.queue(next(iter(config.queues)))
print(time.process_time() - started, statements)
"""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.bind_bench", description=__doc__)
    parser.add_argument("--backend", choices=harness.BACKENDS, default="postgresql")
    parser.add_argument("--url", help="admin URL of an existing server; default: start a throwaway server")
    parser.add_argument("--reference", metavar="TREE", help="a checkout of another commit, run in turns with this one")
    parser.add_argument("--binds", type=int, default=20, help="binds per contender and round")
    parser.add_argument("--rounds", type=int, default=4)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    target = harness.Target.open(args.backend, args.url)
    try:
        url = target.fresh("wb_bind_bench")
        config_file = target.tmp / "workbench.toml"
        config_file.write_text(demo.config_text(url), encoding="utf-8")
        with service.Workbench.open(loader.load(config_file), create_sqlite=True) as wb:
            demo.populate(wb.engine, cases=30, imports=20)
            wb.init()
            demo.attach_all(wb)
        server = harness.ServerCpu(target)
        trees = {"this tree": Path.cwd()}
        if args.reference:
            trees["reference"] = Path(args.reference).resolve()
        print(f"{target.description}; {args.binds} binds of the demo's queues per contender and round")
        found: dict[str, list[tuple[float, float | None, float]]] = {name: [] for name in trees}
        for round_ in range(args.rounds):
            order = list(trees.items()) if round_ % 2 == 0 else list(reversed(trees.items()))
            for name, tree in order:
                before = server.seconds()
                out = subprocess.run(
                    [sys.executable, "-c", _CHILD, str(config_file), str(args.binds)],
                    cwd=tree,
                    env={**os.environ, "PYTHONPATH": str(tree)},
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout.split()
                after = server.seconds()
                client = float(out[0]) / args.binds * 1000
                used = None if before is None or after is None else (after - before) / args.binds * 1000
                statements = int(out[1]) / args.binds
                found[name].append((client, used, statements))
                shown = "unknown" if used is None else f"{used:.1f} ms"
                print(
                    f"round {round_ + 1} {name}: client {client:.1f} ms, server {shown}, "
                    f"{statements:.0f} statements per bind; {harness.machine_load()}",
                    flush=True,
                )
        for name, rows in found.items():
            servers_ = [r[1] for r in rows if r[1] is not None]
            server_text = f"{statistics.median(servers_):.1f} ms" if servers_ else "unknown"
            client = statistics.median(r[0] for r in rows)
            print(
                f"{name}: per bind, median of {len(rows)} rounds: client {client:.1f} ms CPU, "
                f"server {server_text} CPU, {statistics.median(r[2] for r in rows):.0f} statements"
            )
    finally:
        target.close()


if __name__ == "__main__":
    main()
