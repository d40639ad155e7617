"""German (issue 40, item 6): the texts a German clerk still met in English or in the wrong words."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import pytest
from PySide6.QtWidgets import QApplication

from workbench.core import models
from workbench.gui import draft_view, i18n


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
