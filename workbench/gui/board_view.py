"""The lock board's table: every header readable, the summary usable, the other columns fitted to the view."""

from __future__ import annotations

from PySide6.QtCore import QEvent
from PySide6.QtGui import QFont, QFontMetrics, QShowEvent
from PySide6.QtWidgets import QHeaderView, QStyle, QTableView, QWidget

SUMMARY_CHARS = 24  # the summary keeps room for this many average characters, whatever the other columns want


class BoardView(QTableView):
    """Sizes the board's columns and keeps the summary column filling the rest of the view.

    Qt's Stretch mode gives a stretched column only what the others leave, down to a couple of
    characters: longer (German) headers and times squeezed the summary to nothing and pushed the
    last columns out of sight. Here every column gets at least its header, the summary at least
    SUMMARY_CHARS characters; what the contents want beyond that is cut from the widest columns
    first when the view is too narrow (their cells elide, the tooltip has the whole text). The
    `whole` columns (the times a supervisor acts on: time left, due) are not cut while others can
    be: an elided "seit 2 Tg. 03 …" says nothing. Once the supervisor drags a column, the widths are
    theirs: a wider or narrower view only moves the summary.
    """

    def __init__(self, summary: int, whole: tuple[int, ...] = (), parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.summary = summary
        self.whole = whole
        # The longest text a `whole` column may come to hold ("expired 23d23h ago"): the board is fitted
        # at its first locks, not at each refresh, and a time left grows into "expired …" later (issue 53).
        self.widest: dict[int, list[str]] = {}
        self._busy = False  # widths being set here, not by the supervisor
        self.user_sized = False
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(False)
        header.sectionResized.connect(self._on_section_resized)

    def header_width(self, column: int) -> int:
        """What the header of `column` needs: its text, margins and sort indicator."""
        header = self.horizontalHeader()
        return max(header.sectionSizeHint(column), header.minimumSectionSize())

    def text_width(self, text: str) -> int:
        """A cell's width for `text` in the view's font, with the item delegate's margins."""
        font = QFont(self.font())
        margin = self.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, self) + 1
        return QFontMetrics(font).horizontalAdvance(text) + 2 * margin + 1

    def summary_minimum(self) -> int:
        return max(self.header_width(self.summary), self.fontMetrics().averageCharWidth() * SUMMARY_CHARS)

    def fit(self) -> None:
        """Size every column from its header and its contents (the header's sample of rows) to the view."""
        if self.model() is None:
            return
        columns = [c for c in range(self.model().columnCount()) if not self.isColumnHidden(c)]
        others = [c for c in columns if c != self.summary]
        need = {c: self.header_width(c) for c in others}
        want = {c: max(need[c], self.sizeHintForColumn(c)) for c in others}
        need |= {
            c: max([want[c], *(self.text_width(t) for t in self.widest.get(c, []))]) for c in others if c in self.whole
        }
        want |= {c: need[c] for c in others if c in self.whole}  # their contents, before the others' are
        room = self.viewport().width() - (self.summary_minimum() if self.summary in columns else 0)
        self._set_widths(fitted(need, want, room))
        self.user_sized = False
        self._fill()

    def _fill(self) -> None:
        """The summary takes the width the other columns leave, never less than its minimum."""
        if self.model() is None or self.isColumnHidden(self.summary):
            return
        header = self.horizontalHeader()
        used = sum(
            header.sectionSize(c) for c in range(header.count()) if c != self.summary and not header.isSectionHidden(c)
        )
        self._set_widths({self.summary: max(self.summary_minimum(), self.viewport().width() - used)})

    def _set_widths(self, widths: dict[int, int]) -> None:
        self._busy = True
        try:
            for column, width in widths.items():
                self.setColumnWidth(column, width)
        finally:
            self._busy = False

    def _on_section_resized(self, column: int, _old: int, _new: int) -> None:
        if self._busy:
            return
        self.user_sized = True
        if column != self.summary:
            self._fill()

    def viewportEvent(self, event: QEvent) -> bool:
        # The viewport's width (the window's, less a scroll bar that comes and goes) is what the columns share.
        if event.type() == QEvent.Type.Resize:
            self._refit()
        return super().viewportEvent(event)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        # Laid out while hidden (a dialog before it shows), the viewport may have its final width without
        # a resize of its own to tell: fitted again once it is seen.
        self._refit()

    def _refit(self) -> None:
        if self.user_sized:  # the supervisor's widths stay; the summary takes up the difference
            self._fill()
        else:
            self.fit()


def fitted(need: dict[int, int], want: dict[int, int], room: int) -> dict[int, int]:
    """Widths between `need` and `want` adding up to at most `room` where that is possible: the widest
    columns are cut to one common width (never below their need), the narrow ones keep theirs."""
    if sum(want.values()) <= room:
        return dict(want)
    if sum(need.values()) >= room:
        return dict(need)
    low, high = 0, max(want.values())
    while low < high:  # the largest common width that still fits
        cap = (low + high + 1) // 2
        if sum(max(need[c], min(want[c], cap)) for c in want) <= room:
            low = cap
        else:
            high = cap - 1
    return {c: max(need[c], min(want[c], low)) for c in want}
