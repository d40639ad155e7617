"""The database enforces the protocol (PostgreSQL, `workbench grants`): an operator's own login, over TCP
with a password, tries by hand what workbench never does, and the database refuses every attempt."""

from __future__ import annotations

import datetime as dt
import tomllib
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa

from tests import support
from tests.test_permissions import Pg, pg  # noqa: F401  (the fixture: a demo database under `grants`)
from workbench import demo
from workbench.config import loader
from workbench.core import errors
from workbench.db import audit, permissions, pg_grants
from workbench.db import trusted as trusted_way
from workbench.db.rules import pg_names
from workbench.db.supervision import Supervision


@pytest.fixture
def operator(pg: Pg, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, str]]:
    """A real operator login that must give its password over TCP: (login, URL without the password,
    which workbench takes from WORKBENCH_DB_PASSWORD as a user would from the keyring)."""
    login, password = pg.server.password_login()
    with pg.admin.engine.connect() as conn:
        conn.exec_driver_sql(f"GRANT {permissions.OPERATOR_ROLE} TO {login}")
        conn.commit()
    url = sa.make_url(pg.url).set(username=login)
    assert url.host == "127.0.0.1"
    monkeypatch.setenv("WORKBENCH_DB_PASSWORD", password)
    yield login, url.render_as_string(hide_password=False)
    with pg.admin.engine.connect() as conn:
        conn.exec_driver_sql(f"REVOKE {permissions.OPERATOR_ROLE} FROM {login}")
        conn.commit()


def _engine(pg: Pg, url: str) -> sa.Engine:
    import os

    engine = sa.create_engine(sa.make_url(url).set(password=os.environ["WORKBENCH_DB_PASSWORD"]))
    pg.engines.append(engine)
    return engine


def _state(pg: Pg) -> tuple[list[Any], list[Any]]:
    """Every queue row and every audit row, as the table owner reads them."""
    with pg.admin.engine.connect() as conn:
        rows = conn.execute(sa.text("SELECT * FROM cases ORDER BY case_id")).all()
        audit = conn.execute(sa.text("SELECT * FROM workbench_audit ORDER BY id")).all()
    return rows, audit


def _drain(pg: Pg, text: str, queue: str) -> dict[str, str]:
    """Four processes, two per operator login, claim and complete `queue` of config `text` until it is
    empty; returns each completed item's key and the login that completed it (never two)."""
    import json
    import os
    import sys
    from pathlib import Path

    from tests.helpers import forked

    repo = Path(__file__).resolve().parents[1]
    go = pg.tmp / "go"
    procs = []
    for i, login in enumerate(("ann", "bob", "ann", "bob")):
        config = pg.tmp / f"worker{i}.toml"
        config.write_text(text.replace("{url}", pg.url_as(login)), encoding="utf-8")
        out = pg.tmp / f"worker{i}.json"
        cmd = [
            sys.executable,
            "-m",
            "tests.helpers.claim_worker",
            "--config",
            str(config),
            "--queue",
            queue,
            "--user",
            login,
            "--out",
            str(out),
            "--go",
            str(go),
        ]
        procs.append(
            (
                forked.Popen(cmd, cwd=repo, env={**os.environ, "PYTHONPATH": str(repo)}),
                out,
                login,
            )
        )
    go.write_text("go")
    done: dict[str, str] = {}
    for proc, out, login in procs:
        _, stderr = proc.communicate(timeout=600)
        assert out.exists(), f"worker died: {stderr[-3000:]}"
        data = json.loads(out.read_text())
        assert not data["failures"], data["failures"][0]
        for key, _token in data["done"]:
            assert str(key) not in done, f"{queue} item {key} completed twice"
            done[str(key)] = login
    return done


def _trail_by_item(pg: Pg, queue: str) -> dict[str, list[tuple[str, str]]]:
    """The queue's audit trail as the owner reads it: each item's (event, actor) in order."""
    by_item: dict[str, list[tuple[str, str]]] = {}
    with pg.admin.engine.connect() as conn:
        for key, event, actor in conn.execute(
            sa.text("SELECT item_key, event, actor FROM workbench_audit WHERE queue = :q ORDER BY id"), {"q": queue}
        ):
            by_item.setdefault(key, []).append((event, actor))
    return by_item


def _rows(pg: Pg, *names: str) -> list[list[Any]]:
    """Every row of these tables (names written here, not taken from input), as the owner reads them."""
    with pg.admin.engine.connect() as conn:
        return [sorted(map(tuple, conn.execute(sa.text(f"SELECT * FROM {name}")).all()), key=repr) for name in names]


def _run(engine: sa.Engine, statements: tuple[str, ...], params: dict[str, Any]) -> int:
    """Run `statements` as one hand-written transaction; the rows the last one touched."""
    count = 0
    with engine.begin() as conn:
        for statement in statements:
            count = conn.execute(sa.text(statement), params).rowcount
    return count


def _refused(engine: sa.Engine, *statements: str, **params: Any) -> str:
    """Run `statements` as one transaction; it must fail. Returns the database's message."""
    with pytest.raises(sa.exc.DBAPIError) as caught:
        _run(engine, statements, params)
    return str(caught.value.orig)


def _attempt(engine: sa.Engine, statement: str, params: dict[str, Any]) -> str | int:
    """The database's refusal (SQLSTATE 42501, or row-level security), or the rows changed."""
    try:
        return _run(engine, (statement,), params)
    except sa.exc.DBAPIError as exc:
        # A lock on an item that does not wait fails as a serialization failure (a claim that lost a
        # race retries it); by hand it is refused all the same.
        gone = getattr(exc.orig, "sqlstate", "") == "40001" and str(exc.orig).startswith("workbench: ")
        return str(exc.orig) if permissions.is_refusal(exc) or gone else f"not a refusal: {exc.orig}"


def _each_refused(engine: sa.Engine, attacks: list[tuple[str, dict[str, Any]]]) -> None:
    """Each hand-written statement is refused, or (the row-level security policy hid the row) changes nothing."""
    for statement, params in attacks:
        outcome = _attempt(engine, statement, params)
        assert outcome == 0 or (isinstance(outcome, str) and not outcome.startswith("not a refusal")), (
            statement,
            outcome,
        )


def _pick(pg: Pg) -> int:
    """A waiting case nobody holds."""
    with pg.admin.engine.connect() as conn:
        return int(
            conn.execute(
                sa.text("SELECT min(case_id) FROM cases WHERE wb_locked_by IS NULL AND status IN ('new', 'open')")
            ).scalar_one()
        )


def test_every_attack_by_an_operator_login_is_refused(pg: Pg, operator: tuple[str, str]) -> None:
    login, url = operator
    engine = _engine(pg, url)
    held = pg.open("ann").queue("cases").claim_next("ann")[0].lock  # someone else's live lock
    free = _pick(pg)
    before = _state(pg)
    lock_all = "wb_locked_by = NULL, wb_lock_token = NULL, wb_locked_at = NULL, wb_lock_expires = NULL"
    lock_mine = "UPDATE cases SET wb_locked_by = :me, wb_lock_token = md5('x'), "
    audit = "INSERT INTO workbench_audit (queue, item_key, event, actor, owner, token, outcome, at) VALUES "
    attacks: list[tuple[str, dict[str, Any]]] = [
        # A free row marked done, with no claim, naming another user (or nobody) as the doer.
        ("UPDATE cases SET status = 'resolved', resolution = 'done by ann' WHERE case_id = :k", {"k": free}),
        ("UPDATE cases SET status = 'resolved', wb_locked_by = 'ann' WHERE case_id = :k", {"k": free}),
        # A free row locked under the operator's own name until 2099 (past max_lock_duration), or
        # with a lock time in the future.
        (
            lock_mine + "wb_locked_at = timezone('UTC', now()), wb_lock_expires = '2099-01-01' WHERE case_id = :k",
            {"k": free, "me": login},
        ),
        (
            lock_mine + "wb_locked_at = '2099-01-01', wb_lock_expires = '2099-01-01 00:15' WHERE case_id = :k",
            {"k": free, "me": login},
        ),
        # A forged completion in the audit trail, under another's name and under one's own.
        (
            audit + "('cases', :key, 'complete', 'ann', 'ann', :token, 'resolved', timezone('UTC', now()))",
            {"key": str(held.key), "token": held.token},
        ),
        (
            audit + "('cases', :key, 'complete', :me, :me, NULL, 'resolved', timezone('UTC', now()))",
            {"key": str(free), "me": login},
        ),
        # Someone else's lock: force-release, reassign, complete with their (leaked) token.
        (f"UPDATE cases SET {lock_all} WHERE case_id = :k", {"k": held.key}),
        ("UPDATE cases SET wb_locked_by = :me WHERE case_id = :k", {"k": held.key, "me": login}),
        (
            f"UPDATE cases SET status = 'resolved', {lock_all} WHERE case_id = :k AND wb_lock_token = :t",
            {"k": held.key, "t": held.token},
        ),
        # Tables and columns workbench never writes as an operator.
        ("DELETE FROM workbench_audit", {}),
        ("UPDATE workbench_audit SET actor = 'ann'", {}),
        ("DELETE FROM cases WHERE case_id = :k", {"k": free}),
        ("UPDATE cases SET customer = 'x' WHERE case_id = :k", {"k": free}),
        (f"DELETE FROM {pg_names.ENFORCED_TABLE}", {}),
        # The function that settles an audit row the database wrote, on a row of another transaction.
        (f"SELECT {pg_names.SETTLE}(id, 'complete', 'resolved', NULL, NULL) FROM workbench_audit", {}),
    ]
    _each_refused(engine, attacks)
    assert _state(pg) == before


def test_the_database_records_hand_made_changes_and_refuses_forged_rows(pg: Pg, operator: tuple[str, str]) -> None:
    login, url = operator
    engine = _engine(pg, url)
    mine = pg.env.open(loader.parse(tomllib.loads(demo.config_text(url)), "op.toml")).queue("cases")
    lock = mine.claim_next(login)[0].lock
    before = _state(pg)
    release = (
        "UPDATE cases SET wb_locked_by = NULL, wb_lock_token = NULL, wb_locked_at = NULL, "
        "wb_lock_expires = NULL WHERE case_id = :k"
    )
    # A release of one's own lock, recorded as a completion: refused, and the release is undone with it.
    message = _refused(
        engine,
        release,
        "INSERT INTO workbench_audit (queue, item_key, event, actor, owner, "
        "outcome, at) VALUES ('cases', :key, 'complete', :me, :me, 'resolved', timezone('UTC', now()))",
        k=lock.key,
        key=str(lock.key),
        me=login,
    )
    assert "no such change was made" in message
    assert _state(pg) == before
    # The release alone, by hand: the database records it itself, under the login.
    with engine.begin() as conn:
        conn.execute(sa.text(release), {"k": lock.key})
    last = pg.admin.queue("cases").history(lock.key)[-1]
    assert (last.kind.value, last.actor, last.owner) == ("release", login, login)
    # A second claim, released by hand with workbench's own audit row: its reason settles the row
    # the database wrote, and the actor is the login whatever the row says.
    again = mine.claim(login, lock.key).lock
    with engine.begin() as conn:
        conn.execute(sa.text(release), {"k": again.key})
        conn.execute(
            sa.text(
                "INSERT INTO workbench_audit (queue, item_key, event, actor, owner, reason, at) VALUES "
                "('cases', :key, 'release', 'ann', :me, 'by hand', timezone('UTC', now()))"
            ),
            {"key": str(lock.key), "me": login},
        )
    history = pg.admin.queue("cases").history(lock.key)
    assert [(e.kind.value, e.actor, e.reason) for e in history[-2:]] == [
        ("claim", login, None),
        ("release", login, "by hand"),
    ]


def test_the_operator_works_a_full_item_through_workbench(pg: Pg, operator: tuple[str, str]) -> None:
    login, url = operator
    mine = pg.env.open(loader.parse(tomllib.loads(demo.config_text(url)), "op.toml")).queue("cases")
    lock = mine.claim_next(login)[0].lock
    mine.save(login, lock.key, lock.token, {"resolution": "replaced the cable", "time_spent_min": "12"})
    mine.extend(login, lock.key, lock.token)
    assert mine.complete(login, lock.key, lock.token, "resolved").outcome == "resolved"
    other = mine.claim_next(login)[0].lock
    mine.release(login, other.key, other.token, "needs a technician on site")
    assert pg.env.row(pg.admin, "cases", lock.key)["status"] == "resolved"
    events = [(e.kind.value, e.actor, e.outcome) for e in pg.admin.queue("cases").history(lock.key)]
    assert events == [
        ("claim", login, None),
        ("save", login, None),
        ("extend", login, None),
        ("complete", login, "resolved"),
    ]
    assert [e.kind.value for e in pg.admin.queue("cases").history(other.key)] == ["claim", "release"]
    # A defer: the database records the change as a release that may be a defer, and the trail says defer.
    put_off = mine.claim_next(login)[0].lock
    until = mine.db_clock().utc.replace(tzinfo=dt.UTC) + dt.timedelta(hours=20)
    mine.defer(login, put_off.key, put_off.token, until, "customer calls back tomorrow")
    deferred = pg.admin.queue("cases").history(put_off.key)[-1]
    assert (deferred.kind.value, deferred.actor, deferred.reason) == ("defer", login, "customer calls back tomorrow")
    assert [str(d.key) for d in pg.admin.queue("cases").deferred()] == [str(put_off.key)]
    # Next item runs the database's trusted claim; called by hand it claims for the login only.
    trusted = pg_names.next_function_name("cases")
    with _engine(pg, url).begin() as conn:
        key, holder = conn.execute(sa.text(f"SELECT case_id, wb_locked_by FROM {trusted}()")).one()
    assert holder == login
    assert [(e.kind.value, e.actor) for e in pg.admin.queue("cases").history(key)] == [("claim", login)]
    # A Complete without edits runs the database's trusted Complete (the way the queue's enforcement chose).
    again = mine.claim_next(login)[0].lock
    assert mine.complete(login, again.key, again.token, "resolved").outcome == "resolved"
    way = next(w for w in mine.writer.ways if isinstance(w, trusted_way.TrustedComplete))
    assert mine._shapes["resolved"] in way._fast and not way._gone
    events = [(e.kind.value, e.actor, e.outcome) for e in pg.admin.queue("cases").history(again.key)]
    assert events == [("claim", login, None), ("complete", login, "resolved")]
    # By hand, it completes only the caller's own live lock: someone else's item, token and all, is untouched.
    theirs = pg.open("ann").queue("cases").claim_next("ann")[0].lock
    done = pg_names.complete_function_name("cases")
    with _engine(pg, url).begin() as conn:
        assert (
            conn.execute(
                sa.text(f"SELECT * FROM {done}(:k, :t, 'resolved')"), {"k": theirs.key, "t": theirs.token}
            ).first()
            is None
        )
    assert pg.env.row(pg.admin, "cases", theirs.key)["wb_locked_by"] == "ann"
    # All the operator reads of any lock in the trail (the database's own rows included) is a digest.
    with _engine(pg, url).connect() as conn:
        kept = set(conn.execute(sa.text("SELECT token FROM workbench_audit WHERE token IS NOT NULL")).scalars())
    tokens = {lock.token, other.token, again.token, theirs.token}
    assert {audit.token_digest(t) for t in tokens} <= kept and not kept & tokens


def test_a_supervisors_actions_are_recorded_under_their_login(pg: Pg) -> None:
    ann = pg.open("ann").queue("cases")
    sue = pg.open("sue").queue("cases")
    first = ann.claim_next("ann")[0].lock
    # sue's client names bob as the actor; the database records the login that acted.
    Supervision(sue).force_release("bob", first.key, "customer called")
    # By hand, a supervisor is held to the protocol too: no outcome without a lock.
    message = _refused(pg.engine("sue"), "UPDATE cases SET status = 'resolved' WHERE case_id = :k", k=first.key)
    assert "may not make this change" in message
    history = pg.admin.queue("cases").history(first.key)
    assert [(e.kind.value, e.actor, e.owner) for e in history] == [
        ("claim", "ann", "ann"),
        ("force_release", "sue", "ann"),
    ]
    # A reopen: a finished item back to waiting with on_reopen, recorded under the supervisor's login.
    done = ann.claim_next("ann")[0].lock
    ann.complete("ann", done.key, done.token, "resolved")
    message = _refused(pg.engine("ann"), "UPDATE cases SET status = 'open' WHERE case_id = :k", k=done.key)
    assert "may not make this change" in message  # an operator may not reopen by hand
    Supervision(sue).reopen("bob", done.key, "customer says it still fails")
    assert pg.env.row(pg.admin, "cases", done.key)["status"] == "open"
    last = pg.admin.queue("cases").history(done.key)[-1]
    assert (last.kind.value, last.actor, last.reason) == ("reopen", "sue", "customer says it still fails")


# Triggers grants made: every one but init's on the audit trail (its rows' notices, migration 14).
NOT_INITS_TRIGGERS = "SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal AND tgname <> 'workbench_audit_notify'"


def test_grants_revoke_undoes_the_enforcement(pg: Pg, capsys: pytest.CaptureFixture[str]) -> None:
    running = pg.open("bob").queue("cases")  # a workbench that uses the trusted claim when grants go
    first = running.claim_next("bob")[0].lock
    config = pg.config_file(pg.server.user)
    code, out, err = support.run_cli(capsys, "--config", config, "grants", "cases", "--revoke")
    assert code == 0, err
    assert f"DROP TRIGGER IF EXISTS {pg_names.trigger_name('cases')} ON cases" in out and "DISABLE ROW LEVEL" in out
    code, out, err = support.run_cli(capsys, "--config", config, "grants", "cases", "--revoke", "--apply")
    assert code == 0, err
    with pg.admin.engine.connect() as conn:
        assert (
            conn.execute(sa.text("SELECT relrowsecurity FROM pg_class WHERE oid = 'cases'::regclass")).scalar() is False
        )
        assert conn.execute(sa.text(NOT_INITS_TRIGGERS)).scalar() == 0
        assert conn.execute(sa.text("SELECT to_regclass(:t)"), {"t": pg_names.ENFORCED_TABLE}).scalar() is None
        assert (
            conn.execute(
                sa.text("SELECT to_regprocedure(:f)"), {"f": pg_names.next_function_name("cases") + "()"}
            ).scalar()
            is None
        )
    # Operators keep their role but lose the grants: an operator login can no longer write the table.
    with pytest.raises(errors.WorkbenchError):
        pg.open("ann").queue("cases").claim_next("ann")
    # A login given plain privileges instead: the running workbench goes back to its own claim.
    with pg.admin.engine.begin() as conn:
        conn.exec_driver_sql("GRANT SELECT, UPDATE ON cases TO bob")
        conn.exec_driver_sql("GRANT SELECT, INSERT ON workbench_audit TO bob")
        conn.exec_driver_sql("GRANT SELECT ON workbench_cooldown, workbench_deferrals TO bob")
        conn.exec_driver_sql("GRANT USAGE ON SEQUENCE workbench_audit_id_seq TO bob")
    second = running.claim_next("bob")[0].lock
    assert second.key != first.key and pg.env.row(pg.admin, "cases", second.key)["wb_locked_by"] == "bob"
    assert [e.kind.value for e in pg.admin.queue("cases").history(second.key)] == ["claim"]


def test_an_operator_adds_notes_under_their_own_login_only(pg: Pg, operator: tuple[str, str]) -> None:
    login, url = operator
    mine = pg.env.open(loader.parse(tomllib.loads(demo.config_text(url)), "op.toml")).queue("cases")
    key = _pick(pg)
    assert mine.add_note(login, key, "Checked the cable.").author == login
    lock = mine.claim(login, key).lock
    mine.release(login, key, lock.token, note="Needs someone on site.")  # written with the release
    engine = _engine(pg, url)
    insert = (
        "INSERT INTO workbench_notes (queue, item_key, author, at, text) "
        "VALUES ('cases', :k, :who, timezone('UTC', now()), 'forged')"
    )
    for statement, params in (
        (insert, {"k": str(key), "who": "ann"}),
        ("UPDATE workbench_notes SET text = 'changed'", {}),
        ("DELETE FROM workbench_notes", {}),
    ):
        outcome = _attempt(engine, statement, params)
        assert outcome == 0 or (isinstance(outcome, str) and "not a refusal" not in outcome), (statement, outcome)
    assert [(n.author, n.kind, n.text) for n in pg.admin.queue("cases").notes(key)] == [
        (login, None, "Checked the cable."),
        (login, "release", "Needs someone on site."),
    ]


def test_a_release_reason_may_write_its_values_and_nothing_else(pg: Pg, operator: tuple[str, str]) -> None:
    login, url = operator
    reasons = '\n[queues.cases.release_reasons]\n"Needs a specialist" = { category = "Hardware" }\n'
    owner = pg.open(pg.server.user, demo.config_text("{url}") + reasons)
    with owner.engine.begin() as conn:  # the owner applies grants again for the new config
        pg_grants.apply(conn, pg_grants.plan(conn, owner.queue("cases").q, None))
    mine = pg.env.open(loader.parse(tomllib.loads(demo.config_text(url) + reasons), "op.toml")).queue("cases")
    lock = mine.claim_next(login)[0].lock
    mine.release(login, lock.key, lock.token, "Needs a specialist")
    assert pg.env.row(pg.admin, "cases", lock.key)["category"] == "Hardware"
    assert [(e.kind.value, e.actor, e.reason) for e in pg.admin.queue("cases").history(lock.key)][-1] == (
        "release",
        login,
        "Needs a specialist",
    )
    # By hand: a release that writes another value than any reason's is refused.
    other = mine.claim_next(login)[0].lock
    before = _state(pg)
    release = (
        "UPDATE cases SET wb_locked_by = NULL, wb_lock_token = NULL, wb_locked_at = NULL, "
        "wb_lock_expires = NULL, category = 'Software' WHERE case_id = :k"
    )
    assert "may not make this change" in _refused(_engine(pg, url), release, k=other.key)
    assert _state(pg) == before


def test_a_supervisor_moves_waiting_items_through_the_databases_check(pg: Pg) -> None:
    ann, sue = pg.open("ann").queue("cases"), pg.open("sue").queue("cases")
    held = ann.claim_next("ann")[0].lock
    waiting = _pick(pg)
    category = pg.env.row(pg.admin, "cases", waiting)["category"]
    target = "Hardware" if category != "Hardware" else "Email"
    # Workbench's move: the database records it under sue's login, with the client's reason and values.
    assert Supervision(sue).move("bob", {"category": target}, "level 2 takes these", keys=[waiting, held.key]) == [
        waiting
    ]
    assert pg.env.row(pg.admin, "cases", waiting)["category"] == target
    assert pg.env.row(pg.admin, "cases", held.key)["category"] != target or category == target
    last = pg.admin.queue("cases").history(waiting)[-1]
    assert (last.kind.value, last.actor, last.reason) == ("move", "sue", "level 2 takes these")
    before = _state(pg)
    # An operator may not move by hand (a column only a move writes is not granted; one the form
    # edits is, and the trigger refuses), nor a supervisor move a held item, or move and lock at once.
    assert "permission denied" in _refused(
        pg.engine("ann"), "UPDATE cases SET customer = 'x' WHERE case_id = :k", k=waiting
    )
    assert "may not make this change" in _refused(
        pg.engine("ann"), "UPDATE cases SET category = 'Email' WHERE case_id = :k", k=waiting
    )
    assert "workbench: " in _refused(
        pg.engine("sue"), "UPDATE cases SET category = 'Email' WHERE case_id = :k", k=held.key
    )
    assert "workbench: " in _refused(
        pg.engine("sue"),
        "UPDATE cases SET category = 'Email', wb_locked_by = 'sue', wb_lock_token = md5('x'), "
        "wb_locked_at = timezone('UTC', now()), wb_lock_expires = timezone('UTC', now()) + interval '5 minutes' "
        "WHERE case_id = :k",
        k=waiting,
    )
    # Nor may a supervisor take a held item out of its holder's hands by a "move" of its lock columns.
    other = "Network" if pg.env.row(pg.admin, "cases", held.key)["category"] != "Network" else "Access"
    assert "workbench: " in _refused(
        pg.engine("sue"), "UPDATE cases SET wb_locked_by = NULL, category = :c WHERE case_id = :k", k=held.key, c=other
    )
    assert _state(pg) == before
    # A supervisor's move by hand needs its reason (Text.REQUIRED), refused at commit without one; with
    # their own audit row giving it, the database records it under their login.
    by_hand = "UPDATE cases SET priority = 1 WHERE case_id = :k"
    assert "move needs a reason" in _refused(pg.engine("sue"), by_hand, k=waiting)
    assert _state(pg) == before
    with pg.engine("sue").begin() as conn:
        assert conn.execute(sa.text(by_hand), {"k": waiting}).rowcount == 1
        conn.execute(
            sa.text(
                "INSERT INTO workbench_audit (queue, item_key, event, actor, reason, at) VALUES "
                "('cases', :key, 'move', 'sue', 'urgent', timezone('UTC', now()))"
            ),
            {"key": str(waiting)},
        )
    last = pg.admin.queue("cases").history(waiting)[-1]
    assert (last.kind.value, last.actor, last.owner, last.reason) == ("move", "sue", None, "urgent")


def test_an_operator_undoes_their_own_complete_through_the_databases_check(pg: Pg) -> None:
    ann, bob = pg.open("ann").queue("cases"), pg.open("bob").queue("cases")
    lock = ann.claim_next("ann")[0].lock
    ann.complete("ann", lock.key, lock.token, "resolved")
    before = _state(pg)
    # bob may not take ann's Complete back, neither through workbench nor by hand.
    with pytest.raises(errors.UsageError):
        bob.undo_complete("bob", lock.key)
    relock = (
        "UPDATE cases SET status = 'open', wb_locked_by = :me, wb_lock_token = md5(random()::text), "
        "wb_locked_at = timezone('UTC', now()), wb_lock_expires = timezone('UTC', now()) + interval '5 minutes' "
        "WHERE case_id = :k"
    )
    assert "may not" in _refused(pg.engine("bob"), relock, k=lock.key, me="bob")
    assert _state(pg) == before
    # ann may, within undo_within: the item is hers again, recorded by the database as undo then claim.
    back = ann.undo_complete("ann", lock.key)
    assert back.lock.owner == "ann" and pg.env.row(pg.admin, "cases", lock.key)["wb_locked_by"] == "ann"
    events = [(e.kind.value, e.actor, e.owner, e.outcome) for e in pg.admin.queue("cases").history(lock.key)]
    assert events[-3:] == [
        ("complete", "ann", "ann", "resolved"),
        ("undo", "ann", "ann", "resolved"),
        ("claim", "ann", "ann", None),
    ]
    # Past undo_within (the trail's time moved back by the table's owner) the database refuses it.
    ann.complete("ann", lock.key, back.lock.token, "resolved")
    with pg.admin.engine.begin() as conn:
        conn.execute(
            sa.text(
                "UPDATE workbench_audit SET at = at - interval '1 hour' WHERE id = "
                "(SELECT max(id) FROM workbench_audit WHERE item_key = :k)"
            ),
            {"k": str(lock.key)},
        )
    before = _state(pg)
    assert "may not" in _refused(pg.engine("ann"), relock, k=lock.key, me="ann")
    assert _state(pg) == before
    # So it does once another program changed what the Complete wrote (the table's owner, unchecked).
    second = ann.claim_next("ann")[0].lock
    ann.complete("ann", second.key, second.token, "resolved")
    with pg.admin.engine.begin() as conn:
        conn.execute(sa.text("UPDATE cases SET status = 'waiting_customer' WHERE case_id = :k"), {"k": second.key})
    before = _state(pg)
    assert "may not" in _refused(pg.engine("ann"), relock, k=second.key, me="ann")
    assert _state(pg) == before


def test_deferrals_and_cool_downs_are_only_the_givers_own(pg: Pg) -> None:
    ann, bob = pg.open("ann").queue("cases"), pg.open("bob").queue("cases")
    # Workbench's defer and release (and its cool-down) go through for the holder.
    put_off = ann.claim_next("ann")[0].lock
    until = ann.db_clock().utc.replace(tzinfo=dt.UTC) + dt.timedelta(hours=20)
    ann.defer("ann", put_off.key, put_off.token, until, "customer calls back tomorrow")
    skipped = ann.claim_next("ann")[0].lock
    ann.release("ann", skipped.key, skipped.token, "not today")
    assert [str(d.key) for d in ann.deferred()] == [str(put_off.key)]
    free = _pick(pg)
    before = _state(pg), _rows(pg, "workbench_deferrals", "workbench_cooldown")
    defer = (
        "INSERT INTO workbench_deferrals (queue, item_key, actor, until, at, reason) VALUES "
        "('cases', :k, :who, timezone('UTC', now()) + :ahead * interval '1 day', timezone('UTC', now()), 'x')"
    )
    attacks: list[tuple[str, dict[str, Any]]] = [
        # Hiding a free item from everyone, under one's own name or another's, for a day or for years.
        (defer, {"k": str(free), "who": "bob", "ahead": 1}),
        (defer, {"k": str(free), "who": "ann", "ahead": 1}),
        (defer, {"k": str(free), "who": "bob", "ahead": 3000}),
        # Bringing someone's deferred item back early; keeping an item from someone else by a cool-down.
        ("DELETE FROM workbench_deferrals", {}),
        (
            (
                "INSERT INTO workbench_cooldown (queue, actor, item_key, until) VALUES "
                "('cases', 'ann', :k, timezone('UTC', now()) + interval '1 day')"
            ),
            {"k": str(free)},
        ),
        ("DELETE FROM workbench_cooldown", {}),
    ]
    _each_refused(pg.engine("bob"), attacks)
    assert (_state(pg), _rows(pg, "workbench_deferrals", "workbench_cooldown")) == before
    # bob's own defer of an item he holds works, and his release forgets ann's deferral once he holds it.
    mine = bob.claim_next("bob")[0].lock
    bob.defer("bob", mine.key, mine.token, until, "waiting for parts")
    assert sorted(str(d.key) for d in bob.deferred()) == sorted([str(put_off.key), str(mine.key)])


def test_a_queue_that_serves_a_group_is_claimed_by_its_members_only(pg: Pg, capsys: pytest.CaptureFixture[str]) -> None:
    text = demo.config_text("{url}").replace("[queues.cases]\n", '[queues.cases]\nserves = "level2"\n', 1)
    path = pg.tmp / "level2.toml"
    path.write_text(text.replace("{url}", pg.url), encoding="utf-8")
    code, _, err = support.run_cli(capsys, "--config", path, "grants", "cases", "--apply")
    assert code == 0, err
    with pg.admin.engine.begin() as conn:  # ann is in the group by the groups table, bob is not
        conn.execute(
            sa.text(
                "INSERT INTO workbench_groups (user_name, group_name, added_by, added_at) VALUES "
                "('ann', 'level2', 'sue', timezone('UTC', now()))"
            )
        )
    free = _pick(pg)
    before = _state(pg)
    # bob's own claim by hand, and the trusted claim he may call, are refused: he is not in level2.
    claim = (
        "UPDATE cases SET status = 'open', wb_locked_by = 'bob', wb_lock_token = md5(random()::text), "
        "wb_locked_at = timezone('UTC', now()), wb_lock_expires = timezone('UTC', now()) + interval '5 minutes' "
        "WHERE case_id = :k"
    )
    assert "may not" in _refused(pg.engine("bob"), claim, k=free)
    assert "is not in the group level2" in _refused(
        pg.engine("bob"), f"SELECT * FROM {pg_names.next_function_name('cases')}()"
    )
    with pytest.raises(errors.NotPermitted):
        pg.open("bob", text).queue("cases").claim_next("bob")
    assert _state(pg) == before
    # ann, a member, is served through workbench and by hand.
    assert pg.open("ann", text).queue("cases").claim_next("ann")[0].lock.owner == "ann"
    with pg.engine("ann").begin() as conn:
        assert conn.execute(sa.text(claim.replace("'bob'", "'ann'")), {"k": free}).rowcount == 1


FOLLOWUPS = """
[queues.followups]
title = "Follow-ups"
table = "cases"
key = "case_id"
order = ["opened_at asc"]
lock_duration = "15m"

[queues.followups.lock]
user = "wb_locked_by"
time = "wb_locked_at"
expires = "wb_lock_expires"
token = "wb_lock_token"

[queues.followups.todo]
status = ["waiting_customer"]

[queues.followups.outcomes.resolved]
set = { status = "resolved" }
"""


def test_two_queues_on_one_table_are_both_enforced(pg: Pg, capsys: pytest.CaptureFixture[str]) -> None:
    text = demo.config_text("{url}") + FOLLOWUPS
    path = pg.tmp / "followups.toml"
    path.write_text(text.replace("{url}", pg.url), encoding="utf-8")
    code, _, err = support.run_cli(capsys, "--config", path, "grants", "followups", "--apply")
    assert code == 0, err
    cases, followups = pg.open("ann", text).queue("cases"), pg.open("bob", text).queue("followups")
    # A case waits for its customer in `cases`, then bob takes it up in `followups`: each queue's
    # operations pass the table's one trigger and are recorded under that queue.
    lock = cases.claim_next("ann")[0].lock
    cases.complete("ann", lock.key, lock.token, "waiting")
    taken = followups.claim("bob", lock.key).lock
    followups.save("bob", lock.key, taken.token, {"resolution": "customer answered"})
    followups.complete("bob", lock.key, taken.token, "resolved")
    owner = pg.open(pg.server.user, text)
    events = [(e.queue, e.kind.value, e.actor) for e in owner.queue("cases").history(lock.key)]
    events += [(e.queue, e.kind.value, e.actor) for e in owner.queue("followups").history(lock.key)]
    assert sorted(events) == sorted(
        [
            ("cases", "claim", "ann"),
            ("cases", "complete", "ann"),
            ("followups", "claim", "bob"),
            ("followups", "save", "bob"),
            ("followups", "complete", "bob"),
        ]
    )
    # By hand, still only the queues' operations: a resolved case does not go back to waiting.
    before = _state(pg)
    assert "may not make this change to cases, followups item" in _refused(
        pg.engine("bob"), "UPDATE cases SET status = 'waiting_customer' WHERE case_id = :k", k=lock.key
    )
    assert _state(pg) == before
    # Revoking one queue leaves the other enforced; revoking both leaves no trigger.
    code, _, err = support.run_cli(capsys, "--config", path, "grants", "followups", "--revoke", "--apply")
    assert code == 0, err
    assert "may not make this change to cases item" in _refused(
        pg.engine("bob"), "UPDATE cases SET status = 'waiting_customer' WHERE case_id = :k", k=lock.key
    )
    code, _, err = support.run_cli(capsys, "--config", path, "grants", "cases", "--revoke", "--apply")
    assert code == 0, err
    with pg.admin.engine.connect() as conn:
        assert conn.execute(sa.text(NOT_INITS_TRIGGERS)).scalar() == 0


def test_four_eyes_is_kept_by_the_database(pg: Pg, capsys: pytest.CaptureFixture[str]) -> None:
    pg.imports_enforced(capsys)
    imports, review = pg.open("ann").queue("imports"), pg.open("bob").queue("imports_review")
    # ann verifies two lines: her first items, each goes to review, recorded by the database.
    done = []
    for _ in range(2):
        line = imports.claim_next("ann")[0].lock
        imports.complete("ann", line.key, line.token, "verified")
        done.append(line.key)
    with pg.admin.engine.connect() as conn:
        rows = conn.execute(sa.text("SELECT item_key, doer, why, verdict FROM workbench_reviews ORDER BY id")).all()
    assert [tuple(r) for r in rows] == [(str(k), "ann", "first", None) for k in done]
    third = imports.claim_next("ann")[0].lock
    before = _state(pg), _rows(pg, "workbench_reviews")
    lock_it = (
        "UPDATE import_rows SET wb_locked_by = 'ann', wb_lock_token = md5(random()::text), "
        "wb_locked_at = timezone('UTC', now()), wb_lock_expires = timezone('UTC', now()) + interval '5 minutes' "
        "WHERE row_id = :k"
    )
    attacks: list[tuple[str, dict[str, Any]]] = [
        # One of her first items verified without review; her own line claimed for review.
        (
            (
                "UPDATE import_rows SET check_status = 'verified', checked_by = 'ann', checked_at = timezone('UTC', now()), "  # noqa: E501
                "wb_locked_by = NULL, wb_lock_token = NULL, wb_locked_at = NULL, wb_lock_expires = NULL WHERE row_id = :k"  # noqa: E501
            ),
            {"k": third.key},
        ),
        (lock_it, {"k": done[0]}),
        # Reviews forged, decided by the doer, handed to someone else, removed.
        (
            (
                "INSERT INTO workbench_reviews (queue, item_key, source, doer, at, why) VALUES "
                "('imports_review', :k, 'imports', 'bob', timezone('UTC', now()), 'share')"
            ),
            {"k": str(third.key)},
        ),
        (
            "UPDATE workbench_reviews SET verdict = 'accepted', reviewer = 'ann', reviewed_at = timezone('UTC', now())",
            {},
        ),
        ("UPDATE workbench_reviews SET doer = 'bob'", {}),
        ("DELETE FROM workbench_reviews", {}),
        # A "sent back" deferral without a review's verdict.
        (
            (
                "INSERT INTO workbench_deferrals (queue, item_key, actor, until, at, reason) VALUES "
                "('imports', :k, 'ann', timezone('UTC', now()), timezone('UTC', now()), 'sent back by review')"
            ),
            {"k": str(done[0])},
        ),
    ]
    _each_refused(pg.engine("ann"), attacks)
    assert (_state(pg), _rows(pg, "workbench_reviews")) == before
    # Nor does workbench serve ann her own line for review; bob reviews both: one sent back, one accepted.
    with pytest.raises(errors.NothingToClaim):
        pg.open("ann").queue("imports_review").claim_next("ann")
    first = review.claim_next("bob")[0].lock
    review.complete("bob", first.key, first.token, "sent_back", note="The IBAN has a digit too few.")
    second = review.claim_next("bob")[0].lock
    review.complete("bob", second.key, second.token, "accepted")
    with pg.admin.engine.connect() as conn:
        rows = conn.execute(sa.text("SELECT item_key, doer, verdict, reviewer FROM workbench_reviews")).all()
        deferred = conn.execute(sa.text("SELECT queue, item_key, actor FROM workbench_deferrals")).all()
    assert sorted(tuple(r) for r in rows) == sorted(
        [(str(first.key), "ann", "sent_back", "bob"), (str(second.key), "ann", "accepted", "bob")]
    )
    assert [tuple(d) for d in deferred] == [("imports", str(first.key), "ann")]
    # The sent-back line comes back to ann first.
    assert imports.claim_next("ann")[0].lock.key == first.key


def _tickets(
    pg: Pg,
    capsys: pytest.CaptureFixture[str],
    text: str,
    *queues: str,
    rows: int = 6,
) -> str:
    """The vendor's tickets table (locks in workbench's lock table, shape 5) with `rows` open tickets,
    and `queues` of config `text` under grants; returns the config text."""
    md = sa.MetaData()
    table = sa.Table(
        "vendor_tickets",
        md,
        sa.Column("ticket_id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("subject", sa.String(200), nullable=False),
        sa.Column("priority", sa.Integer),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("opened_at", sa.DateTime),
        sa.Column("solved_by", sa.String(50)),
        sa.Column("solved_at", sa.DateTime),
    )
    md.create_all(pg.admin.engine)
    with pg.admin.engine.begin() as conn:
        conn.execute(
            sa.insert(table),
            [
                {
                    "ticket_id": i,
                    "subject": f"Ticket {i}",
                    "priority": 1,
                    "state": "open",
                    "opened_at": dt.datetime(2026, 1, 1) + dt.timedelta(minutes=i),
                }
                for i in range(1, rows + 1)
            ],
        )
    path = pg.tmp / "tickets.toml"
    path.write_text(text.replace("{url}", pg.url), encoding="utf-8")
    for queue in queues:
        code, _, err = support.run_cli(capsys, "--config", path, "grants", queue, "--apply")
        assert code == 0, err
    return text


def test_a_queue_whose_locks_live_in_a_lock_table_is_enforced(pg: Pg, capsys: pytest.CaptureFixture[str]) -> None:
    text = _tickets(pg, capsys, support.sample_config("vendor-tickets"), "tickets")
    ann, bob, sue = (pg.open(login, text).queue("tickets") for login in ("ann", "bob", "sue"))
    # Workbench's operations go through, each recorded by the database under the login.
    lock = ann.claim_next("ann")[0].lock
    ann.save("ann", lock.key, lock.token, {"subject": "Printer jams on tray 2"})
    ann.extend("ann", lock.key, lock.token)
    ann.complete("ann", lock.key, lock.token, "solved")
    theirs = bob.claim_next("bob")[0].lock
    kept = ann.claim_next("ann")[0].lock
    bob.release("bob", theirs.key, theirs.token, "needs the vendor")
    owner_wb = pg.open(pg.server.user, text)
    owner = owner_wb.queue("tickets")
    assert [(e.kind.value, e.actor, e.outcome) for e in owner.history(lock.key)] == [
        ("claim", "ann", None),
        ("save", "ann", None),
        ("extend", "ann", None),
        ("complete", "ann", "solved"),
    ]
    assert [(e.kind.value, e.actor) for e in owner.history(theirs.key)] == [("claim", "bob"), ("release", "bob")]
    row = pg.env.row(owner_wb, "tickets", lock.key)
    assert (row["state"], row["solved_by"], row["subject"]) == ("solved", "ann", "Printer jams on tray 2")
    free = next(
        i
        for i in range(1, 7)
        if i not in (lock.key, kept.key) and pg.env.row(owner_wb, "tickets", i)["state"] == "open"
    )
    before = _state(pg), _rows(pg, "workbench_locks", "vendor_tickets")
    insert = (
        "INSERT INTO workbench_locks (queue, item_key, lock_user, locked_at, expires_at, token) VALUES "
        "('tickets', :k, :who, timezone('UTC', now()), :until, md5(random()::text))"
    )
    _each_refused(
        pg.engine("bob"),
        [
            # A lock under someone else's name, one until 2099, one of a finished ticket.
            (insert, {"k": str(free), "who": "ann", "until": dt.datetime(2026, 1, 1)}),
            (insert.replace(":until", "timezone('UTC', now()) + interval '10 years'"), {"k": str(free), "who": "bob"}),
            (
                insert.replace(":until", "timezone('UTC', now()) + interval '5 minutes'"),
                {"k": str(lock.key), "who": "bob"},
            ),
            # ann's lock taken over, extended or removed; her ticket finished without a lock.
            ("UPDATE workbench_locks SET lock_user = 'bob' WHERE item_key = :k", {"k": str(kept.key)}),
            (
                "UPDATE workbench_locks SET expires_at = expires_at + interval '1 day' WHERE item_key = :k",
                {"k": str(kept.key)},
            ),
            ("DELETE FROM workbench_locks WHERE item_key = :k", {"k": str(kept.key)}),
            ("UPDATE vendor_tickets SET state = 'solved', solved_by = 'bob' WHERE ticket_id = :k", {"k": kept.key}),
            ("UPDATE vendor_tickets SET state = 'solved', solved_by = 'bob' WHERE ticket_id = :k", {"k": free}),
        ],
    )
    # Nor may ann finish her own ticket in someone else's name.
    give_up = "DELETE FROM workbench_locks WHERE item_key = CAST(:k AS text)"
    solve = "UPDATE vendor_tickets SET state = 'solved', solved_by = 'bob' WHERE ticket_id = :k"
    assert "workbench:" in _refused(pg.engine("ann"), give_up, solve, k=kept.key)
    assert (_state(pg), _rows(pg, "workbench_locks", "vendor_tickets")) == before
    # A supervisor's force-release is recorded under their login; then bob may claim the ticket.
    Supervision(sue).force_release("sue", kept.key, "ann is away")
    assert [(e.kind.value, e.actor, e.owner) for e in owner.history(kept.key)][-1] == ("force_release", "sue", "ann")
    assert bob.claim("bob", kept.key).lock.owner == "bob"


TICKETS_REVIEW = """
[queues.tickets.review]
by = "tickets_review"
outcomes = ["solved"]
first_items = 2
set = { state = "to_review" }
send_back = "sent_back"

[queues.tickets_review]
title = "Ticket review"
table = "vendor_tickets"
key = "ticket_id"
order = ["opened_at"]
lock_duration = "15m"

[queues.tickets_review.lock]
table = "workbench_locks"

[queues.tickets_review.todo]
state = "to_review"

[queues.tickets_review.outcomes.accepted]
set = { state = "solved" }

[queues.tickets_review.outcomes.sent_back]
set = { state = "open" }
"""


def test_four_eyes_on_a_lock_table_queue_is_kept_by_the_database(pg: Pg, capsys: pytest.CaptureFixture[str]) -> None:
    text = _tickets(pg, capsys, support.sample_config("vendor-tickets") + TICKETS_REVIEW, "tickets", "tickets_review")
    tickets, review = pg.open("ann", text).queue("tickets"), pg.open("bob", text).queue("tickets_review")
    first = tickets.claim_next("ann")[0].lock
    tickets.complete("ann", first.key, first.token, "solved")
    # The second of her first two, given up and marked solved by hand without review: refused.
    second = tickets.claim_next("ann")[0].lock
    before = _state(pg), _rows(pg, "workbench_locks", "vendor_tickets", "workbench_reviews")
    assert "without review" in _refused(
        pg.engine("ann"),
        "DELETE FROM workbench_locks WHERE item_key = CAST(:k AS text)",
        "UPDATE vendor_tickets SET state = 'solved', solved_by = 'ann', solved_at = timezone('UTC', now()) "
        "WHERE ticket_id = :k",
        k=second.key,
    )
    assert (_state(pg), _rows(pg, "workbench_locks", "vendor_tickets", "workbench_reviews")) == before
    tickets.complete("ann", second.key, second.token, "solved")
    assert sorted((r[2], r[4], r[6]) for r in _rows(pg, "workbench_reviews")[0]) == [
        (str(first.key), "ann", "first"),
        (str(second.key), "ann", "first"),
    ]
    # ann may not take her own work for review, through workbench or by hand.
    with pytest.raises(errors.NothingToClaim):
        pg.open("ann", text).queue("tickets_review").claim_next("ann")
    assert "workbench:" in _refused(
        pg.engine("ann"),
        "INSERT INTO workbench_locks (queue, item_key, lock_user, locked_at, expires_at, token) "
        "VALUES ('tickets_review', CAST(:k AS text), 'ann', timezone('UTC', now()), "
        "timezone('UTC', now()) + interval '5 minutes', md5(random()::text))",
        k=first.key,
    )
    # bob sends one back and accepts the other; the database records both verdicts under his login.
    one = review.claim_next("bob")[0].lock
    review.complete("bob", one.key, one.token, "sent_back", note="The vendor's reference is missing.")
    other = review.claim_next("bob")[0].lock
    review.complete("bob", other.key, other.token, "accepted")
    verdicts = sorted((r[2], r[7], r[8]) for r in _rows(pg, "workbench_reviews")[0])
    assert verdicts == sorted([(str(one.key), "sent_back", "bob"), (str(other.key), "accepted", "bob")])
    assert pg.env.row(pg.open(pg.server.user, text), "tickets", one.key)["state"] == "open"


def test_rows_marked_with_a_claim_id_of_their_own_are_enforced(pg: Pg, capsys: pytest.CaptureFixture[str]) -> None:
    md = sa.MetaData()
    exports = sa.Table(
        "export_rows",
        md,
        sa.Column("row_id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("payload", sa.String(200)),
        sa.Column("processed", sa.Integer, nullable=False),
        sa.Column("Lock", sa.String(36)),
    )
    payments = sa.Table(
        "payments",
        md,
        sa.Column("payment_id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("received_at", sa.DateTime, nullable=False),
        sa.Column("amount", sa.Numeric(10, 2)),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("process_uuid", sa.Uuid()),
    )
    md.create_all(pg.admin.engine)
    start = dt.datetime(2026, 3, 1)
    with pg.admin.engine.begin() as conn:
        conn.execute(
            sa.insert(exports),
            [
                {"row_id": i, "created_at": start + dt.timedelta(minutes=i), "payload": f"row {i}", "processed": 0}
                for i in range(1, 5)
            ],
        )
        conn.execute(
            sa.insert(payments),
            [
                {"payment_id": i, "received_at": start + dt.timedelta(minutes=i), "amount": i, "status": "new"}
                for i in range(1, 5)
            ],
        )
        conn.execute(sa.text("UPDATE export_rows SET \"Lock\" = 'another-program' WHERE row_id = 4"))
    text = support.sample_config("claim-ids")
    path = pg.tmp / "claim-ids.toml"
    path.write_text(text.replace("{url}", pg.url), encoding="utf-8")
    for queue in ("exports", "payments"):
        code, _, err = support.run_cli(capsys, "--config", path, "grants", queue, "--apply")
        assert code == 0, err
    ann, bob = pg.open("ann", text), pg.open("bob", text)
    done = ann.queue("exports").claim_next("ann")[0].lock
    ann.queue("exports").complete("ann", done.key, done.token, "done")
    paid = ann.queue("payments").claim_next("ann")[0].lock
    ann.queue("payments").complete("ann", paid.key, paid.token, "processed")
    held = ann.queue("exports").claim_next("ann")[0].lock
    back = bob.queue("payments").claim_next("bob")[0].lock
    bob.queue("payments").release("bob", back.key, back.token, "wrong amount")
    owner = pg.open(pg.server.user, text)
    assert (pg.env.row(owner, "exports", done.key)["processed"], pg.env.row(owner, "exports", done.key)["Lock"]) == (
        1,
        None,
    )
    assert str(pg.env.row(owner, "payments", paid.key)["process_uuid"]) == str(uuid.UUID(paid.token))  # kept
    released = pg.env.row(owner, "payments", back.key)
    assert (released["status"], released["process_uuid"]) == ("new", None)
    assert [e.kind.value for e in owner.queue("exports").history(done.key)] == ["claim", "complete"]
    before = _state(pg), _rows(pg, "workbench_locks", "export_rows", "payments")
    _each_refused(
        pg.engine("bob"),
        [
            # A claim id set on a free row without a lock, ann's cleared, one taken by another program locked.
            ("UPDATE export_rows SET \"Lock\" = 'x' WHERE row_id = 3", {}),
            ('UPDATE export_rows SET "Lock" = NULL WHERE row_id = :k', {"k": held.key}),
            (
                (
                    "INSERT INTO workbench_locks (queue, item_key, lock_user, locked_at, expires_at, token) VALUES "
                    "('exports', '4', 'bob', timezone('UTC', now()), timezone('UTC', now()) + interval '5 minutes', "
                    "md5(random()::text))"
                ),
                {},
            ),
        ],
    )
    assert (_state(pg), _rows(pg, "workbench_locks", "export_rows", "payments")) == before


def test_operators_racing_for_lock_rows_under_grants_record_only_what_happened(
    pg: Pg,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Four processes (two logins) drain a lock-table queue under grants: every ticket is claimed and
    solved once, by one login, and the audit trail holds exactly one claim per ticket: a claim that
    lost its race for the lock row (INSERT … ON CONFLICT DO NOTHING) records nothing."""
    text = _tickets(pg, capsys, support.sample_config("vendor-tickets"), "tickets", rows=300)
    done = _drain(pg, text, "tickets")
    assert len(done) == 300
    with pg.admin.engine.connect() as conn:
        solved = dict(
            conn.execute(
                sa.text("SELECT CAST(ticket_id AS text), solved_by FROM vendor_tickets WHERE state = 'solved'")
            ).all()
        )
        left = conn.execute(sa.text("SELECT count(*) FROM workbench_locks")).scalar()
    assert solved == done and left == 0
    assert _trail_by_item(pg, "tickets") == {
        key: [("claim", login), ("complete", login)] for key, login in done.items()
    }


def test_operators_draining_a_queue_under_grants_record_each_item_once(pg: Pg) -> None:
    """The same with the lock in the queue's own row, through the trusted claim and Complete."""
    with pg.admin.engine.begin() as conn:
        conn.execute(sa.text("UPDATE cases SET status = 'resolved'"))
        conn.execute(
            sa.text(
                "INSERT INTO cases (case_id, opened_at, customer, subject, category, priority, status) "
                "SELECT 1000 + i, timezone('UTC', now()), 'c', 's', 'Email', 2, 'new' "
                "FROM generate_series(1, 300) AS i"
            )
        )
    text = demo.config_text("{url}").replace("max_locks_per_user = 3", "max_locks_per_user = 0")
    done = _drain(pg, text, "cases")
    assert sorted(done) == sorted(str(1000 + i) for i in range(1, 301))
    with pg.admin.engine.connect() as conn:
        held = conn.execute(sa.text("SELECT count(*) FROM cases WHERE wb_locked_by IS NOT NULL")).scalar()
    assert held == 0
    assert _trail_by_item(pg, "cases") == {key: [("claim", login), ("complete", login)] for key, login in done.items()}
