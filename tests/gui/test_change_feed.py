"""Every change seen within two seconds (issue 51): a real window learns from the audit trail's change
feed, not from its lock check, that a supervisor took its item away or handed it one, on SQLite and
PostgreSQL (the lock check is set to a minute here, so only the feed can tell in time); the supervisor's
board reloads on a change within two seconds with its own timer ten minutes away."""

from __future__ import annotations

import dataclasses
import statistics
import time
from typing import Any

from PySide6.QtCore import Qt

from tests.gui.conftest import FAST, with_queue
from tests.gui.test_operator import _age_lock
from tests.gui.test_supervisor import board_keys, console, refreshed  # noqa: F401 - console: the fixture
from workbench.db import service
from workbench.gui import main_window

# The lock check far away: whatever the window learns within seconds, the feed told it.
FEED = dataclasses.replace(FAST, check_interval=60.0, changes_interval=1.0)
SOON_MS = 2_500  # "within two seconds" of the commit, plus the event loop's turn


def _claim(qtbot: Any, window: main_window.MainWindow) -> Any:
    with qtbot.waitSignal(window.session.claimed, timeout=10_000) as signal:
        qtbot.mouseClick(window.next_button, Qt.MouseButton.LeftButton)
    return signal.args[0]


def _supervisor(config: Any) -> service.Workbench:
    """The supervisor's own connection, as from another computer."""
    return service.Workbench.open(config)


def test_a_force_release_reaches_the_holder_within_two_seconds(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    """Three force-releases, each timed from the supervisor's commit to the window's announcement: the
    median within two seconds (issue 51), none later than the wait allows."""
    window = open_window(demo_config, settings=FEED)
    took = []
    with _supervisor(demo_config) as sue:
        for turn in range(3):
            claim = _claim(qtbot, window)
            # The feed's first look (at start) and one more have run: it is past its start. Later turns start
            # at the look that told the loss: half its interval on, the mean moment a commit falls at (at once,
            # the worst, ~1 s each: the median's margin halved).
            qtbot.wait(1_200 if turn == 0 else 500)
            sue.supervision("cases").force_release("sue", claim.lock.key, "customer escalated")
            committed = time.monotonic()
            with qtbot.waitSignal(window.session.lock_lost, timeout=SOON_MS) as signal:
                pass
            took.append(time.monotonic() - committed)
            assert signal.args[0].by == "sue" and "customer escalated" in window.lost_banner.label.text()
    assert statistics.median(took) < 2.0, took


def test_without_the_feed_only_the_lock_check_tells(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    """The control: with the feed off the same window hears nothing for seconds (its check is a minute away)."""
    window = open_window(demo_config, settings=dataclasses.replace(FEED, changes_interval=0.0))
    claim = _claim(qtbot, window)
    with _supervisor(demo_config) as sue:
        sue.supervision("cases").force_release("sue", claim.lock.key, "customer escalated")
    lost: list[Any] = []
    window.session.lock_lost.connect(lost.append)
    qtbot.wait(SOON_MS + 500)
    assert lost == [] and window.session.current is not None


def test_a_takeover_after_expiry_reaches_the_holder(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    config = with_queue(demo_config, "cases", max_locks_per_user=0)
    window = open_window(config, settings=FEED)
    claim = _claim(qtbot, window)
    qtbot.wait(1_200)
    _age_lock(window, "cases", claim.lock.key, 16 * 60)  # the window still counts minutes left: it has not looked
    with _supervisor(config) as other:
        other.queue("cases").claim("bob", claim.lock.key)  # the trail records alice's lock as expired, taken by bob
        with qtbot.waitSignal(window.session.lock_lost, timeout=SOON_MS) as signal:
            pass
    assert signal.args[0].holder == "bob" and "bob" in window.lost_banner.label.text()


def test_the_new_holder_is_told_at_once_and_can_open_it(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    alice = open_window(demo_config, settings=FEED)
    claim = _claim(qtbot, alice)
    bob = open_window(demo_config, user="bob", settings=FEED)
    qtbot.wait(1_200)
    with _supervisor(demo_config) as sue:
        sue.supervision("cases").reassign("sue", claim.lock.key, "bob", "bob knows this customer")
        committed = time.monotonic()
        with qtbot.waitSignal(bob.session.handed_over, timeout=SOON_MS) as signal:
            pass
    took = time.monotonic() - committed
    assert took < SOON_MS / 1000
    event = signal.args[0]
    assert (event.queue, event.key, event.actor, event.owner) == ("cases", str(claim.lock.key), "sue", "bob")
    text = bob.handed_banner.label.text()
    assert bob.handed_banner.isVisible() and "sue" in text and "alice" in text and str(claim.lock.key) in text
    # Its lock is bob's: Open it resumes it in the form.
    qtbot.waitUntil(lambda: any(str(e.key) == str(claim.lock.key) for e in bob.resume_panel.entries()), timeout=5000)
    with qtbot.waitSignal(bob.session.claimed, timeout=10_000) as opened:
        qtbot.mouseClick(bob.handed_open_button, Qt.MouseButton.LeftButton)
    assert opened.args[0].resumed and opened.args[0].lock.owner == "bob"
    assert not bob.handed_banner.isVisible()


def test_the_board_shows_a_claim_and_a_release_within_two_seconds(qtbot: Any, console: Any) -> None:
    """The console's timer is ten minutes away: only the feed reloads its board in time."""
    window = console(changes_seconds=1)
    refreshed(qtbot, window)
    assert board_keys(window) == []
    qtbot.waitUntil(lambda: window._feed_ok, timeout=10_000)  # the feed's first look has marked where it starts
    with service.Workbench.open(window.wb.config) as elsewhere:
        key = elsewhere.queue("cases").claim_next("alice", 1)[0].lock.key
        qtbot.waitUntil(lambda: board_keys(window) == [str(key)], timeout=SOON_MS)
        lock = elsewhere.queue("cases").mine("alice")[0]
        elsewhere.queue("cases").release("alice", key, lock.token, "not mine")
        qtbot.waitUntil(lambda: board_keys(window) == [], timeout=SOON_MS)
