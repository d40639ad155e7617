"""The CLI as scripts call it: wall time of `workbench next` and `workbench release`, each a new
process, with the command server (workbench/cli/command_server.py) and without it, alternating in
one run on the demo database (or a config given). With --reference TREE, a third contender runs
each command in its own process from TREE, a checkout of another commit (e.g. the one before:
`git worktree add /tmp/ref HEAD~1`), so that a change is measured against its parent in one run."""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.benchmarks import harness
from workbench import demo
from workbench.cli import command_server


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.cli_bench", description=__doc__)
    parser.add_argument("--config", help="a config file; default: a new demo (SQLite)")
    parser.add_argument(
        "--backend",
        choices=("sqlite", "postgresql"),
        default="sqlite",
        help="without --config: the demo on SQLite, or on a throwaway PostgreSQL (tests/servers.py)",
    )
    parser.add_argument("--queue", default="cases")
    parser.add_argument("--pairs", type=int, default=20, help="next + release pairs per round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of each, alternating")
    parser.add_argument(
        "--reference", metavar="TREE", help="a checkout of another commit to run as a third contender (own process)"
    )
    return parser.parse_args(argv)


def _command(env: dict[str, str], *args: str, cwd: str | None = None) -> tuple[float, str]:
    # `python -m` puts the working directory first on sys.path: from a reference tree, its
    # workbench package is the one imported.
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "workbench", *args], env=env, capture_output=True, text=True, check=False, cwd=cwd
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"workbench {' '.join(args)} failed ({done.returncode}): {done.stderr}")
    return wall, done.stdout


# What no `workbench next` in its own process can go below: the interpreter, and the import of
# SQLAlchemy with the demo's dialect (every command that touches the database needs both).
FLOORS = {
    "python -c pass": "pass",
    "import sqlalchemy": "import sqlalchemy, sqlalchemy.dialects.sqlite",
}


def _floor(env: dict[str, str], code: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    return time.perf_counter() - started


def _round(
    env: dict[str, str], config: str, queue: str, pairs: int, cwd: str | None = None
) -> tuple[list[float], list[float]]:
    nexts, releases = [], []
    for _ in range(pairs):
        wall, out = _command(env, "--config", config, "--user", "bench", "--json", "next", queue, cwd=cwd)
        nexts.append(wall)
        claim = json.loads(out)
        wall, _ = _command(
            env,
            *("--config", config, "--user", "bench", "release", queue, str(claim["key"]), "--token", claim["token"]),
            cwd=cwd,
        )
        releases.append(wall)
    return nexts, releases


def _ms(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"{statistics.median(values) * 1000:6.0f} / {p95 * 1000:4.0f}"


def _revision(tree: str) -> str:
    done = subprocess.run(
        ["git", "-C", tree, "describe", "--always", "--dirty"], capture_output=True, text=True, check=False
    )
    return done.stdout.strip() or "not a git checkout"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if sys.platform != "linux":
        raise SystemExit("the command server runs on Linux only")
    home = Path(tempfile.mkdtemp(prefix="wbcli", dir="/tmp"))
    env = {**os.environ, "WORKBENCH_HOME": str(home)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # users' installs have their bytecode cached
    os.environ["WORKBENCH_HOME"] = str(home)
    target = None
    server = None
    try:
        if args.config:
            config = args.config
        elif args.backend == "postgresql":
            target = harness.Target.open("postgresql", None)
            url, _ = harness.build_workbench_db(target, "cli_bench", 1000)
            config = str(home / "workbench.toml")
            Path(config).write_text(demo.config_text(url), encoding="utf-8")
            print(f"database: {target.description}")
        else:  # here: a `workbench demo` process would add an interpreter and the CLI's imports to the set-up
            config = str(demo.create(home / "demo"))
        config = str(Path(config).resolve())  # the reference runs in another directory
        # Bytecode as an install has it (pip compiles on install): no measured command compiles a changed module.
        compileall.compile_dir(Path(command_server.__file__).parents[1], quiet=1)
        modes: dict[str, tuple[dict[str, str], str | None]] = {
            "own process": ({**env, command_server.ENV: "off"}, None),
            "command server": ({**env, command_server.ENV: "300"}, None),
        }
        if args.reference:
            modes["reference (own)"] = ({**env, command_server.ENV: "off"}, str(Path(args.reference).resolve()))
            print(f"reference: {args.reference} ({_revision(args.reference)}); this tree: {_revision('.')}")
        # The server the commands' first call would start, started as it would (command_server.start(), with the
        # mode's idle setting), without an unmeasured next + release in processes of their own.
        setting = os.environ.get(command_server.ENV)
        os.environ[command_server.ENV] = modes["command server"][0][command_server.ENV]
        server = command_server.start()
        os.environ.pop(command_server.ENV)
        if setting is not None:
            os.environ[command_server.ENV] = setting
        deadline = time.monotonic() + 30
        while command_server.status() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        results: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in modes}
        floors: dict[str, list[float]] = {name: [] for name in FLOORS}
        for _ in range(args.rounds):
            for name, (mode_env, cwd) in modes.items():
                nexts, releases = _round(mode_env, config, args.queue, args.pairs, cwd)
                results[name][0].extend(nexts)
                results[name][1].extend(releases)
            for name, code in FLOORS.items():
                floors[name].extend(_floor(env, code) for _ in range(args.pairs))
        load = os.getloadavg()[0]
        print(f"{args.rounds} rounds x {args.pairs} pairs each, alternating; load average {load:.2f}")
        print(f"{'':16} {'next p50 / p95 ms':>18} {'release p50 / p95 ms':>21}")
        for name, (nexts, releases) in results.items():
            print(f"{name:16} {_ms(nexts):>18} {_ms(releases):>21}")
        reference = statistics.median(results["own process"][0])
        print(
            f"next with the server: {statistics.median(results['command server'][0]) / reference:.2f}x "
            "the time in its own process"
        )
        print(
            "floors, each a new process in the same rounds: "
            + "; ".join(f"{name} p50 {statistics.median(times) * 1000:.0f} ms" for name, times in floors.items())
        )
        if args.reference:
            print(
                f"next in its own process: {reference / statistics.median(results['reference (own)'][0]):.2f}x "
                "the reference's time"
            )
    finally:
        found = command_server.status()
        if found is not None:
            os.kill(int(found["pid"]), signal.SIGTERM)  # type: ignore[call-overload]
        if server is not None:
            server.wait(timeout=30)  # reaped: it ends before its socket's home is removed
        shutil.rmtree(home, ignore_errors=True)
        if target is not None:
            target.close()
    print(f"machine: {harness.machine_load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
