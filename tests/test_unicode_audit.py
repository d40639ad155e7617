"""Reasons and names in any script survive the audit trail, also on a latin1-default MariaDB server."""

from __future__ import annotations

import pytest

from tests import support

REASON = "Kunde → 2nd level · Ελλάδα · 客户升级"


@pytest.mark.parametrize("backend", ["sqlite", "postgresql", "mariadb", "mariadb-odbc"])
def test_a_reason_in_any_script_is_kept(native_env: support.Env, backend: str) -> None:
    wb = native_env.demo(case_rows=5, import_rows=2)
    q = wb.queue("cases")
    claim = q.claim_next("zoë")[0]
    q.release("zoë", claim.lock.key, claim.lock.token, REASON)
    event = q.history(claim.lock.key)[-1]
    assert event.reason == REASON and event.actor == "zoë"
