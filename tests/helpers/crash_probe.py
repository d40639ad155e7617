"""A worker's crash, for tests/test_scheduling.py: run by name only (not a test_ file), with the variable set."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

CRASH = "WORKBENCH_CRASH_PROBE"  # the case that kills its worker: os.kill(SIGSEGV), as the GUI test's crash did
# A directory where each worker notes that it has run its last test (told to stop, nothing left to run).
FINISHED = "WORKBENCH_CRASH_PROBE_FINISHED"
CASES = 16
WAIT = 60.0  # seconds the crash waits at most for the other worker to finish (a mend that broke never tells it)


@pytest.fixture(scope="module", autouse=True)
def _finished() -> Iterator[None]:
    """Torn down after the worker's last test: a worker learns that a test is its last once it has been
    told to stop."""
    yield
    where = os.environ.get(FINISHED)
    if where:
        (Path(where) / os.environ.get("PYTEST_XDIST_WORKER", "main")).touch()


@pytest.mark.parametrize("case", range(CASES))
def test_case(case: int) -> None:
    if str(case) != os.environ.get(CRASH):
        time.sleep(0.05)
        return
    # Once the other worker has run every test it was given and been told to stop, the tests this worker
    # holds beyond the crash can go only to its replacement (the run that hung at 99 %).
    where = os.environ.get(FINISHED)
    deadline = time.monotonic() + (WAIT if where else 4.0)
    while time.monotonic() < deadline and not (where and any(Path(where).iterdir())):
        time.sleep(0.02)
    os.kill(os.getpid(), signal.SIGSEGV)
