"""Lock shapes: where a queue keeps its locks and how a lock is recognised; one module per shape."""

from __future__ import annotations

from workbench.db.lockshapes.base import LockShape
from workbench.db.lockshapes.lock_table import LockTable
from workbench.db.lockshapes.lock_time import LEGACY_TOKEN_PREFIX, LockTime
from workbench.db.lockshapes.token_column import TokenColumn


def choose(*, queue: str, token: object, locks: object = None, **columns_and_settings: object) -> LockShape:
    """The shape of a queue's locks: a separate lock table, a token column, or the lock time as the token."""
    if locks is not None:
        return LockTable(queue=queue, token=token, locks=locks, **columns_and_settings)  # type: ignore[arg-type]
    if token is not None:
        return TokenColumn(queue=queue, token=token, **columns_and_settings)  # type: ignore[arg-type]
    return LockTime(queue=queue, token=None, **columns_and_settings)  # type: ignore[arg-type]


__all__ = ["LEGACY_TOKEN_PREFIX", "LockShape", "LockTable", "LockTime", "TokenColumn", "choose"]
