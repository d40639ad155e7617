"""`workbench grants` through PgBouncer in transaction pooling: each person's own login goes through
the pooler (which keeps one pool of server sessions per login), the database's trusted functions
are permanent objects, and the attacks of tests/test_protocol.py are refused as on a direct
connection. The attack tests themselves are run again here with the fixtures below: `pg`, the demo
database under `grants` reached through the pooler with `pooler = "transaction"` in every config."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests import servers, support, test_permissions, test_protocol, test_protocol_holes
from tests.contract import test_no_takeover
from tests.test_permissions import FEEDER, OPERATORS, SUPERVISORS, Pg
from workbench import demo
from workbench.db import permissions

_plain_config_text = demo.config_text
_plain_sample_config = support.sample_config


def _pooled(text: str) -> str:
    """A config text that says the connection goes through the pooler."""
    return text.replace("[database]\n", '[database]\npooler = "transaction"\n', 1)


@pytest.fixture
def pg(
    pgbouncer: servers.PgBouncer, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Iterator[Pg]:
    """As tests/test_permissions.py's, every login (the owner's too) through the pooler."""
    # Every config the tests write from the demo's or a sample's says the connection goes through the pooler
    # (without it workbench refuses a transaction pooler: db/backends/pg_sessions.py).
    monkeypatch.setattr(demo, "config_text", lambda url=demo.DB_NAME: _pooled(_plain_config_text(url)))
    monkeypatch.setattr(support, "sample_config", lambda name: _pooled(_plain_sample_config(name)))
    pgbouncer.add_users(*OPERATORS, *SUPERVISORS, FEEDER)
    name = f"wbt_{uuid.uuid4().hex[:12]}"
    pgbouncer.server.create_database(name)
    url = pgbouncer.url(name)
    env = support.Env("postgresql", "native", url, tmp_path)
    admin = env.demo(case_rows=12, import_rows=3)
    setup = Pg(pgbouncer.server, url, env, admin, tmp_path)
    code, _, err = support.run_cli(
        capsys, "--config", setup.config_file(pgbouncer.server.user), "grants", "cases", "--apply"
    )
    assert code == 0, err
    test_permissions._logins(pgbouncer.server.url(name))
    yield setup
    for engine in setup.engines:
        engine.dispose()
    env.close()
    pgbouncer.drop_database(name)


@pytest.fixture
def operator(pg: Pg, pgbouncer: servers.PgBouncer, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, str]]:
    """As tests/test_protocol.py's: a login that gives its password, here to the pooler."""
    login, password = pg.server.password_login()
    pgbouncer.add_users(login, password=password)
    with pg.admin.engine.connect() as conn:
        conn.exec_driver_sql(f"GRANT {permissions.OPERATOR_ROLE} TO {login}")
        conn.commit()
    monkeypatch.setenv("WORKBENCH_DB_PASSWORD", password)
    yield login, pg.url_as(login)
    with pg.admin.engine.connect() as conn:
        conn.exec_driver_sql(f"REVOKE {permissions.OPERATOR_ROLE} FROM {login}")
        conn.commit()


# The attacks and the work of tests/test_protocol.py and tests/test_protocol_holes.py, through the pooler.
test_every_attack_by_an_operator_login_is_refused = test_protocol.test_every_attack_by_an_operator_login_is_refused
test_the_operator_works_a_full_item_through_workbench = (
    test_protocol.test_the_operator_works_a_full_item_through_workbench
)
test_a_supervisors_actions_are_recorded_under_their_login = (
    test_protocol.test_a_supervisors_actions_are_recorded_under_their_login
)
test_an_operator_adds_notes_under_their_own_login_only = (
    test_protocol.test_an_operator_adds_notes_under_their_own_login_only
)
test_a_supervisor_moves_waiting_items_through_the_databases_check = (
    test_protocol.test_a_supervisor_moves_waiting_items_through_the_databases_check
)
test_deferrals_and_cool_downs_are_only_the_givers_own = (
    test_protocol.test_deferrals_and_cool_downs_are_only_the_givers_own
)
test_four_eyes_is_kept_by_the_database = test_protocol.test_four_eyes_is_kept_by_the_database
test_the_protocols_own_functions_are_not_callable_by_hand = (
    test_protocol_holes.test_the_protocols_own_functions_are_not_callable_by_hand
)
# The contract suite's takeover race under grants: each operator login claims through the database's function.
test_no_claim_through_the_databases_own_function_takes_over_a_live_lock = (
    test_no_takeover.test_no_claim_through_the_databases_own_function_takes_over_a_live_lock
)


def test_a_wrong_password_is_refused_by_the_pooler(operator: tuple[str, str]) -> None:
    _, url = operator
    engine = sa.create_engine(sa.make_url(url).set(password="not-it"))
    try:
        with pytest.raises(sa.exc.OperationalError, match="authentication failed"):
            engine.connect()
    finally:
        engine.dispose()


def test_what_a_login_leaves_in_its_sessions_reaches_no_other_login(pg: Pg, pgbouncer: servers.PgBouncer) -> None:
    """The pooler lends a session to the next transaction of the same login only: a setting ann leaves
    for the session (a forged note for the audit guard, the supervisor role) is never bob's."""
    ann, bob = pg.open("ann").queue("cases"), pg.open("bob").queue("cases")
    engine = pg.engine("ann")
    for _ in range(6):  # every session of ann's pool
        with engine.connect() as conn:
            conn.exec_driver_sql("SELECT set_config('workbench.audited', repeat('x', 50), false)")
            conn.exec_driver_sql(f"SET ROLE {permissions.OPERATOR_ROLE}")
            conn.commit()
    lock = bob.claim_next("bob")[0].lock
    bob.complete("bob", lock.key, lock.token, "resolved")
    events = [(e.kind.value, e.actor) for e in pg.admin.queue("cases").history(lock.key)]
    assert events == [("claim", "bob"), ("complete", "bob")]
    # ann's own work goes on in the sessions she left so (their role is hers to set).
    mine = ann.claim_next("ann")[0].lock
    ann.complete("ann", mine.key, mine.token, "resolved")
    events = [(e.kind.value, e.actor) for e in pg.admin.queue("cases").history(mine.key)]
    assert events == [("claim", "ann"), ("complete", "ann")]
    # Each login had its own pool of server sessions in the pooler.
    database = sa.make_url(pg.url).database
    pools = {row[1] for row in pgbouncer.console("SHOW POOLS") if row[0] == database}
    assert {"ann", "bob", pgbouncer.server.user} <= pools
