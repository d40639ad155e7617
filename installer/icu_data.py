"""Shrink the ICU data library Qt Core links (31 of the bundle's MB) to the items Qt uses for an English UI.

Qt Core (PySide6's Linux wheels) links libicudata, a 32 MB table of every locale's names,
currencies, units, transliterators, break dictionaries and legacy code pages. Qt uses ICU for
collation (QCollator), case mapping and time-zone names; it does not need the rest, and workbench's
interface is English. This keeps ICU's core properties and normalization data, the non-locale
resources (supplemental data, likely subtags …), and the root and English locale bundles of the
main, collation and zone trees; every other locale falls back to the root collation and names.
Legacy code pages go too (Qt assumes UTF-8 on Linux). The result is rebuilt as a shared library
exporting the same `icudtNN_dat` symbol with the same soname, so Qt loads it unchanged.

The data is ICU's documented "common data" package: a header, a table of contents of
(name offset, data offset) pairs sorted by name, the names, then the items. The self-test checks
collation, case mapping and time-zone names through Qt in the built bundle.
"""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

# Locale bundles that stay, in every tree kept: the root (every fallback ends there), English,
# and the index and key pool the trees' lookups need.
KEPT_LOCALES = {"root", "en", "en_US", "en_GB", "en_001", "res_index", "pool"}
KEPT_TREES = {"", "coll", "zone"}  # the main tree, collation, time-zone names
_LOCALE_NAME = re.compile(r"^[a-z]{2,3}(_[A-Za-z0-9]+)*$")
ALIGN = 16  # ICU aligns every item; its loaders assume it


def keep(relative: str) -> bool:
    """Whether an item (its name inside the package, e.g. "coll/de.res") stays."""
    tree, _, leaf = relative.rpartition("/")
    if tree not in KEPT_TREES:
        return False  # brkitr, curr, lang, region, unit, translit, rbnf …
    if leaf.endswith(".cnv"):
        return False
    stem, _, kind = leaf.rpartition(".")
    if kind != "res" or not _LOCALE_NAME.match(stem):
        return True  # core data (.icu, .nrm, .spp …) and non-locale resources
    return stem in KEPT_LOCALES


def read_package(blob: bytes) -> tuple[bytes, list[tuple[str, bytes]]]:
    """(header, [(name, item bytes)] in table-of-contents order) of a common data package."""
    header_size = struct.unpack_from("<H", blob, 0)[0]
    if blob[2:4] != b"\xda\x27":
        raise ValueError("not an ICU data package (magic bytes differ)")
    count = struct.unpack_from("<I", blob, header_size)[0]
    entries = []
    for i in range(count):
        name_offset, data_offset = struct.unpack_from("<II", blob, header_size + 4 + 8 * i)
        start = header_size + name_offset
        entries.append((blob[start : blob.index(b"\0", start)].decode("ascii"), data_offset))
    ends = [*sorted(offset for _, offset in entries), len(blob) - header_size]
    next_offset = {offset: ends[i + 1] for i, offset in enumerate(ends[:-1])}
    items = [(name, blob[header_size + offset : header_size + next_offset[offset]]) for name, offset in entries]
    return blob[:header_size], items


def write_package(header: bytes, items: list[tuple[str, bytes]]) -> bytes:
    """A common data package of `items` (kept in the given, name-sorted order)."""
    names = b"".join(name.encode("ascii") + b"\0" for name, _ in items)
    toc_size = 4 + 8 * len(items)
    offset = _aligned(toc_size + len(names))
    toc = [struct.pack("<I", len(items))]
    body = bytearray()
    name_offset = toc_size
    for name, data in items:
        toc.append(struct.pack("<II", name_offset, offset + len(body)))
        name_offset += len(name) + 1
        body += data + b"\0" * (_aligned(len(data)) - len(data))
    table = b"".join(toc) + names
    return header + table + b"\0" * (offset - len(table)) + bytes(body)


def _aligned(size: int) -> int:
    return (size + ALIGN - 1) // ALIGN * ALIGN


def extract(library: Path) -> tuple[str, bytes]:
    """(symbol, package bytes) from libicudata: the `icudtNN_dat` object in its read-only data."""
    symbols = subprocess.run(["readelf", "-Ws", str(library)], capture_output=True, text=True, check=True).stdout
    found = re.search(
        r"^\s*\d+:\s+([0-9a-f]+)\s+(\S+)\s+OBJECT\s+GLOBAL\s+\S+\s+\d+\s+(icudt\d+_dat)$", symbols, re.MULTILINE
    )
    if not found:
        raise ValueError(f"{library}: no icudtNN_dat symbol")
    address, size, symbol = int(found.group(1), 16), int(found.group(2), 0), found.group(3)
    sections = subprocess.run(["readelf", "-WS", str(library)], capture_output=True, text=True, check=True).stdout
    for line in sections.splitlines():
        fields = line.split("]", 1)[-1].split()
        if len(fields) > 4 and fields[0].startswith("."):
            start, file_offset, length = int(fields[2], 16), int(fields[3], 16), int(fields[4], 16)
            if start <= address < start + length:
                data = library.read_bytes()
                at = address - start + file_offset
                return symbol, data[at : at + size]
    raise ValueError(f"{library}: {symbol} is in no section")


def build_library(symbol: str, package: bytes, soname: str, target: Path, compiler: str) -> None:
    """A shared library named `soname` that exports `symbol` holding `package`."""
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "icudata.bin"
        data.write_bytes(package)
        source = Path(tmp) / "icudata.S"
        source.write_text(
            f"    .section .rodata\n    .globl {symbol}\n    .type {symbol}, @object\n    .balign {ALIGN}\n"
            f'{symbol}:\n    .incbin "{data}"\n    .size {symbol}, .-{symbol}\n'
            '    .section .note.GNU-stack,"",@progbits\n',
            encoding="ascii",
        )
        subprocess.run(
            [compiler, "-shared", "-nostdlib", "-o", str(target), f"-Wl,-soname,{soname}", "-s", str(source)],
            check=True,
        )


def trim(library: Path, keep_item: Callable[[str], bool] = keep) -> tuple[int, int] | None:
    """Replace `library` with its trimmed build; (old size, new size), or None without a C compiler."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        return None
    symbol, package = extract(library)
    header, items = read_package(package)
    prefix = items[0][0].split("/", 1)[0] + "/"  # "icudt73l/"
    kept = [(name, data) for name, data in items if keep_item(name.removeprefix(prefix))]
    before = library.stat().st_size
    replacement = library.with_name(library.name + ".trimmed")
    build_library(symbol, write_package(header, kept), library.name, replacement, compiler)
    replacement.replace(library)
    return before, library.stat().st_size
