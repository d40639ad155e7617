"""The change feed (issue 51): what the audit trail recorded about a user's items since they last looked,
on every database, each row delivered once, a row whose transaction commits late included."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pytest
import sqlalchemy as sa

from tests import support
from workbench import services
from workbench.core import models
from workbench.db import feed, tables


def _event(id_: int) -> models.Event:
    return models.Event(id_, "cases", "1", models.EventKind.SAVE, "alice", "alice", None, dt.datetime(2026, 1, 1))


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_cursor_delivers_each_row_once_and_moves_its_floor_after_the_lag() -> None:
    clock = _Clock()
    cursor = feed.Cursor(10, lag=5.0, clock=clock)
    assert [e.id for e in cursor.take([_event(11), _event(13)])] == [11, 13]
    clock.now = 1.0
    # 12 committed late: read again from the floor, only the new row comes out.
    assert [e.id for e in cursor.take([_event(11), _event(12), _event(13)])] == [12]
    assert cursor.floor == 10  # nothing is older than the lag yet
    clock.now = 6.0
    assert cursor.take([_event(11), _event(12), _event(13)]) == []
    assert cursor.floor == 13  # what was seen at 1.0 is older than the lag now
    assert [e.id for e in cursor.take([_event(14)])] == [14]


def test_a_look_asks_for_the_rows_past_the_newest_and_the_gaps_below_it() -> None:
    """Not the rows of the whole lag again (at 1,000 seats the relay's look re-read some 300 rows twice a
    second): those past the newest id seen, and the ids below it not seen yet."""
    clock = _Clock()
    cursor = feed.Cursor(10, lag=5.0, clock=clock)
    assert cursor.bounds() == (10, [])
    cursor.take([_event(11), _event(13), _event(16)])
    assert cursor.bounds() == (16, [12, 14, 15])
    clock.now = 1.0
    assert [e.id for e in cursor.take([_event(14), _event(17)])] == [14, 17]  # 14 committed late
    assert cursor.bounds() == (17, [12, 15])
    clock.now = 6.0
    cursor.take([])
    assert cursor.floor == 17 and cursor.bounds() == (17, [])  # what was still missing at 1.0 is older than the lag
    cursor.take([_event(17 + feed.GAPS + 2)])
    assert cursor.bounds() == (17, [])  # more gaps than it looks for one by one: the range past the floor again


def test_a_full_page_does_not_hold_the_cursor_back() -> None:
    clock = _Clock()
    cursor = feed.Cursor(0, lag=5.0, clock=clock)
    page = [_event(i) for i in range(1, feed.PAGE + 1)]
    assert len(cursor.take(page)) == feed.PAGE
    assert cursor.floor == feed.PAGE  # the next look reads past the page, not the same page again


def test_each_user_hears_of_their_own_items(native_env: support.Env) -> None:
    _each_hears_their_own(native_env)


def test_the_feed_through_pgbouncer(pooled_env: support.Env) -> None:
    """A transaction pooler carries no LISTEN; the feed is plain reads, so it goes through."""
    _each_hears_their_own(pooled_env)


def _each_hears_their_own(env: support.Env) -> None:
    wb = env.demo(case_rows=5)
    alice, bob = services.Operator(wb, "alice"), services.Operator(wb, "bob")
    assert alice.changes() == [] and bob.changes() == []  # the first look marks where each starts
    claim = alice.next_item("cases")
    wb.supervision("cases").force_release("sue", claim.lock.key, "customer escalated")
    seen = alice.changes()
    assert [(e.kind, e.actor, e.owner) for e in seen] == [
        (models.EventKind.CLAIM, "alice", "alice"),
        (models.EventKind.FORCE_RELEASE, "sue", "alice"),
    ]
    assert bob.changes() == []  # not his
    assert alice.changes() == []  # delivered once
    again = alice.next_item("cases")
    wb.supervision("cases").reassign("sue", again.lock.key, "bob", "bob knows this customer")
    handed = bob.changes()
    assert [(e.kind, e.key, e.actor, e.owner) for e in handed] == [
        (models.EventKind.CLAIM, str(again.lock.key), "sue", "bob")
    ]
    assert models.EventKind.REASSIGN in {e.kind for e in alice.changes()}


@pytest.mark.parametrize("backend", ["postgresql", "mariadb"], indirect=True)
def test_a_row_committed_after_a_later_one_is_still_delivered(native_env: support.Env) -> None:
    """Ids are taken at insert, not at commit: the feed must not step past a row still being written."""
    wb = native_env.demo(case_rows=5)
    alice = services.Operator(wb, "alice")
    alice.changes()
    audit = wb.audit_table
    row: dict[str, Any] = {"queue": "cases", "event": "save", "actor": "alice", "owner": "alice", "at": sa.func.now()}
    with wb.engine.connect() as slow:
        slow_tx = slow.begin()
        slow.execute(sa.insert(audit).values({**row, "item_key": "1"}))  # its id is taken now, its commit comes later
        with wb.engine.begin() as fast:
            fast.execute(sa.insert(audit).values({**row, "item_key": "2"}))
        assert [e.key for e in alice.changes()] == ["2"]
        slow_tx.commit()
    assert [e.key for e in alice.changes()] == ["1"]
    assert alice.changes() == []


def test_the_feed_table_has_its_index(native_env: support.Env) -> None:
    """Every window looks every second: by owner and id on every database (migration 13)."""
    wb = native_env.demo(case_rows=5)
    audit = wb.audit_table
    with wb.engine.connect() as conn:
        found = {ix["name"]: ix["column_names"] for ix in sa.inspect(conn).get_indexes(audit.name, schema=audit.schema)}
    assert found[tables.AUDIT_OWNER_INDEX] == ["owner", "id"]


@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_a_look_reads_the_users_index_entries_not_the_trail(native_env: support.Env) -> None:
    """On PostgreSQL `id` is not the audit trail's key: without the owner index each look (every window,
    every second) read the whole trail. With 20,000 rows of others' work, the plan is the index's."""
    wb = native_env.demo(case_rows=5)
    audit = wb.audit_table
    with wb.engine.begin() as conn:
        conn.execute(
            sa.insert(audit).from_select(
                ["queue", "item_key", "event", "actor", "owner", "at"],
                sa.select(
                    sa.literal("cases"),
                    sa.cast(sa.column("g"), sa.String),
                    sa.literal("save"),
                    sa.literal("op") + sa.cast(sa.column("g") % 500, sa.String),
                    sa.literal("op") + sa.cast(sa.column("g") % 500, sa.String),
                    sa.func.now(),
                ).select_from(sa.func.generate_series(1, 20_000).alias("g")),
            )
        )
        conn.exec_driver_sql(f"ANALYZE {audit.name}")
        start = feed.latest_id(conn, audit, "alice")
        stmt = feed.look_statement(audit, queues=False, concerning=True).params(wb_after=start, wb_owner="alice")
        sql = str(stmt.compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True}))
        plan = "\n".join(row[0] for row in conn.exec_driver_sql(f"EXPLAIN {sql}"))
    assert "Seq Scan" not in plan and tables.AUDIT_OWNER_INDEX in plan, plan


@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_the_whole_feeds_look_reads_the_rows_past_its_id_not_the_trail(native_env: support.Env) -> None:
    """The relay's and the consoles' look (every row of the config's queues past an id, twice a second):
    with 20,000 rows, a few hundred of them newer than the statistics, of which the look wants the last
    30, it reads a few index and heap pages. Before (a BRIN index by id) the planner scanned the item key
    (queue, item_key, id) whole for the queues named, or read every block appended since the last
    VACUUM: 0.95 ms a look at 1,000 seats, growing with the trail."""
    wb = native_env.demo(case_rows=5)
    audit = wb.audit_table

    def add(conn: sa.Connection, rows: int) -> None:
        g = sa.column("g")
        owner = sa.literal("op") + sa.cast(g % 500, sa.String)
        conn.execute(
            sa.insert(audit).from_select(
                ["queue", "item_key", "event", "actor", "owner", "at"],
                sa.select(
                    sa.literal("cases"), sa.cast(g % 5000, sa.String), sa.literal("save"), owner, owner, sa.func.now()
                ).select_from(sa.func.generate_series(1, rows).alias("g")),
            )
        )

    with wb.engine.begin() as conn:
        add(conn, 20_000)
        conn.exec_driver_sql(f"ANALYZE {audit.name}")  # what autovacuum keeps; then rows it has not seen
        add(conn, 300)
        after = feed.latest_id(conn, audit) - 30
        stmt = feed.look_statement(audit, queues=True, concerning=False)
        stmt = stmt.params(wb_after=after, wb_queues=list(wb.config.queues))
        sql = str(stmt.compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True}))
        plan = "\n".join(row[0] for row in conn.exec_driver_sql(f"EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) {sql}"))
    executed = plan.split("Planning:")[0]  # the look's own pages, not the catalog's the planner read
    buffers = [int(n) for n in re.findall(r"Buffers: shared hit=(\d+)", executed)]
    assert tables.AUDIT_ID_INDEX in plan and "rows=30 " in plan, plan
    assert buffers and max(buffers) <= 20, plan


@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_the_whole_feed_starts_without_reading_the_trail(native_env: support.Env) -> None:
    """The console's and the relay's first look: `id` has no btree of its own on PostgreSQL, so max(id)
    read the whole trail; the sequence's last value is the same mark in one step."""
    wb = native_env.demo(case_rows=5)
    alice = services.Operator(wb, "alice")
    alice.complete(alice.next_item("cases").lock)
    audit = wb.audit_table
    with wb.engine.connect() as conn:
        sent: list[str] = []
        sa.event.listen(conn, "before_cursor_execute", lambda *args: sent.append(args[2].lower()))
        start = feed.latest_id(conn, audit)
        read = list(sent)
        newest = conn.execute(sa.select(sa.func.max(audit.c.id))).scalar()
    assert start == newest
    assert read and not any("max(" in statement for statement in read), read


def _shown(page: Any) -> list[tuple[Any, ...]]:
    return [(r.queue, str(r.key), r.owner, r.locked_at, r.extensions, r.last_activity) for r in page.rows]


def test_the_board_updated_from_the_feed_is_the_board_read_again(native_env: support.Env) -> None:
    """The console reads again only the items the feed names (a claim, a Save, an extension, a release, a
    Complete, a force-release, a reassign): what it then shows is what a whole reload shows."""
    wb = native_env.demo(case_rows=10)
    sue = services.Supervisor(wb, "sue")
    alice, bob = services.Operator(wb, "alice"), services.Operator(wb, "bob")
    first, second = alice.next_item("cases"), bob.next_item("cases")
    sue.changes()
    page = sue.board(["cases"])
    assert len(page.rows) == 2
    third = alice.next_item("cases")  # a new lock
    kept = alice.extend(first.lock)  # the first lock extended
    bob.release(second.lock, "not mine")  # a lock gone
    wb.supervision("cases").reassign("sue", third.lock.key, "bob", "bob knows this customer")
    events = sue.changes()
    assert {e.key for e in events} == {str(first.lock.key), str(second.lock.key), str(third.lock.key)}
    updated = sue.board_changed(page, events, ["cases"])
    assert _shown(updated) == _shown(sue.board(["cases"]))
    assert [(str(r.key), r.owner, r.extensions) for r in updated.rows] == [
        (str(first.lock.key), "alice", 1),
        (str(third.lock.key), "bob", 0),
    ]
    alice.complete(kept)
    assert _shown(sue.board_changed(updated, sue.changes(), ["cases"])) == _shown(sue.board(["cases"]))
    assert sue.board_changed(updated, [], ["cases"]) is updated  # nothing changed: nothing read


def test_a_look_keeps_the_users_rows_of_its_own_queues(native_env: support.Env) -> None:
    """The user's rows are read in every queue (the owner index alone serves the look) and those of queues
    this config does not name (another team's, in the same database) are left out."""
    wb = native_env.demo(case_rows=5)
    alice = services.Operator(wb, "alice")
    alice.changes()
    row: dict[str, Any] = {"event": "save", "actor": "alice", "owner": "alice", "at": sa.func.now()}
    with wb.engine.begin() as conn:
        conn.execute(sa.insert(wb.audit_table).values({**row, "queue": "elsewhere", "item_key": "7"}))
        conn.execute(sa.insert(wb.audit_table).values({**row, "queue": "cases", "item_key": "8"}))
    assert [(e.queue, e.key) for e in alice.changes()] == [("cases", "8")]
    assert alice.changes() == []


def test_migration_15_gives_an_older_trail_the_feeds_b_tree(native_env: support.Env) -> None:
    """A trail as version 14 left it (on PostgreSQL a BRIN index by id) gets the B-tree and loses the
    BRIN; elsewhere `id` is the key and the step changes nothing. The feed reads on after it."""
    wb = native_env.demo(case_rows=5)
    alice = services.Operator(wb, "alice")
    alice.changes()
    audit = wb.audit_table
    postgresql = wb.engine.dialect.name == "postgresql"

    def indexes() -> dict[str, Any]:
        with wb.engine.connect() as conn:
            return {ix["name"]: ix for ix in sa.inspect(conn).get_indexes(audit.name, schema=audit.schema)}

    old = sa.Table(audit.name, sa.MetaData(schema=audit.schema), sa.Column("id", sa.BigInteger))
    _, _, version = tables.build_metadata(audit.schema)
    with wb.engine.begin() as conn:
        if postgresql:
            conn.execute(sa.schema.DropIndex(sa.Index(tables.AUDIT_ID_INDEX, old.c.id)))
            conn.execute(sa.schema.CreateIndex(sa.Index(tables.AUDIT_BRIN_ID_INDEX, old.c.id, postgresql_using="brin")))
        conn.execute(sa.delete(version).where(version.c.version >= 15))
    assert (tables.AUDIT_BRIN_ID_INDEX in indexes()) is postgresql

    assert [m.version for m in wb.init()] == [15]
    assert wb.init() == []
    found = indexes()
    assert tables.AUDIT_BRIN_ID_INDEX not in found
    assert (tables.AUDIT_ID_INDEX in found) is postgresql
    if postgresql:
        assert found[tables.AUDIT_ID_INDEX]["column_names"] == ["id"]
        with wb.engine.connect() as conn:
            method = conn.execute(
                sa.text("SELECT am.amname FROM pg_class c JOIN pg_am am ON am.oid = c.relam WHERE c.relname = :n"),
                {"n": tables.AUDIT_ID_INDEX},
            ).scalar()
        assert method == "btree"
    claim = alice.next_item("cases")
    assert [(e.kind, str(e.key)) for e in alice.changes()] == [(models.EventKind.CLAIM, str(claim.lock.key))]


def test_the_next_look_reads_only_what_is_new(native_env: support.Env, monkeypatch: pytest.MonkeyPatch) -> None:
    """After a burst of 200 rows a look reads the one row that came since, not the burst again (every row of
    the lag's seconds was read at each look before), and a row committed late is still found."""
    wb = native_env.demo(case_rows=5)
    sue = services.Supervisor(wb, "sue")
    sue.changes()
    read: list[int] = []
    rows_after = feed.rows_after

    def counted(*args: Any, **kwargs: Any) -> list[models.Event]:
        rows = rows_after(*args, **kwargs)
        read.append(len(rows))
        return rows

    monkeypatch.setattr(feed, "rows_after", counted)
    at = dt.datetime(2026, 1, 1)
    row: dict[str, Any] = {"queue": "cases", "event": "save", "actor": "alice", "owner": "alice", "at": at}
    with wb.engine.begin() as conn:
        conn.execute(sa.insert(wb.audit_table), [{**row, "item_key": str(i)} for i in range(200)])
    assert len(sue.changes()) == 200
    with wb.engine.begin() as conn:
        conn.execute(sa.insert(wb.audit_table).values({**row, "item_key": "last"}))
    assert [e.key for e in sue.changes()] == ["last"]
    assert read == [200, 1]
