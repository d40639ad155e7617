"""Start the operator app: config, engine, journal and window; the only place that builds them all."""

from __future__ import annotations

import os
import sys
from importlib import resources
from pathlib import Path

from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from workbench import journal as journal_mod
from workbench.config import loader, model, paths
from workbench.core import errors
from workbench.db import service
from workbench.gui import dispatch, main_window, session


def stylesheet() -> str:
    return resources.files("workbench.resources").joinpath("styles", "workbench.qss").read_text("utf-8")


def application() -> QApplication:
    app = QApplication.instance()
    if app is None:
        app = QApplication(sys.argv[:1])
        app.setApplicationName("workbench")
        app.setOrganizationName("workbench")
        app.setStyleSheet(stylesheet())
    return app  # type: ignore[return-value]


def build_window(config: model.Config, user: str, *, settings: session.SessionSettings | None = None,
                 home: Path | None = None) -> main_window.MainWindow:
    """A ready window for `config` (its database is first touched by session.start(), off this thread)."""
    wb = service.Workbench.open(config)
    data = home / "data" if home else paths.data_dir()
    conf = home / "config" if home else paths.config_dir()
    journal = journal_mod.Journal(data / "journal")
    qsettings = QSettings(str(conf / "gui.ini"), QSettings.Format.IniFormat)
    dispatcher = dispatch.Dispatcher()
    if settings is None:
        settings = session.SessionSettings.from_config(config.app)
        choice = qsettings.value("session/next_after_complete")
        if choice is not None:  # the operator's own choice (View menu) beats the config's default
            settings.next_after_complete = str(choice).lower() in ("true", "1")
    sess = session.OperatorSession(wb, user, dispatcher, journal, settings)
    window = main_window.MainWindow(sess, qsettings)
    dispatcher.setParent(window)
    sess.setParent(window)
    return window


def _load_config(explicit: str | None, demo: bool) -> model.Config | None:
    from workbench import demo as demo_mod

    if demo:
        target = paths.demo_dir()
        if not (target / demo_mod.CONFIG_NAME).exists() or not (target / demo_mod.DB_NAME).exists():
            demo_mod.create(target, overwrite=True)
        return loader.load(target / demo_mod.CONFIG_NAME)
    try:
        return loader.load(paths.find_config(explicit))
    except errors.ConfigError as exc:
        if explicit:
            QMessageBox.critical(None, "workbench: configuration problem", str(exc))
            return None
        answer = QMessageBox.question(
            None, "workbench: no configuration",
            f"{exc}\n\nOpen the demo (a helpdesk queue on a local SQLite file) instead?")
        if answer != QMessageBox.StandardButton.Yes:
            return None
        return _load_config(None, True)


def run(config_path: str | None, user: str, *, demo: bool = False) -> int:
    """The `workbench` command without a subcommand: the operator window."""
    app = application()
    try:
        config = _load_config(config_path, demo)
    except errors.WorkbenchError as exc:
        QMessageBox.critical(None, "workbench", str(exc))
        return exc.exit_code
    if config is None:
        return 2
    try:
        window = build_window(config, user)
    except errors.WorkbenchError as exc:
        QMessageBox.critical(None, "workbench", str(exc))
        return exc.exit_code
    window.show()
    smoke = os.environ.get("WORKBENCH_SMOKE_SCREENSHOT")
    if smoke:
        _smoke_test(app, window, Path(smoke))
    window.session.start()
    code = app.exec()
    window.session.dispatcher.wait(5000)
    window.session.wb.close()
    return int(code)


def _smoke_test(app: QApplication, window: main_window.MainWindow, shot: Path) -> None:
    """CI and installers: once the window is usable, save a screenshot of it and quit (exit 0);
    exit 1 if it is not usable within a minute."""
    def done() -> None:
        window.grab().save(str(shot))
        window.close()
        app.exit(0)

    window.session.ready.connect(lambda _locks: QTimer.singleShot(300, done))
    QTimer.singleShot(60_000, lambda: app.exit(1))
