"""Real OS processes claim and complete at the same time: no double assignment, every row once."""

from __future__ import annotations

import collections
import dataclasses
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from tests import support
from tests.conftest import POOLED
from tests.helpers import forked
from workbench import demo
from workbench.core import errors
from workbench.db import claims
from workbench.db.backends import mysql as mysql_backend
from workbench.db.claims import stepwise

PROCESSES = 8
# 8 workers contend at the head of the queue just as much with 600 rows as with 2,400 (each claim
# races the other seven either way); 1,200 cost CI about a minute more over its fourteen runs.
ROWS = 600
REPO = Path(__file__).resolve().parents[2]


def _run_workers(
    env: support.Env, config: Path, count: int, queue: str = "cases", options: tuple[str, ...] = ()
) -> list[dict]:
    go = env.tmp / "go"
    procs = []
    for i in range(PROCESSES):
        out = env.tmp / f"worker{i}.json"
        cmd = [
            sys.executable,
            "-m",
            "tests.helpers.claim_worker",
            "--config",
            str(config),
            "--queue",
            queue,
            "--user",
            f"w{i}",
            "--out",
            str(out),
            "--go",
            str(go),
            "--count",
            str(count),
            "--ready",
            str(env.tmp / f"worker{i}.ready"),
            *options,
        ]
        procs.append(
            (
                forked.Popen(cmd, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}),
                out,
            )
        )
    # Every worker connected before any starts: on a loaded machine one worker drained the queue
    # while the others were still importing (as in test_galera).
    deadline = time.monotonic() + 180
    while not all(
        (env.tmp / f"worker{i}.ready").exists() or proc.poll() is not None for i, (proc, _) in enumerate(procs)
    ):
        assert time.monotonic() < deadline, "waited 180 s for the workers to connect"
        time.sleep(0.1)
    go.write_text("go")
    results = []
    for proc, out in procs:
        _, stderr = proc.communicate(timeout=600)
        assert out.exists(), f"worker died: {stderr[-3000:]}"
        data = json.loads(out.read_text())
        assert not data["failures"], data["failures"][0]
        assert proc.returncode == 0, stderr[-3000:]
        results.append(data)
    return results


@pytest.mark.slow
def test_processes_never_share_an_item(env: support.Env) -> None:
    _drain_and_check(env, count=1)


@pytest.mark.slow
def test_processes_claiming_batches_never_share_an_item(native_env: support.Env) -> None:
    # The portable method claims a batch one row at a time, so the single-claim test covers it.
    _drain_and_check(native_env, count=3)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["postgresql", POOLED, "sqlite", "mariadb"])
def test_processes_completing_and_claiming_in_one_step_never_share_an_item(native_env: support.Env) -> None:
    # On PostgreSQL each Complete claims the next item in the same statement; on MariaDB in the same
    # transaction (the Complete sent with the claim's locking read); SQLite runs the two one after the
    # other, in the same call.
    _drain_and_check(native_env, count=1, options=("--then-next",))


def _drain_and_check(env: support.Env, count: int, options: tuple[str, ...] = ()) -> None:
    wb = env.demo(
        case_rows=ROWS, import_rows=1, queues={"cases": {"max_locks_per_user": 0, "release_cooldown_seconds": 0}}
    )
    table = wb.queue("cases").q.table
    with wb.engine.begin() as conn:
        conn.execute(sa.update(table).values(status="new"))
    text = demo.config_text("{url}").replace("max_locks_per_user = 3", "max_locks_per_user = 0")
    config = env.write_config(text)

    results = _run_workers(env, config, count, options=options)

    handed_out = [tuple(item) for r in results for item in r["done"]]
    keys = collections.Counter(key for key, _ in handed_out)
    assert len(keys) == ROWS, f"{ROWS - len(keys)} rows were never completed"
    assert max(keys.values()) == 1, f"double assignments: {[k for k, n in keys.items() if n > 1][:10]}"
    busy = [r for r in results if r["done"]]
    assert len(busy) >= 2, "only one worker did any work; the test did not exercise contention"
    with wb.engine.connect() as conn:
        left = conn.execute(
            sa.select(sa.func.count())
            .select_from(table)
            .where(sa.or_(table.c.status.in_(["new", "open"]), table.c.wb_locked_by.is_not(None)))
        )
        assert left.scalar() == 0
        audit = wb.audit_table
        per_key = conn.execute(
            sa.select(audit.c.item_key, audit.c.event, sa.func.count())
            .where(audit.c.queue == "cases")
            .group_by(audit.c.item_key, audit.c.event)
        ).all()
    events = collections.Counter((event, n) for _, event, n in per_key)
    # Exactly one claim and one completion per row, each in the same transaction as its write.
    assert events == {("claim", 1): ROWS, ("complete", 1): ROWS}


def test_a_claim_in_progress_does_not_starve_other_claimers(native_env: support.Env) -> None:
    """While one claim's transaction still holds its row locks, others get other rows at once."""
    env = native_env
    if env.backend == "sqlite":
        pytest.skip("SQLite has one writer at a time by design; claims queue behind each other")
    wb = env.demo(queues={"cases": {"max_locks_per_user": 0}})
    q = wb.queue("cases")
    request = claims.ClaimRequest(user="slow")
    with wb.engine.connect() as slow, slow.begin():
        # The first claimer has locked its row(s) but not committed yet.
        if wb.db.dialect == "postgresql":
            rows = slow.execute(wb.method.statement(q.q, q.trail, request), {"wb_user": "slow"}).mappings().all()
            held_keys = {row[q.q.key.name] for row in rows}
        else:
            held_keys = {c.row["wb_key"] for c in wb.method._claim(slow, q.q, q.trail, request)}
        assert len(held_keys) == 1
        # The demo's todo is `status IN ('new', 'open')`: on MySQL/MariaDB no index returns that
        # in order, and a sorting locking read would have locked every waiting row.
        others = q.claim_next("quick", 3)
        assert len(others) == 3 and not {c.lock.key for c in others} & held_keys


def _without_row_locks(stmt: Any) -> Any:
    """The statement without FOR UPDATE [SKIP LOCKED]: what an engine that ignores it (TiDB) runs."""
    if stmt is None:
        return None
    stmt = stmt._generate()
    stmt._for_update_arg = None
    return stmt


def test_a_database_that_does_not_lock_skip_locked_rows_still_hands_each_row_to_one(
    native_env: support.Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stepwise claim re-checks the claim condition in its UPDATE: when the row it read was
    claimed by someone else in between (the read did not lock it), it picks again."""
    env = native_env
    if env.backend == "sqlite":
        pytest.skip("SQLite has one writer at a time (BEGIN IMMEDIATE); nobody can claim in between")
    wb = env.demo(queues={"cases": {"max_locks_per_user": 0, "release_cooldown_seconds": 0}})
    q = wb.queue("cases")
    if env.backend.startswith("mariadb"):
        assert "mariadb" in mysql_backend.server_version_text(wb.engine).lower()
        assert claims.auto_name(wb.engine) == "select-skip-locked"
    method = stepwise.mysql_claim()  # on PostgreSQL too, where `select-skip-locked` may be configured
    real_statements, real_candidates = method.statements, method.candidates

    def unlocked(*args: Any, **kwargs: Any) -> Any:
        s = real_statements(*args, **kwargs)
        return dataclasses.replace(
            s,
            expired=_without_row_locks(s.expired),
            free=[_without_row_locks(f) for f in s.free],
            lock_one=_without_row_locks(s.lock_one),
        )

    others: list[Any] = []

    def raced(*args: Any) -> list[Any]:
        found = real_candidates(*args)
        if not others:  # between our read and our write, bob claims (and commits) the same head row
            others.append(q.claim_next("bob")[0])
            assert others[0].lock.key in {c["wb_ckey"] for c in found}
        return found

    monkeypatch.setattr(method, "statements", unlocked)
    monkeypatch.setattr(method, "candidates", raced)
    mine = method.claim_next(wb.db, q.q, q.trail, "alice", 1)
    assert len(mine) == 1 and len(others) == 1
    bob, alice = others[0].lock, mine[0].lock
    assert alice.key != bob.key, "one row was handed to two people"
    holders = {lock.key: lock.owner for lock in q.locks()}
    assert holders == {bob.key: "bob", alice.key: "alice"}
    q.complete("bob", bob.key, bob.token)
    q.complete("alice", alice.key, alice.token)
    claimed = [e for e in env.audit(wb, "cases") if e["event"] == "claim"]
    assert sorted(e["item_key"] for e in claimed) == sorted([str(bob.key), str(alice.key)])


@pytest.mark.parametrize(
    ("version", "method"),
    [
        ("8.0.11-TiDB-v7.5.0", "portable"),
        ("5.7.25-TiDB-v6.5.1", "portable"),
        ("8.0.36", "select-skip-locked"),
        ("8.0.0", "portable"),
    ],
)
def test_mysql_look_alikes_that_do_not_lock_get_the_portable_claim(
    version: str, method: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = sa.create_engine("mysql+pymysql://u@127.0.0.1:1/x")  # never connected: the version is given
    engine.dialect.server_version_info = engine.dialect._parse_server_version(version)
    monkeypatch.setattr(mysql_backend, "server_version_text", lambda _engine: version)
    assert claims.auto_name(engine) == method
    expected = "PortableClaim" if method == "portable" else "BatchedClaim"
    assert type(claims.choose(engine, "auto")).__name__ == expected
    if "TiDB" in version:
        with pytest.raises(errors.ConfigError, match="TiDB"):
            claims.choose(engine, "select-skip-locked")
