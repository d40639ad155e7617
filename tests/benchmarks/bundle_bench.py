"""The installed bundle: its size, and the time from launch to a usable window on the demo database.

    python -m tests.benchmarks.bundle_bench                       # dist/workbench, 5 starts
    python -m tests.benchmarks.bundle_bench --bundle /opt/workbench --starts 10
    python -m tests.benchmarks.bundle_bench --platform offscreen  # without Xvfb

Each start is a fresh process of the bundle's `workbench --demo` with its own WORKBENCH_HOME; the
app writes the system monotonic clock to WORKBENCH_READY_FILE once the window shows what the
database answered (gui/app.py), and quits. The first start in a home also writes the demo
database; the others open it. Under Xvfb (default when xvfb-run exists) the real X11 platform
plugin, fonts and window are used. Aims: under 120 MB unpacked, under 2 s to a usable window.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.benchmarks import harness

ROOT = Path(__file__).resolve().parents[2]


def bundle_size(bundle: Path) -> tuple[int, int]:
    files = [p for p in bundle.rglob("*") if p.is_file() and not p.is_symlink()]
    return sum(p.stat().st_size for p in files), len(files)


def start_once(executable: Path, home: Path, platform: str) -> float:
    """Seconds from launching the process to the app reporting a usable window."""
    ready = home / "ready"
    ready.unlink(missing_ok=True)
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "WORKBENCH_HOME": str(home),
        "LANG": "C.UTF-8",
        "WORKBENCH_READY_FILE": str(ready),
        "QT_QPA_PLATFORM": platform,
    }
    if "DISPLAY" in os.environ:
        env["DISPLAY"] = os.environ["DISPLAY"]
        env["XAUTHORITY"] = os.environ.get("XAUTHORITY", "")
    launched = time.monotonic()
    result = subprocess.run(
        [str(executable), "--demo", "--user", "bench"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if result.returncode != 0 or not ready.exists():
        raise SystemExit(f"start failed (exit {result.returncode}):\n{result.stderr[-2000:]}")
    return float(ready.read_text()) - launched


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", type=Path, default=ROOT / "dist" / "workbench")
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument(
        "--platform",
        choices=["xcb", "offscreen"],
        default=None,
        help="Qt platform (default: xcb under xvfb-run when it exists, else offscreen)",
    )
    args = parser.parse_args(argv)
    executable = args.bundle / "workbench"
    if not executable.exists():
        raise SystemExit(f"no bundle at {args.bundle}; build it with: python installer/build.py")
    platform = args.platform or ("xcb" if shutil.which("xvfb-run") else "offscreen")
    if platform == "xcb" and "DISPLAY" not in os.environ:
        # Run this script again inside a virtual X server.
        command = [
            "xvfb-run",
            "-a",
            "-s",
            "-screen 0 1280x800x24",
            sys.executable,
            "-m",
            "tests.benchmarks.bundle_bench",
            "--bundle",
            str(args.bundle),
            "--starts",
            str(args.starts),
            "--platform",
            "xcb",
        ]
        return subprocess.run(command, cwd=ROOT, check=False).returncode
    size, files = bundle_size(args.bundle)
    print(f"bundle {args.bundle}: {size / 1e6:.1f} MB unpacked, {files} files (aim: under 120 MB)")
    with tempfile.TemporaryDirectory(prefix="wb-bundle-bench-") as tmp:
        home = Path(tmp)
        first = start_once(executable, home, platform)
        times = [start_once(executable, home, platform) for _ in range(args.starts)]
    print(f"launch to usable window, Qt platform {platform} (aim: under 2 s):")
    print(f"  first start (writes the demo database): {first:.2f} s")
    print(
        f"  next {len(times)} starts: median {statistics.median(times):.2f} s, max {max(times):.2f} s "
        f"({', '.join(f'{t:.2f}' for t in times)})"
    )
    print(f"machine: {harness.machine_load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
