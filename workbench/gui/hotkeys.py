"""Every keyboard shortcut of the operator window: the defaults in one table, and each user's own
keymap (their changes and the single-key mode, kept in their GUI settings)."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping

from PySide6.QtCore import QCoreApplication, QSettings, Qt
from PySide6.QtGui import QKeySequence

from workbench.gui.i18n import QT_TRANSLATE_NOOP

log = logging.getLogger("workbench.gui")


@dataclasses.dataclass(frozen=True)
class Hotkey:
    action: str  # the name the window uses for the QAction
    keys: str  # the default: QKeySequence text, portable form
    text: str  # what it does, for the shortcuts dialog (English; describe() translates it)
    menu: str  # its menu entry, with its Alt letter (English; menu_text() translates it)


HOTKEYS: tuple[Hotkey, ...] = (
    Hotkey(
        "next",
        "Ctrl+N",
        QT_TRANSLATE_NOOP("Hotkeys", "Next item: claim the next waiting item"),
        QT_TRANSLATE_NOOP("Hotkeys", "&Next item"),
    ),
    Hotkey(
        "save",
        "Ctrl+S",
        QT_TRANSLATE_NOOP("Hotkeys", "Save your edits and keep the item"),
        QT_TRANSLATE_NOOP("Hotkeys", "&Save"),
    ),
    Hotkey(
        "complete",
        "Ctrl+Return",
        QT_TRANSLATE_NOOP("Hotkeys", "Complete the item (the queue's first outcome)"),
        QT_TRANSLATE_NOOP("Hotkeys", "&Complete"),
    ),
    Hotkey(
        "release",
        "Ctrl+Shift+R",
        QT_TRANSLATE_NOOP("Hotkeys", "Release the item back to the queue, with a reason"),
        QT_TRANSLATE_NOOP("Hotkeys", "&Release…"),
    ),
    Hotkey(
        "undo",
        "Ctrl+U",
        QT_TRANSLATE_NOOP("Hotkeys", "Undo your last Complete (within the queue's undo time)"),
        QT_TRANSLATE_NOOP("Hotkeys", "&Undo Complete"),
    ),
    Hotkey(
        "defer",
        "Ctrl+D",
        QT_TRANSLATE_NOOP("Hotkeys", "Defer the item until a time (it comes back first then)"),
        QT_TRANSLATE_NOOP("Hotkeys", "&Defer…"),
    ),
    Hotkey(
        "escalate",
        "Ctrl+Shift+E",
        QT_TRANSLATE_NOOP("Hotkeys", "Hand the item to a supervisor, with a reason"),
        QT_TRANSLATE_NOOP("Hotkeys", "Esc&alate…"),
    ),
    Hotkey(
        "extend",
        "Ctrl+E",
        QT_TRANSLATE_NOOP("Hotkeys", "Extend your lock"),
        QT_TRANSLATE_NOOP("Hotkeys", "E&xtend lock"),
    ),
    Hotkey(
        "check",
        "F5",
        QT_TRANSLATE_NOOP("Hotkeys", "Check the lock now and refresh your list"),
        QT_TRANSLATE_NOOP("Hotkeys", "Chec&k lock now"),
    ),
    Hotkey(
        "resume",
        "Ctrl+L",
        QT_TRANSLATE_NOOP("Hotkeys", "Show your unfinished items"),
        QT_TRANSLATE_NOOP("Hotkeys", "Your &unfinished items"),
    ),
    Hotkey(
        "pick",
        "Ctrl+O",
        QT_TRANSLATE_NOOP("Hotkeys", "Pick a specific waiting item"),
        QT_TRANSLATE_NOOP("Hotkeys", "&Pick an item…"),
    ),
    Hotkey(
        "queue",
        "Ctrl+K",
        QT_TRANSLATE_NOOP("Hotkeys", "Choose the queue"),
        QT_TRANSLATE_NOOP("Hotkeys", "Choose the &queue"),
    ),
    Hotkey(
        "shortcuts",
        "F1",
        QT_TRANSLATE_NOOP("Hotkeys", "Keyboard shortcuts: see and change them"),
        QT_TRANSLATE_NOOP("Hotkeys", "&Keyboard shortcuts…"),
    ),
    Hotkey(
        "quit",
        "Ctrl+Q",
        QT_TRANSLATE_NOOP("Hotkeys", "Quit (gives back an untouched item; asks about one you worked on)"),
        QT_TRANSLATE_NOOP("Hotkeys", "&Quit"),
    ),
)

# Complete with a specific outcome: Ctrl+1 … Ctrl+9 in the order the queue lists its outcomes.
OUTCOMES = 9
OUTCOME_KEYS = tuple(f"Ctrl+{n}" for n in range(1, OUTCOMES + 1))


def outcome_action(position: int) -> str:
    """The keymap's name for "Complete with the queue's outcome number `position`" (from 1)."""
    return f"outcome{position}"


DEFAULTS: dict[str, str] = {h.action: h.keys for h in HOTKEYS} | {
    outcome_action(n): keys for n, keys in enumerate(OUTCOME_KEYS, 1)
}
# Extra keys that are always there: the keypad's Enter completes too.
FIXED: dict[str, tuple[str, ...]] = {"complete": ("Ctrl+Enter",)}
# Single-key mode (off by default, as in annotation tools): N and 1–9 besides the chords. They act only
# when the cursor is not in a text field: a text field takes the keys it types.
SINGLE_KEYS: dict[str, str] = {"next": "N"} | {outcome_action(n): str(n) for n in range(1, OUTCOMES + 1)}
# Keys a user cannot take for an action: those the form needs for moving and editing. (The menus' Alt+letter
# keys and the window's other fixed keys are the window's to say: see Reserved.)
RESERVED = (
    "Tab",
    "Shift+Tab",
    "Return",
    "Enter",
    "Esc",
    "Ctrl+A",
    "Ctrl+C",
    "Ctrl+V",
    "Ctrl+X",
    "Ctrl+Z",
    "Ctrl+Y",
    "Ctrl+Shift+Z",
)
# The key of Connection ▸ Supervisor console (the launcher's menu): fixed, not in the user's keymap.
SUPERVISOR_CONSOLE = "Ctrl+Shift+S"
GROUP = "shortcuts"
SINGLE_KEY_SETTING = "single_key"


def describe(hotkey: Hotkey) -> str:
    """What the key does, in the user's language."""
    return QCoreApplication.translate("Hotkeys", hotkey.text)


def menu_text(hotkey: Hotkey) -> str:
    """Its menu entry in the user's language, with the entry's Alt letter."""
    return QCoreApplication.translate("Hotkeys", hotkey.menu)


def describe_action(action: str, outcomes: list[str]) -> str:
    """What an action of the keymap does, with the current queue's outcome labels."""
    for hotkey in HOTKEYS:
        if hotkey.action == action:
            return describe(hotkey)
    position = int(action.removeprefix("outcome"))
    label = outcomes[position - 1] if position <= len(outcomes) else None
    if label is None:
        return QCoreApplication.translate("Hotkeys", "Complete with the queue's outcome {0}").format(position)
    return QCoreApplication.translate("Hotkeys", "Complete with the queue's outcome {0} (here: “{1}”)").format(
        position, label
    )


def normal(text: str) -> str:
    """The portable form of a key text (so "ctrl+n" and "Ctrl+N" are one key); "" for no key."""
    return QKeySequence.fromString(text, QKeySequence.SequenceFormat.PortableText).toString(
        QKeySequence.SequenceFormat.PortableText
    )


def mnemonic_key(title: str) -> str:
    """The Alt+letter that opens a menu titled `title` ("&Eintrag" → "Alt+E"; "" when it has none), as Qt reads it."""
    return QKeySequence.mnemonic(title).toString(QKeySequence.SequenceFormat.PortableText)


def plain(title: str) -> str:
    """A menu or action title as people read it: no mnemonic mark, no trailing "…"."""
    return title.replace("&&", "\0").replace("&", "").replace("\0", "&").rstrip("…").rstrip(".")


@dataclasses.dataclass(frozen=True)
class Reserved:
    """Keys the window has fixed, by normal key text: those opening its menus (by the translated
    menu title) and those of its other actions (by the action's name), e.g. the Supervisor console."""

    menus: Mapping[str, str] = dataclasses.field(default_factory=dict)
    actions: Mapping[str, str] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class Keymap:
    """Which keys trigger which action, for one user."""

    keys: dict[str, str] = dataclasses.field(default_factory=lambda: dict(DEFAULTS))  # "" = no key
    single_key: bool = False

    @classmethod
    def load(cls, settings: QSettings) -> Keymap:
        """The user's keymap; the defaults where their settings hold nothing usable."""
        keymap = cls()
        settings.beginGroup(GROUP)
        try:
            for action in DEFAULTS:
                stored = settings.value(action)
                if stored is not None:
                    keymap.keys[action] = normal(str(stored))
            keymap.single_key = str(settings.value(SINGLE_KEY_SETTING, "false")).lower() in ("true", "1")
        finally:
            settings.endGroup()
        problem = keymap.problem()
        if problem:  # a hand-edited settings file: keep the window usable
            log.warning("keyboard shortcuts in %s ignored: %s", settings.fileName(), problem)
            return cls(single_key=keymap.single_key)
        return keymap

    def save(self, settings: QSettings) -> None:
        """Store only what differs from the defaults, so later default changes reach the user."""
        settings.remove(GROUP)
        settings.beginGroup(GROUP)
        for action, text in self.keys.items():
            if text != DEFAULTS[action]:
                settings.setValue(action, text)
        if self.single_key:
            settings.setValue(SINGLE_KEY_SETTING, True)
        settings.endGroup()
        settings.sync()

    def sequences(self, action: str) -> list[QKeySequence]:
        """Every key that triggers `action`: the chosen one, the fixed ones, the single key."""
        texts = [self.keys.get(action, ""), *FIXED.get(action, ())]
        if self.single_key and action in SINGLE_KEYS:
            texts.append(SINGLE_KEYS[action])
        return [QKeySequence(t) for t in texts if t]

    def shown(self, action: str) -> str:
        """The chosen key as the user's platform writes it ("" for none), for menus and tooltips."""
        return QKeySequence(self.keys.get(action, "")).toString(QKeySequence.SequenceFormat.NativeText)

    def problem(self, reserved: Reserved | None = None) -> str | None:
        """Why this keymap cannot be used (a key twice, one the form needs, one the window has fixed), or None."""
        reserved = reserved or Reserved()
        # The fixed extra keys (the keypad's Enter for Complete) are taken by their action from the start.
        taken: dict[str, str] = {normal(key): action for action, keys in FIXED.items() for key in keys}
        for action, text in self.keys.items():
            if not text:
                continue
            sequence = QKeySequence(text)
            if sequence.count() != 1:
                return QCoreApplication.translate("Hotkeys", "{0}: use one key combination.").format(text)
            if text in RESERVED:
                return QCoreApplication.translate(
                    "Hotkeys", "{0} is needed for moving and editing in the form; choose another key."
                ).format(_native(text))
            if text in reserved.menus:
                return QCoreApplication.translate("Hotkeys", "{0} opens the menu “{1}”; choose another key.").format(
                    _native(text), reserved.menus[text]
                )
            if text in reserved.actions:
                return QCoreApplication.translate(
                    "Hotkeys", "{0} is the fixed key of “{1}”; choose another key."
                ).format(_native(text), reserved.actions[text])
            if not _has_modifier(sequence) and not _is_function_key(text):
                return QCoreApplication.translate(
                    "Hotkeys",
                    "{0} alone would be typed into the fields; add Ctrl or Alt, or use a function "
                    "key (single keys: see the option below).",
                ).format(_native(text))
            if taken.get(text, action) != action:
                return QCoreApplication.translate("Hotkeys", "{0} is set for both “{1}” and “{2}”.").format(
                    _native(text), _short(taken[text]), _short(action)
                )
            taken[text] = action
        return None


def _native(text: str) -> str:
    return QKeySequence(text).toString(QKeySequence.SequenceFormat.NativeText)


def _short(action: str) -> str:
    return describe_action(action, []).split(":")[0]


def _has_modifier(sequence: QKeySequence) -> bool:
    # PySide6's stub lacks QKeySequence.__getitem__ (Qt's operator[]), which the binding has.
    modifiers = sequence[0].keyboardModifiers()  # type: ignore[index]
    chord = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier | Qt.KeyboardModifier.MetaModifier
    return bool(modifiers & chord)


def _is_function_key(text: str) -> bool:
    return text[:1] == "F" and text[1:].isdigit()
