"""Every window and dialog gives each Alt letter to one control, in every language: with two owners
Alt+letter only moves the focus between them instead of acting (Qt matches the letters case-insensitively)."""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QGroupBox,
    QLabel,
    QMainWindow,
    QMenu,
    QMessageBox,
    QPushButton,
    QTabBar,
    QWidget,
)

from tests.gui.test_accessibility import supervisor_and_draft_dialogs
from tests.gui.test_connections import two_profiles_open
from tests.gui.test_supervisor import console  # noqa: F401  (the fixture: a console on the demo)
from workbench.config import profiles
from workbench.gui import connect_dialog, dialogs, hotkeys, i18n, shortcuts_dialog
from workbench.services import operator


def letter(text: str) -> str:
    """The Alt key of a text as Qt reads it ("&&" is a literal ampersand), "" when it has none."""
    return QKeySequence.mnemonic(text).toString(QKeySequence.SequenceFormat.PortableText).lower()


def owners(top: QWidget) -> list[tuple[str, str]]:
    """(Alt key, text) of everything in `top` shown now that answers to an Alt letter: buttons (check and radio
    boxes too), labels with a buddy, group box titles, tabs, and a main window's menu titles."""
    found: list[tuple[str, str]] = []
    for widget in [top, *top.findChildren(QWidget)]:
        if widget is not top and not widget.isVisibleTo(top):
            continue
        texts: list[str] = []
        if isinstance(widget, QAbstractButton) or (isinstance(widget, QLabel) and widget.buddy() is not None):
            texts = [widget.text()]  # a label without a buddy shows its "&" and takes no key
        elif isinstance(widget, QGroupBox):
            texts = [widget.title()]
        elif isinstance(widget, QTabBar):
            texts = [widget.tabText(i) for i in range(widget.count()) if widget.isTabVisible(i)]
        found += [(letter(text), text) for text in texts]
    if isinstance(top, QMainWindow):
        found += [(letter(a.text()), a.text()) for a in top.menuBar().actions() if a.isVisible()]
    return [(key, text) for key, text in found if key]


def menu_owners(menu: QMenu) -> list[tuple[str, str]]:
    """(Alt key, text) of a menu's entries (its submenus' titles too)."""
    return [(letter(a.text()), a.text()) for a in menu.actions() if a.isVisible() and letter(a.text())]


def clashes(found: list[tuple[str, str]]) -> dict[str, list[str]]:
    """Each Alt key taken by more than one text, with those texts."""
    by_key: dict[str, list[str]] = defaultdict(list)
    for key, text in found:
        by_key[key].append(text)
    return {key: texts for key, texts in by_key.items() if len(texts) > 1}


def all_menus(window: QMainWindow) -> list[QMenu]:
    """The menus of a main window's menu bar and their submenus."""
    menus: list[QMenu] = []
    pending = [a.menu() for a in window.menuBar().actions() if a.menu() is not None]
    while pending:
        menu = pending.pop(0)
        menus.append(menu)
        pending += [a.menu() for a in menu.actions() if a.menu() is not None]
    return menus


@pytest.fixture(params=["en", "de", "fr"])
def language(request: pytest.FixtureRequest, qapp: QApplication) -> Iterator[str]:
    """The language for one test (widgets take their texts when built: install first)."""
    assert i18n.install(qapp, request.param) == request.param
    yield str(request.param)
    i18n.install(qapp, "en")


def _clashes(top: QWidget, where: str) -> list[str]:
    """The Alt keys `top` gives to more than one control now, named with where it was seen."""
    return [f"{where} {top.objectName()}: {key} {texts}" for key, texts in clashes(owners(top)).items()]


def test_the_check_sees_a_clash_and_reads_ampersands_as_qt_does(qtbot: Any) -> None:
    assert [letter(t) for t in ("&Save", "Dri&ver:", "R&&D", "R&&&D", "No letter")] == [
        "alt+s",
        "alt+v",
        "",
        "alt+d",
        "",
    ]
    dialog = dialogs.NoteDialog("t", "x")
    qtbot.addWidget(dialog)
    dialog.layout().addWidget(QPushButton("&Next"))  # the note box's label is "&Note:"
    dialog.show()
    assert list(clashes(owners(dialog))) == ["alt+n"]


def test_the_connection_dialog_in_every_state(language: str, qtbot: Any) -> None:
    found: list[str] = []
    # The rows shown depend on the database, the login (Windows account), and where the settings come from.
    edited = profiles.Profile(
        name="Helpdesk", kind="postgresql", host="db", database="helpdesk", user="bob", source="database"
    )
    for first_run, profile in ((True, None), (False, edited)):
        dialog = connect_dialog.ConnectionDialog(profile, first_run=first_run, message="refused")
        qtbot.addWidget(dialog)
        dialog.show()
        for index, windows, from_file in itertools.product(range(dialog.kind.count()), (False, True), (False, True)):
            dialog.kind.setCurrentIndex(index)
            dialog.windows_auth.setChecked(windows)
            (dialog.from_file if from_file else dialog.from_db).setChecked(True)
            dialog._show("refused", "fail", "FATAL: password authentication failed")  # Details shown too
            found += _clashes(dialog, f"{language} {dialog.kind.currentText()} windows={windows} file={from_file}")
        dialog.close()
    prompt = connect_dialog.PasswordDialog(edited, "the database refused the login")
    qtbot.addWidget(prompt)
    prompt.show()
    found += _clashes(prompt, language)
    assert found == []


def test_the_operators_and_supervisors_dialogs(language: str, qtbot: Any) -> None:
    found: list[str] = []
    pick = operator.PickList(
        key_name="case_id",
        rows=[{"case_id": 1, "subject": "x"}],
        labels={"case_id": "Case", "subject": "Subject"},
        waiting=1,
    )
    for dialog in (
        dialogs.ReleaseDialog("Helpdesk cases 7", True, note_required=True),
        dialogs.ReleaseDialog("Helpdesk cases 7", False),
        dialogs.NoteDialog("Complete as “Resolve”", "This queue needs a note."),
        dialogs.DeferDialog("Helpdesk cases 7", True, note_required=True),
        dialogs.DeferDialog("Helpdesk cases 7", False),
        shortcuts_dialog.ShortcutsDialog(hotkeys.Keymap(), ["Resolve", "Wait for customer"]),
        dialogs.PickDialog(pick),
        *supervisor_and_draft_dialogs(),
    ):
        qtbot.addWidget(dialog)
        dialog.show()
        found += _clashes(dialog, language)
        dialog.close()
    assert found == []


def _menu_clashes(window: Any, where: str) -> list[str]:
    """Two entries of one menu with one Alt letter, and entries without one (a keyboard user then
    reaches them only with the arrow keys)."""
    return [
        f"{where} menu {menu.title()}: {key} {texts}"
        for menu in all_menus(window)
        for key, texts in clashes(menu_owners(menu)).items()
    ] + [
        f"{where} menu {menu.title()}: no Alt letter in {a.text()!r}"
        for menu in all_menus(window)
        for a in menu.actions()
        if a.isVisible() and not a.isSeparator() and not letter(a.text()) and not a.objectName().startswith("profile_")
    ]  # connection profiles: names people gave


def test_the_operator_window_its_menus_and_the_quit_question(
    language: str, qtbot: Any, make_launcher: Any, tmp_path: Path
) -> None:
    found: list[str] = []
    the = two_profiles_open(make_launcher, tmp_path)  # with the launcher's Connection menu, as people see it
    window = the.window
    with qtbot.waitSignal(window.session.ready, timeout=20_000):
        pass
    found += _clashes(window, f"{language} start page")
    window.show_resume()
    assert window.resume_panel.isVisible()
    found += _clashes(window, f"{language} unfinished items")
    with qtbot.waitSignal(window.session.claimed, timeout=20_000):
        window.next_item()
    found += _clashes(window, f"{language} item page")
    found += _menu_clashes(window, language)
    window.form.field("resolution").setPlainText("Half way")  # touched: closing asks
    window.close()
    qtbot.waitUntil(lambda: window.quit_guard.question is not None, timeout=10_000)
    box: QMessageBox = window.quit_guard.question
    found += _clashes(box, f"{language} quit question")
    box.findChild(QWidget, "quit_cancel").click()
    assert found == []


@pytest.mark.parametrize("backend", ["sqlite"])
def test_the_supervisor_console_on_every_tab(language: str, qtbot: Any, console: Any) -> None:
    found: list[str] = []
    window = console()
    for tab in range(window.tabs.count()):
        window.tabs.setCurrentIndex(tab)
        found += _clashes(window, f"{language} {window.tabs.tabText(tab)}")
    found += _menu_clashes(window, language)
    assert found == []
