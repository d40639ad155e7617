"""PostgreSQL: is a new connection one server session, or a transaction pooler the config does not declare?"""

from __future__ import annotations

import select
import threading
import time
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event

from workbench.core import errors
from workbench.db import dberrors

# The second client's query waits no longer for a server session: a session pooler's full pool lends it
# none while the first client holds its own, where a transaction pooler lends the one the first let go.
SECOND_CLIENT_SECONDS = 2.0
ROUNDS = 3  # the first client and a second one in turn: another client may take the session between
PID = sa.select(sa.func.pg_catalog.pg_backend_pid())  # the server process a transaction runs on


def check_connections(engine: sa.Engine) -> None:
    """Refuse `engine`'s connections (a config without `pooler = "transaction"`) where they go through a
    transaction pooler: ConfigError from the first connection on, before anything is kept in a session.

    Without the setting workbench keeps things in the session: named prepared statements (the claim's and
    the Complete's, psycopg's own after a statement's fifth run), the claim function in pg_temp, settings.
    A transaction pooler (PgBouncer's pool_mode = transaction) lends each transaction whichever server
    session is free, so they land on sessions other clients get next, where another process's `wb_fast_1`
    or `_pg3_0` is a different statement under the same name. Nothing the session itself sees tells such a
    pooler while it lends a client the same session each time: PgBouncer's default lends the one used
    last, and a pool with one session open (a quiet site, a database just made) has no other. So it is
    asked here, once per engine:

    - a pooler stands between where the server's process id (pg_backend_pid()) is not the one the
      connection was given at login (libpq's backend_pid, PgBouncer's own number): on a direct connection
      this query (and, outside autocommit, its rollback) is all it costs;
    - a session pooler keeps that server session for the connection until it closes, so a second
      client's query gets another and the first client's next transaction the same; a transaction pooler
      lends the second client the session the first just let go (PgBouncer's default), or the first
      client's next transaction another (lent in turn)."""
    state: dict[str, str | None] = {"found": None}  # "session" (checked: one server session) or the refusal
    lock = threading.Lock()
    pid = str(PID.compile(dialect=engine.dialect)).encode()  # sent on the driver's connection, as it opens

    @event.listens_for(engine, "connect")
    def _one_session(dbapi_conn: Any, _record: Any) -> None:
        if state["found"] is None and getattr(dbapi_conn, "pgconn", None) is not None:  # psycopg 3
            with lock:
                one = _one_server_session(dbapi_conn, pid) if state["found"] is None else None
                if one is not None:  # not known (no second client): asked again at the next connection
                    state["found"] = "session" if one else dberrors.UNDECLARED_POOLER
        if state["found"] not in (None, "session"):
            dbapi_conn.close()  # the pool keeps nothing of a connection its listener refused
            raise errors.ConfigError(str(state["found"]), key="database.pooler")


def _one_server_session(conn: Any, pid: bytes) -> bool | None:
    """Whether the new psycopg connection `conn` is one server session: straight to the server, or
    through a pooler that keeps a server session for it (session pooling). None: not known now."""
    first = _pid(conn, pid)
    if first == conn.info.backend_pid:
        return True  # the server's own process: nothing between
    import psycopg
    from psycopg import conninfo

    try:
        other = psycopg.Connection.connect(
            conninfo.make_conninfo(conn.info.dsn, password=conn.info.password or None), autocommit=True
        )
    except psycopg.Error:
        return None  # no second client now (the pooler's max_client_conn, a login refused)
    try:
        for _ in range(ROUNDS):
            lent = _pid_within(other, pid, SECOND_CLIENT_SECONDS)
            again = _pid(conn, pid)
            if again != first or lent in (first, again):
                return False  # one client's transactions on two sessions, or two clients on one
            if lent is None:
                return True  # no session for a second client while the first's is idle: it keeps its own
    finally:
        other.close()
    return True


def _pid(conn: Any, pid: bytes) -> int:
    """The server process `conn` runs its next transaction on (a transaction of its own, ended)."""
    found = int(conn.execute(pid, prepare=False).fetchone()[0])
    if not conn.autocommit:
        conn.rollback()
    return found


def _pid_within(conn: Any, pid: bytes, seconds: float) -> int | None:
    """As _pid on an autocommit connection, or None if no answer comes within `seconds` (the query is
    left waiting: the connection is closed after)."""
    pg = conn.pgconn
    pg.send_query(pid)
    deadline = time.monotonic() + seconds
    while pg.flush():
        select.select([], [pg.socket], [], max(0.0, deadline - time.monotonic()))
    while True:
        pg.consume_input()
        if not pg.is_busy():
            break
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        select.select([pg.socket], [], [], left)
    results = []
    while (result := pg.get_result()) is not None:
        results.append(result)
    if len(results) != 1 or results[0].ntuples != 1:
        return None
    return int(results[0].get_value(0, 0))
