"""Qt-free services by name: what an operator, a supervisor and an administrator do, for the windows, the
CLI and scripts. The windows and the commands reach the engine (workbench.db) through here only."""

from __future__ import annotations

from workbench.services.admin import Workbench
from workbench.services.base import QueueLayout, Service
from workbench.services.operator import Held, HeldLock, ItemLog, Operator
from workbench.services.supervisor import BOARD_ROWS, BoardPage, Supervisor

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
