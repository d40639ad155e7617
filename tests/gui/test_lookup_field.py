"""The lookup field in the real window: type the first letters, then at most Down and Enter."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt

from tests.gui.conftest import row
from workbench import fieldspec
from workbench.core import models
from workbench.gui import lookup_field, main_window


def _claim_import(qtbot: Any, window: main_window.MainWindow) -> Any:
    window.queue_picker.setCurrentIndex(window.queue_picker.findData("imports"))
    qtbot.waitUntil(lambda: window.session.queue_name == "imports", timeout=10_000)
    with qtbot.waitSignal(window.session.claimed, timeout=10_000) as signal:
        qtbot.mouseClick(window.next_button, Qt.MouseButton.LeftButton)
    return signal.args[0]


def _start_typing(qtbot: Any, picker: lookup_field.LookupEdit, letters: str) -> None:
    # The window the operator types in is the active one; under Xvfb (no window manager) only once
    # asked to be: the list opens for the field that has the keyboard, not for a window behind.
    picker.window().activateWindow()
    qtbot.waitUntil(picker.window().isActiveWindow, timeout=10_000)
    picker.setFocus()
    picker.selectAll()
    qtbot.keyClick(picker, Qt.Key.Key_Delete)
    qtbot.keyClicks(picker, letters)
    qtbot.waitUntil(picker._popup.isVisible, timeout=10_000)


def _rows(picker: lookup_field.LookupEdit) -> list[str]:
    model = picker._popup.model()
    return [model.index(i, 0).data() for i in range(model.rowCount())]


def test_picking_a_vendor_by_keyboard_takes_a_key_per_row_after_the_letters(
    qtbot: Any, open_window: Any, demo_config: Any
) -> None:
    window = open_window(demo_config)
    claim = _claim_import(qtbot, window)
    picker = window.form.field("vendor")
    assert isinstance(picker, lookup_field.LookupEdit)
    # The stored key is shown as its row: the name and, to tell rows apart, the city.
    qtbot.waitUntil(lambda: "(" in picker.text(), timeout=10_000)
    assert picker.text().startswith(claim.item["vendor"])
    _start_typing(qtbot, picker, "gr")
    # Starting with the letters first, then containing them; the first row is highlighted already.
    assert _rows(picker) == ["Granite IT Services (Brno)", "Evergreen Catering (Porto)"]
    keys = [Qt.Key.Key_Down, Qt.Key.Key_Return]  # the second row: 2 keys after the letters (at most 3)
    for key in keys:
        qtbot.keyClick(picker._popup, key)
    assert picker.text() == "Evergreen Catering (Porto)" and not picker._popup.isVisible()
    assert window.form.changes() == {"vendor": "Evergreen Catering"}  # the key is what is stored
    with qtbot.waitSignal(window.session.saved, timeout=10_000):
        window.save()
    assert row(window, "imports", claim.lock.key)["vendor"] == "Evergreen Catering"

    # Enter alone picks the first row; a letter more narrows it in the database.
    _start_typing(qtbot, picker, "i")
    qtbot.keyClick(picker._popup, Qt.Key.Key_Return)
    assert window.form.changes() == {"vendor": "Iris Telecom"}  # the only vendor starting with i
    _start_typing(qtbot, picker, "servi")  # no vendor starts so: those containing it
    assert _rows(picker) == ["Delta Cleaning Services (Graz)", "Granite IT Services (Brno)"]


class _Slow:
    """A source whose answers come back when the test says, in any order."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, Any]] = []
        self.cancelled: list[int] = []

    def search(self, column: str, text: str, done: Any) -> int:
        self.asked.append((text, done))
        return len(self.asked)

    def resolve(self, column: str, key: Any, done: Any) -> int:
        return 0

    def cancel(self, request: int) -> None:
        self.cancelled.append(request)


def test_an_answer_to_older_letters_is_dropped(qtbot: Any) -> None:
    spec = fieldspec.FieldSpec("vendor", "Vendor", "text", False, True, lookup="vendors")
    source = _Slow()
    picker = lookup_field.LookupEdit(spec, source)
    qtbot.addWidget(picker)
    picker.show()
    picker.setFocus()
    qtbot.keyClicks(picker, "a")
    qtbot.waitUntil(lambda: len(source.asked) == 1, timeout=5_000)
    qtbot.keyClicks(picker, "c")
    qtbot.waitUntil(lambda: len(source.asked) == 2, timeout=5_000)
    assert source.cancelled == [1]  # the search for "a" is no longer wanted
    source.asked[1][1]([models.Choice("Acme", "Acme")])
    source.asked[0][1]([models.Choice("Apex", "Apex")])  # late, and for "a": dropped
    assert _rows(picker) == ["Acme"]
    qtbot.keyClick(picker, Qt.Key.Key_Return)
    assert (picker.key(), picker.text()) == ("Acme", "Acme")
    qtbot.keyClicks(picker, "x")  # typed on: no longer the picked row, the text is what Save checks
    assert picker.key() == "Acmex"


def test_a_second_answer_adds_its_rows_below_and_keeps_the_highlight(qtbot: Any) -> None:
    """A large table's rows inside names come after the first answer: added below, the row the user
    moved to still highlighted, Enter picks it."""
    spec = fieldspec.FieldSpec("vendor", "Vendor", "text", False, True, lookup="vendors")
    source = _Slow()
    picker = lookup_field.LookupEdit(spec, source)
    qtbot.addWidget(picker)
    picker.show()
    picker.activateWindow()
    picker.setFocus()
    qtbot.keyClicks(picker, "acm")
    qtbot.waitUntil(lambda: len(source.asked) == 1, timeout=5_000)
    first = [models.Choice("Acme", "Acme"), models.Choice("Acme Tools", "Acme Tools")]
    source.asked[0][1](first)
    qtbot.waitUntil(picker._popup.isVisible, timeout=5_000)
    qtbot.keyClick(picker._popup, Qt.Key.Key_Down)  # to "Acme Tools"
    source.asked[0][1]([*first, models.Choice("The Acme Shop", "The Acme Shop")])
    assert _rows(picker) == ["Acme", "Acme Tools", "The Acme Shop"]
    assert picker._popup.currentIndex().row() == 1
    qtbot.keyClick(picker._popup, Qt.Key.Key_Return)
    assert (picker.key(), picker.text()) == ("Acme Tools", "Acme Tools")
