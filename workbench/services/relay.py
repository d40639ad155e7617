"""`workbench relay`: one process per site reads the change feed for everyone and wakes the windows it concerns.

Without it every window reads the feed every `changes_every` (a round trip each, 3,600 per window and
hour); with it the relay makes one look per interval for the whole site and pushes each connected
window a wake-up ("something changed about your user, up to id N"; the console: "in your queues"),
never the rows: the window then makes its own look under its own login. asyncio streams and JSON
lines (services/relay_client.py): a few hundred lines of standard library, nothing to install.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
from collections.abc import Callable
from typing import Any

from workbench.core import errors, models
from workbench.services import relay_client
from workbench.services.base import Service

log = logging.getLogger("workbench.relay")

EVERY_SECONDS = 0.5  # one look at the trail this often, for every window of the site
BUFFERED_LIMIT = 64 * 1024  # a client that reads nothing this much behind is dropped (it polls meanwhile)


class Watcher(Service):
    """The relay's one reader of the feed: every change in the config's queues, each once."""

    def changes(self) -> list[models.Event]:
        return self._read_changes(concerning=None)


@dataclasses.dataclass(eq=False)
class Subscriber:
    """A connected window: whose changes wake it."""

    writer: asyncio.StreamWriter
    user: str
    queues: frozenset[str]
    every: bool  # every change in its queues (the console), not only those about its user

    def wants(self, event: models.Event) -> bool:
        if event.queue not in self.queues:
            return False
        if self.every:
            return True
        # A window acts on others' doings with its user's items (gui/session.py _on_changes): its own
        # actions it already knows; waking it for them would cost a look per claim, Save and Complete.
        return event.owner == self.user and event.actor != self.user


class Relay:
    """Reads the feed every `every` seconds (`read`, blocking: run on a thread) and wakes the subscribers."""

    def __init__(self, read: Callable[[], list[models.Event]], *, every: float = EVERY_SECONDS) -> None:
        self.read, self.every = read, every
        self.subscribers: set[Subscriber] = set()
        self.high = 0  # the newest id read
        self.reading = False  # the last read answered: only then does a window count on the relay
        self.wakes = 0  # wake-ups sent (for the log and the benchmark)
        self._server: asyncio.Server | None = None
        self._handlers: dict[asyncio.Task[None], asyncio.StreamWriter] = {}  # per connection, ended with the relay

    async def serve(self, host: str, port: int, ready: Callable[[int], None] | None = None) -> None:
        """Listen and relay until cancelled; `ready(port)` once listening (port 0: one the system picks)."""
        self._server = await asyncio.start_server(self._client, host, port, limit=relay_client.LINE_LIMIT)
        bound = self._server.sockets[0].getsockname()[1]
        log.info("relay listening on %s:%s", host, bound)
        if ready is not None:
            ready(bound)
        async with self._server:
            beat = asyncio.create_task(self._beat())
            try:
                await self._look_loop()
            finally:
                beat.cancel()
                for sub in list(self.subscribers):
                    self._drop(sub)
                # Each connection closed: its handler sees the end and returns (cancelled only if it lingers).
                for writer in self._handlers.values():
                    writer.close()
                if self._handlers:
                    _, lingering = await asyncio.wait(list(self._handlers), timeout=1.0)
                    for task in lingering:
                        task.cancel()

    async def _look_loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            started = loop.time()
            try:
                events = await asyncio.to_thread(self.read)
            except Exception as exc:  # noqa: BLE001 - any failure: the windows must not count on us meanwhile
                if self.reading:
                    log.warning("relay: the change feed cannot be read (%s); windows poll themselves meanwhile", exc)
                self.reading = False
                for sub in list(self.subscribers):
                    self._drop(sub)  # they fall back to their own looks at once, and come back later
            else:
                if not self.reading:
                    log.info("relay: reading the change feed")
                self.reading = True
                self._wake(events)
            await asyncio.sleep(max(0.0, self.every - (loop.time() - started)))

    def _wake(self, events: list[models.Event]) -> None:
        if not events:
            return
        self.high = max(self.high, *(event.id for event in events))
        for sub in list(self.subscribers):
            ids = [event.id for event in events if sub.wants(event)]
            if ids:
                self.wakes += 1
                self._send(sub, {"wake": max(ids)})

    async def _beat(self) -> None:
        while True:
            await asyncio.sleep(relay_client.BEAT_SECONDS)
            for sub in list(self.subscribers):
                self._send(sub, {"beat": self.high})

    def _send(self, sub: Subscriber, message: dict[str, Any]) -> None:
        transport = sub.writer.transport
        if transport.is_closing() or transport.get_write_buffer_size() > BUFFERED_LIMIT:
            self._drop(sub)  # gone, or reads nothing: it polls by itself once it sees the drop
            return
        sub.writer.write(relay_client.encode(message))

    def _drop(self, sub: Subscriber) -> None:
        self.subscribers.discard(sub)
        with contextlib.suppress(Exception):
            sub.writer.close()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sub: Subscriber | None = None
        task = asyncio.current_task()
        if task is not None:
            self._handlers[task] = writer
        try:
            line = await asyncio.wait_for(reader.readline(), relay_client.CONNECT_SECONDS)
            sub = self._subscriber(line, writer)
            if sub is None or not self.reading:
                writer.close()  # not ours, or the feed cannot be read now: the window polls
                return
            self.subscribers.add(sub)
            writer.write(relay_client.encode({"ready": self.high}))
            # Nothing more is expected from a window: reading until it closes tells us it is gone.
            while await reader.read(4096):
                pass
        except (TimeoutError, ConnectionError, asyncio.LimitOverrunError, ValueError):
            pass
        finally:
            if task is not None:
                self._handlers.pop(task, None)
            if sub is not None:
                self._drop(sub)
            else:
                with contextlib.suppress(Exception):
                    writer.close()

    @staticmethod
    def _subscriber(line: bytes, writer: asyncio.StreamWriter) -> Subscriber | None:
        try:
            hello = json.loads(line)
        except ValueError:
            return None
        if not isinstance(hello, dict) or hello.get("hello") != relay_client.PROTOCOL:
            return None
        user, queues = hello.get("user"), hello.get("queues")
        if not isinstance(user, str) or not isinstance(queues, list) or not all(isinstance(q, str) for q in queues):
            return None
        return Subscriber(writer, user, frozenset(queues), bool(hello.get("every")))


def run(
    watcher: Watcher, host: str, port: int, every: float = EVERY_SECONDS, ready: Callable[[int], None] | None = None
) -> None:
    """`workbench relay`: serve until interrupted (Ctrl+C, or the service manager's stop)."""
    relay = Relay(watcher.changes, every=every)
    watcher.changes()  # where the feed starts; a config the database refuses is said here, before listening
    try:
        asyncio.run(relay.serve(host, port, ready))
    except KeyboardInterrupt:
        pass
    except OSError as exc:  # the port taken, an address not this machine's
        raise errors.UsageError(f"the relay cannot listen on {host}:{port}: {exc.strerror or exc}") from None
