"""The start page's counts per queue, kept in the database for every window: counted once per interval.

A window's start page shows per queue how many items wait, are overdue and are deferred. Counting
them reads up to WAITING_CAP index entries (a few ms on a large table): with every window counting
for itself every `[app] counts_every`, a thousand windows made the counts most of the server's
work (issue 51). Here the figures are one row per queue in workbench_counts: a window reads the
rows (by key, with its other start-page reads), and where a queue's row is older than the interval
one window takes the turn and counts for everyone. The turn is taken with an UPDATE that names the
turn number it read (`turn = :seen`): of the windows that found the row stale at once, exactly one
changes it (every database counts the rows an UPDATE changed), and the others show the figures
they read. A turn taken and never finished (a window that quit while counting) leaves the row's
time moved on: the next interval's window counts.

What stays per window: a queue whose conditions name the claiming user (its waiting items differ
per user), and a login that may not write the table (`workbench grants` gives operators the
right; a database set up by hand may not): those count for themselves as before.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
from collections.abc import Callable, Iterable

import sqlalchemy as sa

from workbench.core import errors
from workbench.db import clock, connect, dberrors

Figures = tuple[int, int | None, int]  # waiting, overdue (None: the queue names no due column), deferred


class Refused(Exception):
    """The counts table was refused inside one_read(), whose transaction it may have ended: read
    again (the next read counts alone, SharedCounts.shared is False now)."""


@dataclasses.dataclass(frozen=True)
class _Row:
    figures: Figures
    turn: int
    age: float  # seconds since it was counted (or its turn taken), on the database's clock


class SharedCounts:
    """The counts table of one database, and whether this login may keep it (else each counts alone)."""

    def __init__(self, db: connect.Database, table: sa.Table) -> None:
        self.db, self.table = db, table
        self.shared = True  # False once the database refused this login the table: count alone

    def figures(self, counters: dict[str, Callable[[], Figures]], every: float) -> dict[str, tuple[Figures, float]]:
        """The figures of each queue in `counters` ({queue: its count}) and their age in seconds,
        none older than `every` but by the moment one window takes to count: read from the table,
        counted here (with `counters[queue]`) only for the queues whose turn this window took. A
        caller keeping them should keep them `every` minus their age (counts_every the ceiling)."""
        if not counters:
            return {}
        if not self.shared:
            return {name: (count(), 0.0) for name, count in counters.items()}
        try:
            rows = self.db.read(lambda conn: self._read(conn, counters))
        except (errors.NotPermitted, sa.exc.DBAPIError) as exc:
            if not _refused(exc):
                raise
            self.shared = False
            if self.db.in_one_read():
                # PostgreSQL ended the joined transaction with the refusal: the caller reads again.
                raise Refused(str(exc)) from exc
            return {name: (count(), 0.0) for name, count in counters.items()}
        found: dict[str, tuple[Figures, float]] = {}
        stale: dict[str, _Row] = {}
        missing: list[str] = []
        for name in counters:
            row = rows.get(name)
            if row is None:
                missing.append(name)
            elif row.age < every:
                found[name] = (row.figures, max(0.0, row.age))
            else:
                stale[name] = row
        try:
            if missing:
                found.update(self._first({name: counters[name]() for name in missing}))
            if stale:
                found.update(self._recounted(stale, counters, every))
        except (errors.NotPermitted, sa.exc.DBAPIError) as exc:
            if not _refused(exc):
                raise
            self.shared = False
            return {name: found.get(name) or (count(), 0.0) for name, count in counters.items()}
        return found

    def _read(self, conn: sa.Connection, names: Iterable[str]) -> dict[str, _Row]:
        t = self.table
        stmt = sa.select(t.c.queue, t.c.waiting, t.c.overdue, t.c.deferred, t.c.turn, t.c.counted_at, clock.db_now())
        rows = conn.execute(stmt.where(t.c.queue.in_(list(names)))).all()
        return {
            str(queue): _Row(
                (int(waiting), None if overdue is None else int(overdue), int(deferred)),
                int(turn),
                (clock.stored_utc(now) - clock.stored_utc(at)) / dt.timedelta(seconds=1),
            )
            for queue, waiting, overdue, deferred, turn, at, now in rows
        }

    def _recounted(
        self, stale: dict[str, _Row], counters: dict[str, Callable[[], Figures]], every: float
    ) -> dict[str, tuple[Figures, float]]:
        """The figures of the stale queues: counted here for those whose turn this window takes (one
        transaction takes them all, one more writes what was counted), the row's for the others
        (as old as `every`: read again next time, when the counting window has written them)."""
        t = self.table

        def take(conn: sa.Connection) -> list[str]:
            taken = []
            for name, row in stale.items():
                turn = (
                    sa.update(t)
                    .where(t.c.queue == name, t.c.turn == row.turn)
                    .values(turn=t.c.turn + 1, counted_at=clock.db_now())
                )
                if conn.execute(turn).rowcount == 1:
                    taken.append(name)
            return taken

        taken = self.db.write(take)
        found = {name: (row.figures, every) for name, row in stale.items() if name not in taken}
        counted = {name: counters[name]() for name in taken}

        def write(conn: sa.Connection) -> None:
            for name, (waiting, overdue, deferred) in counted.items():
                conn.execute(
                    sa.update(t)
                    .where(t.c.queue == name, t.c.turn == stale[name].turn + 1)
                    .values(waiting=waiting, overdue=overdue, deferred=deferred, counted_at=clock.db_now())
                )

        if counted:
            self.db.write(write)
        return found | {name: (figures, 0.0) for name, figures in counted.items()}

    def _first(self, counted: dict[str, Figures]) -> dict[str, tuple[Figures, float]]:
        """The queues' first rows, in one transaction. Where another window made one at the same
        moment, the duplicate key undoes them all: its rows stand, and a later window makes the rest."""
        t = self.table
        # One statement of several rows (not executemany, which psycopg runs as a pipeline).
        insert = sa.insert(t).values(
            [
                {
                    "queue": name,
                    "waiting": waiting,
                    "overdue": overdue,
                    "deferred": deferred,
                    "turn": 0,
                    "counted_at": clock.db_now(),
                }
                for name, (waiting, overdue, deferred) in counted.items()
            ]
        )
        with contextlib.suppress(errors.InvalidValue):  # the duplicate key (IntegrityError)
            self.db.write(lambda conn: conn.execute(insert))
        return {name: (figures, 0.0) for name, figures in counted.items()}


def _refused(exc: Exception) -> bool:
    """Did the database refuse this login the counts table (a grant missing)? MySQL/MariaDB's
    "command denied" is not translated into NotPermitted (dberrors.translated)."""
    return isinstance(exc, errors.NotPermitted) or (isinstance(exc, sa.exc.DBAPIError) and dberrors.is_denied(exc))
