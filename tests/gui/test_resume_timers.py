"""The resume panel's times count on between reloads, without asking the database."""

from __future__ import annotations

import datetime as dt
from typing import Any

from workbench.core import models
from workbench.gui import resume


def test_held_for_and_time_left_tick(qtbot: Any) -> None:
    now = dt.datetime(2026, 11, 25, 9, 0, tzinfo=dt.UTC)
    lock = models.Lock("cases", 7, "ann", "t" * 32, now - dt.timedelta(seconds=59), now + dt.timedelta(seconds=2), now)
    panel = resume.ResumePanel()
    qtbot.addWidget(panel)
    panel.set_entries([resume.Entry("Helpdesk cases", "cases", 7, "Printer", lock, False)])

    def cell(column: int) -> str:
        return panel.table.item(0, column).text()

    assert (cell(3), cell(4)) == ("59s", "2s")
    qtbot.waitUntil(lambda: cell(3) == "1m00s", timeout=3000)
    qtbot.waitUntil(lambda: cell(4) == panel.tr("expired"), timeout=4000)
    # Without locks (drafts only) nothing ticks.
    panel.set_entries([resume.Entry("Helpdesk cases", "cases", 8, "Mail", None, True)])
    assert not panel._ticker.isActive()
