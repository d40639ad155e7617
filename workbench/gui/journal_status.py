"""One persistent, honest warning while the local journal cannot be written; retries it; asks before a loss."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QObject, QTimer, Signal, Slot
from PySide6.QtWidgets import QMessageBox, QPushButton, QWidget

from workbench import journal_guard
from workbench.gui import dialogs

translate = QCoreApplication.translate  # lupdate reads translate(context, text) calls


def describe(problem: journal_guard.Problem) -> str:
    """The banner's text: what failed, where, what it means for the user's edits, what to do."""
    what = {
        "open": translate("JournalStatus", "The local journal folder {dir} cannot be used ({reason})."),
        "read": translate("JournalStatus", "The local journal folder {dir} cannot be read ({reason})."),
        "write": translate(
            "JournalStatus", "Your unsaved edits cannot be written to the local journal in {dir} ({reason})."
        ),
        "remove": translate(
            "JournalStatus",
            "A draft that is already saved cannot be removed from the local journal in {dir} ({reason}).",
        ),
    }[problem.action]
    advice = {
        "space": translate("JournalStatus", "Free some disk space"),
        "permissions": translate("JournalStatus", "Make that folder writable"),
        "file": translate(
            "JournalStatus", "Remove or rename the file that stands where that folder (or one above it) should be"
        ),
        "disk": translate("JournalStatus", "Check that disk"),
    }[problem.advice()]
    return (
        what.format(dir=problem.directory, reason=problem.reason)
        + " "
        + translate(
            "JournalStatus",
            "Save and Complete still store your edits in the database; until then "
            "they are only in this window and would be lost if workbench or the computer stopped.",
        )
        + " "
        + translate("JournalStatus", "{advice}; workbench tries again on its own.").format(advice=advice)
    )


class JournalStatus(QObject):
    """Owns the journal banner (shown above every page) and the retry timer of a GuardedJournal.

    Signals:
        changed(bool): True once the journal is fully on disk again, False when it failed.
    """

    changed = Signal(bool)

    def __init__(
        self, guard: journal_guard.GuardedJournal, retry_seconds: float, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.guard = guard
        self.banner = dialogs.Banner("journal_banner", "warning")
        self.retry_button = QPushButton(translate("JournalStatus", "Try again now"))
        self.retry_button.setObjectName("journal_retry")
        self.retry_button.clicked.connect(self.retry)
        self.banner.add_button(self.retry_button)
        self._timer = QTimer(self)
        self._timer.setInterval(int(max(0.2, retry_seconds) * 1000))
        self._timer.timeout.connect(self.retry)
        guard.on_problem = self._on_problem
        if guard.problem is not None:  # it failed already while the window was being built
            self._on_problem(guard.problem)

    @Slot()
    def retry(self) -> None:
        self.guard.retry()

    def _on_problem(self, problem: journal_guard.Problem | None) -> None:
        if problem is None:
            self._timer.stop()
            self.banner.setVisible(False)
            self.changed.emit(True)
            return
        self.banner.show_text(describe(problem))
        self._timer.start()
        self.changed.emit(False)

    def stop(self) -> None:
        self._timer.stop()

    def may_close(self, parent: QWidget) -> bool:
        """Closing would lose edits held only in memory: ask first (True = close)."""
        self.guard.retry()
        if not self.guard.unwritten():
            return True  # on disk now, or only removals are pending: nothing the user typed is lost
        box = QMessageBox(
            QMessageBox.Icon.Warning,
            translate("JournalStatus", "Unsaved edits would be lost"),
            translate(
                "JournalStatus",
                "Your unsaved edits could not be written to the local journal, "
                "so closing now loses them. Stay, and Save or Complete to store them in the "
                "database, or fix the disk problem shown in the window.",
            ),
            parent=parent,
        )
        box.setObjectName("journal_close_box")
        stay = box.addButton(translate("JournalStatus", "Stay"), QMessageBox.ButtonRole.RejectRole)
        box.addButton(translate("JournalStatus", "Close and lose the edits"), QMessageBox.ButtonRole.DestructiveRole)
        box.setDefaultButton(stay)
        box.exec()
        return box.clickedButton() is not stay
