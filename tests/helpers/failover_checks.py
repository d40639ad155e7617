"""Worker processes that claim, save and complete through a database failover (tests/helpers/failover_worker.py),
and the checks made afterwards on the server that took over: every acknowledged step is there, once, and no
item ever had two holders (tests/test_failover.py, tests/gui/test_patroni.py)."""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
import sqlalchemy as sa

from tests import servers
from workbench import demo
from workbench.config import loader
from workbench.core import models
from workbench.db import audit, service

REPO = Path(__file__).resolve().parents[2]
T = TypeVar("T")


def started(start: Callable[[], T]) -> T:
    """What start() starts; the test is skipped where the server software is missing or would not start
    (with WORKBENCH_REQUIRE_SERVERS set, it fails)."""
    try:
        return start()
    except servers.ServerUnavailable as exc:
        if os.environ.get("WORKBENCH_REQUIRE_SERVERS"):
            raise
        pytest.skip(str(exc))


def demo_config(url: str, folder: Path, cases: int) -> Path:
    """A config file (in `folder`) for the demo queues on `url`, with `cases` cases, set up as `init` does."""
    path = folder / "workbench.toml"
    path.write_text(demo.config_text(url), encoding="utf-8")
    with service.Workbench.open(loader.load(path)) as wb:
        demo.populate(wb.engine, cases=cases, imports=1)
        wb.init()
        demo.attach_all(wb)
    return path


class Workers:
    """`count` worker processes on one queue, started at once; they begin work at go() and end at stop()."""

    def __init__(self, config_path: Path, queue: str, folder: Path, count: int, pause: float = 0.0) -> None:
        self.go_file, self.stop_file = folder / "go", folder / "stop"
        self.errors: list[str] = []
        self.logs = [folder / f"w{i}.log" for i in range(count)]
        self.procs = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "tests.helpers.failover_worker",
                    *("--config", str(config_path), "--queue", queue, "--user", f"w{i}", "--log", str(log)),
                    *("--go", str(self.go_file), "--stop", str(self.stop_file), "--pause", str(pause)),
                ],
                cwd=REPO,
                env={**os.environ, "PYTHONPATH": str(REPO)},
                stderr=subprocess.PIPE,
                text=True,
            )
            for i, log in enumerate(self.logs)
        ]

    def go(self) -> None:
        until(
            lambda: sum(1 for e in self.entries() if "ready" in e) == len(self.procs), "the workers to open the queue"
        )
        self.go_file.write_text("go")

    def entries(self) -> list[dict[str, Any]]:
        """Every line the workers logged so far, each with its worker's name."""
        found = []
        for i, path in enumerate(self.logs):
            if not path.exists():  # the worker has not started yet
                continue
            for line in path.read_text(encoding="utf-8").splitlines():
                found.append({"worker": f"w{i}", **json.loads(line)})
        return found

    def completed_since(self, moment: float) -> int:
        return sum(1 for e in self.entries() if "completed" in e and e["at"] > moment)

    def stop(self) -> None:
        self.stop_file.write_text("stop")
        self.errors = [proc.communicate(timeout=60)[1] for proc in self.procs]

    def check_stopped(self) -> list[dict[str, Any]]:
        """That no worker failed; their log entries."""
        entries = self.entries()
        failures = [e["failure"] for e in entries if "failure" in e]
        assert not failures, failures[0]
        assert all(proc.returncode == 0 for proc in self.procs), "\n".join(e[-3000:] for e in self.errors)
        return entries


def until(done: Any, what: str, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def check_acknowledged(wb: service.Workbench, queue: str, entries: list[dict[str, Any]]) -> None:
    """Every acknowledged Complete is there once, by its worker, with the Save before it; every acknowledged
    claim is in the trail under its token; no item was claimed by two workers."""
    q = wb.queue(queue)
    completed = [(e["worker"], e["completed"]) for e in entries if "completed" in e]
    claimed = [(e["worker"], e["claim"], e["token"]) for e in entries if "claim" in e]
    counts = collections.Counter(key for _, key in completed)
    assert max(counts.values()) == 1, [k for k, n in counts.items() if n > 1]
    for worker, key in completed:
        view = q.show(key)
        assert view.state.startswith("done"), (key, view.state)
        done = [e for e in q.history(key) if e.kind.value == "complete"]
        assert [e.actor for e in done] == [worker], (key, done)
        assert view.item["resolution"] == f"worked by {worker}"  # the Save before it too
    # No item was handed to a second person because the first one's claim was lost.
    with wb.engine.connect() as conn:
        trail = wb.audit_table
        rows = conn.execute(
            sa.select(trail.c.item_key, trail.c.actor, trail.c.token).where(
                trail.c.queue == queue, trail.c.event == "claim"
            )
        ).all()
    recorded = {(actor, key, token) for key, actor, token in rows}
    missing = [(w, k) for w, k, t in claimed if (w, str(k), audit.token_digest(t)) not in recorded]
    assert missing == []
    holders = collections.defaultdict(set)
    for worker, key, _ in claimed:
        holders[key].add(worker)
    assert all(len(who) == 1 for who in holders.values()), "an item was claimed by two workers"


# What ends a holder's claim in the trail.
_ENDS = {
    models.EventKind.COMPLETE,
    models.EventKind.RELEASE,
    models.EventKind.EXPIRE,
    models.EventKind.FORCE_RELEASE,
    models.EventKind.DEFER,
}


def overlapping_claims(wb: service.Workbench, queue: str) -> list[str]:
    """Items whose trail shows a claim while an earlier claim of the same row was still live (neither
    completed, released, expired nor handed on): two holders at once."""
    trail = wb.audit_table
    with wb.engine.connect() as conn:
        rows = conn.execute(
            sa.select(trail.c.item_key, trail.c.event, trail.c.actor, trail.c.owner)
            .where(trail.c.queue == queue)
            .order_by(trail.c.item_key, trail.c.id)
        ).all()
    live: dict[str, str] = {}
    overlaps = []
    for key, event, actor, owner in rows:
        kind = models.EventKind(event)
        if kind is models.EventKind.CLAIM:
            if key in live:
                overlaps.append(f"{key}: claimed by {actor} while {live[key]} held it")
            live[key] = actor
        elif kind is models.EventKind.REASSIGN:  # handed on: the new holder's claim begins
            live[key] = owner or actor
        elif kind in _ENDS:
            live.pop(key, None)
    return overlaps
