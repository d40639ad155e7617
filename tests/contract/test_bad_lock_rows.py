"""Lock times another program wrote that no date arithmetic can use: every listing still works."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from tests import support
from workbench.core import errors
from workbench.db.binding import times
from workbench.db.supervision import Supervision

# Per backend: an expiry beyond what Python (or the database's date arithmetic) can hold.
_FAR = {"postgresql": "infinity", "sqlite": "not a time", "mariadb": "9999-12-31 23:59:59"}


def test_listings_survive_a_lock_expiry_far_in_the_future_or_missing(
    native_env: support.Env, capsys: pytest.CaptureFixture[str]
) -> None:
    env = native_env
    wb = env.demo(case_rows=6, import_rows=1)
    q = wb.queue("cases")
    far, gone, fine = (c.lock.key for c in q.claim_next("alice", 3))
    far_value = _FAR[env.backend.split("-")[0]]
    with wb.engine.begin() as conn:
        conn.execute(sa.text(f"UPDATE cases SET wb_lock_expires = '{far_value}' WHERE case_id = :k"), {"k": far})
        if env.backend == "postgresql":  # a year PostgreSQL holds but Python cannot
            conn.execute(sa.text("UPDATE cases SET wb_locked_at = '200000-01-01' WHERE case_id = :k"), {"k": far})
        conn.execute(sa.text("UPDATE cases SET wb_lock_expires = NULL WHERE case_id = :k"), {"k": gone})
    locks = {lock.key: lock for lock in q.locks()}
    assert set(locks) == {far, gone, fine}
    assert not locks[far].expired and locks[far].remaining.days > 366  # as the claim sees it: never expires
    assert locks[gone].expired and locks[gone].expires_at == times.UNREADABLE_PAST  # the claim takes it over
    assert {lock.key for lock in q.mine("alice")} == {far, gone, fine}
    assert {row.key for row in Supervision(q).board()} == {far, gone, fine}
    assert q.show(far).state == "locked" and q.show(gone).state == "expired"
    path = env.demo_config_file()
    for command in (["locks", "cases"], ["board", "cases"], ["mine", "cases"], ["show", "cases", far]):
        code, out, err = support.run_cli(capsys, "--config", path, "--user", "alice", *command)
        assert code == 0, (command, err)
        if command[0] == "locks":
            assert "over a year" in out and "expired" in out
    assert Supervision(q).force_release("sue", far, "stuck").key == far
    assert q.claim_next("bob")[0].lock.key == gone  # an expiry that is not there: served again first


def test_a_nul_character_is_refused_before_it_reaches_the_table(native_env: support.Env) -> None:
    # SQLite and MariaDB stored it (and other programs then read the text cut short).
    env = native_env
    wb = env.demo(case_rows=3, import_rows=1)
    q = wb.queue("cases")
    claim = q.claim_next("alice")[0]
    with pytest.raises(errors.InvalidValue, match=r"resolution: contains a NUL character \(code 0\)") as info:
        q.save("alice", claim.lock.key, claim.lock.token, {"resolution": "fixed\x00hidden"})
    assert info.value.exit_code == 5
    assert env.row(wb, "cases", claim.lock.key)["resolution"] is None
