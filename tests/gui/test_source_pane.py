"""The source beside the form: the demo's import lines show their scanned invoice (paged, zoomed), read off
the GUI thread; a missing scan, a URL, an image and raw text are shown or explained, never an error box."""

from __future__ import annotations

import dataclasses
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QBuffer, QByteArray, Qt
from PySide6.QtGui import QColor, QImage

from tests.gui.conftest import with_queue
from workbench.demo import invoices
from workbench.gui import main_window, source_view
from workbench.services import door, sources


def _claim_import(qtbot: Any, window: main_window.MainWindow) -> Any:
    window.queue_picker.setCurrentIndex(window.queue_picker.findData("imports"))
    with qtbot.waitSignal(window.session.claimed, timeout=10_000) as signal:
        qtbot.mouseClick(window.next_button, Qt.MouseButton.LeftButton)
    return signal.args[0]


@pytest.mark.parametrize("backend", ["sqlite"])
def test_the_scanned_invoice_beside_the_form(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    window = open_window(demo_config)
    assert not window.source_pane.isVisible()
    claim = _claim_import(qtbot, window)
    pane = window.source_pane
    qtbot.waitUntil(lambda: pane.showing == "pdf", timeout=10_000)
    assert pane.isVisible() and pane.name.text() == claim.item["scan"]
    # The scan is the invoice the line was imported from.
    assert claim.item["invoice_no"] in pane.document.getAllText(0).text()
    assert pane.page_label.text() == "Page 1 of 2" and not pane.previous_button.isEnabled()
    qtbot.mouseClick(pane.next_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: pane.page_label.text() == "Page 2 of 2", timeout=3000)
    assert not pane.next_button.isEnabled()
    before = pane.pdf.zoomFactor()
    qtbot.mouseClick(pane.zoom_in_button, Qt.MouseButton.LeftButton)
    assert pane.pdf.zoomFactor() == pytest.approx(before * source_view.ZOOM_STEP, rel=0.01)
    # The path is not a field (the pane's heading names it), and no Save could change it.
    assert not window.form.has_field("scan")
    assert "scan" in door.engine(window.session.wb).queue("imports").q.protected
    # The cases queue names no source: no pane.
    window.queue_picker.setCurrentIndex(window.queue_picker.findData("cases"))
    with qtbot.waitSignal(window.session.claimed, timeout=10_000):
        qtbot.mouseClick(window.next_button, Qt.MouseButton.LeftButton)
    assert not pane.isVisible()


@pytest.mark.parametrize("backend", ["sqlite"])
def test_a_missing_scan_is_explained_in_the_pane(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    for scan in (Path(demo_config.path).parent / invoices.SCAN_DIR).iterdir():
        scan.unlink()
    window = open_window(demo_config)
    _claim_import(qtbot, window)
    pane = window.source_pane
    qtbot.waitUntil(lambda: "does not exist" in pane.message.text(), timeout=10_000)
    assert pane.showing == "message" and pane.message.text().startswith("The source cannot be shown:")


@pytest.mark.parametrize("backend", ["sqlite"])
def test_the_source_text_itself(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    window = open_window(with_queue(demo_config, "imports", source="source_file"))
    claim = _claim_import(qtbot, window)
    pane = window.source_pane
    qtbot.waitUntil(lambda: pane.showing == "text", timeout=10_000)
    assert pane.text.toPlainText() == claim.item["source_file"]  # a .csv name is not a document: its text


def test_the_pane_pages_and_fits_an_image(qtbot: Any) -> None:
    pane = source_view.SourcePane()
    qtbot.addWidget(pane)
    pane.resize(500, 600)
    pane.show()
    pane.show_source(sources.Source("image", "photo.png", data=_png(1000, 400)))
    assert pane.showing == "image" and not pane.page_label.isVisible()
    qtbot.waitUntil(lambda: pane.image.pixmap().width() < 1000, timeout=3000)  # fitted to the pane
    fitted = pane.image.pixmap().width()
    qtbot.mouseClick(pane.zoom_in_button, Qt.MouseButton.LeftButton)
    assert pane.image.pixmap().width() == pytest.approx(fitted * source_view.ZOOM_STEP, abs=2)
    pane.show_source(sources.Source("pdf", "broken.pdf", data=b"%PDF-1.4 not really"))
    assert pane.showing == "message" and "not a PDF" in pane.message.text()
    pane.show_source(sources.Source("none"))
    assert pane.message.text() == "This item names no source."


def _png(width: int, height: int) -> bytes:
    image = QImage(width, height, QImage.Format.Format_RGB32)
    image.fill(QColor("steelblue"))
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QBuffer.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    return bytes(data.data())


# -- reading a source (no window) ------------------------------------------------------------------


@pytest.fixture
def web(tmp_path: Path) -> Iterator[str]:
    """A web server on loopback serving tmp_path/web."""
    root = tmp_path / "web"
    root.mkdir()
    handler = type("Quiet", (http.server.SimpleHTTPRequestHandler,), {"log_message": lambda *a: None})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), lambda *a: handler(*a, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_reading_files_urls_and_text(tmp_path: Path, web: str) -> None:
    pdf = invoices.invoice_pdf(
        {
            "row_id": 1,
            "invoice_no": "INV-1",
            "vendor": "V",
            "invoice_date": None,
            "amount": "10.00",
            "vat_rate": "0",
            "iban": None,
            "currency": "EUR",
            "line_no": 1,
        }
    )
    (tmp_path / "scans").mkdir()
    (tmp_path / "scans" / "a.pdf").write_bytes(pdf)
    (tmp_path / "web" / "b.pdf").write_bytes(pdf)
    (tmp_path / "web" / "c.png").write_bytes(_png(4, 4))
    read = sources.read
    assert read("scans/a.pdf", tmp_path) == sources.Source("pdf", "scans/a.pdf", data=pdf)
    assert read(str(tmp_path / "scans" / "a.pdf"), Path("/nowhere")).kind == "pdf"
    assert read((tmp_path / "scans" / "a.pdf").as_uri(), Path("/nowhere")).kind == "pdf"
    assert read(f"{web}/b.pdf", tmp_path).data == pdf
    assert read(f"{web}/c.png", tmp_path).kind == "image"
    missing = read(f"{web}/gone.pdf", tmp_path)
    assert missing.kind == "problem" and "answered 404" in missing.problem
    assert "does not exist" in read("scans/gone.pdf", tmp_path).problem
    assert read("ACME;INV-1;10.00", tmp_path) == sources.Source("text", text="ACME;INV-1;10.00")
    assert read(None, tmp_path).kind == "none" and read("  ", tmp_path).kind == "none"
    (tmp_path / "scans" / "fake.pdf").write_bytes(b"\x00\xff\xfe binary")
    assert "neither a PDF" in read("scans/fake.pdf", tmp_path).problem
    closed = read("http://127.0.0.1:9/x.pdf", tmp_path, timeout=2)
    assert closed.kind == "problem" and "cannot be fetched" in closed.problem


def test_relative_paths_start_at_the_config_files_folder(tmp_path: Path) -> None:
    config = str(tmp_path / "conf" / "workbench.toml")
    assert sources.base_dir(config, None) == tmp_path / "conf"
    assert sources.base_dir(config, "scans") == tmp_path / "conf" / "scans"
    assert sources.base_dir(config, "/srv/scans") == Path("/srv/scans")


def test_the_demo_scans_match_the_rows_they_belong_to(tmp_path: Path) -> None:
    from workbench.demo import data

    rows = list(data.imports(12))
    assert invoices.write_all(tmp_path, rows) == 12
    for row in rows:
        scan = sources.read(row["scan"], tmp_path)
        assert scan.kind == "pdf" and dataclasses.replace(scan, data=b"").name == row["scan"]
        assert f"{row['amount']:,.2f}".encode() in scan.data and row["invoice_no"].encode() in scan.data
