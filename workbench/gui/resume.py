"""The resume panel: the user's unfinished items (live locks and kept drafts), to go straight back to."""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

from PySide6.QtCore import QCoreApplication, QElapsedTimer, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from workbench.core import models
from workbench.gui import a11y, theme, times
from workbench.gui.i18n import QT_TRANSLATE_NOOP


@dataclasses.dataclass(frozen=True)
class Entry:
    """One row: a lock the user holds (or held), with its summary and whether a draft waits."""

    title: str  # the queue's title, as shown
    queue: str
    key: Any
    summary: str
    lock: models.Lock | None
    has_draft: bool
    due_seconds: float | None = None  # from the lock's database clock reading to the due time (< 0: overdue)


class ResumePanel(QWidget):
    """Lists the user's unfinished items; Enter or double-click reopens one.

    Signals:
        open_requested(str, object): queue and key of the item to reopen.
        draft_requested(str, object): queue and key whose kept draft to show (whoever holds the item).
        refresh_requested(): the user asked to reload the list.
    """

    open_requested = Signal(str, object)
    draft_requested = Signal(str, object)
    refresh_requested = Signal()

    COLUMNS = (
        QT_TRANSLATE_NOOP("ResumePanel", "Queue"),
        QT_TRANSLATE_NOOP("ResumePanel", "Item"),
        QT_TRANSLATE_NOOP("ResumePanel", "Summary"),
        QT_TRANSLATE_NOOP("ResumePanel", "Held for"),
        QT_TRANSLATE_NOOP("ResumePanel", "Time left"),
        QT_TRANSLATE_NOOP("ResumePanel", "Draft"),
        QT_TRANSLATE_NOOP("ResumePanel", "Due"),
    )
    TICKING = (3, 4, 6)  # held for, time left, due: counted on every second

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("resume_panel")
        self._entries: list[Entry] = []
        # The times count on between reloads: from the database clock reading that came with the
        # list, plus the time elapsed here since (no database call to keep them current).
        self._since = QElapsedTimer()
        self._since.start()
        self._ticker = QTimer(self)
        self._ticker.setInterval(1000)
        self._ticker.timeout.connect(self._tick)
        layout = QVBoxLayout(self)
        self.title = QLabel()
        self.title.setObjectName("resume_title")
        self.title.setProperty("role", "heading")
        layout.addWidget(self.title)
        self.table = QTableWidget(0, len(self.COLUMNS))
        self.table.setObjectName("resume_table")
        self.table.setAccessibleName(self.tr("Unfinished items"))  # what a screen reader says on entering it
        self.table.setHorizontalHeaderLabels([QCoreApplication.translate("ResumePanel", c) for c in self.COLUMNS])
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        a11y.leave_with_tab(self.table)
        self.table.verticalHeader().setVisible(False)
        self.table.setWordWrap(False)  # one line per item; the full text is in the tooltip
        header = self.table.horizontalHeader()
        for column in range(len(self.COLUMNS)):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.table.doubleClicked.connect(lambda _: self._open_selected())
        layout.addWidget(self.table)
        buttons = QHBoxLayout()
        self.open_button = QPushButton(self.tr("&Open"))
        self.open_button.setObjectName("resume_open")
        self.open_button.clicked.connect(self._open_selected)
        self.draft_button = QPushButton(self.tr("View &draft…"))
        self.draft_button.setObjectName("resume_view_draft")
        self.draft_button.clicked.connect(self._view_draft)
        self.table.itemSelectionChanged.connect(self._update_draft_button)
        self.refresh_button = QPushButton(self.tr("&Refresh"))
        self.refresh_button.setObjectName("resume_refresh")
        self.refresh_button.clicked.connect(self.refresh_requested.emit)
        buttons.addWidget(self.open_button)
        buttons.addWidget(self.draft_button)
        buttons.addWidget(self.refresh_button)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        self.set_entries([])

    def set_entries(self, entries: list[Entry]) -> None:
        self._entries = list(entries)
        n = len(entries)
        self.title.setText(
            self.tr("Nothing unfinished.")
            if n == 0
            else self.tr("You have 1 unfinished item: pick one to go straight back to it.")
            if n == 1
            else self.tr("You have {0} unfinished items: pick one to go straight back to it.").format(n)
        )
        self.table.setRowCount(n)
        self._since.restart()
        for row, entry in enumerate(entries):
            held, left = self._times(entry.lock)
            cells = (
                entry.title,
                str(entry.key),
                entry.summary,
                held,
                left,
                self.tr("unsaved edits") if entry.has_draft else "",
                self._due(entry),
            )
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                if column in self.TICKING:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(row, column, item)
            self._mark_overdue(row, entry)
        self.table.setColumnHidden(6, all(entry.due_seconds is None for entry in entries))  # no queue names one
        self.open_button.setEnabled(n > 0)
        if n:
            self.table.selectRow(0)
        self._update_draft_button()
        if any(entry.lock is not None for entry in entries):
            self._ticker.start()
        else:
            self._ticker.stop()

    def _times(self, lock: models.Lock | None) -> tuple[str, str]:
        """Held for and time left, counted on from the list's database clock reading."""
        if lock is None:
            return "", self.tr("lock gone")
        elapsed = dt.timedelta(milliseconds=self._since.elapsed())
        remaining = lock.remaining - elapsed
        left = self.tr("expired") if remaining <= dt.timedelta(0) else times.duration(remaining.total_seconds())
        return times.duration((lock.age + elapsed).total_seconds()), left

    def _due(self, entry: Entry) -> str:
        """Time to the due time, counted on like the lock's times; "" without one."""
        if entry.due_seconds is None:
            return ""
        return times.until_due(entry.due_seconds - self._since.elapsed() / 1000)

    def _mark_overdue(self, row: int, entry: Entry) -> None:
        item = self.table.item(row, 6)
        if item is None or entry.due_seconds is None or entry.due_seconds - self._since.elapsed() / 1000 >= 0:
            return
        theme.mark_alarm(item)

    def _tick(self) -> None:
        for row, entry in enumerate(self._entries):
            for column, text in zip(self.TICKING, (*self._times(entry.lock), self._due(entry)), strict=True):
                item = self.table.item(row, column)
                if item is not None and item.text() != text:
                    item.setText(text)
                    item.setToolTip(text)
            self._mark_overdue(row, entry)

    def entries(self) -> list[Entry]:
        return list(self._entries)

    def keyPressEvent(self, event: Any) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self._open_selected()
            return
        super().keyPressEvent(event)

    def focus_list(self) -> None:
        self.table.setFocus()

    def _selected(self) -> Entry | None:
        rows = self.table.selectionModel().selectedRows()
        return self._entries[rows[0].row()] if rows and rows[0].row() < len(self._entries) else None

    def _open_selected(self) -> None:
        entry = self._selected()
        if entry is not None:
            self.open_requested.emit(entry.queue, entry.key)

    def _view_draft(self) -> None:
        entry = self._selected()
        if entry is not None and entry.has_draft:
            self.draft_requested.emit(entry.queue, entry.key)

    def _update_draft_button(self) -> None:
        entry = self._selected()
        self.draft_button.setEnabled(entry is not None and entry.has_draft)
