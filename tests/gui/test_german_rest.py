"""German (issue 40, item 6): the texts a German clerk still met in English or in the wrong words."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAccessible
from PySide6.QtWidgets import QAbstractButton, QApplication, QGroupBox, QHeaderView, QLabel, QWidget

from tests import servers
from tests.gui.test_board_columns import _console
from tests.gui.test_connections import fill
from workbench.core import models
from workbench.gui import board_model, connect_dialog, dialogs, draft_view, i18n, times
from workbench.services import operator


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
def test_german_says_what_can_be_claimed_and_how_long_in_its_own_words(language: str) -> None:
    """Issue 53: "er kann wieder übernommen werden" (er: nothing it stood for) and "2 T 10 h" (a code)."""
    mine = draft_view.holder_of(_expired_view("alice"), "alice")
    assert mine.text == "Ihre Sperre ist abgelaufen: Sie können den Eintrag wieder übernehmen"
    texts = [draft_view.holder_of(_expired_view("bob"), "alice").text, mine.text]
    assert not any(re.search(r"\ber\b|\bihn\b", t) for t in texts), texts
    assert times.duration(2 * 86400 + 10 * 3600) == "2 Tg. 10 h"
    assert times.until_due(-(2 * 86400 + 3 * 3600)) == "2 Tg. 03 h überfällig"


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
    """The lock board's Due column and the form's due line use one wording ("2 Tg. 03 h überfällig"),
    not "vor 2 T 03 h", which reads as a moment in the past."""
    window = _console(qtbot, demo_config, 1100)
    try:
        due = {window.model.index(row, board_model.DUE).data() for row in range(window.model.rowCount())}
        late = times.until_due(-(2 * 86400 + 3 * 3600 + 59))
        assert late in due, (late, due)
        assert late.startswith({"de": "2 Tg. 03 h überfällig", "fr": "en retard de 2 j 03 h"}[language])
    finally:
        window.close()
        window.dispatcher.wait(10_000)
        window.wb.close()


# Words of an English sentence that German does not use (no "in", "was", "will", "so": German has them).
_ENGLISH = frozenset(
    [
        "the",
        "is",
        "are",
        "you",
        "your",
        "to",
        "of",
        "and",
        "this",
        "that",
        "with",
        "for",
        "not",
        "it",
        "be",
        "has",
        "have",
        "been",
        "can",
        "by",
        "from",
        "or",
        "nothing",
        "there",
        "which",
        "what",
        "when",
        "please",
        "here",
    ]
)


def _config_texts(value: Any) -> set[str]:
    """Every text of the queue config (titles, labels, outcomes): config data, in whatever language it is written."""
    if isinstance(value, str):
        return {value} if value.strip() else set()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return set().union(*(_config_texts(getattr(value, f.name)) for f in dataclasses.fields(value)))
    if isinstance(value, Mapping):
        return set().union(set(), *(_config_texts(k) | _config_texts(v) for k, v in value.items()))
    if isinstance(value, (list, tuple, set, frozenset)):
        return set().union(set(), *(_config_texts(v) for v in value))
    return set()


def _shown_texts(widget: QWidget) -> list[str]:
    """The texts a user reads in a window: its title, labels, buttons, table and list headers."""
    texts = [widget.windowTitle()]
    texts += [w.text() for w in widget.findChildren(QLabel) if w.isVisible()]
    texts += [w.text() for w in widget.findChildren(QAbstractButton) if w.isVisible()]
    texts += [w.title() for w in widget.findChildren(QGroupBox) if w.isVisible()]
    for header in widget.findChildren(QHeaderView):
        model = header.model()
        if model is not None and header.isVisible():
            texts += [str(model.headerData(c, header.orientation()) or "") for c in range(header.count())]
    return texts


def _english(texts: list[str], data: set[str]) -> list[str]:
    """The texts that read as English sentences once the config's own texts are taken out."""
    found = []
    for text in texts:
        rest = text
        for known in sorted(data, key=len, reverse=True):
            rest = rest.replace(known, " ")
        rest = re.sub(r"\S*[/\\]\S*", " ", rest)  # a file's path is data too
        words = {w.lower() for w in re.findall(r"[A-Za-z']+", rest.replace("&", ""))}
        if len(words & _ENGLISH) >= 2:
            found.append(text)
    return found


@pytest.mark.parametrize("backend", ["sqlite"])
@pytest.mark.parametrize("language", ["de"], indirect=True)
def test_the_german_window_and_dialogs_show_no_english_sentence(
    language: str, qtbot: Any, open_window: Any, demo_config: Any
) -> None:
    window = open_window(demo_config)
    with qtbot.waitSignal(window.session.claimed, timeout=10_000):
        qtbot.mouseClick(window.next_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.timer_label.text().startswith("Sperre auf"), timeout=3000)
    data = _config_texts(window.session.wb.config) | {str(v) for v in window.session.current.claim.item.values()}
    assert _english(["Your lock on it has run out, nothing to do"], data)  # the check can fail
    shown = _shown_texts(window)
    title = window.windowTitle()
    pick = operator.PickList(key_name="case_id", rows=[{"case_id": 1}], labels={"case_id": "Fall"}, waiting=1)
    for dialog in (
        dialogs.ReleaseDialog(title, True, note_required=True),
        dialogs.DeferDialog(title, True, note_required=True),
        dialogs.PickDialog(pick),
    ):
        qtbot.addWidget(dialog)
        dialog.show()
        shown += _shown_texts(dialog)
        dialog.reject()
    assert len([t for t in shown if t]) > 30 and "Nächster Eintrag" in shown  # the collection reads the window
    assert _english(shown, data) == []
