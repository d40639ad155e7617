"""The database's admission checked against the workflow table (issue 47): on PostgreSQL under `workbench
grants`, seeded random sequences of direct SQL by operators' and a supervisor's own logins (updates of random
column sets, lock values, notes, deferral rows, audit rows naming this queue or its twin), between
workbench's own operations that leave real locks, each admitted by the database if and only if the table
(core/workflow.py, read by tests/admission_model.py) admits it. Today's known holes are KNOWN_GAPS: the
oracle accepts the database's behaviour for exactly those, and test_each_known_gap_is_still_reachable fails
once a hole is closed, so that its entry goes."""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
from collections.abc import Callable, Iterator
from typing import Any

import hypothesis
import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule, run_state_machine_as_test

from tests import support
from tests.admission_model import FRESH, Leniency, Lock, QueueModel, Reading, Side, Snapshot, events_of, readings
from tests.test_permissions import Pg, pg  # noqa: F401  (the fixture: a demo database under `grants`)
from workbench import demo
from workbench.core import errors
from workbench.db import permissions
from workbench.db.supervision import Supervision

# A twin of the demo's `cases` over the same table and todo, with a rule of its own where `cases` has none:
# no deferring, a note with every release, an outcome `cases` lacks.
TWIN = """
[queues.cases2]
title = "Cases, second desk"
table = "cases"
key = "case_id"
order = ["opened_at asc"]
lock_duration = "15m"
allow_defer = false
notes_required = ["release"]

[queues.cases2.lock]
user = "wb_locked_by"
time = "wb_locked_at"
expires = "wb_lock_expires"
token = "wb_lock_token"

[queues.cases2.todo]
status = ["new", "open"]

[queues.cases2.on_claim]
status = "open"

[queues.cases2.outcomes.closed]
set = { status = "closed" }
"""

QUEUES = ("cases", "cases2")
KEYS = (1, 2, 3)
OPERATORS, SUPERVISOR = ("ann", "bob"), "sue"
STATUSES = ("new", "open", "resolved", "waiting_customer", "closed")


# -- actions ------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Hand:
    """One hand-written transaction by `caller`'s own login: an UPDATE of case `key` (status, an edit,
    lock values), then perhaps a note, a deferral row, an audit row of its own."""

    caller: str
    key: int
    status: str | None
    edit: bool
    lock: str  # LOCK_KINDS
    note: tuple[str, str] | None  # (queue, kind)
    deferral: str | None  # the queue it names
    label: tuple[str, str, str | None] | None  # an audit row: (queue, event, outcome)

    def statements(self) -> list[str]:
        sets = []
        if self.status is not None:
            sets.append(f"status = '{self.status}'")
        if self.edit:
            sets.append("subject = subject || ' (edited)'")
        sets += LOCK_KINDS[self.lock](self.caller)
        out = [f"UPDATE cases SET {', '.join(sets) or 'status = status'} WHERE case_id = {self.key}"]
        if self.note is not None:
            out.append(
                "INSERT INTO workbench_notes (queue, item_key, author, at, kind, text) VALUES "
                f"('{self.note[0]}', '{self.key}', '{self.caller}', timezone('UTC', now()), '{self.note[1]}', 'why')"
            )
        if self.deferral is not None:
            out.append(
                "INSERT INTO workbench_deferrals (queue, item_key, actor, until, at, reason) VALUES "
                f"('{self.deferral}', '{self.key}', '{self.caller}', timezone('UTC', now()) + interval '1 hour', "
                "timezone('UTC', now()), 'later')"
            )
        if self.label is not None:
            queue, event, outcome = self.label
            owner = "NULL" if event in ("move", "reopen") else f"'{self.caller}'"
            out.append(
                "INSERT INTO workbench_audit (queue, item_key, event, actor, owner, outcome, reason, at) VALUES "
                f"('{queue}', '{self.key}', '{event}', '{self.caller}', {owner}, "
                f"{'NULL' if outcome is None else repr(outcome)}, 'by hand', timezone('UTC', now()))"
            )
        return out

    def script(self) -> str:
        return f"-- as {self.caller}\nBEGIN;\n" + "".join(f"{s};\n" for s in self.statements()) + "COMMIT;"


def _lock(user: str, span: str) -> list[str]:
    return [
        f"wb_locked_by = '{user}'",
        "wb_lock_token = md5(random()::text)",
        "wb_locked_at = timezone('UTC', now())",
        f"wb_lock_expires = timezone('UTC', now()) + interval '{span}'",
    ]


def _other(caller: str) -> str:
    return next(o for o in (*OPERATORS, SUPERVISOR) if o != caller)


LOCK_KINDS: dict[str, Callable[[str], list[str]]] = {
    "keep": lambda caller: [],
    "clear": lambda caller: [
        f"{c} = NULL" for c in ("wb_locked_by", "wb_locked_at", "wb_lock_expires", "wb_lock_token")
    ],
    "own": lambda caller: _lock(caller, "5 minutes"),
    "own_too_long": lambda caller: _lock(caller, "3 hours"),
    "other": lambda caller: _lock(_other(caller), "5 minutes"),
    "extend": lambda caller: ["wb_lock_expires = timezone('UTC', now()) + interval '10 minutes'"],
    "user_only": lambda caller: ["wb_locked_by = NULL"],
}


def _new_lock(kind: str, old: Lock, caller: str) -> Lock:
    return {
        "keep": old,
        "clear": Lock(),
        "own": Lock(caller, FRESH, 0.0, 300.0),
        "own_too_long": Lock(caller, FRESH, 0.0, 10800.0),
        "other": Lock(_other(caller), FRESH, 0.0, 300.0),
        "extend": dataclasses.replace(old, expires=600.0),
        "user_only": dataclasses.replace(old, user=None),
    }[kind]


hands = st.builds(
    Hand,
    caller=st.sampled_from((*OPERATORS, SUPERVISOR)),
    key=st.sampled_from(KEYS),
    status=st.one_of(st.none(), st.sampled_from(STATUSES)),
    edit=st.booleans(),
    lock=st.sampled_from(tuple(LOCK_KINDS)),
    note=st.one_of(st.none(), st.tuples(st.sampled_from(QUEUES), st.sampled_from(("release", "complete")))),
    deferral=st.one_of(st.none(), st.none(), st.sampled_from(QUEUES)),
    label=st.one_of(
        st.none(),
        st.none(),
        st.tuples(
            st.sampled_from(QUEUES),
            st.sampled_from(("claim", "save", "extend", "release", "defer", "complete", "force_release", "move")),
            st.sampled_from((None, "resolved", "waiting", "closed")),
        ),
    ),
)

SERVICE_OPS = ("claim_next", "claim", "save", "extend", "release", "defer", "complete", "undo", "force_release")


Step = Hand | tuple[str, str, str, int]  # a hand-written transaction, or (op, login, queue, key) through workbench


@dataclasses.dataclass(frozen=True)
class Gap:
    """A hole the database has today: issue 47's number (0: found by this test, not in the issue), what it
    is, how the oracle models today's behaviour, and a sequence of actions that shows it."""

    hole: int
    what: str
    lenient: Leniency
    witness: tuple[Step, ...]  # ends with a Hand the table refuses and the database admits today


_CLAIM = ("claim", "ann", "cases", 1)  # workbench's own pick of case 1 by ann in `cases`


# Empty an entry when its fix merges (test_each_known_gap_is_still_reachable says when).
KNOWN_GAPS: dict[str, Gap] = {
    "release_with_edits": Gap(
        2,
        "a release under one's own lock may carry edits of editable columns (the table's release writes no EDITS)",
        Leniency(release_edits=True),
        (_CLAIM, Hand("ann", 1, None, True, "clear", None, None, None)),
    ),
    "twin_uses_the_lock": Gap(
        5,
        "a lock taken in one queue is released or completed through its twin over the same table (the check "
        "asks the row's state, not which queue the lock was taken in), skipping the first queue's rules",
        Leniency(here_by_state=True),
        (_CLAIM, Hand("ann", 1, "closed", False, "clear", None, None, None)),
    ),
    "release_clears_the_user_only": Gap(
        0,
        "NEW: setting the lock's user column alone to NULL (token, lock time and expiry left) is admitted as "
        "giving the lock back (release, expire, force-release), where the table's LOCK_CLEARED clears the lock",
        Leniency(release_any_lock_columns=True),
        (_CLAIM, Hand("ann", 1, None, False, "user_only", None, None, None)),
    ),
    "supervisor_without_reason": Gap(
        0,
        "NEW: a supervisor's own UPDATE (move, reopen, force-release, reassign) is admitted without the reason "
        "the table requires (Text.REQUIRED): the trail keeps a supervisor's act with no reason",
        Leniency(supervisor_reasonless=True),
        (Hand("sue", 1, "open", False, "keep", None, None, None),),
    ),
    "save_moves_the_expiry": Gap(
        0,
        "NEW: under one's own live lock an UPDATE may edit and move the expiry in one, or move it back: the "
        "table's save writes no LOCK_EXTENDED, its extend writes no EDITS and moves the expiry on",
        Leniency(save_extends=True),
        (_CLAIM, Hand("ann", 1, None, True, "extend", None, None, None)),
    ),
    "audit_row_names_the_twin": Gap(
        4,
        "an operator's own audit row may name the twin queue of the change (settled to it): e.g. a defer in "
        "`cases` recorded as a defer of `cases2`, which forbids deferring (hole 3 is its lock-table form)",
        Leniency(relabel=True),
        (_CLAIM, Hand("ann", 1, None, False, "clear", None, "cases", ("cases2", "defer", None))),
    ),
}


# -- the family: one database, its queues, its logins -------------------------------------------------


@dataclasses.dataclass
class Family:
    pg: Pg
    text: str
    models: list[QueueModel]
    engines: dict[str, sa.Engine]
    work: dict[tuple[str, str], Any]  # (login, queue) -> WorkQueue
    owner: sa.Connection | None = None  # the table owner's reading connection (autocommit)
    cases: int = 0  # hand-written transactions checked
    gaps_seen: dict[str, int] = dataclasses.field(default_factory=dict)

    def reset(self) -> None:
        with self.pg.admin.engine.begin() as conn:
            conn.exec_driver_sql(
                "UPDATE cases SET status = 'new', subject = 'Case ' || case_id, wb_locked_by = NULL, "
                "wb_locked_at = NULL, wb_lock_expires = NULL, wb_lock_token = NULL WHERE case_id IN (1, 2, 3)"
            )
            for table in ("workbench_audit", "workbench_notes", "workbench_deferrals", "workbench_cooldown"):
                conn.exec_driver_sql(f"DELETE FROM {table}")

    def snapshot(self, key: int, since: int | None = None) -> tuple[Snapshot, int, list[str]]:
        """The case as the owner reads it, the newest audit row's id, and the events written after `since`."""
        assert self.owner is not None
        row = (
            self.owner.execute(
                sa.text(
                    "SELECT c.*, extract(epoch FROM wb_locked_at - timezone('UTC', now())) AS at_rel, "
                    "extract(epoch FROM wb_lock_expires - timezone('UTC', now())) AS exp_rel, "
                    "(SELECT a.queue FROM workbench_audit a WHERE a.item_key = :t AND a.event = 'claim' "
                    " ORDER BY a.id DESC LIMIT 1) AS claim_queue, "
                    "(SELECT ARRAY[a.event, a.actor, a.queue, a.outcome, "
                    "  CAST(extract(epoch FROM timezone('UTC', now()) - a.at) AS text)] FROM workbench_audit a "
                    " WHERE a.item_key = :t ORDER BY a.id DESC LIMIT 1) AS last, "
                    "(SELECT coalesce(max(id), 0) FROM workbench_audit) AS audit_max, "
                    # Each row written since: its event, and the events the database says it may be (not settled).
                    "ARRAY(SELECT a.event || coalesce(',' || (SELECT string_agg(split_part(m, ':', 1), ',') "
                    "  FROM jsonb_array_elements_text(CASE WHEN a.detail LIKE '{\"recorded_by\"%' "
                    "  THEN CAST(a.detail AS jsonb) -> 'may_be' END) m), '') "
                    "  FROM workbench_audit a WHERE a.id > :since ORDER BY a.id) AS written "
                    "FROM cases c WHERE case_id = :k"
                ),
                {"k": key, "t": str(key), "since": since or 0},
            )
            .mappings()
            .one()
        )
        lock = Lock(
            row["wb_locked_by"],
            row["wb_lock_token"],
            None if row["at_rel"] is None else float(row["at_rel"]),
            None if row["exp_rel"] is None else float(row["exp_rel"]),
        )
        extra = ("at_rel", "exp_rel", "claim_queue", "last", "audit_max", "written")
        values = {k: v for k, v in row.items() if not k.startswith("wb_") and k not in extra}
        last = row["last"]
        trail = (*last[:4], float(last[4])) if last is not None else (None,) * 5
        snap = Snapshot(values, lock, row["claim_queue"], *trail)
        return snap, int(row["audit_max"]), list(row["written"]) if since is not None else []


def _run(engine: sa.Engine, statements: list[str]) -> str | None:
    """Run `statements` as one transaction: None if it committed with the row changed, else why not."""
    try:
        with engine.begin() as conn:
            changed = conn.exec_driver_sql(statements[0]).rowcount
            for statement in statements[1:]:
                conn.exec_driver_sql(statement)
            if changed != 1:
                conn.rollback()
                return "no row changed (row-level security hid it)"
    except sa.exc.DBAPIError as exc:
        lost = getattr(exc.orig, "sqlstate", "") == "40001"
        if not (permissions.is_refusal(exc) or lost or "permission denied" in str(exc.orig)):
            raise AssertionError(f"not a refusal: {exc}") from exc
        return str(exc.orig).splitlines()[0]
    return None


def _expected(before: Snapshot, hand: Hand) -> tuple[dict[str, Any], Lock, Side]:
    """The row and lock `hand` asks for, and what its transaction writes besides."""
    new_row = dict(before.row)
    if hand.status is not None:
        new_row["status"] = hand.status
    if hand.edit:
        new_row["subject"] = f"{before.row['subject']} (edited)"
    notes = frozenset({hand.note}) if hand.note is not None else frozenset()
    side = Side(notes=notes, deferral=hand.deferral, reason=hand.label is not None)
    return new_row, _new_lock(hand.lock, before.lock, hand.caller), side


def _judge(family: Family, hand: Hand, before: Snapshot, lenient: Leniency) -> list[Reading]:
    """The table's readings of `hand` (empty: refused), with its audit row naming one of them if it writes one."""
    new_row, new_lock, side = _expected(before, hand)
    supervisor = hand.caller == SUPERVISOR
    found = readings(family.models, before, new_row, new_lock, hand.caller, supervisor, side, lenient)
    if hand.label is None:
        return found
    queue, event, outcome = hand.label
    return [
        r
        for r in found
        if (r.queue == queue or lenient.relabel) and event in {e.value for e in _events(r)} and outcome == r.outcome
    ]


def _every_gap() -> Leniency:
    return Leniency(
        **{f.name: any(getattr(g.lenient, f.name) for g in KNOWN_GAPS.values()) for f in dataclasses.fields(Leniency)}
    )


def check_hand(family: Family, hand: Hand, log: list[str]) -> None:
    """Run one hand-written transaction; the database admits it iff the table does (or a known gap says
    why it differs today); what it wrote is what it asked, recorded as what the table reads it as."""
    before, mark, _ = family.snapshot(hand.key)
    new_row, new_lock, _side = _expected(before, hand)
    why = _run(family.engines[hand.caller], hand.statements())
    admitted = why is None
    family.cases += 1
    log.append(hand.script() + f"  -- {'admitted' if admitted else 'refused: ' + str(why)}")
    found = _judge(family, hand, before, Leniency())
    if bool(found) != admitted:
        gap = next(
            (n for n, g in KNOWN_GAPS.items() if bool(_judge(family, hand, before, g.lenient)) == admitted), None
        )
        if gap is None and bool(_judge(family, hand, before, _every_gap())) == admitted:
            gap = "several"
        if gap is None:
            raise AssertionError(
                f"the table {'admits' if found else 'refuses'} the last transaction, the database "
                f"{'admitted' if admitted else 'refused'} it.\nState before it: {before}\nThe sequence:\n"
                + "\n".join(log)
            )
        found = _judge(family, hand, before, KNOWN_GAPS[gap].lenient if gap != "several" else _every_gap())
        family.gaps_seen[gap] = family.gaps_seen.get(gap, 0) + 1
    after, _, written_events = family.snapshot(hand.key, since=mark)
    script = "\n".join(log)
    if not admitted:
        assert (after.row, after.lock.user, after.lock.token) == (before.row, before.lock.user, before.lock.token), (
            script
        )
        assert written_events == [], script
        return
    # What it wrote: the row as asked, audit rows of the transitions the table reads it as.
    assert after.row == new_row, (after.row, new_row, script)
    assert after.lock.user == new_lock.user, script
    assert (after.lock.token is None) == (new_lock.token is None), script
    # Each audit row written is of a transition the table reads the change as (or may still be one, unsettled).
    allowed = events_of(found, before)
    assert all(set(row.split(",")) & allowed for row in written_events), (written_events, found, script)


def _events(r: Reading) -> tuple[Any, ...]:
    from workbench.core import workflow

    return workflow.TRANSITIONS[r.transition].events


def run_service(family: Family, op: str, caller: str, queue: str, key: int, *, log: list[str]) -> None:
    """Workbench's own operation as `caller` (errors it raises for a refused act are fine: this only makes
    states with real locks, claims and Completes)."""
    work = family.work[(caller, queue)]
    token = family.snapshot(key)[0].lock.token or "0" * 32
    log.append(f"-- as {caller}: workbench {op} in {queue} of case {key}")
    try:
        if op == "claim_next":
            work.claim_next(caller)
        elif op == "claim":
            work.claim(caller, key)
        elif op == "save":
            work.save(caller, key, token, {"subject": "saved"})
        elif op == "extend":
            work.extend(caller, key, token)
        elif op == "release":
            work.release(caller, key, token, note="why" if queue == "cases2" else None)
        elif op == "defer":
            work.defer(
                caller, key, token, dt.datetime.now(dt.UTC).replace(tzinfo=None) + dt.timedelta(hours=1), "later"
            )
        elif op == "complete":
            outcome = "closed" if queue == "cases2" else "resolved"
            work.complete(caller, key, token, outcome)
        elif op == "undo":
            work.undo_complete(caller, key)
        elif op == "force_release":
            Supervision(family.work[(SUPERVISOR, queue)]).force_release(SUPERVISOR, key, "away")
    except errors.WorkbenchError as exc:
        log[-1] += f"  -- {type(exc).__name__}"


def _family(pg: Pg, capsys: pytest.CaptureFixture[str]) -> Family:
    text = demo.config_text("{url}") + TWIN
    path = pg.tmp / "admission.toml"
    path.write_text(text.replace("{url}", pg.url), encoding="utf-8")
    code, _, err = support.run_cli(capsys, "--config", path, "grants", "cases2", "--apply")
    assert code == 0, err
    with pg.admin.engine.begin() as conn:  # the other demo cases are finished: claims serve cases 1-3
        conn.exec_driver_sql("UPDATE cases SET status = 'resolved' WHERE case_id > 3")
    owner = pg.open(pg.server.user, text)
    models = [QueueModel.of(owner.queue(name).q) for name in QUEUES]
    logins = (*OPERATORS, SUPERVISOR)
    engines = {login: pg.engine(login) for login in logins}
    work = {(login, name): pg.open(login, text).queue(name) for login in logins for name in QUEUES}
    return Family(pg, text, models, engines, work)


def machine_for(family: Family) -> type[RuleBasedStateMachine]:
    class Admission(RuleBasedStateMachine):
        @initialize()
        def fresh(self) -> None:
            family.reset()
            self.log: list[str] = ["-- cases 1-3 waiting (status 'new'), no locks, no trail"]

        @rule(hand=hands)
        def by_hand(self, hand: Hand) -> None:
            check_hand(family, hand, self.log)

        @rule(hand=hands)
        def by_hand_again(self, hand: Hand) -> None:  # hand-written transactions are most of the steps
            check_hand(family, hand, self.log)

        @rule(hand=hands)
        def by_hand_once_more(self, hand: Hand) -> None:
            check_hand(family, hand, self.log)

        @rule(
            op=st.sampled_from(SERVICE_OPS),
            caller=st.sampled_from(OPERATORS),
            queue=st.sampled_from(QUEUES),
            key=st.sampled_from(KEYS),
        )
        def through_workbench(self, op: str, caller: str, queue: str, key: int) -> None:
            run_service(family, op, caller, queue, key, log=self.log)

        @rule(key=st.sampled_from(KEYS))
        def time_passes(self, key: int) -> None:
            """The owner moves the case's lock and trail an hour back: a run-out lock, an undo too late."""
            with family.pg.admin.engine.begin() as conn:
                conn.execute(
                    sa.text(
                        "UPDATE cases SET wb_locked_at = wb_locked_at - interval '1 hour', "
                        "wb_lock_expires = wb_lock_expires - interval '1 hour' WHERE case_id = :k"
                    ),
                    {"k": key},
                )
                conn.execute(
                    sa.text("UPDATE workbench_audit SET at = at - interval '1 hour' WHERE item_key = :k"),
                    {"k": str(key)},
                )
            self.log.append(f"-- an hour passes for case {key}'s lock and trail")

    return Admission


EXAMPLES, STEPS = int(os.environ.get("WB_ADMISSION_EXAMPLES", "180")), 60


@pytest.fixture
def family(pg: Pg, capsys: pytest.CaptureFixture[str]) -> Iterator[Family]:
    family = _family(pg, capsys)
    with pg.admin.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        family.owner = conn
        yield family


def test_the_database_admits_what_the_table_admits_on_row_locks(family: Family) -> None:
    run_state_machine_as_test(
        machine_for(family),
        settings=hypothesis.settings(
            max_examples=EXAMPLES,
            stateful_step_count=STEPS,
            derandomize=True,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
            print_blob=False,
            phases=[hypothesis.Phase.generate]
            if os.environ.get("WB_ADMISSION_NO_SHRINK")
            else [hypothesis.Phase.generate, hypothesis.Phase.shrink],
        ),
    )
    print(f"{family.cases} hand-written transactions checked; known gaps met: {family.gaps_seen}")
    assert family.cases >= 5000, family.cases


def _replay(family: Family, steps: tuple[Step, ...], log: list[str]) -> None:
    for step in steps:
        if isinstance(step, Hand):
            check_hand(family, step, log)
        else:
            run_service(family, *step, log=log)


@pytest.mark.parametrize("name", sorted(KNOWN_GAPS))
def test_each_known_gap_is_still_reachable(family: Family, name: str) -> None:
    """Each KNOWN_GAPS entry is a hole the database still has: its witness's last transaction is refused
    by the table and admitted by the database. Once fixed, the entry goes (and the oracle holds it)."""
    gap = KNOWN_GAPS[name]
    family.reset()
    log: list[str] = []
    *setup, last = gap.witness
    _replay(family, tuple(setup), log)
    assert isinstance(last, Hand)
    before, _, _ = family.snapshot(last.key)
    strict = _judge(family, last, before, Leniency())
    assert not strict, f"the table admits the witness of {name}: {strict}"
    assert _judge(family, last, before, gap.lenient), f"{name}'s leniency does not explain its witness"
    why = _run(family.engines[last.caller], last.statements())
    assert why is None, (
        f"hole {gap.hole} is closed ({name}: the database refuses its witness: {why}), remove it from "
        "KNOWN_GAPS\n" + "\n".join([*log, last.script()])
    )
