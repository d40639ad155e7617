"""probe.check against real servers and drivers: each kind of failure is named, the password never shown."""

from __future__ import annotations

import socket
import sqlite3
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests import servers
from tests.conftest import _unavailable
from workbench.db import probe

WRONG_PASSWORD = "Not-the-Password-93"


def _odbc_driver() -> str:
    try:
        return servers.odbc_driver_name()
    except servers.ServerUnavailable as exc:
        _unavailable("MariaDB ODBC driver", str(exc))
        raise  # not reached: _unavailable skips or fails


def _mariadb_odbc_url(host: str, port: int, database: str, user: str = "root") -> str:
    # The port goes in the query string (see servers.Server.url).
    return f"mariadb+pyodbc://{user}@{host}/{database}?driver={_odbc_driver().replace(' ', '+')}&port={port}"


def _url(kind: str, port: int, database: str, host: str = "127.0.0.1") -> str:
    if kind == "postgresql":
        return f"postgresql+psycopg://postgres@{host}:{port}/{database}"
    if kind == "mariadb":
        return f"mariadb+pymysql://root@{host}:{port}/{database}"
    return _mariadb_odbc_url(host, port, database)


def _server(request: pytest.FixtureRequest, kind: str) -> servers.Server:
    return request.getfixturevalue("pg_server" if kind == "postgresql" else "mariadb_server")


@pytest.fixture(scope="module")
def pg_login(pg_server: servers.Server) -> tuple[str, str]:
    """The server's password-checked role and its password."""
    if pg_server.password_user is None:
        pytest.skip("the external PostgreSQL server (WORKBENCH_TEST_PG) has no password-checked role")
    return pg_server.password_login()


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts TCP connections and then never says a word (a hung server)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)  # the kernel completes the handshake; nobody ever accept()s
        yield int(listener.getsockname()[1])


# --- unreachable -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["postgresql", "mariadb"])
def test_closed_port_is_unreachable(kind: str) -> None:
    port = servers.free_port()
    result = probe.check(_url(kind, port, "x"), connect_timeout=3)
    assert (result.ok, result.problem) == (False, "unreachable"), result
    assert f"127.0.0.1:{port}: connection refused" in result.message and result.reason == "refused"
    assert "refused" in result.detail.lower()
    assert result.seconds < 3


def test_closed_port_over_odbc_is_unreachable() -> None:
    port = servers.free_port()
    result = probe.check(_mariadb_odbc_url("127.0.0.1", port, "x"), connect_timeout=3)
    assert (result.ok, result.problem) == (False, "unreachable"), result
    assert f"127.0.0.1:{port}" in result.message


@pytest.mark.parametrize("kind", ["postgresql", "mariadb", "mariadb-odbc"])
def test_silent_server_times_out_within_the_timeout(kind: str, silent_port: int) -> None:
    # Run on a thread so that a driver ignoring the timeout fails the test instead of hanging it.
    results: list[probe.ProbeResult] = []
    thread = threading.Thread(
        target=lambda: results.append(probe.check(_url(kind, silent_port, "x"), connect_timeout=1)), daemon=True
    )
    thread.start()
    thread.join(10)
    assert results, "probe.check ignored connect_timeout=1 (still waiting after 10 s)"
    result = results[0]
    assert (result.ok, result.problem) == (False, "unreachable"), result
    assert "no answer within 1 s" in result.message and result.reason == "timeout"
    assert 0.9 < result.seconds < 5


def test_unknown_host_is_unreachable() -> None:
    result = probe.check("postgresql+psycopg://postgres@no-such-host.invalid:5432/x", connect_timeout=3)
    assert (result.ok, result.problem) == (False, "unreachable"), result
    assert "host name is not known" in result.message and result.reason == "unknown_host"


# --- login and permission (PostgreSQL with a password-checked role) --------------------------------------


def _pg_user_url(server: servers.Server, user: str, database: str = "postgres") -> str:
    return f"postgresql+psycopg://{user}@{server.host}:{server.port}/{database}"


def test_right_password_connects(pg_server: servers.Server, pg_login: tuple[str, str]) -> None:
    user, password = pg_login
    result = probe.check(_pg_user_url(pg_server, user), password=password)
    assert (result.ok, result.problem) == (True, None), result
    assert result.server_version is not None and result.server_version.startswith("PostgreSQL ")
    assert result.message.startswith(f"Connected to {result.server_version} at {pg_server.host}:{pg_server.port}")
    assert f"as {user} in " in result.message
    assert password not in repr(result)


def test_wrong_password_is_a_refused_login(pg_server: servers.Server, pg_login: tuple[str, str]) -> None:
    user, _ = pg_login
    result = probe.check(sa.make_url(_pg_user_url(pg_server, user)), password=WRONG_PASSWORD)
    assert (result.ok, result.problem) == (False, "login"), result
    assert result.message == f"The server refused the login for user '{user}': wrong password or no such user."
    assert result.reason == "wrong_password"
    assert "password authentication failed" in result.detail
    for text in (result.message, result.detail, repr(result)):
        assert WRONG_PASSWORD not in text


def test_password_in_the_driver_error_is_scrubbed(pg_server: servers.Server, pg_login: tuple[str, str]) -> None:
    # The server names the user in its error; a password equal to the user name is then echoed.
    user, _ = pg_login
    result = probe.check(_pg_user_url(pg_server, user), password=user)
    assert result.problem == "login", result
    assert 'for user "***"' in result.detail
    assert user not in repr(result)


def test_missing_password_is_a_refused_login(pg_server: servers.Server, pg_login: tuple[str, str]) -> None:
    user, _ = pg_login
    result = probe.check(_pg_user_url(pg_server, user))
    assert result.problem == "login", result
    assert "requires a password" in result.message and result.reason == "no_password"


def test_unknown_role_is_a_refused_login(pg_server: servers.Server) -> None:
    result = probe.check(_pg_user_url(pg_server, "nobody_here"))
    assert result.problem == "login", result
    assert "user 'nobody_here'" in result.message


def test_no_connect_privilege_is_permission(pg_server: servers.Server, pg_login: tuple[str, str]) -> None:
    user, password = pg_login
    name = f"wbt_{uuid.uuid4().hex[:12]}"
    pg_server.create_database(name)
    try:
        assert probe.check(_pg_user_url(pg_server, user, name), password=password).ok
        engine = sa.create_engine(pg_server.admin_url(), isolation_level="AUTOCOMMIT")
        with engine.connect() as conn:
            conn.exec_driver_sql(f'REVOKE CONNECT ON DATABASE "{name}" FROM PUBLIC')
        engine.dispose()
        result = probe.check(_pg_user_url(pg_server, user, name), password=password)
        assert (result.ok, result.problem) == (False, "permission"), result
        assert f"database '{name}'" in result.message
    finally:
        pg_server.drop_database(name)


def test_mariadb_user_without_grant_is_permission(mariadb_server: servers.Server) -> None:
    engine = sa.create_engine(mariadb_server.admin_url())
    with engine.begin() as conn:
        for host in ("localhost", "127.0.0.1", "%"):
            conn.execute(sa.text("CREATE USER IF NOT EXISTS 'wb_nogrant'@:host"), {"host": host})
    engine.dispose()
    url = f"mariadb+pymysql://wb_nogrant@{mariadb_server.host}:{mariadb_server.port}/mysql"
    result = probe.check(url)
    assert (result.ok, result.problem) == (False, "permission"), result  # MySQL error 1044, not a bad login
    assert "database 'mysql'" in result.message


# --- missing database ------------------------------------------------------------------------------------


@pytest.mark.servers  # the server comes from request.getfixturevalue, unseen by collection
@pytest.mark.parametrize("kind", ["postgresql", "mariadb", "mariadb-odbc"])
def test_missing_database(request: pytest.FixtureRequest, kind: str) -> None:
    server = _server(request, kind)
    result = probe.check(_url(kind, server.port, "nosuch_db", server.host))
    assert (result.ok, result.problem) == (False, "database"), result
    assert "no database named 'nosuch_db'" in result.message
    assert "nosuch_db" in result.detail


@pytest.mark.servers  # the server comes from request.getfixturevalue, unseen by collection
@pytest.mark.parametrize("kind", ["postgresql", "mariadb", "mariadb-odbc"])
def test_existing_database_connects(request: pytest.FixtureRequest, kind: str) -> None:
    server = _server(request, kind)
    name = f"wbt_{uuid.uuid4().hex[:12]}"
    server.create_database(name)
    try:
        result = probe.check(_url(kind, server.port, name, server.host))
    finally:
        server.drop_database(name)
    assert (result.ok, result.problem, result.detail) == (True, None, ""), result
    expected = "PostgreSQL " if kind == "postgresql" else "MariaDB "
    assert result.server_version is not None and result.server_version.startswith(expected)
    assert f"at {server.host}:{server.port}, database {name}, as " in result.message


def test_odbc_port_after_the_host_is_explained(mariadb_server: servers.Server) -> None:
    url = (
        f"mariadb+pyodbc://root@{mariadb_server.host}:{mariadb_server.port}/mysql"
        f"?driver={_odbc_driver().replace(' ', '+')}"
    )
    result = probe.check(url)
    assert result.problem == "other", result
    assert "query string" in result.message


# --- missing drivers -------------------------------------------------------------------------------------


def test_missing_odbc_driver_lists_the_installed_ones() -> None:
    pyodbc = pytest.importorskip("pyodbc")
    result = probe.check("mariadb+pyodbc://root@127.0.0.1/x?driver=No+Such+Driver&port=1")
    assert (result.ok, result.problem) == (False, "driver"), result
    installed = pyodbc.drivers()
    assert result.odbc_drivers == tuple(installed)
    assert "'No Such Driver' is not installed" in result.message
    if installed:
        assert f"installed ODBC drivers: {', '.join(installed)}" in result.message
    else:
        assert "no ODBC drivers are installed" in result.message


@pytest.mark.parametrize(
    ("module", "url", "extra"),
    [
        ("pymysql", "mariadb+pymysql://root@127.0.0.1:1/x", "mysql"),
        ("psycopg", "postgresql+psycopg://postgres@127.0.0.1:1/x", "postgresql"),
        ("pyodbc", "mssql+pyodbc://sa@127.0.0.1:1/x?driver=FreeTDS", "odbc"),
    ],
)
def test_missing_python_driver_names_the_pip_extra(
    monkeypatch: pytest.MonkeyPatch, module: str, url: str, extra: str
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # `import module` now raises ImportError
    result = probe.check(url)
    assert (result.ok, result.problem) == (False, "driver"), result
    assert f"'{module}'" in result.message
    assert f'pip install "workbench[{extra}]"' in result.message
    assert result.odbc_drivers == ()


def test_dialect_sqlalchemy_does_not_have() -> None:
    result = probe.check("postgresql+pyodbc://postgres@127.0.0.1/x")
    assert (result.ok, result.problem) == (False, "driver"), result
    assert "postgresql+pyodbc" in result.message


def test_not_a_url() -> None:
    result = probe.check("not a url")
    assert (result.ok, result.problem) == (False, "other")


# --- SQLite ----------------------------------------------------------------------------------------------


def test_sqlite_missing_file_is_not_created(tmp_path: Path) -> None:
    path = tmp_path / "missing.db"
    result = probe.check(f"sqlite:///{path}")
    assert (result.ok, result.problem) == (False, "file"), result
    assert f"no SQLite database file at {path}" in result.message and result.reason == "missing"
    assert not path.exists()


def test_sqlite_garbage_file(tmp_path: Path) -> None:
    path = tmp_path / "garbage.db"
    path.write_bytes(b"this is not a database, just some bytes " * 100)
    result = probe.check(f"sqlite:///{path}")
    assert (result.ok, result.problem) == (False, "file"), result
    assert "is not a SQLite database" in result.message and result.reason == "not_database"
    assert "not a database" in result.detail


def test_sqlite_good_file(tmp_path: Path) -> None:
    path = tmp_path / "good.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (x)")
    conn.close()
    result = probe.check(f"sqlite:///{path}")
    assert (result.ok, result.problem) == (True, None), result
    assert result.server_version == f"SQLite {sqlite3.sqlite_version}"
    assert str(path) in result.message


def test_sqlite_read_only_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # SQLite silently opens a write-protected file read-only; as root no file is write-protected,
    # so the permission check itself is what we make say no.
    path = tmp_path / "ro.db"
    sqlite3.connect(path).close()
    monkeypatch.setattr(probe.os, "access", lambda place, mode: str(place) != str(path))
    result = probe.check(f"sqlite:///{path}")
    assert (result.ok, result.problem) == (False, "file"), result
    assert "read-only" in result.message and result.reason == "read_only"
