"""What a blind operator hears and reaches (issue 40 item 5): the opened item, the expiry warning and the
lock loss announced once each; a status-bar timer that keeps its name; the focus kept on the item after a
loss; Tab out of item views to their buttons; the form's Tab order; F10 for the menu bar.

The announcements are watched through the window's Announcer (`announced`); that Qt delivers them over
the accessibility bus is tests/test_accessibility_bus.py's part."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAccessible
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QPushButton, QWidget

from tests.gui import watching
from tests.gui.conftest import with_queue
from tests.gui.test_operator import _age_lock, _claim
from tests.gui.test_supervisor import claim, console, refreshed  # noqa: F401  (console: the fixture)
from workbench.gui import dialogs, main_window
from workbench.services import door, operator

LOCK = 15 * 60  # the demo's cases queue
SQLITE = pytest.mark.parametrize("backend", ["sqlite"])  # the window's own behaviour: one database is enough


def _heard(window: main_window.MainWindow) -> list[tuple[str, bool]]:
    said: list[tuple[str, bool]] = []
    window.announcer.announced.connect(lambda text, assertive: said.append((text, assertive)))
    return said


@SQLITE
def test_the_opened_item_the_warning_and_the_loss_are_announced_once(
    qtbot: Any, open_window: Any, demo_config: Any
) -> None:
    window = open_window(demo_config)
    said = _heard(window)
    claim = _claim(qtbot, window)
    assert said == [(f"Opened {window.item_title.text()}", False)]
    assert f"Helpdesk cases {claim.lock.key}" in said[0][0]
    _age_lock(window, "cases", claim.lock.key, LOCK - 90)
    with qtbot.waitSignal(window.session.expiry_warning, timeout=5000):
        window.session.check_now()
    # The banner and the timer count down meanwhile, twice (however long that takes): not said again.
    shown = [window.timer_label.text()]
    window.session.tick.connect(lambda _left: shown.append(window.timer_label.text()))
    qtbot.waitUntil(lambda: len(set(shown)) >= 3, timeout=5000)
    warnings = [s for s in said[1:] if "runs out" in s[0]]
    assert len(warnings) == 1 and not warnings[0][1], said  # polite: after what is being read
    # A supervisor takes it away: said at once (assertive), who and why.
    door.engine(window.session.wb).supervision("cases").force_release("sue", claim.lock.key, "customer escalated")
    with qtbot.waitSignal(window.session.lock_lost, timeout=5000):
        window.session.check_now()
    text, assertive = said[-1]
    assert assertive and "sue" in text and "customer escalated" in text, said
    assert len(said) == 3


@SQLITE
def test_the_loss_says_who_holds_it_now(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    window = open_window(with_queue(demo_config, "cases", max_locks_per_user=0))
    said = _heard(window)
    claim = _claim(qtbot, window)
    _age_lock(window, "cases", claim.lock.key, LOCK + 60)
    door.engine(window.session.wb).queue("cases").claim("bob", claim.lock.key)
    with qtbot.waitSignal(window.session.lock_lost, timeout=5000):
        window.session.check_now()
    text, assertive = said[-1]
    assert assertive and "bob holds it now" in text and "expired" in text, said


@SQLITE
def test_an_item_given_back_is_announced_once(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    """Reassigned away, then given back by the supervisor: the banner turns to "yours again", and that is
    said (the later reads of who holds it, every few seconds, are not)."""
    window = open_window(demo_config)
    said = _heard(window)
    claim = _claim(qtbot, window)
    cases = door.engine(window.session.wb).supervision("cases")
    cases.reassign("sue", claim.lock.key, "bob", "bob knows this customer")
    with qtbot.waitSignal(window.session.lock_lost, timeout=5000):
        window.session.check_now()
    assert "bob" in said[-1][0] and said[-1][1]  # assertive, to whom
    cases.reassign("sue", claim.lock.key, "alice", "bob is ill")
    qtbot.waitUntil(lambda: "yours again" in said[-1][0], timeout=10_000)
    reads = watching.holder_reads(window)
    qtbot.waitUntil(lambda: len(reads) >= 2, timeout=5000)  # two more reads of who holds it (check_interval 1 s)
    assert [text for text, _ in said].count(said[-1][0]) == 1 and "yours again" in said[-1][0], said


@SQLITE
def test_the_timer_keeps_its_name_while_it_counts(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    window = open_window(demo_config)
    _claim(qtbot, window)
    face = QAccessible.queryAccessibleInterface(window.timer_label)
    qtbot.waitUntil(lambda: window.timer_label.text() != "", timeout=5000)
    first = window.timer_label.text()
    qtbot.waitUntil(lambda: window.timer_label.text() != first, timeout=5000)
    # The text counts down; the name a screen reader says stays (a label without one is renamed each second).
    assert face.text(QAccessible.Text.Name) == "Lock timer"


@SQLITE
def test_the_focus_stays_on_the_item_when_the_lock_is_lost(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    window = open_window(demo_config)
    claim = _claim(qtbot, window)
    # The last Complete button (reached by Tab from the fields): disabled with the loss, so it lets go of
    # the focus, which Qt passes on along the chain.
    button = list(window.complete_buttons.values())[-1]
    button.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is button)
    door.engine(window.session.wb).supervision("cases").force_release("sue", claim.lock.key, "customer escalated")
    with qtbot.waitSignal(window.session.lock_lost, timeout=5000):
        window.session.check_now()
    # On the banner that says what happened, at its first button: Claim again (nothing was typed).
    assert QApplication.focusWidget() is window.reclaim_button
    assert window.reclaim_button.isEnabled() and window.reclaim_button.isVisible()


def _tab_from(widget: QWidget, times: int = 1) -> QWidget:
    for _ in range(times):
        QTest.keyClick(QApplication.focusWidget() or widget, Qt.Key.Key_Tab)
    return QApplication.focusWidget()


def test_tab_leaves_pick_for_its_buttons(qtbot: Any) -> None:
    rows = [{"case_id": n, "subject": f"case {n}", "priority": n % 3} for n in range(1, 9)]
    dialog = dialogs.PickDialog(
        operator.PickList(
            key_name="case_id",
            rows=rows,
            labels={"case_id": "Case", "subject": "Subject", "priority": "Priority"},
            waiting=8,
        )
    )
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.activateWindow()
    dialog.table.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is dialog.table)
    after = _tab_from(dialog.table)
    assert isinstance(after, QPushButton) and after.text() == "Claim", type(after).__name__
    assert dialog.table.currentIndex().row() == 0  # Tab moved the focus, not the row


@SQLITE
def test_tab_leaves_the_lock_board_for_its_buttons(qtbot: Any, console: Any) -> None:
    window = console()
    claim(window, "ann", 3)
    refreshed(qtbot, window)
    assert window.model.rowCount() == 3
    window.activateWindow()
    window.board.setFocus()
    window.board.selectRow(0)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is window.board)
    reached = [_tab_from(window.board, 1) for _ in range(3)]
    assert window.force_button in reached, [w.objectName() for w in reached]


@SQLITE
def test_tab_goes_from_the_last_field_along_the_action_row(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    window = open_window(demo_config)
    _claim(qtbot, window)
    last = window.form.field(window.form.names()[-1])
    last.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is last)
    order = [_tab_from(last) for _ in range(6)]
    assert (
        order
        == [
            window.release_button,
            window.defer_button,
            window.escalate_button,  # the demo's cases escalate
            window.extend_button,
            window.save_button,
            *window.complete_buttons.values(),
        ][:6]
    ), [w.objectName() for w in order]


@SQLITE
def test_f10_opens_the_menu_bar(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    window = open_window(demo_config)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    QTest.keyClick(window, Qt.Key.Key_F10)
    qtbot.waitUntil(lambda: QApplication.activePopupWidget() is not None, timeout=3000)
    assert window.menuBar().activeAction() is window.menuBar().actions()[0]
    QTest.keyClick(QApplication.activePopupWidget(), Qt.Key.Key_Escape)
