"""Shape 6: the table's own claim-id column holds the lock's token; lock time and expiry live in the lock table."""

from __future__ import annotations

import collections
import datetime as dt
import uuid
from typing import Any

import pytest
import sqlalchemy as sa

from tests import support
from tests.conftest import POOLED
from tests.contract import test_concurrency
from tests.contract import test_lock_table as lock_table_test
from workbench.core import errors
from workbench.db.supervision import Supervision

CONFIG = support.sample_config("claim-ids")


def _tables(env: support.Env, rows: int = 6, lock_type: Any = None) -> Any:
    md = sa.MetaData()
    exports = sa.Table(
        "export_rows",
        md,
        sa.Column("row_id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("payload", sa.String(200)),
        sa.Column("processed", sa.Integer, nullable=False),
        sa.Column("Lock", lock_type if lock_type is not None else sa.String(36)),
    )
    payments = sa.Table(
        "payments",
        md,
        sa.Column("payment_id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("received_at", sa.DateTime, nullable=False),
        sa.Column("amount", sa.Numeric(10, 2)),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("process_uuid", sa.Uuid()),
    )
    md.create_all(env.engine)
    start = dt.datetime(2026, 3, 1)
    with env.engine.begin() as conn:
        conn.execute(
            sa.insert(exports),
            [
                {"row_id": i, "created_at": start + dt.timedelta(minutes=i), "payload": f"row {i}", "processed": 0}
                for i in range(1, rows + 1)
            ],
        )
        conn.execute(
            sa.insert(payments),
            [
                {"payment_id": i, "received_at": start + dt.timedelta(minutes=i), "amount": i, "status": "new"}
                for i in range(1, rows + 1)
            ],
        )
    wb = env.open(env.load(CONFIG))
    wb.init()
    return wb


def _row(env: support.Env, table: str, key: int) -> dict[str, Any]:
    with env.engine.connect() as conn:
        t = sa.Table(table, sa.MetaData(), autoload_with=conn)
        return dict(conn.execute(sa.select(t).where(next(iter(t.primary_key.columns)) == key)).mappings().one())


def _lock_rows(env: support.Env) -> int:
    with env.engine.connect() as conn:
        return int(conn.execute(sa.text("SELECT count(*) FROM workbench_locks")).scalar() or 0)


def test_a_claim_writes_its_token_as_the_claim_id_and_complete_clears_it(native_env: support.Env) -> None:
    env = native_env
    wb = _tables(env)
    q = wb.queue("exports")
    batch = q.claim_next("alice", 4)
    assert [c.lock.key for c in batch] == [1, 2, 3, 4]  # in queue order
    first = batch[0]
    assert _row(env, "export_rows", first.lock.key)["Lock"] == first.lock.token
    assert _lock_rows(env) == 4
    q.save("alice", first.lock.key, first.lock.token, {"payload": "checked"})
    q.complete("alice", first.lock.key, first.lock.token)
    row = _row(env, "export_rows", first.lock.key)
    assert (row["processed"], row["Lock"], row["payload"]) == (1, None, "checked")
    q.release("alice", batch[1].lock.key, batch[1].lock.token, "later")
    assert _row(env, "export_rows", batch[1].lock.key)["Lock"] is None
    assert _lock_rows(env) == 2


def test_rows_another_program_claimed_are_never_handed_out(native_env: support.Env) -> None:
    env = native_env
    wb = _tables(env, rows=4)
    with env.engine.begin() as conn:  # a legacy worker marked rows 1 and 3 as its own
        conn.execute(
            sa.text('UPDATE export_rows SET "Lock" = :id WHERE row_id IN (1, 3)').bindparams(id="f" * 32)
            if env.backend in ("sqlite", "postgresql")
            else sa.text("UPDATE export_rows SET `Lock` = :id WHERE row_id IN (1, 3)").bindparams(id="f" * 32)
        )
    q = wb.queue("exports")
    assert sorted(c.lock.key for c in q.claim_next("alice", 10)) == [2, 4]
    assert Supervision(q).health().waiting == 0


def test_a_write_is_refused_once_the_row_carries_another_claim_id(native_env: support.Env) -> None:
    env = native_env
    wb = _tables(env, rows=2)
    q = wb.queue("exports")
    a = q.claim_next("alice")[0]
    t = sa.Table("export_rows", sa.MetaData(), autoload_with=env.engine)
    with env.engine.begin() as conn:  # another program takes the row over by its own protocol
        conn.execute(sa.update(t).where(t.c.row_id == a.lock.key).values({"Lock": "e" * 32}))
    with pytest.raises(errors.LockLost):
        q.complete("alice", a.lock.key, a.lock.token)
    with pytest.raises(errors.LockLost):
        q.save("alice", a.lock.key, a.lock.token, {"payload": "mine"})
    row = _row(env, "export_rows", a.lock.key)
    assert (row["processed"], row["payload"], row["Lock"]) == (0, "row 1", "e" * 32)  # nothing written
    assert _lock_rows(env) == 1  # the lock row is still there (rolled back with the refused write)


def test_keep_claim_id_leaves_the_process_id_after_complete_and_release_clears_it(env: support.Env) -> None:
    wb = _tables(env, rows=3)
    q = wb.queue("payments")
    a, b = q.claim_next("alice", 2)
    assert _row(env, "payments", a.lock.key)["status"] == "processing"
    assert str(_row(env, "payments", a.lock.key)["process_uuid"]).replace("-", "") == a.lock.token
    q.complete("alice", a.lock.key, a.lock.token, "processed")
    row = _row(env, "payments", a.lock.key)
    assert row["status"] == "processed" and str(row["process_uuid"]).replace("-", "") == a.lock.token
    q.release("alice", b.lock.key, b.lock.token)
    row = _row(env, "payments", b.lock.key)
    assert (row["status"], row["process_uuid"]) == ("new", None)
    # Expiry: the row stays "processing" with its claim id; the next claim takes it over first.
    c = q.claim_next("bob")[0]
    env.age_lock(wb, "payments", c.lock.key, 3600)
    d = q.claim_next("carol")[0]
    assert d.lock.key == c.lock.key and d.lock.token != c.lock.token
    assert str(_row(env, "payments", d.lock.key)["process_uuid"]).replace("-", "") == d.lock.token
    with pytest.raises(errors.LockLost):
        q.complete("bob", c.lock.key, c.lock.token, "processed")
    q.complete("carol", d.lock.key, d.lock.token, "processed")


def test_claims_stamp_the_claim_id_through_statements_built_once_for_the_queue(native_env: support.Env) -> None:
    """The claim id's stamp, over an empty one or over an expired lock's, is built once per queue with the
    key and both ids bound by name (LockTable.stamp_statement), as the rest of the claim (test_lock_table)."""
    env = native_env
    wb = _tables(env, rows=4)
    free = lock_table_test.claims_statements(wb, "payments", ("alice", "bob"))
    lock_table_test.assert_built_once(free)
    assert [type(s).__name__ for s in free[0]].count("Update") == 2  # the stamp, on_claim
    for key in (1, 2):
        env.age_lock(wb, "payments", key, 3600)
    expired = lock_table_test.claims_statements(wb, "payments", ("carol", "dave"), expired=True)
    lock_table_test.assert_built_once(expired)
    assert [type(s).__name__ for s in expired[0]].count("Update") == 3  # the lock row, the stamp, on_claim
    q = wb.queue("payments")
    held = {lock.key: (lock.owner, lock.token) for lock in q.locks()}
    assert sorted((key, owner) for key, (owner, _) in held.items()) == [(1, "carol"), (2, "dave")]
    for key, (_, token) in held.items():
        row = _row(env, "payments", key)
        assert str(row["process_uuid"]).replace("-", "") == token and row["status"] == "processing"


def test_reassign_force_release_and_sweep_keep_the_claim_id_in_step(native_env: support.Env) -> None:
    env = native_env
    wb = _tables(env, rows=3)
    q = wb.queue("exports")
    a = q.claim_next("alice")[0]
    moved = Supervision(q).reassign("boss", a.lock.key, "bob", "holiday")
    assert _row(env, "export_rows", a.lock.key)["Lock"] == moved.token
    Supervision(q).force_release("boss", a.lock.key, "stuck")
    assert _row(env, "export_rows", a.lock.key)["Lock"] is None
    b = q.claim_next("carol")[0]
    env.age_lock(wb, "exports", b.lock.key, 3600)
    assert [lock.key for lock in Supervision(q).sweep("cron")] == [b.lock.key]
    assert _row(env, "export_rows", b.lock.key)["Lock"] is None and _lock_rows(env) == 0


def test_config_errors(native_env: support.Env) -> None:
    env = native_env
    with pytest.raises(errors.ConfigError) as bad:
        env.load(CONFIG.replace('claim_id = "Lock"\n', "keep_claim_id = true\n"))
    assert "queues.exports.lock.keep_claim_id" in str(bad.value)
    wb = _tables(env, rows=1, lock_type=sa.String(20))
    with pytest.raises(errors.ConfigError) as bad:
        wb.queue("exports")
    assert "queues.exports.lock.claim_id" in str(bad.value) and "at least 32" in str(bad.value)


@pytest.mark.slow
# MariaDB over ODBC is the same server with another driver (the drivers are compared in test_concurrency):
# 50 s of CI time for no other lock.
@pytest.mark.parametrize("backend", ["sqlite", "postgresql", POOLED, "mariadb"])
def test_processes_drain_a_claim_id_queue_without_sharing_an_item(native_env: support.Env) -> None:
    env = native_env
    rows = 400  # 8 workers contend just as much; 600 cost CI ~30 s more, 1,000 ~70 s, 2,000 ~2.5 minutes
    wb = _tables(env, rows=rows)
    config = env.write_config(CONFIG)
    results = test_concurrency._run_workers(env, config, 1, queue="exports")
    keys = collections.Counter(key for r in results for key, _ in r["done"])
    assert len(keys) == rows and max(keys.values()) == 1
    assert len([r for r in results if r["done"]]) >= 2, "only one worker did any work"
    with env.engine.connect() as conn:
        left = conn.execute(sa.text("SELECT count(*) FROM export_rows WHERE processed = 0")).scalar()
    assert left == 0 and _lock_rows(env) == 0
    assert wb.supervision("exports").health().waiting == 0


THREE = ["sqlite", "postgresql", "mariadb"]


def _foreign_claim(env: support.Env, keys: list[int], claim: uuid.UUID | None) -> None:
    """Another program (a batch job) marks waiting rows of `payments` with its own claim id."""
    t = sa.table("payments", sa.column("payment_id", sa.Integer), sa.column("process_uuid", sa.Uuid()))
    with env.engine.begin() as conn:
        conn.execute(sa.update(t).where(t.c.payment_id.in_(keys)).values({"process_uuid": claim}))


@pytest.mark.parametrize("backend", THREE)
def test_keep_claim_id_never_hands_out_or_overwrites_another_programs_claim(native_env: support.Env) -> None:
    env = native_env
    wb = _tables(env, rows=6)
    theirs = uuid.uuid4()
    _foreign_claim(env, [1, 3], theirs)  # status stays "new": the batch job works them by its id
    q = wb.queue("payments")
    with pytest.raises(errors.NothingToClaim):
        q.claim("alice", 1)
    claimed = q.claim_next("alice", 10)
    assert sorted(c.lock.key for c in claimed) == [2, 4, 5, 6]
    with pytest.raises(errors.NothingToClaim):
        q.claim_next("bob")
    # The shape's own write into the row never replaces another program's id either.
    shape = q.q.shape
    with env.engine.begin() as conn:
        assert not shape.stamp(conn, q.q.table, q.q.key, 3, uuid.uuid4().hex, None)  # type: ignore[attr-defined]
    for key in (1, 3):
        row = _row(env, "payments", key)
        assert (row["status"], str(row["process_uuid"]).replace("-", "")) == ("new", theirs.hex)
    assert Supervision(q).health().waiting == 0
    # Completed rows keep workbench's id and are not work; the foreign rows are served once freed.
    for c in claimed:
        q.complete("alice", c.lock.key, c.lock.token, "processed")
    _foreign_claim(env, [1], None)
    assert [c.lock.key for c in q.claim_next("bob", 10)] == [1]


@pytest.mark.parametrize("backend", THREE)
def test_a_reopened_row_loses_its_kept_claim_id_and_is_served_again(native_env: support.Env) -> None:
    env = native_env
    config = CONFIG.replace(
        "[queues.payments.outcomes.processed]",
        '[queues.payments.on_reopen]\nstatus = "new"\n\n[queues.payments.outcomes.processed]',
    )
    _tables(env, rows=1)
    wb = env.open(env.load(config))
    q = wb.queue("payments")
    a = q.claim_next("alice")[0]
    q.complete("alice", a.lock.key, a.lock.token, "processed")
    assert _row(env, "payments", 1)["process_uuid"] is not None  # kept
    Supervision(q).reopen("boss", 1, "booked twice")
    assert _row(env, "payments", 1)["process_uuid"] is None
    assert [c.lock.key for c in q.claim_next("bob")] == [1]
