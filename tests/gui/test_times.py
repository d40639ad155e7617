"""One rule for times in the windows: the operator's local time in their locale's format, the zone named
where times are compared; no other way of writing a time in workbench/gui."""

from __future__ import annotations

import datetime as dt
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QLocale

from workbench.core import errors
from workbench.gui import draft_view, times

GUI = Path(times.__file__).parent
AT = dt.datetime(2026, 11, 25, 21, 5, 9, tzinfo=dt.UTC)


@pytest.fixture
def berlin() -> Iterator[None]:
    before = os.environ.get("TZ")
    os.environ["TZ"] = "Europe/Berlin"
    time.tzset()
    yield
    if before is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = before
    time.tzset()
    QLocale.setDefault(QLocale.system())


@pytest.mark.parametrize(
    ("locale", "clock", "moment"),
    [
        ("C", "22:05:09", "2026-11-25 22:05"),
        ("de_DE", "22:05:09", "25.11.2026 22:05"),
        ("en_US", "10:05:09\u202fPM", "11/25/2026 10:05\u202fPM"),
        ("fr_FR", "22:05:09", "25/11/2026 22:05"),
    ],
)
def test_a_moment_is_written_in_local_time_and_the_locales_format(
    berlin: None, locale: str, clock: str, moment: str
) -> None:
    QLocale.setDefault(QLocale(locale))
    assert times.clock(AT).replace(" ", "\u202f") == clock.replace(" ", "\u202f")
    assert times.moment(AT).replace("\u202f", " ") == moment.replace("\u202f", " ")
    assert times.zone(AT) == "CET" and times.with_zone("Claimed at") == "Claimed at (CET)"
    # A database on `clock = "local"` hands over times without zone: they are its local time already.
    assert times.clock(dt.datetime(2026, 11, 25, 9, 30)) in ("09:30:00", "9:30:00\u202fAM", "9:30:00 AM")


def test_a_lost_lock_is_told_on_the_operators_clock(berlin: None) -> None:
    QLocale.setDefault(QLocale("C"))
    lost = errors.LockLost(
        "lock lost: supervisor sue force-released cases 7 at 2026-11-25 21:05:09 UTC",
        queue="cases",
        key=7,
        cause="force_released",
        by="sue",
        at=AT,
        reason="escalated",
    )
    text = draft_view.lost_sentence(lost, "Helpdesk cases 7")
    assert text == "Lock lost: supervisor sue released Helpdesk cases 7 at 22:05:09 (reason: escalated)."
    assert "UTC" not in text and draft_view.holder_hint(lost) == "Nobody holds it now."


def test_no_other_way_of_writing_a_time_in_the_windows() -> None:
    """strftime or a format string with %H elsewhere would bring back UTC beside local, or ISO beside the
    locale (CSV export writes ISO 8601 with the offset, on purpose: that is data)."""
    pattern = re.compile(r"strftime\(|:%H|%H:%M|%Y-%m")
    # form.py writes a date/time field's value in the input format the field parses back.
    found = [
        f"{p.name}: {line.strip()}"
        for p in GUI.glob("*.py")
        if p.name not in ("times.py", "form.py")
        for line in p.read_text("utf-8").splitlines()
        if pattern.search(line)
    ]
    assert found == []


def test_durations_speak_the_language(qtbot: object) -> None:
    from workbench.core import durations
    from workbench.gui import app as gui_app
    from workbench.gui import i18n

    app = gui_app.application()
    for seconds in (0, 45, 725, 7380, 2_012_345, -90):
        assert times.duration(seconds) == durations.format_duration(seconds)  # English: the engine's form
    assert (times.span(900), times.span(45), times.span(930)) == ("15m", "45s", "15m30s")
    try:
        i18n.install(app, "de")
        # Natural German abbreviations (issue 53: "2 T 10 h" was no German).
        assert times.duration(2_012_345) == "23 Tg. 06 h" and times.duration(725) == "12 min 05 s"
        assert times.duration(-90) == "-1 min 30 s"
        # A configured length leaves out a smaller unit that is zero: "15 min", not "15 min 00 s".
        assert (times.span(900), times.span(7200), times.span(86400), times.span(5400)) == (
            "15 min",
            "2 h",
            "1 Tg.",
            "1 h 30 min",
        )
    finally:
        i18n.install(app, "en")
        QLocale.setDefault(QLocale.system())


SHOWN_UNDER_C = """
import datetime as dt, json, sys
from workbench.gui import app as gui_app, dialogs, i18n, times
app = gui_app.application()
dialog = dialogs.DeferDialog("Helpdesk cases 7", False)
dialog.show()
app.processEvents()
print(json.dumps({"language": i18n.current(), "moment": times.moment(dt.datetime(2026, 12, 1, 20, 52)),
                  "format": dialog.until.displayFormat(), "shown": dialog.until.text()}))
"""


@pytest.mark.parametrize(("language", "moment"), [("en", "2026-12-01 20:52"), ("de", "01.12.2026 20:52")])
def test_a_system_that_names_no_region_writes_iso_8601(language: str, moment: str) -> None:
    """Issue 53: LANG=C.UTF-8 names no region; Qt then reports $LANGUAGE's language ("en_US") with the C
    locale's own formats ("1 12 2026 20:52"). English windows write ISO 8601, as the docs promise; a chosen
    language that is not English writes its own (as where LANGUAGE is unset), in the Defer dialog too."""
    import json
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG", "WORKBENCH_LANG"))}
    env.update(LANG="C.UTF-8", LANGUAGE=language, QT_QPA_PLATFORM="offscreen")
    out = subprocess.run(
        [sys.executable, "-c", SHOWN_UNDER_C], env=env, capture_output=True, text=True, check=True, timeout=60
    ).stdout
    shown = json.loads(out.strip().splitlines()[-1])
    assert shown["language"] == language and shown["moment"] == moment, shown
    if language == "en":
        assert shown["format"] == "yyyy-MM-dd HH:mm" and re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", shown["shown"])
