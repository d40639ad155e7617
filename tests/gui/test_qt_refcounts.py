"""The Qt binding must not leak references: the window emits signals and runs pool jobs all day.

PySide6 6.12.0 dropped one reference to True on every signal emit and one to None on every
QThreadPool job; on Python < 3.12 (where True and None are ordinary objects) the process then
aborts with "bool_dealloc" / "none_dealloc" after a few thousand database calls.
"""

from __future__ import annotations

import gc
import sys
from typing import Any

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Signal

from workbench.gui import app as gui_app
from workbench.gui import dispatch

CALLS = 6000
# With the bug each call costs one reference (-6000); other objects coming and going while the
# test runs (widgets of earlier tests deleted late) moved the counts by up to ~1,700 in CI.
TOLERANCE = CALLS // 2


def _counts() -> tuple[int, int]:
    # Let earlier tests' widgets finish dying first, so that their references do not count here.
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    QCoreApplication.processEvents()
    gc.collect()
    return sys.getrefcount(True), sys.getrefcount(None)


class _Relay(QObject):
    fired = Signal(object)


def test_signal_emits_keep_true_and_none_alive() -> None:
    gui_app.application()
    relay, got = _Relay(), []
    relay.fired.connect(got.append)
    before = _counts()
    for i in range(CALLS):
        relay.fired.emit(i)
    after = _counts()
    assert len(got) == CALLS
    assert after[0] - before[0] > -TOLERANCE and after[1] - before[1] > -TOLERANCE, (before, after)


def test_dispatcher_calls_keep_true_and_none_alive(qtbot: Any) -> None:
    gui_app.application()
    dispatcher = dispatch.Dispatcher()
    done: list[Any] = []
    before = _counts()
    for _ in range(CALLS):
        dispatcher.call(lambda: None, done.append)
    qtbot.waitUntil(lambda: len(done) == CALLS, timeout=30_000)
    dispatcher.wait()
    after = _counts()
    assert after[0] - before[0] > -TOLERANCE and after[1] - before[1] > -TOLERANCE, (before, after)
