"""A worker's crash, for tests/test_scheduling.py: run by name only (not a test_ file), with the variable set."""

from __future__ import annotations

import os
import signal
import time

import pytest

CRASH = "WORKBENCH_CRASH_PROBE"  # the case that kills its worker: os.kill(SIGSEGV), as the GUI test's crash did
CASES = 16


@pytest.mark.parametrize("case", range(CASES))
def test_case(case: int) -> None:
    if str(case) != os.environ.get(CRASH):
        time.sleep(0.05)
        return
    # Long enough for the other worker to run every test it can be given and be told to stop: the tests
    # this worker holds beyond the crash can then go only to its replacement (the run that hung at 99 %).
    time.sleep(4)
    os.kill(os.getpid(), signal.SIGSEGV)
