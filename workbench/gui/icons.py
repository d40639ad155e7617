"""The application icon, from the PNG renders in resources/icons (installer/make_icons.py makes them)."""

from __future__ import annotations

from importlib import resources

from PySide6.QtGui import QIcon, QPixmap

SIZES = (16, 24, 32, 48, 64, 128, 256)


def app_icon() -> QIcon:
    """Every size as its own render, so the window manager never scales a 256 px bitmap to 16 px."""
    icon = QIcon()
    folder = resources.files("workbench.resources").joinpath("icons")
    for size in SIZES:
        pixmap = QPixmap()
        if pixmap.loadFromData(folder.joinpath(f"workbench-{size}.png").read_bytes(), "PNG"):
            icon.addPixmap(pixmap)
    return icon
