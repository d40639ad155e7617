"""What a screen reader says without the focus moving: announcements, and item views Tab leaves.

A label that changes or a banner that appears is not spoken (Orca over AT-SPI, NVDA): a screen
reader reads what has focus and what the application announces. Qt 6.8's announcement event is
that announcement (AT-SPI `object:announcement`, UI Automation's notification event).
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QObject, Signal
from PySide6.QtGui import QAccessible, QAccessibleAnnouncementEvent
from PySide6.QtWidgets import QAbstractItemView, QLineEdit, QToolButton, QWidget


class Announcer(QObject):
    """Announces texts from a widget, and says so by `announced` (what tests and the log can watch)."""

    announced = Signal(str, bool)  # the text, and whether it interrupts (assertive) or waits (polite)

    def announce(self, source: QWidget, text: str, *, assertive: bool = False) -> None:
        event = QAccessibleAnnouncementEvent(source, text)
        event.setPoliteness(
            QAccessible.AnnouncementPoliteness.Assertive if assertive else QAccessible.AnnouncementPoliteness.Polite
        )
        QAccessible.updateAccessibility(event)  # delivered only while an assistive technology listens
        self.announced.emit(text, assertive)


def leave_with_tab(view: QAbstractItemView) -> None:
    """Tab moves on to the next control instead of from cell to cell (the arrow keys move in the view):
    otherwise Tab walks every cell of a long list and never reaches the buttons below it."""
    view.setTabKeyNavigation(False)


def clear_button(edit: QLineEdit, what: str) -> None:
    """A line edit's clear button (setClearButtonEnabled), which shows once there is text: a push button a
    screen reader could only call "button" (issue 53). Named "Clear <what>"; call after enabling it."""
    edit.setClearButtonEnabled(True)
    name = QCoreApplication.translate("A11y", "Clear {0}").format(what)
    for button in edit.findChildren(QToolButton):
        button.setAccessibleName(name)
