"""The per-test demo databases copied from a template (support.Env.copy_template) on PostgreSQL (used directly
and through PgBouncer) and MariaDB: a copy of a template built minutes before, its rows moved on by those minutes
(support.age_demo), is the database the test would have built now, and a database a test already made something
in is never replaced. The README's SQLite demo copied from one built earlier in the run (support.sqlite_demo)
likewise."""

from __future__ import annotations

import contextlib
import datetime as dt
import filecmp
import functools
import os
import sqlite3
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from tests import servers, support
from tests.pooled import PooledEnv
from workbench import demo
from workbench.demo import data

# What a database holds, as a test could tell: its tables' rows, indexes, functions, triggers and policies.
_CATALOG = {
    "indexes": "SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1",
    "functions": (
        "SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
        "WHERE n.nspname = 'public' ORDER BY 1"
    ),
    "triggers": "SELECT tgname FROM pg_trigger WHERE NOT tgisinternal ORDER BY 1",
    "policies": "SELECT policyname, qual FROM pg_policies ORDER BY 1",
}


def _contents(url: str) -> dict[str, Any]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            found: dict[str, Any] = {k: conn.exec_driver_sql(q).all() for k, q in _CATALOG.items()}
            metadata = sa.MetaData()
            metadata.reflect(conn)
            for table in metadata.sorted_tables:
                if table.name == "workbench_schema_version":  # applied_at: when the migrations ran
                    continue
                found[table.name] = conn.execute(sa.select(table).order_by(*table.primary_key.columns)).all()
    finally:
        engine.dispose()
    return found


def _dropped_after(server: servers.Server) -> Iterator[list[str]]:
    """The names of the test's databases on `server` (_env adds them), dropped after the test."""
    names: list[str] = []
    yield names
    for name in names:
        server.drop_database(name)


@pytest.fixture
def databases(pg_server: servers.Server) -> Iterator[list[str]]:
    yield from _dropped_after(pg_server)


def _env(server: servers.Server, databases: list[str], tmp: Path, copies: bool, method: str = "native") -> support.Env:
    """An env on a new database of `server` (its backend: the server's kind), copying templates if `copies`."""
    name = f"wbt_{uuid.uuid4().hex[:12]}"
    server.create_database(name)
    databases.append(name)
    return support.Env(server.kind, method, server.url(name), tmp, server if copies else None)


@contextlib.contextmanager
def _minutes_ago(monkeypatch: pytest.MonkeyPatch, minutes: int = 7) -> Iterator[dt.datetime]:
    """Inside, the demo's rows count from `minutes` before the current minute, and so do the templates' builds:
    what is built there is what was built that long ago."""
    then = support._minute() - dt.timedelta(minutes=minutes)
    with monkeypatch.context() as patched:
        patched.setattr(support, "_minute", lambda: then)
        patched.setattr(data, "cases", functools.partial(data.cases, now=then.replace(tzinfo=None)))
        yield then


def _demo(env: support.Env) -> None:
    env.demo(case_rows=7, import_rows=4)


def _copied_and_built(
    server: servers.Server | support.SqliteFiles,
    monkeypatch: pytest.MonkeyPatch,
    make: Callable[[str, bool], support.Env],
    made: Callable[[support.Env], object] = _demo,
) -> tuple[support.Env, support.Env]:
    """Two databases in one minute, from make(tag, copies) and made(env) (the demo): one copied from a template
    built seven minutes before (kept for the run), one built; both closed."""
    server._templates.clear()  # none built earlier in the run: this test's is seven minutes old
    with _minutes_ago(monkeypatch):
        early = make("early", True)
        made(early)
        early.close()
    held = dict(server._templates)
    assert held, "no template was made: the demo was not copied"
    for attempt in range(3):  # both in one minute: the demo's rows count back from it
        copied, built = make(f"copied{attempt}", True), make(f"built{attempt}", False)
        minute = support._minute()
        made(copied)
        made(built)
        if support._minute() == minute:
            break
    copied.close()
    built.close()
    assert server._templates == held, "the template was built again, not copied and moved on"
    return copied, built


def _either_method(
    server: servers.Server, databases: list[str], tmp: Path, contents: Callable[[str], Any]
) -> tuple[Any, ...]:
    """The demo copied by a native and then a portable env (one template, the first one's build), and built by
    each, in one minute: what contents(database name) finds in each, in that order."""
    server._templates.clear()
    for attempt in range(3):
        made = [
            _env(server, databases, tmp / f"{method}-{copies}-{attempt}", copies, method)
            for copies in (True, False)
            for method in ("native", "portable")
        ]
        minute = support._minute()
        for env in made:
            _demo(env)
            env.close()
        if support._minute() == minute:
            break
    assert len(server._templates) == 1, f"a template per claim method: {list(server._templates)}"
    return tuple(contents(databases[i]) for i in range(-4, 0))


def test_either_claim_method_copies_the_one_demo_it_would_build(
    pg_server: servers.Server, databases: list[str], tmp_path: Path
) -> None:
    """The demo does not depend on the claim method (read at the first claim): the portable tests copy the
    template a native test's build made (support.Env.demo_by_method), which is what they would build."""
    if not pg_server.templates():
        pytest.skip("this PostgreSQL keeps no templates (WORKBENCH_TEST_PG)")
    found = _either_method(pg_server, databases, tmp_path, lambda name: _contents(pg_server.url(name)))
    assert found[0] == found[1] == found[2] == found[3]
    assert len(found[0]["cases"]) == 7


def _databases(server: servers.Server, like: str = "%") -> list[str]:
    engine = sa.create_engine(server.admin_url())
    try:
        with engine.connect() as conn:
            return list(
                conn.execute(
                    sa.text("SELECT datname FROM pg_database WHERE datname LIKE :like ORDER BY 1"), {"like": like}
                ).scalars()
            )
    finally:
        engine.dispose()


def _templates(server: servers.Server) -> list[str]:
    return _databases(server, "wbtpl%")


def test_a_copied_demo_is_the_demo_built(
    pg_server: servers.Server, databases: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not pg_server.templates():
        pytest.skip("this PostgreSQL keeps no templates (WORKBENCH_TEST_PG)")
    copied, built = _copied_and_built(
        pg_server, monkeypatch, lambda tag, copies: _env(pg_server, databases, tmp_path / tag, copies)
    )
    assert _templates(pg_server), "no template was made: the demo was not copied"
    assert _contents(copied.url) == _contents(built.url)


def test_a_copied_granted_demo_is_the_one_built(
    pg_server: servers.Server,
    databases: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """tests/test_permissions.py's `pg` fixture: the demo with the owner's `grants cases --apply` (row rules,
    their trigger and functions), copied and moved on, is the one built now."""
    from tests import test_permissions

    if not pg_server.templates():
        pytest.skip("this PostgreSQL keeps no templates (WORKBENCH_TEST_PG)")

    def make(tag: str, copies: bool) -> support.Env:
        (tmp_path / tag).mkdir()  # _granted writes the owner's config there
        return _env(pg_server, databases, tmp_path / tag, copies)

    def made(env: support.Env) -> None:
        assert test_permissions.granted_copy(env, capsys) == (env.server is not None)
        if env.server is None:
            test_permissions._granted(env, capsys)

    copied, built = _copied_and_built(pg_server, monkeypatch, make, made)
    found = _tables_named(copied.url)
    assert found == _tables_named(built.url)
    assert found["policies"] and found["triggers"] and found["workbench_enforced"], "not the granted demo"


def _tables_named(url: str) -> dict[str, Any]:
    """_contents, the table OIDs in workbench_enforced (the queues the database enforces) given as the tables'
    names: a copy's tables keep their template's OIDs, each database's its own."""
    found = _contents(url)
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            names = dict(conn.exec_driver_sql("SELECT oid::bigint, relname::text FROM pg_class").all())
    finally:
        engine.dispose()
    found["workbench_enforced"] = [
        tuple(names.get(value, value) if type(value) is int else value for value in row)
        for row in found["workbench_enforced"]
    ]
    return found


def _built_not_replaced(env: support.Env) -> None:
    """A database with a table of the test's own in it: the demo is built in it, not copied over it."""
    with env.engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE mine (x int)")
    assert not env.copy_template(("test_templates", "never built"), lambda e: pytest.fail("built"))
    wb = env.demo(case_rows=2, import_rows=1)
    with wb.engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM mine").scalar() == 0
        assert conn.exec_driver_sql("SELECT count(*) FROM cases").scalar() == 2
    env.close()


def test_a_database_with_something_in_it_is_built_not_replaced(
    pg_server: servers.Server, databases: list[str], tmp_path: Path
) -> None:
    env = _env(pg_server, databases, tmp_path, True)
    _built_not_replaced(env)


def test_nobody_connects_to_a_template(pg_server: servers.Server, databases: list[str], tmp_path: Path) -> None:
    if not pg_server.templates():
        pytest.skip("this PostgreSQL keeps no templates (WORKBENCH_TEST_PG)")
    env = _env(pg_server, databases, tmp_path, True)
    env.demo(case_rows=2, import_rows=1)
    env.close()
    template = _templates(pg_server)[0]
    engine = sa.create_engine(pg_server.url(template))
    try:
        with pytest.raises(sa.exc.OperationalError, match="not currently accepting connections"), engine.connect():
            pass
    finally:
        engine.dispose()


def test_the_tests_postgresql_keeps_its_files_in_memory(pg_server: servers.Server) -> None:
    """Its template copies cost about 230 ms of kernel time each on this machine's disk, 12-17 ms in memory
    (docs/develop/tests.md); the memory folder, where usable, unless WORKBENCH_TEST_SERVERS_IN_MEMORY=0."""
    if pg_server.external:
        pytest.skip("a server given by WORKBENCH_TEST_PG keeps its files where it does")
    wanted = os.environ.get("WORKBENCH_TEST_SERVERS_IN_MEMORY", "1") != "0" and servers._ram_usable()
    engine = sa.create_engine(pg_server.admin_url())
    try:
        with engine.connect() as conn:
            data = Path(str(conn.exec_driver_sql("SHOW data_directory").scalar()))
    finally:
        engine.dispose()
    assert data.is_relative_to(servers.RAM_FOLDER) is wanted, data


def test_the_empty_database_a_copy_replaced_is_the_next_one_created(
    pg_server: servers.Server, databases: list[str], tmp_path: Path
) -> None:
    """On PostgreSQL the pristine database a copy takes the place of is kept (Server.replace) and renamed into
    use by the next create_database, not created again; one somebody is connected to is dropped instead."""
    if not pg_server.templates():
        pytest.skip("this PostgreSQL keeps no templates (WORKBENCH_TEST_PG)")
    env = _env(pg_server, databases, tmp_path, True)
    env.demo(case_rows=2, import_rows=1)
    env.close()
    spares = list(pg_server._spares)
    assert spares, "the replaced database was not kept"
    taken = _env(pg_server, databases, tmp_path / "next", True)
    assert pg_server._spares == spares[:-1]
    assert spares[-1] not in _databases(pg_server) and pg_server.pristine(sa.make_url(taken.url).database or "")
    busy = _env(pg_server, databases, tmp_path / "busy", True)
    template = pg_server._templates[("Env", "postgresql", "either", ("demo", 2, 1, "None"))][0]
    with busy.engine.connect():  # a session on it: the rename fails, the copy replaces it all the same
        pg_server.replace(sa.make_url(busy.url).database or "", template)
    busy.engine.dispose()
    assert pg_server._spares == spares[:-1]
    with busy.engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM cases").scalar() == 2
    busy.close()
    taken.close()
    again = _env(pg_server, databases, tmp_path / "again", True)
    again.demo(case_rows=2, import_rows=1)
    again.close()
    assert pg_server._spares
    for spare in pg_server._spares:  # dropped by someone else (a test that empties the server)
        pg_server.drop_database(spare)
    made = _env(pg_server, databases, tmp_path / "made", True)
    assert not pg_server._spares and pg_server.pristine(sa.make_url(made.url).database or "")


def test_a_copied_pooled_demo_is_the_demo_built(
    pg_server: servers.Server,
    pgbouncer: servers.PgBouncer,
    databases: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Through PgBouncer: the template built through the pooler (its claim functions made for a pooled
    config, as the test's own build would), copied on the server behind it."""
    if not pg_server.templates():
        pytest.skip("this PostgreSQL keeps no templates (WORKBENCH_TEST_PG)")

    def make(tag: str, copies: bool) -> PooledEnv:
        name = f"wbt_{uuid.uuid4().hex[:12]}"
        pg_server.create_database(name)
        databases.append(name)
        return PooledEnv(pgbouncer, name, tmp_path / tag, templates=copies)

    copied, built = _copied_and_built(pg_server, monkeypatch, make)
    assert isinstance(copied, PooledEnv) and isinstance(built, PooledEnv)
    templates = _templates(pg_server)
    assert templates, "no template was made: the demo was not copied"
    assert _contents(copied.direct_url) == _contents(built.direct_url)
    assert _contents(copied.direct_url)["functions"], "no claim function: not the pooled build"
    # The pooler let the template go (a database with sessions cannot be copied) and keeps away from it.
    servers_shown = pgbouncer.console("SHOW SERVERS")
    held = {row[2] for row in servers_shown}  # type, user, database, …
    assert not held & set(templates), held
    # The copy's pool holds its sessions at once, as the build through the pooler left them, so its
    # transactions are lent in turn on several (all on one, what relies on a session would pass).
    assert pgbouncer.in_turn > 1
    on_copy = [row for row in servers_shown if row[2] == copied.database]
    assert len(on_copy) >= pgbouncer.in_turn, on_copy


@pytest.fixture
def maria_databases(mariadb_server: servers.Server) -> Iterator[list[str]]:
    yield from _dropped_after(mariadb_server)


def _maria_contents(server: servers.Server, name: str) -> dict[str, Any]:
    """What a MariaDB database holds, as a test could tell: each table's definition (columns, keys, foreign
    keys, options, the AUTO_INCREMENT counter) and rows, its defaults, and whatever else it holds (views,
    triggers, routines, events, grants: Server._not_tables)."""
    engine = sa.create_engine(server.url(name))
    try:
        with engine.connect() as conn:
            found: dict[str, Any] = {
                "database": conn.exec_driver_sql(
                    "SELECT default_character_set_name, default_collation_name FROM information_schema.schemata "
                    "WHERE schema_name = DATABASE()"
                ).all(),
                "other": server._not_tables(name),
                "columns": conn.exec_driver_sql(
                    "SELECT table_name, column_name, ordinal_position, column_default, is_nullable, column_type, "
                    "collation_name, extra, column_comment FROM information_schema.columns "
                    "WHERE table_schema = DATABASE() ORDER BY 1, 3"
                ).all(),
            }
            metadata = sa.MetaData()
            metadata.reflect(conn)
            for table in metadata.sorted_tables:
                # Its lines sorted: two builds in one process may create a table's indexes in another order.
                created = conn.exec_driver_sql(f"SHOW CREATE TABLE `{table.name}`").one()[1]
                found["create " + table.name] = sorted(line.rstrip(",") for line in str(created).splitlines())
                if table.name == "workbench_schema_version":  # applied_at: when the migrations ran
                    continue
                found[table.name] = conn.execute(sa.select(table).order_by(*table.primary_key.columns)).all()
    finally:
        engine.dispose()
    return found


def test_a_copied_mariadb_demo_is_the_demo_built(
    mariadb_server: servers.Server, maria_databases: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not mariadb_server.templates():
        pytest.skip("this MariaDB keeps no templates (WORKBENCH_TEST_MARIADB)")
    _copied_and_built(
        mariadb_server,
        monkeypatch,
        lambda tag, copies: _env(mariadb_server, maria_databases, tmp_path / tag, copies),
    )
    found = _maria_contents(mariadb_server, maria_databases[-2])
    assert found == _maria_contents(mariadb_server, maria_databases[-1])
    assert len(found["cases"]) == 7 and found["columns"]


def test_either_claim_method_copies_the_one_mariadb_demo_it_would_build(
    mariadb_server: servers.Server, maria_databases: list[str], tmp_path: Path
) -> None:
    if not mariadb_server.templates():
        pytest.skip("this MariaDB keeps no templates (WORKBENCH_TEST_MARIADB)")
    found = _either_method(
        mariadb_server, maria_databases, tmp_path, functools.partial(_maria_contents, mariadb_server)
    )
    assert found[0] == found[1] == found[2] == found[3]
    assert len(found[0]["cases"]) == 7


def test_a_mariadb_database_with_something_in_it_is_built_not_replaced(
    mariadb_server: servers.Server, maria_databases: list[str], tmp_path: Path
) -> None:
    env = _env(mariadb_server, maria_databases, tmp_path, True)
    _built_not_replaced(env)


def test_a_mariadb_template_holds_tables_only(
    mariadb_server: servers.Server, maria_databases: list[str], tmp_path: Path
) -> None:
    """A view (or trigger, routine, event, grant) would not be copied table by table: such a template is
    refused, not copied without it."""
    if not mariadb_server.templates():
        pytest.skip("this MariaDB keeps no templates (WORKBENCH_TEST_MARIADB)")
    env = _env(mariadb_server, maria_databases, tmp_path, True)

    def build(built: support.Env) -> None:
        with built.engine.begin() as conn:
            conn.exec_driver_sql("CREATE TABLE t (x int)")
            conn.exec_driver_sql("CREATE VIEW v AS SELECT x FROM t")

    with pytest.raises(RuntimeError, match="views"):
        env.copy_template(("test_templates", "a view"), build)
    env.close()


def _sqlite_dump(path: Path) -> list[str]:
    """The SQLite database's schema and rows, but the migrations' times (applied_at: when they ran), sorted (two
    builds in one process may create the audit table's indexes in another order)."""
    conn = sqlite3.connect(path)
    try:
        return sorted(line for line in conn.iterdump() if not line.startswith('INSERT INTO "workbench_schema_version"'))
    finally:
        conn.close()


def test_a_copied_sqlite_demo_is_the_demo_built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    support.remove_templates()  # none built earlier in the run: this test's is seven minutes old
    with _minutes_ago(monkeypatch) as then:
        support.sqlite_demo(tmp_path / "early")  # built
    for _ in range(3):
        minute = support._minute()
        built = demo.create(tmp_path / f"built{minute:%H%M}")
        copied = support.sqlite_demo(tmp_path / f"copied{minute:%H%M}")  # copied, its rows moved on
        if support._minute() == minute:
            break
    else:
        pytest.skip("three minutes turned while building")
    assert support._SQLITE_DEMO["held"][0] == then, "the demo was built again, not copied and moved on"
    assert _sqlite_dump(copied.parent / demo.DB_NAME) == _sqlite_dump(built.parent / demo.DB_NAME)
    assert len(_sqlite_dump(built.parent / demo.DB_NAME)) > 500  # the rows are there
    assert copied.read_text(encoding="utf-8") == built.read_text(encoding="utf-8") == demo.config_text()
    scans = filecmp.dircmp(built.parent / "scans", copied.parent / "scans")
    assert scans.left_list == scans.right_list and not scans.diff_files and scans.left_list
    assert sorted(p.name for p in copied.parent.iterdir()) == sorted(p.name for p in built.parent.iterdir())
    with pytest.raises(Exception, match="already exists"):  # a folder with a demo in it: as demo.create
        support.sqlite_demo(copied.parent)
    # The scans are hard links to the held demo's; `demo --force` over the copy writes new files, so the held
    # demo's scans (the next copies') stay as they were.
    scan = sorted((copied.parent / "scans").iterdir())[0]
    held = support._SQLITE_DEMO["held"][1] / "scans" / scan.name
    assert scan.stat().st_ino == held.stat().st_ino
    before = held.read_bytes()
    held.write_bytes(b"not what demo.create writes")  # what a write into the shared file would leave there
    demo.create(copied.parent, overwrite=True)
    assert scan.read_bytes() != b"not what demo.create writes" and scan.stat().st_ino != held.stat().st_ino
    assert held.read_bytes() == b"not what demo.create writes"  # untouched by the copy's --force
    held.write_bytes(before)


def _sqlite_env(tmp: Path, copies: bool) -> support.Env:
    tmp.mkdir(parents=True)
    files = support.SQLITE_FILES if copies else None
    return support.Env("sqlite", "native", f"sqlite:///{tmp / 'test.db'}", tmp, files)


def test_a_copied_sqlite_env_demo_is_the_demo_built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The env fixture's demo on SQLite: the template's file copied (support.SqliteFiles), its rows moved on."""
    copied, built = _copied_and_built(
        support.SQLITE_FILES, monkeypatch, lambda tag, copies: _sqlite_env(tmp_path / tag, copies)
    )
    found = _sqlite_dump(Path(str(sa.make_url(copied.url).database)))
    assert found == _sqlite_dump(Path(str(sa.make_url(built.url).database)))
    assert sum(line.startswith('INSERT INTO "cases"') for line in found) == 7


def test_a_sqlite_database_with_something_in_it_is_built_not_replaced(tmp_path: Path) -> None:
    env = _sqlite_env(tmp_path / "mine", True)
    _built_not_replaced(env)
