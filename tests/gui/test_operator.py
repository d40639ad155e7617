"""The operator's loop in the real window, offscreen, against the SQLite demo and a PostgreSQL server."""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

import pytest
import sqlalchemy as sa
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QCheckBox,
    QComboBox,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
)

from tests.gui.conftest import FAST, close_window, on_dialog, row, with_queue
from workbench.core import errors
from workbench.db import clock
from workbench.gui import dialogs, main_window, session
from workbench.services import door


def _claim(qtbot: Any, window: main_window.MainWindow) -> Any:
    with qtbot.waitSignal(window.session.claimed, timeout=10_000) as signal:
        qtbot.mouseClick(window.next_button, Qt.MouseButton.LeftButton)
    return signal.args[0]


def _type(qtbot: Any, window: main_window.MainWindow, name: str, text: str) -> None:
    editor = window.form.field(name)
    if isinstance(editor, QPlainTextEdit):
        editor.selectAll()
        qtbot.keyClicks(editor, text)
    elif isinstance(editor, QLineEdit):
        editor.selectAll()
        qtbot.keyClick(editor, Qt.Key.Key_Delete)
        qtbot.keyClicks(editor, text)
    else:
        raise AssertionError(f"{name} is a {type(editor).__name__}")


def _age_lock(window: main_window.MainWindow, queue: str, key: Any, seconds: int) -> None:
    q = door.engine(window.session.wb).queue(queue).q
    with door.engine(window.session.wb).engine.begin() as conn:
        conn.execute(
            sa.update(q.table)
            .where(q.key == key)
            .values(
                {
                    q.time.name: clock.add_seconds(q.time, sa.literal(-seconds)),
                    q.expires.name: clock.add_seconds(q.expires, sa.literal(-seconds)),
                }
            )
        )


def test_next_item_fills_the_form_and_starts_the_timer(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    window = open_window(demo_config)
    assert window.stack.currentIndex() == main_window.START
    claim = _claim(qtbot, window)
    assert window.stack.currentIndex() == main_window.ITEM
    assert window.form.field("subject").text() == claim.item["subject"]
    assert window.form.field("case_id").isReadOnly()
    assert str(claim.lock.key) in window.item_title.text()
    qtbot.waitUntil(lambda: "left" in window.timer_label.text(), timeout=3000)
    assert row(window, "cases", claim.lock.key)["wb_locked_by"] == "alice"


def test_invalid_value_is_shown_at_the_field_and_nothing_is_sent(
    qtbot: Any, open_window: Any, demo_config: Any
) -> None:
    window = open_window(demo_config)
    window.resize(1100, 420)  # the field is below the form's fold
    claim = _claim(qtbot, window)
    _type(qtbot, window, "time_spent_min", "soon")
    editor = window.form.field("time_spent_min")
    window.form._scroll.verticalScrollBar().setValue(0)
    qtbot.waitUntil(lambda: editor.visibleRegion().isEmpty())
    qtbot.mouseClick(window.save_button, Qt.MouseButton.LeftButton)
    assert "whole number" in window.form.error_text("time_spent_min")
    assert row(window, "cases", claim.lock.key)["time_spent_min"] is None
    # The form scrolls to the field, so that what to fix is seen.
    qtbot.waitUntil(lambda: not editor.visibleRegion().isEmpty())


def test_save_keeps_the_lock_and_stores_the_edit(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    window = open_window(demo_config)
    claim = _claim(qtbot, window)
    _type(qtbot, window, "resolution", "Replaced the docking station")
    with qtbot.waitSignal(window.session.saved, timeout=10_000):
        qtbot.mouseClick(window.save_button, Qt.MouseButton.LeftButton)
    stored = row(window, "cases", claim.lock.key)
    assert stored["resolution"] == "Replaced the docking station"
    assert stored["wb_locked_by"] == "alice" and window.session.current is not None
    assert window.form.changes() == {}


def test_complete_from_the_keyboard_writes_the_outcome(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    window = open_window(demo_config)
    window.activateWindow()
    with qtbot.waitSignal(window.session.claimed, timeout=10_000) as signal:
        qtbot.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    key = signal.args[0].lock.key
    _type(qtbot, window, "resolution", "Reset the profile")
    with qtbot.waitSignal(window.session.completed, timeout=10_000):
        qtbot.keyClick(window.form.field("resolution"), Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    stored = row(window, "cases", key)
    assert stored["status"] == "resolved" and stored["resolution"] == "Reset the profile"
    assert stored["wb_locked_by"] is None
    assert window.session.current is None


def test_second_outcome_button(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    window = open_window(demo_config)
    claim = _claim(qtbot, window)
    button = window.findChild(type(window.save_button), "complete_button_waiting")
    assert button is not None and button.text() == "Wait for customer"
    with qtbot.waitSignal(window.session.completed, timeout=10_000):
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert row(window, "cases", claim.lock.key)["status"] == "waiting_customer"


def test_next_follows_complete_when_set(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    window = open_window(demo_config, settings=dataclasses.replace(FAST, next_after_complete=True))
    first = _claim(qtbot, window)
    with qtbot.waitSignal(window.session.claimed, timeout=10_000) as signal:
        qtbot.mouseClick(window.complete_buttons["resolved"], Qt.MouseButton.LeftButton)
    assert signal.args[0].lock.key != first.lock.key


def test_the_next_item_comes_with_the_complete(
    qtbot: Any, open_window: Any, demo_config: Any, monkeypatch: Any
) -> None:
    """One call does both (one statement on PostgreSQL); Next item is asked only when nothing came."""
    window = open_window(demo_config, settings=dataclasses.replace(FAST, next_after_complete=True))
    first = _claim(qtbot, window)
    operator = window.session.operator
    asked: list[str] = []
    real_next, real_complete = operator.next_item, operator.complete
    monkeypatch.setattr(operator, "next_item", lambda *a, **k: asked.append("next") or real_next(*a, **k))
    monkeypatch.setattr(
        operator, "complete", lambda *a, **k: asked.append(f"complete {k['then_next']}") or real_complete(*a, **k)
    )
    with qtbot.waitSignal(window.session.claimed, timeout=10_000) as signal:
        qtbot.mouseClick(window.complete_buttons["resolved"], Qt.MouseButton.LeftButton)
    following = signal.args[0]
    assert following.lock.key != first.lock.key and asked == ["complete True"]
    assert row(window, "cases", following.lock.key)["wb_locked_by"] == "alice"
    # The last item: the Complete brings none, and Next item says why.
    queue = door.engine(window.session.wb).queue("cases")
    table = queue.q.table
    with door.engine(window.session.wb).engine.begin() as conn:
        conn.execute(sa.update(table).where(table.c.case_id != following.lock.key).values(status="resolved"))
    asked.clear()
    with qtbot.waitSignal(window.session.nothing_to_do, timeout=10_000):
        qtbot.mouseClick(window.complete_buttons["resolved"], Qt.MouseButton.LeftButton)
    assert asked == ["complete True", "next"] and queue.mine("alice") == []


def test_release_with_a_reason(qtbot: Any, open_window: Any, demo_config: Any, monkeypatch: Any) -> None:
    window = open_window(demo_config)
    claim = _claim(qtbot, window)
    monkeypatch.setattr(dialogs.ReleaseDialog, "exec", lambda self: True)
    monkeypatch.setattr(dialogs.ReleaseDialog, "text", lambda self: "Not my area")
    with qtbot.waitSignal(window.session.released, timeout=10_000):
        qtbot.mouseClick(window.release_button, Qt.MouseButton.LeftButton)
    assert row(window, "cases", claim.lock.key)["wb_locked_by"] is None
    history = door.engine(window.session.wb).queue("cases").history(claim.lock.key)
    assert history[-1].kind.value == "release" and history[-1].reason == "Not my area"
    # Answered, the dialog goes: one per Release would stay as the window's hidden child for the day.
    qtbot.waitUntil(lambda: not window.findChildren(dialogs.ReleaseDialog), timeout=5000)


def test_resume_after_restart_restores_unsaved_edits(
    qtbot: Any, open_window: Any, demo_config: Any, tmp_path: Any
) -> None:
    home = tmp_path / "alice-home"
    first = open_window(demo_config, home=home)
    claim = _claim(qtbot, first)
    _type(qtbot, first, "resolution", "Half way through")
    qtbot.waitUntil(
        lambda: first.session.journal.load(first.session.database, "cases", claim.lock.key) is not None, timeout=3000
    )
    first.session.dispatcher.wait()
    close_window(qtbot, first, answer="quit_keep")  # as if the PC restarted: nothing was saved
    second = open_window(demo_config, home=home)
    assert second.stack.currentIndex() == main_window.RESUME
    entries = second.resume_panel.entries()
    assert [(e.key, e.has_draft) for e in entries] == [(claim.lock.key, True)]
    assert "1 unfinished item" in second.resume_panel.title.text()
    with qtbot.waitSignal(second.session.claimed, timeout=10_000) as signal:
        qtbot.mouseClick(second.resume_panel.open_button, Qt.MouseButton.LeftButton)
    assert signal.args[0].resumed and signal.args[0].lock.token == claim.lock.token
    assert second.form.field("resolution").toPlainText() == "Half way through"
    assert second.info_banner.isVisible()


def test_warning_before_expiry_offers_extend(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    window = open_window(demo_config)
    claim = _claim(qtbot, window)
    _age_lock(window, "cases", claim.lock.key, 15 * 60 - 90)  # 90 s left of 15 min
    with qtbot.waitSignal(window.session.expiry_warning, timeout=5000):
        window.session.check_now()
    assert window.warning_banner.isVisible() and "runs out" in window.warning_banner.label.text()
    with qtbot.waitSignal(window.session.extended, timeout=10_000) as signal:
        qtbot.mouseClick(window.warning_extend, Qt.MouseButton.LeftButton)
    assert signal.args[0].remaining.total_seconds() > 14 * 60
    assert not window.warning_banner.isVisible()


def test_reclaim_by_another_user_keeps_the_edits(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    window = open_window(demo_config)
    claim = _claim(qtbot, window)
    _type(qtbot, window, "resolution", "My careful notes")
    qtbot.waitUntil(
        lambda: window.session.journal.load(window.session.database, "cases", claim.lock.key) is not None, timeout=3000
    )
    # A supervisor takes it away while Alice is typing.
    door.engine(window.session.wb).supervision("cases").force_release("sue", claim.lock.key, "customer escalated")
    with qtbot.waitSignal(window.session.lock_lost, timeout=5000) as signal:
        window.session.check_now()
    lost = signal.args[0]
    text = window.lost_banner.label.text()
    assert lost.by == "sue" and "sue" in text and "customer escalated" in text and "kept as a draft" in text
    assert window.form.field("resolution").isReadOnly()
    assert window.form.field("resolution").toPlainText() == "My careful notes"
    # Claim it again: the draft is laid over the current row, ready to save.
    with qtbot.waitSignal(window.session.claimed, timeout=10_000):
        qtbot.mouseClick(window.reclaim_button, Qt.MouseButton.LeftButton)
    assert window.form.field("resolution").toPlainText() == "My careful notes"
    assert not window.form.field("resolution").isReadOnly()
    with qtbot.waitSignal(window.session.saved, timeout=10_000):
        qtbot.mouseClick(window.save_button, Qt.MouseButton.LeftButton)
    assert row(window, "cases", claim.lock.key)["resolution"] == "My careful notes"


def test_expired_and_taken_by_someone_else_says_who(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    config = with_queue(demo_config, "cases", max_locks_per_user=0)
    window = open_window(config)
    claim = _claim(qtbot, window)
    _age_lock(window, "cases", claim.lock.key, 16 * 60)
    bob = door.engine(window.session.wb).queue("cases").claim("bob", claim.lock.key)
    assert bob.lock.owner == "bob"
    with qtbot.waitSignal(window.session.lock_lost, timeout=5000):
        window.session.check_now()
    assert "bob" in window.lost_banner.label.text() and "expired" in window.lost_banner.label.text()
    assert not window.reclaim_button.isVisible()  # bob holds it now


def test_queue_picker_and_nothing_to_do(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    window = open_window(demo_config)
    assert window.queue_picker.isVisible() and window.queue_picker.count() == 3
    window.queue_picker.setCurrentIndex(window.queue_picker.findData("imports"))
    claim = _claim(qtbot, window)
    assert "row_id" in claim.item
    assert isinstance(window.form.field("currency"), QComboBox)
    assert isinstance(window.form.field("paid"), QCheckBox)
    # Empty the queue behind the window's back: Next item then says so calmly. (Released first: a
    # lock on a row out of the queue's work is no longer the queue's to give back.)
    with qtbot.waitSignal(window.session.released, timeout=10_000):
        window.session.release("testing")
    q = door.engine(window.session.wb).queue("imports").q
    with door.engine(window.session.wb).engine.begin() as conn:
        conn.execute(sa.update(q.table).values(check_status="verified"))
    with qtbot.waitSignal(window.session.nothing_to_do, timeout=10_000):
        qtbot.mouseClick(window.next_button, Qt.MouseButton.LeftButton)
    assert "Nothing to do" in window.message_label.text()


def test_next_item_narrowed_to_a_value_the_queue_offers(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    config = with_queue(demo_config, "cases", filter_by=("category",))
    window = open_window(config)
    qtbot.waitUntil(lambda: window.filter_box.isVisible() and window.filter_box.count() > 2, timeout=10_000)
    assert window.filter_box.itemText(0) == "Any item"
    # A category other than the queue head's: without the filter, Next would serve the head.
    head = door.engine(window.session.wb).queue("cases").open_items(1)[0]["category"]
    index = next(i for i in range(1, window.filter_box.count()) if window.filter_box.itemData(i)[1] != head)
    column, value = window.filter_box.itemData(index)
    assert column == "category" and window.filter_box.itemText(index) == f"category: {value}"
    window.filter_box.setCurrentIndex(index)
    window.filter_box.activated.emit(index)
    claim = _claim(qtbot, window)
    assert claim.item["category"] == value
    # Other queues offer nothing to narrow by: the box goes away.
    window.queue_picker.setCurrentIndex(window.queue_picker.findData("imports"))
    qtbot.waitUntil(lambda: not window.filter_box.isVisible(), timeout=10_000)
    assert window.session.narrow == {}


def test_a_changed_field_shows_its_value_as_imported(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    window = open_window(demo_config)
    window.queue_picker.setCurrentIndex(window.queue_picker.findData("imports"))
    claim = _claim(qtbot, window)
    origin = window.form.findChild(QLabel, "origin_invoice_no")
    assert not origin.isVisible()
    _type(qtbot, window, "invoice_no", "INV-00001")
    with qtbot.waitSignal(window.session.saved, timeout=10_000):
        window.save()
    qtbot.waitUntil(origin.isVisible, timeout=10_000)
    assert origin.text() == f"As imported: {claim.item['invoice_no']}"
    assert not window.form.findChild(QLabel, "origin_vendor").isVisible()  # not changed


def test_a_field_imported_empty_shows_no_as_imported_beside_it(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    """Issue 53: "As imported: (empty)" beside a helpdesk field after Save, though nothing was imported,
    narrowed its box: a field that had no value shows nothing beside it; one that had a value still does."""
    window = open_window(demo_config)
    window.queue_picker.setCurrentIndex(window.queue_picker.findData("cases"))
    claim = _claim(qtbot, window)
    assert claim.item["time_spent_min"] is None  # the demo imports it empty
    editor = window.form.field("time_spent_min")
    width = editor.width()
    _type(qtbot, window, "time_spent_min", "12")
    _type(qtbot, window, "subject", "A new subject")
    with qtbot.waitSignal(window.session.saved, timeout=10_000):
        window.save()
    qtbot.waitUntil(window.form.findChild(QLabel, "origin_subject").isVisible, timeout=10_000)
    assert window.form.findChild(QLabel, "origin_subject").text().startswith("As imported: ")
    assert not window.form.findChild(QLabel, "origin_time_spent_min").isVisible()
    assert editor.width() == width  # the box keeps its width


def _no_dialogs(monkeypatch: Any) -> list[str]:
    """Record (and answer) every message box, so a test can say none was shown."""
    shown: list[str] = []
    for name in ("critical", "warning", "information", "question"):
        monkeypatch.setattr(QMessageBox, name, lambda *args, _n=name, **kw: shown.append(_n) or 0)
    return shown


@pytest.mark.parametrize("backend", ["postgresql"])
def test_database_down_keeps_the_form_and_retries(
    qtbot: Any, open_window: Any, demo_config: Any, pg_server: Any, monkeypatch: Any
) -> None:
    window = open_window(demo_config, settings=dataclasses.replace(FAST, retry_interval=0.3))
    claim = _claim(qtbot, window)
    _type(qtbot, window, "resolution", "Typed while the server was down")
    dialogs_shown = _no_dialogs(monkeypatch)
    changes: list[bool] = []
    window.session.connection_changed.connect(lambda up, _message: changes.append(up))
    pg_server.take_down()
    try:
        qtbot.mouseClick(window.save_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: window.connection_label.property("state") == "down", timeout=15_000)
        assert "unreachable" in window.connection_label.text()
        assert window.connection_label.toolTip()  # what the driver said, for whoever needs it
        qtbot.wait(1500)  # several quiet retries
        assert window.form.field("resolution").toPlainText() == "Typed while the server was down"
        assert not window.form.field("resolution").isReadOnly() and window.session.current is not None
        draft = window.session.journal.load(window.session.database, "cases", claim.lock.key)
        assert draft is not None and draft.values["resolution"] == "Typed while the server was down"
    finally:
        with qtbot.waitSignal(window.session.saved, timeout=30_000):
            pg_server.bring_up()  # the pending Save goes through on its own
    assert dialogs_shown == []
    assert changes[0] is False and changes[-1] is True and changes.count(True) == 1
    assert window.connection_label.property("state") == "up"
    assert row(window, "cases", claim.lock.key)["resolution"] == "Typed while the server was down"
    assert window.session.journal.load(window.session.database, "cases", claim.lock.key) is None


@pytest.mark.parametrize("backend", ["sqlite"])
def test_a_closed_windows_late_unreachable_answer_starts_no_retry(open_window: Any, demo_config: Any) -> None:
    """stop() promises no more timers or retries: an answer that comes after it (a call still running when the
    window closed, e.g. refused as closed by its database) must not start the retry timer again."""
    window = open_window(demo_config)
    window.session.stop()
    window.session._handle_error(errors.DatabaseUnavailable("this connection was closed"), ("save", lambda: None))
    assert not window.session._retry.isActive()


@pytest.mark.parametrize("backend", ["postgresql"])
def test_hanging_database_never_freezes_the_window(
    qtbot: Any, open_window: Any, demo_config: Any, pg_server: Any, monkeypatch: Any
) -> None:
    window = open_window(demo_config)
    claim = _claim(qtbot, window)
    _type(qtbot, window, "resolution", "First part")
    monkeypatch.setattr(main_window, "SLOW_MS", 500)
    window._slow_timer.setInterval(500)
    # The item's notes and history are read when it opens: let that call finish first, so that
    # the Save below is the call that hangs (and starts the 500 ms "slow" timer).
    assert window.session.dispatcher.wait()
    # wait() is over when the threads are; their answers still have to reach the window (the Save
    # must be the call that makes the window busy, or its slow timer was started by another).
    qtbot.waitUntil(lambda: not window.session.dispatcher.busy, timeout=5_000)
    pg_server.freeze()  # connections stay open; nothing answers
    try:
        qtbot.mouseClick(window.save_button, Qt.MouseButton.LeftButton)

        # 500 ms after the Save; the timeout is generous for a loaded test machine (5 s was too
        # tight twice), and the window's answering is what the typing below checks.
        def waiting() -> None:
            label, shown = window.connection_label, window.connection_label.text()
            assert "Waiting for the database" in shown, (
                shown,
                label.property("state"),
                window.session.reachable,
                window._slow_timer.isActive(),
            )

        qtbot.waitUntil(waiting, timeout=15_000)
        # The window still takes typing while the call hangs, and journals it.
        editor = window.form.field("resolution")
        editor.moveCursor(editor.textCursor().MoveOperation.End)
        qtbot.keyClicks(editor, ", then more")
        assert editor.toPlainText() == "First part, then more"
        qtbot.waitUntil(
            lambda: (
                (window.session.journal.load(window.session.database, "cases", claim.lock.key) or None) is not None
                and window.session.journal.load(window.session.database, "cases", claim.lock.key).values.get(
                    "resolution"
                )
                == "First part, then more"
            ),
            timeout=3000,
        )
    finally:
        with qtbot.waitSignal(window.session.saved, timeout=30_000):
            pg_server.thaw()
    assert "Connected" in window.connection_label.text()
    assert row(window, "cases", claim.lock.key)["resolution"] == "First part"
    assert window.form.changes() == {"resolution": "First part, then more"}  # still unsaved, still journalled


def test_a_long_shift_holds_a_bounded_number_of_connections(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    # The pool's threads get a fresh Python thread state per job; connections kept per thread
    # once leaked one per claim there, and Next item hung after 15 of them.
    window = open_window(demo_config)
    for _ in range(12):  # 24 calls on the fast path: more than the pool (5 + 10 overflow) holds
        _claim(qtbot, window)
        with qtbot.waitSignal(window.session.completed, timeout=10_000):
            qtbot.mouseClick(window.complete_buttons["resolved"], Qt.MouseButton.LeftButton)
    # Once the calls in flight are done (the item's notes and history, a lock check), every
    # transaction's connection is back in the pool; what stays out is at most one held fast-path
    # connection per pool thread.
    assert window.session.dispatcher.wait()
    db = door.engine(window.session.wb).db

    def out(engine: Any) -> int:
        return engine.pool.checkedout() if engine is not None and hasattr(engine.pool, "checkedout") else 0

    assert out(db.engine) == 0
    assert out(db._fast_engine) <= window.session.dispatcher.pool.maxThreadCount()


def test_pick_a_specific_open_item(qtbot: Any, open_window: Any, demo_config: Any, monkeypatch: Any) -> None:
    window = open_window(demo_config)
    offered: list[list[dict[str, Any]]] = []

    def choose_third(self: dialogs.PickDialog) -> bool:
        offered.append(self._rows)
        self.table.selectRow(2)
        return True

    monkeypatch.setattr(dialogs.PickDialog, "exec", choose_third)
    with qtbot.waitSignal(window.session.claimed, timeout=10_000) as signal:
        qtbot.mouseClick(window.pick_button, Qt.MouseButton.LeftButton)
    rows = offered[0]
    assert len(rows) >= 3 and "subject" in rows[0]
    assert signal.args[0].lock.key == rows[2]["case_id"]
    assert row(window, "cases", rows[2]["case_id"])["wb_locked_by"] == "alice"
    qtbot.waitUntil(lambda: not window.findChildren(dialogs.PickDialog), timeout=5000)  # answered: gone


def test_auto_extend_only_while_the_user_works(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    settings = dataclasses.replace(FAST, auto_extend=True, activity_window=30.0)
    window = open_window(demo_config, settings=settings)
    claim = _claim(qtbot, window)
    # Idle: 90 s left, nobody touches the form; the lock is left to run down (with a warning).
    _age_lock(window, "cases", claim.lock.key, 15 * 60 - 90)
    with qtbot.waitSignal(window.session.expiry_warning, timeout=5000):
        window.session.check_now()
    with qtbot.assertNotEmitted(window.session.extended, wait=1500):
        pass
    # Typing counts as work: the next tick extends it.
    with qtbot.waitSignal(window.session.extended, timeout=5000) as signal:
        _type(qtbot, window, "resolution", "still on it")
    assert signal.args[0].remaining.total_seconds() > 14 * 60


def test_window_size_and_queue_are_remembered(qtbot: Any, open_window: Any, demo_config: Any, tmp_path: Any) -> None:
    home = tmp_path / "remember"
    first = open_window(demo_config, home=home)
    first.resize(777, 655)
    first.queue_picker.setCurrentIndex(first.queue_picker.findData("imports"))
    first.named_actions["next_after_complete"].setChecked(False)
    close_window(qtbot, first)
    second = open_window(demo_config, home=home, settings=dataclasses.replace(FAST, next_after_complete=True))
    assert (second.width(), second.height()) == (777, 655)
    assert second.queue_picker.currentData() == "imports" and second.session.queue_name == "imports"


def test_next_after_complete_is_a_setting(demo_config: Any, tmp_path: Any) -> None:
    # The config's [app] default, then the operator's own choice from the View menu wins.
    from workbench.gui import app as gui_app
    from workbench.gui import session as session_mod

    config = dataclasses.replace(
        demo_config, app=dataclasses.replace(demo_config.app, next_after_complete=False, warn_before=300)
    )
    gui_app.application()
    window = gui_app.build_window(config, "alice", home=tmp_path / "h")
    try:
        assert window.session.settings == session_mod.SessionSettings.from_config(config.app)
        follow = window.named_actions["next_after_complete"]
        assert window.session.settings.warn_before == 300 and not follow.isChecked()
        window.named_actions["next_after_complete"].setChecked(True)
    finally:
        window.close()
        window.session.wb.close()
    assert gui_app.user_settings(tmp_path / "h", "alice").value("session/next_after_complete") in (True, "true")
    again = gui_app.build_window(config, "alice", home=tmp_path / "h")
    try:
        assert again.session.settings.next_after_complete is True
    finally:
        again.close()
        again.session.wb.close()


@pytest.mark.parametrize("backend", ["postgresql"])
def test_closed_while_the_database_was_down_then_resumed(
    qtbot: Any, open_window: Any, demo_config: Any, pg_server: Any, tmp_path: Any
) -> None:
    # The server stops mid-session, the Save cannot go through, the operator quits (or the PC
    # restarts); when the server is back, the edits come back and the Save is done with the lock check.
    home = tmp_path / "alice-home"
    first = open_window(demo_config, home=home, settings=dataclasses.replace(FAST, retry_interval=0.3))
    claim = _claim(qtbot, first)
    _type(qtbot, first, "resolution", "Typed before the outage")
    pg_server.take_down()
    try:
        qtbot.mouseClick(first.save_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: first.connection_label.property("state") == "down", timeout=15_000)
        close_window(qtbot, first, answer="quit_keep")  # edits typed: keep the lock, the draft waits
        first.session.dispatcher.wait(15_000)
    finally:
        pg_server.bring_up()
    # The closed window does not send its Save later on its own (it did, under load, and the
    # journal lost the draft it had just saved): the edits wait in the journal for the user.
    qtbot.wait(1500)
    door.engine(first.session.wb).engine.dispose()  # its pooled connections died with the server
    assert row(first, "cases", claim.lock.key)["resolution"] != "Typed before the outage"
    second = open_window(demo_config, home=home)
    assert [(e.key, e.has_draft) for e in second.resume_panel.entries()] == [(claim.lock.key, True)]
    with qtbot.waitSignal(second.session.claimed, timeout=10_000) as signal:
        qtbot.mouseClick(second.resume_panel.open_button, Qt.MouseButton.LeftButton)
    assert signal.args[0].lock.token == claim.lock.token  # still the same, valid lock
    assert second.form.field("resolution").toPlainText() == "Typed before the outage"
    with qtbot.waitSignal(second.session.saved, timeout=10_000):
        qtbot.mouseClick(second.save_button, Qt.MouseButton.LeftButton)
    assert row(second, "cases", claim.lock.key)["resolution"] == "Typed before the outage"


# -- a draft stays reachable whoever holds the item (issue 12, item 2) --------------------------------


def _lose_to_bob(qtbot: Any, window: main_window.MainWindow, text: str) -> Any:
    """Alice types `text`, her lock runs out (nobody has the item yet), then bob claims it and saves."""
    claim = _claim(qtbot, window)
    key = claim.lock.key
    _type(qtbot, window, "resolution", text)
    qtbot.waitUntil(
        lambda: window.session.journal.load(window.session.database, "cases", key) is not None, timeout=3000
    )
    _age_lock(window, "cases", key, 16 * 60)
    with qtbot.waitSignal(window.session.lock_lost, timeout=5000):
        window.session.check_now()
    assert "nobody has taken it since" in window.lost_banner.label.text().lower()
    qtbot.waitUntil(lambda: "free to claim" in window.lost_banner.label.text(), timeout=5000)
    assert window.reclaim_button.isVisible()
    # Another user, through the engine on the same database: claims it and stores his own text.
    bob_queue = door.engine(window.session.wb).queue("cases")
    bob = bob_queue.claim("bob", key)
    bob_queue.save("bob", key, bob.lock.token, {"resolution": "Bob's fix"})
    return key


def _draft_cells(dialog: Any) -> list[list[str]]:
    table = dialog.table
    return [[table.item(r, c).text() for c in range(table.columnCount())] for r in range(table.rowCount())]


def test_a_draft_stays_reachable_after_someone_else_claims(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    from PySide6.QtWidgets import QApplication

    window = open_window(with_queue(demo_config, "cases", max_locks_per_user=0))
    key = _lose_to_bob(qtbot, window, "My careful notes")
    # "Claim again and reapply" (pressed before the banner's next look): refused, says who, keeps the page.
    with qtbot.waitSignal(window.session.nothing_to_do, timeout=10_000):
        qtbot.mouseClick(window.reclaim_button, Qt.MouseButton.LeftButton)
    assert window.stack.currentIndex() == main_window.ITEM
    assert window.form.field("resolution").toPlainText() == "My careful notes"
    assert window.form.field("resolution").isReadOnly()
    assert "bob" in window.lost_banner.label.text() and "kept as a draft" in window.lost_banner.label.text()
    # The banner reads the row again and never says "nobody has taken it" once bob has.
    qtbot.waitUntil(lambda: "Now (checked" in window.lost_banner.label.text(), timeout=5000)
    banner = window.lost_banner.label.text()
    assert "bob holds it" in banner and "nobody" not in banner and not window.reclaim_button.isVisible()
    assert window.session.journal.load(window.session.database, "cases", key).values == {
        "resolution": "My careful notes"
    }
    # The draft, read-only beside the row as it is now.
    qtbot.mouseClick(window.compare_button, Qt.MouseButton.LeftButton)
    dialog = window.drafts.dialog
    assert dialog is not None and dialog.isVisible()
    qtbot.waitUntil(lambda: "bob holds it" in dialog.status.text(), timeout=5000)
    assert _draft_cells(dialog) == [["Resolution", "My careful notes", "", "Bob's fix"]]
    # Copied as text.
    qtbot.mouseClick(dialog.copy_button, Qt.MouseButton.LeftButton)
    copied = QApplication.clipboard().text()
    assert "My careful notes" in copied and "Bob's fix" in copied and "bob holds it" in copied
    assert f"Helpdesk cases {key} by alice" in copied
    # Discarded, after a confirmation: gone from the journal, the page and the resume panel.
    answered = on_dialog(
        qtbot, "discard_draft_question", lambda box: box.button(QMessageBox.StandardButton.Yes).click()
    )
    qtbot.mouseClick(dialog.discard_button, Qt.MouseButton.LeftButton)
    assert answered == ["discard_draft_question"]
    assert window.session.journal.load(window.session.database, "cases", key) is None
    assert window.session.lost is None and not window.lost_banner.isVisible()
    assert "discarded" in window.message_label.text()
    window.show_resume()
    qtbot.waitUntil(lambda: window.stack.currentIndex() == main_window.RESUME, timeout=3000)
    assert [e.key for e in window.resume_panel.entries()] == []
    assert row(window, "cases", key)["resolution"] == "Bob's fix"  # bob's work is untouched


def test_a_draft_of_an_item_bob_holds_opens_from_the_resume_panel(
    qtbot: Any, open_window: Any, demo_config: Any, tmp_path: Any
) -> None:
    config = with_queue(demo_config, "cases", max_locks_per_user=0)
    home = tmp_path / "alice-home"
    first = open_window(config, home=home)
    key = _lose_to_bob(qtbot, first, "Notes from yesterday")
    close_window(qtbot, first)
    second = open_window(config, home=home)
    assert second.stack.currentIndex() == main_window.RESUME
    entries = second.resume_panel.entries()
    assert [(e.key, e.lock, e.has_draft) for e in entries] == [(key, None, True)]
    # Reopening it: bob holds it, so the draft is shown beside the current values; nothing is blanked.
    with qtbot.waitSignal(second.session.nothing_to_do, timeout=10_000):
        qtbot.mouseClick(second.resume_panel.open_button, Qt.MouseButton.LeftButton)
    assert second.stack.currentIndex() == main_window.RESUME
    assert "held by bob" in second.statusBar().currentMessage()
    dialog = second.drafts.dialog
    assert dialog is not None and dialog.isVisible()
    qtbot.waitUntil(lambda: "bob holds it" in dialog.status.text(), timeout=5000)
    assert _draft_cells(dialog) == [["Resolution", "Notes from yesterday", "", "Bob's fix"]]
    dialog.close()
    # The panel's own button shows it too, and discards it from there.
    assert second.resume_panel.draft_button.isEnabled()
    qtbot.mouseClick(second.resume_panel.draft_button, Qt.MouseButton.LeftButton)
    dialog = second.drafts.dialog
    answered = on_dialog(
        qtbot, "discard_draft_question", lambda box: box.button(QMessageBox.StandardButton.Yes).click()
    )
    qtbot.mouseClick(dialog.discard_button, Qt.MouseButton.LeftButton)
    assert answered and second.session.journal.load(second.session.database, "cases", key) is None
    assert second.resume_panel.entries() == [] and not dialog.isVisible()


# -- closing the window (issue 12, item 3) -------------------------------------------------------------


def test_closing_releases_the_untouched_next_item(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    window = open_window(demo_config, settings=dataclasses.replace(FAST, next_after_complete=True))
    first = _claim(qtbot, window)
    with qtbot.waitSignal(window.session.claimed, timeout=10_000) as signal:
        qtbot.mouseClick(window.complete_buttons["resolved"], Qt.MouseButton.LeftButton)
    following = signal.args[0].lock.key
    assert following != first.lock.key and row(window, "cases", following)["wb_locked_by"] == "alice"
    close_window(qtbot, window)  # no question: nothing was touched
    assert row(window, "cases", following)["wb_locked_by"] is None
    last = door.engine(window.session.wb).queue("cases").history(following)[-1]
    assert (last.kind.value, last.actor, last.reason) == ("release", "alice", "closed without changes")


def test_closing_asks_about_a_touched_item(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    window = open_window(demo_config)
    key = _claim(qtbot, window).lock.key
    _type(qtbot, window, "resolution", "Half done")
    close_window(qtbot, window, answer="quit_cancel")
    assert window.isVisible() and window.session.current is not None
    assert row(window, "cases", key)["wb_locked_by"] == "alice"
    assert not window.form.field("resolution").isReadOnly()
    close_window(qtbot, window, answer="quit_release")
    assert row(window, "cases", key)["wb_locked_by"] is None
    last = door.engine(window.session.wb).queue("cases").history(key)[-1]
    assert (last.kind.value, last.reason) == ("release", "released when closing")
    assert window.session.journal.load(window.session.database, "cases", key) is None


@pytest.mark.parametrize("backend", ["sqlite"])
def test_a_window_deleted_while_its_quit_guard_decides_raises_nothing(
    qtbot: Any, demo_config: Any, tmp_path: Any
) -> None:
    from PySide6.QtCore import QEvent

    from workbench.gui import app as gui_app

    gui_app.application()
    window = gui_app.build_window(demo_config, "alice", settings=dataclasses.replace(FAST), home=tmp_path / "home")
    window.show()
    with qtbot.waitSignal(window.session.ready, timeout=20_000):
        window.session.start()
    _claim(qtbot, window)
    window.form.field("resolution").setPlainText("Half done")
    wb = window.session.wb
    qtbot.waitUntil(lambda: not window.session.dispatcher.busy, timeout=10_000)
    window.close()  # nothing in flight: the guard's decision is queued at once
    assert window.quit_guard.state == "settling"
    window.deleteLater()  # as a launcher or a test deletes a window it is done with
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    qtbot.wait(50)  # the decision's turn: pytest-qt fails the test on an exception raised in it
    wb.close()


@pytest.mark.parametrize("backend", ["postgresql"])
def test_closing_on_a_frozen_database_is_bounded(
    qtbot: Any, open_window: Any, demo_config: Any, pg_server: Any
) -> None:
    import time

    window = open_window(demo_config)
    key = _claim(qtbot, window).lock.key
    window.quit_guard._deadline.setInterval(1500)
    pg_server.freeze()
    try:
        started = time.monotonic()
        window.close()
        qtbot.waitUntil(lambda: window.quit_guard.notice is not None, timeout=10_000)
        waited = time.monotonic() - started
        text = window.quit_guard.notice.text()
        assert f"Helpdesk cases {key}" in text and "runs out on its own" in text
        window.quit_guard.notice.accept()
        qtbot.waitUntil(lambda: not window.isVisible(), timeout=3000)
        assert waited < 5
    finally:
        pg_server.thaw()
    # Nothing half-done. The release was sent to the frozen server, which runs it once thawed, or
    # not at all (the window had stopped waiting): the item is either still alice's, its lock
    # running out on its own, or released with the release recorded.
    holder = row(window, "cases", key)["wb_locked_by"]
    if holder is None:
        last = door.engine(window.session.wb).queue("cases").history(key)[-1]
        assert (last.kind.value, last.actor, last.reason) == ("release", "alice", "closed without changes")
    else:
        assert holder == "alice"


_STUCK_AT_EXIT = """
import sys, time
from pathlib import Path
from workbench import demo
from workbench.gui import app as gui_app
from workbench.gui import launcher

config = str(demo.create(Path(sys.argv[1])))
shown = gui_app._report_ready
# The bounded wait for the stuck call, shortened: what is tested is that the process ends after it.
launcher.DISPOSE_WAIT_MS = 300

def ready_then_stuck(app, window, path):
    # A call that never comes back, as on a frozen database server.
    window.session.dispatcher.call(lambda: time.sleep(300), lambda result: None, lambda exc: None)
    shown(app, window, path)

gui_app._report_ready = ready_then_stuck
sys.exit(gui_app.run(config, "alice"))
"""


def test_quit_is_not_held_up_by_a_stuck_database_call(tmp_path: Any) -> None:
    # The pool thread of a call stuck on a dead server kept the process alive after the window had
    # closed (Qt's thread pool waits for its threads at exit): quitting must end the process.
    import os
    import subprocess
    import sys
    import time

    env = dict(
        os.environ,
        QT_QPA_PLATFORM="offscreen",
        HOME=str(tmp_path),
        XDG_DATA_HOME=str(tmp_path / "d"),
        XDG_CONFIG_HOME=str(tmp_path / "c"),
        WORKBENCH_READY_FILE=str(tmp_path / "ready"),
    )
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", _STUCK_AT_EXIT, str(tmp_path / "demo")],
        env=env,
        timeout=120,
        check=False,
        capture_output=True,
        text=True,
    )
    took = time.monotonic() - started
    assert (tmp_path / "ready").exists(), done.stderr
    assert done.returncode == 0, done.stderr
    assert took < 40, f"the process took {took:.0f} s to end"


def _ok_button(dialog: Any) -> Any:
    from PySide6.QtWidgets import QDialogButtonBox

    return dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok)


def _log_texts(window: main_window.MainWindow) -> list[str]:
    return [window.item_log.entries.item(i).text() for i in range(window.item_log.entries.count())]


def test_notes_and_history_beside_the_form(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    window = open_window(demo_config)
    claim = _claim(qtbot, window)
    qtbot.waitUntil(lambda: any(t.startswith("Claimed by alice") for t in _log_texts(window)), timeout=10_000)
    assert not window.item_log.add_button.isEnabled()  # nothing to add yet
    qtbot.keyClicks(window.item_log.note, "Customer calls back after 15:00.")
    qtbot.mouseClick(window.item_log.add_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: any("Customer calls back after 15:00." in t for t in _log_texts(window)), timeout=10_000)
    assert window.item_log.note.toPlainText() == ""
    note = next(t for t in _log_texts(window) if "calls back" in t)
    assert note.startswith("alice wrote, ")
    stored = door.engine(window.session.wb).queue("cases").notes(claim.lock.key)
    assert [(n.author, n.text) for n in stored] == [("alice", "Customer calls back after 15:00.")]
    # The next item shows its own log, not this one's.
    window.session.settings.next_after_complete = False
    with qtbot.waitSignal(window.session.completed, timeout=10_000):
        window.complete(None)
    _claim(qtbot, window)
    qtbot.waitUntil(
        lambda: bool(_log_texts(window)) and not any("calls back" in t for t in _log_texts(window)), timeout=10_000
    )


def test_a_required_note_is_asked_for_before_release_and_complete(
    qtbot: Any, open_window: Any, demo_config: Any
) -> None:
    window = open_window(with_queue(demo_config, "cases", notes_required=("release", "resolved")))
    claim = _claim(qtbot, window)
    _type(qtbot, window, "resolution", "Port replaced")

    observed: dict[str, Any] = {}

    def refuse_empty_then_cancel(dialog: Any) -> None:
        ok = _ok_button(dialog)
        observed["complete"] = (ok.text(), ok.isEnabled())  # no note, no Complete
        dialog.reject()

    seen = on_dialog(qtbot, "note_dialog", refuse_empty_then_cancel)
    window.complete(None)
    qtbot.waitUntil(lambda: bool(seen), timeout=5000)
    assert observed["complete"] == ("Complete as “Resolve”", False)
    assert row(window, "cases", claim.lock.key)["wb_locked_by"] == "alice"  # cancelled: nothing happened

    def release_with_note(dialog: Any) -> None:
        ok = _ok_button(dialog)
        observed["release"] = [ok.isEnabled()]
        qtbot.keyClicks(dialog.note_box, "Needs the network team.")
        observed["release"].append(ok.isEnabled())
        dialog.accept()

    seen = on_dialog(qtbot, "release_dialog", release_with_note)
    with qtbot.waitSignal(window.session.released, timeout=10_000):
        window.release()
    assert observed["release"] == [False, True]
    stored = door.engine(window.session.wb).queue("cases").notes(claim.lock.key)
    assert [(n.kind, n.text) for n in stored] == [("release", "Needs the network team.")]

    window.session.settings.next_after_complete = False
    again = _claim(qtbot, window)

    def complete_with_note(dialog: Any) -> None:
        qtbot.keyClicks(dialog.note_box, "Replaced the switch port.")
        dialog.accept()

    seen = on_dialog(qtbot, "note_dialog", complete_with_note)
    with qtbot.waitSignal(window.session.completed, timeout=10_000):
        window.complete(None)
    assert [(n.kind, n.text) for n in door.engine(window.session.wb).queue("cases").notes(again.lock.key)][-1] == (
        "complete",
        "Replaced the switch port.",
    )


def test_release_offers_the_queues_own_reasons(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    from workbench.config import model

    writes = (model.Assignment("category", "value", "Hardware", 'queues.cases.release_reasons."Needs a specialist"'),)
    reasons = (model.ReleaseReason("Not my area", ()), model.ReleaseReason("Needs a specialist", writes))
    window = open_window(with_queue(demo_config, "cases", release_reasons=reasons))
    claim = _claim(qtbot, window)
    offered: list[str] = []

    def pick_specialist(dialog: Any) -> None:
        offered.extend(dialog.reason.itemText(i) for i in range(dialog.reason.count()))
        dialog.reason.setCurrentText("Needs a specialist")
        dialog.accept()

    on_dialog(qtbot, "release_dialog", pick_specialist)
    with qtbot.waitSignal(window.session.released, timeout=10_000):
        window.release()
    assert offered == ["Not my area", "Needs a specialist"]
    assert row(window, "cases", claim.lock.key)["category"] == "Hardware"


def test_the_keyboard_loop_needs_three_keys_beyond_typing(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    """Next → type → Complete → the next item: focus lands in the field to fill, so only Ctrl+N, one Tab
    between the two empty fields, and Ctrl+Return are pressed besides the text."""
    window = open_window(demo_config, settings=dataclasses.replace(FAST, next_after_complete=True))
    window.activateWindow()
    pressed = []

    def press(key: Qt.Key, modifier: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier) -> None:
        pressed.append(key)
        qtbot.keyClick(QApplication.focusWidget() or window, key, modifier)

    def typing(text: str) -> None:
        qtbot.keyClicks(QApplication.focusWidget(), text)

    with qtbot.waitSignal(window.session.claimed, timeout=10_000) as first:
        press(Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is window.form.field("resolution"))
    typing("Reset the profile")
    press(Qt.Key.Key_Tab)
    typing("15")
    with qtbot.waitSignal(window.session.claimed, timeout=10_000) as second:
        press(Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert len(pressed) <= 3, pressed
    stored = row(window, "cases", first.args[0].lock.key)
    assert (stored["status"], stored["resolution"], stored["time_spent_min"]) == ("resolved", "Reset the profile", 15)
    assert second.args[0].lock.key != first.args[0].lock.key
    qtbot.waitUntil(lambda: QApplication.focusWidget() is window.form.field("resolution"))  # ready for the next


def test_defer_until_a_time_from_the_window(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    window = open_window(demo_config)
    claim = _claim(qtbot, window)
    window.session.dispatcher.wait()
    states: list[tuple[bool, str]] = []

    def fill(dialog: dialogs.DeferDialog) -> None:
        states.append((dialog.ok.isEnabled(), dialog.problem.text()))  # no reason yet
        qtbot.mouseClick(dialog.findChild(type(dialog.ok), "defer_hour"), Qt.MouseButton.LeftButton)
        dialog.reason.setCurrentText("Customer calls back")
        dialog.note_box.setPlainText("Ask for the invoice number.")
        states.append((dialog.ok.isEnabled(), dialog.problem.text()))
        qtbot.mouseClick(dialog.ok, Qt.MouseButton.LeftButton)

    on_dialog(qtbot, "defer_dialog", fill)
    with qtbot.waitSignal(window.session.deferred, timeout=10_000) as signal:
        qtbot.mouseClick(window.defer_button, Qt.MouseButton.LeftButton)
    assert states[0][0] is False and "why" in states[0][1] and states[1] == (True, "")
    deferral = signal.args[0]
    left = (deferral.until - dt.datetime.now(dt.UTC)).total_seconds()
    assert 3000 < left <= 3600 and deferral.reason == "Customer calls back"
    assert "Deferred until" in window.message_label.text() and window.session.current is None
    q = door.engine(window.session.wb).queue("cases")
    assert row(window, "cases", claim.lock.key)["wb_locked_by"] is None
    assert [str(d.key) for d in q.deferred()] == [str(claim.lock.key)]
    assert [n.text for n in q.notes(claim.lock.key)] == ["Ask for the invoice number."]
    with qtbot.waitSignal(window.session.claimed, timeout=10_000) as again:
        window.next_item()
    assert again.args[0].lock.key != claim.lock.key  # not before its time


def test_ctrl_return_in_a_dialogs_note_confirms_it(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    """Issue 53: Ctrl+Return in the Release and Defer dialogs' note did nothing; beside the form it adds
    the note. In a dialog it presses the dialog's button, when it may be pressed (a reason first)."""
    window = open_window(demo_config)
    claim = _claim(qtbot, window)
    window.session.dispatcher.wait()
    seen: list[bool] = []

    def defer(dialog: dialogs.DeferDialog) -> None:
        dialog.note_box.setFocus()
        qtbot.keyClicks(dialog.note_box, "Calls back at three.")
        qtbot.keyClick(dialog.note_box, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
        seen.append(dialog.isVisible())  # no reason yet: the dialog stays, the note is not cut
        dialog.reason.setCurrentText("Customer calls back")
        QTimer.singleShot(3000, dialog, dialog.reject)  # should the key not close it: the test fails, not hangs
        qtbot.keyClick(dialog.note_box, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)

    on_dialog(qtbot, "defer_dialog", defer)
    with qtbot.waitSignal(window.session.deferred, timeout=10_000):
        qtbot.mouseClick(window.defer_button, Qt.MouseButton.LeftButton)
    assert seen == [True]
    q = door.engine(window.session.wb).queue("cases")
    assert [n.text for n in q.notes(claim.lock.key)] == ["Calls back at three."]

    other = _claim(qtbot, window)
    window.session.dispatcher.wait()

    def release(dialog: dialogs.ReleaseDialog) -> None:
        dialog.reason.setCurrentText("Not my area")
        dialog.note_box.setFocus()
        qtbot.keyClicks(dialog.note_box, "Try the network team.")
        QTimer.singleShot(3000, dialog, dialog.reject)
        qtbot.keyClick(dialog.note_box, Qt.Key.Key_Enter, Qt.KeyboardModifier.ControlModifier)

    on_dialog(qtbot, "release_dialog", release)
    with qtbot.waitSignal(window.session.released, timeout=10_000):
        qtbot.mouseClick(window.release_button, Qt.MouseButton.LeftButton)
    assert row(window, "cases", other.lock.key)["wb_locked_by"] is None
    assert [n.text for n in q.notes(other.lock.key)] == ["Try the network team."]


def test_every_kind_of_event_has_a_label_in_the_history() -> None:
    from workbench.core import models
    from workbench.gui import item_log

    assert set(item_log.EVENT_LABELS) == set(models.EventKind)


def test_the_resume_panel_counts_down_to_due(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    window = open_window(demo_config)
    claim = _claim(qtbot, window)
    window.session.dispatcher.wait()
    with qtbot.waitSignal(window.session.mine_loaded, timeout=10_000):
        window.session.refresh_mine()
    table = window.resume_panel.table
    row = next(r for r in range(table.rowCount()) if table.item(r, 1).text() == str(claim.lock.key))
    due = claim.item["due_at"]
    expected = "overdue by" if clock.stored_utc(due) < claim.lock.db_now else "in "
    assert table.item(row, 6).text().startswith(expected) and not table.isColumnHidden(6)


def test_undo_the_last_complete_from_the_window(
    qtbot: Any, open_window: Any, demo_config: Any, monkeypatch: Any
) -> None:
    window = open_window(demo_config, settings=dataclasses.replace(FAST, next_after_complete=True))
    first = _claim(qtbot, window)
    window.session.dispatcher.wait()
    assert not window.named_actions["undo"].isEnabled()
    with qtbot.waitSignal(window.session.claimed, timeout=10_000) as following:
        qtbot.mouseClick(window.complete_buttons["waiting"], Qt.MouseButton.LeftButton)
    window.session.dispatcher.wait()
    second = following.args[0]
    assert window.named_actions["undo"].isEnabled() and "Undo: Ctrl+U" in window.statusBar().currentMessage()
    # Worked on the next item already: undo says to finish it first, and does nothing.
    told: list[str] = []
    monkeypatch.setattr(QMessageBox, "information", lambda *args: told.append(args[2]))
    _type(qtbot, window, "resolution", "started")
    window.named_actions["undo"].trigger()
    assert told and "first" in told[0] and window.session.current.lock.key == second.lock.key
    window.form.show_item(second.item)  # the edit undone: the item is untouched again
    window.quit_guard._touched = False
    with qtbot.waitSignal(window.session.claimed, timeout=10_000) as back:
        window.named_actions["undo"].trigger()
    assert back.args[0].lock.key == first.lock.key and back.args[0].lock.owner == "alice"
    assert row(window, "cases", first.lock.key)["status"] == "open"
    assert row(window, "cases", second.lock.key)["wb_locked_by"] is None  # given back
    history = door.engine(window.session.wb).queue("cases").history(second.lock.key)
    assert history[-1].kind.value == "release" and history[-1].reason == session.UNDO_RELEASE
    window.session.dispatcher.wait()
    assert not window.named_actions["undo"].isEnabled()  # one undo per Complete


def test_a_typed_note_is_never_lost(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    """Ctrl+Return in the note box adds the note (it completes everywhere else); a note typed and
    not added goes with Complete, into Release's and Defer's note, or onto the item before Next."""
    window = open_window(demo_config)
    window.activateWindow()
    notes = door.engine(window.session.wb).queue("cases").notes
    first = _claim(qtbot, window)
    qtbot.waitUntil(lambda: bool(_log_texts(window)), timeout=10_000)
    window.item_log.note.setFocus()
    qtbot.keyClicks(window.item_log.note, "Called the customer.")
    qtbot.keyClick(window.item_log.note, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: any("Called the customer." in t for t in _log_texts(window)), timeout=10_000)
    assert window.session.current is not None and window.session.current.lock.key == first.lock.key
    assert row(window, "cases", first.lock.key)["wb_locked_by"] == "alice"  # added, not completed
    assert window.item_log.note.toPlainText() == ""

    # Typed, not added, then Complete from the form: the note goes with it.
    qtbot.keyClicks(window.item_log.note, "Swapped the dock.")
    _type(qtbot, window, "resolution", "Dock replaced")
    with qtbot.waitSignal(window.session.completed, timeout=10_000):
        qtbot.keyClick(window.form.field("resolution"), Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert [(n.kind, n.text) for n in notes(first.lock.key)] == [
        (None, "Called the customer."),
        ("complete", "Swapped the dock."),
    ]

    # Typed, not added, then Release: the dialog's note holds it.
    second = _claim(qtbot, window)
    qtbot.keyClicks(window.item_log.note, "Printer on floor 3.")
    offered: list[str] = []

    def release(dialog: Any) -> None:
        offered.append(dialog.note_box.toPlainText())
        dialog.reason.setCurrentText("Not my area")
        dialog.accept()

    on_dialog(qtbot, "release_dialog", release)
    with qtbot.waitSignal(window.session.released, timeout=10_000):
        window.release()
    assert offered == ["Printer on floor 3."]
    assert [(n.kind, n.text) for n in notes(second.lock.key)] == [("release", "Printer on floor 3.")]

    # Typed, not added, then Next item: the note is added to the item being left.
    third = _claim(qtbot, window)
    qtbot.waitUntil(lambda: bool(_log_texts(window)), timeout=10_000)
    qtbot.keyClicks(window.item_log.note, "Waiting for the serial number.")
    fourth = _claim(qtbot, window)
    window.session.dispatcher.wait(10_000)
    assert fourth.lock.key != third.lock.key
    assert [(n.kind, n.text) for n in notes(third.lock.key)] == [(None, "Waiting for the serial number.")]


def _held_by(window: main_window.MainWindow, user: str) -> set[Any]:
    q = door.engine(window.session.wb).queue("cases").q
    with door.engine(window.session.wb).engine.connect() as conn:
        return set(conn.execute(sa.select(q.key).where(q.user == user)).scalars())


def test_next_item_with_an_item_open_gives_it_back_or_asks(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    """No lock is left behind unseen: Next item gives an untouched item back, and asks about a touched one
    (keep it, save it, give it back, or stay), as closing the window does."""
    window = open_window(demo_config)
    first = _claim(qtbot, window).lock.key
    second = _claim(qtbot, window).lock.key  # first untouched: given back
    assert _held_by(window, "alice") == {second}
    last = door.engine(window.session.wb).queue("cases").history(first)[-1]
    assert (last.kind.value, last.reason) == ("release", "left without changes")

    def answer(button: str) -> list[str]:
        return on_dialog(qtbot, "leave_dialog", lambda box: box.findChild(QAbstractButton, button).click())

    _type(qtbot, window, "resolution", "Stay here")
    seen = answer("leave_cancel")
    window.next_item()
    assert seen and window.session.current.lock.key == second and _held_by(window, "alice") == {second}

    seen = answer("leave_save")
    with qtbot.waitSignal(window.session.claimed, timeout=10_000) as signal:
        window.next_item()
    third = signal.args[0].lock.key
    assert _held_by(window, "alice") == {second, third}
    assert row(window, "cases", second)["resolution"] == "Stay here"  # saved, and still locked

    _type(qtbot, window, "resolution", "Keep me")
    seen = answer("leave_keep")
    with qtbot.waitSignal(window.session.claimed, timeout=10_000) as signal:
        window.next_item()
    fourth = signal.args[0].lock.key
    assert _held_by(window, "alice") == {second, third, fourth}
    kept = window.session.journal.load(window.session.database, "cases", third)
    assert kept is not None and kept.values["resolution"] == "Keep me"  # waits among the unfinished items

    _type(qtbot, window, "resolution", "Not mine after all")
    seen = answer("leave_release")
    with qtbot.waitSignal(window.session.claimed, timeout=10_000) as signal:
        window.next_item()
    assert _held_by(window, "alice") == {second, third, signal.args[0].lock.key}
    assert door.engine(window.session.wb).queue("cases").history(fourth)[-1].reason == "released when leaving"

    # Ctrl+L shows the unfinished items while one is open; choosing the open one comes back to it.
    window.show_resume()
    assert window.stack.currentIndex() == main_window.RESUME
    qtbot.waitUntil(lambda: {e.key for e in window.resume_panel.entries()} >= {second, third}, timeout=10_000)
    open_key = window.session.current.lock.key
    window._open_from_resume("cases", open_key)
    assert window.stack.currentIndex() == main_window.ITEM and window.session.current.lock.key == open_key


def test_the_leave_question_follows_the_lock(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    """Issue 53: "Leave this item?" left open kept saying "it stays yours until 20:53:46" after that time
    had passed and the lock was lost and claimed again behind it. Its text follows the lock: lost (and
    Keep or Give back not offered), then, claimed again, yours until the new lock's expiry."""
    from PySide6.QtWidgets import QAbstractButton

    from workbench.gui import times

    window = open_window(demo_config)
    claim = _claim(qtbot, window)
    _type(qtbot, window, "subject", "Half way")
    seen: list[str] = []

    def follow(box: Any) -> None:
        keep = box.findChild(QAbstractButton, "leave_keep")
        try:
            seen.append(box.informativeText())
            _age_lock(window, "cases", claim.lock.key, 15 * 60 + 5)  # the demo's cases lock: 15 minutes, run out
            window.session.check_now()
            qtbot.waitUntil(lambda: "Lock lost" in box.informativeText(), timeout=10_000)
            seen.append(box.informativeText())
            assert not keep.isEnabled()
            window.session.open_item(claim.lock.key, "cases")  # claimed again meanwhile
            qtbot.waitUntil(lambda: window.session.current is not None, timeout=10_000)
            again = window.session.current.lock.expires_at
            qtbot.waitUntil(lambda: times.clock(again) in box.informativeText(), timeout=5_000)
            seen.append(box.informativeText())
            assert keep.isEnabled()
        finally:
            box.findChild(QAbstractButton, "leave_cancel").click()

    on_dialog(qtbot, "leave_dialog", follow)
    window.next_item()
    assert len(seen) == 3, seen
    assert times.clock(claim.lock.expires_at) in seen[0] and "stays yours" in seen[0]
    assert "stays yours" not in seen[1] and "draft" in seen[1]
    assert "stays yours" in seen[2]
