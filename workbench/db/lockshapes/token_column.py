"""Locks whose token is a column of the row (`wb_lock_token`, added by `attach`): the fence compares it."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Mapping
from typing import Any, ClassVar

import sqlalchemy as sa

from workbench.core import errors
from workbench.db import clock
from workbench.db.lockshapes.base import LockShape


class TokenColumn(LockShape):
    """Holder, lock time, (expiry) and a fresh random token per claim, all in the queue's row.

    The token column is text (32 hex digits), or of the database's UUID type (PostgreSQL `uuid`,
    SQL Server `uniqueidentifier`): then a token is the UUID's text, bound as a UUID.
    """

    token_in_row: ClassVar[bool] = True
    stable_token: ClassVar[bool] = True

    @property
    def uuid_typed(self) -> bool:
        assert self.token is not None
        return isinstance(self.token.type, sa.Uuid)

    @property
    def identity(self) -> list[sa.Column[Any]]:
        assert self.token is not None
        return [self.token]

    def new_token(self) -> sa.ColumnElement[Any]:
        return clock.new_uuid() if self.uuid_typed else super().new_token()

    def new_token_value(self) -> Any:
        return uuid.uuid4() if self.uuid_typed else super().new_token_value()

    def bound_token(self, token: Any) -> Any:
        """A caller's token as the column compares it (a bound parameter as it is); LockLost when it cannot be
        one of its tokens."""
        if not self.uuid_typed or isinstance(token, (uuid.UUID, sa.BindParameter)):
            return token
        try:
            return uuid.UUID(str(token))
        except ValueError:
            raise errors.LockLost(
                f"token {token!r} is not a lock token of queue {self.queue}",
                queue=self.queue,
                key=None,
                cause="not_held",
            ) from None

    def lock_writes(self, user: Any, now: sa.ColumnElement[Any], token: Any) -> dict[str, Any]:
        assert self.token is not None
        return {**super().lock_writes(user, now, token), self.token.name: token}

    def token_column(self) -> sa.ColumnElement[Any]:
        assert self.token is not None
        return self.as_text(self.token)

    def as_text(self, token: sa.ColumnElement[Any]) -> sa.ColumnElement[Any]:
        """A token column (of the table, or returned by a statement) as the text audit rows keep,
        for joins and unions with them (SQL Server's text of a uniqueidentifier is upper case,
        which its case-insensitive collations match)."""
        return sa.cast(token, sa.String(36)) if self.uuid_typed else token

    def stored_token(self, row: Mapping[Any, Any]) -> Any:
        assert self.token is not None
        return row[self.token.name]

    def shown_item(self, item: Mapping[str, Any]) -> dict[str, Any]:
        assert self.token is not None
        shown = super().shown_item(item)
        shown.pop(self.token.name, None)  # a token is the holder's, not for anyone who looks
        return shown

    def token_of(self, row: Mapping[Any, Any]) -> str:
        assert self.token is not None
        return str(row[self.token.name])

    def token_from_lock_row(self, row: Mapping[Any, Any], locked_at: dt.datetime) -> str:
        return str(row["wb_token"])

    def token_param(self, name: str) -> sa.BindParameter[Any]:
        """A token bound by `name` in a statement built once, its value (bound_token) given when it runs."""
        assert self.token is not None
        return sa.bindparam(name, type_=self.token.type)

    def token_params(self, token: str) -> dict[str, Any]:
        return {"wb_token": self.bound_token(token)}

    def fence_clause(self, key: sa.ColumnElement[bool], user: sa.ColumnElement[bool]) -> sa.ColumnElement[bool]:
        assert self.token is not None
        return sa.and_(key, self.token == sa.bindparam("wb_token", type_=self.token.type), user)

    def token_matches(self, token: str) -> sa.ColumnElement[bool]:
        assert self.token is not None
        return sa.and_(self.token == self.bound_token(token))

    def _token_of_parts(self, token: Any, time: Any) -> str | None:
        return str(token) if token is not None else None

    def pinned(self, owner: Any, token: Any) -> sa.ColumnElement[bool]:
        assert self.token is not None
        return sa.and_(self.token == self.bound_token(token))
