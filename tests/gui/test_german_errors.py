"""German (issue 40, item 6): what the launcher and the connection dialog say of an error is in the
window's language; the engine's English (a file's problem, the driver's words) is under Details."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QMessageBox

from tests.gui.conftest import on_dialog
from tests.gui.test_connections import two_profiles_open
from tests.gui.test_german_rest import _english, language  # noqa: F401  (language: the fixture)
from workbench.config import profiles
from workbench.core import errors
from workbench.gui import draft_view, problem_text


@pytest.mark.parametrize("language", ["de"], indirect=True)
def test_each_kind_of_error_is_said_in_german(language: str) -> None:
    for exc in (
        errors.ConfigError("cannot read: Permission denied", file="/home/ann/.config/workbench/profiles.toml"),
        errors.ConfigError("expected a table", file="profiles.toml", key="profiles.A"),
        errors.ConfigError("the queue has no fields"),
        errors.UsageError("no connection profile named 'C' in /x/profiles.toml; the profiles are A, B"),
        errors.CredentialStoreError("cannot remember the password: no OS password store is available"),
        errors.DatabaseUnavailable("cannot reach the database: connection refused"),
        errors.NotPermitted("sue may not reopen items: ask an administrator for the supervisor role"),
        errors.NotInitialized("workbench's tables are missing: run `workbench init` first"),
    ):
        text, details = problem_text.said(exc)
        assert _english([text], set()) == [], (text, exc)
        assert details == str(exc)  # the English whole, for whoever helps
    # A message that is one of the templates is said whole, nothing under Details.
    text, details = problem_text.said(errors.ConfigError.of("enter the database name", file="p.toml", key="x"))
    assert text == "Datenbankname eingeben" or not _english([text], set()), text
    assert details == ""


@pytest.mark.parametrize("language", ["de"], indirect=True)
def test_a_missing_profile_is_said_in_german(
    language: str, qtbot: Any, make_launcher: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    the = two_profiles_open(make_launcher, tmp_path)
    profiles.ProfileStore().remove("B")  # gone meanwhile (another window, or by hand)
    said: list[tuple[str, str]] = []

    def read(box: QMessageBox) -> None:
        said.append((box.text(), box.detailedText()))
        box.button(QMessageBox.StandardButton.Ok).click()

    on_dialog(qtbot, "error_box", read)
    assert not the.switch("B")
    assert said, "no message"
    text, details = said[0]
    assert text == "Das Verbindungsprofil B gibt es nicht mehr."  # once: "no connection profile named 'B' in …"
    assert "no connection profile named 'B'" in details


@pytest.mark.parametrize("language", ["de"], indirect=True)
def test_a_broken_profiles_file_is_said_in_german(
    language: str, qtbot: Any, make_launcher: Any, tmp_path: Path
) -> None:
    store = profiles.ProfileStore()
    store.path.parent.mkdir(parents=True, exist_ok=True)
    store.path.write_text("[profiles.A]\nkind = 'sqlite'\npath = \n", encoding="utf-8")  # not TOML
    said: list[tuple[str, str]] = []

    def read(box: QMessageBox) -> None:
        said.append((box.windowTitle(), box.text()))
        box.button(QMessageBox.StandardButton.Ok).click()

    on_dialog(qtbot, "error_box", read)
    assert not make_launcher().start(None, None, False)
    assert said and _english(list(said[0]), {str(store.path)}) == [], said


@pytest.mark.parametrize(
    ("language", "yours", "bobs"),
    [
        ("en", "You hold it now, under another lock.", "bob holds it now."),
        ("de", "Sie haben ihn jetzt selbst gesperrt", "Jetzt hat bob ihn gesperrt."),
    ],
    indirect=["language"],
)
def test_the_holder_hint_names_the_viewer_as_you(language: str, yours: str, bobs: str) -> None:
    """alice's lock lost while alice holds the item under another lock (another window of hers, a
    reassignment to her) is told to her as "you", not "alice holds it now" as if about someone else."""
    lost = errors.LockLost("lock lost", queue="cases", key=7, cause="taken", holder="alice")
    assert draft_view.holder_hint(lost, "alice").startswith(yours)
    assert "alice" not in draft_view.holder_hint(lost, "alice")
    bob = errors.LockLost("lock lost", queue="cases", key=7, cause="taken", holder="bob")
    assert draft_view.holder_hint(bob, "alice").startswith(bobs)
