"""Python's cyclic garbage collector, run on the GUI thread only (never on a database call's thread)."""

from __future__ import annotations

import gc
from dataclasses import dataclass

from PySide6.QtCore import QCoreApplication, QObject, QTimer

from workbench import start_collection

# How often the GUI thread looks whether a collection is due: short beside the time a window is open, long
# beside a collection's few milliseconds (objects held only by a cycle live at most this much longer).
INTERVAL_MS = 500
NAME = "workbench_gui_thread_collector"


@dataclass
class LongLived:
    """What Python's own collector keeps to skip a full collection that would find little new: the objects
    the last full collection left in the oldest generation, and how many younger ones have moved there since."""

    total: int = 0
    pending: int = 0


LONG_LIVED = LongLived()  # the process's: it has one collector (started by GuiThreadCollector)


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
        # Python's own collector ran until now (the start-up's imports): what it has made long-lived so far
        # counts as the last full collection's, so the first one here also waits for a quarter more. Frozen
        # objects too (the console freezes what is alive when it opens): Python's count keeps them.
        LONG_LIVED.total, LONG_LIVED.pending = len(gc.get_objects(generation=2)) + gc.get_freeze_count(), 0
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.collect_due)
        self.timer.start(INTERVAL_MS)
        gc.disable()
        start_collection.handed_over()  # the start's end freezes what it made, and leaves collecting to this

    def collect_due(self) -> int:
        """Collect the generation Python's thresholds say is due (none: 0 objects); the GUI thread only."""
        return collect_due(self.threshold)


def collect_due(threshold: tuple[int, ...] | None = None, long_lived: LongLived | None = None) -> int:
    """Collect the oldest generation whose threshold is passed, as Python's automatic collection would.

    The oldest one, by Python's own rule, only once the objects moved into it since its last collection
    (`long_lived`, by default the process's) are a quarter of those that collection left there. A full
    collection walks every object of the process with every thread stopped: without the rule one ran every
    121st collection however little had changed, on the GUI thread (which it froze for a second under load)."""
    ledger = LONG_LIVED if long_lived is None else long_lived
    limits = threshold or gc.get_threshold()
    counts = gc.get_count()
    if counts[0] <= limits[0]:
        return 0
    if counts[1] <= limits[1]:
        return gc.collect(0)
    if counts[2] > limits[2] and ledger.pending >= ledger.total // 4:
        found = gc.collect(2)
        ledger.total, ledger.pending = len(gc.get_objects(generation=2)), 0
        return found
    young = len(gc.get_objects(0)) + len(gc.get_objects(1))
    found = gc.collect(1)
    ledger.pending += max(0, young - found)  # the survivors: moved into the oldest generation
    return found


def install() -> GuiThreadCollector | None:
    """Collect on the GUI thread from now on (once per application; None before a QCoreApplication exists)."""
    app = QCoreApplication.instance()
    if app is None:
        return None
    found = app.findChild(QObject, NAME)
    return found if isinstance(found, GuiThreadCollector) else GuiThreadCollector(app)
