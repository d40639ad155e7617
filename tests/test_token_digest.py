"""The audit trail keeps a digest of each lock token, never the token: reading it hands nobody a live lock."""

from __future__ import annotations

import uuid

import pytest
import sqlalchemy as sa
from sqlalchemy.dialects import mssql

from tests import support
from workbench.core import errors
from workbench.db import audit, backends, migrations, tables
from workbench.db.supervision import Supervision

SAMPLES = [uuid.uuid4().hex, str(uuid.uuid4()).upper(), "2026-11-25T18:00:00.123456+00:00|alice"]


def test_python_digest_is_sha256_of_the_lower_case_text() -> None:
    assert (
        audit.token_digest("ABC")
        == audit.token_digest("abc")
        == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    )
    assert audit.token_digest(None) is None
    assert audit.token_digest(uuid.UUID(int=1)) == audit.token_digest("00000000-0000-0000-0000-000000000001")


def test_the_database_digests_a_token_as_workbench_does(native_env: support.Env) -> None:
    wb = native_env.demo(case_rows=1, import_rows=1)  # its engine: SQLite's function is ours
    backend = backends.of(wb.engine)
    with wb.engine.connect() as conn:
        found = [
            conn.execute(sa.select(backend.token_digest(sa.literal(token, sa.String())))).scalar() for token in SAMPLES
        ]
    assert found == [audit.token_digest(token) for token in SAMPLES]


def test_sql_server_digest_is_sha2_256_of_varchar_text() -> None:
    expr = backends.for_dialect("mssql").token_digest(sa.column("wb_token"))
    sql = str(expr.compile(dialect=mssql.dialect(), compile_kwargs={"literal_binds": True}))
    # VARCHAR: HASHBYTES hashes the bytes it is given, and NVARCHAR's are UTF-16, not the token's ASCII.
    assert sql == "lower(convert(VARCHAR(64), hashbytes('SHA2_256', lower(CAST(wb_token AS VARCHAR(200)))), 2))"


def _tokens_in_trail(wb: object, env: support.Env) -> set[str]:
    return {e["token"] for e in env.audit(wb, "cases") if e["token"] is not None}  # type: ignore[arg-type]


def test_the_trail_keeps_no_token(native_env: support.Env) -> None:
    wb = native_env.demo(case_rows=8, import_rows=1)
    q = wb.queue("cases")
    handed_out = []
    done = q.claim_next("alice")[0]
    handed_out.append(done.lock.token)
    q.save("alice", done.lock.key, done.lock.token, {"resolution": "fixed"})
    q.complete("alice", done.lock.key, done.lock.token)
    back = q.claim_next("alice")[0]
    handed_out.append(back.lock.token)
    q.release("alice", back.lock.key, back.lock.token, "later")
    taken = q.claim_next("bob")[0]
    handed_out.append(taken.lock.token)
    moved = Supervision(q).reassign("sue", taken.lock.key, "carol", "holiday")
    handed_out.append(moved.token)
    stale = q.claim_next("dave")[0]
    handed_out.append(stale.lock.token)
    native_env.age_lock(wb, "cases", stale.lock.key, 3600)
    assert [lock.key for lock in Supervision(q).sweep("cron")] == [stale.lock.key]
    forced = q.claim_next("erin")[0]
    handed_out.append(forced.lock.token)
    Supervision(q).force_release("sue", forced.lock.key, "needed now")

    kept = _tokens_in_trail(wb, native_env)
    assert kept == {audit.token_digest(token) for token in handed_out}  # every lock followed, none in clear
    assert not kept & set(handed_out)
    # The lock's loss is still explained from the trail, and a digest read there is no token.
    with pytest.raises(errors.LockLost) as lost:
        q.complete("erin", forced.lock.key, forced.lock.token)
    assert lost.value.cause == "force_released" and lost.value.by == "sue"
    replay = q.complete("alice", done.lock.key, done.lock.token)
    assert replay.replayed
    mine = q.claim_next("frank")[0]
    with pytest.raises(errors.LockLost):
        q.complete("frank", mine.lock.key, str(audit.token_digest(mine.lock.token)))


def test_migration_6_digests_the_tokens_kept_in_clear(native_env: support.Env) -> None:
    wb = native_env.demo(case_rows=5, import_rows=1)
    q = wb.queue("cases")
    gone = q.claim_next("alice")[0]
    Supervision(q).force_release("sue", gone.lock.key, "needed now")
    live = q.claim_next("bob")[0]
    q.extend("bob", live.lock.key, live.lock.token)
    a, version = wb.audit_table, tables.build_metadata(wb.audit_table.schema)[2]
    with wb.engine.begin() as conn:  # the trail as version 5 left it: tokens in clear
        for token in (gone.lock.token, live.lock.token):
            conn.execute(sa.update(a).where(a.c.token == audit.token_digest(token)).values(token=token))
        conn.execute(sa.delete(version).where(version.c.version >= 6))
    with wb.engine.connect() as conn, pytest.raises(errors.NotInitialized, match="at version 5"):
        migrations.check(conn, a.schema)

    assert next(m.version for m in wb.init()) == 6
    assert _tokens_in_trail(wb, native_env) == {
        audit.token_digest(gone.lock.token),
        audit.token_digest(live.lock.token),
    }
    with pytest.raises(errors.LockLost) as lost:  # the migrated rows still tell why a lock was lost
        q.complete("alice", gone.lock.key, gone.lock.token)
    assert lost.value.cause == "force_released" and lost.value.by == "sue"
    board = {row.key: row for row in Supervision(q).board()}  # joins each lock to its audit rows by the digest
    assert board[live.lock.key].owner == "bob" and board[live.lock.key].extensions == 1
    assert q.complete("bob", live.lock.key, live.lock.token).outcome
