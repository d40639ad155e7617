"""core/workflow.py's transition table, held to itself (issue 37's holes written as rules of the table)
and to every rendering of it (issue 39): the engine's operations, PostgreSQL's check functions (a
row's own lock and a lock table's) and SQL Server's procedures. A transition added to the table
and not rendered somewhere, or a branch rendered for a transition the table does not know, fails
here. docs/develop/workflow.md says where a new transition goes."""

from __future__ import annotations

import ast
import datetime as dt
import re
import tomllib
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests import support
from tests import test_mssql_sql as mssql_sql
from tests.test_permissions import Pg, pg  # noqa: F401  (the fixture: a demo database under `grants`)
from tests.test_protocol import TICKETS_REVIEW, _tickets
from tests.test_protocol_holes import _apply
from workbench import demo
from workbench.config import loader
from workbench.core import errors, models, problems, workflow
from workbench.core.workflow import TRANSITIONS, Actor, Check, LockRule, Rendering, RowRule
from workbench.db import guarded, permissions, workflow_sql
from workbench.db.rules import mssql_parts, mssql_script, pg_guards, pg_names

DB = Path(__file__).resolve().parents[1] / "workbench" / "db"
# The names the conformance matrix (tests/contract/test_workflow_matrix.py) is written against.
NAMES = (
    "claim",
    "pick",
    "save",
    "extend",
    "release",
    "defer",
    "escalate",
    "complete",
    "review_accept",
    "review_send_back",
    "undo",
    "expire",
    "expire_out_of_work",
    "force_release",
    "reassign",
    "move",
    "reopen",
    "take",
    "note",
)
# The vendor's tickets put back by a supervisor's reopen (the sample config has none).
REOPEN_TICKETS = """
[queues.tickets.on_reopen]
state = "open"
"""
MARKED = re.compile(re.escape(workflow.MARK) + r"([\w ]+)")
# Checks a PostgreSQL rendering leaves to the engine, and why (the workflow matrix's HOLES keeps them).
GAPS = {
    Check.ALLOW_PICK: "the database sees a pick as a claim: nothing an operator's login writes tells Next "
    "item's claim from a claim by key that it could not forge, and the queue's order is no test under "
    "concurrent claims (a claim skips rows others hold) nor filters (filter_by)",
}


def expected(rendering: Rendering) -> set[str]:
    return {name for name, t in TRANSITIONS.items() if rendering not in t.not_in}


def marked(*texts: str) -> set[str]:
    """The transitions the branches of generated SQL say they handle."""
    return {name for text in texts for found in MARKED.findall(text) for name in found.split()}


def held_to_table(rendering: Rendering, handled: set[str]) -> None:
    """The rendering renders the table's transitions, all and only; else the message names its file."""
    try:
        workflow.require_rendered(rendering, handled)
    except workflow.NotRendered as exc:
        pytest.fail(str(exc), pytrace=False)


# The files each database rendering marks its branches in (branch_mark calls, read without a server).
SOURCES = {
    Rendering.PG_TRIGGER: [DB / "rules" / "pg_row_check.py", DB / "rules" / "pg_names.py"],
    Rendering.PG_LOCK_TABLE: [DB / "rules" / "pg_lock_check.py", DB / "rules" / "pg_locks.py"],
}
# rules/pg_row_check.py, pg_lock_check.py and pg_locks.py bind branch_mark so
_MARKERS = {"branch_mark", "mark", "branch"}


def source_marks(*paths: Path) -> set[str]:
    """The transitions a module's branch_mark calls name: a name given as text, or a tuple of them
    starred from a variable (`mark(*completes)`: every text assigned to `completes` in the module, and
    to the module's names its value reads, e.g. a tuple of marks filtered by the table). The paths are
    read as one module (a tuple of marks may be named in one and starred in another)."""
    found: set[str] = set()
    tree = ast.parse("\n".join(path.read_text(encoding="utf-8") for path in paths))
    texts: dict[str, set[str]] = {}
    reads: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, (ast.AugAssign, ast.AnnAssign)) and node.value is not None
            else []
        )
        for target in targets:
            if isinstance(target, ast.Name):
                value = node.value  # type: ignore[union-attr]
                strings = {c.value for c in ast.walk(value) if isinstance(c, ast.Constant)}
                texts.setdefault(target.id, set()).update(x for x in strings if isinstance(x, str))
                reads.setdefault(target.id, set()).update(n.id for n in ast.walk(value) if isinstance(n, ast.Name))
    for name, names in reads.items():
        for read in names - {name}:
            texts[name] |= texts.get(read, set())
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if called not in _MARKERS:
            continue
        for arg in node.args:
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                found.add(arg.value)
            elif isinstance(arg, ast.Starred) and isinstance(arg.value, ast.Name):
                found |= texts.get(arg.value.id, set()) & set(TRANSITIONS)
    return found


# -- the table itself -----------------------------------------------------------------------


def test_the_table_declares_each_transition_once_under_its_name() -> None:
    assert sorted(TRANSITIONS) == sorted(NAMES)
    assert all(name == t.name for name, t in TRANSITIONS.items())
    # Every audit event is some transition's: a new kind of audit row comes with its row in the table.
    assert {kind for t in TRANSITIONS.values() for kind in t.events} == set(models.EventKind)
    for t in TRANSITIONS.values():
        assert t.same_change_as is None or TRANSITIONS[t.same_change_as].event is t.event, t.name
        assert issubclass(t.refusal, errors.WorkbenchError), t.name


def test_every_kind_the_table_names_is_some_transitions() -> None:
    """No precondition, check or write declared and left unused: a rule nobody states is a rule nobody keeps."""
    t = list(TRANSITIONS.values())
    assert {x.who for x in t} == set(Actor)
    assert {x.lock for x in t} == set(LockRule)
    assert {x.row for x in t} == set(RowRule)
    assert {x.after for x in t} == set(workflow.After)
    assert {x.trail for x in t} == set(workflow.TrailRule)
    assert {c for x in t for c in x.checks} == set(Check)
    assert {w for x in t for w in x.writes} == set(workflow.Write)
    assert {x.note for x in t} | {x.reason for x in t} == set(workflow.Text)


def test_an_operator_writes_a_held_row_only_under_their_own_live_lock_taken_in_this_queue() -> None:
    """Issue 37: a live lock taken over, a lock of queue A written through queue B. Every operator
    transition on a held row requires the caller's own live lock taken in this queue, and refuses
    as a lost lock; the only way to another's lock is a supervisor's, and only in the lock's queue."""
    for t in TRANSITIONS.values():
        if t.who is Actor.OPERATOR and t.row is RowRule.HELD:
            assert t.lock is LockRule.OWN_LIVE_HERE, t.name
            assert t.refusal is errors.LockLost, t.name
        if t.lock is LockRule.OWN_LIVE_HERE:
            assert t.who is Actor.OPERATOR and t.row is RowRule.HELD, t.name
    # A claim never takes a live lock: only a free or run-out one.
    assert {t.lock for t in TRANSITIONS.values() if workflow.Write.LOCK_TAKEN in t.writes} <= {
        LockRule.FREE_OR_STALE,
        LockRule.FREE,
    }
    # Somebody else's lock is taken away only by a supervisor or the clock, and only in its own queue.
    others = {t.name for t in TRANSITIONS.values() if t.lock in (LockRule.HELD_HERE, LockRule.STALE_HERE)}
    assert others == {"expire", "expire_out_of_work", "force_release", "reassign"}
    assert all(TRANSITIONS[name].who is not Actor.OPERATOR for name in others)


def test_a_supervisors_transition_is_refused_to_operators_and_needs_a_reason() -> None:
    # (A take is also the queue's escalate_to group's, which supervisors are always in.)
    supervisors = {t.name for t in TRANSITIONS.values() if t.who in (Actor.SUPERVISOR, Actor.ESCALATED_TO)}
    assert supervisors == {"force_release", "reassign", "reopen", "move", "take"}
    for name in supervisors:
        assert TRANSITIONS[name].refusal is errors.NotPermitted, name
        # A take is recorded as the supervisor's claim of work to do: no reason, as for any claim.
        wanted = workflow.Text.NONE if TRANSITIONS[name].event is models.EventKind.CLAIM else workflow.Text.REQUIRED
        assert TRANSITIONS[name].reason is wanted, name
    # SQL Server: EXECUTE on the procedures carrying them is the supervisors' alone, the rest the operators'.
    q = mssql_sql.demo_queue()
    grants = "\n".join(mssql_script.script(mssql_sql.DIALECT, q, "dbo"))
    for op, carried in mssql_parts.CARRIES.items():
        role = mssql_parts.SUPERVISOR_ROLE if set(carried) <= supervisors else mssql_parts.OPERATOR_ROLE
        if op in ("defer", "undo", "escalate"):
            continue  # the demo's cases neither defer, undo nor escalate (the builder leaves them out)
        assert f"GRANT EXECUTE ON dbo.wb_cases_{op} TO {role};" in grants, op


def test_a_reviewer_is_never_the_doer() -> None:
    """Issue 37: a Complete through the reviewing queue that skips review. A verdict is given only under
    a lock its doer could not take (the claim refuses the doer their own work), and the reviewed
    queue's Complete hands the item over."""
    for name in ("review_accept", "review_send_back"):
        t = TRANSITIONS[name]
        assert Check.NOT_DOER in t.checks and Check.REVIEWED_OUTCOME in t.checks, name
        assert t.lock is LockRule.OWN_LIVE_HERE and workflow.Write.REVIEW_VERDICT in t.writes, name
    assert all(Check.NOT_DOER in TRANSITIONS[name].checks for name in ("claim", "pick"))
    assert workflow.Write.REVIEW_HANDOVER in TRANSITIONS["complete"].writes
    assert Check.FIRST_ITEMS_REVIEWED in TRANSITIONS["complete"].checks


def test_the_texts_a_transition_requires() -> None:
    """Notes where the queue requires them (release, defer, Complete), a reason for a defer and for
    every supervisor transition; the guarded writes take the operator's reason for release and defer."""
    configured = {t.name for t in TRANSITIONS.values() if t.note is workflow.Text.CONFIGURED}
    assert configured == {"release", "defer", "complete", "review_accept", "review_send_back"}
    assert {models.EventKind.RELEASE, models.EventKind.DEFER, models.EventKind.ESCALATE} == workflow.REASONED
    assert workflow.needs_text(workflow.Text.REQUIRED, lambda: False)
    assert not workflow.needs_text(workflow.Text.OPTIONAL, lambda: True)
    assert workflow.needs_text(workflow.Text.CONFIGURED, lambda: True)


def test_a_branch_mark_names_only_transitions_of_the_table() -> None:
    assert workflow.branch_mark("claim", "pick") == "-- transition: claim pick"
    with pytest.raises(KeyError, match="no_such_transition"):
        workflow.branch_mark("no_such_transition")


# -- the renderings -------------------------------------------------------------------------


def _handled_by() -> dict[Rendering, set[str]]:
    """What each rendering renders, read without a database server: the engine's operations, the
    branch marks in PostgreSQL's renderings' sources, the procedures SQL Server's script carries."""
    methods = _db_methods()
    return {
        Rendering.PYTHON: {name for name, t in TRANSITIONS.items() if t.operation in methods},
        **{rendering: source_marks(*paths) for rendering, paths in SOURCES.items()},
        Rendering.MSSQL: {name for carried in mssql_parts.CARRIES.values() for name in carried},
    }


def test_every_rendering_renders_the_table_read_without_a_server() -> None:
    """The fast tier's check of every rendering (the servers' tier reads the installed functions too)."""
    handled = _handled_by()
    assert set(handled) == set(Rendering)
    for rendering, names in handled.items():
        held_to_table(rendering, names)


# A transition added to the table and rendered nowhere yet: each rendering's message names its file.
_FILES = {
    Rendering.PYTHON: "workbench/db/workqueue.py",
    Rendering.PG_TRIGGER: "workbench/db/rules/pg_row_check.py",
    Rendering.PG_LOCK_TABLE: "workbench/db/rules/pg_locks.py",
    Rendering.MSSQL: "workbench/db/rules/mssql_parts.py",
}


def test_a_transition_missing_from_a_rendering_fails_naming_the_file_to_change(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 47: adding a transition used to fail first with a bare StopIteration when db/procedures.py
    was imported. Now each rendering that lacks it says which file to change, and what to add there."""
    import dataclasses

    probe = dataclasses.replace(TRANSITIONS["defer"], name="probe", operation="probe")
    monkeypatch.setitem(workflow._TABLE, "probe", probe)
    handled = _handled_by()
    for rendering, path in _FILES.items():
        with pytest.raises(workflow.NotRendered) as refused:
            workflow.require_rendered(rendering, handled[rendering])
        said = str(refused.value)
        assert "'probe'" in said and path in said and "not_in" in said, said
    # Where the engine looks a transition's procedure up, and where SQL Server's script is generated.
    with pytest.raises(workflow.NotRendered, match=r"'probe'.*workbench/db/rules/mssql_parts\.py.*CARRIES"):
        mssql_parts.carrier("probe")
    with pytest.raises(workflow.NotRendered, match=r"'probe'.*workbench/db/rules/mssql_parts\.py"):
        mssql_script.script(mssql_sql.DIALECT, mssql_sql.demo_queue(), "dbo")
    # Excused with a reason where it cannot be (not_in), it is not asked for there.
    excused = dataclasses.replace(probe, not_in=dict.fromkeys(Rendering, "a test"))
    monkeypatch.setitem(workflow._TABLE, "probe", excused)
    for rendering in Rendering:
        workflow.require_rendered(rendering, _handled_by()[rendering])
    # A rendering naming a transition the table does not know is refused as well.
    with pytest.raises(workflow.NotRendered, match=r"workbench/db/rules/pg_row_check\.py \(.*\) renders 'nothing'"):
        workflow.require_rendered(Rendering.PG_TRIGGER, {*_handled_by()[Rendering.PG_TRIGGER], "nothing"})


def _db_methods() -> set[str]:
    """The methods the classes of workbench/db define (the engine's operations, wherever they live)."""
    found = set()
    for path in DB.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                found |= {f.name for f in node.body if isinstance(f, ast.FunctionDef)}
    return found


def _guarded_writes() -> set[str]:
    """The transitions the engine's guarded writes are built for (guarded.Shape.of(NAME, …)), and the
    audit events of any built by hand (guarded.Shape(models.EventKind.X, …)) as their transitions."""
    found = set()
    for path in DB.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        found |= set(re.findall(r"\bShape\.of\(\s*\"(\w+)\"", text))
        kinds = re.findall(r"\bShape\(\s*models\.EventKind\.(\w+)", text)
        found |= {workflow.of_event(models.EventKind[kind]).name for kind in kinds}
    return found


def test_the_engine_has_an_operation_for_every_transition() -> None:
    methods = _db_methods()
    handled = {name for name, t in TRANSITIONS.items() if t.operation in methods}
    held_to_table(Rendering.PYTHON, handled)
    # The guarded writes are the transitions under the caller's own lock, each of them (a reviewing
    # queue's verdict is written as its Complete).
    own = {t.name for t in TRANSITIONS.values() if workflow.under_own_lock(t)}
    assert _guarded_writes() == own
    with pytest.raises(ValueError, match="not a write under the caller's own lock"):
        guarded.Shape.of("force_release")


def _mssql_script(text: str, name: str) -> str:
    reviewed = loader.parse(tomllib.loads(text), "x.toml").reviewed_by(name)
    return "\n".join(mssql_script.script(mssql_sql.DIALECT, mssql_sql.bound(text, name), "dbo", reviewed))


def _procedure(script: str, name: str) -> str:
    """Procedure wb_NAME of a script."""
    found = re.search(rf"CREATE OR ALTER PROCEDURE dbo\.wb_{name}\b.*?\nEND;", script, re.S)
    assert found is not None, name
    return found.group(0)


def test_sql_servers_procedures_render_every_transition() -> None:
    text = demo.config_text().replace("[queues.cases]\n", "[queues.cases]\nallow_defer = true\nundo_within = 600\n")
    assert "[queues.cases.on_escalate]" in text  # escalate's procedure (Check.ON_ESCALATE_SET)
    scripts = [_mssql_script(text, name) for name in ("cases", "imports", "imports_review")]
    held_to_table(Rendering.MSSQL, marked(*scripts))
    # Four eyes: the reviewing queue's claim never serves the doer their own work (Check.NOT_DOER).
    assert "doer" in _procedure(scripts[2], "imports_review_next")
    assert "doer" not in _procedure(scripts[0], "cases_next")
    # Nor does a supervisor's reassign hand the review to the doer.
    assert "doer" in _procedure(scripts[2], "imports_review_reassign")
    assert "doer" not in _procedure(scripts[0], "cases_reassign")
    # Each procedure says which transitions it carries, and carries those only.
    for script in scripts:
        for op, carried in mssql_parts.CARRIES.items():
            procedure = re.search(rf"CREATE OR ALTER PROCEDURE dbo\.wb_\w+?_{op}\b.*?\nEND;", script, re.S)
            if procedure is not None:
                assert marked(procedure.group(0)) <= set(carried), op


def _sources(pg: Pg, pattern: str) -> dict[str, str]:
    with pg.admin.engine.connect() as conn:
        rows = conn.execute(
            sa.text("SELECT proname, prosrc FROM pg_proc WHERE proname LIKE :p ORDER BY proname"), {"p": pattern}
        ).all()
    return {str(name): str(source) for name, source in rows}


DOER_IS_NEW = r"rv\.doer = \(?n\."  # the review's doer compared with the new row's holder


@pytest.mark.servers
def test_postgresqls_check_functions_render_every_transition(pg: Pg, capsys: pytest.CaptureFixture[str]) -> None:
    """The check functions `workbench grants` installs (one per queue; a lock-table queue's two), as the
    database keeps them: the demo's cases, imports and its reviewing queue; the vendor's tickets
    (locks in a lock table) with theirs. Undo is not rendered for a lock-table queue (Transition.not_in)."""
    _apply(pg, capsys, demo.config_text("{url}"), "imports", "imports_review")
    tickets = support.sample_config("vendor-tickets") + TICKETS_REVIEW + REOPEN_TICKETS
    _tickets(pg, capsys, tickets, "tickets", "tickets_review")
    checks = _sources(pg, "wb\\_%\\_check")
    in_row = [source for name, source in checks.items() if not name.startswith("wb_tickets")]
    assert len(in_row) == 3, sorted(checks)
    held_to_table(Rendering.PG_TRIGGER, marked(*in_row))
    lock_table = [
        *(s for n, s in checks.items() if n.startswith("wb_tickets")),
        *_sources(pg, "wb\\_%lockcheck").values(),
    ]
    assert len(lock_table) == 4, sorted(checks)
    held_to_table(Rendering.PG_LOCK_TABLE, marked(*lock_table))
    # Each Check the table names for a transition a rendering handles is rendered there (its check_mark),
    # in the queue's functions or the guards every queue shares; one it lacks is a hole, named in GAPS.
    shared = list(_sources(pg, "workbench\\_%").values())
    for rendering, sources in ((Rendering.PG_TRIGGER, in_row), (Rendering.PG_LOCK_TABLE, lock_table)):
        named = {c for name in expected(rendering) for c in TRANSITIONS[name].checks}
        text = "\n".join([*sources, *shared])
        rendered = {c for c in Check if workflow_sql.check_mark(c) in text}
        assert named - rendered == set(GAPS), (rendering, named - rendered)
    # The texts a queue may require (Text.CONFIGURED): each such transition's audit row is checked at
    # commit for its note (db/rules/pg_guards.py's notes guard).
    with pg.admin.engine.connect() as conn:
        trigger = conn.execute(
            sa.text("SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgname = :name"),
            {"name": pg_names.NOTES_GUARD},
        ).scalar_one()
    assert "CONSTRAINT TRIGGER" in trigger and "INITIALLY DEFERRED" in trigger, trigger
    for t in TRANSITIONS.values():
        if t.note is workflow.Text.CONFIGURED and expected(Rendering.PG_TRIGGER) >= {t.name}:
            assert t.event is not None and f"'{t.event.value}'" in trigger, (t.name, trigger)
    # And every act the table requires a reason for (Text.REQUIRED), whoever makes it, for its reason; where
    # it writes a deferral (a defer), for the deferral's reason too.
    for t in TRANSITIONS.values():
        if workflow.needs_reason(t.name):
            assert t.event is not None and f"'{t.event.value}'" in trigger, (t.name, trigger)
            assert t.event.value in pg_guards.reasoned(), t.name
            assert (workflow.Write.DEFERRAL in t.writes) == (t.event.value in pg_guards.reasoned_deferrals()), t.name
    # Four eyes: the reviewing queue's claim branch refuses the doer their own work (Check.NOT_DOER).
    review_check = checks["wb_imports_review_check"]
    claim = review_check.split(workflow.branch_mark("claim", "pick", "expire"), 1)[1].split(" THEN", 1)[0]
    assert re.search(DOER_IS_NEW, claim)  # the new holder: the login, as the claim's lock rule says
    # Nor does a supervisor's reassign hand the review to the doer (the new holder is not the doer).
    reassign = review_check.split("-- Reassign:", 1)[1].split(" THEN", 1)[0]
    assert re.search(DOER_IS_NEW, reassign)
    # A lock-table queue's reassign as well (its lock row's new holder).
    tickets_review = _sources(pg, "wb\\_tickets\\_review\\_lockcheck")
    assert len(tickets_review) == 1, sorted(tickets_review)
    lock_reassign = next(iter(tickets_review.values())).split(workflow.branch_mark("reassign"), 1)[1]
    assert re.search(DOER_IS_NEW, lock_reassign.split(" THEN", 1)[0])
    # Who may: each branch of a supervisor's transition asks the database whether the login is one.
    for source in in_row:
        for found in MARKED.finditer(source):
            names = found.group(1).split()
            condition = source[found.end() :].split(" THEN", 1)[0]  # the IF that follows the mark
            assert ("workbench_supervisor" in condition) == workflow_sql.supervisors_only(*names), names


# -- the engine refuses as the table says ---------------------------------------------------


def _reason_needed(name: str) -> str:
    """The engine's one refusal of a missing reason (core/problems.py), for transition `name`."""
    return "^" + re.escape(problems.REASON_NEEDED.format(workflow.command(name))) + "$"


def test_the_engine_refuses_as_the_table_says(native_env: support.Env) -> None:
    """Each transition that needs a reason refuses one left blank (before anything else is looked at);
    a supervisor's, attempted by an operator once supervisors are named, is refused with the table's
    error class; an operator's write under somebody else's lock is refused as a lost lock."""
    wb = native_env.demo(case_rows=4, import_rows=1)
    q = wb.queue("cases")
    sup = wb.supervision("cases")
    held = q.claim_next("alice")[0].lock
    done = q.claim_next("alice")[0].lock
    q.complete("alice", done.key, done.token, "resolved")
    waiting = q.open_items(1)[0]["case_id"]
    supervisor_calls = {
        "force_release": lambda actor, reason: sup.force_release(actor, held.key, reason),
        "reassign": lambda actor, reason: sup.reassign(actor, held.key, "bob", reason),
        "reopen": lambda actor, reason: sup.reopen(actor, done.key, reason),
        "move": lambda actor, reason: sup.move(actor, {"priority": 1}, reason, keys=[waiting]),
    }
    # A take needs no reason, and the demo's cases do not escalate: tests/test_escalate.py refuses it to operators.
    assert set(supervisor_calls) == {t.name for t in TRANSITIONS.values() if t.who is Actor.SUPERVISOR}
    assert {t.name for t in TRANSITIONS.values() if t.who is Actor.ESCALATED_TO} == {"take"}
    for name, call in supervisor_calls.items():
        assert TRANSITIONS[name].reason is workflow.Text.REQUIRED
        with pytest.raises(errors.UsageError, match=_reason_needed(name)):
            call("sue", " ")
    assert TRANSITIONS["defer"].reason is workflow.Text.REQUIRED
    with pytest.raises(errors.UsageError, match=_reason_needed("defer")):
        q.defer("alice", held.key, held.token, dt.datetime.now(dt.UTC) + dt.timedelta(hours=1), " ")
    with wb.engine.begin() as conn:
        permissions.grant(conn, None, "root", "sue", "supervisor")
    for name, call in supervisor_calls.items():
        with pytest.raises(TRANSITIONS[name].refusal):
            call("bob", "because")
    own = {
        "save": lambda: q.save("bob", held.key, held.token, {"resolution": "x"}),
        "extend": lambda: q.extend("bob", held.key, held.token),
        "release": lambda: q.release("bob", held.key, held.token),
        "complete": lambda: q.complete("bob", held.key, held.token, "resolved"),
    }
    for name, call in own.items():
        with pytest.raises(TRANSITIONS[name].refusal):
            call()
    with pytest.raises(TRANSITIONS["pick"].refusal):
        q.claim("bob", held.key)
    assert native_env.row(wb, "cases", held.key)["wb_locked_by"] == "alice"
