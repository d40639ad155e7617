"""The operator window on the demo, driven line by line from stdin, for tests/test_accessibility_bus.py.

Started with the accessibility bus on (QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1) under Xvfb; what the window
shows is read from outside by tests/gui/atspi_reader.py. Commands (one a line), each answered by one
JSON line on stdout once done:

    next            Next item                                   {"claimed": key}
    warn            the lock aged into the expiry warning       {"warned": seconds left}
    ticks N         the status bar's timer counted down N times {"ticked": its texts}
    lose            a supervisor force-releases it, with reason {"lost": cause}
    take USER       USER claims the item this window lost       {"taken": USER}
    reads N         the lost item's holder read N more times     {"read": N}
    password        the password prompt after a refused login    {"dialog": object name}
    type NAME TEXT  TEXT into the active window's line edit NAME {"typed": NAME}
    pick            Pick… (the dialog stays open)                {"dialog": object name}
    release         Release… (the dialog stays open)             {"dialog": object name}
    resume          My unfinished items                          {"page": "resume"}
    console         the supervisor console, three locks on it   {"console": rows}
    sheet N         the console's tab N                          {"sheet": its title}
    focus NAME      the focus to the active window's widget      {"focus": NAME}
    tab             one Tab key                                  {"focus": object name, or the class}
    close           the active dialog or console closed          {"closed": true}
    quit
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from PySide6.QtCore import QObject, QSocketNotifier, Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QDialog, QLineEdit, QWidget

from tests.gui import watching
from workbench import demo
from workbench.config import loader, profiles
from workbench.db import clock
from workbench.db import service as db_service
from workbench.gui import app as gui_app
from workbench.gui import connect_dialog, session, supervisor
from workbench.services import door

LOCK = 15 * 60  # the demo's cases queue
SETTINGS = session.SessionSettings(
    check_interval=1.0, warn_before=120.0, retry_interval=0.5, auto_extend=False, next_after_complete=False
)


def say(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


class Driver(QObject):
    def __init__(self, home: Path) -> None:
        super().__init__()
        self.config = loader.load(demo.create(home / "demo"))
        self.window = gui_app.build_window(self.config, "alice", settings=SETTINGS, home=home / "home")
        self.console: supervisor.SupervisorWindow | None = None
        s = self.window.session
        s.ready.connect(lambda _locks: say({"ready": True}))
        s.claimed.connect(lambda claim, _draft: say({"claimed": str(claim.lock.key)}))
        s.expiry_warning.connect(lambda left: say({"warned": left}))
        s.lock_lost.connect(lambda lost: say({"lost": lost.cause}))
        self.holder_reads = watching.holder_reads(self.window)
        self.window.show()
        self.window.activateWindow()
        s.start()
        self.notifier = QSocketNotifier(sys.stdin.fileno(), QSocketNotifier.Type.Read, self)
        self.notifier.activated.connect(self._command)

    def _command(self) -> None:
        line = sys.stdin.readline()
        if not line:
            QApplication.quit()
            return
        word, _, rest = line.strip().partition(" ")
        getattr(self, f"do_{word}")(rest)

    def do_next(self, _rest: str) -> None:
        self.window.next_item()

    def _age(self, seconds: int) -> None:
        cur = self.window.session.current
        assert cur is not None
        q = door.engine(self.window.session.wb).queue(cur.queue).q
        with door.engine(self.window.session.wb).engine.begin() as conn:
            conn.execute(
                sa.update(q.table)
                .where(q.key == cur.lock.key)
                .values(
                    {
                        q.time.name: clock.add_seconds(q.time, sa.literal(-seconds)),
                        q.expires.name: clock.add_seconds(q.expires, sa.literal(-seconds)),
                    }
                )
            )

    def do_warn(self, _rest: str) -> None:
        self._age(LOCK - 90)
        self.window.session.check_now()

    def do_ticks(self, count: str) -> None:
        self._when_ticked([self.window.timer_label.text()], int(count))

    def _when_ticked(self, texts: list[str], count: int) -> None:
        text = self.window.timer_label.text()
        if text != texts[-1]:
            texts.append(text)
        if len(texts) > count:
            say({"ticked": texts})
            return
        QTimer.singleShot(50, lambda: self._when_ticked(texts, count))

    def do_lose(self, _rest: str) -> None:
        cur = self.window.session.current
        assert cur is not None
        door.engine(self.window.session.wb).supervision(cur.queue).force_release(
            "sue", cur.lock.key, "customer escalated"
        )
        self.window.session.check_now()

    def do_take(self, user: str) -> None:
        lost = self.window.session.lost
        assert lost is not None
        door.engine(self.window.session.wb).queue(lost.queue).claim(user, lost.key)
        say({"taken": user})

    def do_reads(self, count: str) -> None:
        self._when_read(len(self.holder_reads) + int(count))

    def _when_read(self, reads: int) -> None:
        if len(self.holder_reads) >= reads:
            say({"read": reads})
            return
        QTimer.singleShot(20, lambda: self._when_read(reads))

    def do_password(self, _rest: str) -> None:
        QTimer.singleShot(0, self._when_dialog)
        profile = profiles.Profile(name="office", kind="postgresql", host="db.example", user="alice")
        message = self.window.tr("The server refused this password for {0}: check it (Caps Lock?) and try again.")
        connect_dialog.PasswordDialog(profile, message.format("office"), parent=self.window).exec()

    def do_type(self, rest: str) -> None:
        name, _, text = rest.partition(" ")
        edit = self._active().findChild(QLineEdit, name)
        assert edit is not None, name
        edit.setText(text)
        QTimer.singleShot(300, lambda: say({"typed": name}))  # the clear button shows meanwhile

    def do_pick(self, _rest: str) -> None:
        QTimer.singleShot(0, self._when_dialog)  # the dialog runs its own loop: this answers once it shows
        self.window.pick()

    def do_release(self, _rest: str) -> None:
        QTimer.singleShot(0, self._when_dialog)
        self.window.release()

    def do_resume(self, _rest: str) -> None:
        # Answered once its list is read (the panel, connected first, has filled it).
        self.window.session.mine_loaded.connect(
            lambda _locks: say({"page": "resume"}), Qt.ConnectionType.SingleShotConnection
        )
        self.window.show_resume()

    def do_sheet(self, index: str) -> None:
        assert self.console is not None
        self.console.tabs.setCurrentIndex(int(index))
        title = self.console.tabs.tabText(int(index))
        self._when_idle(title)  # the tab's figures read: its refresh is under way (none for Item history)

    def _when_idle(self, title: str) -> None:
        assert self.console is not None
        if not self.console.dispatcher.busy:
            say({"sheet": title})
            return
        QTimer.singleShot(20, lambda: self._when_idle(title))

    def _when_dialog(self) -> None:
        dialog = QApplication.activeModalWidget()
        if isinstance(dialog, QDialog) and dialog.isVisible():
            dialog.activateWindow()
            say({"dialog": dialog.objectName()})
            return
        QTimer.singleShot(50, self._when_dialog)

    def do_console(self, _rest: str) -> None:
        wb = db_service.Workbench.open(self.config)
        for user in ("ann", "bob", "cid"):
            wb.queue("cases").claim_next(user, 1)
        self.console = supervisor.SupervisorWindow(wb, "sup", refresh_seconds=600, changes_seconds=0)
        self.console.show()
        self.console.activateWindow()
        self.console.refresh()
        self._when_board()

    def _when_board(self) -> None:
        assert self.console is not None
        rows = self.console.model.rowCount()
        if rows >= 3:
            self.console.board.selectRow(0)
            say({"console": rows})
            return
        QTimer.singleShot(50, self._when_board)

    def _active(self) -> QWidget:
        return QApplication.activeModalWidget() or QApplication.activeWindow() or self.window

    def do_focus(self, name: str) -> None:
        widget = self._active().findChild(QWidget, name)
        assert widget is not None, name
        widget.setFocus(Qt.FocusReason.TabFocusReason)
        say({"focus": name})

    def do_tab(self, _rest: str) -> None:
        focused = QApplication.focusWidget()
        assert focused is not None
        QTest.keyClick(focused.window().windowHandle(), Qt.Key.Key_Tab)  # as the window system delivers it
        # With the accessibility bus on, Qt first offers a key to the screen reader's key listeners over
        # D-Bus and acts on it when the answer comes back: a moment later, not within this call.
        self._when_moved(focused, 40)

    def _when_moved(self, before: QWidget, tries: int) -> None:
        now = QApplication.focusWidget()
        if now is before and tries > 0:
            QTimer.singleShot(50, lambda: self._when_moved(before, tries - 1))
            return
        say({"focus": (now.objectName() or type(now).__name__) if now is not None else None})

    def do_close(self, _rest: str) -> None:
        dialog = QApplication.activeModalWidget()
        if isinstance(dialog, QDialog):
            dialog.reject()
        elif self.console is not None:
            self.console.close()
        say({"closed": True})

    def do_quit(self, _rest: str) -> None:
        QApplication.quit()


def main() -> None:
    app = gui_app.application()
    with tempfile.TemporaryDirectory(prefix="workbench-a11y-") as home:
        driver = Driver(Path(home))
        app.exec()
        driver.window.session.stop()
        if driver.console is not None:
            driver.console.wb.close()
        driver.window.session.wb.close()


if __name__ == "__main__":
    main()
