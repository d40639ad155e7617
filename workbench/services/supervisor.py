"""What a supervisor does: watch every lock and the queues' health, take items away, read statistics."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Mapping
from typing import Any

from workbench import fieldspec
from workbench.core import models
from workbench.db import service, workqueue
from workbench.services import operator

BOARD_ROWS = workqueue.BOARD_ROWS  # locks the board lists per queue


@dataclasses.dataclass(frozen=True)
class BoardPage:
    """What the lock board shows: the oldest locks of each queue, and how many locks there are in all."""

    rows: list[models.BoardRow]
    total: int

    @property
    def left_out(self) -> int:
        return self.total - len(self.rows)


class Supervisor:
    """A supervisor's operations over the queues of one database (blocking: call off the GUI thread)."""

    def __init__(self, wb: service.Workbench, user: str) -> None:
        self.wb, self.user = wb, user

    @property
    def queues(self) -> list[str]:
        return list(self.wb.config.queues)

    def board(self, queues: list[str]) -> BoardPage:
        """The locks of the queues, each queue's oldest first, at most workqueue.BOARD_ROWS of each, and
        how many locks there are in all."""
        rows: list[models.BoardRow] = []
        total = 0
        for name in queues:
            work = self.wb.queue(name)
            mine = work.board(workqueue.BOARD_ROWS)
            rows += mine
            total += work.count_locks() if len(mine) >= workqueue.BOARD_ROWS else len(mine)
        return BoardPage(rows, total)

    def health(self, queues: list[str]) -> list[models.QueueHealth]:
        return [self.wb.queue(name).health() for name in queues]

    def operator_stats(self, queues: list[str], days: int) -> list[tuple[str, Any]]:
        """Per queue, each operator's figures since the start of today minus `days` (database clock)."""
        return [(name, self.wb.queue(name).operator_stats(self._since(name, days))) for name in queues]

    def activity(self, queues: list[str], days: int) -> tuple[list[Any], list[Any], list[Any]]:
        """Per queue, the hourly throughput and open items, and every handle time, over the period."""
        hours, handled, opened = [], [], []
        for name in queues:
            q = self.wb.queue(name)
            since = self._since(name, days)
            hours.append(q.throughput(since))
            handled += q.handle_times(since)
            opened.append(q.open_per_hour(since))
        return hours, handled, opened

    def _since(self, queue: str, days: int) -> dt.datetime:
        # "Today" on the database clock, as the health figures count it.
        return self.wb.queue(queue).db_clock().today_start - dt.timedelta(days=days)

    def force_release(self, queue: str, key: Any, reason: str) -> models.Lock:
        """Take an item away from whoever holds it; the lock removed."""
        return self.wb.queue(queue).force_release(self.user, key, reason)

    def reopen(self, queue: str, key: Any, reason: str) -> None:
        """Put a finished item back to waiting (the queue's on_reopen values), with a reason."""
        self.wb.queue(queue).reopen(self.user, key, reason)

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
        return self.wb.queue(queue).move(self.user, changes, reason, keys=keys, where=where)

    def movable(self, queue: str) -> list[fieldspec.FieldSpec]:
        """The fields a move of `queue`'s waiting items may select by and write (all but key and lock)."""
        q = self.wb.queue(queue).q
        return [spec for spec in fieldspec.field_specs(q) if q.movable(q.table.c[spec.name])]

    def waiting_values(self, queue: str, column: str, limit: int = 50) -> list[Any]:
        """The values `column` holds among `queue`'s waiting items nobody holds, most common first."""
        return self.wb.queue(queue).waiting_values(column, limit)

    def count_movable(self, queue: str, where: Mapping[str, Any]) -> int:
        """How many waiting items nobody holds a move `where` ({column: value}) would change now."""
        return self.wb.queue(queue).count_movable(where)

    def operators(self, queues: list[str]) -> list[str]:
        """Everyone who has held an item of the queues (the audit trail's claims), by name."""
        return sorted({name for queue in queues for name in self.wb.queue(queue).operators()})

    def reassign(self, queue: str, key: Any, to_user: str, reason: str) -> models.Lock:
        """Move a lock to another user; the new lock."""
        return self.wb.queue(queue).reassign(self.user, key, to_user, reason)

    def history(self, queue: str, key: Any) -> list[models.Event]:
        return self.wb.queue(queue).history(key)

    def item_log(self, queue: str, key: Any) -> operator.ItemLog:
        """An item's notes and history (an unknown key: no such item)."""
        work = self.wb.queue(queue)
        work.show(key)
        return operator.ItemLog.read(work, queue, key)
