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
from workbench.db import people, permissions

_cli = support.run_cli
pytestmark = pytest.mark.servers
OWNER = "tableowner"  # owns the queue's tables; no CREATEROLE, as a site's application login often is


@pytest.fixture(scope="module")
def fresh_pg() -> Iterator[servers.Server]:
    """A server of its own: workbench's roles do not exist on it yet (the shared one has them)."""
    try:
        server = servers.start_postgres(in_memory=True)
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


# == workbench people: PostgreSQL ==================================================================


def _suffix() -> str:
    return uuid.uuid4().hex[:6]


def _as(url: str, login: str, tmp: Path) -> Path:
    """The demo's config file, connecting as `login`."""
    from workbench import demo

    path = tmp / f"{login}.toml"
    path.write_text(demo.config_text(sa.make_url(url).set(username=login).render_as_string(hide_password=False)))
    return path


def _roles(engine: sa.Engine, login: str) -> dict[str, object]:
    with engine.connect() as conn:
        row = conn.execute(
            sa.text(
                "SELECT r.rolcanlogin, pg_has_role(r.oid, 'workbench_operator', 'MEMBER') AS operator, "
                "pg_has_role(r.oid, 'workbench_supervisor', 'MEMBER') AS supervisor, "
                "(SELECT array_to_string(setconfig, ',') FROM pg_db_role_setting WHERE setrole = r.oid "
                "AND setdatabase = 0) AS settings FROM pg_roles r WHERE rolname = :n"
            ),
            {"n": login},
        ).first()
    return dict(row._mapping) if row is not None else {}


@pytest.fixture
def pg_site(pg_server: servers.Server, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Iterator[support.Env]:
    """The demo on the shared server, owned by its superuser, with `grants cases --apply` run."""
    name = f"wbt_{uuid.uuid4().hex[:12]}"
    pg_server.create_database(name)
    env = support.Env("postgresql", "native", pg_server.url(name), tmp_path)
    env.demo(case_rows=6, import_rows=1)
    code, _, err = _cli(capsys, "--config", env.demo_config_file(), "grants", "cases", "--apply")
    assert code == 0, err
    yield env
    env.close()
    pg_server.drop_database(name)


def test_people_add_makes_a_login_that_works_at_once(
    pg_site: support.Env, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    owner = pg_site.demo_config_file()
    alice, sue = f"alice_{_suffix()}", f"sue_{_suffix()}"
    code, out, err = _cli(capsys, "--config", owner, "people", "add", alice, "--role", "operator")
    assert code == 0, err
    assert f"{alice} is now an operator: their login is ready" in out
    assert "password (shown once" in out
    assert f"--db-user {alice} --queues {owner.resolve()} --default" in out
    found = _roles(pg_site.engine, alice)
    assert found["rolcanlogin"] and found["operator"] and not found["supervisor"]
    assert f"idle_in_transaction_session_timeout={permissions.IDLE_IN_TRANSACTION}" in str(found["settings"])
    # No `grants` again: alice's own login works the queue at once.
    code, out, err = _cli(
        capsys, "--config", _as(pg_site.url, alice, tmp_path), "--user", alice, "--json", "next", "cases"
    )
    assert code == 0 and out["owner"] == alice, err
    key = out["key"]
    code, out, err = _cli(capsys, "--config", owner, "--json", "people", "add", sue, "--role", "supervisor")
    assert code == 0 and out["applied"] and out["password"], err
    assert _roles(pg_site.engine, sue)["supervisor"]
    code, _, err = _cli(
        capsys,
        "--config",
        _as(pg_site.url, sue, tmp_path),
        "--user",
        sue,
        "force-release",
        "cases",
        key,
        "--reason",
        "test",
    )
    assert code == 0, err
    # A login made a member by hand, without `grants` run again: `people list` notices.
    carl = f"carl_{_suffix()}"
    with pg_site.engine.connect() as conn:
        conn.exec_driver_sql(f"CREATE ROLE {carl} LOGIN IN ROLE workbench_operator")
        conn.commit()
    code, listed, err = _cli(capsys, "--config", owner, "--json", "people", "list")
    assert code == 0, err
    by_name = {p["name"]: p for p in listed}
    assert by_name[alice] == {"name": alice, "role": "operator", "queues": ["cases"], "problems": [], "ready": True}
    assert by_name[sue]["role"] == "supervisor" and by_name[sue]["ready"]
    assert not by_name[carl]["ready"] and "no idle-transaction limit" in by_name[carl]["problems"][0]
    code, out, _ = _cli(capsys, "--config", owner, "people", "list")
    assert alice in out and "ready" in out and "no idle-transaction limit" in out
    # Operator to supervisor and back; then out.
    code, _, err = _cli(capsys, "--config", owner, "people", "add", alice, "--role", "supervisor")
    assert code == 0 and "was there already: its password is unchanged" in err, err
    assert _roles(pg_site.engine, alice)["supervisor"]
    code, _, err = _cli(capsys, "--config", owner, "people", "add", alice, "--role", "operator")
    assert code == 0 and not _roles(pg_site.engine, alice)["supervisor"], err
    code, out, err = _cli(capsys, "--config", owner, "people", "remove", alice)
    assert code == 0 and "login dropped" in out, err
    assert _roles(pg_site.engine, alice) == {}
    code, out, err = _cli(capsys, "--config", owner, "people", "remove", sue, "--keep-login")
    assert code == 0 and _roles(pg_site.engine, sue)["rolcanlogin"] and not _roles(pg_site.engine, sue)["operator"]
    code, _, err = _cli(capsys, "--config", owner, "people", "add", "pg_x", "--role", "operator")
    assert code == 2 and "is a role's name" in err
    code, _, err = _cli(capsys, "--config", owner, "people", "add", "a'b", "--role", "operator")
    assert code == 2 and "cannot be a person's login" in err


def test_people_add_without_createrole_prints_the_sql_that_works(
    pg_site: support.Env, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clerk, dora = f"clerk_{_suffix()}", f"dora_{_suffix()}"
    with pg_site.engine.connect() as conn:
        conn.exec_driver_sql(f"CREATE ROLE {clerk} LOGIN")
        conn.commit()
    code, out, err = _cli(
        capsys, "--config", _as(pg_site.url, clerk, tmp_path), "people", "add", dora, "--role", "operator"
    )
    assert code == errors.NotPermitted.exit_code, err
    assert "may not create logins (PostgreSQL: CREATEROLE" in err and "nothing was changed" in err
    assert f"--db-user {dora}" in err and _roles(pg_site.engine, dora) == {}
    assert f'CREATE ROLE "{dora}" LOGIN PASSWORD' in out or f"CREATE ROLE {dora} LOGIN PASSWORD" in out
    with pg_site.engine.connect() as conn:  # the administrator runs it as printed
        for statement in out.split(";\n"):
            if statement.strip():
                conn.exec_driver_sql(statement)
        conn.commit()
    code, out, err = _cli(
        capsys, "--config", _as(pg_site.url, dora, tmp_path), "--user", dora, "--json", "next", "cases"
    )
    assert code == 0 and out["owner"] == dora, err


# == MariaDB: accounts and privileges; SQL Server: the script ======================================


def test_people_on_mariadb(
    mariadb_server: servers.Server, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"wbt_{uuid.uuid4().hex[:12]}"
    mariadb_server.create_database(name)
    env = support.Env("mariadb", "native", mariadb_server.url(name), tmp_path)
    try:
        env.demo(case_rows=4, import_rows=1)
        owner = env.demo_config_file()
        alice, sue = f"alice_{_suffix()}", f"sue_{_suffix()}"
        code, out, err = _cli(
            capsys, "--config", owner, "--json", "people", "add", alice, "--role", "operator", "--queues", "cases"
        )
        assert code == 0 and out["applied"] and out["password"], err
        assert "--kind mariadb" in out["profile"] and f"--db-user {alice}" in out["profile"]
        code, _, err = _cli(capsys, "--config", owner, "--json", "people", "add", sue, "--role", "supervisor")
        assert code == 0, err
        # alice's account, with her password, works the queue and nothing else of it is needed.
        monkeypatch.setenv("WORKBENCH_DB_PASSWORD", out["password"])
        mine = _as(env.url, alice, tmp_path)
        code, claimed, err = _cli(capsys, "--config", mine, "--user", alice, "--json", "next", "cases")
        assert code == 0 and claimed["owner"] == alice, err
        code, _, err = _cli(
            capsys,
            "--config",
            mine,
            "--user",
            alice,
            "complete",
            "cases",
            claimed["key"],
            "--token",
            claimed["token"],
            "--outcome",
            "resolved",
            "--note",
            "done",
        )
        assert code == 0, err
        monkeypatch.delenv("WORKBENCH_DB_PASSWORD")
        code, listed, err = _cli(capsys, "--config", owner, "--json", "people", "list")
        assert code == 0, err
        by_name = {p["name"]: p for p in listed}
        assert by_name[alice] == {"name": alice, "role": "operator", "queues": ["cases"], "problems": [], "ready": True}
        assert by_name[sue]["role"] == "supervisor" and "cases" in by_name[sue]["queues"]
        code, out, err = _cli(capsys, "--config", owner, "people", "remove", alice)
        assert code == 0, err
        code, listed, err = _cli(capsys, "--config", owner, "--json", "people", "list")
        assert alice not in {p["name"] for p in listed}
        with env.engine.connect() as conn:
            assert conn.execute(sa.text("SELECT count(*) FROM mysql.user WHERE User = :u"), {"u": alice}).scalar() == 0
        _cli(capsys, "--config", owner, "people", "remove", sue)
    finally:
        env.close()
        mariadb_server.drop_database(name)


def test_people_on_sql_server_is_a_script(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "erp.toml"
    config.write_text(
        '[database]\nurl = "mssql+pyodbc://app@erp01/sales?driver=ODBC+Driver+18+for+SQL+Server"\n\n'
        '[queues.orders]\ntable = "orders"\nkey = "id"\ntodo = { status = "new" }\n'
        'outcomes.done.set = { status = "done" }\n',
        encoding="utf-8",
    )
    code, out, err = _cli(capsys, "--config", config, "people", "add", "alice", "--role", "supervisor")
    assert code == 0, err
    assert "CREATE LOGIN alice WITH PASSWORD = N'" in out
    assert "CREATE USER alice FOR LOGIN alice;" in out
    assert "ALTER ROLE workbench_supervisor ADD MEMBER alice;" in out
    assert "review this and run it as an administrator" in err and "--kind sqlserver" in err
    assert "--odbc-driver 'ODBC Driver 18 for SQL Server' --queues" in err
    code, out, err = _cli(capsys, "--config", config, "people", "add", "bob", "--role", "operator", "--no-password")
    assert code == 0 and "CREATE LOGIN bob FROM WINDOWS;" in out
    code, out, err = _cli(capsys, "--config", config, "people", "remove", "bob")
    assert code == 0 and "DROP LOGIN bob;" in out
    code, _, err = _cli(capsys, "--config", config, "people", "add", "a.b", "--role", "operator")
    assert code == 0 and "CREATE USER [a.b] FOR LOGIN [a.b];" in _, err
    code, _, err = _cli(capsys, "--config", config, "people", "list")
    assert code == 2 and "sys.database_role_members" in err


# == Issue 47, hole 6: an operator lifts his own idle-transaction limit ============================


def _idle(engine: sa.Engine, login: str) -> str | None:
    settings = str(_roles(engine, login).get("settings") or "")
    found = [s.split("=", 1)[1] for s in settings.split(",") if s.startswith("idle_in_transaction_session_timeout=")]
    return found[0] if found else None


def test_grants_puts_back_the_limit_an_operator_lifted_for_himself(
    pg_site: support.Env, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    owner = pg_site.demo_config_file()
    bob, eve = f"bob_{_suffix()}", f"eve_{_suffix()}"
    for who in (bob, eve):
        code, _, err = _cli(capsys, "--config", owner, "people", "add", who, "--role", "operator", "--no-password")
        assert code == 0, err
    bobs = sa.create_engine(sa.make_url(pg_site.url).set(username=bob))
    try:
        with bobs.begin() as conn:  # from his own login: no privilege forbids it
            conn.exec_driver_sql(f"ALTER ROLE {bob} SET idle_in_transaction_session_timeout = 0")
    finally:
        bobs.dispose()
    with pg_site.engine.begin() as conn:  # a longer one is a lifted limit too
        conn.exec_driver_sql(f"ALTER ROLE {eve} SET idle_in_transaction_session_timeout = '2h'")
    assert _idle(pg_site.engine, bob) == "0" and _idle(pg_site.engine, eve) == "2h"
    code, listed, err = _cli(capsys, "--config", owner, "--json", "people", "list")
    lifted = {p["name"]: p for p in listed}
    assert not lifted[bob]["ready"] and "= 0" in lifted[bob]["problems"][0], lifted[bob]
    assert not lifted[eve]["ready"] and "= 2h" in lifted[eve]["problems"][0]
    code, _, err = _cli(capsys, "--config", owner, "grants", "cases", "--apply")
    assert code == 0, err
    assert _idle(pg_site.engine, bob) == permissions.IDLE_IN_TRANSACTION == _idle(pg_site.engine, eve)
    code, listed, err = _cli(capsys, "--config", owner, "--json", "people", "list")
    assert all(p["ready"] for p in listed if p["name"] in (bob, eve)), listed


def test_a_supervisor_sees_and_ends_a_session_that_hides_items(
    pg_site: support.Env, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Hole 6 bounded: whatever bob does to his own limit, a supervisor sees his open transaction and ends it.
    owner = pg_site.demo_config_file()
    bob, sue = f"bob_{_suffix()}", f"sue_{_suffix()}"
    for who, role in ((bob, "operator"), (sue, "supervisor")):
        code, _, err = _cli(capsys, "--config", owner, "people", "add", who, "--role", role, "--no-password")
        assert code == 0, err
    sues = _as(pg_site.url, sue, tmp_path)
    bobs = sa.create_engine(sa.make_url(pg_site.url).set(username=bob))
    try:
        conn = bobs.connect()
        conn.exec_driver_sql("SET idle_in_transaction_session_timeout = 0")  # for his session: allowed
        conn.exec_driver_sql("SELECT case_id FROM cases WHERE wb_locked_by IS NULL FOR UPDATE").all()
        pid = conn.exec_driver_sql("SELECT pg_backend_pid()").scalar()
        code, out, err = _cli(capsys, "--config", sues, "--json", "people", "sessions")
        assert code == 0 and not out["sees_every_login"] and "pg_read_all_stats, pg_signal_backend" in err
        code, _, err = _cli(capsys, "--config", sues, "people", "sessions", "--end", str(pid))
        assert code == 2 and "no session" in err  # not visible to her yet
        with pg_site.engine.begin() as admin:  # the administrator, as docs/setup/grants.md says
            admin.exec_driver_sql(people.SESSION_GRANTS)
        try:
            code, out, err = _cli(capsys, "--config", sues, "--json", "people", "sessions")
            assert code == 0 and out["sees_every_login"], err
            held = [s for s in out["sessions"] if s["pid"] == pid]
            assert held and held[0]["login"] == bob and held[0]["tables"] == ["cases"], out
            code, out, err = _cli(capsys, "--config", sues, "people", "sessions", "--end", str(pid))
            assert code == 0 and f"ended session {pid} of {bob}" in out, err
        finally:
            with pg_site.engine.begin() as admin:
                admin.exec_driver_sql("REVOKE pg_read_all_stats, pg_signal_backend FROM workbench_supervisor")
        with pytest.raises(sa.exc.DBAPIError):
            conn.exec_driver_sql("SELECT 1")
    finally:
        bobs.dispose()
    code, out, err = _cli(capsys, "--config", sues, "--user", sue, "--json", "next", "cases")
    assert code == 0 and out["owner"] == sue, err
