"""Who may supervise: PostgreSQL roles and row-level security with real logins; the roles table elsewhere."""

from __future__ import annotations

import contextlib
import dataclasses
import tomllib
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from tests import servers, support
from workbench import demo
from workbench.config import loader, model
from workbench.core import errors
from workbench.db import clock, migrations, permissions, pg_grants, published, service, tables
from workbench.db.supervision import Supervision

OPERATORS = ("ann", "bob")
SUPERVISORS = ("sue",)
FEEDER = "feeder"  # a login of another application, not a workbench operator


_cli = support.run_cli


# == PostgreSQL: the database decides =============================================================


@dataclasses.dataclass
class Pg:
    """A demo database under `workbench grants`, and workbenches logged in as real database logins."""

    server: servers.Server
    url: str  # as the superuser, who owns the tables
    env: support.Env
    admin: service.Workbench
    tmp: Path
    engines: list[sa.Engine] = dataclasses.field(default_factory=list)

    def url_as(self, login: str) -> str:
        return sa.make_url(self.url).set(username=login).render_as_string(hide_password=False)

    def config(self, login: str, text: str | None = None) -> model.Config:
        body = (text or demo.config_text("{url}")).replace("{url}", self.url_as(login))
        return loader.parse(tomllib.loads(body), "test.toml")

    def open(self, login: str, text: str | None = None) -> service.Workbench:
        return self.env.open(self.config(login, text))

    def engine(self, login: str) -> sa.Engine:
        engine = sa.create_engine(self.url_as(login))
        self.engines.append(engine)
        return engine

    def config_file(self, login: str) -> Path:
        path = self.tmp / f"{login}.toml"
        path.write_text(demo.config_text(self.url_as(login)), encoding="utf-8")
        return path

    def imports_enforced(self, capsys: pytest.CaptureFixture[str]) -> None:
        """`workbench grants` for the demo's imports and its review queue, every line waiting to be verified."""
        config = self.config_file(self.server.user)
        for queue in ("imports", "imports_review"):
            code, _, err = _cli(capsys, "--config", config, "grants", queue, "--apply")
            assert code == 0, err
        with self.admin.engine.begin() as conn:
            conn.execute(
                sa.text("UPDATE import_rows SET check_status = 'pending', checked_by = NULL, checked_at = NULL")
            )


def _logins(admin_url: str) -> None:
    """LOGIN roles for people (trust authentication on the test server): operators and a supervisor."""
    engine = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT")
    q = engine.dialect.identifier_preparer.quote
    try:
        with engine.connect() as conn:
            for name in (*OPERATORS, *SUPERVISORS, FEEDER):
                if conn.execute(sa.text("SELECT 1 FROM pg_roles WHERE rolname = :n"), {"n": name}).first() is None:
                    conn.exec_driver_sql(f"CREATE ROLE {q(name)} LOGIN")
            for name in OPERATORS:
                conn.exec_driver_sql(f"GRANT {permissions.OPERATOR_ROLE} TO {q(name)}")
                conn.exec_driver_sql(f"REVOKE {permissions.SUPERVISOR_ROLE} FROM {q(name)}")
            for name in SUPERVISORS:
                conn.exec_driver_sql(f"GRANT {permissions.SUPERVISOR_ROLE} TO {q(name)}")
    finally:
        engine.dispose()


def _granted(env: support.Env, capsys: pytest.CaptureFixture[str]) -> service.Workbench:
    """The demo (12 cases, 3 import lines) in env's database, and the owner's `workbench grants cases --apply`
    on it, as an administrator would run it; returns the owner's workbench."""
    admin = env.build_demo(case_rows=12, import_rows=3)
    config = env.tmp / "owner.toml"
    config.write_text(demo.config_text(env.url), encoding="utf-8")
    code, _, err = _cli(capsys, "--config", config, "grants", "cases", "--apply")
    assert code == 0, err
    return admin


def granted_copy(env: support.Env, capsys: pytest.CaptureFixture[str]) -> bool:
    """Whether env's database was made what _granted makes of it by copying a template database made so
    (support.Env.copy_template: its rows moved on by the minutes since, tests/test_templates.py)."""
    return env.copy_template("test_permissions.pg", lambda built: _granted(built, capsys), support.age_demo)


# The statements of `grants cases --apply` that change the server, not its database: the same for every
# database of the demo (role names and settings only), planned once.
_SERVER_WIDE: list[Any] = []


def _server_wide_grants(env: support.Env) -> None:
    """What `grants cases --apply` changes outside its database, for every test as before: the roles
    (workbench_operator, workbench_supervisor a member of it) and the operator logins' idle-transaction
    limit belong to the server, where a test before may have changed them (a template database holds
    only what is in it)."""
    if not _SERVER_WIDE:
        with service.Workbench.open(env.demo_config()) as wb, wb.engine.connect() as conn:
            planned = pg_grants.plan(conn, wb.queue("cases").q, None)
        _SERVER_WIDE.extend(s for s in planned if "CREATE ROLE" in str(s) or "ALTER ROLE" in str(s))
        assert len(_SERVER_WIDE) == 2, _SERVER_WIDE  # the roles, the logins' idle-transaction limit
    with env.engine.begin() as conn:
        for statement in _SERVER_WIDE:
            conn.execute(statement)


@pytest.fixture
def pg(pg_server: servers.Server, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Iterator[Pg]:
    with granted_demo(pg_server, tmp_path, capsys) as setup:
        yield setup


@contextlib.contextmanager
def granted_demo(pg_server: servers.Server, tmp_path: Path, capsys: Any) -> Iterator[Pg]:
    """The `pg` fixture's database, for as long as the block runs (`capsys`: anything with its readouterr)."""
    name = f"wbt_{uuid.uuid4().hex[:12]}"
    pg_server.create_database(name)
    url = pg_server.url(name)
    env = support.Env("postgresql", "native", url, tmp_path, pg_server)
    if granted_copy(env, capsys):
        _server_wide_grants(env)
        admin = env.open(env.demo_config())
    else:
        admin = _granted(env, capsys)
    setup = Pg(pg_server, url, env, admin, tmp_path)
    _logins(url)
    try:
        yield setup
    finally:
        for engine in setup.engines:
            engine.dispose()
        env.close()
        pg_server.drop_database(name)


def _row(pg: Pg, key: Any) -> dict[str, Any]:
    return pg.env.row(pg.admin, "cases", key)


def test_grants_prints_the_policies_and_changes_nothing_without_apply(
    pg_server: servers.Server, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = f"wbt_{uuid.uuid4().hex[:12]}"
    pg_server.create_database(name)
    env = support.Env("postgresql", "native", pg_server.url(name), tmp_path)
    try:
        env.demo(case_rows=2, import_rows=1)
        config = env.demo_config_file()
        code, out, err = _cli(capsys, "--config", config, "grants", "cases")
        assert code == 0, err
        assert (
            "CREATE POLICY wb_cases_operator ON cases AS PERMISSIVE FOR UPDATE TO workbench_operator USING "
            "(wb_locked_by IS NULL OR wb_locked_by = CAST(SESSION_USER AS VARCHAR) OR wb_lock_expires IS NULL "
            "OR wb_lock_expires <= timezone('UTC', now())) WITH CHECK (wb_locked_by IS NULL OR "
            "wb_locked_by = CAST(SESSION_USER AS VARCHAR));"
        ) in out, out
        assert (
            "GRANT SELECT, UPDATE (subject, description, category, priority, status, resolution, "
            "time_spent_min, wb_locked_by, wb_locked_at, wb_lock_expires, wb_lock_token) ON cases"
        ) in out
        assert "GRANT INSERT ON workbench_settings TO workbench_supervisor;" in out
        assert "ALTER TABLE cases ENABLE ROW LEVEL SECURITY;" in out and "FORCE" not in out
        assert "own database login" in err and "never for operators" in err
        with env.engine.connect() as conn:  # printed only
            table = sa.Table("cases", sa.MetaData())
            assert not permissions.row_security(conn, table)
        code, data, _ = _cli(capsys, "--config", config, "--json", "grants", "cases", "--apply")
        assert code == 0 and data["applied"] is True and "CREATE POLICY" in data["ddl"]
        with env.engine.connect() as conn:
            assert permissions.row_security(conn, sa.Table("cases", sa.MetaData()))
        # Applying again is harmless (roles, grants and policies are replaced, not doubled).
        assert _cli(capsys, "--config", config, "grants", "cases", "--apply")[0] == 0
    finally:
        env.close()
        pg_server.drop_database(name)


def test_policy_values_are_rendered_by_the_dialect(pg: Pg) -> None:
    """A queue's scope is part of its policy; config values are quoted literals, never pasted text."""
    with pg.admin.engine.begin() as conn:
        conn.exec_driver_sql("ALTER TABLE cases ADD COLUMN kind varchar(20) NOT NULL DEFAULT 'O''Brien 50%%'")
    text = demo.config_text("{url}").replace(
        "[queues.cases.todo]", '[queues.cases.scope]\nkind = "O\'Brien 50%"\n\n[queues.cases.todo]', 1
    )
    bound = pg.open(pg.server.user, text).queue("cases").q
    with pg.admin.engine.begin() as conn:
        pg_grants.apply(conn, pg_grants.plan(conn, bound, None))
        qual = conn.execute(sa.text("SELECT qual FROM pg_policies WHERE policyname = 'wb_cases_operator'")).scalar()
        conn.exec_driver_sql("UPDATE cases SET kind = 'other' WHERE case_id = 1")
    assert "'O''Brien 50%'::text" in qual, qual
    ann = pg.open("ann", text).queue("cases")
    assert ann.claim_next("ann")[0].lock.owner == "ann"
    with pg.engine("ann").begin() as conn:  # outside the queue's scope: not the operator's to change
        assert conn.execute(sa.text("UPDATE cases SET wb_locked_by = NULL WHERE case_id = 1")).rowcount == 0


def test_an_operator_cannot_change_someone_elses_lock_even_by_hand(pg: Pg) -> None:
    ann_wb, bob_wb = pg.open("ann"), pg.open("bob")
    mine = ann_wb.queue("cases").claim_next("ann")[0].lock
    key, token = mine.key, mine.token
    bob = bob_wb.queue("cases")

    # A modified client: bob's own login writes the row directly. The policy hides the row.
    with pg.engine("bob").begin() as conn:
        for values in (
            "wb_locked_by = 'bob'",
            "wb_locked_by = NULL, wb_lock_token = NULL",
            "wb_lock_expires = wb_lock_expires - interval '1 hour'",
            "status = 'resolved'",
        ):
            assert conn.execute(sa.text(f"UPDATE cases SET {values} WHERE case_id = :k"), {"k": key}).rowcount == 0
    # Nor may bob put ann's (or anyone's) name on a free row, or touch a column workbench never writes.
    free = next(r for r in pg.admin.queue("cases").open_items() if r["case_id"] != key)["case_id"]
    for statement in (
        "UPDATE cases SET wb_locked_by = 'ann' WHERE case_id = :k",
        "UPDATE cases SET opened_at = opened_at WHERE case_id = :k",
    ):
        with pytest.raises(sa.exc.ProgrammingError) as refused, pg.engine("bob").begin() as conn:
            conn.execute(sa.text(statement), {"k": free})
        assert any(
            text in str(refused.value)
            for text in ("row-level security", "permission denied", "may not make this change", "may not lock")
        )

    # Through workbench: a clear refusal, not "lock lost".
    with pytest.raises(errors.NotPermitted) as caught:
        Supervision(bob).force_release("bob", key, "mine now")
    assert "workbench_supervisor" in str(caught.value) and "GRANT workbench_supervisor TO bob" in str(caught.value)
    assert caught.value.exit_code == 1 and caught.value.user == "bob"
    with pytest.raises(errors.NotPermitted):
        Supervision(bob).reassign("bob", key, "bob", "mine now")
    # Even passing ann's name and her (leaked) token, bob's login cannot write under her lock.
    for attempt in (
        lambda: bob.save("ann", key, token, {"resolution": "bob was here"}),
        lambda: bob.complete("ann", key, token),
        lambda: bob.release("ann", key, token),
        lambda: bob.extend("ann", key, token),
    ):
        with pytest.raises(errors.NotPermitted, match="ann's lock cannot be used from the database login bob"):
            attempt()
    with pytest.raises(errors.LockLost):
        bob.complete("bob", key, token)
    row = _row(pg, key)
    assert (row["wb_locked_by"], row["wb_lock_token"], row["status"]) == ("ann", token, "open")
    assert row["resolution"] != "bob was here"
    assert [e.kind.value for e in pg.admin.queue("cases").history(key)] == ["claim"]


def test_an_operator_cannot_claim_under_another_name(pg: Pg) -> None:
    ann_login = pg.open("ann").queue("cases")
    with pytest.raises(errors.NotPermitted) as caught:
        ann_login.claim_next("bob")  # ann's login, bob's workbench name
    assert "own database login" in str(caught.value)
    assert not pg.admin.queue("cases").locks()
    # An operator may take over an expired lock, but not hand it to someone else.
    held = pg.open("bob").queue("cases").claim_next("bob")[0].lock
    pg.env.age_lock(pg.admin, "cases", held.key, 16 * 60)
    with pytest.raises(errors.NotPermitted):
        Supervision(ann_login).reassign("ann", held.key, "bob", "keep it")
    assert _row(pg, held.key)["wb_lock_token"] == held.token


def test_a_supervisor_can_force_release_and_reassign(pg: Pg) -> None:
    ann = pg.open("ann").queue("cases")
    sue = pg.open("sue").queue("cases")
    first = ann.claim_next("ann")[0].lock
    removed = Supervision(sue).force_release("sue", first.key, "customer called")
    assert removed.owner == "ann" and _row(pg, first.key)["wb_locked_by"] is None
    with pytest.raises(errors.LockLost) as lost:
        ann.complete("ann", first.key, first.token)
    assert lost.value.cause == "force_released" and lost.value.by == "sue"

    second = ann.claim_next("ann")[0].lock
    moved = Supervision(sue).reassign("sue", second.key, "bob", "ann is away")
    assert moved.owner == "bob" and _row(pg, second.key)["wb_locked_by"] == "bob"
    bob = pg.open("bob").queue("cases")
    bob.complete("bob", second.key, moved.token)
    kinds = [(e.kind.value, e.actor) for e in pg.admin.queue("cases").history(second.key)]
    assert kinds[-4:] == [("claim", "ann"), ("reassign", "sue"), ("claim", "sue"), ("complete", "bob")]


def test_an_operator_keeps_the_whole_cycle_and_takes_over_expired_locks(pg: Pg) -> None:
    ann = pg.open("ann").queue("cases")
    claim = ann.claim_next("ann")[0].lock
    saved = ann.save("ann", claim.key, claim.token, {"resolution": "rebooted", "time_spent_min": "5"})
    longer = ann.extend("ann", claim.key, claim.token)
    assert longer.expires_at >= saved.expires_at
    assert ann.complete("ann", claim.key, claim.token, "waiting").outcome == "waiting"
    again = ann.claim_next("ann")[0].lock
    ann.release("ann", again.key, again.token, "not mine")  # the cool-down row, written and cleaned up
    assert _row(pg, again.key)["wb_locked_by"] is None

    # bob's lock expires; ann may take the item over (the policy reads the database clock).
    bob = pg.open("bob").queue("cases")
    held = bob.claim_next("bob")[0].lock
    with pytest.raises(errors.NothingToClaim):
        ann.claim("ann", held.key)  # still live
    pg.env.age_lock(pg.admin, "cases", held.key, 16 * 60)
    taken = ann.claim("ann", held.key)
    assert taken.lock.owner == "ann" and _row(pg, held.key)["wb_locked_by"] == "ann"
    # An operator's sweep returns expired locks too.
    pg.env.age_lock(pg.admin, "cases", held.key, 16 * 60)
    assert [lock.key for lock in Supervision(bob).sweep("bob")] == [held.key]

    events = [(e.kind.value, e.actor) for e in pg.admin.queue("cases").history(claim.key)]
    assert events == [("claim", "ann"), ("save", "ann"), ("extend", "ann"), ("complete", "ann")]
    assert ("expire", "ann") in [(e.kind.value, e.actor) for e in pg.admin.queue("cases").history(held.key)]


def test_cli_refuses_an_operator_with_exit_code_1(pg: Pg, capsys: pytest.CaptureFixture[str]) -> None:
    ann, bob, sue = (pg.config_file(name) for name in ("ann", "bob", "sue"))
    code, claim, _ = _cli(capsys, "--config", ann, "--user", "ann", "--json", "next", "cases")
    assert code == 0
    key = claim["key"]
    code, _, err = _cli(capsys, "--config", bob, "--user", "bob", "force-release", "cases", key, "--reason", "x")
    assert code == 1 and "bob may not force-release cases" in err and "workbench_supervisor" in err, err
    code, data, _ = _cli(
        capsys, "--config", bob, "--user", "bob", "--json", "reassign", "cases", key, "--to", "bob", "--reason", "x"
    )
    assert code == 1 and data["error"]["type"] == "NotPermitted" and data["error"]["user"] == "bob"
    code, data, _ = _cli(
        capsys, "--config", sue, "--user", "sue", "--json", "force-release", "cases", key, "--reason", "x"
    )
    assert code == 0 and data["released"]["owner"] == "ann"


def test_only_supervisors_publish(pg: Pg) -> None:
    body = loader.queue_settings_text(pg.config_file("sue"))
    with pytest.raises(errors.NotPermitted) as caught:
        published.publish(pg.open("bob").engine, None, body, "bob")
    assert "publish" in str(caught.value) and "workbench_supervisor" in str(caught.value)
    # A modified client skipping the check: the database refuses the INSERT itself.
    with pytest.raises(sa.exc.ProgrammingError, match="permission denied"), pg.engine("bob").begin() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO workbench_settings (version, body, published_by, published_at) "
                "VALUES (1, 'x', 'bob', now())"
            )
        )
    assert published.publish(pg.open("sue").engine, None, body, "sue").version == 1
    assert published.latest(pg.open("ann").engine, None).published_by == "sue"  # operators read them


def test_other_applications_keep_their_access(pg: Pg) -> None:
    """Row-level security must not lock out the program that feeds the queue (a login that is not an operator)."""
    with pg.admin.engine.begin() as conn:
        conn.exec_driver_sql(f"GRANT SELECT, INSERT, UPDATE ON cases TO {FEEDER}")
    ann = pg.open("ann").queue("cases")
    held = ann.claim_next("ann")[0].lock
    with pg.engine(FEEDER).begin() as conn:
        assert conn.execute(sa.text("UPDATE cases SET priority = 1 WHERE case_id = :k"), {"k": held.key}).rowcount == 1
        conn.execute(
            sa.text(
                "INSERT INTO cases (case_id, opened_at, customer, subject, category, priority, status) "
                "SELECT max(case_id) + 1, now(), 'c', 'new one', 'Network', 4, 'new' FROM cases"
            )
        )
    assert pg.env.count(pg.admin, "cases") == 13


def test_legacy_table_without_expiry_column(pg: Pg, capsys: pytest.CaptureFixture[str]) -> None:
    """Shape 2: the policy computes the expiry as lock time + lock_duration, on the database clock."""
    md = sa.MetaData()
    table = sa.Table(
        "legacy_orders",
        md,
        sa.Column("order_no", sa.String(20), primary_key=True),
        sa.Column("customer", sa.String(100), nullable=False),
        sa.Column("note", sa.String(200)),
        sa.Column("processed", sa.Integer, nullable=False),
        sa.Column("lock_user", sa.String(50)),
        sa.Column("lock_time", sa.DateTime),
    )
    md.create_all(pg.admin.engine)
    with pg.admin.engine.begin() as conn:
        conn.execute(
            sa.insert(table), [{"order_no": f"SO-{i}", "customer": f"C{i}", "processed": 0} for i in range(1, 4)]
        )
    text = support.sample_config("legacy-orders")
    path = pg.tmp / "legacy.toml"
    path.write_text(text.replace("{url}", pg.url), encoding="utf-8")
    code, out, err = _cli(capsys, "--config", path, "grants", "orders", "--apply")
    assert code == 0, err
    assert "lock_time <= (timezone('UTC', now()) + make_interval(secs => -1200))" in out, out

    owner = pg.open(pg.server.user, text)  # the table's owner: not bound by the policies
    ann = pg.open("ann", text).queue("orders")
    bob = pg.open("bob", text).queue("orders")
    held = ann.claim_next("ann")[0].lock
    with pg.engine("bob").begin() as conn:
        assert (
            conn.execute(
                sa.text("UPDATE legacy_orders SET lock_user = 'bob' WHERE order_no = :k"), {"k": held.key}
            ).rowcount
            == 0
        )
    with pytest.raises(errors.NotPermitted):
        Supervision(bob).force_release("bob", held.key, "x")
    pg.env.age_lock(owner, "orders", held.key, 19 * 60)  # 19 of 20 minutes: still ann's
    with pg.engine("bob").begin() as conn:
        assert (
            conn.execute(
                sa.text("UPDATE legacy_orders SET lock_user = 'bob' WHERE order_no = :k"), {"k": held.key}
            ).rowcount
            == 0
        )
    with pytest.raises(errors.NothingToClaim):
        bob.claim("bob", held.key)
    pg.env.age_lock(owner, "orders", held.key, 2 * 60)  # 21 minutes: expired
    taken = bob.claim("bob", held.key)
    assert taken.lock.owner == "bob"
    assert bob.complete("bob", held.key, taken.lock.token).outcome == "done"


# == The roles table (SQLite, MariaDB, and PostgreSQL without `grants`) ===========================

ROLE_BACKENDS = pytest.mark.parametrize("backend", ["sqlite", "postgresql", "mariadb"], indirect=True)


@ROLE_BACKENDS
def test_no_roles_set_up_means_everyone_may(native_env: support.Env) -> None:
    wb = native_env.demo(case_rows=5, import_rows=1)
    q = wb.queue("cases")
    held = q.claim_next("ann")[0].lock
    assert Supervision(q).reassign("bob", held.key, "carl", "help").owner == "carl"
    assert Supervision(q).force_release("bob", held.key, "done").owner == "carl"
    body = loader.queue_settings_text(native_env.demo_config_file())
    assert published.publish(wb.engine, None, body, "bob").version == 1
    with wb.engine.connect() as conn:
        assert permissions.supervisors(conn, None) == []


@ROLE_BACKENDS
def test_roles_table_restricts_supervisor_actions(native_env: support.Env) -> None:
    wb = native_env.demo(case_rows=5, import_rows=1)
    q = wb.queue("cases")
    with wb.engine.begin() as conn:
        permissions.grant(conn, None, "sue", "sue", "supervisor")  # the first grant: anyone may
        permissions.grant(conn, None, "sue", "ann", "operator")
    held = q.claim_next("ann")[0].lock
    for attempt in (
        lambda: Supervision(q).force_release("bob", held.key, "x"),
        lambda: Supervision(q).reassign("bob", held.key, "bob", "x"),
        lambda: Supervision(q).force_release("ann", held.key, "x"),
    ):
        with pytest.raises(errors.NotPermitted) as caught:
            attempt()
        assert "only supervisors may" in str(caught.value) and "supervisors: sue" in str(caught.value)
        assert "role grant" in str(caught.value) and caught.value.exit_code == 1
    assert native_env.row(wb, "cases", held.key)["wb_locked_by"] == "ann"
    body = loader.queue_settings_text(native_env.demo_config_file())
    with pytest.raises(errors.NotPermitted, match="bob may not publish queue settings"):
        published.publish(wb.engine, None, body, "bob")
    assert published.latest_version(wb.engine, None) == 0
    assert published.publish(wb.engine, None, body, "sue").version == 1
    assert Supervision(q).reassign("sue", held.key, "bob", "x").owner == "bob"
    assert Supervision(q).force_release("sue", held.key, "x").owner == "bob"
    # Only a supervisor grants once there is one.
    with wb.engine.begin() as conn, pytest.raises(errors.NotPermitted):
        permissions.grant(conn, None, "bob", "bob", "supervisor")


@ROLE_BACKENDS
def test_role_commands(native_env: support.Env, capsys: pytest.CaptureFixture[str]) -> None:
    native_env.demo(case_rows=3, import_rows=1)
    config = native_env.demo_config_file()

    def run(user: str, *args: Any) -> tuple[int, Any, str]:
        return _cli(capsys, "--config", config, "--user", user, *args)

    code, data, _ = run("bob", "--json", "role", "list")
    assert code == 0 and data["roles"] == [] and data["roles_set_up"] is False
    code, out, err = run("bob", "role", "list")
    assert code == 0 and "no roles" in out and "everyone may force-release" in err
    code, out, _ = run("sue", "role", "grant", "sue", "supervisor")
    assert code == 0 and "sue is now a supervisor (granted by sue)" in out
    code, _, err = run("bob", "role", "grant", "bob", "supervisor")
    assert code == 1 and "bob may not grant roles" in err and "supervisors: sue" in err
    code, data, _ = run("sue", "--json", "role", "grant", "bob", "operator")
    assert code == 0 and data["grant"]["role"] == "operator" and data["grant"]["granted_by"] == "sue"
    code, data, _ = run("x", "--json", "role", "list")
    assert [(g["user"], g["role"]) for g in data["roles"]] == [("sue", "supervisor"), ("bob", "operator")]
    assert data["roles_set_up"] is True

    key = run("ann", "--json", "next", "cases")[1]["key"]
    code, _, err = run("bob", "force-release", "cases", key, "--reason", "x")
    assert code == 1 and "bob may not force-release cases" in err and "role grant bob supervisor" in err
    code, data, _ = run("bob", "--json", "reassign", "cases", key, "--to", "bob", "--reason", "x")
    assert code == 1 and data["error"]["type"] == "NotPermitted" and data["error"]["exit_code"] == 1
    assert run("sue", "force-release", "cases", key, "--reason", "x")[0] == 0

    code, _, err = run("bob", "role", "revoke", "sue")
    assert code == 1 and "may not revoke" in err
    with pytest.raises(SystemExit) as usage:
        run("sue", "role", "grant", "bob", "admin")
    assert usage.value.code == 2 and "invalid choice: 'admin'" in capsys.readouterr().err
    code, out, err = run("sue", "role", "revoke", "sue")
    assert code == 0 and "revoked sue's role (supervisor)" in out and "everyone may" in err
    assert run("bob", "force-release", "cases", key, "--reason", "x")[0] == 4  # allowed again: not locked now
    code, _, err = run("bob", "role", "revoke", "nobody")
    assert code == 5 and "nobody has no role" in err


@pytest.mark.parametrize("backend", ["sqlite", "mariadb"], indirect=True)
def test_grants_elsewhere_points_at_the_roles_table(
    native_env: support.Env, capsys: pytest.CaptureFixture[str]
) -> None:
    native_env.demo(case_rows=2, import_rows=1)
    config = native_env.demo_config_file()
    code, out, _ = _cli(capsys, "--config", config, "grants", "cases", "--apply")
    assert code == 0 and "roles table" in out and "does not stop a modified client" in out
    code, data, _ = _cli(capsys, "--config", config, "--json", "grants", "cases")
    assert code == 0 and data["ddl"] == "" and data["applied"] is False
    assert _cli(capsys, "--config", config, "grants", "nosuch")[0] == 2


# == Migration 3 ==================================================================================


@ROLE_BACKENDS
def test_upgrade_from_version_2_adds_the_roles_table(native_env: support.Env) -> None:
    engine = native_env.engine
    metadata, _, version = tables.build_metadata(None)
    with engine.begin() as conn:
        version.create(conn)
        for migration in migrations.MIGRATIONS[:2]:
            migration.apply(conn, metadata)
            conn.execute(sa.insert(version).values(version=migration.version, applied_at=clock.db_now()))
    with engine.connect() as conn:
        assert not sa.inspect(conn).has_table(tables.ROLES_TABLE)
        with pytest.raises(errors.NotInitialized, match=f"at version 2, this program needs {tables.SCHEMA_VERSION}"):
            migrations.check(conn, None)
    wb = native_env.open(native_env.demo_config())
    assert next((m.version, m.description) for m in wb.init()) == (3, "supervisor and operator roles")
    assert wb.init() == []
    with engine.begin() as conn:
        migrations.check(conn, None)
        assert migrations.current_version(conn, None) == tables.SCHEMA_VERSION >= 3
        assert permissions.grant(conn, None, "sue", "sue", "supervisor").role == "supervisor"
    with engine.connect() as conn:
        assert [g.user for g in permissions.list_roles(conn, None)] == ["sue"]
        # The role column takes only the two roles, whatever writes to it.
        t = permissions.roles_table(None)
    with pytest.raises(sa.exc.DBAPIError, match="ck_workbench_roles_role"), engine.begin() as conn:
        conn.execute(sa.insert(t).values(user_name="x", role="admin", granted_by="x", granted_at=clock.db_now()))


# == PostgreSQL 15+: a login that does not own schema public ======================================

NEWCOMER = "newcomer"  # a plain login: no CREATE on schema public (PostgreSQL 15+), owns no table


def test_init_and_attach_by_a_non_owner_say_which_grant_is_missing(
    pg_server: servers.Server, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = f"wbt_{uuid.uuid4().hex[:12]}"
    pg_server.create_database(name)
    owner_url = pg_server.url(name)
    owner = sa.create_engine(owner_url, isolation_level="AUTOCOMMIT")
    try:
        with owner.connect() as conn:
            if conn.execute(sa.text("SELECT 1 FROM pg_roles WHERE rolname = :n"), {"n": NEWCOMER}).first() is None:
                conn.exec_driver_sql(f"CREATE ROLE {NEWCOMER} LOGIN")
            conn.exec_driver_sql("REVOKE CREATE ON SCHEMA public FROM PUBLIC")  # as PostgreSQL 15+ has it
            conn.exec_driver_sql("CREATE TABLE tickets (id INTEGER PRIMARY KEY, status VARCHAR(20) NOT NULL)")
            conn.exec_driver_sql(f"GRANT SELECT, UPDATE ON tickets TO {NEWCOMER}")
        config = tmp_path / "newcomer.toml"
        config.write_text(
            f"""
[database]
url = "{sa.make_url(owner_url).set(username=NEWCOMER).render_as_string(hide_password=False)}"

[queues.tickets]
table = "tickets"
key = "id"
todo = {{ status = "open" }}
outcomes.done.set = {{ status = "done" }}
""",
            encoding="utf-8",
        )
        code, _, err = _cli(capsys, "--config", config, "init")
        assert code == errors.NotPermitted.exit_code, err
        assert (
            f"cannot create workbench's tables in schema public: permission denied for schema public; run "
            f"`workbench init` as the schema's owner, or GRANT CREATE ON SCHEMA public TO {NEWCOMER}"
        ) in err
        code, _, err = _cli(capsys, "--config", config, "attach", "tickets", "--apply")
        assert code == errors.NotPermitted.exit_code, err
        assert (
            "cannot add the lock columns and claim indexes to table tickets: must be owner of table tickets; "
            "run `workbench attach tickets --apply` as the table's owner"
        ) in err
        with owner.connect() as conn:
            assert (
                conn.execute(
                    sa.text("SELECT count(*) FROM information_schema.columns WHERE table_name = 'tickets'")
                ).scalar()
                == 2
            )
    finally:
        owner.dispose()
        pg_server.drop_database(name)


# == Issue 50: the messages of a site set up from the docs ========================================

SHARED = "helpdesk_app"  # one login for everyone, as a config written before `grants` has it


def test_a_login_that_is_neither_the_users_nor_an_operator_is_named(pg: Pg, capsys: pytest.CaptureFixture[str]) -> None:
    # Issue 50 (1): after `grants --apply`, `--user alice next` through a shared login said only
    # "permission denied for table workbench_schema_version".
    with pg.admin.engine.connect() as conn:
        if conn.execute(sa.text("SELECT 1 FROM pg_roles WHERE rolname = :n"), {"n": SHARED}).first() is None:
            conn.exec_driver_sql(f"CREATE ROLE {SHARED} LOGIN")
            conn.commit()
    code, _, err = _cli(capsys, "--config", pg.config_file(SHARED), "--user", "alice", "next", "cases")
    assert code == errors.NotPermitted.exit_code, err
    assert f"the database login {SHARED} is not alice's and is not a member of workbench_operator" in err, err
    assert "each person connects with their own database login" in err and "--db-user alice" in err
    assert "workbench people add alice --role operator" in err
    # An operator's own login under another user's name: named the same way.
    code, _, err = _cli(capsys, "--config", pg.config_file("ann"), "--user", "alice", "next", "cases")
    assert code == errors.NotPermitted.exit_code and "from the database login ann" in err, err
    assert "each person logs in with their own database login" in err
