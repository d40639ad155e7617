"""The demo's scanned invoices: small two-page PDFs written from an import line, for the source pane."""

from __future__ import annotations

import decimal
import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any

# Written by hand rather than with a PDF library: a few text lines in the PDF base fonts need
# about forty lines of code, while fpdf2 or reportlab would bring Pillow and fonttools along
# for the demo alone. The files are plain PDF 1.4 that every viewer (and QtPdf) reads.

SCAN_DIR = "scans"
_WIDTH, _HEIGHT = 595, 842  # A4 in points


def scan_path(row: Mapping[str, Any]) -> str:
    """Where the demo keeps an import line's scan, relative to the demo's folder."""
    return f"{SCAN_DIR}/{row['invoice_no']}-{row['row_id']}.pdf"


def write_all(directory: Path, rows: list[Mapping[str, Any]], cities: Mapping[str, str] | None = None) -> int:
    """Write the scan of every row that names one; how many were written. `cities`: each vendor's
    city as the vendors table has it (the picker shows "Harbor Freight Partners (Aarhus)" beside the
    scan, whose letterhead must say the same)."""
    (directory / SCAN_DIR).mkdir(parents=True, exist_ok=True)
    written = 0
    for row in rows:
        if row.get("scan"):
            path = directory / str(row["scan"])
            # A new file, not the old one written over: a scan hard-linked elsewhere (the tests' copies of a
            # demo, tests/support.py sqlite_demo) keeps its content.
            path.unlink(missing_ok=True)
            path.write_bytes(invoice_pdf(row, (cities or {}).get(str(row["vendor"]))))
            written += 1
    return written


def invoice_pdf(row: Mapping[str, Any], city: str | None = None) -> bytes:
    """An invoice as the vendor sent it: the values the import should have read (the import drops
    some IBANs, which the scan shows)."""
    amount = decimal.Decimal(row["amount"] or 0)
    rate = decimal.Decimal(row["vat_rate"] or 0)
    net = (amount / (1 + rate / 100)).quantize(decimal.Decimal("0.01"))
    iban = row["iban"] or _iban(int(row["row_id"]))
    currency = row["currency"]
    first = [
        ("F2", 20, 50, 770, str(row["vendor"])),
        ("F1", 10, 50, 752, "12 Market Street" + (f", {city}" if city else "")),
        ("F2", 16, 50, 690, "INVOICE"),
        ("F1", 11, 50, 665, f"Invoice no.: {row['invoice_no']}"),
        ("F1", 11, 50, 648, f"Invoice date: {row['invoice_date']:%d.%m.%Y}" if row["invoice_date"] else ""),
        ("F1", 11, 330, 665, "Bill to: Example Trading GmbH"),
        ("F1", 11, 330, 648, "Accounts payable, Hafenstrasse 3, Hamburg"),
        ("F2", 11, 50, 590, "Description"),
        ("F2", 11, 450, 590, f"Amount ({currency})"),
        ("F1", 11, 50, 570, f"Goods and services, batch line {row['line_no']}"),
        ("F1", 11, _right(f"{net:,.2f}", 11), 570, f"{net:,.2f}"),
        ("F1", 11, 50, 550, f"VAT {rate}%"),
        ("F1", 11, _right(f"{amount - net:,.2f}", 11), 550, f"{amount - net:,.2f}"),
        ("F2", 12, 50, 520, "Total due"),
        ("F2", 12, _right(f"{amount:,.2f}", 12), 520, f"{amount:,.2f}"),
        ("F1", 10, 50, 460, f"Please pay within 30 days to IBAN {iban}."),
        ("F1", 9, 50, 60, "Page 1 of 2"),
    ]
    second = [
        ("F2", 14, 50, 770, "Terms and conditions"),
        ("F1", 10, 50, 745, "Goods remain our property until paid in full."),
        ("F1", 10, 50, 730, "Complaints within 14 days of delivery."),
        ("F1", 9, 50, 60, "Page 2 of 2"),
    ]
    rules = [(50, 600), (50, 584), (50, 540)]
    return _pdf([_page(first, rules), _page(second, [])])


def _right(number: str, size: int, edge: int = 545) -> int:
    """Where a number starts to end at `edge`: Helvetica's digits are 0.556 em wide, ',' and '.' 0.278."""
    width = sum(0.278 if ch in ",." else 0.556 for ch in number) * size
    return round(edge - width)


def _iban(seed: int) -> str:
    rng = random.Random(seed)
    return f"DE{rng.randint(10, 99)}{rng.randint(10**17, 10**18 - 1)}"


def _page(lines: list[tuple[str, int, int, int, str]], rules: list[tuple[int, int]]) -> bytes:
    ops = [f"0.6 g {x} {y} 495 0.8 re f 0 g" for x, y in rules]
    ops += [f"BT /{font} {size} Tf {x} {y} Td ({_escape(text)}) Tj ET" for font, size, x, y, text in lines]
    return "\n".join(ops).encode("cp1252", errors="replace")


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def _pdf(pages: list[bytes]) -> bytes:
    """A PDF of `pages` (content streams) in Helvetica and Helvetica-Bold."""
    fonts = "<< /F1 3 0 R /F2 4 0 R >>"
    objects: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids ["
        + b" ".join(f"{5 + 2 * i} 0 R".encode() for i in range(len(pages)))
        + f"] /Count {len(pages)} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>",
    ]
    for i, content in enumerate(pages):
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {_WIDTH} {_HEIGHT}] "
            f"/Resources << /Font {fonts} >> /Contents {6 + 2 * i} 0 R >>".encode()
        )
        objects.append(f"<< /Length {len(content)} >>\nstream\n".encode() + content + b"\nendstream")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)
