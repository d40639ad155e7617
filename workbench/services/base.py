"""What every service shares: the open database, the user it acts for, and what it says about a queue."""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

from workbench import fieldspec
from workbench.core import clocks, models
from workbench.db import feed, service
from workbench.services import door, relay_client


@dataclasses.dataclass(frozen=True)
class QueueLayout:
    """How a queue's items look: the form's fields, the columns that tell items apart in a list."""

    name: str
    key_name: str
    fields: list[fieldspec.FieldSpec]
    list_columns: list[str]
    lock_seconds: int
    due_column: str | None = None  # when an item is due (the queue's `due`), if it names one
    source_column: str | None = None  # the item's source document or text (the queue's `source`), if any


class Service:
    """One user's view of the queues of one database (blocking: call off the GUI thread)."""

    def __init__(self, wb: door.Workbench | service.Workbench, user: str) -> None:
        # The engine stays inside: what the front ends get from here are core's and the services' types.
        self.database, self._wb, self.user = door.Workbench.of(wb), door.engine(wb), user
        self._cursor: feed.Cursor | None = None  # where this service's change feed is (_read_changes)
        self._cursor_lock = threading.Lock()

    def _read_changes(self, concerning: str | None) -> list[models.Event]:
        """The audit rows of this database's queues past the last look (only those about `concerning`'s
        items, or all), each once; the first call only marks where to start: [].

        One statement past the last id seen (a few entries of the owner index with `concerning`), on its
        own where that saves the transaction's round trips: cheap enough for every window every second,
        on every database and through a transaction pooler."""
        with self._cursor_lock:
            audit, queues = self._wb.audit_table, self.queues

            def look(conn: Any) -> list[models.Event]:
                if self._cursor is None:
                    self._cursor = feed.Cursor(feed.latest_id(conn, audit, concerning))
                    return []
                return self._cursor.read(conn, audit, queues=queues, concerning=concerning)

            return self._wb.db.read_alone(look)

    def notice_client(self, *, every: bool = False) -> relay_client.NoticeClient | None:
        """Where the database tells of each change as it commits and a session of the window's own can wait
        for it (PostgreSQL, not through a transaction pooler): a client that wakes the window when a change
        concerns this user (`every`: any change of the queues), as a relay's would; not yet connected (no
        round trip here). None: the window polls (or its relay wakes it)."""
        listener = feed.listener(self._wb.db.engine)
        return None if listener is None else relay_client.NoticeClient(listener, self.user, self.queues, every=every)

    @property
    def queues(self) -> list[str]:
        return list(self._wb.config.queues)

    def check_queue(self, queue: str) -> None:
        """UsageError for a queue the config does not name, ConfigError for a config the database
        refuses: said before anything runs (the first call checks every queue)."""
        self._wb.queue(queue)

    def key_of(self, queue: str, key: Any) -> Any:
        """`key` (e.g. typed on the command line) as the queue's key column holds it."""
        return self._wb.queue(queue).q.coerce_key(key)

    def db_clock(self, queue: str) -> clocks.Clock:
        """The database clock now, on the queue's clock: `.now`, `.utc`, `.today_start`."""
        return self._wb.queue(queue).db_clock()

    def layout(self, queue: str) -> QueueLayout:
        """The queue's form and list columns (the first call checks the config against the table)."""
        q = self._wb.queue(queue).q
        return QueueLayout(
            name=queue,
            key_name=q.key.name,
            fields=fieldspec.field_specs(q),
            list_columns=[c.name for c in q.list_columns],
            lock_seconds=q.config.lock_seconds,
            due_column=q.due.name if q.due is not None else None,
            source_column=q.source_column.name if q.source_column is not None else None,
        )
