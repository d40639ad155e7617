"""The operators Reassign offers: who claimed in the queue lately, read through the trail's time index."""

from __future__ import annotations

from tests import support
from workbench.db.supervision import Supervision


def test_reassign_offers_who_claimed_in_the_queue_lately(native_env: support.Env) -> None:
    wb = native_env.demo(case_rows=4, import_rows=1, queues={"cases": {"max_locks_per_user": 0}})
    cases = wb.queue("cases")
    old = cases.claim_next("olga")[0].lock
    cases.claim_next("alice")
    cases.claim_next("bob")
    native_env.age_audit(wb, "cases", old.key, 200 * 86_400)  # olga claimed 200 days ago
    assert set(Supervision(cases).operators()) == {"alice", "bob"}  # the latest first; these two within the same second
    assert "olga" in Supervision(cases).operators(days=365)
