"""Render the docs' screenshots (docs/screenshots/) from the real window on the demo database (offscreen).

    QT_QPA_PLATFORM=offscreen python -m tests.make_screenshots [OUTPUT_DIR]

WORKBENCH_LANG=de renders them in German (or any language of workbench/i18n; the docs'
main-window-de.png is that run's main-window.png);
WORKBENCH_APPEARANCE=dark in the dark colours; QT_SCALE_FACTOR=2 at 200 %.

Writes main-window.png and main-window-dark.png (an item open with a colleague's note beside it,
edits typed, the lock timer running), lock-lost.png (a supervisor took the item away while the operator was typing),
reconnecting.png (the database went away), resume.png (the resume panel after a restart),
review.png (a second clerk reviews a line the first verified), source.png (an import line beside its scan),
lookup.png (the vendor picked from the vendors table by its first letters),
connection.png (the first-run connection dialog after a failed Test connection) and password.png
(asked again after a refused login), the supervisor console's tabs and supervisor-move.png (Move waiting
items…), by driving the windows exactly as the GUI tests do.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication

from workbench import demo
from workbench.config import loader
from workbench.gui import app as gui_app
from workbench.gui import main_window, session, theme
from workbench.services import door

OUT = Path(__file__).resolve().parents[1] / "docs" / "screenshots"
SETTINGS = session.SessionSettings(check_interval=30, auto_extend=False, next_after_complete=False)


def _until(app: QApplication, done: Callable[[], bool], what: str, seconds: float = 15) -> None:
    end = time.monotonic() + seconds
    while not done():
        if time.monotonic() > end:
            raise SystemExit(f"make_screenshots: timed out waiting for {what}")
        app.processEvents()
        time.sleep(0.01)


def _settle(app: QApplication, seconds: float = 0.4) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)


def _window(app: QApplication, config: Any, home: Path, user: str) -> main_window.MainWindow:
    window = gui_app.build_window(config, user, settings=dataclasses.replace(SETTINGS), home=home)
    window.resize(1200, 760)
    window.show()
    ready: list[Any] = []
    window.session.ready.connect(ready.append)
    window.session.start()
    _until(app, lambda: bool(ready), "the queues to open")
    return window


def _claim(app: QApplication, window: main_window.MainWindow) -> Any:
    claimed: list[Any] = []
    window.session.claimed.connect(lambda claim, _draft: claimed.append(claim))
    window.next_button.click()
    _until(app, lambda: bool(claimed), "Next item")
    return claimed[0]


def _answer_leave(app: Any, button: str) -> None:
    """Click `button` of the "Leave this item?" question as soon as it is up (Next item with edits)."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QAbstractButton

    def answer() -> None:
        box = app.activeModalWidget()
        if box is not None and box.objectName() == "leave_dialog":
            box.findChild(QAbstractButton, button).click()
        else:
            QTimer.singleShot(50, answer)

    QTimer.singleShot(0, answer)


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else OUT
    out.mkdir(parents=True, exist_ok=True)
    app = gui_app.application()
    installed = theme.installed()
    if installed is not None and os.environ.get("WORKBENCH_APPEARANCE"):
        installed.set_choice(os.environ["WORKBENCH_APPEARANCE"])
    work = Path(tempfile.mkdtemp(prefix="wb-shots-"))
    config = loader.load(demo.create(work / "demo"))
    home = work / "home"

    window = _window(app, config, home, "alice")
    claim = _claim(app, window)
    cases = door.engine(window.session.wb).queue("cases")
    cases.add_note("bob", claim.lock.key, "Called the customer: it started after Monday's Outlook update.")
    window.session.load_item_log()
    window.form.field("resolution").setPlainText("Replaced the docking station; the monitor works again.")
    window.form.field("time_spent_min").setText("25")
    _settle(app)
    window.grab().save(str(out / "main-window.png"))
    themes = theme.installed()
    assert themes is not None
    chosen = themes.choice
    themes.set_choice("dark")
    _settle(app)
    window.grab().save(str(out / "main-window-dark.png"))
    themes.set_choice(chosen)
    _settle(app)

    door.engine(window.session.wb).supervision("cases").force_release(
        "sue", claim.lock.key, "customer escalated to level 2"
    )
    lost: list[Any] = []
    window.session.lock_lost.connect(lost.append)
    window.session.check_now()
    _until(app, lambda: bool(lost), "the lost lock")
    _settle(app)
    window.grab().save(str(out / "lock-lost.png"))
    # The database goes away (as the window sees it): one calm state in the status bar.
    window.session._failures = 2
    window._on_connection(False, "cannot reach the database: connection refused")
    _settle(app)
    window.grab().save(str(out / "reconnecting.png"))
    window.close()

    # After a restart: two unfinished items, one with unsaved edits in the journal.
    first = _window(app, config, home, "bob")
    _claim(app, first)
    first.form.field("resolution").setPlainText("Half way: waiting for the new toner")
    _settle(app)
    first.session.dispatcher.wait()
    _answer_leave(app, "leave_keep")  # Next item with edits asks first: bob keeps the item locked
    first.next_item()
    _settle(app, 1.0)
    first.quit_guard.let_go()  # as if the PC restarted: both items stay locked to bob
    first.close()
    second = _window(app, config, home, "bob")
    _settle(app)
    second.grab().save(str(out / "resume.png"))
    second.close()
    _review_shot(app, out, config, home)
    _source_shot(app, out, config, home)
    _lookup_shot(app, out, config, home)
    _connection_shots(app, out)
    _supervisor_shots(app, out, config)
    for name in (
        "main-window.png",
        "main-window-dark.png",
        "lock-lost.png",
        "resume.png",
        "review.png",
        "source.png",
        "lookup.png",
        "connection.png",
        "password.png",
        "reconnecting.png",
        "supervisor-board.png",
        "supervisor-operators.png",
        "supervisor-charts.png",
        "supervisor-history.png",
        "supervisor-move.png",
    ):
        print(out / name)
    return 0


def _vendor_shown(app: QApplication, window: main_window.MainWindow) -> None:
    """Wait until the vendor picker shows its row ("Harbor Freight Partners (Aarhus)"), which it
    reads from the vendors table after showing the bare key."""
    _until(app, lambda: window.form.field("vendor").text().endswith(")"), "the vendor's row")


def _review_shot(app: QApplication, out: Path, config: Any, home: Path) -> None:
    """Four eyes: dana reviews a line ann verified (the review queue never serves it to ann)."""
    from workbench.db import service

    wb = service.Workbench.open(config)
    imports = wb.queue("imports")
    for _ in range(2):
        c = imports.claim_next("ann")[0]
        imports.complete(
            "ann", c.lock.key, c.lock.token, "verified", {"checker_note": "Amount and IBAN match the PDF."}
        )
    wb.close()
    window = _window(app, config, home, "dana")
    window.queue_picker.setCurrentIndex(window.queue_picker.findData("imports_review"))
    _claim(app, window)
    _until(app, lambda: window.source_pane.showing == "pdf", "the scan")
    _vendor_shown(app, window)  # the reviewer's vendor is a lookup too: its row with its city
    _settle(app)
    window.grab().save(str(out / "review.png"))
    window.close()


def _source_shot(app: QApplication, out: Path, config: Any, home: Path) -> None:
    """A clerk checks an import line against its scanned invoice, shown beside the form."""
    window = _window(app, config, home, "erik")
    window.resize(1500, 860)
    window.queue_picker.setCurrentIndex(window.queue_picker.findData("imports"))
    _claim(app, window)
    _until(app, lambda: window.source_pane.showing == "pdf", "the scan")
    _vendor_shown(app, window)
    _settle(app)
    window.grab().save(str(out / "source.png"))
    window.close()


def _lookup_shot(app: QApplication, out: Path, config: Any, home: Path) -> None:
    """A clerk picks the vendor from the vendors table: two letters typed, the rows the database found."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QPainter
    from PySide6.QtTest import QTest

    from workbench.gui import lookup_field

    window = _window(app, config, home, "fatma")
    window.resize(1500, 860)
    window.queue_picker.setCurrentIndex(window.queue_picker.findData("imports"))
    _claim(app, window)
    picker = window.form.field("vendor")
    assert isinstance(picker, lookup_field.LookupEdit)
    picker.setFocus()
    picker.selectAll()
    QTest.keyClick(picker, Qt.Key.Key_Delete)
    QTest.keyClicks(picker, "gr")
    _until(app, picker._popup.isVisible, "the vendors found")
    _settle(app)
    # The list is a window of its own: painted where it shows, over the main window.
    shot = window.grab()
    painter = QPainter(shot)
    painter.drawPixmap(
        window.mapFromGlobal(picker._popup.mapToGlobal(picker._popup.rect().topLeft())), picker._popup.grab()
    )
    painter.end()
    shot.save(str(out / "lookup.png"))
    picker._popup.hide()
    window.close()


def _refreshed(window: Any) -> bool:
    """The console's status says it refreshed (in the language shown: WORKBENCH_LANG=de renders German)."""
    return window.status.text().startswith(window.tr("Refreshed {0} ({1:.0f} ms)").split("{")[0])


def _supervisor_shots(app: QApplication, out: Path, config: Any) -> None:
    """The lock board with a team at work (one lock about to expire, one expired), and the operators tab."""
    import sqlalchemy as sa

    from tests import support
    from workbench.db import audit as audit_mod
    from workbench.db import clock, service
    from workbench.gui import supervisor

    wb = service.Workbench.open(config)
    q = wb.queue("cases")
    audit = wb.audit_table
    minutes = iter([4, 9, 12, 6, 25, 7, 15, 3, 31, 8, 11, 5, 9, 14, 22, 6, 18])
    for user, done in (("ann", 5), ("bob", 3), ("carla", 7), ("dev", 2)):
        for _ in range(done):
            c = q.claim_next(user)[0]
            q.complete(user, c.lock.key, c.lock.token, "resolved", {})
            with wb.engine.begin() as conn:  # a realistic handle time: the claim happened earlier
                claimed = sa.and_(audit.c.token == audit_mod.token_digest(c.lock.token), audit.c.event == "claim")
                conn.execute(
                    sa.update(audit)
                    .where(claimed)
                    .values(at=clock.add_seconds(audit.c.at, sa.literal(-60 * next(minutes))))
                )
    for user, count in (("ann", 2), ("bob", 3), ("carla", 1), ("dev", 2)):
        q.claim_next(user, count)
    # Import lines verified by two clerks, then reviewed by a third (four eyes): one sent back.
    imports, review = wb.queue("imports"), wb.queue("imports_review")
    for user in ("fay", "gus", "fay", "gus", "fay"):
        c = imports.claim_next(user)[0]
        imports.complete(user, c.lock.key, c.lock.token, "verified", {})
    for outcome in ("accepted", "accepted", "sent_back", "accepted"):
        c = review.claim_next("hana")[0]
        review.complete(
            "hana",
            c.lock.key,
            c.lock.token,
            outcome,
            {},
            note="The VAT rate is 7 %, not 19 %." if outcome == "sent_back" else None,
        )
    c = q.claim_next("erik")[0]
    q.release(
        "erik",
        c.lock.key,
        c.lock.token,
        "Needs information from the customer",
        note="Asked for the invoice number by e-mail; the customer answers tomorrow.",
    )
    locks = sorted(q.locks(), key=lambda lock: lock.key)
    for lock, seconds in ((locks[0], 14 * 60), (locks[1], 20 * 60), (locks[2], 6 * 60)):
        support.age_lock(wb, "cases", lock.key, seconds)  # as if time had passed: one nearly out, one expired
        support.age_audit(wb, "cases", lock.key, seconds)
    window = supervisor.SupervisorWindow(wb, "sue", refresh_seconds=600, changes_seconds=0)
    window.resize(1100, 560)
    window.show()
    window.refresh()
    _until(app, lambda: _refreshed(window), "the lock board")
    window.board.selectRow(2)
    _settle(app)
    window.grab().save(str(out / "supervisor-board.png"))
    window.status.setText("")
    window.tabs.setCurrentIndex(2)
    _until(app, lambda: _refreshed(window), "the operators tab")
    _settle(app)
    window.grab().save(str(out / "supervisor-operators.png"))
    window.status.setText("")
    window.tabs.setCurrentIndex(4)
    _until(app, lambda: _refreshed(window), "the charts")
    _settle(app, 0.8)
    window.grab().save(str(out / "supervisor-charts.png"))
    window.tabs.setCurrentIndex(3)  # the released item's history, in words
    window.history_key.setText(str(c.lock.key))
    window.show_history()
    _until(app, lambda: window.history.rowCount() > 0, "the item's history")
    _settle(app)
    window.grab().save(str(out / "supervisor-history.png"))
    # Queue health ▸ Move waiting items…: every waiting Printing case to the Hardware team's category.
    from workbench.gui import supervisor_dialogs

    def load(column: str, done: Any) -> None:
        window.dispatcher.call(lambda: window.service.waiting_values("cases", column), done, lambda _e: done([]))

    move = supervisor_dialogs.MoveDialog(window.titles["cases"], window.service.movable("cases"), load, window)
    move.show()
    move.where_column.setCurrentIndex(move.where_column.findData("category"))
    _until(app, lambda: move.where_value.count() > 0, "the values waiting items hold")
    move.where_value.setCurrentText("Printing")
    move.set_column.setCurrentIndex(move.set_column.findData("category"))
    move.set_value.setCurrentText("Hardware")
    move.reason_box.setCurrentText("Belongs to another team")
    _settle(app)
    move.grab().save(str(out / "supervisor-move.png"))
    move.close()
    window.close()
    window.dispatcher.wait()
    wb.close()


def _connection_shots(app: QApplication, out: Path) -> None:
    """The first-run connection dialog after a Test connection to a server that is not there, and
    the password prompt after a refused login."""
    from tests import servers
    from workbench.config import profiles
    from workbench.gui import connect_dialog

    dialog = connect_dialog.ConnectionDialog(first_run=True)
    dialog.name.setText("Helpdesk (office)")
    dialog.host.setText("127.0.0.1")
    dialog.port.setValue(servers.free_port())
    dialog.database.setText("helpdesk")
    dialog.user.setText("bob")
    dialog.password_edit.setText("not-a-real-password")
    dialog.from_db.setChecked(True)
    dialog.show()
    dialog.test_connection()
    _until(app, lambda: dialog.test_result.property("state") == "fail", "Test connection")
    _settle(app)
    dialog.grab().save(str(out / "connection.png"))
    dialog.close()
    profile = profiles.Profile(
        name="Helpdesk (office)",
        kind="postgresql",
        host="db.example.org",
        database="helpdesk",
        user="bob",
        source="database",
    )
    prompt = connect_dialog.PasswordDialog(
        profile,
        QApplication.translate(
            "Launcher", "The server refused this password for {0}: check it (Caps Lock?) and try again."
        ).format("bob"),
    )
    prompt.show()
    _settle(app)
    prompt.grab().save(str(out / "password.png"))
    prompt.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
