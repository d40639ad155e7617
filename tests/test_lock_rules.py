"""Undo's lock rule and checks compiled from the table (db/lockrules.py, workflow_sql.Rules): changed in
core/workflow.py, the engine's undo UPDATE, SQL Server's undo procedure and PostgreSQL's undo branch follow.
Fast tier: SQLite, and the databases' text generated offline, as tests/test_rowrules.py does."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from tests import support
from tests.test_rowrules import _bound, _branch, _check, _patched, _procedure, sqlite_env  # noqa: F401
from workbench.core import errors, workflow
from workbench.core.workflow import Check, LockRule

# Nobody holds the row (FREE) as SQL Server's undo and take say it, and PostgreSQL's in-row check over OLD.
_FREE_MSSQL = "AND cases.wb_locked_by IS NULL AND"
_FREE_PG = "IF (o.wb_locked_by IS NULL) AND"


def test_the_engines_undo_holds_to_the_tables_lock_rule(
    sqlite_env: support.Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    wb = sqlite_env.demo(case_rows=3, import_rows=1)
    q = wb.queue("cases")
    lock = q.claim_next("alice")[0].lock
    q.complete("alice", lock.key, lock.token, "resolved")
    # Someone's lock on the finished row (a program of the table's): FREE refuses the undo in its UPDATE.
    with wb.engine.begin() as conn:
        conn.execute(sa.update(q.q.table).where(q.q.key == lock.key).values(wb_locked_by="bob"))
    with pytest.raises(errors.UsageError, match="changed since you completed it"):
        q.undo_complete("alice", lock.key)
    # Undo's lock rule made ANY in the table: the engine's UPDATE no longer asks who holds the row.
    _patched(monkeypatch, "undo", lock=LockRule.ANY)
    assert q.undo_complete("alice", lock.key).lock.owner == "alice"
    assert sqlite_env.row(wb, "cases", lock.key)["wb_locked_by"] == "alice"


def test_sql_servers_and_postgresqls_undo_hold_to_the_tables_lock_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    undo, take = _procedure("undo"), _procedure("take")
    assert _FREE_MSSQL in undo and _FREE_MSSQL in take
    assert _FREE_PG in _branch(_check(_bound()), "undo")
    _patched(monkeypatch, "undo", "take", lock=LockRule.ANY)
    undo, take = _procedure("undo"), _procedure("take")
    assert "wb_locked_by IS NULL" not in undo and "wb_locked_by IS NULL" not in take
    assert "(o.wb_locked_by IS NULL)" not in _branch(_check(_bound()), "undo")


def test_postgresqls_undo_checks_the_limits_the_table_says(monkeypatch: pytest.MonkeyPatch) -> None:
    limit = "/* check: within_limits */ (n.wb_locked_at) <= "
    assert limit in _branch(_check(_bound()), "undo")
    # Undo without WITHIN_LIMITS in the table: its branch no longer bounds the fresh lock (as for take's).
    for name in ("undo", "take"):
        _patched(monkeypatch, name, checks=workflow.TRANSITIONS[name].checks - {Check.WITHIN_LIMITS})
    text = _check(_bound())
    assert limit not in _branch(text, "undo") and limit not in _branch(text, "take")
    assert "(n.wb_lock_expires) <= " not in _branch(text, "undo")
