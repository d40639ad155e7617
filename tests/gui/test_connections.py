"""First run, connection dialog with Test connection, passwords through the keyring, switching profiles."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import keyring
import pytest
import shiboken6
from keyring.backends import fail
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QMessageBox, QWidget

from tests import servers, support
from tests.gui.conftest import on_dialog
from tests.helpers.memkeyring import MemoryKeyring
from workbench import demo, logs
from workbench.config import paths, profiles
from workbench.gui import app as gui_app
from workbench.gui import connect_dialog, i18n, launcher
from workbench.services import door


def fill(dialog: connect_dialog.ConnectionDialog, **values: Any) -> None:
    for name, value in values.items():
        widget = dialog.findChild(QWidget, name)
        if name == "kind":
            dialog.kind.setCurrentIndex(profiles.KINDS.index(value))
        elif hasattr(widget, "setValue"):
            widget.setValue(value)
        elif hasattr(widget, "setChecked"):
            widget.setChecked(value)
        else:
            widget.setText(str(value))


def demo_files(tmp_path: Path, name: str = "demo") -> tuple[Path, Path]:
    config = support.sqlite_demo(tmp_path / name)  # a copy of the demo this process built once
    return config.parent / demo.DB_NAME, config


def sqlite_profile(name: str, db: Path, config: Path) -> profiles.Profile:
    return profiles.Profile(name=name, kind="sqlite", path=str(db), source="file", config=str(config))


def two_profiles_open(make_launcher: Any, tmp_path: Path) -> launcher.Launcher:
    """Profiles A (the default) and B on two demo databases; A opened."""
    store = profiles.ProfileStore()
    for name in ("A", "B"):
        db, config = demo_files(tmp_path, name.lower())
        store.save(sqlite_profile(name, db, config), make_default=name == "A")
    the = make_launcher()
    assert the.start(None, None, False)
    return the


# -- first run ----------------------------------------------------------------------------------


def test_first_run_creates_a_profile_and_opens_it(
    qtbot: Any, make_launcher: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    db, config = demo_files(tmp_path)

    def act(dialog: connect_dialog.ConnectionDialog) -> None:
        fill(dialog, kind="sqlite", name="My cases", path=db, config=config)
        assert not dialog.host.isVisible() and dialog.path.isVisible()
        dialog.save_button.click()

    seen = on_dialog(qtbot, "connection_dialog", act)
    the = make_launcher()
    assert the.start(None, None, False)
    assert seen == ["connection_dialog"]
    found, default = profiles.ProfileStore().load()
    assert default == "My cases" and found["My cases"].path == str(db)
    window = the.window
    with qtbot.waitSignal(window.session.ready, timeout=20_000):
        pass
    assert door.engine(window.session.wb).engine.url.database.startswith(f"file:{db.as_posix()}")
    names = [a.text() for a in window.connection_menu.actions() if a.isCheckable()]
    assert names == ["My cases"]


def test_first_run_offers_the_demo(
    qtbot: Any, make_launcher: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    seen = on_dialog(qtbot, "connection_dialog", lambda d: d.demo_button.click())
    the = make_launcher()
    assert the.start(None, None, False) and seen
    assert the.target.config_path == paths.demo_dir() / demo.CONFIG_NAME
    assert profiles.ProfileStore().load() == ({}, None)  # the demo needs no profile


def test_a_field_left_empty_is_named_and_nothing_is_saved(qtbot: Any) -> None:
    gui_app.application()
    dialog = connect_dialog.ConnectionDialog(first_run=True)
    qtbot.addWidget(dialog)
    dialog.show()
    fill(dialog, kind="postgresql", name="office", host="db.example.org", user="bob")
    dialog.save_button.click()
    assert dialog.test_result.text().startswith("Database name: enter the database name")
    assert dialog.test_result.property("state") == "fail" and dialog.isVisible()
    assert dialog.focusWidget() is dialog.database  # the cursor is where the fix goes
    assert not profiles.ProfileStore().path.exists()


def test_sql_server_fields(qtbot: Any) -> None:
    gui_app.application()
    dialog = connect_dialog.ConnectionDialog()
    qtbot.addWidget(dialog)
    dialog.show()
    fill(
        dialog,
        kind="sqlserver",
        name="erp",
        host="sql01",
        database="erp",
        windows_auth=True,
        trust_server_certificate=True,
        source_database=True,
    )
    dialog.odbc_driver.setCurrentText("ODBC Driver 18 for SQL Server")
    assert dialog.odbc_driver.isVisible() and dialog.encrypt.isVisible() and not dialog.user.isVisible()
    profile = dialog.profile()
    assert profile.windows_auth and profile.encrypt and profile.trust_server_certificate and not profile.user
    assert profile.url().query["Trusted_Connection"] == "yes"
    # A MariaDB profile offers a driver choice; only the ODBC one asks for an ODBC driver name.
    fill(dialog, kind="mariadb")
    assert dialog.driver.isVisible() and not dialog.odbc_driver.isVisible() and dialog.user.isVisible()
    dialog.driver.setCurrentIndex(dialog.driver.findData("odbc"))
    assert dialog.odbc_driver.isVisible()


# -- Test connection ----------------------------------------------------------------------------


def test_test_connection_reports_a_closed_port_without_freezing(qtbot: Any) -> None:
    gui_app.application()
    dialog = connect_dialog.ConnectionDialog()
    qtbot.addWidget(dialog)
    dialog.show()
    port = servers.free_port()
    fill(
        dialog,
        kind="postgresql",
        name="x",
        host="127.0.0.1",
        port=port,
        database="d",
        user="u",
        password="pw-typed-here",
    )
    dialog.test_button.click()
    assert dialog.test_result.property("state") == "busy" and not dialog.test_button.isEnabled()
    qtbot.waitUntil(lambda: dialog.test_result.property("state") == "fail", timeout=20_000)
    assert f"127.0.0.1:{port}" in dialog.test_result.text() and "pw-typed-here" not in dialog.test_result.text()
    assert dialog.test_button.isEnabled()


def test_test_connection_succeeds_and_a_wrong_password_is_named(qtbot: Any, pg_server: Any) -> None:
    user, password = pg_server.password_login()
    gui_app.application()
    dialog = connect_dialog.ConnectionDialog()
    qtbot.addWidget(dialog)
    dialog.show()
    fill(
        dialog,
        kind="postgresql",
        name="x",
        host=pg_server.host,
        port=pg_server.port,
        database="postgres",
        user=user,
        password="not-" + password,
    )
    dialog.test_button.click()
    qtbot.waitUntil(lambda: dialog.test_result.property("state") == "fail", timeout=20_000)
    text = dialog.test_result.text()
    assert text == f"The server refused the login: wrong password, or no user called {user}. Check both (Caps Lock?)."
    # The driver's own words are there for whoever helps, under Details, not in the answer.
    assert "password authentication failed" in dialog.details.text() and not dialog.details.isVisible()
    assert dialog.details_button.isVisible() and "password authentication failed" in dialog.test_result.toolTip()
    dialog.details_button.click()
    assert dialog.details.isVisible()
    assert password not in text + dialog.details.text() + dialog.test_result.toolTip()
    fill(dialog, password=password)
    dialog.test_button.click()
    qtbot.waitUntil(lambda: dialog.test_result.property("state") == "ok", timeout=20_000)
    text = dialog.test_result.text()
    assert text.startswith("Connected to PostgreSQL ") and f" as {user}." in text
    assert not dialog.details_button.isVisible() and not dialog.details.isVisible()


def test_a_wrong_password_is_said_in_german_in_plain_words(qtbot: Any, pg_server: Any) -> None:
    user, password = pg_server.password_login()
    app = gui_app.application()
    assert i18n.install(app, "de") == "de"
    try:
        dialog = connect_dialog.ConnectionDialog()
        qtbot.addWidget(dialog)
        dialog.show()
        fill(
            dialog,
            kind="postgresql",
            name="x",
            host=pg_server.host,
            port=pg_server.port,
            database="postgres",
            user=user,
            password="nicht-" + password,
        )
        dialog.test_button.click()
        qtbot.waitUntil(lambda: dialog.test_result.property("state") == "fail", timeout=20_000)
        text = dialog.test_result.text()
        assert text.startswith("Der Server hat die Anmeldung abgelehnt") and user in text
        # Neither the probe's English diagnosis nor the server's message reach the answer.
        assert "password" not in text.lower() and "refused" not in text and "FATAL" not in text
        assert dialog.details_button.text() == "Details" and "password authentication failed" in dialog.details.text()
        # A closed port: the German reason, the server named, nothing of the driver's.
        port = servers.free_port()
        fill(dialog, host="127.0.0.1", port=port)
        dialog.test_button.click()
        qtbot.waitUntil(
            lambda: dialog.test_result.property("state") == "fail" and str(port) in dialog.test_result.text(),
            timeout=20_000,
        )
        assert dialog.test_result.text().startswith(f"Der Server 127.0.0.1:{port} hat die Verbindung abgewiesen")
        assert "connection" not in dialog.test_result.text().lower()
    finally:
        i18n.install(app, "en")


# -- passwords ----------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["postgresql"])
def test_wrong_password_is_asked_again_then_remembered_and_never_written(
    qtbot: Any, make_launcher: Any, pg_server: Any, database_url: str, tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    user, password = pg_server.password_login()
    env = support.Env("postgresql", "native", database_url, tmp_path)
    env.demo(case_rows=10, import_rows=5)
    config_file = env.demo_config_file()
    env.close()
    dbname = database_url.rsplit("/", 1)[1]
    _grant_all(pg_server, dbname, user)
    profile = profiles.Profile(
        name="office",
        kind="postgresql",
        host=pg_server.host,
        port=pg_server.port,
        database=dbname,
        user=user,
        source="file",
        config=str(config_file),
    )
    profiles.ProfileStore().save(profile)
    logs.setup(logging.DEBUG)
    try:
        answers = iter(["wrong-" + password, password])
        problems: list[str] = []

        def answer(dialog: Any) -> None:
            problem = dialog.findChild(QWidget, "password_problem")
            problems.append(problem.text() if problem is not None else "")
            dialog.edit.setText(next(answers))
            dialog.remember.setChecked(True)
            dialog.accept()
            if len(problems) < 2:
                QTimer.singleShot(0, lambda: on_dialog(qtbot, "password_dialog", answer))

        on_dialog(qtbot, "password_dialog", answer)
        the = make_launcher()
        assert the.start(None, "office", False)
        assert problems[0] == "" and "refused this password" in problems[1] and password not in problems[1]
        assert "FATAL" not in problems[1] and "authentication" not in problems[1]  # no driver text
        assert memory_keyring.store == {("workbench", profile.credential_id): password}
        window = the.window
        with qtbot.waitSignal(window.session.ready, timeout=20_000):
            pass
        with qtbot.waitSignal(window.session.claimed, timeout=20_000):
            window.next_button.click()
        logging.getLogger("workbench.test").error("password was %s", password)  # a careless log line
    finally:
        logs.close()
    # Nothing under the workbench home (profiles, gui.ini, journal, log) holds the password.
    home = Path(paths.config_dir()).parent
    files = [p for p in home.rglob("*") if p.is_file()]
    assert any(p.name == "workbench.log" for p in files) and any(p.name == "profiles.toml" for p in files)
    assert [p for p in files if password.encode() in p.read_bytes()] == []
    assert "password was ***" in logs.log_path().read_text()


def test_cancel_at_the_start_up_password_goes_back_to_the_connection_dialog(
    qtbot: Any, make_launcher: Any, pg_server: Any, tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    # Issue 50 (7): Cancel on the start-up password prompt quit with no message and no dialog.
    user, _password = pg_server.password_login()
    db, config = demo_files(tmp_path)
    profile = profiles.Profile(
        name="office",
        kind="postgresql",
        host=pg_server.host,
        port=pg_server.port,
        database="postgres",
        user=user,
        source="file",
        config=str(config),
    )
    profiles.ProfileStore().save(profile, make_default=True)
    seen: list[str] = []

    def change(dialog: Any) -> None:  # the connection dialog: switch to the SQLite demo file instead
        seen.append(dialog.objectName())
        fill(dialog, kind="sqlite", name="office", path=db, config=config)
        dialog.save_button.click()

    def cancel(dialog: Any) -> None:
        seen.append(dialog.objectName())
        dialog.reject()
        QTimer.singleShot(0, lambda: on_dialog(qtbot, "connection_dialog", change))

    on_dialog(qtbot, "password_dialog", cancel)
    the = make_launcher()
    started = the.start(None, None, False)
    assert seen == ["password_dialog", "connection_dialog"] and started, seen
    assert the.target is not None and the.target.profile is not None and the.target.profile.kind == "sqlite"
    with qtbot.waitSignal(the.window.session.ready, timeout=20_000):
        pass


def _grant_all(server: Any, database: str, user: str) -> None:
    import sqlalchemy as sa

    engine = sa.create_engine(server.url(database), isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.exec_driver_sql(f'GRANT ALL ON ALL TABLES IN SCHEMA public TO "{user}"')
        conn.exec_driver_sql(f'GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO "{user}"')
    engine.dispose()


def test_without_a_keyring_the_password_dialog_says_so(qtbot: Any) -> None:
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    try:
        gui_app.application()
        dialog = connect_dialog.PasswordDialog(
            profiles.Profile(name="o", kind="postgresql", host="h", database="d", user="u", source="database")
        )
        qtbot.addWidget(dialog)
        note = dialog.findChild(QWidget, "keyring_note")
        assert not dialog.remember.isEnabled() and not dialog.remembers()
        assert "no OS password store" in note.text() and "never written to a file" in note.text()
    finally:
        keyring.set_keyring(previous)


# -- switching ----------------------------------------------------------------------------------


def test_switching_profiles_keeps_the_held_item(
    qtbot: Any, make_launcher: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    the = two_profiles_open(make_launcher, tmp_path)
    first = the.window
    with qtbot.waitSignal(first.session.ready, timeout=20_000):
        pass
    with qtbot.waitSignal(first.session.claimed, timeout=20_000):
        first.next_button.click()
    held = first.session.current.lock.key
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    action = next(a for a in first.connection_menu.actions() if a.text() == "B")
    action.trigger()
    second = the.window
    assert second is not first and the.target.profile.name == "B" and not first.isVisible()
    # Heard from now on: the wait for the deletion below runs the event loop, and the second window's
    # queues may open during it (a waitSignal after it missed that `ready` and timed out).
    opened: list[object] = []
    second.session.ready.connect(opened.append)
    # Deleted, not only hidden: a window left behind by every switch would pile up for the day.
    qtbot.waitUntil(lambda: not shiboken6.isValid(first), timeout=5000)
    qtbot.waitUntil(lambda: bool(opened), timeout=20_000)
    assert door.engine(second.session.wb).engine.url.database.startswith(
        f"file:{(tmp_path / 'b' / demo.DB_NAME).as_posix()}"
    )
    # Back to A: the item is still ours, in the resume list.
    the.switch("A")
    with qtbot.waitSignal(the.window.session.ready, timeout=20_000) as ready:
        pass
    assert [lock.key for lock in ready.args[0]] == [held]


def test_switching_profiles_with_edits_the_journal_cannot_hold_asks_first(
    qtbot: Any, make_launcher: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.gui.conftest import on_dialog
    from tests.gui.test_journal_failure import _banner, _click, _repair, _typing_on_a_broken_disk

    the = two_profiles_open(make_launcher, tmp_path)
    first = the.window
    with qtbot.waitSignal(first.session.ready, timeout=20_000):
        pass
    directory, _ = _typing_on_a_broken_disk(qtbot, first, "Only in this window")
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    answered = on_dialog(qtbot, "journal_close_box", _click(QMessageBox.ButtonRole.RejectRole))
    action = next(a for a in first.connection_menu.actions() if a.text() == "B")
    action.trigger()
    # "Stay": the switch is called off, the window and its edits are still there.
    assert answered == ["journal_close_box"]
    assert the.window is first and first.isVisible() and the.target.profile.name == "A"
    assert first.form.field("resolution").toPlainText() == "Only in this window"
    _repair(directory)  # the disk is fixed: the edits reach the journal, closing asks nothing more
    qtbot.waitUntil(lambda: _banner(first) == "", timeout=5000)


# -- published queue settings -------------------------------------------------------------------


def test_newly_published_settings_reach_an_open_window(qtbot: Any, make_launcher: Any, tmp_path: Path) -> None:
    from workbench.config import loader
    from workbench.db import published, service

    db, config = demo_files(tmp_path)
    body = loader.queue_settings_text(config)
    with service.Workbench.open(loader.load(config)) as wb:
        published.publish(wb.engine, None, body, "sup")
    profiles.ProfileStore().save(
        profiles.Profile(name="shared", kind="sqlite", path=str(db), source="database"), make_default=True
    )
    the = make_launcher()
    assert the.start(None, None, False)
    first = the.window
    with qtbot.waitSignal(first.session.ready, timeout=20_000):
        pass
    assert first.session.settings_version == 1 and "Helpdesk cases" in first.windowTitle()
    with qtbot.waitSignal(first.session.claimed, timeout=20_000):
        first.next_button.click()
    with service.Workbench.open(loader.load(config)) as wb:
        published.publish(wb.engine, None, body.replace('title = "Helpdesk cases"', 'title = "Cases v2"'), "sup")
    # An item is open: the operator is told, nothing is reloaded under their hands.
    with qtbot.waitSignal(first.session.settings_changed, timeout=10_000) as changed:
        first.session.check_settings()
    assert changed.args == [2] and the.window is first
    assert "version 2" in first.info_banner.label.text() and first.info_banner.isVisible()
    # With the item done, a reload opens the new settings.
    with qtbot.waitSignal(first.session.completed, timeout=10_000):
        first.complete_buttons["resolved"].click()
    assert the.reload()
    assert the.window is not first and "Cases v2" in the.window.windowTitle()
    assert the.window.session.settings_version == 2


def test_a_server_that_is_not_there_offers_retry_and_edit(qtbot: Any, make_launcher: Any) -> None:
    port = servers.free_port()
    profiles.ProfileStore().save(
        profiles.Profile(
            name="gone",
            kind="postgresql",
            host="127.0.0.1",
            port=port,
            database="d",
            user="u",
            source="database",
            connect_timeout=2,
        )
    )
    texts: list[str] = []

    def cancel(box: Any) -> None:
        texts.extend((box.informativeText(), box.detailedText()))
        box.button(QMessageBox.StandardButton.Cancel).click()

    on_dialog(qtbot, "unreachable_box", cancel)
    the = make_launcher()
    assert not the.start(None, "gone", False)
    # Said in the window's language; the driver's English under Details.
    assert the.window is None and texts and "cannot be reached" in texts[0], texts
    assert "cannot reach the database" in texts[1], texts


def test_the_supervisor_console_opens_from_the_connection_menu(
    qtbot: Any, make_launcher: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    the = two_profiles_open(make_launcher, tmp_path)
    with qtbot.waitSignal(the.window.session.ready, timeout=20_000):
        pass
    with qtbot.waitSignal(the.window.session.claimed, timeout=20_000):
        the.window.next_button.click()
    next(a for a in the.window.connection_menu.actions() if a.objectName() == "action_supervisor").trigger()
    console = the.console
    assert console is not None and console.isVisible() and console.wb is the.window.session.wb
    qtbot.waitUntil(lambda: console.model.rowCount() == 1, timeout=20_000)
    assert console.model.rows[0].owner == "alice"
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    assert the.switch("B")
    assert the.console is None and not console.isVisible()  # it read the database that was closed
    qtbot.waitUntil(lambda: not shiboken6.isValid(console), timeout=5000)


def test_supervisor_only_opens_the_console(qtbot: Any, make_launcher: Any, tmp_path: Path) -> None:
    """`workbench --supervisor`: the console, not the operator window behind it."""
    db, config = demo_files(tmp_path)
    profiles.ProfileStore().save(sqlite_profile("office", db, config))
    the = make_launcher()
    the.show_operator = False
    assert the.start(None, "office", False)
    console = the.open_console()
    assert console is not None
    qtbot.waitUntil(console.isVisible, timeout=5000)
    assert the.window is not None and not the.window.isVisible()
    # The operator window the launcher built (the console reads through it) was never shown or started.
    assert the.window.session.current is None and not the.window.session.specs


def test_a_server_that_does_not_answer_is_waited_for_in_front_of_the_window(
    qtbot: Any, make_launcher: Any, tmp_path: Path
) -> None:
    # Issue 52: the window is there while the connection is made, the progress dialog in front of it.
    import socket

    from PySide6.QtWidgets import QProgressDialog

    from workbench.gui import main_window

    mute = socket.create_server(("127.0.0.1", 0))  # accepts connections (the backlog), never answers
    try:
        _db, config = demo_files(tmp_path)
        profiles.ProfileStore().save(
            profiles.Profile(
                name="mute",
                kind="postgresql",
                host="127.0.0.1",
                port=mute.getsockname()[1],
                database="d",
                user="u",
                source="file",
                config=str(config),
                connect_timeout=3,
            ),
            make_default=True,
        )
        shown: list[tuple[str, bool]] = []
        the = make_launcher()

        windows: list[main_window.MainWindow] = []

        def look() -> None:  # a second into connecting: what the user sees (main: no window yet)
            widget = getattr(the, "starting", None)
            if widget is not None and widget.isVisible():
                windows.append(widget)
                progress = widget.findChild(QProgressDialog, "connect_progress")
                shown.append((widget.connection_label.text(), progress is not None))
                if progress is not None:
                    progress.canceled.emit()  # as its Cancel button does

        QTimer.singleShot(1000, look)
        started = the.start(None, None, False)
        assert shown == [("Connecting…", True)], shown
        assert not started
        assert the.window is None and the.starting is None  # given up: the window went with it
        assert not windows[0].isVisible()
        # The abandoned connection times out on its thread (connect_timeout, 3 s from the start), and its
        # answer is dropped: no call of the launcher's left under way.
        qtbot.waitUntil(lambda: not the._dispatcher.busy, timeout=10_000)
    finally:
        mute.close()
