"""German (issue 40, item 6): the texts a German clerk still met in English or in the wrong words."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QAccessible
from PySide6.QtWidgets import QApplication

from tests import servers
from tests.gui.test_board_columns import _console
from tests.gui.test_connections import fill
from workbench.core import models
from workbench.gui import board_model, connect_dialog, draft_view, i18n, times


@pytest.fixture
def language(qapp: QApplication, request: pytest.FixtureRequest) -> Iterator[str]:
    """One interface language for one test (widgets take their texts when built: install first)."""
    assert i18n.install(qapp, request.param) == request.param
    yield request.param
    i18n.install(qapp, "en")


def _expired_view(owner: str) -> models.ItemView:
    now = dt.datetime(2026, 11, 27, 12, 0)
    lock = models.Lock("claims", 7, owner, "t", now - dt.timedelta(minutes=40), now - dt.timedelta(minutes=10), now)
    return models.ItemView("claims", 7, {}, lock, "expired")


@pytest.mark.parametrize(
    ("language", "own", "other"),
    [
        ("en", "your lock on it has run out", "bob's lock on it has run out"),
        ("de", "Ihre Sperre ist abgelaufen", "Die Sperre von bob ist abgelaufen"),
        ("fr", "votre verrou a expiré", "le verrou de bob a expiré"),
    ],
    indirect=["language"],
)
def test_the_run_out_lock_of_the_viewer_addresses_her(language: str, own: str, other: str) -> None:
    """alice whose lock ran out reads "your lock", not "alice's lock" as if about someone else."""
    mine = draft_view.holder_of(_expired_view("alice"), "alice")
    assert mine.free
    assert mine.text.startswith(own), mine.text
    assert "alice" not in mine.text
    theirs = draft_view.holder_of(_expired_view("bob"), "alice")
    assert theirs.text.startswith(other), theirs.text


@pytest.mark.parametrize("language", ["de"], indirect=True)
def test_saving_without_a_config_file_is_said_in_german(language: str, qtbot: Any, tmp_path: Path) -> None:
    """The profile's checks (config/profiles.py) reach the German dialog in German, not English."""
    dialog = connect_dialog.ConnectionDialog(first_run=True)
    qtbot.addWidget(dialog)
    dialog.show()
    fill(dialog, kind="sqlite", name="büro", path=str(tmp_path / "cases.db"))
    dialog.from_file.setChecked(True)
    dialog.config.setText("")
    dialog.save_button.click()
    assert dialog.test_result.text() == (
        "Konfigurationsdatei der Warteschlangen: Wählen Sie die Konfigurationsdatei der Warteschlangen "
        "oder verwenden Sie die in der Datenbank veröffentlichten Einstellungen"
    )
    fill(dialog, kind="postgresql", host="db.example.org", user="bob", database="")
    dialog.save_button.click()
    assert dialog.test_result.text() == "Datenbankname: Geben Sie den Namen der Datenbank ein"


@pytest.mark.parametrize("language", ["de"], indirect=True)
def test_the_connection_tests_description_is_german(language: str, qtbot: Any) -> None:
    """A screen reader reads the answer's description: the German pointer to Details, not the probe's English."""
    dialog = connect_dialog.ConnectionDialog()
    qtbot.addWidget(dialog)
    dialog.show()
    port = servers.free_port()
    fill(dialog, kind="postgresql", name="x", host="127.0.0.1", port=port, database="d", user="u", password="pw")
    dialog.test_button.click()
    qtbot.waitUntil(lambda: dialog.test_result.property("state") == "fail", timeout=20_000)
    assert dialog.test_result.toolTip()  # the English diagnosis stays for a mouse user and for support
    read = QAccessible.queryAccessibleInterface(dialog.test_result)
    assert read is not None
    assert read.text(QAccessible.Text.Description) == "„Details“ zeigt die Meldung der Datenbank."


@pytest.mark.parametrize("backend", ["sqlite"])
@pytest.mark.parametrize("language", ["de", "fr"], indirect=True)
def test_the_board_says_overdue_as_the_form_does(language: str, qtbot: Any, demo_config: Any) -> None:
    """The lock board's Due column and the form's due line use one wording ("2 T 03 h überfällig"),
    not "vor 2 T 03 h", which reads as a moment in the past."""
    window = _console(qtbot, demo_config, 1100)
    try:
        due = {window.model.index(row, board_model.DUE).data() for row in range(window.model.rowCount())}
        late = times.until_due(-(2 * 86400 + 3 * 3600 + 59))
        assert late in due, (late, due)
        assert late.startswith({"de": "2 T 03 h überfällig", "fr": "en retard de 2 j 03 h"}[language])
    finally:
        window.close()
        window.dispatcher.wait(10_000)
        window.wb.close()
