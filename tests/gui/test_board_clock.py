"""The lock board kept current without reading it whole (issue 51): its times count down on the
console's own clock, a lock that simply expires shows as expired with no read, and an idle console
with the feed on reads the whole board only every `[app] board_every`, not at every refresh."""

from __future__ import annotations

import time
from typing import Any

import sqlalchemy as sa
from PySide6.QtCore import Qt

from tests import support
from tests.gui.test_supervisor import board_keys, console, refreshed  # noqa: F401 - console: the fixture
from workbench.db import service
from workbench.gui import app as gui_app
from workbench.gui import board_model, supervisor
from workbench.services import door


def _whole_reads(window: supervisor.SupervisorWindow) -> list[float]:
    """Counts the console's whole-board reads (Supervisor.board) from now on."""
    reads: list[float] = []
    board = window.service.board

    def counted(*args: Any, **kwargs: Any) -> Any:
        reads.append(time.monotonic())
        return board(*args, **kwargs)

    window.service.board = counted  # type: ignore[method-assign]
    return reads


def _heard_keys(window: supervisor.SupervisorWindow) -> set[str]:
    """The item keys the console's change feed has named from now on."""
    heard: set[str] = set()
    changes = window.service.changes

    def told(*args: Any, **kwargs: Any) -> Any:
        events = changes(*args, **kwargs)
        heard.update(str(e.key) for e in events)
        return events

    window.service.changes = told  # type: ignore[method-assign]
    return heard


def _idle(window: supervisor.SupervisorWindow) -> bool:
    """No board read under way, none asked to follow one, no look at the feed in flight."""
    return not window._refreshing and not window._again and not window._looking


def test_a_lock_that_expires_shows_as_expired_without_a_read(qtbot: Any, console: Any) -> None:
    """No change names an expiry: the board's clock, from the lock's expiry time, says it."""
    window = console(changes_seconds=1)
    heard = _heard_keys(window)
    qtbot.waitUntil(lambda: window._feed_ok, timeout=10_000)  # the feed starts before the claim: it names it
    key = door.engine(window.wb).queue("cases").claim_next("alice", 1)[0].lock.key
    # Until the console has answered the test's own claim: a feed event arriving during a whole read makes
    # another whole read follow it (the change may postdate that read), and that one was counted below.
    qtbot.waitUntil(lambda: str(key) in heard and _idle(window), timeout=10_000)
    lease = 15 * 60  # the demo queue's lock time
    support.age_lock(door.engine(window.wb), "cases", key, lease - 3)  # expires in three seconds (no event)
    refreshed(qtbot, window)
    assert not window._refreshing  # no read follows this one
    assert board_keys(window) == [str(key)]

    def left() -> str:
        return str(window.model.index(0, board_model.TIME_LEFT).data())

    assert not left().startswith("expired"), left()
    reads, before = _whole_reads(window), left()
    qtbot.waitUntil(lambda: left() != before, timeout=2_500)  # the time left counts down
    qtbot.waitUntil(lambda: left().startswith("expired"), timeout=6_000)
    colour = window.model.index(0, 0).data(Qt.ItemDataRole.BackgroundRole)
    assert colour is not None  # coloured as expired, too
    # A read asked for at the expiry runs on the dispatcher's thread, after this moment: one more tick of the
    # board's clock, then every call under way done.
    with qtbot.waitSignal(window._clock.timeout, timeout=2_500):  # its slot, connected first, has run
        pass
    assert window.dispatcher.wait(10_000)
    assert reads == []  # no whole-board read told it


def test_an_idle_console_reads_the_whole_board_rarely(qtbot: Any, demo_config: Any) -> None:
    """The console's refresh timer at its shortest (2 s, the spin box's least), the feed every half second:
    at two turns of that timer the old console read the whole board twice more (each several statements);
    now only the feed's looks run. The statements are counted on the console's own engine."""
    gui_app.application()
    wb = service.Workbench.open(demo_config)
    window = supervisor.SupervisorWindow(wb, "sup", refresh_seconds=2, changes_seconds=0.5)
    qtbot.addWidget(window)
    window.show()
    try:
        with service.Workbench.open(demo_config) as elsewhere:
            elsewhere.queue("cases").claim_next("alice", 2)
        qtbot.waitUntil(lambda: len(board_keys(window)) == 2, timeout=10_000)  # the first, whole read
        qtbot.waitUntil(lambda: window._feed_ok and _idle(window), timeout=10_000)  # the feed's first look is in
        statements: list[str] = []
        sa.event.listen(wb.engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
        reads, looks = _whole_reads(window), []
        changes = window.service.changes

        def look() -> Any:
            looks.append(time.monotonic())
            return changes()

        window.service.changes = look  # type: ignore[method-assign]
        turns: list[float] = []
        window._timer.timeout.connect(lambda: turns.append(time.monotonic()))
        # Two turns of the refresh timer (2-4 s of idle, not a fixed 4.5 s), and six of the feed's looks; a
        # read a turn asks for is done once no refresh is under way.
        qtbot.waitUntil(lambda: len(turns) >= 2 and len(looks) >= 6 and not window._refreshing, timeout=10_000)
        assert reads == [], f"{len(reads)} whole-board reads in {len(turns)} turns of the refresh timer"
        assert len(looks) >= 6  # the feed kept looking
        # A minute of idle: the looks' statements, and one whole read at most (board_every, 60 s).
        per_look = len(statements) / len(looks)
        assert per_look <= 3, f"{len(statements)} statements for {len(looks)} looks: {statements[:8]}"
        assert len(board_keys(window)) == 2
        # Another user's claim and release: on the board within two seconds, from the feed alone.
        with service.Workbench.open(demo_config) as elsewhere:
            key = elsewhere.queue("cases").claim_next("carol", 1)[0].lock.key
            qtbot.waitUntil(lambda: str(key) in board_keys(window), timeout=2_500)
            lock = next(k for k in elsewhere.queue("cases").mine("carol") if k.key == key)
            elsewhere.queue("cases").release("carol", key, lock.token, "not mine")
            qtbot.waitUntil(lambda: str(key) not in board_keys(window), timeout=2_500)
        assert reads == []
    finally:
        window.close()
        window.dispatcher.wait(10_000)
        wb.close()
