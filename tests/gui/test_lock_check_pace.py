"""The lock check's pace (issue 51): while the window's change feed is live it checks the lock every
`backstop_every`, not every `check_every` (the feed tells what workbench does); with the feed off, or its
relay lost, every `check_every` again; a change made outside workbench is still said at the backstop's pace."""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

import pytest
import sqlalchemy as sa

from tests.gui.test_change_feed import FEED, _claim
from tests.test_relay import RelayThread, relays  # noqa: F401  (the fixture: relays stopped at the end)
from workbench.db import service
from workbench.gui import main_window
from workbench.services import door

# The lock check each second without the feed, each minute with it: a few seconds tell which pace runs.
PACED = dataclasses.replace(FEED, check_interval=1.0, backstop_interval=60.0)
QUIET_MS = 2_000  # no check in twice check_every (1 s, the least the window takes): the backstop's pace
WATCH_MS = 3_500  # checks at each second's pace: the second (or third) is in before this


def _count_checks(window: main_window.MainWindow) -> list[Any]:
    """The window's lock checks from now on (each one's lock), counted where the session calls the database."""
    op = window.session.operator
    checks: list[Any] = []
    counted = threading.Lock()
    check = op.check

    def counting(lock: Any) -> Any:
        with counted:
            checks.append(lock)
        return check(lock)

    op.check = counting  # type: ignore[method-assign]
    return checks


def test_a_live_feed_checks_at_the_backstop_pace(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    """The window polls the feed every second: no lock check in 2 s (check_every 1 s, backstop a minute)."""
    window = open_window(demo_config, settings=PACED)
    qtbot.waitUntil(window.session.feed_live, timeout=5_000)
    checks = _count_checks(window)
    _claim(qtbot, window)
    qtbot.wait(QUIET_MS)
    assert checks == [] and window.session.current is not None


def test_without_the_feed_it_checks_every_check_every(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    """The control: the feed off (changes_every 0), the same window checks each second."""
    window = open_window(demo_config, settings=dataclasses.replace(PACED, changes_interval=0.0))
    assert not window.session.feed_live()
    checks = _count_checks(window)
    _claim(qtbot, window)
    qtbot.waitUntil(lambda: len(checks) >= 2, timeout=WATCH_MS)


def test_a_lost_relay_brings_back_check_every(
    qtbot: Any, open_window: Any, demo_config: Any, relays: list[RelayThread]
) -> None:
    """Woken by a relay: checks at the backstop's pace; the relay gone (the window polls meanwhile, its path
    in doubt): each second again, and the first at once, as more than check_every has passed."""
    wb = service.Workbench.open(demo_config)
    try:
        relays.append(RelayThread(wb))
        window = open_window(demo_config, settings=dataclasses.replace(PACED, relay=relays[-1].address))
        qtbot.waitUntil(lambda: window.session.relay.connected is True, timeout=10_000)
        checks = _count_checks(window)
        _claim(qtbot, window)
        qtbot.wait(QUIET_MS)
        assert checks == [] and window.session.feed_live()
        with qtbot.waitSignal(window.session.relay_changed, timeout=5_000):
            relays[-1].stop()
        qtbot.waitUntil(lambda: len(checks) >= 3, timeout=WATCH_MS)
        assert not window.session.feed_live(), checks
    finally:
        wb.close()


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_a_change_outside_workbench_is_said_at_the_backstop_pace(
    qtbot: Any, open_window: Any, demo_config: Any
) -> None:
    """Another program gives the item to bob in the table itself: the trail never hears of it, so the feed
    says nothing; the lock check, every 3 s with the feed live, does (not within check_every: no check yet)."""
    window = open_window(demo_config, settings=dataclasses.replace(PACED, backstop_interval=3.0))
    qtbot.waitUntil(window.session.feed_live, timeout=5_000)
    claim = _claim(qtbot, window)
    q = door.engine(window.session.wb).queue("cases").q
    with door.engine(window.session.wb).engine.begin() as conn:
        conn.execute(sa.update(q.table).where(q.key == claim.lock.key).values({q.user.name: "bob"}))
    lost: list[Any] = []
    window.session.lock_lost.connect(lost.append)
    qtbot.wait(1_500)
    assert lost == []  # at check_every (1 s) it would have been said by now
    qtbot.waitUntil(lambda: lost != [], timeout=4_000)
    assert lost[0].holder == "bob"
