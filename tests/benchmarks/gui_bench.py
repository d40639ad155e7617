"""Operator window figures: start to usable window, Next item to filled form, memory with a large queue."""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from tests.benchmarks import harness
from workbench import demo

REPO = Path(__file__).resolve().parents[2]
USER = "alice"
RESULT_TAG = "GUI_BENCH_RESULT "
CHILD_TIMEOUT = 600.0  # seconds for one child process (a start, the click loop, the memory run)
AIM_START_S = 1.5
AIM_CLICK_MS = 100.0
AIM_RSS_MB = 200.0


# -- the child processes ----------------------------------------------------------------------------
#
# Every measurement runs in a fresh interpreter (`python -c CODE ARGS_JSON`), so that nothing the
# parent imported (SQLAlchemy, the server, the fill) is in its start-up time or its memory. A child
# prints one line `GUI_BENCH_RESULT {json}` on stdout; anything else it prints is passed on.

# Shared by every child; kept free of PySide6 and workbench so that the start-up child can time
# those imports itself.
_PRELUDE = r'''
import json, os, sys, time
ARGS = json.loads(sys.argv[1])

def rss_mb():
    """Resident set size now (Linux /proc; NaN elsewhere)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")

def peak_mb():
    """Peak resident set size so far: getrusage ru_maxrss (KiB on Linux), or /proc's VmHWM if higher
    (the kernel updates ru_maxrss lazily, so it can lag the current RSS by a page or two)."""
    try:
        import resource
    except ImportError:
        return float("nan")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    peak = max(peak, int(line.split()[1]) / 1024)
    except OSError:
        pass
    return peak

def emit(result):
    print("GUI_BENCH_RESULT " + json.dumps(result), flush=True)

PROFILER = None
def profile_start():
    global PROFILER
    if ARGS.get("profile"):
        import cProfile
        PROFILER = cProfile.Profile()
        PROFILER.enable()

def profile_stop():
    if PROFILER is not None:
        import io, pstats
        PROFILER.disable()
        out = io.StringIO()
        pstats.Stats(PROFILER, stream=out).sort_stats("cumulative").print_stats(25)
        sys.stderr.write(out.getvalue())
'''

# 1. Start to usable window, as `workbench` (app.run) does it: load the config file, QApplication,
# build_window, show, session.start; the clock stops when session.ready has been handled by the
# window and the window is exposed.
STARTUP_CODE = (
    r"""
import time
T0 = time.monotonic()
"""
    + _PRELUDE
    + r"""
profile_start()
marks = [("interpreter up", T0)]
def mark(name):
    marks.append((name, time.monotonic()))

import PySide6.QtCore, PySide6.QtGui, PySide6.QtWidgets
mark("import PySide6")
from workbench.gui import app as gui_app
mark("import workbench.gui.app")
from pathlib import Path
from workbench.config import loader
config = loader.load(ARGS["config"])
mark("load config")
qapp = gui_app.application()
mark("QApplication")
window = gui_app.build_window(config, ARGS["user"], home=Path(ARGS["home"]))
mark("build_window")
window.show()
mark("show")

from PySide6.QtCore import QEvent, QObject, QTimer
state = {}

def finish():
    if "ready" in state and "exposed" in state and "done" not in state:
        state["done"] = max(state["ready"], state["exposed"])
        qapp.quit()

class ExposeWatch(QObject):
    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Expose and obj.isExposed() and "exposed" not in state:
            state["exposed"] = time.monotonic()
            QTimer.singleShot(0, finish)
        return False

handle = window.windowHandle()
watch = ExposeWatch()
handle.installEventFilter(watch)
if handle.isExposed():
    state["exposed"] = time.monotonic()

def on_ready(locks):  # connected after the window's own slot: runs once _on_ready has filled the window
    state["ready"] = time.monotonic()
    state["locks"] = len(locks)
    finish()

def on_failed(*args):
    state["error"] = " ".join(str(a) for a in args)
    qapp.quit()

window.session.ready.connect(on_ready)
window.session.failed.connect(on_failed)
window.session.connection_changed.connect(lambda up, msg: None if up else on_failed(msg))
window.session.start()
mark("session.start() returned")
QTimer.singleShot(int(ARGS["timeout"] * 1000), lambda: (state.setdefault("error", "timed out"), qapp.quit()))
qapp.exec()
profile_stop()
for name in ("exposed", "ready"):
    if name in state:
        marks.append(("window exposed" if name == "exposed" else "session.ready handled", state[name]))
marks.sort(key=lambda m: m[1])
window.session.dispatcher.wait(10_000)
window.close()
window.session.wb.close()
emit({"t0": T0, "done": state.get("done"), "error": state.get("error"), "marks": marks,
      "locks": state.get("locks"), "rss_mb": rss_mb(), "peak_mb": peak_mb()})
"""
)

# Shared by the click and memory children: a started window and a way to wait for a signal.
_WINDOW = (
    _PRELUDE
    + r'''
import dataclasses
from pathlib import Path
from PySide6.QtCore import QCoreApplication, QEventLoop, Qt, QTimer
from PySide6.QtTest import QTest
from workbench.config import loader
from workbench.gui import app as gui_app
from workbench.gui import dialogs, main_window, session

RSS = {"imports": rss_mb()}

def pools():
    """Connections checked out of workbench's pools now (what a leak looks like)."""
    try:
        db = sess.wb.db
        text = f"main pool {db.engine.pool.status()}"
        if db._fast_engine is not None:
            text += f"; autocommit pool {db._fast_engine.pool.status()}"
        if db._held is not None:
            text += f"; held fast-path connections {db._held.count()}"
        return f" [{text}]"
    except Exception as exc:  # noqa: BLE001 - a diagnostic only
        return f" [pool status unavailable: {exc}]"

class Failed(Exception):
    def __init__(self, text):
        super().__init__(text + pools())

qapp = gui_app.application()
config = loader.load(ARGS["config"])
window = gui_app.build_window(config, ARGS["user"], home=Path(ARGS["home"]),
                              settings=session.SessionSettings(next_after_complete=False))
sess = window.session
window.show()

LOOP = None
PROBLEM = []

def _problem(text):
    PROBLEM.append(text)
    if LOOP is not None:
        LOOP.quit()

sess.failed.connect(lambda exc: _problem(f"failed: {exc}"))
sess.nothing_to_do.connect(lambda msg: _problem(f"nothing to do: {msg}"))
sess.lock_lost.connect(lambda exc: _problem(f"lock lost: {exc}"))
sess.connection_changed.connect(lambda up, msg: None if up else _problem(f"database unreachable: {msg}"))

def wait_for(signal, trigger=None, timeout=60.0):
    """Run `trigger`, then the event loop until `signal` has been handled (by the window first)."""
    global LOOP
    got = []
    loop = QEventLoop()

    def slot(*args):
        got.append(args)
        loop.quit()

    signal.connect(slot)
    timer = QTimer()
    timer.setSingleShot(True)
    timer.timeout.connect(loop.quit)
    timer.start(int(timeout * 1000))
    LOOP = loop
    try:
        del PROBLEM[:]
        if trigger is not None:
            trigger()
        if not got and not PROBLEM:
            loop.exec()
    finally:
        LOOP = None
        timer.stop()
        signal.disconnect(slot)
    if PROBLEM:
        raise Failed(PROBLEM[0])
    if not got:
        raise Failed(f"no signal within {timeout:g} s")
    return got[0]

def click(button):
    QTest.mouseClick(button, Qt.MouseButton.LeftButton)

wait_for(sess.ready, sess.start)
QCoreApplication.sendPostedEvents()
RSS["ready"] = rss_mb()
'''
)

# 2. Next item to filled form, in one process. Per click: t(click) -> claim starts on a worker
# thread -> claim returns -> the result reaches the GUI thread -> MainWindow._on_claimed has filled
# the form (a direct slot connected after the window's) -> the posted layout and paint requests have
# been handled (a queued slot that flushes them with sendPostedEvents).
CLICKS_CODE = (
    _WINDOW
    + r"""
clock = time.perf_counter
SUBJECT = ARGS["subject_field"]
st = {}

def on_filled(claim, draft):  # after MainWindow._on_claimed
    st["filled"] = clock()
    shown = window.form.field(SUBJECT).text()
    st["ok"] = (window.stack.currentIndex() == main_window.ITEM and shown == str(claim.item.get(SUBJECT))
                and window.complete_buttons["resolved"].isEnabled())
    st["key"] = claim.lock.key

def on_painted(claim, draft):  # queued: after the current event, then flush layout + paint requests
    QCoreApplication.sendPostedEvents()
    st["painted"] = clock()
    if LOOP is not None:
        LOOP.quit()

sess.claimed.connect(on_filled)
sess.claimed.connect(on_painted, Qt.ConnectionType.QueuedConnection)

# The time of the arrival of the claim's result on the GUI thread, and the worker's own time.
_orig_on_claimed = sess._on_claimed
def _timed_on_claimed(queue, claim):
    st["arrived"] = clock()
    return _orig_on_claimed(queue, claim)
sess._on_claimed = _timed_on_claimed

_orig_call = sess.dispatcher.call
def _timed_call(fn, on_done, on_error=None):
    if st.get("armed"):
        st["armed"] = False
        def timed():
            st["worker_start"] = clock()
            try:
                return fn()
            finally:
                st["worker_end"] = clock()
        return _orig_call(timed, on_done, on_error)
    return _orig_call(fn, on_done, on_error)
sess.dispatcher.call = _timed_call

def one_click():
    global LOOP
    st.clear()
    loop = QEventLoop()
    timer = QTimer()
    timer.setSingleShot(True)
    timer.timeout.connect(loop.quit)
    timer.start(60_000)
    LOOP = loop
    del PROBLEM[:]
    try:
        st["armed"] = True
        st["click"] = clock()
        click(window.next_button)
        if "painted" not in st and not PROBLEM:
            loop.exec()
    finally:
        LOOP = None
        timer.stop()
    if PROBLEM:
        raise Failed(PROBLEM[0])
    if "painted" not in st:
        raise Failed("no claim within 60 s")
    if not st.get("ok"):
        raise Failed(f"the form does not show item {st.get('key')!r}")
    t0 = st["click"]
    row = {"filled": st["filled"] - t0, "painted": st["painted"] - t0, "arrived": st["arrived"] - t0,
           "worker_start": st.get("worker_start", t0) - t0, "worker": st.get("worker_end", t0) -
           st.get("worker_start", t0)}
    started = clock()
    wait_for(sess.completed, lambda: click(window.complete_buttons["resolved"]))
    row["complete"] = clock() - started
    return row

keys = set()
for _ in range(ARGS["warmup"]):
    one_click()
profile_start()
rows = []
for _ in range(ARGS["clicks"]):
    rows.append(one_click())
profile_stop()
sess.dispatcher.wait(10_000)
emit({"rows": rows, "rss_mb": rss_mb(), "peak_mb": peak_mb()})
window.close()
sess.wb.close()
"""
)

# 3. Memory: start, N Next + Complete cycles, the resume panel, the open-items pick list.
MEMORY_CODE = (
    _WINDOW
    + r"""
for _ in range(ARGS["cycles"]):
    wait_for(sess.claimed, lambda: click(window.next_button))
    wait_for(sess.completed, lambda: click(window.complete_buttons["resolved"]))
QCoreApplication.sendPostedEvents()
RSS["cycles"] = rss_mb()

# The resume panel ("My unfinished items"): shown, then refreshed from the database.
wait_for(sess.mine_loaded, lambda: click(window.mine_button))
QCoreApplication.sendPostedEvents()
RSS["resume"] = rss_mb()

# The pick list: session.load_open_items; the window shows its modal PickDialog with the rows.
# A timer notes the RSS while the dialog is up and painted, then cancels it (as Esc would).
from PySide6.QtWidgets import QApplication
shown = []
def close_dialog():
    dialog = QApplication.activeModalWidget()
    if isinstance(dialog, dialogs.PickDialog):
        QCoreApplication.sendPostedEvents()
        RSS["pick dialog"] = rss_mb()
        shown.append(dialog.table.model().rowCount())
        dialog.reject()
        poll.stop()
poll = QTimer()
poll.setInterval(20)
poll.timeout.connect(close_dialog)
poll.start()
picked = wait_for(sess.open_items_loaded, sess.load_open_items)
poll.stop()
QCoreApplication.sendPostedEvents()
RSS["pick"] = rss_mb()
sess.dispatcher.wait(10_000)
emit({"rss": RSS, "after_mb": rss_mb(), "peak_mb": peak_mb(), "open_items": len(picked[0].rows),
      "pick_rows": shown[0] if shown else None})
window.close()
sess.wb.close()
"""
)


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    # Children import `tests` (not needed) and `workbench` from the repository, as the parent does.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


def run_child(code: str, args: dict[str, Any], env: dict[str, str], what: str) -> tuple[dict[str, Any], float, str]:
    """Start `python -c code`; returns its result, the monotonic time it was launched and its stderr."""
    launched = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", code, json.dumps(args)],
        check=False,
        cwd=REPO,
        env=env,
        text=True,
        capture_output=True,
        timeout=CHILD_TIMEOUT,
    )
    result = None
    for line in proc.stdout.splitlines():
        if line.startswith(RESULT_TAG):
            result = json.loads(line[len(RESULT_TAG) :])
        elif line.strip():
            print(f"  [{what}] {line}")
    tail = "\n".join(proc.stderr.strip().splitlines()[-12:])
    if result is None:
        raise SystemExit(f"{what}: the child process failed (exit {proc.returncode}):\n{tail}")
    if proc.returncode != 0:
        # Its figures are in; say how it ended (a crash on the way out is a finding of its own).
        print(f"  [{what}] warning: the child exited with {proc.returncode} after reporting:")
        print(textwrap.indent(tail, "  [" + what + "]   "))
    return result, launched, proc.stderr


# -- figures ----------------------------------------------------------------------------------------


def aim(value: float, limit: float) -> str:
    return "ok" if value < limit else "MISSES THE AIM"


def ms(values: list[float]) -> tuple[float, float, float, float]:
    """p50, p95, max and mean, in ms."""
    return (
        harness.percentile(values, 50) * 1000,
        harness.percentile(values, 95) * 1000,
        max(values) * 1000,
        statistics.fmean(values) * 1000,
    )


def show_profile(label: str, stderr: str) -> None:
    lines = [line for line in stderr.splitlines() if line.strip()]
    if lines:
        print(f"  cProfile of {label} (cumulative, top 25):")
        for line in lines[:45]:
            print("    " + line)


def measure_startup(args: argparse.Namespace, config: Path, tmp: Path, env: dict[str, str]) -> None:
    totals, inproc, phases = [], [], []
    for i in range(args.starts):
        result, launched, _ = run_child(
            STARTUP_CODE,
            {"config": str(config), "user": USER, "home": str(tmp / f"home-start-{i}"), "timeout": 120.0},
            env,
            "start",
        )
        if result.get("error") or result.get("done") is None:
            raise SystemExit(f"start {i + 1}: {result.get('error') or 'no usable window'}")
        totals.append(result["done"] - launched)
        inproc.append(result["done"] - result["t0"])
        marks = [("process launched", launched)] + [tuple(m) for m in result["marks"]]
        phases.append([(name, t - prev) for (_, prev), (name, t) in itertools.pairwise(marks)])
    print(
        f"1. start to usable window ({args.starts} fresh processes; `workbench`'s steps, the clock stops when "
        "session.ready is handled and the window is exposed)"
    )
    print(f"   {'':42}{'median':>8}{'max':>8}   aim")
    med = statistics.median(totals)
    print(
        f"   {'process launch -> usable':42}{med:>7.2f}s{max(totals):>7.2f}s   < {AIM_START_S:g} s: "
        f"{aim(med, AIM_START_S)}"
        f"{'' if max(totals) < AIM_START_S else ' (max: ' + aim(max(totals), AIM_START_S) + ')'}"
    )
    print(f"   {'before `import PySide6` -> usable':42}{statistics.median(inproc):>7.2f}s{max(inproc):>7.2f}s")
    print("   each run (s): " + ", ".join(f"{t:.2f}" for t in totals))
    print("   where the time goes (median of the runs, s):")
    names = [name for name, _ in phases[0]]
    for name in names:
        values = [dict(p).get(name, 0.0) for p in phases]
        print(f"     {name:40}{statistics.median(values):>7.3f}")
    if args.profile:
        _, _, stderr = run_child(
            STARTUP_CODE,
            {"config": str(config), "user": USER, "home": str(tmp / "home-prof"), "timeout": 120.0, "profile": True},
            env,
            "start (profiled)",
        )
        show_profile("one start", stderr)


def measure_clicks(args: argparse.Namespace, config: Path, tmp: Path, env: dict[str, str]) -> None:
    result, _, stderr = run_child(
        CLICKS_CODE,
        {
            "config": str(config),
            "user": USER,
            "home": str(tmp / "home-clicks"),
            "clicks": args.clicks,
            "warmup": args.warmup,
            "subject_field": "subject",
            "profile": args.profile,
        },
        env,
        "clicks",
    )
    rows = result["rows"]
    print(
        f"2. click Next item -> form filled ({len(rows)} clicks in one process after {args.warmup} unmeasured; "
        "each item completed with the Resolve button)"
    )
    print(f"   {'':46}{'p50':>8}{'p95':>8}{'max':>8}{'mean':>8}   aim")
    lines = [
        ("click -> form filled (window slot done)", "filled"),
        ("click -> form filled + layout/paint flushed", "painted"),
        ("  of which: click -> claim starts on worker", "worker_start"),
        ("  of which: claim on the worker (database)", "worker"),
        ("  of which: click -> result on the GUI thread", "arrived"),
        ("click Resolve -> completed handled", "complete"),
    ]
    for label, key in lines:
        p50, p95, top, mean = ms([r[key] for r in rows])
        verdict = f"   < {AIM_CLICK_MS:g} ms: {aim(p95, AIM_CLICK_MS)} (p95)" if key == "painted" else ""
        print(f"   {label:46}{p50:>8.1f}{p95:>8.1f}{top:>8.1f}{mean:>8.1f}{verdict}")
    gui = [r["filled"] - r["arrived"] for r in rows]
    p50, p95, top, mean = ms(gui)
    print(f"   {'  GUI thread: result -> form filled':46}{p50:>8.1f}{p95:>8.1f}{top:>8.1f}{mean:>8.1f}")
    print(f"   RSS of that process at the end: {result['rss_mb']:.0f} MB (peak {result['peak_mb']:.0f} MB)")
    if args.profile:
        show_profile("the measured clicks", stderr)


def measure_memory(args: argparse.Namespace, config: Path, empty_config: Path, tmp: Path, env: dict[str, str]) -> None:
    base, _, _ = run_child(
        MEMORY_CODE,
        {"config": str(empty_config), "user": USER, "home": str(tmp / "home-base"), "cycles": 0},
        env,
        "memory baseline",
    )
    full, _, _ = run_child(
        MEMORY_CODE,
        {"config": str(config), "user": USER, "home": str(tmp / "home-mem"), "cycles": args.cycles},
        env,
        "memory",
    )
    print("3. memory (RSS, one fresh process each; peak = getrusage ru_maxrss)")
    print(f"   {'':62}{'peak':>8}{'after':>8}   aim")
    print(
        f"   {'baseline: empty queue, start + resume panel + pick list':62}{base['peak_mb']:>6.0f}MB"
        f"{base['after_mb']:>6.0f}MB"
    )
    label = f"{args.rows:,} rows: start + {args.cycles} Next/Complete + resume + pick"
    print(
        f"   {label:62}{full['peak_mb']:>6.0f}MB{full['after_mb']:>6.0f}MB   < {AIM_RSS_MB:g} MB: "
        f"{aim(full['peak_mb'], AIM_RSS_MB)} (peak)"
    )
    stages = ("imports", "ready", "cycles", "resume", "pick dialog", "pick")
    names = {
        "imports": "after imports",
        "ready": "window ready",
        "cycles": f"after {args.cycles} cycles",
        "resume": "resume panel",
        "pick dialog": "pick dialog open",
        "pick": "pick dialog closed",
    }
    for title, run in (("baseline", base), (f"{args.rows:,} rows", full)):
        print(
            f"   {title} RSS by step (MB): "
            + ", ".join(f"{names[s]} {run['rss'][s]:.0f}" for s in stages if s in run["rss"])
        )
    print(f"   pick list: {full['open_items']} waiting items loaded, {full['pick_rows']} rows in the dialog")


# -- main -------------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.gui_bench", description=__doc__)
    parser.add_argument(
        "--backend",
        action="append",
        choices=harness.BACKENDS,
        help="repeat for several; default: sqlite and postgresql",
    )
    parser.add_argument(
        "--url", help="admin URL of an existing server (one server backend only); default: start a throwaway server"
    )
    parser.add_argument("--rows", type=int, default=100_000, help="rows in the cases table")
    parser.add_argument(
        "--waiting", type=float, default=1.0, help="fraction of the rows waiting (the rest resolved, the oldest first)"
    )
    parser.add_argument("--starts", type=int, default=5, help="fresh processes timed from launch to usable window")
    parser.add_argument("--clicks", type=int, default=50, help="measured Next item clicks")
    parser.add_argument("--warmup", type=int, default=3, help="unmeasured clicks first")
    parser.add_argument("--cycles", type=int, default=20, help="Next/Complete cycles in the memory run")
    parser.add_argument(
        "--skip",
        action="append",
        default=[],
        choices=("startup", "clicks", "memory"),
        help="leave a measurement out (repeatable)",
    )
    parser.add_argument(
        "--profile", action="store_true", help="also print a cProfile of one start and of the measured clicks"
    )
    args = parser.parse_args(argv)
    args.backend = args.backend or ["sqlite", "postgresql"]
    if min(args.rows, args.starts, args.clicks) < 1 or args.warmup < 0 or args.cycles < 0:
        parser.error("--rows, --starts and --clicks must be positive")
    if not 0 < args.waiting <= 1:
        parser.error("--waiting must be in (0, 1]")
    if args.url and sum(b != "sqlite" for b in args.backend) > 1:
        parser.error("--url applies to one server backend")
    needed = args.clicks + args.warmup + args.cycles
    if round(args.rows * args.waiting) < needed:
        parser.error(f"the queue needs at least {needed} waiting rows (clicks + warm-up + cycles)")
    return args


def run_backend(args: argparse.Namespace, backend: str) -> None:
    target = harness.Target.open(backend, None if backend == "sqlite" else args.url)
    try:
        env = child_env()
        if target.password:
            if backend != "postgresql":
                raise SystemExit("a password in --url is only supported for postgresql (PGPASSWORD)")
            env["PGPASSWORD"] = target.password  # build_window opens the engine without one
        print(
            f"gui_bench: {backend}, {args.rows:,} rows ({args.waiting:.0%} waiting); {target.description}; "
            f"{os.cpu_count()} CPUs; QT_QPA_PLATFORM={env['QT_QPA_PLATFORM']}",
            flush=True,
        )
        url, timings = harness.build_workbench_db(target, "wbgui_queue", args.rows, fraction=args.waiting)
        empty_url, _ = harness.build_workbench_db(target, "wbgui_empty", 0)
        print("setup: " + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items()), flush=True)
        # Config files as an operator has them: the demo config, pointing at the benchmark databases.
        config = target.tmp / "workbench.toml"
        config.write_text(demo.config_text(url), encoding="utf-8")
        empty_config = target.tmp / "workbench-empty.toml"
        empty_config.write_text(demo.config_text(empty_url), encoding="utf-8")
        target.checkpoint()
        steps = {
            "startup": lambda: measure_startup(args, config, target.tmp, env),
            "clicks": lambda: measure_clicks(args, config, target.tmp, env),
            "memory": lambda: measure_memory(args, config, empty_config, target.tmp, env),
        }
        for name, step in steps.items():
            if name in args.skip:
                continue
            try:
                step()
            except SystemExit as exc:  # one step failing (e.g. the window gave up) leaves the others to run
                print(f"{name}: FAILED: {exc}", flush=True)
        print(flush=True)
    finally:
        target.close()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if sys.platform != "linux":
        print("note: RSS figures read /proc and getrusage (Linux); elsewhere they print as nan")
    for backend in args.backend:
        run_backend(args, backend)
    print(f"machine: {harness.machine_load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
