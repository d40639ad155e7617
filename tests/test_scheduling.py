"""`pytest -n 2` (tests/scheduling.py): the longest units go first; a worker that dies mid-run fails its test and
hands on the rest."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from tests import scheduling
from tests.helpers import crash_probe

REPO = Path(__file__).resolve().parents[1]


def test_a_crashed_worker_fails_its_test_and_its_replacement_runs_the_rest(tmp_path: Path) -> None:
    """A worker killed by a segmentation fault in its first test, while it holds the next ones and the
    other worker has been told to stop (and has finished: the crash waits for its note in tmp_path): the
    run ends (it used to hang), the crash is that test's failure, the test is not run again (it would
    kill the replacement too), every other test passes."""
    env = {**os.environ, "PYTHONPATH": str(REPO), crash_probe.CRASH: "0", crash_probe.FINISHED: str(tmp_path)}
    env.pop("PYTEST_ADDOPTS", None)  # this run's options are not the inner one's
    # Without the plugins the probe needs not (each of its four processes would import Qt), and without
    # -q, which hides xdist's "replacing crashed worker".
    plugins = [f"-pno:{name}" for name in ("cacheprovider", "faulthandler", "pytest-qt", "hypothesispytest")]
    run = subprocess.run(
        [sys.executable, "-m", "pytest", *plugins, "-n", "2", "tests/helpers/crash_probe.py"],
        cwd=REPO,
        env=env,
        check=False,
        capture_output=True,
        text=True,
        timeout=300,  # the hang this guards against never ended; a quiet machine takes 10 to 20 s
    )
    out = run.stdout
    assert run.returncode == 1, out + run.stderr
    # The report's own line, not the short summary's copy of it (pytest prints that one in full when the
    # environment says CI, and truncates it on a narrow terminal otherwise).
    crashed = re.findall(r"^worker '(gw\d+)' crashed while running '([^']+)'$", out, re.MULTILINE)
    assert [test for _, test in crashed] == ["tests/helpers/crash_probe.py::test_case[0]"], out
    assert out.count("replacing crashed worker") == 1, out
    assert re.search(rf"\b1 failed, {crash_probe.CASES - 1} passed\b", out), out


class Worker:
    """What the scheduler sees of an xdist worker: the indexes of the tests it is sent, and a stop."""

    def __init__(self, name: str) -> None:
        self.gateway = SimpleNamespace(id=name)
        self.sent: list[int] = []
        self.shutting_down = False

    def send_runtest_some(self, indexes: list[int]) -> None:
        self.sent.extend(indexes)

    def shutdown(self) -> None:
        self.shutting_down = True


def test_the_longest_units_are_handed_out_first_and_unknown_ones_in_their_order() -> None:
    """Two workers, ten quick tests collected before two long ones: the long ones start at once, longest
    first, and the quick ones follow in collection order. A unit the durations name but the run has not
    (renamed, deselected) changes nothing."""
    quick = [f"tests/test_q.py::test_q[{n}]" for n in range(10)]
    collection = [*quick, "tests/test_s.py::test_long", "tests/test_s.py::test_longer"]
    seconds = {"tests/test_s.py::test_long": 20.0, "tests/test_s.py::test_longer": 60.0, "tests/gone.py::test": 99.0}
    config = SimpleNamespace(option=SimpleNamespace(loadscopereorder=True), getvalue=lambda name: ["2*popen"])
    scheduler = scheduling.make_scheduler(config, None, seconds)  # type: ignore[arg-type]
    workers = [Worker("gw0"), Worker("gw1")]
    for worker in workers:
        scheduler.add_node(worker)
        scheduler.add_node_collection(worker, collection)
    scheduler.schedule()
    first, second = ([collection[index] for index in worker.sent] for worker in workers)
    assert first[0] == "tests/test_s.py::test_longer" and second[0] == "tests/test_s.py::test_long", (first, second)
    handed = sorted(first[1:] + second[1:], key=collection.index)
    assert handed == quick[: len(handed)] and len(handed) >= 4, (first, second)
    assert list(scheduler.workqueue) == quick[len(handed) :]


def test_the_durations_file_is_read_leniently(tmp_path: Path) -> None:
    """The committed file lists units as the scheduler names them; a missing file, a comment and a broken
    line are passed over (the file orders the run, it must never stop it)."""
    listed = scheduling.slow_units()
    assert len(listed) >= 20 and "admission:tickets" in listed, listed
    path = tmp_path / "slow.txt"
    path.write_text("# a comment\n\n12.5 tests/test_a.py::test_a[x y]\nbroken\nnan? tests/test_b.py::test_b\n")
    assert scheduling.slow_units(path) == {"tests/test_a.py::test_a[x y]": 12.5}
    assert scheduling.slow_units(tmp_path / "missing.txt") == {}
