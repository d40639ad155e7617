"""Shared fixtures: an isolated workbench home, throwaway servers, one fresh database per test."""

from __future__ import annotations

import gc
import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

# Bytecode: where PYTHONDONTWRITEBYTECODE is set (the shared development machine sets it), every pytest worker
# rewrote the assertions of all the test modules as it collected them (about 20 s of CPU of the 35 s
# collection, on each worker, on every run) and every Python process the tests start compiled workbench's
# modules again. The suite writes them as Python does by default (next to the sources in __pycache__, which
# git ignores), for the test modules imported after this one and, through the environment, for the xdist
# workers and every process the tests start. WORKBENCH_TEST_BYTECODE=0 keeps the environment's setting.
if os.environ.get("WORKBENCH_TEST_BYTECODE") != "0" and os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
    sys.dont_write_bytecode = False

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before any QApplication exists
# The GUI tests read the English texts, whatever the language of the machine (a test that wants
# another one installs it: workbench.gui.i18n.install).
os.environ["WORKBENCH_LANG"] = "en"
# Commands the tests start run in their own process, as they always did: no command server is left
# behind by a test (tests/test_command_server.py turns it on for its own).
os.environ["WORKBENCH_COMMAND_SERVER"] = "off"

from tests import servers
from tests.helpers import rewrite_ahead

if TYPE_CHECKING:
    from tests import support
    from tests.pooled import PooledEnv


def _one_preferred_tls_context() -> None:
    """pymysql (1.2) builds a TLS context for every connection opened without TLS options (used if the server
    offers TLS, which the suite's MariaDB servers do not), reading the system's CA certificates each time although
    it verifies nothing with them: 20 ms of CPU a connection, several a MariaDB test. One such context for the
    process instead: the same settings, made once (a context is made to be shared)."""
    try:
        from pymysql import connections
    except ImportError:  # pragma: no cover - pymysql is a test dependency
        return
    make = connections.Connection._create_ssl_ctx
    made: list[Any] = []

    def preferred_once(self: Any, sslp: Any) -> Any:
        if sslp != {}:
            return make(self, sslp)
        if not made:
            made.append(make(self, sslp))
        return made[0]

    connections.Connection._create_ssl_ctx = preferred_once


_one_preferred_tls_context()

REQUIRE_SERVERS = os.environ.get("WORKBENCH_REQUIRE_SERVERS") == "1"
SERVER_BACKENDS = ("postgresql", "mariadb", "mariadb-odbc")
BACKENDS = ("sqlite", *SERVER_BACKENDS)
# PostgreSQL through PgBouncer in transaction pooling: one more backend, for tests/contract only
# (tests/contract/conftest.py); its Env is a PooledEnv, whose `backend` says "postgresql".
POOLED = "postgresql-pgbouncer"


# Fixtures that start servers (tests/servers.py): a test that uses one, directly or through other
# fixtures, gets the `servers` marker.
SERVER_FIXTURES = frozenset(
    {
        "pg_server",
        "mariadb_server",
        "replicated",  # tests/test_failover.py, tests/gui/test_failover_window.py: a primary and its standby
        "galera",  # tests/test_galera.py: a three-node cluster
        "patroni_cluster",  # tests/gui/test_patroni.py: three PostgreSQL nodes under Patroni
        "pgbouncer",  # a PgBouncer in transaction pooling in front of pg_server
    }
)


def needs_servers(item: pytest.Item) -> bool:
    """Whether `item` needs a database server: it uses a fixture that starts one, or it is the
    server-backend instance of a test parametrized over `backend` (the fixture's own params or the
    test's parametrize, whose values both land in callspec.params)."""
    if SERVER_FIXTURES.intersection(getattr(item, "fixturenames", ())):
        return True
    callspec = getattr(item, "callspec", None)
    return callspec is not None and callspec.params.get("backend") in (*SERVER_BACKENDS, POOLED)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The `servers` marker on every test that needs a server: `pytest -m "not servers"` is the fast
    tier. A test that reaches a server some other way (request.getfixturevalue) carries the marker
    itself; pytest_runtest_setup below makes a forgotten one fail loudly."""
    for item in items:
        if needs_servers(item):
            item.add_marker(pytest.mark.servers)


def pytest_collection_finish() -> None:
    """What collection made (the imported modules: workbench, SQLAlchemy, PySide6, the test modules and their
    parameters) frozen out of the garbage collector's reach: it lives until the process ends anyway, and each
    full collection during the tests walked all of it again (the command tests' in-process runs start one every
    few commands)."""
    gc.collect()
    gc.freeze()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Before a test's fixtures are set up: a test without the `servers` marker may not start a server."""
    if item.get_closest_marker("servers") is None:
        servers.refuse_starts(
            f"{item.nodeid} has no `servers` marker but starts a server "
            "(mark it @pytest.mark.servers or list its fixture in tests/conftest.py)"
        )
    else:
        servers.refuse_starts(None)


@pytest.hookimpl(tryfirst=True)  # before xdist's pytest_sessionstart (trylast) starts the workers
def pytest_sessionstart(session: pytest.Session) -> None:
    """With -n: the test modules' asserts rewritten once, not once in every worker (tests/helpers/rewrite_ahead.py)."""
    rewrite_ahead.before_workers(session)


def pytest_sessionfinish() -> None:
    """The session's SQLite templates and demo removed (the servers' go with the servers): made by tests.support,
    which a run that never imported it made none of."""
    support = sys.modules.get("tests.support")
    if support is not None:
        support.remove_templates()


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`--dist loadgroup` (pyproject's addopts) with the groups and mends of tests/scheduling.py."""
    if config.getoption("dist") != "loadgroup":
        return None
    from tests import scheduling

    return scheduling.make_scheduler(config, log)


def _unavailable(what: str, reason: str) -> None:
    message = f"{what} not available: {reason}"
    if REQUIRE_SERVERS:
        pytest.fail(message + " (WORKBENCH_REQUIRE_SERVERS=1 makes this a failure)", pytrace=False)
    pytest.skip(message)


@pytest.fixture(autouse=True)
def _collected_when_due() -> Iterator[None]:
    """Once a window's dispatcher has moved Python's collector onto the GUI thread (gui/collector.py), it
    collects only while an event loop runs: a test that spins none, and every test after the last window,
    gets its due collections here instead (on the main thread, as the window's timer would)."""
    yield
    import gc

    if not gc.isenabled():
        from workbench.gui import collector

        collector.collect_due()


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test gets its own config/data directories and no ambient configuration."""
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    for name in ("WORKBENCH_CONFIG", "WORKBENCH_DB_PASSWORD"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def memory_keyring() -> Iterator[Any]:
    """An in-memory OS password store for the test (no real secrets touched)."""
    import keyring

    from tests.helpers.memkeyring import MemoryKeyring

    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[servers.Server]:
    try:
        server = servers.start_postgres(in_memory=True)
    except servers.ServerUnavailable as exc:
        _unavailable("PostgreSQL", str(exc))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def pgbouncer(pg_server: servers.Server) -> Iterator[servers.PgBouncer]:
    try:
        bouncer = servers.start_pgbouncer(pg_server)
    except servers.ServerUnavailable as exc:
        _unavailable("PgBouncer", str(exc))
    yield bouncer
    bouncer.stop()


@pytest.fixture
def pooled_env(pgbouncer: servers.PgBouncer, tmp_path: Path) -> Iterator[PooledEnv]:
    """A fresh database used through PgBouncer (pool_mode = transaction) with the pooler setting."""
    from tests.pooled import PooledEnv

    name = f"wbt_{uuid.uuid4().hex[:12]}"
    pgbouncer.server.create_database(name)
    environment = PooledEnv(pgbouncer, name, tmp_path)
    yield environment
    environment.close()
    pgbouncer.drop_database(name)


@pytest.fixture(scope="session")
def mariadb_server() -> Iterator[servers.Server]:
    try:
        server = servers.start_mariadb(in_memory=True)
    except servers.ServerUnavailable as exc:
        _unavailable("MariaDB", str(exc))
    yield server
    server.stop()


_SERVER_FIXTURE = {"postgresql": "pg_server", "mariadb": "mariadb_server"}  # by servers.Server.kind


def _database(request: pytest.FixtureRequest, backend: str, tmp_path: Path) -> Iterator[str]:
    """A URL of a fresh, empty database on `backend`, dropped afterwards."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'test.db'}"
        return
    if backend == POOLED:
        bouncer: servers.PgBouncer = request.getfixturevalue("pgbouncer")
        name = f"wbt_{uuid.uuid4().hex[:12]}"
        bouncer.server.create_database(name)
        yield bouncer.url(name)
        bouncer.drop_database(name)
        return
    server: servers.Server = request.getfixturevalue("pg_server" if backend == "postgresql" else "mariadb_server")
    driver = None
    if backend == "mariadb-odbc":
        try:
            servers.odbc_driver_name()
        except servers.ServerUnavailable as exc:
            _unavailable("MariaDB ODBC driver", str(exc))
        driver = "pyodbc"
    name = f"wbt_{uuid.uuid4().hex[:12]}"
    server.create_database(name)
    yield server.url(name, driver=driver)
    server.drop_database(name)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def database_url(request: pytest.FixtureRequest, backend: str, tmp_path: Path) -> Iterator[str]:
    yield from _database(request, backend, tmp_path)


@pytest.fixture(params=["native", "portable"])
def method(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _env(request: pytest.FixtureRequest, backend: str, method: str, url: str, tmp: Path) -> support.Env:
    import sqlalchemy as sa

    from tests import support
    from tests.pooled import PooledEnv

    if backend == POOLED:
        return PooledEnv(request.getfixturevalue("pgbouncer"), str(sa.make_url(url).database), tmp, method)
    # env.demo() copies a template database (support.Env.copy_template): on a server, or a file on SQLite.
    server: servers.Server | support.SqliteFiles
    if backend == "sqlite":
        server = support.SQLITE_FILES
    else:
        server = request.getfixturevalue(_SERVER_FIXTURE[support.SERVER_KIND[backend]])
    return support.Env(backend, method, url, tmp, server)


@pytest.fixture
def env(
    request: pytest.FixtureRequest, backend: str, method: str, database_url: str, tmp_path: Path
) -> Iterator[support.Env]:
    """A fresh database on every backend, used through each claim method."""
    environment = _env(request, backend, method, database_url, tmp_path)
    yield environment
    environment.close()


@pytest.fixture
def native_env(
    request: pytest.FixtureRequest, backend: str, database_url: str, tmp_path: Path
) -> Iterator[support.Env]:
    """A fresh database on every backend, with the database's own claim method only."""
    environment = _env(request, backend, "native", database_url, tmp_path)
    yield environment
    environment.close()
