"""Claim methods, one per database family, chosen from the dialect (or named in the config)."""

from __future__ import annotations

import sqlalchemy as sa

from workbench.core import errors
from workbench.db.claims import base, mssql, portable, postgresql, stepwise

ClaimMethod = base.ClaimMethod
ClaimRequest = base.ClaimRequest


def _mysql_has_skip_locked(engine: sa.Engine) -> bool:
    version = engine.dialect.server_version_info or ()
    if getattr(engine.dialect, "is_mariadb", False):
        return tuple(version[:2]) >= (10, 6)
    return tuple(version[:3]) >= (8, 0, 1)


def auto_name(engine: sa.Engine) -> str:
    """The best method this database supports."""
    name = engine.dialect.name
    if name == "postgresql":
        return "skip-locked"
    if name in ("mysql", "mariadb"):
        if engine.dialect.server_version_info is None:
            with engine.connect():  # the version is read on first connect
                pass
        return "select-skip-locked" if _mysql_has_skip_locked(engine) else "portable"
    if name == "mssql":
        return "readpast"
    if name == "sqlite":
        return "immediate"
    return "portable"


_FITS = {
    "skip-locked": ("postgresql",),
    "select-skip-locked": ("mysql", "mariadb", "postgresql"),
    "readpast": ("mssql",),
    "immediate": ("sqlite",),
}


def choose(engine: sa.Engine, configured: str) -> base.ClaimMethod:
    name = auto_name(engine) if configured == "auto" else configured
    dialect = engine.dialect.name
    if name in _FITS and dialect not in _FITS[name]:
        raise errors.ConfigError(f"claim method '{name}' does not work on {dialect}; use 'auto' or 'portable'",
                                 key="database.claim_method")
    if name == "skip-locked":
        return postgresql.SkipLockedClaim()
    if name == "select-skip-locked":
        return stepwise.mysql_claim()
    if name == "readpast":
        return mssql.ReadpastClaim()
    if name == "immediate":
        return stepwise.sqlite_claim()
    return portable.PortableClaim()
