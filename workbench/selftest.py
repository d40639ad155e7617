"""`workbench --self-test`: check, without a display, that this installation works end to end.

Installers run it from the installed copy (.ci/run does after building the .deb), and a help desk
can ask a user to run it. Each check prints one line; the exit code is 0 only if all passed. The
checks: the database drivers and SQLAlchemy dialects load; a demo database is written and opened in
a temporary folder; a claim → save → complete round trip works and is audited; Qt starts on the
offscreen platform; the operator window and the supervisor console (Qt Charts) build and paint.
Nothing is written outside the temporary folder, and no window appears.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

USER = "self-test"
# The SQLAlchemy dialects workbench offers, each with the driver module it loads.
DIALECTS = (
    ("SQLite", "sqlite+pysqlite://", "sqlite3"),
    ("PostgreSQL", "postgresql+psycopg://", "psycopg"),
    ("MariaDB/MySQL", "mysql+pymysql://", "pymysql"),
    ("MariaDB/MySQL ODBC", "mysql+pyodbc://", "pyodbc"),
    ("SQL Server", "mssql+pyodbc://", "pyodbc"),
)
WAIT_SECONDS = 30  # for the window's first database round trip, off the GUI thread


@dataclasses.dataclass
class Result:
    name: str
    ok: bool
    detail: str
    seconds: float


class SelfTest:
    """Runs checks in order, prints a line per check, and keeps the results."""

    def __init__(self, out: TextIO, *, as_json: bool = False) -> None:
        self.out = out
        self.as_json = as_json
        self.results: list[Result] = []

    def check(self, name: str, action: Callable[[], str]) -> bool:
        """Run `action` (returns what it found, raises when the check fails) and report it."""
        start = time.perf_counter()
        try:
            detail, ok = action(), True
        except Exception as exc:  # noqa: BLE001 - every failure is reported, then the next check runs
            detail, ok = f"{type(exc).__name__}: {exc}", False
        result = Result(name, ok, detail, time.perf_counter() - start)
        self.results.append(result)
        if not self.as_json:
            mark = "ok  " if ok else "FAIL"
            self.out.write(f"  {mark} {name:<26} {detail}  ({result.seconds * 1000:.0f} ms)\n")
            self.out.flush()
        return ok

    @property
    def passed(self) -> bool:
        return bool(self.results) and all(r.ok for r in self.results)


def run(out: TextIO | None = None, *, as_json: bool = False, target: Any = None) -> int:
    """Every check; 0 when all passed, 1 otherwise. With `target` (an opening.Target: the
    --config or --profile given), also the claim self-check on that database."""
    out = out or sys.stdout  # looked up now: whoever replaced sys.stdout since the import gets the report
    from workbench import __version__

    # Offscreen even where a display exists: the self-test never shows a window.
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    start = time.perf_counter()
    test = SelfTest(out, as_json=as_json)
    where = f"bundle in {Path(sys.executable).parent}" if getattr(sys, "frozen", False) else sys.executable
    if not as_json:
        out.write(f"workbench {__version__} self-test ({where})\n")
    with tempfile.TemporaryDirectory(prefix="workbench-selftest-") as tmp:
        _run_checks(test, Path(tmp))
        if target is not None:
            test.check("claim race", lambda: _claim_race(target))
    seconds = time.perf_counter() - start
    failed = [r.name for r in test.results if not r.ok]
    if as_json:
        json.dump(
            {
                "version": __version__,
                "where": where,
                "passed": test.passed,
                "seconds": round(seconds, 3),
                "checks": [dataclasses.asdict(r) for r in test.results],
            },
            out,
            indent=2,
        )
        out.write("\n")
    elif failed:
        out.write(f"self-test FAILED: {len(failed)} of {len(test.results)} checks ({', '.join(failed)})\n")
    else:
        out.write(f"self-test passed: {len(test.results)} checks in {seconds:.1f} s\n")
    return 0 if test.passed else 1


def _run_checks(test: SelfTest, tmp: Path) -> None:
    test.check("python", _python)
    for label, url, module in DIALECTS:
        test.check(f"driver {label}", functools.partial(_dialect, url, module))
    test.check("odbc drivers", _odbc_drivers)
    test.check("password store", _keyring)
    state: dict[str, Any] = {}
    if test.check("demo database", lambda: _demo(tmp, state)):
        test.check("claim round trip", lambda: _round_trip(state["wb"]))
    if test.check("qt offscreen", lambda: _qt(state)):
        test.check("qt text (ICU)", _qt_text)
        test.check("translations", _translations)
        test.check("colours", _colours)
    if "app" in state and "wb" in state:
        test.check("operator window", lambda: _window(state, tmp))
        test.check("scanned sources", lambda: _sources(tmp))
        test.check("supervisor console", lambda: _console(state))
    if "wb" in state:
        state["wb"].close()
    if "qt_messages" in state:  # the handler that was there before (pytest-qt has its own)
        from PySide6 import QtCore

        QtCore.qInstallMessageHandler(state["qt_messages"])


# -- the checks: each returns what it found, or raises ---------------------------------------------


def _python() -> str:
    return f"Python {sys.version.split()[0]} on {sys.platform}"


def _dialect(url: str, module: str) -> str:
    import sqlalchemy as sa

    # create_engine imports the dialect and its driver without connecting.
    sa.create_engine(url).dispose()
    driver = importlib.import_module(module)
    if module == "sqlite3":
        return f"sqlite3, SQLite {driver.sqlite_version}"
    if module == "psycopg":
        return f"psycopg {driver.__version__} ({driver.pq.__impl__}), libpq {driver.pq.version()}"
    return f"{module} {getattr(driver, 'version', None) or getattr(driver, '__version__', '?')}"


def _odbc_drivers() -> str:
    from workbench.services import admin

    installed = admin.odbc_drivers()
    # Not a failure: ODBC drivers (SQL Server's, MariaDB's) are installed on the machine, not shipped.
    return ", ".join(installed) if installed else "none installed (SQL Server needs Microsoft's ODBC Driver 18)"


def _keyring() -> str:
    from workbench import credentials

    status = credentials.keyring_status()
    # Not a failure either: without a store, the window asks for the password each time.
    return status.name if status.available else "none on this computer: the window asks for passwords each time"


def _demo(tmp: Path, state: dict[str, Any]) -> str:
    from workbench import demo
    from workbench.config import loader
    from workbench.services import Supervisor, admin

    config_path = demo.create(tmp / "demo")
    wb = admin.open_database(loader.load(config_path))
    state["wb"] = wb
    supervisor = Supervisor(wb, USER)
    health = supervisor.health(supervisor.queues)
    return "demo written and opened: " + ", ".join(f"{h.queue} {h.waiting} waiting" for h in health)


def _round_trip(wb: Any) -> str:
    from workbench.core import errors
    from workbench.services import Operator

    operator = Operator(wb, USER)
    queue = "cases"  # the demo's helpdesk queue
    try:
        lock = operator.next_item(queue).lock
    except errors.NothingToClaim as nothing:
        raise AssertionError(f"nothing to claim in the demo queue: {nothing}") from None
    operator.save(lock, {"resolution": "checked by the self-test"})
    done = operator.complete(lock)
    try:
        operator.check(lock)
    except errors.LockLost:
        pass
    else:
        raise AssertionError("the lock was still held after Complete")
    row = operator.show(queue, lock.key).item
    if row["resolution"] != "checked by the self-test" or row["status"] != "resolved":
        raise AssertionError(f"the saved row reads {row['status']!r}, {row['resolution']!r}")
    events = [e.kind.value for e in operator.history(queue, lock.key)]
    if events[-3:] != ["claim", "save", "complete"]:
        raise AssertionError(f"unexpected history {events}")
    return f"{queue} {lock.key}: claimed, saved, completed ({done.outcome}), audited"


def _claim_race(target: Any) -> str:
    """Two connections race for one row of the target's queue table: exactly one may win."""
    from workbench import opening
    from workbench.services import admin

    password = opening.password_for(target.profile) if target.profile is not None else None
    with opening.open_target(target, password) as wb:
        result = admin.claim_check(wb)
    if result.ok is False:
        raise AssertionError(result.message)
    return result.message


def _qt(state: dict[str, Any]) -> str:
    from PySide6 import QtCore

    from workbench.gui import app, icons

    state["qt_messages"] = QtCore.qInstallMessageHandler(_quiet_offscreen)
    application = app.application()
    if application.platformName() != "offscreen":
        raise AssertionError(f"Qt started on '{application.platformName()}', not offscreen")
    if icons.app_icon().isNull():
        raise AssertionError("the application icon did not load")
    state["app"] = application
    return f"Qt {QtCore.qVersion()}, PySide6 {importlib.import_module('PySide6').__version__}, platform offscreen"


def _qt_text() -> str:
    """What Qt takes from ICU's data (trimmed in the Linux bundle): collation, case mapping, zone names."""
    from PySide6.QtCore import QCollator, QLocale, QTimeZone

    collator = QCollator(QLocale("en_US"))
    collator.setNumericMode(True)
    ordered = sorted(["item 10", "Éclair", "item 9", "apple", "Zoo"], key=collator.sortKey)
    if ordered != ["apple", "Éclair", "item 9", "item 10", "Zoo"]:
        raise AssertionError(f"collation gave {ordered}")
    upper = QLocale("de_DE").toUpper("straße")
    if upper != "STRASSE":
        raise AssertionError(f"case mapping gave {upper!r}")
    zone = QTimeZone(b"Europe/Berlin").displayName(
        QTimeZone.TimeType.StandardTime, QTimeZone.NameType.LongName, QLocale("en_US")
    )
    if not zone or "Europe/Berlin" in zone:
        raise AssertionError(f"no time-zone name ({zone!r})")
    return f"collation, case mapping and zone names ({zone})"


REQUIRED_LANGUAGES = ("de",)  # a bundle without German fails (issue 17: German complete, and checked here)


def _translations() -> str:
    """Every language shipped speaks, German at least: workbench's own texts and Qt's standard buttons
    (qtbase_LANG.qm, which an installer must carry too)."""
    from PySide6.QtCore import QTranslator

    from workbench.gui import i18n

    shipped = i18n.available()[1:]
    missing = [code for code in REQUIRED_LANGUAGES if code not in shipped]
    if missing:
        raise AssertionError(
            f"{', '.join(f'workbench_{c}.qm' for c in missing)} is not in the bundle "
            f"(looked in {i18n.translations_dir()})"
        )
    found = []
    for code in shipped:
        own = QTranslator()
        if not own.load(f"workbench_{code}", str(i18n.translations_dir())):
            raise AssertionError(f"workbench_{code}.qm did not load from {i18n.translations_dir()}")
        if own.translate("PickDialog", "Pick an item") in ("", "Pick an item"):
            raise AssertionError(f"workbench_{code}.qm loaded but translates nothing")
        qt = QTranslator()
        if not any(qt.load(f"qtbase_{code}", str(folder)) for folder in i18n.qt_translations_dirs()):
            raise AssertionError(
                f"Qt's own qtbase_{code}.qm is missing (looked in {', '.join(map(str, i18n.qt_translations_dirs()))})"
            )
        if qt.translate("QPlatformTheme", "Cancel") in ("", "Cancel"):
            raise AssertionError(f"qtbase_{code}.qm loaded but translates nothing")
        found.append(
            f"{code} ({own.translate('PickDialog', 'Pick an item')!r}, {qt.translate('QPlatformTheme', 'Cancel')!r})"
        )
    if not found:
        raise AssertionError("no translation is shipped")
    return ", ".join(found)


def _colours() -> str:
    """The style sheet ships and fills for every scheme (a missing colour would stop the app's start)."""
    from workbench.gui import theme

    sizes = [len(theme.stylesheet(c)) for c in (theme.LIGHT, theme.DARK, theme.CONTRAST_LIGHT, theme.CONTRAST_DARK)]
    if min(sizes) < 500:
        raise AssertionError(f"the style sheet is too short ({min(sizes)} characters)")
    return "style sheet for light, dark and high contrast"


def _quiet_offscreen(kind: Any, context: Any, message: str) -> None:
    """Qt's messages to stderr as usual, but for the offscreen platform saying it cannot resize to hints."""
    if "propagateSizeHints" not in message:
        sys.stderr.write(message + "\n")


def _window(state: dict[str, Any], tmp: Path) -> str:
    from workbench.gui import app

    window = app.window_for(state["wb"], USER, home=tmp / "home")
    state["window"] = window
    ready: list[Any] = []
    window.session.ready.connect(ready.append)
    window.show()
    window.session.start()
    _wait(lambda: bool(ready), "the window's first database call")
    image = window.grab().toImage()
    if image.isNull() or image.width() < 400:
        raise AssertionError("the window did not paint")
    size = f"{image.width()}x{image.height()}"
    window.close()
    window.session.dispatcher.wait(5000)
    return f"built, connected and painted ({size})"


def _sources(tmp: Path) -> str:
    """What the source pane shows: a scanned invoice PDF (QtPdf) and JPEG and TIFF scans (Qt's
    image plugins, which a bundle could leave out)."""
    from PySide6.QtCore import QBuffer, QByteArray, QSize
    from PySide6.QtGui import QColor, QImage
    from PySide6.QtPdf import QPdfDocument

    from workbench.demo import data, invoices

    path = tmp / "scan.pdf"
    path.write_bytes(invoices.invoice_pdf(next(iter(data.imports(1)))))
    document = QPdfDocument()
    document.load(str(path))
    if document.status() != QPdfDocument.Status.Ready or document.pageCount() != 2:
        raise AssertionError(f"the demo's invoice PDF did not load ({document.status().name})")
    if document.render(0, QSize(120, 170)).isNull():
        raise AssertionError("the demo's invoice PDF did not render")
    for kind in ("JPEG", "TIFF"):
        image = QImage(8, 8, QImage.Format.Format_RGB32)
        image.fill(QColor("white"))
        encoded = QByteArray()
        buffer = QBuffer(encoded)
        buffer.open(QBuffer.OpenModeFlag.WriteOnly)
        # PySide6's stub wants bytes for the format, but the binding takes only str (bytes: ValueError).
        saved = image.save(buffer, kind)  # type: ignore[call-overload]
        if not saved or QImage.fromData(bytes(encoded.data())).isNull():
            raise AssertionError(f"Qt cannot read {kind} images here (its image plugin is missing)")
    document.close()
    return "an invoice PDF rendered (2 pages), JPEG and TIFF read"


def _console(state: dict[str, Any]) -> str:
    from workbench.gui import supervisor

    console = supervisor.SupervisorWindow(state["wb"], USER)
    try:
        console.show()
        console.tabs.setCurrentWidget(console.charts)  # the tab drawn with Qt Charts
        console.refresh()
        _wait(lambda: console.last_refresh_ms > 0, "the console's figures")
        if not console.status.text().startswith("Refreshed"):
            raise AssertionError(console.status.text())
        image = console.grab().toImage()
    finally:
        console.close()
        console.dispatcher.wait(5000)
    if image.isNull():
        raise AssertionError("the console did not paint")
    return f"built, charts drawn and painted ({image.width()}x{image.height()})"


def _wait(done: Callable[[], bool], what: str) -> None:
    from PySide6.QtCore import QCoreApplication, QEventLoop

    deadline = time.monotonic() + WAIT_SECONDS
    while not done():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not finish within {WAIT_SECONDS} s")
        QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 50)
        time.sleep(0.01)
