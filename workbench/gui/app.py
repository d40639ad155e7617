"""Start the operator app: config, engine, journal and window; the only place that builds them all."""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, QSettings, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from workbench import codecache, journal_guard, logs, start_collection
from workbench.config import model, paths
from workbench.gui import dispatch, i18n, icons, main_window, session, theme

if TYPE_CHECKING:  # the engine is loaded off the GUI thread while the window paints (session.Engine)
    from workbench import services


def application(user: str | None = None) -> QApplication:
    """The QApplication, made once: colours and language from `user`'s own settings."""
    app = QApplication.instance()
    if app is None:
        app = QApplication(sys.argv[:1])
        app.setApplicationName("workbench")
        app.setOrganizationName("workbench")
        # Matches workbench.desktop, so Wayland and X11 docks show the installed icon and name.
        app.setDesktopFileName("workbench")
        app.setWindowIcon(icons.app_icon())
        settings = user_settings(user=user)
        theme.Theme(app, str(settings.value(theme.SETTING, "") or ""))  # colours for the system's scheme
        # Before any window exists: widgets take their texts when they are built.
        i18n.install(app, i18n.chosen(settings))
    return app  # type: ignore[return-value]


def user_settings(home: Path | None = None, user: str | None = None) -> QSettings:
    """The operator's own GUI preferences (window geometry, queue, View menu choices, language,
    colours): `user`'s own file, so that people sharing one computer account each keep theirs; the
    first time, a copy of the file everyone shared before."""
    conf = home / "config" if home else paths.config_dir()
    shared = conf / "gui.ini"
    if user is None:
        return QSettings(str(shared), QSettings.Format.IniFormat)
    own = conf / "users" / paths.user_folder(user) / "gui.ini"
    if not own.exists() and shared.is_file():
        with contextlib.suppress(OSError):  # unreadable or a full disk: start from the defaults
            own.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(shared, own)
    return QSettings(str(own), QSettings.Format.IniFormat)


def build_window(
    config: model.Config, user: str, *, settings: session.SessionSettings | None = None, home: Path | None = None
) -> main_window.MainWindow:
    """A ready window for `config`: built from the config alone; SQLAlchemy, the engine and the database
    are first touched by the session's first call (session.start()), off this thread."""
    return window_for(session.Engine(config), user, settings=settings, home=home)


def window_for(
    wb: services.Workbench | session.Engine,
    user: str,
    *,
    settings: session.SessionSettings | None = None,
    home: Path | None = None,
) -> main_window.MainWindow:
    """A ready window on a Workbench, open or to be opened by the session's first call."""
    data = home / "data" if home else paths.data_dir()
    # Never raises: an unwritable data directory opens the window with the journal's warning.
    journal = journal_guard.GuardedJournal(data / "journal" / paths.user_folder(user), owner=user)
    qsettings = user_settings(home, user)
    dispatcher = dispatch.Dispatcher()
    if settings is None:
        settings = session.SessionSettings.from_config(wb.config.app)
        choice = qsettings.value("session/next_after_complete")
        if choice is not None:  # the operator's own choice (View menu) beats the config's default
            settings.next_after_complete = str(choice).lower() in ("true", "1")
    sess = session.OperatorSession(wb, user, dispatcher, journal, settings)
    window = main_window.MainWindow(sess, qsettings)
    dispatcher.setParent(window)
    sess.setParent(window)
    return window


def run(
    config_path: str | None, user: str, *, demo: bool = False, profile: str | None = None, supervisor: bool = False
) -> int:
    """The `workbench` command without a subcommand: the operator window (or only the supervisor
    console, with `supervisor`)."""
    from workbench.gui import launcher  # connection dialogs and the supervisor console: not for build_window

    app = application(user)
    logs.setup()
    logs.install_excepthook(_show_crash)
    the_launcher = launcher.Launcher(user, lambda wb: window_for(wb, user))
    the_launcher.show_operator = not supervisor
    if not the_launcher.start(config_path, profile, demo):
        return 2
    window = the_launcher.window
    assert window is not None
    # Once the queues are open: the methods of the dataclasses made so far kept for the next start, and
    # what the start made frozen for the collector (start_collection).
    window.session.ready.connect(lambda _locks: QTimer.singleShot(0, codecache.save))
    window.session.ready.connect(lambda _locks: start_collection.release())
    if supervisor:
        the_launcher.open_console()
    smoke = os.environ.get("WORKBENCH_SMOKE_SCREENSHOT")
    if smoke:
        _smoke_test(app, window, Path(smoke))
    ready_file = os.environ.get("WORKBENCH_READY_FILE")
    if ready_file:
        _report_ready(app, window, Path(ready_file))
    code = app.exec()
    if not the_launcher.shutdown():
        _exit_now(int(code))
    return int(code)


def _exit_now(code: int) -> None:
    """A database call is still stuck on a dead server after the bounded waits: its pool thread would
    keep the process alive until the network gives up (the thread pool waits for it at exit). Nothing
    is lost by leaving now: drafts are on disk (fsynced), and the server rolls back whatever the stuck
    call had begun when its connection goes; a lock it held runs out on its own."""
    logging.getLogger("workbench.gui").warning(
        "quitting with a database call still stuck; its lock runs out on its own"
    )
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def _show_crash(report: str) -> None:
    """An unexpected error: say so and where the details are; the log has the report (secrets masked)."""
    text = QCoreApplication.translate(
        "Crash",
        "Something went wrong inside workbench. Edits already written to the local journal are "
        "kept; if the window warns that the journal cannot be written, Save your edits before closing."
        "\n\nDetails are in {log}.",
    ).format(log=logs.log_path())
    title = QCoreApplication.translate("Crash", "workbench: unexpected error")
    box = QMessageBox(QMessageBox.Icon.Critical, title, text)
    box.setDetailedText(report)
    box.exec()


def _report_ready(app: QApplication, window: main_window.MainWindow, path: Path) -> None:
    """Start-up benchmarks (installer/measure.py): once the window is usable (the database answered
    and the window showed it), write the system monotonic clock to `path` and quit."""

    def done() -> None:
        path.write_text(f"{time.monotonic():.6f}\n", encoding="utf-8")
        window.close()
        app.exit(0)

    # Queued after the ready handler, so the window has taken in what the database said.
    window.session.ready.connect(lambda _locks: QTimer.singleShot(0, done))


def _smoke_test(app: QApplication, window: main_window.MainWindow, shot: Path) -> None:
    """CI and installers: once the window is usable, save a screenshot of it and quit (exit 0);
    exit 1 if it is not usable within a minute."""

    def done() -> None:
        window.grab().save(str(shot))
        window.close()
        app.exit(0)

    window.session.ready.connect(lambda _locks: QTimer.singleShot(300, done))
    QTimer.singleShot(60_000, lambda: app.exit(1))
