"""A window's link to the change relay: look at the feed when woken, poll it again the moment the relay fails."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, QTimer, Signal

from workbench.gui import dispatch

log = logging.getLogger("workbench.gui")

RECONNECT_SECONDS = 5.0  # without it: try it again this often (the window polls every changes_every meanwhile)
WAIT_SECONDS = 60.0  # one blocking wait's longest turn (the wait ends sooner on a wake-up or a drop)
LEAST_GAP = 0.2  # seconds between two looks a wake-up asks for: a relay that cries wolf costs few looks


class RelayLink(QObject):
    """Drives `timer` (the window's feed timer) and `look` (the window's feed look, False when one is in
    flight) from a relay client.

    Connected: the timer is the slow safety look (`safety_seconds`: a relay alive but silent hides nothing
    longer; the operator window's `backstop_every`) and each wake-up looks at once; without
    `safety_seconds` (the console) it stays at `poll_seconds`. Not connected (never
    reached, dropped, silent, killed): the timer is back at `poll_seconds` and a look is made at once,
    so a change made meanwhile is heard within the window's usual interval. The window's own Save,
    Complete and lock checks are untouched: the relay only ever makes a look sooner.

    Signals:
        state_changed(bool): the relay is connected (True) or the window polls (False).
    """

    state_changed = Signal(bool)

    def __init__(
        self,
        dispatcher: dispatch.Dispatcher,
        client: Any,  # services.relay_client.RelayClient: blocking, so called through the dispatcher only
        timer: QTimer,
        look: Callable[[], bool],  # False: a look is in flight, not started (asked again after least_gap)
        poll_seconds: float,
        parent: QObject | None = None,
        least_gap: float = LEAST_GAP,
        safety_seconds: float | None = None,
        what: str = "relay",  # for the log: the change relay, or the database's change notices (the same calls)
    ) -> None:
        super().__init__(parent)
        self.what = what
        self.dispatcher, self.client, self.timer, self.look = dispatcher, client, timer, look
        self.poll_ms = int(poll_seconds * 1000)
        self.least_gap = least_gap  # the console, woken by every change of its queues: a look at most this often
        # The console (no safety_seconds): its timer stays at poll_seconds while connected (a wake-up only makes
        # a look sooner). Woken by every change of a busy site it looks about as often anyway, and through the
        # relay a change waits for the relay's read, the wake-up and the gap besides: alone, the relay made the
        # board later.
        self.safety_ms = self.poll_ms if safety_seconds is None else int(safety_seconds * 1000)
        if safety_seconds is None:
            timer.timeout.connect(self._ticked)  # the timer's looks count for the gap
        self.connected: bool | None = None  # None: not tried yet
        self._stopped = False
        self._looked = 0.0
        self._later = QTimer(self)
        self._later.setSingleShot(True)
        self._later.timeout.connect(self._look)
        self._again = QTimer(self)
        self._again.setSingleShot(True)
        self._again.timeout.connect(self._connect)
        # A wait blocks a pool thread until the relay speaks (up to WAIT_SECONDS): ended at quit, or the
        # pool's teardown would wait for it.
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.stop)

    def start(self) -> None:
        """Start polling (as without a relay) and try the relay; once it answers, the timer slows down."""
        self.timer.start(self.poll_ms)
        self._connect()

    def stop(self) -> None:
        self._stopped = True
        self._again.stop()
        self._later.stop()
        self.client.close()  # a wait under way ends (on its thread) and is not followed by another

    def _connect(self) -> None:
        if not self._stopped:
            self.dispatcher.call(self.client.connect, self._connected, self._lost, quiet=True, waits=True)

    def _connected(self, _high: int) -> None:
        if self._stopped:
            return
        self._set(True)
        self._look()  # what changed while the relay was not listening for us
        self._wait()

    def _wait(self) -> None:
        if not self._stopped:
            self.dispatcher.call(
                lambda: self.client.wait(WAIT_SECONDS), self._woken, self._lost, quiet=True, waits=True
            )

    def _woken(self, woken: int | None) -> None:
        if self._stopped:
            return
        if woken is not None:
            self._look()
        self._wait()

    def _look(self) -> None:
        gap = time.monotonic() - self._looked
        if gap < self.least_gap:
            if not self._later.isActive():
                self._later.start(int((self.least_gap - gap) * 1000) + 1)
            return
        self._looked = time.monotonic()
        if not self.look():
            # A look was in flight: it may have read before the change that woke us, so one follows it
            # (dropped, the change waited for the next wake-up or the safety look).
            self._later.start(int(self.least_gap * 1000) + 1)

    def _ticked(self) -> None:
        self._looked = time.monotonic()

    def _lost(self, exc: BaseException) -> None:
        if self._stopped:
            return
        if self.connected:
            log.info("change %s lost (%s): the window looks every %.1f s itself", self.what, exc, self.poll_ms / 1000)
            self._set(False)
            self._look()  # a wake-up may have been on its way
        elif self.connected is None:
            self._set(False)
        self._again.start(int(RECONNECT_SECONDS * 1000))

    def _set(self, connected: bool) -> None:
        changed = connected != self.connected
        self.connected = connected
        self.timer.start(self.safety_ms if connected else self.poll_ms)
        if changed:
            self.state_changed.emit(connected)
