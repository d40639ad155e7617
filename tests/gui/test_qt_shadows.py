"""No attribute of a window or dialog hides a method of its Qt class: `self.result = QLabel()` on a
QDialog makes `dialog.result()` (Qt's, and what Qt's own code may call) a QLabel, and
`self.actions = {...}` on a QWidget does the same to `actions()`. mypy (strict) reports such an
assignment too; this test says which attribute it is."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget

from workbench.config import model, profiles
from workbench.gui import connect_dialog, hotkeys, main_window, shortcuts_dialog


def _hidden_qt_methods(widget: QWidget) -> list[str]:
    """The instance attributes of `widget` named as a method of its PySide6 bases (not a signal:
    PySide6 keeps a signal's bound instance in the object's own attributes)."""
    qt = [vars(cls) for cls in type(widget).__mro__ if cls.__module__.startswith("PySide6")]
    return sorted(
        name
        for name in vars(widget)
        if any(name in members and not isinstance(members[name], Signal) for members in qt)
    )


@pytest.mark.parametrize("backend", ["sqlite"])
def test_no_attribute_hides_a_qt_method(
    qtbot: Any, demo_config: model.Config, open_window: Callable[..., main_window.MainWindow]
) -> None:
    widgets: list[QWidget] = [
        open_window(demo_config),
        connect_dialog.ConnectionDialog(),
        connect_dialog.PasswordDialog(profiles.Profile(name="o", kind="postgresql", host="h", user="u")),
        shortcuts_dialog.ShortcutsDialog(hotkeys.Keymap(), ["Resolve"]),
    ]
    for widget in widgets[1:]:
        qtbot.addWidget(widget)
    assert {type(w).__name__: _hidden_qt_methods(w) for w in widgets} == {
        "MainWindow": [],
        "ConnectionDialog": [],
        "PasswordDialog": [],
        "ShortcutsDialog": [],
    }
