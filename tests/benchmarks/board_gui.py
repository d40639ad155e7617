"""What the supervisor waits for: a board refresh from timer to painted table, and the GUI thread's longest stall."""

from __future__ import annotations

import dataclasses
import itertools
import os
import statistics
import time
from typing import Any

HEARTBEAT_MS = 5  # the probe's interval: a gap much longer than this is time the GUI thread could not react
TIMEOUT_S = 120.0  # one refresh taking longer than this is reported as a failure, not waited for


@dataclasses.dataclass
class Refresh:
    """One refresh, in ms from the refresh call: the update began on the GUI thread, the table was painted."""

    arrived: float
    painted: float
    stall: float  # the longest gap between two heartbeats from the refresh call to one beat after the paint


@dataclasses.dataclass
class Figures:
    """A window's first refresh (its columns are sized then), the refreshes after it, and the
    longest heartbeat gap of the idle window (the machine's own noise: other processes, the GIL)."""

    first: Refresh
    runs: list[Refresh]
    idle_stall: float


def measure(wb: Any, runs: int) -> Figures:
    """Open a supervisor window on `wb`, let it settle, time its first refresh and `runs` more."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QCoreApplication, QEventLoop, Qt, QTimer
    from PySide6.QtTest import QTest

    from workbench.gui import app as gui_app
    from workbench.gui import supervisor

    gui_app.application()
    window = supervisor.SupervisorWindow(
        wb, "sup", refresh_seconds=600, changes_seconds=0
    )  # refreshed here, not by its timer
    window.resize(1100, 680)
    window.show()
    QTest.qWaitForWindowExposed(window)
    beats: list[float] = []
    heartbeat = QTimer()
    heartbeat.setTimerType(Qt.TimerType.PreciseTimer)
    heartbeat.setInterval(HEARTBEAT_MS)
    heartbeat.timeout.connect(lambda: beats.append(time.perf_counter()))
    marks: dict[str, float] = {}
    loop = QEventLoop()
    give_up = QTimer()
    give_up.setSingleShot(True)
    give_up.timeout.connect(loop.quit)

    def began() -> None:  # layoutAboutToBeChanged: the answer is in, the model starts its update
        marks.setdefault("arrived", time.perf_counter())

    def painted() -> None:  # queued after the update: flush the posted layout and paint requests
        QCoreApplication.sendPostedEvents()
        marks["painted"] = time.perf_counter()
        QTimer.singleShot(2 * HEARTBEAT_MS, loop.quit)  # one more beat, to close the last gap

    window.model.layoutAboutToBeChanged.connect(began)
    window.model.layoutChanged.connect(painted, Qt.ConnectionType.QueuedConnection)

    def once() -> Refresh:
        marks.clear()
        beats.clear()
        started = time.perf_counter()
        beats.append(started)
        window.refresh()
        give_up.start(int(TIMEOUT_S * 1000))
        loop.exec()
        give_up.stop()
        if "painted" not in marks:
            raise RuntimeError(f"no refresh within {TIMEOUT_S:.0f} s: {window.status.text()}")
        times = [b for b in beats if b >= started]
        gaps = [b - a for a, b in itertools.pairwise(times)]
        return Refresh(
            arrived=(marks["arrived"] - started) * 1000,
            painted=(marks["painted"] - started) * 1000,
            stall=max(gaps, default=0.0) * 1000,
        )

    def idle(ms: int = 1000) -> float:
        beats.clear()
        QTest.qWait(ms)
        return max((b - a for a, b in itertools.pairwise(beats)), default=0.0) * 1000

    heartbeat.start()
    try:
        quiet = idle()
        first = once()
        return Figures(first, [once() for _ in range(runs)], max(quiet, idle()))
    finally:
        heartbeat.stop()
        window.close()
        window.dispatcher.wait(30_000)
        window.deleteLater()
        QCoreApplication.sendPostedEvents()


def report(locks: int, figures: Figures, aim_ms: float, stall_aim_ms: float) -> list[str]:
    """Lines of figures: median and max of the refreshes, the first one of the window, the idle noise."""
    first, runs = figures.first, figures.runs

    def figure(name: str, values: list[float], aim: float | None = None) -> str:
        verdict = "" if aim is None else ("  [ok]" if statistics.median(values) <= aim else "  [ABOVE AIM]")
        return f"    {name:40} median {statistics.median(values):8.1f} ms  max {max(values):8.1f} ms{verdict}"

    return [
        (
            f"  board window, {locks:,} locks: first refresh (columns sized) {first.painted:.0f} ms to painted, "
            f"longest stall {first.stall:.0f} ms; idle window's longest heartbeat gap {figures.idle_stall:.0f} ms"
        ),
        figure("refresh -> answer on the GUI thread", [r.arrived for r in runs]),
        figure("refresh -> table painted", [r.painted for r in runs], aim_ms),
        figure("GUI thread busy (answer -> painted)", [r.painted - r.arrived for r in runs]),
        figure(f"longest stall ({HEARTBEAT_MS} ms heartbeat)", [r.stall for r in runs], stall_aim_ms),
    ]
