"""A supervisor's bulk move: new values (another category, tier, ...) written to waiting items nobody holds,
a batch per transaction, each moved item's audit row keeping the values before and after."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import sqlalchemy as sa

from workbench.core import errors, models, problems, workflow
from workbench.db import audit as audit_mod
from workbench.db import connect, dberrors, lockrules, mapping, permissions, rowrules, writes
from workbench.db.operator_text import check_user as _check_user

MOVE_BATCH = 500  # rows per transaction: short transactions, no lock escalation on SQL Server


class Mover:
    """Supervision.move for one queue: its database, table, trail, the way its acts run (WorkQueue.acts), and
    the check that the actor may supervise (Supervision's, handed in: the same for every supervisor action)."""

    def __init__(
        self,
        db: connect.Database,
        q: mapping.BoundQueue,
        trail: audit_mod.AuditTrail,
        acts: writes.Acts,
        require: Callable[[sa.Connection, str, errors.Phrase], None],
    ) -> None:
        self.db, self.q, self.trail, self.acts, self._require = db, q, trail, acts, require

    def move(
        self,
        actor: str,
        changes: Mapping[str, Any],
        reason: str,
        *,
        keys: list[Any] | None = None,
        where: Mapping[str, Any] | None = None,
    ) -> list[Any]:
        """A supervisor's bulk move: write `changes` ({column: value}, e.g. another category or tier, so
        another queue or group serves them) to the waiting items nobody holds, those named by `keys` or
        every one whose columns hold `where`'s values. Items held or finished are left alone. Each moved
        item's audit row keeps the values before and after. Returns the keys moved, in key order."""
        _check_user(actor)
        q = self.q
        reason = workflow.reason_given("move", reason)
        values = q.coerce_moves(changes, "--set")
        if not values:
            raise errors.UsageError.of(problems.MOVE_NOTHING)
        chosen = q.coerce_moves(where or {}, "--where")
        if not keys and not chosen:
            raise errors.UsageError(
                "name the items to move: their keys, or --where COL=VALUE for every waiting item that matches"
            )
        moved: list[Any] = []

        def batch_of(keys: list[Any] | None, after: Any) -> Callable[[sa.Connection], list[Any]]:
            return lambda conn: self._move(conn, actor, values, chosen, reason, keys=keys, after=after)

        if keys:
            typed = sorted({q.coerce_key(k) for k in keys})
            for i in range(0, len(typed), MOVE_BATCH):
                moved += self.db.write(batch_of(typed[i : i + MOVE_BATCH], None))
            return moved
        after: Any = None
        while True:  # every match, a batch per transaction, onward from the last key moved
            batch = self.db.write(batch_of(None, after))
            moved += batch
            if len(batch) < MOVE_BATCH:
                return moved
            after = batch[-1]

    def _move(
        self,
        conn: sa.Connection,
        actor: str,
        values: dict[str, Any],
        chosen: dict[str, Any],
        reason: str,
        *,
        keys: list[Any] | None = None,
        after: Any = None,
    ) -> list[Any]:
        q = self.q
        action = errors.Phrase.of(problems.DO_MOVE, q.name)
        self._require(conn, actor, action)
        # The table's row rule (WAITING, db/rowrules.py), narrowed to the items asked for.
        waiting = [*rowrules.before(q, "move").all, *(q.table.c[name] == value for name, value in chosen.items())]
        if keys is not None:
            waiting.append(q.key.in_(keys))
        elif after is not None:
            waiting.append(q.key > after)
        # Read and lock the rows first (the values before, for the trail); the UPDATE tests again that
        # nobody holds them, so a claim between the two wins and its item stays as it is.
        free = lockrules.guard(q, "move", q.now())  # the table's lock rule (FREE), on the read and the write
        read = (
            sa.select(q.key, *(q.table.c[name] for name in values))
            .where(*waiting, free)
            .order_by(q.key)
            .limit(MOVE_BATCH)
            .with_for_update()
        )
        before = {row[q.key.name]: dict(row) for row in conn.execute(read).mappings()}
        if not before:
            return []
        # A move keeps items waiting, here or (out of this queue's scope) for another queue: finishing
        # an item is work, with a claim and an outcome (the table's After.WAITING_OR_OUT, as the rows
        # read with the values written). The database's own check says the same (grants).
        finished = sa.not_(rowrules.written_after(q, "move", values))
        if conn.execute(sa.select(q.key).where(q.key.in_(list(before)), finished).limit(1)).first() is not None:
            shown = ", ".join(f"{name}={value}" for name, value in values.items())
            raise errors.UsageError.of(problems.MOVE_FINISHES, q.name, shown)
        # Where a procedure runs it, it moves each item (rows read and locked above) and records it.
        return self.acts.run(
            conn,
            writes.Act(
                "move",
                actor,
                tuple(before),
                {"changes": values, "reason": reason.strip()},
                action,
                refused=lambda: dberrors.Busy(f"{q.name}: an item was claimed while it was being moved"),  # retried
            ),
            own=lambda: self._move_here(conn, actor, values, reason, before, [*waiting, free], action),
            answer=lambda rows: list(before),
        )

    def _move_here(
        self,
        conn: sa.Connection,
        actor: str,
        values: dict[str, Any],
        reason: str,
        before: dict[Any, dict[str, Any]],
        waiting: list[sa.ColumnElement[bool]],
        action: errors.Phrase,
    ) -> list[Any]:
        """The move by workbench's own statements: one UPDATE of the rows read (still waiting, free), their records."""
        q = self.q
        update = sa.update(q.table).where(q.key.in_(list(before)), *waiting).values(values)
        with permissions.supervising(conn, actor, action):
            changed = conn.execute(update).rowcount
        if changed != len(before):
            raise dberrors.Busy(f"{q.name}: an item was claimed while it was being moved")  # retried afresh
        self.trail.write(
            conn,
            [
                self.trail.row(
                    models.EventKind.MOVE, key, actor, reason=reason.strip(), detail={"changes": q.changes(row, values)}
                )
                for key, row in before.items()
            ],
        )
        return list(before)
