"""Everything through PgBouncer in transaction pooling (`[database] pooler = "transaction"`).

The pooler lends each transaction whichever server session is free (pool_size 5 here, so the
clients of a test share sessions): nothing of a session survives to the next transaction. A named
prepared statement, a function in pg_temp or a SET made on one connection lands on a session some
other client gets next (issue 42: "prepared statement wb_fast_1 already exists" from the second
`workbench next`)."""

from __future__ import annotations

import collections
import dataclasses
import datetime as dt
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from tests import servers, support
from tests.pooled import PooledEnv
from workbench import demo
from workbench.core import errors
from workbench.db.supervision import Supervision

REPO = Path(__file__).resolve().parents[2]


def _cli(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`workbench ARGS` in a process of its own, as a script or a second desk would run it."""
    return subprocess.run(
        [sys.executable, "-m", "workbench", "--config", str(config), *args],
        check=False,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_next_from_the_command_line_through_the_pooler(pooled_env: PooledEnv) -> None:
    env = pooled_env
    env.demo(queues={"cases": {"max_locks_per_user": 0}})
    config = env.demo_config_file()
    claimed = []
    for i in range(4):  # each its own process and client connection, sharing the pooler's sessions
        done = _cli(config, "--user", f"u{i % 2}", "next", "cases", "--json")
        assert done.returncode == 0, done.stderr
        claimed.append(done.stdout)
    assert len(set(claimed)) == 4
    # The self-test's claim race holds through the pooler: an open transaction keeps its session.
    tested = _cli(config, "--self-test")
    assert tested.returncode == 0, tested.stdout + tested.stderr
    race = [line for line in tested.stdout.splitlines() if "claim race" in line]
    assert race and "skip" not in race[0].lower(), tested.stdout


def test_the_python_api_through_the_pooler(pooled_env: PooledEnv) -> None:
    """Claim, save, complete (and then next), release, defer, notes, move, a supervisor's
    force-release, with three Workbench objects taking turns on the pooler's sessions."""
    env = pooled_env
    first = env.demo(queues={"cases": {"max_locks_per_user": 0, "release_cooldown_seconds": 0}})
    desks = [first, *(env.open(env.demo_config()) for _ in range(2))]
    for round_ in range(3):
        for n, wb in enumerate(desks):
            q = wb.queue("cases")
            user = f"op{n}"
            claim = q.claim_next(user)[0]
            q.save(user, claim.lock.key, claim.lock.token, {"resolution": f"round {round_}"})
            q.add_note(user, claim.lock.key, "called the customer")
            done = q.complete(user, claim.lock.key, claim.lock.token, "resolved", then_next=True)
            assert done.next is not None
            nxt = done.next
            if round_ == 0:
                q.release(user, nxt.lock.key, nxt.lock.token)
            elif round_ == 1:
                until = q.db_clock().utc.replace(tzinfo=dt.UTC) + dt.timedelta(hours=1)
                q.defer(user, nxt.lock.key, nxt.lock.token, until, "customer on holiday")
            else:
                Supervision(q).force_release("boss", nxt.lock.key, "shift over")
            assert [note.text for note in q.notes(claim.lock.key)] == ["called the customer"]
            assert env.row(wb, "cases", claim.lock.key)["resolution"] == f"round {round_}"
    q = first.queue("cases")
    assert len(q.deferred()) == 3
    moved = Supervision(q).move(
        "boss", {"category": "Network"}, "all to the network team", where={"category": "Printing"}
    )
    assert moved and {env.row(first, "cases", k)["category"] for k in moved} == {"Network"}
    with pytest.raises(errors.LockLost):
        q.complete("op0", moved[0], "not-a-token", "resolved")
    audit = first.audit_table
    with env.engine.connect() as conn:
        events = collections.Counter(
            conn.execute(sa.select(audit.c.event).where(audit.c.queue == "cases")).scalars().all()
        )
    assert events["complete"] == 9 and events["claim"] == 18
    assert events["release"] == 3 and events["defer"] == 3 and events["force_release"] == 3


def test_reviews_through_the_pooler(pooled_env: PooledEnv) -> None:
    """Four eyes: a completion chosen for review is served to someone else, not to its doer."""
    env = pooled_env
    base = env.demo_config().queues["imports"].review
    review = dataclasses.replace(base, percent=100, first_items=0)
    wb = env.demo(
        import_rows=4,
        queues={"imports": {"review": review, "release_cooldown_seconds": 0}, "imports_review": {}},
    )
    imports = wb.queue("imports")
    got = imports.claim_next("ann")[0]
    imports.complete("ann", got.lock.key, got.lock.token, imports.config.outcomes[0].name)
    reviewing = wb.queue("imports_review")
    with pytest.raises(errors.NothingToClaim):
        reviewing.claim_next("ann")
    theirs = reviewing.claim_next("bob")[0]
    assert theirs.lock.key == got.lock.key
    reviewing.complete("bob", theirs.lock.key, theirs.lock.token, "accepted")


def test_nothing_is_left_in_the_pooled_sessions(pooled_env: PooledEnv) -> None:
    """Each transaction makes its own timeouts (SET LOCAL); the sessions the pooler lends keep their
    defaults, hold no prepared statement, and the claim function is a permanent one with its plan
    setting in its definition."""
    env = pooled_env
    wb = env.demo()
    q = wb.queue("cases")
    for user in ("a", "b", "c"):
        claim = q.claim_next(user)[0]
        q.complete(user, claim.lock.key, claim.lock.token, "resolved", then_next=True)
    assert wb.db.read(lambda conn: conn.exec_driver_sql("SHOW statement_timeout").scalar()) == "30s"
    probe = sa.create_engine(env.url, connect_args={"prepare_threshold": None})
    try:
        for _ in range(8):  # the pool's sessions, one after another
            with probe.connect() as conn:
                assert conn.exec_driver_sql("SHOW statement_timeout").scalar() == "0"
                assert conn.exec_driver_sql("SHOW plan_cache_mode").scalar() == "auto"
                assert conn.exec_driver_sql("SELECT count(*) FROM pg_prepared_statements").scalar() == 0
    finally:
        probe.dispose()
    with env.engine.connect() as conn:
        functions = conn.execute(
            sa.text(
                "SELECT n.nspname, p.proconfig, p.prosecdef FROM pg_proc p "
                "JOIN pg_namespace n ON n.oid = p.pronamespace WHERE p.proname LIKE 'wb\\_claim\\_%'"
            )
        ).all()
    # Run with the caller's rights (never as its owner): calling it by hand is running its statements.
    assert functions and all(
        schema == "public" and config == ["plan_cache_mode=force_generic_plan"] and not definer
        for schema, config, definer in functions
    )


def _claim_functions(env: PooledEnv) -> list[str]:
    with env.engine.connect() as conn:
        return list(
            conn.execute(
                sa.text(
                    "SELECT n.nspname || '.' || p.proname FROM pg_proc p "
                    "JOIN pg_namespace n ON n.oid = p.pronamespace WHERE p.proname LIKE 'wb\\_claim\\_%'"
                )
            ).scalars()
        )


def test_init_makes_the_claim_function_for_logins_that_may_not(pooled_env: PooledEnv) -> None:
    """The owner's `init` makes Next item's claim function in workbench's schema; a login of its own
    with the table's grants but no CREATE there (PostgreSQL 15's public schema) claims through it.
    Without it, that login claims with the one statement, and makes nothing."""
    env = pooled_env
    owner = env.demo(queues={"cases": {"max_locks_per_user": 0}})
    made = _claim_functions(env)
    assert len(made) == len(owner.config.queues) and all(name.startswith("public.wb_claim_") for name in made)
    with env.engine.begin() as conn:
        conn.exec_driver_sql("CREATE ROLE clerk LOGIN")
        conn.exec_driver_sql("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO clerk")
        conn.exec_driver_sql("GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO clerk")
        assert not conn.execute(sa.text("SELECT has_schema_privilege('clerk', 'public', 'CREATE')")).scalar()
    env.bouncer.add_users("clerk")
    clerk_config = env.demo_config({"cases": {"max_locks_per_user": 0}})
    url = sa.make_url(env.url).set(username="clerk").render_as_string(hide_password=False)
    clerk_config = dataclasses.replace(clerk_config, database=dataclasses.replace(clerk_config.database, url=url))
    clerk = env.open(clerk_config)
    cases = clerk.queue("cases")
    got = cases.claim_next("clerk")[0]
    reader = next(iter(cases.method._next.values()))  # type: ignore[attr-defined]
    assert type(reader.fast).__name__ == "FunctionCall"
    assert env.row(owner, "cases", got.lock.key)["wb_locked_by"] == "clerk"
    # The function gone (as before the owner's first init under the pooler): its call finds it
    # missing, this login may not make it, and the one statement claims in its place from then on.
    with env.engine.begin() as conn:
        for name in made:
            conn.exec_driver_sql(f"DROP FUNCTION {name}")
    again = env.open(clerk_config).queue("cases")
    assert again.claim_next("clerk")[0].lock.key != got.lock.key
    reader = next(iter(again.method._next.values()))  # type: ignore[attr-defined]
    assert type(reader.fast._fast).__name__ == "FastStatement" and reader.fast._replaced
    assert again.claim_next("clerk")[0].lock.key != got.lock.key
    assert _claim_functions(env) == []
    # The owner's next window, the function still gone: its first claim makes it again.
    ours = env.open(env.demo_config({"cases": {"max_locks_per_user": 0}})).queue("cases")
    assert ours.claim_next("owner")
    assert len(_claim_functions(env)) == 1


def test_a_config_without_the_pooler_setting_says_what_to_set(pooled_env: PooledEnv) -> None:
    """Through the pooler without `pooler = "transaction"`: a message that names the setting, not an
    internal error (issue 42's first `workbench next`)."""
    env = pooled_env
    env.demo()
    config = env.tmp / "unpooled.toml"
    config.write_text(support.Env.config_text(env, demo.config_text("{url}")), encoding="utf-8")
    assert "pooler" not in config.read_text()
    said = set()
    for i in range(3):
        done = _cli(config, "--user", f"u{i}", "next", "cases")
        if done.returncode:
            assert done.returncode == 2 and "internal error" not in done.stderr, done.stderr
            said.add(done.stderr)
    assert said and all('pooler = "transaction"' in text and "database.pooler" in text for text in said), said


def test_a_process_without_the_pooler_setting_is_told_before_it_claims(pooled_env: PooledEnv) -> None:
    """Without the setting workbench keeps prepared statements and the claim function in the session: told
    what to set at its first connection, before anything is kept, whichever session the pooler lends it.
    (Told only when a transaction landed on another session, it claimed on a database copied from the
    run's template, whose pool had one session open: nothing else to lend.)"""
    env = pooled_env
    env.demo()
    config = env.demo_config()
    unset = dataclasses.replace(config, database=dataclasses.replace(config.database, pooler="none"))
    with pytest.raises(errors.ConfigError, match='pooler = "transaction"'):
        _claim_three(env, unset)
    assert _locks(env) == 0


@pytest.mark.parametrize("mode", ["transaction", "session"])
def test_a_pooler_with_one_session_without_the_setting(pooled_env: PooledEnv, mode: str) -> None:
    """A PgBouncer lending the last used session first (its default), with one session for the database (a
    quiet site): every transaction of a process lands on the session its statements were prepared on, and
    nothing fails. In transaction pooling workbench says what to set all the same (another client may be lent
    that session between them); in session pooling a connection is one server session, and it claims."""
    env = pooled_env
    env.demo()
    # One session in transaction pooling; in session pooling one for each connection of the process.
    size = 1 if mode == "transaction" else 3
    bouncer = servers.start_pgbouncer(env.bouncer.server, pool_size=size, in_turn=False, pool_mode=mode)
    try:
        config = env.demo_config()
        database = dataclasses.replace(config.database, url=bouncer.url(env.database), pooler="none")
        unset = dataclasses.replace(config, database=database)
        if mode == "session":
            q = env.open(unset).queue("cases")
            assert len({q.claim_next("ann")[0].lock.key for _ in range(3)}) == 3
            return
        with pytest.raises(errors.ConfigError, match='pooler = "transaction"'):
            _claim_three(env, unset)
        assert _locks(env) == 0
    finally:
        env.close()
        bouncer.stop()


def _claim_three(env: PooledEnv, config: Any) -> None:
    """Open `config` and claim three of its cases, one after the other."""
    q = env.open(config).queue("cases")
    for _ in range(3):
        q.claim_next("ann")


def _locks(env: PooledEnv) -> int:
    """How many locks the demo's queues hold (read on the server directly)."""
    with env.engine.connect() as conn:
        return int(conn.exec_driver_sql("SELECT count(*) FROM workbench_locks").scalar() or 0)


def test_the_claim_and_complete_keep_the_statement_timeout_through_the_pooler(pooled_env: PooledEnv) -> None:
    """The session's timeouts are not workbench's through a pooler: the one-statement Complete sets
    its own for its transaction, so a Complete waiting for a row another transaction holds gives
    up after `statement_timeout`, and the pooled session keeps no timeout afterwards."""
    env = pooled_env
    wb = _opened_with_a_one_second_timeout(env)
    q = wb.queue("cases")
    claim = q.claim_next("ann")[0]
    table = q.q.table
    with env.engine.connect() as blocker, blocker.begin():  # someone's transaction holds the row
        blocker.execute(sa.select(table.c.case_id).where(table.c.case_id == claim.lock.key).with_for_update())
        started = time.monotonic()
        with pytest.raises((errors.WorkbenchError, sa.exc.DBAPIError), match="statement timeout"):
            q.complete("ann", claim.lock.key, claim.lock.token, "resolved")
        assert time.monotonic() - started < 10
    done = q.complete("ann", claim.lock.key, claim.lock.token, "resolved")
    assert done.outcome == "resolved"
    _pooled_sessions_keep_no_timeout(env, "statement_timeout")


def test_the_claim_keeps_the_statement_timeout_through_the_pooler(pooled_env: PooledEnv) -> None:
    """The claim's one statement (the claim function's call) sets its own `statement_timeout` in its pipeline, as
    the Complete's does: a claim waiting for the table another transaction holds gives up after it. The blocker
    gives its lock up after 8 s (its own idle timeout), so without the claim's timeout the claim succeeds late
    instead of hanging the test."""
    env = pooled_env
    wb = _opened_with_a_one_second_timeout(env)
    q = wb.queue("cases")
    q.claim_next("ann")  # the claim's statement built, its connection open
    with env.engine.connect() as blocker, blocker.begin():
        blocker.exec_driver_sql("SET LOCAL idle_in_transaction_session_timeout = '8s'")
        blocker.exec_driver_sql("LOCK TABLE cases IN EXCLUSIVE MODE")
        started = time.monotonic()
        with pytest.raises((errors.WorkbenchError, sa.exc.DBAPIError), match="statement timeout"):
            q.claim_next("bob")
        assert time.monotonic() - started < 6
    assert q.claim_next("bob")[0].lock.owner == "bob"
    _pooled_sessions_keep_no_timeout(env, "statement_timeout")


def test_an_operations_transaction_gets_its_timeouts_with_its_begin(pooled_env: PooledEnv) -> None:
    """Through the pooler an operation's transaction (a read, a Save's write) sends its timeouts (SET LOCAL) in
    the message of its BEGIN: no statement of their own (issue 51: a `SELECT set_config(…)` parsed and planned
    in every transaction). They hold: a Save waiting for a row another transaction holds gives up after
    `statement_timeout`, and the pooled sessions keep no timeout afterwards."""
    env = pooled_env
    wb = _opened_with_a_one_second_timeout(env)
    sent: list[str] = []
    sa.event.listen(wb.engine, "before_cursor_execute", lambda _c, _cur, statement, *_a: sent.append(statement))
    shown = wb.db.read(
        lambda conn: tuple(
            conn.exec_driver_sql(
                "SELECT current_setting('statement_timeout'), current_setting('idle_in_transaction_session_timeout')"
            ).one()
        )
    )
    assert shown == ("1s", "2s")
    q = wb.queue("cases")
    claim = q.claim_next("ann")[0]
    table = q.q.table
    with env.engine.connect() as blocker, blocker.begin():  # someone's transaction holds the row
        blocker.execute(sa.select(table.c.case_id).where(table.c.case_id == claim.lock.key).with_for_update())
        started = time.monotonic()
        with pytest.raises((errors.WorkbenchError, sa.exc.DBAPIError), match="statement timeout"):
            q.save("ann", claim.lock.key, claim.lock.token, {"priority": 2})
        assert time.monotonic() - started < 10
    assert q.save("ann", claim.lock.key, claim.lock.token, {"priority": 2}).owner == "ann"
    assert sent and not [statement for statement in sent if "set_config" in statement.lower()]
    _pooled_sessions_keep_no_timeout(env, "statement_timeout", "idle_in_transaction_session_timeout")


def _opened_with_a_one_second_timeout(env: PooledEnv) -> Any:
    """The demo opened through the pooler with `statement_timeout = 1` (second)."""
    config = env.demo_config()
    config = dataclasses.replace(config, database=dataclasses.replace(config.database, statement_timeout=1))
    env.demo()
    return env.open(config)


def _pooled_sessions_keep_no_timeout(env: PooledEnv, *settings: str) -> None:
    """The pooler's server sessions (six connections in turn reach each of them) show `settings` at 0."""
    probe = sa.create_engine(env.url, connect_args={"prepare_threshold": None})
    try:
        for _ in range(6):
            with probe.connect() as conn:
                for setting in settings:
                    assert conn.exec_driver_sql(f"SHOW {setting}").scalar() == "0"
    finally:
        probe.dispose()


def test_a_connection_profile_says_it_goes_through_the_pooler(
    pooled_env: PooledEnv, capsys: pytest.CaptureFixture[str]
) -> None:
    """`pooler = "transaction"` in a profile (profiles.toml) works as in a config's [database], with
    a queue config file that says nothing about it."""
    from workbench.config import profiles

    env = pooled_env
    env.demo()
    plain = env.tmp / "queues.toml"
    plain.write_text(support.Env.config_text(env, demo.config_text("{url}")), encoding="utf-8")
    url = sa.make_url(env.url)
    office = profiles.Profile(
        name="office",
        kind="postgresql",
        host=str(url.host),
        port=url.port,
        database=str(url.database),
        user=str(url.username),
        config=str(plain),
    )
    for profile in (office, dataclasses.replace(office, name="pooled", pooler="transaction")):
        profiles.ProfileStore().save(profile)
    for user in ("ann", "bob", "cid"):
        code, out, err = support.run_cli(capsys, "--profile", "pooled", "--user", user, "--json", "next", "cases")
        assert code == 0, err
        claimed = out[0] if isinstance(out, list) else out
        assert claimed["owner"] == user
    # Without it a one-shot claim may hold (its claim function made, prepared and run in one
    # transaction, so on one server session); a process's second claim says what to set (below).
    code, _, err = support.run_cli(capsys, "--profile", "office", "--user", "dan", "next", "cases")
    assert code == 0 or (code == 2 and 'pooler = "transaction"' in err), err
    with pytest.raises(errors.ConfigError, match="pooler"):
        profiles.check(dataclasses.replace(office, pooler="session"))
