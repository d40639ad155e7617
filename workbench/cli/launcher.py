"""The `workbench` command: hand the command line to the user's command server, or run it here."""

from __future__ import annotations

import sys

from workbench.cli import command_server


def main() -> int:
    argv = sys.argv[1:]
    if argv == [command_server.SERVE]:
        return command_server.main()
    if not command_server.wanted(argv):
        from workbench.cli.main import main as run_here

        return run_here(argv)
    served = command_server.run(argv)
    if served.status is not None:
        return served.status
    from workbench.cli.main import main as run_here

    try:
        return run_here(argv)
    finally:
        if served.start_server:
            command_server.start()  # for the next command
