"""The start page's "Yours" between reads: the user's locks per queue, moved by the window's own acts."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping

from workbench.core import models
from workbench.db import digests

# Acts that leave the number of locks as it is: the feed tells them, nothing to account for.
_KEEPING = frozenset({models.EventKind.SAVE, models.EventKind.EXTEND})
OWN_MOST = 1_000  # own acts the feed has not told back yet: more (the feed is not read) and the ledger is dropped


class Yours:
    """The number of locks a user holds per queue, as last read and moved since by this window's own claims and
    ends, each also noted as (event, token digest) until the change feed tells it back. Anything else the feed
    tells about the user's items (a lock of theirs taken in another window, a supervisor's force-release or
    reassign, a takeover after expiry) drops the figures: the next start page reads them again. Trusted only
    while the feed is read (`trust` seconds after the last look): a window whose feed is off reads each time.
    The start page used to read them after every Complete (issue 51: a statement a Complete, 0.25 ms each)."""

    def __init__(self, trust: float) -> None:
        self.trust = trust
        self._counts: dict[str, int] | None = None
        self._own: set[tuple[str, str | None]] = set()
        self._looked = -float("inf")  # monotonic time of the last look at the feed
        self._lock = threading.Lock()  # a window may call from two of its threads at once

    def known(self) -> dict[str, int] | None:
        """The figures, or None: read them (unknown, or the feed not read within `trust`)."""
        with self._lock:
            if self._counts is None or time.monotonic() - self._looked > self.trust:
                return None
            return dict(self._counts)

    def read(self, counts: Mapping[str, int]) -> None:
        """The figures as just read (the own acts noted before are in them)."""
        with self._lock:
            self._counts = dict(counts)

    def read_queue(self, queue: str, count: int) -> None:
        """One queue's figure as just read (the user's locks there)."""
        with self._lock:
            if self._counts is not None:
                self._counts[queue] = count

    def acted(self, queue: str, kind: models.EventKind, token: str, change: int) -> None:
        """This window's own `kind` under the lock `token` changed the user's locks in `queue` by `change`."""
        with self._lock:
            self._own.add((kind.value, digests.token_digest(token)))
            if len(self._own) > OWN_MOST:
                self._own.clear()
                self._counts = None
            if self._counts is not None:
                self._counts[queue] = max(0, self._counts.get(queue, 0) + change)

    def unknown(self) -> None:
        """Something changed the user's locks that this window cannot account for: read them next time."""
        with self._lock:
            self._counts = None

    def looked(self, events: Iterable[models.Event], user: str) -> None:
        """A look at the feed answered with `events` (about the user's items): any not this window's own drops
        the figures."""
        with self._lock:
            self._looked = time.monotonic()
            for event in events:
                own = (event.kind.value, event.token)
                if event.actor == user and own in self._own:
                    self._own.discard(own)
                elif event.kind not in _KEEPING:
                    self._counts = None
