"""Lock shapes: where a queue keeps its locks and how a lock is recognised; one module per shape."""

from __future__ import annotations

from workbench.db.lockshapes.base import FenceFailed, LockShape
from workbench.db.lockshapes.claim_id import ClaimIdColumn
from workbench.db.lockshapes.lock_table import LockTable
from workbench.db.lockshapes.lock_time import LEGACY_TOKEN_PREFIX, LockTime
from workbench.db.lockshapes.token_column import TokenColumn


def choose(
    *,
    queue: str,
    token: object,
    locks: object = None,
    claim_id: object = None,
    keep_claim_id: bool = False,
    **columns_and_settings: object,
) -> LockShape:
    """The shape of a queue's locks: a claim-id column with a lock table, a separate lock table, a token
    column, or the lock time as the token."""
    if claim_id is not None:
        return ClaimIdColumn(
            queue=queue,
            token=token,
            locks=locks,
            claim_id=claim_id,  # type: ignore[arg-type]
            keep_claim_id=keep_claim_id,
            **columns_and_settings,
        )
    if locks is not None:
        return LockTable(queue=queue, token=token, locks=locks, **columns_and_settings)  # type: ignore[arg-type]
    if token is not None:
        return TokenColumn(queue=queue, token=token, **columns_and_settings)  # type: ignore[arg-type]
    return LockTime(queue=queue, token=None, **columns_and_settings)  # type: ignore[arg-type]


__all__ = [
    "LEGACY_TOKEN_PREFIX",
    "ClaimIdColumn",
    "FenceFailed",
    "LockShape",
    "LockTable",
    "LockTime",
    "TokenColumn",
    "choose",
]
