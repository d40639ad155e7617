"""The `workbench` command: hand the command line to the user's command server, or run it here."""

from __future__ import annotations

import sys

from workbench import codecache, start_collection

# Before any dataclass is made (the command line's, the window's, the engine's): their methods as the
# last start compiled them. Here, at the import of the `workbench` command's entry point.
codecache.install()

from workbench.cli import command_server  # noqa: E402 - after the install


def main() -> int:
    # No collection while the process starts (SQLAlchemy's, the drivers' and Qt's imports make objects
    # that live as long as it does): the window's ready, a command's open database or the command
    # server's imports release it; at the latest, the end of the command.
    start_collection.hold()
    try:
        return _main(sys.argv[1:])
    finally:
        start_collection.release()


def _main(argv: list[str]) -> int:
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
