"""Status that stays current: the resume panel's times count on, the connection names the login."""

from __future__ import annotations

import datetime as dt
from typing import Any

from workbench.core import models
from workbench.gui import main_window, resume
from workbench.services import door


def test_held_for_and_time_left_tick(qtbot: Any) -> None:
    now = dt.datetime(2026, 11, 25, 9, 0, tzinfo=dt.UTC)
    lock = models.Lock("cases", 7, "ann", "t" * 32, now - dt.timedelta(seconds=59), now + dt.timedelta(seconds=2), now)
    panel = resume.ResumePanel()
    qtbot.addWidget(panel)
    panel.set_entries([resume.Entry("Helpdesk cases", "cases", 7, "Printer", lock, False)])

    def cell(column: int) -> str:
        return panel.table.item(0, column).text()

    # As the lock says, or a second on where the machine was slow to get here (CI at load: "59s", "1s").
    assert (cell(3), cell(4)) in {("59s", "2s"), ("59s", "1s"), ("1m00s", "1s")}
    qtbot.waitUntil(lambda: cell(3) == "1m00s", timeout=3000)
    qtbot.waitUntil(lambda: cell(4) == panel.tr("expired"), timeout=4000)
    # Without locks (drafts only) nothing ticks.
    panel.set_entries([resume.Entry("Helpdesk cases", "cases", 8, "Mail", None, True)])
    assert not panel._ticker.isActive()


def test_the_status_names_the_database_login_where_it_differs(
    qtbot: Any, open_window: Any, demo_config: Any, monkeypatch: Any
) -> None:
    window = open_window(demo_config)
    qtbot.waitUntil(lambda: window.connection_label.text().startswith("Connected as alice"), timeout=10_000)
    login = window.session.wb.database_login()  # SQLite: none; the test server: its superuser
    assert ("database login" in window.connection_label.text()) == bool(login and login != "alice")
    monkeypatch.setattr(window.session.wb, "database_login", lambda: "root")
    window._on_connection(True, "")
    assert window.connection_label.text().startswith("Connected as alice (database login root) — ")


def test_the_start_page_counts_waiting_items_and_mine(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    window = open_window(demo_config)
    table = window.counts_table
    qtbot.waitUntil(lambda: table.rowCount() == len(demo_config.queues) and table.isVisible(), timeout=10_000)
    expected = window.session.operator.queue_counts()
    cells = [[table.item(r, c).text() for c in range(4)] for r in range(table.rowCount())]
    # Overdue: the demo's cases name their due column; its imports do not.
    assert cells == [[c.title, str(c.waiting), "0", "—" if c.overdue is None else str(c.overdue)] for c in expected]
    assert expected[0].overdue is not None and expected[1].overdue is None and not table.isColumnHidden(3)
    # After a claim the queue shows one item fewer waiting, and one of yours.
    with qtbot.waitSignal(window.session.claimed, timeout=10_000):
        window.next_item()
    window.session.load_counts()
    qtbot.waitUntil(lambda: table.item(0, 2).text() == "1", timeout=10_000)
    assert table.item(0, 1).text() == str(expected[0].waiting - 1)


def test_the_counts_table_grows_with_the_deferred_column(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    """Issue 53: when the Deferred column appeared the table kept its width ("Overdu…" cut, scroll bars)."""
    window = open_window(demo_config)
    table = window.counts_table
    qtbot.waitUntil(lambda: table.isVisible() and table.rowCount() > 0, timeout=10_000)
    assert table.isColumnHidden(4)  # nothing deferred yet
    with qtbot.waitSignal(window.session.claimed, timeout=10_000):
        window.next_item()
    with qtbot.waitSignal(window.session.deferred, timeout=10_000):
        window.session.defer(dt.datetime.now(dt.UTC) + dt.timedelta(hours=2), "Customer calls back")
    window.session.load_counts()
    qtbot.waitUntil(lambda: not table.isColumnHidden(4), timeout=10_000)
    window.stack.setCurrentIndex(main_window.START)
    qtbot.waitUntil(table.isVisible, timeout=5_000)
    header = table.horizontalHeader()
    shown = [c for c in range(table.columnCount()) if not table.isColumnHidden(c)]
    assert shown == [0, 1, 2, 3, 4]
    assert table.viewport().width() >= sum(header.sectionSize(c) for c in shown)  # nothing cut off
    assert not table.horizontalScrollBar().isVisible() and not table.verticalScrollBar().isVisible()
    for c in shown:  # every heading whole ("Overdue", not "Overdu…")
        assert header.sectionSize(c) >= header.sectionSizeFromContents(c).width(), table.horizontalHeaderItem(c).text()


def test_the_item_title_says_when_it_is_due(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    import sqlalchemy as sa

    from workbench.db import clock

    window = open_window(demo_config)
    cases = door.engine(window.session.wb).queue("cases").q.table
    with door.engine(window.session.wb).engine.begin() as conn:  # every case 2 days and 3 hours overdue
        ago = clock.add_seconds(clock.db_now(), sa.literal(-(2 * 86400 + 3 * 3600)))
        conn.execute(sa.update(cases).values(due_at=ago))
    with qtbot.waitSignal(window.session.claimed, timeout=10_000):
        window.next_item()
    assert window.item_title.text().endswith(" · overdue by 2d03h")
