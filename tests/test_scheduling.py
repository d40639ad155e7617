"""`pytest -n 2` (tests/scheduling.py): a worker that dies mid-run fails its test and hands on the rest."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.helpers import crash_probe

REPO = Path(__file__).resolve().parents[1]


def test_a_crashed_worker_fails_its_test_and_its_replacement_runs_the_rest() -> None:
    """A worker killed by a segmentation fault in its first test, while it holds the next ones and the
    other worker has been told to stop: the run ends (it used to hang), the crash is that test's
    failure, the test is not run again (it would kill the replacement too), every other test passes."""
    env = {**os.environ, "PYTHONPATH": str(REPO), crash_probe.CRASH: "0"}
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
