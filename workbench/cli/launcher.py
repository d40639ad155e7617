"""The `workbench` command: hand the command line to the user's command server, or run it here."""

from __future__ import annotations

import sys

from workbench import codecache

# Before any dataclass is made (the command line's, the window's, the engine's): their methods as the
# last start compiled them. Here, at the import of the `workbench` command's entry point.
codecache.install()

from workbench.cli import command_server  # noqa: E402 - after the install


def main() -> int:
    argv = sys.argv[1:]
    if argv == [command_server.SERVE]:
        return command_server.main()
    served = command_server.run(argv) if command_server.wanted(argv) else command_server.Outcome(None)
    if served.status is not None:
        return served.status
    from workbench.cli.main import main as run_here

    try:
        return run_here(argv)
    finally:
        if served.start_server:
            command_server.start()  # for the next command
