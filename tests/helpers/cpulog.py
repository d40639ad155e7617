"""Where a test run's CPU goes, test by test (not collected; a pytest plugin): with `-p tests.helpers.cpulog`
each test's set-up, call and teardown append one JSON line to $CPULOG (default /tmp/cpulog.jsonl) with the wall
time and the CPU of the test process and of every process under it. `python -m tests.helpers.cpulog FILE` sums
them by file and lists the costliest tests.

The CPU of the processes a test starts is counted whether they were waited for (RUSAGE_CHILDREN) or are still
running (/proc: their own and their reaped children's), so the racing tests' workers, forked from a forkserver
that reaps them (tests/helpers/forked.py), count too; /usr/bin/time does not see those."""

from __future__ import annotations

import collections
import json
import os
import resource
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

OUT = os.environ.get("CPULOG", "/tmp/cpulog.jsonl")
_TICK = os.sysconf("SC_CLK_TCK")


def _descendants_cpu() -> float:
    """CPU seconds of the live processes under this one, each with its reaped children's."""
    me = os.getpid()
    parent: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        parent[int(entry)] = int(fields[1])
        cpu[int(entry)] = sum(int(x) for x in fields[11:15]) / _TICK  # utime, stime, cutime, cstime
    total = 0.0
    for pid, seconds in cpu.items():
        up = parent.get(pid)
        while up and up not in (me, 1):
            up = parent.get(up)
        if up == me:
            total += seconds
    return total


def _now() -> tuple[float, float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    waited = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.monotonic(), own.ru_utime + own.ru_stime, waited.ru_utime + waited.ru_stime + _descendants_cpu()


def _phase(item: pytest.Item, name: str) -> Iterator[None]:
    before = _now()
    yield
    after = _now()
    item.stash.setdefault(_KEY, {})[name] = [b - a for a, b in zip(before, after, strict=True)]


_KEY = pytest.StashKey[dict[str, list[float]]]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    yield from _phase(item, "setup")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    yield from _phase(item, "call")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    yield from _phase(item, "teardown")
    phases = item.stash[_KEY]
    record: dict[str, Any] = {"id": item.nodeid, "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"), **phases}
    record["wall"], record["own"], record["children"] = (sum(p[i] for p in phases.values()) for i in range(3))
    with open(OUT, "a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")


def pytest_sessionfinish() -> None:
    """The process's whole CPU (its start-up and collection included), once per worker."""
    _, own, children = _now()
    with open(OUT, "a", encoding="utf-8") as f:
        f.write(
            json.dumps({"session": os.environ.get("PYTEST_XDIST_WORKER", "main"), "own": own, "children": children})
        )
        f.write("\n")


def main(path: str, files: int = 40, tests: int = 60) -> None:
    with open(path, encoding="utf-8") as f:
        records = [json.loads(line) for line in f]
    runs = [r for r in records if "id" in r]
    sessions = [r for r in records if "session" in r]
    print(
        "processes (own, children):", ", ".join(f"{s['session']} {s['own']:.1f} {s['children']:.1f}" for s in sessions)
    )
    own, children = sum(r["own"] for r in runs), sum(r["children"] for r in runs)
    print(f"{len(runs)} tests: {own + children:.1f} s CPU ({own:.1f} in the test processes, {children:.1f} below them)")
    by_file: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0, 0.0, 0.0])
    for r in runs:
        entry = by_file[r["id"].split("::")[0]]
        entry[0] += 1
        entry[1] += r["own"]
        entry[2] += r["children"]
        entry[3] += r["wall"]
    print("\n tests    own  below  total   wall  file")
    for name, (n, o, c, w) in sorted(by_file.items(), key=lambda kv: -(kv[1][1] + kv[1][2]))[:files]:
        print(f"{n:6.0f} {o:6.1f} {c:6.1f} {o + c:6.1f} {w:6.1f}  {name}")
    print("\n   own  below  total   wall  test")
    for r in sorted(runs, key=lambda r: -(r["own"] + r["children"]))[:tests]:
        print(f"{r['own']:6.1f} {r['children']:6.1f} {r['own'] + r['children']:6.1f} {r['wall']:6.1f}  {r['id']}")


if __name__ == "__main__":
    main(*sys.argv[1:2], *(int(a) for a in sys.argv[2:4]))
