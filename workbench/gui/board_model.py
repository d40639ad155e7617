"""The lock board's table model: rows updated in place, so a refresh keeps the selection and the scroll."""

from __future__ import annotations

import datetime as dt
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor

from workbench.core import durations

COLUMNS = ("Queue", "Item", "Summary", "Holder", "Claimed at", "Age", "Time left", "Idle", "Extended")
SORT_ROLE = Qt.ItemDataRole.UserRole + 1  # numbers and times sort as such, not as text
SOON = QColor("#fff4ce")  # expires within the warning time
PAST = QColor("#fde2e1")  # expired, not yet taken over

Index = QModelIndex | QPersistentModelIndex


class BoardModel(QAbstractTableModel):
    """Live locks (models.BoardRow), keyed by (queue, key)."""

    def __init__(self, warn_seconds: float = 120.0) -> None:
        super().__init__()
        self.rows: list[Any] = []
        self.warn_seconds = warn_seconds

    # -- updating -------------------------------------------------------------------------------

    def update(self, rows: list[Any]) -> None:
        """Replace the contents with `rows`: removed rows go, new rows are appended, others change
        in place (never a model reset, which would drop the selection and jump to the top)."""
        wanted = {(r.queue, r.key): r for r in rows}
        for i in range(len(self.rows) - 1, -1, -1):  # from the end, so indexes stay valid
            if (self.rows[i].queue, self.rows[i].key) not in wanted:
                self.beginRemoveRows(QModelIndex(), i, i)
                del self.rows[i]
                self.endRemoveRows()
        position = {(r.queue, r.key): i for i, r in enumerate(self.rows)}
        for key, row in wanted.items():
            i = position.get(key)
            if i is None:
                self.beginInsertRows(QModelIndex(), len(self.rows), len(self.rows))
                self.rows.append(row)
                self.endInsertRows()
            elif self.rows[i] != row:
                self.rows[i] = row
                self.dataChanged.emit(self.index(i, 0), self.index(i, len(COLUMNS) - 1))

    # -- Qt model ---------------------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row = self.rows[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(row, column)
        if role == SORT_ROLE:
            return self._sort_value(row, column)
        if role == Qt.ItemDataRole.BackgroundRole:
            left = row.remaining.total_seconds()
            if left <= 0:
                return QBrush(PAST)
            if left <= self.warn_seconds:
                return QBrush(SOON)
        if role == Qt.ItemDataRole.ToolTipRole and column in (6, 7):
            return f"expires {row.expires_at:%Y-%m-%d %H:%M:%S}; last saved or extended " \
                   f"{row.last_activity:%H:%M:%S}"
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (5, 6, 7, 8):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def _text(self, row: Any, column: int) -> str:
        if column == 0:
            return row.queue
        if column == 1:
            return str(row.key)
        if column == 2:
            return " — ".join(str(v) for v in row.summary.values() if v not in (None, ""))
        if column == 3:
            return row.owner
        if column == 4:
            return f"{row.locked_at:%Y-%m-%d %H:%M}"
        if column == 5:
            return durations.format_duration(row.age.total_seconds())
        if column == 6:
            left = row.remaining.total_seconds()
            return "expired " + durations.format_duration(-left) + " ago" if left <= 0 else \
                durations.format_duration(left)
        if column == 7:
            return durations.format_duration(row.idle.total_seconds())
        return str(row.extensions)

    def _sort_value(self, row: Any, column: int) -> Any:
        values: dict[int, Any] = {
            0: row.queue, 1: _sortable(row.key), 2: self._text(row, 2).lower(), 3: row.owner.lower(),
            4: row.locked_at.timestamp() if isinstance(row.locked_at, dt.datetime) else 0,
            5: row.age.total_seconds(), 6: row.remaining.total_seconds(), 7: row.idle.total_seconds(),
            8: row.extensions}
        return values[column]

    def csv_rows(self) -> list[list[str]]:
        """The board as text, header first (for Export)."""
        return [list(COLUMNS), *[[self._text(r, c) for c in range(len(COLUMNS))] for r in self.rows]]


def _sortable(value: Any) -> Any:
    # Keys are numbers or text; mixed, numbers first.
    return (0, value, "") if isinstance(value, (int, float)) else (1, 0, str(value))
