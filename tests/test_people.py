"""Making people usable: `grants` without CREATEROLE, `workbench people add/list/remove` on PostgreSQL
and MariaDB (real logins), SQL Server's text; the idle-transaction limit an operator may not lift."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests import servers, support
from workbench.core import errors
from workbench.db import permissions

_cli = support.run_cli
pytestmark = pytest.mark.servers
OWNER = "tableowner"  # owns the queue's tables; no CREATEROLE, as a site's application login often is


@pytest.fixture(scope="module")
def fresh_pg() -> Iterator[servers.Server]:
    """A server of its own: workbench's roles do not exist on it yet (the shared one has them)."""
    try:
        server = servers.start_postgres()
    except servers.ServerUnavailable as exc:
        pytest.skip(str(exc))
    yield server
    server.stop()


def _owned_demo(server: servers.Server, tmp: Path) -> tuple[str, Path]:
    """A database owned by OWNER with the demo in it, made by OWNER; its URL and config file as OWNER."""
    name = f"wbt_{uuid.uuid4().hex[:12]}"
    server.create_database(name)
    admin = sa.create_engine(server.url(name), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        if conn.execute(sa.text("SELECT 1 FROM pg_roles WHERE rolname = :n"), {"n": OWNER}).first() is None:
            conn.exec_driver_sql(f"CREATE ROLE {OWNER} LOGIN")
        conn.exec_driver_sql(f"ALTER DATABASE {name} OWNER TO {OWNER}")
        conn.exec_driver_sql(f"ALTER SCHEMA public OWNER TO {OWNER}")
    admin.dispose()
    url = sa.make_url(server.url(name)).set(username=OWNER).render_as_string(hide_password=False)
    env = support.Env("postgresql", "native", url, tmp)
    env.demo(case_rows=4, import_rows=1)
    config = env.demo_config_file()
    env.close()
    return url, config


def test_grants_without_createrole_names_the_grant_and_the_alternative(
    fresh_pg: servers.Server, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Issue 50 (2): "permission denied to create role; ask the database administrator for the grant".
    _url, config = _owned_demo(fresh_pg, tmp_path)
    code, _, err = _cli(capsys, "--config", config, "grants", "cases", "--apply")
    assert code == errors.NotPermitted.exit_code, err
    assert f"the login {OWNER} may not create roles: it needs CREATEROLE" in err, err
    assert f"ALTER ROLE {OWNER} CREATEROLE" in err and permissions.roles_sql() in err
    # The alternative, as printed, run by the administrator: then the owner's `grants --apply` works.
    admin = sa.create_engine(fresh_pg.admin_url(), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        for statement in permissions.roles_sql().split(";"):
            if statement.strip():
                conn.exec_driver_sql(statement)
    admin.dispose()
    code, _, err = _cli(capsys, "--config", config, "grants", "cases", "--apply")
    assert code == 0, err
