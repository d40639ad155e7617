"""Shape 6: the table's own claim-id column (`Lock`, `process_uuid`) holds the token; the rest is in the lock table."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy.sql import util as sql_util

from workbench.core import errors, workflow
from workbench.db.lockshapes.lock_table import LockTable, lock_write


class ClaimIdColumn(LockTable):
    """A lock table row (holder, time, expiry, token) plus the token in the row's claim-id column.

    The column is the protocol other programs of such tables follow: a row whose claim id is set is
    taken, by workbench or by someone else, and is not handed out. A claim sets it to the new token
    only where it is still empty (or, for an expired lock, still the old token); a release clears
    it, Complete too unless the queue keeps it (`keep_claim_id`, for statistics); every write under
    the lock checks that the row still carries this lock's token.

    A kept id is told from a live claim by the queue's `todo`: a completed row has left it, so the
    id it keeps stands in no claim's way; a row that waits and carries a claim id is held by the
    program that set it, whatever `keep_claim_id` says (another program's batch marks waiting rows
    with its own id). A reopen (on_reopen) clears a kept id, so that the row is served again.
    """

    claim_id: sa.Column[Any]  # always set here

    def __init__(self, *, claim_id: sa.Column[Any], keep_claim_id: bool, **settings: Any) -> None:
        super().__init__(**settings)
        self.claim_id, self.keep = claim_id, keep_claim_id

    @property
    def columns_in_table(self) -> list[sa.Column[Any]]:
        return [self.claim_id]

    def check_key(self, key: sa.Column[Any]) -> str | None:
        problem = super().check_key(key)
        if problem:
            return problem
        kind = self.claim_id.type
        length = getattr(kind, "length", None)
        if isinstance(kind, sa.Uuid) or (isinstance(kind, sa.String) and (length is None or length >= 32)):
            return None
        return (
            f"the claim-id column '{self.claim_id.name}' must be text of at least 32 characters or of the "
            f"database's UUID type (it is {kind})"
        )

    @property
    def _uuid_typed(self) -> bool:
        return isinstance(self.claim_id.type, sa.Uuid)

    @property
    def _bind_type(self) -> sa.types.TypeEngine[Any]:
        return sa.String(36) if self._uuid_typed and self.backend.uuid_as_text else self.claim_id.type

    def claim_value(self, token: Any) -> Any:
        """A token as the claim-id column is sent it; LockLost when it cannot be one."""
        if not self._uuid_typed:
            return str(token)
        try:
            value = token if isinstance(token, uuid.UUID) else uuid.UUID(str(token))
        except ValueError:
            raise errors.LockLost(
                f"token {token!r} is not a lock token of queue {self.queue}",
                queue=self.queue,
                key=None,
                cause="not_held",
            ) from None
        return str(value) if self.backend.uuid_as_text else value

    def free(self) -> sa.ColumnElement[bool]:
        # With keep_claim_id too: a waiting row with a claim id is another program's (see the class).
        return sa.and_(super().free(), self.claim_id.is_(None))

    def unheld(self, key: sa.ColumnElement[Any], *, finished: bool = False) -> sa.ColumnElement[bool]:
        # A move leaves a row alone that another program holds by its claim id; the id a finished row
        # keeps (keep_claim_id) is its history, not a claim (a reopen clears it).
        if finished and self.keep:
            return super().unheld(key)
        return sa.and_(super().unheld(key), self.claim_id.is_(None))

    def cleared_on_reopen(self) -> list[sa.Column[Any]]:
        return [self.claim_id] if self.keep else []

    def token_params(self, token: str) -> dict[str, Any]:
        return {**super().token_params(token), "wb_claim": self.claim_value(token)}

    def shown_item(self, item: Mapping[str, Any]) -> dict[str, Any]:
        shown = super().shown_item(item)
        shown.pop(self.claim_id.name, None)  # it is the lock's token
        return shown

    def row_lock_change(
        self, name: str, old: sa.FromClause, new: sa.FromClause, key: sa.ColumnElement[Any], caller: Any
    ) -> sa.ColumnElement[bool]:
        """The claim id, by transition `name`'s lock Write: stamped with the token of the lock the caller
        took (or left as it was, until the claim stamps it), with the new holder's where a lock is handed
        over, cleared where it is given up (kept by a Complete where the queue keeps it), else as it was."""
        write = lock_write(name)
        before, after = (sql_util.ClauseAdapter(row).traverse(self.claim_id) for row in (old, new))
        unchanged = after.is_not_distinct_from(before)
        if write is workflow.Write.LOCK_CLEARED:
            keeps = self.keep and workflow.Write.OUTCOME in workflow.TRANSITIONS[name].writes
            return unchanged if keeps else after.is_(None)
        if write not in (workflow.Write.LOCK_TAKEN, workflow.Write.LOCK_HANDED):
            return unchanged
        held = self.locks.alias("held")
        assert self.token is not None
        token = held.c[self.token.name]
        holder = [held.c[self.user.name] == caller] if write is workflow.Write.LOCK_TAKEN else []
        # The lock row's token as the claim id holds it (a UUID compared as one, text in any case).
        mark, value = (
            (after, sa.cast(token, sa.Uuid()))
            if self._uuid_typed
            else (sa.func.lower(sa.cast(after, sa.Text())), sa.func.lower(token))
        )
        of_item = [held.c.queue == sa.literal(self.queue, literal_execute=True), held.c.item_key == key, *holder]
        stamped = mark == sa.select(value).where(*of_item).scalar_subquery()
        return sa.or_(unchanged, stamped) if write is workflow.Write.LOCK_TAKEN else stamped

    # -- writes -------------------------------------------------------------------------------

    def stamp_statement(self, table: sa.Table, key_column: sa.Column[Any], *, retaken: bool) -> sa.Update | None:
        # Only over an empty claim id or the expired lock's own: never over another program's.
        old, new = (sa.bindparam(name, type_=self._bind_type) for name in ("wb_prev_claim", "wb_claim"))
        was = self.claim_id == old if retaken else self.claim_id.is_(None)
        key = key_column == sa.bindparam("wb_key", type_=key_column.type)
        return sa.update(table).where(key, was).values({self.claim_id.name: new})

    def stamp_params(self, key: Any, token: Any, prev_token: Any) -> dict[str, Any]:
        params = {"wb_key": key, "wb_claim": self.claim_value(token)}
        if prev_token is not None:
            params["wb_prev_claim"] = self.claim_value(prev_token)
        return params

    def unlock(
        self,
        conn: sa.Connection,
        table: sa.Table,
        key_column: sa.Column[Any],
        key: Any,
        guard: sa.ColumnElement[bool],
        item_values: Mapping[str, Any],
    ) -> bool:
        return super().unlock(conn, table, key_column, key, guard, {**item_values, self.claim_id.name: sa.null()})

    def item_write(
        self,
        table: sa.Table,
        key_column: sa.Column[Any],
        item_values: Mapping[str, Any],
        unlock: bool,
        completes: bool,
        in_work: sa.ColumnElement[bool],
    ) -> sa.Update | None:
        values = dict(item_values)
        if unlock and not (completes and self.keep):
            values[self.claim_id.name] = sa.null()
        if not values:
            return None  # an extension: the lock row alone
        carries = self.claim_id == sa.bindparam("wb_claim", type_=self._bind_type)
        key = key_column == sa.bindparam("wb_key", type_=key_column.type)
        return sa.update(table).where(key, carries, in_work).values(values)
