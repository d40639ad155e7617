"""Beside the old programs: an Access-style LockUser/LockTime program writing New York time, a batch job that
marks rows with its own UUID claim id, and a worker that sets status = 'processing', each following its own
protocol on the same tables as two workbench workers: no row held by two, none completed twice, none lost."""

from __future__ import annotations

import collections
import datetime as dt
import threading
import time
import uuid
import zoneinfo
from collections.abc import Callable
from typing import Any

import pytest
import sqlalchemy as sa

from tests import support
from tests.contract import test_claim_id, test_lock_clock, test_shapes
from workbench.core import errors

THREE = ["sqlite", "postgresql", "mariadb"]
SECONDS = 3.0  # per database: enough for a few hundred claims on each side
ORDERS, PAYMENTS = 60, 60
NEW_YORK = zoneinfo.ZoneInfo(test_lock_clock.NEW_YORK)
MAX_AGE = dt.timedelta(minutes=20)  # the old program's own limit: lock_duration = "20m" in legacy-orders


class Done:
    """Who completed what: every successful final write, by actor."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.by: dict[str, list[Any]] = collections.defaultdict(list)

    def add(self, who: str, key: Any) -> None:
        with self.lock:
            self.by[who].append(key)

    def counts(self) -> collections.Counter[Any]:
        return collections.Counter(key for keys in self.by.values() for key in keys)


def _retrying(step: Callable[[], Any]) -> Any:
    """A statement that SQLite's one writer or a deadlock turned away is tried again, as the old programs do."""
    for _ in range(50):
        try:
            return step()
        except sa.exc.OperationalError:
            time.sleep(0.01)
    return None


def _access_program(engine: sa.Engine, done: Done, stop: threading.Event) -> None:
    """LockUser = its user, LockTime = Now() on a New York PC; free when LockUser is empty or older than the
    maximum age; finishes under its own lock (user and time unchanged)."""
    t = sa.table(
        "legacy_orders",
        sa.column("order_no"),
        sa.column("processed"),
        sa.column("lock_user"),
        sa.column("lock_time", sa.DateTime),
    )
    while not stop.is_set():
        now = dt.datetime.now(NEW_YORK).replace(tzinfo=None, microsecond=0)
        free = sa.and_(t.c.processed == 0, sa.or_(t.c.lock_user.is_(None), t.c.lock_time <= now - MAX_AGE))

        def take(free: Any = free, now: dt.datetime = now) -> Any:
            with engine.begin() as conn:
                key = conn.execute(sa.select(t.c.order_no).where(free).order_by(t.c.order_no.desc()).limit(1)).scalar()
                if key is None:
                    return False
                mine = sa.update(t).where(t.c.order_no == key, free).values(lock_user="access", lock_time=now)
                return key if conn.execute(mine).rowcount == 1 else None

        key = _retrying(take)
        if key is False:
            return
        if key is None:
            continue
        time.sleep(0.002)  # the user looks at the order

        def finish(key: Any = key, now: dt.datetime = now) -> bool:
            with engine.begin() as conn:
                held = sa.and_(t.c.order_no == key, t.c.lock_user == "access", t.c.lock_time == now)
                stmt = sa.update(t).where(held).values(processed=1, lock_user=None, lock_time=None)
                return conn.execute(stmt).rowcount == 1

        finished = _retrying(finish)
        if finished:
            done.add("access", key)
        elif finished is False:  # its live lock (younger than its maximum age) was taken: held by two
            done.add("lost:access", key)


def _payments_program(engine: sa.Engine, done: Done, stop: threading.Event, who: str) -> None:
    """`batch`: marks a waiting row with its own UUID (process_uuid, status unchanged) and books it by the
    flag; `worker`: sets status = 'processing' on a waiting row, then 'processed'."""
    t = sa.table("payments", sa.column("payment_id"), sa.column("status"), sa.column("process_uuid", sa.Uuid()))
    waiting = sa.and_(t.c.status == "new", t.c.process_uuid.is_(None))
    while not stop.is_set():
        claim = uuid.uuid4()

        def take(claim: uuid.UUID = claim) -> Any:
            with engine.begin() as conn:
                key = conn.execute(
                    sa.select(t.c.payment_id).where(waiting).order_by(t.c.payment_id.desc()).limit(1)
                ).scalar()
                if key is None:
                    return False
                values = {"process_uuid": claim} if who == "batch" else {"status": "processing"}
                return (
                    key
                    if conn.execute(sa.update(t).where(t.c.payment_id == key, waiting).values(values)).rowcount == 1
                    else None
                )

        key = _retrying(take)
        if key is False:
            return
        if key is None:
            continue
        time.sleep(0.002)
        mine = (
            t.c.process_uuid == claim
            if who == "batch"
            else sa.and_(t.c.status == "processing", t.c.process_uuid.is_(None))
        )

        def finish(key: Any = key, mine: Any = mine) -> bool:
            with engine.begin() as conn:
                stmt = sa.update(t).where(t.c.payment_id == key, mine).values(status="processed")
                return conn.execute(stmt).rowcount == 1

        finished = _retrying(finish)
        if finished:
            done.add(who, key)
        elif finished is False:  # its claim id or its status was written over: held by two
            done.add(f"lost:{who}", key)


def _workbench_worker(wb: Any, queue: str, outcome: str | None, done: Done, stop: threading.Event, user: str) -> None:
    q = wb.queue(queue)
    while not stop.is_set():
        try:
            claimed = q.claim_next(user)
        except errors.NothingToClaim:
            return
        except errors.WorkbenchError:
            continue  # busy: try again
        lock = claimed[0].lock
        try:
            q.complete(user, lock.key, lock.token, outcome) if outcome else q.complete(user, lock.key, lock.token)
        except errors.LockLost:
            continue
        done.add(f"workbench-{queue}", lock.key)


@pytest.mark.parametrize("backend", THREE)
def test_old_programs_and_workbench_side_by_side(native_env: support.Env) -> None:
    env = native_env
    test_shapes._legacy(env, rows=ORDERS)
    test_claim_id._tables(env, rows=PAYMENTS)
    # Clocks skewed: the old program writes New York time, the database's clock is UTC; the order
    # _legacy left held by "legacyapp" in the server's UTC is freed first (it would be 4-5 h ahead).
    with env.engine.begin() as conn:
        conn.execute(sa.text("UPDATE legacy_orders SET lock_user = NULL, lock_time = NULL"))
    payments = "[queues.payments]" + support.sample_config("claim-ids").split("[queues.payments]", 1)[1]
    config = test_lock_clock._zoned(test_lock_clock.NEW_YORK) + "\n" + payments
    wb = env.open(env.load(config))
    done, stop = Done(), threading.Event()
    threads = [
        threading.Thread(target=_access_program, args=(env.engine, done, stop)),
        threading.Thread(target=_payments_program, args=(env.engine, done, stop, "batch")),
        threading.Thread(target=_payments_program, args=(env.engine, done, stop, "worker")),
        threading.Thread(target=_workbench_worker, args=(wb, "orders", None, done, stop, "ann")),
        threading.Thread(target=_workbench_worker, args=(wb, "payments", "processed", done, stop, "ben")),
    ]
    for thread in threads:
        thread.start()
    stop.wait(SECONDS)
    stop.set()
    for thread in threads:
        thread.join(60)
    taken = {who: keys for who, keys in done.by.items() if who.startswith("lost:")}
    assert taken == {}  # 0 held by both: no old program lost a live lock to workbench
    counts = done.counts()
    twice = [key for key, n in counts.items() if n > 1]
    assert twice == []  # 0 completed twice (and so 0 held by both to the end)
    with env.engine.connect() as conn:
        orders_done = conn.execute(sa.text("SELECT count(*) FROM legacy_orders WHERE processed = 1")).scalar()
        payments_done = conn.execute(sa.text("SELECT count(*) FROM payments WHERE status = 'processed'")).scalar()
    by = {who: len(keys) for who, keys in done.by.items()}
    # 0 lost: every row a program says it finished is finished, and nothing else is.
    assert orders_done == by.get("access", 0) + by.get("workbench-orders", 0), by
    assert payments_done == by.get("batch", 0) + by.get("worker", 0) + by.get("workbench-payments", 0), by
    assert by.get("workbench-orders", 0) > 0 and by.get("workbench-payments", 0) > 0, by
    print(by)
