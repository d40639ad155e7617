"""Start of the window in instructions (callgrind): `workbench --config FILE` up to the first
MainWindow.show() and up to usable (session.ready handled, Next item enabled), this tree against
another commit's checkout, alternated. Instruction counts hardly depend on the machine's load, so
they compare two trees on a shared machine where the wall clock cannot (gui_bench gives that).

    QT_QPA_PLATFORM=offscreen .venv/bin/python -m tests.benchmarks.start_count --ref /tmp/ref --rounds 2

Needs valgrind. Each run is one fresh process under `valgrind --tool=callgrind` (all threads
counted; the engine's import, the connection and the start's read run on a worker thread).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.benchmarks import harness

REPO = Path(__file__).resolve().parents[2]

# The child: the command line as a user starts it; exits (os._exit, no teardown counted) at the
# first show ("show"), once the window is usable ("usable"), or half a second after ("warm": the
# uncounted start before the counted ones, which keeps what a user's earlier start kept for the next).
CHILD = r"""
import os, sys
STOP = sys.argv[1]
config = sys.argv[2]
from workbench.cli import launcher as cli_launcher
from workbench.gui import main_window

real_show = main_window.MainWindow.show
def show(self):
    if STOP == "show":
        sys.stdout.flush()
        os._exit(0)
    real_show(self)
    if getattr(self, "_count_watch", False):
        return
    self._count_watch = True
    def ready(*_):
        if not self.next_button.isEnabled():
            os._exit(3)
        if STOP == "warm":  # a start that ran on past usable: what it keeps for the next is kept
            from PySide6.QtCore import QTimer
            QTimer.singleShot(500, lambda: os._exit(0))
            return
        os._exit(0)
    self.session.ready.connect(ready)
main_window.MainWindow.show = show
sys.argv = ["workbench", "--config", config, "--user", "alice"]
cli_launcher.main()
os._exit(4)
"""


def count(code_dir: Path, stop: str, config: Path, home: Path, *, valgrind: bool = True) -> int:
    env = dict(os.environ)
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    env["WORKBENCH_COMMAND_SERVER"] = "off"
    env["WORKBENCH_HOME"] = str(home)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(code_dir), env.get("PYTHONPATH")]))
    proc = subprocess.run(
        [
            *(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"] if valgrind else []),
            sys.executable,
            "-c",
            CHILD,
            stop,
            str(config),
        ],
        cwd=code_dir,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    found = re.search(r"Collected : (\d+)", proc.stderr)
    if proc.returncode != 0 or (valgrind and not found):
        tail = "\n".join(proc.stderr.splitlines()[-15:])
        raise SystemExit(f"{code_dir} ({stop}): exit {proc.returncode}\n{tail}")
    return int(found.group(1)) if found else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.start_count", description=__doc__)
    parser.add_argument("--ref", type=Path, required=True, help="another tree (e.g. git archive main | tar -x -C DIR)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--stop", action="append", choices=("show", "usable"), help="default: both")
    args = parser.parse_args(argv)
    stops = args.stop or ["show", "usable"]
    sides = {"this tree": REPO, f"ref {args.ref}": args.ref.resolve()}
    for code_dir in sides.values():  # bytecode as an install has it
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(code_dir / "workbench")], check=True)
    with tempfile.TemporaryDirectory(prefix="wb-count-") as tmp:
        from workbench import demo

        config = demo.create(Path(tmp) / "demo")
        print(f"start_count: the demo on SQLite; {harness.machine_load()}", flush=True)
        # One home per side, kept from start to start as a user's is (caches made by the first start
        # are there for the next), and one start of each side first, uncounted.
        homes = {label: Path(tmp) / f"home-{n}" for n, label in enumerate(sides)}
        for label, code_dir in sides.items():
            count(code_dir, "warm", config, homes[label], valgrind=False)
        got: dict[tuple[str, str], list[int]] = {}
        for i in range(args.rounds):
            order = list(sides.items()) if i % 2 == 0 else list(sides.items())[::-1]
            for stop in stops:
                for label, code_dir in order:
                    n = count(code_dir, stop, config, homes[label])
                    got.setdefault((label, stop), []).append(n)
                    print(f"  round {i + 1}, {stop:6} {label}: {n / 1e6:,.1f} M", flush=True)
        print(f"{'million instructions, median':34}" + "".join(f"{label:>22}" for label in sides) + "  change")
        for stop in stops:
            a, b = (statistics.median(got[(label, stop)]) / 1e6 for label in sides)
            what = "to the first show" if stop == "show" else "to usable (both threads)"
            print(f"{what:34}{a:>22,.1f}{b:>22,.1f}  {(a - b) / b:+.1%}")
        print(f"machine: {harness.machine_load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
