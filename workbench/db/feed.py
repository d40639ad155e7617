"""The change feed: what the audit trail recorded since a window last looked, read by the trail's id.

Every change to an item writes an audit row, so "what changed since I looked" is one indexed
read of the rows past the last id seen (the primary key's range), on every database and
through a transaction pooler alike. Ids are handed out when a row is inserted, not when its
transaction commits: a row with a lower id may become visible after a higher one was read. So
the cursor keeps looking for the ids of the last `lag` seconds it has not seen (the gaps: a
transaction still open, one rolled back) besides those past the newest; workbench's transactions
are short (milliseconds), far shorter than the lag.
"""

from __future__ import annotations

import collections
import functools
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import sqlalchemy as sa

from workbench.core import models
from workbench.db import backends
from workbench.db.audit import AuditTrail

LAG_SECONDS = 5.0  # a transaction still open this long after its row's id was taken is not waited for
PAGE = 500  # rows read at most per look; a window that fell behind reads the rest at its next look
# Gaps looked for by id at most; more (a look that keeps only some queues' or one user's rows, in a
# trail other queues or users write too, sees others' ids as gaps): the lag's whole range is read again.
GAPS = 64


def latest_id(conn: sa.Connection, audit: sa.Table, concerning: str | None = None) -> int:
    """Where a new cursor starts: the trail's newest id, or with `concerning` the newest of that user's rows
    (a reader of those rows only has seen everything up to it); 0 when there is none. One end of an index
    (`concerning`: the owner index's; the whole trail's: the backend's, see newest_audit_id)."""
    if concerning is None:
        return backends.of(conn).newest_audit_id(conn, audit)
    stmt = sa.select(sa.func.max(audit.c.id)).where(audit.c.owner == concerning)
    return int(conn.execute(stmt).scalar() or 0)


def listener(engine: sa.Engine) -> backends.ChangeListener | None:
    """Where the database announces each audit row as it commits and a session of our own can wait for
    it (PostgreSQL, not through a transaction pooler): a listener, not yet connected. None: read by the
    clock. A notice is a hint (who and which queue, never the row): the reader still reads the rows."""
    return backends.of(engine).change_listener(engine)


def refused(exc: BaseException) -> bool:
    """Whether a listener's failure is for good (a pooler between, a driver without notifications): its
    reader stops trying and reads by the clock."""
    return isinstance(exc, backends.ListenRefused)


def rows_after(
    conn: sa.Connection,
    audit: sa.Table,
    after: int,
    *,
    queues: Iterable[str] | None,
    concerning: str | None = None,
    gaps: Sequence[int] = (),
    limit: int = PAGE,
) -> list[models.Event]:
    """The audit rows past id `after` or with an id of `gaps` in `queues` (None: in any queue), oldest
    first; with `concerning`, only those about that user's locks (the lock's owner: their lock taken,
    ended, handed to them, and their own doings with it): a few entries of the owner index, however busy
    the queues."""
    stmt = look_statement(
        audit, queues=queues is not None, concerning=concerning is not None, gaps=bool(gaps), limit=limit
    )
    values: dict[str, Any] = {"wb_after": after}
    if queues is not None:
        values["wb_queues"] = list(queues)
    if concerning is not None:
        values["wb_owner"] = concerning
    if gaps:
        values["wb_gaps"] = list(gaps)
    return [AuditTrail.event(row) for row in conn.execute(stmt, values).mappings()]


@functools.lru_cache(maxsize=32)
def look_statement(
    audit: sa.Table, *, queues: bool, concerning: bool, gaps: bool = False, limit: int = PAGE
) -> sa.Select[Any]:
    """The statement of one look (rows_after), its values bound when it runs (wb_after, wb_queues,
    wb_owner, wb_gaps): built once, as every window runs it every second (building it again took most of
    the client's time of a look)."""
    t = audit
    past: sa.ColumnElement[bool] = t.c.id > sa.bindparam("wb_after")
    if gaps:
        past = sa.or_(past, t.c.id.in_(sa.bindparam("wb_gaps", expanding=True)))
    stmt = sa.select(t).where(past)
    if queues:
        stmt = stmt.where(t.c.queue.in_(sa.bindparam("wb_queues", expanding=True)))
    if concerning:
        stmt = stmt.where(t.c.owner == sa.bindparam("wb_owner"))
    return stmt.order_by(t.c.id).limit(limit)


class Cursor:
    """Where one reader of the feed is: the newest id it saw, the ids below it it delivered, and the floor
    below which it no longer looks.

    Not thread-safe: one reader (a window's session) reads through it, one look at a time.
    """

    def __init__(self, start: int, lag: float = LAG_SECONDS, clock: Callable[[], float] = time.monotonic) -> None:
        self.floor = start  # every row at or below it was delivered, or is older than the lag
        self.high = start  # the newest id seen
        self.lag, self._clock = lag, clock
        self._delivered: set[int] = set()  # ids above the floor already handed out
        self._marks: collections.deque[tuple[float, int]] = collections.deque()  # (when, newest id seen then)

    def bounds(self) -> tuple[int, list[int]]:
        """What the next look asks for: the rows past an id, and the ids below it not yet seen (the gaps
        between the floor and the newest id). Many gaps: past the floor, all of them again."""
        unseen = self.high - self.floor - len(self._delivered)
        if unseen > GAPS:
            return self.floor, []
        return self.high, [i for i in range(self.floor + 1, self.high + 1) if i not in self._delivered]

    def take(self, rows: list[models.Event]) -> list[models.Event]:
        """Of the rows a look read, those not delivered before; moves the floor up to the newest id that
        was seen at least `lag` seconds ago."""
        fresh = [row for row in rows if row.id not in self._delivered]
        self._delivered.update(row.id for row in fresh)
        now = self._clock()
        self.high = max(self.high, max((row.id for row in rows), default=self.high))
        self._marks.append((now, self.high))
        floor = self.floor
        while self._marks and now - self._marks[0][0] >= self.lag:
            floor = max(floor, self._marks.popleft()[1])
        if len(rows) >= PAGE:
            # A full page: re-reading it would never reach the rows past it. Move on (a row of the page's
            # span committed later is missed; the window's own lock check still finds what it meant).
            floor = max(floor, self.high)
        if floor != self.floor:
            self.floor = floor
            self._delivered = {i for i in self._delivered if i > floor}
        return fresh

    def read(
        self, conn: sa.Connection, audit: sa.Table, *, queues: Iterable[str], concerning: str | None = None
    ) -> list[models.Event]:
        """The rows the feed has for this reader since its last look (see rows_after). A user's rows are
        read in every queue and those of `queues` kept here: the owner index then serves the look alone,
        and the floor moves past the user's rows of other queues (another config's) too."""
        after, gaps = self.bounds()
        if concerning is None:
            return self.take(rows_after(conn, audit, after, queues=queues, gaps=gaps))
        wanted = set(queues)
        fresh = self.take(rows_after(conn, audit, after, queues=None, concerning=concerning, gaps=gaps))
        return [event for event in fresh if event.queue in wanted]
