"""The exact SQL the SQL Server path sends, compiled offline (no SQL Server runs here)."""

from __future__ import annotations

import datetime as dt
import re
import tomllib
import types
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.dialects import mssql
from sqlalchemy.dialects.mssql import pyodbc as mssql_pyodbc

from workbench import demo
from workbench.config import loader
from workbench.core import errors, models
from workbench.db import audit, backends, claims, clock, guarded, mapping, tables
from workbench.db.claims import base, portable
from workbench.db.claims.mssql import PICK_HINT, ReadpastClaim
from workbench.db.figures import lock_board
from workbench.demo import schema

DIALECT = mssql_pyodbc.dialect()

STATUS_DRIVEN = """
[database]
url = "mssql+pyodbc://u@h/db?driver=FreeTDS"

[queues.cases]
table = "cases"
key = "case_id"
order = ["priority desc"]
lock_duration = "10m"
release_cooldown = "0s"

[queues.cases.scope]
category = { ne = "Spam" }
priority = { ge = 2 }

[queues.cases.todo]
status = "new"

[queues.cases.on_claim]
status = "in_progress"

[queues.cases.on_release]
status = "new"

[queues.cases.outcomes.resolved]
set = { status = "resolved", resolution = { null = true } }
"""

LEGACY = """
[database]
url = "mssql+pyodbc://u@h/db?driver=FreeTDS"

[queues.orders]
table = "orders"
key = "order_no"
order = ["due desc"]
lock_duration = "20m"
release_cooldown = "0s"
lock = { user = "locked_by", time = "locked_at" }
todo = { state = "new" }

[queues.orders.outcomes.done]
set = { state = "done", done_by = { user = true }, done_at = { now = true } }
"""


def legacy_table(metadata: sa.MetaData) -> sa.Table:
    """An older table whose lock is a user and a time column only (no expiry, no token)."""
    return sa.Table(
        "orders",
        metadata,
        sa.Column("order_no", sa.String(20), primary_key=True),
        sa.Column("due", mssql.DATETIME2()),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("done_by", sa.String(128)),
        sa.Column("done_at", mssql.DATETIME2()),
        sa.Column("locked_by", sa.String(128)),
        sa.Column("locked_at", mssql.DATETIME2()),
    )


def bound(text: str, name: str) -> mapping.BoundQueue:
    """Queue `name` of config `text` bound for SQL Server to a table built here (no reflection):
    the demo's `cases`/`import_rows` tables, or the legacy `orders` table."""
    config = loader.parse(tomllib.loads(text), "x.toml")
    metadata = sa.MetaData()
    legacy_table(metadata)
    schema.build(metadata)
    table = metadata.tables[config.queue(name).table]
    return mapping.BoundQueue(
        config.queue(name), table, config_path="x.toml", backend=backends.for_dialect("mssql"), local_clock=False
    )


def trail(name: str) -> audit.AuditTrail:
    metadata, audit_table, _ = tables.build_metadata()
    return audit.AuditTrail(audit_table, name, metadata.tables[tables.COOLDOWN_TABLE])


def demo_queue(name: str = "cases") -> mapping.BoundQueue:
    return bound(demo.config_text(), name)  # the demo's cases escalate: every procedure


class Sent:
    """A statement as it is sent: config constants inlined by SQLAlchemy, the rest as :params."""

    def __init__(self, stmt: Any, dialect: sa.engine.Dialect = DIALECT) -> None:
        c = stmt.compile(dialect=dialect)
        required = {b.key: None for b in c.binds.values() if b.required}
        expanded = c.construct_expanded_state(required)
        self.text = expanded.statement
        self.params = {k: v for k, v in expanded.parameters.items() if k not in required}

    def __str__(self) -> str:
        return self.text


def compiled(stmt: Any) -> Sent:
    return Sent(stmt)


def render(stmt: Any) -> str:
    """The statement as sent (literal_execute constants inlined), on one line."""
    return " ".join(str(compiled(stmt)).split())


def claim_sql(
    q: mapping.BoundQueue, *, user: str = "alice", count: int = 1, key: Any = None, room: int | None = None
) -> list[str]:
    request = base.ClaimRequest(user=user, count=count, key=key, use_cooldown=key is None)
    statements = ReadpastClaim().statements(q, trail(q.name), request, room or count)
    return [render(s) for s in statements]


def write_sql(q: mapping.BoundQueue, shape: guarded.Shape) -> Sent:
    writer = guarded.GuardedWriter(types.SimpleNamespace(dialect="mssql"), q, trail(q.name))
    statements = writer._statement(shape)
    assert len(statements) == 1  # the lock is in the row: one UPDATE fences and writes
    return compiled(statements[0])


def one_line(c: Sent) -> str:
    return " ".join(str(c).split())


# -- claim: UPDATE … OUTPUT over a TOP(n) pick read past other claimers' locks -----------------------


@pytest.mark.parametrize("dialect", [mssql.dialect(), mssql_pyodbc.dialect()], ids=["mssql", "pyodbc"])
def test_claim_pick_reads_past_locked_rows(dialect: sa.engine.Dialect) -> None:
    _, stmt = ReadpastClaim().statements(demo_queue(), trail("cases"), base.ClaimRequest(user="alice"), 1)
    sql = str(stmt.compile(dialect=dialect, compile_kwargs={"render_postcompile": True}))
    assert PICK_HINT == "WITH (UPDLOCK, READPAST, ROWLOCK, READCOMMITTEDLOCK)"
    assert "FROM cases WITH (UPDLOCK, READPAST, ROWLOCK, READCOMMITTEDLOCK)" in sql
    assert sql.count("READPAST") == 1  # on the pick only, not on the UPDATE target
    assert "FOR UPDATE" not in sql and "SKIP LOCKED" not in sql and "LIMIT" not in sql


def test_claim_picks_top_n_in_queue_order_then_key() -> None:
    _, sql = claim_sql(demo_queue(), count=3)
    assert "(SELECT TOP 3 cases.case_id AS wb_ckey," in sql
    assert "ORDER BY cases.priority ASC, cases.opened_at ASC, cases.case_id ASC) AS wb_pick" in sql
    assert sql.endswith("WHERE cases.case_id = wb_pick.wb_ckey")
    (descending,) = claim_sql(bound(STATUS_DRIVEN, "cases"), count=2)[1:]
    assert "TOP 2" in descending and "ORDER BY cases.priority DESC, cases.case_id ASC)" in descending


def test_claim_room_limits_top() -> None:
    _, sql = claim_sql(demo_queue(), count=5, room=2)
    assert "TOP 2 " in sql and "TOP 5" not in sql


def test_claim_writes_the_lock_with_the_server_clock_and_a_server_token() -> None:
    _, sql = claim_sql(demo_queue())
    # Config constants (the on_claim status, the lock duration) are part of the text; the user is a parameter.
    assert sql.startswith(
        "UPDATE cases SET status='open', wb_locked_by=:wb_locked_by, "
        "wb_locked_at=SYSUTCDATETIME(), wb_lock_expires=DATEADD(second, 900, SYSUTCDATETIME()), "
        "wb_lock_token=LOWER(REPLACE(CONVERT(VARCHAR(36), NEWID()), '-', '')) OUTPUT "
    )
    _, stmt = ReadpastClaim().statements(demo_queue(), trail("cases"), base.ClaimRequest(user="alice"), 1)
    assert compiled(stmt).params["wb_locked_by"] == "alice"


def test_claim_returns_the_locked_row_with_output_inserted() -> None:
    _, sql = claim_sql(demo_queue())
    output = sql[sql.index(" OUTPUT ") : sql.index(" FROM cases, ")]
    assert "inserted.case_id, inserted.opened_at," in output and "inserted.wb_lock_token," in output
    assert "inserted.case_id AS wb_key" in output and "inserted.wb_lock_token AS wb_token" in output
    assert "inserted.wb_lock_expires AS wb_expires" in output and "SYSUTCDATETIME() AS wb_now" in output
    assert "wb_pick.wb_prev_owner, wb_pick.wb_prev_token, wb_pick.wb_prev_time" in output
    assert "RETURNING" not in sql and "deleted." not in sql


def test_claim_filter_constants_are_inlined_for_filtered_indexes() -> None:
    _, sql = claim_sql(demo_queue())
    # The same constants as the filtered claim index: waiting and not locked.
    assert "WHERE cases.status IN ('new', 'open') AND cases.wb_locked_by IS NULL AND NOT (EXISTS" in sql, sql
    (_, todo) = claim_sql(bound(STATUS_DRIVEN, "cases"))
    assert (
        "WHERE cases.category != 'Spam' AND cases.priority >= 2 AND cases.status = 'new' "
        "AND cases.wb_locked_by IS NULL ORDER BY"
    ) in todo
    # Written config constants are inlined too; the acting user stays a parameter.
    assert "SET status='in_progress', wb_locked_by=:wb_locked_by" in todo


def test_claim_filter_constants_are_literal_execute_without_render_postcompile() -> None:
    _, stmt = ReadpastClaim().statements(demo_queue(), trail("cases"), base.ClaimRequest(user="alice"), 1)
    c = stmt.compile(dialect=DIALECT)
    assert re.search(r"cases\.status IN \(__\[POSTCOMPILE_\w+\]\)", str(c))
    todo = [b for b in c.binds.values() if b.value == ["new", "open"]]
    # Rendered into the statement text when it runs, not sent as a parameter.
    assert todo and all(b.literal_execute for b in todo)


def test_cooldown_excludes_items_the_user_just_released() -> None:
    _, sql = claim_sql(demo_queue(), user="alice")
    assert (
        "AND NOT (EXISTS (SELECT * FROM workbench_cooldown WHERE workbench_cooldown.queue = :queue_1 "
        "AND workbench_cooldown.actor = :actor_1 AND workbench_cooldown.until > SYSUTCDATETIME() "
        "AND workbench_cooldown.item_key = CAST(cases.case_id AS VARCHAR(200))))"
    ) in sql
    _, stmt = ReadpastClaim().statements(demo_queue(), trail("cases"), base.ClaimRequest(user="alice"), 1)
    params = compiled(stmt).params
    assert (params["queue_1"], params["actor_1"]) == ("cases", "alice")


def test_no_cooldown_subquery_without_cooldown_or_for_a_picked_item() -> None:
    assert all("EXISTS" not in sql for sql in claim_sql(bound(STATUS_DRIVEN, "cases")))
    _, picked = claim_sql(demo_queue(), key=42)
    assert "EXISTS" not in picked and "AND cases.case_id = :case_id_1" in picked


def test_max_locks_counts_the_users_live_locks() -> None:
    q = demo_queue()
    sql = render(sa.select(base.ClaimMethod.held_count(q, q.now(), "alice")))
    # Locks taken in this queue only (held_here: the row in its todo), not another queue's of the table.
    assert sql == (
        "SELECT (SELECT count(*) AS count_1 FROM cases WHERE cases.status IN ('new', 'open') AND "
        "cases.wb_locked_by = :wb_locked_by_1 AND cases.wb_locked_by IS NOT NULL AND "
        "cases.wb_lock_expires > SYSUTCDATETIME()) AS anon_1"
    )


def test_status_driven_queue_claims_expired_locks_in_their_own_branch_first() -> None:
    expired, todo = claim_sql(bound(STATUS_DRIVEN, "cases"))
    # Expired locks: rows still waiting, or in the state a claim put them in.
    assert (
        "WHERE cases.category != 'Spam' AND cases.priority >= 2 AND cases.wb_locked_by IS NOT NULL AND "
        "(cases.wb_lock_expires IS NULL OR cases.wb_lock_expires <= "
        "SYSUTCDATETIME()) AND (cases.status = 'new' OR cases.status = 'in_progress') ORDER BY"
    ) in expired
    assert "cases.status = 'new' AND cases.wb_locked_by IS NULL" in todo
    assert "'in_progress'" not in todo.split(" WHERE ", 1)[1]  # only what the claim writes
    assert all(PICK_HINT in sql and "OUTPUT inserted." in sql for sql in (expired, todo))


def test_every_queue_claims_expired_locks_first_then_free_rows() -> None:
    expired, free = claim_sql(demo_queue())
    assert "cases.wb_locked_by IS NOT NULL AND (cases.wb_lock_expires IS NULL" in expired and "EXISTS" not in expired
    assert "cases.wb_locked_by IS NULL" in free and "wb_lock_expires <=" not in free


# -- guarded writes: UPDATE … WHERE key AND token AND lock still live --------------------------------


LOCK_FENCE = (
    "WHERE cases.case_id = :wb_key AND cases.wb_lock_token = :wb_token "
    "AND coalesce(cases.wb_locked_by, '') = :wb_user AND cases.wb_lock_expires > SYSUTCDATETIME()"
)
# And the lock is the queue's (BoundQueue.held_here): the row is in its todo (or claimed) state.
FENCE = f"{LOCK_FENCE} AND cases.status IN ('new', 'open')"


def test_save_writes_the_edits_under_the_fence() -> None:
    shape = guarded.Shape(models.EventKind.SAVE, edits=("resolution", "time_spent_min"))
    sql = one_line(write_sql(demo_queue(), shape))
    assert sql == f"UPDATE cases SET resolution=:wb_e0, time_spent_min=:wb_e1 {FENCE}"


def test_complete_writes_the_outcome_and_clears_the_lock() -> None:
    c = write_sql(demo_queue(), guarded.Shape(models.EventKind.COMPLETE, outcome="waiting", unlock=True))
    assert one_line(c) == (
        "UPDATE cases SET status='waiting_customer', wb_locked_by=NULL, wb_locked_at=NULL, "
        f"wb_lock_expires=NULL, wb_lock_token=NULL {FENCE}"
    )
    assert c.params == {}  # key, token and user are the only values sent


def test_complete_with_user_and_now_assignments() -> None:
    c = write_sql(demo_queue("imports"), guarded.Shape(models.EventKind.COMPLETE, outcome="rejected", unlock=True))
    sql = one_line(c)
    assert "SET check_status='rejected', checked_by=:wb_user, checked_at=SYSUTCDATETIME()," in sql
    assert sql.endswith(
        "WHERE import_rows.row_id = :wb_key AND import_rows.wb_lock_token = :wb_token "
        "AND coalesce(import_rows.wb_locked_by, '') = :wb_user "
        "AND import_rows.wb_lock_expires > SYSUTCDATETIME() AND import_rows.check_status = 'pending'"
    )


def test_release_runs_on_release_and_clears_the_lock() -> None:
    c = write_sql(
        bound(STATUS_DRIVEN, "cases"), guarded.Shape(models.EventKind.RELEASE, unlock=True, release_writes=True)
    )
    sql = one_line(c)
    assert sql.startswith("UPDATE cases SET status='new', wb_locked_by=NULL,")
    # A status-driven queue's lock is on a row in its scope, claimed ('in_progress') or waiting.
    assert sql.endswith(
        f"{LOCK_FENCE} AND cases.category != 'Spam' AND cases.priority >= 2 "
        "AND (cases.status = 'new' OR cases.status = 'in_progress')"
    )


def test_extend_is_capped_by_max_lock_duration() -> None:
    c = write_sql(demo_queue(), guarded.Shape(models.EventKind.EXTEND, extend=True))
    sql = one_line(c)
    cap = (
        "CASE WHEN (DATEADD(second, :param_1, SYSUTCDATETIME()) > DATEADD(second, :param_2, cases.wb_locked_at)) "
        "THEN DATEADD(second, :param_2, cases.wb_locked_at) ELSE DATEADD(second, :param_1, SYSUTCDATETIME()) END"
    )
    assert sql.startswith(f"UPDATE cases SET wb_lock_expires={cap} {FENCE}")
    assert sql.endswith("> cases.wb_lock_expires")  # only when it really moves the expiry
    assert (c.params["param_1"], c.params["param_2"]) == (15 * 60, 2 * 3600)


def test_guarded_writes_are_plain_updates_on_sql_server() -> None:
    writer = guarded.GuardedWriter(types.SimpleNamespace(dialect="mssql"), demo_queue(), trail("cases"))
    assert not writer.q.backend.one_statement_writes  # the audit row: a second statement in the same transaction
    sql = one_line(compiled(writer._statement(guarded.Shape(models.EventKind.RELEASE, unlock=True))[0]))
    assert sql.startswith("UPDATE cases SET") and "WITH " not in sql and "workbench_audit" not in sql
    assert "FOR UPDATE" not in sql and "RETURNING" not in sql and "OUTPUT" not in sql


# -- legacy tables: lock user and lock time only ---------------------------------------------------


# DATETIME and DATETIME2(7) do not round-trip through Python's microseconds, so the lock time is
# matched within a few milliseconds.
LEGACY_FENCE = (
    "WHERE orders.order_no = :wb_key AND coalesce(orders.locked_by, '') = :wb_user "
    "AND orders.locked_at > DATEADD(second, -1200, SYSUTCDATETIME()) "
    "AND orders.locked_at > DATEADD(millisecond, -4, :wb_time) "
    "AND orders.locked_at < DATEADD(millisecond, 4, :wb_time) AND orders.state = 'new'"
)


def test_legacy_fence_checks_user_and_lock_time() -> None:
    q = bound(LEGACY, "orders")
    for shape in (
        guarded.Shape(models.EventKind.SAVE, edits=("due",)),
        guarded.Shape(models.EventKind.RELEASE, unlock=True, release_writes=True),
        guarded.Shape(models.EventKind.COMPLETE, outcome="done", unlock=True),
    ):
        c = write_sql(q, shape)
        assert one_line(c).endswith(LEGACY_FENCE), shape
        assert "token" not in one_line(c)


def test_legacy_complete_writes_outcome_user_and_time() -> None:
    c = write_sql(bound(LEGACY, "orders"), guarded.Shape(models.EventKind.COMPLETE, outcome="done", unlock=True))
    assert one_line(c).startswith(
        "UPDATE orders SET state='done', done_by=:wb_user, done_at=SYSUTCDATETIME(), "
        "locked_by=NULL, locked_at=NULL WHERE"
    )


def test_legacy_extend_moves_the_lock_time() -> None:
    sql = one_line(write_sql(bound(LEGACY, "orders"), guarded.Shape(models.EventKind.EXTEND, extend=True)))
    assert sql.startswith("UPDATE orders SET locked_at=:wb_extend_to WHERE orders.order_no = :wb_key")
    # LEGACY has no max_lock_duration: an extend in the claim's instant leaves the lock time as it is.
    assert sql.endswith("AND :wb_extend_to >= orders.locked_at")


def test_legacy_claim_has_no_token_and_derives_expiry_from_lock_time() -> None:
    _, sql = claim_sql(bound(LEGACY, "orders"))
    assert "NEWID()" not in sql and "NULL AS wb_token" in sql and "NULL AS wb_prev_token" in sql
    assert sql.startswith("UPDATE orders SET locked_by=:locked_by, locked_at=SYSUTCDATETIME() OUTPUT ")
    assert "DATEADD(second, 1200, inserted.locked_at) AS wb_expires" in sql
    assert (
        "WHERE orders.state = 'new' AND orders.locked_by IS NULL ORDER BY orders.due DESC, orders.order_no ASC"
    ) in sql
    expired, _ = claim_sql(bound(LEGACY, "orders"))
    assert (
        "orders.locked_by IS NOT NULL AND (orders.locked_at IS NULL OR orders.locked_at <= "
        "DATEADD(second, -1200, SYSUTCDATETIME())) AND orders.state = 'new'"
    ) in expired
    assert "FROM orders WITH (UPDLOCK, READPAST, ROWLOCK, READCOMMITTEDLOCK)" in sql


# -- the lock board: keys per statement ------------------------------------------------------------


class _Answer:
    """What the stand-in connection returns for one statement: canned rows."""

    def __init__(self, rows: list[Any]) -> None:
        self.rows = rows

    def mappings(self) -> _Answer:
        return self

    def one(self) -> Any:
        (row,) = self.rows
        return row

    def all(self) -> list[Any]:
        return self.rows

    def __iter__(self) -> Iterator[Any]:
        return iter(self.rows)


class _SqlServer:
    """Stands in for a connection to SQL Server: keeps each statement as pyodbc sends it (qmark
    parameters, an IN list expanded to one per value) and answers with canned rows, then none."""

    dialect = mssql_pyodbc.dialect(paramstyle="qmark")

    def __init__(self, *answers: list[Any]) -> None:
        self.answers = list(answers)
        self.sent: list[Any] = []

    def execute(self, stmt: Any, params: dict[str, Any] | None = None) -> _Answer:
        self.sent.append(stmt.compile(dialect=self.dialect).construct_expanded_state(params or {}))
        return _Answer(self.answers.pop(0) if self.answers else [])


def test_board_of_10000_locks_keeps_under_2100_parameters_per_statement() -> None:
    q = demo_queue()
    now = dt.datetime(2026, 11, 21, 12, 0)
    summary = ["x"] * len(q.list_columns)
    # The locked rows as the board selects them: key, owner, lock time, expiry, due, list columns, token.
    due = now + dt.timedelta(hours=4)
    locks = [(key, "ann", now, now + dt.timedelta(minutes=15), due, *summary, f"tok{key}") for key in range(1, 10_001)]
    conn = _SqlServer([{"wb_now": now, "wb_utc": now}], locks)
    board = lock_board.board(conn, q, trail("cases"))  # type: ignore[arg-type]
    assert len(board) == 10_000 and all(row.extensions == 0 and row.last_activity == row.locked_at for row in board)
    assert all(row.due == due for row in board)
    counts = [len(sent.positiontup or ()) for sent in conn.sent]
    assert max(counts) <= 2100, counts  # SQL Server refuses a statement with more
    # The clock, the locked rows, then the audit aggregates of the locked items, 2,000 keys at a time.
    assert len(conn.sent) == 2 + 5 and all("WHERE workbench_audit.queue = ?" in s.statement for s in conn.sent[2:])
    keys = [value for sent in conn.sent[2:] for name, value in sent.parameters.items() if name.startswith("wb_keys")]
    assert sorted(keys) == sorted(str(key) for key in range(1, 10_001))


# -- the clock and the token -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "element, sql",
    [
        (clock.db_now(), "SYSUTCDATETIME()"),
        (clock.db_now(local=True), "SYSDATETIME()"),
        (clock.db_now(aware=True), "SYSDATETIMEOFFSET()"),
        (clock.add_seconds(clock.db_now(), sa.literal_column("90")), "DATEADD(second, 90, SYSUTCDATETIME())"),
        (clock.add_seconds(sa.column("locked_at"), sa.literal_column("-60")), "DATEADD(second, -60, locked_at)"),
        (clock.new_token(), "LOWER(REPLACE(CONVERT(VARCHAR(36), NEWID()), '-', ''))"),
    ],
)
def test_clock_and_token_on_sql_server(element: Any, sql: str) -> None:
    assert str(element.compile(dialect=DIALECT)) == sql


def test_add_seconds_binds_the_number() -> None:
    c = compiled(sa.select(clock.add_seconds(clock.db_now(), sa.bindparam("n", 120, type_=sa.Integer()))))
    assert str(c) == "SELECT DATEADD(second, :n, SYSUTCDATETIME()) AS anon_1" and c.params == {"n": 120}


# -- choosing the claim method -----------------------------------------------------------------------


@pytest.fixture
def mssql_engine() -> Iterator[sa.Engine]:
    engine = sa.create_engine("mssql+pyodbc://u@h/db?driver=FreeTDS")  # does not connect
    yield engine
    engine.dispose()


def test_auto_chooses_readpast_on_sql_server(mssql_engine: sa.Engine) -> None:
    assert claims.auto_name(mssql_engine) == "readpast"
    method = claims.choose(mssql_engine, "auto")
    assert isinstance(method, ReadpastClaim) and method.name == "readpast"
    assert isinstance(claims.choose(mssql_engine, "readpast"), ReadpastClaim)
    assert isinstance(claims.choose(mssql_engine, "portable"), portable.PortableClaim)


@pytest.mark.parametrize("method", ["immediate", "skip-locked", "select-skip-locked"])
def test_other_databases_methods_are_refused_on_sql_server(mssql_engine: sa.Engine, method: str) -> None:
    with pytest.raises(errors.ConfigError) as info:
        claims.choose(mssql_engine, method)
    assert info.value.key == "database.claim_method"
    assert f"claim method '{method}' does not work on mssql" in str(info.value)


def test_readpast_is_refused_elsewhere() -> None:
    engine = sa.create_engine("sqlite://")
    try:
        with pytest.raises(errors.ConfigError, match="'readpast' does not work on sqlite"):
            claims.choose(engine, "readpast")
    finally:
        engine.dispose()


def test_expired_locks_of_rows_the_claim_stamped_with_the_claimer_are_served_again() -> None:
    # todo reads a column the claim fills with the claimer's name: the expired lock's row carries
    # it still, so the expired branch accepts "the claim's shape": that column equals the lock user.
    text = STATUS_DRIVEN.replace(
        'status = "new"\n\n[queues.cases.on_claim]\nstatus = "in_progress"',
        'status = "new"\ncustomer = { null = true }\n\n[queues.cases.on_claim]\ncustomer = { user = true }',
    ).replace('[queues.cases.on_release]\nstatus = "new"', "[queues.cases.on_release]\ncustomer = { null = true }")
    expired, free = claim_sql(bound(text, "cases"))
    assert (
        "AND (cases.status = 'new' AND cases.customer IS NULL OR cases.status = 'new' AND "
        "cases.customer = cases.wb_locked_by) ORDER BY"
    ) in expired, expired
    assert "cases.status = 'new' AND cases.customer IS NULL AND cases.wb_locked_by IS NULL" in free


def test_a_reviewing_queues_claim_leaves_out_the_claimers_own_work_in_every_branch() -> None:
    from workbench.db import reviews

    config = loader.parse(tomllib.loads(demo.config_text()), "x.toml")
    source = config.queue("imports")
    assert source.review is not None
    q = demo_queue("imports_review")
    metadata, audit_table, _ = tables.build_metadata()
    own = reviews.Reviews(
        metadata.tables[tables.REVIEWS_TABLE], metadata.tables[tables.DEFERRALS_TABLE], source.review, "imports"
    )
    reviewing = audit.AuditTrail(audit_table, q.name, metadata.tables[tables.COOLDOWN_TABLE], reviews=own)
    statements = ReadpastClaim().statements(q, reviewing, base.ClaimRequest(user="alice"), 1)
    for stmt in statements:  # expired locks, then free rows
        sql = render(stmt)
        assert (
            "NOT (EXISTS (SELECT * FROM workbench_reviews WHERE workbench_reviews.queue = :queue_1 AND "
            "workbench_reviews.item_key = CAST(import_rows.row_id AS VARCHAR(200)) AND "
            "workbench_reviews.doer = :doer_1 AND workbench_reviews.verdict IS NULL))"
        ) in sql
        assert sql.count("READPAST") == 1


def test_a_narrowed_claim_binds_the_value() -> None:
    request = base.ClaimRequest(user="alice", where=(("category", "Network"),))
    for stmt in ReadpastClaim().statements(demo_queue(), trail("cases"), request, 1):
        sent = compiled(stmt)
        assert "cases.category = :" in one_line(sent) and "Network" in sent.params.values()


def test_conditions_on_the_claimer_and_the_time_run_in_every_branch() -> None:
    text = STATUS_DRIVEN.replace(
        '[queues.cases.todo]\nstatus = "new"',
        '[queues.cases.todo]\nstatus = "new"\n'
        "resolution = { eq = { user = true }, or_null = true }\n"
        'opened_at = { lt = { now = "-2h" } }',
    )
    statements = ReadpastClaim().statements(bound(text, "cases"), trail("cases"), base.ClaimRequest(user="ann"), 1)
    for stmt in statements:
        sent = compiled(stmt)
        sql = one_line(sent)
        assert "(cases.resolution = :" in sql and "OR cases.resolution IS NULL)" in sql, sql
        assert "cases.opened_at < DATEADD(second, -7200, SYSUTCDATETIME())" in sql, sql
        assert "ann" in sent.params.values()
