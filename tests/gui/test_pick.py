"""Pick…: the first waiting items under the form's labels, how many wait in all, search and sort."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from PySide6.QtCore import QLocale, Qt

from tests.gui.test_german_rest import language  # noqa: F401  (the fixture)
from workbench.gui import dialogs
from workbench.services import operator


def _offered(qtbot: Any, window: Any, monkeypatch: Any, limit: int) -> dialogs.PickDialog:
    shown: list[dialogs.PickDialog] = []
    monkeypatch.setattr(dialogs.PickDialog, "exec", lambda self: shown.append(self) or False)
    with qtbot.waitSignal(window.session.open_items_loaded, timeout=10_000):
        window.session.load_open_items(limit)
    qtbot.waitUntil(lambda: bool(shown), timeout=5000)
    return shown[0]


def test_the_pick_list_says_how_many_wait_and_uses_the_labels(
    qtbot: Any, open_window: Any, demo_config: Any, monkeypatch: Any
) -> None:
    window = open_window(demo_config)
    waiting = window.session.operator.pick_list("cases", 1000)
    dialog = _offered(qtbot, window, monkeypatch, 5)
    assert dialog.heading.text() == f"The first 5 of {len(waiting.rows)} waiting items, in queue order:"
    model = dialog.table.model()
    headers = [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())]
    assert headers[0] == "Case" and "Subject" in headers  # the form's labels, not column names
    # Search: any column, any case; the first match is selected and is what Claim takes.
    subject = waiting.rows[3]["subject"]
    dialog.search.setText(subject.upper())
    assert model.rowCount() >= 1 and dialog.chosen() in [r["case_id"] for r in waiting.rows if r["subject"] == subject]
    dialog.search.clear()
    assert model.rowCount() == 5
    # Sorting by a header, then back: chosen() still names the row under the selection.
    dialog.table.sortByColumn(0, Qt.SortOrder.DescendingOrder)
    dialog.table.selectRow(0)
    assert dialog.chosen() == max(r["case_id"] for r in waiting.rows[:5])


def test_more_than_the_counted_items_is_said_as_such() -> None:
    found = operator.PickList(
        key_name="id", rows=[{"id": i} for i in range(200)], labels={"id": "ID"}, waiting=operator.WAITING_CAP + 1
    )
    dialog = dialogs.PickDialog(found)
    more = QLocale().toString(operator.WAITING_CAP)  # 10,000 or 10.000 or 10000, as the locale writes it
    assert dialog.heading.text() == f"The first 200 waiting items of more than {more}, in queue order:"
    assert dialogs.PickDialog(operator.PickList("id", [], {"id": "ID"}, 0)).heading.text() == "No item is waiting."


def test_overdue_items_are_marked_on_the_database_clock(qtbot: Any) -> None:
    import datetime as dt

    now = dt.datetime(2026, 11, 25, 12, 0, tzinfo=dt.UTC)
    rows = [
        {"id": 1, "due": now - dt.timedelta(days=2, hours=3)},
        {"id": 2, "due": now + dt.timedelta(hours=5)},
        {"id": 3, "due": None},
    ]
    found = operator.PickList(
        key_name="id", rows=rows, labels={"id": "ID", "due": "Due"}, waiting=3, due_name="due", db_now=now
    )
    dialog = dialogs.PickDialog(found)
    qtbot.addWidget(dialog)
    model = dialog.table.model()
    cells = [model.index(r, 1).data() for r in range(3)]
    assert cells == ["overdue by 2d03h", "in 5h00m", ""]
    assert model.index(0, 1).data(Qt.ItemDataRole.ToolTipRole).startswith("2026-11-23 09:00")
    assert model.index(0, 1).data(Qt.ItemDataRole.FontRole).bold()


@pytest.mark.parametrize("language", ["de"], indirect=True)
def test_every_column_fits_the_dialog_in_german(language: str, qtbot: Any) -> None:
    """Issue 40: with German due times ("2 Tg. 10 h überfällig") the columns ran past the dialog's right edge,
    Category and Priority out of view. Now every header is whole, the due times too, and the subject
    line takes what is left (elided, the tooltip has it all)."""
    now = dt.datetime(2026, 11, 27, 12, 0)
    rows = [
        {
            "case_id": n,
            "due_at": now - dt.timedelta(days=2, hours=n),
            "subject": "Excel crashes when opening the budget file of the finance department",
            "customer": "Chiara Bauer (Wide World Importers)",
            "category": "Printing",
            "priority": 1,
        }
        for n in range(1, 30)
    ]
    labels = {"case_id": "Vorgang", "due_at": "Fällig", "subject": "Betreff", "customer": "Kunde"}
    labels |= {"category": "Kategorie", "priority": "Priorität"}
    dialog = dialogs.PickDialog(
        operator.PickList(key_name="case_id", rows=rows, labels=labels, waiting=29, due_name="due_at", db_now=now)
    )
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    table, header = dialog.table, dialog.table.horizontalHeader()
    widths = [header.sectionSize(c) for c in range(header.count())]
    assert sum(widths) <= table.viewport().width(), widths  # nothing out of view to the right
    for column in range(header.count()):
        assert widths[column] >= table.header_width(column), header.model().headerData(
            column, Qt.Orientation.Horizontal
        )
    due = list(labels).index("due_at")
    assert widths[due] >= table.sizeHintForColumn(due)  # "2 Tg. 01 h überfällig" whole
