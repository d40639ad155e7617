"""Small things at the desk (issue 40, item 7): why a line came back, the window's title after a
resume, a `text` column's editor, deferred items counted apart, and the appearance choices."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPlainTextEdit

from tests import support
from tests.gui.conftest import with_queue
from workbench import fieldspec
from workbench.config import loader, model
from workbench.db.supervision import Supervision
from workbench.services import door

DEMO_REVIEW = {"percent": 100, "first_items": 0}


def _demo(tmp_path: Path) -> model.Config:
    """The SQLite demo with every verified import line chosen for review."""
    config = loader.load(support.sqlite_demo(tmp_path / "demo"))
    review = config.queues["imports"].review
    assert review is not None
    config = with_queue(config, "imports", review=dataclasses.replace(review, **DEMO_REVIEW))
    return with_queue(config, "imports_review", release_cooldown_seconds=0)


def _claim_next(qtbot: Any, window: Any) -> Any:
    with qtbot.waitSignal(window.session.claimed, timeout=10_000) as signal:
        qtbot.mouseClick(window.next_button, Qt.MouseButton.LeftButton)
    return signal.args[0]


def test_a_sent_back_line_says_why_above_the_form(qtbot: Any, open_window: Any, tmp_path: Path) -> None:
    window = open_window(_demo(tmp_path), user="alice")
    wb = door.engine(window.session.wb)
    imports = wb.queue("imports")
    with wb.engine.begin() as conn:
        conn.execute(sa.update(imports.q.table).values(check_status="pending", checked_by=None, checked_at=None))
    mine = imports.claim_next("alice")[0]
    imports.complete("alice", mine.lock.key, mine.lock.token, "verified")
    review = wb.queue("imports_review")
    got = review.claim_next("bob")[0]
    review.complete("bob", got.lock.key, got.lock.token, "sent_back", note="The IBAN has a digit too few.")

    window.queue_picker.setCurrentIndex(window.queue_picker.findData("imports"))
    claim = _claim_next(qtbot, window)
    assert claim.lock.key == mine.lock.key
    banner = window.sent_back_banner
    qtbot.waitUntil(banner.isVisible, timeout=10_000)
    assert "bob" in banner.label.text() and "The IBAN has a digit too few." in banner.label.text()


def test_the_title_names_the_queue_of_a_resumed_item(qtbot: Any, open_window: Any, tmp_path: Path) -> None:
    config = _demo(tmp_path)
    window = open_window(config, user="alice")
    assert config.queues["cases"].title in window.windowTitle()
    held = door.engine(window.session.wb).queue("imports").claim_next("alice")[0]
    with qtbot.waitSignal(window.session.claimed, timeout=10_000):
        window.resume_panel.open_requested.emit("imports", held.lock.key)
    assert config.queues["imports"].title in window.windowTitle()
    assert config.queues["cases"].title not in window.windowTitle()


def _counts(window: Any) -> dict[str, tuple[str, str | None]]:
    """Per queue title on the start page: (waiting, deferred) as shown, deferred None while its column is hidden."""
    table = window.counts_table
    return {
        table.item(r, 0).text(): (table.item(r, 1).text(), None if table.isColumnHidden(4) else table.item(r, 4).text())
        for r in range(table.rowCount())
    }


def test_deferred_items_are_counted_apart_from_the_waiting_ones(qtbot: Any, open_window: Any, tmp_path: Path) -> None:
    config = _demo(tmp_path)
    # Bob's deferral shows at once only when the start page counts each time (else within counts_every).
    config = dataclasses.replace(config, app=dataclasses.replace(config.app, counts_every=0))
    window = open_window(config, user="alice")
    title = config.queues["cases"].title
    with qtbot.waitSignal(window.session.counts_loaded, timeout=10_000):
        window.session.load_counts()
    window.session.dispatcher.wait(10_000)
    waiting, deferred = _counts(window)[title]
    assert deferred is None  # nothing deferred: no column for it
    cases = door.engine(window.session.wb).queue("cases")
    held = cases.claim_next("bob")[0]
    now = cases.db_clock().utc.replace(tzinfo=dt.UTC)
    cases.defer("bob", held.lock.key, held.lock.token, now + dt.timedelta(days=1), "customer calls back")
    window.session.load_counts()
    qtbot.waitUntil(lambda: _counts(window)[title] == (str(int(waiting) - 1), "1"), timeout=10_000)


def test_the_form_keeps_its_layout_after_a_message_and_after_save(qtbot: Any, open_window: Any, tmp_path: Path) -> None:
    window = open_window(_demo(tmp_path), user="alice")
    window.queue_picker.setCurrentIndex(window.queue_picker.findData("cases"))
    _claim_next(qtbot, window)
    form = window.form
    bar = form._scroll.verticalScrollBar()
    last = form.field(form.names()[-1])
    # A window just tall enough for the whole form: any growth would bring a scrollbar.
    window.resize(1100, 1000)
    qtbot.waitUntil(lambda: form._scroll.viewport().height() > 0)
    spare = form._scroll.viewport().height() - form._body.sizeHint().height()
    window.resize(1100, 1000 - spare + 2)
    qtbot.waitUntil(lambda: bar.maximum() == 0 and not last.visibleRegion().isEmpty())

    def stable() -> None:
        qtbot.wait(100)  # the shown messages laid out
        assert bar.maximum() == 0 and not bar.isVisible()
        assert not last.visibleRegion().isEmpty()

    editor = form.field("time_spent_min")
    editor.setFocus()
    editor.selectAll()
    qtbot.keyClicks(editor, "soon")
    qtbot.mouseClick(window.save_button, Qt.MouseButton.LeftButton)
    assert "whole number" in form.error_text("time_spent_min")
    stable()
    editor.selectAll()
    qtbot.keyClicks(editor, "12")
    subject = form.field("subject")
    subject.setFocus()
    subject.selectAll()
    qtbot.keyClicks(subject, "A new subject")
    with qtbot.waitSignal(window.session.saved, timeout=10_000):
        qtbot.mouseClick(window.save_button, Qt.MouseButton.LeftButton)
    origin = form.findChild(QLabel, "origin_subject")
    qtbot.waitUntil(origin.isVisible, timeout=10_000)
    stable()


def test_an_item_given_back_after_the_loss_offers_to_carry_on(qtbot: Any, open_window: Any, tmp_path: Path) -> None:
    window = open_window(_demo(tmp_path), user="alice")
    window.queue_picker.setCurrentIndex(window.queue_picker.findData("cases"))
    claim = _claim_next(qtbot, window)
    resolution = window.form.field("resolution")
    resolution.setFocus()
    qtbot.keyClicks(resolution, "My careful notes")
    cases = door.engine(window.session.wb).queue("cases")
    Supervision(cases).reassign("sue", claim.lock.key, "bob", "bob knows this customer")
    with qtbot.waitSignal(window.session.lock_lost, timeout=5000):
        window.session.check_now()
    banner = window.lost_banner.label
    qtbot.waitUntil(lambda: "bob holds it" in banner.text(), timeout=10_000)
    # The supervisor gives it back: the banner stops calling the lock lost and offers to carry on.
    Supervision(cases).reassign("sue", claim.lock.key, "alice", "bob is ill")
    qtbot.waitUntil(lambda: "bob holds it" not in banner.text(), timeout=10_000)
    assert "Lock lost" not in banner.text() and "again" in banner.text()
    assert window.reclaim_button.isVisible() and window.reclaim_button.text() == "Carry on with my edits"
    with qtbot.waitSignal(window.session.claimed, timeout=10_000):
        qtbot.mouseClick(window.reclaim_button, Qt.MouseButton.LeftButton)
    assert window.form.field("resolution").toPlainText() == "My careful notes"
    assert not window.form.field("resolution").isReadOnly()


def test_the_reviewer_sees_the_clerks_field_labels(qtbot: Any, open_window: Any, tmp_path: Path) -> None:
    window = open_window(_demo(tmp_path), user="alice")
    wb = door.engine(window.session.wb)
    clerk = {spec.name: spec.label for spec in fieldspec.field_specs(wb.queue("imports").q)}
    reviewer = {spec.name: spec.label for spec in fieldspec.field_specs(wb.queue("imports_review").q)}
    # The demo's review queue labels a few fields itself and leaves the others to the reviewed queue.
    for name in ("vat_rate", "iban", "paid", "invoice_no"):
        assert reviewer[name] == clerk[name]
    assert reviewer["checked_by"] == "Verified by"  # its own, kept
    # The reviewer's form shows them.
    window.form.set_specs(fieldspec.field_specs(wb.queue("imports_review").q))
    assert window.form.field("vat_rate").accessibleName() == clerk["vat_rate"] == "VAT rate (%)"


def test_a_text_column_gets_a_wide_multiline_box(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    window = open_window(demo_config, user="alice")
    window.queue_picker.setCurrentIndex(window.queue_picker.findData("cases"))
    _claim_next(qtbot, window)
    window.resize(1100, 800)
    box = window.form.field("resolution")  # `text` on PostgreSQL, TEXT on SQLite
    subject = window.form.field("subject")
    qtbot.waitUntil(lambda: box.width() > 0 and subject.width() > 0)
    assert isinstance(box, QPlainTextEdit)
    assert box.width() >= subject.width() - 1
