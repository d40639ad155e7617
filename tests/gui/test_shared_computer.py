"""Two workbench users on one computer account (a shared PC, a terminal server): each keeps their own
drafts and their own window settings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from tests.gui.conftest import close_window, row
from tests.gui.test_operator import _type
from workbench import journal as journal_mod
from workbench.config import paths
from workbench.gui import app as gui_app
from workbench.gui import theme
from workbench.services import door


@pytest.mark.parametrize("backend", ["sqlite"])
def test_one_users_draft_is_never_anothers(qtbot: Any, open_window: Any, demo_config: Any, tmp_path: Path) -> None:
    home = tmp_path / "shared-pc"
    alice = open_window(demo_config, user="alice", home=home)
    with qtbot.waitSignal(alice.session.claimed, timeout=10_000) as signal:
        qtbot.mouseClick(alice.next_button, Qt.MouseButton.LeftButton)
    key = signal.args[0].lock.key
    _type(qtbot, alice, "resolution", "Alice's fix")
    alice._write_journal()
    close_window(qtbot, alice, answer="quit_release")  # she gives it back; her draft... is discarded
    assert row(alice, "cases", key)["wb_locked_by"] is None

    # Now alice keeps a draft of another item, and leaves it locked.
    alice = open_window(demo_config, user="alice", home=home)
    alice.session.open_item(key, "cases")
    qtbot.waitUntil(lambda: alice.session.current is not None, timeout=10_000)
    _type(qtbot, alice, "resolution", "Alice's second try")
    alice._write_journal()
    close_window(qtbot, alice, answer="quit_keep")
    kept = alice.session.journal.load(alice.session.database, "cases", key)
    assert kept is not None and kept.owner == "alice"
    with door.engine(alice.session.wb).engine.begin() as conn:  # her lock runs out
        q = door.engine(alice.session.wb).queue("cases").q
        conn.execute(q.table.update().where(q.key == key).values({q.expires.name: q.time}))

    # bob, same computer account, takes the item: he does not get alice's edits ...
    bob = open_window(demo_config, user="bob", home=home)
    bob.session.open_item(key, "cases")
    qtbot.waitUntil(lambda: bob.session.current is not None, timeout=10_000)
    assert bob.form.field("resolution").toPlainText() != "Alice's second try"
    _type(qtbot, bob, "resolution", "Bob's fix")
    with qtbot.waitSignal(bob.session.completed, timeout=10_000):
        qtbot.mouseClick(bob.complete_buttons["resolved"], Qt.MouseButton.LeftButton)
    assert row(bob, "cases", key)["resolution"] == "Bob's fix"
    # ... and his Complete does not delete her draft: it waits among her unfinished items.
    again = open_window(demo_config, user="alice", home=home)
    drafts = again.session.journal.drafts(owner="alice")
    assert [(d.queue, d.key, d.values.get("resolution")) for d in drafts] == [("cases", key, "Alice's second try")]
    assert any(e.key == key and e.has_draft for e in again.resume_panel.entries())


def test_drafts_kept_before_each_user_had_a_folder_move_to_their_owner(tmp_path: Path) -> None:
    shared = tmp_path / "journal"
    old = journal_mod.Journal(shared)
    for owner, key in (("alice", 1), ("bob", 2)):
        old.save(
            journal_mod.Draft(
                database="db",
                queue="cases",
                key=key,
                owner=owner,
                token=None,
                values={"v": owner},
                base={},
                updated_at="2026-11-27T10:00:00+00:00",
            )
        )
    from workbench import journal_guard

    mine = journal_guard.GuardedJournal(shared / paths.user_folder("alice"), owner="alice")
    assert [(d.key, d.owner) for d in mine.drafts()] == [(1, "alice")]
    assert [(d.key, d.owner) for d in journal_mod.Journal(shared).drafts()] == [(2, "bob")]  # bob's stays


def test_window_settings_are_each_users_own(tmp_path: Path) -> None:
    home = tmp_path / "shared-pc"
    before = gui_app.user_settings(home)  # the one file everyone shared before
    before.setValue(theme.SETTING, "dark")
    before.sync()
    alice = gui_app.user_settings(home, "alice")
    assert alice.value(theme.SETTING) == "dark"  # carried over the first time
    alice.setValue(theme.SETTING, "light")
    alice.sync()
    assert gui_app.user_settings(home, "bob").value(theme.SETTING) == "dark"
    assert gui_app.user_settings(home, "alice").value(theme.SETTING) == "light"
    assert paths.user_folder("Alice") != paths.user_folder("alice")
