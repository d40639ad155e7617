"""Colours: every text readable (WCAG contrast) in the light, dark and high-contrast sets, no colour
outside theme.py, and the application following the system's scheme and the user's choice."""

from __future__ import annotations

import collections
import datetime as dt
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QColor, QPalette

from workbench.gui import app as gui_app
from workbench.gui import dialogs, theme

GUI = Path(theme.__file__).parent
QSS = Path(__file__).resolve().parents[2] / "resources" / "styles" / "workbench.qss"
SETS = (theme.LIGHT, theme.DARK, theme.CONTRAST_LIGHT, theme.CONTRAST_DARK)


def luminance(colour: QColor) -> float:
    def channel(value: float) -> float:
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(colour.redF()) + 0.7152 * channel(colour.greenF()) + 0.0722 * channel(colour.blueF())


def contrast(a: QColor, b: QColor) -> float:
    """WCAG 2 contrast ratio, 1 to 21."""
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def colour(colours: theme.Colours, token: str) -> QColor:
    return QColor(token) if token == "white" else colours.qcolor(token)


@pytest.mark.parametrize("colours", SETS, ids=lambda c: c.name)
def test_every_text_is_readable(colours: theme.Colours) -> None:
    """4.5:1 for normal text (WCAG AA), 7:1 in the high-contrast sets (AAA), with the palette these
    colours are used with."""
    minimum = 7.0 if colours.name.startswith("contrast") else 4.5
    palette = theme.palette(colours.dark)
    role = QPalette.ColorRole
    low = []
    for fg, bg in colours.PAIRS:
        low.append((fg, bg, contrast(colour(colours, fg), colour(colours, bg))))
    for bg in colours.UNDER_TEXT:
        for text in (role.WindowText, role.Text):
            low.append((text.name, bg, contrast(palette.color(text), colours.qcolor(bg))))
    for fg in colours.ON_WINDOW:
        for back in (role.Window, role.Base, role.AlternateBase):
            low.append((fg, back.name, contrast(colours.qcolor(fg), palette.color(back))))
    assert [(fg, bg, round(r, 2)) for fg, bg, r in low if r < minimum] == []


@pytest.mark.parametrize("colours", SETS, ids=lambda c: c.name)
def test_every_chart_colour_stands_out(colours: theme.Colours) -> None:
    """Bars are graphics: 3:1 against the chart's background (WCAG 1.4.11), 4.5:1 in the high-contrast sets."""
    minimum = 4.5 if colours.name.startswith("contrast") else 3.0
    background = colours.qcolor("chart_bg")
    ratios = {token: round(contrast(colours.qcolor(token), background), 2) for token in colours.CHART}
    assert {token: ratio for token, ratio in ratios.items() if ratio < minimum} == {}
    # Claimed and completed stand side by side in one chart: told apart by more than hue.
    assert contrast(colours.qcolor("chart_claimed"), colours.qcolor("chart_completed")) >= 1.3


@pytest.mark.parametrize("colours", SETS, ids=lambda c: c.name)
def test_the_charts_are_drawn_on_the_background_the_colours_were_chosen_for(
    qtbot: Any, colours: theme.Colours, monkeypatch: Any
) -> None:
    from workbench.gui import charts

    gui_app.application()
    monkeypatch.setattr(theme, "current", lambda: colours)
    panel = charts.ChartsPanel()
    qtbot.addWidget(panel)
    hour = dt.datetime(2026, 3, 2, 9)
    panel.show_data([(hour, 2, 3)], [60.0, 400.0], "today", [(hour, 4)])
    for view, tokens in (
        (panel.throughput_view, ["chart_claimed", "chart_completed"]),
        (panel.open_view, ["chart_open"]),
        (panel.handle_view, ["chart_handled"]),
    ):
        chart = view.chart()
        assert chart.backgroundBrush().style() == Qt.BrushStyle.SolidPattern
        assert chart.backgroundBrush().color() == colours.qcolor("chart_bg")
        assert chart.titleBrush().color() == colours.qcolor("chart_fg")
        assert all(axis.labelsColor() == colours.qcolor("chart_fg") for axis in chart.axes())
        bars = [bar_set.color() for bar_set in chart.series()[0].barSets()]
        assert bars == [colours.qcolor(token) for token in tokens]


def test_the_palettes_themselves_are_readable() -> None:
    role = QPalette.ColorRole
    for dark in (False, True):
        palette = theme.palette(dark)
        assert contrast(palette.color(role.WindowText), palette.color(role.Window)) >= 7
        assert contrast(palette.color(role.Text), palette.color(role.Base)) >= 7
        assert contrast(palette.color(role.HighlightedText), palette.color(role.Highlight)) >= 4.5
        assert contrast(palette.color(role.PlaceholderText), palette.color(role.Base)) >= 4.5


def test_no_colour_outside_the_theme() -> None:
    """A colour written anywhere else would be unreadable in one of the schemes."""
    hex_colour = re.compile(r"#[0-9a-fA-F]{3}\b|#[0-9a-fA-F]{6}\b")
    found = [
        f"{p.name}: {m}"
        for p in GUI.glob("*.py")
        if p.name != "theme.py"
        for m in hex_colour.findall(p.read_text("utf-8"))
    ]
    found += [f"{p.name}: Qt.GlobalColor" for p in GUI.glob("*.py") if "Qt.GlobalColor." in p.read_text("utf-8")]
    found += [f"workbench.qss: {m}" for m in hex_colour.findall(QSS.read_text("utf-8"))]
    assert found == []
    for colours in SETS:
        assert "$" not in theme.stylesheet(colours)  # every token has a value


@pytest.fixture
def the_theme() -> Iterator[theme.Theme]:
    app = gui_app.application()
    # pytest-qt made the application, so workbench's start-up did not install the theme.
    installed = theme.installed() or theme.Theme(app)
    yield installed
    installed.set_choice("")
    gui_app.application().setPalette(QPalette())
    installed.apply()
    assert theme.current() == theme.LIGHT


def _background(widget: Any) -> QColor:
    """The colour most of a rendered widget shows."""
    image = widget.grab().toImage()
    counts = collections.Counter(
        image.pixelColor(x, y).name() for x in range(0, image.width(), 3) for y in range(0, image.height(), 3)
    )
    return QColor(counts.most_common(1)[0][0])


def test_the_users_choice_and_the_systems_scheme_are_followed(qtbot: Any, the_theme: theme.Theme) -> None:
    app = gui_app.application()
    banner = dialogs.Banner("warning_banner", "warning")
    qtbot.addWidget(banner)
    banner.show_text("Your lock runs out in 1m30s.")
    banner.resize(500, 60)
    assert _background(banner) == theme.LIGHT.qcolor("warning_bg")  # offscreen: a light system

    the_theme.set_choice("dark")  # View ▸ Appearance ▸ Dark
    assert app.palette().color(QPalette.ColorRole.Window).lightness() < 128
    assert theme.current() == theme.DARK
    assert _background(banner) == theme.DARK.qcolor("warning_bg")
    assert contrast(banner.label.palette().color(QPalette.ColorRole.WindowText), _background(banner)) >= 4.5

    the_theme.set_choice("")  # back to the system's
    assert theme.current() == theme.LIGHT and _background(banner) == theme.LIGHT.qcolor("warning_bg")

    # The system turns dark: its platform theme hands Qt a dark palette and says so.
    app.setPalette(theme.palette(True))
    the_theme.hints.colorSchemeChanged.emit(Qt.ColorScheme.Dark)
    assert theme.current() == theme.DARK and _background(banner) == theme.DARK.qcolor("warning_bg")


def test_high_contrast_is_followed(qtbot: Any, the_theme: theme.Theme, monkeypatch: Any) -> None:
    monkeypatch.setattr(theme.Theme, "high_contrast", property(lambda self: True))
    the_theme.apply()
    assert theme.current() == theme.CONTRAST_LIGHT
    the_theme.set_choice("dark")
    assert theme.current() == theme.CONTRAST_DARK
    assert "2px solid" in gui_app.application().styleSheet()
    monkeypatch.undo()  # before the fixture puts the light colours back


@pytest.mark.parametrize("backend", ["sqlite"])
def test_view_appearance_switches_at_once_and_is_kept(
    qtbot: Any, open_window: Any, demo_config: Any, the_theme: theme.Theme, tmp_path: Path
) -> None:
    window = open_window(demo_config, home=tmp_path / "home")
    window.findChild(QAction, "appearance_dark").trigger()
    assert theme.current() == theme.DARK
    assert gui_app.user_settings(tmp_path / "home", "alice").value(theme.SETTING) == "dark"
    window.findChild(QAction, "appearance_system").trigger()
    assert theme.current() == theme.LIGHT


@pytest.mark.parametrize("colours", SETS, ids=lambda c: c.name)
def test_read_only_fields_look_apart_from_editable_ones(colours: theme.Colours) -> None:
    """A read-only field's background stands apart from an editable field's (the palette's Base), in
    dark mode too, and its text stays readable on it (test_every_text_is_readable)."""
    base = theme.palette(colours.dark).color(QPalette.ColorRole.Base)
    assert contrast(colours.qcolor("locked_bg"), base) >= 1.2


@pytest.mark.parametrize("high_contrast", [False, True], ids=["light", "contrast-light"])
def test_placeholder_text_is_readable_in_the_applied_palette(
    the_theme: theme.Theme, monkeypatch: Any, high_contrast: bool
) -> None:
    """The system's own placeholder colour (half-transparent text: about 4:1) is replaced by the set's."""
    monkeypatch.setattr(theme.Theme, "high_contrast", property(lambda self: high_contrast))
    role = QPalette.ColorRole
    system = QPalette()
    system.setColor(role.PlaceholderText, QColor("#808080"))  # black text at half opacity on white: 3.9:1
    gui_app.application().setPalette(system)
    the_theme.apply()
    palette = gui_app.application().palette()
    assert contrast(palette.color(role.PlaceholderText), palette.color(role.Base)) >= 4.5
    monkeypatch.undo()


@pytest.mark.parametrize("backend", ["sqlite"])
def test_high_contrast_can_be_chosen_in_view_appearance(
    qtbot: Any, open_window: Any, demo_config: Any, the_theme: theme.Theme, tmp_path: Path
) -> None:
    window = open_window(demo_config, home=tmp_path / "home")
    window.findChild(QAction, "appearance_contrast").trigger()
    assert theme.current() == theme.CONTRAST_LIGHT  # offscreen: a light system
    assert gui_app.user_settings(tmp_path / "home", "alice").value(theme.SETTING) == "contrast"
    window.findChild(QAction, "appearance_system").trigger()
    assert theme.current() == theme.LIGHT


def test_a_disabled_primary_button_looks_disabled_in_dark_mode(qtbot: Any, the_theme: theme.Theme) -> None:
    """Issue 53: in dark mode a disabled Complete was white text on a dark blue, another button's colours.
    Rendered, disabled, it is grey on grey: no colour of its own, its text dimmed below the enabled one's."""
    from PySide6.QtWidgets import QPushButton, QWidget

    the_theme.set_choice("dark")
    window = QWidget()
    qtbot.addWidget(window)
    button = QPushButton("Resolve", window)
    button.setProperty("role", "primary")
    button.resize(160, 40)
    window.resize(200, 60)
    window.show()

    def look() -> tuple[QColor, QColor]:
        """The fill (the most common colour) and the text (the one farthest from the fill)."""
        image = button.grab().toImage()
        pixels = [image.pixelColor(x, y) for x in range(4, image.width() - 4) for y in range(4, image.height() - 4)]
        fill = QColor(collections.Counter(p.name() for p in pixels).most_common(1)[0][0])
        text = max(pixels, key=lambda p: contrast(p, fill))
        return fill, text

    enabled_fill, enabled_text = look()
    button.setEnabled(False)
    fill, text = look()
    assert fill.hsvSaturation() < 30, fill.name()  # grey, not a colour
    assert text.hsvSaturation() < 30 and contrast(text, fill) < contrast(enabled_text, enabled_fill)
    assert contrast(text, fill) < 4.5, (text.name(), fill.name())  # dimmed: reads as not available
    assert enabled_fill.hsvSaturation() > 100  # the enabled one keeps its colour
