"""Every keyboard shortcut of the operator window, in one table (also shown under Help)."""

from __future__ import annotations

import dataclasses

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication


@dataclasses.dataclass(frozen=True)
class Hotkey:
    action: str  # the name the window uses for the QAction
    keys: str  # QKeySequence text, portable form
    text: str  # what it does, for the Help table (English; describe() translates it)


HOTKEYS: tuple[Hotkey, ...] = (
    Hotkey("next", "Ctrl+N", QT_TRANSLATE_NOOP("Hotkeys", "Next item: claim the next waiting item")),
    Hotkey("save", "Ctrl+S", QT_TRANSLATE_NOOP("Hotkeys", "Save your edits and keep the item")),
    Hotkey("complete", "Ctrl+Return",
           QT_TRANSLATE_NOOP("Hotkeys", "Complete the item (the queue's first outcome)")),
    Hotkey("release", "Ctrl+Shift+R",
           QT_TRANSLATE_NOOP("Hotkeys", "Release the item back to the queue, with a reason")),
    Hotkey("extend", "Ctrl+E", QT_TRANSLATE_NOOP("Hotkeys", "Extend your lock")),
    Hotkey("check", "F5", QT_TRANSLATE_NOOP("Hotkeys", "Check the lock now and refresh your list")),
    Hotkey("resume", "Ctrl+L", QT_TRANSLATE_NOOP("Hotkeys", "Show your unfinished items")),
    Hotkey("pick", "Ctrl+O", QT_TRANSLATE_NOOP("Hotkeys", "Pick a specific waiting item")),
    Hotkey("queue", "Ctrl+K", QT_TRANSLATE_NOOP("Hotkeys", "Choose the queue")),
    Hotkey("shortcuts", "F1", QT_TRANSLATE_NOOP("Hotkeys", "Show these shortcuts")),
    Hotkey("quit", "Ctrl+Q",
           QT_TRANSLATE_NOOP("Hotkeys", "Quit (gives back an untouched item; asks about one you worked on)")),
)

# Complete with a specific outcome: Ctrl+1 … Ctrl+9 in the order the queue lists its outcomes.
OUTCOME_KEYS = tuple(f"Ctrl+{n}" for n in range(1, 10))


def keys(action: str) -> str:
    return next(h.keys for h in HOTKEYS if h.action == action)


def describe(hotkey: Hotkey) -> str:
    """What the key does, in the user's language (the menu shows the part before a colon)."""
    return QCoreApplication.translate("Hotkeys", hotkey.text)
