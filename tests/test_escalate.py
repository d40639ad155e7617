"""Escalate (core/workflow.py, issue 47): an operator hands the item he holds to a supervisor with a
required reason; the queue's on_escalate values take it out of todo. The engine, on every backend."""

from __future__ import annotations

import re
from typing import Any

import pytest
import sqlalchemy as sa

from tests import support
from tests.test_permissions import Pg, pg  # noqa: F401  (the fixture: a demo database under `grants`)
from tests.test_protocol import _tickets
from tests.test_protocol_holes import _apply
from workbench import demo
from workbench.core import errors, models, problems, workflow
from workbench.db import service

NO_ESCALATE = "queues.cases.on_escalate"  # the demo's cases escalate; a test without it removes the table


def _demo(env: support.Env, extra: str = "", rows: int = 4, without: str = "") -> service.Workbench:
    """The demo (its cases with on_escalate), `extra` added and the table `without` removed, a few rows."""
    text = demo.config_text("{url}")
    wb = env.open(env.load((support.without_table(text, without) if without else text) + extra))
    demo.populate(wb.engine, cases=rows, imports=1)
    wb.init()
    demo.attach_all(wb)
    return wb


def test_an_operator_hands_his_item_to_a_supervisor_with_a_reason(native_env: support.Env) -> None:
    wb = _demo(native_env)
    q = wb.queue("cases")
    lock = q.claim_next("alice")[0].lock
    q.escalate("alice", lock.key, lock.token, "  customer threatens legal action ")
    row = native_env.row(wb, "cases", lock.key)
    # The lock cleared (every lock column), on_escalate's values written.
    assert (row["wb_locked_by"], row["wb_locked_at"], row["wb_lock_expires"], row["wb_lock_token"]) == (None,) * 4
    assert row["status"] == "escalated"
    last = q.history(lock.key)[-1]
    said = "customer threatens legal action"
    assert (last.kind, last.actor, last.reason) == (models.EventKind.ESCALATE, "alice", said)
    # Out of todo: nobody is served it again, nor may pick it.
    with pytest.raises(errors.NothingToClaim):
        q.claim("bob", lock.key)
    served = {c.lock.key for c in q.claim_next("bob", count=10)}
    assert lock.key not in served
    # The same escalate again (a lost reply retried) stands as first made.
    q.escalate("alice", lock.key, lock.token, "customer threatens legal action")
    assert [e.kind for e in q.history(lock.key)].count(models.EventKind.ESCALATE) == 1


def test_escalate_is_refused_as_the_table_says(native_env: support.Env) -> None:
    wb = _demo(native_env)
    q = wb.queue("cases")
    lock = q.claim_next("alice")[0].lock
    # A reason is required (the table's Text.REQUIRED), said as for every transition that needs one.
    assert workflow.TRANSITIONS["escalate"].reason is workflow.Text.REQUIRED
    needed = "^" + re.escape(problems.REASON_NEEDED.format("escalate")) + "$"
    with pytest.raises(errors.UsageError, match=needed):
        q.escalate("alice", lock.key, lock.token, " ")
    # Only under one's own live lock (LockRule.OWN_LIVE_HERE): refused as a lost lock.
    with pytest.raises(workflow.TRANSITIONS["escalate"].refusal):
        q.escalate("bob", lock.key, lock.token, "not mine")
    assert native_env.row(wb, "cases", lock.key)["wb_locked_by"] == "alice"
    q.release("alice", lock.key, lock.token)
    with pytest.raises(errors.LockLost):
        q.escalate("alice", lock.key, lock.token, "too late")
    assert native_env.row(wb, "cases", lock.key)["status"] != "escalated"


def test_a_queue_without_on_escalate_refuses_escalate(native_env: support.Env) -> None:
    wb = _demo(native_env, without=NO_ESCALATE)
    q = wb.queue("cases")
    lock = q.claim_next("alice")[0].lock
    with pytest.raises(errors.UsageError, match=r"set \[queues\.cases\.on_escalate\]"):
        q.escalate("alice", lock.key, lock.token, "help")
    assert native_env.row(wb, "cases", lock.key)["wb_locked_by"] == "alice"


def test_on_escalate_must_take_the_item_out_of_todo(native_env: support.Env) -> None:
    with pytest.raises(errors.ConfigError, match=r"on_escalate.*served to operators again"):
        _demo(native_env, extra='[queues.cases.on_escalate]\nstatus = "open"\n', without=NO_ESCALATE).queue("cases")


# -- PostgreSQL under `workbench grants`: the database admits an escalate as the table says ------------

HAND_ESCALATE = (
    "UPDATE cases SET status = 'escalated', wb_locked_by = NULL, wb_locked_at = NULL, wb_lock_expires = NULL, "
    "wb_lock_token = NULL{edit} WHERE case_id = :k"
)
OWN_ROW = (
    "INSERT INTO workbench_audit (queue, item_key, event, actor, owner, reason, at) VALUES "
    "('cases', CAST(:k AS text), 'escalate', 'ann', 'ann', :reason, timezone('UTC', now()))"
)


def _refused(engine: sa.Engine, *statements: str, **params: object) -> str:
    """The database's refusal of `statements`, run in one transaction (committed: some checks run then)."""

    def run() -> None:
        with engine.begin() as conn:
            for statement in statements:
                conn.execute(sa.text(statement), params)

    with pytest.raises(sa.exc.DBAPIError) as refused:
        run()
    return str(refused.value.orig)


def test_postgresql_under_grants_admits_escalate_as_the_table_says(pg: Pg, capsys: pytest.CaptureFixture[str]) -> None:
    text = demo.config_text("{url}")
    _apply(pg, capsys, text, "cases")
    ann = pg.open("ann", text).queue("cases")
    # Through workbench, as the operator's own login: admitted, recorded with its reason.
    lock = ann.claim_next("ann")[0].lock
    ann.escalate("ann", lock.key, lock.token, "legal threat")
    row = pg.env.row(pg.admin, "cases", lock.key)
    assert (row["status"], row["wb_locked_by"], row["wb_lock_token"]) == ("escalated", None, None)
    last = ann.history(lock.key)[-1]
    assert (last.kind, last.actor, last.reason) == (models.EventKind.ESCALATE, "ann", "legal threat")
    # By hand, as the same login: an escalate with an edit (it writes on_escalate's values only) is not
    # one of the queue's changes; one without a reason is refused at commit with the engine's text.
    engine = pg.engine("ann")
    for edit, reason, said in (
        (", subject = 'changed'", "legal threat", "may not"),
        ("", " ", problems.REASON_NEEDED.format("escalate")),
        ("", None, problems.REASON_NEEDED.format("escalate")),
    ):
        held = ann.claim_next("ann")[0].lock
        statements = [HAND_ESCALATE.format(edit=edit)] + ([OWN_ROW] if reason is not None else [])
        refusal = _refused(engine, *statements, k=held.key, reason=reason)
        assert said in refusal, refusal
        assert pg.env.row(pg.admin, "cases", held.key)["wb_locked_by"] == "ann"
    # With its reason, the same change by hand is admitted and recorded as an escalate.
    with engine.begin() as conn:
        conn.execute(sa.text(HAND_ESCALATE.format(edit="")), {"k": held.key})
        conn.execute(sa.text(OWN_ROW), {"k": held.key, "reason": "by hand"})
    last = ann.history(held.key)[-1]
    assert (last.kind, last.reason) == (models.EventKind.ESCALATE, "by hand")


def test_workbench_escalate_on_the_command_line(native_env: support.Env, capsys: pytest.CaptureFixture[str]) -> None:
    """`workbench escalate QUEUE KEY --token T --reason TEXT`, through the operator's service."""
    wb = _demo(native_env)
    path = native_env.write_config(demo.config_text("{url}"))
    lock = wb.queue("cases").claim_next("alice")[0].lock
    args = ("--config", path, "--user", "alice", "escalate", "cases", str(lock.key), "--token", lock.token)
    code, _, err = support.run_cli(capsys, *args, "--reason", " ")
    assert code != 0 and problems.REASON_NEEDED.format("escalate") in err, err
    code, out, err = support.run_cli(capsys, *args, "--reason", "legal threat")
    assert code == 0, err
    assert out.strip() == f"escalated cases {lock.key}: handed to a supervisor"
    assert native_env.row(wb, "cases", lock.key)["status"] == "escalated"
    # Again, once the lock is gone: said as a lost lock (exit 4), as for every write under the lock.
    code, _, err = support.run_cli(capsys, "--json", *args[:-2], "--token", "0" * 32, "--reason", "again")
    assert code == 4, err


def test_the_history_says_escalated_in_the_window(native_env: support.Env) -> None:
    """The operator sees what became of the item: its history in the window names the escalate."""
    from workbench.gui import item_log  # Qt only where the window is tested

    wb = _demo(native_env)
    q = wb.queue("cases")
    lock = q.claim_next("alice")[0].lock
    q.escalate("alice", lock.key, lock.token, "legal threat")
    assert item_log.event_label(q.history(lock.key)[-1].kind) == "Escalated"


TICKETS_ESCALATE = """
[queues.tickets.on_escalate]
state = "escalated"
"""
GIVE_UP = "DELETE FROM workbench_locks WHERE queue = 'tickets' AND item_key = CAST(:k AS text)"
TICKET_ESCALATED = "UPDATE vendor_tickets SET state = 'escalated'{edit} WHERE ticket_id = :k"
TICKET_ROW = OWN_ROW.replace("'cases'", "'tickets'")


def test_postgresql_lock_table_under_grants_admits_escalate_as_the_table_says(
    pg: Pg, capsys: pytest.CaptureFixture[str]
) -> None:
    """A lock-table queue (db/rules/pg_locks.py): the lock row given up, then the queue row's on_escalate
    values; recorded as an escalate with its reason; refused with an edit or without a reason."""
    text = _tickets(pg, capsys, support.sample_config("vendor-tickets") + TICKETS_ESCALATE, "tickets")
    ann = pg.open("ann", text).queue("tickets")
    lock = ann.claim_next("ann")[0].lock
    ann.escalate("ann", lock.key, lock.token, "vendor unreachable")
    last = ann.history(lock.key)[-1]
    assert (last.kind, last.actor, last.reason) == (models.EventKind.ESCALATE, "ann", "vendor unreachable")
    with pg.admin.engine.connect() as conn:
        state = conn.execute(sa.text("SELECT state FROM vendor_tickets WHERE ticket_id = :k"), {"k": lock.key})
        assert state.scalar_one() == "escalated"
    engine = pg.engine("ann")
    for edit, reason, said in (
        (", subject = 'changed'", "vendor unreachable", "may not"),
        ("", None, problems.REASON_NEEDED.format("escalate")),
    ):
        held = ann.claim_next("ann")[0].lock
        statements = [GIVE_UP, TICKET_ESCALATED.format(edit=edit)] + ([TICKET_ROW] if reason is not None else [])
        refusal = _refused(engine, *statements, k=held.key, reason=reason)
        assert said in refusal, refusal
        assert held.key in [mine.key for mine in ann.mine("ann")]  # still held: nothing was admitted
    with engine.begin() as conn:
        for statement in (GIVE_UP, TICKET_ESCALATED.format(edit=""), TICKET_ROW):
            conn.execute(sa.text(statement), {"k": held.key, "reason": "by hand"})
    last = ann.history(held.key)[-1]
    assert (last.kind, last.reason) == (models.EventKind.ESCALATE, "by hand")


def _escalated_by(q: Any, user: str, count: int) -> list[Any]:
    """The keys of `count` items `user` claimed in queue `q` and handed to a supervisor."""
    keys = []
    for _ in range(count):
        lock = q.claim_next(user)[0].lock
        q.escalate(user, lock.key, lock.token, "legal threat")
        keys.append(lock.key)
    return keys


TICKETS_TAKE = (
    TICKETS_ESCALATE
    + """
[queues.tickets.on_reopen]
state = "open"
"""
)
TAKE_LOCK = (
    "INSERT INTO workbench_locks (queue, item_key, lock_user, locked_at, expires_at, token) VALUES ('tickets', "
    "CAST(:k AS text), session_user, timezone('UTC', now()), timezone('UTC', now()) + interval '10 minutes', "
    "md5(random()::text))"
)
TICKET_TAKEN = "UPDATE vendor_tickets SET state = 'open'{edit} WHERE ticket_id = :k"


def test_postgresql_lock_table_under_grants_admits_take_by_a_supervisor_only(
    pg: Pg, capsys: pytest.CaptureFixture[str]
) -> None:
    """A lock-table queue (db/rules/pg_locks.py): a take is the supervisor's lock row inserted, then the
    queue row's on_reopen and on_claim values, recorded as the supervisor's claim; an operator's is refused,
    through workbench and by hand, and so is a supervisor's with an edit."""
    text = _tickets(pg, capsys, support.sample_config("vendor-tickets") + TICKETS_TAKE, "tickets")
    ann = pg.open("ann", text).queue("tickets")
    escalated = _escalated_by(ann, "ann", 3)
    took = pg.open("sue", text).supervision("tickets").take("sue", escalated[0])
    assert (took.lock.key, took.lock.owner) == (escalated[0], "sue")
    last = ann.history(escalated[0])[-1]
    assert (last.kind, last.actor, last.owner) == (models.EventKind.CLAIM, "sue", "sue")

    def state(key: object) -> str:
        with pg.admin.engine.connect() as conn:
            found = conn.execute(sa.text("SELECT state FROM vendor_tickets WHERE ticket_id = :k"), {"k": key})
            return str(found.scalar_one())

    assert state(escalated[0]) == "open"
    with pytest.raises(errors.NotPermitted):
        pg.open("ann", text).supervision("tickets").take("ann", escalated[1])
    for login, edit in (("ann", ""), ("sue", ", subject = 'changed'")):
        refusal = _refused(pg.engine(login), TAKE_LOCK, TICKET_TAKEN.format(edit=edit), k=escalated[1])
        assert "may not" in refusal, refusal
        assert state(escalated[1]) == "escalated"
    with pg.engine("sue").begin() as conn:
        for statement in (TAKE_LOCK, TICKET_TAKEN.format(edit="")):
            conn.execute(sa.text(statement), {"k": escalated[1]})
    last = ann.history(escalated[1])[-1]
    assert (last.kind, last.actor, last.owner) == (models.EventKind.CLAIM, "sue", "sue")
    assert state(escalated[1]) == "open"


def test_the_escalated_items_and_what_became_of_each(
    native_env: support.Env, capsys: pytest.CaptureFixture[str]
) -> None:
    """A supervisor lists the items waiting for one; the operator sees what became of his (issue 47)."""
    from workbench import services

    wb = _demo(native_env, rows=6)
    q = wb.queue("cases")
    first, second = (q.claim_next(user)[0].lock for user in ("alice", "bob"))
    q.escalate("alice", first.key, first.token, "legal threat")
    q.escalate("bob", second.key, second.token, "angry customer")
    alice = services.Operator(wb, "alice")
    waiting = [(e.key, e.actor, e.reason, last.id == e.id) for e, last in alice.escalations("cases")]
    assert waiting == [
        (str(second.key), "bob", "angry customer", True),
        (str(first.key), "alice", "legal threat", True),
    ]
    # A supervisor puts alice's back to work (reopen: on_reopen's values); she sees it.
    with wb.engine.begin() as conn:
        from workbench.db import permissions

        permissions.grant(conn, None, "root", "sue", "supervisor")
    wb.supervision("cases").reopen("sue", first.key, "handled with legal: go on")
    ((escalated, since),) = alice.escalations("cases", mine=True)
    assert (escalated.key, since.kind, since.actor) == (str(first.key), models.EventKind.REOPEN, "sue")
    path = native_env.write_config(demo.config_text("{url}"))
    code, out, err = support.run_cli(capsys, "--config", path, "--user", "alice", "escalated", "cases", "--mine")
    assert code == 0, err
    assert out.startswith(f"{first.key}  by alice at ") and "legal threat  (then reopen by sue at " in out, out
    code, out, err = support.run_cli(capsys, "--config", path, "--user", "bob", "escalated", "cases")
    assert code == 0, err
    assert "angry customer  (waiting for a supervisor)" in out and "then reopen by sue" in out, out
    # As JSON each says whom it was handed to: no group (null), the supervisors.
    code, out, err = support.run_cli(capsys, "--config", path, "escalated", "cases", "--json")
    assert code == 0 and [row["escalated_to"] for row in out] == [None, None], (out, err)


# -- a supervisor takes an escalated item (the table's "take") -------------------------------------------


def _supervisors(wb: service.Workbench, *users: str) -> None:
    from workbench.db import permissions

    with wb.engine.begin() as conn:
        for i, user in enumerate(users):  # the first grants himself (no supervisor yet), then the others
            permissions.grant(conn, None, users[0] if i else "root", user, "supervisor")


def test_a_supervisor_takes_an_escalated_item(native_env: support.Env) -> None:
    wb = _demo(native_env)
    q = wb.queue("cases")
    _supervisors(wb, "sue")
    lock = q.claim_next("alice")[0].lock
    waiting = q.claim_next("bob")[0].lock
    q.release("bob", waiting.key, waiting.token)
    q.escalate("alice", lock.key, lock.token, "legal threat")
    took = wb.supervision("cases").take("sue", lock.key)
    # The supervisor holds it now, as after a claim: a fresh lock of hers, on_claim's values.
    row = native_env.row(wb, "cases", lock.key)
    assert (took.lock.key, took.lock.owner, row["wb_locked_by"]) == (lock.key, "sue", "sue")
    assert row["status"] == native_env.row(wb, "cases", q.claim_next("carol")[0].lock.key)["status"]
    last = q.history(lock.key)[-1]
    assert (last.kind, last.actor, last.owner) == (models.EventKind.CLAIM, "sue", "sue")
    # She works it as any holder does.
    q.complete("sue", lock.key, took.lock.token, "resolved")
    # Only an escalated item is taken (the row rule ESCALATED), and only by a supervisor.
    for key in (lock.key, waiting.key):
        with pytest.raises(errors.UsageError, match="not waiting for a supervisor"):
            wb.supervision("cases").take("sue", key)
    again = q.claim_next("dave")[0].lock
    q.escalate("dave", again.key, again.token, "help")
    with pytest.raises(workflow.TRANSITIONS["take"].refusal, match="only supervisors may"):
        wb.supervision("cases").take("dave", again.key)
    assert native_env.row(wb, "cases", again.key)["status"] == "escalated"


def _race(wb: service.Workbench, key: object, *users: str) -> tuple[list[str], list[str]]:
    """`users` take `key` at once (each in a thread, started together): who won, what the others were told."""
    import threading

    start, won, lost = threading.Barrier(len(users)), [], []

    def take(user: str) -> None:
        start.wait()
        try:
            won.append(wb.supervision("cases").take(user, key).lock.owner)
        except errors.WorkbenchError as refused:
            lost.append(str(refused))

    threads = [threading.Thread(target=take, args=(user,)) for user in users]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return won, lost


def test_two_supervisors_taking_one_escalated_item_at_once_one_wins(native_env: support.Env) -> None:
    wb = _demo(native_env)
    q = wb.queue("cases")
    _supervisors(wb, "sue", "sam")
    for _ in range(3):
        lock = q.claim_next("alice")[0].lock
        q.escalate("alice", lock.key, lock.token, "legal threat")
        won, lost = _race(wb, lock.key, "sue", "sam")
        assert len(won) == 1 and len(lost) == 1, (won, lost)
        assert "not waiting for a supervisor" in lost[0], lost
        assert native_env.row(wb, "cases", lock.key)["wb_locked_by"] == won[0]
        claims = [e for e in q.history(lock.key) if e.kind is models.EventKind.CLAIM]
        assert [e.owner for e in claims][-1] == won[0] and len(claims) == 2


HAND_TAKE = (
    "UPDATE cases SET status = 'open', wb_locked_by = session_user, wb_locked_at = timezone('UTC', now()), "
    "wb_lock_expires = timezone('UTC', now()) + interval '10 minutes', wb_lock_token = md5(random()::text){edit} "
    "WHERE case_id = :k"
)


def _take_refused(pg: Pg, text: str, login: str, key: object, said: str) -> None:
    """`login`'s take of case `key` is refused through workbench (saying `said`) and by hand; it stays escalated."""
    with pytest.raises(errors.NotPermitted, match=said):
        pg.open(login, text).supervision("cases").take(login, key)
    refusal = _refused(pg.engine(login), HAND_TAKE.format(edit=""), k=key)
    assert "may not make this change" in refusal, refusal
    assert pg.env.row(pg.admin, "cases", key)["status"] == "escalated"


def test_postgresql_under_grants_admits_take_by_a_supervisor_only(pg: Pg, capsys: pytest.CaptureFixture[str]) -> None:
    text = demo.config_text("{url}")
    _apply(pg, capsys, text, "cases")
    ann = pg.open("ann", text).queue("cases")
    sue = pg.open("sue", text).supervision("cases")
    escalated = _escalated_by(ann, "ann", 4)
    # Through workbench, as the supervisor's login: admitted, recorded as her claim.
    took = sue.take("sue", escalated[0])
    row = pg.env.row(pg.admin, "cases", escalated[0])
    assert (row["status"], row["wb_locked_by"], took.lock.owner) == ("open", "sue", "sue")
    last = ann.history(escalated[0])[-1]
    assert (last.kind, last.actor, last.owner) == (models.EventKind.CLAIM, "sue", "sue")
    # As an operator's login: refused, through workbench and by hand (the database says only supervisors may).
    _take_refused(pg, text, "ann", escalated[1], "only to members of the role workbench_supervisor")
    # By hand as the supervisor's login: the take alone is admitted, not with an edit.
    engine = pg.engine("sue")
    refusal = _refused(engine, HAND_TAKE.format(edit=", subject = 'changed'"), k=escalated[1])
    assert "may not make this change" in refusal, refusal
    with engine.begin() as conn:
        conn.execute(sa.text(HAND_TAKE.format(edit="")), {"k": escalated[1]})
    last = ann.history(escalated[1])[-1]
    assert (last.kind, last.actor, last.owner) == (models.EventKind.CLAIM, "sue", "sue")
    assert pg.env.row(pg.admin, "cases", escalated[1])["wb_locked_by"] == "sue"


def test_workbench_take_on_the_command_line_and_in_the_service(
    native_env: support.Env, capsys: pytest.CaptureFixture[str]
) -> None:
    """`workbench take QUEUE KEY` (supervisors), through the supervisor's service (Supervisor.take)."""
    from workbench import services

    wb = _demo(native_env)
    q = wb.queue("cases")
    _supervisors(wb, "sue")
    first, second = (q.claim_next("alice")[0].lock for _ in range(2))
    for lock in (first, second):
        q.escalate("alice", lock.key, lock.token, "legal threat")
    took = services.Supervisor(wb, "sue").take("cases", first.key)
    assert (took.lock.key, took.lock.owner) == (first.key, "sue")
    path = native_env.write_config(demo.config_text("{url}"))
    args = ("--config", path, "escalated", "cases")
    code, out, err = support.run_cli(capsys, "--user", "sue", *args)
    assert code == 0 and "then claim by sue" in out and "waiting for a supervisor" in out, (out, err)
    code, _, err = support.run_cli(capsys, "--config", path, "--user", "bob", "take", "cases", str(second.key))
    assert code != 0 and "only supervisors may" in err, err
    code, out, err = support.run_cli(capsys, "--config", path, "--user", "sue", "take", "cases", str(second.key), "-q")
    assert code == 0, err
    key, _token = out.split()
    assert key == str(second.key) and native_env.row(wb, "cases", second.key)["wb_locked_by"] == "sue"
    code, _, err = support.run_cli(capsys, "--config", path, "--user", "sue", "take", "cases", str(second.key))
    assert code != 0 and "not waiting for a supervisor" in err, err


# -- "or a configured group": the queue's escalate_to (the table's Actor.ESCALATED_TO) ---------------------

LEVEL2 = 'escalate_to = "level2"\n'


def _to_level2(text: str, queue: str = "cases") -> str:
    """Config `text` with `queue`'s escalated items handed to the group level2."""
    return text.replace(f"[queues.{queue}]\n", f"[queues.{queue}]\n{LEVEL2}", 1)


def _in_level2(engine: sa.Engine, *users: str) -> None:
    from workbench.db import groups

    with engine.begin() as conn:
        for user in users:
            groups.record(conn, None, "root", user, "level2")


def test_a_queue_hands_its_escalated_items_to_a_configured_group(
    native_env: support.Env, capsys: pytest.CaptureFixture[str]
) -> None:
    """With escalate_to, a member of the group takes an escalated item as a supervisor does (and so does a
    supervisor); anyone else is refused, told whom the queue hands them to. The service, the CLI."""
    from workbench import services

    text = _to_level2(demo.config_text("{url}"))
    wb = native_env.open(native_env.load(text))
    demo.populate(wb.engine, cases=6, imports=1)
    wb.init()
    demo.attach_all(wb)
    _supervisors(wb, "sue")
    _in_level2(wb.engine, "bob")
    q = wb.queue("cases")
    escalated = _escalated_by(q, "alice", 4)
    # Bob is no supervisor, but in level2: he sees the items waiting (the console's list) and takes one.
    bob = services.Supervisor(wb, "bob")
    assert {e.key for e in bob.escalated(["cases"])} == {str(k) for k in escalated}
    took = bob.take("cases", escalated[0])
    assert (took.lock.owner, native_env.row(wb, "cases", escalated[0])["wb_locked_by"]) == ("bob", "bob")
    assert q.history(escalated[0])[-1].kind is models.EventKind.CLAIM
    # Dave is neither: refused, the refusal names the group.
    with pytest.raises(errors.NotPermitted) as refused:
        wb.supervision("cases").take("dave", escalated[1])
    assert str(refused.value) == problems.TAKE_NOT_IN_GROUP.format("cases", "level2", "dave"), refused.value
    assert native_env.row(wb, "cases", escalated[1])["status"] == "escalated"
    # A supervisor still takes them.
    assert wb.supervision("cases").take("sue", escalated[1]).lock.owner == "sue"
    # The command line says whom they wait for, and lets a member of the group take one.
    path = native_env.write_config(text)
    code, out, err = support.run_cli(capsys, "--config", path, "--user", "bob", "escalated", "cases")
    assert code == 0 and "(waiting for the group level2)" in out, (out, err)
    code, out, err = support.run_cli(capsys, "--config", path, "escalated", "cases", "--json")
    assert code == 0, err
    assert {row["escalated_to"] for row in out} == {"level2"}, out
    code, _, err = support.run_cli(capsys, "--config", path, "--user", "dave", "take", "cases", str(escalated[2]))
    assert code != 0 and "hands its escalated items to the group level2" in err, err
    code, out, err = support.run_cli(capsys, "--config", path, "--user", "bob", "take", "cases", str(escalated[2]))
    assert code == 0, err
    assert native_env.row(wb, "cases", escalated[2])["wb_locked_by"] == "bob"
    lock = q.claim_next("carol")[0].lock
    code, out, err = support.run_cli(
        capsys,
        "--config",
        path,
        "--user",
        "carol",
        "escalate",
        "cases",
        str(lock.key),
        "--token",
        lock.token,
        "--reason",
        "x",
    )
    assert code == 0 and "handed to the group level2" in out, (out, err)
    lock = q.claim_next("carol")[0].lock
    args = ("--config", path, "--user", "carol", "escalate", "cases", str(lock.key), "--token", lock.token)
    code, out, err = support.run_cli(capsys, *args, "--reason", "y", "--json")
    assert code == 0 and out["escalated_to"] == "level2", (out, err)


def test_postgresql_under_grants_admits_take_by_the_configured_group(
    pg: Pg, capsys: pytest.CaptureFixture[str]
) -> None:
    """Under grants the database admits a take by a member of the queue's escalate_to group (in workbench's
    groups table), through workbench and by hand, and a supervisor's; an operator outside it is refused."""
    text = _to_level2(demo.config_text("{url}"))
    _apply(pg, capsys, text, "cases")
    _in_level2(pg.admin.engine, "bob")
    ann = pg.open("ann", text).queue("cases")
    escalated = _escalated_by(ann, "ann", 4)
    took = pg.open("bob", text).supervision("cases").take("bob", escalated[0])
    assert (took.lock.owner, pg.env.row(pg.admin, "cases", escalated[0])["wb_locked_by"]) == ("bob", "bob")
    with pg.engine("bob").begin() as conn:
        conn.execute(sa.text(HAND_TAKE.format(edit="")), {"k": escalated[1]})
    last = ann.history(escalated[1])[-1]
    assert (last.kind, last.actor, last.owner) == (models.EventKind.CLAIM, "bob", "bob")
    # Ann is an operator outside level2: refused through workbench (naming the group) and by hand.
    _take_refused(pg, text, "ann", escalated[2], "hands its escalated items to the group level2")
    assert pg.open("sue", text).supervision("cases").take("sue", escalated[2]).lock.owner == "sue"


def test_postgresql_lock_table_under_grants_takes_by_the_group_and_says_who_may(
    pg: Pg, capsys: pytest.CaptureFixture[str]
) -> None:
    """A lock-table queue: an operator's take is refused with the text the in-row queues give (the role it
    takes), not the database's "may not make this change"; with escalate_to, a member of the group takes
    (through workbench and by hand), an operator outside it is refused naming the group."""
    text = _tickets(pg, capsys, support.sample_config("vendor-tickets") + TICKETS_TAKE, "tickets")
    ann = pg.open("ann", text).queue("tickets")
    escalated = _escalated_by(ann, "ann", 4)
    with pytest.raises(errors.NotPermitted) as refused:
        pg.open("bob", text).supervision("tickets").take("bob", escalated[0])
    assert str(refused.value) == problems.NOT_IN_ROLE.format(
        "bob", problems.DO_TAKE.format("tickets", escalated[0]), "workbench_supervisor", "bob"
    ), refused.value
    grouped = _to_level2(text, "tickets")
    _apply(pg, capsys, grouped, "tickets")
    _in_level2(pg.admin.engine, "bob")
    took = pg.open("bob", grouped).supervision("tickets").take("bob", escalated[0])
    assert took.lock.owner == "bob"
    with pg.engine("bob").begin() as conn:
        for statement in (TAKE_LOCK, TICKET_TAKEN.format(edit="")):
            conn.execute(sa.text(statement), {"k": escalated[1]})
    last = ann.history(escalated[1])[-1]
    assert (last.kind, last.actor, last.owner) == (models.EventKind.CLAIM, "bob", "bob")
    with pytest.raises(errors.NotPermitted, match="hands its escalated items to the group level2"):
        pg.open("ann", grouped).supervision("tickets").take("ann", escalated[2])
    refusal = _refused(pg.engine("ann"), TAKE_LOCK, TICKET_TAKEN.format(edit=""), k=escalated[2])
    assert "may not" in refusal, refusal
