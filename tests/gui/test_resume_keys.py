"""The start-up resume panel is driven from the keyboard: Enter reopens the selected item."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from tests.gui.test_operator import _claim
from workbench.gui import main_window


def test_enter_in_the_start_up_resume_panel_reopens_the_item(
    qtbot: Any, open_window: Any, demo_config: Any, tmp_path: Path
) -> None:
    home = tmp_path / "alice-home"
    first = open_window(demo_config, home=home)
    claim = _claim(qtbot, first)
    first.session.dispatcher.wait()
    first.quit_guard.let_go()  # as if the process died: the lock stays, the next start shows it
    first.close()
    second = open_window(demo_config, home=home)
    second.activateWindow()
    assert second.stack.currentIndex() == main_window.RESUME
    focused = QApplication.focusWidget() or second.focusWidget()  # where a key press goes
    with qtbot.waitSignal(second.session.claimed, timeout=5000) as signal:
        qtbot.keyClick(focused, Qt.Key.Key_Return)
    assert focused is second.resume_panel.table  # the list has the focus, not the Next item button
    assert signal.args[0].lock.key == claim.lock.key and signal.args[0].resumed
    assert second.stack.currentIndex() == main_window.ITEM
