"""The first screen before the engine (issue 52): painted from the config while SQLAlchemy loads off the GUI
thread; the form built once per queue layout, so Next item only fills it in."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from tests import support
from tests.gui.conftest import FAST

REPO = Path(__file__).resolve().parents[2]

# Both scripts below: what the GUI thread imports, and which of it is the engine's (SQLAlchemy, db, services).
TRACE_GUI_THREAD = textwrap.dedent(
    r"""
    on_gui_thread = set()
    real_import = builtins.__import__
    def traced(name, globals=None, locals=None, fromlist=(), level=0):
        if threading.current_thread() is threading.main_thread() and not level:
            on_gui_thread.update([name] + [f"{name}.{f}" for f in fromlist or ()])
        return real_import(name, globals, locals, fromlist, level)
    builtins.__import__ = traced
    def engine_imports():
        return sorted(n for n in on_gui_thread
                      if n.split(".")[0] == "sqlalchemy" or n.startswith(("workbench.db", "workbench.services")))
    def first_screen_imports():  # workbench's modules the GUI thread imported, and Qt's loaded
        return sorted(n for n in on_gui_thread if n.startswith("workbench") and n in sys.modules) + sorted(
            n for n in sys.modules if n.startswith("PySide6.Qt"))
    """
)

# In a fresh interpreter: nothing the test run imported (SQLAlchemy) may hide what the window loads.
FIRST_SCREEN = textwrap.dedent(
    r"""
    import builtins, sys, threading
    from pathlib import Path

    # What the GUI thread imports (a worker importing SQLAlchemy meanwhile is the point).
    {trace}

    from PySide6.QtCore import QCoreApplication, QEventLoop, QTimer
    from workbench.config import loader
    from workbench.gui import app as gui_app, session

    opened_on = []
    if hasattr(session, "Engine"):  # (before issue 52 the window opened the engine itself: the checks below say so)
        real_get = session.Engine.get
        def get(self):
            if self.opened is None:
                opened_on.append(threading.current_thread() is threading.main_thread())
            return real_get(self)
        session.Engine.get = get

    qapp = gui_app.application()
    window = gui_app.build_window(loader.load(sys.argv[1]), "alice", home=Path(sys.argv[2]))
    window.show()
    window.session.start()
    QCoreApplication.processEvents()
    shown = window.grab()  # painted
    print("before:", engine_imports(), window.next_button.isEnabled(), window.connection_label.text(),
          window.message_label.text(), shown.width() > 0, flush=True)
    loop = QEventLoop()
    window.session.ready.connect(lambda _locks: loop.quit())
    QTimer.singleShot(60_000, loop.quit)
    loop.exec()
    print("after:", "sqlalchemy" in sys.modules, window.next_button.isEnabled(), window.session.wb is not None,
          "opened on the GUI thread" if any(opened_on) else "opened off the GUI thread", flush=True)
    window.session.dispatcher.wait()
    window.close()
    window.session.wb.close()
    """
).replace("{trace}\n", TRACE_GUI_THREAD.lstrip("\n"))


def test_the_window_paints_before_the_engine_is_loaded_and_opens_it_off_the_gui_thread(tmp_path: Path) -> None:
    config = support.sqlite_demo(tmp_path / "demo")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", LANG="C.UTF-8", LANGUAGE="en")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    proc = subprocess.run(
        [sys.executable, "-c", FIRST_SCREEN, str(config), str(tmp_path / "home")],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith(("before:", "after:"))]
    assert proc.returncode == 0 and len(lines) == 2, (proc.returncode, proc.stdout, proc.stderr[-2000:])
    # Shown and painted, saying it connects, Next item waiting for the queues: the GUI thread imported
    # neither SQLAlchemy nor the engine for it.
    assert lines[0] == "before: [] False Connecting… Opening the queues… True", lines[0]
    # Ready: the engine was loaded and opened by the session's first call, on a dispatcher thread.
    assert lines[1] == "after: True True True opened off the GUI thread", lines[1]


# The `workbench` command itself, as a desktop start runs it (the command line, the launcher, its
# connection step): the window is shown and painted before SQLAlchemy is loaded, and the GUI thread
# never loads it; ready (WORKBENCH_READY_FILE) once the database answered.
LAUNCHED = textwrap.dedent(
    r"""
    import builtins, sys, threading

    {trace}

    from workbench.gui import main_window
    real_show = main_window.MainWindow.show
    def show(self):
        real_show(self)
        if getattr(main_window, "seen", False):
            return  # the first show only (the launcher shows its window again once connected)
        main_window.seen = True
        from PySide6.QtCore import QCoreApplication, QTimer
        QCoreApplication.processEvents()
        painted = self.grab().width() > 0
        print("shown:", "sqlalchemy" in sys.modules, engine_imports(), self.connection_label.text(),
              self.next_button.isEnabled(), painted, flush=True)
        print("imported:", " ".join(first_screen_imports()), flush=True)
        self.session.ready.connect(lambda _locks: QTimer.singleShot(0, collector_state))
    main_window.MainWindow.show = show

    def collector_state():  # once every slot of the window's ready has run
        import gc
        from workbench import start_collection
        print("collector:", start_collection.holding(), gc.get_freeze_count() > 10_000, gc.isenabled(), flush=True)

    from workbench.cli.launcher import main
    sys.argv = ["workbench", "--config", sys.argv[1], "--user", "alice"]
    code = main()
    print("ready:", code, "sqlalchemy" in sys.modules, engine_imports(), flush=True)
    """
).replace("{trace}\n", TRACE_GUI_THREAD.lstrip("\n"))


# What the GUI thread of `workbench --config FILE` imports before its window is first shown (issue 52):
# the command line, the launcher, the window's own modules and what they stand on; of Qt, three modules.
FIRST_SCREEN_IMPORTS = frozenset(
    [
        "workbench",
        "workbench.cli",
        "workbench.cli.argtypes",
        "workbench.codecache",  # the dataclasses' methods compiled by the last start (saves more than it costs)
        "workbench.start_collection",  # the collector held off while the window starts
        "workbench.cli.command_server",
        "workbench.cli.common",
        "workbench.cli.launcher",
        "workbench.cli.main",
        "workbench.cli.output",
        "workbench.cli.people_commands",
        "workbench.cli.permission_commands",
        "workbench.cli.profile_commands",
        "workbench.cli.stats_commands",
        "workbench.cli.translations",  # argparse's translation looked up once: the command line's parser is built
        "workbench.config",
        "workbench.config.loader",
        "workbench.config.model",
        "workbench.config.paths",
        "workbench.config.profiles",
        "workbench.config.secrets",
        "workbench.config.settings",
        "workbench.core",
        "workbench.core.durations",
        "workbench.core.errors",
        "workbench.core.login",
        "workbench.core.models",
        "workbench.core.problems",
        "workbench.credentials",
        "workbench.fieldspec",
        "workbench.gui",
        "workbench.gui.a11y",
        "workbench.gui.app",
        "workbench.gui.collector",
        "workbench.gui.dialogs",
        "workbench.gui.dispatch",
        "workbench.gui.draft_view",
        "workbench.gui.form",
        "workbench.gui.hotkeys",
        "workbench.gui.i18n",
        "workbench.gui.icons",
        "workbench.gui.item_log",
        "workbench.gui.journal_status",
        "workbench.gui.launcher",
        "workbench.gui.lookup_field",
        "workbench.gui.main_window",
        "workbench.gui.problem_text",
        "workbench.gui.qt_bytecode",
        "workbench.gui.quit_guard",
        "workbench.gui.relay_link",
        "workbench.gui.resume",
        "workbench.gui.session",
        "workbench.gui.source_view",
        "workbench.gui.theme",
        "workbench.gui.times",
        "workbench.journal",
        "workbench.journal_guard",
        "workbench.logs",
        "workbench.opening",
        "PySide6.QtCore",
        "PySide6.QtGui",
        "PySide6.QtWidgets",
    ]
)


def test_the_workbench_command_paints_its_window_before_it_connects(tmp_path: Path) -> None:
    config = support.sqlite_demo(tmp_path / "demo")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", LANG="C.UTF-8", LANGUAGE="en")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env.update(WORKBENCH_HOME=str(tmp_path / "home"), WORKBENCH_READY_FILE=str(tmp_path / "ready"))
    env["WORKBENCH_COMMAND_SERVER"] = "off"
    proc = subprocess.run(
        [sys.executable, "-c", LAUNCHED, str(config)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    lines = [
        line for line in proc.stdout.splitlines() if line.startswith(("shown:", "imported:", "ready:", "collector:"))
    ]
    assert proc.returncode == 0 and len(lines) == 4, (proc.returncode, proc.stdout, proc.stderr[-2000:])
    # Before: main's command line loaded SQLAlchemy (profiles), the launcher connected, then built the window.
    assert lines[0] == "shown: False [] Connecting… False True", lines[0]
    # Nothing more than the first screen needs (before: Qt's PDF modules, the connection and shortcut dialogs,
    # the lock board's table). A module added here costs every start: import it where it is used instead.
    imported = set(lines[1].split()[1:])
    assert imported <= FIRST_SCREEN_IMPORTS, sorted(imported - FIRST_SCREEN_IMPORTS)
    # Once the queues are open, the start is over for Python's collector (start_collection): what the start made
    # frozen, automatic collection left off, the GUI thread's collector (gui/collector.py) collecting instead.
    assert lines[2] == "collector: False True False", lines[2]
    assert lines[3] == "ready: 0 True []", lines[3]
    assert (tmp_path / "ready").read_text().strip()


def test_next_item_fills_the_form_built_for_the_queue(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    window = open_window(demo_config, settings=dataclasses.replace(FAST, next_after_complete=False))
    # Built once the start page shows, before any claim: Next item then only fills in values.
    qtbot.waitUntil(lambda: window.form.has_field("subject"), timeout=5_000)
    editor, resolve = window.form.field("subject"), window.complete_buttons["resolved"]
    assert not resolve.isEnabled()  # no item yet: its outcome waits
    seen = []
    for _ in range(2):
        with qtbot.waitSignal(window.session.claimed, timeout=10_000) as signal:
            qtbot.mouseClick(window.next_button, Qt.MouseButton.LeftButton)
        claim = signal.args[0]
        seen.append(claim.lock.key)
        assert window.form.field("subject") is editor  # the same widgets, filled with this item
        assert window.complete_buttons["resolved"] is resolve and resolve.isEnabled()
        assert editor.text() == str(claim.item["subject"])  # type: ignore[attr-defined]
        with qtbot.waitSignal(window.session.completed, timeout=10_000):
            qtbot.mouseClick(resolve, Qt.MouseButton.LeftButton)
    assert seen[0] != seen[1]


@pytest.mark.parametrize("backend", ["sqlite"])
def test_a_stored_value_outside_the_choices_is_shown_for_its_item_only(
    qtbot: Any, open_window: Any, demo_config: Any
) -> None:
    from workbench.gui import form as form_mod

    window = open_window(demo_config)
    qtbot.waitUntil(lambda: window.form.has_field("category"), timeout=5_000)
    combo = window.form.field("category")
    choices = combo.count()  # type: ignore[attr-defined]
    window.form.show_item({"category": "Fax machine"})  # a value the config's choices no longer have
    assert combo.currentText() == "Fax machine" and combo.count() == choices + 1  # type: ignore[attr-defined]
    window.form.show_item({"category": None})  # the next item, on the same (reused) form
    assert combo.count() == choices  # type: ignore[attr-defined]
    assert form_mod.display("Fax machine") not in [combo.itemText(i) for i in range(combo.count())]  # type: ignore[attr-defined]
