"""Python's collector is held off while the `workbench` command starts and released, with what the start
made frozen, once the database is open (workbench/start_collection.py). Each case runs in a process of its
own: the collector's state is the process's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from workbench import demo

REPO = Path(__file__).resolve().parents[1]

# A `workbench next` as the entry point runs it, watched at the command's start and once its database is open.
NEXT = r"""
import gc, json, sys
from workbench.cli import common, launcher, main as cli_main

seen = {"before the entry point": gc.isenabled()}
run, started = cli_main._run, common._started

def watched_run(args, as_json):
    seen["command starts"] = gc.isenabled()
    return run(args, as_json)

def watched_started(wb):
    opened = started(wb)
    seen["database open"] = gc.isenabled()
    seen["frozen at open"] = gc.get_freeze_count()
    return opened

cli_main._run, common._started = watched_run, watched_started
sys.argv = ["workbench", "--config", sys.argv[1], "--user", "ann", "--json", "next", "cases"]
code = launcher.main()
seen["after"] = gc.isenabled()
seen["code"] = code
print(json.dumps(seen), file=sys.stderr)
"""

# The window's way: its own collector takes over, and the start's end leaves Python's automatic one off.
HANDED_OVER = r"""
import gc, json
from workbench import start_collection as sc

sc.hold()
held = [gc.isenabled(), sc.holding()]
sc.handed_over()
before = gc.get_freeze_count()
sc.release()
sc.release()  # a second release changes nothing
print(json.dumps({"held": held, "after": [gc.isenabled(), sc.holding()], "froze": gc.get_freeze_count() > before}))
"""


def _child(code: str, *args: str, env_home: Path) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "WORKBENCH_HOME": str(env_home), "WORKBENCH_COMMAND_SERVER": "off"}
    return subprocess.run(
        [sys.executable, "-c", code, *args], check=False, cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )


def test_a_command_starts_without_collections_and_collects_once_its_database_is_open(tmp_path: Path) -> None:
    config = demo.create(tmp_path / "demo")
    done = _child(NEXT, str(config), env_home=tmp_path / "home")
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stderr.strip().splitlines()[-1])
    assert json.loads(done.stdout)["queue"] == "cases"  # the command did its work
    assert seen["before the entry point"] is True
    assert seen["command starts"] is False  # held: the imports to come make no collection
    assert seen["database open"] is True  # released at the open database, not only at the end
    assert seen["frozen at open"] > 10_000  # the modules, classes and tables the start made
    assert seen["after"] is True


def test_the_window_keeps_its_own_collector_after_the_start(tmp_path: Path) -> None:
    done = _child(HANDED_OVER, env_home=tmp_path / "home")
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["held"] == [False, True]
    assert seen["after"] == [False, False]  # the GUI thread's collector runs collections (gui/collector.py)
    assert seen["froze"] is True
