"""`workbench relay`: one process per site reads the change feed for everyone and wakes the windows it concerns.

Without it every window reads the feed every `changes_every` (a round trip each, 3,600 per window and
hour); with it the relay makes one look per interval for the whole site and pushes each connected
window a wake-up ("something changed about your user, up to id N"; the console: "in your queues"),
never the rows: the window then makes its own look under its own login. asyncio streams and JSON
lines (services/relay_client.py): a few hundred lines of standard library, nothing to install.

Where the database announces an audit row of one user's act on another's item as it commits
(PostgreSQL's NOTIFY, on a session of the relay's own: not through a transaction pooler), the relay
wakes the windows from those notices at once and reads the trail every LISTENING_EVERY seconds besides,
for the acts no notice is sent for (the consoles') and a notice lost; the connection
lost, it reads every `every` again and listens anew every RELISTEN_SECONDS.

It also reads the start page's figures per queue (waiting, overdue, deferred: db/counts.py) once for
everyone, at most every `[app] counts_every`, and sends each window those of its queues: a window keeps
them as its own count (Operator.take_figures), so its start page after a Complete opens no transaction.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
from collections.abc import Callable, Sequence
from typing import Any

from workbench.core import errors, models
from workbench.db import counts, feed
from workbench.services import operator, relay_client
from workbench.services.base import Service

log = logging.getLogger("workbench.relay")

EVERY_SECONDS = 0.5  # one look at the trail this often, for every window of the site
BUFFERED_LIMIT = 64 * 1024  # a client that reads nothing this much behind is dropped (it polls meanwhile)
LISTENING_EVERY = 1.0  # listening: the trail is read this often besides (the changes no notice is sent for:
# a user's own claims, Saves, Completes, which wake only the consoles; and a notice lost)
RELISTEN_SECONDS = 5.0  # the listening connection lost or refused: tried again this often (reading every `every`)
WAIT_TURN = 1.0  # one blocking wait for notices at most this long (the relay's stop waits for the turn's end)
REMEMBERED = 50_000  # ids woken from notices, kept to wake no one again when the trail's read brings them
COUNTS_LEAST = 1.0  # the start page's figures read again at most this often (figures found old: counted again soon)


class Watcher(Service):
    """The relay's one reader of the feed: every change in the config's queues, each once."""

    def changes(self) -> list[models.Event]:
        return self._read_changes(concerning=None)

    def figures(self) -> dict[str, tuple[counts.Figures, float]]:
        """The start page's figures of the queues counted for every window, and their age in seconds."""
        return operator.shared_figures(self._wb)

    @property
    def counts_every(self) -> float:
        return float(self._wb.config.app.counts_every)

    def listener(self) -> relay_client.Listening | None:
        """A listener for the database's notices of new audit rows (not yet connected), where there are
        any and a session of the relay's own exists: PostgreSQL, not through a transaction pooler."""
        return feed.listener(self._wb.db.engine)


@dataclasses.dataclass(eq=False)
class Subscriber:
    """A connected window: whose changes wake it."""

    writer: asyncio.StreamWriter
    user: str
    queues: frozenset[str]
    every: bool  # every change in its queues (the console), not only those about its user

    def wants(self, event: models.Event | models.Notice) -> bool:
        return relay_client.concerns(event, self.user, self.queues, self.every)


class Relay:
    """Reads the feed every `every` seconds (`read`, blocking: run on a thread) and wakes the subscribers;
    with a `listener`, wakes them from its notices at once and reads every LISTENING_EVERY seconds."""

    def __init__(
        self,
        read: Callable[[], list[models.Event]],
        *,
        every: float = EVERY_SECONDS,
        listener: relay_client.Listening | None = None,
        listening_every: float = LISTENING_EVERY,
        relisten: float = RELISTEN_SECONDS,
        figures: Callable[[], dict[str, tuple[counts.Figures, float]]] | None = None,
        counts_every: float = 30.0,
    ) -> None:
        self.read, self.every = read, every
        # The start page's figures, read for every window (Watcher.figures) and sent to each for its queues.
        self.figures, self.counts_every = figures, counts_every
        self._figures: dict[str, tuple[counts.Figures, float]] = {}  # {queue: (figures, loop.time() counted)}
        self.counted = 0  # figures sent (for the log and the benchmark)
        self.listener, self.listening_every, self.relisten = listener, listening_every, relisten
        self.listening = False  # the listener is connected: notices wake the windows, the trail is read seldom
        self._listen_at = 0.0  # loop.time() of the next try to listen
        self._woken: dict[int, None] = {}  # ids woken from notices (oldest first), not to wake anyone again
        self.noticed = 0  # notices heard (for the log and the benchmark)
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
            counting = asyncio.create_task(self._count_loop()) if self.figures is not None else None
            try:
                await self._look_loop()
            finally:
                beat.cancel()
                if counting is not None:
                    counting.cancel()
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
        try:
            while True:
                started = loop.time()
                try:
                    events = await asyncio.to_thread(self.read)
                except Exception as exc:  # noqa: BLE001 - any failure: the windows must not count on us meanwhile
                    if self.reading:
                        log.warning("relay: the change feed cannot be read (%s); the windows poll meanwhile", exc)
                    self.reading = False
                    for sub in list(self.subscribers):
                        self._drop(sub)  # they fall back to their own looks at once, and come back later
                else:
                    if not self.reading:
                        log.info("relay: reading the change feed")
                    self.reading = True
                    self._wake([event for event in events if event.id not in self._woken])  # not told twice
                # Listening, the trail is read seldom; a read that failed is tried again soon all the same.
                seldom = self.listening and self.reading
                await self._next_read(started + (self.listening_every if seldom else self.every))
        finally:
            if self.listener is not None:
                self.listener.close()

    async def _next_read(self, when: float) -> None:
        """Until loop.time() `when`: with a listener, wake the windows from its notices meanwhile; without
        one (none, lost), sleep, trying to listen again every `relisten` seconds."""
        loop = asyncio.get_running_loop()
        listener = self.listener
        if listener is not None and not self.listening and loop.time() >= self._listen_at and self.reading:
            try:
                await asyncio.to_thread(listener.open)
            except Exception as exc:  # noqa: BLE001 - refused, unreachable: read by the clock, try again later
                self._listen_at = loop.time() + self.relisten
                if feed.refused(exc):
                    self.listener = None  # never here (a pooler between): not tried again
                log.info("relay: not listening for the database's notices (%s); reading every %g s", exc, self.every)
            else:
                self.listening = True
                log.info("relay: listening for the database notices, reading every %g s besides", self.listening_every)
                return  # read at once: what was written before the listening began
        while listener is not None and self.listening and (left := when - loop.time()) > 0:
            try:
                notices = await asyncio.to_thread(listener.wait, min(left, WAIT_TURN))
            except Exception as exc:  # noqa: BLE001 - the connection lost: read by the clock, listen again later
                self.listening = False
                self._listen_at = loop.time() + self.relisten
                log.warning("relay: the database's notices lost (%s); reading every %g s meanwhile", exc, self.every)
                return  # read at once: a notice may have been lost with the connection
            self._notified(notices)
        await asyncio.sleep(max(0.0, when - loop.time()))

    def _notified(self, notices: list[models.Notice]) -> None:
        """Wake the windows a notice concerns, each notice once (and not again when the trail's read brings its row)."""
        fresh = [notice for notice in notices if notice.id not in self._woken]
        self.noticed += len(notices)
        for notice in fresh:
            self._woken[notice.id] = None
        while len(self._woken) > REMEMBERED:
            del self._woken[next(iter(self._woken))]
        self._wake(fresh)

    def _wake(self, events: Sequence[models.Event | models.Notice]) -> None:
        if not events:
            return
        self.high = max(self.high, *(event.id for event in events))
        for sub in list(self.subscribers):
            ids = [event.id for event in events if sub.wants(event)]
            if ids:
                self.wakes += 1
                self._send(sub, {"wake": max(ids)})

    async def _count_loop(self) -> None:
        """The figures read (and counted where stale, as a window would) when the oldest kept reaches
        counts_every, and sent to every window."""
        assert self.figures is not None
        loop = asyncio.get_running_loop()
        while True:
            try:
                found = await asyncio.to_thread(self.figures)
            except Exception as exc:  # noqa: BLE001 - the windows count for themselves meanwhile
                log.warning("relay: the start page's figures cannot be read (%s); the windows count them", exc)
                found = {}
            now = loop.time()
            self._figures = {name: (figures, now - age) for name, (figures, age) in found.items()}
            for sub in list(self.subscribers):
                self._send_figures(sub)
            due = min((at + self.counts_every for _, at in self._figures.values()), default=now + self.counts_every)
            await asyncio.sleep(max(COUNTS_LEAST, due - loop.time()))

    def _send_figures(self, sub: Subscriber) -> None:
        """A window's queues' figures, each with its age: it keeps them until counts_every after their count."""
        now = asyncio.get_running_loop().time()
        figures = {
            name: [*found, round(now - at, 3)]
            for name, (found, at) in self._figures.items()
            if name in sub.queues and now - at < self.counts_every
        }
        if figures:
            self.counted += 1
            self._send(sub, {"counts": figures})

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
            self._send_figures(sub)  # a window opening now need not count for its start page
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
    watcher: Watcher,
    host: str,
    port: int,
    every: float = EVERY_SECONDS,
    ready: Callable[[int], None] | None = None,
    listen: bool = True,
) -> None:
    """`workbench relay`: serve until interrupted (Ctrl+C, or the service manager's stop); `listen`: for the
    database's notices where it sends them (False: read every `every` all the same, as the benchmark compares)."""
    relay = Relay(
        watcher.changes,
        every=every,
        listener=watcher.listener() if listen else None,
        figures=watcher.figures,
        counts_every=watcher.counts_every,
    )
    watcher.changes()  # where the feed starts; a config the database refuses is said here, before listening
    try:
        asyncio.run(relay.serve(host, port, ready))
    except KeyboardInterrupt:
        pass
    except OSError as exc:  # the port taken, an address not this machine's
        raise errors.UsageError(f"the relay cannot listen on {host}:{port}: {exc.strerror or exc}") from None
