"""Tables without a token column (LockUser + LockTime): the lock time, at full precision, is the fence."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa

from workbench.core import errors
from workbench.db import clock
from workbench.db.lockshapes.base import LockShape

# Tokens of tables without a token column: "@" + the ISO lock time at the full precision the column
# keeps. No command prints a lock time finer than the second (models.shown), so that the token
# cannot be rebuilt from `locks`, `show` or `board`; see README "How locking works".
LEGACY_TOKEN_PREFIX = "@"


class LockTime(LockShape):
    """Holder and lock time in the queue's row; a token is "@" + the lock time, which an
    extension moves (and so changes the token)."""

    def token_of(self, row: Mapping[Any, Any]) -> str:
        value = row[self.time.name]
        if isinstance(value, str):
            value = dt.datetime.fromisoformat(value)
        return LEGACY_TOKEN_PREFIX + self._aware(value).isoformat()

    def token_from_lock_row(self, row: Mapping[Any, Any], locked_at: dt.datetime) -> str:
        return LEGACY_TOKEN_PREFIX + locked_at.isoformat()

    def decode(self, token: str) -> Any:
        """The lock time a token names, as the column holds it; LockLost for anything else."""
        if not token.startswith(LEGACY_TOKEN_PREFIX):
            raise errors.LockLost(
                f"token {token!r} is not a lock token of queue {self.queue}",
                queue=self.queue,
                key=None,
                cause="not_held",
            )
        text = token[len(LEGACY_TOKEN_PREFIX) :]
        if self.backend.holds_times(self.time):
            try:
                value = dt.datetime.fromisoformat(text)
            except ValueError:
                raise errors.LockLost(
                    f"token {token!r} is not a lock token of queue {self.queue}",
                    queue=self.queue,
                    key=None,
                    cause="not_held",
                ) from None
            # Tokens carry UTC with an offset; the column holds naive UTC unless it is tz-aware.
            if value.tzinfo is not None and not self.aware:
                value = value.astimezone(dt.UTC).replace(tzinfo=None)
            return value
        return text

    def token_params(self, token: str) -> dict[str, Any]:
        return {"wb_time": self.decode(token)}

    def fence_clause(self, key: sa.ColumnElement[bool], user: sa.ColumnElement[bool]) -> sa.ColumnElement[bool]:
        return sa.and_(key, user, self.backend.time_equals(self.time, sa.bindparam("wb_time", type_=clock.ExactTime())))

    def token_matches(self, token: str) -> sa.ColumnElement[bool]:
        return self.backend.time_equals(self.time, self.decode(token))

    def trail_token(self) -> sa.ColumnElement[Any]:
        # token_of in SQL: without it the database's own audit rows (`workbench grants`) name no
        # lock, and a Complete or Release retried after a lost answer is not recognised as done.
        offset = self._aware(dt.datetime(2000, 1, 1)).tzinfo is not None  # a naive time read as UTC
        return sa.literal(LEGACY_TOKEN_PREFIX, literal_execute=True) + self.backend.iso_text(
            self.time, aware=self.aware, utc=offset
        )

    def _token_of_parts(self, token: Any, time: Any) -> str | None:
        return self.token_of({self.time.name: time}) if time is not None else None

    def pinned(self, owner: Any, token: Any) -> sa.ColumnElement[bool]:
        # The holder is what can be compared cheaply; a new lock of the same holder would have a
        # new lock time, which the guarded writes compare.
        return sa.and_(self.user == owner)
