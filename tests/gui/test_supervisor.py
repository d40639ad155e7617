"""The supervisor console: board sort/filter/colours, refresh keeps the selection, force release, reassign."""

from __future__ import annotations

import csv
import datetime as dt
import gc
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QFileDialog, QMessageBox

from tests import support
from tests.gui.conftest import on_dialog
from workbench.db import audit as audit_mod
from workbench.db import clock, service
from workbench.db.supervision import Supervision
from workbench.gui import app as gui_app
from workbench.gui import board_model, supervisor, supervisor_dialogs, theme
from workbench.services import door


@pytest.fixture
def console(qtbot: Any, demo_config: Any) -> Iterator[Callable[..., supervisor.SupervisorWindow]]:
    made: list[supervisor.SupervisorWindow] = []

    def make(user: str = "sup", changes_seconds: float = 0) -> supervisor.SupervisorWindow:
        gui_app.application()
        wb = service.Workbench.open(demo_config)
        # Refreshed by the test (changes_seconds: the change feed's looks, off unless a test is about it).
        window = supervisor.SupervisorWindow(wb, user, refresh_seconds=600, changes_seconds=changes_seconds)
        qtbot.addWidget(window)
        window.show()
        made.append(window)
        return window

    yield make
    for window in made:
        window.close()
        window.dispatcher.wait(10_000)
        window.wb.close()


def refreshed(qtbot: Any, window: supervisor.SupervisorWindow) -> None:
    """Refresh and wait for the answer."""
    window.status.setText("")
    window.refresh()
    qtbot.waitUntil(lambda: "Refreshed" in window.status.text(), timeout=20_000)


def board_keys(window: supervisor.SupervisorWindow) -> list[Any]:
    """Item keys in the order the (sorted, filtered) board shows them."""
    return [window.model.index(r, 1).data() for r in range(window.model.rowCount())]


def claim(window: supervisor.SupervisorWindow, user: str, count: int = 1) -> list[Any]:
    return [c.lock.key for c in door.engine(window.wb).queue("cases").claim_next(user, count)]


def select(window: supervisor.SupervisorWindow, keys: list[Any]) -> None:
    window.board.clearSelection()
    selection = window.board.selectionModel()
    for r in range(window.model.rowCount()):
        if window.model.index(r, 1).data() in {str(k) for k in keys}:
            selection.select(window.model.index(r, 0), selection.SelectionFlag.Select | selection.SelectionFlag.Rows)


def test_board_sorts_filters_and_colours(qtbot: Any, console: Any) -> None:
    window = console()
    ann = claim(window, "ann", 2)
    bob = claim(window, "bob")
    support.age_lock(door.engine(window.wb), "cases", ann[0], 600)  # the oldest lock
    support.age_lock(door.engine(window.wb), "cases", bob[0], 60 * 60)  # past its 15 minutes: expired
    table = door.engine(window.wb).queue("cases").q.table
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    with door.engine(window.wb).engine.begin() as conn:  # one item due in two days, one a day overdue
        conn.execute(sa.update(table).where(table.c.case_id == ann[1]).values(due_at=now + dt.timedelta(days=2)))
        conn.execute(sa.update(table).where(table.c.case_id == bob[0]).values(due_at=now - dt.timedelta(days=1)))
    refreshed(qtbot, window)
    assert window.model.rowCount() == 3
    assert not window.board.isColumnHidden(board_model.DUE)
    due = {window.model.index(r, 1).data(): window.model.index(r, board_model.DUE) for r in range(3)}
    assert due[str(ann[1])].data().startswith("in 1d23h") and due[str(bob[0])].data().startswith("overdue by 1d")
    assert due[str(bob[0])].data(Qt.ItemDataRole.ForegroundRole).color() == theme.current().qcolor("error_fg")
    assert due[str(ann[1])].data(Qt.ItemDataRole.ForegroundRole) is None
    # The queue as people know it (its title), not its config name.
    assert {window.model.index(r, 0).data() for r in range(3)} == {"Helpdesk cases"}
    window.board.sortByColumn(5, Qt.SortOrder.DescendingOrder)  # age, oldest first
    assert board_keys(window) == [str(bob[0]), str(ann[0]), str(ann[1])]
    window.board.sortByColumn(1, Qt.SortOrder.AscendingOrder)  # keys sort as numbers, not text
    assert board_keys(window) == [str(k) for k in sorted([*ann, *bob])]
    expired = next(r for r in range(window.model.rowCount()) if window.model.index(r, 1).data() == str(bob[0]))
    past = theme.current().qcolor("board_past_bg")
    assert window.model.index(expired, 3).data(Qt.ItemDataRole.BackgroundRole).color() == past
    assert window.model.index(expired, 6).data().startswith("expired")
    fresh = next(r for r in range(window.model.rowCount()) if window.model.index(r, 1).data() == str(ann[1]))
    assert window.model.index(fresh, 3).data(Qt.ItemDataRole.BackgroundRole) is None
    # Export: every lock, durations as whole seconds with the unit in the header, times as ISO 8601.
    header, *rows = window.model.csv_rows()
    assert header[4:8] == ["Claimed at", "Age (s)", "Time left (s)", "Idle (s)"]
    oldest = next(r for r in rows if r[1] == str(bob[0]))
    assert oldest[0] == "Helpdesk cases"
    assert 3600 <= oldest[5] < 3700 and oldest[6] < 0 and dt.datetime.fromisoformat(oldest[4])
    assert header[board_model.DUE] == "Due" and dt.datetime.fromisoformat(oldest[board_model.DUE]) < now
    window.holder_filter.setText("AN")  # case-insensitive, part of the name
    assert sorted(board_keys(window)) == sorted(str(k) for k in ann)
    window.holder_filter.setText("")
    window.queue_filter.setCurrentIndex(window.queue_filter.findData("imports"))
    assert board_keys(window) == []


def test_refresh_keeps_the_selection_and_the_scroll_position(qtbot: Any, console: Any) -> None:
    window = console()
    window.resize(900, 300)
    keys = [k for user in ("ann", "bob", "cid", "dee", "eve", "fay") for k in claim(window, user, 3)]
    refreshed(qtbot, window)
    window.board.sortByColumn(1, Qt.SortOrder.AscendingOrder)
    target = sorted(keys)[10]
    select(window, [target])
    window.board.scrollTo(window.board.selectionModel().selectedRows()[0])
    scroll = window.board.verticalScrollBar().value()
    assert scroll > 0
    # Meanwhile: the first lock goes away (released), new ones come.
    q = door.engine(window.wb).queue("cases")
    gone = min(q.locks(), key=lambda lock: lock.key)
    q.release(gone.owner, gone.key, gone.token, "test")
    claim(window, "gus", 2)
    refreshed(qtbot, window)
    assert [r.key for r in window.selected_rows()] == [target]
    # Still in view where the supervisor left it (no jump to the top).
    selected = window.board.selectionModel().selectedRows()[0]
    assert window.board.visualRect(selected).intersects(window.board.viewport().rect())
    assert window.board.verticalScrollBar().value() > 0
    assert window.model.rowCount() == len(keys) - 1 + 2


LOCKS = 3000  # enough that anything done per row or per cell shows as thousands of signals


def test_a_refresh_of_thousands_of_locks_is_one_layout_change(qtbot: Any, tmp_path: Path) -> None:
    """A refresh updates the board in bulk: one layout change and one dataChanged, whatever the
    number of locks, with no row-by-row signals and no column sizing; the selection and the
    scroll position stay. (Each row used to send its own signal, and every one resized every
    column to its contents: seconds of frozen window per refresh. Its time is in board_bench.)"""
    env = support.Env("sqlite", "native", f"sqlite:///{tmp_path / 'board.db'}", tmp_path)
    env.demo(case_rows=2 * LOCKS, import_rows=10, queues={"cases": {"max_locks_per_user": 0}})
    gui_app.application()
    wb = service.Workbench.open(env.demo_config({"cases": {"max_locks_per_user": 0}}))
    frozen = gc.get_freeze_count()  # what the test run froze (tests/conftest.py: what collection made)
    window = supervisor.SupervisorWindow(wb, "sup", refresh_seconds=600, changes_seconds=0)
    qtbot.addWidget(window)
    try:
        window.resize(1000, 400)
        window.show()
        q = wb.queue("cases")
        for user in ("ann", "bob", "cid"):
            assert len(q.claim_next(user, LOCKS // 3)) == LOCKS // 3
        refreshed(qtbot, window)
        assert window.model.rowCount() == LOCKS
        assert gc.get_freeze_count() > frozen  # the collector's full passes leave the process's old objects alone
        header = window.board.horizontalHeader()
        assert all(header.sectionResizeMode(c) != header.ResizeMode.ResizeToContents for c in range(header.count()))
        window.board.sortByColumn(1, Qt.SortOrder.AscendingOrder)
        target = window.model.index(LOCKS // 2, 1).data()
        select(window, [target])
        window.board.scrollTo(window.board.selectionModel().selectedRows()[0], window.board.ScrollHint.PositionAtCenter)
        assert window.board.verticalScrollBar().value() > 0
        # Meanwhile: a lock goes away, new ones come, every other one ages (its cells change).
        gone = min(q.locks(), key=lambda lock: lock.key)
        q.release(gone.owner, gone.key, gone.token, "test")
        claim(window, "gus", 5)
        # The clock's own once-a-second countdown (tests/gui/test_board_clock.py) is not the refresh's:
        # stopped, or a tick during a slow refresh counts a second dataChanged.
        window._clock.stop()
        signals: dict[str, int] = {}
        for name in ("dataChanged", "layoutChanged", "rowsInserted", "rowsRemoved", "modelReset"):
            getattr(window.model, name).connect(
                lambda *_a, name=name: signals.__setitem__(name, signals.get(name, 0) + 1)
            )
        resized: list[int] = []
        header.sectionResized.connect(lambda section, *_: resized.append(section))
        refreshed(qtbot, window)
        qtbot.wait(50)  # let the paint and any posted layout work run
        assert signals == {"layoutChanged": 1, "dataChanged": 1}
        assert resized == []  # sized once, at the first locks; never per refresh (nor per row)
        assert window.model.rowCount() == LOCKS - 1 + 5
        assert [str(r.key) for r in window.selected_rows()] == [target]
        assert window.board.verticalScrollBar().value() > 0
        selected = window.board.selectionModel().selectedRows()[0]
        assert window.board.visualRect(selected).intersects(window.board.viewport().rect())
    finally:
        window.close()
        window.dispatcher.wait(10_000)
        wb.close()
        env.close()


def test_force_release_needs_a_reason_and_tells_the_holder(
    qtbot: Any, console: Any, open_window: Any, demo_config: Any
) -> None:
    operator = open_window(demo_config, user="ann")
    with qtbot.waitSignal(operator.session.claimed, timeout=20_000):
        operator.next_button.click()
    held = operator.session.current.lock.key
    window = console("sup")
    other = claim(window, "bob")
    refreshed(qtbot, window)
    select(window, [held, other[0]])
    assert window.force_button.isEnabled() and window.reassign_button.isEnabled()  # both take several
    tried: list[str] = []
    kept: list[Any] = []  # the dialog's wrapper, held as a callback or a traceback may hold it

    def act(dialog: Any) -> None:
        kept.append(dialog)
        dialog.confirm.click()  # no reason yet: refused, the dialog stays
        tried.append(dialog.findChild(type(dialog.problem), "dialog_problem").text())
        dialog.reason_box.setCurrentText("Customer escalated")
        dialog.confirm.click()

    on_dialog(qtbot, "force_release_dialog", act)
    window.status.setText("")
    # Heard from now on: the holder's periodic check (every second here) may tell before the console's
    # own refresh below is done (a loaded CI machine: the signal came before a waitSignal listened).
    lost: list[Any] = []
    operator.session.lock_lost.connect(lost.append)
    window.force_release()
    qtbot.waitUntil(lambda: "Refreshed" in window.status.text(), timeout=20_000)
    assert "released" in window.status.text()  # the report stays in front of the refresh it triggered
    # Answered, the dialog goes, held or not: one per action stayed as the console's hidden child for the day.
    qtbot.waitUntil(lambda: not window.findChildren(supervisor_dialogs.ForceReleaseDialog), timeout=5000)
    qtbot.waitUntil(lambda: window.model.rowCount() == 0, timeout=20_000)
    assert "Give a reason" in tried[0]
    assert door.engine(window.wb).queue("cases").locks() == []
    events = door.engine(window.wb).queue("cases").history(held)
    assert events[-1].kind.value == "force_release" and events[-1].reason == "Customer escalated"
    # The holder's window learns at its next check, and says who and why.
    operator.session.check_now()
    qtbot.waitUntil(lambda: bool(lost), timeout=20_000)
    assert lost[0].by == "sup" and lost[0].reason == "Customer escalated"
    assert "sup" in operator.lost_banner.label.text() and "Customer escalated" in operator.lost_banner.label.text()


def test_reassign_moves_the_lock(qtbot: Any, console: Any) -> None:
    window = console("sup")
    key = claim(window, "ann")[0]
    claim(window, "bob")
    refreshed(qtbot, window)
    select(window, [key])

    def act(dialog: Any) -> None:
        assert [dialog.user_box.itemText(i) for i in range(dialog.user_box.count())] == ["bob"]
        said.append(dialog.message.text())
        kept.append(dialog)  # its wrapper held: answered, it goes all the same
        dialog.user_box.setCurrentText("bob")
        dialog.reason_box.setCurrentText("Shift ended")
        dialog.confirm.click()

    said: list[str] = []
    kept: list[Any] = []
    seen = on_dialog(qtbot, "reassign_dialog", act)
    window.reassign()
    qtbot.waitUntil(lambda: any(r.key == key and r.owner == "bob" for r in window.model.rows), timeout=20_000)
    # The queue by its title, as the board shows it (issue 53: "Move cases 7 from ann …").
    assert said[0].startswith(f"Move Helpdesk cases {key} from ann"), said
    assert seen and [lock.key for lock in door.engine(window.wb).queue("cases").mine("bob")].count(key) == 1
    assert door.engine(window.wb).queue("cases").mine("ann") == []
    qtbot.waitUntil(lambda: not window.findChildren(supervisor_dialogs.ReassignDialog), timeout=5000)  # answered: gone


def test_move_starts_from_a_column_items_are_moved_by(qtbot: Any, console: Any) -> None:
    """Issue 53: Move waiting items… opened on "Opened at is 2026-11-28 22:14:00" and "Set: Opened at to
    empty". It opens on a column with a list of values (the demo's category), a value waiting items hold."""
    window = console("sup")
    window.tabs.setCurrentIndex(1)
    refreshed(qtbot, window)
    row = next(r for r in range(window.health.rowCount()) if window.health.item(r, 0).text() == "Helpdesk cases")
    window.health.selectRow(row)
    seen: list[tuple[str, str, str, str]] = []

    def look(dialog: Any) -> None:
        QTimer.singleShot(5000, dialog, dialog.reject)  # should a wait below fail: the test fails, not hangs
        qtbot.waitUntil(lambda: dialog.where_value.count() > 0, timeout=10_000)
        values = [dialog.where_value.itemText(i) for i in range(dialog.where_value.count())]
        seen.append(
            (
                dialog.where_column.currentData(),
                dialog.where_value.currentText(),
                dialog.set_column.currentData(),
                dialog.set_value.currentText(),
            )
        )
        assert dialog.where_value.currentText() in values
        dialog.reject()

    on_dialog(qtbot, "move_dialog", look)
    window.move_button.click()
    qtbot.waitUntil(lambda: bool(seen), timeout=10_000)
    where, value, column, new = seen[0]
    assert (where, column, new) == ("category", "category", ""), seen
    assert value  # a category waiting items hold, the commonest
    qtbot.waitUntil(lambda: not window.findChildren(supervisor_dialogs.MoveDialog), timeout=5000)  # cancelled: gone


def test_move_cancelled_before_its_values_come_drops_them(
    qtbot: Any, console: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cancelled before the values of its column have come, the Move dialog is deleted; the values arrive
    after it and are dropped (filled into its deleted lists, they raised)."""
    window = console("sup")
    window.tabs.setCurrentIndex(1)
    refreshed(qtbot, window)
    row = next(r for r in range(window.health.rowCount()) if window.health.item(r, 0).text() == "Helpdesk cases")
    window.health.selectRow(row)
    gate = threading.Event()  # the values' read waits until the dialog is gone
    read = window.service.waiting_values
    monkeypatch.setattr(window.service, "waiting_values", lambda *args, **kw: (gate.wait(10), read(*args, **kw))[1])
    seen = on_dialog(qtbot, "move_dialog", lambda dialog: dialog.reject())
    window.move_button.click()
    qtbot.waitUntil(lambda: bool(seen) and not window.findChildren(supervisor_dialogs.MoveDialog), timeout=10_000)
    gate.set()
    window.dispatcher.wait(10_000)
    qtbot.wait(200)  # the values' answers reach the GUI thread: dropped, none raises


def test_health_operators_history_and_export(
    qtbot: Any, console: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    window = console()
    q = door.engine(window.wb).queue("cases")
    for user in ("ann", "ann", "bob"):
        c = q.claim_next(user)[0]
        q.complete(user, c.lock.key, c.lock.token, "resolved", {})
    c = q.claim_next("bob")[0]
    claim(window, "cid")
    q.release("bob", c.lock.key, c.lock.token, "Not my area", note="Belongs to the network team.")
    window.tabs.setCurrentIndex(1)
    qtbot.waitUntil(lambda: window.health.rowCount() == 3, timeout=20_000)
    cases = next(r for r in range(3) if window.health.item(r, 0).text() == "Helpdesk cases")
    cells = {
        window.health.horizontalHeaderItem(c).text(): window.health.item(cases, c).text()
        for c in range(window.health.columnCount())
    }
    assert cells["Locked"] == "1" and cells["Completed today"] == "3" and cells["Releases today"] == "1"
    assert window.reasons.item(0, 1).text() == "Not my area"
    window.tabs.setCurrentIndex(2)
    qtbot.waitUntil(lambda: window.operators.rowCount() >= 2, timeout=20_000)
    completed = {
        window.operators.item(r, 1).text(): window.operators.item(r, 2).text()
        for r in range(window.operators.rowCount())
        if window.operators.item(r, 0).text() == "Helpdesk cases"
    }
    assert completed["ann"] == "2" and completed["bob"] == "1"
    target = tmp_path / "operators.csv"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    window.findChild(type(window.refresh_button), "export_operators").click()
    with target.open(encoding="utf-8-sig") as handle:
        exported = list(csv.DictReader(handle))
    assert {(r["Operator"], r["Completed"]) for r in exported if r["Queue"] == "Helpdesk cases"} >= {
        ("ann", "2"),
        ("bob", "1"),
    }
    # Durations as whole seconds a spreadsheet can sum, the unit in the header.
    assert all(r["Median handle time (s)"].isdigit() for r in exported if r["Operator"] == "ann")
    window.tabs.setCurrentIndex(3)
    window.history_key.setText(str(c.lock.key))
    window.show_history()
    qtbot.waitUntil(lambda: "event(s) for Helpdesk cases" in window.status.text(), timeout=20_000)
    assert window.history.rowCount() == 3, window.status.text()
    assert [window.history.item(r, 1).text() for r in range(3)] == ["Claimed", "Released", "Note"]
    assert window.history.item(1, 4).text() == "Not my area"
    assert (window.history.item(2, 2).text(), window.history.item(2, 4).text()) == (
        "bob",
        "Belongs to the network team.",
    )  # the note written with the release, after it
    assert "1 note(s)" in window.status.text()


def test_charts_show_work_per_hour_and_handle_times(qtbot: Any, console: Any) -> None:
    import sqlalchemy as sa

    from workbench.gui import charts

    window = console()
    q = door.engine(window.wb).queue("cases")
    audit = door.engine(window.wb).audit_table
    for minutes in (1, 3, 40):  # one item in each of three bins
        c = q.claim_next("ann")[0]
        q.complete("ann", c.lock.key, c.lock.token, "resolved", {})
        with door.engine(window.wb).engine.begin() as conn:  # the claim happened `minutes` before the completion
            claimed = sa.and_(audit.c.token == audit_mod.token_digest(c.lock.token), audit.c.event == "claim")
            conn.execute(
                sa.update(audit).where(claimed).values(at=clock.add_seconds(audit.c.at, sa.literal(-60 * minutes)))
            )
    claim(window, "bob")
    # Over 7 days: a claim moved 40 minutes back lands on yesterday when the test runs just after
    # midnight (UTC), outside "Today".
    window.period.setCurrentIndex(1)
    window.status.setText("")
    window.tabs.setCurrentIndex(4)
    qtbot.waitUntil(lambda: "Refreshed" in window.status.text() and bool(window.charts.hours), timeout=20_000)
    assert window.charts.bins == [1, 1, 0, 0, 0, 1, 0]
    assert sum(d for _h, d, _c in window.charts.hours) == 3 and sum(c for _h, _d, c in window.charts.hours) == 4
    handle = window.charts.handle_view.chart()
    assert handle.series()[0].barSets()[0].at(5) == 1.0 and "3 item(s)" in handle.title()
    assert [s.label() for s in window.charts.throughput_view.chart().series()[0].barSets()] == ["Claimed", "Completed"]
    health = Supervision(q).health()
    assert window.charts.open is not None and window.charts.open[-1][1] == health.waiting + health.locked
    assert "Open items" in window.charts.open_view.chart().title()
    # The charts follow the queue filter: the imports queue has no work yet.
    window.status.setText("")
    window.queue_filter.setCurrentIndex(window.queue_filter.findData("imports"))
    qtbot.waitUntil(lambda: "Refreshed" in window.status.text(), timeout=20_000)
    assert window.charts.bins == [0] * len(charts.BIN_LABELS)
    assert window.charts.open is None and "created" in window.charts.open_view.chart().title()  # no column


def test_operators_show_how_their_reviewed_work_fared(qtbot: Any, console: Any) -> None:
    window = console()
    imports, review = door.engine(window.wb).queue("imports"), door.engine(window.wb).queue("imports_review")
    for user in ("ann", "ann", "bob"):  # a clerk's first five are all reviewed
        c = imports.claim_next(user)[0]
        imports.complete(user, c.lock.key, c.lock.token, "verified", {})
    for outcome, note in (("accepted", None), ("sent_back", "Wrong currency."), ("accepted", None)):
        c = review.claim_next("carla")[0]
        review.complete("carla", c.lock.key, c.lock.token, outcome, {}, note=note)
    window.tabs.setCurrentIndex(2)
    qtbot.waitUntil(lambda: window.operators.rowCount() >= 3, timeout=20_000)
    headers = [window.operators.horizontalHeaderItem(c).text() for c in range(window.operators.columnCount())]
    accepted, sent = headers.index("Accepted"), headers.index("Sent back")
    rows = {
        (window.operators.item(r, 0).text(), window.operators.item(r, 1).text()): (
            window.operators.item(r, accepted).text(),
            window.operators.item(r, sent).text(),
        )
        for r in range(window.operators.rowCount())
    }
    # Reviewed in the order verified: ann's two (one accepted, one sent back), then bob's.
    assert rows[("Import verification", "ann")] == ("1", "1")
    assert rows[("Import verification", "bob")] == ("1", "0")
    assert rows[("Import review", "carla")] == ("—", "—")  # the reviewing queue's own work is not reviewed


def test_reopen_from_the_item_history(qtbot: Any, console: Any) -> None:
    window = console()
    q = door.engine(window.wb).queue("cases")
    c = q.claim_next("ann")[0]
    q.complete("ann", c.lock.key, c.lock.token, "resolved", {})
    window.tabs.setCurrentIndex(3)
    window.history_key.setText(str(c.lock.key))

    kept: list[Any] = []

    def act(dialog: Any) -> None:
        kept.append(dialog)  # its wrapper held: answered, it goes all the same
        dialog.reason_box.setCurrentText("Completed by mistake")
        dialog.confirm.click()

    on_dialog(qtbot, "reopen_dialog", act)
    window.reopen_button.click()
    # The confirmation stays in the status when the history's count arrives behind it.
    qtbot.waitUntil(lambda: "event(s)" in window.status.text() and window.history.rowCount() >= 3, timeout=10_000)
    assert "waits again" in window.status.text()
    last = [window.history.item(window.history.rowCount() - 1, c).text() for c in range(5)]
    assert (last[1], last[2], last[4]) == ("Reopened", "sup", "Completed by mistake")
    with door.engine(window.wb).engine.connect() as conn:
        status = conn.execute(sa.select(q.q.table.c.status).where(q.q.key == c.lock.key)).scalar()
    assert status == "open"
    qtbot.waitUntil(lambda: not window.findChildren(supervisor_dialogs.ReopenDialog), timeout=5000)  # answered: gone


def test_a_refused_reopen_says_why_with_the_queues_title(
    qtbot: Any, console: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    window = console()
    key = door.engine(window.wb).queue("cases").open_items(1)[0]["case_id"]  # waiting: nothing to reopen
    window.tabs.setCurrentIndex(3)
    window.history_key.setText(str(key))
    monkeypatch.setattr(supervisor_dialogs.ReopenDialog, "exec", lambda self: True)
    monkeypatch.setattr(supervisor_dialogs.ReopenDialog, "reason", lambda self: "Looks unfinished")
    told: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning", lambda *args: told.append(args[2]))
    window.reopen_button.click()
    qtbot.waitUntil(lambda: bool(told), timeout=10_000)
    assert told == [f"Not reopened: Helpdesk cases {key} is waiting already: nothing to reopen"]


def test_reassign_several_locks_at_once(qtbot: Any, console: Any) -> None:
    window = console("sup")
    ann = claim(window, "ann")[0]
    bob = claim(window, "bob")[0]
    carla = claim(window, "carla")[0]
    refreshed(qtbot, window)
    select(window, [ann, bob, carla])
    texts: list[str] = []

    def act(dialog: Any) -> None:
        texts.append(dialog.message.text())
        dialog.user_box.setCurrentText("carla")
        dialog.reason_box.setCurrentText("Shift ended")
        dialog.confirm.click()

    seen = on_dialog(qtbot, "reassign_dialog", act)
    window.status.setText("")
    window.reassign()
    qtbot.waitUntil(lambda: "Refreshed" in window.status.text(), timeout=20_000)
    assert "reassigned to carla" in window.status.text()
    assert seen and "ann, bob, carla" in texts[0]
    assert "2 item(s) reassigned" in window.status.text()  # carla's own one is left as it is
    assert sorted(lock.key for lock in door.engine(window.wb).queue("cases").mine("carla")) == sorted([ann, bob, carla])
    history = door.engine(window.wb).queue("cases").history(carla)
    assert [e.kind.value for e in history] == ["claim"]


def test_move_the_waiting_items_of_a_category(qtbot: Any, console: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    window = console("sup")
    monkeypatch.setattr(QMessageBox, "question", lambda *args, **kw: QMessageBox.StandardButton.Yes)
    q = door.engine(window.wb).queue("cases")
    held = q.claim_next("ann")[0]
    category = held.item["category"]
    target = "Printing" if category != "Printing" else "Email"
    b = q.q
    with door.engine(window.wb).engine.connect() as conn:
        waiting = list(
            conn.execute(sa.select(b.key).where(b.todo_clause(), b.free(), b.table.c.category == category)).scalars()
        )
    window.tabs.setCurrentIndex(1)
    refreshed(qtbot, window)
    row = next(r for r in range(window.health.rowCount()) if window.health.item(r, 0).text() == "Helpdesk cases")
    window.health.selectRow(row)
    offered: list[list[str]] = []

    def act(dialog: Any) -> None:
        dialog.where_column.setCurrentIndex(dialog.where_column.findData("category"))
        qtbot.waitUntil(lambda: dialog.where_value.count() > 0, timeout=10_000)
        offered.append([dialog.where_value.itemText(i) for i in range(dialog.where_value.count())])
        dialog.where_value.setCurrentText(category)
        dialog.set_column.setCurrentIndex(dialog.set_column.findData("category"))
        dialog.set_value.setCurrentText(target)
        dialog.confirm.click()  # no reason yet: refused in the dialog
        if dialog.isVisible() and dialog.problem.text():
            dialog.reason_box.setCurrentText("Needs level 2")
            dialog.confirm.click()

    seen = on_dialog(qtbot, "move_dialog", act)
    window.move_button.click()
    qtbot.waitUntil(lambda: "moved" in window.status.text(), timeout=20_000)
    assert seen and category in offered[0]
    with door.engine(window.wb).engine.connect() as conn:
        rows = dict(conn.execute(sa.select(q.q.key, q.q.table.c.category)).all())
    assert rows[held.lock.key] == category  # held by ann: left alone
    moved = [k for k in waiting if k != held.lock.key]
    assert moved and all(rows[k] == target for k in moved)
    assert f"{len(moved)} waiting item(s) of Helpdesk cases moved." in window.status.text()
    assert q.history(moved[0])[-1].reason == "Needs level 2"


def test_a_board_of_very_many_locks_says_how_many_it_left_out(
    qtbot: Any, console: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workbench import services
    from workbench.db import supervision

    monkeypatch.setattr(supervision, "BOARD_ROWS", 2)  # as if a queue had more locks than a board lists
    monkeypatch.setattr(services, "BOARD_ROWS", 2)
    window = console("sup")
    refreshed(qtbot, window)
    assert not window.board_note.isVisible()
    oldest = claim(window, "ann", 2)
    claim(window, "bob", 1)
    refreshed(qtbot, window)
    assert window.model.rowCount() == 2 and set(board_keys(window)) == {str(k) for k in oldest}
    assert window.board_note.isVisible()
    assert window.board_note.text().startswith("Showing the oldest 2 of 3 locks: the board lists at most 2 per queue")


def health_row(window: supervisor.SupervisorWindow, title: str) -> int:
    return next(r for r in range(window.health.rowCount()) if window.health.item(r, 0).text() == title)


def selected_health_titles(window: supervisor.SupervisorWindow) -> set[str]:
    return {window.health.item(i.row(), 0).text() for i in window.health.selectionModel().selectedIndexes()}


def test_queue_health_keeps_the_chosen_queue_across_refreshes(qtbot: Any, console: Any) -> None:
    """A click on a cell chooses its queue's row, and that queue stays chosen when a refresh reorders
    the rows (it used to be a lone cell, and the highlight moved to whichever queue took its place)."""
    from PySide6.QtTest import QTest

    window = console("sup")
    window.tabs.setCurrentIndex(1)
    refreshed(qtbot, window)
    locked = [window.health.horizontalHeaderItem(c).text() for c in range(window.health.columnCount())].index("Locked")
    window.health.sortByColumn(locked, Qt.SortOrder.DescendingOrder)
    row = health_row(window, "Helpdesk cases")
    cell = window.health.visualItemRect(window.health.item(row, locked)).center()
    QTest.mouseClick(window.health.viewport(), Qt.MouseButton.LeftButton, pos=cell)
    assert selected_health_titles(window) == {"Helpdesk cases"}
    assert window._chosen_queue() == "cases"
    door.engine(window.wb).queue("imports").claim_next("ann", 3)  # imports now sorts first: the rows change places
    refreshed(qtbot, window)
    assert health_row(window, "Helpdesk cases") != row
    assert selected_health_titles(window) == {"Helpdesk cases"}
    assert window._chosen_queue() == "cases"


def test_move_without_a_queue_says_so_where_it_stays(qtbot: Any, console: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    window = console("sup")
    window.tabs.setCurrentIndex(1)
    refreshed(qtbot, window)
    told: list[str] = []
    monkeypatch.setattr(QMessageBox, "information", lambda *args, **kw: told.append(args[2]))
    window.move_button.click()
    assert told and "Choose a queue first" in told[0]


def test_move_says_how_many_items_change_and_asks_first(
    qtbot: Any, console: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    window = console("sup")
    q = door.engine(window.wb).queue("cases")
    b = q.q
    with door.engine(window.wb).engine.connect() as conn:
        category = conn.execute(sa.select(b.table.c.category).where(b.todo_clause(), b.free()).limit(1)).scalar()
        waiting = conn.execute(
            sa.select(sa.func.count()).where(b.todo_clause(), b.free(), b.table.c.category == category)
        ).scalar()
    target = "Printing" if category != "Printing" else "Email"
    window.queue_filter.setCurrentIndex(window.queue_filter.findData("cases"))  # the filtered queue moves
    window.tabs.setCurrentIndex(1)
    refreshed(qtbot, window)
    asked: list[str] = []
    titles: list[str] = []
    left: list[int] = []
    answers = [QMessageBox.StandardButton.No, QMessageBox.StandardButton.Yes]

    def question(*args: Any, **_kw: Any) -> Any:
        asked.append(args[2])
        titles.append(args[1])
        left.append(len(window.findChildren(supervisor_dialogs.MoveDialog)))  # answered: gone by the count
        return answers.pop(0)

    monkeypatch.setattr(QMessageBox, "question", question)

    def act(dialog: Any) -> None:
        dialog.where_column.setCurrentIndex(dialog.where_column.findData("category"))
        qtbot.waitUntil(lambda: dialog.where_value.count() > 0, timeout=10_000)
        dialog.where_value.setCurrentText(category)
        dialog.set_column.setCurrentIndex(dialog.set_column.findData("category"))
        dialog.set_value.setCurrentText(target)
        dialog.reason_box.setCurrentText("Needs level 2")
        dialog.confirm.click()

    on_dialog(qtbot, "move_dialog", act)
    window.move_button.click()
    qtbot.waitUntil(lambda: len(asked) == 1, timeout=20_000)
    assert f"{waiting} waiting item(s)" in asked[0] and target in asked[0]
    assert titles == ["Move waiting items"] and left == [0]  # its title read before the dialog went
    with door.engine(window.wb).engine.connect() as conn:  # answered No: nothing changed
        still = conn.execute(sa.select(sa.func.count()).where(b.todo_clause(), b.table.c.category == category)).scalar()
    assert still == waiting
    on_dialog(qtbot, "move_dialog", act)
    window.move_button.click()
    qtbot.waitUntil(lambda: "moved" in window.status.text(), timeout=20_000)
    assert len(asked) == 2 and left == [0, 0]
    assert f"{waiting} waiting item(s) of Helpdesk cases moved." in window.status.text()


def test_reassign_offers_the_queues_known_operators(qtbot: Any, console: Any) -> None:
    window = console("sup")
    q = door.engine(window.wb).queue("cases")
    done = q.claim_next("dora")[0]  # dora worked here today and holds nothing now
    q.complete("dora", done.lock.key, done.lock.token, "resolved", {})
    key = claim(window, "ann")[0]
    claim(window, "bob")
    refreshed(qtbot, window)
    select(window, [key])
    offered: list[list[str]] = []

    def act(dialog: Any) -> None:
        offered.append([dialog.user_box.itemText(i) for i in range(dialog.user_box.count())])
        dialog.reject()

    seen = on_dialog(qtbot, "reassign_dialog", act)
    window.reassign()
    qtbot.waitUntil(lambda: bool(seen), timeout=10_000)
    assert sorted(offered[0]) == ["bob", "dora"]  # not ann, who holds it


def test_the_queue_filter_filters_health_and_operators(qtbot: Any, console: Any) -> None:
    window = console("sup")
    for name in ("cases", "imports"):
        c = door.engine(window.wb).queue(name).claim_next("ann")[0]
        door.engine(window.wb).queue(name).complete(
            "ann", c.lock.key, c.lock.token, "resolved" if name == "cases" else "verified", {}
        )
    window.queue_filter.setCurrentIndex(window.queue_filter.findData("imports"))
    window.tabs.setCurrentIndex(1)
    refreshed(qtbot, window)
    assert [window.health.item(r, 0).text() for r in range(window.health.rowCount())] == ["Import verification"]
    window.tabs.setCurrentIndex(2)
    qtbot.waitUntil(lambda: window.operators.rowCount() > 0, timeout=20_000)
    refreshed(qtbot, window)
    assert {window.operators.item(r, 0).text() for r in range(window.operators.rowCount())} == {"Import verification"}
    window.queue_filter.setCurrentIndex(0)  # all queues again: refreshed at once
    qtbot.waitUntil(lambda: window.operators.rowCount() >= 2, timeout=20_000)


def test_ctrl_q_closes_the_console(qtbot: Any, console: Any) -> None:
    window = console("sup")
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=5_000)
    qtbot.keyClick(window, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=5_000)


def test_history_says_who_noticed_an_expiry_and_who_reassigned_to_whom(qtbot: Any, console: Any) -> None:
    from workbench.gui import item_log

    window = console("sup")
    q = door.engine(window.wb).queue("cases")
    key = claim(window, "ann")[0]
    support.age_lock(door.engine(window.wb), "cases", key, 60 * 60)  # ann's lock expires
    q.claim("bob", key)  # bob takes the expired item
    Supervision(q).reassign("sue", key, "carla", "Shift ended")
    window.tabs.setCurrentIndex(3)
    window.history_key.setText(str(key))
    window.show_history()
    qtbot.waitUntil(lambda: window.history.rowCount() == 5, timeout=20_000)
    rows = [[window.history.item(r, c).text() for c in (1, 2, 3)] for r in range(5)]
    assert rows == [
        ["Claimed", "ann", "ann"],
        ["Expired (noticed when bob claimed it)", "", "ann"],
        ["Claimed", "bob", "bob"],
        ["Reassigned to carla", "sue", "bob"],
        ["Locked to carla (reassigned from bob)", "sue", "carla"],
    ]
    panel = item_log.ItemLogPanel()
    qtbot.addWidget(panel)
    panel.show_log(window.service.item_log("cases", key))
    texts = [panel.entries.item(r).text() for r in range(panel.entries.count())]
    assert texts[1].startswith("Expired (noticed when bob claimed it), ")
    assert texts[3].startswith("Reassigned to carla by sue, ") and texts[3].endswith("— Shift ended")
    assert texts[4].startswith("Locked to carla (reassigned from bob) by sue, ")
    assert not any(t.startswith(("Expired by", "Claimed by sue")) for t in texts)


def test_a_lock_reassigned_to_its_holder_is_not_lost_and_one_reassigned_away_says_to_whom(
    qtbot: Any, open_window: Any, demo_config: Any
) -> None:
    operator = open_window(demo_config, user="ann")
    with qtbot.waitSignal(operator.session.claimed, timeout=20_000):
        operator.next_button.click()
    key = operator.session.current.lock.key
    q = door.engine(operator.session.wb).queue("cases")
    # A supervisor gives ann's item to ann again (a fresh lock, e.g. a bulk reassignment): still hers.
    fresh = Supervision(q).reassign("sue", key, "ann", "Shift ended")
    lost: list[Any] = []
    operator.session.lock_lost.connect(lost.append)
    operator.session.check_now()
    qtbot.waitUntil(lambda: operator.session.current.lock.token == fresh.token, timeout=20_000)
    assert lost == [] and not operator.lost_banner.isVisible()
    # Given away: the banner says to whom.
    Supervision(q).reassign("sue", key, "bob", "Needs another team")
    with qtbot.waitSignal(operator.session.lock_lost, timeout=20_000):
        operator.session.check_now()
    text = operator.lost_banner.label.text()
    assert "sue" in text and "to bob" in text and "someone else" not in text
    assert "you hold it" not in text


def test_a_lock_another_program_holds_is_shown_as_its_and_released_with_a_reason(qtbot: Any, console: Any) -> None:
    window = console("sup")
    ours, theirs = claim(window, "bob", 2)
    cases = door.engine(window.wb).queue("cases")
    with door.engine(window.wb).engine.begin() as conn:  # the old program locks the row under its own name and token
        conn.execute(
            sa.update(cases.q.table).where(cases.q.key == theirs).values(wb_locked_by="oldapp", wb_lock_token="0" * 32)
        )
    refreshed(qtbot, window)
    rows = {window.model.index(r, 1).data(): r for r in range(window.model.rowCount())}
    holder = {key: window.model.index(r, board_model.HOLDER) for key, r in rows.items()}
    assert holder[str(ours)].data() == "bob"
    assert holder[str(theirs)].data() == "oldapp (another program)"
    tip = holder[str(theirs)].data(Qt.ItemDataRole.ToolTipRole)
    assert tip.startswith("Held by another program under the name oldapp since") and "Force release" in tip
    assert holder[str(theirs)].data(Qt.ItemDataRole.FontRole).italic()
    assert holder[str(ours)].data(Qt.ItemDataRole.FontRole) is None
    select(window, [theirs])
    said: list[str] = []

    def act(dialog: Any) -> None:
        said.append(dialog.message.text())
        dialog.reason_box.setCurrentText("the old program crashed on it")
        dialog.confirm.click()

    on_dialog(qtbot, "force_release_dialog", act)
    window.status.setText("")
    window.force_release()
    qtbot.waitUntil(lambda: "Refreshed" in window.status.text(), timeout=20_000)
    assert "Held by another program (under oldapp)" in said[0]
    assert [lock.key for lock in cases.locks()] == [ours]
    event = cases.history(theirs)[-1]
    assert (event.kind.value, event.actor, event.reason) == ("force_release", "sup", "the old program crashed on it")
