"""Never two holders across queues: processes claim through `main` and `twin`, two queues over one table
whose locks live in one lock table (shape 5), from a few waiting rows; no item ever has a lock through
both (LockTable.held_elsewhere). Each lock row names its queue, so the lock table's primary key alone
let a claim through twin take a row held through main."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests import support
from tests.contract import test_no_takeover as takeover
from tests.helpers import workflow_bench as wbench
from workbench.config import loader
from workbench.db import service

PROCESSES = 8
ROWS = 4  # waiting; the rest of the table is done


@pytest.mark.slow
def test_main_and_twin_never_hold_one_row_together(native_env: support.Env) -> None:
    env = native_env
    table = wbench.create_table(env.engine, "lock_table")
    with env.engine.begin() as conn:
        conn.execute(sa.update(table).where(table.c.id > ROWS).values(status="done"))
    config = env.write_config(wbench.config_text("{url}", "lock_table"), "holders.toml")
    with service.Workbench.open(loader.load(str(config))) as wb:
        wb.init()
    queues = [("main", "twin")[i % 2] for i in range(PROCESSES)]
    options = ("--field", "payload", "--holders", "--release-note", "done looking")
    users = [f"op{i}" for i in range(PROCESSES)]
    results = takeover._run(env.tmp, [config] * PROCESSES, users, 1, queues, options, takeover._holds(_contended))
    _contended(results)
    claims = [c for r in results for c in r["saves"]]
    assert all(c["ok"] for c in claims), next(c for c in claims if not c["ok"])  # the locks last 10 minutes
    twice = [c for c in claims if len(c["holders"]) > 1]
    assert not twice, f"{len(twice)} of {len(claims)} claims found the item held twice: {twice[0]}"


def _contended(results: list[dict]) -> None:
    """The test contended: many claims, through both queues."""
    claims = [c for r in results for c in r["saves"]]
    assert len(claims) >= 50, f"only {len(claims)} claims in {takeover.SECONDS} s"
    assert {h[0] for c in claims for h in c["holders"]} == {"main", "twin"}


@pytest.mark.servers
@pytest.mark.parametrize("server", ["pg_server", "pgbouncer"])  # direct, and through the pooler
def test_under_grants_the_database_refuses_a_second_holder_and_a_move_of_a_held_row(
    server: str, request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hand-written statements through the people's own logins, past workbench's engine: bob's lock row
    for twin on an item ann holds through main, and sue's change of a waiting row held through twin."""
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    target = request.getfixturevalue(server)
    bench = wbench.open_bench("postgresql", "lock_table", True, tmp_path, target)
    try:
        held_in_main = bench.fresh()
        bench.operator("ann").claim("main", held_in_main)
        held_in_twin = bench.fresh()
        bench.operator("ann").claim("twin", held_in_twin)
        before = bench.snapshot(held_in_main, held_in_twin)
        second_lock = sa.text(
            "INSERT INTO workbench_locks (queue, item_key, lock_user, locked_at, expires_at, token) VALUES "
            "('twin', :k, 'bob', timezone('UTC', now()), timezone('UTC', now()) + interval '5 minutes', :t)"
        )
        move = sa.text("UPDATE items SET prio = 2 WHERE id = :k")
        for login, statement, key in (("bob", second_lock, held_in_main), ("sue", move, held_in_twin)):
            with pytest.raises(sa.exc.DBAPIError), bench.workbenches[login].engine.begin() as conn:
                conn.execute(statement, {"k": str(key) if login == "bob" else key, "t": uuid.uuid4().hex})
        assert bench.snapshot(held_in_main, held_in_twin) == before
    finally:
        wbench.drop_bench(bench, target)
