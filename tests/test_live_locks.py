"""The claim's cost does not grow with the number of live locks: its expired branch finds stale locks by
index search, never by reading every locked row (tests/benchmarks/live_locks_bench.py measures it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from tests import support
from workbench.db import claims, clock

REPO = Path(__file__).resolve().parents[1]


def _lock_many(wb: Any, count: int) -> None:
    table = wb.queue("cases").q.table
    c = table.c
    with wb.engine.begin() as conn:
        keys = list(conn.execute(sa.select(c.case_id).where(c.wb_locked_by.is_(None)).limit(count)).scalars())
        now = clock.db_now()
        conn.execute(
            sa.update(table)
            .where(c.case_id.in_(keys))
            .values(
                wb_locked_by="holder",
                wb_locked_at=now,
                wb_lock_expires=clock.add_seconds(now, sa.literal_column("3600")),
                wb_lock_token="0" * 32,
            )
        )


@pytest.mark.parametrize("backend", ["sqlite"])
def test_sqlite_searches_the_lock_index_for_stale_locks(native_env: support.Env) -> None:
    wb = native_env.demo(case_rows=400, import_rows=1)
    _lock_many(wb, 300)
    wq = wb.queue("cases")
    q = wq.q
    sql = _expired_branch_sql(wb)
    with wb.engine.connect() as conn:
        conn.exec_driver_sql("ANALYZE")
        plan = [str(row[-1]) for row in conn.exec_driver_sql("EXPLAIN QUERY PLAN " + sql)]
    assert not any(line.startswith("SCAN cases") for line in plan), plan  # no pass over every locked row
    assert any("wb_cases_lock (wb_lock_expires<?)" in line for line in plan), plan
    # And it still finds them: a lapsed lock is served first.
    lapsed = q.coerce_key(_held(wb)[-1])
    native_env.age_lock(wb, "cases", lapsed, 7200)
    assert wq.claim_next("ann")[0].lock.key == lapsed


def _expired_branch_sql(wb: Any, *, locking: bool = False) -> str:
    """The claim's expired branch as the candidate read it is, with its constants written in."""
    wq = wb.queue("cases")
    q = wq.q
    expired = claims.ClaimMethod.branches(q, q.now(), claims.ClaimRequest(user="ann"), wq.trail)[0]
    select = sa.select(q.key).where(expired).order_by(*q.order_by()).limit(1)
    if locking:
        select = select.with_for_update(skip_locked=True)
    return str(select.compile(dialect=wb.engine.dialect, compile_kwargs={"literal_binds": True}))


def _held(wb: Any) -> list[Any]:
    c = wb.queue("cases").q.table.c
    with wb.engine.connect() as conn:
        return list(conn.execute(sa.select(c.case_id).where(c.wb_locked_by == "holder")).scalars())


@pytest.mark.parametrize("backend", ["sqlite"])
def test_a_command_on_sqlite_loads_no_other_databases_dialect(native_env: support.Env) -> None:
    config = native_env.demo_config_file()
    native_env.demo(case_rows=5, import_rows=1)
    probe = (
        "import sys, runpy\n"
        f"sys.argv = ['workbench', '--config', {str(config)!r}, '--user', 'ann', 'next', 'cases', '-q']\n"
        "try:\n    runpy.run_module('workbench', run_name='__main__')\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('sqlalchemy.dialects.')\n"
        "             and m.count('.') == 2 and '._' not in m))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe],
        check=False,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        env={
            "PYTHONPATH": str(REPO),
            "PATH": "/usr/bin:/bin",
            # in this process: a command server left running (by an earlier
            # run, or another checkout) would run it with its own modules
            "WORKBENCH_COMMAND_SERVER": "off",
        },
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "['sqlalchemy.dialects.sqlite']"


@pytest.mark.parametrize("backend", ["mariadb"])
def test_mariadb_reads_only_the_stale_locks(native_env: support.Env) -> None:
    wb = native_env.demo(case_rows=2000, import_rows=1)
    _lock_many(wb, 1500)
    sql = _expired_branch_sql(wb, locking=True)
    with wb.engine.begin() as conn:
        conn.exec_driver_sql("ANALYZE TABLE cases")
        plan = conn.exec_driver_sql("ANALYZE " + sql).mappings().one()
    # The index by expiry: none of the 1,500 live locks is read to find that none is stale.
    assert (plan["key"], float(plan["r_rows"])) == ("wb_cases_stale", 0.0), dict(plan)


@pytest.mark.parametrize("backend", ["postgresql"])
def test_postgresql_searches_the_expiry_range_not_every_lock(native_env: support.Env) -> None:
    wb = native_env.demo(case_rows=400, import_rows=1)
    _lock_many(wb, 300)
    sql = _expired_branch_sql(wb)
    with wb.engine.connect() as conn:
        conn.exec_driver_sql("ANALYZE cases")
        plan = "\n".join(row[0] for row in conn.exec_driver_sql("EXPLAIN (COSTS OFF) " + sql))
    # One search per side of `expires IS NULL OR expires <= now` (at 300,000 rows and 10,000 locks the
    # planner otherwise took the index's `user IS NOT NULL` alone and read every live lock).
    assert "Index Cond: (wb_lock_expires <= timezone('UTC'::text, now()))" in plan, plan
    assert "Index Cond: (wb_locked_by IS NOT NULL)" not in plan, plan


@pytest.mark.parametrize("backend", ["postgresql"])
def test_a_complete_finds_its_row_by_the_key(native_env: support.Env) -> None:
    from workbench.core import models
    from workbench.db import guarded, one_statement

    wb = native_env.demo(case_rows=400, import_rows=1)
    wq = wb.queue("cases")
    with wb.engine.connect() as conn:
        conn.exec_driver_sql("ANALYZE cases")  # no lock held: the partial lock index looks empty
    shape = guarded.Shape(models.EventKind.COMPLETE, outcome="resolved", unlock=True)
    statement = one_statement.statement(wq.writer, shape)
    values = {"wb_key": 1, "wb_token": "0" * 32, "wb_user": "ann", "wb_a_token": "d" * 64}
    sent = statement.compile(dialect=wb.engine.dialect).construct_expanded_state(values)
    with wb.engine.connect() as conn:
        plan = "\n".join(
            row[0] for row in conn.exec_driver_sql("EXPLAIN (COSTS OFF) " + sent.statement, sent.parameters)
        )
    # The lock index holds, until vacuum, an entry for every lock taken within lock_duration; a
    # Complete that searched it stepped over all of them (the fence must not offer it).
    assert "Update on cases" in plan and "Index Cond: (case_id = 1)" in plan, plan
    assert "wb_cases_lock" not in plan, plan
