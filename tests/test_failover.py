"""A PostgreSQL failover under load: workers claim, save and complete through a multi-host URL while the
primary is killed and its synchronous standby promoted; nothing acknowledged is lost, no item has two
holders, and the workers carry on against the new primary without being restarted."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests import servers
from tests.helpers import failover_checks
from tests.helpers.failover_checks import until
from workbench import demo
from workbench.config import loader
from workbench.core import errors
from workbench.db import service

WORKERS = 4


@pytest.fixture
def replicated() -> Iterator[servers.Replicated]:
    pair = failover_checks.started(lambda: servers.start_replicated(synchronous=True))
    yield pair
    pair.stop()


@pytest.mark.slow
def test_a_synchronous_standby_takes_over_and_nothing_acknowledged_is_lost(
    replicated: servers.Replicated, tmp_path: Path
) -> None:
    replicated.primary.create_database("wbfail")
    config_path = failover_checks.demo_config(replicated.url("wbfail"), tmp_path, cases=400)
    config = loader.load(config_path)
    workers = failover_checks.Workers(config_path, "cases", tmp_path, WORKERS)
    try:
        workers.go()
        until(lambda: workers.completed_since(0) >= 20, "the workers to complete items")
        killed = time.time()
        replicated.primary.take_down("immediate")  # as a crash: no shutdown checkpoint, clients cut off
        replicated.promote()
        promoted = time.time()
        until(lambda: workers.completed_since(promoted) >= 20, "the workers to complete items on the new primary")
    finally:
        workers.stop()
    entries = workers.check_stopped()
    # The workers noticed the switch and carried on (no restart), on the standby that took over.
    assert any("unavailable" in e and e["at"] >= killed for e in entries)
    with service.Workbench.open(config) as wb:
        with wb.engine.connect() as conn:
            assert conn.execute(sa.text("SELECT pg_is_in_recovery()")).scalar() is False
            assert conn.execute(sa.text("SHOW port")).scalar() == str(replicated.standby.port)
        # Every acknowledged claim and Complete is in the trail of the server that took over.
        failover_checks.check_acknowledged(wb, "cases", entries)
        assert failover_checks.overlapping_claims(wb, "cases") == []


def _replayed(replicated: servers.Replicated, database: str, seconds: float = 30.0) -> None:
    """Wait until the standby has replayed the primary's WAL up to now (the database and its tables)."""
    with sa.create_engine(replicated.primary.url("postgres")).connect() as conn:
        target = conn.execute(sa.text("SELECT pg_current_wal_lsn()")).scalar()
    standby = sa.create_engine(replicated.standby.url("postgres"))
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            with standby.connect() as conn:
                done = conn.execute(
                    sa.text("SELECT pg_last_wal_replay_lsn() >= CAST(:t AS pg_lsn)"), {"t": str(target)}
                ).scalar()
            if done:
                return
            time.sleep(0.1)
    finally:
        standby.dispose()
    raise AssertionError(f"the standby did not replay the primary's WAL within {seconds} s ({database})")


def test_no_server_that_takes_writes_is_a_database_that_is_away(replicated: servers.Replicated, tmp_path: Path) -> None:
    """Every named server answers but none takes writes (Patroni starts a crashed leader read-only, then
    promotes it): libpq's "session is read-only" is retried as "cannot reach the database", not an
    unexpected error."""
    replicated.primary.create_database("wbro")
    config_path = failover_checks.demo_config(replicated.primary.url("wbro"), tmp_path, cases=5)
    standby_only = f"postgresql+psycopg://postgres@/wbro?host=127.0.0.1:{replicated.standby.port}"
    _replayed(replicated, "wbro")  # an asynchronous standby may not have the new database yet
    config_path.write_text(demo.config_text(f"{standby_only}&target_session_attrs=read-write"), encoding="utf-8")
    with (
        pytest.raises(errors.DatabaseUnavailable, match="session is read-only"),
        service.Workbench.open(loader.load(config_path)) as wb,
    ):
        wb.queue("cases").claim_next("alice")
