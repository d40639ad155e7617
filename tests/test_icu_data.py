"""installer/icu_data.py: the trimmed ICU data package reads back, and Qt still collates with it."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from installer import icu_data  # noqa: E402 - after sys.path gets the repository root (not an app package)

PYSIDE_LIB = Path(__import__("PySide6").__file__).parent / "Qt" / "lib"
LIBRARIES = sorted(PYSIDE_LIB.glob("libicudata.so.*"))
pytestmark = pytest.mark.skipif(
    not LIBRARIES or shutil.which("readelf") is None or shutil.which("cc") is None,
    reason="needs PySide6's ICU (Linux wheels), readelf and a C compiler",
)


def test_which_items_stay():
    assert icu_data.keep("uprops.icu") and icu_data.keep("nfc.nrm") and icu_data.keep("supplementalData.res")
    assert icu_data.keep("root.res") and icu_data.keep("en.res") and icu_data.keep("coll/ucadata.icu")
    assert icu_data.keep("coll/root.res") and icu_data.keep("zone/en.res") and icu_data.keep("zone/tzdbNames.res")
    assert not icu_data.keep("de.res") and not icu_data.keep("coll/zh.res") and not icu_data.keep("zone/ja.res")
    assert not icu_data.keep("brkitr/word.brk") and not icu_data.keep("curr/en.res")
    assert not icu_data.keep("ibm-943_P15A-2003.cnv")


def test_package_round_trip_keeps_every_item_byte_for_byte():
    _symbol, package = icu_data.extract(LIBRARIES[0])
    header, items = icu_data.read_package(package)
    assert len(items) > 1000 and [name for name, _ in items] == sorted(name for name, _ in items)
    again_header, again = icu_data.read_package(icu_data.write_package(header, items[::7]))
    assert again_header == header
    for (name, data), (name2, data2) in zip(items[::7], again, strict=True):
        # Items keep their bytes; padding to the 16-byte alignment may follow them.
        assert name == name2 and data2[: len(data)] == data and not data2[len(data) :].strip(b"\0")


def test_qt_collates_and_names_zones_with_the_trimmed_library(tmp_path):
    library = tmp_path / LIBRARIES[0].name
    shutil.copy2(LIBRARIES[0], library)
    before, after = icu_data.trim(library)
    assert after < before / 5
    probe = textwrap.dedent("""
        import os
        from PySide6.QtCore import QCollator, QLocale, QTimeZone
        maps = open(f"/proc/{os.getpid()}/maps").read()
        assert os.environ["LD_LIBRARY_PATH"] + "/libicudata" in maps, "the trimmed library was not loaded"
        collator = QCollator(QLocale("en_US"))
        print(sorted(["b", "Á", "a", "C"], key=collator.sortKey))
        print(QLocale("de_DE").toUpper("straße"))
        print(QTimeZone(b"America/New_York").displayName(QTimeZone.TimeType.StandardTime,
                                                        QTimeZone.NameType.LongName, QLocale("en_US")))
    """)
    result = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=False,
        env={"LD_LIBRARY_PATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["['a', 'Á', 'b', 'C']", "STRASSE", "Eastern Standard Time"]
