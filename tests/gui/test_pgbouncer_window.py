"""The operator window and the supervisor console through PgBouncer in transaction pooling
(`[database] pooler = "transaction"`): the round trips of tests/gui/test_operator.py and
tests/gui/test_supervisor.py run again here, with `demo_config` a database reached through the pooler,
whose few server sessions the window's connections (its dispatcher's threads, the held connections of
the claim and Complete, the lock checks) take turns on."""

from __future__ import annotations

from typing import Any

import pytest

from tests.gui import test_change_feed, test_operator, test_supervisor
from tests.pooled import PooledEnv
from workbench.config import model, profiles
from workbench.gui import app as gui_app
from workbench.gui import connect_dialog

console = test_supervisor.console


@pytest.fixture
def demo_config(pooled_env: PooledEnv) -> model.Config:
    pooled_env.demo(case_rows=30, import_rows=20)
    config = pooled_env.demo_config()
    assert config.database.pooler == "transaction"
    return config


test_next_item_fills_the_form_and_starts_the_timer = test_operator.test_next_item_fills_the_form_and_starts_the_timer
test_save_keeps_the_lock_and_stores_the_edit = test_operator.test_save_keeps_the_lock_and_stores_the_edit
test_complete_from_the_keyboard_writes_the_outcome = test_operator.test_complete_from_the_keyboard_writes_the_outcome
test_the_next_item_comes_with_the_complete = test_operator.test_the_next_item_comes_with_the_complete
test_release_with_a_reason = test_operator.test_release_with_a_reason
test_force_release_needs_a_reason_and_tells_the_holder = (
    test_supervisor.test_force_release_needs_a_reason_and_tells_the_holder
)
test_reassign_moves_the_lock = test_supervisor.test_reassign_moves_the_lock
# Issue 51: the change feed is plain reads, so it goes through the pooler as it does directly.
test_a_force_release_reaches_the_holder_within_two_seconds = (
    test_change_feed.test_a_force_release_reaches_the_holder_within_two_seconds
)
test_the_new_holder_is_told_at_once_and_can_open_it = (
    test_change_feed.test_the_new_holder_is_told_at_once_and_can_open_it
)
test_the_board_shows_a_claim_and_a_release_within_two_seconds = (
    test_change_feed.test_the_board_shows_a_claim_and_a_release_within_two_seconds
)
test_health_operators_history_and_export = test_supervisor.test_health_operators_history_and_export


def test_the_connection_dialog_keeps_a_profiles_pooler(qtbot: Any) -> None:
    """The dialog does not show `pooler`; a profile edited in it keeps what profiles.toml says."""
    gui_app.application()
    pooled = profiles.Profile(
        name="office",
        kind="postgresql",
        host="pgbouncer",
        port=6432,
        database="cases",
        user="bob",
        source="database",
        pooler="transaction",
    )
    dialog = connect_dialog.ConnectionDialog(pooled)
    qtbot.addWidget(dialog)
    dialog.host.setText("pgbouncer2")
    edited = dialog.profile()
    assert (edited.host, edited.pooler) == ("pgbouncer2", "transaction")
