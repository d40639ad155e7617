"""The table's row rules compiled once (db/rowrules.py): a row rule changed in core/workflow.py's table changes
the engine's statements and PostgreSQL's checks alike, and a RowRule or After with no clause fails naming the
file to change. Fast tier: SQLite and SQL text generated offline, no server."""

from __future__ import annotations

import dataclasses
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from tests import support, test_mssql_sql
from workbench import demo
from workbench.config import loader
from workbench.core import errors, workflow
from workbench.core.workflow import After, RowRule
from workbench.db import backends, mapping, protocol, protocol_locks, rowrules, tables
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


ESCALATED = '\n[queues.cases.on_escalate]\nstatus = "escalated"\n'


def _bound(name: str = "cases", text: str = demo.config_text() + ESCALATED) -> mapping.BoundQueue:
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
    return protocol._queue_check(_Conn(), q, "public", None)  # type: ignore[arg-type]


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
            protocol_locks.lock_check(_Conn(), q, "public", None),  # type: ignore[arg-type]
            protocol_locks.item_check(_Conn(), q, "public"),  # type: ignore[arg-type]
        )

    locks, item = checks()
    assert "NOT IN" not in locks  # a claim takes a waiting item
    assert "(o.status IN ('new', 'open')) AND (n.status IN ('new', 'open'))" in _branch(item, "move")
    _patched(monkeypatch, "claim", "pick", "move", row=RowRule.FINISHED)
    locks, item = checks()
    assert "(item.status NOT IN ('new', 'open'))" in locks
    assert "((o.status NOT IN ('new', 'open'))) AND (n.status IN ('new', 'open'))" in _branch(item, "move")
