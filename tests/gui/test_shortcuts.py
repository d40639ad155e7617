"""Per-user keyboard shortcuts: the dialog refuses a key twice, a changed key works and is kept for the
next start, and the single-key mode acts only outside text fields."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QApplication, QDialog, QDialogButtonBox

from tests.gui.conftest import row
from workbench.gui import app as gui_app
from workbench.gui import hotkeys, shortcuts_dialog

pytestmark = pytest.mark.parametrize("backend", ["sqlite"])  # keys, not databases


def _ok(dialog: shortcuts_dialog.ShortcutsDialog) -> Any:
    return dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)


def test_a_key_set_twice_is_refused_until_changed(qtbot: Any, backend: str) -> None:
    dialog = shortcuts_dialog.ShortcutsDialog(hotkeys.Keymap(), ["Resolve", "Wait for customer"])
    qtbot.addWidget(dialog)
    dialog.show()
    assert _ok(dialog).isEnabled()
    dialog.editors["save"].setKeySequence(QKeySequence("Ctrl+N"))
    assert not _ok(dialog).isEnabled()
    assert dialog.problem.isVisible()
    assert "Ctrl+N" in dialog.problem.text() and "Next item" in dialog.problem.text()
    dialog.editors["save"].setKeySequence(QKeySequence("Ctrl+C"))  # copying in the fields needs it
    assert not _ok(dialog).isEnabled() and "Ctrl+C" in dialog.problem.text()
    dialog.editors["save"].setKeySequence(QKeySequence("S"))  # would be typed into the fields
    assert not _ok(dialog).isEnabled()
    dialog.editors["save"].setKeySequence(QKeySequence("Alt+S"))
    assert _ok(dialog).isEnabled() and not dialog.problem.isVisible()
    assert dialog.keymap().keys["save"] == "Alt+S"
    assert "Wait for customer" in dialog.table.item(dialog.action_names.index("outcome2"), 0).text()
    qtbot.mouseClick(dialog.findChild(type(_ok(dialog)), "restore_defaults"), Qt.MouseButton.LeftButton)
    assert dialog.keymap() == hotkeys.Keymap()


def test_a_changed_key_works_and_is_kept_for_the_next_start(
    qtbot: Any, open_window: Any, demo_config: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    home = tmp_path / "home"
    window = open_window(demo_config, home=home)

    def change_next(dialog: shortcuts_dialog.ShortcutsDialog) -> int:
        dialog.editors["next"].setKeySequence(QKeySequence("F2"))
        dialog.editors["complete"].clear()  # no key at all is allowed
        return QDialog.DialogCode.Accepted.value

    monkeypatch.setattr(shortcuts_dialog.ShortcutsDialog, "exec", change_next)
    window.named_actions["shortcuts"].trigger()
    assert window.named_actions["next"].shortcut().toString() == "F2"
    assert "F2" in window.next_button.toolTip()
    window.activateWindow()
    with qtbot.waitSignal(window.session.claimed, timeout=10_000):
        qtbot.keyClick(window, Qt.Key.Key_F2)
    assert window.named_actions["complete"].shortcuts() == [QKeySequence("Ctrl+Enter")]  # the keypad's stays
    stored = gui_app.user_settings(home, "alice")
    assert hotkeys.Keymap.load(stored).keys["next"] == "F2"
    assert hotkeys.Keymap.load(stored).keys["complete"] == ""
    assert stored.value("shortcuts/save") is None  # defaults are not written: later changes reach the user


def test_a_hand_edited_conflict_falls_back_to_the_defaults(qtbot: Any, tmp_path: Path, backend: str) -> None:
    gui_app.application()
    settings = gui_app.user_settings(tmp_path)
    settings.setValue("shortcuts/save", "Ctrl+N")
    settings.setValue("shortcuts/single_key", "true")
    keymap = hotkeys.Keymap.load(settings)
    assert keymap.keys == hotkeys.DEFAULTS and keymap.single_key


def test_single_keys_act_only_outside_text_fields(
    qtbot: Any, open_window: Any, demo_config: Any, monkeypatch: Any
) -> None:
    window = open_window(demo_config)
    assert QKeySequence("N") not in window.named_actions["next"].shortcuts()  # off by default

    def single_keys(dialog: shortcuts_dialog.ShortcutsDialog) -> int:
        dialog.single_key.setChecked(True)
        return QDialog.DialogCode.Accepted.value

    monkeypatch.setattr(shortcuts_dialog.ShortcutsDialog, "exec", single_keys)
    window.named_actions["shortcuts"].trigger()
    window.activateWindow()
    window.next_button.setFocus()
    with qtbot.waitSignal(window.session.claimed, timeout=10_000) as claimed:
        qtbot.keyClick(window.next_button, Qt.Key.Key_N)
    window.session.dispatcher.wait()
    key = claimed.args[0].lock.key
    resolution = window.form.field("resolution")
    qtbot.waitUntil(lambda: QApplication.focusWidget() is resolution)
    qtbot.keyClicks(resolution, "Fixed in 1 go")  # "1" is typed, not an outcome
    assert window.session.current is not None and "Fixed in 1 go" in resolution.toPlainText()
    window.save_button.setFocus()
    with qtbot.waitSignal(window.session.completed, timeout=10_000):
        qtbot.keyClick(window.save_button, Qt.Key.Key_2)  # the second outcome
    stored = row(window, "cases", key)
    assert (stored["status"], stored["resolution"]) == ("waiting_customer", "Fixed in 1 go")


# -- the window's own keys: the menus' letters (in the language shown) and fixed keys ------------------


@pytest.fixture
def tried_keys(monkeypatch: Any) -> dict[str, str]:
    """Help ▸ Keyboard shortcuts, as the window opens it: each key of `tried_keys` is set for Save in turn
    and replaced by what the dialog says about it ("" = accepted); nothing is kept."""
    tried: dict[str, str] = {}

    def try_them(dialog: shortcuts_dialog.ShortcutsDialog) -> int:
        for key in tried:
            dialog.editors["save"].setKeySequence(QKeySequence(key))
            tried[key] = "" if _ok(dialog).isEnabled() else dialog.problem.text()
        return QDialog.DialogCode.Rejected.value

    monkeypatch.setattr(shortcuts_dialog.ShortcutsDialog, "exec", try_them)
    return tried


def _launched(make_launcher: Any, tmp_path: Path) -> Any:
    """A window opened by the launcher, with its Connection menu and the Supervisor console key."""
    from tests.gui.test_connections import demo_files, sqlite_profile
    from workbench.config import profiles

    db, config = demo_files(tmp_path)
    profiles.ProfileStore().save(sqlite_profile("Office", db, config), make_default=True)
    the = make_launcher()
    assert the.start(None, None, False)
    return the.window


def test_the_windows_fixed_keys_are_refused_naming_what_has_them(
    qtbot: Any, make_launcher: Any, tmp_path: Path, tried_keys: dict[str, str], backend: str
) -> None:
    window = _launched(make_launcher, tmp_path)
    tried_keys.update(dict.fromkeys(["Ctrl+Shift+S", "Alt+C", "Alt+I", "Ctrl+Enter", "Alt+E"], "?"))
    window.named_actions["shortcuts"].trigger()
    assert tried_keys["Ctrl+Shift+S"] == "Ctrl+Shift+S is the fixed key of “Supervisor console”; choose another key."
    assert tried_keys["Alt+C"] == "Alt+C opens the menu “Connection”; choose another key."
    assert tried_keys["Alt+I"] == "Alt+I opens the menu “Item”; choose another key."
    assert "Ctrl+Enter" in tried_keys["Ctrl+Enter"] and "Complete the item" in tried_keys["Ctrl+Enter"]
    assert tried_keys["Alt+E"] == ""  # no English menu starts with E


def test_the_menu_letters_follow_the_language(
    qtbot: Any, qapp: QApplication, make_launcher: Any, tmp_path: Path, tried_keys: dict[str, str], backend: str
) -> None:
    from workbench.gui import i18n

    assert i18n.install(qapp, "de") == "de"
    try:
        window = _launched(make_launcher, tmp_path)
        tried_keys.update(dict.fromkeys(["Alt+E", "Alt+A", "Alt+V", "Alt+I", "Ctrl+Shift+S"], "?"))
        window.named_actions["shortcuts"].trigger()
    finally:
        i18n.install(qapp, "en")
    assert tried_keys["Alt+E"] == "Alt+E öffnet das Menü „Eintrag“; wählen Sie eine andere Taste."
    assert "„Ansicht“" in tried_keys["Alt+A"] and "„Verbindung“" in tried_keys["Alt+V"]
    assert tried_keys["Alt+I"] == ""  # "Item" is "Eintrag" here: Alt+I is free
    assert "„Supervisor-Konsole“" in tried_keys["Ctrl+Shift+S"]


def test_a_stored_key_that_became_a_menu_letter_falls_back_to_the_defaults(
    qtbot: Any, qapp: QApplication, open_window: Any, demo_config: Any, tmp_path: Path, backend: str
) -> None:
    from workbench.gui import i18n

    home = tmp_path / "home"
    stored = gui_app.user_settings(home)
    stored.setValue("shortcuts/save", "Alt+E")  # chosen in English, where no menu has E
    stored.sync()
    assert i18n.install(qapp, "de") == "de"
    try:
        window = open_window(demo_config, home=home)  # in German "&Eintrag" opens with Alt+E
    finally:
        i18n.install(qapp, "en")
    assert window.keymap.keys == hotkeys.DEFAULTS
    assert window.named_actions["save"].shortcut() == QKeySequence("Ctrl+S")
