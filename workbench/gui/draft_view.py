"""A kept draft, read-only beside the row as it is now: view, copy or discard it, whoever holds the item."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, QTimer, Signal
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QMainWindow,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from workbench import journal as journal_mod
from workbench.core import errors, models
from workbench.gui import dialogs, resume, times
from workbench.gui import form as form_mod

translate = QCoreApplication.translate  # lupdate reads translate(context, text) calls


@dataclasses.dataclass(frozen=True)
class Holder:
    """Who holds an item now, from a fresh read of its row (None: the read failed)."""

    view: models.ItemView | None
    text: str  # one sentence for the banner and the draft view
    free: bool  # the operator could claim it again now
    checked_at: dt.datetime  # local time of the read, so "now" is never older than it says


def holder_of(view: models.ItemView, user: str) -> Holder:
    lock, state = view.lock, view.state
    free = False
    if lock is not None and not lock.expired:
        if lock.owner == user:
            text, free = translate("DraftView", "you hold it (until {0})").format(times.clock(lock.expires_at)), True
        else:
            text = translate("DraftView", "{0} holds it since {1} (until {2})").format(
                lock.owner, times.clock(lock.locked_at), times.clock(lock.expires_at)
            )
    elif lock is not None and lock.owner == user:
        # Her own run-out lock is told to her, not about her as if she were someone else (issue 40).
        text, free = translate("DraftView", "your lock on it has run out: it is free to claim"), True
    elif lock is not None:
        text = translate("DraftView", "{0}'s lock on it has run out: it is free to claim").format(lock.owner)
        free = True
    elif state == "waiting":
        text, free = translate("DraftView", "nobody holds it: it is free to claim"), True
    elif state.startswith("done:"):
        text = translate("DraftView", "it is finished ({0})").format(state.removeprefix("done:"))
    else:
        text = translate("DraftView", "it is not waiting to be worked on")
    return Holder(view, text, free, dt.datetime.now())


def lost_sentence(lost: errors.LockLost, item: str) -> str:
    """What happened to the operator's lock, in their language and on their clock (the engine's own
    message is English and in the database's time)."""
    at = times.clock(lost.at) if lost.at is not None else translate("DraftView", "an unknown time")
    if lost.cause == "expired":
        text = translate("DraftView", "Lock lost: your lock on {0} expired at {1}").format(item, at)
    elif lost.cause == "completed":
        text = translate("DraftView", "Lock lost: {0} was completed by {1} at {2}").format(item, lost.by, at)
    elif lost.cause == "released":
        text = translate("DraftView", "Lock lost: {0} was released by {1} at {2}").format(item, lost.by, at)
    elif lost.cause == "force_released":
        text = translate("DraftView", "Lock lost: supervisor {0} released {1} at {2}").format(lost.by, item, at)
    elif lost.cause == "reassigned" and lost.to:
        text = translate("DraftView", "Lock lost: supervisor {0} gave {1} to {2} at {3}").format(
            lost.by, item, lost.to, at
        )
    elif lost.cause == "reassigned":
        text = translate("DraftView", "Lock lost: supervisor {0} gave {1} to someone else at {2}").format(
            lost.by, item, at
        )
    else:  # not_held, taken: no event of this lock to tell
        text = translate("DraftView", "Lock lost: you no longer hold a lock on {0}").format(item)
    if lost.reason:
        text += " " + translate("DraftView", "(reason: {0})").format(lost.reason)
    return text + "."


def holder_hint(lost: errors.LockLost, viewer: str | None = None) -> str:
    """Who held the item when the loss was noticed (a fresh read follows and replaces it), said to
    `viewer` as "you" when it is she who holds it (under another lock: another window, a reassignment)."""
    if lost.holder is not None and lost.holder == viewer:
        return translate("DraftView", "You hold it now, under another lock.")
    if lost.holder is not None:
        return translate("DraftView", "{0} holds it now.").format(lost.holder)
    if lost.cause == "expired":
        return translate("DraftView", "Nobody has taken it since: you can claim it again to continue.")
    return translate("DraftView", "Nobody holds it now.")


def unknown_holder(problem: str) -> Holder:
    return Holder(
        None, translate("DraftView", "who holds it is not known: {0}").format(problem), False, dt.datetime.now()
    )


def now_sentence(holder: Holder) -> str:
    return translate("DraftView", "Now (checked {0}): {1}.").format(times.clock(holder.checked_at), holder.text)


def as_text(title: str, draft: journal_mod.Draft, labels: dict[str, str], holder: Holder | None) -> str:
    """The draft as plain text for the clipboard: readable in a mail or a ticket, one field per block."""
    current = dict(holder.view.item) if holder is not None and holder.view is not None else None
    lines = [
        translate("DraftView", "Unsaved edits of {0} by {1}, last change {2}").format(
            title, draft.owner, _local(draft.updated_at)
        )
    ]
    if holder is not None:
        lines.append(now_sentence(holder))
    for name, value in draft.values.items():
        lines += [
            "",
            f"{labels.get(name, name)}:",
            _block(translate("DraftView", "your draft"), value),
            _block(translate("DraftView", "when you started"), draft.base.get(name)),
        ]
        if current is not None:
            lines.append(_block(translate("DraftView", "in the database now"), current.get(name)))
    return "\n".join(lines) + "\n"


def _block(what: str, value: Any) -> str:
    text = form_mod.display(value) or translate("DraftView", "(empty)")
    return f"  {what}: " + text.replace("\n", "\n    ")  # multi-line values stay under their heading


def without_draft(entries: list[resume.Entry], queue: str, key: Any) -> list[resume.Entry]:
    """The resume panel's entries once the item's draft is gone (a lock still held stays listed)."""
    kept = []
    for entry in entries:
        if (entry.queue, entry.key) == (queue, key):
            if entry.lock is None:
                continue
            entry = dataclasses.replace(entry, has_draft=False)
        kept.append(entry)
    return kept


def confirm_discard(parent: QWidget, title: str) -> bool:
    """Ask before the draft goes (it cannot come back)."""
    box = QMessageBox(
        QMessageBox.Icon.Question,
        translate("DraftView", "Discard your edits?"),
        translate("DraftView", "Your unsaved edits to {0} will be thrown away. This cannot be undone.").format(title),
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
        parent,
    )
    box.setObjectName("discard_draft_question")
    box.setDefaultButton(QMessageBox.StandardButton.No)
    return box.exec() == QMessageBox.StandardButton.Yes


class DraftDialog(QDialog):
    """The draft field by field: your draft, the value you started from, the value in the database now."""

    copy_requested = Signal()
    discard_requested = Signal()

    def __init__(
        self, title: str, draft: journal_mod.Draft, labels: dict[str, str], parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("draft_dialog")
        self.setWindowTitle(self.tr("Your draft of {0}").format(title))
        self.draft, self.labels = draft, labels
        layout = QVBoxLayout(self)
        heading = QLabel(
            self.tr("Unsaved edits of {0}, last change {1} (read-only; only changed fields are listed).").format(
                title, _local(draft.updated_at)
            )
        )
        heading.setWordWrap(True)
        layout.addWidget(heading)
        self.status = QLabel(self.tr("Reading the item from the database…"))
        self.status.setObjectName("draft_status")
        self.status.setWordWrap(True)
        layout.addWidget(self.status)
        self.table = dialogs.read_only_table(
            "draft_table",
            [self.tr("Field"), self.tr("Your draft"), self.tr("When you started"), self.tr("In the database now")],
            self._rows(None, self.tr("reading…")),
            stretch=(1, 2, 3),
        )
        self.table.setAccessibleName(self.tr("Your draft beside the values when you started and now"))
        layout.addWidget(self.table, 1)
        self.note = QLabel()
        self.note.setObjectName("draft_note")
        layout.addWidget(self.note)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.copy_button = QPushButton(self.tr("&Copy as text"))
        self.copy_button.setObjectName("draft_copy")
        self.discard_button = QPushButton(self.tr("&Discard draft…"))
        self.discard_button.setObjectName("draft_discard")
        for button in (self.copy_button, self.discard_button):
            button.setAutoDefault(False)  # Enter closes the view; it never discards by accident
        buttons.addButton(self.copy_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.discard_button, QDialogButtonBox.ButtonRole.DestructiveRole)
        self.copy_button.clicked.connect(self.copy_requested.emit)
        self.discard_button.clicked.connect(self.discard_requested.emit)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.resize(820, 380)

    def _rows(self, current: dict[str, Any] | None, missing: str) -> list[list[str]]:
        return [
            [
                self.labels.get(name, name),
                form_mod.display(value),
                form_mod.display(self.draft.base.get(name)),
                missing if current is None else form_mod.display(current.get(name)),
            ]
            for name, value in self.draft.values.items()
        ]

    def show_holder(self, holder: Holder) -> None:
        self.status.setText(now_sentence(holder))
        current = dict(holder.view.item) if holder.view is not None else None
        for r, cells in enumerate(self._rows(current, self.tr("(unknown)"))):
            cell = self.table.item(r, 3)
            if cell is not None:
                cell.setText(cells[3])


def _local(iso: str) -> str:
    try:
        return times.moment(dt.datetime.fromisoformat(iso))
    except ValueError:
        return iso


class DraftAccess(QObject):
    """Opens the draft view, copies and discards drafts, and reads who holds an item now.

    Every database read runs through the session's dispatcher; the journal is local disk.

    Signals:
        discarded(str, object): queue and key whose draft was thrown away.
    """

    discarded = Signal(str, object)

    def __init__(self, sess: Any, parent: QMainWindow) -> None:
        super().__init__(parent)
        self.session, self.window = sess, parent
        self.dialog: DraftDialog | None = None
        self.holder: Holder | None = None
        self._watched: tuple[str, Any] | None = None
        self._watch_done: Callable[[Holder], None] | None = None
        self._watch_busy = False
        self._watch_timer = QTimer(self)
        self._watch_timer.timeout.connect(self._watch_tick)

    def title(self, queue: str, key: Any) -> str:
        return f"{self.session.config.queues[queue].title} {key}"

    def labels(self, queue: str) -> dict[str, str]:
        return {spec.name: spec.label for spec in self.session.specs.get(queue, [])}

    def check_holder(self, queue: str, key: Any, done: Callable[[Holder], None]) -> None:
        """A fresh read of the item's row, off the GUI thread; `done(Holder)` on the GUI thread."""
        user, operator = self.session.user, self.session.operator
        self.session.dispatcher.call(
            lambda: operator.show(queue, key),
            lambda view: done(holder_of(view, user)),
            lambda exc: done(unknown_holder(str(exc))),
        )

    # -- the view --------------------------------------------------------------------------------------

    def open(self, queue: str, key: Any) -> DraftDialog | None:
        """Show the item's draft (non-modal, so the window keeps working); None if there is none."""
        journal = self.session.journal
        draft = journal.load(self.session.database, queue, key) if journal is not None else None
        if draft is None:
            self.window.statusBar().showMessage(
                self.tr("There is no kept draft of {0}.").format(self.title(queue, key)), 6000
            )
            return None
        if self.dialog is not None:
            self.dialog.close()
        dialog = self.dialog = DraftDialog(self.title(queue, key), draft, self.labels(queue), self.window)
        self.holder = None
        dialog.copy_requested.connect(lambda: self._copy(dialog))
        dialog.discard_requested.connect(lambda: self._discard_from(dialog))
        dialog.open()

        def shown(holder: Holder) -> None:
            if self.dialog is dialog:
                self.holder = holder
                dialog.show_holder(holder)

        self.check_holder(queue, key, shown)
        return dialog

    def _copy(self, dialog: DraftDialog) -> None:
        d = dialog.draft
        QApplication.clipboard().setText(as_text(self.title(d.queue, d.key), d, dialog.labels, self.holder))
        dialog.note.setText(self.tr("Copied to the clipboard."))

    def _discard_from(self, dialog: DraftDialog) -> None:
        if self.discard(dialog.draft.queue, dialog.draft.key):
            dialog.accept()

    def discard(self, queue: str, key: Any) -> bool:
        """Throw the draft away after asking; True if it is gone."""
        if not confirm_discard(
            self.dialog if self.dialog is not None and self.dialog.isVisible() else self.window, self.title(queue, key)
        ):
            return False
        self.session.discard_draft(queue, key)
        self.discarded.emit(queue, key)
        return True

    # -- keeping the lost banner true ------------------------------------------------------------------

    def watch(self, queue: str, key: Any, every: float, done: Callable[[Holder], None]) -> None:
        """Re-read who holds the item now and then (at once, then every `every` seconds)."""
        self._watched, self._watch_done = (queue, key), done
        self._watch_timer.start(int(max(1.0, every) * 1000))
        self._watch_tick()

    def unwatch(self) -> None:
        self._watched = self._watch_done = None
        self._watch_timer.stop()

    def _watch_tick(self) -> None:
        watched = self._watched
        if watched is None or self._watch_busy:
            return  # one read at a time: a hanging database must not pile them up
        self._watch_busy = True

        def done(holder: Holder) -> None:
            self._watch_busy = False
            if self._watched == watched and self._watch_done is not None:
                self._watch_done(holder)

        self.check_holder(*watched, done)
