"""Run the command line interface with `python -m workbench` (also the installers' entry point)."""

import os
import sys

from workbench.cli.launcher import main

# A windowed Windows or macOS build (PyInstaller, console=False) starts with no stdout/stderr:
# writing a message there would raise instead of showing nothing.
if sys.stdout is None or sys.stderr is None:
    sink = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - lives as long as the process
    sys.stdout = sys.stdout or sink
    sys.stderr = sys.stderr or sink

raise SystemExit(main())
