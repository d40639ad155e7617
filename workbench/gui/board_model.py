"""The lock board's table model: sorts and filters itself and takes a refresh in one layout change."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Iterable
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QCoreApplication,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
)
from PySide6.QtGui import QBrush, QFont

from workbench.core import durations, models
from workbench.gui import theme, times
from workbench.gui.i18n import QT_TRANSLATE_NOOP

COLUMNS = (
    QT_TRANSLATE_NOOP("BoardModel", "Queue"),
    QT_TRANSLATE_NOOP("BoardModel", "Item"),
    QT_TRANSLATE_NOOP("BoardModel", "Summary"),
    QT_TRANSLATE_NOOP("BoardModel", "Holder"),
    QT_TRANSLATE_NOOP("BoardModel", "Claimed at"),
    QT_TRANSLATE_NOOP("BoardModel", "Age"),
    QT_TRANSLATE_NOOP("BoardModel", "Time left"),
    QT_TRANSLATE_NOOP("BoardModel", "Idle"),
    QT_TRANSLATE_NOOP("BoardModel", "Extended"),
    QT_TRANSLATE_NOOP("BoardModel", "Due"),
)  # English; translated where shown (header, CSV)
HOLDER = 3
CLAIMED_AT = 4
DUE = 9  # time to the item's due time (queues with a `due` column)
AGE = 5  # the column the board sorts by at first (oldest locks first); then time left, idle
TIME_LEFT = 6
ALL = ""  # the queue filter's "all queues"

Index = QModelIndex | QPersistentModelIndex


class BoardModel(QAbstractTableModel):
    """Live locks (models.BoardRow), keyed by (queue, key).

    `rows` are every lock of the last refresh; the table shows `shown`, those the holder and
    queue filters let through, in the order of the sort column. The model sorts and filters
    itself, in Python over precomputed keys: a QSortFilterProxyModel calls back into Python for
    every comparison and every changed row, which for thousands of locks took seconds a refresh.
    A refresh, a sort and a filter change are each one layout change (plus one dataChanged over
    the whole table for the new values); the selection and the current row follow their lock
    through it (persistent indexes), and the view keeps its scroll position.
    """

    def __init__(self, warn_seconds: float = 120.0, titles: dict[str, str] | None = None) -> None:
        super().__init__()
        self.titles = dict(titles or {})  # a queue's title for people, by name
        self.rows: list[Any] = []
        self.shown: list[Any] = []
        self.warn_seconds = warn_seconds
        self.holder = ""
        self.queue = ALL
        self.sort_column = AGE
        self.sort_order = Qt.SortOrder.DescendingOrder
        # When each row arrived (time.monotonic()), by the row object: its times are read on the database's
        # clock at `db_now`, and the board's clock runs on from there on this computer, so that the time
        # left counts down and a lock that simply expires (no change the feed would name) shows as expired
        # between the rare full reloads. Keyed by id(): a row the feed left alone keeps its arrival.
        self._arrived: dict[int, float] = {}

    # -- updating -------------------------------------------------------------------------------

    def update(self, rows: Iterable[Any]) -> None:
        """Show the locks of a refresh: removed ones go, new ones come, the others change in place."""
        rows = list(rows)
        now = time.monotonic()
        # The rows shown are alive here, so an id() names one of them or a new row, never a dead one's.
        old = {id(r): r for r in self.rows}
        self._arrived = {id(r): self._arrived[id(r)] if old.get(id(r)) is r else now for r in rows}
        self._rearrange(lambda: setattr(self, "rows", rows), changed=True)

    def tick(self) -> None:
        """The clock moved on: the times (age, time left, idle, due) and the colours are shown anew."""
        if self.shown:
            self.dataChanged.emit(self.index(0, AGE), self.index(len(self.shown) - 1, len(COLUMNS) - 1))

    def now(self, row: models.BoardRow) -> dt.datetime:
        """The database clock now, for `row`: its reading plus the time since the row arrived."""
        return row.db_now + dt.timedelta(seconds=time.monotonic() - self._arrived.get(id(row), time.monotonic()))

    def age(self, row: models.BoardRow) -> dt.timedelta:
        return self.now(row) - row.locked_at

    def left(self, row: models.BoardRow) -> dt.timedelta:
        return row.expires_at - self.now(row)

    def idle(self, row: models.BoardRow) -> dt.timedelta:
        return self.now(row) - row.last_activity

    def set_filter(self, holder: str, queue: str) -> None:
        """Show only locks whose holder contains `holder` (any case) in `queue` (ALL: every queue)."""

        def change() -> None:
            self.holder, self.queue = holder.strip().lower(), queue

        self._rearrange(change)

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Qt's sort (the view calls it when a header is clicked)."""

        def change() -> None:
            self.sort_column, self.sort_order = column, order

        self._rearrange(change)

    def _rearrange(self, change: Callable[[], None], *, changed: bool = False) -> None:
        self.layoutAboutToBeChanged.emit()
        before = self.persistentIndexList()  # the selection, the current row: a handful
        held = [(_identity(self.shown[i.row()]), i.column()) for i in before]
        change()
        self.shown = self._arranged()
        if before:
            where = {_identity(row): n for n, row in enumerate(self.shown)}
            self.changePersistentIndexList(
                before,
                [self.index(where[ident], column) if ident in where else QModelIndex() for ident, column in held],
            )
        self.layoutChanged.emit()
        if changed and self.shown:  # new values in rows that stayed: one signal for the whole table
            self.dataChanged.emit(self.index(0, 0), self.index(len(self.shown) - 1, len(COLUMNS) - 1))

    def _arranged(self) -> list[Any]:
        holder, queue = self.holder, self.queue
        rows = [
            r for r in self.rows if (not holder or holder in r.owner.lower()) and (queue == ALL or r.queue == queue)
        ]
        if 0 <= self.sort_column < len(COLUMNS):
            key = self._sort_key(self.sort_column)
            # Stable: equal values keep the database's order (oldest lock first), either direction.
            rows.sort(key=key, reverse=self.sort_order == Qt.SortOrder.DescendingOrder)
        return rows

    # -- Qt model ---------------------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self.shown)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            header = QCoreApplication.translate("BoardModel", COLUMNS[section])
            return times.with_zone(header) if section == CLAIMED_AT else header
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row = self.shown[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(row, column)
        if role == Qt.ItemDataRole.BackgroundRole:
            left = self.left(row).total_seconds()
            if left <= 0:  # expired, not yet taken over
                return QBrush(theme.current().qcolor("board_past_bg"))
            if left <= self.warn_seconds:  # expires within the warning time
                return QBrush(theme.current().qcolor("board_soon_bg"))
        if column == DUE and role in (
            Qt.ItemDataRole.ForegroundRole,
            Qt.ItemDataRole.FontRole,
            Qt.ItemDataRole.ToolTipRole,
        ):
            return self._due_mark(row, role)
        if column == HOLDER and row.foreign and role in (Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.FontRole):
            return self._program_mark(row, role)
        if role == Qt.ItemDataRole.ToolTipRole and column <= CLAIMED_AT:  # the whole text, where a column elides it
            return self._text(row, column)
        if role == Qt.ItemDataRole.ToolTipRole and column in (6, 7):
            return QCoreApplication.translate("BoardModel", "expires {0}; last saved or extended {1}").format(
                times.moment(row.expires_at), times.moment(row.last_activity)
            )
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (5, 6, 7, 8):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def row_at(self, row: int) -> Any:
        """The lock shown in table row `row`."""
        return self.shown[row]

    @staticmethod
    def widest(column: int) -> list[str]:
        """The texts `column` may come to hold after the board was fitted (a time left that runs out
        becomes "expired 2m05s ago"): its width is kept for the widest, so that a cell does not elide."""
        if column != TIME_LEFT:
            return []  # a due time keeps its words; it grows by a digit in days
        spans = (59 * 60 + 59,)  # run out within the hour: the board is refreshed, and refitted, long before days
        expired = QCoreApplication.translate("BoardModel", "expired {0} ago")
        return [text for s in spans for text in (times.duration(s), expired.format(times.duration(s)))]

    def _text(self, row: models.BoardRow, column: int) -> str:
        if column == 0:
            return self.titles.get(row.queue, row.queue)
        if column == 1:
            return str(row.key)
        if column == 2:
            return _summary(row)
        if column == HOLDER:
            if row.foreign:  # a lock workbench did not take: the old program's, under this name
                return QCoreApplication.translate("BoardModel", "{0} (another program)").format(row.owner)
            return row.owner
        if column == 4:
            return times.moment(row.locked_at)
        if column == 5:
            return times.duration(self.age(row).total_seconds())
        if column == TIME_LEFT:  # as narrow as the due column: languages say "expired" as short as they can
            left = self.left(row).total_seconds()
            return (
                QCoreApplication.translate("BoardModel", "expired {0} ago").format(times.duration(-left))
                if left <= 0
                else times.duration(left)
            )
        if column == 7:
            return times.duration(self.idle(row).total_seconds())
        if column == DUE:
            seconds = self._due_seconds(row)
            if seconds is None:
                return ""
            # The form's words: a shorter "vor 2 Tg. 03 h" read as a moment past, not as how late the item is.
            return times.until_due(seconds)
        return str(row.extensions)

    def _program_mark(self, row: Any, role: int) -> Any:
        """A lock another program holds: in italics, and the tooltip says what it means for the supervisor."""
        if role == Qt.ItemDataRole.ToolTipRole:
            return QCoreApplication.translate(
                "BoardModel",
                "Held by another program under the name {0} since {1}: workbench did not take this lock and "
                "does not hand the item out before it expires ({2}). Force release frees it now, with a reason "
                "kept in the item's history; do so only when that program no longer works on it.",
            ).format(row.owner, times.moment(row.locked_at), times.moment(row.expires_at))
        font = QFont()
        font.setItalic(True)
        return font

    def _due_mark(self, row: Any, role: int) -> Any:
        """An overdue item in the theme's error colour, bold; the due time itself in the tooltip."""
        seconds = self._due_seconds(row)
        if seconds is None:
            return None
        if role == Qt.ItemDataRole.ToolTipRole:
            if isinstance(row.due, dt.datetime):
                return times.moment(row.due)
            return times.date(row.due) if isinstance(row.due, dt.date) else str(row.due)
        if seconds >= 0:
            return None
        if role == Qt.ItemDataRole.ForegroundRole:
            return QBrush(theme.current().qcolor("error_fg"))
        font = QFont()
        font.setBold(True)
        return font

    def _sort_key(self, column: int) -> Callable[[Any], Any]:
        """What a column sorts by: numbers and times as such, not as text."""
        keys: dict[int, Callable[[Any], Any]] = {
            0: lambda r: self.titles.get(r.queue, r.queue).lower(),
            1: lambda r: _sortable(r.key),
            2: lambda r: _summary(r).lower(),
            3: lambda r: r.owner.lower(),
            4: lambda r: r.locked_at.timestamp() if isinstance(r.locked_at, dt.datetime) else 0,
            5: self.age,
            6: self.left,
            7: self.idle,
            8: lambda r: r.extensions,
            DUE: lambda r: (self._due_seconds(r) is None, self._due_seconds(r) or 0.0),
        }
        return keys[column]

    def _due_seconds(self, row: Any) -> float | None:
        """Seconds from the board's database clock now to the item's due time (< 0: overdue)."""
        return None if row.due is None else durations.seconds_between(self.now(row), row.due)

    def csv_rows(self) -> list[list[Any]]:
        """The board for Export, header first: every lock, whatever the filters, oldest first; times as
        ISO 8601 and durations as whole seconds (numbers a spreadsheet can sum), the header saying so."""
        seconds = {AGE: self.age, AGE + 1: self.left, AGE + 2: self.idle}
        unit = QCoreApplication.translate("BoardModel", "(s)")
        header = [
            QCoreApplication.translate("BoardModel", name) + (f" {unit}" if c in seconds else "")
            for c, name in enumerate(COLUMNS)
        ]

        def cell(row: Any, column: int) -> Any:
            if column in seconds:
                return round(seconds[column](row).total_seconds())
            if column == CLAIMED_AT:
                return row.locked_at.isoformat() if isinstance(row.locked_at, dt.datetime) else str(row.locked_at)
            if column == DUE:
                return row.due.isoformat() if isinstance(row.due, (dt.date, dt.datetime)) else ""
            return self._text(row, column)

        return [header, *[[cell(r, c) for c in range(len(COLUMNS))] for r in self.rows]]


def _identity(row: Any) -> tuple[str, Any]:
    return row.queue, row.key


def _summary(row: Any) -> str:
    return " — ".join(str(v) for v in row.summary.values() if v not in (None, ""))


def _sortable(value: Any) -> Any:
    # Keys are numbers or text; mixed, numbers first.
    return (0, value, "") if isinstance(value, (int, float)) else (1, 0, str(value))
