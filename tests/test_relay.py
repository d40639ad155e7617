"""The change relay (issue 51): one reader of the audit trail wakes the windows a change concerns, on SQLite,
PostgreSQL and through PgBouncer; it sends wake-ups only, and a relay that dies is seen at once."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import support
from workbench import services
from workbench.core import models
from workbench.services import relay, relay_client


class RelayThread:
    """A relay serving `wb`'s queues on a thread of this process (port 0: one the system picks)."""

    def __init__(self, wb: services.Workbench, port: int = 0, every: float = 0.2, **listening: Any) -> None:
        self.watcher = relay.Watcher(wb, "relay")
        self.watcher.changes()  # where the feed starts
        # Listening for the database's notices where it sends them (run() does so), or as a test says.
        listener = listening.pop("listener", self.watcher.listener())
        if listening.pop("counting", False):  # the start page's figures too, as run() sends them
            listening.update(figures=self.watcher.figures, counts_every=self.watcher.counts_every)
        self.relay = relay.Relay(self.watcher.changes, every=every, listener=listener, **listening)
        self.loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self.port = port

        def bound(port: int) -> None:
            self.port = port
            self._ready.set()

        self._task = self.loop.create_task(self.relay.serve("127.0.0.1", port, bound))
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        assert self._ready.wait(10), "the relay did not start listening"
        deadline = time.monotonic() + 10
        while not self.relay.reading and time.monotonic() < deadline:
            time.sleep(0.02)

    def _run(self) -> None:
        with contextlib.suppress(asyncio.CancelledError):
            self.loop.run_until_complete(self._task)
        self.loop.close()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        """Gone, as a killed process is: every connection closed."""
        if not self._thread.is_alive():
            return
        self.loop.call_soon_threadsafe(self._task.cancel)
        self._thread.join(10)


@pytest.fixture
def relays() -> Iterator[list[RelayThread]]:
    started: list[RelayThread] = []
    yield started
    for one in started:
        one.stop()


def _hears(client: relay_client.RelayClient, within: float = 2.0) -> int | None:
    return client.wait(within)


def _wakes_whom_it_concerns(env: support.Env, relays: list[RelayThread]) -> None:
    wb = env.demo(case_rows=5)
    relays.append(RelayThread(wb))
    address = relays[0].address
    alice = relay_client.RelayClient(address, "alice", ["cases"])
    bob = relay_client.RelayClient(address, "bob", ["cases"])
    board = relay_client.RelayClient(address, "sue", ["cases"], every=True)
    for client in (alice, bob, board):
        client.connect()
    op = services.Operator(wb, "alice")
    op.changes()  # where her window's feed starts
    claim = op.next_item("cases")
    # Her own claim wakes the console (every change of its queues), not her: she knows what she did.
    assert board.wait(2.0) is not None
    assert alice.wait(0.8) is None
    started = time.monotonic()
    wb.supervision("cases").force_release("sue", claim.lock.key, "customer escalated")
    woken = alice.wait(2.0)
    assert woken is not None and time.monotonic() - started < 2.0
    # Only a wake-up: the window then reads the feed under its own login, and finds the force-release there.
    seen = op.changes()
    assert models.EventKind.FORCE_RELEASE in {e.kind for e in seen} and woken >= max(e.id for e in seen)
    assert bob.wait(0.5) is None  # not his
    again = op.next_item("cases")
    wb.supervision("cases").reassign("sue", again.lock.key, "bob", "bob knows this customer")
    assert bob.wait(2.0) is not None and alice.wait(2.0) is not None  # the new holder, and the old
    for client in (alice, bob, board):
        client.close()


def test_the_relay_wakes_whom_a_change_concerns(native_env: support.Env, relays: list[RelayThread]) -> None:
    _wakes_whom_it_concerns(native_env, relays)


def test_the_relay_through_pgbouncer(pooled_env: support.Env, relays: list[RelayThread]) -> None:
    """The relay's one look per interval goes through the transaction pooler as any window's would."""
    _wakes_whom_it_concerns(pooled_env, relays)


def test_a_relay_that_stops_is_seen_at_once_and_a_new_one_is_reconnected_to(
    native_env: support.Env, relays: list[RelayThread]
) -> None:
    wb = native_env.demo(case_rows=5)
    relays.append(RelayThread(wb))
    port = relays[0].port
    client = relay_client.RelayClient(relays[0].address, "alice", ["cases"])
    client.connect()
    relays[0].stop()
    started = time.monotonic()
    with pytest.raises(relay_client.RelayUnavailable):
        client.wait(30.0)
    assert time.monotonic() - started < 2.0  # not after the silence's 15 s: the connection closed
    with pytest.raises(relay_client.RelayUnavailable):
        client.connect()  # nobody listens
    relays.append(RelayThread(wb, port=port))
    client.connect()
    claim = services.Operator(wb, "alice").next_item("cases")
    wb.supervision("cases").force_release("sue", claim.lock.key, "customer escalated")
    assert client.wait(2.0) is not None
    client.close()


def test_a_silent_relay_is_given_up_and_a_liar_costs_only_a_look(monkeypatch: pytest.MonkeyPatch) -> None:
    """A relay that accepts and then says nothing, or sends what is not a message, is taken for gone."""
    monkeypatch.setattr(relay_client, "DEAD_SECONDS", 0.5)
    with socket.create_server(("127.0.0.1", 0)) as server:
        address = f"127.0.0.1:{server.getsockname()[1]}"
        client = relay_client.RelayClient(address, "alice", ["cases"])
        with pytest.raises(relay_client.RelayUnavailable):
            client.connect()  # no greeting back
        server.accept()[0].close()
        result: dict[str, Any] = {}

        def connect_and_wait() -> None:
            try:
                client.connect()
                result["first"] = client.wait(5.0)
                client.wait(5.0)
            except relay_client.RelayUnavailable as exc:
                result["error"] = str(exc)

        waiting = threading.Thread(target=connect_and_wait)
        waiting.start()
        conn, _ = server.accept()
        conn.sendall(relay_client.encode({"ready": 0}) + relay_client.encode({"wake": 7}))
        time.sleep(0.2)
        conn.sendall(b'{"wake": "everything"}\n')
        waiting.join(5)
        conn.close()
    assert result["first"] == 7
    assert "id" in result["error"]


def test_a_bad_relay_address_says_what_to_write(tmp_path: Path) -> None:
    from workbench import demo
    from workbench.config import loader
    from workbench.core import errors

    text = demo.config_text(f"sqlite:///{tmp_path / 'x.db'}")
    assert loader.parse(tomllib.loads(text + '\n[app]\nrelay = "relay.example.org:7700"\n'), "t.toml").app.relay
    with pytest.raises(errors.ConfigError, match=r"app\.relay.*host:port"):
        loader.parse(tomllib.loads(text + '\n[app]\nrelay = "relay.example.org"\n'), "t.toml")


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_workbench_relay_on_the_command_line(native_env: support.Env) -> None:
    """`workbench relay` as a site runs it; killed (-9), its windows' connections end at once."""
    wb = native_env.demo(case_rows=5)
    path = native_env.demo_config_file()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "workbench", "--config", str(path), "relay", "--listen", f"127.0.0.1:{port}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert f"listening on 127.0.0.1:{port}" in line, (line, proc.stderr.read() if proc.poll() else "")
        client = relay_client.RelayClient(f"127.0.0.1:{port}", "alice", ["cases"])
        deadline = time.monotonic() + 10
        while True:  # the relay answers once its first read of the trail went through
            try:
                client.connect()
                break
            except relay_client.RelayUnavailable:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        claim = services.Operator(wb, "alice").next_item("cases")
        wb.supervision("cases").force_release("sue", claim.lock.key, "customer escalated")
        assert client.wait(2.0) is not None
        proc.send_signal(signal.SIGKILL)
        started = time.monotonic()
        with pytest.raises(relay_client.RelayUnavailable):
            client.wait(30.0)
        assert time.monotonic() - started < 2.0
    finally:
        proc.kill()
        proc.wait(10)


# -- PostgreSQL's notices (LISTEN/NOTIFY): the relay woken as a change commits, not at its next read -------------


def _told_within(client: relay_client.RelayClient, wb: services.Workbench, user: str = "alice") -> float:
    """Seconds from a force-release's commit (of `user`'s claim) to `client` being woken about it."""
    claim = services.Operator(wb, user).next_item("cases")
    client.wait(0.3)  # nothing of her own claim; anything else pending taken
    wb.supervision("cases").force_release("sue", claim.lock.key, "customer escalated")
    committed = time.monotonic()
    woken = client.wait(10.0)
    assert woken is not None, "not woken"
    return time.monotonic() - committed


@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_the_audit_trail_notifies_as_it_commits(native_env: support.Env) -> None:
    """Migration 14: each audit row of someone's act on another's item, as its transaction commits, sends its
    id and whom it concerns (no row data) to a listener on a session of its own; a user's own act (a claim)
    and a rolled-back row send nothing."""
    import sqlalchemy as sa

    from workbench.db import feed

    wb = native_env.demo(case_rows=5)
    listener = feed.listener(wb.engine)
    assert listener is not None
    listener.open()
    try:
        assert listener.wait(0.2) == []
        claim = services.Operator(wb, "alice").next_item("cases")
        started = time.monotonic()
        wb.supervision("cases").force_release("sue", claim.lock.key, "customer escalated")
        heard = listener.wait(2.0)
        heard += listener.wait(0.2)
        assert time.monotonic() - started < 1.0
        (notice,) = [n for n in heard if n.actor == "sue"]
        # alice's own claim sent none: a user's own acts (the claim path) never notify
        assert [n for n in heard if n.actor == "alice"] == [], heard
        assert notice.queue == "cases" and notice.owner == "alice"
        (row,) = [e for e in services.Supervisor(wb, "sue").history("cases", claim.lock.key) if e.id == notice.id]
        assert row.kind is models.EventKind.FORCE_RELEASE
        with wb.engine.connect() as conn:  # written and rolled back: not heard
            conn.execute(
                wb.audit_table.insert().values(queue="cases", item_key="1", event="save", actor="x", at=sa.func.now())
            )
            conn.rollback()
        assert listener.wait(0.5) == []
    finally:
        listener.close()


@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_a_listening_relay_wakes_a_window_at_once(native_env: support.Env, relays: list[RelayThread]) -> None:
    """Read only every 30 s, the relay still wakes the holder within a fraction of its old 0.5 s: the notice
    did. Measured against the same relay not listening (reading every 0.5 s) in the same run."""
    wb = native_env.demo(case_rows=10)
    relays.append(RelayThread(wb, every=0.5, listener=None))
    polling = relay_client.RelayClient(relays[-1].address, "alice", ["cases"])
    polling.connect()
    before = sorted(_told_within(polling, wb) for _ in range(3))
    polling.close()
    relays[-1].stop()
    relays.append(RelayThread(wb, every=30.0, listening_every=30.0))
    # It listens once its first read is done and its own connection has said LISTEN (a moment under load).
    deadline = time.monotonic() + 10
    while not relays[-1].relay.listening and time.monotonic() < deadline:
        time.sleep(0.02)
    assert relays[-1].relay.listening
    client = relay_client.RelayClient(relays[-1].address, "alice", ["cases"])
    client.connect()
    after = sorted(_told_within(client, wb) for _ in range(3))
    print(f"holder told, relay reading every 0.5 s: {before}; listening: {after}")
    assert after[1] < 0.25, after  # the median: well within the old interval, and a read every 30 s
    assert relays[-1].relay.noticed >= 3
    client.close()


def test_a_pooled_relay_does_not_listen(pooled_env: support.Env, relays: list[RelayThread]) -> None:
    """Through PgBouncer's transaction pooling there is no session to LISTEN on: no listener, the relay reads
    every interval as before (and wakes the windows so)."""
    wb = pooled_env.demo(case_rows=5)
    assert relay.Watcher(wb, "relay").listener() is None
    relays.append(RelayThread(wb))
    assert relays[-1].relay.listener is None and not relays[-1].relay.listening
    client = relay_client.RelayClient(relays[-1].address, "alice", ["cases"])
    client.connect()
    assert _told_within(client, wb) < 2.0
    client.close()


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_no_listener_where_the_database_sends_no_notices(native_env: support.Env) -> None:
    wb = native_env.demo(case_rows=5)
    assert relay.Watcher(wb, "relay").listener() is None


@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_a_lost_listening_connection_falls_back_to_reading_and_listens_again(
    native_env: support.Env, relays: list[RelayThread]
) -> None:
    """The listening session killed on the server: the relay reads every `every` at once (a window is still
    woken), and listens again after `relisten`, woken at once again."""
    import sqlalchemy as sa

    wb = native_env.demo(case_rows=10)
    relays.append(RelayThread(wb, every=0.5, listening_every=30.0, relisten=1.0))
    one = relays[-1].relay
    deadline = time.monotonic() + 10  # it listens once it reads (RelayThread waits for the reading only)
    while not one.listening and time.monotonic() < deadline:
        time.sleep(0.05)
    assert one.listening
    client = relay_client.RelayClient(relays[-1].address, "alice", ["cases"])
    client.connect()
    assert _told_within(client, wb) < 0.25
    with native_env.engine.connect() as conn:
        killed = conn.execute(
            sa.text(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND application_name = 'workbench listen'"
            )
        ).all()
    assert killed == [(True,)]
    deadline = time.monotonic() + 5
    while one.listening and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not one.listening  # seen within a wait's turn (1 s)
    assert _told_within(client, wb) < 2.0  # by the relay's reads meanwhile
    deadline = time.monotonic() + 10
    while not one.listening and time.monotonic() < deadline:
        time.sleep(0.05)
    assert one.listening  # listening again
    assert _told_within(client, wb) < 0.25
    client.close()


def test_a_pooler_not_declared_is_found_out_and_not_listened_through(pooled_env: support.Env) -> None:
    """Through PgBouncer's transaction pooling with `pooler` left out, LISTEN runs on a session lent to others
    at once and would hear nothing: the listener's own first notice does not come back from its session, and
    it gives up for good (ListenRefused: not tried again every few seconds) rather than wait in vain."""
    import sqlalchemy as sa

    from workbench.db import backends, feed

    pooled_env.demo(case_rows=5)
    undeclared = sa.create_engine(pooled_env.bouncer.url(pooled_env.database))  # type: ignore[attr-defined]
    try:
        listener = feed.listener(undeclared)
        assert listener is not None  # nothing said it is pooled
        started = time.monotonic()
        with pytest.raises(backends.ListenRefused, match="pooler"):
            listener.open()
        assert time.monotonic() - started < 10
    finally:
        undeclared.dispose()
