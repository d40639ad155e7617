"""What the audit trail keeps of a lock token: its digest. A leaf, so that the backends (which compute
the same in SQL) and the audit trail (which writes it) both build on it."""

from __future__ import annotations

import hashlib
from typing import Any


def token_digest(token: Any) -> str | None:
    """What the audit trail keeps of a lock token: the hex SHA-256 of its text, in lower case (SQL
    Server writes a UUID's in upper case). Enough to follow one lock through the trail and to tell
    why it was lost; useless for writing under it, so reading the trail hands nobody a live lock.
    Each backend computes the same in SQL (Backend.token_digest)."""
    if token is None:
        return None
    return hashlib.sha256(str(token).lower().encode()).hexdigest()
