"""Run database calls on a thread pool and hand results back to the GUI thread as plain data."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot

from workbench.gui import collector

log = logging.getLogger("workbench.gui")

Callback = Callable[[Any], None]


class _Relay(QObject):
    """Lives on the GUI thread; a worker's emit is queued to it (Qt picks a queued connection)."""

    finished = Signal(int, bool, object)


class _Job(QRunnable):
    def __init__(self, request_id: int, fn: Callable[[], Any], relay: _Relay) -> None:
        super().__init__()
        self.request_id, self.fn, self.relay = request_id, fn, relay
        self.setAutoDelete(True)

    def run(self) -> None:
        try:
            result, ok = self.fn(), True
        except BaseException as exc:  # noqa: BLE001 - every outcome goes back to the GUI as a value
            result, ok = exc, False
        self.relay.finished.emit(self.request_id, ok, result)


class Dispatcher(QObject):
    """Submits callables to a small thread pool; never blocks the GUI.

    A pool (not one thread) so that one call hanging on a dead database cannot hold up the next
    attempt once the connection is back. Every call gets an id; `cancel` drops a result that
    is no longer wanted (the user moved on), so stale answers never reach the window.

    Signals:
        busy_changed(bool): whether any call is running.
    """

    busy_changed = Signal(bool)

    def __init__(self, parent: QObject | None = None, threads: int = 4) -> None:
        super().__init__(parent)
        # Its threads allocate most of the process's objects: Python's collector must not run on them.
        collector.install()
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(threads)
        # Threads live as long as the window: the engine keeps one connection per thread, and a
        # pool thread that expired and came back as a new thread would strand the old one.
        self.pool.setExpiryTimeout(-1)
        # Calls that wait on a socket for long (the change relay's wake-ups) run on a pool of their own:
        # they must never hold a thread a database call needs, nor keep the window from counting as idle.
        self.waits = QThreadPool(self)
        self.waits.setMaxThreadCount(2)
        self.waits.setExpiryTimeout(-1)
        self._relay = _Relay(self)
        self._relay.finished.connect(self._on_finished)
        self._pending: dict[int, tuple[Callback, Callback | None]] = {}
        self._quiet: dict[int, tuple[Callback, Callback | None]] = {}  # calls that do not make the window busy
        self._ids = itertools.count(1)

    def call(
        self,
        fn: Callable[[], Any],
        on_done: Callback,
        on_error: Callback | None = None,
        *,
        quiet: bool = False,
        waits: bool = False,
    ) -> int:
        """Run `fn()` off the GUI thread; `on_done(result)` or `on_error(exception)` runs on the GUI thread.

        quiet: a look the window makes by itself every second or so (the change feed): it does not make
        the window busy (no busy cursor, and the window still counts as idle for closing connections).
        waits: a quiet call that waits on something other than the database (the change relay), on its own pool.
        """
        request_id = next(self._ids)
        if quiet or waits:
            self._quiet[request_id] = (on_done, on_error)
            (self.waits if waits else self.pool).start(_Job(request_id, fn, self._relay))
            return request_id
        was_busy = bool(self._pending)
        self._pending[request_id] = (on_done, on_error)
        self.pool.start(_Job(request_id, fn, self._relay))
        if not was_busy:
            self.busy_changed.emit(True)
        return request_id

    def cancel(self, request_id: int) -> None:
        """Forget a call: its result, when it arrives, is dropped."""
        self._quiet.pop(request_id, None)
        if self._pending.pop(request_id, None) is not None and not self._pending:
            self.busy_changed.emit(False)

    @property
    def busy(self) -> bool:
        return bool(self._pending)

    def wait(self, msecs: int = 30_000) -> bool:
        """Wait for running calls (shutdown and tests only; never from a GUI event handler)."""
        return bool(self.pool.waitForDone(msecs))

    @Slot(int, bool, object)
    def _on_finished(self, request_id: int, ok: bool, result: Any) -> None:
        callbacks = self._quiet.pop(request_id, None)
        if callbacks is None:
            callbacks = self._pending.pop(request_id, None)
            if not self._pending and callbacks is not None:
                self.busy_changed.emit(False)
        if callbacks is None:
            return  # cancelled: a stale result
        on_done, on_error = callbacks
        if ok:
            on_done(result)
        elif on_error is not None:
            on_error(result)
        else:
            log.error("unhandled error in background call", exc_info=result)
