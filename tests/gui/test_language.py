"""The interface language (issue 17): the window in German, Qt's own buttons with it, and View ▸ Language."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from PySide6.QtCore import QLocale, QSettings, Qt
from PySide6.QtWidgets import QApplication, QLabel, QMessageBox

from tests.gui.conftest import close_window, with_queue
from workbench.core import errors
from workbench.db import notes, permissions, service
from workbench.db.supervision import Supervision
from workbench.gui import app as gui_app
from workbench.gui import dialogs, i18n, main_window, problem_text, times
from workbench.services import door, operator


@pytest.fixture
def german(qapp: QApplication) -> Iterator[None]:
    """The German translations for one test (widgets take their texts when built: install first)."""
    assert i18n.install(qapp, "de") == "de"
    yield
    i18n.install(qapp, "en")


@pytest.mark.parametrize("backend", ["sqlite"])
def test_the_window_speaks_german(german: None, qtbot: Any, open_window: Any, demo_config: Any) -> None:
    window = open_window(demo_config)
    assert window.next_button.text() == "Nächster Eintrag"
    assert window.mine_button.text() == "Meine unerledigten Einträge"
    assert [a.text() for a in window.menuBar().actions()] == ["&Eintrag", "&Ansicht", "&Hilfe"]
    assert window.connection_label.text().startswith("Verbunden als alice")
    assert window.named_actions["save"].text() == "&Speichern"
    assert window.named_actions["save"].statusTip() == "Änderungen speichern und den Eintrag behalten"
    with qtbot.waitSignal(window.session.claimed, timeout=10_000):
        qtbot.mouseClick(window.next_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.timer_label.text().startswith("Sperre auf"), timeout=3000)
    assert window.save_button.text() == "Speichern"
    assert window.complete_buttons[next(iter(window.complete_buttons))].toolTip().startswith("Abschließen als „")
    # What to fix at a field, in German too (the checks' messages are translated templates).
    editor = window.form.field("time_spent_min")
    editor.setText("bald")
    qtbot.mouseClick(window.save_button, Qt.MouseButton.LeftButton)
    assert window.form.error_text("time_spent_min") == "'bald' ist keine ganze Zahl"


@pytest.mark.parametrize("backend", ["sqlite"])
def test_nothing_to_claim_is_said_in_german(german: None, qtbot: Any, open_window: Any, demo_config: Any) -> None:
    window = open_window(demo_config)
    window.queue_picker.setCurrentIndex(window.queue_picker.findData("imports_review"))  # nothing completed yet
    qtbot.mouseClick(window.next_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "kein Eintrag wartet" in window.message_label.text(), timeout=10_000)
    assert "Nichts zu tun in Import review: kein Eintrag wartet." in window.message_label.text()  # the title


@pytest.mark.parametrize("backend", ["sqlite"])
def test_a_refused_undo_and_extend_are_said_in_german(
    german: None, qtbot: Any, open_window: Any, demo_config: Any
) -> None:
    config = with_queue(demo_config, "cases", max_lock_seconds=demo_config.queues["cases"].lock_seconds)
    window = open_window(config)
    with qtbot.waitSignal(window.session.claimed, timeout=10_000) as claimed:
        qtbot.mouseClick(window.next_button, Qt.MouseButton.LeftButton)
    lock = claimed.args[0].lock
    # At the queue's longest lock already: the limit, on the user's clock.
    with qtbot.waitSignal(window.session.failed, timeout=10_000):
        window.named_actions["extend"].trigger()
    expected = f"Die Sperre kann nicht über {times.clock(lock.expires_at)} hinaus verlängert werden"
    assert window.statusBar().currentMessage().startswith(expected)
    with qtbot.waitSignal(window.session.completed, timeout=10_000):
        qtbot.mouseClick(window.complete_buttons["resolved"], Qt.MouseButton.LeftButton)
    table = door.engine(window.session.wb).queue("cases").q.table
    with door.engine(window.session.wb).engine.begin() as conn:  # someone changes the item meanwhile
        conn.execute(sa.update(table).where(table.c.case_id == lock.key).values(status="waiting_customer"))
    with qtbot.waitSignal(window.session.failed, timeout=10_000):
        window.named_actions["undo"].trigger()
    assert window.statusBar().currentMessage() == (
        f"Helpdesk cases {lock.key} wurde geändert, seit Sie es abgeschlossen haben: Rückgängig ist nicht möglich; "
        "ein Supervisor kann den Eintrag wieder öffnen"
    )


@pytest.mark.parametrize("backend", ["sqlite"])
def test_a_supervisors_refusals_and_a_long_note_are_said_in_german(german: None, demo_config: Any) -> None:
    titles = {"cases": "Helpdesk cases"}
    with service.Workbench.open(demo_config) as wb:
        cases = wb.queue("cases")
        table = cases.q.table
        with wb.engine.connect() as conn:
            key = conn.execute(sa.select(sa.func.min(table.c.case_id))).scalar_one()
        with pytest.raises(errors.LockLost) as lost:  # nobody holds it (any more)
            Supervision(cases).force_release("sam", key, "Shift ended")
        assert problem_text.message(lost.value, titles) == f"Helpdesk cases {key} ist von niemandem gesperrt"
        with pytest.raises(errors.InvalidValue) as missing:  # a key typed in the history tab
            Supervision(cases).reopen("sam", 999999, "typo")
        assert (
            problem_text.message(missing.value, titles) == "case_id: cases hat keinen Eintrag mit dem Schlüssel 999999"
        )
        with wb.engine.begin() as conn:  # sam becomes the first supervisor; bob is none
            permissions.grant(conn, None, "sam", "sam", "supervisor")
        with pytest.raises(errors.NotPermitted) as refused:
            Supervision(cases).force_release("bob", key, "Shift ended")
        assert problem_text.message(refused.value, titles) == (
            f"bob darf „Helpdesk cases {key} zwangsweise freigeben“ nicht: nur Supervisoren dürfen das, und bob ist "
            "in der Rollentabelle dieser Datenbank keiner (Supervisoren: sam); ein Supervisor erteilt das Recht mit "
            "`workbench --user NAME role grant bob supervisor`"
        )
        assert str(refused.value).startswith(f"bob may not force-release cases {key}: only supervisors may")
    with pytest.raises(errors.UsageError) as long:
        notes.checked("x" * 4001)
    assert (
        problem_text.message(long.value, titles)
        == "Eine Notiz fasst höchstens 4000 Zeichen (4001 eingegeben); kürzen Sie sie oder teilen Sie sie in zwei"
    )
    # A user's name first, not a queue's: no title put there even when a queue is named like the user.
    said = problem_text.message(permissions.login_mismatch_error("cases", "bob"), titles)
    assert said.startswith("Die Sperre von cases kann nicht von der Datenbankanmeldung bob aus verwendet werden")


def test_qt_standard_buttons_follow_the_language(german: None) -> None:
    box = QMessageBox(
        QMessageBox.Icon.Question, "t", "x", QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel
    )
    assert sorted(button.text() for button in box.buttons()) == ["&Ja", "Abbrechen"]
    pick = dialogs.PickDialog(_pick_list(2))
    assert pick.windowTitle() == "Eintrag auswählen"
    assert pick.findChildren(QLabel)[0].text() == "2 wartende Einträge, in der Reihenfolge der Warteschlange:"


def _pick_list(count: int) -> operator.PickList:
    return operator.PickList(
        key_name="id", rows=[{"id": i} for i in range(1, count + 1)], labels={"id": "ID"}, waiting=count
    )


def test_french_plural_forms(qapp: QApplication) -> None:
    try:
        assert i18n.install(qapp, "fr") == "fr"
        one = dialogs.PickDialog(_pick_list(1)).findChildren(QLabel)[0].text()
        two = dialogs.PickDialog(_pick_list(2)).findChildren(QLabel)[0].text()
        assert (one, two) == (
            "1 élément en attente, dans l'ordre de la file :",
            "2 éléments en attente, dans l'ordre de la file :",
        )
    finally:
        i18n.install(qapp, "en")


def test_the_language_resolves_from_the_choice_or_the_system() -> None:
    assert set(i18n.available()) >= {"en", "de", "fr"}
    assert i18n.resolve("fr") == "fr"
    assert i18n.resolve("", QLocale("de_AT")) == "de"
    assert i18n.resolve("", QLocale("fr_CA")) == "fr"
    assert i18n.resolve("", QLocale("es_ES")) == "en"  # not spoken: English
    assert i18n.resolve("xx") == "en"


def test_the_environment_beats_the_users_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = QSettings(str(tmp_path / "gui.ini"), QSettings.Format.IniFormat)
    settings.setValue(i18n.SETTING, "fr")
    monkeypatch.delenv(i18n.ENV)
    assert i18n.chosen(settings) == "fr"
    monkeypatch.setenv(i18n.ENV, "de")
    assert i18n.chosen(settings) == "de"
    monkeypatch.delenv(i18n.ENV)
    assert i18n.chosen(None) == ""  # the system's


@pytest.mark.parametrize("backend", ["sqlite"])
def test_view_menu_stores_the_language_for_the_next_start(
    qtbot: Any, open_window: Any, demo_config: Any, tmp_path: Path
) -> None:
    window: main_window.MainWindow = open_window(demo_config, home=tmp_path / "home")
    names = [a.text() for a in window.language_menu.actions()]
    assert names == ["&System default", "&English", "&Deutsch", "&Français"]
    assert window.findChild(type(window.named_actions["save"]), "language_system").isChecked()
    window.findChild(type(window.named_actions["save"]), "language_de").trigger()
    notice = window.findChild(QMessageBox, "language_notice")
    assert notice is not None and "next time" in notice.text()
    notice.accept()
    assert gui_app.user_settings(tmp_path / "home", "alice").value(i18n.SETTING) == "de"
    close_window(qtbot, window)
    # The next start reads it (unless $WORKBENCH_LANG says otherwise, as the tests' conftest does).
    assert i18n.chosen(gui_app.user_settings(tmp_path / "home", "alice")) == "en"
    assert str(gui_app.user_settings(tmp_path / "home", "alice").value(i18n.SETTING)) == "de"


def test_the_password_store_missing_is_said_in_german(german: None, qtbot: Any) -> None:
    """The keyring's reason came from the engine in English ("Nicht gemerkt: no OS password store …")."""
    from PySide6.QtWidgets import QCheckBox

    from workbench import credentials
    from workbench.gui import connect_dialog

    box = QCheckBox()
    qtbot.addWidget(box)
    status = credentials.KeyringStatus(False, "fail Keyring", credentials.NO_PASSWORD_STORE)
    connect_dialog._describe_keyring(box, status)
    assert box.toolTip().startswith("Nicht gemerkt: ")
    assert "password store" not in box.toolTip() and "available on this computer" not in box.toolTip()
