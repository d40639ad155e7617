"""MariaDB through PyMySQL: a claim and a Complete as batches of statements (db/batches.py,
db/claims/batched.py), four round trips a pair, with the claim's re-check, the lost lock and a
batch that fails half-way each leaving the database as it was."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pymysql.connections
import pytest
import sqlalchemy as sa

from tests import support
from workbench.core import errors
from workbench.db import service
from workbench.db.supervision import Supervision

pytestmark = pytest.mark.parametrize("backend", ["mariadb"])


@pytest.fixture
def wb(native_env: support.Env) -> service.Workbench:
    return native_env.demo(case_rows=40, queues={"cases": {"max_locks_per_user": 0, "release_cooldown_seconds": 0}})


@contextlib.contextmanager
def round_trips(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every command PyMySQL sends to the server (one round trip each), as text."""
    sent: list[str] = []
    real = pymysql.connections.Connection._execute_command

    def counting(self: Any, command: int, sql: Any) -> Any:
        sent.append(sql if isinstance(sql, str) else bytes(sql).decode(errors="replace"))
        return real(self, command, sql)

    with monkeypatch.context() as patch:
        patch.setattr(pymysql.connections.Connection, "_execute_command", counting)
        yield sent


def audit(wb: service.Workbench, key: Any) -> list[tuple[str, str | None, str | None]]:
    with wb.engine.connect() as conn:
        return [
            tuple(row)
            for row in conn.execute(
                sa.text("SELECT event, owner, outcome FROM workbench_audit WHERE item_key = :k ORDER BY id"),
                {"k": str(key)},
            )
        ]


def row_lock_is_free(wb: service.Workbench, key: Any) -> bool:
    """Can another connection lock the row at once (nobody's transaction holds it)?"""
    with wb.engine.connect() as conn:
        try:
            conn.execute(sa.text("SELECT case_id FROM cases WHERE case_id = :k FOR UPDATE NOWAIT"), {"k": key})
        except sa.exc.OperationalError:
            return False
        conn.rollback()
    return True


def test_a_claim_and_a_complete_take_four_round_trips(
    wb: service.Workbench, native_env: support.Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    q = wb.queue("cases")
    warm = q.claim_next("alice")[0]  # builds and caches the statements, connects
    q.complete("alice", warm.lock.key, warm.lock.token, outcome="resolved")
    with round_trips(monkeypatch) as sent:
        claim = q.claim_next("alice")[0]
        claimed = len(sent)
        q.complete("alice", claim.lock.key, claim.lock.token, outcome="resolved")
    assert (claimed, len(sent) - claimed) == (3, 1), sent
    assert audit(wb, claim.lock.key) == [("claim", "alice", None), ("complete", "alice", "resolved")]
    row = native_env.row(wb, "cases", claim.lock.key)
    assert (row["status"], row["wb_locked_by"]) == ("resolved", None)
    assert row_lock_is_free(wb, claim.lock.key)  # committed: no transaction left holding it


def test_only_the_batch_pool_takes_several_statements_at_once(wb: service.Workbench) -> None:
    with wb.engine.connect() as conn, pytest.raises(sa.exc.ProgrammingError):
        conn.exec_driver_sql("SELECT 1; SELECT 2")  # the main pool: one statement per call, as always
    held = wb.db.held
    assert held.batches
    results = held.run(
        [
            (held.prepare(sa.select(sa.literal(1, sa.Integer()))), {}),
            (held.prepare(sa.select(sa.literal(2, sa.Integer()))), {}),
        ]
    )
    assert [r.rows for r in results] == [[(1,)], [(2,)]]


def test_a_claim_picks_again_when_its_row_was_taken_between_read_and_write(
    wb: service.Workbench, native_env: support.Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As if the server did not lock what FOR UPDATE SKIP LOCKED read (TiDB): the UPDATE checks
    again, finds the row taken, and the claim is rolled back and run again."""
    q = wb.queue("cases")
    bob_wb = native_env.open(wb.config)
    bob_q = bob_wb.queue("cases")
    first = bob_q.claim_next("bob")[0]  # bob's statements are built (and lock) as usual
    bob_q.release("bob", first.lock.key, first.lock.token)
    method = q.method
    with monkeypatch.context() as patch:  # alice's candidates read without row locks
        patch.setattr(sa.Select, "with_for_update", lambda self, **_: self)
        method._plans.clear()
        taken: list[Any] = []
        real_ordered = type(method)._ordered

        def raced(q_: Any, rows: list[Any]) -> list[Any]:
            ordered = real_ordered(q_, rows)
            if q_ is q.q and not taken:  # between alice's read and her write, bob claims (and commits) her head row
                taken.append(bob_q.claim_next("bob")[0])
                assert taken[0].lock.key == ordered[0]["wb_ckey"]
            return ordered

        patch.setattr(type(method), "_ordered", staticmethod(raced))
        mine = q.claim_next("alice")[0]
    assert mine.lock.key != taken[0].lock.key
    assert native_env.row(wb, "cases", taken[0].lock.key)["wb_locked_by"] == "bob"
    assert native_env.row(wb, "cases", mine.lock.key)["wb_locked_by"] == "alice"
    assert [e for e, _, _ in audit(wb, mine.lock.key)] == ["claim"]
    assert audit(wb, taken[0].lock.key)[-1] == ("claim", "bob", None)


def test_a_complete_under_a_lost_lock_changes_and_audits_nothing(wb: service.Workbench) -> None:
    q = wb.queue("cases")
    warm = q.claim_next("alice")[0]
    q.complete("alice", warm.lock.key, warm.lock.token, outcome="resolved")  # the batched Complete from now on
    mine = q.claim_next("alice")[0]
    Supervision(q).force_release("sam", mine.lock.key, reason="reassigned by phone")
    theirs = q.claim("bob", mine.lock.key)
    with pytest.raises(errors.LockLost):
        q.complete("alice", mine.lock.key, mine.lock.token, outcome="resolved")
    assert [e for e, _, _ in audit(wb, mine.lock.key)] == ["claim", "force_release", "claim"]
    q.complete("bob", theirs.lock.key, theirs.lock.token, outcome="resolved")
    done = q.complete("bob", theirs.lock.key, theirs.lock.token, outcome="resolved")  # a retry after a lost reply
    assert done.replayed
    assert [e for e, _, _ in audit(wb, mine.lock.key)] == ["claim", "force_release", "claim", "complete"]


@pytest.mark.parametrize("event", ["claim", "complete"])
def test_a_batch_that_fails_half_way_leaves_nothing_behind(wb: service.Workbench, event: str) -> None:
    """The audit INSERT fails after the claim's UPDATE or the Complete's: the whole transaction is
    rolled back (no lock taken or given up, no row lock left held) and the thread's connection
    works on."""
    q = wb.queue("cases")
    warm = q.claim_next("alice")[0]
    q.complete("alice", warm.lock.key, warm.lock.token, outcome="resolved")
    with wb.engine.begin() as conn:
        conn.exec_driver_sql(
            "CREATE TRIGGER refuse_audit BEFORE INSERT ON workbench_audit FOR EACH ROW "
            f"IF NEW.event = '{event}' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'disk full (test)'; END IF"
        )
    if event == "claim":
        waiting = q.count_waiting(100)
        with pytest.raises(sa.exc.DBAPIError, match="disk full"):
            q.claim_next("alice")
        assert q.count_waiting(100) == waiting
        with wb.engine.connect() as conn:
            assert conn.execute(sa.text("SELECT COUNT(*) FROM cases WHERE wb_locked_by IS NOT NULL")).scalar() == 0
            keys = conn.execute(sa.text("SELECT case_id FROM cases")).scalars().all()
        assert all(row_lock_is_free(wb, key) for key in keys)
    else:
        mine = q.claim_next("alice")[0]
        with pytest.raises(sa.exc.DBAPIError, match="disk full"):
            q.complete("alice", mine.lock.key, mine.lock.token, outcome="resolved")
        assert row_lock_is_free(wb, mine.lock.key)
        assert q.check("alice", mine.lock.key, mine.lock.token).token == mine.lock.token  # still alice's
        assert [e for e, _, _ in audit(wb, mine.lock.key)] == ["claim"]
    with wb.engine.begin() as conn:
        conn.exec_driver_sql("DROP TRIGGER refuse_audit")
    again = q.claim_next("alice")[0]  # the same thread's connection, no transaction left open on it
    q.complete("alice", again.lock.key, again.lock.token, outcome="resolved")
    assert [e for e, _, _ in audit(wb, again.lock.key)][-2:] == ["claim", "complete"]


def test_batches_run_on_connections_that_are_not_in_autocommit(wb: service.Workbench) -> None:
    """On a Galera cluster a COMMIT of a transaction begun with START TRANSACTION on an autocommit
    connection answered OK though certification had failed (two holders of one item in about every
    second run of tests/test_galera.py): the batches' connections begin transactions implicitly."""
    q = wb.queue("cases")
    claim = q.claim_next("alice")[0]
    held = wb.db.held.current()
    assert held is not None and held.dbapi.get_autocommit() is False
    with held.dbapi.cursor() as cursor:
        cursor.execute("SELECT @@tx_isolation, @@in_transaction")
        assert cursor.fetchone() == ("READ-COMMITTED", 0)  # and the claim left no transaction open
    q.complete("alice", claim.lock.key, claim.lock.token, outcome="resolved")
