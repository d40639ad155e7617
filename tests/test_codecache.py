"""The source Python writes and compiles at every start (dataclasses' methods, typing's forward
references) is compiled once and kept between starts (workbench/codecache.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# A fresh process as the `workbench` command starts: the entry point first, then the modules of a
# `next` (config, items, the command line). Prints what it compiled and a made class's behaviour.
CHILD = r"""
import json, sys
import workbench.cli.launcher
from workbench import codecache
import workbench.cli.main, workbench.config.model, workbench.core.models
import dataclasses, typing

@dataclasses.dataclass(frozen=True)
class Point:
    x: int
    y: "list[int]" = dataclasses.field(default_factory=list)

class Pair(typing.NamedTuple):
    a: "int"
    b: "str"

p = Point(1, [2])
try:
    p.x = 3
    frozen = False
except dataclasses.FrozenInstanceError:
    frozen = True
print(json.dumps({
    "new": codecache._state["new"],
    "held": len(codecache._table),
    "repr": repr(p),
    "eq": p == Point(1, [2]) and p != Point(2),
    "hash": hash(Point(1, ())) == hash(Point(1, ())),
    "frozen": frozen,
    "default": Point(5).y,
    # no __future__ flags leaked into the generated code: __init__'s annotations are objects
    "init_annotations": repr(Point.__init__.__annotations__["x"]),
    "forward": repr(typing.get_type_hints(Pair)),
}))
"""


def _start(home: Path) -> dict[str, object]:
    env = dict(os.environ, WORKBENCH_HOME=str(home), PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=True, cwd=REPO)
    return json.loads(proc.stdout)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def _files(home: Path) -> list[Path]:
    return sorted((home / "cache").glob("dataclasses-*.code"))


def test_the_second_start_compiles_none_of_what_the_first_kept(home: Path) -> None:
    first = _start(home)
    assert int(first["new"]) > 100  # the command line's, the config's, the items' classes and typing's
    assert len(_files(home)) == 1
    second = _start(home)
    assert second["new"] == 0
    assert int(second["held"]) >= int(first["held"])
    for key in ("repr", "eq", "hash", "frozen", "default", "init_annotations", "forward"):
        assert second[key] == first[key], key
    assert first["repr"] == "Point(x=1, y=[2])"
    assert first["eq"] is True and first["hash"] is True and first["frozen"] is True
    assert first["default"] == []
    assert first["init_annotations"] == "<class 'int'>"  # not '_type_x': no __future__ flags inherited
    assert first["forward"] == "{'a': <class 'int'>, 'b': <class 'str'>}"


def test_a_damaged_file_is_made_again(home: Path) -> None:
    _start(home)
    [path] = _files(home)
    path.write_bytes(b"\x00not marshal")
    again = _start(home)
    assert int(again["new"]) > 100
    assert _start(home)["new"] == 0


def test_without_a_cache_directory_classes_are_made_as_before(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")  # WORKBENCH_HOME under a file: no directory can be made
    got = _start(blocker / "home")
    assert got["repr"] == "Point(x=1, y=[2])"
    assert int(got["new"]) > 100
