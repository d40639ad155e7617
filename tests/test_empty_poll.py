"""Next item on an empty queue: why nothing was found is asked with statements built once per queue, and only
the questions that can be the answer (WorkQueue._why_nothing); workers and windows poll empty queues often."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa

from tests import support
from workbench.core import errors, problems
from workbench.db import backends, workqueue

QUEUES = ("cases", "imports", "imports_review")


def _empty_demo(env: support.Env) -> Any:
    """The demo with nothing waiting in any of its queues."""
    wb = env.demo(case_rows=2, import_rows=2)
    with wb.engine.begin() as conn:
        conn.exec_driver_sql("UPDATE cases SET status = 'resolved'")
        conn.exec_driver_sql("UPDATE import_rows SET check_status = 'verified'")
    return wb


class Watch:
    """What an empty claim_next of one queue executes once its claim found nothing: SQLAlchemy's statement
    objects, and the SQL the driver was sent."""

    def __init__(self, wb: Any, wq: workqueue.WorkQueue, monkeypatch: pytest.MonkeyPatch) -> None:
        self.wb, self.wq, self.watching = wb, wq, False
        self.executed: list[Any] = []
        self.sent: list[str] = []
        real = wq.method.claim_next

        def claim_next(*args: Any, **kwargs: Any) -> Any:
            found = real(*args, **kwargs)
            self.watching = True
            return found

        monkeypatch.setattr(wq.method, "claim_next", claim_next)
        sa.event.listen(wb.engine, "before_execute", self._executed)
        sa.event.listen(wb.engine, "before_cursor_execute", self._sent)

    def _executed(self, conn: Any, statement: Any, *args: Any) -> None:
        if self.watching and isinstance(statement, sa.sql.ClauseElement):
            self.executed.append(statement)

    def _sent(self, conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if self.watching:
            self.sent.append(statement)

    def poll(self) -> str:
        """One empty Next item; what it said."""
        self.executed, self.sent = [], []
        try:
            with pytest.raises(errors.NothingToClaim) as caught:
                self.wq.claim_next("ann")
        finally:
            self.watching = False
        return str(caught.value)


@pytest.fixture(params=QUEUES)
def watch(request: pytest.FixtureRequest, env: support.Env, monkeypatch: pytest.MonkeyPatch) -> Watch:
    """One queue of the demo with nothing waiting, watched."""
    wb = _empty_demo(env)
    return Watch(wb, wb.queue(request.param), monkeypatch)


def test_an_empty_poll_asks_with_statements_built_once(watch: Watch) -> None:
    said = watch.poll()
    assert said == problems.NOTHING_WAITING.format(watch.wq.name)
    first = watch.executed
    assert watch.poll() == said
    # The same statement objects: built once, the user bound as they run (SQLAlchemy's compiled cache then
    # finds them by the key it keeps on each, not by walking a statement built anew).
    assert len(watch.executed) == len(first)
    assert all(a is b for a, b in zip(first, watch.executed, strict=True))


def test_an_empty_poll_asks_only_what_can_be_the_answer(watch: Watch) -> None:
    watch.poll()
    watch.poll()
    wq, sent = watch.wq, watch.sent
    # One statement per question this queue and database can be answered by: the user's limit, their own work
    # waiting for review, items held by open transactions (only where the backend tells those apart).
    tells_held_open = type(watch.wb.db.backend).held_open is not backends.Backend.held_open
    held_open = tells_held_open and not wq.q.shape.separate_locks
    questions = bool(wq.config.max_locks_per_user) + (wq.trail.reviews is not None) + held_open
    asked = [s for s in sent if s.split()[0].upper() not in ("BEGIN", "SAVEPOINT", "RELEASE")]
    assert len(asked) == questions, sent
    if not questions:
        assert sent == []  # not even a transaction
