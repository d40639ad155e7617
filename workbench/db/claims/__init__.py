"""Claim methods, one per database family, chosen from the dialect (or named in the config)."""

from __future__ import annotations

import sqlalchemy as sa

from workbench.core import errors
from workbench.db.claims import base, mssql, portable, postgresql, stepwise

ClaimMethod = base.ClaimMethod
ClaimRequest = base.ClaimRequest


# MySQL look-alikes that report a MySQL 8 version and accept FOR UPDATE SKIP LOCKED but do not
# lock the rows it reads (TiDB: pingcap/tidb#69720), so a stepwise claim would not be exclusive.
_SKIP_LOCKED_IGNORED = ("tidb",)


def server_version_text(engine: sa.Engine) -> str:
    """The server's own version string (SQLAlchemy keeps only the numbers, not "…-TiDB-v7.5.0")."""
    with engine.connect() as conn:
        return str(conn.execute(sa.select(sa.func.version())).scalar() or "")


def mysql_skip_locked_works(engine: sa.Engine) -> bool:
    """Does this MySQL-family server really lock the rows SELECT … FOR UPDATE SKIP LOCKED reads?"""
    if engine.dialect.server_version_info is None:
        with engine.connect():  # the version is read on first connect
            pass
    version = engine.dialect.server_version_info or ()
    if getattr(engine.dialect, "is_mariadb", False):
        return tuple(version[:2]) >= (10, 6)
    if tuple(version[:3]) < (8, 0, 1):
        return False
    text = server_version_text(engine).lower()
    return not any(name in text for name in _SKIP_LOCKED_IGNORED)


def auto_name(engine: sa.Engine) -> str:
    """The best method this database supports."""
    name = engine.dialect.name
    if name == "postgresql":
        return "skip-locked"
    if name in ("mysql", "mariadb"):
        return "select-skip-locked" if mysql_skip_locked_works(engine) else "portable"
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
        if dialect in ("mysql", "mariadb") and configured != "auto" and not mysql_skip_locked_works(engine):
            raise errors.ConfigError(f"claim method '{name}' needs a server whose FOR UPDATE SKIP LOCKED locks "
                                     f"rows (MySQL 8.0.1+, MariaDB 10.6+; not TiDB: {server_version_text(engine)}); "
                                     "use 'auto' or 'portable'", key="database.claim_method")
        return stepwise.mysql_claim()
    if name == "readpast":
        return mssql.ReadpastClaim()
    if name == "immediate":
        return stepwise.sqlite_claim()
    return portable.PortableClaim()
