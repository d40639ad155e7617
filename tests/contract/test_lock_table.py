"""Shape 5: every lock in a separate lock table; the vendor's table is only read and written by the workflow."""

from __future__ import annotations

import collections
import datetime as dt
from typing import Any

import pytest
import sqlalchemy as sa

from tests import support
from tests.conftest import POOLED
from tests.contract import test_concurrency
from workbench.core import errors
from workbench.db import attach, tables
from workbench.db.claims import base
from workbench.db.claims import lock_table as lock_table_claim
from workbench.db.supervision import Supervision

CONFIG = support.sample_config("vendor-tickets")


def _tickets(env: support.Env, rows: int = 8, key_type: Any = sa.Integer, config: str = CONFIG) -> Any:
    md = sa.MetaData()
    table = sa.Table(
        "vendor_tickets",
        md,
        sa.Column("ticket_id", key_type, primary_key=True, autoincrement=False),
        sa.Column("subject", sa.String(200), nullable=False),
        sa.Column("priority", sa.Integer, nullable=False),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("opened_at", sa.DateTime, nullable=False),
        sa.Column("solved_by", sa.String(50)),
        sa.Column("solved_at", sa.DateTime),
    )
    md.create_all(env.engine)
    start = dt.datetime(2026, 1, 1)
    with env.engine.begin() as conn:
        conn.execute(
            sa.insert(table),
            [
                {
                    "ticket_id": _key(key_type, i),
                    "subject": f"Ticket {i}",
                    "priority": 1,
                    "state": "open",
                    "opened_at": start + dt.timedelta(minutes=i),
                }
                for i in range(1, rows + 1)
            ],
        )
    wb = env.open(env.load(config))
    wb.init()
    return wb


def _key(key_type: Any, i: int) -> Any:
    if key_type is sa.Integer:
        return i
    if key_type is sa.Date:
        return dt.date(2026, 1, 1) + dt.timedelta(days=i)
    return f"T-{i:05d}"


def _columns(env: support.Env) -> list[tuple[str, str]]:
    with env.engine.connect() as conn:
        return [(c["name"], str(c["type"])) for c in sa.inspect(conn).get_columns("vendor_tickets")]


def _lock_rows(wb: Any) -> list[dict[str, Any]]:
    locks = wb.queue("tickets").q.shape.locks
    with wb.engine.connect() as conn:
        return [dict(r) for r in conn.execute(sa.select(locks).order_by(locks.c.item_key)).mappings()]


def test_claim_save_complete_leave_the_vendor_table_as_it_is(native_env: support.Env) -> None:
    env = native_env
    wb = _tickets(env)
    before = _columns(env)
    q = wb.queue("tickets")
    a = q.claim_next("alice")[0]
    assert a.item["subject"].startswith("Ticket ") and a.lock.owner == "alice"
    assert [(r["queue"], r["item_key"], r["lock_user"]) for r in _lock_rows(wb)] == [
        ("tickets", str(a.lock.key), "alice")
    ]
    assert q.show(a.lock.key).state == "locked"
    q.save("alice", a.lock.key, a.lock.token, {"subject": "Printer on fire"})
    extended = q.extend("alice", a.lock.key, a.lock.token)
    assert extended.token == a.lock.token
    done = q.complete("alice", a.lock.key, a.lock.token, "solved")
    assert done.outcome == "solved" and _lock_rows(wb) == []
    row = env.row(wb, "tickets", a.lock.key)
    assert (row["subject"], row["state"], row["solved_by"]) == ("Printer on fire", "solved", "alice")
    assert row["solved_at"] is not None
    assert _columns(env) == before  # no lock column was ever added
    events = [e.kind.value for e in q.history(a.lock.key)]
    assert events == ["claim", "save", "extend", "complete"]
    with pytest.raises(errors.LockLost):  # the same lock, after Complete
        q.save("alice", a.lock.key, a.lock.token, {"subject": "again"})


def test_two_claimers_never_share_a_ticket_and_the_primary_key_refuses_a_second_lock(native_env: support.Env) -> None:
    env = native_env
    wb = _tickets(env, rows=6)
    q = wb.queue("tickets")
    got = [c.lock.key for user in ("a", "b", "c") for c in q.claim_next(user, 2)]
    assert sorted(got) == [1, 2, 3, 4, 5, 6]
    with pytest.raises(errors.NothingToClaim):
        q.claim_next("d")
    # Someone with a database login tries a second lock row by hand: the database refuses it.
    locks = q.q.shape.locks
    with pytest.raises(sa.exc.IntegrityError), env.engine.begin() as conn:
        conn.execute(
            sa.insert(locks).values(
                queue="tickets",
                item_key="1",
                lock_user="mallory",
                locked_at=dt.datetime(2026, 1, 1),
                expires_at=dt.datetime(2099, 1, 1),
                token="f" * 32,
            )
        )


def test_an_expired_lock_returns_the_ticket_and_the_stale_token_is_refused(env: support.Env) -> None:
    wb = _tickets(env, rows=3)
    q = wb.queue("tickets")
    a = q.claim_next("alice")[0]
    env.age_lock(wb, "tickets", a.lock.key, 16 * 60)
    assert q.show(a.lock.key).state == "expired"
    with pytest.raises(errors.LockLost) as lost:
        q.complete("alice", a.lock.key, a.lock.token)
    assert lost.value.cause == "expired"
    b = q.claim_next("bob")[0]
    assert b.lock.key == a.lock.key and b.lock.token != a.lock.token  # expired locks first
    with pytest.raises(errors.LockLost) as lost:
        q.complete("alice", a.lock.key, a.lock.token)
    assert lost.value.cause == "expired" and lost.value.holder == "bob"
    q.complete("bob", b.lock.key, b.lock.token)
    kinds = [e.kind.value for e in q.history(a.lock.key)]
    assert kinds == ["claim", "expire", "claim", "complete"]


def test_release_force_release_reassign_and_sweep(native_env: support.Env) -> None:
    env = native_env
    wb = _tickets(env, rows=4)
    q = wb.queue("tickets")
    a = q.claim_next("alice")[0]
    q.release("alice", a.lock.key, a.lock.token, "not mine")
    assert q.show(a.lock.key).state == "waiting" and _lock_rows(wb) == []
    b = q.claim_next("bob")[0]
    moved = Supervision(q).reassign("boss", b.lock.key, "carol", "holiday")
    assert moved.owner == "carol" and moved.token != b.lock.token
    with pytest.raises(errors.LockLost) as lost:
        q.save("bob", b.lock.key, b.lock.token, {"subject": "x"})
    assert lost.value.cause == "reassigned"
    q.save("carol", b.lock.key, moved.token, {"subject": "carol's"})
    removed = Supervision(q).force_release("boss", b.lock.key, "stuck")
    assert removed.owner == "carol" and q.show(b.lock.key).state == "waiting"
    c = q.claim_next("dave")[0]
    env.age_lock(wb, "tickets", c.lock.key, 3600)
    assert [lock.key for lock in Supervision(q).sweep("cron")] == [c.lock.key]
    assert _lock_rows(wb) == [] and q.show(c.lock.key).state == "waiting"


def test_lists_board_health_and_limits_read_the_lock_table(native_env: support.Env) -> None:
    env = native_env
    wb = _tickets(
        env,
        rows=5,
        config=CONFIG.replace('max_lock_duration = "1h"', 'max_lock_duration = "1h"\nmax_locks_per_user = 2'),
    )
    q = wb.queue("tickets")
    mine = [c.lock.key for c in q.claim_next("alice", 5)]
    assert len(mine) == 2  # the per-user limit counts the lock table's rows
    with pytest.raises(errors.NothingToClaim) as none:
        q.claim_next("alice")
    assert none.value.reason == "limit"
    assert sorted(lock.key for lock in q.mine("alice")) == sorted(mine)
    assert len(q.locks()) == 2
    board = Supervision(q).board()
    assert sorted(r.key for r in board) == sorted(mine) and all(r.owner == "alice" for r in board)
    health = Supervision(q).health()
    assert (health.waiting, health.locked, health.expired_locks) == (3, 2, 0)
    assert len(q.open_items()) == 3
    env.age_lock(wb, "tickets", mine[0], 3600)
    health = Supervision(q).health()
    assert (health.waiting, health.locked, health.expired_locks) == (4, 1, 1)  # waiting: free or expired
    live = next(lock for lock in q.mine("alice") if not lock.expired)
    q.complete("alice", live.key, live.token)
    stats = Supervision(q).operator_stats(dt.datetime(2000, 1, 1, tzinfo=dt.UTC))
    assert [(s.operator, s.completed) for s in stats] == [("alice", 1)]


def test_text_keys(native_env: support.Env) -> None:
    env = native_env
    wb = _tickets(env, rows=3, key_type=sa.String(20))
    q = wb.queue("tickets")
    a = q.claim_next("alice")[0]
    assert a.lock.key == "T-00001"
    q.complete("alice", a.lock.key, a.lock.token, "rejected")
    assert sorted(c.lock.key for c in q.claim_next("bob", 5)) == ["T-00002", "T-00003"]
    assert [r["item_key"] for r in _lock_rows(wb)] == ["T-00002", "T-00003"]


def test_each_claim_reads_its_own_candidates_of_one_queue(native_env: support.Env) -> None:
    """The claim keeps its candidates' statements per request shape (next, a named item, a filter): each
    takes what it asked for, whichever shape ran first."""
    env = native_env
    wb = _tickets(
        env,
        rows=8,
        config=CONFIG.replace('created = "opened_at"\n', 'created = "opened_at"\nfilter_by = ["priority"]\n'),
    )
    with env.engine.begin() as conn:
        conn.execute(sa.text("UPDATE vendor_tickets SET priority = 0 WHERE ticket_id = 7"))
    q = wb.queue("tickets")
    assert [c.lock.key for c in q.claim_next("alice")] == [1]
    assert q.claim("bob", 5).lock.key == 5
    assert [c.lock.key for c in q.claim_next("carol", where={"priority": 0})] == [7]
    assert [c.lock.key for c in q.claim_next("dave", 2)] == [2, 3]
    assert q.claim("erin", 8).lock.key == 8
    assert [(r["item_key"], r["lock_user"]) for r in _lock_rows(wb)] == [
        ("1", "alice"),
        ("2", "dave"),
        ("3", "dave"),
        ("5", "bob"),
        ("7", "carol"),
        ("8", "erin"),
    ]
    # Two shapes that differ in the named item alone (through the API a named claim also skips the cool-down).
    method = lock_table_claim.LockTableClaim()
    for request, keys in (
        (base.ClaimRequest(user="fred", use_cooldown=False), [4, 6]),
        (base.ClaimRequest(user="fred", key=6, use_cooldown=False), [6]),
    ):
        got = wb.db.read(lambda conn, request=request: method._candidates(conn, q.q, q.trail, request))
        assert [c["wb_ckey"] for c, _ in got] == keys


# on_claim writes the claimer and the clock; a second queue over the table keeps its locks in the same lock
# table, so that a claim locks the queue's row against it first (LockTableClaim._finish).
BUILT_ONCE = (
    CONFIG
    + """
[queues.tickets.on_claim]
solved_by = { user = true }
solved_at = { now = true }

[queues.twin]
table = "vendor_tickets"
key = "ticket_id"
order = ["opened_at"]
lock_duration = "15m"

[queues.twin.lock]
table = "workbench_locks"

[queues.twin.todo]
state = "open"

[queues.twin.outcomes.solved]
set = { state = "solved" }
"""
)


def claims_statements(wb: Any, queue: str, users: tuple[str, ...], *, expired: bool = False) -> list[list[Any]]:
    """What each of `users`' claims through the portable lock-table claim sends (its candidates' reads, then
    its take), one after the other, each taking the first candidate (one of the expired locks, when
    `expired`): the statements, not their text."""
    q = wb.queue(queue)
    sent: list[list[Any]] = []

    def seen(conn: Any, clause: Any, *args: Any) -> None:
        if isinstance(clause, sa.sql.ClauseElement):
            sent[-1].append(clause)

    method = lock_table_claim.LockTableClaim()
    sa.event.listen(wb.engine, "before_execute", seen)
    try:
        for user in users:
            request = base.ClaimRequest(user=user)
            sent.append([])
            candidates = wb.db.read(lambda conn, request=request: method._candidates(conn, q.q, q.trail, request))
            assert (candidates[0][0]["wb_prev_owner"] is not None) == expired
            claimed = wb.db.write(lambda conn, r=request, c=candidates[0][0]: method._take(conn, q.q, q.trail, r, c))
            assert claimed is not None and claimed.row["wb_user"] == user
    finally:
        sa.event.remove(wb.engine, "before_execute", seen)
    return sent


def assert_built_once(sent: list[list[Any]]) -> None:
    """Every claim of `sent` (claims_statements) ran the very statements the first one ran."""
    first, *rest = sent
    for other in rest:
        assert len(other) == len(first), [type(s).__name__ for s in other]
        rebuilt = [one for one, two in zip(first, other, strict=True) if one is not two]
        assert not rebuilt, f"built again for another claim: {rebuilt}"


def test_every_claim_runs_the_statements_built_once_for_the_queue(native_env: support.Env) -> None:
    """Each claim's statements are built once per queue, each claim's values bound when they run: the lock
    row's INSERT (BoundQueue.lock_insert), the take-over of an expired lock (_retake), the queue row's lock
    against a neighbour, the on_claim write with the claimer and the clock, the read-back (_after_lock) and
    the audit rows' insert. Building them per claim (statement and cache key) was much of a claimer's CPU."""
    env = native_env
    wb = _tickets(env, rows=6, config=BUILT_ONCE)
    q = wb.queue("tickets")
    locks = q.q.shape.locks
    assert q.q.shape.neighbours == ("twin",)
    free = claims_statements(wb, "tickets", ("alice", "bob"))
    assert_built_once(free)
    assert [type(s).__name__ for s in free[0]].count("Update") == 1  # on_claim
    assert sum(isinstance(s, sa.Insert) and s.table is locks for s in free[0]) == 1
    assert [(r["item_key"], r["lock_user"]) for r in _lock_rows(wb)] == [("1", "alice"), ("2", "bob")]
    for key, user in ((1, "alice"), (2, "bob")):
        row = env.row(wb, "tickets", key)
        assert row["solved_by"] == user and row["solved_at"] is not None  # on_claim, each its own claimer
    # A second claim of a locked item finds its key taken, through the same statement.
    method, request = lock_table_claim.LockTableClaim(), base.ClaimRequest(user="carol")
    cand = {"wb_ckey": 1, "wb_prev_owner": None, "wb_prev_token": None, "wb_prev_time": None}
    lost: list[Any] = []

    def inserts(conn: Any, clause: Any, *args: Any) -> None:
        if isinstance(clause, sa.Insert) and clause.table is locks:
            lost.append(clause)

    sa.event.listen(wb.engine, "before_execute", inserts)
    assert wb.db.write(lambda conn: method._take(conn, q.q, q.trail, request, cand)) is None
    sa.event.remove(wb.engine, "before_execute", inserts)
    assert lost == [q.q.lock_insert.insert] and len(_lock_rows(wb)) == 2
    # Expired locks are taken over by one statement too, under each one's old token.
    for key in (1, 2):
        env.age_lock(wb, "tickets", key, 16 * 60)
    expired = claims_statements(wb, "tickets", ("dave", "erin"), expired=True)
    assert_built_once(expired)
    assert sum(isinstance(s, sa.Update) and s.table is locks for s in expired[0]) == 1
    assert [(r["item_key"], r["lock_user"]) for r in _lock_rows(wb)] == [("1", "dave"), ("2", "erin")]
    assert [e.kind.value for e in q.history(1)] == ["claim", "expire", "claim"]


def test_a_ticket_completed_between_reading_and_locking_is_not_claimed(native_env: support.Env) -> None:
    env = native_env
    wb = _tickets(env, rows=1)
    q = wb.queue("tickets")
    method = lock_table_claim.LockTableClaim()
    request = base.ClaimRequest(user="alice")
    candidates = wb.db.read(lambda conn: method._candidates(conn, q.q, q.trail, request))
    assert [c["wb_ckey"] for c, _ in candidates] == [1]
    with env.engine.begin() as conn:  # another program finishes the ticket meanwhile
        conn.execute(sa.text("UPDATE vendor_tickets SET state = 'solved'"))
    with pytest.raises(lock_table_claim.NotWaiting):
        wb.db.write(lambda conn: method._take(conn, q.q, q.trail, request, candidates[0][0]))
    assert _lock_rows(wb) == []  # the lock row went with the rolled-back transaction


def test_attach_changes_nothing_and_suggests_the_waiting_index(native_env: support.Env, capsys: Any) -> None:
    env = native_env
    _tickets(env)
    before = _columns(env)
    config = env.write_config(CONFIG)
    code, out, err = support.run_cli(capsys, "--config", config, "attach", "tickets", "--apply")
    assert code == 0, err
    assert "changes nothing" in err and "suggested, not applied" in out
    assert "wb_tickets_waiting" in out
    assert _columns(env) == before
    with env.engine.connect() as conn:
        assert not any(ix["name"] == "wb_tickets_waiting" for ix in sa.inspect(conn).get_indexes("vendor_tickets"))
        plan = attach.plan(conn, env.load(CONFIG).queues["tickets"], "t.toml")
    assert plan.empty and len(plan.suggested) == 1
    # Once the owner created it, nothing more is suggested.
    with env.engine.begin() as conn:
        plan.suggested[0].create(conn)
    with env.engine.connect() as conn:
        again = attach.plan(conn, env.load(CONFIG).queues["tickets"], "t.toml")
    assert again.suggested == [] and again.empty


def test_config_errors_name_the_key_and_the_fix(native_env: support.Env) -> None:
    env = native_env
    with pytest.raises(errors.ConfigError) as bad:
        env.load(CONFIG.replace('table = "workbench_locks"', 'table = "workbench_locks"\nuser = "owner"'))
    assert "queues.tickets.lock.user" in str(bad.value) and "remove user" in str(bad.value)
    with pytest.raises(errors.ConfigError) as bad:
        env.load(CONFIG.replace('table = "workbench_locks"', 'table = "locks; drop table x"'))
    assert "queues.tickets.lock.table" in str(bad.value)
    wb = _tickets(env, rows=1, key_type=sa.Date)
    with pytest.raises(errors.ConfigError) as bad:
        wb.queue("tickets")
    assert "text or whole-number key" in str(bad.value) and "lock.table" in str(bad.value)


def test_a_lock_table_of_its_own_name_is_made_by_init(native_env: support.Env) -> None:
    env = native_env
    wb = _tickets(env, rows=2, config=CONFIG.replace('table = "workbench_locks"', 'table = "ticket_locks"'))
    q = wb.queue("tickets")
    a = q.claim_next("alice")[0]
    with env.engine.connect() as conn:
        assert conn.execute(sa.text("SELECT lock_user FROM ticket_locks")).scalar() == "alice"
        assert conn.execute(sa.select(sa.func.count()).select_from(sa.table(tables.LOCKS_TABLE))).scalar() == 0
    q.complete("alice", a.lock.key, a.lock.token)


def test_queues_of_both_shapes_share_one_database(native_env: support.Env) -> None:
    env = native_env
    wb = env.demo(case_rows=4, import_rows=2)
    _tickets(env, rows=3)
    both = env.open(env.load(CONFIG))
    both_q = both.queue("tickets")
    cases = wb.queue("cases")
    t = both_q.claim_next("alice")[0]
    c = cases.claim_next("alice")[0]
    both_q.complete("alice", t.lock.key, t.lock.token)
    cases.release("alice", c.lock.key, c.lock.token)
    assert env.row(wb, "cases", c.lock.key)["wb_locked_by"] is None


@pytest.mark.slow
# MariaDB over ODBC is the same server with another driver (the drivers are compared in test_concurrency):
# 50 s of CI time for no other lock.
@pytest.mark.parametrize("backend", ["sqlite", "postgresql", POOLED, "mariadb"])
def test_processes_drain_a_lock_table_queue_without_sharing_an_item(native_env: support.Env) -> None:
    env = native_env
    rows = 400  # 8 workers contend just as much; 600 cost CI ~30 s more, 1,000 ~70 s, 2,000 ~2.5 minutes
    wb = _tickets(env, rows=rows)
    text = CONFIG.replace("[queues.tickets]", "[queues.cases]").replace("queues.tickets.", "queues.cases.")
    config = env.write_config(text)
    results = test_concurrency._run_workers(env, config, 1)
    keys = collections.Counter(key for r in results for key, _ in r["done"])
    assert len(keys) == rows, f"{rows - len(keys)} rows were never completed"
    assert max(keys.values()) == 1, f"double assignments: {[k for k, n in keys.items() if n > 1][:10]}"
    assert len([r for r in results if r["done"]]) >= 2, "only one worker did any work"
    with env.engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM vendor_tickets WHERE state = 'open'")).scalar() == 0
    assert _lock_rows(wb) == []


def test_postgresql_claims_in_one_statement_and_passes_over_an_item_being_claimed(native_env: support.Env) -> None:
    env = native_env
    wb = _tickets(env, rows=3)
    q = wb.queue("tickets")
    if env.backend != "postgresql":
        assert type(q.method) is lock_table_claim.LockTableClaim  # the portable lock-table claim
        return
    from workbench.db.claims import postgresql as pg_claims

    assert type(q.method) is pg_claims.LockTableSkipLocked
    # Another claimer's statement is at ticket 1 (its advisory lock taken, its lock row not yet
    # committed): this claim takes ticket 2 at once instead of waiting or colliding.
    with env.engine.connect() as other, other.begin():
        other.execute(sa.text("SELECT pg_advisory_xact_lock(hashtext('tickets'), hashtext('1'))"))
        assert q.claim_next("bob")[0].lock.key == 2
    assert q.claim_next("carol")[0].lock.key == 1  # and ticket 1 once that claimer is gone
    assert [r["item_key"] for r in _lock_rows(wb)] == ["1", "2"]


ESCALATING = (
    CONFIG
    + """
[queues.tickets.on_release]
state = "open"
solved_by = "released"

[queues.tickets.on_escalate]
state = "escalated"

[queues.tickets.on_reopen]
state = "open"
"""
)


def test_a_run_out_lock_row_whose_ticket_left_the_work_goes_back_alone(native_env: support.Env) -> None:
    """A run-out lock row whose ticket left the queue's work (escalated by hand, or by another program) is
    given back by the sweep and by a supervisor's force-release of it (the table's expire_out_of_work),
    recorded as an expiry; the ticket is not written (the queue's on_release is not an escalated ticket's),
    and the supervisor's take then serves it: not stranded. A live one stays until it runs out."""
    env = native_env
    wb = _tickets(env, rows=4, config=ESCALATING)
    q = wb.queue("tickets")
    swept, freed, live = (q.claim_next(user)[0].lock for user in ("alice", "bob", "carol"))
    env.age_lock(wb, "tickets", swept.key, 3600)
    vendor = sa.Table("vendor_tickets", sa.MetaData(), autoload_with=wb.engine)
    with wb.engine.begin() as conn:  # the owner escalates them by hand, their lock rows left
        conn.execute(
            sa.update(vendor)
            .where(vendor.c.ticket_id.in_([swept.key, freed.key, live.key]))
            .values(state="escalated", solved_by="by hand")
        )
    before = {lock.key: env.row(wb, "tickets", lock.key) for lock in (swept, freed, live)}
    sup = Supervision(q)
    assert [lock.key for lock in sup.sweep("cron")] == [swept.key]
    env.age_lock(wb, "tickets", freed.key, 3600)  # run out since the sweep: a supervisor sees it on the board
    assert freed.key in [row.key for row in sup.board()]
    assert sup.force_release("boss", freed.key, "stuck").owner == "bob"
    with pytest.raises(errors.LockLost):  # live: its holder's still, though nothing under it may be done
        sup.force_release("boss", live.key, "stuck")
    assert [row["item_key"] for row in _lock_rows(wb)] == [str(live.key)]
    assert {lock.key: env.row(wb, "tickets", lock.key) for lock in (swept, freed, live)} == before
    for lock, actor, noticed in ((swept, "cron", "sweep"), (freed, "boss", "force_release")):
        expired = q.history(lock.key)[-1]
        assert (expired.kind.value, expired.actor, expired.owner) == ("expire", actor, lock.owner)
        assert expired.detail["noticed_by"] == noticed, expired.detail
    taken = sup.take("boss", swept.key)
    assert taken.lock.owner == "boss" and env.row(wb, "tickets", swept.key)["state"] == "open"
