"""The Python API for scripts and automated workers: open a config or profile, then the operator's operations.

    from workbench import api

    with api.connect(config="workbench.toml", user="importer") as work:
        while True:
            try:
                claim = work.next_item("imports")
            except api.NothingToClaim:
                break
            work.complete(claim.lock, "verified", {"amount": 42})

The same operations, checks and errors as the CLI and the windows (they call the same
services.Operator); results are the typed records of workbench.core.models.
"""

from __future__ import annotations

from pathlib import Path
from typing import Self

from workbench import opening, services
from workbench.core import login
from workbench.core.errors import (
    ConfigError,
    DatabaseUnavailable,
    ExtendLimitReached,
    InvalidValue,
    LockLost,
    NothingToClaim,
    NotPermitted,
    WorkbenchError,
)
from workbench.core.models import Claim, Completion, Deferral, Event, ItemView, Lock

__all__ = [
    "Claim",
    "Completion",
    "ConfigError",
    "DatabaseUnavailable",
    "Deferral",
    "Event",
    "ExtendLimitReached",
    "InvalidValue",
    "ItemView",
    "Lock",
    "LockLost",
    "NotPermitted",
    "NothingToClaim",
    "WorkbenchError",
    "Worker",
    "connect",
]


class Worker(services.Operator):
    """services.Operator that owns its database connection: use it in a `with` block, or close() it."""

    def close(self) -> None:
        """Close the database connection (leaving the `with` block does it)."""
        self.database.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def connect(
    config: str | Path | None = None,
    profile: str | None = None,
    *,
    user: str | None = None,
    password: str | None = None,
) -> Worker:
    """Open a queue config file or a connection profile (as `workbench --config/--profile` does;
    neither: $WORKBENCH_CONFIG, $WORKBENCH_PROFILE, ./workbench.toml, the default profile) and
    work as `user` (default: the OS login). The password: `password`, else the environment
    variable WORKBENCH_DB_PASSWORD, else the OS keyring entry of the profile."""
    target = opening.choose(str(config) if config is not None else None, profile)
    if password is None and target.profile is not None:
        password = opening.password_for(target.profile)
    wb = opening.open_target(target, password)
    return Worker(wb, user or login.login_name() or "worker")
