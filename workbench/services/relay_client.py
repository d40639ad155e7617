"""The change relay's wire (JSON lines) and the window's blocking client: wake-ups only, never rows.

A window that has a relay (`[app] relay`) waits on one TCP connection for "something changed about
your user (or your queues) up to id N" and then makes its own change-feed look under its own login:
what a user may read is the database's answer, as before. The relay is a hint, never an authority:
a lie costs a look, a silence is covered by the window's slow safety look and its lock checks, and a
dropped connection puts the window back on its own polling at once. The relay also sends the start
page's figures of the window's queues ({"counts": {queue: [waiting, overdue, deferred, age]}}), counted
once for everyone: `on_counts` takes them (Operator.take_figures). Either side ignores the keys it does
not know: an older relay sends no figures (the window counts as before), an older window skips them.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from workbench.config import model
from workbench.core import models

PROTOCOL = "workbench-relay/1"
BEAT_SECONDS = 5.0  # the relay says it is alive this often, wake-ups or not
DEAD_SECONDS = 3 * BEAT_SECONDS  # silent this long: the relay is taken for gone (a hung host, a cut cable)
CONNECT_SECONDS = 3.0  # connecting and the relay's answer to the greeting, at most
LINE_LIMIT = 64 * 1024  # a line longer than this is not the relay's


class RelayUnavailable(Exception):
    """The relay cannot be reached, or stopped answering: the window polls the feed itself meanwhile."""


parse_address = model.relay_address  # "host:port" as (host, port); ValueError saying what to fix


def concerns(event: models.Event | models.Notice, user: str, queues: frozenset[str], every: bool) -> bool:
    """Whether a change wakes a window of `user` over `queues` (`every`: a console, every change there)."""
    if event.queue not in queues:
        return False
    if every:
        return True
    # A window acts on others' doings with its user's items (gui/session.py _on_changes): its own
    # actions it already knows; waking it for them would cost a look per claim, Save and Complete.
    return event.owner == user and event.actor != user


def encode(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def hello(user: str, queues: Iterable[str], every: bool = False) -> dict[str, Any]:
    """The greeting: whose changes wake this client (`every`: every change in `queues`, the console's)."""
    return {"hello": PROTOCOL, "user": user, "queues": sorted(queues), "every": every}


Figures = dict[str, tuple[tuple[int, int | None, int], float]]  # {queue: ((waiting, overdue, deferred), age)}


def figures_of(value: Any) -> Figures:
    """The figures a "counts" message names, those well formed (a hint: the rest is left out)."""
    found: Figures = {}
    if not isinstance(value, dict):
        return found
    for queue, entry in value.items():
        if isinstance(entry, list) and len(entry) == 4:
            waiting, overdue, deferred, age = entry
            ints = (waiting, deferred) if overdue is None else (waiting, overdue, deferred)
            if all(isinstance(n, int) and not isinstance(n, bool) for n in ints) and isinstance(age, int | float):
                found[str(queue)] = ((waiting, overdue, deferred), float(age))
    return found


def _id(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise RelayUnavailable(f"the relay sent {value!r} for an id")
    return value


class RelayClient:
    """One window's connection to the relay (blocking: call off the GUI thread, one call at a time;
    `close` may come from any thread and ends a call waiting)."""

    def __init__(
        self,
        address: str,
        user: str,
        queues: Iterable[str],
        *,
        every: bool = False,
        on_counts: Callable[[Figures], None] | None = None,  # the start page's figures, on the waiting thread
    ) -> None:
        self.address = parse_address(address)
        self.on_counts = on_counts
        self.greeting = hello(user, queues, every)
        self._sock: socket.socket | None = None
        self._buffer = b""
        self._heard = 0.0  # time.monotonic() of the last line from the relay
        self._closed = False

    def connect(self) -> int:
        """Connect and greet; the relay's high-water mark (the newest id it has seen). RelayUnavailable."""
        self._drop()
        if self._closed:
            raise RelayUnavailable("closed")
        try:
            sock = socket.create_connection(self.address, timeout=CONNECT_SECONDS)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.sendall(encode(self.greeting))
        except OSError as exc:
            raise RelayUnavailable(f"relay {self.address[0]}:{self.address[1]}: {exc}") from None
        self._sock, self._buffer, self._heard = sock, b"", time.monotonic()
        answer = self._line(time.monotonic() + CONNECT_SECONDS)
        if answer is None or "ready" not in answer:
            self._drop()
            raise RelayUnavailable(f"relay {self.address[0]}:{self.address[1]}: no greeting back")
        return _id(answer["ready"])

    def wait(self, timeout: float) -> int | None:
        """Block until a wake-up (the newest id it names, every wake-up waiting taken at once) or `timeout`
        seconds (None). RelayUnavailable when the connection drops or the relay fell silent."""
        until = time.monotonic() + timeout
        woken: int | None = None
        while True:
            message = self._line(until if woken is None else time.monotonic())
            if message is None:
                return woken
            if "wake" in message:
                woken = max(woken or 0, _id(message["wake"]))
            if "counts" in message and self.on_counts is not None:
                self.on_counts(figures_of(message["counts"]))

    def close(self) -> None:
        """End the connection for good (a waiting call raises RelayUnavailable)."""
        self._closed = True
        self._drop()

    @property
    def connected(self) -> bool:
        return self._sock is not None

    def _drop(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def _line(self, until: float) -> dict[str, Any] | None:
        """The next message, or None once `until` (time.monotonic()) passed with none complete."""
        while b"\n" not in self._buffer:
            sock = self._sock
            if sock is None:
                raise RelayUnavailable("not connected")
            now = time.monotonic()
            if now - self._heard > DEAD_SECONDS:
                self._drop()
                raise RelayUnavailable(f"the relay said nothing for {DEAD_SECONDS:.0f} s")
            left = min(until - now, self._heard + DEAD_SECONDS - now)
            if left <= 0:
                return None
            try:
                sock.settimeout(left)
                data = sock.recv(4096)
            except TimeoutError:
                continue
            except OSError as exc:
                self._drop()
                raise RelayUnavailable(f"the relay's connection: {exc}") from None
            if not data:
                self._drop()
                raise RelayUnavailable("the relay closed the connection")
            self._buffer += data
            self._heard = time.monotonic()
            if len(self._buffer) > LINE_LIMIT and b"\n" not in self._buffer:
                self._drop()
                raise RelayUnavailable("the relay sent a line too long")
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:
            message = json.loads(line)
        except ValueError:
            self._drop()
            raise RelayUnavailable("the relay sent something not JSON") from None
        if not isinstance(message, dict):
            self._drop()
            raise RelayUnavailable("the relay sent something not a message")
        return message


class Listening(Protocol):
    """A session that hears the audit trail's rows as they commit (db/backends: ChangeListener)."""

    def open(self) -> None: ...

    def wait(self, timeout: float) -> list[models.Notice]: ...

    def close(self) -> None: ...


class NoticeClient:
    """A window's wake-ups from the database itself, without a relay: PostgreSQL's notice of each audit row
    as it commits, heard on a connection of the window's own (Service.notice_client). RelayClient's calls
    and promises (gui/relay_link.py drives either): a hint, never an authority; a lost connection raises
    RelayUnavailable and the window polls until it listens again.

    Blocking, one call at a time; `close` may come from any thread: a wait under way ends within TURN."""

    TURN = 0.5  # one wait on the connection at most this long (a close is seen between turns)

    def __init__(self, listener: Listening, user: str, queues: Iterable[str], *, every: bool = False) -> None:
        self._listener, self.user, self.queues, self.every = listener, user, frozenset(queues), every
        self.connected = False
        self._closed = False
        self._busy = threading.Lock()  # held by a call under way: it alone touches the connection

    def connect(self) -> int:
        with self._busy:
            if self._closed:
                raise RelayUnavailable("closed")
            try:
                self._listener.open()
            except Exception as exc:  # noqa: BLE001 - refused, unreachable, a pooler: the window polls
                self.connected = False
                if getattr(exc, "lasting", False):  # db/backends' ListenRefused: a pooler between, …
                    self._closed = True  # never here: not tried again every few seconds
                raise RelayUnavailable(str(exc)) from None
            self.connected = True
        return 0

    def wait(self, timeout: float) -> int | None:
        until = time.monotonic() + timeout
        with self._busy:
            while True:
                if self._closed:
                    self._listener.close()
                    raise RelayUnavailable("closed")
                left = until - time.monotonic()
                if left <= 0:
                    return None
                try:
                    notices = self._listener.wait(min(left, self.TURN))
                except Exception as exc:  # noqa: BLE001 - the connection lost: the window polls meanwhile
                    self.connected = False
                    raise RelayUnavailable(str(exc)) from None
                ids = [n.id for n in notices if concerns(n, self.user, self.queues, self.every)]
                if ids:
                    return max(ids)

    def close(self) -> None:
        self._closed = True
        if self._busy.acquire(blocking=False):  # no call under way: hang up here (else the call does)
            try:
                self._listener.close()
            finally:
                self._busy.release()
