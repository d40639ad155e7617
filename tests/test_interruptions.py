"""Database.interruptions(): what a window compares to know the server may have changed under it
(a failover can undo its last Completes). Counted per Database: another window's outage in the same
process is not this one's; and a new connection that lands on another server counts, even with no
error on the way (an idle window's pool was emptied, then the next call reached a promoted standby)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from tests import servers
from workbench.core import errors
from workbench.db import connect

pytestmark = pytest.mark.servers

SELECT_ONE = sa.text("SELECT 1")


@pytest.fixture
def database(pg_server: servers.Server) -> Iterator[str]:
    name = f"wbt_{uuid.uuid4().hex[:12]}"
    pg_server.create_database(name)
    yield name
    pg_server.drop_database(name)


def _read(db: connect.Database) -> None:
    assert db.read(lambda conn: conn.execute(SELECT_ONE).scalar()) == 1


def _backend_pids(db: connect.Database) -> set[int]:
    return {int(db.read(lambda conn: conn.execute(sa.text("SELECT pg_backend_pid()")).scalar_one()))}


def test_a_lost_connection_counts_for_its_own_database_only(pg_server: servers.Server, database: str) -> None:
    mine = connect.Database(sa.create_engine(pg_server.url(database)))
    other = connect.Database(sa.create_engine(pg_server.url(database)))
    try:
        _read(mine)
        _read(other)
        before_mine, before_other = mine.interruptions(), other.interruptions()
        admin = sa.create_engine(pg_server.url(database), isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            for pid in _backend_pids(mine):
                conn.execute(sa.text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
        admin.dispose()
        try:
            _read(mine)  # meets the dropped connection (or finds it dead and reconnects)
        except errors.DatabaseUnavailable:
            _read(mine)
        _read(other)
        assert mine.interruptions() > before_mine
        assert other.interruptions() == before_other
    finally:
        mine.dispose()
        other.dispose()


def test_a_new_connection_on_another_server_counts_though_nothing_failed(
    pg_server: servers.Server, database: str
) -> None:
    # Two addresses of one database, as a primary and its standby in one URL: a PgBouncer first (in
    # session pooling is not needed for a SELECT), the server itself second.
    first = servers.start_pgbouncer(pg_server, pool_size=1)
    url = (
        f"postgresql+psycopg://{pg_server.user}@/{database}"
        f"?host=127.0.0.1:{first.port}&host={pg_server.host}:{pg_server.port}"
    )
    db = connect.Database(sa.create_engine(url))
    try:
        _read(db)
        _read(db)
        assert db.interruptions() == 0  # the same server each time
        db.engine.dispose()  # an idle window's pools emptied: nothing open that could fail
        first.stop()  # the first address is gone; libpq goes on to the second without an error
        _read(db)
        assert db.interruptions() == 1
    finally:
        db.dispose()
        first.stop()
