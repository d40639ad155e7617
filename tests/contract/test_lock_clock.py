"""Shape 2 and the other program's clock: `lock.clock` (utc, local or a zone) is what every read and write of
the lock time uses, and `attach` and `queues` say when the lock times in the table run on another clock."""

from __future__ import annotations

import datetime as dt
import zoneinfo
from typing import Any

import pytest
import sqlalchemy as sa

from tests import support
from tests.contract import test_shapes
from workbench.core import errors

THREE = ["sqlite", "postgresql", "mariadb"]
NEW_YORK = "America/New_York"  # behind UTC (4 or 5 hours): an old lock written on it looks expired in UTC


def _zoned(zone: str) -> str:
    return test_shapes.LEGACY_CONFIG.replace('time = "lock_time"\n', f'time = "lock_time"\nclock = "{zone}"\n')


def _wall(zone: str) -> dt.datetime:
    """The zone's wall time now, as the old program writes it (naive)."""
    return dt.datetime.now(zoneinfo.ZoneInfo(zone)).replace(tzinfo=None, microsecond=0)


def _old_program_locks(env: support.Env, key: str, user: str, at: dt.datetime) -> None:
    t = sa.table("legacy_orders", sa.column("order_no"), sa.column("lock_user"), sa.column("lock_time", sa.DateTime))
    with env.engine.begin() as conn:
        conn.execute(sa.update(t).where(t.c.order_no == key).values(lock_user=user, lock_time=at))


@pytest.mark.parametrize("backend", THREE)
def test_a_zone_clock_is_what_claims_write_and_what_the_old_programs_locks_are_read_on(
    native_env: support.Env,
) -> None:
    env = native_env
    test_shapes._legacy(env)
    _old_program_locks(env, "SO-00002", "legacyapp", _wall(NEW_YORK))  # held now, in New York time
    wb = env.open(env.load(_zoned(NEW_YORK)))
    q = wb.queue("orders")
    claimed = q.claim_next("alice", 10)
    assert "SO-00002" not in {c.lock.key for c in claimed}  # a live lock of the old program
    mine = claimed[0].lock
    written = env.row(wb, "orders", mine.key)["lock_time"]
    written = dt.datetime.fromisoformat(written) if isinstance(written, str) else written
    assert abs((written - _wall(NEW_YORK)).total_seconds()) < 120  # the old program reads it as live
    q.save("alice", mine.key, mine.token, {"note": "checked"})
    # An extension moves the lock time on the same clock, capped from the claim (the trail's UTC).
    env.age_lock(wb, "orders", mine.key, 15 * 60)
    env.age_audit(wb, "orders", mine.key, 50 * 60)
    capped = q.extend("alice", mine.key, q.mine("alice")[0].token)
    claim_at = q.history(mine.key)[0].at
    moved = env.row(wb, "orders", mine.key)["lock_time"]
    moved = dt.datetime.fromisoformat(moved) if isinstance(moved, str) else moved
    expected = (claim_at + dt.timedelta(minutes=40)).astimezone(zoneinfo.ZoneInfo(NEW_YORK)).replace(tzinfo=None)
    assert abs((moved - expected).total_seconds()) < 2
    q.complete("alice", mine.key, capped.token)
    assert env.row(wb, "orders", mine.key)["processed"] == 1
    # Expiry on that clock too: the old program's lock, 21 minutes old in New York, is taken over.
    _old_program_locks(env, "SO-00002", "legacyapp", _wall(NEW_YORK) - dt.timedelta(minutes=21))
    assert [c.lock.key for c in q.claim_next("bob")] == ["SO-00002"]


def test_the_clock_setting_is_checked(native_env: support.Env) -> None:
    env = native_env
    with pytest.raises(errors.ConfigError) as bad:
        env.load(_zoned("Europe/Nowhere"))
    assert "queues.orders.lock.clock" in str(bad.value) and "IANA" in str(bad.value)
    with pytest.raises(errors.ConfigError) as bad:
        env.load(_zoned("utc'; drop table x; --"))
    assert "queues.orders.lock.clock" in str(bad.value)
    for fine in ("utc", "local", "Europe/Berlin"):
        assert env.load(_zoned(fine)).queues["orders"].lock.clock == fine
    claim_ids = support.sample_config("claim-ids").replace(
        'claim_id = "Lock"\n', 'claim_id = "Lock"\nclock = "local"\n'
    )
    with pytest.raises(errors.ConfigError) as bad:
        env.load(claim_ids)
    assert "queues.exports.lock.clock" in str(bad.value)


@pytest.mark.parametrize("backend", THREE)
def test_attach_and_queues_warn_when_the_lock_times_run_on_another_clock(native_env: support.Env, capsys: Any) -> None:
    env = native_env
    test_shapes._legacy(env)
    config = env.write_config(test_shapes.LEGACY_CONFIG)  # utc, the default
    _old_program_locks(env, "SO-00003", "legacyapp", _wall("Asia/Kolkata"))  # 5 h 30 min ahead of UTC
    code, out, err = support.run_cli(capsys, "--config", config, "--json", "queues")
    assert code == 0 and len(out["warnings"]) == 1 and "another program writes local time?" in out["warnings"][0]
    assert "5 h 30 min ahead of" in out["warnings"][0]
    code, out, err = support.run_cli(capsys, "--config", config, "--json", "attach", "orders")
    assert code == 0 and any("another program writes local time?" in note for note in out["notes"])
    # Behind by a zone's offset (New York): said too; on the right clock, nothing is said.
    _old_program_locks(env, "SO-00003", "legacyapp", _wall(NEW_YORK))
    code, out, err = support.run_cli(capsys, "--config", config, "queues")
    assert code == 0 and "behind the queue's lock clock (utc" in err
    _old_program_locks(env, "SO-00002", "legacyapp", _wall(NEW_YORK))  # every lock on New York's clock
    zoned = env.write_config(_zoned(NEW_YORK), "zoned.toml")
    code, out, err = support.run_cli(capsys, "--config", zoned, "--json", "queues")
    assert code == 0 and out["warnings"] == []
    # An old lock on the right clock is no clock problem: nothing said.
    _old_program_locks(env, "SO-00002", "legacyapp", _wall("UTC"))
    _old_program_locks(env, "SO-00003", "legacyapp", _wall("UTC") - dt.timedelta(minutes=47))
    code, out, err = support.run_cli(capsys, "--config", config, "--json", "queues")
    assert code == 0 and out["warnings"] == []


@pytest.mark.parametrize("backend", THREE)
def test_an_old_lock_left_in_the_row_is_no_clock_problem(native_env: support.Env, capsys: Any) -> None:
    """Locks stay in the row until a claim or sweep takes them, and one in about seven is a whole number
    of quarter-hours old: neither workbench's own (it writes the queue's clock) nor a 30-minute-old one
    (no zone is 30 minutes behind UTC) says that another program writes local time."""
    env = native_env
    test_shapes._legacy(env)
    config = env.write_config(test_shapes.LEGACY_CONFIG)  # utc, the default
    wb = env.open(env.load(test_shapes.LEGACY_CONFIG))
    mine = wb.queue("orders").claim_next("alice")[0].lock
    env.age_lock(wb, "orders", mine.key, 60 * 60)  # claimed an hour ago, never released: a zone's lag too
    other = "SO-00004" if mine.key == "SO-00003" else "SO-00003"
    _old_program_locks(env, other, "legacyapp", _wall("UTC") - dt.timedelta(minutes=30))
    code, out, _ = support.run_cli(capsys, "--config", config, "--json", "queues")
    assert code == 0 and out["warnings"] == []
    # The same lock written by another program an hour behind is said (Atlantic/Azores, Cape Verde).
    _old_program_locks(env, other, "legacyapp", _wall("UTC") - dt.timedelta(hours=1))
    code, out, _ = support.run_cli(capsys, "--config", config, "--json", "queues")
    assert code == 0 and len(out["warnings"]) == 1 and "1 h 00 min behind the queue's lock clock" in out["warnings"][0]
