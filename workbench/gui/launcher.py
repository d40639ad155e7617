"""Which database the window opens: first-run setup, the password, connecting with progress, switching profiles."""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEventLoop, QObject, Qt, Slot
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QMessageBox, QProgressDialog, QWidget

from workbench import credentials, opening
from workbench.config import model, profiles
from workbench.core import errors
from workbench.gui import dispatch, hotkeys, main_window, problem_text, session

if TYPE_CHECKING:  # the engine loads on the thread that connects, while the first window paints
    from workbench import services
    from workbench.gui import supervisor  # the console loads the engine's modules: opened from the menu

log = logging.getLogger("workbench.gui")
PROGRESS_DELAY_MS = 400  # a quick connection shows no progress dialog at all
DISPOSE_WAIT_MS = 5000  # a window's calls still running when it goes: waited for this long, then left behind


class Cancelled(Exception):
    """The user closed the progress dialog; the call goes on in the background and is dropped."""


class Launcher(QObject):
    """Owns the current window; opens targets (profiles or config files), and switches between them."""

    def __init__(self, user: str, build: Callable[..., main_window.MainWindow]) -> None:
        super().__init__()
        self.user, self._build = user, build
        self.window: main_window.MainWindow | None = None
        # The first window, shown from the queue settings file while its database is being opened:
        # the window once connected, discarded if the user gives up.
        self.starting: main_window.MainWindow | None = None
        self.console: supervisor.SupervisorWindow | None = None
        # `workbench --supervisor`: the console only; the operator window is built (the console reads
        # through its database) but neither shown nor started.
        self.show_operator = True
        self.target: opening.Target | None = None
        self.store = profiles.ProfileStore()  # where opening.choose looks too (WORKBENCH_HOME aware)
        self._dispatcher = dispatch.Dispatcher(self, threads=2)

    # -- starting ---------------------------------------------------------------------------------

    def start(self, config: str | None, profile: str | None, demo: bool) -> bool:
        """Open the first window; False when the user gave up (nothing to show)."""
        if demo:
            return self.open(opening.demo_target())
        try:
            target = opening.choose(config, profile)
        except errors.ConfigError as exc:
            if config or exc.file:  # a named or found file that is wrong: say so, do not hide it
                error_box(None, self.tr("workbench: configuration problem"), exc)
                return False
            return self.first_run()
        except errors.UsageError as exc:
            error_box(None, "workbench", exc)
            return False
        return self.open(target)

    def first_run(self, message: str = "") -> bool:
        """No config file and no profile: describe a connection, or open the demo."""
        from workbench.gui import connect_dialog  # (not loaded for a start that needs no dialog)

        dialog = connect_dialog.ConnectionDialog(first_run=True, message=message)
        if not dialog.exec():
            return False
        if dialog.choice == "demo":
            return self.open(opening.demo_target())
        profile = dialog.profile()
        self.store.save(profile, make_default=True)
        return self.open(opening.Target(profile=profile), dialog.password(), remember=dialog.remembers())

    def open(self, target: opening.Target, password: str | None = None, *, remember: bool = False) -> bool:
        """Open `target` in a new window (replacing the current one on success); False if given up."""
        profile = target.profile
        config = self._paint_first(target)
        if profile is not None and profile.needs_password and password is None:
            password = opening.password_for(profile)  # None: try without; many servers need none
        ask, why = False, ""
        while True:
            if ask and profile is not None:
                password, remember = self._ask_password(profile, why)
                if password is None:
                    # Cancel at start-up: back to the connection (another login, another server), not
                    # a silent quit; with a window open, it stays as it was.
                    self._discard_starting()
                    return self.window is None and self.edit_connection(profile.name)
            try:
                wb = self._call(
                    functools.partial(_open_checked, target, password, config),
                    self.tr("Connecting to {0}…").format(target.label),
                )
            except Cancelled:
                self._discard_starting()
                return False
            except errors.LoginRefused as exc:
                # The driver's own words ("FATAL: password authentication failed …") go to the log only.
                log.info("login refused for %s: %s", target.label, exc)
                if profile is None:  # a config file's password comes from the environment only
                    QMessageBox.critical(
                        self._parent(),
                        "workbench",
                        self.tr(
                            "The database refused the login of {0}: wrong password or no such user. The password "
                            "comes from the environment variable named in the config file."
                        ).format(target.label),
                    )
                    self._discard_starting()
                    return False
                # Refused without a password: just ask. Refused with one: ask, saying why.
                ask, why = (
                    True,
                    self.tr("The server refused this password for {0}: check it (Caps Lock?) and try again.").format(
                        profile.user
                    )
                    if password
                    else "",
                )
                continue
            except errors.DatabaseUnavailable as exc:
                answer = self._unreachable(target, exc)
                if answer == "retry":
                    continue
                self._discard_starting()
                if answer == "edit" and profile is not None:
                    return self.edit_connection(profile.name)
                return False
            except errors.WorkbenchError as exc:
                error_box(self._parent(), "workbench", exc)
                self._discard_starting()
                if profile is not None and self.window is None:
                    return self.edit_connection(profile.name, message=problem_text.said(exc)[0])
                return False
            break
        if remember and profile is not None and password:
            try:  # only a password the server accepted is worth remembering
                credentials.store(profile.credential_id, password)
            except errors.CredentialStoreError as exc:
                text = self.tr("{0} You will be asked again next time.").format(problem_text.said(exc)[0])
                error_box(self._parent(), "workbench", exc, text, QMessageBox.Icon.Warning)
        self._show(target, wb)
        return True

    def _paint_first(self, target: opening.Target) -> model.Config | None:
        """The first window, shown now from the target's queue settings file, before its database is
        opened (SQLAlchemy loads and the server answers meanwhile, on a dispatcher thread); its config,
        or None where the settings are published in the database (the window waits for them) or a
        window is open already (it stays until the new database is open)."""
        if self.window is not None or not self.show_operator:
            return None
        try:
            config = opening.local_config(target)
        except errors.WorkbenchError:
            return None  # connecting reads the file again and says what is wrong with it, as before
        if config is None:
            return None
        self._discard_starting()  # the user chose another connection while the last one was starting
        self.starting = self._build(session.Engine(config))
        self.starting.show()  # painted by the event loop that waits for the connection (_call)
        return config

    def _discard_starting(self) -> None:
        window, self.starting = self.starting, None
        if window is not None:
            window.close()
            _dispose(window)
            window.deleteLater()

    def _show(self, target: opening.Target, wb: services.Workbench) -> None:
        old = self.window
        self.target = target
        starting, self.starting = self.starting, None
        if starting is not None and starting.session.config is wb.config:
            starting.session.engine.adopt(wb)  # the window built while connecting is the window
            self.window = starting
        else:
            if starting is not None:
                starting.close()
                _dispose(starting)
                starting.deleteLater()
            self.window = self._build(wb)
        self._install_menu(self.window)
        if self.show_operator:
            self.window.show()
            self.window.session.start()
        if old is not None:
            if self.console is not None and self.console.wb is old.session.engine.opened:
                self._close_console()  # it reads through the database being closed
            old.quit_guard.let_go()  # the user agreed in _may_leave: a held item stays held
            old.close()
            if _dispose(old):
                old.deleteLater()  # else each switch leaves a hidden window; one with a stuck call stays

    def shutdown(self) -> bool:
        """Close everything; False if a database call is still stuck (a dead server) after a bounded wait."""
        self._close_console()
        finished = True
        if self.window is not None:
            finished = _dispose(self.window)
            if finished:
                self.window.deleteLater()
            self.window = None
        return finished

    # -- the Connection menu ------------------------------------------------------------------------

    def _install_menu(self, window: main_window.MainWindow) -> None:
        menu = window.menuBar().addMenu(self.tr("&Connection"))
        menu.setObjectName("connection_menu")
        window.connection_menu = menu  # type: ignore[attr-defined]
        try:
            found, _ = self.store.load()
        except errors.ConfigError as exc:
            found = {}
            window.statusBar().showMessage(problem_text.said(exc)[0], 10_000)
        group = QActionGroup(menu)
        current = self.target.profile.name if self.target and self.target.profile else None
        for name, profile in found.items():
            action = QAction(name.replace("&", "&&"), menu, checkable=True)  # a name's "&" is no Alt key
            action.setObjectName(f"profile_{name}")
            action.setToolTip(profile.describe())
            action.setChecked(name == current)
            action.setActionGroup(group)
            action.triggered.connect(lambda _checked=False, n=name: self.switch(n))
            menu.addAction(action)
        if not found:
            empty = menu.addAction(self.tr("No saved connections"))
            empty.setEnabled(False)
        menu.addSeparator()
        add = menu.addAction(self.tr("&New connection…"))
        add.setObjectName("action_new_connection")
        add.triggered.connect(lambda: self.edit_connection(None))
        if current is not None:
            edit = menu.addAction(self.tr("&Edit this connection…"))
            edit.setObjectName("action_edit_connection")
            edit.triggered.connect(lambda: self.edit_connection(current))
            forget = menu.addAction(self.tr("&Forget the stored password"))
            forget.setObjectName("action_forget_password")
            forget.triggered.connect(lambda: self._forget(current))
        menu.addSeparator()
        console = menu.addAction(self.tr("&Supervisor console…"))
        console.setObjectName("action_supervisor")
        console.setShortcut(hotkeys.SUPERVISOR_CONSOLE)
        console.triggered.connect(self.open_console)
        reload_action = menu.addAction(self.tr("&Reload queue settings"))
        reload_action.setObjectName("action_reload")
        reload_action.triggered.connect(self.reload)
        window.check_keymap()  # this menu's letter and the console's key are the window's now too
        window.session.settings_changed.connect(self._on_settings_changed)

    def open_console(self) -> supervisor.SupervisorWindow | None:
        """The supervisor console on the window's database (one per window; raised if open)."""
        if self.window is None:
            return None
        if self.console is None or self.console.wb is not self.window.session.wb:
            self._close_console()
            from workbench.gui import supervisor

            self.console = supervisor.SupervisorWindow(self.window.session.wb, self.user)
        self.console.show()
        self.console.raise_()
        self.console.refresh()
        return self.console

    def _close_console(self) -> None:
        if self.console is not None:
            self.console.close()
            if self.console.dispatcher.wait(5000):
                self.console.deleteLater()  # deleting it with a call stuck would wait for the call
            self.console = None

    @Slot(str)
    def switch(self, name: str) -> bool:
        """Open another profile; the current window stays until the new one is connected."""
        if self.window is not None and not self._may_leave():
            self._install_check()
            return False
        try:
            profile = self.store.get(name)
        except errors.UsageError as exc:  # gone since the menu was filled (removed or renamed meanwhile)
            error_box(
                self._parent(), "workbench", exc, self.tr("There is no connection profile {0} any more.").format(name)
            )
            return False
        except errors.ConfigError as exc:
            error_box(self._parent(), "workbench", exc)
            return False
        opened = self.open(opening.Target(profile=profile))
        if not opened:
            self._install_check()
        return opened

    def reload(self) -> bool:
        """Reopen the current target: new queue settings take effect; a held item stays held."""
        if self.target is None or (self.window is not None and not self._may_leave()):
            return False
        target = self.target
        if target.profile is not None:  # the profile itself may have been edited meanwhile
            with contextlib.suppress(errors.UsageError, errors.ConfigError):
                target = opening.Target(profile=self.store.get(target.profile.name))
        return self.open(target)

    def edit_connection(self, name: str | None, message: str = "") -> bool:
        """The connection dialog for a new (None) or existing profile; connects to it when saved."""
        try:
            found, _ = self.store.load()
        except errors.ConfigError as exc:
            error_box(self._parent(), "workbench", exc)
            return False
        from workbench.gui import connect_dialog  # (not loaded for a start that needs no dialog)

        dialog = connect_dialog.ConnectionDialog(
            found.get(name) if name else None, taken_names=set(found), message=message, parent=self._parent()
        )
        if not dialog.exec() or dialog.choice != "save":
            return False
        if self.window is not None and not self._may_leave():
            return False
        profile = dialog.profile()
        self.store.save(profile, replace=name)
        return self.open(opening.Target(profile=profile), dialog.password(), remember=dialog.remembers())

    def _forget(self, name: str) -> None:
        profile = self.store.get(name)
        removed = credentials.forget(profile.credential_id)
        if self.window is not None:
            self.window.statusBar().showMessage(
                self.tr("The stored password was removed; you will be asked next time.")
                if removed
                else self.tr("No password was stored for this connection."),
                6000,
            )

    @Slot(int)
    def _on_settings_changed(self, version: int) -> None:
        if self.window is None:
            return
        banner = self.window.info_banner
        text = self.tr(
            "A supervisor published new queue settings (version {0}). They apply when the window "
            "reloads: Connection ▸ Reload queue settings (your item and edits are kept)."
        ).format(version)
        self.window.statusBar().showMessage(text, 0)
        if self.window.stack.currentIndex() == main_window.ITEM:
            banner.show_text(text)
        elif self.window.session.current is None:
            self.reload()  # nothing open: take the new settings at once

    # -- helpers ----------------------------------------------------------------------------------

    def _may_leave(self) -> bool:
        window = self.window
        assert window is not None
        current = window.session.current
        if current is None:
            return True
        answer = QMessageBox.question(
            window,
            "workbench",
            self.tr(
                "You hold {0} {1}. It stays locked to you and your unsaved edits are kept: "
                "it is in your unfinished items when you come back. Continue?"
            ).format(current.queue, current.lock.key),
        )
        if answer != QMessageBox.StandardButton.Yes:
            return False
        window._write_journal()
        # "Your unsaved edits are kept" holds only while the journal can be written; when it cannot,
        # ask as closing does, before the new connection replaces this window.
        return window.journal_status is None or window.journal_status.may_close(window)

    def _install_check(self) -> None:
        """Put the menu's check mark back on the profile that is actually open."""
        if self.window is None or self.target is None or self.target.profile is None:
            return
        for action in self.window.connection_menu.actions():  # type: ignore[attr-defined]
            if action.isCheckable():
                action.setChecked(action.text() == self.target.profile.name)

    def _parent(self) -> QWidget | None:
        return self.window or self.starting

    def _ask_password(self, profile: profiles.Profile, message: str) -> tuple[str | None, bool]:
        from workbench.gui import connect_dialog  # (not loaded for a start that needs no dialog)

        dialog = connect_dialog.PasswordDialog(profile, message, parent=self._parent())
        if not dialog.exec():
            return None, False
        return dialog.password(), dialog.remembers()

    def _unreachable(self, target: opening.Target, exc: errors.WorkbenchError) -> str:
        box = QMessageBox(self._parent())
        box.setObjectName("unreachable_box")
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle(self.tr("workbench: cannot connect"))
        box.setText(self.tr("Cannot open {0}.").format(target.label))
        text, details = problem_text.said(exc)
        box.setInformativeText(text)
        box.setDetailedText(details)  # the driver's own words, in English, for whoever helps
        retry = box.addButton(self.tr("Try again"), QMessageBox.ButtonRole.AcceptRole)
        edit = box.addButton(self.tr("Edit connection…"), QMessageBox.ButtonRole.ActionRole) if target.profile else None
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        clicked = box.clickedButton()
        return "retry" if clicked is retry else "edit" if edit is not None and clicked is edit else "cancel"

    def _call(self, fn: Callable[[], Any], text: str) -> Any:
        """Run `fn` off the GUI thread, the GUI alive; a progress dialog with Cancel if it takes a while."""
        loop = QEventLoop()
        outcome: dict[str, Any] = {}
        cancelled = [False]  # set and read on this thread only

        def finish(key: str, value: Any) -> None:
            outcome.setdefault(key, value)
            loop.quit()

        def on_done(result: Any) -> None:
            if cancelled[0]:
                if hasattr(result, "close"):
                    result.close()  # the user gave up on it: do not leak its connections
                return
            finish("result", result)

        def on_error(exc: BaseException) -> None:
            if not cancelled[0]:
                finish("error", exc)

        self._dispatcher.call(fn, on_done, on_error)
        progress = QProgressDialog(text, self.tr("Cancel"), 0, 0, self._parent())
        progress.setObjectName("connect_progress")
        progress.setWindowTitle("workbench")
        progress.setWindowModality(Qt.WindowModality.ApplicationModal)
        progress.setMinimumDuration(PROGRESS_DELAY_MS)  # shown only if connecting takes that long
        progress.canceled.connect(lambda: finish("cancelled", True))
        if not outcome:
            loop.exec()
        progress.close()
        progress.deleteLater()
        if "result" not in outcome and "error" not in outcome:
            cancelled[0] = True  # the call runs on; on_done closes what it opens
            raise Cancelled()
        if "error" in outcome:
            raise outcome["error"]
        return outcome["result"]


def _open_checked(
    target: opening.Target, password: str | None, config: model.Config | None = None
) -> services.Workbench:
    """Open the target and log in once, so a refused password is known before the window is usable.
    A server that is away is fine for a config file (the window retries); published settings need it.
    On a dispatcher thread: the engine (SQLAlchemy) is imported here, not on the GUI thread."""
    from workbench.services import admin

    wb = opening.open_target(target, password, config)
    try:
        admin.log_in(wb)
    except errors.LoginRefused:
        wb.close()
        raise
    except errors.DatabaseUnavailable:
        if target.profile is not None and target.profile.source == "database":
            wb.close()
            raise
        log.info("database not reachable at start; the window retries")
    return wb


def _dispose(window: main_window.MainWindow) -> bool:
    finished = window.session.dispatcher.wait(DISPOSE_WAIT_MS)
    window.session.engine.close()
    return finished


def error_box(
    parent: QWidget | None,
    title: str,
    exc: errors.WorkbenchError,
    text: str | None = None,
    icon: QMessageBox.Icon = QMessageBox.Icon.Critical,
) -> None:
    """Say `exc` in the user's language (or `text`, where the caller knows better); the engine's English
    under Details."""
    said, details = problem_text.said(exc)
    box = QMessageBox(icon, title, said if text is None else text, QMessageBox.StandardButton.Ok, parent)
    box.setObjectName("error_box")
    box.setDetailedText(details)
    box.exec()
