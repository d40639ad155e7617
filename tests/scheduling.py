"""How `pytest -n N` hands tests to its workers: bench groups, and a crashed worker's tests passed on."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

MATRIX = "tests/contract/test_workflow_matrix.py::test_workflow_matrix["
ADMISSION = "tests/test_admission.py::"
LAYERS = "tests/test_layers.py::"
# Tests a worker holds before it asks for more. A worker runs a test only once it has been sent the
# next one (or told to stop: xdist's remote.py reads one index ahead), so a worker left with one test
# and none to follow waits for ever.
HELD = 2
# The units that take longest, with their seconds in a recent run (tests/slow_units.py writes it): handed out
# first, so that none starts near the end and keeps one worker busy while the others have finished.
SLOW_UNITS = Path(__file__).with_name("slow_units.txt")


def xdist_group(nodeid: str) -> str:
    """The unit pytest-xdist's `--dist loadgroup` (pyproject's addopts) hands to one worker: a workflow
    matrix case goes with the other cases of its bench, so each bench is built once, on one worker, an
    admission test with the others of its family (tests/test_admission.py), and the layer rules' tests
    together (tests/test_layers.py: each worker would parse every module again); every other test goes alone,
    wherever a worker is free. Read from the nodeid here because the controller sees nothing else, and
    xdist 3.8's own `xdist_group` marker is lost under pytest 9.2 (it appends the group to `item._nodeid`,
    which pytest 9.2 no longer reads)."""
    if nodeid.startswith(MATRIX):
        from tests.contract.test_workflow_matrix import bench_of

        bench = bench_of(nodeid[len(MATRIX) :].rstrip("]"))
        if bench is not None:
            return f"workflow-bench:{bench}"
    if nodeid.startswith(ADMISSION):  # likewise the admission tests of one family (built once per module)
        from tests.test_admission import family_of

        return f"admission:{family_of(nodeid)}"
    if nodeid.startswith(LAYERS):  # its tests share one parse of the package's modules, made once per process
        return "layers"
    return nodeid


def slow_units(path: Path = SLOW_UNITS) -> dict[str, float]:
    """The seconds of each unit `path` lists ("12.3 unit" a line, # a comment); none if it is missing. A line
    that does not read is passed over: the file only orders the run, it must never stop it."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return {}
    seconds: dict[str, float] = {}
    for line in lines:
        figure, _, unit = line.strip().partition(" ")
        try:
            seconds[unit.strip()] = float(figure)
        except ValueError:
            continue  # a comment, a blank or a broken line
    return seconds


def longest_first(
    workqueue: Mapping[str, dict[str, bool]], seconds: Mapping[str, float]
) -> OrderedDict[str, dict[str, bool]]:
    """`workqueue` with the units `seconds` knows first, longest first, and the rest after in the order they
    came; a unit `seconds` names but the queue holds not (renamed, removed, deselected) changes nothing."""
    known = sorted((unit for unit in workqueue if unit in seconds), key=lambda unit: -seconds[unit])
    ordered = OrderedDict((unit, workqueue[unit]) for unit in known)
    ordered.update(workqueue)  # a key already there keeps its place
    return ordered


def make_scheduler(config: pytest.Config, log: Any, seconds: Mapping[str, float] | None = None) -> Any:
    """`--dist loadgroup` with the groups of xdist_group, the longest units of `seconds` (tests/slow_units.txt
    by default) handed out first, mended where a crashed worker hung the run."""
    known = slow_units() if seconds is None else seconds
    from xdist.scheduler import LoadGroupScheduling

    class ByBench(LoadGroupScheduling):
        """xdist 3.8's LoadScopeScheduling, whose units are modules, met our units of one test each:

        - a dead worker's units went back to the queue whole, the tests it had run too (as empty
          units: a worker handed one is sent nothing and, holding one test, waits for ever: the run
          hung at 99 %) and the test that killed it (run again, it killed the next worker);
        - a worker that had been told to stop could not take them, and a replacement got one unit at
          a time, one test it then held without running until the run's end."""

        ordered = False  # whether the queue has been put longest first

        def _split_scope(self, nodeid: str) -> str:
            return xdist_group(nodeid)

        def _assign_work_unit(self, node: Any) -> None:
            """Hand `node` the next unit; before the first, put the queue xdist's schedule() has just built
            from the collection longest first (schedule() builds it and hands it out in one go)."""
            if not self.ordered:
                self.workqueue = longest_first(self.workqueue, known)
                self.ordered = True
            super()._assign_work_unit(node)

        def remove_node(self, node: Any) -> str | None:
            """Forget `node`; if it died mid-work, return the test it died in (xdist reports it failed)
            and queue the tests it had not begun first, for the workers left or its replacement."""
            workload = self.assigned_work.pop(node)
            waiting = [(scope, nodeid) for scope, unit in workload.items() for nodeid, done in unit.items() if not done]
            if not waiting:
                return None
            crashed = waiting[0][1]  # a worker runs its tests in the order they were sent
            again: OrderedDict[str, dict[str, bool]] = OrderedDict()
            for scope, nodeid in waiting[1:]:
                again.setdefault(scope, {})[nodeid] = False
            again.update(self.workqueue)
            self.workqueue = again
            for other in self.nodes:
                self._reschedule(other)
            return crashed

        def _reschedule(self, node: Any) -> None:
            """Top `node` up to more than HELD tests, and tell it to stop once nothing is left to hand
            out (it runs what it holds first). A replacement worker arrives here through schedule()."""
            if node.shutting_down or node not in self.registered_collections:
                return  # stopping, or a replacement still collecting (schedule() comes when it is done)
            while self.workqueue and self._pending_of(self.assigned_work[node]) <= HELD:
                self._assign_work_unit(node)
            if not self.workqueue:
                node.shutdown()

    return ByBench(config, log)
