"""The supervisor console's figures on every backend: lock board, queue health, operator statistics,
throughput, handle times, and the `board`, `health` and `stats` commands."""

from __future__ import annotations

import csv
import dataclasses
import datetime as dt
import io
import json
import os
import time
from typing import Any

import pytest
import sqlalchemy as sa

from tests import support
from workbench.cli import main
from workbench.config import loader
from workbench.core import errors
from workbench.db import clock
from workbench.db.figures import common, hourly, operators
from workbench.db.supervision import Supervision

NO_LIMITS = {"cases": {"max_locks_per_user": 0, "release_cooldown_seconds": 0}}
TOLERANCE = 2.5  # seconds: statements between a time-travel step and the next action


def _demo(env: support.Env, **kwargs: Any) -> Any:
    return env.demo(queues=NO_LIMITS, **kwargs)


def _waiting_keys(wb: Any, n: int) -> list[int]:
    """The first `n` waiting, unlocked cases in key order."""
    t = wb.queue("cases").q.table
    with wb.engine.connect() as conn:
        return [
            k
            for (k,) in conn.execute(
                sa.select(t.c.case_id)
                .where(t.c.status.in_(("new", "open")), t.c.wb_locked_by.is_(None))
                .order_by(t.c.case_id)
                .limit(n)
            )
        ]


def _handle(env: support.Env, wb: Any, user: str, key: int, seconds: int) -> None:
    """`user` claims case `key` `seconds` ago (on the database clock) and completes it now."""
    q = wb.queue("cases")
    lock = q.claim(user, key).lock
    env.age_audit(wb, "cases", key, seconds)
    q.complete(user, key, lock.token)


def _away_from_the_hour() -> None:
    """Tests that bucket events by hour must not straddle an hour boundary of the clock."""
    now = dt.datetime.now(dt.UTC)
    into = now.minute * 60 + now.second  # seconds into the hour; the test needs some 15 s
    if into >= 3585 or into < 15:
        time.sleep((3615 - into) % 3600)


def _day_ago(q: Any) -> dt.datetime:
    return q.db_clock().now - dt.timedelta(days=1)


# -- operator statistics and handle times -------------------------------------------------------------


def test_operator_stats_median_p90_and_lost_locks(native_env: support.Env) -> None:
    env = native_env
    wb = _demo(env)
    q = wb.queue("cases")
    a1, a2, a3, b1, b2, r, x, f = _waiting_keys(wb, 8)
    for key, seconds in ((a1, 60), (a2, 600), (a3, 120)):
        _handle(env, wb, "ann", key, seconds)
    for key, seconds in ((b1, 30), (b2, 90)):
        _handle(env, wb, "bob", key, seconds)
    released = q.claim("bob", r).lock
    q.release("bob", r, released.token, "customer unreachable")
    q.claim("bob", x)
    env.age_lock(wb, "cases", x, 16 * 60)
    assert [lock.key for lock in Supervision(q).sweep("cron")] == [x]
    q.claim("bob", f)
    Supervision(q).force_release("sue", f, "bob went home")
    got = Supervision(q).operator_stats(_day_ago(q))
    assert [s.operator for s in got] == ["ann", "bob"]  # most completions first
    ann, bob = got
    assert (ann.completed, ann.releases, ann.expiries, ann.force_released) == (3, 0, 0, 0)
    assert ann.median_handle_seconds == pytest.approx(120, abs=TOLERANCE)
    assert ann.p90_handle_seconds == pytest.approx(600, abs=TOLERANCE)  # nearest rank: the 3rd of 3
    assert (bob.completed, bob.releases, bob.expiries, bob.force_released) == (2, 1, 1, 1)
    assert bob.median_handle_seconds == pytest.approx(60, abs=TOLERANCE)  # (30 + 90) / 2
    assert bob.p90_handle_seconds == pytest.approx(90, abs=TOLERANCE)
    # Sue only took a lock away: she is no operator of this period. The actor of a sweep neither.
    assert {s.operator for s in got} == {"ann", "bob"}
    assert sorted(Supervision(q).handle_times(_day_ago(q))) == pytest.approx([30, 60, 90, 120, 600], abs=TOLERANCE)
    # A period that ends before the work began holds nothing.
    assert Supervision(q).operator_stats(_day_ago(q), _day_ago(q) + dt.timedelta(hours=1)) == []


def test_handle_times_in_completion_order_and_the_period_bounds(native_env: support.Env) -> None:
    env = native_env
    wb = _demo(env)
    q = wb.queue("cases")
    early, late = _waiting_keys(wb, 2)
    _handle(env, wb, "ann", early, 300)
    env.age_audit(wb, "cases", early, 2 * 3600)  # claimed 2 h 5 min ago, completed 2 h ago
    _handle(env, wb, "ann", late, 45)
    now = q.db_clock().now
    assert Supervision(q).handle_times(now - dt.timedelta(days=1)) == pytest.approx([300, 45], abs=TOLERANCE)
    assert Supervision(q).handle_times(now - dt.timedelta(hours=1)) == pytest.approx([45], abs=TOLERANCE)
    assert Supervision(q).handle_times(now - dt.timedelta(days=1), now - dt.timedelta(hours=1)) == pytest.approx(
        [300], abs=TOLERANCE
    )
    # Naive times are on the queue's clock (UTC here), like aware ones.
    naive = (now - dt.timedelta(hours=1)).replace(tzinfo=None)
    assert Supervision(q).handle_times(naive) == pytest.approx([45], abs=TOLERANCE)


def test_reassigned_lock_counts_from_the_reassignment(native_env: support.Env) -> None:
    env = native_env
    wb = _demo(env)
    q = wb.queue("cases")
    (key,) = _waiting_keys(wb, 1)
    q.claim("ann", key)
    env.age_audit(wb, "cases", key, 500)
    moved = Supervision(q).reassign("sue", key, "bob", "ann is ill")
    env.age_audit(wb, "cases", key, 100)  # ann claimed 600 s ago, the reassignment was 100 s ago
    q.complete("bob", key, moved.token)
    got = Supervision(q).operator_stats(_day_ago(q))
    assert [(s.operator, s.completed) for s in got] == [("bob", 1)]
    assert got[0].median_handle_seconds == pytest.approx(100, abs=TOLERANCE)


def test_handle_time_of_a_lock_older_than_the_period(native_env: support.Env) -> None:
    env = native_env
    # No max_lock_duration: a lock may be extended for as long as someone works; its claim may be
    # long before the period, which holds only the completion.
    wb = env.demo(queues={"cases": {**NO_LIMITS["cases"], "max_lock_seconds": None}})
    q = wb.queue("cases")
    (key,) = _waiting_keys(wb, 1)
    _handle(env, wb, "ann", key, 9 * 3600)
    assert Supervision(q).handle_times(_day_ago(q)) == pytest.approx([9 * 3600], abs=TOLERANCE)
    assert Supervision(q).handle_times(q.db_clock().now - dt.timedelta(hours=1)) == pytest.approx(
        [9 * 3600], abs=TOLERANCE
    )


# -- the lock board ------------------------------------------------------------------------------------


def test_board_columns_follow_saves_and_extensions(native_env: support.Env) -> None:
    env = native_env
    wb = _demo(env)
    q = wb.queue("cases")
    a, b = _waiting_keys(wb, 2)
    lock = q.claim("ann", a).lock
    q.claim("bob", b)
    env.age_lock(wb, "cases", a, 600)
    env.age_audit(wb, "cases", a, 600)

    def row(key: int) -> Any:
        return next(r for r in Supervision(q).board() if r.key == key)

    first = row(a)
    assert (first.owner, first.extensions, first.expired) == ("ann", 0, False)
    assert first.age.total_seconds() == pytest.approx(600, abs=TOLERANCE)
    assert first.idle.total_seconds() == pytest.approx(600, abs=TOLERANCE)  # the claim is the last activity
    assert first.remaining.total_seconds() == pytest.approx(300, abs=TOLERANCE)
    q.save("ann", a, lock.token, {"resolution": "Asked for the log files"})
    saved = row(a)
    assert saved.idle.total_seconds() == pytest.approx(0, abs=TOLERANCE)
    assert saved.age.total_seconds() == pytest.approx(600, abs=TOLERANCE) and saved.extensions == 0
    env.age_audit(wb, "cases", a, 120)
    assert row(a).idle.total_seconds() == pytest.approx(120, abs=TOLERANCE)
    q.extend("ann", a, lock.token)
    env.age_lock(wb, "cases", a, 60)
    q.extend("ann", a, lock.token)
    extended = row(a)
    assert extended.extensions == 2 and extended.idle.total_seconds() == pytest.approx(0, abs=TOLERANCE)
    assert extended.remaining.total_seconds() == pytest.approx(15 * 60, abs=TOLERANCE)
    # Another item's events do not count for this one; a lock without saves is idle since its claim.
    other = row(b)
    assert other.extensions == 0 and other.last_activity >= other.locked_at


def test_board_reads_the_locked_rows_once(native_env: support.Env) -> None:
    """The board is one statement after the clock. On PostgreSQL its plan reads the locked rows
    once, each joined LATERAL to its audit aggregates; on MariaDB once too, each with a scalar
    subquery on its audit rows, and no derived table (the derived table of aggregates read the
    locked rows twice, and MariaDB filled a temporary table per lock: too slow for 10,000
    locks, see board_bench). SQLite keeps the derived table."""
    env = native_env
    wb = _demo(env)
    q = wb.queue("cases")
    for key in _waiting_keys(wb, 3):
        q.claim("ann", key)
    Supervision(q).board()  # first time only: the audit key's character set (MySQL/MariaDB)
    sent: list[tuple[str, Any]] = []

    def grab(conn, cursor, statement, parameters, context, many):
        return sent.append((statement, parameters))

    sa.event.listen(wb.engine, "before_cursor_execute", grab)
    try:
        rows = Supervision(q).board()
    finally:
        sa.event.remove(wb.engine, "before_cursor_execute", grab)
    assert len(rows) == 3 and all(r.last_activity >= r.locked_at and r.extensions == 0 for r in rows)
    queries = [(s, p) for s, p in sent if s.lstrip().upper().startswith("SELECT")]
    assert len(queries) == 2, [s[:80] for s, _ in queries]  # the clock, the board
    statement, parameters = queries[1]
    with wb.engine.connect() as conn:
        if env.backend == "postgresql":
            plan = conn.exec_driver_sql("EXPLAIN (FORMAT JSON) " + statement, parameters).scalar()

            def relations(node: dict[str, Any]) -> list[str]:
                children = (r for child in node.get("Plans", []) for r in relations(child))
                return [node.get("Relation Name", ""), *children]

            read = relations(plan[0]["Plan"])
        elif env.backend.startswith("mariadb"):
            read = [row.table for row in conn.exec_driver_sql("EXPLAIN " + statement, parameters)]
        else:
            return
    assert read.count("cases") == 1 and read.count("workbench_audit") == 1, read
    assert not any(name.startswith("<derived") for name in read), read


def test_board_shows_expired_locks_summaries_and_no_tokens(native_env: support.Env) -> None:
    env = native_env
    wb = _demo(env)
    q = wb.queue("cases")
    a, b = _waiting_keys(wb, 2)
    q.claim("ann", a)
    q.claim("bob", b)
    env.age_lock(wb, "cases", b, 16 * 60)
    env.age_audit(wb, "cases", b, 16 * 60)
    board = Supervision(q).board()
    assert [r.key for r in board] == [b, a]  # oldest lock first
    stale, live = board
    assert stale.expired and stale.remaining.total_seconds() == pytest.approx(-60, abs=TOLERANCE)
    assert not live.expired and live.db_now == stale.db_now  # one clock reading for the whole board
    item = env.row(wb, "cases", a)
    names = [c.name for c in q.q.list_columns]
    assert names and list(live.summary) == names
    assert live.summary == {n: item[n] for n in names}
    data = live.to_dict()
    assert "token" not in json.dumps(data, default=str) and item["wb_lock_token"] not in json.dumps(data, default=str)
    assert data["extensions"] == 0 and data["expired"] is False
    # The limit keeps the oldest locks; once the expired lock is taken over it is a live one.
    assert [r.key for r in Supervision(q).board(limit=1)] == [b]
    q.claim("carl", b)
    assert [(r.key, r.owner, r.expired) for r in Supervision(q).board()] == [(a, "ann", False), (b, "carl", False)]
    assert next(r for r in Supervision(q).board() if r.key == b).extensions == 0


def test_board_of_a_table_without_token_column_counts_extensions_across_tokens(native_env: support.Env) -> None:
    env = native_env
    md = sa.MetaData()
    table = sa.Table(
        "legacy_orders",
        md,
        sa.Column("order_no", sa.String(20), primary_key=True),
        sa.Column("customer", sa.String(100), nullable=False),
        sa.Column("processed", sa.Integer, nullable=False),
        sa.Column("lock_user", sa.String(50)),
        sa.Column("lock_time", sa.DateTime),
    )
    md.create_all(env.engine)
    with env.engine.begin() as conn:
        conn.execute(
            sa.insert(table), [{"order_no": f"SO-{i}", "customer": f"C{i}", "processed": 0} for i in range(1, 4)]
        )
    wb = env.open(env.load(support.sample_config("legacy-orders")))
    wb.init()
    q = wb.queue("orders")
    lock = q.claim_next("ann")[0].lock
    for _ in range(2):  # each extension moves the lock time, and with it the token
        env.age_lock(wb, "orders", lock.key, 60)
        lock = q.extend("ann", lock.key, q.mine("ann")[0].token)
    (row,) = Supervision(q).board()
    assert (row.key, row.owner, row.extensions) == (lock.key, "ann", 2)
    assert row.idle.total_seconds() == pytest.approx(0, abs=TOLERANCE)
    assert row.summary["customer"] == "C1" and "lock_user" not in row.summary


TICKETS = """
[database]
url = "{url}"

[queues.tickets]
table = "tickets"
key = "ref"
order = ["ref"]
lock_duration = "15m"
release_cooldown = "0s"
todo = { status = "open" }

[queues.tickets.outcomes.done]
set = { status = "done" }
"""


def test_board_of_a_table_with_a_text_key(native_env: support.Env) -> None:
    """A text key is matched with the audit trail's item_key: on a latin1-default MariaDB server a
    latin1 key against utf8mb4, also when the audit table is in another utf8mb4 collation than
    the server's default (as after an upgrade to a server with another default), where a key cast
    to the default collation cannot be compared with it."""
    env = native_env
    when = sa.DateTime().with_variant(sa.dialects.mysql.DATETIME(fsp=6), "mysql", "mariadb")
    md = sa.MetaData()
    table = sa.Table(
        "tickets",
        md,
        sa.Column("ref", sa.String(20), primary_key=True),
        sa.Column("subject", sa.String(100), nullable=False),
        sa.Column("status", sa.String(10), nullable=False),
        sa.Column("wb_locked_by", sa.String(128)),
        sa.Column("wb_locked_at", when),
        sa.Column("wb_lock_expires", when),
        sa.Column("wb_lock_token", sa.String(32)),
    )
    md.create_all(env.engine)
    with env.engine.begin() as conn:
        conn.execute(
            sa.insert(table), [{"ref": f"T-{i}", "subject": f"Ticket {i}", "status": "open"} for i in range(1, 4)]
        )
    wb = env.open(env.load(TICKETS))
    wb.init()
    if env.backend.startswith("mariadb"):
        with env.engine.begin() as conn:
            conn.exec_driver_sql(
                "ALTER TABLE workbench_audit CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"
            )
    q = wb.queue("tickets")
    lock = q.claim("ann", "T-2").lock
    q.extend("ann", "T-2", lock.token)
    q.claim("bob", "T-3")
    rows = {r.key: r for r in Supervision(q).board()}
    assert set(rows) == {"T-2", "T-3"}
    assert (rows["T-2"].owner, rows["T-2"].extensions) == ("ann", 1)
    assert rows["T-2"].last_activity > rows["T-2"].locked_at  # the extension, after the claim
    t3 = rows["T-3"]
    assert (t3.owner, t3.extensions, t3.summary) == ("bob", 0, {"subject": "Ticket 3", "status": "open"})
    assert [r.key for r in Supervision(q).board(limit=1)] == ["T-2"]


# -- queue health --------------------------------------------------------------------------------------


def _set_arrivals(wb: Any, oldest: int, hours: float) -> None:
    """Every case arrived `hours` ago on the database clock, case `oldest` three times as long ago."""
    t = wb.queue("cases").q.table
    with wb.engine.begin() as conn:
        conn.execute(sa.update(t).values(opened_at=clock.add_seconds(clock.db_now(), sa.literal(-int(hours * 3600)))))
        conn.execute(
            sa.update(t)
            .where(t.c.case_id == oldest)
            .values(opened_at=clock.add_seconds(clock.db_now(), sa.literal(-int(3 * hours * 3600))))
        )


def test_health_counts_and_todays_events(native_env: support.Env) -> None:
    env = native_env
    wb = _demo(env)
    q = wb.queue("cases")
    t = q.q.table
    with wb.engine.connect() as conn:
        statuses = [s for (s,) in conn.execute(sa.select(t.c.status))]
    waiting = sum(s in ("new", "open") for s in statuses)
    start = Supervision(q).health()
    assert (start.waiting, start.locked, start.expired_locks, start.completed_today) == (waiting, 0, 0, 0)
    assert start.release_reasons_today == [] and start.db_now.tzinfo is not None
    keys = _waiting_keys(wb, 8)
    locks = {k: q.claim("ann", k).lock for k in keys}
    for k in keys[:2]:
        q.complete("ann", k, locks[k].token)
    for k, reason in zip(keys[2:6], ["customer unreachable", "wrong queue", "", "customer unreachable"], strict=False):
        q.release("ann", k, locks[k].token, reason)
    env.age_lock(wb, "cases", keys[6], 16 * 60)  # keys[6] expired, keys[7] still held
    h = Supervision(q).health()
    # 2 completed, 4 released (back to waiting), 1 expired (waiting again), 1 held.
    assert (h.waiting, h.locked, h.expired_locks) == (waiting - 2 - 1, 1, 1)
    assert (h.completed_today, h.releases_today, h.expiries_today, h.force_releases_today) == (2, 4, 0, 0)
    assert h.release_reasons_today == [("customer unreachable", 2), ("(no reason)", 1), ("wrong queue", 1)]
    Supervision(q).sweep("cron")
    Supervision(q).force_release("sue", keys[7], "bob went home")
    h = Supervision(q).health()
    assert (h.waiting, h.locked, h.expired_locks) == (waiting - 2, 0, 0)
    assert (h.expiries_today, h.force_releases_today, h.releases_today) == (1, 1, 4)
    # Events before midnight (on the database clock) are not today's.
    for k in keys[:2]:
        env.age_audit(wb, "cases", k, 2 * 86400)
    assert Supervision(q).health().completed_today == 0


def test_health_oldest_waiting_item(native_env: support.Env) -> None:
    env = native_env
    wb = _demo(env)
    q = wb.queue("cases")
    assert q.q.created is not None and q.q.created.name == "opened_at"  # set in the demo config
    (oldest,) = _waiting_keys(wb, 1)
    _set_arrivals(wb, oldest, 1.0)
    assert Supervision(q).health().oldest_waiting_age_seconds == pytest.approx(3 * 3600, abs=TOLERANCE)
    lock = q.claim("ann", oldest).lock  # held: no longer waiting
    assert Supervision(q).health().oldest_waiting_age_seconds == pytest.approx(3600, abs=TOLERANCE)
    env.age_lock(wb, "cases", oldest, 16 * 60)  # its lock expired: waiting again
    assert Supervision(q).health().oldest_waiting_age_seconds == pytest.approx(3 * 3600, abs=TOLERANCE)
    q.claim("bob", oldest)
    with pytest.raises(errors.LockLost):
        q.complete("ann", oldest, lock.token)
    # A queue without `created` has no age to show.
    assert wb.supervision("imports").health().oldest_waiting_age_seconds is None


def test_created_is_checked_against_the_table(native_env: support.Env) -> None:
    env = native_env
    _demo(env)
    wrong = env.demo_config({"cases": {"created": "opend_at"}})
    with pytest.raises(
        errors.ConfigError,
        match=r"queues\.cases\.created: column 'opend_at' is not in table "
        r"cases; did you mean 'opened_at'\?",
    ):
        env.open(wrong).queue("cases")
    not_a_date = env.demo_config({"cases": {"created": "subject"}})
    with pytest.raises(
        errors.ConfigError,
        match=r"queues\.cases\.created: column 'subject' must be a date or "
        r"date-time column",
    ):
        env.open(not_a_date).queue("cases")
    dated = env.demo_config({"cases": {"created": None}, "imports": {"created": "invoice_date"}})
    wb = env.open(dated)
    assert wb.supervision("cases").health().oldest_waiting_age_seconds is None
    assert wb.supervision("imports").health().oldest_waiting_age_seconds > 0  # a DATE column: its midnight


def test_attach_puts_created_in_the_claim_index(native_env: support.Env) -> None:
    from workbench import demo
    from workbench.db import attach

    env = native_env
    config = env.demo_config({"imports": {"created": "invoice_date"}})
    wb = env.open(config)
    demo.populate(wb.engine, cases=5, imports=20)
    wb.init()
    with wb.engine.begin() as conn:
        plans = {name: attach.plan(conn, config.queues[name], config.path) for name in ("cases", "imports")}
        claim = {name: next(ix for ix in plan.indexes if ix.name == f"wb_{name}_claim") for name, plan in plans.items()}
        # Not an order column: it ends the claim index, so that the index alone answers min(created).
        assert [c.name for c in claim["imports"].columns][-1] == "invoice_date"
        assert "invoice_date" in attach.render(conn, plans["imports"]).split("wb_imports_claim")[1].split(";")[0]
        # An order column already (cases: opened_at): the index stays as it was.
        assert [c.name for c in claim["cases"].columns].count("opened_at") == 1
        for plan in plans.values():
            attach.apply(conn, plan)
    assert wb.supervision("imports").health().oldest_waiting_age_seconds > 0


def test_created_in_the_config_file() -> None:
    text = support.sample_config("moderation").replace("{url}", "sqlite:///x.db")
    parsed = loader.parse(_toml(text.replace('key = "post_id"', 'key = "post_id"\ncreated = "reported_at"')), "t.toml")
    assert parsed.queues["moderation"].created == "reported_at"
    assert loader.parse(_toml(text), "t.toml").queues["moderation"].created is None
    with pytest.raises(
        errors.ConfigError,
        match=r"t\.toml: queues\.moderation\.created: expected a non-empty "
        "string",
    ):
        loader.parse(_toml(text.replace('key = "post_id"', 'key = "post_id"\ncreated = 3')), "t.toml")


def _toml(text: str) -> dict[str, Any]:
    import tomllib

    return tomllib.loads(text)


# -- throughput ----------------------------------------------------------------------------------------


def test_throughput_per_hour(native_env: support.Env) -> None:
    env = native_env
    _away_from_the_hour()
    wb = _demo(env)
    q = wb.queue("cases")
    two, one, now_a, now_b, held, moved = _waiting_keys(wb, 6)
    for key in (two, one, now_a, now_b):
        _handle(env, wb, "ann", key, 10)
    env.age_audit(wb, "cases", two, 2 * 3600)
    env.age_audit(wb, "cases", one, 3600)
    q.claim("bob", held)
    q.claim("ann", moved)
    Supervision(q).reassign("sue", moved, "bob", "ann left")  # the reassignment's claim is no new work
    reading = q.db_clock()
    hour = reading.now.replace(minute=0, second=0, microsecond=0)
    since = reading.now - dt.timedelta(hours=3)
    got = Supervision(q).throughput(since)
    assert [h.hour for h in got] == [hour - dt.timedelta(hours=n) for n in (3, 2, 1, 0)]
    assert all(h.hour.tzinfo is not None for h in got)
    assert [(h.completed, h.claimed) for h in got] == [(0, 0), (1, 1), (1, 1), (2, 4)]
    # until leaves out what came after it; every hour is there even without events.
    assert [
        (h.hour, h.completed, h.claimed) for h in Supervision(q).throughput(since, hour - dt.timedelta(hours=1))
    ] == [
        (hour - dt.timedelta(hours=3), 0, 0),
        (hour - dt.timedelta(hours=2), 1, 1),
    ]


# -- the database clock --------------------------------------------------------------------------------


def test_clock_on_a_local_clock_shifts_audit_times() -> None:
    """`database.clock = "local"`: naive server-local times, audit in UTC; today starts at local midnight."""
    q = _FakeQueue(local_clock=True)
    local_now = dt.datetime(2026, 3, 10, 0, 30)
    reading = common.clock_from_row(q, {"wb_now": local_now, "wb_utc": dt.datetime(2026, 3, 9, 22, 30, 0, 400)})
    assert reading.offset == dt.timedelta(hours=2) and reading.local
    assert reading.today_start == dt.datetime(2026, 3, 10, 0, 0)
    assert reading.to_utc(reading.today_start) == dt.datetime(2026, 3, 9, 22, 0)
    assert reading.from_utc(dt.datetime(2026, 3, 9, 23, 15)) == dt.datetime(2026, 3, 10, 1, 15)
    aware = dt.datetime(2026, 3, 10, 1, 0, tzinfo=dt.timezone(dt.timedelta(hours=5)))
    assert reading.to_utc(aware) == dt.datetime(2026, 3, 9, 20, 0)
    utc = common.clock_from_row(
        _FakeQueue(local_clock=False),
        {"wb_now": dt.datetime(2026, 3, 9, 22, 30), "wb_utc": dt.datetime(2026, 3, 9, 22, 30)},
    )
    assert utc.now.tzinfo is dt.UTC and utc.today_start == dt.datetime(2026, 3, 9, tzinfo=dt.UTC)
    assert utc.to_utc(dt.datetime(2026, 3, 9, 1, 0)) == dt.datetime(2026, 3, 9, 1, 0)


def test_local_clock_end_to_end(tmp_path: Any) -> None:
    """`database.clock = "local"` on a server 5 h 30 min east of UTC: lock times are local, the audit
    trail UTC; the figures must line the two up (hours of the local clock, today from local midnight)."""
    from workbench import demo

    old = os.environ.get("TZ")
    os.environ["TZ"] = "Asia/Kolkata"  # SQLite's 'localtime' follows the process's zone
    time.tzset()
    env = support.Env("sqlite", "native", f"sqlite:///{tmp_path / 'local.db'}", tmp_path)
    try:
        config = env.demo_config(NO_LIMITS)
        config = dataclasses.replace(config, database=dataclasses.replace(config.database, clock="local"))
        wb = env.open(config)
        demo.populate(wb.engine, cases=30, imports=5)
        wb.init()
        demo.attach_all(wb)
        q = wb.queue("cases")
        reading = q.db_clock()
        assert reading.local and reading.offset == dt.timedelta(hours=5, minutes=30)
        assert reading.now.tzinfo is None
        utc_now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
        assert abs((reading.now - utc_now - reading.offset).total_seconds()) < 5
        done, held = _waiting_keys(wb, 2)
        _handle(env, wb, "ann", done, 60)
        q.claim("bob", held)
        (row,) = Supervision(q).board()
        assert row.locked_at.tzinfo is None and row.idle.total_seconds() == pytest.approx(0, abs=TOLERANCE)
        assert Supervision(q).health().completed_today == 1
        assert Supervision(q).handle_times(reading.now - dt.timedelta(minutes=10)) == pytest.approx([60], abs=TOLERANCE)
        # A naive time is on the local clock: ten minutes ago there, not five hours from now.
        assert [s.operator for s in Supervision(q).operator_stats(reading.now - dt.timedelta(minutes=10))] == ["ann"]
        hours = Supervision(q).throughput(reading.now - dt.timedelta(minutes=90))
        assert hours[-1].hour == q.db_clock().now.replace(minute=0, second=0, microsecond=0)
        assert hours[-1].hour.tzinfo is None and sum(h.completed for h in hours) == 1
        assert sum(h.claimed for h in hours) == 2
    finally:
        env.close()
        if old is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = old
        time.tzset()


def test_hour_truncation_sql() -> None:
    from sqlalchemy.dialects import mssql, mysql

    column = sa.column("at", sa.DateTime())
    assert str(hourly._hour_of(column).compile(dialect=mssql.dialect())) == "CONVERT(VARCHAR(13), at, 120) + ':00:00'"
    assert "DATE_FORMAT(at, '%%Y-%%m-%%d %%H:00:00')" in str(
        hourly._hour_of(column).compile(dialect=mysql.dialect(paramstyle="format"))
    )


@dataclasses.dataclass
class _FakeQueue:
    local_clock: bool
    aware: bool = False


def test_nearest_rank_percentile() -> None:
    assert operators.nearest_rank([60, 600, 120], 90) == 600
    assert operators.nearest_rank([60, 600, 120], 50) == 120
    assert operators.nearest_rank(range(1, 11), 90) == 9
    assert operators.nearest_rank([], 90) is None


# -- the command line ----------------------------------------------------------------------------------


def _cli(capsys: pytest.CaptureFixture[str], *args: Any) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main.main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_board_health_stats(native_env: support.Env, capsys: pytest.CaptureFixture[str]) -> None:
    env = native_env
    wb = _demo(env)
    config = env.demo_config_file()
    q = wb.queue("cases")
    a, b, c = _waiting_keys(wb, 3)
    for key, seconds in ((a, 60), (b, 600)):
        _handle(env, wb, "ann", key, seconds)
    lock = q.claim("bob", c).lock
    q.extend("bob", c, lock.token)
    base = ("--config", config, "--user", "sue")

    code, out, _ = _cli(capsys, *base, "board", "cases")
    assert code == 0
    header, line = out.splitlines()
    assert header.split()[:7] == ["KEY", "OWNER", "AGE", "LEFT", "IDLE", "EXT", "DUE"]
    assert line.split()[:2] == [str(c), "bob"] and line.split()[5] == "1" and lock.token not in out
    assert line.split()[6] in ("overdue", "in")  # the demo's cases have a due column
    code, out, _ = _cli(capsys, *base, "board", "cases", "--csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and len(rows) == 1 and lock.token not in out
    first = rows[0]
    assert (first["key"], first["owner"], first["extensions"], first["expired"]) == (str(c), "bob", "1", "False")
    assert set(rows[0]) >= {"age_seconds", "remaining_seconds", "idle_seconds", "last_activity", "subject", "due"}
    due = env.row(wb, "cases", c)["due_at"]
    assert first["due"][:16] == due.isoformat()[:16]
    code, out, _ = _cli(capsys, *base, "board", "cases", "--json")
    assert code == 0 and json.loads(out)[0]["owner"] == "bob" and lock.token not in out
    assert json.loads(out)[0]["due"][:16] == due.isoformat()[:16]

    code, out, _ = _cli(capsys, *base, "health", "cases", "--json")
    health = json.loads(out)
    assert code == 0 and (health["completed_today"], health["locked"]) == (2, 1)
    code, out, _ = _cli(capsys, *base, "health", "cases")
    assert code == 0 and "locked" in out and "2 completed" in out

    code, out, _ = _cli(capsys, *base, "stats", "cases", "--since", "1d", "--csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and [(r["operator"], r["completed"]) for r in rows] == [("ann", "2")]
    assert float(rows[0]["median_handle_seconds"]) == pytest.approx(330, abs=TOLERANCE)
    assert float(rows[0]["p90_handle_seconds"]) == pytest.approx(600, abs=TOLERANCE)
    code, out, _ = _cli(capsys, *base, "stats", "cases", "--json", "--since", "8h")
    data = json.loads(out)
    assert code == 0 and data["operators"][0]["completed"] == 2 and sum(h["completed"] for h in data["hours"]) == 2
    code, out, _ = _cli(capsys, *base, "stats", "cases")  # since midnight on the database clock
    assert code == 0 and "2 completed by 1 operator(s)" in out and "ann" in out
    now = q.db_clock().now
    since, until = (now - dt.timedelta(hours=1)).isoformat(), (now + dt.timedelta(hours=1)).isoformat()
    code, out, _ = _cli(capsys, *base, "stats", "cases", "--since", since, "--until", until, "--json")
    assert code == 0 and json.loads(out)["operators"][0]["completed"] == 2
    code, out, _ = _cli(capsys, *base, "stats", "cases", "--since", since, "--until", "1m", "--json")
    assert code == 0 and json.loads(out)["operators"] == []  # the work was done in the last minute


def test_cli_exit_codes(native_env: support.Env, capsys: pytest.CaptureFixture[str]) -> None:
    env = native_env
    _demo(env)
    base = ("--config", env.demo_config_file(), "--user", "sue")
    assert _cli(capsys, *base, "board", "cases")[:2] == (0, "no locks\n")
    assert _cli(capsys, *base, "board", "nope")[0] == 2
    with pytest.raises(SystemExit) as info:  # argparse's usage error (argtypes.since)
        main.main([*map(str, base), "stats", "cases", "--since", "yesterday"])
    assert info.value.code == 2 and "argument --since: 'yesterday': write an ISO date" in capsys.readouterr().err
    code, _, err = _cli(capsys, *base, "stats", "cases", "--since", "1h", "--until", "2h")
    assert code == 2 and "must be after" in err
    code, out, _ = _cli(capsys, *base, "board", "cases", "--csv", "--json")
    assert code == 2 and json.loads(out)["error"]["exit_code"] == 2
    with pytest.raises(SystemExit) as info:
        main.main([*map(str, base), "board", "cases", "--limit", "0"])
    assert info.value.code == 2


def test_cli_database_unreachable(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "workbench.toml"
    config.write_text(
        support.sample_config("helpdesk").replace("{url}", f"sqlite:///{tmp_path / 'gone.db'}"), encoding="utf-8"
    )
    for command in ("board", "health", "stats"):
        code, _, err = _cli(capsys, "--config", config, command, "cases")
        assert code == 6, (command, err)


def test_the_board_command_says_when_it_lists_only_the_oldest(native_env: support.Env, capsys: Any) -> None:
    env = native_env
    wb = env.demo(case_rows=10, import_rows=1, queues={"cases": {"max_locks_per_user": 0}})
    wb.queue("cases").claim_next("ann", 3)
    config = env.demo_config_file()
    code, out, err = support.run_cli(capsys, "--config", config, "board", "cases", "--limit", "2", "--json")
    assert code == 0 and len(out) == 2 and "the oldest 2 of 3 locks" in err
    code, out, err = support.run_cli(capsys, "--config", config, "board", "cases", "--json")
    assert code == 0 and len(out) == 3 and err == ""
