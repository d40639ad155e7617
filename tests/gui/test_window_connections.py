"""An open window holds at most one server connection while nobody works in it (issue 42): a
server's max_connections, not the people's work, used to decide how many seats it took."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import sqlalchemy as sa

from tests.gui.conftest import FAST
from workbench.gui import main_window


def _held(config: Any, before: int = 0) -> int:
    """Server connections workbench opened to the config's database (pg_stat_activity), less `before`:
    those of the fixture that filled the tables."""
    url = sa.make_url(config.database.url)
    admin = sa.create_engine(url.set(database="postgres"), poolclass=sa.pool.NullPool)
    try:
        with admin.connect() as conn:
            stmt = sa.text(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'workbench' AND datname = :db"
            )
            return int(conn.execute(stmt, {"db": url.database}).scalar_one()) - before
    finally:
        admin.dispose()


def _settled(qtbot: Any, window: main_window.MainWindow) -> None:
    qtbot.waitUntil(lambda: not window.session.dispatcher.busy, timeout=10_000)


@pytest.mark.parametrize("backend", ["postgresql"])
def test_an_idle_window_holds_one_connection(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    before = _held(demo_config)
    window = open_window(demo_config, settings=dataclasses.replace(FAST, idle_after=0.5))
    window.session.load_counts()  # the start page's figures, read alongside the locks at start
    _settled(qtbot, window)
    assert _held(demo_config, before) <= 1


@pytest.mark.parametrize("backend", ["postgresql"])
def test_a_window_that_worked_gives_back_its_connections_but_one(
    qtbot: Any, open_window: Any, demo_config: Any
) -> None:
    before = _held(demo_config)
    window = open_window(demo_config, settings=dataclasses.replace(FAST, idle_after=0.5))
    session = window.session
    for _ in range(4):
        with qtbot.waitSignal(session.claimed, timeout=10_000):
            session.next_item()
        session.check_now()
        with qtbot.waitSignal(session.saved, timeout=10_000):
            session.save({"priority": 2})
        session.load_counts()  # at once, as the start page does after a Complete
        with qtbot.waitSignal(session.completed, timeout=10_000):
            session.complete(None, {})
        session.load_counts()
    _settled(qtbot, window)
    qtbot.waitUntil(lambda: _held(demo_config, before) <= 1, timeout=5_000)
    qtbot.wait(1000)  # and it stays there
    assert _held(demo_config, before) <= 1
    with qtbot.waitSignal(session.claimed, timeout=10_000):  # the next claim opens what it needs again
        session.next_item()
