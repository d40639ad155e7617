"""What an operator reads of one queue: an item, the locks, lists and counts, its history, deferrals and notes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa

from workbench.core import errors, models
from workbench.db import audit as audit_mod
from workbench.db import connect, guarded, lockloss, lockrules, mapping
from workbench.db import deferrals as deferrals_mod
from workbench.db import notes as notes_mod


class QueueReading:
    """The reads of workqueue.WorkQueue (one short read each), over its queue, trail and fence."""

    db: connect.Database
    q: mapping.BoundQueue
    trail: audit_mod.AuditTrail
    name: str
    lost: lockloss.Diagnosis
    writer: guarded.GuardedWriter

    def show(self, key: Any) -> models.ItemView:
        q = self.q
        key = q.coerce_key(key)

        def read(conn: sa.Connection) -> models.ItemView:
            now = q.now()
            waiting = sa.case((sa.and_(*q.scope_clause(), q.todo_clause()), True), else_=False)
            row = (
                conn.execute(
                    sa.select(*q.item_columns(), *q.lock_select_columns(now), waiting.label("wb_waiting"))
                    .select_from(q.source)
                    .where(q.key == key)
                )
                .mappings()
                .first()
            )
            if row is None:
                raise errors.InvalidValue(
                    f"{q.name} has no item with key {key!r} (in {q.config.table_label}.{q.key.name})", column=q.key.name
                )
            return self._view(row)

        return self.db.read(read)

    def _view(self, row: Mapping[Any, Any]) -> models.ItemView:
        q = self.q
        lock = q.lock_from_row(row) if row["wb_user"] is not None and row["wb_time"] is not None else None
        if lock is not None:
            state = "expired" if lock.expired else "locked"
        elif row["wb_waiting"]:
            state = "waiting"
        else:
            state = self._done_state(row)
        return models.ItemView(queue=self.name, key=row["wb_key"], item=q.item_from_row(row), lock=lock, state=state)

    def _done_state(self, row: Mapping[Any, Any]) -> str:
        for name, assignments in self.q.outcomes.items():
            constants = [b for b in assignments if b.assignment.kind in ("value", "null")]
            if constants and all(row[b.column.name] == b.value for b in constants):
                return f"done:{name}"
        return "other"

    def mine(self, user: str) -> list[models.Lock]:
        """The user's locks in this queue, oldest first, including expired ones not yet taken over;
        only those workbench took (_took): another program's lock under the same name is not one's own."""
        return self._locks(user)

    def _took(self, lock: models.Lock) -> bool:
        return self.db.read(lambda conn: self.trail.took(conn, lock.key, lock.owner))

    def locks(self) -> list[models.Lock]:
        """Every lock in this queue (live and expired-not-yet-swept), oldest first."""
        return self._locks(None)

    def holds(self, conn: sa.Connection, user: str) -> sa.ScalarSelect[Any]:
        """SQL: the key of one of this queue's locks under `user`'s name, NULL where there is none (mine()'s
        rows before the trail says which of them workbench took: NULL exactly where mine() is empty), as a
        scalar subquery, so that the start page asks every queue in one statement (service.Workbench.mine_counts)."""
        q = self.q
        return (
            sa.select(q.key).select_from(q.locked_source).where(*self._lock_rows(conn, user)).limit(1).scalar_subquery()
        )

    def _lock_rows(self, conn: sa.Connection, user: str | None) -> list[sa.ColumnElement[bool]]:
        """The rows of this queue's locks (`user`'s only, if given)."""
        q = self.q
        where = [*q.scope_clause(), self._owned(conn), q.user.is_not(None), q.time.is_not(None)]
        if user is not None:
            where.append(q.user == user)
        return where

    def _locks(self, user: str | None) -> list[models.Lock]:
        q = self.q

        def read(conn: sa.Connection) -> list[models.Lock]:
            where = self._lock_rows(conn, user)
            stmt = (
                sa.select(*q.lock_select_columns(q.now()))
                .select_from(q.locked_source)
                .where(*where)
                .order_by(q.time, q.key)
            )
            found = [q.lock_from_row(row) for row in conn.execute(stmt).mappings()]
            if user is None or not found:
                return found
            # took() for all of them in one read (not one per lock: a user may hold hundreds).
            holders = self.trail.holders(conn, [str(lock.key) for lock in found], q.backend.keys_per_statement)
            return [lock for lock in found if holders.get(str(lock.key)) == lock.owner]

        return self.db.read(read)

    def open_items(self, limit: int = 200, user: str | None = None) -> list[dict[str, Any]]:
        """Waiting, unlocked items in queue order (key, list columns and the due column), for picking one
        by hand (those waiting for `user`, where the queue's conditions name the claimer).

        Served by the claim index, so it stays fast on a large table; never the whole table.
        """
        q = self.q
        stmt = (
            sa.select(*self._listed_columns())
            .select_from(q.source)
            .where(*q.scope_clause(user), q.todo_clause(user), q.free())
            .order_by(*q.order_by())
            .limit(limit)
        )
        return self.db.read(lambda conn: [dict(row) for row in conn.execute(stmt).mappings()])

    def _listed_columns(self) -> list[sa.Column[Any]]:
        """What lists show of an item: its key, the list columns and the due column."""
        q = self.q
        columns = [q.key, *(c for c in q.list_columns if c is not q.key)]
        if q.due is not None and q.due not in columns:
            columns.append(q.due)
        return columns

    def count_waiting(self, cap: int, user: str | None = None) -> int:
        """How many items wait (unlocked, in `todo`, not deferred), counted up to `cap` + 1: the count stops there, so
        that it reads at most that many index entries however large the table."""
        q = self.q
        waiting = (
            sa.select(q.key)
            .select_from(q.source)
            .where(*q.scope_clause(user), q.todo_clause(user), q.free(), *self._not_deferred())
            .limit(cap + 1)
            .subquery()
        )
        count = sa.select(sa.func.count()).select_from(waiting)
        return int(self.db.read(lambda conn: conn.execute(count).scalar_one()))

    def _not_deferred(self) -> list[sa.ColumnElement[bool]]:
        """Leaves out the items deferred to a time still to come: they are counted apart (deferred())."""
        deferrals = self.trail.deferrals
        return [] if deferrals is None else [~deferrals.held_back(self.q.key)]

    def filter_choices(self, limit: int = 50, user: str | None = None) -> dict[str, list[Any]]:
        """Per `filter_by` column: the values waiting items hold, most common first (at most `limit`)."""
        q = self.q

        return self.db.read(
            lambda conn: {
                name: self._held_values(conn, column, limit, user) for name, column in q.filter_columns.items()
            }
        )

    def _held_values(self, conn: sa.Connection, column: sa.Column[Any], limit: int, user: str | None) -> list[Any]:
        q = self.q
        n = sa.func.count().label("n")
        stmt = (
            sa.select(column, n)
            .select_from(q.source)
            .where(*q.scope_clause(user), q.todo_clause(user), q.free(), column.is_not(None))
            .group_by(column)
            .order_by(n.desc(), column)
            .limit(limit)
        )
        return [row[0] for row in conn.execute(stmt)]

    def count_overdue(self, cap: int | None = None) -> int | None:
        """Open items (waiting or held) past their due time on the database clock; None without `due`.
        With `cap`, counted up to `cap` + 1 (the start page's count after every Complete: it stops
        there instead of reading every open item of a large table)."""
        q = self.q
        if q.due is None:
            return None
        overdue = sa.select(q.key).select_from(q.source).where(q.overdue_clause(q.now()))
        if cap is not None:
            overdue = overdue.limit(cap + 1)
        stmt = sa.select(sa.func.count()).select_from(overdue.subquery())
        return int(self.db.read(lambda conn: conn.execute(stmt).scalar_one()))

    def summaries(self, keys: list[Any]) -> dict[Any, dict[str, Any]]:
        """The list columns (and the due column) of the given items, by key (for the resume panel)."""
        q = self.q
        if not keys:
            return {}
        stmt = sa.select(*self._listed_columns()).where(q.key.in_(keys))
        rows = self.db.read(lambda conn: [dict(row) for row in conn.execute(stmt).mappings()])
        return {row[q.key.name]: row for row in rows}

    def check(self, user: str, key: Any, token: str, doing: str = "work on") -> models.Lock:
        """The caller's lock if they still hold it; LockLost (with who and why) otherwise."""
        q = self.q
        key = q.coerce_key(key)

        def read(conn: sa.Connection) -> models.Lock:
            # The row rule too (GuardedWriter.held, as every write under the lock holds to it): where the
            # lock lives in a lock table it stays intact when another program takes the row out of the work,
            # and the window's periodic check must say so then, not at the next Save.
            stmt = sa.select(*q.lock_select_columns(q.now())).select_from(q.source).where(self.writer.held())
            params = {"wb_key": key, "wb_user": user, **q.shape.key_params(key), **q.shape.token_params(token)}
            row = conn.execute(stmt, params).mappings().first()
            if row is None:
                raise self.lost.explain(conn, key, token, user, doing)
            return q.lock_from_row(row)

        # One statement while the lock holds (every open window every check_every, and before each
        # action): on its own, without the transaction's round trips (Database.read_alone). A lost lock's
        # explanation reads the trail after it, as a later look would.
        return self.db.read_alone(read)

    def completion_kept(self, key: Any, token: str) -> bool:
        """Is the Complete made under lock `token` in this database's trail? After a failover to an
        asynchronous standby the last commits before the crash may be missing: a Complete among them
        left the item locked to its operator again."""
        key = self.q.coerce_key(key)
        last = self.db.read(lambda conn: self.trail.last_for_token(conn, key, token))
        return last is not None and last.kind is models.EventKind.COMPLETE

    def history(self, key: Any) -> list[models.Event]:
        key = self.q.coerce_key(key)
        return self.db.read(lambda conn: self.trail.history(conn, key))

    def escalations(self, user: str | None = None) -> list[tuple[models.Event, models.Event]]:
        """The items handed to a supervisor (by `user` only, if given), newest first, each with what
        became of it: the item's newest event since (the escalate itself while it waits for one)."""
        return self.db.read(lambda conn: self.trail.escalations(conn, user))

    def deferred(self) -> list[models.Deferral]:
        """The queue's items deferred to a time still to come, soonest first."""
        if self.trail.deferrals is None:
            return []
        return self.db.read(lambda conn: self._deferrals().waiting(conn))

    def count_deferred(self) -> int:
        """How many items are deferred to a time still to come (the start page's count)."""
        if self.trail.deferrals is None:
            return 0
        return self.db.read(lambda conn: self._deferrals().count_waiting(conn))

    def _deferrals(self) -> deferrals_mod.Deferrals:
        if self.trail.deferrals is None:
            raise AssertionError("this queue was opened without its deferrals")
        return self.trail.deferrals

    def item_log(self, key: Any) -> tuple[list[models.Note], list[models.Event]]:
        """An item's notes and its history, each oldest first, read together: where the backend reads one
        statement on its own (Backend.reads_alone: no transaction's round trips, through a pooler no BEGIN,
        SET LOCAL and COMMIT), as one statement (the two tables' rows in one list); else, and inside a read
        transaction, as two statements in one read transaction."""
        key = self.q.coerce_key(key)
        if self.trail.notes is None or not self.db.backend.reads_alone or self.db.in_one_read():
            with self.db.one_read():
                return self.notes(key), self.history(key)
        return self.db.read_alone(lambda conn: self._log(conn, key))

    def _log(self, conn: sa.Connection, key: Any) -> tuple[list[models.Note], list[models.Event]]:
        """item_log's one statement: the trail's rows of the item (as AuditTrail.history reads them) and its
        notes (as Notes.of_item), a note's author, kind and text in the event's actor, event and detail."""
        a, book = self.trail.table, self._notebook()
        n = book.table

        def none(column: sa.Column[Any]) -> sa.ColumnElement[Any]:
            return sa.cast(sa.null(), column.type)

        events = sa.select(
            sa.literal("e", literal_execute=True).label("wb_from"),
            *(a.c[name] for name in ("id", "queue", "item_key", "event", "actor", "owner", "token", "at")),
            *(a.c[name] for name in ("reason", "outcome", "detail")),
        ).where(a.c.queue.in_(self.trail.history_queues), a.c.item_key == str(key))
        written = sa.select(
            sa.literal("n", literal_execute=True),
            n.c.id,
            n.c.queue,
            n.c.item_key,
            n.c.kind,
            n.c.author,
            none(a.c.owner),
            none(a.c.token),
            n.c.at,
            none(a.c.reason),
            none(a.c.outcome),
            n.c.text,
        ).where(n.c.queue == book.queue, n.c.item_key == str(key))
        both = sa.union_all(events, written).subquery("wb_log")
        notes: list[models.Note] = []
        history: list[models.Event] = []
        for row in conn.execute(sa.select(both).order_by(both.c.wb_from, both.c.id)).mappings():
            if row["wb_from"] == "e":
                history.append(self.trail.event(row))
            else:
                notes.append(
                    book.note(
                        {
                            "id": row["id"],
                            "queue": row["queue"],
                            "item_key": row["item_key"],
                            "author": row["actor"],
                            "at": row["at"],
                            "text": row["detail"],
                            "kind": row["event"],
                        }
                    )
                )
        return notes, history

    def notes(self, key: Any) -> list[models.Note]:
        """An item's notes, oldest first."""
        key = self.q.coerce_key(key)
        return self.db.read(lambda conn: self._notebook().of_item(conn, key))

    def _notebook(self) -> notes_mod.Notes:
        if self.trail.notes is None:
            raise AssertionError("this queue was opened without its notes")
        return self.trail.notes

    def _owned(self, conn: sa.Connection) -> sa.ColumnElement[bool]:
        """The rows whose lock (if any) is this queue's (lockrules.owned, the key as the trail keeps it)."""
        return lockrules.owned(self.q, self.trail, lambda: self.trail.key_text(conn, self.q.key))
