"""Issue 48: the operator's window says that an item another program holds is that program's (under
which name, since when, until when workbench leaves it), in the window's language."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa

from tests.gui.test_german_rest import language  # noqa: F401  (language: the fixture)
from workbench.services import door

SAID = {
    "en": "is held by another program under the name oldapp since",
    "de": "ist von einem anderen Programm unter dem Namen oldapp gesperrt, seit",
}


@pytest.mark.parametrize("backend", ["sqlite"])
@pytest.mark.parametrize("language", ["en", "de"], indirect=True)
def test_opening_an_item_another_program_holds_says_whose_it_is(
    language: str, qtbot: Any, open_window: Any, demo_config: Any
) -> None:
    window = open_window(demo_config, user="ann")
    cases = door.engine(window.session.wb).queue("cases")
    taken = cases.claim_next("bob", 2)
    theirs, bobs = taken[0].lock.key, taken[1].lock.key
    with door.engine(window.session.wb).engine.begin() as conn:  # the old program locks it under its own name and token
        conn.execute(
            sa.update(cases.q.table).where(cases.q.key == theirs).values(wb_locked_by="oldapp", wb_lock_token="0" * 32)
        )
    with qtbot.waitSignal(window.session.nothing_to_do, timeout=10_000) as said:
        window.session.open_item(theirs, "cases")
    assert SAID[language] in said.args[0], said.args[0]
    with qtbot.waitSignal(window.session.nothing_to_do, timeout=10_000) as said:
        window.session.open_item(bobs, "cases")  # workbench's own lock of bob's: said as ever
    assert "oldapp" not in said.args[0] and "bob" in said.args[0]
    assert window.session.current is None
