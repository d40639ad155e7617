"""How `pytest -n N` hands tests to its workers: bench groups, and a crashed worker's tests passed on."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import pytest

MATRIX = "tests/contract/test_workflow_matrix.py::test_workflow_matrix["
ADMISSION = "tests/test_admission.py::"
# Tests a worker holds before it asks for more. A worker runs a test only once it has been sent the
# next one (or told to stop: xdist's remote.py reads one index ahead), so a worker left with one test
# and none to follow waits for ever.
HELD = 2


def xdist_group(nodeid: str) -> str:
    """The unit pytest-xdist's `--dist loadgroup` (pyproject's addopts) hands to one worker: a workflow
    matrix case goes with the other cases of its bench, so each bench is built once, on one worker, and an
    admission test with the others of its family (tests/test_admission.py); every other test goes alone,
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
    return nodeid


def make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`--dist loadgroup` with the groups of xdist_group, mended where a crashed worker hung the run."""
    from xdist.scheduler import LoadGroupScheduling

    class ByBench(LoadGroupScheduling):
        """xdist 3.8's LoadScopeScheduling, whose units are modules, met our units of one test each:

        - a dead worker's units went back to the queue whole, the tests it had run too (as empty
          units: a worker handed one is sent nothing and, holding one test, waits for ever: the run
          hung at 99 %) and the test that killed it (run again, it killed the next worker);
        - a worker that had been told to stop could not take them, and a replacement got one unit at
          a time, one test it then held without running until the run's end."""

        def _split_scope(self, nodeid: str) -> str:
            return xdist_group(nodeid)

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
