"""Render resources/icons/workbench.svg to the PNG, .ico and .icns files the app and installers use.

Run after changing the SVG (the outputs are committed, so a build needs neither Qt's SVG renderer
nor Pillow): `python installer/make_icons.py`. Qt renders each size from the vector art (crisper
at 16 px than scaling a large bitmap down); Pillow packs the Windows and macOS icon containers.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ICONS = Path(__file__).resolve().parent.parent / "resources" / "icons"
PNG_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)


def render(svg: Path) -> dict[int, Path]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    _app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"{svg}: not a valid SVG")
    written = {}
    for size in PNG_SIZES:
        image = QImage(size, size, QImage.Format.Format_ARGB32)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter)
        painter.end()
        path = ICONS / f"workbench-{size}.png"
        image.save(str(path))
        written[size] = path
    return written


def pack(pngs: dict[int, Path]) -> None:
    from PIL import Image

    images = {size: Image.open(path) for size, path in pngs.items()}
    largest = images[max(ICO_SIZES)]
    # Pillow writes each size from the first image unless given the renders themselves.
    largest.save(
        ICONS / "workbench.ico",
        sizes=[(s, s) for s in ICO_SIZES],
        append_images=[images[s] for s in ICO_SIZES if s != max(ICO_SIZES)],
    )
    images[512].save(ICONS / "workbench.icns", append_images=[images[s] for s in (16, 32, 64, 128, 256)])


def main() -> int:
    pngs = render(ICONS / "workbench.svg")
    pack(pngs)
    for path in sorted(ICONS.iterdir()):
        print(f"{path.stat().st_size:>8}  {path.relative_to(ICONS.parent.parent)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
