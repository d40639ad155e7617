"""What a supervisor does: watch every lock and the queues' health, take items away, read statistics."""

from __future__ import annotations

import dataclasses
import datetime as dt
import time
from collections.abc import Mapping
from typing import Any

from workbench import fieldspec
from workbench.core import models
from workbench.db import supervision
from workbench.services.base import Service
from workbench.services.operator import ItemLog

BOARD_ROWS = supervision.BOARD_ROWS  # locks the board lists per queue


@dataclasses.dataclass(frozen=True)
class BoardPage:
    """What the lock board shows: the oldest locks of each queue, and how many locks there are in all."""

    rows: list[models.BoardRow]
    total: int
    read_at: float = dataclasses.field(default_factory=time.monotonic)  # when its clock was read

    @property
    def left_out(self) -> int:
        return self.total - len(self.rows)


class Supervisor(Service):
    """A supervisor's operations over the queues of one database (blocking: call off the GUI thread)."""

    def board(self, queues: list[str], limit: int | None = None) -> BoardPage:
        """The locks of the queues, each queue's oldest first, at most `limit` (supervision.BOARD_ROWS)
        of each, and how many locks there are in all."""
        most = limit if limit is not None else supervision.BOARD_ROWS
        rows: list[models.BoardRow] = []
        total = 0
        for name in queues:
            work = self._wb.supervision(name)
            mine = work.board(most)
            rows += mine
            total += work.count_locks() if len(mine) >= most else len(mine)
        return BoardPage(rows, total)

    def board_changed(self, page: BoardPage, events: list[models.Event], queues: list[str]) -> BoardPage:
        """`page` (the board of `queues`) brought up to date with the changes the feed showed: the locks of
        the items they name read again, the other rows kept (their clock moved on by the time since).
        A board of a thousand locks costs its reload each second; this costs the changed items' few.
        A page that left locks out is read whole again (a release may let one of those in)."""
        changed: dict[str, set[str]] = {}
        for event in events:
            if event.queue in queues:
                changed.setdefault(event.queue, set()).add(event.key)
        if not changed:
            return page
        if page.left_out > 0:
            return self.board(queues)
        read_at = time.monotonic()
        fresh: list[models.BoardRow] = []
        for name, keys in changed.items():
            fresh += self._wb.supervision(name).board(supervision.BOARD_ROWS, keys=sorted(keys))
        moved = dt.timedelta(seconds=read_at - page.read_at)
        kept = [
            dataclasses.replace(row, db_now=row.db_now + moved)
            for row in page.rows
            if str(row.key) not in changed.get(row.queue, ())
        ]
        order = {name: index for index, name in enumerate(queues)}
        rows = sorted(kept + fresh, key=lambda row: (order[row.queue], row.locked_at))
        if any(len([r for r in rows if r.queue == name]) > supervision.BOARD_ROWS for name in changed):
            return self.board(queues)  # now more than the board lists: the oldest, read whole
        return BoardPage(rows, len(rows), read_at)

    def changes(self) -> list[models.Event]:
        """Every change the audit trail recorded in this database's queues since the last call (the console
        reloads its board when there is one); the first call only marks where to start: []."""
        return self._read_changes(concerning=None)

    def escalated(self, queues: list[str]) -> list[models.Event]:
        """The items of `queues` handed to a supervisor that wait for one (nothing happened to them since
        their escalate), newest first: each item's escalate (who, when, why)."""
        found = [e for name in queues for e, last in self._wb.queue(name).escalations() if last.id == e.id]
        return sorted(found, key=lambda e: e.at, reverse=True)

    def health(self, queues: list[str]) -> list[models.QueueHealth]:
        return [self._wb.supervision(name).health() for name in queues]

    def operator_stats(self, queues: list[str], days: int) -> list[tuple[str, Any]]:
        """Per queue, each operator's figures since the start of today minus `days` (database clock)."""
        return [(name, self._wb.supervision(name).operator_stats(self._since(name, days))) for name in queues]

    def period(
        self, queue: str, since: dt.datetime, until: dt.datetime | None = None, *, hourly: bool = True
    ) -> tuple[list[models.OperatorStats], list[models.HourCount]]:
        """Each operator's figures in [since, until) (until: now), and the hourly throughput (when `hourly`)."""
        work = self._wb.supervision(queue)
        return work.operator_stats(since, until), work.throughput(since, until) if hourly else []

    def activity(self, queues: list[str], days: int) -> tuple[list[Any], list[Any], list[Any]]:
        """Per queue, the hourly throughput and open items, and every handle time, over the period."""
        hours, handled, opened = [], [], []
        for name in queues:
            q = self._wb.supervision(name)
            since = self._since(name, days)
            hours.append(q.throughput(since))
            handled += q.handle_times(since)
            opened.append(q.open_per_hour(since))
        return hours, handled, opened

    def _since(self, queue: str, days: int) -> dt.datetime:
        # "Today" on the database clock, as the health figures count it.
        return self._wb.queue(queue).db_clock().today_start - dt.timedelta(days=days)

    def force_release(self, queue: str, key: Any, reason: str) -> models.Lock:
        """Take an item away from whoever holds it; the lock removed."""
        return self._wb.supervision(queue).force_release(self.user, key, reason)

    def reopen(self, queue: str, key: Any, reason: str) -> None:
        """Put a finished item back to waiting (the queue's on_reopen values), with a reason."""
        self._wb.supervision(queue).reopen(self.user, key, reason)

    def take(self, queue: str, key: Any) -> models.Claim:
        """Take an escalated item to work it: the supervisor's, with a fresh lock, as after a claim."""
        return self._wb.supervision(queue).take(self.user, key)

    def lock_columns(self, queue: str) -> set[str]:
        """The queue's lock columns: what a listing of an item's fields leaves out."""
        return {c.name for c in self._wb.queue(queue).q.lock_columns}

    def move(
        self,
        queue: str,
        changes: Mapping[str, Any],
        reason: str,
        *,
        keys: list[Any] | None = None,
        where: Mapping[str, Any] | None = None,
    ) -> list[Any]:
        """Write `changes` to waiting items nobody holds (by key, or all matching `where`); the keys moved."""
        return self._wb.supervision(queue).move(self.user, changes, reason, keys=keys, where=where)

    def movable(self, queue: str) -> list[fieldspec.FieldSpec]:
        """The fields a move of `queue`'s waiting items may select by and write (all but key and lock)."""
        q = self._wb.queue(queue).q
        return [spec for spec in fieldspec.field_specs(q) if q.movable(q.table.c[spec.name])]

    def waiting_values(self, queue: str, column: str, limit: int = 50) -> list[Any]:
        """The values `column` holds among `queue`'s waiting items nobody holds, most common first."""
        return self._wb.supervision(queue).waiting_values(column, limit)

    def count_movable(self, queue: str, where: Mapping[str, Any]) -> int:
        """How many waiting items nobody holds a move `where` ({column: value}) would change now."""
        return self._wb.supervision(queue).count_movable(where)

    def operators(self, queues: list[str]) -> list[str]:
        """Everyone who has held an item of the queues (the audit trail's claims), by name."""
        return sorted({name for queue in queues for name in self._wb.supervision(queue).operators()})

    def reassign(self, queue: str, key: Any, to_user: str, reason: str) -> models.Lock:
        """Move a lock to another user; the new lock."""
        return self._wb.supervision(queue).reassign(self.user, key, to_user, reason)

    def sweep(self, queue: str) -> list[models.Lock]:
        """Return every expired lock's item to the queue, the expiries recorded; the locks swept."""
        return self._wb.supervision(queue).sweep(self.user)

    def history(self, queue: str, key: Any) -> list[models.Event]:
        return self._wb.queue(queue).history(key)

    def item_log(self, queue: str, key: Any) -> ItemLog:
        """An item's notes and history (an unknown key: no such item)."""
        work = self._wb.queue(queue)
        work.show(key)
        return ItemLog.read(work, queue, key)
