"""Closing a Workbench ends every server session it opened: those its claims and Completes hold per thread included."""

from __future__ import annotations

import threading
import time

import pytest
import sqlalchemy as sa

from tests import support

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
