"""A local disk that refuses writes: the guarded journal keeps drafts in memory and catches up; the log keeps quiet.

Real failures from the operating system: a plain file where the journal folder should be
(ENOTDIR, even for root) and /dev/full (ENOSPC, a full disk).
"""

from __future__ import annotations

import errno
import logging
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.test_journal import DB, QUEUE, make_draft
from workbench import journal_guard, logs
from workbench.journal import Journal


def _guard(directory: Path) -> tuple[journal_guard.GuardedJournal, list[Any]]:
    seen: list[Any] = []
    return journal_guard.GuardedJournal(directory, on_problem=seen.append), seen


def test_a_failed_write_is_held_in_memory_and_written_once_the_disk_takes_it(tmp_path: Path) -> None:
    directory = tmp_path / "journal"
    guard, seen = _guard(directory)
    assert guard.save(make_draft(1, values={"name": "first"})) and guard.problem is None
    shutil.rmtree(directory)
    directory.write_text("in the way\n")
    assert guard.save(make_draft(2, values={"name": "second"})) is False
    problem = guard.problem
    assert problem is not None and problem.action == "write" and problem.errno == errno.ENOTDIR
    assert problem.directory == directory and problem.advice() == "file" and seen == [problem]
    # Everything that reads the journal still sees the unwritten draft.
    loaded = guard.load(DB, QUEUE, 2)
    assert loaded is not None and loaded.values == {"name": "second"}
    assert [d.key for d in guard.drafts(DB)] == [2] and [d.key for d in guard.unwritten()] == [2]
    assert guard.discard(DB, QUEUE, 1) is False  # noted, done later
    assert guard.retry() is False and seen == [problem]  # the same problem is reported once
    directory.unlink()
    assert guard.retry() is True and guard.problem is None and seen[-1] is None
    on_disk = Journal(directory)
    assert [d.key for d in on_disk.drafts(DB)] == [2] and on_disk.load(DB, QUEUE, 2).values == {"name": "second"}
    assert guard.unwritten() == []


def test_an_unusable_directory_at_start_is_reported_not_raised(tmp_path: Path) -> None:
    (tmp_path / "data").write_text("a file\n")
    directory = tmp_path / "data" / "journal"
    guard, seen = _guard(directory)
    assert guard.problem is not None and guard.problem.action == "open" and seen == [guard.problem]
    assert guard.drafts() == [] and guard.load(DB, QUEUE, 1) is None
    assert guard.save(make_draft(1)) is False and guard.load(DB, QUEUE, 1) == make_draft(1)
    (tmp_path / "data").unlink()
    assert guard.retry() is True and Journal(directory).load(DB, QUEUE, 1) == make_draft(1)


def test_a_folder_removed_under_the_journal_is_made_again(tmp_path: Path) -> None:
    directory = tmp_path / "journal"
    guard, _ = _guard(directory)
    shutil.rmtree(directory)  # a clean-up tool, say: the next save makes it again at once
    assert guard.save(make_draft(1)) is True and guard.problem is None
    assert Journal(directory).load(DB, QUEUE, 1) == make_draft(1)


def test_a_draft_of_a_type_the_journal_cannot_hold_still_raises(tmp_path: Path) -> None:
    guard, _ = _guard(tmp_path / "journal")
    with pytest.raises(TypeError):
        guard.save(make_draft(1, values={"name": object()}))
    assert guard.unwritten() == []


def test_a_full_disk_under_the_log_file_prints_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    monkeypatch.setattr(logs, "log_path", lambda: Path("/dev/full"))  # every write: ENOSPC
    logs.close()
    try:
        assert logs.setup() == Path("/dev/full")
        logging.getLogger("workbench.test").warning("the disk is full " + "x" * 10_000)
    finally:
        logs.close()
    captured = capsys.readouterr()
    assert "Logging error" not in captured.err and "Traceback" not in captured.err
