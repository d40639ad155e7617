"""Locks kept in a separate lock table (shape 5): the queue's table is only read, and written only by the workflow."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import sqlalchemy as sa
from sqlalchemy.sql import util as sql_util

from workbench.core import workflow
from workbench.db.lockshapes import base
from workbench.db.lockshapes.token_column import TokenColumn

# The item's key as the lock table keeps it: text, which these key types turn into and back unchanged.
KEY_TYPES = (sa.String, sa.Integer)

_W = workflow.Write
LOCK_WRITES = (_W.LOCK_TAKEN, _W.LOCK_HANDED, _W.LOCK_CLEARED, _W.LOCK_EXTENDED)


def lock_write(name: str) -> workflow.Write | None:
    """The lock Write transition `name` makes (core/workflow.py), None where it leaves the lock alone."""
    found = [w for w in LOCK_WRITES if w in workflow.TRANSITIONS[name].writes]
    if len(found) > 1:
        raise ValueError(f"transition {name} writes the lock twice: {', '.join(w.name for w in found)}")
    return found[0] if found else None


def _on(row: sa.FromClause, expr: sa.ColumnElement[Any]) -> sa.ColumnElement[Any]:
    """`expr` over the lock table read as over `row` (an alias of it)."""
    return sql_util.ClauseAdapter(row).traverse(expr)


class LockTable(TokenColumn):
    """Holder, lock time, expiry and token in one row of the lock table per locked item.

    The row exists only while the item is locked: a claim inserts it (the primary key on queue and
    item key refuses a second one), a claim of an expired lock rewrites it under the old token, a
    release or Complete deletes it. The queue's row is joined by its key, which the lock table keeps
    as text; integer keys are cast both ways, so that either table's index can serve the join.
    """

    # Shape 6 (ClaimIdColumn) adds the row's own claim-id column, and whether a Complete keeps it.
    claim_id: sa.Column[Any] | None = None
    keep = False
    # The other queues over the same table whose locks this lock table keeps and whose rows may be this
    # queue's too (BoundQueue.may_share_rows); set by the service, which binds every queue. Each keeps
    # one lock row per item under its own name, so the primary key does not keep them from one row.
    neighbours: tuple[str, ...] = ()
    # Each neighbour's row rule for freeing a lock row of its own (expire's, HELD: the item in that queue's
    # work), over the queue's table and the lock row deleted (its holder); set by the service with `neighbours`.
    neighbour_held: Mapping[str, sa.ColumnElement[bool]] = MappingProxyType({})

    def __init__(self, *, locks: sa.Table, **columns_and_settings: Any) -> None:
        super().__init__(**columns_and_settings)
        self.locks = locks

    @property
    def separate_locks(self) -> bool:
        return True

    def undo_problem(self) -> str | None:
        return "it keeps its locks in a separate table"

    @property
    def single_write(self) -> bool:
        return False  # the fence is on one table and the edits on another: two statements

    @property
    def columns_in_table(self) -> list[sa.Column[Any]]:
        return []

    # -- joining the queue's table ------------------------------------------------------------

    def check_key(self, key: sa.Column[Any]) -> str | None:
        room = getattr(self.locks.c.item_key.type, "length", 200)
        length = getattr(key.type, "length", None)
        if not isinstance(key.type, KEY_TYPES):
            return (
                f"a queue whose locks live in table '{self.locks.name}' needs a text or whole-number key "
                f"(column '{key.name}' is {key.type})"
            )
        if isinstance(key.type, sa.String) and length is not None and length > room:
            return (
                f"the lock table keeps keys of up to {room} characters, and column '{key.name}' "
                f"({key.type}) may hold longer ones"
            )
        return None

    def source(self, table: sa.FromClause, key: sa.ColumnElement[Any]) -> sa.FromClause:
        return table.outerjoin(self.locks, self.joins(key))

    def locked_source(self, table: sa.FromClause, key: sa.ColumnElement[Any]) -> sa.FromClause:
        return table.join(self.locks, self.joins(key))

    def joins(self, key: sa.ColumnElement[Any]) -> sa.ColumnElement[bool]:
        locks = self.locks
        if isinstance(key.type, sa.String):
            on = locks.c.item_key == key
        else:
            # Text to look the lock up from the item, a number to look the item up from the lock.
            on = sa.and_(
                locks.c.item_key == sa.cast(key, locks.c.item_key.type),
                key == self.backend.text_as(locks.c.item_key, key.type),
            )
        return sa.and_(locks.c.queue == sa.literal(self.queue, literal_execute=True), on)

    def held_elsewhere(
        self, key: sa.ColumnElement[Any], now: sa.ColumnElement[Any] | None = None
    ) -> sa.ColumnElement[bool]:
        """The item has a lock row in one of the table's other queues (`neighbours`): live at `now`, or
        any (without `now`). A row is free for this queue only while none of them holds it: a claim, a
        pick and a move through one queue of the table leave alone a row held through another (two
        holders of one row otherwise). Looked up from the item by the lock table's primary key."""
        if not self.neighbours:
            return sa.false()
        other = self.locks.alias("wb_elsewhere")
        live = [] if now is None else [_on(other, self._unexpired(now))]
        return sa.exists().where(*self._elsewhere(other, key), *live)

    def run_out_elsewhere(self, key: sa.ColumnElement[Any], now: sa.ColumnElement[Any]) -> sa.ColumnElement[bool]:
        """The item has a run-out lock row in one of the neighbours, which a claim here gives back
        (LockTableClaim._give_back_twins): false where the table keeps no other queue's locks."""
        if not self.neighbours:
            return sa.false()
        other = self.locks.alias("wb_run_out")
        return sa.exists().where(*self._elsewhere(other, key), _on(other, self.expired(now)))

    def _elsewhere(self, other: sa.FromClause, key: sa.ColumnElement[Any]) -> list[sa.ColumnElement[bool]]:
        """`other` (an alias of the lock table) is a neighbour's lock row of the item `key`."""
        item = other.c.item_key == (key if isinstance(key.type, sa.String) else sa.cast(key, other.c.item_key.type))
        return [other.c.queue.in_([sa.literal(name, literal_execute=True) for name in self.neighbours]), item]

    def stale_rows(self, now: sa.ColumnElement[Any], key: sa.ColumnElement[Any]) -> sa.ColumnElement[bool]:
        # The lock table holds only locks, each with an expiry (NOT NULL): its (queue, expires_at) index
        # finds the stale ones by range on every database.
        return sa.and_(self.user.is_not(None), self.stale(now))

    def unheld(self, key: sa.ColumnElement[Any], *, finished: bool = False) -> sa.ColumnElement[bool]:
        return sa.and_(~sa.exists().where(self.joins(key)), ~self.held_elsewhere(key))

    def key_text(self, key: Any) -> str:
        """An item's key as the lock table's item_key keeps it."""
        return str(key)

    def of_item(self, item_key: Any) -> sa.ColumnElement[bool]:
        """The lock row of one item (`item_key`: its text, or a bound parameter)."""
        return sa.and_(
            self.locks.c.queue == sa.literal(self.queue, literal_execute=True), self.locks.c.item_key == item_key
        )

    def key_clause(self, key: sa.Column[Any]) -> sa.ColumnElement[bool]:
        return self.of_item(sa.bindparam("wb_item", type_=self.locks.c.item_key.type))

    def key_params(self, key: Any) -> dict[str, Any]:
        return {"wb_item": self.key_text(key)}

    # -- what a transition's lock write looks like (db/rules/pg_lock_check.py renders these) ---------------

    def lock_row_change(
        self, name: str, old: sa.FromClause, new: sa.FromClause, caller: sa.ColumnElement[Any], *, capped: bool
    ) -> sa.ColumnElement[bool]:
        """The change of an item's lock row that transition `name` makes, by its lock Write: `old` and
        `new` alias the lock table (the row before and after; a row not there reads as all NULL),
        `caller` the one making it. A fresh lock (taken: the caller's; handed: the new holder is the
        transition's OTHER_USER check), the row gone (cleared), the same lock with its expiry moved on
        as the engine's guard moves it (extended: base.moved_on, strictly under a cap, `capped`), or the
        lock as it was (no lock write)."""
        write = lock_write(name)
        assert self.token is not None
        token_o, token_n = _on(old, self.token), _on(new, self.token)
        if write in (_W.LOCK_TAKEN, _W.LOCK_HANDED):
            fresh = sa.and_(token_n.is_not(None), token_n.is_distinct_from(token_o))
            return sa.and_(fresh, _on(new, self.user) == caller) if write is _W.LOCK_TAKEN else fresh
        if write is _W.LOCK_CLEARED:
            return _on(new, self.locks.c.item_key).is_(None)  # deleted: the primary key is never NULL
        same = [_on(new, c).is_not_distinct_from(_on(old, c)) for c in (self.user, self.token, self.time)]
        expiry_o, expiry_n = _on(old, self.expiry()), _on(new, self.expiry())
        if write is _W.LOCK_EXTENDED:
            return sa.and_(*same, base.moved_on(expiry_n, expiry_o, capped=capped))
        return sa.and_(*same, expiry_n.is_not_distinct_from(expiry_o))

    def row_lock_change(
        self, name: str, old: sa.FromClause, new: sa.FromClause, key: sa.ColumnElement[Any], caller: Any
    ) -> sa.ColumnElement[bool]:
        """What transition `name`'s lock write leaves in the queue's row itself (`old`, `new`: aliases of
        the queue table; `key`: the item's key as the lock table keeps it): here no part of the lock."""
        return sa.true()

    # -- what rows show ------------------------------------------------------------------------

    def readable_columns(self) -> dict[str, sa.ColumnElement[Any]]:
        return {}  # none of the queue's columns is a lock column

    def shown_item(self, item: Mapping[str, Any]) -> dict[str, Any]:
        return dict(item)

    def token_of(self, row: Mapping[Any, Any]) -> str:
        return str(row["wb_token"])

    # -- writes -------------------------------------------------------------------------------

    def new_lock(self, now: sa.ColumnElement[Any]) -> dict[str, sa.ColumnElement[Any]]:
        """The lock row a claim of a free item inserts, as the values of one statement for every claim: the
        clock `now` (and the expiry from it) as SQL, the rest bound by name (new_lock_params)."""
        c = self.locks.c
        user, token = sa.bindparam("wb_user", type_=self.user.type), self.token_param("wb_token")
        return {
            "queue": sa.bindparam("wb_queue", type_=c.queue.type),
            "item_key": sa.bindparam("wb_item", type_=c.item_key.type),
            **self.lock_writes(user, now, token),
        }

    def new_lock_params(self, key: Any, user: Any, token: Any) -> dict[str, Any]:
        """The values of the lock row new_lock inserts for a claim of item `key` by `user` under `token`."""
        return {"wb_queue": self.queue, "wb_item": self.key_text(key), "wb_user": user, "wb_token": token}

    def unlock(
        self,
        conn: sa.Connection,
        table: sa.Table,
        key_column: sa.Column[Any],
        key: Any,
        guard: sa.ColumnElement[bool],
        item_values: Mapping[str, Any],
    ) -> bool:
        if conn.execute(sa.delete(self.locks).where(self.of_item(self.key_text(key)), guard)).rowcount != 1:
            return False
        if item_values:
            conn.execute(sa.update(table).where(key_column == key).values(dict(item_values)))
        return True

    def relock(
        self,
        conn: sa.Connection,
        table: sa.Table,
        key_column: sa.Column[Any],
        key: Any,
        guard: sa.ColumnElement[bool],
        lock_values: Mapping[str, Any],
        prev_token: Any,
    ) -> bool:
        assert self.token is not None
        statements = self.relock_statements(table, key_column, guard, lock_values)
        return self.run_guarded(conn, statements, self.relock_params(key, lock_values[self.token.name], prev_token))

    def relock_statements(
        self, table: sa.Table, key_column: sa.Column[Any], guard: sa.ColumnElement[bool], lock_values: Mapping[str, Any]
    ) -> list[sa.Executable]:
        """What relock runs (run_guarded): the lock row of item `wb_item` rewritten to `lock_values` where
        `guard` holds, then what stamp writes into the queue's row over the old lock's (a claim id another
        program set instead raises FenceFailed: the rewritten lock row goes back with the transaction).
        A claim builds them once per queue, `guard` and `lock_values` bound by name too (LockTableClaim._retake)."""
        rewrite = sa.update(self.locks).where(self.key_clause(key_column), guard).values(dict(lock_values))
        stamp = self.stamp_statement(table, key_column, retaken=True)
        return [rewrite] if stamp is None else [rewrite, stamp]

    def relock_params(self, key: Any, token: Any, prev_token: Any) -> dict[str, Any]:
        """The item's values for relock_statements: its key, the new token and the old one (for stamp)."""
        return {**self.key_params(key), **self.stamp_params(key, token, prev_token)}

    def guarded_statements(
        self,
        table: sa.Table,
        key_column: sa.Column[Any],
        fence: sa.ColumnElement[bool],
        item_values: Mapping[str, Any],
        lock_values: Mapping[str, Any],
        unlock: bool,
        completes: bool = False,
        in_work: sa.ColumnElement[bool] | None = None,
    ) -> list[sa.Executable]:
        locks = self.locks
        # The row rule: the lock row is removed or moved only while the queue's row is in this queue's
        # work (the fence is on the lock table, so the row is asked by key); the item's own write holds
        # to it again, so that a change committed between the two statements rolls both back.
        work = in_work if in_work is not None else sa.true()
        key = key_column == sa.bindparam("wb_key", type_=key_column.type)
        fence = sa.and_(fence, sa.exists().where(key, work))
        if unlock:
            first: sa.Executable = sa.delete(locks).where(fence)
        elif lock_values:
            first = sa.update(locks).where(fence).values(dict(lock_values))
        else:  # a Save: hold the lock row until the edits are written
            first = self.backend.lock_row(sa.select(locks.c.token).where(fence), locks)
        statements = [first]
        item = self.item_write(table, key_column, item_values, unlock, completes, work)
        if item is not None:
            statements.append(item)
        return statements

    def item_write(
        self,
        table: sa.Table,
        key_column: sa.Column[Any],
        item_values: Mapping[str, Any],
        unlock: bool,
        completes: bool,
        in_work: sa.ColumnElement[bool],
    ) -> sa.Update | None:
        """The queue row's part of a guarded write, on a row still in the queue's work (None: nothing
        to write there)."""
        if not item_values:
            return None
        return (
            sa.update(table)
            .where(key_column == sa.bindparam("wb_key", type_=key_column.type), in_work)
            .values(dict(item_values))
        )

    def stamp(
        self, conn: sa.Connection, table: sa.Table, key_column: sa.Column[Any], key: Any, token: Any, prev_token: Any
    ) -> bool:
        """What a claim writes into the queue's row besides on_claim (stamp_statement); False when the
        row is not the claimer's to take."""
        stmt = self.stamp_statement(table, key_column, retaken=prev_token is not None)
        return stmt is None or conn.execute(stmt, self.stamp_params(key, token, prev_token)).rowcount == 1

    def stamp_statement(self, table: sa.Table, key_column: sa.Column[Any], *, retaken: bool) -> sa.Update | None:
        """stamp's write, for a free item or an expired lock's (`retaken`), its values bound by name
        (stamp_params), so that a claim builds it once per queue: here none (nothing in the queue's row)."""
        return None

    def stamp_params(self, key: Any, token: Any, prev_token: Any) -> dict[str, Any]:
        """The values stamp_statement's write binds for item `key`, the new `token` and the old one."""
        return {}

    def run_guarded(self, conn: sa.Connection, statements: list[sa.Executable], params: Mapping[str, Any]) -> bool:
        first, *rest = statements
        result = conn.execute(first, dict(params))
        held = result.first() is not None if isinstance(first, sa.Select) else result.rowcount == 1
        if not held:
            return False
        for stmt in rest:
            if conn.execute(stmt, dict(params)).rowcount != 1:
                raise base.FenceFailed  # the row itself no longer carries this lock (see ClaimIdColumn)
        return True

    def claim_method(self, configured: Any) -> Any:
        return configured.lock_table_claim()  # the database's own, or the portable lock-table claim

    def grants_problem(self) -> str | None:
        return None  # db/rules/pg_locks.py checks the lock rows and the queue row's values around them
