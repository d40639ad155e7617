"""Holes found by attacking `workbench grants` (PostgreSQL, issue 37 items 3, 5 and 6): the protocol's own
functions called by hand, a status-driven queue whose held state is not in `todo`, open transactions that
hide the queue, undo of a Complete chosen for review, and the changes an operator's save records."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest
import sqlalchemy as sa

from tests import support
from tests.test_permissions import FEEDER, Pg, pg  # noqa: F401  (the fixture: a demo database under `grants`)
from tests.test_protocol import _each_refused, _refused, _rows, _run, _state, _tickets
from workbench import demo
from workbench.core import errors
from workbench.core.models import Lock
from workbench.db import permissions
from workbench.db.rules import pg_names
from workbench.db.supervision import Supervision
from workbench.db.workqueue import WorkQueue


def _apply(pg: Pg, capsys: pytest.CaptureFixture[str], text: str, *queues: str) -> None:
    """The owner runs `grants QUEUE --apply` for each of `queues` of config `text`."""
    path = pg.tmp / "granted.toml"
    path.write_text(text.replace("{url}", pg.url), encoding="utf-8")
    for queue in queues:
        code, _, err = support.run_cli(capsys, "--config", path, "grants", queue, "--apply")
        assert code == 0, err


# -- item 3: the protocol's functions are called by the protocol only --------------------------------


def _forged_call(pg: Pg, login: str) -> str:
    """`login` calls the imports queue's check with made-up rows: its own live lock before, a verified line
    chosen for review after. Returns the database's refusal."""
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    before = {
        "row_id": 1,
        "check_status": "pending",
        "wb_locked_by": login,
        "wb_lock_token": "f" * 32,
        "wb_locked_at": now.isoformat(),
        "wb_lock_expires": (now + dt.timedelta(minutes=5)).isoformat(),
    }
    after = {"row_id": 1, "check_status": "to_review", "checked_by": login, "checked_at": now.isoformat()}
    check = pg_names.check_function_name("imports")
    return _refused(
        pg.engine(login),
        f"SELECT {check}(jsonb_populate_record(NULL::import_rows, CAST(:o AS jsonb)), "
        "jsonb_populate_record(NULL::import_rows, CAST(:n AS jsonb)))",
        o=json.dumps(before),
        n=json.dumps(after),
    )


def test_the_protocols_own_functions_are_not_callable_by_hand(pg: Pg, capsys: pytest.CaptureFixture[str]) -> None:
    _apply(pg, capsys, demo.config_text("{url}"), "imports", "imports_review")
    _tickets(pg, capsys, support.sample_config("vendor-tickets"), "tickets")  # a lock table's checks too
    before = _state(pg), _rows(pg, "workbench_reviews")
    # The check of an update, with made-up rows: from an operator's login and from a login with no
    # workbench role it writes nothing (no Complete credited, no review recorded as one of the first).
    for login in ("ann", FEEDER):
        assert "permission denied for function" in _forged_call(pg, login)
    assert (_state(pg), _rows(pg, "workbench_reviews")) == before
    # Of every function grants installs, operators may call only the trusted claim and Complete and the
    # settling of their own transaction's audit row; other logins none. (Not grants': the claim functions
    # init makes for a transaction pooler, db/claims/pg_function.py, which run with the caller's rights:
    # calling one is running its statements by hand, which the attacks in test_protocol.py are.)
    with pg.admin.engine.connect() as conn:
        functions = conn.execute(
            sa.text(
                "SELECT p.oid, p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
                "WHERE n.nspname = current_schema() AND (p.proname LIKE 'wb\\_%' OR p.proname LIKE 'workbench\\_%') "
                "AND NOT (p.proname LIKE 'wb\\_claim\\_%' AND NOT p.prosecdef)"
            )
        ).all()
        assert len(functions) > 10
        may = {
            login: {
                name
                for oid, name in functions
                if conn.execute(
                    sa.text("SELECT has_function_privilege(:login, CAST(:oid AS oid), 'EXECUTE')"),
                    {"login": login, "oid": oid},
                ).scalar()
            }
            for login in ("ann", "sue", FEEDER)
        }
    trusted = {
        pg_names.next_function_name("cases"),
        pg_names.complete_function_name("cases"),
        pg_names.next_function_name("imports"),
        pg_names.complete_function_name("imports"),
        pg_names.next_function_name("imports_review"),
        pg_names.complete_function_name("imports_review"),
        pg_names.SETTLE,
    }
    assert may["ann"] <= trusted and may["sue"] <= trusted, may
    assert may[FEEDER] == set()
    # A check called in a function of one's own (as if granted by mistake) refuses to run outside its trigger.
    with pg.admin.engine.begin() as conn:
        conn.exec_driver_sql(
            f"GRANT EXECUTE ON FUNCTION {pg_names.check_function_name('imports')}"
            "(import_rows, import_rows) TO workbench_operator"
        )
    assert "called by its trigger only" in _forged_call(pg, "ann")
    assert (_state(pg), _rows(pg, "workbench_reviews")) == before
    # The operator's real first item still goes to review.
    with pg.admin.engine.begin() as conn:
        conn.execute(sa.text("UPDATE import_rows SET check_status = 'pending', checked_by = NULL, checked_at = NULL"))
    imports = pg.open("ann").queue("imports")
    line = imports.claim_next("ann")[0].lock
    imports.complete("ann", line.key, line.token, "verified")
    assert pg.env.row(pg.admin, "imports", line.key)["check_status"] == "to_review"


def test_giving_up_a_lock_table_lock_is_no_complete(pg: Pg, capsys: pytest.CaptureFixture[str]) -> None:
    """The audit row the database writes when a lock row goes may be settled as a release or a defer;
    a Complete only with the outcome's values written (a Complete credited without them counts in stats)."""
    text = _tickets(pg, capsys, support.sample_config("vendor-tickets"), "tickets")
    lock = pg.open("ann", text).queue("tickets").claim_next("ann")[0].lock
    before = _state(pg), _rows(pg, "workbench_locks", "vendor_tickets")
    give_up = "DELETE FROM workbench_locks WHERE item_key = CAST(:k AS text)"
    forged = (
        "INSERT INTO workbench_audit (queue, item_key, event, actor, owner, outcome, at) VALUES "
        "('tickets', CAST(:k AS text), 'complete', 'ann', 'ann', 'solved', timezone('UTC', now()))"
    )
    assert "no such change was made" in _refused(pg.engine("ann"), give_up, forged, k=lock.key)
    settle = (
        f"SELECT {pg_names.SETTLE}(max(id), 'complete', 'solved', NULL, NULL) FROM workbench_audit "
        "WHERE item_key = CAST(:k AS text)"
    )
    assert "may not change audit row" in _refused(pg.engine("ann"), give_up, settle, k=lock.key)
    assert (_state(pg), _rows(pg, "workbench_locks", "vendor_tickets")) == before


# -- item 5: a status-driven queue (shape 3) whose claim moves the row out of `todo` --------------------


def _messages(pg: Pg, capsys: pytest.CaptureFixture[str]) -> str:
    """The message table of messages.toml with eight New messages, both of its queues under grants;
    returns the config text."""
    md = sa.MetaData()
    table = sa.Table(
        "messages",
        md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("msg_type", sa.String(20), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("payload", sa.Text),
        sa.Column("error_text", sa.String(500)),
        sa.Column("received_at", sa.DateTime, nullable=False),
        sa.Column("handled_by", sa.String(50)),
        sa.Column("handled_at", sa.DateTime),
        sa.Column("locked_by", sa.String(50)),
        sa.Column("locked_at", sa.DateTime),
        sa.Column("lock_token", sa.String(32)),
    )
    md.create_all(pg.admin.engine)
    start = dt.datetime(2026, 11, 20, 8, 0)
    with pg.admin.engine.begin() as conn:
        conn.execute(
            sa.insert(table),
            [
                {
                    "id": i,
                    "msg_type": "Invoice",
                    "status": "New",
                    "payload": f"invoice {i}",
                    "received_at": start + dt.timedelta(minutes=i),
                }
                for i in range(1, 9)
            ],
        )
    text = support.sample_config("messages")
    _apply(pg, capsys, text, "invoices", "orders")
    return text


def test_a_status_driven_queue_is_worked_in_full_under_grants(pg: Pg, capsys: pytest.CaptureFixture[str]) -> None:
    text = _messages(pg, capsys)
    ann, bob, sue = (pg.open(login, text).queue("invoices") for login in ("ann", "bob", "sue"))
    owner_wb = pg.open(pg.server.user, text)
    owner = owner_wb.queue("invoices")

    def status(key: Any) -> str:
        return str(pg.env.row(owner_wb, "invoices", key)["status"])

    # Claim, save, extend and Complete of a message that is Active while held.
    first = ann.claim_next("ann")[0].lock
    assert status(first.key) == "Active"
    ann.save("ann", first.key, first.token, {"payload": "invoice 1, checked"})
    ann.extend("ann", first.key, first.token)
    ann.complete("ann", first.key, first.token, "completed")
    assert status(first.key) == "Completed"
    # Complete with the second outcome and an edit; release; defer.
    second = ann.claim_next("ann")[0].lock
    ann.complete("ann", second.key, second.token, "error", {"error_text": "unknown vendor"})
    third = ann.claim_next("ann")[0].lock
    ann.release("ann", third.key, third.token, "not mine")
    assert status(third.key) == "New"
    fourth = ann.claim_next("ann")[0].lock
    ann.defer(
        "ann",
        fourth.key,
        fourth.token,
        ann.db_clock().utc.replace(tzinfo=dt.UTC) + dt.timedelta(hours=2),
        "vendor calls back",
    )
    assert status(fourth.key) == "New"
    # A supervisor's force-release and reassign of someone's Active message.
    held = bob.claim_next("bob")[0].lock
    Supervision(sue).force_release("sue", held.key, "bob is away")
    assert status(held.key) == "New"
    again = bob.claim("bob", held.key).lock
    Supervision(sue).reassign("sue", held.key, "ann", "ann knows this vendor")
    moved = next(lock for lock in ann.mine("ann") if lock.key == held.key)
    ann.complete("ann", held.key, moved.token, "completed")
    # An expired Active message is served again; the sweep sets one back to New.
    lost = bob.claim_next("bob")[0].lock
    pg.env.age_lock(owner_wb, "invoices", lost.key, 3600)
    taken = ann.claim_next("ann")[0].lock
    assert taken.key == lost.key and status(lost.key) == "Active"
    ann.release("ann", taken.key, taken.token)
    swept = bob.claim_next("bob")[0].lock
    pg.env.age_lock(owner_wb, "invoices", swept.key, 3600)
    assert [lock.key for lock in Supervision(ann).sweep("ann")] == [swept.key]
    assert status(swept.key) == "New"
    history = {
        key: [(e.kind.value, e.actor) for e in owner.history(key)]
        for key in (first.key, second.key, held.key, lost.key)
    }
    assert history[first.key] == [("claim", "ann"), ("save", "ann"), ("extend", "ann"), ("complete", "ann")]
    assert history[second.key] == [("claim", "ann"), ("complete", "ann")]
    assert history[held.key] == [
        ("claim", "bob"),
        ("force_release", "sue"),
        ("claim", "bob"),
        ("reassign", "sue"),
        ("claim", "sue"),
        ("complete", "ann"),
    ]
    assert history[lost.key][:4] == [("claim", "bob"), ("expire", "ann"), ("claim", "ann"), ("release", "ann")]
    assert again.owner == "bob"
    # By hand, still only the protocol: an Active message of ann's is not finished by bob, nor its
    # lock taken; ann may not mark a held message done without giving up her lock.
    mine = ann.claim_next("ann")[0].lock
    before = _state_of(pg)
    _each_refused(
        pg.engine("bob"),
        [
            (
                (
                    "UPDATE messages SET status = 'Completed', locked_by = NULL, lock_token = NULL, locked_at = NULL "
                    "WHERE id = :k"
                ),
                {"k": mine.key},
            ),
            ("UPDATE messages SET locked_by = 'bob' WHERE id = :k", {"k": mine.key}),
        ],
    )
    assert "may not" in _refused(pg.engine("ann"), "UPDATE messages SET status = 'Completed' WHERE id = :k", k=mine.key)
    assert _state_of(pg) == before


def test_a_supervisors_refused_force_release_says_what_the_database_said(
    pg: Pg,
    capsys: pytest.CaptureFixture[str],
) -> None:
    text = _messages(pg, capsys)
    held = pg.open("bob", text).queue("invoices").claim_next("bob")[0].lock
    with pg.admin.engine.begin() as conn:  # another program finished the message under bob's lock
        conn.execute(sa.text("UPDATE messages SET status = 'Completed' WHERE id = :k"), {"k": held.key})
    with pytest.raises(errors.WorkbenchError) as caught:
        pg.open("sue", text).supervision("invoices").force_release("sue", held.key, "bob is away")
    # Not "the login sue is not one of workbench_supervisor": she is. The engine's fence (the lock
    # is the queue's only while its row is in the queue's state: BoundQueue.held_here) refuses it
    # before the database's check would, and says why.
    assert "no longer in this queue's work to do" in str(caught.value)
    assert "is not one" not in str(caught.value)


def _state_of(pg: Pg) -> list[list[Any]]:
    return _rows(pg, "messages", "workbench_audit")


# -- item 6 --------------------------------------------------------------------------------------------


def _idle_setting(pg: Pg, login: str) -> str | None:
    with pg.admin.engine.connect() as conn:
        settings = conn.execute(
            sa.text(
                "SELECT s.setconfig FROM pg_db_role_setting s JOIN pg_roles r ON r.oid = s.setrole "
                "WHERE r.rolname = :login AND s.setdatabase = 0"
            ),
            {"login": login},
        ).scalar()
    found = [s.split("=", 1)[1] for s in settings or () if s.startswith("idle_in_transaction_session_timeout=")]
    return found[0] if found else None


def test_grants_limits_how_long_an_operators_transaction_may_stay_open(
    pg: Pg,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pg.admin.engine.begin() as conn:  # a login with a shorter limit of its own keeps it
        conn.exec_driver_sql("ALTER ROLE bob SET idle_in_transaction_session_timeout = '30s'")
    config = pg.config_file(pg.server.user)
    code, out, err = support.run_cli(capsys, "--config", config, "grants", "cases", "--apply")
    assert code == 0, err
    assert "idle_in_transaction_session_timeout" in out
    assert _idle_setting(pg, "ann") == permissions.IDLE_IN_TRANSACTION == _idle_setting(pg, "sue")
    assert _idle_setting(pg, "bob") == "30s"
    assert _idle_setting(pg, FEEDER) is None and _idle_setting(pg, pg.server.user) is None
    with pg.engine("ann").connect() as conn:
        assert (
            conn.exec_driver_sql("SHOW idle_in_transaction_session_timeout").scalar() == permissions.IDLE_IN_TRANSACTION
        )


def test_next_says_when_waiting_items_are_held_by_an_open_transaction(pg: Pg) -> None:
    ann = pg.open("ann").queue("cases")
    with pg.engine("bob").connect() as bobs:
        bobs.execute(sa.text("SELECT case_id FROM cases WHERE wb_locked_by IS NULL FOR UPDATE"))
        with pytest.raises(errors.NothingToClaim) as caught:
            ann.claim_next("ann")
        assert "held by open transactions" in str(caught.value)
        bobs.rollback()
    assert ann.claim_next("ann")[0].lock.owner == "ann"
    # A queue with nothing waiting says so, as before.
    with pg.admin.engine.begin() as conn:
        conn.execute(sa.text("UPDATE cases SET status = 'resolved' WHERE wb_locked_by IS NULL"))
    with pytest.raises(errors.NothingToClaim, match="no item is waiting"):
        ann.claim_next("ann")


def _ann_to_review(pg: Pg, capsys: pytest.CaptureFixture[str]) -> tuple[WorkQueue, Lock]:
    """The demo's imports and its reviewing queue under grants; ann completes a line, one of her first
    items: it waits for review. Returns her imports queue and the lock she completed."""
    _apply(pg, capsys, demo.config_text("{url}"), "imports", "imports_review")
    with pg.admin.engine.begin() as conn:
        conn.execute(sa.text("UPDATE import_rows SET check_status = 'pending', checked_by = NULL, checked_at = NULL"))
    imports = pg.open("ann").queue("imports")
    line = imports.claim_next("ann")[0].lock
    imports.complete("ann", line.key, line.token, "verified")
    return imports, line


def test_an_operator_undoes_their_own_complete_chosen_for_review(pg: Pg, capsys: pytest.CaptureFixture[str]) -> None:
    imports, line = _ann_to_review(pg, capsys)
    assert pg.env.row(pg.admin, "imports", line.key)["check_status"] == "to_review"
    back = imports.undo_complete("ann", line.key)
    assert back.lock.owner == "ann"
    assert pg.env.row(pg.admin, "imports", line.key)["check_status"] == "pending"
    events = [(e.kind.value, e.actor) for e in pg.admin.queue("imports").history(line.key)]
    assert events[-3:] == [("complete", "ann"), ("undo", "ann"), ("claim", "ann")]
    with pg.admin.engine.connect() as conn:
        verdicts = (
            conn.execute(sa.text("SELECT verdict FROM workbench_reviews WHERE item_key = :k"), {"k": str(line.key)})
            .scalars()
            .all()
        )
    assert verdicts == ["superseded"]
    # bob may not take ann's reviewed Complete back by hand.
    imports.complete("ann", line.key, back.lock.token, "verified")
    relock = (
        "UPDATE import_rows SET check_status = 'pending', checked_by = NULL, checked_at = NULL, "
        "wb_locked_by = 'bob', wb_lock_token = md5(random()::text), wb_locked_at = timezone('UTC', now()), "
        "wb_lock_expires = timezone('UTC', now()) + interval '5 minutes' WHERE row_id = :k"
    )
    assert "may not" in _refused(pg.engine("bob"), relock, k=line.key)


def test_the_database_never_hands_a_review_to_its_doer(pg: Pg, capsys: pytest.CaptureFixture[str]) -> None:
    """Four eyes under grants: a supervisor's reassign of an item under review to the one whose work it is
    is refused by the reviewing queue's check (Check.NOT_DOER), written by hand as well as by workbench."""
    _, line = _ann_to_review(pg, capsys)
    pg.open("bob").queue("imports_review").claim("bob", line.key)
    with pytest.raises(errors.NotPermitted, match="ann's own work"):
        Supervision(pg.open("sue").queue("imports_review")).reassign("sue", line.key, "ann", "bob is away")
    handed = (
        "UPDATE import_rows SET wb_locked_by = :to, wb_lock_token = md5(random()::text), "
        "wb_locked_at = timezone('UTC', now()), wb_lock_expires = timezone('UTC', now()) + interval '5 minutes' "
        "WHERE row_id = :k"
    )
    reason = (
        "INSERT INTO workbench_audit (queue, item_key, event, actor, owner, reason, at) VALUES "
        "('imports_review', CAST(:k AS text), 'reassign', 'sue', 'bob', 'bob is away', timezone('UTC', now()))"
    )
    assert "may not" in _refused(pg.engine("sue"), handed, reason, to="ann", k=line.key)
    # To someone else it is handed (and recorded, with the reason a supervisor's act needs).
    _run(pg.engine("sue"), (handed, reason), {"to": "sue", "k": line.key})
    events = [(e.kind.value, e.actor, e.owner) for e in pg.admin.queue("imports_review").history(line.key)]
    assert events[-2:] == [("reassign", "sue", "bob"), ("claim", "sue", "sue")]


def test_an_operator_cannot_rewrite_what_their_save_changed(pg: Pg) -> None:
    ann = pg.open("ann").queue("cases")
    lock = ann.claim_next("ann")[0].lock
    before = pg.env.row(pg.admin, "cases", lock.key)["resolution"]
    save = "UPDATE cases SET resolution = 'replaced the cable' WHERE case_id = :k"
    forged = {"changes": {"resolution": ["nothing", "asked the customer"]}}
    # The save's audit row written by hand beside the change, or settled by hand, with other changes.
    with pg.engine("ann").begin() as conn:
        conn.execute(sa.text(save), {"k": lock.key})
        conn.execute(
            sa.text(
                "INSERT INTO workbench_audit (queue, item_key, event, actor, owner, detail, at) VALUES "
                "('cases', :key, 'save', 'ann', 'ann', :d, timezone('UTC', now()))"
            ),
            {"key": str(lock.key), "d": json.dumps(forged)},
        )
    with pg.engine("ann").begin() as conn:
        conn.execute(sa.text(save.replace("replaced the cable", "rebooted the router")), {"k": lock.key})
        conn.execute(
            sa.text(
                f"SELECT {pg_names.SETTLE}(max(id), 'save', NULL, NULL, :d) FROM workbench_audit WHERE item_key = :key"
            ),
            {"key": str(lock.key), "d": json.dumps(forged)},
        )
    # workbench's own save records its changes as before.
    ann.save("ann", lock.key, lock.token, {"resolution": "done"})
    saves = [e.detail for e in pg.admin.queue("cases").history(lock.key) if e.kind.value == "save"]
    assert [d["changes"] for d in saves] == [
        {"resolution": [before, "replaced the cable"]},
        {"resolution": ["replaced the cable", "rebooted the router"]},
        {"resolution": ["rebooted the router", "done"]},
    ]
    # Nor may an operator change a committed audit row.
    assert "permission denied" in _refused(pg.engine("ann"), "UPDATE workbench_audit SET detail = NULL")


def test_an_audit_row_is_settled_to_another_queue_of_its_table_only(pg: Pg, capsys: pytest.CaptureFixture[str]) -> None:
    # Queues serving one table admit the same changes and the database records the first that does: the
    # operator's own row names the queue it acted through, which the row the database wrote then takes.
    # Never a queue of another table (the change did not pass its checks).
    _apply(pg, capsys, demo.config_text("{url}"), "imports", "imports_review")
    lock = pg.open("ann").queue("cases").claim_next("ann")[0].lock
    save = "UPDATE cases SET resolution = 'asked the customer' WHERE case_id = :k"
    settle = (
        f"SELECT {pg_names.SETTLE}(max(id), 'save', NULL, NULL, NULL, :q) FROM workbench_audit WHERE item_key = :k2"
    )
    for other in ("imports", "nowhere"):
        refused = _refused(pg.engine("ann"), save, settle, k=lock.key, k2=str(lock.key), q=other)
        assert "may not change audit row" in refused
    assert [e.queue for e in pg.admin.queue("cases").history(lock.key)] == ["cases"]  # the claim only


def test_the_edits_recorded_with_a_lock_table_queue_are_the_databases(
    pg: Pg,
    capsys: pytest.CaptureFixture[str],
) -> None:
    text = _tickets(pg, capsys, support.sample_config("vendor-tickets"), "tickets")
    ann = pg.open("ann", text).queue("tickets")
    lock = ann.claim_next("ann")[0].lock
    forged = json.dumps({"changes": {"subject": ["nothing", "nothing either"]}})
    with pg.engine("ann").begin() as conn:  # a save by hand, recorded with other changes
        conn.execute(
            sa.text("UPDATE vendor_tickets SET subject = 'Printer jams' WHERE ticket_id = :k"), {"k": lock.key}
        )
        conn.execute(
            sa.text(
                "INSERT INTO workbench_audit (queue, item_key, event, actor, owner, detail, at) VALUES "
                "('tickets', :key, 'save', 'ann', 'ann', :d, timezone('UTC', now()))"
            ),
            {"key": str(lock.key), "d": forged},
        )
    ann.complete("ann", lock.key, lock.token, "solved", {"subject": "Printer jams on tray 2"})
    other = ann.claim_next("ann")[0].lock
    with pg.engine("ann").begin() as conn:  # a save by hand, then a release by hand with its reason
        conn.execute(sa.text("UPDATE vendor_tickets SET subject = 'Scanner' WHERE ticket_id = :k"), {"k": other.key})
        conn.execute(sa.text("DELETE FROM workbench_locks WHERE item_key = CAST(:k AS text)"), {"k": other.key})
        conn.execute(
            sa.text(
                "INSERT INTO workbench_audit (queue, item_key, event, actor, owner, reason, at) VALUES "
                "('tickets', :key, 'release', 'ann', 'ann', 'needs the vendor', timezone('UTC', now()))"
            ),
            {"key": str(other.key)},
        )
    owner = pg.open(pg.server.user, text).queue("tickets")
    done = [(e.kind.value, (e.detail or {}).get("changes")) for e in owner.history(lock.key)]
    assert done == [
        ("claim", None),
        ("save", {"subject": ["Ticket 1", "Printer jams"]}),
        ("complete", {"subject": ["Printer jams", "Printer jams on tray 2"]}),
    ]
    # A release writes no edits (issue 47, hole 2: tests/test_admission_holes.py): the edit is the save's.
    saved, released = owner.history(other.key)[-2:]
    assert (saved.kind.value, saved.detail["changes"]) == ("save", {"subject": [f"Ticket {other.key}", "Scanner"]})
    assert (released.kind.value, released.reason, released.detail) == ("release", "needs the vendor", None)


def test_a_supervisors_move_keeps_what_it_changed(pg: Pg, capsys: pytest.CaptureFixture[str]) -> None:
    sue = pg.open("sue").queue("cases")
    with pg.admin.engine.connect() as conn:
        key, category = conn.execute(
            sa.text(
                "SELECT case_id, category FROM cases WHERE wb_locked_by IS NULL "
                "AND status IN ('new', 'open') ORDER BY case_id LIMIT 1"
            )
        ).one()
    target = "Hardware" if category != "Hardware" else "Email"
    assert Supervision(sue).move("sue", {"category": target}, "level 2 takes these", keys=[key]) == [key]
    last = pg.admin.queue("cases").history(key)[-1]
    assert (last.kind.value, last.detail) == ("move", {"changes": {"category": [category, target]}})
    text = _tickets(pg, capsys, support.sample_config("vendor-tickets"), "tickets")
    tickets = pg.open("sue", text).queue("tickets")
    assert Supervision(tickets).move("sue", {"priority": 3}, "vendor escalated", keys=[2]) == [2]
    moved = pg.open(pg.server.user, text).queue("tickets").history(2)[-1]
    assert (moved.kind.value, moved.detail) == ("move", {"changes": {"priority": [1, 3]}})


# -- a queue's own rules: notes_required, allow_defer (core/workflow.py's Text.CONFIGURED, Check.ALLOW_DEFER) --

# The cases queue needs a note with a release, a defer and a Complete as resolved, and lets nothing be deferred.
STRICT_CASES = 'notes_required = ["release", "defer", "resolved"]\nallow_defer = false\n'
RELEASE = (
    "UPDATE cases SET wb_locked_by = NULL, wb_lock_token = NULL, wb_locked_at = NULL, wb_lock_expires = NULL "
    "WHERE case_id = :k"
)
RESOLVE = (
    "UPDATE cases SET status = 'resolved', wb_locked_by = NULL, wb_lock_token = NULL, wb_locked_at = NULL, "
    "wb_lock_expires = NULL WHERE case_id = :k"
)


def _audit(event: str, outcome: str | None = None) -> str:
    """workbench's own audit row of ann's change, written by hand."""
    return (
        "INSERT INTO workbench_audit (queue, item_key, event, actor, owner, outcome, reason, at) VALUES "
        f"('cases', CAST(:k AS text), '{event}', 'ann', 'ann', {'NULL' if outcome is None else repr(outcome)}, "
        "'by hand', timezone('UTC', now()))"
    )


def _noted(kind: str) -> str:
    return (
        "INSERT INTO workbench_notes (queue, item_key, author, at, kind, text) VALUES "
        f"('cases', CAST(:k AS text), 'ann', timezone('UTC', now()), '{kind}', 'said why')"
    )


DEFERRAL = (
    "INSERT INTO workbench_deferrals (queue, item_key, actor, until, at, reason) VALUES "
    "('cases', CAST(:k AS text), 'ann', timezone('UTC', now()) + interval '1 hour', timezone('UTC', now()), 'later')"
)


def test_a_queues_notes_and_defer_rules_hold_for_statements_written_by_hand(
    pg: Pg, capsys: pytest.CaptureFixture[str]
) -> None:
    """notes_required and allow_defer = false were the engine's alone under grants: ann's own login gave
    an item back or resolved it without the note the queue asks for, and deferred it on a queue that
    defers nothing. The database refuses each; the engine's own release and Complete with notes pass."""
    text = demo.config_text("{url}").replace("[queues.cases]\n", "[queues.cases]\n" + STRICT_CASES, 1)
    _apply(pg, capsys, text, "cases")
    cases = pg.open("ann", text).queue("cases")
    lock = cases.claim_next("ann")[0].lock
    before = _state(pg), _rows(pg, "workbench_notes", "workbench_deferrals")
    ann = pg.engine("ann")
    note, defer = "needs a note", "does not let items be deferred"
    for said, *attack in (
        (note, RELEASE),
        (note, RELEASE, _audit("release")),
        (defer, RELEASE, _audit("defer")),
        (note, RESOLVE, _audit("complete", "resolved")),
        (note, RESOLVE),
        # A note with another action's kind is no note with this one.
        (note, RESOLVE, _noted("release")),
        # The trusted Complete, called by hand: it writes as the table's owner, for ann.
        (note, f"SELECT {pg_names.complete_function_name('cases')}(:k, :t, 'resolved')"),
        # A defer where the queue defers nothing: with its note, as a release's or a defer's audit row.
        (defer, RELEASE, _noted("release"), DEFERRAL),
        (defer, RELEASE, _noted("defer"), _audit("defer"), DEFERRAL),
        (defer, RELEASE, _noted("defer"), _noted("release"), _audit("defer")),
    ):
        refusal = _refused(ann, *attack, k=lock.key, t=lock.token)
        assert refusal.startswith("workbench: ") and said in refusal, (attack, refusal)
    assert (_state(pg), _rows(pg, "workbench_notes", "workbench_deferrals")) == before
    # The engine's own writes, with their notes, pass; without one the engine says so first.
    with pytest.raises(errors.UsageError, match="needs a note"):
        cases.release("ann", lock.key, lock.token)
    cases.release("ann", lock.key, lock.token, note="customer on holiday")
    lock = cases.claim_next("ann")[0].lock
    cases.complete("ann", lock.key, lock.token, "resolved", note="replaced the cable")
    # An outcome the queue asks no note for needs none, by hand either.
    lock = cases.claim_next("ann")[0].lock
    waits = (
        "UPDATE cases SET status = 'waiting_customer', wb_locked_by = NULL, wb_lock_token = NULL, "
        "wb_locked_at = NULL, wb_lock_expires = NULL WHERE case_id = :k"
    )
    with ann.begin() as conn:
        conn.execute(sa.text(waits), {"k": lock.key})
        conn.execute(sa.text(_audit("complete", "waiting")), {"k": lock.key})
    events = [(e.kind.value, e.outcome) for e in pg.open(pg.server.user, text).queue("cases").history(lock.key)]
    assert events[-1] == ("complete", "waiting")
