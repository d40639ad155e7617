"""The open item's notes and history beside the form, with a box to add a note."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, Qt, Signal, Slot
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from workbench.core import models
from workbench.gui import dialogs, theme, times
from workbench.gui.i18n import QT_TRANSLATE_NOOP

if TYPE_CHECKING:
    from workbench.services import operator

# What the audit trail's events are called where people read them (the trail keeps the names).
EVENT_LABELS = {
    models.EventKind.CLAIM: QT_TRANSLATE_NOOP("Events", "Claimed"),
    models.EventKind.SAVE: QT_TRANSLATE_NOOP("Events", "Saved"),
    models.EventKind.EXTEND: QT_TRANSLATE_NOOP("Events", "Extended"),
    models.EventKind.RELEASE: QT_TRANSLATE_NOOP("Events", "Released"),
    models.EventKind.EXPIRE: QT_TRANSLATE_NOOP("Events", "Expired"),
    models.EventKind.FORCE_RELEASE: QT_TRANSLATE_NOOP("Events", "Force-released"),
    models.EventKind.REASSIGN: QT_TRANSLATE_NOOP("Events", "Reassigned"),
    models.EventKind.COMPLETE: QT_TRANSLATE_NOOP("Events", "Completed"),
    models.EventKind.DEFER: QT_TRANSLATE_NOOP("Events", "Deferred"),
    models.EventKind.ESCALATE: QT_TRANSLATE_NOOP("Events", "Escalated"),
    models.EventKind.REOPEN: QT_TRANSLATE_NOOP("Events", "Reopened"),
    models.EventKind.UNDO: QT_TRANSLATE_NOOP("Events", "Completion undone"),
    models.EventKind.MOVE: QT_TRANSLATE_NOOP("Events", "Moved"),
}


def event_label(kind: models.EventKind) -> str:
    return QCoreApplication.translate("Events", EVENT_LABELS[kind])


def event_text(event: models.Event) -> tuple[str, str]:
    """What an audit row says happened, and who did it ("" when nobody did: a lock runs out by itself).

    The trail records an expiry under whoever noticed it (the claim or sweep that took the item back),
    and a reassignment's new lock under the supervisor who gave it: read as "Expired by bob" and
    "Claimed by sue" they named the wrong person, so these say what happened in words.
    """
    detail = event.detail or {}
    translate = QCoreApplication.translate
    if event.kind == models.EventKind.EXPIRE:
        if detail.get("noticed_by") == "sweep":
            return translate("Events", "Expired (cleared by {0}'s sweep)").format(event.actor), ""
        return translate("Events", "Expired (noticed when {0} claimed it)").format(event.actor), ""
    if event.kind == models.EventKind.REASSIGN and detail.get("to"):
        return translate("Events", "Reassigned to {0}").format(detail["to"]), event.actor
    if event.kind == models.EventKind.CLAIM and detail.get("reassigned_from"):
        text = translate("Events", "Locked to {0} (reassigned from {1})")
        return text.format(event.owner, detail["reassigned_from"]), event.actor
    return event_label(event.kind), event.actor


NoteEdit = dialogs.NoteEdit  # the note box, shared with the dialogs' note fields


class ItemLogPanel(QWidget):
    """Notes (what people wrote) and events (what they did), oldest first, and a box for a new note.

    Signals:
        note_written(str): the operator asked to add this note to the open item.
    """

    note_written = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("item_log_panel")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(dialogs.heading(self.tr("Notes and history"), "item_log_heading"))
        self.entries = QListWidget()
        self.entries.setObjectName("item_log")
        self.entries.setWordWrap(True)
        self.entries.setAlternatingRowColors(True)
        self.entries.setAccessibleName(self.tr("Notes and history of this item"))
        layout.addWidget(self.entries, 1)
        label = QLabel(self.tr("&New note:"))
        layout.addWidget(label)
        self.note = NoteEdit()
        self.note.setObjectName("note_text")
        self.note.setPlaceholderText(self.tr("For whoever works this item next…"))
        self.note.setAccessibleName(self.tr("New note"))
        self.note.setTabChangesFocus(True)
        self.note.setFixedHeight(self.note.fontMetrics().lineSpacing() * 4 + 12)
        label.setBuddy(self.note)
        layout.addWidget(self.note)
        self.add_button = QPushButton(self.tr("Add note"))
        self.add_button.setObjectName("add_note_button")
        self.add_button.setEnabled(False)
        layout.addWidget(self.add_button, 0, Qt.AlignmentFlag.AlignRight)
        self.note.textChanged.connect(lambda: self.add_button.setEnabled(bool(self.note.toPlainText().strip())))
        self.add_button.clicked.connect(self._send)
        self.note.submitted.connect(self._send)
        self._log: operator.ItemLog | None = None
        installed = theme.installed()
        if installed is not None:  # events are drawn in the theme's muted colour: draw them again
            installed.changed.connect(lambda: self._log is not None and self.show_log(self._log))

    def clear(self) -> None:
        self._log = None
        self.entries.clear()
        self.note.clear()

    def pending(self) -> str | None:
        """A note typed and not added yet (None: the box is empty)."""
        return self.note.toPlainText().strip() or None

    def take_pending(self) -> str | None:
        """The typed note, emptied from the box: it goes with the action that takes it."""
        text = self.pending()
        self.note.clear()
        return text

    def show_log(self, log: operator.ItemLog) -> None:
        """Fill the list: notes and events merged in the order they happened."""
        self._log = log
        self.entries.clear()
        for entry in log.in_order():
            if isinstance(entry, models.Note):
                self._add_note(entry)
            else:
                self._add_event(entry)
        self.entries.scrollToBottom()

    def _add_note(self, note: models.Note) -> None:
        head = self.tr("{0} wrote, {1}:").format(note.author, times.moment(note.at))
        item = QListWidgetItem(f"{head}\n{note.text}")
        font = QFont(self.entries.font())
        font.setBold(False)
        item.setFont(font)
        self.entries.addItem(item)

    def _add_event(self, event: models.Event) -> None:
        what, by = event_text(event)
        when = times.moment(event.at)
        text = self.tr("{0} by {1}, {2}").format(what, by, when) if by else self.tr("{0}, {1}").format(what, when)
        said = event.reason or event.outcome
        if said:
            text += f" — {said}"
        changes = (event.detail or {}).get("changes") or {}
        if changes:  # what the Save or Complete changed, before → after (hidden columns by name only)
            text += "\n" + "\n".join(
                f"  {column}: {_shown(change[0])} → {_shown(change[1])}" if change != [None, None] else f"  {column}"
                for column, change in changes.items()
            )
        item = QListWidgetItem(text)
        font = QFont(self.entries.font())
        font.setItalic(True)
        item.setFont(font)
        item.setForeground(theme.current().qcolor("muted_fg"))
        self.entries.addItem(item)

    @Slot()
    def _send(self) -> None:
        text = self.note.toPlainText().strip()
        if text:
            self.note_written.emit(text)
            self.note.clear()


def _shown(value: object) -> str:
    """A value from the audit trail, as text in the history (an empty one as a dash)."""
    return "—" if value is None or value == "" else str(value)
