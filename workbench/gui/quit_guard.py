"""Closing the operator window: give back an item the operator has not touched, ask about a touched one."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QMainWindow, QMessageBox

from workbench.core import errors, models
from workbench.gui import times

log = logging.getLogger("workbench.gui")

# Release reasons as the audit trail records them: data that supervisors filter and count, the
# same for every operator, so not translated (like the reasons offered by the Release dialog).
CLOSED_UNTOUCHED = "closed without changes"
RELEASED_ON_CLOSE = "released when closing"
LEFT_UNTOUCHED = "left without changes"  # Next item, Pick… or another queue with an untouched item open
LEFT_RELEASED = "released when leaving"  # ... with a touched one, and the operator chose to give it back
WAIT_SECONDS = 5.0  # at most this long for the database before the window closes anyway
NOTICE_SECONDS = 15.0  # a notice shown while closing goes away on its own: quitting never hangs on it


class QuitGuard(QObject):
    """Decides, when the window is asked to close, what happens to the item on the form.

    Nothing open: close at once. Opened and not touched (no edit, no save, no restored draft, not
    resumed from an earlier session): release it with the reason CLOSED_UNTOUCHED, so it does not
    sit locked for the whole lock duration, then close. Touched: ask (keep it locked / release it /
    cancel). The release runs off the GUI thread; after WAIT_SECONDS without an answer the window
    closes anyway and says the lock runs out on its own.
    """

    def __init__(
        self, window: QMainWindow, sess: Any, has_edits: Callable[[], bool], wait_seconds: float = WAIT_SECONDS
    ) -> None:
        super().__init__(window)
        self.window, self.session, self.has_edits = window, sess, has_edits
        self.state = "idle"  # idle | settling | asking | releasing | done
        self.question: QMessageBox | None = None
        self.notice: QMessageBox | None = None
        self._touched = False
        self._timed_out = False
        self._deadline = QTimer(self)
        self._deadline.setSingleShot(True)
        self._deadline.setInterval(int(wait_seconds * 1000))
        self._deadline.timeout.connect(self._on_deadline)
        sess.claimed.connect(self._on_claimed)
        sess.saved.connect(self._on_saved)
        sess.dispatcher.busy_changed.connect(self._on_busy)

    def _on_claimed(self, claim: models.Claim, draft: Any) -> None:
        # Resumed from before, or with a draft laid over it: the operator has worked on it.
        self._touched = claim.resumed or draft is not None

    def _on_saved(self, *_: Any) -> None:
        self._touched = True

    def let_go(self) -> None:
        """Close without asking or releasing (another connection replaces this window; the user agreed)."""
        self.state = "done"

    def may_close(self) -> bool:
        """Called by closeEvent: True to close now; False while the guard finishes (it closes the window)."""
        if self.state == "done":
            return True
        if self.state != "idle":
            return False  # already on it: a second Ctrl+Q must not start a second release
        dispatcher = self.session.dispatcher
        if self.session.current is None and not dispatcher.busy:
            return True
        # A call in flight may be the claim of the next item (after Complete): wait for it, so the
        # item it brings is released too instead of staying locked behind a closed window.
        self.state, self._timed_out = "settling", False
        self._deadline.start()
        if not dispatcher.busy:
            QTimer.singleShot(0, self, self._decide)  # dropped if the window is deleted first
        return False

    def touched(self) -> bool:
        """Has the operator worked on the open item (an edit, a save, a restored draft)?"""
        return self._touched or self.has_edits()

    def _on_busy(self, busy: bool) -> None:
        if self.state == "settling" and not busy:
            # Queued: the dispatcher says "not busy" just before it hands over the result, so
            # the claim this waited for is on the form only after this event.
            QTimer.singleShot(0, self, self._decide)  # dropped if the window is deleted first

    def _decide(self) -> None:
        if self.state != "settling":
            return
        cur = self.session.current
        if cur is None:
            self._finish()
        elif self._touched or self.has_edits():
            self._ask(cur)
        elif self._timed_out:
            self._finish(
                self._runs_out(
                    cur,
                    self.tr("The database did not answer within {0:.0f} s.").format(self._deadline.interval() / 1000),
                )
            )
        else:
            self._release(cur, CLOSED_UNTOUCHED, discard_draft=False)

    def _title(self, cur: Any) -> str:
        return f"{self.session.config.queues[cur.queue].title} {cur.lock.key}"

    # -- asking --------------------------------------------------------------------------------------

    def _ask(self, cur: Any) -> None:
        self._deadline.stop()  # the operator takes the time they need to answer
        self.state = "asking"
        edits = self.has_edits()
        text = self.tr("You are working on {0}.").format(self._title(cur))
        text += "\n\n" + self.tr("Keep it locked: it stays yours until {0}; {1}").format(
            times.clock(cur.lock.expires_at),
            self.tr("your unsaved edits wait in your unfinished items.")
            if edits
            else self.tr("then the lock runs out on its own."),
        )
        text += "\n\n" + self.tr("Release it: it goes back to the queue now{0}.").format(
            self.tr(", and your unsaved edits are discarded") if edits else ""
        )
        box = QMessageBox(
            QMessageBox.Icon.Question,
            self.tr("Close workbench?"),
            text,
            QMessageBox.StandardButton.NoButton,
            self.window,
        )
        box.setObjectName("quit_dialog")
        keep = box.addButton(self.tr("&Keep it locked and close"), QMessageBox.ButtonRole.AcceptRole)
        keep.setObjectName("quit_keep")
        release = box.addButton(self.tr("&Release it and close"), QMessageBox.ButtonRole.DestructiveRole)
        release.setObjectName("quit_release")
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        cancel.setObjectName("quit_cancel")
        box.setDefaultButton(keep)
        box.setEscapeButton(cancel)

        def answered(_result: int) -> None:
            self.question = None
            clicked = box.clickedButton()
            if clicked is keep:
                self._finish()
            elif clicked is release:
                self._deadline.start()
                self._release(cur, RELEASED_ON_CLOSE, discard_draft=True)
            else:
                self.state = "idle"  # the window stays, the item with it

        box.finished.connect(answered)
        self.question = box
        box.open()

    # -- releasing -----------------------------------------------------------------------------------

    def _release(self, cur: Any, reason: str, *, discard_draft: bool) -> None:
        self.state = "releasing"
        s = self.session
        s.stop()  # no more checks or retries from this window
        self.window.statusBar().showMessage(
            self.tr("Giving {0} back to the queue before closing…").format(self._title(cur))
        )
        lock = cur.lock
        attempts = 0  # releases sent: one cut by a lost connection is sent once more

        def done(_: Any) -> None:
            if self.state != "releasing":
                return  # too late: the window has closed already
            if discard_draft and s.journal is not None:
                s.journal.discard(s.database, cur.queue, lock.key)
            self._finish()

        def failed(exc: BaseException) -> None:
            if self.state != "releasing":
                return
            if isinstance(exc, errors.LockLost):
                self._finish()  # not held any more (expired, taken): nothing stays locked to us
            elif isinstance(exc, errors.DatabaseUnavailable) and attempts <= s.dispatcher.pool.maxThreadCount():
                # The connection a failover or a server restart cut is dropped by this failure;
                # the next attempt goes out on a new one (within the same deadline). Each of the
                # dispatcher's threads holds a connection of its own for releases and Completes, and
                # after a failover every one of them is dead: the attempt may land on each in turn.
                # A release that did go through before the cut is then LockLost, which is fine.
                release()
            else:
                self._finish(self._runs_out(cur, self.tr("It could not be released ({0}).").format(exc)))

        def release() -> None:
            nonlocal attempts
            attempts += 1
            s.dispatcher.call(lambda: s.operator.release(lock, reason), done, failed)

        release()

    def _on_deadline(self) -> None:
        if self.state == "settling":
            self._timed_out = True
            self._decide()
        elif self.state == "releasing":
            cur = self.session.current
            why = self.tr("The database did not answer within {0:.0f} s.").format(self._deadline.interval() / 1000)
            self._finish(self._runs_out(cur, why) if cur is not None else why)

    def _runs_out(self, cur: Any, why: str) -> str:
        return (
            why
            + " "
            + self.tr(
                "{0} stays locked to you until {1}; then the lock runs out on its own and "
                "the item goes back to the queue."
            ).format(self._title(cur), times.clock(cur.lock.expires_at))
        )

    # -- closing -------------------------------------------------------------------------------------

    def _finish(self, notice: str | None = None) -> None:
        self._deadline.stop()
        self.state = "done"
        self.session.stop()
        if notice is None:
            QTimer.singleShot(0, self.window.close)
            return
        log.warning("closing: %s", notice)
        box = QMessageBox(
            QMessageBox.Icon.Information,
            self.tr("Closing workbench"),
            notice,
            QMessageBox.StandardButton.Ok,
            self.window,
        )
        box.setObjectName("quit_notice")
        box.finished.connect(lambda _result: QTimer.singleShot(0, self.window.close))
        QTimer.singleShot(int(NOTICE_SECONDS * 1000), box.accept)
        self.notice = box
        box.open()
