"""PostgreSQL under grants for queues whose locks live in a separate lock table (shape 5): the checks of
the lock rows an operator's login writes, and of the queue row's workflow values around them.

A claim inserts the item's lock row (or takes over an expired one), then writes on_claim into the
queue row; a release or Complete deletes the lock row, then writes on_release or the outcome's
values (with the edits); a Save writes edits while the lock row is held. So:

- the lock table's trigger asks the check of the row's queue (wb_QUEUE_lockcheck): a claim only of
  an item that waits, under the login's own name, inside the lock limits; an extend of the login's
  own live lock; giving up the login's own live lock; the sweep of an expired one; force-release
  and reassign for supervisors. Each writes its audit row, and a crumb that the lock was taken or
  given up in this transaction;
- the queue table's trigger asks the queue's check (wb_QUEUE_check, as for locks in the row): the
  claim's on_claim values once the login took the item's lock in this transaction; edits while it
  holds the lock (a Save, recorded); once it gave the lock up, on_release (with a reason's values)
  or exactly an outcome's values (the audit row becomes the Complete), edits with either; after a
  supervisor's force-release or a sweep, on_release; a supervisor's move and reopen of an item
  nobody holds;
- at commit (the lock table's deferred constraint trigger, wb_LOCKS_held), each lock row an operator's
  login inserted and still holds is asked of its queue's lock check once more (op COMMIT): its item is in
  the queue's work (the row rule HELD), as a take's values put an escalated item back to work.
"""

from __future__ import annotations

import functools
from typing import Any

import sqlalchemy as sa

from workbench.config import model
from workbench.core import workflow
from workbench.db import clock, lockrules, mapping, rowrules, tables, workflow_sql
from workbench.db.rules import pg_names, pg_row_check, pg_row_rules, pg_triggers
from workbench.db.rules.pg_lock_check import (
    AT_COMMIT,
    LOCKS_SETTING,
    actors,
    crumb_of,
    given_up,
    lock_check,
    lock_check_name,
    lock_shape,
    row_held,
)


class _ItemCheck:
    """The queue row's check of a lock-table queue: what its branches read, set up once, and a part of the
    function's body per family of transitions (a lock taken or held, a lock given up, the others)."""

    def __init__(self, conn: sa.Connection, q: mapping.BoundQueue, schema: str) -> None:
        self.q = q
        self.shape = shape = lock_shape(q)
        self.r = r = pg_names.Renderer(conn.dialect, q, rows=pg_names.CHECK_ROWS)
        self.prep = prep = r.prep
        self.old, self.new = r.old, r.new
        self.held = shape.locks.alias("held")
        self.now = now = q.now()
        self.audit = prep.format_table(pg_names.wb_audit_table(schema))
        self.queue_name = queue_name = r.literal(q.name)
        self.key = key = f"CAST({r.col(self.old, q.key)} AS text)"
        self.at = r.sql(clock.db_now())
        self.record = pg_names.recorder(self.audit, queue_name, key, self.at)
        # What each transition leaves as it was, read from core/workflow.py (pg_row_rules.kept).
        self.kept, self.values = functools.partial(pg_row_rules.kept, q), functools.partial(pg_row_rules.values_of, q)
        self.unchanged, self.assigned = r.unchanged, r.assigned
        supervisor = f"pg_has_role(session_user, '{pg_names.SUPERVISOR_ROLE}', 'USAGE')"
        lock_row = (
            f"FROM {prep.format_table(shape.locks)} held WHERE held.queue = {queue_name} AND held.item_key = {key}"
        )
        self.holds = holds = (
            f"{lock_row} AND {r.sql(shape.user, self.held)} = login AND {r.sql(shape.live(now), self.held)}"
        )
        # The lock rules on the queue row: the login's own live lock row (a save), nobody's (move, reopen:
        # the table's FREE as the engine's statements carry it, db/lockrules.py, over the row before).
        self.rules = actors(
            conn, q, schema, supervisor, {workflow.LockRule.OWN_LIVE_HERE: f"EXISTS (SELECT 1 {holds})"}
        )
        # The queue row's columns as the function's argument `o` itself: a subquery (the lock rule's) would
        # otherwise add the table to its own FROM.
        self.as_old = {
            c.name: sa.literal_column(f"{pg_names.CHECK_ROWS[0]}.{prep.quote(c.name)}", c.type) for c in q.table.c
        }
        self.here = f"a.xmin = {pg_names.THIS_TRANSACTION}"
        self.reviews = pg_names.own_table(schema, tables.REVIEWS_TABLE)
        self.edits = pg_row_rules.changes_of(r, q)

    def free(self, name: str) -> str:
        return self.r.sql(self.q.written(lockrules.guard(self.q, name, self.now), self.as_old))

    def stamped(self, *names: str) -> str:
        """What the lock write of the transitions `names` leaves in the queue row itself (shape 6: its
        claim id, db/lockshapes/claim_id.py), as the lock shape says it."""
        login: sa.ColumnElement[Any] = sa.literal_column("login")
        item_key: sa.ColumnElement[Any] = sa.literal_column(self.key, sa.String())
        parts = {self.r.sql(self.shape.row_lock_change(name, self.old, self.new, item_key, login)) for name in names}
        if len(parts) != 1:
            raise AssertionError(f"transitions {', '.join(names)} leave the row's lock differently")
        return parts.pop()

    def crumb(self, kind: str) -> str:
        return pg_names.noted(LOCKS_SETTING, f"'{kind}'", self.queue_name, self.key)

    def completes(self, name: str, reviewed: bool) -> str:
        """The lock given up was a Complete with this outcome (and, `reviewed`, chosen for review)."""
        q, r, review, audit, queue_name, key, here = (
            self.q,
            self.r,
            self.q.config.review,
            self.audit,
            self.queue_name,
            self.key,
            self.here,
        )
        unchanged, assigned, kept, values, stamped = self.unchanged, self.assigned, self.kept, self.values, self.stamped
        ev = workflow_sql.event
        # A Complete, and a reviewing queue's verdict given as one: the same columns of the row.
        finishes = ("complete", "review_accept", "review_send_back")
        chosen = (
            ""
            if review is None
            else pg_row_check._review_opened(r, q, review, self.reviews, queue_name, key, self.at, r.literal(name))
        )
        return f"""
      IF {unchanged(kept(*finishes, outcome=name, reviewed=reviewed))}
          AND {assigned(values(*finishes, outcome=name, reviewed=reviewed))} AND {stamped(*finishes)} THEN
        to_review := {"true" if reviewed else "false"};
        UPDATE {audit} a SET event = {ev("complete")}, outcome = {r.literal(name)},
            detail = CASE WHEN changed <> '{{}}' THEN json_build_object('changes', changed)::text END
          WHERE a.id = (SELECT max(a.id) FROM {audit} a WHERE a.queue = {queue_name} AND a.item_key = {key}
                        AND {here} AND a.actor = login AND a.event = {ev("release")});
        {pg_names.note(pg_names.AUDITED_SETTING, queue_name, key, ev("complete"), "login", r.literal(name))}{chosen}
        RETURN true;
      END IF;"""

    def taken(self) -> str:
        """The row in scope; a claim's or a take's values with the lock taken here; a Save under the lock held."""
        q, r, shape, old, held, holds, rules = self.q, self.r, self.shape, self.old, self.held, self.holds, self.rules
        unchanged, assigned, kept, values, stamped = self.unchanged, self.assigned, self.kept, self.values, self.stamped
        crumb, record, edits = self.crumb, self.record, self.edits
        # The row rules (db/rowrules.py): the queue's scope, which every one rendered here holds to, and a
        # claim's (CLAIMABLE: waiting, or in the state a claim left it in, the lock being the lock row's).
        scope_old = r.sql(
            sa.and_(sa.true(), *rowrules.scope(q, *workflow.rendered_in(workflow.Rendering.PG_LOCK_TABLE))), old
        )
        claimable = rowrules.before_all(q, "claim", "pick", user=sa.literal_column("login"))
        waits_old = r.sql(sa.and_(sa.true(), *claimable.state_for("stale")), old)
        take_set_up = "true" if q.on_escalate and q.on_reopen else "false"  # Check.ON_ESCALATE_SET, ON_REOPEN_SET
        took = crumb_of("claim", "pick")
        ev, branch = workflow_sql.event, workflow.branch_mark
        return f"""  IF NOT ({unchanged([q.key])} AND {scope_old}) THEN
    RETURN false;
  END IF;
  IF {crumb(took)} AND {waits_old} AND {unchanged(kept("claim", "pick"))}
      AND ({assigned(values("claim"))} OR {unchanged(pg_row_rules.columns_of(q, values("claim")))})
      AND {stamped("claim", "pick")} THEN
    RETURN true;  -- the claim's values (and claim id), the lock taken (and recorded) in this transaction
  END IF;
  {branch("take")}
  IF {take_set_up} AND {crumb(crumb_of("take"))} AND {rules.who("take")} AND {pg_row_rules.row_rule(r, q, "take")}
      AND {unchanged(kept("take"))} AND {stamped("take")}
      AND ({assigned(values("take"))} OR {unchanged(pg_row_rules.columns_of(q, values("take")))}) THEN
    RETURN true;  -- a take's values (on_reopen's, on_claim's) and claim id, its lock taken (and recorded) here
  END IF;
  {branch("save")}
  IF {rules.lock("save")} AND {r.sql(row_held(q, sa.literal_column("login")), old)} AND {unchanged(kept("save"))} THEN
    SELECT {r.sql(q.backend.token_digest(shape.token_column()), held)} INTO held_token {holds};
    changed := {edits};
    {record(ev("save"), "login", "held_token", changes="changed")}
    RETURN true;
  END IF;
"""

    def given_up(self) -> str:
        """The lock given up here: a release (or defer), an escalate, or a Complete with one of the outcomes."""
        q, audit, queue_name, key, here = self.q, self.audit, self.queue_name, self.key, self.here
        unchanged, assigned, kept, values, stamped = self.unchanged, self.assigned, self.kept, self.values, self.stamped
        crumb, edits = self.crumb, self.edits
        review = q.config.review
        gave = crumb_of(*given_up(True))
        # Every column the release (or defer) does not write stays as it was: no edits with it.
        releases = " OR ".join(
            f"({unchanged(kept('release', 'defer', reason=reason))} AND "
            f"{assigned(values('release', 'defer', reason=reason))} AND {stamped('release', 'defer')})"
            for reason in (None, *q.reason_writes)
        )
        # An escalate: the lock given up, on_escalate's values and nothing else (Check.ON_ESCALATE_SET: none
        # where the queue has no on_escalate); recorded as one where the lock row's release was.
        escalates = (
            f"{unchanged(kept('escalate'))} AND {assigned(values('escalate'))} AND {stamped('escalate')}"
            if q.on_escalate
            else "false"
        )
        outcome_checks = "".join(
            self.completes(name, reviewed)
            for name in q.outcomes
            for reviewed in ((False, True) if review is not None and name in review.outcomes else (False,))
        )
        ev, branch = workflow_sql.event, workflow.branch_mark
        return f"""  IF {crumb(gave)} THEN
    changed := {edits};
    IF {releases} THEN
      RETURN true;  -- its row was written when the lock went (a release edits nothing)
    END IF;
    {branch("escalate")} {workflow_sql.check_mark(workflow.Check.ON_ESCALATE_SET)}
    IF {escalates} THEN
      UPDATE {audit} a SET event = {ev("escalate")}, detail = NULL
        WHERE a.id = (SELECT max(a.id) FROM {audit} a WHERE a.queue = {queue_name} AND a.item_key = {key}
                      AND {here} AND a.actor = login AND a.event = {ev("release")});
      {pg_names.note(pg_names.AUDITED_SETTING, queue_name, key, ev("escalate"), "login", "NULL")}
      RETURN true;
    END IF;{outcome_checks}
  END IF;
"""

    def others(self) -> str:
        """A lock freed (a sweep, a force-release) or reassigned, and a supervisor's move or reopen."""
        q, r, rules, free, record = self.q, self.r, self.rules, self.free, self.record
        unchanged, assigned, kept, values, stamped = self.unchanged, self.assigned, self.kept, self.values, self.stamped
        crumb = self.crumb
        freed, handed = crumb_of("expire", "force_release"), crumb_of("reassign")
        ev, branch = workflow_sql.event, workflow.branch_mark
        reopen = (
            ""
            if not q.on_reopen
            else f"""
    {branch("reopen")} {workflow_sql.check_mark(workflow.Check.ON_REOPEN_SET)}
    IF {rules.who("reopen")} AND {free("reopen")}
        AND {pg_row_rules.row_rule(r, q, "reopen")} AND {pg_row_rules.row_after(r, q, "reopen")}
        AND {unchanged(kept("reopen"))} AND {assigned(values("reopen"))} THEN
      {record(ev("reopen"), "NULL", "NULL")}
      RETURN true;
    END IF;"""
        )
        return f"""  IF {crumb(freed)} AND {unchanged(kept("expire", "force_release"))} AND {assigned(values("expire"))}
      AND {stamped("expire", "force_release")} THEN
    RETURN true;
  END IF;
  IF {crumb(handed)} AND {unchanged(kept("reassign"))} AND {stamped("reassign")} THEN
    RETURN true;  -- shape 6: the claim id of the lock a supervisor reassigned (recorded with its lock row)
  END IF;
  {branch("move")}
  IF {rules.who("move")} AND {free("move")}
      AND {pg_row_rules.row_rule(r, q, "move")} AND {pg_row_rules.row_after(r, q, "move")} THEN
    changed := {pg_row_rules.changes_of(r, q, pg_row_rules.minus(pg_names.checked_columns(q), kept("move")))};
    {record(ev("move"), "NULL", "NULL", changes="changed")}
    RETURN true;
  END IF;{reopen}
  RETURN false;
"""


def item_check(conn: sa.Connection, q: mapping.BoundQueue, schema: str) -> str:
    """wb_QUEUE_check(o, n) for a lock-table queue: is this update of the queue row one that goes with
    a lock this login took, holds or gave up in this transaction, or a supervisor's move or reopen?"""
    check = _ItemCheck(conn, q, schema)
    prep = check.prep
    head = f"""
DECLARE
  login text := session_user;
  noted text;
  held_token text;
  changed jsonb;
  to_review boolean := false;
BEGIN
  {pg_names.TRIGGER_ONLY}
"""
    body = head + check.taken() + check.given_up() + check.others() + "END"
    function = pg_names.qualified(prep, schema, pg_names.check_function_name(q.name))
    row_type = prep.format_table(q.table)
    rows = pg_names.CHECK_ROWS
    return (
        f"CREATE OR REPLACE FUNCTION {function}({rows[0]} {row_type}, {rows[1]} {row_type}) RETURNS boolean "
        f"LANGUAGE plpgsql SECURITY DEFINER SET search_path = {pg_names.search_path(prep, q, schema)} "
        f"AS $wb${body}\n$wb$"
    )


def _lock_rows_body(conn: sa.Connection, schema: str, locks: str, queues: list[str]) -> str:
    """The lock table's trigger function: a write of a lock row of one of `queues` asks that queue's check."""
    prep = conn.dialect.identifier_preparer
    checks = "".join(
        f"  {'IF' if i == 0 else 'ELSIF'} queue = {pg_names.Renderer.literal_of(conn, queue)} THEN\n"
        f"    IF {pg_names.qualified(prep, schema, lock_check_name(queue))}(TG_OP, OLD, NEW) THEN\n"
        f"      RETURN NULL;\n    END IF;\n"
        for i, queue in enumerate(dict.fromkeys(queues))
    )
    body = f"""
DECLARE
  queue text;
  target {locks}%ROWTYPE;
BEGIN
  IF TG_OP = 'DELETE' THEN
    queue := OLD.queue;
    target := OLD;
  ELSE
    queue := NEW.queue;
    target := NEW;
  END IF;
{checks}  ELSE
    RETURN NULL;  -- a queue whose protocol the database does not enforce
  END IF;
  RAISE EXCEPTION 'workbench: % may not make this change to the lock of % item %', session_user, queue, target.item_key
    USING ERRCODE = '42501',
          HINT = 'locks change only through workbench''s operations (claim, extend, release, complete; '
                 'force-release and reassign for supervisors), each with its audit row';
END"""
    return body


def _held_body(conn: sa.Connection, schema: str, queues: list[str]) -> str:
    """The lock table's trigger function at commit: each lock row still held asks its queue's check again."""
    prep = conn.dialect.identifier_preparer
    # At commit, each lock row an operator's login inserted is asked of its queue's lock check once more
    # (op AT_COMMIT): the item it still holds is in the queue's work (a take's lock row with its values).
    held_checks = "".join(
        f"  {'IF' if i == 0 else 'ELSIF'} NEW.queue = {pg_names.Renderer.literal_of(conn, queue)} THEN\n"
        f"    IF NOT {pg_names.qualified(prep, schema, lock_check_name(queue))}('{AT_COMMIT}', NEW, NEW) THEN\n"
        "      RAISE EXCEPTION 'workbench: % may not keep a lock of % item % that is not in the queue''s work', "
        "session_user, NEW.queue, NEW.item_key\n"
        "        USING ERRCODE = '42501',\n"
        "              HINT = 'a lock is taken on an item it puts to work: a take writes on_reopen''s values '\n"
        "                     'with its lock row, in the same transaction, as workbench does';\n"
        "    END IF;\n"
        for i, queue in enumerate(dict.fromkeys(queues))
    )
    held_body = f"""
BEGIN
{held_checks}  END IF;
  RETURN NULL;
END"""
    return held_body


def locks_trigger(conn: sa.Connection, q: mapping.BoundQueue, schema: str, queues: list[str]) -> list[str]:
    """The trigger on the lock table: a write of a lock row of one of `queues` (the enforced queues
    whose locks it keeps) must be one its queue's check admits, or the statement fails; other queues'
    rows are left alone."""
    shape = lock_shape(q)
    prep = conn.dialect.identifier_preparer
    locks = prep.format_table(shape.locks)
    name = pg_names.object_name(shape.locks.name, "protocol")
    trigger, function = prep.quote(name), pg_names.qualified(prep, schema, name)
    at_commit = pg_names.object_name(shape.locks.name, "held")
    commit_trigger, commit_function = prep.quote(at_commit), pg_names.qualified(prep, schema, at_commit)
    if not queues:
        return [
            f"DROP TRIGGER IF EXISTS {trigger} ON {locks}",
            f"DROP FUNCTION IF EXISTS {function}()",
            f"DROP TRIGGER IF EXISTS {commit_trigger} ON {locks}",
            f"DROP FUNCTION IF EXISTS {commit_function}()",
        ]
    body = _lock_rows_body(conn, schema, locks, queues)
    held_body = _held_body(conn, schema, queues)
    checked = (
        f"pg_has_role(current_user, '{pg_names.OPERATOR_ROLE}', 'USAGE') "
        f"AND NOT pg_has_role(current_user, {pg_names.owner_oid(conn, shape.locks)}::oid, 'MEMBER')"
    )
    return [
        (
            f"CREATE OR REPLACE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER "
            f"SET search_path = {pg_names.search_path(prep, q, schema)} AS $wb${body}\n$wb$"
        ),
        pg_names.private(f"{function}()"),
        f"DROP TRIGGER IF EXISTS {trigger} ON {locks}",
        # AFTER: a claim's INSERT … ON CONFLICT DO NOTHING that met a lock row fires no AFTER trigger,
        # where a BEFORE trigger would record a claim that did not happen.
        (
            f"CREATE TRIGGER {trigger} AFTER INSERT OR UPDATE OR DELETE ON {locks} FOR EACH ROW WHEN ({checked}) "
            f"EXECUTE FUNCTION {function}()"
        ),
        (
            f"CREATE OR REPLACE FUNCTION {commit_function}() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER "
            f"SET search_path = {pg_names.search_path(prep, q, schema)} AS $wb${held_body}\n$wb$"
        ),
        pg_names.private(f"{commit_function}()"),
        f"DROP TRIGGER IF EXISTS {commit_trigger} ON {locks}",
        # Deferred: workbench's take inserts the lock row first, then writes the item's values.
        (
            f"CREATE CONSTRAINT TRIGGER {commit_trigger} AFTER INSERT ON {locks} DEFERRABLE INITIALLY DEFERRED "
            f"FOR EACH ROW WHEN ({checked}) EXECUTE FUNCTION {commit_function}()"
        ),
    ]


def queue_trigger(
    conn: sa.Connection, q: mapping.BoundQueue, schema: str, reviewed: model.QueueConfig | None = None
) -> list[str]:
    """What `grants` installs for a lock-table queue: its checks of the queue row and of its lock rows,
    the queue table's trigger and the lock table's, each asking every enforced queue they serve."""
    locks = pg_names.table_oid(conn, lock_shape(q).locks)
    prep = conn.dialect.identifier_preparer
    grant = (
        f"GRANT SELECT, INSERT, UPDATE, DELETE ON {prep.format_table(lock_shape(q).locks)} "
        f"TO {prep.quote(pg_names.OPERATOR_ROLE)}"
    )  # revoked in drop() with the last queue using it
    row_types = {"queue": prep.format_table(q.table), "locks": prep.format_table(lock_shape(q).locks)}
    item, lock = (
        pg_names.qualified(prep, schema, name)
        for name in (pg_names.check_function_name(q.name), lock_check_name(q.name))
    )
    return [
        grant,
        item_check(conn, q, schema),
        pg_names.private(f"{item}({row_types['queue']}, {row_types['queue']})"),
        lock_check(conn, q, schema, reviewed),
        pg_names.private(f"{lock}(text, {row_types['locks']}, {row_types['locks']})"),
        *pg_triggers.table_trigger(conn, q, schema, [*pg_triggers.enforced_on(conn, q, schema), q.name]),
        *locks_trigger(conn, q, schema, [*pg_triggers.enforced_where(conn, schema, "locks", locks, q.name), q.name]),
        pg_triggers.enforced_row(conn, q, schema, reviewed, locks),
    ]


def drop(conn: sa.Connection, q: mapping.BoundQueue, schema: str) -> list[str]:
    """What undoes queue_trigger()'s lock-table part; the lock table's trigger stays for its other queues."""
    prep = conn.dialect.identifier_preparer
    others = pg_triggers.enforced_where(conn, schema, "locks", pg_names.table_oid(conn, lock_shape(q).locks), q.name)
    row_type = prep.format_table(lock_shape(q).locks)
    function = pg_names.qualified(prep, schema, lock_check_name(q.name))
    statements = [
        *locks_trigger(conn, q, schema, others),
        f"DROP FUNCTION IF EXISTS {function}(text, {row_type}, {row_type})",
    ]
    if not others:  # the lock table's grants go with the last enforced queue whose locks it keeps
        statements.append(f"REVOKE ALL ON {row_type} FROM {prep.quote(pg_names.OPERATOR_ROLE)}")
    return statements
