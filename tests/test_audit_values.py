"""The audit trail keeps each changed column's value before and after a Save or a Complete with edits,
on every database; a queue's `audit_hidden` columns only as changed."""

from __future__ import annotations

import decimal

import pytest
import sqlalchemy as sa

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


@pytest.mark.parametrize("backend", ["mariadb", "mariadb-odbc"])
def test_a_claims_audit_time_is_its_locks_time_on_mariadb(native_env: support.Env) -> None:
    """Hole 7 of issue 47: MariaDB reads its clock per statement, and the claim's audit rows came in a
    later statement (a later round trip in a batch), with a later time than the lock. They carry the
    lock's time now: next (several at once, an expired lock taken over) and a pick by key, batched
    (PyMySQL) and stepwise (ODBC)."""
    wb = native_env.demo(case_rows=6, import_rows=1)
    q = wb.queue("cases")
    first = q.claim_next("ann", 2)
    support.age_lock(wb, "cases", first[0].lock.key, 3600)  # ann's lock ran out: bob's claim takes it over
    claimed = [*first[1:], *q.claim_next("bob", 2), q.claim("cid", q.open_items(1)[0]["case_id"])]
    assert first[0].lock.key in [c.lock.key for c in claimed if c.lock.owner == "bob"]
    audit = wb.audit_table
    with wb.engine.connect() as conn:
        for c in claimed:
            locked_at = native_env.row(wb, "cases", c.lock.key)["wb_locked_at"]
            rows = conn.execute(
                sa.select(audit.c.event, audit.c.at)
                .where(audit.c.item_key == str(c.lock.key), audit.c.owner == c.lock.owner)
                .where(audit.c.event.in_(["claim"]))
            ).all()
            assert [at for _, at in rows] == [locked_at], (c.lock.key, rows, locked_at)
        expiry = conn.execute(
            sa.select(audit.c.at).where(audit.c.item_key == str(first[0].lock.key), audit.c.event == "expire")
        ).scalar_one()
        assert expiry == native_env.row(wb, "cases", first[0].lock.key)["wb_locked_at"]  # noticed by that claim
