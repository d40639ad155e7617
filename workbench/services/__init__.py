"""Qt-free services by name: what an operator, a supervisor and an administrator do, for the windows, the
CLI and scripts. The windows and the commands reach the engine (workbench.db) through here only."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

# The open database as the front ends hold it (admin.Workbench names it too): not from admin, which would
# load attach, grants, groups and the self-checks into every command that only claims (`workbench next`).
from workbench.services.base import QueueLayout, Service
from workbench.services.door import Workbench
from workbench.services.operator import Held, HeldLock, ItemLog, Operator

if TYPE_CHECKING:
    from workbench.services.supervisor import BOARD_ROWS, BoardPage, Supervisor

_SUPERVISOR = ("BOARD_ROWS", "BoardPage", "Supervisor")


def __getattr__(name: str) -> Any:
    """The supervisor's service on first use: `workbench next` and the operator window never load the
    console's actions and figures (db.supervision, db.figures)."""
    if name in _SUPERVISOR:
        from workbench.services import supervisor

        return getattr(supervisor, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BOARD_ROWS",
    "BoardPage",
    "Held",
    "HeldLock",
    "ItemLog",
    "Operator",
    "QueueLayout",
    "Service",
    "Supervisor",
    "Workbench",
]
