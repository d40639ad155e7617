"""The change relay in a real window (issue 51): with `[app] relay` the window looks at the feed only when
woken (its own timer at `backstop_every`), and still hears a force-release within two seconds, on SQLite, PostgreSQL
and through PgBouncer; the relay gone, it polls at once and still hears within two seconds; a relay
started again is reconnected to. The console's board, woken the same way, shows a claim within two seconds."""

from __future__ import annotations

import contextlib
import dataclasses
import statistics
import threading
import time
from concurrent import futures
from typing import Any

import pytest
import sqlalchemy as sa
from PySide6.QtCore import QTimer

from tests.gui.test_change_feed import FEED, SOON_MS, _claim, _supervisor
from tests.gui.test_supervisor import board_keys, refreshed
from tests.pooled import PooledEnv
from tests.test_relay import RelayThread, relays  # noqa: F401  (the fixture: relays stopped at the end)
from workbench.db import service
from workbench.gui import app as gui_app
from workbench.gui import dispatch, relay_link, supervisor
from workbench.services import door, relay_client


@pytest.fixture
def reconnect_ms(monkeypatch: pytest.MonkeyPatch) -> int:
    """A lost relay or listener tried again every second here (RECONNECT_SECONDS, 5 s in the product: the same
    retry, sooner); the milliseconds a reconnect may take: the interval, and the event loop's turn."""
    monkeypatch.setattr(relay_link, "RECONNECT_SECONDS", 1.0)
    return int(relay_link.RECONNECT_SECONDS * 1000) + 3_000


def _window_on_relay(qtbot: Any, open_window: Any, config: Any, relays: list[RelayThread]) -> Any:
    wb = service.Workbench.open(config)
    relays.append(RelayThread(wb))
    relays[-1].wb = wb  # type: ignore[attr-defined]
    window = open_window(config, settings=dataclasses.replace(FEED, relay=relays[-1].address))
    qtbot.waitUntil(lambda: window.session.relay.connected is True, timeout=10_000)
    # Woken, not polling: the window's own look is the safety one now, every backstop_every.
    assert window.session._changes.interval() == int(window.session.settings.backstop_interval * 1000)
    assert window.relay_label.isVisible() and "relay" in window.relay_label.text()
    return window


def _force_release_heard(qtbot: Any, window: Any, config: Any) -> float:
    """Seconds from the commit of a supervisor's force-release of the window's item to the window saying so.

    Both ends in the product's terms. The supervisor acts on a thread of its own, as from another computer:
    made on the window's thread, the call kept the window from hearing anything until it returned, up to two
    seconds after its commit under load (the relay had long read the change). The end is the window's banner
    shown, not the moment the test got round to looking (after closing the supervisor's connection)."""
    claim = _claim(qtbot, window)
    qtbot.wait(300)  # the relay's read of the claim has gone by (it does not wake its own holder)
    commits: list[float] = []
    told: list[float] = []

    def said(_lost: Any) -> None:  # connected after the window's own slot: its banner is shown by now
        told.append(time.monotonic())

    window.session.lock_lost.connect(said)
    try:
        with _supervisor(config) as sue, futures.ThreadPoolExecutor(1) as elsewhere:
            cases = sue.supervision("cases")  # its own reads done: the force-release's is the one commit below
            sa.event.listen(door.engine(sue).engine, "commit", lambda _conn: commits.append(time.monotonic()))
            with qtbot.waitSignal(window.session.lock_lost, timeout=10_000) as signal:
                done = elsewhere.submit(cases.force_release, "sue", claim.lock.key, "customer escalated")
            done.result()
    finally:
        window.session.lock_lost.disconnect(said)
    assert signal.args[0].by == "sue" and "customer escalated" in window.lost_banner.label.text()
    assert len(commits) == 1 and len(told) == 1, (commits, told)
    return told[0] - commits[0]


def _woken_window_hears(qtbot: Any, open_window: Any, config: Any, relays: list[RelayThread]) -> None:
    window = _window_on_relay(qtbot, open_window, config, relays)
    took = [_force_release_heard(qtbot, window, config) for _ in range(3)]
    assert statistics.median(took) < 2.0 and max(took) < SOON_MS / 1000, took
    safety_ms = int(window.session.settings.backstop_interval * 1000)
    assert window.session._changes.interval() == safety_ms  # never fell back
    relays[-1].wb.close()  # type: ignore[attr-defined]


def test_a_woken_window_hears_a_force_release_within_two_seconds(
    qtbot: Any, open_window: Any, demo_config: Any, relays: list[RelayThread]
) -> None:
    _woken_window_hears(qtbot, open_window, demo_config, relays)


def test_a_woken_window_through_pgbouncer(
    qtbot: Any, open_window: Any, pooled_env: PooledEnv, relays: list[RelayThread]
) -> None:
    pooled_env.demo(case_rows=30, import_rows=20)
    _woken_window_hears(qtbot, open_window, pooled_env.demo_config(), relays)


def test_a_killed_relay_is_fallen_back_from_and_a_restarted_one_reconnected(
    qtbot: Any, open_window: Any, demo_config: Any, relays: list[RelayThread], reconnect_ms: int
) -> None:
    window = _window_on_relay(qtbot, open_window, demo_config, relays)
    port = relays[0].port
    with qtbot.waitSignal(window.session.relay_changed, timeout=SOON_MS) as lost:
        relays[0].stop()  # every connection closed, as when its process is killed
    assert lost.args == [False]
    assert window.session._changes.interval() == int(FEED.changes_interval * 1000)  # polling again, at once
    assert "unreachable" in window.relay_label.text()
    assert _force_release_heard(qtbot, window, demo_config) < 2.0
    # Started again on its address: the window finds it within its reconnect interval and slows down again.
    relays.append(RelayThread(relays[0].wb, port=port))  # type: ignore[attr-defined]
    with qtbot.waitSignal(window.session.relay_changed, timeout=reconnect_ms) as back:
        pass
    assert back.args == [True]
    assert window.session._changes.interval() == int(window.session.settings.backstop_interval * 1000)
    assert _force_release_heard(qtbot, window, demo_config) < 2.0
    relays[0].wb.close()  # type: ignore[attr-defined]


def test_the_console_woken_by_the_relay_shows_a_claim_within_two_seconds(
    qtbot: Any, demo_config: Any, relays: list[RelayThread]
) -> None:
    wb = service.Workbench.open(demo_config)
    relays.append(RelayThread(wb))
    config = dataclasses.replace(demo_config, app=dataclasses.replace(demo_config.app, relay=relays[0].address))
    gui_app.application()
    console_wb = service.Workbench.open(config)
    window = supervisor.SupervisorWindow(console_wb, "sup", refresh_seconds=600, changes_seconds=1)
    qtbot.addWidget(window)
    window.show()
    try:
        assert window.relay is not None
        qtbot.waitUntil(lambda: window.relay is not None and window.relay.connected is True, timeout=10_000)
        # The console keeps its own look every changes_every (woken only, its board was later than polling's).
        assert window._changes.interval() == 1000 and window.relay.least_gap == 0.5
        refreshed(qtbot, window)
        assert board_keys(window) == []
        key = wb.queue("cases").claim_next("alice", 1)[0].lock.key
        qtbot.waitUntil(lambda: board_keys(window) == [str(key)], timeout=SOON_MS)
    finally:
        window.close()
        window.dispatcher.wait(10_000)
        console_wb.close()
        wb.close()


class _SilentRelay:
    """A relay that greets and says it is alive, and never wakes anyone: a liar by silence."""

    def __init__(self) -> None:
        import socket
        import threading

        self.server = socket.create_server(("127.0.0.1", 0))
        self.address = f"127.0.0.1:{self.server.getsockname()[1]}"
        self.conns: list[Any] = []
        self._stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        from workbench.services import relay_client

        self.server.settimeout(0.2)
        while not self._stop.is_set():
            try:
                conn, _ = self.server.accept()
            except OSError:
                pass
            else:
                conn.recv(4096)
                conn.sendall(relay_client.encode({"ready": 0}))
                self.conns.append(conn)
            for conn in self.conns:
                with contextlib.suppress(OSError):
                    conn.sendall(relay_client.encode({"beat": 0}))

    def close(self) -> None:
        self._stop.set()
        for conn in self.conns:
            conn.close()
        self.server.close()


def test_a_silent_relay_hides_no_lost_lock(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    """Connected to a relay that never wakes it, the window's own safety look at the feed and its lock check
    (every backstop_every, a minute; 3 s here) still say the lock is gone. A silent relay looks like a live
    feed, so neither runs at check_every: backstop_every is what bounds the silence, and it tells."""
    silent = _SilentRelay()
    try:
        settings = dataclasses.replace(FEED, check_interval=1.0, backstop_interval=3.0, relay=silent.address)
        window = open_window(demo_config, settings=settings)
        qtbot.waitUntil(lambda: window.session.relay.connected is True, timeout=10_000)
        claim = _claim(qtbot, window)
        assert window.session.feed_live() and window.session._check_interval() == 3.0
        assert window.session._changes.interval() == 3_000  # the safety look at the same pace
        with _supervisor(demo_config) as sue:
            sue.supervision("cases").force_release("sue", claim.lock.key, "customer escalated")
            with qtbot.waitSignal(window.session.lock_lost, timeout=6_000) as signal:
                pass
        assert signal.args[0].by == "sue"
        assert window.session.relay.connected is True  # the relay was never doubted: the backstop told
    finally:
        silent.close()


class _OneWake:
    """A relay client that wakes once, then waits until closed."""

    def __init__(self) -> None:
        self.closed = threading.Event()
        self.woke = False

    def connect(self) -> int:
        return 0

    def wait(self, timeout: float) -> int | None:
        if not self.woke:
            self.woke = True
            return 7
        self.closed.wait(timeout)
        raise relay_client.RelayUnavailable("closed")

    def close(self) -> None:
        self.closed.set()


def test_a_wake_up_during_a_look_is_looked_at_after_it(qtbot: Any) -> None:
    """A look in flight may have read before the change that woke the window: the wake-up's look follows
    it (dropped, the change waited for the safety look)."""
    calls: list[bool] = []

    def look() -> bool:
        started = len(calls) != 1  # the wake-up's look finds the connection's look still in flight
        calls.append(started)
        return started

    gui_app.application()
    dispatcher = dispatch.Dispatcher()
    client = _OneWake()
    link = relay_link.RelayLink(dispatcher, client, QTimer(), look, 1.0, least_gap=0.1, safety_seconds=30.0)
    try:
        link.start()
        qtbot.waitUntil(lambda: len(calls) >= 3, timeout=2_000)
        assert calls[:3] == [True, False, True]
    finally:
        link.stop()
        dispatcher.wait()


# -- no relay, PostgreSQL reached directly: the database's own notice wakes the window ----------------------

# Polling every 5 s: a window that hears within a fraction of a second was woken by the notice.
SLOW_FEED = dataclasses.replace(FEED, changes_interval=5.0)


def _kill_listeners(config: Any) -> int:
    """Terminate every session LISTENing in the config's database (as a server restart or a cut would)."""
    import sqlalchemy as sa

    engine = sa.create_engine(config.database.url)
    try:
        with engine.connect() as conn:
            return len(
                conn.execute(
                    sa.text(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                        "WHERE datname = current_database() AND application_name = 'workbench listen'"
                    )
                ).all()
            )
    finally:
        engine.dispose()


@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_a_window_without_a_relay_wakes_on_the_database_notice(
    qtbot: Any, open_window: Any, demo_config: Any, reconnect_ms: int
) -> None:
    """No relay, PostgreSQL direct: the window listens on a connection of its own, its own look slowed to
    the safety one (backstop_every); a force-release is heard within a fraction of its old 5 s interval (median of 3).
    The listening connection killed: it polls every 5 s at once, and listens again within its reconnect."""
    window = open_window(demo_config, settings=SLOW_FEED)
    assert window.session.relay is None
    qtbot.waitUntil(
        lambda: window.session.notices is not None and window.session.notices.connected is True, timeout=10_000
    )
    assert window.session._changes.interval() == int(window.session.settings.backstop_interval * 1000)
    assert not window.relay_label.isVisible()  # no relay to speak of
    took = [_force_release_heard(qtbot, window, demo_config) for _ in range(3)]
    assert statistics.median(took) < 0.5, took
    print(f"window told by the database's notice: {sorted(took)}")
    with qtbot.waitSignal(window.session.notices.state_changed, timeout=SOON_MS) as lost:
        assert _kill_listeners(demo_config) == 1
    assert lost.args == [False]
    assert window.session._changes.interval() == int(SLOW_FEED.changes_interval * 1000)  # polling, at once
    with qtbot.waitSignal(window.session.notices.state_changed, timeout=reconnect_ms) as back:
        pass
    assert back.args == [True]
    assert window.session._changes.interval() == int(window.session.settings.backstop_interval * 1000)
    assert _force_release_heard(qtbot, window, demo_config) < 0.5


def test_a_window_through_pgbouncer_polls(qtbot: Any, open_window: Any, pooled_env: PooledEnv) -> None:
    """Through PgBouncer's transaction pooling there is no session to LISTEN on: the window polls, as before."""
    pooled_env.demo(case_rows=30, import_rows=20)
    config = pooled_env.demo_config()
    window = open_window(config, settings=FEED)
    qtbot.waitUntil(window.session._changes.isActive, timeout=10_000)
    assert window.session.notices is None
    assert window.session._changes.interval() == int(FEED.changes_interval * 1000)
    assert _force_release_heard(qtbot, window, config) < 2.0


@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_the_console_without_a_relay_is_woken_by_the_database_notice(qtbot: Any, demo_config: Any) -> None:
    """No relay, PostgreSQL direct: the console keeps its own look every changes_every and the database's
    notice of a change in its queues (someone's act on another's item: the users' own claims send none)
    makes a look sooner. Its own timer stopped here, only the notice can take a force-released lock off its
    board: within a second."""
    gui_app.application()
    wb = service.Workbench.open(demo_config)
    console_wb = service.Workbench.open(demo_config)
    window = supervisor.SupervisorWindow(console_wb, "sup", refresh_seconds=600, changes_seconds=2)
    qtbot.addWidget(window)
    window.show()
    try:
        assert window.relay is None and window.notices is not None
        qtbot.waitUntil(lambda: window.notices is not None and window.notices.connected is True, timeout=10_000)
        assert window._changes.interval() == 2000  # it keeps its own look, as with a relay
        assert not window.relay_label.isVisible()
        refreshed(qtbot, window)
        key = wb.queue("cases").claim_next("alice", 1)[0].lock.key
        qtbot.waitUntil(lambda: board_keys(window) == [str(key)], timeout=10_000)  # by its own look
        window._changes.stop()  # no look but those a notice asks for
        qtbot.wait(1_200)  # past the least gap (half the interval) after its last look
        wb.supervision("cases").force_release("sue", key, "customer called")
        released = time.monotonic()
        qtbot.waitUntil(lambda: board_keys(window) == [], timeout=SOON_MS)
        print(f"console shows the force-release after {time.monotonic() - released:.3f} s")
        assert time.monotonic() - released < 1.0
    finally:
        window.close()
        window.dispatcher.wait(10_000)
        console_wb.close()
        wb.close()


def test_a_window_takes_the_relays_start_page_figures(
    qtbot: Any, open_window: Any, demo_config: Any, relays: list[RelayThread], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The window hands the relay's figures to its operator (issue 51): once its own count is older than
    counts_every, the relay's next figures make the start page's count again without a read of its own."""
    every = 2  # [app] counts_every: short, so the window's own count (its opening's) goes stale here
    config = dataclasses.replace(demo_config, app=dataclasses.replace(demo_config.app, counts_every=every))
    wb = service.Workbench.open(config)
    relays.append(RelayThread(wb, counting=True))
    window = open_window(config, settings=dataclasses.replace(FEED, relay=relays[-1].address))
    qtbot.waitUntil(lambda: window.session.relay.connected is True, timeout=10_000)
    operator = window.session.operator
    taken: list[Any] = []
    keep = operator.take_figures
    monkeypatch.setattr(operator, "take_figures", lambda figures: (taken.append(figures), keep(figures)))
    qtbot.wait(int((every + 0.2) * 1000))  # the window's own count is stale now: the start page would read
    taken.clear()
    qtbot.waitUntil(lambda: bool(taken), timeout=3 * every * 1000)  # sent as the relay's own figures go stale
    assert set(taken[-1]) == set(config.queues)
    begun: list[object] = []
    sa.event.listen(door.engine(operator.database).engine, "begin", begun.append)
    counts = {c.queue: c.waiting for c in operator.queue_counts()}
    assert begun == []  # the relay's figures, no read of the window's own
    assert counts == {queue: figures[0] for queue, (figures, _age) in taken[-1].items()}
    wb.close()
