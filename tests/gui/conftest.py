"""Fixtures for driving the real operator window offscreen against a real database."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import shiboken6
import sqlalchemy as sa
from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QAbstractButton, QApplication, QWidget

from tests import support
from workbench.config import loader, model
from workbench.gui import app as gui_app
from workbench.gui import launcher, main_window, session
from workbench.services import door

# The change feed off (changes_interval=0): these tests drive the lock check themselves and wait for what
# it says; a feed look answering first would say it before they listen. tests/gui/test_change_feed.py
# turns it on.
FAST = session.SessionSettings(
    check_interval=1.0,
    warn_before=120.0,
    retry_interval=0.5,
    auto_extend=False,
    next_after_complete=False,
    changes_interval=0.0,
)


@pytest.fixture(autouse=True)
def _no_window_outlives_its_test() -> Iterator[None]:
    """Deletes the windows and dialogs a test made and left alive (built without qtbot, or hidden but never
    deleted): each one stays in the worker otherwise, and every later test's restyle (theme), event
    processing and collection walks its widgets too: tests/gui's fast tier in one process ended with 20
    operator windows and 5700 widgets alive, and took 62 s of CPU, test_theme.py 19 of them; 37 s and
    under 1 s with this (nothing left alive)."""

    def address(widget: QWidget) -> int:
        return int(shiboken6.getCppPointer(widget)[0])

    before = {address(widget) for widget in QApplication.topLevelWidgets()}
    yield
    if QApplication.instance() is None:
        return
    left = [w for w in QApplication.topLevelWidgets() if w.parent() is None and address(w) not in before]
    for widget in left:
        widget.deleteLater()
    if left:
        QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest) -> str:
    """The window runs against the embedded SQLite demo and against a real PostgreSQL server."""
    return str(request.param)


@pytest.fixture
def demo_config(
    request: pytest.FixtureRequest, backend: str, database_url: str, tmp_path: Path
) -> Iterator[model.Config]:
    """The demo tables on `backend`: on SQLite exactly what the README's first line opens; on PostgreSQL a
    copy of a template database (support.Env.copy_template)."""
    if backend == "sqlite":
        yield loader.load(support.sqlite_demo(tmp_path / "demo"))
        return
    env = support.Env(backend, "native", database_url, tmp_path, request.getfixturevalue("pg_server"))
    env.demo(case_rows=30, import_rows=20)
    yield env.demo_config()
    env.close()


def with_queue(config: model.Config, queue: str, **changes: Any) -> model.Config:
    queues = dict(config.queues)
    queues[queue] = dataclasses.replace(queues[queue], **changes)
    return dataclasses.replace(config, queues=queues)


@pytest.fixture
def open_window(qtbot: Any, tmp_path: Path) -> Iterator[Callable[..., main_window.MainWindow]]:
    """Build, show and start a window; waits until its queues are open. Closed at the end."""
    windows: list[main_window.MainWindow] = []

    def make(
        config: model.Config, user: str = "alice", settings: session.SessionSettings = FAST, home: Path | None = None
    ) -> main_window.MainWindow:
        gui_app.application()
        window = gui_app.build_window(
            config, user, settings=dataclasses.replace(settings), home=home or tmp_path / "home"
        )
        # Closed (as by Ctrl+Q, keeping a touched item) before pytest-qt deletes it: the quit guard
        # may release an item through the dispatcher first.
        qtbot.addWidget(window, before_close_func=lambda w: _close_at_the_end(qtbot, w))
        window.show()
        with qtbot.waitSignal(window.session.ready, timeout=20_000):
            window.session.start()
        windows.append(window)
        return window

    yield make
    for window in windows:
        window.session.wb.close()


def _close_at_the_end(qtbot: Any, window: main_window.MainWindow) -> None:
    window.session.dispatcher.wait(10_000)
    close_window(qtbot, window, answer="quit_keep")
    window.session.dispatcher.wait(10_000)


def close_window(qtbot: Any, window: main_window.MainWindow, answer: str = "") -> None:
    """Close like Ctrl+Q and wait until the window has gone (its quit guard may release an item first);
    if it asks about a touched item, click the button called `answer` (quit_keep, quit_release, quit_cancel)."""
    window.close()
    guard = window.quit_guard

    def settled() -> bool:
        if guard.question is not None and answer:
            guard.question.findChild(QAbstractButton, answer).click()
        return not window.isVisible() or (guard.state == "idle" and answer == "quit_cancel")

    qtbot.waitUntil(settled, timeout=20_000)


def row(window: main_window.MainWindow, queue: str, key: Any) -> dict[str, Any]:
    q = door.engine(window.session.wb).queue(queue).q
    with door.engine(window.session.wb).engine.connect() as conn:
        return dict(conn.execute(sa.select(q.table).where(q.key == key)).mappings().one())


def on_dialog(qtbot: Any, name: str, act: Callable[[Any], None]) -> list[str]:
    """Once a modal dialog called `name` is up, run `act(dialog)`; returns a list that records it ran."""
    from PySide6.QtCore import QTimer

    seen: list[str] = []

    def poll() -> None:
        widget = QApplication.activeModalWidget()
        if widget is not None and widget.objectName() == name and not seen:
            seen.append(name)
            act(widget)
        elif not seen:
            QTimer.singleShot(50, poll)

    QTimer.singleShot(0, poll)
    return seen


@pytest.fixture
def make_launcher(qtbot: Any, tmp_path: Path) -> Iterator[Callable[[], launcher.Launcher]]:
    """Make launchers (a window with its Connection menu) for a test; their windows closed at the end."""
    made: list[launcher.Launcher] = []

    def make(user: str = "alice") -> launcher.Launcher:
        gui_app.application()
        home = tmp_path / "home"
        the = launcher.Launcher(
            user, lambda wb: gui_app.window_for(wb, user, settings=dataclasses.replace(FAST), home=home)
        )
        made.append(the)
        return the

    yield make
    for the in made:
        if the.window is not None:
            the.window.close()
        the.shutdown()
