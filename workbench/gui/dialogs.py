"""Small dialogs of the operator window: release or defer with a reason and note, a required note, pick an item."""

from __future__ import annotations

import datetime as dt
import decimal
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QDate, QDateTime, QEvent, QLocale, QSortFilterProxyModel, Qt, QTime, Signal, Slot
from PySide6.QtGui import QKeyEvent, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDateTimeEdit,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from workbench.core import durations
from workbench.gui import a11y, theme, times
from workbench.gui import form as form_mod

if TYPE_CHECKING:
    from workbench.services import operator

# Offered as typed into the audit trail: data that supervisors filter and count, the same for every
# operator, so not translated (see quit_guard.CLOSED_UNTOUCHED).
RELEASE_REASONS = (
    "Needs information from the customer",
    "Not my area",
    "Waiting for someone else",
    "Duplicate",
    "Cannot finish now",
)


def ask(dialog: QDialog) -> int:
    """`dialog.exec()` for a dialog made for one question, deleted once the caller has read its answer (when
    the event loop next runs): made with the window as its parent, it stayed as the window's hidden child for
    the rest of the day otherwise, one more for every Release, Defer or Pick."""
    try:
        return dialog.exec()
    finally:
        dialog.deleteLater()


class NoteEdit(QPlainTextEdit):
    """A note's box: Ctrl+Return (or Ctrl+Enter) here sends the note (`submitted`): beside the form it
    adds the note, where everywhere else in the window it completes the item (a typed note must not be
    completed past); in a dialog's note (Release, Defer) it confirms the dialog, as the main note box's
    key does its box's one action (issue 53)."""

    submitted = Signal()

    @staticmethod
    def _is_submit(event: QEvent) -> bool:
        return (
            isinstance(event, QKeyEvent)
            and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
            and bool(event.modifiers() & Qt.KeyboardModifier.ControlModifier)
        )

    def event(self, event: QEvent) -> bool:
        # The window's Complete shortcut would take the key before the box sees it: claim it first.
        if event.type() == QEvent.Type.ShortcutOverride and self._is_submit(event):
            event.accept()
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if self._is_submit(event):
            self.submitted.emit()
            return
        super().keyPressEvent(event)


class ReleaseDialog(QDialog):
    """Ask why the item goes back (a reason from the list, or typed), and for a note for whoever
    takes it next (required where the queue says so)."""

    def __init__(
        self,
        item_label: str,
        unsaved: bool,
        parent: QWidget | None = None,
        *,
        note_required: bool = False,
        reasons: tuple[str, ...] = (),
        note: str | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("release_dialog")
        self.setWindowTitle(self.tr("Release item"))
        layout = QVBoxLayout(self)
        text = self.tr("Give {0} back to the queue so someone else can take it.").format(item_label)
        if unsaved:
            text += "\n" + self.tr("Your unsaved edits will be discarded.")
        explanation = QLabel(text)
        explanation.setWordWrap(True)  # a long item label must not widen the dialog past the screen, or be cut
        layout.addWidget(explanation)
        # The queue's own list of reasons, if it has one.
        self.reason = _reason_box(
            layout, self.tr("&Reason (pick one or type your own):"), "release_reason", reasons or RELEASE_REASONS
        )
        self.note_box = _note_box(
            self,
            layout,
            self.tr("&Note for whoever takes it next (required):")
            if note_required
            else self.tr("&Note for whoever takes it next (optional):"),
        )
        ok = _ok_cancel_buttons(self, layout, self.tr("Release"))
        if note_required:
            _require_text(self.note_box, ok)
        _confirm_from(self.note_box, ok)
        self.note_box.setPlainText(note or "")  # the note the operator had typed beside the form
        self.reason.setFocus()

    def text(self) -> str | None:
        value = self.reason.currentText().strip()
        return value or None

    def note(self) -> str | None:
        return self.note_box.toPlainText().strip() or None


# Offered for a defer, as typed into the audit trail (data, like RELEASE_REASONS: not translated).
DEFER_REASONS = ("Customer calls back", "Waiting for a reply", "Waiting for parts", "Try again later")


class DeferDialog(QDialog):
    """Ask until when the item waits (a date and time, or one of a few usual choices), why, and for a
    note (required where the queue says so)."""

    def __init__(
        self,
        item_label: str,
        unsaved: bool,
        parent: QWidget | None = None,
        *,
        note_required: bool = False,
        now: dt.datetime | None = None,
        note: str | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("defer_dialog")
        self.setWindowTitle(self.tr("Defer item"))
        self._now = (now or dt.datetime.now()).astimezone()
        layout = QVBoxLayout(self)
        text = self.tr(
            "Put {0} aside until a time: nobody is given it before, then it comes first, to you for a while."
        ).format(item_label)
        if unsaved:
            text += "\n" + self.tr("Your unsaved edits will be discarded.")
        explanation = QLabel(text)
        explanation.setWordWrap(True)
        layout.addWidget(explanation)
        label = QLabel(self.tr("&Until:"))
        layout.addWidget(label)
        row = QHBoxLayout()
        self.until = QDateTimeEdit()
        self.until.setObjectName("defer_until")
        self.until.setCalendarPopup(True)
        self.until.setAccessibleName(self.tr("Until"))
        self.until.setDisplayFormat(times.moment_format())
        label.setBuddy(self.until)
        row.addWidget(self.until, 1)
        tomorrow = (self._now + dt.timedelta(days=1)).replace(hour=9, minute=0, second=0, microsecond=0)
        monday = (self._now + dt.timedelta(days=7 - self._now.weekday())).replace(
            hour=9, minute=0, second=0, microsecond=0
        )
        for name, text, at in (
            ("defer_hour", self.tr("In 1 hour"), self._now + dt.timedelta(hours=1)),
            ("defer_tomorrow", self.tr("Tomorrow 9:00"), tomorrow),
            ("defer_monday", self.tr("Monday 9:00"), monday),
        ):
            button = QPushButton(text)
            button.setObjectName(name)
            button.clicked.connect(lambda _=False, when=at: self.set_until(when))
            row.addWidget(button)
        layout.addLayout(row)
        self.reason = _reason_box(
            layout, self.tr("&Reason (pick one or type your own):"), "defer_reason", DEFER_REASONS
        )
        self.note_box = _note_box(
            self,
            layout,
            self.tr("&Note for whoever takes it next (required):")
            if note_required
            else self.tr("&Note for whoever takes it next (optional):"),
        )
        self.problem = QLabel()
        self.problem.setObjectName("defer_problem")
        self.problem.setProperty("role", "field-error")
        self.problem.setWordWrap(True)
        layout.addWidget(self.problem)
        self.ok = _ok_cancel_buttons(self, layout, self.tr("Defer"))
        _confirm_from(self.note_box, self.ok)
        self._note_required = note_required
        self.until.dateTimeChanged.connect(self._check)
        self.reason.editTextChanged.connect(self._check)
        self.note_box.textChanged.connect(self._check)
        self.note_box.setPlainText(note or "")  # the note the operator had typed beside the form
        self.set_until(tomorrow)
        self.until.setFocus()

    def set_until(self, at: dt.datetime) -> None:
        local = at.astimezone()
        self.until.setDateTime(QDateTime(QDate(local.year, local.month, local.day), QTime(local.hour, local.minute)))
        self._check()

    def when(self) -> dt.datetime:
        """The chosen time, aware, in this computer's zone."""
        value = self.until.dateTime()
        date, time = value.date(), value.time()
        return dt.datetime(date.year(), date.month(), date.day(), time.hour(), time.minute()).astimezone()

    def text(self) -> str:
        return self.reason.currentText().strip()

    def note(self) -> str | None:
        return self.note_box.toPlainText().strip() or None

    @Slot()
    def _check(self) -> None:
        problem = ""
        if self.when() <= dt.datetime.now().astimezone():
            problem = self.tr("Choose a time still to come.")
        elif not self.text():
            problem = self.tr("Say why, for the history (pick a reason or type one).")
        elif self._note_required and not self.note():
            problem = self.tr("This queue needs a note with a defer.")
        self.problem.setText(problem)
        self.problem.setVisible(bool(problem))
        self.ok.setEnabled(not problem)


class NoteDialog(QDialog):
    """Ask for the note an action needs before it is done."""

    def __init__(
        self,
        title: str,
        explanation: str,
        parent: QWidget | None = None,
        note: str | None = None,
        *,
        label: str | None = None,
        name: str = "note_dialog",
    ) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.setWindowTitle(title)
        layout = QVBoxLayout(self)
        text = QLabel(explanation)
        text.setWordWrap(True)
        layout.addWidget(text)
        self.note_box = _note_box(self, layout, label or self.tr("&Note:"))
        ok = _ok_cancel_buttons(self, layout, title)
        _require_text(self.note_box, ok)
        _confirm_from(self.note_box, ok)
        self.note_box.setPlainText(note or "")
        self.note_box.setFocus()

    def text(self) -> str:
        return self.note_box.toPlainText().strip()


def _reason_box(layout: QVBoxLayout, label_text: str, name: str, reasons: tuple[str, ...]) -> QComboBox:
    """A labelled list of reasons that takes a typed one too, empty at first."""
    label = QLabel(label_text)
    layout.addWidget(label)
    box = QComboBox()
    box.setObjectName(name)
    box.setEditable(True)
    box.addItems(list(reasons))
    box.setCurrentText("")
    label.setBuddy(box)
    layout.addWidget(box)
    return box


def _note_box(dialog: QDialog, layout: QVBoxLayout, label_text: str) -> NoteEdit:
    label = QLabel(label_text)
    layout.addWidget(label)
    box = NoteEdit()
    box.setObjectName("note_box")
    box.setAccessibleName(label_text.replace("&", ""))
    box.setTabChangesFocus(True)
    box.setFixedHeight(box.fontMetrics().lineSpacing() * 4 + 12)
    label.setBuddy(box)
    layout.addWidget(box)
    dialog.setMinimumWidth(dialog.fontMetrics().averageCharWidth() * 72)
    return box


def _confirm_from(box: NoteEdit, ok: QPushButton) -> None:
    """Ctrl+Return in the note presses `ok`, when it may be pressed (a required note, a time to come)."""
    box.submitted.connect(lambda: ok.click() if ok.isEnabled() else None)


def _require_text(box: QPlainTextEdit, ok: QPushButton) -> None:
    """`ok` is enabled only while `box` holds some text."""
    ok.setEnabled(False)
    box.textChanged.connect(lambda: ok.setEnabled(bool(box.toPlainText().strip())))


def read_only_table(name: str, headers: list[str], rows: list[list[str]], stretch: tuple[int, ...]) -> QTableWidget:
    """A read-only table of text cells (the dialogs below show lists, never edit them)."""
    table = QTableWidget(len(rows), len(headers))
    table.setObjectName(name)
    table.setHorizontalHeaderLabels(headers)
    table.verticalHeader().setVisible(False)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    a11y.leave_with_tab(table)
    for column in stretch:
        table.horizontalHeader().setSectionResizeMode(column, QHeaderView.ResizeMode.Stretch)
    for r, cells in enumerate(rows):
        for c, text in enumerate(cells):
            table.setItem(r, c, QTableWidgetItem(text))
    return table


def _ok_cancel_buttons(dialog: QDialog, layout: QVBoxLayout, ok_text: str) -> QPushButton:
    """OK (named `ok_text`) and Cancel at the bottom of `dialog`; returns the OK button."""
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
    ok = buttons.button(QDialogButtonBox.StandardButton.Ok)
    ok.setText(ok_text)
    buttons.accepted.connect(dialog.accept)
    buttons.rejected.connect(dialog.reject)
    layout.addWidget(buttons)
    return ok


class EscalationsDialog(QDialog):
    """The items the user handed to a supervisor, newest first, and what became of each."""

    def __init__(self, rows: list[tuple[Any, Any]], describe: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("escalations_dialog")
        self.setWindowTitle(self.tr("Items you escalated"))
        layout = QVBoxLayout(self)
        if not rows:
            layout.addWidget(QLabel(self.tr("You have not handed any item of this queue to a supervisor.")))
        cells = [
            [
                str(e.key),
                times.moment(e.at),
                e.reason or "",
                self.tr("Waiting for a supervisor") if last.id == e.id else describe(last),
            ]
            for e, last in rows
        ]
        self.table = read_only_table(
            "escalations",
            [self.tr("Item"), times.with_zone(self.tr("When")), self.tr("Reason"), self.tr("What became of it")],
            cells,
            (2, 3),
        )
        self.table.setAccessibleName(self.tr("Items you escalated"))
        layout.addWidget(self.table, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.resize(self.fontMetrics().averageCharWidth() * 110, self.fontMetrics().lineSpacing() * 18)


class PickDialog(QDialog):
    """The first waiting items of the queue under the form's labels, searchable and sortable; the
    user picks one to claim."""

    def __init__(self, found: operator.PickList, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("pick_dialog")
        self.setWindowTitle(self.tr("Pick an item"))
        self._rows, self.key_name = found.rows, found.key_name
        count = len(found.rows)
        layout = QVBoxLayout(self)
        self.heading = QLabel(self._heading(found))
        self.heading.setObjectName("pick_heading")
        self.heading.setWordWrap(True)
        layout.addWidget(self.heading)
        self.search = QLineEdit()
        self.search.setObjectName("pick_search")
        self.search.setPlaceholderText(self.tr("Search these items"))
        a11y.clear_button(self.search, self.tr("the search"))
        self.search.setAccessibleName(self.tr("Search these items"))
        layout.addWidget(self.search)
        names = list(found.rows[0]) if found.rows else [found.key_name]
        if found.due_name in names:  # beside the key: how urgent an item is decides which to pick
            names.remove(found.due_name)
            names.insert(1, found.due_name)
        model = QStandardItemModel(count, len(names), self)
        model.setHorizontalHeaderLabels([found.labels.get(name, name) for name in names])
        for r, row in enumerate(found.rows):
            for c, name in enumerate(names):
                text = form_mod.display(row.get(name))
                item = QStandardItem(text)
                item.setToolTip(text)
                if name == found.due_name and found.db_now is not None:
                    self._mark_due(item, found.db_now, row.get(name))
                item.setData(_sort_key(row.get(name)), SORT_ROLE)
                item.setEditable(False)
                model.setItem(r, c, item)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(model)
        self.proxy.setSortRole(SORT_ROLE)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.proxy.setFilterKeyColumn(-1)  # any column
        # Fitted to the dialog as the lock board is (a German "2 Tg. 10 h überfällig" whole, the longest text
        # column cut first): Qt's fit-to-contents left Category and Priority out of view to the right.
        due = names.index(found.due_name) if found.due_name in names else -1
        from workbench.gui import board_view  # the lock board's table: only this dialog of the window's needs it

        self.table = board_view.BoardView(_summary(model, skip={0, due}), whole=(due,) if due >= 0 else ())
        self.table.setObjectName("pick_table")
        self.table.setAccessibleName(self.windowTitle())  # "Pick an item", set above
        self.table.setModel(self.proxy)
        self.table.verticalHeader().setVisible(False)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(False)
        a11y.leave_with_tab(self.table)  # the arrow keys choose, Tab goes on to Claim
        header = self.table.horizontalHeader()
        header.setSortIndicator(-1, Qt.SortOrder.AscendingOrder)  # queue order until a header is clicked
        self.table.setSortingEnabled(True)
        header.setResizeContentsPrecision(60)  # what the columns are fitted to: the first rows
        self.table.doubleClicked.connect(lambda _: self.accept())
        self.search.textChanged.connect(self._filter)
        self.search.returnPressed.connect(self._accept_if_chosen)
        layout.addWidget(self.table)
        _ok_cancel_buttons(self, layout, self.tr("Claim"))
        if count:
            self.table.selectRow(0)
        self.resize(860, 520)

    def _mark_due(self, item: QStandardItem, now: dt.datetime, due: Any) -> None:
        """Time to the due time on the database clock (the time itself in the tooltip); an overdue
        item in the theme's error colour, bold."""
        seconds = durations.seconds_between(now, due)
        if seconds is None:
            return
        item.setToolTip(item.text())
        item.setText(times.until_due(seconds))
        if seconds < 0:
            theme.mark_alarm(item)

    def _heading(self, found: operator.PickList) -> str:
        count = len(found.rows)
        if not count:
            return self.tr("No item is waiting.")
        if found.more_than:
            return self.tr("The first %n waiting items of more than {0}, in queue order:", "", count).format(
                QLocale().toString(waiting_cap())
            )
        if found.waiting > count:
            return self.tr("The first %n of {0} waiting items, in queue order:", "", count).format(
                QLocale().toString(found.waiting)
            )
        return self.tr("%n waiting item(s), in queue order:", "", count)

    @Slot(str)
    def _filter(self, text: str) -> None:
        self.proxy.setFilterFixedString(text.strip())
        if self.proxy.rowCount():
            self.table.selectRow(0)  # what Enter claims: the first match, in view
            self.table.scrollToTop()

    @Slot()
    def _accept_if_chosen(self) -> None:
        if self.chosen() is not None:
            self.accept()

    def chosen(self) -> Any:
        rows = self.table.selectionModel().selectedRows()
        if not rows or not self._rows:
            return None
        return self._rows[self.proxy.mapToSource(rows[0]).row()][self.key_name]


SORT_ROLE = Qt.ItemDataRole.UserRole + 1


def _summary(model: QStandardItemModel, skip: set[int]) -> int:
    """The column that takes what the others leave: the first one after the key and the due time, the
    queue's summary (a subject line) by the order of its list columns."""
    return next((c for c in range(model.columnCount()) if c not in skip), 0)


def _sort_key(value: Any) -> Any:
    """What a column sorts by: numbers as numbers, dates in time order, text without case."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float, decimal.Decimal)):
        return float(value)
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    return str(value).casefold()


def heading(text: str, name: str) -> QLabel:
    """A pane's bold title (Notes and history, Source)."""
    label = QLabel(text)
    label.setObjectName(name)
    font = label.font()
    font.setBold(True)
    label.setFont(font)
    return label


def set_state(widget: QWidget, state: str) -> None:
    """Set the `state` property the style sheet colours by, and make the style see the change."""
    widget.setProperty("state", state)
    widget.style().unpolish(widget)
    widget.style().polish(widget)


class Banner(QWidget):
    """A coloured strip with a message and buttons, above the form (role: warning, lost, info)."""

    def __init__(self, name: str, role: str, parent: QWidget | None = None) -> None:
        from PySide6.QtWidgets import QHBoxLayout

        super().__init__(parent)
        self.setObjectName(name)
        self.setProperty("role", role)
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self._layout = QHBoxLayout(self)
        self._layout.setContentsMargins(10, 6, 10, 6)
        self.label = QLabel()
        self.label.setObjectName(f"{name}_text")
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._layout.addWidget(self.label, 1)
        self.setVisible(False)

    def add_button(self, button: QWidget) -> None:
        self._layout.addWidget(button)

    def show_text(self, text: str) -> None:
        self.label.setText(text)
        self.setVisible(True)


def waiting_cap() -> int:
    """How far the counts go (imported here: a pick list arrives once the engine is loaded)."""
    from workbench.services import operator

    return operator.WAITING_CAP
