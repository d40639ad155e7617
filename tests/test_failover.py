"""A PostgreSQL failover under load: workers claim, save and complete through a multi-host URL while the
primary is killed and its synchronous standby promoted; nothing acknowledged is lost, no item has two
holders, and the workers carry on against the new primary without being restarted."""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from tests import servers
from workbench import demo
from workbench.config import loader
from workbench.db import audit, service

REPO = Path(__file__).resolve().parents[1]
WORKERS = 4


@pytest.fixture
def replicated() -> Iterator[servers.Replicated]:
    try:
        pair = servers.start_replicated(synchronous=True)
    except servers.ServerUnavailable as exc:
        if os.environ.get("WORKBENCH_REQUIRE_SERVERS"):
            raise
        pytest.skip(str(exc))
    yield pair
    pair.stop()


def _entries(logs: list[Path]) -> list[dict[str, Any]]:
    found = []
    for i, path in enumerate(logs):
        if not path.exists():  # the worker has not started yet
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            found.append({"worker": f"w{i}", **json.loads(line)})
    return found


@pytest.mark.slow
def test_a_synchronous_standby_takes_over_and_nothing_acknowledged_is_lost(
    replicated: servers.Replicated, tmp_path: Path
) -> None:
    replicated.primary.create_database("wbfail")
    config_path = tmp_path / "workbench.toml"
    config_path.write_text(demo.config_text(replicated.url("wbfail")), encoding="utf-8")
    config = loader.load(config_path)
    with service.Workbench.open(config) as wb:
        demo.populate(wb.engine, cases=400, imports=1)
        wb.init()
        demo.attach_all(wb)
    go, stop = tmp_path / "go", tmp_path / "stop"
    logs = [tmp_path / f"w{i}.log" for i in range(WORKERS)]
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.helpers.failover_worker",
                "--config",
                str(config_path),
                "--queue",
                "cases",
                "--user",
                f"w{i}",
                "--log",
                str(log),
                "--go",
                str(go),
                "--stop",
                str(stop),
            ],
            cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            stderr=subprocess.PIPE,
            text=True,
        )
        for i, log in enumerate(logs)
    ]
    try:
        _until(lambda: sum(1 for e in _entries(logs) if "ready" in e) == WORKERS, "the workers to open the queue")
        go.write_text("go")
        _until(lambda: sum(1 for e in _entries(logs) if "completed" in e) >= 20, "the workers to complete items")
        killed = time.time()
        replicated.primary.take_down("immediate")  # as a crash: no shutdown checkpoint, clients cut off
        replicated.promote()
        promoted = time.time()
        _until(
            lambda: sum(1 for e in _entries(logs) if "completed" in e and e["at"] > promoted) >= 20,
            "the workers to complete items on the new primary",
        )
    finally:
        stop.write_text("stop")
        errors = [proc.communicate(timeout=60)[1] for proc in procs]
    entries = _entries(logs)
    failures = [e["failure"] for e in entries if "failure" in e]
    assert not failures, failures[0]
    assert all(proc.returncode == 0 for proc in procs), "\n".join(e[-3000:] for e in errors)
    # The workers noticed the switch and carried on (no restart), on the standby that took over.
    assert any("unavailable" in e and e["at"] >= killed for e in entries)
    with service.Workbench.open(config) as wb:
        with wb.engine.connect() as conn:
            assert conn.execute(sa.text("SELECT pg_is_in_recovery()")).scalar() is False
            assert conn.execute(sa.text("SHOW port")).scalar() == str(replicated.standby.port)
        q = wb.queue("cases")
        completed = [(e["worker"], e["completed"]) for e in entries if "completed" in e]
        claimed = [(e["worker"], e["claim"], e["token"]) for e in entries if "claim" in e]
        # Every acknowledged Complete is there, once, by its worker.
        counts = collections.Counter(key for _, key in completed)
        assert max(counts.values()) == 1, [k for k, n in counts.items() if n > 1]
        for worker, key in completed:
            view = q.show(key)
            assert view.state.startswith("done"), (key, view.state)
            done = [e for e in q.history(key) if e.kind.value == "complete"]
            assert [e.actor for e in done] == [worker], (key, done)
            assert view.item["resolution"] == f"worked by {worker}"  # the Save before it too
        # Every acknowledged claim is in the trail of the server that took over, under its token:
        # no item was handed to a second person because the first one's claim was lost.
        with wb.engine.connect() as conn:
            trail = wb.audit_table
            rows = conn.execute(
                sa.select(trail.c.item_key, trail.c.actor, trail.c.token).where(
                    trail.c.queue == "cases", trail.c.event == "claim"
                )
            ).all()
        recorded = {(actor, key, token) for key, actor, token in rows}
        missing = [(w, k) for w, k, t in claimed if (w, str(k), audit.token_digest(t)) not in recorded]
        assert missing == []
        holders = collections.defaultdict(set)
        for worker, key, _ in claimed:
            holders[key].add(worker)
        assert all(len(who) == 1 for who in holders.values()), "an item was claimed by two workers"


def _until(done: Any, what: str, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)
