"""Colours that follow the system: light, dark and high contrast, or the user's own choice of light or
dark; the style sheet, the lock board and the charts take every colour from here."""

from __future__ import annotations

import dataclasses
import string
from importlib import resources
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from workbench.gui.i18n import QT_TRANSLATE_NOOP

SETTING = "view/appearance"  # the user's choice: "" follows the system, "light", "dark" or "contrast"
APPEARANCES = (
    ("", QT_TRANSLATE_NOOP("Theme", "&As the system")),
    ("light", QT_TRANSLATE_NOOP("Theme", "&Light")),
    ("dark", QT_TRANSLATE_NOOP("Theme", "&Dark")),
    ("contrast", QT_TRANSLATE_NOOP("Theme", "&High contrast")),  # the system's light or dark, in high contrast
)  # View ▸ Appearance's entries
OWN_PALETTES = ("light", "dark")  # the choices that bring a palette of their own


@dataclasses.dataclass(frozen=True)
class Colours:
    """One set of colours. `*_bg` behind the palette's own text unless a `*_fg` goes with it."""

    name: str
    dark: bool
    primary_bg: str  # Next item and Complete: white text on it
    primary_border: str
    primary_hover: str
    complete_bg: str
    complete_border: str
    disabled_bg: str  # a disabled primary button (its text need not meet contrast: WCAG 1.4.3)
    disabled_fg: str  # its text: greyed, so that it does not read as a button of another colour
    disabled_border: str
    warning_bg: str  # banners
    warning_border: str
    lost_bg: str
    lost_border: str
    info_bg: str
    info_border: str
    error_fg: str  # a field's problem, a refused password, a dead connection (on the window)
    soon_fg: str  # a lock that runs out soon, a slow connection (on the window)
    muted_fg: str  # explanations (on the window)
    placeholder_fg: str  # a field's placeholder text (the system's, half-transparent text, is about 4:1)
    locked_bg: str  # a read-only field
    locked_fg: str
    locked_border: str
    changed_bg: str  # a field changed since it was read
    changed_border: str
    invalid_bg: str
    invalid_border: str
    ok_bg: str  # Test connection's answers
    ok_fg: str
    fail_bg: str
    fail_fg: str
    busy_bg: str
    busy_fg: str
    board_soon_bg: str  # lock board rows
    board_past_bg: str
    chart_bg: str  # behind the charts (a solid colour: Qt's chart themes paint gradients)
    chart_fg: str  # the charts' titles, axis labels and legends
    chart_claimed: str  # bars: graphics, 3:1 against chart_bg (WCAG 1.4.11)
    chart_completed: str
    chart_handled: str
    chart_open: str
    border_width: int = 1

    # Text on a colour of its own: (text, background).
    PAIRS = (
        ("white", "primary_bg"),
        ("white", "complete_bg"),
        ("locked_fg", "locked_bg"),
        ("ok_fg", "ok_bg"),
        ("fail_fg", "fail_bg"),
        ("busy_fg", "busy_bg"),
        ("chart_fg", "chart_bg"),
    )
    # Backgrounds under the palette's text (window text, or a field's text).
    UNDER_TEXT = ("warning_bg", "lost_bg", "info_bg", "changed_bg", "invalid_bg", "board_soon_bg", "board_past_bg")
    # Text colours on the window's and the fields' own background.
    ON_WINDOW = ("error_fg", "soon_fg", "muted_fg", "placeholder_fg")
    # The charts' bars, on chart_bg.
    CHART = ("chart_claimed", "chart_completed", "chart_handled", "chart_open")

    def qcolor(self, token: str) -> QColor:
        return QColor(getattr(self, token))


LIGHT = Colours(
    "light",
    False,
    primary_bg="#1f6feb",
    primary_border="#1a5fcc",
    primary_hover="#2a78f0",
    complete_bg="#1a7f37",
    complete_border="#166c2f",
    disabled_bg="#9dbdf2",
    disabled_fg="#ffffff",  # white on pale blue: already washed out
    disabled_border="#9dbdf2",
    warning_bg="#fff4d6",
    warning_border="#e0b44b",
    lost_bg="#ffe3e3",
    lost_border="#d64545",
    info_bg="#e7f0ff",
    info_border="#8fb2ea",
    error_fg="#b42318",
    soon_fg="#8a5d00",
    muted_fg="#4a4a4a",
    placeholder_fg="#6b6b6b",
    locked_bg="#e8e8e8",
    locked_fg="#505050",
    locked_border="#d4d4d4",
    changed_bg="#fffbe6",
    changed_border="#c9a227",
    invalid_bg="#fff5f5",
    invalid_border="#d64545",
    ok_bg="#e6f4ea",
    ok_fg="#135c2c",
    fail_bg="#fdecea",
    fail_fg="#8a1c12",
    busy_bg="#eef2f7",
    busy_fg="#33475b",
    board_soon_bg="#fff4ce",
    board_past_bg="#fde2e1",
    chart_bg="#ffffff",
    chart_fg="#404044",
    chart_claimed="#6f8fb8",
    chart_completed="#1f6feb",
    chart_handled="#2da44e",
    chart_open="#bf8700",
)

DARK = Colours(
    "dark",
    True,
    primary_bg="#1f62d0",
    primary_border="#4a8af0",
    primary_hover="#2a6fe0",
    complete_bg="#1a7431",
    complete_border="#3fb950",
    # A plain grey button with grey text: "#33415c" with white text read as an enabled blue one (issue 53).
    disabled_bg="#353535",
    disabled_fg="#7a7a7a",
    disabled_border="#444444",
    warning_bg="#3b2f0b",
    warning_border="#bb8009",
    lost_bg="#4a1c1c",
    lost_border="#f85149",
    info_bg="#112a4a",
    info_border="#388bfd",
    error_fg="#ff8a80",
    soon_fg="#e3b341",
    muted_fg="#b8b8b8",
    placeholder_fg="#9a9a9a",
    locked_bg="#383838",  # lighter than a field's #1e1e1e: read-only shows at a glance
    locked_fg="#b4b4b4",
    locked_border="#444444",
    changed_bg="#3a3210",
    changed_border="#d4a72c",
    invalid_bg="#3d1518",
    invalid_border="#f85149",
    ok_bg="#12361f",
    ok_fg="#7ee2a0",
    fail_bg="#46181a",
    fail_fg="#ffb3ad",
    busy_bg="#23303f",
    busy_fg="#c9d6e3",
    board_soon_bg="#3b2f0b",
    board_past_bg="#4a1c1c",
    chart_bg="#1e1e1e",
    chart_fg="#e8e8e8",
    chart_claimed="#6f8fb8",
    chart_completed="#58a6ff",
    chart_handled="#3fb950",
    chart_open="#d29922",
)

# High contrast: the palette's own black and white behind everything; state shows as thick borders.
CONTRAST_LIGHT = dataclasses.replace(
    LIGHT,
    name="contrast-light",
    primary_bg="#0036a3",
    primary_border="#000000",
    primary_hover="#002a80",
    complete_bg="#005a1e",
    complete_border="#000000",
    warning_bg="#ffffff",
    warning_border="#000000",
    lost_bg="#ffffff",
    lost_border="#b00000",
    info_bg="#ffffff",
    info_border="#000000",
    error_fg="#a00000",
    soon_fg="#5c3c00",
    muted_fg="#000000",
    placeholder_fg="#4d4d4d",
    locked_bg="#e0e0e0",
    locked_fg="#000000",
    locked_border="#000000",
    changed_bg="#ffffff",
    changed_border="#000000",
    invalid_bg="#ffffff",
    invalid_border="#b00000",
    ok_bg="#ffffff",
    ok_fg="#003d14",
    fail_bg="#ffffff",
    fail_fg="#a00000",
    busy_bg="#ffffff",
    busy_fg="#000000",
    board_soon_bg="#fff0b3",
    board_past_bg="#ffd6d6",
    chart_bg="#ffffff",
    chart_fg="#000000",
    chart_claimed="#4a6a94",
    chart_completed="#0036a3",
    chart_handled="#005a1e",
    chart_open="#7a5200",
    border_width=2,
)
CONTRAST_DARK = dataclasses.replace(
    DARK,
    name="contrast-dark",
    primary_bg="#000000",
    primary_border="#ffffff",
    primary_hover="#1a1a1a",
    complete_bg="#000000",
    complete_border="#7ee787",
    warning_bg="#000000",
    warning_border="#ffd33d",
    lost_bg="#000000",
    lost_border="#ff7b72",
    info_bg="#000000",
    info_border="#ffffff",
    error_fg="#ffa198",
    soon_fg="#ffd33d",
    muted_fg="#ffffff",
    placeholder_fg="#c0c0c0",
    locked_bg="#333333",
    locked_fg="#ffffff",
    locked_border="#ffffff",
    changed_bg="#000000",
    changed_border="#ffd33d",
    invalid_bg="#000000",
    invalid_border="#ff7b72",
    ok_bg="#000000",
    ok_fg="#7ee787",
    fail_bg="#000000",
    fail_fg="#ffa198",
    busy_bg="#000000",
    busy_fg="#ffffff",
    board_soon_bg="#2b2200",
    board_past_bg="#330d0d",
    chart_bg="#000000",
    chart_fg="#ffffff",
    chart_claimed="#c9d6e3",
    chart_completed="#58a6ff",
    chart_handled="#7ee787",
    chart_open="#ffd33d",
    border_width=2,
)


class _State:
    """What is in use: one per process, like the application."""

    colours: Colours = LIGHT
    theme: Theme | None = None


def installed() -> Theme | None:
    """The application's Theme, once application() made it."""
    return _State.theme


def current() -> Colours:
    """The colours in use now (the lock board and the charts ask when they paint)."""
    return _State.colours


def mark_alarm(item: Any) -> None:
    """A list cell that needs attention (an overdue item): the set's error colour, bold. Takes a
    QStandardItem or a QTableWidgetItem."""
    item.setForeground(current().qcolor("error_fg"))
    font = item.font()
    font.setBold(True)
    item.setFont(font)


def pick(palette: QPalette, high_contrast: bool) -> Colours:
    """The set that goes with this palette: dark colours under a dark window, whatever said it."""
    dark = palette.color(QPalette.ColorRole.Window).lightness() < 128
    if high_contrast:
        return CONTRAST_DARK if dark else CONTRAST_LIGHT
    return DARK if dark else LIGHT


def stylesheet(colours: Colours) -> str:
    """workbench.qss with its $tokens filled from `colours`."""
    template = resources.files("workbench.resources").joinpath("styles", "workbench.qss").read_text("utf-8")
    values = {f.name: getattr(colours, f.name) for f in dataclasses.fields(colours)}
    return string.Template(template).substitute(values)


def palette(dark: bool) -> QPalette:
    """A complete palette for the user's own choice (systems without a dark scheme of their own)."""
    if dark:
        window, text, base, button, mid = "#2b2b2b", "#e8e8e8", "#1e1e1e", "#353535", "#5a5a5a"
        alternate, placeholder, link, disabled = "#262626", "#9a9a9a", "#6cb4ff", "#7a7a7a"
    else:
        window, text, base, button, mid = "#efefef", "#000000", "#ffffff", "#efefef", "#a0a0a0"
        alternate, placeholder, link, disabled = "#f7f7f7", "#6b6b6b", "#0b5cad", "#8a8a8a"
    result = QPalette(QColor(button), QColor(window))
    role = QPalette.ColorRole
    for r, colour in (
        (role.Window, window),
        (role.WindowText, text),
        (role.Base, base),
        (role.Text, text),
        (role.Button, button),
        (role.ButtonText, text),
        (role.AlternateBase, alternate),
        (role.ToolTipBase, button),
        (role.ToolTipText, text),
        (role.PlaceholderText, placeholder),
        (role.Link, link),
        (role.Highlight, "#2f6fce" if dark else "#1f66b3"),
        (role.HighlightedText, "#ffffff"),
        (role.BrightText, "#ffffff"),
        (role.Mid, mid),
    ):
        result.setColor(r, QColor(colour))
    for r in (role.WindowText, role.Text, role.ButtonText):
        result.setColor(QPalette.ColorGroup.Disabled, r, QColor(disabled))
    return result


class Theme(QObject):
    """Applies the colours for the system's scheme (or the user's choice) and follows changes."""

    changed = Signal()

    def __init__(self, app: QApplication, choice: str = "") -> None:
        super().__init__(app)
        _State.theme = self
        self.app, self.choice = app, choice if choice in (*OWN_PALETTES, "contrast") else ""
        self._own_palette = False  # whether the palette in use is ours (the user's choice) or the system's
        # Kept: PySide deletes the wrappers of these Qt-owned objects when no Python name holds them.
        self.hints = QGuiApplication.styleHints()
        self.accessibility = self.hints.accessibility()
        self.hints.colorSchemeChanged.connect(self.apply)
        self.accessibility.contrastPreferenceChanged.connect(self.apply)
        self.apply()

    @property
    def high_contrast(self) -> bool:
        chosen = self.choice == "contrast"  # View ▸ Appearance ▸ High contrast, whatever the system says
        return chosen or bool(self.accessibility.contrastPreference() == Qt.ContrastPreference.HighContrast)

    def set_choice(self, choice: str) -> None:
        self.choice = choice if choice in (*OWN_PALETTES, "contrast") else ""
        self.apply()

    def apply(self, *_: object) -> None:
        if self.choice in OWN_PALETTES:
            self.app.setPalette(palette(self.choice == "dark"))
            self._own_palette = True
        elif self._own_palette:  # back to the system's: the style's own palette, which follows it
            self.app.setPalette(QPalette())
            self._own_palette = False
        colours = pick(self.app.palette(), self.high_contrast)
        self._set_placeholder(colours)
        if colours != _State.colours or not self.app.styleSheet():
            _State.colours = colours
            self.app.setStyleSheet(stylesheet(colours))
            self.changed.emit()

    def _set_placeholder(self, colours: Colours) -> None:
        """The set's placeholder colour in the application's palette (the system's, text at half
        opacity, reads about 4:1); the palette's other colours stay whatever they were."""
        role = QPalette.ColorRole.PlaceholderText
        if self.app.palette().color(role) == colours.qcolor("placeholder_fg"):
            return
        # Following the system: a palette that sets this one role, so that the rest keeps following it.
        changed = self.app.palette() if self._own_palette else QPalette()
        changed.setColor(role, colours.qcolor("placeholder_fg"))
        self.app.setPalette(changed)
