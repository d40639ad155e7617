"""Escalate… in the operator window (issue 47): shown only where the queue has on_escalate; the reason is
required; the item goes to a supervisor and the window says so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from tests.gui.conftest import on_dialog, row, with_queue
from workbench.config import model
from workbench.core import models

ESCALATED = (model.Assignment("status", "value", "escalated", "queues.cases.on_escalate"),)


def _claim(qtbot: Any, window: Any) -> Any:
    with qtbot.waitSignal(window.session.claimed, timeout=10_000) as signal:
        qtbot.mouseClick(window.next_button, Qt.MouseButton.LeftButton)
    return signal.args[0]


def test_escalate_from_the_window(qtbot: Any, open_window: Any, demo_config: Any, tmp_path: Path) -> None:
    window = open_window(with_queue(demo_config, "cases", on_escalate=ESCALATED))
    claim = _claim(qtbot, window)
    window.session.dispatcher.wait()
    assert window.escalate_button.isVisibleTo(window) and window.named_actions["escalate"].isEnabled()
    states: list[bool] = []

    def fill(dialog: Any) -> None:
        ok = dialog.findChildren(type(window.escalate_button))[-2]  # OK, then Cancel
        states.append(ok.isEnabled())  # no reason yet
        dialog.note_box.setPlainText("Customer threatens legal action")
        states.append(ok.isEnabled())
        window.grab().save(str(tmp_path / "escalate-window.png"))
        dialog.grab().save(str(tmp_path / "escalate-dialog.png"))
        dialog.accept()

    on_dialog(qtbot, "escalate_dialog", fill)
    with qtbot.waitSignal(window.session.escalated, timeout=10_000):
        qtbot.mouseClick(window.escalate_button, Qt.MouseButton.LeftButton)
    assert states == [False, True]
    assert "Handed to a supervisor" in window.message_label.text() and window.session.current is None
    stored = row(window, "cases", claim.lock.key)
    assert (stored["status"], stored["wb_locked_by"]) == ("escalated", None)
    last = window.session.wb.queue("cases").history(claim.lock.key)[-1]
    assert (last.kind, last.reason) == (models.EventKind.ESCALATE, "Customer threatens legal action")


def test_no_escalate_where_the_queue_has_no_on_escalate(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    window = open_window(demo_config)
    _claim(qtbot, window)
    window.session.dispatcher.wait()
    assert not window.escalate_button.isVisibleTo(window)
    assert not window.named_actions["escalate"].isEnabled()
