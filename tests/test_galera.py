"""A three-node MariaDB Galera cluster on loopback: eight processes claim and complete through different
nodes. No item is handed out twice, none is left behind, and the certification conflicts between nodes
(each node's row locks are its own) are retried inside workbench, never reaching a worker. Prints the
pairs per second of the cluster and of a single server in the same run."""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests import servers
from workbench import demo
from workbench.config import loader
from workbench.core import errors
from workbench.db import service

REPO = Path(__file__).resolve().parents[1]
ROWS, WORKERS = 300, 8


@pytest.fixture
def galera() -> Iterator[list[servers.Server]]:
    try:
        nodes = servers.start_galera(3, in_memory=True)
    except servers.ServerUnavailable as exc:
        if os.environ.get("WORKBENCH_REQUIRE_SERVERS"):
            raise
        pytest.skip(str(exc))
    yield nodes
    nodes[0].stop()


def _run(tmp: Path, nodes: list[servers.Server], name: str, rows: int = 0) -> tuple[list[tuple[str, str]], float]:
    """Fill the demo through the first node, then let WORKERS processes (worker i on node i mod n) claim
    and complete until the queue is empty; returns (key, worker) per completion and the seconds taken."""
    nodes[0].create_database(name)
    configs = []
    for i, node in enumerate(nodes):
        path = tmp / f"{name}-node{i}.toml"
        path.write_text(demo.config_text(node.url(name)), encoding="utf-8")
        configs.append(path)
    rows = rows or ROWS
    with service.Workbench.open(loader.load(configs[0])) as wb:
        demo.populate(wb.engine, cases=rows, imports=1)
        wb.init()
        demo.attach_all(wb)
    want = _waiting(configs[0], rows)
    for path in configs[1:]:  # every node has the tables and the rows before anyone starts
        with service.Workbench.open(loader.load(path)) as wb:
            _until(lambda w=wb: _caught_up(w, rows, want))
    go = tmp / f"{name}-go"
    procs = []
    for i in range(WORKERS):
        out = tmp / f"{name}-w{i}.json"
        cmd = [
            sys.executable,
            "-m",
            "tests.helpers.claim_worker",
            "--config",
            str(configs[i % len(configs)]),
            "--queue",
            "cases",
            "--user",
            f"w{i}",
            "--out",
            str(out),
            "--go",
            str(go),
            "--ready",
            str(tmp / f"{name}-w{i}.ready"),
        ]
        procs.append(
            (
                f"w{i}",
                subprocess.Popen(
                    cmd, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, stderr=subprocess.PIPE, text=True
                ),
                out,
            )
        )
    # Every worker connected before any starts: the queue drains in about a second, and on a loaded
    # machine a worker still importing found it empty (3 of 8 did all the work in one CI run).
    _until(
        lambda: all((tmp / f"{name}-w{i}.ready").exists() or procs[i][1].poll() is not None for i in range(WORKERS)),
        seconds=180,
        what="the workers to connect",
    )
    started = time.monotonic()
    go.write_text("go")
    done: list[tuple[str, str]] = []
    for user, proc, out in procs:
        _, stderr = proc.communicate(timeout=600)
        assert out.exists(), f"worker died: {stderr[-3000:]}"
        data = json.loads(out.read_text())
        assert not data["failures"], data["failures"][0]
        done += [(str(key), user) for key, _token in data["done"]]
    return done, time.monotonic() - started


def _waiting(config: Path, rows: int) -> int:
    with service.Workbench.open(loader.load(config)) as wb:
        return wb.queue("cases").count_waiting(rows)


def _caught_up(wb: service.Workbench, rows: int, want: int) -> bool:
    """Whether this node has applied the first node's writes: its migrations (one CI run read version 7
    of 13 on the second node, whose applier was still behind the DDL's version rows) and the demo's rows."""
    try:
        return wb.queue("cases").count_waiting(rows) >= want
    except errors.NotInitialized:
        return False


def _until(done: object, seconds: float = 30, what: str = "the nodes to agree") -> None:
    deadline = time.monotonic() + seconds
    while not done():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {seconds:.0f} s for {what}")
        time.sleep(0.1)


@pytest.mark.slow
def test_eight_processes_through_three_nodes(
    galera: list[servers.Server], mariadb_server: servers.Server, tmp_path: Path
) -> None:
    waiting = None
    done, seconds = _run(tmp_path, galera, "wbgalera")
    counts = collections.Counter(key for key, _ in done)
    assert max(counts.values()) == 1, [k for k, n in counts.items() if n > 1]  # never handed out twice
    with service.Workbench.open(loader.load(tmp_path / "wbgalera-node1.toml")) as wb:
        waiting = wb.queue("cases").count_waiting(ROWS)
        with wb.engine.connect() as conn:
            locked = conn.execute(sa.text("SELECT count(*) FROM cases WHERE wb_locked_by IS NOT NULL")).scalar()
    assert waiting == 0 and locked == 0  # nothing left behind, on another node than the one it was filled on
    # More than one process claimed at once. Not "most of them": through every node, one node's workers
    # can win every certification conflict while the other nodes' claims are rolled back and run again
    # until the queue is empty (a clean run on a quiet machine: all 191 by the 3 workers of node 1; why
    # docs/setup/scale.md says to write through one node). What must hold is above: once each, none left.
    assert len(done) == len(counts) and len({user for _, user in done}) >= 2
    # The suite's own MariaDB server (same settings as the nodes'), in a database of its own.
    alone, alone_seconds = _run(tmp_path, [mariadb_server], "wbsingle")
    mariadb_server.drop_database("wbsingle")
    assert len(alone) == len(done)
    # tests/benchmarks/galera_bench.py measures this with more rows, and writing through one node.
    print(
        f"\n{WORKERS} processes, claim+complete pairs/s: Galera through all 3 nodes {len(done) / seconds:.0f}; "
        f"one MariaDB server {len(alone) / alone_seconds:.0f}"
    )
