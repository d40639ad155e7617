"""Next item pressed while the database is down or hung: claimed once it is back, exactly once."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import sqlalchemy as sa
from PySide6.QtCore import Qt

from tests.gui.conftest import FAST
from workbench.gui import main_window
from workbench.services import door


def _held_by(window: main_window.MainWindow, user: str) -> list[Any]:
    q = door.engine(window.session.wb).queue("cases").q
    with door.engine(window.session.wb).engine.connect() as conn:
        return list(conn.execute(sa.select(q.key).where(q.table.c.wb_locked_by == user)).scalars())


def _claims(window: main_window.MainWindow) -> list[Any]:
    seen: list[Any] = []
    window.session.claimed.connect(lambda claim, _draft: seen.append(claim.lock.key))
    return seen


@pytest.mark.parametrize("backend", ["postgresql"])
def test_next_item_while_the_database_is_down_claims_once_it_is_back(
    qtbot: Any, open_window: Any, demo_config: Any, pg_server: Any
) -> None:
    window = open_window(demo_config, settings=dataclasses.replace(FAST, retry_interval=0.3))
    claims = _claims(window)
    pg_server.take_down()
    try:
        qtbot.mouseClick(window.next_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: window.connection_label.property("state") == "down", timeout=15_000)
        qtbot.wait(1000)  # quiet retries meanwhile
        window.named_actions["next"].trigger()  # the user asks again: still one claim in the end
        qtbot.wait(500)
        assert claims == []
    finally:
        with qtbot.waitSignal(window.session.claimed, timeout=30_000):
            pg_server.bring_up()  # nobody clicks: the pending Next goes through on its own
    qtbot.wait(1500)  # no second claim arrives late
    door.engine(window.session.wb).engine.dispose()
    assert len(claims) == 1 and _held_by(window, "alice") == claims
    assert window.connection_label.property("state") == "up" and window.stack.currentIndex() == main_window.ITEM


@pytest.mark.parametrize("backend", ["postgresql"])
def test_next_item_pressed_again_while_the_database_hangs_claims_one_item(
    qtbot: Any, open_window: Any, demo_config: Any, pg_server: Any
) -> None:
    window = open_window(demo_config, settings=dataclasses.replace(FAST, retry_interval=0.3))
    claims = _claims(window)
    pg_server.freeze()  # connections stay open; nothing answers
    try:
        qtbot.mouseClick(window.next_button, Qt.MouseButton.LeftButton)
        for _ in range(3):  # impatient: Ctrl+N again and again while the first claim hangs
            qtbot.wait(200)
            window.named_actions["next"].trigger()
        assert claims == []
    finally:
        with qtbot.waitSignal(window.session.claimed, timeout=30_000):
            pg_server.thaw()
    qtbot.wait(1500)
    assert len(claims) == 1 and _held_by(window, "alice") == claims
