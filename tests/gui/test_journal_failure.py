"""A local disk that fails under the journal: Save and Complete still work, one honest warning, nothing lost.

The failure is real, not mocked: the journal folder (or the data folder) is replaced by a plain
file, so every write in it fails with ENOTDIR from the operating system (chmod would not stop
root, which the tests may run as).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from tests import support
from tests.gui.conftest import close_window, on_dialog, row
from tests.gui.test_operator import _claim, _type
from workbench.gui import main_window
from workbench.journal import Journal


def _break(directory: Path) -> None:
    """Put a file where the journal folder is: the disk refuses every write there from now on."""
    shutil.rmtree(directory)
    directory.write_text("not a folder\n")


def _repair(directory: Path) -> None:
    directory.unlink()


def _click(role: QMessageBox.ButtonRole) -> Any:
    return lambda box: next(b for b in box.buttons() if box.buttonRole(b) == role).click()


def _banner(window: main_window.MainWindow) -> str:
    assert window.journal_status is not None
    banner = window.journal_status.banner
    return banner.label.text() if banner.isVisible() else ""


def _typing_on_a_broken_disk(qtbot: Any, window: main_window.MainWindow, text: str) -> tuple[Path, Any]:
    """Claim an item, break the journal's folder, type `text`: the banner comes up. (folder, claim)"""
    directory = window.session.journal.directory
    claim = _claim(qtbot, window)
    _break(directory)
    _type(qtbot, window, "resolution", text)
    qtbot.waitUntil(lambda: "cannot be written" in _banner(window), timeout=3000)
    return directory, claim


def test_save_and_complete_go_through_while_the_journal_cannot_be_written(
    qtbot: Any, open_window: Any, demo_config: Any, tmp_path: Path
) -> None:
    window = open_window(demo_config, home=tmp_path / "alice")
    directory, claim = _typing_on_a_broken_disk(qtbot, window, "Typed on a full disk")
    text = _banner(window)
    assert str(directory) in text and "Not a directory" in text and "lost" in text
    with qtbot.waitSignal(window.session.saved, timeout=10_000):
        qtbot.mouseClick(window.save_button, Qt.MouseButton.LeftButton)
    assert row(window, "cases", claim.lock.key)["resolution"] == "Typed on a full disk"
    _type(qtbot, window, "time_spent_min", "25")
    with qtbot.waitSignal(window.session.completed, timeout=10_000):
        qtbot.mouseClick(window.complete_buttons["resolved"], Qt.MouseButton.LeftButton)
    stored = row(window, "cases", claim.lock.key)
    assert stored["status"] == "resolved" and stored["time_spent_min"] == 25
    assert str(directory) in _banner(window)  # still failing: the one banner is still there
    # The disk is fixed: the retry finds out by itself and the warning goes away.
    _repair(directory)
    qtbot.waitUntil(lambda: _banner(window) == "", timeout=5000)
    assert Journal(directory).drafts() == []  # the completed item left nothing behind


def test_edits_held_while_the_journal_fails_reach_the_disk_once_it_works(
    qtbot: Any, open_window: Any, demo_config: Any, tmp_path: Path
) -> None:
    window = open_window(demo_config, home=tmp_path / "alice")
    directory, claim = _typing_on_a_broken_disk(qtbot, window, "Only in memory for now")
    # Closing now would lose them: the window asks, and "Stay" keeps it open with the edits.
    answered = on_dialog(qtbot, "journal_close_box", _click(QMessageBox.ButtonRole.RejectRole))
    window.close()
    assert answered == ["journal_close_box"]
    assert window.isVisible() and window.session.current is not None
    assert window.form.field("resolution").toPlainText() == "Only in memory for now"
    _repair(directory)
    qtbot.waitUntil(lambda: _banner(window) == "", timeout=5000)
    draft = Journal(directory).load(window.session.database, "cases", claim.lock.key)
    assert draft is not None and draft.values["resolution"] == "Only in memory for now"


def test_close_without_a_journal_can_choose_to_lose_the_edits(
    qtbot: Any, open_window: Any, demo_config: Any, tmp_path: Path
) -> None:
    window = open_window(demo_config, home=tmp_path / "alice")
    _typing_on_a_broken_disk(qtbot, window, "Let it go")
    answered = on_dialog(qtbot, "journal_close_box", _click(QMessageBox.ButtonRole.DestructiveRole))
    # Then the quit guard asks about the touched item, as on every close: keep its lock.
    close_window(qtbot, window, "quit_keep")
    assert answered == ["journal_close_box"] and not window.isVisible()


def test_unwritable_data_directory_opens_the_window_with_the_warning(
    qtbot: Any, open_window: Any, demo_config: Any, tmp_path: Path
) -> None:
    home = tmp_path / "alice"
    home.mkdir()
    (home / "data").write_text("a file where the data folder should be\n")
    window = open_window(demo_config, home=home)
    text = _banner(window)
    assert "cannot be used" in text and str(home / "data" / "journal") in text and "Not a directory" in text
    claim = _claim(qtbot, window)  # the work goes on
    _type(qtbot, window, "resolution", "Works without a journal")
    with qtbot.waitSignal(window.session.saved, timeout=10_000):
        qtbot.mouseClick(window.save_button, Qt.MouseButton.LeftButton)
    assert row(window, "cases", claim.lock.key)["resolution"] == "Works without a journal"


def test_start_up_with_an_unwritable_data_directory_prints_no_traceback(tmp_path: Path) -> None:
    # The real program, as a user starts it: WORKBENCH_HOME lies under a file, so neither the
    # journal nor the log file can be created; the window must come up all the same.
    config = support.sqlite_demo(tmp_path / "demo")
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    shot = tmp_path / "shot.png"
    env = dict(
        os.environ,
        WORKBENCH_HOME=str(blocker / "home"),
        WORKBENCH_SMOKE_SCREENSHOT=str(shot),
        QT_QPA_PLATFORM="offscreen",
    )
    done = subprocess.run(
        [sys.executable, "-m", "workbench", "--config", str(config), "--user", "alice"],
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "Logging error" not in done.stderr
    assert shot.stat().st_size > 0
