"""The table's row rules compiled once (db/rowrules.py): a row rule changed in core/workflow.py's table changes
the engine's statements and PostgreSQL's checks alike, and a RowRule or After with no clause fails naming the
file to change. Fast tier (SQLite and SQL text generated offline), but for what PostgreSQL admits under grants."""

from __future__ import annotations

import dataclasses
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from tests import support, test_mssql_protocol, test_mssql_sql, test_permissions
from tests import test_relative_conditions as relative_conditions
from tests.test_permissions import Pg, pg  # noqa: F401  (the fixture: a demo database under `grants`)
from workbench import demo
from workbench.config import loader
from workbench.core import errors, workflow
from workbench.core.workflow import After, Check, RowRule, TrailRule
from workbench.db import backends, mapping, rowrules, tables
from workbench.db.rules import pg_lock_check, pg_locks, pg_row_check
from workbench.db.supervision import Supervision
from workbench.demo import schema


@pytest.fixture
def sqlite_env(tmp_path: Path) -> Iterator[support.Env]:
    environment = support.Env("sqlite", "native", f"sqlite:///{tmp_path / 'test.db'}", tmp_path)
    yield environment
    environment.close()


def _patched(monkeypatch: pytest.MonkeyPatch, *names: str, **fields: Any) -> None:
    """Transitions `names` of the table with `fields` changed (the table is read at every use)."""
    for name in names:
        monkeypatch.setitem(workflow._TABLE, name, dataclasses.replace(workflow.TRANSITIONS[name], **fields))


def _bound(name: str = "cases", text: str = demo.config_text()) -> mapping.BoundQueue:
    """Queue `name` (the demo's) bound for PostgreSQL to the demo's tables, built here (no server)."""
    config = loader.parse(tomllib.loads(text), "x.toml")
    metadata = sa.MetaData()
    schema.build(metadata)
    tables.build_metadata()
    queue = config.queue(name)
    locks = tables.lock_table(metadata, queue.lock.table) if queue.lock is not None and queue.lock.table else None
    return mapping.BoundQueue(
        queue,
        metadata.tables[queue.table],
        config_path="x.toml",
        backend=backends.for_dialect("postgresql"),
        local_clock=False,
        locks=locks,
    )


def test_every_row_rule_and_state_after_has_a_clause() -> None:
    rowrules.require_compiled()
    q = _bound()
    for name in workflow.TRANSITIONS:
        assert isinstance(rowrules.before(q, name), rowrules.Row)
        rowrules.after(q, name)


def test_a_row_rule_without_a_clause_fails_naming_the_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rowrules, "_BEFORE", {k: v for k, v in rowrules._BEFORE.items() if k is not RowRule.ESCALATED})
    with pytest.raises(rowrules.NotCompiled, match=r"RowRule.ESCALATED but workbench/db/rowrules.py .* _BEFORE"):
        rowrules.require_compiled()
    with pytest.raises(rowrules.NotCompiled, match=r"workbench/db/rowrules\.py"):
        rowrules.before(_bound(), "take")  # what the engine and the trigger ask
    monkeypatch.undo()
    monkeypatch.setattr(rowrules, "_AFTER", {k: v for k, v in rowrules._AFTER.items() if k is not After.WAITING})
    with pytest.raises(rowrules.NotCompiled, match=r"After.WAITING but workbench/db/rowrules.py .* _AFTER"):
        rowrules.require_compiled()


def test_a_trail_rule_without_a_clause_fails_naming_the_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rowrules, "_TRAIL", {TrailRule.ANY: rowrules._TRAIL[TrailRule.ANY]})
    with pytest.raises(rowrules.NotCompiled, match=r"LAST_OWN_COMPLETE but workbench/db/rowrules.py .*_TRAIL"):
        rowrules.require_compiled()
    audit = tables.build_metadata()[1]
    with pytest.raises(rowrules.NotCompiled, match=r"workbench/db/rowrules\.py"):
        rowrules.trail(_bound(), "undo", audit, item="1", user="ann")  # what every rendering asks


# Undo's trail rule (LAST_OWN_COMPLETE, within undo_within: UNDO_WINDOW) as each database rendering says it.
_LAST_OWN_COMPLETE = "wb_last.event = 'complete' AND wb_last.actor = {user} AND NOT (EXISTS (SELECT wb_later.id"
_WINDOW = {"pg": "wb_last.at >= (timezone('UTC', now()) + make_interval(secs => {})", "mssql": "DATEADD(second, {}, "}


def _undo_texts(text: str = demo.config_text()) -> tuple[str, str]:
    """Undo as PostgreSQL's in-row check and SQL Server's procedure say it, for the demo's cases."""
    pg = _branch(_check(_bound("cases", text)), "undo")
    mssql = " ".join(test_mssql_protocol.batches(text)["undo"].split())
    return " ".join(pg.split()), mssql


def test_undos_trail_rule_changed_in_the_table_changes_every_database_rendering(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pg, mssql = _undo_texts()
    assert _LAST_OWN_COMPLETE.format(user="login") in pg and _LAST_OWN_COMPLETE.format(user="@login") in mssql
    assert _WINDOW["pg"].format(-120) in pg and _WINDOW["mssql"].format(-120) in mssql
    # The setting: another undo_within, the same clause with the other window.
    longer = demo.config_text().replace("[queues.cases]\n", "[queues.cases]\nundo_within = 600\n")
    pg, mssql = _undo_texts(longer)
    assert _WINDOW["pg"].format(-600) in pg and _WINDOW["mssql"].format(-600) in mssql
    assert "-120" not in pg and "-120" not in mssql
    # Undo without its window (Check.UNDO_WINDOW): the last event the caller's Complete, however old.
    _patched(monkeypatch, "undo", checks=workflow.TRANSITIONS["undo"].checks - {Check.UNDO_WINDOW})
    pg, mssql = _undo_texts()
    assert _LAST_OWN_COMPLETE.format(user="login") in pg and _LAST_OWN_COMPLETE.format(user="@login") in mssql
    assert "wb_last.at" not in pg and "wb_last.at" not in mssql
    assert "IF @age >" not in mssql  # nor is a refusal said as too late
    # Undo asking nothing of the trail: no subquery over it in either.
    _patched(monkeypatch, "undo", trail=TrailRule.ANY)
    pg, mssql = _undo_texts()
    assert "wb_last" not in pg and "wb_last.id" not in mssql


def test_the_engines_undo_holds_to_the_tables_trail_rule(
    sqlite_env: support.Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    wb = sqlite_env.demo(case_rows=3, import_rows=1)
    q = wb.queue("cases")
    first, second = (c.lock for c in q.claim_next("alice", 2))
    for lock in (first, second):
        q.complete("alice", lock.key, lock.token, "resolved")
    sqlite_env.age_audit(wb, "cases", first.key, 3600)  # an hour ago: past the demo's undo_within
    with pytest.raises(errors.UsageError, match="too late to undo"):
        q.undo_complete("alice", first.key)
    with pytest.raises(errors.UsageError, match="nothing of yours to undo"):
        q.undo_complete("bob", second.key)
    # The table's undo without its window (UNDO_WINDOW): the engine's UPDATE takes the hour-old Complete back.
    _patched(monkeypatch, "undo", checks=workflow.TRANSITIONS["undo"].checks - {Check.UNDO_WINDOW})
    assert q.undo_complete("alice", first.key).lock.owner == "alice"
    # And without its trail rule: bob takes back alice's Complete (the row rule alone: finished, its values).
    _patched(monkeypatch, "undo", trail=TrailRule.ANY)
    assert q.undo_complete("bob", second.key).lock.owner == "bob"


def test_the_engines_claim_serves_what_the_tables_row_rule_says(
    sqlite_env: support.Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    wb = sqlite_env.demo(case_rows=3, import_rows=1)
    q = wb.queue("cases")
    lock = q.claim_next("alice")[0].lock
    q.complete("alice", lock.key, lock.token, "resolved")
    # The claim's row rule made FINISHED: the engine's claim now serves the finished item, and only it.
    _patched(monkeypatch, "claim", "pick", row=RowRule.FINISHED)
    assert [c.lock.key for c in wb.queue("cases").claim_next("bob", 5)] == [lock.key]


def test_the_engines_reopen_holds_to_the_tables_row_rules(
    sqlite_env: support.Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    wb = sqlite_env.demo(case_rows=3, import_rows=1)
    q = wb.queue("cases")
    lock = q.claim_next("alice")[0].lock
    q.complete("alice", lock.key, lock.token, "resolved")
    # Reopen's row rule made WAITING: the finished item is not, and the UPDATE itself refuses it.
    _patched(monkeypatch, "reopen", row=RowRule.WAITING)
    with pytest.raises(errors.DatabaseUnavailable):
        Supervision(q).reopen("sue", lock.key, "the table says it must wait to be reopened")
    assert sqlite_env.row(wb, "cases", lock.key)["status"] == "resolved"
    monkeypatch.undo()
    Supervision(q).reopen("sue", lock.key, "as the table says")
    assert sqlite_env.row(wb, "cases", lock.key)["status"] == "open"


class _Oid:
    def scalar_one(self) -> int:
        return 4242


class _Conn:
    """Enough of a PostgreSQL connection to generate the check functions' text (the table's oid asked)."""

    dialect = postgresql.psycopg.dialect()

    def execute(self, *args: Any, **kwargs: Any) -> _Oid:
        return _Oid()


def _branch(text: str, name: str) -> str:
    """The text of the branch marked for transition `name` (up to the next mark)."""
    start = text.index(workflow.branch_mark(name))
    end = text.find(workflow.MARK, start + len(workflow.MARK))
    return text[start : end if end >= 0 else len(text)]


def _check(q: mapping.BoundQueue) -> str:
    return pg_row_check.queue_check(_Conn(), q, "public", None)  # type: ignore[arg-type]


def test_postgresqls_in_row_check_holds_to_the_tables_row_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    q = _bound()
    reopen, take = _branch(_check(q), "reopen"), _branch(_check(q), "take")
    # As the table says: reopen takes a finished row (out of todo) back into todo; take an escalated one.
    assert "(o.status NOT IN ('new', 'open'))" in reopen and "(n.status IN ('new', 'open'))" in reopen
    assert "o.status = 'escalated'" in take
    _patched(monkeypatch, "reopen", row=RowRule.WAITING, after=After.ANY)
    _patched(monkeypatch, "take", row=RowRule.FINISHED)
    reopen, take = _branch(_check(q), "reopen"), _branch(_check(q), "take")
    assert "NOT IN" not in reopen and "(o.status IN ('new', 'open'))" in reopen
    assert "(n.status IN ('new', 'open'))" not in reopen
    assert "'escalated'" not in take and "(o.status NOT IN ('new', 'open'))" in take
    # A move's state after: waiting, or out of the queue's scope; made "waiting" only, out of scope is
    # no longer admitted.
    scoped = _bound("cases", test_mssql_sql.STATUS_DRIVEN)
    move = _branch(_check(scoped), "move")
    assert "(n.status = 'new' OR NOT (n.category != 'Spam' AND n.priority >= 2))" in move
    _patched(monkeypatch, "move", after=After.WAITING)
    move = _branch(_check(scoped), "move")
    assert "OR NOT" not in move and "(n.category != 'Spam' AND n.priority >= 2 AND n.status = 'new')" in move


def _procedure(name: str, text: str = demo.config_text()) -> str:
    """SQL Server's procedure for operation `name` of the demo's cases (or of `text`), on one line."""
    return " ".join(test_mssql_protocol.batches(text)[name].split())


def test_sql_servers_procedures_hold_to_the_tables_row_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    reopen, take, undo = _procedure("reopen"), _procedure("take"), _procedure("undo")
    # As the table says: reopen takes a finished row back into todo; take an escalated one; undo a finished one.
    assert "AND (cases.status NOT IN ('new', 'open')) AND cases.wb_locked_by IS NULL AND 'open' IN" in reopen
    assert "AND (cases.status NOT IN ('new', 'open')) AND cases.status = 'escalated';" in take
    assert (
        "AND cases.wb_locked_by IS NULL AND (cases.status NOT IN ('new', 'open')) AND cases.status = 'resolved'" in undo
    )
    _patched(monkeypatch, "reopen", row=RowRule.WAITING, after=After.ANY)
    _patched(monkeypatch, "take", row=RowRule.FINISHED)
    _patched(monkeypatch, "undo", row=RowRule.FINISHED)
    reopen, take, undo = _procedure("reopen"), _procedure("take"), _procedure("undo")
    assert "UPDATE cases SET status='open' WHERE cases.case_id = @p_key AND cases.status IN ('new', 'open')" in reopen
    assert "'open' IN" not in reopen
    assert "'escalated'" not in take and "cases.wb_locked_by IS NULL AND (cases.status NOT IN ('new', 'open'));" in take
    assert "cases.status = 'resolved'" not in undo  # FINISHED: not the Complete's values
    # A move's state after: waiting, or out of the queue's scope; made "waiting" only, a move out of the
    # scope finishes the item.
    out = "ELSE status END = 'new' OR NOT (CASE WHEN EXISTS (SELECT 1 FROM OPENJSON(@p_changes) WHERE [key] = N'cat"
    assert out in _procedure("move", test_mssql_sql.STATUS_DRIVEN)
    _patched(monkeypatch, "move", after=After.WAITING)
    assert "@finishes = CASE WHEN (NOT (" in _procedure("move", test_mssql_sql.STATUS_DRIVEN)
    assert " OR NOT (" not in _procedure("move", test_mssql_sql.STATUS_DRIVEN)


# The demo's cases worked through a lock table (shape 5), as a second queue over the table.
LOCK_TABLE = """
[queues.casesl]
table = "cases"
key = "case_id"
order = ["opened_at asc"]
lock_duration = "15m"

[queues.casesl.lock]
table = "workbench_locks"

[queues.casesl.todo]
status = ["new", "open"]

[queues.casesl.on_claim]
status = "open"

[queues.casesl.outcomes.closed]
set = { status = "closed" }
"""


def test_postgresqls_lock_table_checks_hold_to_the_tables_row_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    q = _bound("casesl", demo.config_text() + LOCK_TABLE)

    def checks() -> tuple[str, str]:
        return (
            pg_lock_check.lock_check(_Conn(), q, "public", None),  # type: ignore[arg-type]
            pg_locks.item_check(_Conn(), q, "public"),  # type: ignore[arg-type]
        )

    locks, item = checks()
    assert "NOT IN" not in _branch(locks, "claim")  # a claim takes a waiting item (a take an escalated one)
    assert "(o.status IN ('new', 'open')) AND (n.status IN ('new', 'open'))" in _branch(item, "move")
    _patched(monkeypatch, "claim", "pick", "move", row=RowRule.FINISHED)
    locks, item = checks()
    assert "(item.status NOT IN ('new', 'open'))" in _branch(locks, "claim")
    assert "((o.status NOT IN ('new', 'open'))) AND (n.status IN ('new', 'open'))" in _branch(item, "move")


# -- what PostgreSQL admits: a claim by hand holds to the todo for the claiming login ----------------


# The callbacks queue with its locks in workbench's lock table (shape 5) instead of its own columns.
CALLBACKS_LOCK_TABLE = relative_conditions.CONFIG.replace(
    'user = "locked_by"\ntime = "locked_at"\nexpires = "lock_expires"\ntoken = "lock_token"',
    'table = "workbench_locks"',
)
_ROW_CLAIM = (
    "UPDATE callbacks SET locked_by = session_user, locked_at = timezone('UTC', now()), "
    "lock_expires = timezone('UTC', now()) + interval '5 minutes', lock_token = :token WHERE call_id = :key"
)
_LOCK_ROW_CLAIM = (
    "INSERT INTO workbench_locks (queue, item_key, lock_user, locked_at, expires_at, token) VALUES "
    "('callbacks', CAST(:key AS text), session_user, timezone('UTC', now()), "
    "timezone('UTC', now()) + interval '5 minutes', :token)"
)


@pytest.mark.parametrize(
    ("config", "claim"),
    [(relative_conditions.CONFIG, _ROW_CLAIM), (CALLBACKS_LOCK_TABLE, _LOCK_ROW_CLAIM)],
    ids=["row-lock", "lock-table"],
)
def test_under_grants_a_hand_claim_holds_to_the_todo_for_the_claiming_login(
    pg: Pg, capsys: pytest.CaptureFixture[str], config: str, claim: str
) -> None:
    """CLAIMABLE is compiled for the caller (the engine's claim asks it for the claimer): a queue whose
    todo names its claimer (`assigned_to` is the claimer or NULL) admits a login's claim of an item
    waiting for it or for anyone, and refuses one of an item waiting for someone else, both where the
    lock is in the row and where it is a row of the lock table."""
    assert config.count("workbench_locks") == (claim is _LOCK_ROW_CLAIM)
    relative_conditions._callbacks(pg.env, config)
    path = pg.tmp / "callbacks.toml"
    path.write_text(pg.env.config_text(config), encoding="utf-8")
    code, _, err = test_permissions._cli(capsys, "--config", path, "grants", "callbacks", "--apply")
    assert code == 0, err
    ann = test_permissions.OPERATORS[0]
    engine = pg.engine(ann)
    with pytest.raises(sa.exc.DBAPIError, match=r"InsufficientPrivilege|no longer waits"), engine.begin() as conn:
        # Refused: not one of the queue's changes (in the row), or not waiting (a lock row: the claim tries another)
        conn.execute(sa.text(claim), {"token": "a" * 32, "key": 2})  # waiting for bob
    with engine.begin() as conn:
        assert conn.execute(sa.text(claim), {"token": "b" * 32, "key": 3}).rowcount == 1  # waiting for anyone
    holders = pg.open(ann, pg.env.config_text(config)).queue("callbacks").locks()
    assert [(int(lock.key), lock.owner) for lock in holders] == [(3, ann)]
