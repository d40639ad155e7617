"""Operator window figures: start to usable window, Next item to filled form, memory with a large queue;
with --ref COMMIT, the same figures of another commit's code measured alternately in the same run."""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
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
AIM_START_S = 0.5  # issue 52: start -> usable, median
AIM_CLICK_MS = 30.0  # issue 52: Next item -> form filled and painted, p99 (quiet machine)
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

# 1. Start to usable window, as a user's `workbench --config FILE` does it: the command line
# (workbench.cli.launcher.main), the launcher (its connection step, the window) and the event loop. The
# child only watches: the first MainWindow.show() installs the probes. Three times: the window is first
# exposed (painted); it is usable (session.ready handled by the window, exposed, and Next item enabled:
# the user can start working); Next item, pressed at that moment, has put an item on the form (its layout
# and paint flushed): usable means pressing works.
STARTUP_CODE = (
    r"""
import time
T0 = time.monotonic()
"""
    + _PRELUDE
    + r"""
os.environ["WORKBENCH_HOME"] = ARGS["home"]
os.environ["WORKBENCH_COMMAND_SERVER"] = "off"
profile_start()
marks = [("interpreter up", T0)]
def mark(name):
    marks.append((name, time.monotonic()))

from workbench.cli import launcher as cli_launcher
mark("import workbench.cli.launcher")
from workbench.gui import main_window
mark("import workbench.gui (window modules)")

state = {}
seen = []

def watch(window):
    from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt, QTimer
    from PySide6.QtTest import QTest

    qapp = QCoreApplication.instance()

    def stop():
        qapp.exit(0)

    def finish():
        if "ready" in state and "exposed" in state and "done" not in state:
            state["done"] = max(state["ready"], state["exposed"])
            if not window.next_button.isEnabled():
                state["error"] = "Next item is not enabled once the window is ready"
                stop()
                return
            QTest.mouseClick(window.next_button, Qt.MouseButton.LeftButton)

    def on_claimed(claim, draft):  # queued after the window's own slot: the form is filled
        QCoreApplication.sendPostedEvents()  # its layout and paint requests
        state["item"] = time.monotonic()
        state["claimed"] = claim.lock.key
        stop()

    class ExposeWatch(QObject):
        def eventFilter(self, obj, event):
            if event.type() == QEvent.Type.Expose and obj.isExposed() and "exposed" not in state:
                state["exposed"] = time.monotonic()
                QTimer.singleShot(0, finish)
            return False

    def on_ready(locks):  # connected after the window's own slot: runs once _on_ready has filled the window
        state["ready"] = time.monotonic()
        state["locks"] = len(locks)
        finish()

    def on_failed(*args):
        state["error"] = " ".join(str(a) for a in args)
        stop()

    handle = window.windowHandle()
    window._bench_watch = ExposeWatch()
    handle.installEventFilter(window._bench_watch)
    if handle.isExposed():
        state["exposed"] = time.monotonic()
    window.session.ready.connect(on_ready)
    window.session.claimed.connect(on_claimed, Qt.ConnectionType.QueuedConnection)
    window.session.nothing_to_do.connect(on_failed)
    window.session.failed.connect(on_failed)
    window.session.connection_changed.connect(lambda up, msg: None if up else on_failed(msg))
    QTimer.singleShot(int(ARGS["timeout"] * 1000), lambda: (state.setdefault("error", "timed out"), stop()))

real_show = main_window.MainWindow.show
def show(self):
    if not seen:
        seen.append(self)
        mark("window built (first show)")
        real_show(self)
        watch(self)
    else:
        real_show(self)
main_window.MainWindow.show = show

sys.argv = ["workbench", "--config", ARGS["config"], "--user", ARGS["user"]]
code = cli_launcher.main()
profile_stop()
names = {"exposed": "window exposed", "ready": "session.ready handled", "item": "Next item -> item on the form"}
for name, label in names.items():
    if name in state:
        marks.append((label, state[name]))
marks.sort(key=lambda m: m[1])
if code and not state.get("error"):
    state["error"] = f"workbench exited with {code}"
emit({"t0": T0, "done": state.get("done"), "exposed": state.get("exposed"), "item": state.get("item"),
      "claimed": state.get("claimed"), "error": state.get("error"), "marks": marks,
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
        db = door.engine(sess.wb).db
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
from workbench.services import door
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


def child_env(code_dir: Path = REPO) -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    # Children import `workbench` from `code_dir` (this repository, or --ref's checkout), ahead of the
    # editable install (its finder comes after sys.path).
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(code_dir), env.get("PYTHONPATH")]))
    return env


@dataclasses.dataclass
class Side:
    """The code a child runs: this tree, or --ref's commit checked out into a temporary directory."""

    label: str
    env: dict[str, str]
    cwd: Path


def ref_side(commit: str, into: Path) -> Side:
    """`commit`'s workbench package, extracted with `git archive` and compiled (no .pyc writing in the
    first timed start), to run the same children against."""
    sha = subprocess.run(
        ["git", "rev-parse", "--short", commit], cwd=REPO, check=True, capture_output=True, text=True
    ).stdout.strip()
    archive = subprocess.run(["git", "archive", sha, "workbench"], cwd=REPO, check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(into / "workbench")], check=True)
    return Side(f"{commit} ({sha})", child_env(into), into)


def run_child(code: str, args: dict[str, Any], side: Side, what: str) -> tuple[dict[str, Any], float, str]:
    """Start `python -c code`; returns its result, the monotonic time it was launched and its stderr."""
    launched = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", code, json.dumps(args)],
        check=False,
        cwd=side.cwd,
        env=side.env,
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
    return "ok" if value <= limit else "MISSES THE AIM"


def ms(values: list[float]) -> tuple[float, float, float, float, float]:
    """p50, p95, p99, max and mean, in ms."""
    return (
        harness.percentile(values, 50) * 1000,
        harness.percentile(values, 95) * 1000,
        harness.percentile(values, 99) * 1000,
        max(values) * 1000,
        statistics.fmean(values) * 1000,
    )


def show_profile(label: str, stderr: str) -> None:
    lines = [line for line in stderr.splitlines() if line.strip()]
    if lines:
        print(f"  cProfile of {label} (cumulative, top 25):")
        for line in lines[:45]:
            print("    " + line)


def alternated(sides: list[Side], rounds: int) -> list[tuple[int, Side]]:
    """Round by round, every side once, the first one changing each round (ABBA…): neither is always
    measured first, and a drift of the machine's load falls on both alike."""
    order = []
    for i in range(rounds):
        turn = sides if i % 2 == 0 else sides[::-1]
        order += [(i, side) for side in turn]
    return order


def measure_startup(args: argparse.Namespace, config: Path, tmp: Path, sides: list[Side]) -> None:
    runs: dict[str, dict[str, list[Any]]] = {
        side.label: {"usable": [], "paint": [], "item": [], "inproc": [], "phases": []} for side in sides
    }
    # One WORKBENCH_HOME per code, kept from start to start as a user's is (what a start leaves for the
    # next, such as the bytecode of gui/qt_bytecode.py, is there), and --warm-starts of each first, unmeasured.
    homes = {side.label: tmp / f"home-start-{len(sides)}-{side.cwd.name}" for side in sides}
    for i, side in alternated(sides, args.warm_starts):
        run_child(
            STARTUP_CODE,
            {
                "config": str(config),
                "user": f"{USER}w{i}{len(side.label)}",
                "home": str(homes[side.label]),
                "timeout": 120.0,
            },
            side,
            "start (warm-up)",
        )
    for i, side in alternated(sides, args.starts):
        home = homes[side.label]
        result, launched, _ = run_child(
            # A user per start: each start's item stays held (as a user's would), under the queue's limit.
            STARTUP_CODE,
            {"config": str(config), "user": f"{USER}{i}{len(side.label)}", "home": str(home), "timeout": 120.0},
            side,
            "start",
        )
        if result.get("error") or result.get("item") is None:
            raise SystemExit(f"start {i + 1} ({side.label}): {result.get('error') or 'no usable window'}")
        got = runs[side.label]
        got["usable"].append(result["done"] - launched)
        got["paint"].append(result["exposed"] - launched)
        got["item"].append(result["item"] - launched)
        got["inproc"].append(result["done"] - result["t0"])
        marks = [("process launched", launched)] + [tuple(m) for m in result["marks"]]
        got["phases"].append([(name, t - prev) for (_, prev), (name, t) in itertools.pairwise(marks)])
    print(
        f"1. start to usable window ({args.starts} fresh processes per code after {args.warm_starts} unmeasured, "
        "one home each"
        + (", alternated" if len(sides) > 1 else "")
        + "; `workbench --config FILE` as a user starts it; usable = the queues opened (session.ready handled), "
        "the window exposed and Next item enabled; then Next item pressed at once)"
    )
    width = max(len(side.label) for side in sides)
    for side in sides:
        got = runs[side.label]
        print(f"   {side.label}:")
        print(f"   {'':44}{'median':>8}{'max':>8}   aim")
        for label, key in (
            ("process launch -> window painted (exposed)", "paint"),
            ("process launch -> usable", "usable"),
            ("process launch -> first item on the form", "item"),
            ("interpreter up -> usable", "inproc"),
        ):
            med, top = statistics.median(got[key]), max(got[key])
            verdict = f"   <= {AIM_START_S:g} s: {aim(med, AIM_START_S)}" if key == "usable" else ""
            print(f"   {label:44}{med:>7.2f}s{top:>7.2f}s{verdict}")
        print("   each run, usable (s): " + ", ".join(f"{t:.2f}" for t in got["usable"]))
        print("   where the time goes (median of the runs, s; each step from the one before):")
        names = [name for name, _ in got["phases"][0]]
        for name in names:
            values = [dict(p).get(name, 0.0) for p in got["phases"]]
            print(f"     {name:42}{statistics.median(values):>7.3f}")
    if len(sides) > 1:
        base, new = runs[sides[-1].label], runs[sides[0].label]
        for key, label in (("paint", "painted"), ("usable", "usable"), ("item", "first item")):
            ratio = statistics.median(base[key]) / statistics.median(new[key])
            print(f"   {label}: {sides[0].label:{width}} is {ratio:.2f}x as fast as {sides[-1].label} (medians)")
    if args.profile:
        _, _, stderr = run_child(
            STARTUP_CODE,
            {"config": str(config), "user": USER, "home": str(tmp / "home-prof"), "timeout": 120.0, "profile": True},
            sides[0],
            "start (profiled)",
        )
        show_profile("one start", stderr)


CLICK_LINES = (
    ("click -> form filled (window slot done)", "filled"),
    ("click -> form filled + layout/paint flushed", "painted"),
    ("  of which: click -> claim starts on worker", "worker_start"),
    ("  of which: claim on the worker (database)", "worker"),
    ("  of which: click -> result on the GUI thread", "arrived"),
    ("click Resolve -> completed handled", "complete"),
)


def measure_clicks(args: argparse.Namespace, config: Path, tmp: Path, sides: list[Side]) -> None:
    rows: dict[str, list[dict[str, float]]] = {side.label: [] for side in sides}
    rounds = 2 if len(sides) > 1 else 1  # halves of the clicks, alternated
    stderr = ""
    for i, side in alternated(sides, rounds):
        result, _, err = run_child(
            CLICKS_CODE,
            {
                "config": str(config),
                "user": USER,
                "home": str(tmp / f"home-clicks-{i}-{side.cwd.name}"),
                "clicks": max(1, args.clicks // rounds),
                "warmup": args.warmup,
                "subject_field": "subject",
                "profile": args.profile and side is sides[0],
            },
            side,
            "clicks",
        )
        rows[side.label] += result["rows"]
        stderr = err if side is sides[0] else stderr
    print(
        f"2. click Next item -> form filled ({len(rows[sides[0].label])} clicks per code, after {args.warmup} "
        "unmeasured in each process; each item completed with the Resolve button"
        + ("; the codes alternated, half the clicks at a time)" if len(sides) > 1 else ")")
    )
    for side in sides:
        got = rows[side.label]
        print(f"   {side.label}:")
        print(f"   {'':46}{'p50':>8}{'p95':>8}{'p99':>8}{'max':>8}{'mean':>8}   aim")
        for label, key in CLICK_LINES:
            p50, p95, p99, top, mean = ms([r[key] for r in got])
            verdict = f"   <= {AIM_CLICK_MS:g} ms: {aim(p99, AIM_CLICK_MS)} (p99)" if key == "painted" else ""
            print(f"   {label:46}{p50:>8.1f}{p95:>8.1f}{p99:>8.1f}{top:>8.1f}{mean:>8.1f}{verdict}")
        p50, p95, p99, top, mean = ms([r["filled"] - r["arrived"] for r in got])
        print(f"   {'  GUI thread: result -> form filled':46}{p50:>8.1f}{p95:>8.1f}{p99:>8.1f}{top:>8.1f}{mean:>8.1f}")
    if args.profile:
        show_profile("the measured clicks", stderr)


def measure_memory(args: argparse.Namespace, config: Path, empty_config: Path, tmp: Path, side: Side) -> None:
    base, _, _ = run_child(
        MEMORY_CODE,
        {"config": str(empty_config), "user": USER, "home": str(tmp / "home-base"), "cycles": 0},
        side,
        "memory baseline",
    )
    full, _, _ = run_child(
        MEMORY_CODE,
        {"config": str(config), "user": USER, "home": str(tmp / "home-mem"), "cycles": args.cycles},
        side,
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
    parser.add_argument(
        "--warm-starts",
        type=int,
        default=1,
        help="unmeasured starts per code first, in the home the measured ones use (0: the first start is measured)",
    )
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
    parser.add_argument(
        "--ref",
        metavar="COMMIT",
        help="also measure this commit's code (git archive), alternating with this tree's, start by start "
        "and half the clicks at a time (the memory run measures this tree only)",
    )
    args = parser.parse_args(argv)
    args.backend = args.backend or ["sqlite", "postgresql"]
    if min(args.rows, args.starts, args.clicks) < 1 or min(args.warmup, args.warm_starts, args.cycles) < 0:
        parser.error("--rows, --starts and --clicks must be positive; --warmup, --warm-starts, --cycles not negative")
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
    cleanup: list[Path] = []
    try:
        env = child_env()
        if target.password:
            if backend != "postgresql":
                raise SystemExit("a password in --url is only supported for postgresql (PGPASSWORD)")
            env["PGPASSWORD"] = target.password  # build_window opens the engine without one
        # Bytecode as an install has it (pip compiles on install), here as for --ref's checkout: a stale
        # .pyc under PYTHONDONTWRITEBYTECODE would put compiling this tree's changed modules in every start.
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "workbench")], check=True)
        sides = [Side("this tree", env, REPO)]
        if args.ref:
            ref_dir = Path(tempfile.mkdtemp(prefix="wb-gui-ref-"))
            cleanup.append(ref_dir)
            sides.append(ref_side(args.ref, ref_dir))
            if target.password:
                sides[-1].env["PGPASSWORD"] = target.password
        print(
            f"gui_bench: {backend}, {args.rows:,} rows ({args.waiting:.0%} waiting); {target.description}; "
            f"{harness.machine_load()}; QT_QPA_PLATFORM={env['QT_QPA_PLATFORM']}",
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
            "startup": lambda: measure_startup(args, config, target.tmp, sides),
            "clicks": lambda: measure_clicks(args, config, target.tmp, sides),
            "memory": lambda: measure_memory(args, config, empty_config, target.tmp, sides[0]),
        }
        for name, step in steps.items():
            if name in args.skip:
                continue
            try:
                step()
            except SystemExit as exc:  # one step failing (e.g. the window gave up) leaves the others to run
                print(f"{name}: FAILED: {exc}", flush=True)
        print(f"machine: {harness.machine_load()}", flush=True)
        print(flush=True)
    finally:
        target.close()
        for path in cleanup:
            shutil.rmtree(path, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if sys.platform != "linux":
        print("note: RSS figures read /proc and getrusage (Linux); elsewhere they print as nan")
    for backend in args.backend:
        run_backend(args, backend)  # each prints the load average beside its figures
    return 0


if __name__ == "__main__":
    sys.exit(main())
