"""The docs' worker example (docs/reference/api.md), run as written in several OS processes on every database."""

from __future__ import annotations

import collections
import os
import re
import sys
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests import support
from tests.helpers import forked
from workbench import api

REPO = Path(__file__).resolve().parent.parent
PROCESSES = 4
ROWS = 600  # enough work that each process gets some, however its start-up is delayed


def _example() -> str:
    page = (REPO / "docs" / "reference" / "api.md").read_text(encoding="utf-8")
    found = re.search(r"<!-- worker-example -->\n```python\n(.*?)```", page, re.DOTALL)
    assert found, "docs/reference/api.md lost its worker example"
    return found.group(1)


def test_the_readme_worker_drains_the_queue_in_several_processes(native_env: support.Env) -> None:
    wb = native_env.demo(case_rows=ROWS, import_rows=1)
    table = wb.queue("cases").q.table
    waiting = table.c.status.in_(["new", "open"])
    before = native_env.count(wb, "cases", waiting)
    config = native_env.demo_config_file()
    script = native_env.tmp / "worker.py"
    script.write_text(_example(), encoding="utf-8")
    go = native_env.tmp / "go"
    # Each a process of its own running the script as `python worker.py CONFIG QUEUE USER` does (runpy), forked
    # with workbench already imported (tests/helpers/forked.py), all starting together (api_worker).
    procs = [
        forked.Popen(
            [sys.executable, "-m", "tests.helpers.api_worker", str(script), str(config), "cases", f"bot{i}"],
            cwd=native_env.tmp,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            stdout=True,
        )
        for i in range(PROCESSES)
    ]
    deadline = time.monotonic() + 120
    while len(list(native_env.tmp.glob("ready-*"))) < PROCESSES and time.monotonic() < deadline:
        time.sleep(0.01)
    go.write_text("go")
    counts = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err[-2000:]
        counts.append(int(out.strip().splitlines()[-1]))
    left = native_env.count(wb, "cases", waiting)
    with wb.engine.connect() as conn:
        completions = (
            conn.execute(sa.text("SELECT item_key FROM workbench_audit WHERE event = 'complete' AND actor LIKE 'bot%'"))
            .scalars()
            .all()
        )
    assert left == 0, f"{left} of {before} cases still waiting"
    assert sum(counts) == len(completions) == before > 0
    assert max(collections.Counter(completions).values()) == 1, "an item was completed twice"
    assert sum(1 for n in counts if n) >= 2 or native_env.backend == "sqlite", counts


def test_connect_reports_a_bad_config_as_a_config_error(tmp_path: Path) -> None:
    bad = tmp_path / "workbench.toml"
    bad.write_text("[database]\nurl = 'sqlite:///x.db'\n", encoding="utf-8")
    with pytest.raises(api.ConfigError):
        api.connect(config=bad)


def test_a_worker_sees_the_same_lock_lost_as_the_cli(native_env: support.Env) -> None:
    native_env.demo(case_rows=3, import_rows=1)
    config = native_env.demo_config_file()
    with api.connect(config=config, user="alice") as alice, api.connect(config=config, user="bob") as bob:
        claim = alice.next_item("cases")
        assert isinstance(claim, api.Claim) and claim.lock.owner == "alice"
        with pytest.raises(api.LockLost):
            bob.complete(claim.lock)
        assert alice.complete(claim.lock).outcome == "resolved"
        assert alice.show("cases", claim.lock.key).state == "done:resolved"
