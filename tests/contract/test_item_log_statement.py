"""An item's log (its notes and its history, what a window shows after each Next item and Save) in one statement
read on its own where the backend reads so (PostgreSQL, directly and through PgBouncer: no BEGIN, SET LOCAL and
COMMIT around it; issue 51), elsewhere two in one read transaction; the same log on every backend."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from tests import support
from workbench import services
from workbench.core import models
from workbench.services import door


def _statements(engine: sa.Engine) -> list[str]:
    """The statements `engine` runs from now on (not the transactions' own BEGIN, SET and COMMIT)."""
    seen: list[str] = []

    @sa.event.listens_for(engine, "before_cursor_execute")
    def _seen(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if statement.lstrip().lower().startswith(("select", "with")):
            seen.append(statement)

    return seen


def test_an_items_log_is_one_statement_where_reads_run_alone(native_env: support.Env) -> None:
    env = native_env
    wb = env.demo(case_rows=6)
    op = services.Operator(wb, "alice")
    claim = op.next_item("cases")
    op.item_log("cases", claim.lock.key)  # the statements built
    lock = op.save(claim.lock, {"resolution": "first"})
    op.add_note("cases", claim.lock.key, "called the customer")
    op.add_note("cases", claim.lock.key, "and again")
    other = op.next_item("cases")
    op.add_note("cases", other.lock.key, "another item's note")
    op.release(lock, "lunch", note="back at two")
    seen = _statements(door.engine(op.database).engine)
    log = op.item_log("cases", claim.lock.key)
    assert len(seen) == (1 if env.backend == "postgresql" else 2), seen
    q = wb.queue("cases")
    assert log.events == q.history(claim.lock.key) and log.notes == q.notes(claim.lock.key)
    assert [e.kind for e in log.events] == [
        models.EventKind.CLAIM,
        models.EventKind.SAVE,
        models.EventKind.RELEASE,
    ]
    assert log.events[1].detail == {"columns": ["resolution"], "changes": {"resolution": [None, "first"]}}
    assert [(n.author, n.kind, n.text) for n in log.notes] == [
        ("alice", None, "called the customer"),
        ("alice", None, "and again"),
        ("alice", "release", "back at two"),
    ]
    assert all(n.queue == "cases" and n.key == str(claim.lock.key) for n in log.notes)
    assert op.item_log("cases", other.lock.key).notes[0].text == "another item's note"
    empty = op.item_log("cases", 10**6)
    assert (empty.notes, empty.events) == ([], [])
