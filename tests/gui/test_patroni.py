"""Three PostgreSQL nodes under Patroni (etcd as its store, one synchronous standby), reached through one
multi-host URL with target_session_attrs=read-write. Worker processes claim, save and complete while an
operator window holds an item; the leader's PostgreSQL is killed (Patroni starts it again), then the
leader's Patroni (a standby is promoted). Every acknowledged Complete is there once with its Save's values,
no row ever had two live claims, the workers and the window carry on without being restarted within 15 s,
and the window's pending Save goes through."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QPlainTextEdit

from tests.gui.conftest import FAST
from tests.helpers import failover_checks, patroni
from workbench.config import loader
from workbench.db import service

WORKERS = 3
BACK_WITHIN = 15.0  # seconds from a kill to the workers' next acknowledged claim


@pytest.fixture
def patroni_cluster() -> Iterator[patroni.Patroni]:
    nodes = failover_checks.started(patroni.Patroni)
    yield nodes
    nodes.stop()


def _back_after(workers: failover_checks.Workers, moment: float) -> float | None:
    """Seconds from `moment` to the first claim a worker was given after the first time since then that
    a worker met an unreachable database (None while there is none)."""
    entries = workers.entries()
    trouble = [e["at"] for e in entries if "unavailable" in e and e["at"] >= moment]
    if not trouble:
        return None
    claims = [e["at"] for e in entries if "claim" in e and e["at"] > min(trouble)]
    return min(claims) - moment if claims else None


def _value(cluster: patroni.Patroni, sql: str, **params: Any) -> Any:
    engine = sa.create_engine(cluster.url("wbha"))
    try:
        with engine.connect() as conn:
            return conn.execute(sa.text(sql), params).scalar()
    finally:
        engine.dispose()


@pytest.mark.slow
def test_operators_carry_on_through_a_patroni_failover(
    qtbot: Any, open_window: Any, patroni_cluster: patroni.Patroni, tmp_path: Path, monkeypatch: Any
) -> None:
    cluster = patroni_cluster
    cluster.create_database("wbha")
    config_path = failover_checks.demo_config(cluster.url("wbha"), tmp_path, cases=1000)
    config = loader.load(config_path)
    # Each worker thinks a little between items, so that the queue lasts the whole test.
    workers = failover_checks.Workers(config_path, "cases", tmp_path, WORKERS, pause=0.1)
    shown: list[str] = []
    timings: dict[str, float | None] = {}
    try:
        window = open_window(config, settings=dataclasses.replace(FAST, retry_interval=0.3))
        for name in ("critical", "warning", "information", "question"):
            monkeypatch.setattr(QMessageBox, name, lambda *args, _n=name, **kw: shown.append(_n) or 0)
        with qtbot.waitSignal(window.session.claimed, timeout=15_000) as claimed:
            qtbot.mouseClick(window.next_button, Qt.MouseButton.LeftButton)
        key = claimed.args[0].lock.key
        editor = window.form.field("resolution")
        assert isinstance(editor, QPlainTextEdit)
        workers.go()
        qtbot.waitUntil(lambda: workers.completed_since(0) >= 10, timeout=60_000)

        # 1. The leader's PostgreSQL dies (SIGKILL of the postmaster): its Patroni starts it again.
        first = cluster.leader()
        editor.setPlainText("Typed before the crash")
        crashed = time.time()
        cluster.kill_postgres(first)
        with qtbot.waitSignal(window.session.saved, timeout=int(BACK_WITHIN * 1000)):
            qtbot.mouseClick(window.save_button, Qt.MouseButton.LeftButton)  # fails, then goes through
        timings["window save after the PostgreSQL kill"] = time.time() - crashed
        assert _value(cluster, "SELECT resolution FROM cases WHERE case_id = :k", k=key) == "Typed before the crash"
        qtbot.waitUntil(lambda: _back_after(workers, crashed) is not None, timeout=int(BACK_WITHIN * 1000))
        timings["claim after the PostgreSQL kill"] = _back_after(workers, crashed)
        qtbot.waitUntil(lambda: workers.completed_since(crashed) >= 10, timeout=30_000)

        # 2. The leader's Patroni dies: its PostgreSQL is stopped as the watchdog would, a standby promoted.
        # (Killed while it is still choosing a synchronous standby again, no standby may take over: Patroni
        # promotes only the one the last /sync key names, so as not to lose an acknowledged commit.)
        qtbot.waitUntil(lambda: cluster.healthy(cluster.cluster()), timeout=30_000)
        second = cluster.leader()
        timings["synchronous standby again after the PostgreSQL kill"] = time.time() - crashed
        killed = time.time()
        cluster.kill_patroni(second)
        qtbot.waitUntil(cluster.watchdog_fired.is_set, timeout=int(patroni.TTL * 1000))
        fired = time.time()
        editor.setPlainText("Typed before the switch")
        with qtbot.waitSignal(window.session.saved, timeout=int(BACK_WITHIN * 1000)):
            qtbot.mouseClick(window.save_button, Qt.MouseButton.LeftButton)  # waits for the promoted standby
        timings["window save after the watchdog stopped the old primary"] = time.time() - fired
        qtbot.waitUntil(lambda: _back_after(workers, killed) is not None, timeout=int(BACK_WITHIN * 1000))
        timings["claim after the Patroni kill"] = _back_after(workers, killed)
        timings["claim after the watchdog stopped the old primary"] = _back_after(workers, fired)
        with qtbot.waitSignal(window.session.completed, timeout=15_000):
            window.complete(None)
        qtbot.waitUntil(lambda: workers.completed_since(fired) >= 10, timeout=30_000)
    finally:
        workers.stop()
    print(f"\nleaders: {first} (PostgreSQL killed), {second} (Patroni killed); now {cluster.leader()}")
    for what, seconds in timings.items():
        print(f"{what}: {seconds:.2f} s" if seconds is not None else f"{what}: never")
    entries = workers.check_stopped()
    assert cluster.leader() != second
    # Each kill was noticed, and the workers had a claim again within 15 s of it, in the same processes.
    for moment in (crashed, killed):
        back = _back_after(workers, moment)
        assert back is not None and back < BACK_WITHIN, (moment, back)
    assert shown == []  # the window said "reconnecting" in its status bar, no dialog
    assert _value(cluster, "SELECT resolution FROM cases WHERE case_id = :k", k=key) == "Typed before the switch"
    assert _value(cluster, "SELECT wb_locked_by FROM cases WHERE case_id = :k", k=key) is None
    with service.Workbench.open(config) as wb:
        # A claim whose answer the broken connection lost leaves its item locked to the worker, which
        # claimed another: not a second holder, and nobody else is given it while the lock lasts.
        unfinished = {(e["worker"], e["claim"]) for e in entries if "claim" in e} - {
            (e["worker"], e["completed"]) for e in entries if "completed" in e
        }
        with wb.engine.connect() as conn:
            held = conn.execute(sa.text("SELECT wb_locked_by, case_id FROM cases WHERE wb_locked_by LIKE 'w%'")).all()
        print(f"locked to a worker that never heard of it: {sorted(set(map(tuple, held)) - unfinished)}")
        failover_checks.check_acknowledged(wb, "cases", entries)
        assert failover_checks.overlapping_claims(wb, "cases") == []
        assert [e.actor for e in wb.queue("cases").history(key) if e.kind.value == "complete"] == ["alice"]
