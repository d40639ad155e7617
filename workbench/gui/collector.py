"""Python's cyclic garbage collector, run on the GUI thread only (never on a database call's thread)."""

from __future__ import annotations

import gc

from PySide6.QtCore import QCoreApplication, QObject, QTimer

# How often the GUI thread looks whether a collection is due: short beside the time a window is open, long
# beside a collection's few milliseconds (objects held only by a cycle live at most this much longer).
INTERVAL_MS = 500
NAME = "workbench_gui_thread_collector"


class GuiThreadCollector(QObject):
    """Turns Python's automatic collection off and collects on the GUI thread, as often as it would have.

    Left on, Python collects in whichever thread allocates when a threshold is passed: mostly the
    dispatcher's, which build thousands of objects per database call (SQLAlchemy's statements and rows).
    A collection that frees a Qt object (a closed window's wrapper held only by a reference cycle through
    its callbacks) destroys it there, while the GUI thread may be painting or delivering an event to it:
    the process dies with a segmentation fault in the GUI thread's event loop (the suite's console tests
    did, twice, with a database call's thread compiling a statement meanwhile). Calibre runs its
    collector the same way for the same reason. The thresholds stay Python's own: `collect_due` runs the
    generation a collection would have run, so memory is reclaimed as before, half a second later at most.
    """

    def __init__(self, parent: QObject) -> None:
        super().__init__(parent)
        self.setObjectName(NAME)
        self.threshold = gc.get_threshold()
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.collect_due)
        self.timer.start(INTERVAL_MS)
        gc.disable()

    def collect_due(self) -> int:
        """Collect the generation Python's thresholds say is due (none: 0 objects); the GUI thread only."""
        return collect_due(self.threshold)


def collect_due(threshold: tuple[int, ...] | None = None) -> int:
    """Collect the oldest generation whose threshold is passed, as Python's automatic collection would."""
    limits = threshold or gc.get_threshold()
    counts = gc.get_count()
    if counts[0] <= limits[0]:
        return 0
    generation = 0
    if counts[1] > limits[1]:
        generation = 2 if counts[2] > limits[2] else 1
    return gc.collect(generation)


def install() -> GuiThreadCollector | None:
    """Collect on the GUI thread from now on (once per application; None before a QCoreApplication exists)."""
    app = QCoreApplication.instance()
    if app is None:
        return None
    found = app.findChild(QObject, NAME)
    return found if isinstance(found, GuiThreadCollector) else GuiThreadCollector(app)
