"""The OS login name: the default workbench user of the CLI and of scripts."""

from __future__ import annotations

import getpass
import os


def login_name() -> str:
    """The OS login ("" when there is none, as on some containers and services)."""
    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001 - no login name on some containers and services
        return os.environ.get("USER") or os.environ.get("USERNAME") or ""
