"""The `workbench` command: hand the command line to the user's command server, or run it here."""

from __future__ import annotations

import sys

from workbench.cli import command_server


def main() -> int:
    argv = sys.argv[1:]
    if not command_server.wanted(argv):
        from workbench.cli.main import main as run_here

        return run_here(argv)
    served = command_server.run(argv)
    if served is not None:
        return served
    from workbench.cli.main import main as run_here

    try:
        return run_here(argv)
    finally:
        command_server.start()  # for the next command; it steps down if one runs already
