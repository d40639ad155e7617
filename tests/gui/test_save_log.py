"""After a Save the window shows it in the item's log, with what the fields were before it, from the audit row the
Save wrote: the Save's own statements and no read of the log after it (issue 51: 68 reads per window-hour less)."""

from __future__ import annotations

import dataclasses
from typing import Any

import sqlalchemy as sa

from tests.gui.conftest import FAST
from workbench.db import tables
from workbench.services import door


def test_a_save_shows_in_the_log_without_reading_it(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    # No feed looks and no lock checks during the count: what is counted is the Save and what follows it.
    window = open_window(demo_config, settings=dataclasses.replace(FAST, check_interval=600.0, changes_interval=0.0))
    with qtbot.waitSignal(window.session.item_log_loaded, timeout=10_000):
        window.next_item()
    window.session.dispatcher.wait()
    entries = window.item_log.entries.count()  # the claim (and what came before it)
    window.form.field("resolution").setPlainText("Replaced the docking station")
    seen: list[str] = []

    @sa.event.listens_for(door.engine(window.session.wb).engine, "before_cursor_execute")
    def _seen(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        seen.append(statement)

    with qtbot.waitSignal(window.session.item_log_loaded, timeout=10_000):
        window.save()
    window.session.dispatcher.wait()
    qtbot.wait(100)
    window.session.dispatcher.wait()
    # The Save's statements (its UPDATE, the fields before it, its audit row); no read of the log's notes after them.
    assert seen and not [s for s in seen if tables.NOTES_TABLE in s], seen
    assert window.item_log.entries.count() == entries + 1
    shown = window.item_log.entries.item(entries).text()
    assert shown.startswith("Saved by alice") and "resolution: — → Replaced the docking station" in shown
    # What a read of the log gives, the next time the item opens.
    with qtbot.waitSignal(window.session.item_log_loaded, timeout=10_000):
        window.session.load_item_log()
    assert window.item_log.entries.item(entries).text() == shown
