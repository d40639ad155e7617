"""Claim+complete pairs/s on a three-node MariaDB Galera cluster, written through every node and through
one node, beside a single MariaDB server, in one run (the figures in docs/setup/scale.md on pointing at a cluster).

    .venv/bin/python -m tests.benchmarks.galera_bench --rows 2000
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from tests import servers, test_galera
from tests.benchmarks import harness


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2000)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="wb-galera-bench-"))
    nodes = servers.start_galera(3)
    try:
        every, every_s = test_galera._run(tmp, nodes, "wball", args.rows)
        one, one_s = test_galera._run(tmp, nodes[:1], "wbone", args.rows)
    finally:
        nodes[0].stop()
    single = servers.start_mariadb()
    try:
        alone, alone_s = test_galera._run(tmp, [single], "wbsingle", args.rows)
    finally:
        single.stop()
    print(f"{test_galera.WORKERS} processes, {args.rows} rows, claim+complete pairs/s:")
    print(f"  Galera, every process through its own node (3 nodes): {len(every) / every_s:7.0f}")
    print(f"  Galera, every process through one node:                {len(one) / one_s:7.0f}")
    print(f"  one MariaDB server:                                    {len(alone) / alone_s:7.0f}")
    print(f"machine: {harness.machine_load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
