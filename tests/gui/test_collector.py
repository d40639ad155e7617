"""Python's collector frees Qt objects on the GUI thread only, however much a database call's thread allocates."""

from __future__ import annotations

import gc
import threading
import weakref
from typing import Any

from PySide6.QtCore import QObject, QTimer

from workbench.gui import app as gui_app
from workbench.gui import collector, dispatch


class _Cyclic(QObject):
    """A Qt object held only by a cycle through itself, as a closed window is through its callbacks."""

    def __init__(self) -> None:
        super().__init__()
        self.me = self
        self.tick = QTimer(self)  # an object the GUI thread's event loop serves
        self.tick.timeout.connect(lambda: None)
        self.tick.start(1)


def _allocate() -> tuple[str, list[Any]]:
    # What a database call does to the collector's counts: rows for the window, several thresholds' worth.
    return threading.current_thread().name, [[n] for n in range(10 * gc.get_threshold()[0])]


def test_a_cycle_holding_a_qt_object_is_freed_on_the_gui_thread(qtbot: Any) -> None:
    gui_app.application()
    dispatcher = dispatch.Dispatcher(threads=1)
    assert not gc.isenabled()  # the dispatcher's threads never collect
    died_on: list[str] = []
    for _ in range(5):
        obj = _Cyclic()
        weakref.finalize(obj, lambda: died_on.append(threading.current_thread().name))
        del obj
        answers: list[tuple[str, list[Any]]] = []
        dispatcher.call(_allocate, answers.append)
        qtbot.waitUntil(lambda a=answers: bool(a), timeout=20_000)
        assert answers[0][0] != threading.main_thread().name  # the allocation ran on the worker
    qtbot.waitUntil(lambda: len(died_on) == 5, timeout=10_000)  # collected by the GUI thread's timer
    assert set(died_on) == {threading.main_thread().name}
    dispatcher.wait()


def test_collect_due_runs_the_generation_python_would() -> None:
    threshold = gc.get_threshold()
    gc.collect()  # counts back to nothing
    assert collector.collect_due() == 0  # nothing due: no collection at all
    obj: list[Any] = []
    obj.append(obj)
    ref = weakref.ref(_Referent(obj))
    for n in range(threshold[0] + 10):  # past generation 0's threshold
        obj.append([n])
    del obj
    collector.collect_due()
    assert gc.get_count()[0] < threshold[0]
    assert ref() is None


class _Referent:
    def __init__(self, cycle: list[Any]) -> None:
        self.cycle = cycle
        cycle.append(self)
