"""The audit trail keeps each changed column's value before and after a Save or a Complete with edits,
on every database; a queue's `audit_hidden` columns only as changed."""

from __future__ import annotations

import decimal

import pytest

from tests import support
from workbench.core import errors


def _changes(q: object, key: object, kind: str) -> list[dict]:
    return [e.detail.get("changes", {}) for e in q.history(key) if e.kind.value == kind and e.detail]  # type: ignore[attr-defined]


def test_save_and_complete_keep_old_and_new_values(native_env: support.Env) -> None:
    env = native_env
    wb = env.demo(case_rows=1, import_rows=3, queues={"imports": {"review": None, "audit_hidden": ("iban",)}})
    q = wb.queue("imports")
    claim = q.claim_next("clerk")[0]
    key, token = claim.lock.key, claim.lock.token
    before = env.row(wb, "imports", key)
    q.save("clerk", key, token, {"amount": "12.50", "vendor": before["vendor"], "iban": "DE89370400440532013000"})
    saved = _changes(q, key, "save")[-1]
    assert set(saved) == {"amount", "iban"}  # the vendor was not changed
    assert [decimal.Decimal(str(v)) for v in saved["amount"]] == [before["amount"], decimal.Decimal("12.50")]
    assert saved["iban"] == [None, None]  # changed, its values left out
    q.complete("clerk", key, token, "verified", {"checker_note": "Amount corrected from the PDF."})
    done = _changes(q, key, "complete")[-1]
    assert done == {"checker_note": [before["checker_note"], "Amount corrected from the PDF."]}
    events = [e for e in q.history(key) if e.kind.value == "complete"]
    assert events[-1].detail["columns"] == ["checker_note"]  # as before: which columns were edited


def test_a_refused_write_records_nothing(native_env: support.Env) -> None:
    wb = native_env.demo(case_rows=3, import_rows=1)
    q = wb.queue("cases")
    claim = q.claim_next("ann")[0]
    with pytest.raises(errors.LockLost):
        q.save("bob", claim.lock.key, claim.lock.token, {"subject": "Not mine"})
    assert [e.kind.value for e in q.history(claim.lock.key)] == ["claim"]
    q.save("ann", claim.lock.key, claim.lock.token, {"subject": "Printer jams on tray 2"})
    assert _changes(q, claim.lock.key, "save")[-1]["subject"][1] == "Printer jams on tray 2"


def test_the_command_line_history_says_what_changed(native_env: support.Env, capsys: object) -> None:
    env = native_env
    wb = env.demo(case_rows=2, import_rows=1)
    q = wb.queue("cases")
    claim = q.claim_next("ann")[0]
    q.save("ann", claim.lock.key, claim.lock.token, {"resolution": "Rebooted the switch."})
    code, out, _ = support.run_cli(
        capsys, "--config", env.demo_config_file(), "--user", "ann", "history", "cases", str(claim.lock.key)
    )
    assert code == 0 and "resolution None -> Rebooted the switch." in out and "columns=" not in out
