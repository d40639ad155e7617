"""Closing a Workbench ends every server session it opened: those its claims and Completes hold per thread included."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest
import sqlalchemy as sa

from tests import support
from workbench.core import errors
from workbench.db import connect, service

# A server session ends a moment after its client hung up (the server process exits on its own time).
GONE_WITHIN_SECONDS = 5.0


def _sessions(env: support.Env) -> int:
    """The client sessions on the env's database but the test's own look: through PgBouncer its clients
    (the pooler keeps its server sessions, which are not workbench's), else the server's."""
    bouncer = getattr(env, "bouncer", None)
    if bouncer is not None:
        return sum(1 for row in bouncer.console("SHOW CLIENTS") if getattr(env, "database", None) in row)
    url = sa.make_url(env.url)
    engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
    if url.get_backend_name() == "postgresql":
        query = "SELECT count(*) FROM pg_stat_activity WHERE datname = :db AND pid <> pg_backend_pid()"
    else:
        query = "SELECT count(*) FROM information_schema.processlist WHERE db = :db AND id <> connection_id()"
    try:
        with engine.connect() as conn:
            return int(conn.execute(sa.text(query), {"db": url.database}).scalar_one())
    finally:
        engine.dispose()


def _settled(env: support.Env, sessions: int) -> int:
    deadline = time.monotonic() + GONE_WITHIN_SECONDS
    while (now := _sessions(env)) != sessions and time.monotonic() < deadline:
        time.sleep(0.05)
    return now


@pytest.mark.parametrize("backend", ["postgresql", "postgresql-pgbouncer", "mariadb"])
def test_close_ends_the_sessions_held_by_every_thread(native_env: support.Env) -> None:
    """A window's calls run on its dispatcher's threads, each holding a connection of the fast path
    (fastpath.HeldConnections); closing from the window's own thread ends them all, while those threads
    still live."""
    native_env.demo()
    before = _sessions(native_env)
    wb = native_env.open(native_env.demo_config())
    q = wb.queue("cases")

    def claim_and_complete(user: str) -> None:
        claim = q.claim_next(user)[0]
        q.complete(user, claim.lock.key, claim.lock.token, "resolved")

    worked, closed = threading.Event(), threading.Event()

    def dispatcher() -> None:
        claim_and_complete("bob")
        worked.set()
        closed.wait(30)  # alive until the close, as a pool's thread is

    claim_and_complete("ann")
    thread = threading.Thread(target=dispatcher)
    thread.start()
    try:
        assert worked.wait(30)
        assert wb.db.held.count() == 2  # one per thread
        assert _settled(native_env, before + 3) == before + 3  # the main pool's one besides
        wb.close()
    finally:
        closed.set()
        thread.join()
    assert _settled(native_env, before) == before


def _select_one(conn: sa.Connection) -> int:
    return int(conn.execute(sa.select(sa.literal(1))).scalar_one())


def _calls_after_close(wb: service.Workbench) -> dict[str, Callable[[], object]]:
    """Every way a window's late job reaches the database: each must raise connect.Closed."""

    def joined() -> None:
        with wb.db.one_read():
            wb.db.read(_select_one)

    def held() -> object:  # the claim's connection of this thread (wb.db.held itself may refuse)
        return wb.db.held.get()

    return {
        "read": lambda: wb.db.read(_select_one),
        "write": lambda: wb.db.write(_select_one),
        "read_alone": lambda: wb.db.read_alone(_select_one),
        "one_read": joined,
        "fast_engine": lambda: wb.db.fast_engine,
        "held": held,
        "claim": lambda: wb.queue("cases").claim_next("carl"),
        "engine": wb.engine.connect,
    }


def _assert_refused(wb: service.Workbench) -> None:
    for name, call in _calls_after_close(wb).items():
        try:
            call()
        except connect.Closed:
            continue
        pytest.fail(f"{name} ran after close()")
    assert issubclass(connect.Closed, errors.DatabaseUnavailable)  # a window's late job: no failure shown


@pytest.mark.parametrize("backend", ["postgresql", "postgresql-pgbouncer", "mariadb"])
def test_after_close_every_call_is_refused_and_opens_no_session(native_env: support.Env) -> None:
    """A job still running on a replaced window's dispatcher: the read it is inside ends its session when
    it comes back after close(), and every call after that raises Closed without opening one."""
    native_env.demo()
    before = _sessions(native_env)
    wb = native_env.open(native_env.demo_config())
    q = wb.queue("cases")
    claim = q.claim_next("ann")[0]
    q.complete("ann", claim.lock.key, claim.lock.token, "resolved")
    inside, closed = threading.Event(), threading.Event()
    outcome: list[object] = []

    def late_job() -> None:
        with wb.db.one_read():  # holds a connection of the main pool across close()
            wb.db.read(_select_one)
            inside.set()
            closed.wait(30)
            outcome.append(wb.db.read(_select_one))  # in its transaction still
        try:
            wb.db.read(_select_one)
        except connect.Closed as exc:
            outcome.append(exc)

    thread = threading.Thread(target=late_job)
    thread.start()
    try:
        assert inside.wait(30)
        wb.close()
    finally:
        closed.set()
        thread.join()
    assert _settled(native_env, before) == before  # the late job's session too
    assert outcome[0] == 1 and isinstance(outcome[1], connect.Closed)
    _assert_refused(wb)
    wb.close()  # again: harmless
    assert _settled(native_env, before) == before


@pytest.mark.parametrize("backend", ["sqlite"])
def test_after_close_sqlite_opens_no_connection(native_env: support.Env) -> None:
    native_env.demo()
    wb = native_env.open(native_env.demo_config())
    q = wb.queue("cases")
    claim = q.claim_next("ann")[0]
    q.complete("ann", claim.lock.key, claim.lock.token, "resolved")
    opened: list[object] = []
    for engine in (wb.engine, wb.db.fast_engine):
        sa.event.listen(engine, "connect", lambda conn, _record: opened.append(conn))
    wb.close()
    _assert_refused(wb)
    wb.close()
    assert opened == []
