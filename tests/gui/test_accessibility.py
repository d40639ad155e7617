"""Every control people use has a name a screen reader can say: the windows and dialogs walked."""

from __future__ import annotations

import datetime as dt
import itertools
from typing import Any

from PySide6.QtCharts import QChartView
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QAccessible
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QTextEdit,
    QWidget,
)

from tests.gui.test_supervisor import console  # noqa: F401  (the fixture: a console on the demo)
from workbench.core import models
from workbench.gui import dialogs, hotkeys, main_window, shortcuts_dialog
from workbench.services import operator

INTERACTIVE = (QAbstractButton, QLineEdit, QComboBox, QPlainTextEdit, QTextEdit, QAbstractSpinBox, QAbstractItemView)


def unnamed(top: QWidget) -> list[str]:
    """The visible controls of `top` that take focus and have no accessible name; a list box that cannot
    be typed in without a label naming it (its buddy): over AT-SPI a screen reader says such a box's
    value, not its accessible name (../shared/notes/platform.md §12). Charts too: they show, not take."""
    found = []
    buddies = {id(label.buddy()) for label in top.findChildren(QLabel) if label.buddy() is not None}
    for widget in top.findChildren(QWidget):
        if not isinstance(widget, (*INTERACTIVE, QChartView)) or not widget.isVisibleTo(top):
            continue
        # A button Tab does not reach is still one a screen reader lists and clicks (a line edit's clear
        # button, which shows once there is text: issue 53).
        if widget.focusPolicy() == Qt.FocusPolicy.NoFocus and not isinstance(widget, (QChartView, QAbstractButton)):
            continue
        if isinstance(widget.parentWidget(), (QComboBox, QAbstractSpinBox)):
            continue  # the editor inside a combo or spin box: the screen reader names its parent
        what = f"{type(widget).__name__} {widget.objectName() or '(no object name)'}"
        face = QAccessible.queryAccessibleInterface(widget)
        if face is None or not face.text(QAccessible.Text.Name).strip():
            found.append(what)
        elif isinstance(widget, QComboBox) and not widget.isEditable() and id(widget) not in buddies:
            found.append(f"{what} (no label)")
    return found


def test_the_operator_window_names_every_control(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    window = open_window(demo_config)
    assert unnamed(window) == []  # the start page
    with qtbot.waitSignal(window.session.claimed, timeout=10_000):
        window.next_item()
    assert window.stack.currentIndex() == main_window.ITEM
    assert unnamed(window) == []  # the form, the notes panel, the actions
    assert window.form.field("subject").accessibleName() == "Subject"
    assert window.form.field("subject").accessibleDescription() == "Required"
    window.show_resume()
    assert unnamed(window) == []


# An escalate (its own newest event: waiting for a supervisor), for the dialog that lists them.
_escalate = models.Event(
    1, "cases", "7", models.EventKind.ESCALATE, "ann", "ann", None, dt.datetime(2026, 1, 1), reason="legal"
)


def test_the_operators_dialogs_name_every_control(qtbot: Any) -> None:
    for dialog in (
        dialogs.ReleaseDialog("Helpdesk cases 7", True, note_required=True),
        dialogs.NoteDialog("Complete as “Resolve”", "This queue needs a note."),
        dialogs.DeferDialog("Helpdesk cases 7", True, note_required=True),
        shortcuts_dialog.ShortcutsDialog(hotkeys.Keymap(), ["Resolve", "Wait for customer"]),
        dialogs.PickDialog(
            operator.PickList(
                key_name="case_id",
                rows=[{"case_id": 1, "subject": "x"}],
                labels={"case_id": "Case", "subject": "Subject"},
                waiting=1,
            )
        ),
        dialogs.EscalationsDialog([(_escalate, _escalate)], lambda event: ""),
    ):
        qtbot.addWidget(dialog)
        dialog.show()
        for edit in dialog.findChildren(QLineEdit):
            if edit.isClearButtonEnabled() and not edit.text():
                edit.setText("7")  # its clear button shows
        assert unnamed(dialog) == [], dialog.objectName()


def test_the_supervisor_console_names_every_control(qtbot: Any, console: Any) -> None:
    window = console()
    window.holder_filter.setText("an")  # its clear button shows
    for tab in range(window.tabs.count()):
        window.tabs.setCurrentIndex(tab)
        assert unnamed(window) == [], window.tabs.tabText(tab)


def test_the_connection_dialogs_name_every_control(qtbot: Any) -> None:
    from workbench.config import profiles
    from workbench.gui import connect_dialog

    dialog = connect_dialog.ConnectionDialog(first_run=True)
    qtbot.addWidget(dialog)
    dialog.show()
    for index in range(dialog.kind.count()):  # each database shows its own rows (file, server, ODBC, TLS)
        dialog.kind.setCurrentIndex(index)
        assert unnamed(dialog) == [], dialog.kind.currentText()
    profile = profiles.Profile(
        name="Helpdesk", kind="postgresql", host="db", database="helpdesk", user="bob", source="database"
    )
    prompt = connect_dialog.PasswordDialog(profile, "the database refused the login")
    qtbot.addWidget(prompt)
    with qtbot.waitSignal(prompt.announcer.announced, timeout=5000) as said:
        prompt.show()  # why it asks again is said at once, as an alert (issue 53)
    assert said.args == ["the database refused the login", True]
    assert prompt.edit.accessibleDescription() == "the database refused the login"  # and read with the field
    assert unnamed(prompt) == []


def test_the_supervisors_and_draft_dialogs_name_every_control(qtbot: Any) -> None:
    for dialog in supervisor_and_draft_dialogs():
        qtbot.addWidget(dialog)
        dialog.show()
        assert unnamed(dialog) == [], dialog.objectName()


def supervisor_and_draft_dialogs() -> tuple[Any, ...]:
    """Force release, Reassign, Reopen, Move and a draft, each filled as a user would see it."""
    import datetime as dt
    import types

    from workbench import journal
    from workbench.gui import draft_view, supervisor_dialogs

    row = types.SimpleNamespace(queue="cases", key=7, owner="bob")
    draft = journal.Draft(
        database="sqlite:///x.db",
        queue="cases",
        key=7,
        owner="alice",
        token=None,
        values={"resolution": "Fixed"},
        base={"resolution": None},
        updated_at=dt.datetime.now(dt.UTC).isoformat(),
    )
    return (
        supervisor_dialogs.ForceReleaseDialog([row]),
        supervisor_dialogs.ReassignDialog([row], ["ann", "carla"]),
        supervisor_dialogs.ReopenDialog("Helpdesk cases", "7"),
        _move_dialog(),
        draft_view.DraftDialog("Helpdesk cases 7", draft, {"resolution": "Resolution"}),
    )


def _move_dialog() -> Any:
    """Queue health ▸ Move waiting items…, on two of the demo's fields (values come at once)."""
    from workbench import fieldspec
    from workbench.gui import supervisor_dialogs

    fields = [
        fieldspec.FieldSpec(
            name="category",
            label="Category",
            kind="choice",
            read_only=False,
            required=True,
            choices=("Hardware", "Printing"),
        ),
        fieldspec.FieldSpec(name="priority", label="Priority", kind="int", read_only=False, required=False),
    ]
    return supervisor_dialogs.MoveDialog("Helpdesk cases", fields, lambda _column, done: done(["Printing"]))


# -- tab order --------------------------------------------------------------------------------------------------


def _control(widget: QWidget, top: QWidget) -> QWidget:
    """The control a focused widget belongs to (the line edit inside an editable combo is the combo)."""
    while (
        widget.parentWidget() is not None
        and widget.parentWidget() is not top
        and isinstance(widget.parentWidget(), (QComboBox, QAbstractSpinBox))
    ):
        widget = widget.parentWidget()
    return widget


def _name(widget: QWidget) -> str:
    return widget.objectName() or getattr(widget, "text", lambda: "")() or type(widget).__name__


def tab_order(qtbot: Any, dialog: QWidget) -> list[QWidget]:
    """The controls in the order Tab (the key itself) visits them, once round, from the top-most one."""
    dialog.activateWindow()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is not None and dialog.isActiveWindow())
    focusable = [
        w
        for w in dialog.findChildren(QWidget)
        if isinstance(w, INTERACTIVE)
        and w.isVisibleTo(dialog)
        and w.isEnabled()
        and w.focusPolicy() & Qt.FocusPolicy.TabFocus
        and not isinstance(w.parentWidget(), (QComboBox, QAbstractSpinBox))
    ]
    seen: list[QWidget] = [_control(QApplication.focusWidget(), dialog)]
    for _ in range(10 * len(focusable)):  # a date-time edit takes a Tab per section before it lets go
        QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        control = _control(QApplication.focusWidget(), dialog)
        if control is seen[0] and len(seen) > 1:
            break  # round once
        if control is not seen[-1]:
            seen.append(control)
    assert sorted(map(_name, seen)) == sorted(map(_name, focusable)), "Tab skips a control, or reaches a hidden one"
    top = min(seen, key=lambda w: (_box(w, dialog).top(), _box(w, dialog).left()))
    start = seen.index(top)
    return seen[start:] + seen[:start]


def _box(widget: QWidget, top: QWidget) -> QRect:
    return QRect(widget.mapTo(top, QPoint(0, 0)), widget.size())


def out_of_reading_order(order: list[QWidget], top: QWidget) -> list[str]:
    """Each step of `order` that goes up, or left within one row: "a → b"."""
    wrong = []
    for a, b in itertools.pairwise(order):
        one, two = _box(a, top), _box(b, top)
        same_row = two.top() < one.bottom() and one.top() < two.bottom()
        if (two.center().y() < one.top()) or (same_row and two.left() < one.left()):
            wrong.append(f"{_name(a)} → {_name(b)}")
    return wrong


def test_tab_follows_the_dialogs_top_to_bottom(qtbot: Any) -> None:
    import types

    from workbench.gui import supervisor_dialogs

    row = types.SimpleNamespace(queue="cases", key=7, owner="bob")
    for dialog in (
        dialogs.ReleaseDialog("Helpdesk cases 7", True, note_required=False),
        dialogs.DeferDialog("Helpdesk cases 7", False),
        supervisor_dialogs.ReassignDialog([row], ["ann", "carla"]),
        _move_dialog(),
        supervisor_dialogs.ForceReleaseDialog([row]),
        supervisor_dialogs.ReopenDialog("Helpdesk cases", "7"),
    ):
        qtbot.addWidget(dialog)
        dialog.show()
        order = tab_order(qtbot, dialog)
        assert len(order) >= 3, dialog.objectName()
        assert out_of_reading_order(order, dialog) == [], (dialog.objectName(), [_name(w) for w in order])
        dialog.close()
    # The check sees a Tab that jumps back up: the reason before the operator, in a dialog with them swapped.
    swapped = supervisor_dialogs.ReassignDialog([row], ["ann"])
    qtbot.addWidget(swapped)
    QWidget.setTabOrder(swapped.reason_box, swapped.user_box)
    QWidget.setTabOrder(swapped.user_box, swapped.confirm)
    swapped.show()
    # From the top: the operator, the buttons, then back up to the reason.
    assert out_of_reading_order(tab_order(qtbot, swapped), swapped) == ["Cancel → reason"]


def test_tab_moves_through_the_form_top_to_bottom(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    window = open_window(demo_config)
    with qtbot.waitSignal(window.session.claimed, timeout=10_000):
        window.next_item()
    editors = {window.form.field(name): name for name in window.form.names()}
    reached: list[str] = []
    widget = window.form.field(window.form.names()[0])
    for _ in range(200):  # the whole window's chain, once round
        name = editors.get(widget)
        if name is not None and name not in reached:
            reached.append(name)
        widget = widget.nextInFocusChain()
    assert reached == window.form.names()


# The dialogs the tests above walk; a new dialog class fails the test below until it is walked too.
WALKED = {
    "ConnectionDialog",
    "PasswordDialog",
    "ReleaseDialog",
    "DeferDialog",
    "NoteDialog",
    "PickDialog",
    "EscalationsDialog",
    "DraftDialog",
    "ShortcutsDialog",
    "ReopenDialog",
    "ForceReleaseDialog",
    "ReassignDialog",
    "MoveDialog",
}


def test_every_dialog_is_walked() -> None:
    import importlib
    import pkgutil

    from PySide6.QtWidgets import QDialog

    import workbench.gui

    for module in pkgutil.iter_modules(workbench.gui.__path__):
        importlib.import_module(f"workbench.gui.{module.name}")
    found, todo = set(), [QDialog]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            if sub.__module__.startswith("workbench.gui.") and not sub.__name__.startswith("_"):
                found.add(sub.__name__)
    assert found == WALKED, "walk the new dialog's controls in a test above, then name it in WALKED"
