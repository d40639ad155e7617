"""The docs' worker example run as `python worker.py CONFIG QUEUE USER` runs it, started together (test_api)."""

from __future__ import annotations

import pathlib
import runpy
import sys
import time

import workbench.api


def main() -> int:
    """argv: the example script, then its own arguments (config, queue, user). Once every process has
    imported workbench, connected once and a "go" file appears (in the working directory): on a busy
    machine the first process to start could otherwise drain the queue before the others have begun."""
    script, config, queue, user = sys.argv[1:5]
    # Warm up as far as a worker gets before its first claim (drivers imported, the table checked), so
    # that after "go" no process spends its first second connecting while another drains the queue.
    with workbench.api.connect(config=config, user=user) as warm:
        warm.mine(queue)
    pathlib.Path("ready-" + user).write_text("ready")
    go = pathlib.Path("go")
    while not go.exists():
        time.sleep(0.005)
    sys.argv = [script, config, queue, user]
    runpy.run_path(script, run_name="__main__")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
