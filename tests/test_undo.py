"""Undo Complete: its operator takes it back within undo_within, with a fresh lock and the edits kept;
refused for anyone else, too late, or after anything happened to the item."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from tests import support
from tests.helpers import workflow_bench
from workbench.core import errors, models
from workbench.db.supervision import Supervision


def test_the_completer_takes_it_back_with_a_fresh_lock(native_env: support.Env) -> None:
    wb = native_env.demo(case_rows=3, import_rows=2)
    q = wb.queue("cases")
    lock = q.claim_next("alice")[0].lock
    q.complete("alice", lock.key, lock.token, "waiting", {"resolution": "asked for a screenshot"})
    back = q.undo_complete("alice", lock.key)
    assert back.lock.owner == "alice" and back.lock.token != lock.token and not back.lock.expired
    row = native_env.row(wb, "cases", lock.key)
    assert (row["status"], row["resolution"]) == ("open", "asked for a screenshot")  # edits stay
    assert [(e.kind, e.outcome) for e in q.history(lock.key)][-2:] == [
        (models.EventKind.UNDO, "waiting"),
        (models.EventKind.CLAIM, None),
    ]
    assert q.complete("alice", lock.key, back.lock.token, "resolved").outcome == "resolved"  # the right one now
    # The import queue: its outcome's who and when are cleared (its on_reopen), the line is alice's again.
    imports = wb.queue("imports")
    line = imports.claim_next("alice")[0].lock
    imports.complete("alice", line.key, line.token, "rejected")
    again = imports.undo_complete("alice", line.key)
    checked = native_env.row(wb, "imports", line.key)
    assert (checked["check_status"], checked["checked_by"], again.lock.owner) == ("pending", None, "alice")


def test_refused_for_others_too_late_or_after_a_change(native_env: support.Env) -> None:
    wb = native_env.demo(case_rows=4, import_rows=1, queues={"cases": {"undo_within_seconds": 2}})
    q = wb.queue("cases")
    first, second, third = (c.lock for c in q.claim_next("alice", 3))
    for lock in (first, second, third):
        q.complete("alice", lock.key, lock.token, "resolved")
    with pytest.raises(errors.UsageError, match="nothing of yours to undo"):
        q.undo_complete("bob", first.key)
    # Someone (another program) changed it since: its outcome's value is not there any more.
    with wb.engine.begin() as conn:
        conn.execute(sa.text("UPDATE cases SET status = 'waiting_customer' WHERE case_id = :k"), {"k": second.key})
    with pytest.raises(errors.UsageError, match="changed since you completed it"):
        q.undo_complete("alice", second.key)
    Supervision(q).reopen("sue", third.key, "customer called")  # something happened to it through workbench
    with pytest.raises(errors.UsageError, match="last thing that happened to it was reopen by sue"):
        q.undo_complete("alice", third.key)
    native_env.age_audit(wb, "cases", first.key, 3)  # as if three seconds had passed
    with pytest.raises(errors.UsageError, match="too late to undo"):
        q.undo_complete("alice", first.key)
    assert native_env.row(wb, "cases", first.key)["status"] == "resolved"
    unset = native_env.open(native_env.demo_config({"cases": {"on_reopen": ()}})).queue("cases")
    with pytest.raises(errors.UsageError, match=r"on_reopen\]"):
        unset.undo_complete("alice", first.key)


@pytest.mark.parametrize(
    ("shape", "reason"),
    [
        ("lock_time", "no lock token column"),
        ("status", "no lock expiry column"),
        ("lock_table", "keeps its locks in a separate table"),
        ("claim_id", "keeps its locks in a separate table"),
    ],
)
def test_undo_is_refused_with_the_shapes_own_reason(tmp_path: Path, shape: str, reason: str) -> None:
    # The shapes whose row does not hold the whole lock: a clear refusal that names why, before the
    # database is asked anything (a lock table's shape once reached the UPDATE and a CompileError).
    bench = workflow_bench.open_bench("sqlite", shape, False, tmp_path, None)
    try:
        with pytest.raises(errors.UsageError, match=f"undo is not available on queue main: .*{reason}") as refused:
            bench.admin.queue("main").undo_complete("ann", 1)
        assert "a supervisor can reopen the item" in str(refused.value)
        if shape != "lock_table" and shape != "claim_id":
            assert "separate table" not in str(refused.value)
    finally:
        bench.close()
