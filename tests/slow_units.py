"""Writes tests/slow_units.txt, the units the scheduler hands out first, from the test times of junit files.

The full suite's and the fast tier's (README), so that each has its own longest units listed:

    .venv/bin/python -m pytest -q -n 4 --junit-xml=/tmp/suite-junit.xml
    .venv/bin/python -m pytest -m "not servers" -n 4 -q --junit-xml=/tmp/fast-junit.xml
    .venv/bin/python -m tests.slow_units /tmp/suite-junit.xml /tmp/fast-junit.xml > tests/slow_units.txt
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from tests.scheduling import SLOW_UNITS, xdist_group

REPO = Path(__file__).resolve().parents[1]
KEEP = 30  # units listed from each file: past these they take a few seconds each, and their order matters little
FLOOR = 4.0  # seconds; a unit quicker than this is left out whatever its rank


def nodeid(classname: str, name: str) -> str:
    """pytest's nodeid of a junit testcase: the longest dotted prefix that names a file is the module, the
    rest its classes ("tests.gui.test_x.TestY" -> "tests/gui/test_x.py::TestY")."""
    parts = classname.split(".")
    for cut in range(len(parts), 0, -1):
        path = "/".join(parts[:cut]) + ".py"
        if (REPO / path).is_file():
            return "::".join([path, *parts[cut:], name])
    return "::".join([*parts, name])  # a module gone since: an id nothing matches


def unit_seconds(junit: str) -> dict[str, float]:
    """Each unit's time in the run of `junit`: the sum of its tests'."""
    units: dict[str, float] = defaultdict(float)
    for case in ET.parse(junit).iter("testcase"):
        units[xdist_group(nodeid(case.get("classname", ""), case.get("name", "")))] += float(case.get("time", 0))
    return units


def slowest(junit_files: Iterable[str]) -> dict[str, float]:
    """The KEEP longest units of each file (of FLOOR seconds or more), each with the longest time a file gives it."""
    listed: dict[str, float] = {}
    for junit in junit_files:
        units = unit_seconds(junit)
        for unit in sorted(units, key=lambda unit: -units[unit])[:KEEP]:
            if units[unit] >= FLOOR:
                listed[unit] = max(listed.get(unit, 0.0), units[unit])
    return listed


def main(junit_files: list[str]) -> None:
    listed = slowest(junit_files)
    print(f"# {SLOW_UNITS.name}: written by tests/slow_units.py (its docstring says how); seconds, then the unit")
    for unit in sorted(listed, key=lambda unit: -listed[unit]):
        print(f"{listed[unit]:6.1f} {unit}")


if __name__ == "__main__":
    main(sys.argv[1:])
