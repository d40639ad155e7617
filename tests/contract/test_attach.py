"""`attach`: lock columns and claim indexes added to an existing table, and the claim query using them."""

from __future__ import annotations

import datetime as dt

import pytest
import sqlalchemy as sa

from tests import support
from workbench.core import errors
from workbench.db import attach, claims
from workbench.demo import data

HELPDESK = support.sample_config("helpdesk")


def _plain_cases(env: support.Env, rows: int) -> sa.Table:
    """A helpdesk table as a customer has it: no lock columns yet."""
    md = sa.MetaData()
    table = sa.Table(
        "cases",
        md,
        sa.Column("case_id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("opened_at", sa.DateTime, nullable=False),
        sa.Column("customer", sa.String(100), nullable=False),
        sa.Column("subject", sa.String(200), nullable=False),
        sa.Column("priority", sa.Integer, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("resolved_by", sa.String(50)),
        sa.Column("resolved_at", sa.DateTime),
    )
    md.create_all(env.engine)
    keep = {c.name for c in table.c}
    with env.engine.begin() as conn:
        batch = [{k: v for k, v in row.items() if k in keep} for row in data.cases(rows)]
        conn.execute(sa.insert(table), batch)
    return table


def test_attach_adds_lock_columns_and_indexes(native_env: support.Env) -> None:
    env = native_env
    _plain_cases(env, 40)
    config = env.load(HELPDESK)
    wb = env.open(config)
    wb.init()
    with pytest.raises(
        errors.ConfigError,
        match=r"queues\.cases\.lock\.user: column 'wb_locked_by' is not in "
        r"table cases.*workbench attach cases",
    ):
        wb.queue("cases")
    with wb.engine.begin() as conn:
        plan = attach.plan(conn, config.queues["cases"], config.path)
        ddl = attach.render(conn, plan)
    assert [c.name for c in plan.add_columns] == ["wb_locked_by", "wb_locked_at", "wb_lock_expires", "wb_lock_token"]
    assert ddl.count("ALTER TABLE") == 4 and "wb_cases_claim" in ddl and "wb_cases_lock" in ddl
    if env.backend in ("postgresql", "sqlite"):
        assert ddl.count("CREATE INDEX") == 2
        assert "WHERE" in ddl.split("wb_cases_claim")[1]  # a partial index on the waiting rows
    else:  # no partial indexes: the stale locks have an index by expiry of their own
        assert ddl.count("CREATE INDEX") == 3 and "wb_cases_stale ON cases (wb_lock_expires, wb_locked_by)" in ddl
    with wb.engine.begin() as conn:
        attach.apply(conn, plan)
    with wb.engine.begin() as conn:
        assert attach.plan(conn, config.queues["cases"], config.path).empty
    fresh = env.open(config)
    q = fresh.queue("cases")
    claim = q.claim_next("alice")[0]
    q.complete("alice", claim.lock.key, claim.lock.token, "resolved")
    row = env.row(fresh, "cases", claim.lock.key)
    assert row["status"] == "resolved" and row["resolved_by"] == "alice" and row["resolved_at"] is not None


def _candidate_sql(wb, queue: str) -> str:
    """The SELECT that picks claim candidates, with its values inlined, for EXPLAIN."""
    q = wb.queue(queue)
    method = claims.ClaimMethod()
    where = method.branches(q.q, q.q.now(), claims.ClaimRequest(user="alice"), q.trail)[-1]
    stmt = sa.select(*method.candidate_columns(q.q)).where(where).order_by(*q.q.order_by()).limit(1)
    return str(stmt.compile(wb.engine, compile_kwargs={"literal_binds": True}))


def test_claim_query_is_served_by_the_claim_index(native_env: support.Env) -> None:
    env = native_env
    rows = 6000
    table = _plain_cases(env, rows)
    # A single-value todo, so that MariaDB (no partial indexes) can serve it from one index range.
    text = HELPDESK.replace('status = ["new", "open"]', 'status = "new"')
    config = env.load(
        text.replace(
            '[queues.cases.on_claim]                     # optional: what a claim writes\nstatus = "open"\n', ""
        )
    )
    wb = env.open(config)
    wb.init()
    with wb.engine.begin() as conn:
        attach.apply(conn, attach.plan(conn, config.queues["cases"], config.path))
        # Most of the table is finished history; a few rows wait.
        conn.execute(sa.update(table).values(status="resolved"))
        conn.execute(sa.update(table).where(table.c.case_id % 50 == 0).values(status="new"))
    with wb.engine.begin() as conn:
        if env.backend == "postgresql":
            conn.exec_driver_sql("ANALYZE cases")
        elif env.backend == "sqlite":
            conn.exec_driver_sql("ANALYZE")
        else:
            conn.exec_driver_sql("ANALYZE TABLE cases")
    sql = _candidate_sql(wb, "cases")
    with wb.engine.connect() as conn:
        if env.backend == "postgresql":
            plan = "\n".join(r[0] for r in conn.exec_driver_sql("EXPLAIN " + sql))
            assert "wb_cases_claim" in plan and "Seq Scan on cases" not in plan, plan
            assert "Sort" not in plan.split("wb_cases_claim")[0], plan
        elif env.backend == "sqlite":
            plan = "\n".join(str(r[-1]) for r in conn.exec_driver_sql("EXPLAIN QUERY PLAN " + sql))
            assert "wb_cases_claim" in plan and "TEMP B-TREE" not in plan, plan
        else:
            plan = [dict(r._mapping) for r in conn.exec_driver_sql("EXPLAIN " + sql)]
            main = plan[0]
            assert main["key"] == "wb_cases_claim", plan
            assert "filesort" not in (main.get("Extra") or ""), plan
    claim = wb.queue("cases").claim_next("alice")[0]
    assert claim.lock.key % 50 == 0
    assert claim.lock.expires_at - claim.lock.locked_at == dt.timedelta(minutes=15)


def test_attach_apply_and_queues_refuse_a_config_that_next_would_refuse(
    native_env: support.Env, capsys: pytest.CaptureFixture[str]
) -> None:
    env = native_env
    _plain_cases(env, 5)
    # The outcome writes a todo value: completed cases would come back. `next` refuses that, so
    # `attach --apply` and `queues` refuse it too, and the customer's table stays as it was.
    bad = env.write_config(
        HELPDESK.replace('set = { status = "waiting_customer" }', 'set = { status = "open" }'), "bad.toml"
    )
    before = [c["name"] for c in sa.inspect(env.engine).get_columns("cases")]
    code, _, err = support.run_cli(capsys, "--config", bad, "attach", "cases", "--apply")
    assert code == 2 and "queues.cases.outcomes.waiting.set: Complete would leave the row matching `todo`" in err
    env.engine.dispose()
    assert [c["name"] for c in sa.inspect(env.engine).get_columns("cases")] == before
    good = env.write_config(HELPDESK)
    for command in (["attach", "cases", "--apply"], ["init"]):
        code, _, err = support.run_cli(capsys, "--config", good, *command)
        assert code == 0, err
    for command in (["queues"], ["next", "cases"]):
        code, _, err = support.run_cli(capsys, "--config", bad, "--user", "alice", *command)
        assert code == 2, (command, err)
        assert "queues.cases.outcomes.waiting.set: Complete would leave the row matching `todo`" in err


# The customer's own claim index, spelled as people write it on each database.
_OWN_CLAIM_INDEX = {
    "postgresql": "CREATE INDEX cases_queue_head ON cases (priority, opened_at, case_id) "
    "WHERE status = ANY (ARRAY['new', 'open']) AND wb_locked_by IS NULL",
    "sqlite": "CREATE INDEX cases_queue_head ON cases (priority, opened_at, case_id) "
    "WHERE status IN ('new', 'open') AND wb_locked_by IS NULL",
}


def test_attach_adds_no_claim_index_beside_an_equivalent_one(native_env: support.Env) -> None:
    env = native_env
    _plain_cases(env, 40)
    config = env.load(HELPDESK)
    wb = env.open(config)
    wb.init()
    with wb.engine.begin() as conn:
        first = attach.plan(conn, config.queues["cases"], config.path)
        claim_index = next(ix for ix in first.indexes if ix.name == "wb_cases_claim")
        first.indexes.remove(claim_index)  # the lock columns and the lock index only
        attach.apply(conn, first)
        if env.backend in _OWN_CLAIM_INDEX:
            conn.exec_driver_sql(_OWN_CLAIM_INDEX[env.backend])
        else:  # MySQL/MariaDB: no partial index; the same columns as workbench's, another name
            columns = ", ".join(str(getattr(e, "name", e)) for e in claim_index.expressions)
            conn.exec_driver_sql(f"CREATE INDEX cases_queue_head ON cases ({columns}, subject)")
    with wb.engine.begin() as conn:
        plan = attach.plan(conn, config.queues["cases"], config.path)
    assert plan.empty, [ix.name for ix in plan.indexes]
    assert any("cases_queue_head already serves" in note for note in plan.notes), plan.notes

    # Another condition (or other columns) does not serve the claim: workbench's index is added.
    with wb.engine.begin() as conn:
        conn.exec_driver_sql("DROP INDEX cases_queue_head" + (" ON cases" if env.backend.startswith("mariadb") else ""))
        if env.backend in _OWN_CLAIM_INDEX:
            conn.exec_driver_sql(_OWN_CLAIM_INDEX[env.backend].replace("'open'", "'waiting'"))
        else:
            conn.exec_driver_sql("CREATE INDEX cases_queue_head ON cases (priority, case_id)")
        plan = attach.plan(conn, config.queues["cases"], config.path)
    assert [ix.name for ix in plan.indexes] == ["wb_cases_claim"]
