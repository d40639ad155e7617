"""Claim methods, one per database family; the database's backend says which fit and which is best."""

from __future__ import annotations

import sqlalchemy as sa

from workbench.core import errors
from workbench.db import backends
from workbench.db.claims import base, batched, lock_table, mssql, portable, postgresql, stepwise

ClaimMethod = base.ClaimMethod
ClaimRequest = base.ClaimRequest
Claimed = base.Claimed
claim_of = base.claim_of

_METHODS = {
    "skip-locked": postgresql.SkipLockedClaim,
    "select-skip-locked": batched.BatchedClaim,
    "readpast": mssql.ReadpastClaim,
    "immediate": stepwise.sqlite_claim,
    "portable": portable.PortableClaim,
}


def auto_name(engine: sa.Engine) -> str:
    """The best method this database supports."""
    return backends.of(engine).auto_claim_method(engine)


def choose(engine: sa.Engine, configured: str) -> base.ClaimMethod:
    backend = backends.of(engine)
    name = backend.auto_claim_method(engine) if configured == "auto" else configured
    if name != "portable" and name not in backend.claim_methods:
        raise errors.ConfigError(
            f"claim method '{name}' does not work on {engine.dialect.name}; use 'auto' or 'portable'",
            key="database.claim_method",
        )
    problem = backend.check_claim_method(engine, name) if configured != "auto" else None
    if problem:
        raise errors.ConfigError(
            f"claim method '{name}' {problem}; use 'auto' or 'portable'", key="database.claim_method"
        )
    method = _METHODS[name]()
    # A queue whose locks live in a lock table, on a database without a lock-table claim of its own.
    method.portable_lock_table = lock_table.LockTableClaim
    return method
