"""Escalate… in the operator window (issue 47): shown only where the queue has on_escalate; the reason is
required; the item goes to a supervisor and the window says so."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from tests.gui.conftest import on_dialog, row, with_queue
from workbench.config import model
from workbench.core import models
from workbench.services import door

ESCALATED = (model.Assignment("status", "value", "escalated", "queues.cases.on_escalate"),)


def _claim(qtbot: Any, window: Any) -> Any:
    with qtbot.waitSignal(window.session.claimed, timeout=10_000) as signal:
        qtbot.mouseClick(window.next_button, Qt.MouseButton.LeftButton)
    return signal.args[0]


@contextlib.contextmanager
def _console_with_two_escalations(
    qtbot: Any, demo_config: Any, escalate_to: str | None = None
) -> Iterator[tuple[Any, Any, Any, Any]]:
    """A supervisor console on its Escalated tab, listing ann's item (escalated first) and bob's; the
    queue hands them to `escalate_to` (a group) if given."""
    from workbench.db import service
    from workbench.gui import app as gui_app
    from workbench.gui import supervisor

    gui_app.application()
    wb = service.Workbench.open(with_queue(demo_config, "cases", on_escalate=ESCALATED, escalate_to=escalate_to))
    window = supervisor.SupervisorWindow(wb, "sup", refresh_seconds=600, changes_seconds=0)
    qtbot.addWidget(window)
    window.show()
    try:
        q = wb.queue("cases")
        first, second = (q.claim_next(user)[0].lock for user in ("ann", "bob"))
        q.escalate("ann", first.key, first.token, "legal threat")
        q.escalate("bob", second.key, second.token, "angry customer")
        window.tabs.setCurrentIndex(5)
        qtbot.waitUntil(lambda: window.escalated.rowCount() == 2, timeout=20_000)
        yield window, q, first, second
    finally:
        window.close()
        window.dispatcher.wait(10_000)
        wb.close()


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
    last = door.engine(window.session.wb).queue("cases").history(claim.lock.key)[-1]
    assert (last.kind, last.reason) == (models.EventKind.ESCALATE, "Customer threatens legal action")


def test_no_escalate_where_the_queue_has_no_on_escalate(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    window = open_window(with_queue(demo_config, "cases", on_escalate=()))  # the demo's cases escalate
    _claim(qtbot, window)
    window.session.dispatcher.wait()
    assert not window.escalate_button.isVisibleTo(window)
    assert not window.named_actions["escalate"].isEnabled()


def test_the_console_lists_the_escalated_items_and_opens_their_history(
    qtbot: Any, demo_config: Any, tmp_path: Path
) -> None:
    """The supervisor console's Escalated tab: items waiting for a supervisor, newest first; a double click
    opens the item's history (where Reopen puts it back to work); a reopened item leaves the list."""
    with _console_with_two_escalations(qtbot, demo_config) as (window, _q, first, second):
        shown = [[window.escalated.item(r, c).text() for c in (1, 2, 3, 5)] for r in range(2)]  # type: ignore[union-attr]
        assert shown == [
            [str(second.key), "Supervisors", "bob", "angry customer"],
            [str(first.key), "Supervisors", "ann", "legal threat"],
        ]
        assert window.escalated.horizontalHeaderItem(2).text() == "Waiting for"  # type: ignore[union-attr]
        window.grab().save(str(tmp_path / "console-escalated.png"))
        window.escalated.cellDoubleClicked.emit(1, 0)
        assert window.tabs.currentIndex() == 3 and window.history_key.text() == str(first.key)
        qtbot.waitUntil(lambda: window.history.rowCount() >= 2, timeout=20_000)
        door.engine(window.wb).supervision("cases").reopen("sup", first.key, "handled with legal")
        window.tabs.setCurrentIndex(5)
        qtbot.waitUntil(lambda: window.escalated.rowCount() == 1, timeout=20_000)


def test_the_console_says_which_group_an_escalated_item_waits_for(qtbot: Any, demo_config: Any, tmp_path: Path) -> None:
    """A queue with escalate_to hands its escalated items to that group (and supervisors): the Escalated
    tab's "Waiting for" names the group; a queue without one says Supervisors (test above)."""
    with _console_with_two_escalations(qtbot, demo_config, escalate_to="level2") as (window, _q, first, second):
        waiting = [window.escalated.item(r, 2).text() for r in range(2)]  # type: ignore[union-attr]
        assert waiting == ["level2", "level2"]
        assert [window.escalated.item(r, 1).text() for r in range(2)] == [str(second.key), str(first.key)]  # type: ignore[union-attr]
        window.grab().save(str(tmp_path / "console-escalated-group.png"))


@pytest.mark.parametrize(
    ("language", "header", "supervisors"),
    [("de", "Wartet auf", "Supervisoren"), ("fr", "En attente de", "Superviseurs")],
)
def test_the_console_says_whom_it_waits_for_in_the_users_language(
    qapp: Any, qtbot: Any, demo_config: Any, tmp_path: Path, language: str, header: str, supervisors: str
) -> None:
    from workbench.gui import i18n

    assert i18n.install(qapp, language) == language  # widgets take their texts when built: install first
    try:
        with _console_with_two_escalations(qtbot, demo_config) as (window, _q, _first, _second):
            assert window.escalated.horizontalHeaderItem(2).text() == header  # type: ignore[union-attr]
            assert [window.escalated.item(r, 2).text() for r in range(2)] == [supervisors] * 2  # type: ignore[union-attr]
            window.grab().save(str(tmp_path / f"console-escalated-{language}.png"))
    finally:
        i18n.install(qapp, "en")


def test_the_console_takes_an_escalated_item(qtbot: Any, demo_config: Any, tmp_path: Path) -> None:
    """The Escalated tab's Take: the selected item becomes the supervisor's (a fresh lock, as after a
    claim) and leaves the list; without a selection there is nothing to take."""
    with _console_with_two_escalations(qtbot, demo_config) as (window, q, first, _second):
        assert window.take_button.isVisibleTo(window) and not window.take_button.isEnabled()
        window.escalated.selectRow(1)  # ann's, the older
        assert window.take_button.isEnabled()
        window.grab().save(str(tmp_path / "console-take.png"))
        qtbot.mouseClick(window.take_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: window.escalated.rowCount() == 1, timeout=20_000)
        assert q.show(first.key).lock is not None and q.show(first.key).lock.owner == "sup"  # type: ignore[union-attr]
        assert str(first.key) in window.status.text() and "sup" not in window.escalated.item(0, 3).text()  # type: ignore[union-attr]
        window.grab().save(str(tmp_path / "console-taken.png"))


def test_the_operator_sees_what_became_of_his_escalations(
    qtbot: Any, open_window: Any, demo_config: Any, tmp_path: Path
) -> None:
    """View ▸ Items you escalated…: his escalations in this queue, each with what became of it."""
    from workbench.gui import dialogs

    window = open_window(with_queue(demo_config, "cases", on_escalate=ESCALATED))
    q = door.engine(window.session.wb).queue("cases")
    first, second = (q.claim_next("alice")[0].lock for _ in range(2))
    q.escalate("alice", first.key, first.token, "legal threat")
    q.escalate("alice", second.key, second.token, "angry customer")
    other = q.claim_next("bob")[0].lock
    q.escalate("bob", other.key, other.token, "not alice's")
    door.engine(window.session.wb).supervision("cases").reopen("sue", first.key, "handled with legal")
    seen: list[list[list[str]]] = []

    def read(dialog: dialogs.EscalationsDialog) -> None:
        table = dialog.table
        seen.append([[table.item(r, c).text() for c in (0, 2, 3)] for r in range(table.rowCount())])  # type: ignore[union-attr]
        dialog.grab().save(str(tmp_path / "escalations-dialog.png"))
        dialog.reject()

    shown = on_dialog(qtbot, "escalations_dialog", read)
    window.named_actions["escalations"].trigger()
    qtbot.waitUntil(lambda: bool(shown) and bool(seen), timeout=20_000)
    (rows,) = seen
    assert [r[:2] for r in rows] == [[str(second.key), "angry customer"], [str(first.key), "legal threat"]]
    assert rows[0][2] == "Waiting for a supervisor"
    assert rows[1][2].startswith("Reopened by sue at "), rows[1][2]
