"""One person, two programs, one name: a lock under the user's name that workbench did not take (the audit
trail names no claim of it) is the old program's, never resumed, listed as one's own or completed."""

from __future__ import annotations

import datetime as dt
import time

import pytest
import sqlalchemy as sa

from tests import support
from tests.contract import test_shapes
from workbench.core import errors

THREE = ["sqlite", "postgresql", "mariadb"]


@pytest.mark.parametrize("backend", THREE)
def test_the_old_programs_lock_under_the_same_name_is_not_ones_own(native_env: support.Env) -> None:
    env = native_env
    wb = test_shapes._legacy(env)  # SO-00002 is held by "legacyapp" now
    t = sa.table("legacy_orders", sa.column("order_no"), sa.column("lock_user"), sa.column("lock_time", sa.DateTime))
    with env.engine.begin() as conn:  # alice's old program locks SO-00003 under her login, now (UTC)
        now = dt.datetime.now(dt.UTC).replace(tzinfo=None, microsecond=0)
        conn.execute(sa.update(t).where(t.c.order_no == "SO-00003").values(lock_user="alice", lock_time=now))
    q = wb.queue("orders")
    assert q.mine("alice") == []  # not hers in workbench: nothing to resume
    with pytest.raises(errors.NothingToClaim, match="held by another program under the name alice"):
        q.claim("alice", "SO-00003")  # not handed back as "resumed"
    claimed = q.claim_next("alice", 10)
    assert {c.lock.key for c in claimed} == {"SO-00001", "SO-00004", "SO-00005", "SO-00006"}
    assert not any(c.resumed for c in claimed)
    assert sorted(lock.key for lock in q.mine("alice")) == ["SO-00001", "SO-00004", "SO-00005", "SO-00006"]
    # A lock workbench took stays hers after an extension moved its lock time (and so its token).
    first = claimed[0].lock
    time.sleep(1.1)  # a later lock time, also where the column keeps whole seconds
    extended = q.extend("alice", first.key, first.token)
    assert extended.token != first.token and first.key in [lock.key for lock in q.mine("alice")]
    assert q.claim("alice", first.key).resumed
    for lock in q.mine("alice"):
        q.complete("alice", lock.key, lock.token)
    row = env.row(wb, "orders", "SO-00003")
    assert (row["processed"], row["lock_user"]) == (0, "alice")  # the old program's to finish
    assert [e.kind.value for e in q.history("SO-00003")] == []
    with pytest.raises(errors.NothingToClaim):
        q.claim_next("bob")  # SO-00002 and SO-00003 stay the old program's
