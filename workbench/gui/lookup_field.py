"""A lookup field: type to search the related table (in the database, off the GUI thread), Enter picks."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Protocol

from PySide6.QtCore import QEvent, QModelIndex, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QCompleter, QLineEdit, QWidget

from workbench import fieldspec

log = logging.getLogger("workbench.gui")

DEBOUNCE_MS = 150  # a search once typing pauses, not one per key
KEY_ROLE = Qt.ItemDataRole.UserRole + 1  # a row's key, as the column stores it


class LookupSource(Protocol):
    """Where a picker's rows come from: the service, called off the GUI thread. A search may answer
    twice: the rows it finds at once, then those rows and more (a large table's rows containing the
    text, which take longer to find); the request it returns cancels both."""

    def search(self, column: str, text: str, done: Callable[[list[Any]], None]) -> int: ...

    def resolve(self, column: str, key: Any, done: Callable[[Any], None]) -> int: ...

    def cancel(self, request: int) -> None: ...


class DispatchedLookups:
    """A LookupSource through the window's dispatcher (gui/dispatch.py) and the operator service."""

    def __init__(self, dispatcher: Any, operator: Any, queue: str) -> None:
        self.dispatcher, self.operator, self.queue = dispatcher, operator, queue
        self._then: dict[int, int] = {}  # a search's first request -> its second one, while it runs

    def search(self, column: str, text: str, done: Callable[[list[Any]], None]) -> int:
        def failed(exc: BaseException) -> None:
            log.warning("lookup search of %s failed: %s", column, exc)
            done([])

        first = -1  # set below; a dispatcher answers on a later turn of the event loop

        def started(answer: tuple[list[Any], bool]) -> None:
            rows, inside = answer
            done(rows)
            if inside:  # the rows containing the text, added when they come

                def more(extra: list[Any]) -> None:
                    self._then.pop(first, None)
                    if extra:
                        done(rows + extra)

                def more_failed(exc: BaseException) -> None:
                    self._then.pop(first, None)
                    log.warning("lookup search of %s inside names failed: %s", column, exc)

                self._then[first] = int(
                    self.dispatcher.call(
                        lambda: self.operator.lookup_search_inside(self.queue, column, text, 50 - len(rows)),
                        more,
                        more_failed,
                    )
                )

        first = int(
            self.dispatcher.call(lambda: self.operator.lookup_search_start(self.queue, column, text), started, failed)
        )
        return first

    def resolve(self, column: str, key: Any, done: Callable[[Any], None]) -> int:
        def found(rows: dict[Any, Any]) -> None:
            done(next(iter(rows.values()), None))

        return int(
            self.dispatcher.call(
                lambda: self.operator.lookup_resolve(self.queue, column, [key]), found, lambda _exc: done(None)
            )
        )

    def cancel(self, request: int) -> None:
        self.dispatcher.cancel(request)
        then = self._then.pop(request, None)
        if then is not None:
            self.dispatcher.cancel(then)


class LookupEdit(QLineEdit):
    """Shows the picked row's display text, keeps its key. Typing searches (debounced; an answer to
    an older text is dropped); the first row found is highlighted, each Down moves one row further,
    Enter picks: the first letters, then Enter for the first row, Down Enter for the second.

    Signals:
        picked(object): a row was picked (its key).
    """

    picked = Signal(object)

    def __init__(self, spec: fieldspec.FieldSpec, source: LookupSource | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.spec, self.source = spec, source
        self._key: Any = None
        self._shown = ""  # the text shown for _key; typing something else unpicks it
        self._rows: list[Any] = []  # the latest search's rows
        self._searched: str | None = None  # the text those rows answer
        self._request: int | None = None
        self._model = QStandardItemModel(self)
        self.completer_ = QCompleter(self._model, self)
        # The database has filtered the rows already: the completer shows them all.
        self.completer_.setCompletionMode(QCompleter.CompletionMode.UnfilteredPopupCompletion)
        self.completer_.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.completer_.setMaxVisibleItems(10)
        self.completer_.setWidget(self)
        popup = self.completer_.popup()
        assert popup is not None  # a completer always has its list
        self._popup = popup
        popup.installEventFilter(self)  # after the completer's own filter: this one sees the keys first
        popup.clicked.connect(self._activated)
        self.setPlaceholderText(self.tr("Type to search {0}").format(spec.lookup or ""))
        self.setAccessibleDescription(self.tr("Type to search; Down to the rows, Enter picks"))
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self._search)
        self.textEdited.connect(self._typed)

    # -- the value ----------------------------------------------------------------------------------

    def key(self) -> Any:
        """The picked row's key; the typed text when nothing was picked for it (Save then checks it)."""
        text = self.text()
        if self._key is not None and text == self._shown:
            return self._key
        return text if text.strip() else None

    def set_key(self, value: Any) -> None:
        """Show a stored key: at once as itself, then as its row's display text once it is read."""
        self._key, self._shown = value, "" if value is None else str(value)
        self.setText(self._shown)
        self.setCursorPosition(0)
        if value is None or self.source is None:
            return

        def shown(choice: Any) -> None:
            if choice is not None and self._key == value and self.text() == self._shown:
                self._shown = choice.text
                self.blockSignals(True)
                self.setText(self._shown)
                self.setCursorPosition(0)
                self.blockSignals(False)

        self.source.resolve(self.spec.name, value, shown)

    def _pick(self, choice: Any) -> None:
        self._key, self._shown = choice.key, choice.text
        self.setText(self._shown)
        self._popup.hide()
        self.picked.emit(choice.key)
        self.textEdited.emit(self._shown)  # the form marks the field changed, as for typing
        self._timer.stop()

    # -- searching ----------------------------------------------------------------------------------

    def _typed(self, text: str) -> None:
        if text == self._shown and self._key is not None:
            return  # the pick itself
        self._timer.start()

    def _search(self) -> None:
        if self.source is None or self.isReadOnly():
            return
        if self._request is not None:
            self.source.cancel(self._request)  # its answer would be stale
        text = self.text()
        self._request = self.source.search(self.spec.name, text, lambda rows: self._found(text, rows))

    def _found(self, text: str, rows: list[Any]) -> None:
        if text != self.text():
            return  # typed on since: a newer search is coming
        shown = self._rows if self._searched == text else []
        if shown and len(rows) > len(shown) and rows[: len(shown)] == shown:
            # The same search's second answer: its rows added below, the highlighted row kept (the
            # completer resets its list when rows are added).
            current = self._popup.currentIndex().row() if self._popup.isVisible() else 0
            for choice in rows[len(shown) :]:
                self._model.appendRow(self._item(choice))
            self._rows = list(rows)
            if self.hasFocus() and not self._popup.isVisible():
                self.completer_.complete()
            if self._popup.isVisible():
                self._popup.setCurrentIndex(self._model.index(max(current, 0), 0))
            return
        self._rows, self._searched = list(rows), text
        self._model.clear()
        for choice in rows:
            self._model.appendRow(self._item(choice))
        if rows and self.hasFocus():
            self.completer_.complete()
            # The first row highlighted: Enter picks it, each Down moves one row further.
            self._popup.setCurrentIndex(self._model.index(0, 0))
        elif not rows:
            self._popup.hide()

    @staticmethod
    def _item(choice: Any) -> QStandardItem:
        item = QStandardItem(choice.text)
        item.setData(choice.key, KEY_ROLE)
        item.setEditable(False)
        return item

    def _activated(self, index: QModelIndex) -> None:
        row = index.row()
        if 0 <= row < len(self._rows):
            self._pick(self._rows[row])

    # -- keys ---------------------------------------------------------------------------------------

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Enter in the list picks the highlighted row, or the first one when none is (QCompleter would
        only close the list)."""
        enter = isinstance(event, QKeyEvent) and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        if watched is self._popup and event.type() == QEvent.Type.KeyPress and enter and self._rows:
            current = self._popup.currentIndex()
            if current.isValid():
                self._activated(current)
                return True
            if self._searched == self.text():
                self._pick(self._rows[0])
                return True
        return super().eventFilter(watched, event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self._key_pending():
            self._pick(self._rows[0])  # Enter on the typed letters: the first row
            return
        if event.key() == Qt.Key.Key_Down and not self._popup.isVisible() and self._rows:
            self.completer_.complete()  # the rows again, the first one highlighted
            self._popup.setCurrentIndex(self._model.index(0, 0))
            return
        super().keyPressEvent(event)

    def _key_pending(self) -> bool:
        """Typed letters whose search has answered, none picked yet."""
        return bool(self._rows) and self._searched == self.text() and self.key() != self._key
