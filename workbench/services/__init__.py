"""Qt-free services by name: what an operator and a supervisor do, for the windows, the CLI and scripts."""

from __future__ import annotations

from workbench.services.operator import ItemLog, Operator, QueueLayout, connection_interruptions
from workbench.services.supervisor import BOARD_ROWS, BoardPage, Supervisor

__all__ = ["BOARD_ROWS", "BoardPage", "ItemLog", "Operator", "QueueLayout", "Supervisor", "connection_interruptions"]
