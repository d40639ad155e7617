"""Extend in the same clock instant as the claim: the new expiry equals the old one, which is no refusal
when the queue has no maximum lock duration (it once raised ExtendLimitReached, "at most no limit")."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.helpers import workflow_bench
from workbench.core import errors


@pytest.mark.parametrize("shape", ["lock_time", "token"])
def test_an_extend_in_the_claims_instant_is_no_refusal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shape: str
) -> None:
    bench = workflow_bench.open_bench("sqlite", shape, False, tmp_path, None)
    try:
        queue = bench.admin.queue("main")
        assert queue.q.config.max_lock_seconds is None
        # The database clock stands still: the claim and the extend read the same instant (as they
        # do by chance when both fall in one millisecond of SQLite's clock).
        instant = dt.datetime.now(dt.UTC).replace(tzinfo=None)
        monkeypatch.setattr(queue.q, "now", lambda: sa.literal(instant, sa.DateTime()))
        lock = queue.claim_next("ann")[0].lock
        extended = queue.extend("ann", lock.key, lock.token)
        assert extended.owner == "ann" and extended.expires_at == lock.expires_at
        again = queue.extend("ann", extended.key, extended.token)  # the token it gave still holds
        assert again.expires_at == lock.expires_at
    finally:
        bench.close()


@pytest.mark.parametrize("shape", ["lock_time", "token"])
def test_a_refusal_without_a_cap_does_not_speak_of_one(tmp_path: Path, shape: str) -> None:
    # The one thing that still refuses an extension without max_lock_duration: a lock ahead of the
    # database clock (it stepped back). The message says so, never "at most no limit".
    bench = workflow_bench.open_bench("sqlite", shape, False, tmp_path, None)
    try:
        queue = bench.admin.queue("main")
        lock = queue.claim_next("ann")[0].lock
        bench.age_lock(lock.key, -3600)  # an hour ahead: the lock time (and a lock-time token) moves
        ahead = queue.mine("ann")[0]
        with pytest.raises(errors.ExtendLimitReached, match="database clock is behind") as refused:
            queue.extend("ann", ahead.key, ahead.token)
        assert "at most" not in str(refused.value)
    finally:
        bench.close()
