"""The queue protocol enforced by PostgreSQL itself, locks in the row (the in-row check by transition):
a trigger lets an operator's login change a queue row only the way workbench does, and writes the audit
row of every change itself.

`workbench grants --apply` installs, beside the roles, column grants and row-level security of
pg_grants.py:

- a BEFORE UPDATE trigger on the queue table. For a login in workbench_operator it accepts only
  the transitions workbench's own statements make (claim a free or expired row that waits, under
  the login's own name with a fresh lock inside the queue's lock limits; save or extend the login's
  own live lock; release or complete it, writing exactly the configured on_release or outcome
  values; undo the login's own Complete within undo_within; return an expired lock to the pool),
  plus for workbench_supervisor force-release, reassign, reopen and move waiting items.
  Anything else fails with SQLSTATE 42501 and changes nothing. For each change it accepts it
  writes the audit row, with session_user as the actor, on the database clock.
- a BEFORE INSERT trigger on the audit table: an operator's or supervisor's own audit row (the
  one workbench's statement writes) is dropped when the database wrote it already, settles what
  only the client knows (a release's reason, save or extend, which of two equal outcomes) of a
  row the database wrote in the same transaction, and is refused otherwise (a forged row).

- the two busiest writes as trusted functions, wb_QUEUE_next() and wb_QUEUE_complete(key, token,
  outcome): workbench's own one-statement claim and Complete, compiled with session_user as the
  claimer and run as the owner, so that they pay neither the trigger (its WHEN clause tests
  current_user) nor row-level security. The engine calls them when they exist.

The functions are SECURITY DEFINER, owned by the login that applies the grants (the table's owner,
who can change the table anyway), with a fixed search_path. Logins that are not workbench
operators (the application that feeds the queue) and the table's owner are not checked: they keep
what their grants give them. Why a trigger for the rest and not only functions the client calls:
every other write keeps workbench's own statement with and without grants, and a hand-written
statement meets the same checks and is recorded the same way as workbench's."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from workbench.config import model
from workbench.core import workflow
from workbench.db import clock, mapping, rowrules, tables, workflow_sql
from workbench.db import reviews as reviews_mod
from workbench.db.rules.pg_names import (
    CHECK_ROWS,
    FIRST_EVENT,
    OWN_LOCK,
    REVIEWED_SETTING,
    SUPERVISOR_ROLE,
    TRIGGER_ONLY,
    Renderer,
    check_function_name,
    checked_columns,
    escalated_to,
    note,
    own_table,
    private,
    qualified,
    recorder,
    serves,
    wb_audit_table,
)
from workbench.db.rules.pg_row_rules import (
    changes_of,
    kept,
    lock_written,
    minus,
    row_after,
    row_rule,
    values_of,
    written_by,
)
from workbench.db.rules.pg_triggers import enforced_on, enforced_row, table_trigger, taken_here


def queue_trigger(
    conn: sa.Connection, q: mapping.BoundQueue, schema: str, reviewed: model.QueueConfig | None = None
) -> list[str]:
    """`q`'s check of an update of its table by an operator or supervisor (a function of the old and
    the new row: true, with its audit rows written, when it is one of `q`'s operations), and the
    table's trigger, which admits a change that one of the table's enforced queues admits."""
    row_type = conn.dialect.identifier_preparer.format_table(q.table)
    check = qualified(conn.dialect.identifier_preparer, schema, check_function_name(q.name))
    return [
        queue_check(conn, q, schema, reviewed),
        private(f"{check}({row_type}, {row_type})"),
        *table_trigger(conn, q, schema, [*enforced_on(conn, q, schema), q.name]),
        enforced_row(conn, q, schema, reviewed),
    ]


def queue_check(conn: sa.Connection, q: mapping.BoundQueue, schema: str, reviewed: model.QueueConfig | None) -> str:
    c = _Check(conn, q, schema, reviewed)
    body = f"""
DECLARE
  login text := session_user;
  maybe text[] := ARRAY[]::text[];
  noted text;
  undone text;  -- the outcome of the Complete an undo takes back
  to_review boolean := false;
  changed jsonb;
BEGIN
  {TRIGGER_ONLY}
  -- The table's trigger calls this for operators' and supervisors' changes only (its WHEN clause).
  -- The most frequent changes (a Complete, a claim of a free row) are tested first.
  IF {c.r.unchanged([q.key])} AND {c.scope} THEN
    IF {c.rules.lock(*OWN_LOCK)} THEN
      -- This login's own live lock (a held row is in its queue's todo, or on_claim's state): release,
      -- complete, save, extend.
      IF {lock_written(c.r, q, "release", "defer", "escalate", *c.completes)} THEN{c.given_back()}
      ELSIF {c.r.unchanged(kept(q, "save"))} THEN{c.save()}
      ELSIF {lock_written(c.r, q, "extend")} AND {c.rules.checked("extend")} AND {c.r.unchanged(kept(q, "extend"))} THEN
        {workflow.branch_mark("extend")}
        -- Extend moves the expiry on (never back), the same lock, and writes nothing else.
        {c.record(c.ev("extend"), "login", c.token_old)}
        RETURN true;
      END IF;
    ELSIF {c.rules.lock("claim", "pick")} THEN{c.claim()}
    END IF;{c.undo()}{c.take()}{c.swept()}{c.supervised()}{c.move()}{c.reopen()}
  END IF;
  RETURN false;  -- not one of this queue's operations
END"""
    function = qualified(c.prep, schema, check_function_name(q.name))
    row_type = c.prep.format_table(q.table)
    return (
        f"CREATE OR REPLACE FUNCTION {function}({CHECK_ROWS[0]} {row_type}, {CHECK_ROWS[1]} {row_type}) "
        f"RETURNS boolean LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp "
        f"AS $wb${body}\n$wb$"
    )


class _Check:
    """The parts of an in-row queue's check function (queue_check), one method per group of branches;
    what a branch admits comes from the table (Rules, kept, values_of, lock_written, the row rules)."""

    def __init__(
        self, conn: sa.Connection, q: mapping.BoundQueue, schema: str, reviewed: model.QueueConfig | None
    ) -> None:
        self.conn, self.q, self.schema, self.reviewed = conn, q, schema, reviewed
        self.r = r = Renderer(conn.dialect, q, rows=CHECK_ROWS)
        shape, self.prep = q.shape, r.prep
        old, new = r.old, r.new
        now = q.now()
        self.user_old, self.user_new = r.col(old, q.user), r.col(new, q.user)
        expiry_new = r.sql(q.expiry(), new)
        # Check.WITHIN_LIMITS: the new lock's time and expiry within lock_duration (and max_lock_duration).
        self.limit = (
            f"{r.col(new, q.time)} <= {r.sql(now)} AND "
            f"{expiry_new} <= {r.sql(clock.add_seconds(now, shape.seconds(q.config.lock_seconds)))}"
        )
        if q.config.max_lock_seconds and not shape.extend_moves_time:
            self.limit += (
                f" AND {expiry_new} <= "
                f"{r.sql(clock.add_seconds(q.time, shape.seconds(q.config.max_lock_seconds)), new)}"
            )
        self.free_old = r.sql(q.free(), old)
        stale_old, live_old = r.sql(q.stale(now), old), r.sql(q.live(now), old)
        # The queue's scope, which every row rule of the transitions rendered here holds to (db/rowrules.py).
        self.scope = r.sql(
            sa.and_(sa.true(), *rowrules.scope(q, *workflow.rendered_in(workflow.Rendering.PG_TRIGGER))), old
        )
        # A reviewing queue's Complete is the reviewer's verdict (the review guard records it).
        completes = ("complete",) if reviewed is None else ("complete", "review_accept", "review_send_back")
        self.completes = completes
        self.queue_name = r.literal(q.name)
        self.audit = self.prep.format_table(wb_audit_table(schema))
        self.key = f"CAST({r.col(new, q.key)} AS text)"
        self.at = r.sql(clock.db_now())
        # What the trail keeps of the tokens (NULL without a token column).
        self.token_old, self.token_new = (r.sql(q.backend.token_digest(shape.trail_token()), row) for row in (old, new))
        self.record = recorder(self.audit, self.queue_name, self.key, self.at)
        self.ev = workflow_sql.event
        self.reviews = own_table(schema, tables.REVIEWS_TABLE)
        self.reviews_table = self.prep.format_table(self.reviews)
        # A reviewing queue never serves an item to the one whose work it is: the new holder (the login,
        # for a claim; the one a supervisor reassigns it to) is not its doer.
        not_own = (
            "true"
            if reviewed is None
            else (
                f"NOT EXISTS (SELECT 1 FROM {self.reviews_table} rv WHERE rv.queue = {self.queue_name} "
                f"AND rv.item_key = {self.key} AND rv.doer = {self.user_new} AND rv.verdict IS NULL)"
            )
        )
        # A held row (the row rule HELD, db/rowrules.py): in `todo`, or in the state on_claim put it in (a
        # status-driven queue's Active is not in its todo), within the queue's scope: the lock is this
        # queue's, as the engine's fence decides it (BoundQueue.held_here, one declaration for both).
        held_old = row_rule(r, q, *OWN_LOCK, "expire", "force_release", "reassign")
        supervisor = f"pg_has_role(session_user, '{SUPERVISOR_ROLE}', 'USAGE')"
        here = f"{held_old} AND {taken_here(conn, q, schema, self.queue_name, self.key)}"
        # The table's precondition and actor kinds (core/workflow.py) as this function writes them: each on
        # the row before; what the row's lock is after is the transition's Write.LOCK_* (lock_written), or,
        # where it writes none, the lock as it was (kept).
        self.rules = workflow_sql.Rules(
            {
                workflow.LockRule.OWN_LIVE_HERE: f"{self.user_old} = login AND {live_old} AND {here}",
                workflow.LockRule.FREE_OR_STALE: f"({self.free_old} OR {stale_old})",
                workflow.LockRule.STALE_HERE: f"{self.user_old} IS NOT NULL AND {stale_old} AND {here}",
                workflow.LockRule.HELD_HERE: f"{self.user_old} IS NOT NULL AND {here}",
                workflow.LockRule.FREE: self.free_old,
                workflow.LockRule.ANY: "true",
            },
            {
                workflow.Actor.OPERATOR: "true",
                workflow.Actor.CLOCK: "true",
                workflow.Actor.SUPERVISOR: supervisor,
                workflow.Actor.ESCALATED_TO: escalated_to(conn, q, schema, "login", supervisor),
            },
            {
                workflow.Check.WITHIN_LIMITS: self.limit,
                workflow.Check.SERVED: serves(conn, q, schema, "login"),
                workflow.Check.NOT_DOER: not_own,
                workflow.Check.OTHER_USER: f"{self.user_new} IS NOT NULL AND {self.user_new} <> {self.user_old}",
            },
        )

    def given_back(self) -> str:
        """Release, defer, escalate and Complete: the lock cleared, each with its own values and nothing else."""
        r, q, mark = self.r, self.q, workflow.branch_mark
        completes = self.completes
        # A release writes on_release, and perhaps a configured reason's values too; every column the
        # release (or defer) does not write (core/workflow.py) stays as it was: no edits with it.
        releases = " OR ".join(
            f"({r.unchanged(kept(q, 'release', 'defer', reason=reason))} AND "
            f"{r.assigned(values_of(q, 'release', 'defer', reason=reason))})"
            for reason in (None, *q.reason_writes)
        )
        review = q.config.review
        outcome_checks = "".join(
            f"        IF {r.unchanged(kept(q, *completes, outcome=name))}"
            f" AND {r.assigned(values_of(q, *completes, outcome=name))} THEN\n"
            f"          maybe := maybe || ({workflow_sql.prefix('complete')} || {r.literal(name)});\n        END IF;\n"
            for name in q.outcomes
        )
        if review is not None:  # four eyes: a Complete chosen for review writes the review's values too
            outcome_checks += "".join(
                f"        IF {r.unchanged(kept(q, *completes, outcome=name, reviewed=True))}\n"
                f"            AND {r.assigned(values_of(q, *completes, outcome=name, reviewed=True))} THEN\n"
                f"          maybe := maybe || ({workflow_sql.prefix('complete')} || {r.literal(name)});\n"
                "          to_review := true;\n"
                f"        END IF;\n"
                for name in q.outcomes
                if name in review.outcomes
            )
        # Escalate hands the item to a supervisor: the lock cleared, on_escalate's values, nothing else
        # (Check.ON_ESCALATE_SET: a queue without on_escalate admits none).
        escalates = (
            f"{r.unchanged(kept(q, 'escalate'))} AND {r.assigned(values_of(q, 'escalate'))}"
            if q.on_escalate
            else "false"
        )
        first_outcome = "NULLIF(split_part(maybe[1], ':', 2), '')"
        chosen = (
            ""
            if review is None
            else _review_opened(r, q, review, self.reviews, self.queue_name, self.key, self.at, first_outcome)
        )
        record = self.record(
            FIRST_EVENT, "login", self.token_old, outcome=first_outcome, maybe="maybe", changes="changed"
        )
        return f"""
        {mark("release", "defer")}
        IF {releases} THEN
          maybe := {workflow_sql.may_be("release", "defer")};  -- a defer gives the item back as a release does
        END IF;
        {mark("escalate")} {workflow_sql.check_mark(workflow.Check.ON_ESCALATE_SET)}
        IF {escalates} THEN
          maybe := maybe || {workflow_sql.may_be("escalate")};
        END IF;
        {mark(*completes)}
{outcome_checks}        IF cardinality(maybe) > 0 THEN
          changed := {changes_of(r, q)};
          {record}{chosen}
          RETURN true;
        END IF;"""

    def save(self) -> str:
        """Save: the edits, the lock as it was; told from an extend that moved nothing by an edit, a change
        of a column save writes and extend does not (core/workflow.py: EDITS), and by the extend's own
        lock write: under a cap an extend moves the lock strictly on, so a lock left as it was is none."""
        r, q = self.r, self.q
        telling = [c for c in checked_columns(q) if c.name in written_by(q, "save") - written_by(q, "extend")]
        edited = " OR ".join(f"NOT ({r.unchanged([c])})" for c in telling) or "false"
        return f"""
        {workflow.branch_mark("save")}
        -- Save writes the edits and leaves the lock as it was; nothing changed at all may be an
        -- extend that did not move the expiry, where an extend may leave it so (no max_lock_duration;
        -- the client settles which).
        maybe := CASE WHEN NOT ({edited}) AND {lock_written(r, q, "extend")} AND {self.rules.checked("extend")}
                      THEN {workflow_sql.may_be("extend", "save")}
                      ELSE {workflow_sql.may_be("save")} END;
        changed := {changes_of(r, q)};
        {self.record(FIRST_EVENT, "login", self.token_old, maybe="maybe", changes="changed")}
        RETURN true;"""

    def claim(self) -> str:
        """Claim: a free or expired row that waits, under a fresh lock of this login's inside the limits."""
        r, q = self.r, self.q
        # CLAIMABLE: waiting, or an expired lock in on_claim's state, as the claim serves it.
        claimable = row_rule(r, q, "claim", "pick", user=sa.literal_column("login"))
        return f"""
      {workflow.branch_mark("claim", "pick", "expire")}
      IF {claimable} AND {lock_written(r, q, "claim", "pick")} AND {r.unchanged(kept(q, "claim", "pick"))}
          AND {r.assigned(values_of(q, "claim"))} AND {self.rules.checked("claim")} THEN
        IF {self.user_old} IS NOT NULL THEN
          {self.record(self.ev("expire"), self.user_old, self.token_old)}
        END IF;
        {self.record(self.ev("claim"), "login", self.token_new)}
        RETURN true;
      END IF;"""

    def undo(self) -> str:
        """The trigger's undo: this login takes back its own Complete, the item's last event, within
        undo_within (database clock), while the row still holds that outcome's values (or, chosen for
        review, the review's after them: its review is withdrawn); the row gets on_reopen and on_claim
        and a fresh lock of this login's, as workbench's own undo writes. Its lock rule (FREE: nobody holds
        the row before) and checks (WITHIN_LIMITS: the fresh lock's) are the table's, as every branch's."""
        if not self.q.on_reopen:
            return ""
        r, q, rules, key = self.r, self.q, self.rules, self.key
        old = r.old
        review = q.config.review
        login: sa.ColumnElement[Any] = sa.literal_column("login")
        # The item as the trail keeps it (text), of the old row: the trail's subquery does not join the queue's table.
        item = sa.literal_column(f"CAST({r.col(old, q.key)} AS text)", sa.Text())

        def undone(name: str) -> str:
            # Per outcome: the trail rule (LAST_OWN_COMPLETE within undo_within, db/rowrules.py) says the last
            # event is this login's Complete with this outcome, and the row rule (COMPLETED_BY_CALLER) that
            # the row still holds its values (or, chosen for review, the review's after them).
            history = rowrules.trail(q, "undo", wb_audit_table(self.schema), item=item, user=login, outcome=name)
            ways = (False, True) if review is not None and name in review.outcomes else (False,)
            holds = sa.or_(
                *(
                    sa.and_(sa.true(), *rowrules.before(q, "undo", user=login, outcome=name, reviewed=reviewed).state)
                    for reviewed in ways
                )
            )
            return r.sql(sa.and_(sa.true(), *(() if history is None else (history,)), holds), old)

        which = "".join(f" WHEN {undone(name)} THEN {r.literal(name)}" for name in q.outcomes)
        # The review a Complete chose is no longer wanted (as workbench's undo withdraws it; by hand too,
        # or it would count as one of the operator's first items).
        withdraw = (
            ""
            if review is None
            else (
                f"\n          UPDATE {self.reviews_table} SET verdict = '{reviews_mod.SUPERSEDED}' WHERE queue = "
                f"{r.literal(review.by)} AND item_key = {key} AND verdict IS NULL;"
            )
        )
        # UNDO_WINDOW is the trail clause's window, ON_REOPEN_SET the branch's presence: marked here.
        checks = {c: workflow_sql.check_mark(c) for c in workflow.TRANSITIONS["undo"].checks}
        window = checks.get(workflow.Check.UNDO_WINDOW, "")
        return f"""
      {workflow.branch_mark("undo")} {checks[workflow.Check.ON_REOPEN_SET]}
      IF {rules.lock("undo")} AND {row_rule(r, q, "undo")} AND {lock_written(r, q, "undo")}
          AND {rules.checked("undo")}
          AND {r.unchanged(kept(q, "undo"))} AND {r.assigned(values_of(q, "undo"))} THEN
        {window}
        undone := {f"CASE{which} END" if which else "NULL"};
        IF undone IS NOT NULL THEN
          {self.record(workflow_sql.event("undo"), "login", "NULL", outcome="undone")}
          {self.record(workflow_sql.also("undo"), "login", self.token_new)}{withdraw}
          RETURN true;
        END IF;
      END IF;"""

    def take(self) -> str:
        """A supervisor's take: an escalated row nobody holds (out of todo, on_escalate's values) back to work
        under a fresh lock of this login's, within the limits, writing exactly on_reopen's and on_claim's
        values, recorded as this login's claim."""
        r, q, rules = self.r, self.q, self.rules
        # (Check.ON_ESCALATE_SET, ON_REOPEN_SET: a queue without either admits none.)
        set_up = "true" if q.on_escalate and q.on_reopen else "false"
        checks = " ".join(
            workflow_sql.check_mark(c) for c in (workflow.Check.ON_ESCALATE_SET, workflow.Check.ON_REOPEN_SET)
        )
        # The row rule ESCALATED (db/rowrules.py): out of todo, holding on_escalate's values.
        return f"""
    {workflow.branch_mark("take")} {checks}
    IF {set_up} AND {rules.who("take")} AND {rules.lock("take")} AND {row_rule(r, q, "take")}
        AND {lock_written(r, q, "take")} AND {rules.checked("take")} AND {r.unchanged(kept(q, "take"))}
        AND {r.assigned(values_of(q, "take"))} THEN
      {self.record(self.ev("take"), "login", self.token_new)}
      RETURN true;
    END IF;"""

    def swept(self) -> str:
        """Anyone may return an expired lock to the pool (the sweep)."""
        r, q, rules = self.r, self.q, self.rules
        return f"""
    -- Anyone may return an expired lock to the pool (the sweep).
    {workflow.branch_mark("expire")}
    IF {rules.lock("expire")} AND {rules.who("expire")} AND {lock_written(r, q, "expire", "force_release")}
        AND {self.returned()} THEN
      maybe := CASE WHEN {rules.who("force_release")}
                    THEN {workflow_sql.may_be("expire", "force_release")} ELSE {workflow_sql.may_be("expire")} END;
      {self.record(FIRST_EVENT, self.user_old, self.token_old, maybe="maybe")}
      RETURN true;
    END IF;"""

    def returned(self) -> str:
        """SQL: the row holds on_release's values, and nothing else changed (expire, force-release)."""
        r, q = self.r, self.q
        return f"{r.unchanged(kept(q, 'expire', 'force_release'))} AND {r.assigned(values_of(q, 'expire'))}"

    def supervised(self) -> str:
        """A supervisor's force-release (back to the pool) and reassign (a fresh lock of another user's)."""
        r, q, rules = self.r, self.q, self.rules
        return f"""
    {workflow.branch_mark("force_release", "reassign")}
    IF {rules.lock("force_release", "reassign")} AND {rules.who("force_release", "reassign")} THEN
      -- Force-release: back to the pool with the on_release values.
      IF {lock_written(r, q, "force_release")} AND {self.returned()} THEN
        {self.record(self.ev("force_release"), self.user_old, self.token_old)}
        RETURN true;
      END IF;
      -- Reassign: to another user, with a fresh lock inside the limits.
      IF {rules.checked("reassign")} AND {lock_written(r, q, "reassign")}
          AND {r.unchanged(kept(q, "reassign"))} THEN
        {self.record(self.ev("reassign"), self.user_old, self.token_old)}
        {self.record(workflow_sql.also("reassign"), self.user_new, self.token_new)}
        RETURN true;
      END IF;
    END IF;"""

    def move(self) -> str:
        """A supervisor's move: a waiting item nobody holds gets other values (another category, tier,
        priority), its lock untouched, and still waits (here, or out of this queue's scope for another
        queue); the client settles the audit row with the reason and the values."""
        r, q, rules = self.r, self.q, self.rules
        return f"""
    {workflow.branch_mark("move")}
    IF {rules.lock("move")} AND {row_rule(r, q, "move")} AND {row_after(r, q, "move")}
        AND {r.unchanged(kept(q, "move"))} AND {rules.who("move")} THEN
      changed := {changes_of(r, q, minus(checked_columns(q), kept(q, "move")))};
      {self.record(self.ev("move"), "NULL", "NULL", changes="changed")}
      RETURN true;
    END IF;"""

    def reopen(self) -> str:
        if not self.q.on_reopen:
            return ""
        r, q, rules = self.r, self.q, self.rules
        return f"""
    {workflow.branch_mark("reopen")} {workflow_sql.check_mark(workflow.Check.ON_REOPEN_SET)}
    IF {rules.lock("reopen")} AND {rules.who("reopen")} AND {row_rule(r, q, "reopen")} AND {row_after(r, q, "reopen")}
        AND {r.unchanged(kept(q, "reopen"))} AND {r.assigned(values_of(q, "reopen"))} THEN
      {self.record(self.ev("reopen"), "NULL", "NULL")}
      RETURN true;
    END IF;"""


def _review_opened(
    r: Renderer,
    q: mapping.BoundQueue,
    review: model.Review,
    reviews: sa.Table,
    queue_name: str,
    key: str,
    at: str,
    outcome: str,
) -> str:
    """After a Complete of a reviewed queue: one chosen for review is recorded by the database (who did
    it, and why: one of their first items, or the share); one of an operator's first items that does
    not go to review is refused."""
    by = r.literal(review.by)
    reviews_table = r.prep.format_table(reviews)
    # Check.FIRST_ITEMS_REVIEWED: the count the engine's choice reads (reviews.firsts), for this login.
    firsts = r.sql(reviews_mod.firsts(reviews, q.name, sa.literal_column(r.login)).scalar_subquery())
    crumb = note(REVIEWED_SETTING, by, key)
    why = (
        f"CASE WHEN {firsts} < {review.first_items} THEN {r.literal(reviews_mod.FIRST)} "
        f"ELSE {r.literal(reviews_mod.SHARE)} END"
        if review.first_items
        else r.literal(reviews_mod.SHARE)
    )
    reviewed = ", ".join(r.literal(name) for name in review.outcomes)
    first = (
        ""
        if not review.first_items
        else f"""
          ELSIF {outcome} IN ({reviewed})
              AND {workflow_sql.check_mark(workflow.Check.FIRST_ITEMS_REVIEWED)} {firsts} < {review.first_items} THEN
            RAISE EXCEPTION 'workbench: % may not complete % item % without review: each of their first % items '
              'goes to review', login, {queue_name}, {key}, {review.first_items} USING ERRCODE = '42501';"""
    )
    return f"""
          IF to_review THEN
            INSERT INTO {reviews_table} (queue, item_key, source, doer, at, why)
              VALUES ({by}, {key}, {queue_name}, login, {at}, {why});
            {crumb}{first}
          END IF;"""
