"""How a queue's writes run (db/enforcement.py) is decided once per queue, not asked of the database by
every operation: PostgreSQL under `workbench grants`, where the trusted claim and Complete are used."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from tests import support
from tests.test_permissions import Pg, pg  # noqa: F401  (the fixture: a demo database under `grants`)
from workbench.config import loader
from workbench.db import enforcement, service


def test_the_trusted_functions_are_asked_about_once_per_queue_however_many_operations(pg: Pg) -> None:
    wb = pg.open("ann")
    work = wb.queue("cases")
    asked: list[str] = []

    def seen(conn: Any, cursor: Any, statement: str, *rest: Any) -> None:
        if "to_regprocedure" in statement:  # pg_names._callable: is the function there, may this login call it?
            asked.append(statement)

    sa.event.listen(wb.engine, "before_cursor_execute", seen)
    # Next item and Complete by two outcomes, twice each, then a Complete followed by the next item.
    for outcome in ("resolved", "waiting", "resolved", "waiting"):
        lock = work.claim_next("ann")[0].lock
        assert work.complete("ann", lock.key, lock.token, outcome).outcome == outcome
    lock = work.claim_next("ann")[0].lock
    done = work.complete("ann", lock.key, lock.token, "resolved", then_next=True)
    assert done.next is not None and done.next.lock.owner == "ann"
    assert len(asked) == 2  # the trusted claim's and the trusted Complete's
    # One owner: the queue's guarded writes run by the ways its enforcement chose when it was bound, and
    # its claim method asks the same object.
    assert [type(way).__name__ for way in work.writer.ways] == ["TrustedComplete", "OneStatement", "TwoSteps"]
    assert work.enforcement is enforcement.of(wb.db, work.q, wb.config.database.workbench_schema)
    assert work.enforcement.trusted_next() == "ann" and work.enforcement.trusted_complete() == "ann"


def test_a_closed_database_goes_with_its_queues_enforcement(tmp_path: Path) -> None:
    """The Enforcement kept for a queue lives as long as its database, no longer: a process that opens
    databases one after the other (a window switching profiles, the tests' commands) keeps none of the
    closed ones, their engines and tables."""
    with service.Workbench.open(loader.load(support.sqlite_demo(tmp_path / "demo"))) as wb:
        work = wb.queue("cases")
        assert work.enforcement is enforcement.of(wb.db, work.q, wb.config.database.workbench_schema)
        gone = [weakref.ref(wb.db), weakref.ref(work.enforcement), weakref.ref(work.q)]
    del wb, work
    gc.collect()
    assert [ref() for ref in gone] == [None, None, None]
