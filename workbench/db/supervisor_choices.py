"""What a supervisor's move and reassignment offer on one queue: the values to move by, how many would move, who to."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import sqlalchemy as sa

from workbench.core import models
from workbench.db import audit as audit_mod
from workbench.db import clock, connect, mapping

OPERATORS_DAYS = 90  # Reassign offers who claimed in the queue within this many days


class SupervisorChoices:
    """supervision.Supervision's offers, read before a move or a reassignment."""

    db: connect.Database
    q: mapping.BoundQueue
    trail: audit_mod.AuditTrail
    # The values waiting items hold in a column (WorkQueue._held_values).
    _held_values: Callable[[sa.Connection, sa.Column[Any], int, str | None], list[Any]]

    def waiting_values(self, column: str, limit: int = 50) -> list[Any]:
        """The values waiting items nobody holds have in `column` (any but the key and the lock), most
        common first: what a supervisor's move may select by."""
        chosen = self.q.movable_column(column)
        return self.db.read(lambda conn: self._held_values(conn, chosen, limit, None))

    def count_movable(self, where: Mapping[str, Any]) -> int:
        """How many waiting items nobody holds match `where` ({column: value}): what a move of them
        would change, said to the supervisor before it changes them."""
        q = self.q
        chosen = q.coerce_moves(where, "--where")
        stmt = (
            sa.select(sa.func.count())
            .select_from(q.table)
            .where(
                *q.scope_clause(),
                q.todo_clause(),
                *(q.table.c[name] == value for name, value in chosen.items()),
                q.shape.unheld(q.key),
            )
        )
        return int(self.db.read(lambda conn: conn.execute(stmt).scalar_one()))

    def operators(self, limit: int = 200, days: int = OPERATORS_DAYS) -> list[str]:
        """Who has held this queue's items (their claims in the audit trail) within the last `days`, the
        latest first: the names a supervisor reassigns to. The time bound lets the trail's time index
        serve it, so a trail of years is not read whole when Reassign opens."""
        a = self.trail.table
        since = clock.add_seconds(clock.db_now(), sa.literal(-days * 86_400))
        stmt = (
            sa.select(a.c.owner)
            .where(
                a.c.queue == self.q.name,
                a.c.at >= since,
                a.c.event == models.EventKind.CLAIM.value,
                a.c.owner.is_not(None),
            )
            .group_by(a.c.owner)
            .order_by(sa.func.max(a.c.at).desc(), a.c.owner)
            .limit(limit)
        )
        return self.db.read(lambda conn: [str(owner) for owner in conn.execute(stmt).scalars()])
