"""Escalate (core/workflow.py, issue 47): an operator hands the item he holds to a supervisor with a
required reason; the queue's on_escalate values take it out of todo. The engine, on every backend."""

from __future__ import annotations

import re

import pytest

from tests import support
from workbench import demo
from workbench.core import errors, models, problems, workflow
from workbench.db import service

ESCALATE = """
[queues.cases.on_escalate]
status = "escalated"
"""


def _demo(env: support.Env, extra: str = ESCALATE, rows: int = 4) -> service.Workbench:
    """The demo, its cases with on_escalate (or `extra`), a few rows."""
    wb = env.open(env.load(demo.config_text("{url}") + extra))
    demo.populate(wb.engine, cases=rows, imports=1)
    wb.init()
    demo.attach_all(wb)
    return wb


def test_an_operator_hands_his_item_to_a_supervisor_with_a_reason(native_env: support.Env) -> None:
    wb = _demo(native_env)
    q = wb.queue("cases")
    lock = q.claim_next("alice")[0].lock
    q.escalate("alice", lock.key, lock.token, "  customer threatens legal action ")
    row = native_env.row(wb, "cases", lock.key)
    # The lock cleared (every lock column), on_escalate's values written.
    assert (row["wb_locked_by"], row["wb_locked_at"], row["wb_lock_expires"], row["wb_lock_token"]) == (None,) * 4
    assert row["status"] == "escalated"
    last = q.history(lock.key)[-1]
    said = "customer threatens legal action"
    assert (last.kind, last.actor, last.reason) == (models.EventKind.ESCALATE, "alice", said)
    # Out of todo: nobody is served it again, nor may pick it.
    with pytest.raises(errors.NothingToClaim):
        q.claim("bob", lock.key)
    served = {c.lock.key for c in q.claim_next("bob", count=10)}
    assert lock.key not in served
    # The same escalate again (a lost reply retried) stands as first made.
    q.escalate("alice", lock.key, lock.token, "customer threatens legal action")
    assert [e.kind for e in q.history(lock.key)].count(models.EventKind.ESCALATE) == 1


def test_escalate_is_refused_as_the_table_says(native_env: support.Env) -> None:
    wb = _demo(native_env)
    q = wb.queue("cases")
    lock = q.claim_next("alice")[0].lock
    # A reason is required (the table's Text.REQUIRED), said as for every transition that needs one.
    assert workflow.TRANSITIONS["escalate"].reason is workflow.Text.REQUIRED
    needed = "^" + re.escape(problems.REASON_NEEDED.format("escalate")) + "$"
    with pytest.raises(errors.UsageError, match=needed):
        q.escalate("alice", lock.key, lock.token, " ")
    # Only under one's own live lock (LockRule.OWN_LIVE_HERE): refused as a lost lock.
    with pytest.raises(workflow.TRANSITIONS["escalate"].refusal):
        q.escalate("bob", lock.key, lock.token, "not mine")
    assert native_env.row(wb, "cases", lock.key)["wb_locked_by"] == "alice"
    q.release("alice", lock.key, lock.token)
    with pytest.raises(errors.LockLost):
        q.escalate("alice", lock.key, lock.token, "too late")
    assert native_env.row(wb, "cases", lock.key)["status"] != "escalated"


def test_a_queue_without_on_escalate_refuses_escalate(native_env: support.Env) -> None:
    wb = _demo(native_env, extra="")
    q = wb.queue("cases")
    lock = q.claim_next("alice")[0].lock
    with pytest.raises(errors.UsageError, match=r"set \[queues\.cases\.on_escalate\]"):
        q.escalate("alice", lock.key, lock.token, "help")
    assert native_env.row(wb, "cases", lock.key)["wb_locked_by"] == "alice"


def test_on_escalate_must_take_the_item_out_of_todo(native_env: support.Env) -> None:
    with pytest.raises(errors.ConfigError, match=r"on_escalate.*served to operators again"):
        _demo(native_env, extra='[queues.cases.on_escalate]\nstatus = "open"\n').queue("cases")
