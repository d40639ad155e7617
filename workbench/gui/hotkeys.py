"""Every keyboard shortcut of the operator window, in one table (also shown under Help)."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Hotkey:
    action: str  # the name the window uses for the QAction
    keys: str  # QKeySequence text, portable form
    text: str  # what it does, for the Help table


HOTKEYS: tuple[Hotkey, ...] = (
    Hotkey("next", "Ctrl+N", "Next item: claim the next waiting item"),
    Hotkey("save", "Ctrl+S", "Save your edits and keep the item"),
    Hotkey("complete", "Ctrl+Return", "Complete the item (the queue's first outcome)"),
    Hotkey("release", "Ctrl+Shift+R", "Release the item back to the queue, with a reason"),
    Hotkey("extend", "Ctrl+E", "Extend your lock"),
    Hotkey("check", "F5", "Check the lock now and refresh your list"),
    Hotkey("resume", "Ctrl+L", "Show your unfinished items"),
    Hotkey("pick", "Ctrl+O", "Pick a specific waiting item"),
    Hotkey("queue", "Ctrl+K", "Choose the queue"),
    Hotkey("shortcuts", "F1", "Show these shortcuts"),
    Hotkey("quit", "Ctrl+Q", "Quit (gives back an untouched item; asks about one you worked on)"),
)

# Complete with a specific outcome: Ctrl+1 … Ctrl+9 in the order the queue lists its outcomes.
OUTCOME_KEYS = tuple(f"Ctrl+{n}" for n in range(1, 10))


def keys(action: str) -> str:
    return next(h.keys for h in HOTKEYS if h.action == action)
