"""A window's start and its first Next item cost few transactions (issue 51): each one is a pooled
session lent through PgBouncer and a round of the server's work at a thousand seats. Counted on a real
window against PostgreSQL: the transactions that ran a statement through SQLAlchemy, and those the
fast path (db/fastpath.py: the claim, its function's setup) ran straight on libpq."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from PySide6.QtCore import Qt
from sqlalchemy import event

from tests.gui.conftest import FAST, close_window
from workbench.db import fastpath, service
from workbench.gui import app as gui_app
from workbench.services import door, operator

# 2026-12-01: 23 at the start and 5 at the first Next item before the start page was read in one
# transaction (Operator.opening, Database.one_read) and an item's log in one; then 4 and 5 (the trusted
# functions asked, the claim function made and dropped again in a transaction of its own, made on the
# claim's connection in another, the claim) before the first call made it in its own transaction.
# The schema check, the opening (layouts, locks, lines, counts, how claims run, the feed's start),
# filter choices, counts.
START_MOST = 4
FIRST_NEXT_MOST = 2  # the claim (its function made in the same transaction), the item's log
TOGETHER_MOST = 6  # issue 51's bound


@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_a_window_starts_and_claims_in_few_transactions(
    qtbot: Any, demo_config: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    gui_app.application()
    # No feed looks and no lock checks during the count: what is counted is the start and the claim.
    settings = dataclasses.replace(FAST, check_interval=600.0, changes_interval=0.0)
    # Another window has counted the start page for everyone (db/counts.py), as one does per queue
    # and interval; the first window on a new database counts and writes the figures too.
    with service.Workbench.open(demo_config) as other:
        operator.Operator(other, "bob").queue_counts()
    window = gui_app.build_window(demo_config, "alice", settings=settings, home=tmp_path / "home")
    qtbot.addWidget(window, before_close_func=lambda w: close_window(qtbot, w, answer="quit_keep"))
    wb = door.engine(window.session.wb)
    ran: list[int] = []  # per transaction begun on the main pool: the statements it ran

    @event.listens_for(wb.engine, "begin")
    def _begun(_conn: Any) -> None:
        ran.append(0)

    @event.listens_for(wb.engine, "before_cursor_execute")
    def _statement(*_args: Any) -> None:
        ran[-1] += 1

    # The fast path runs each statement as one implicit transaction on a connection of its own pool.
    execute, setup = fastpath.FastStatement._execute, fastpath.FastStatement._run_setup

    def _fast_execute(self: Any, held: Any, values: Any, *, repaired: bool = False) -> Any:
        if not repaired:  # a repair's run is counted by the setup it runs
            ran.append(1)
        return execute(self, held, values, repaired=repaired)

    def _fast_setup(self: Any, held: Any) -> None:
        if self._setup is not None:
            ran.append(1)
        setup(self, held)

    monkeypatch.setattr(fastpath.FastStatement, "_execute", _fast_execute)
    monkeypatch.setattr(fastpath.FastStatement, "_run_setup", _fast_setup)

    def transactions() -> int:
        window.session.dispatcher.wait()
        qtbot.wait(300)  # what the answers start (the start page's counts) runs too
        window.session.dispatcher.wait()
        return sum(1 for n in ran if n)

    window.show()
    with qtbot.waitSignal(window.session.ready, timeout=20_000):
        window.session.start()
    started = transactions()
    ran.clear()
    with qtbot.waitSignal(window.session.claimed, timeout=10_000):
        qtbot.mouseClick(window.next_button, Qt.MouseButton.LeftButton)
    first_next = transactions()
    window.session.dispatcher.wait()
    assert started <= START_MOST, f"the start ran {started} transactions"
    assert first_next <= FIRST_NEXT_MOST, f"the first Next item ran {first_next} transactions"
    assert started + first_next <= TOGETHER_MOST
