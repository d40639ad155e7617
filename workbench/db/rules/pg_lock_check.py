"""PostgreSQL under grants, locks in a separate lock table (shape 5): the check of the lock rows an
operator's login writes (wb_QUEUE_lockcheck), one part per operation on the lock row.

What the lock table's rules are and how the queue row's check goes with them: rules/pg_locks.py."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.sql import visitors

from workbench.config import model
from workbench.core import workflow
from workbench.db import clock, mapping, rowrules, tables, workflow_sql
from workbench.db.lockshapes import LockTable
from workbench.db.lockshapes.lock_table import lock_write
from workbench.db.rules import pg_names

LOCKS_SETTING = "workbench.locks"  # transaction-local: lock rows taken or given up, by queue and item
# The crumbs a lock row's change leaves for the queue row's check: a lock taken by the caller, its own
# given up, someone's freed (a sweep, a force-release), one handed to another user.
TOOK, GAVE, FREED, HANDED = "took", "gave", "freed", "handed"


def crumb_of(*names: str) -> str:
    """The crumb the transitions `names` leave (they share one), from the lock Write the table gives them
    (core/workflow.py): taken, handed over, or cleared (given up where the lock is the caller's own)."""
    kinds = set()
    for name in names:
        write, t = lock_write(name), workflow.TRANSITIONS[name]
        if write is workflow.Write.LOCK_TAKEN:
            kinds.add(TOOK)
        elif write is workflow.Write.LOCK_HANDED:
            kinds.add(HANDED)
        elif write is workflow.Write.LOCK_CLEARED:
            kinds.add(GAVE if t.lock is workflow.LockRule.OWN_LIVE_HERE else FREED)
        else:
            raise ValueError(f"transition {name} takes, hands over or clears no lock: it leaves no crumb")
    if len(kinds) != 1:
        raise AssertionError(f"transitions {', '.join(names)} leave different crumbs: one branch cannot render them")
    return kinds.pop()


def lock_written_here(queue: str, key: str) -> str:
    """SQL: a lock row of `queue`'s (SQL text) for the item `key` (SQL text) was taken, given up, freed or
    handed over in this transaction: any crumb its lock check leaves."""
    kinds = (TOOK, GAVE, FREED, HANDED)
    return "(" + " OR ".join(pg_names.noted(LOCKS_SETTING, f"'{kind}'", queue, key) for kind in kinds) + ")"


# What a lock row deleted by its own holder may be marked as (tests/test_workflow_table.py reads the marks
# from this source, without a server): given_up() says which of them the table makes, and a transition the
# table adds there that this list lacks fails when the check is generated, naming this file.
GIVEN_UP = ("release", "defer", "escalate", "complete", "review_accept", "review_send_back")


def given_up(reviewed: bool) -> tuple[str, ...]:
    """The transitions a lock row deleted by its own holder may be (the table's: the caller's own lock
    cleared): the queue row's values say which; a reviewing queue's verdicts only in one (`reviewed`)."""
    names = [
        name
        for name in sorted(workflow.rendered_in(workflow.Rendering.PG_LOCK_TABLE), key=list(workflow.TRANSITIONS).index)
        if lock_write(name) is workflow.Write.LOCK_CLEARED
        and workflow.TRANSITIONS[name].lock is workflow.LockRule.OWN_LIVE_HERE
        and (reviewed or workflow.Write.REVIEW_VERDICT not in workflow.TRANSITIONS[name].writes)
    ]
    if set(names) - set(GIVEN_UP):
        raise workflow.NotRendered(workflow.Rendering.PG_LOCK_TABLE, set(names) - set(GIVEN_UP))
    return tuple(name for name in GIVEN_UP if name in names)


def read_first(names: tuple[str, ...]) -> tuple[str, ...]:
    """Of the transitions `names` a deleted lock row may be, those it is recorded as until the queue row
    says otherwise: those that write on_release, which only the client's own audit row tells apart."""
    return tuple(name for name in names if workflow.Write.ON_RELEASE in workflow.TRANSITIONS[name].writes)


def _gone(row: str, waits: str) -> str:
    """plpgsql: the item was found but does not wait (any more): another claimer finished it after this
    claim chose it. A serialization failure, which workbench's claim retries with a fresh look at the
    queue, rather than a refusal."""
    return (
        f"IF FOUND AND NOT ({waits}) THEN\n        RAISE EXCEPTION 'workbench: % item % no longer waits', "
        f"{row}.queue, {row}.item_key USING ERRCODE = '40001';\n      END IF;"
    )


def lock_check_name(queue: str) -> str:
    return pg_names.object_name(queue, "lockcheck")


# The lock check's op at commit (the lock table's deferred trigger): a lock row this transaction inserted.
AT_COMMIT = "COMMIT"


def row_held(q: mapping.BoundQueue, holder: sa.ColumnElement[Any], *names: str) -> sa.ColumnElement[bool]:
    """The row rule the transitions `names` share (by default every one under the caller's own lock: HELD,
    db/rowrules.py, the row in the queue's work), over the queue's row, the lock's holder being `holder` (a
    state a claim leaves may name the claimer, whose name is the lock row's)."""
    names = names or tuple(
        name
        for name in workflow.rendered_in(workflow.Rendering.PG_LOCK_TABLE)
        if workflow.TRANSITIONS[name].lock is workflow.LockRule.OWN_LIVE_HERE
    )
    clause = sa.and_(sa.true(), *rowrules.before_all(q, *names).state)
    users = (q.user, lock_shape(q).user)

    def holder_for(element: Any) -> Any:
        return holder if any(element is u for u in users) else None

    return visitors.replacement_traverse(clause, {}, holder_for)  # type: ignore[call-overload,no-any-return]


def actors(
    conn: sa.Connection,
    q: mapping.BoundQueue,
    schema: str,
    supervisor: str,
    locks: dict[workflow.LockRule, str] | None = None,
    checks: dict[workflow.Check, str] | None = None,
) -> workflow_sql.Rules:
    """The table's precondition kinds (core/workflow.py) as these functions test them: who may make a
    transition (the login, `login` in the function), and (the lock check) on which lock row, with which
    further checks."""
    actors = {
        workflow.Actor.OPERATOR: "true",
        workflow.Actor.CLOCK: "true",
        workflow.Actor.SUPERVISOR: supervisor,
        workflow.Actor.ESCALATED_TO: pg_names.escalated_to(conn, q, schema, "login", supervisor),
    }
    return workflow_sql.Rules(locks or {}, actors, checks)


def lock_shape(q: mapping.BoundQueue) -> LockTable:
    assert isinstance(q.shape, LockTable)
    return q.shape


class _LockCheck:
    """The lock check of a lock-table queue: what its branches read, set up once, and a part of the
    function's body per operation on the lock row (at commit, INSERT, DELETE, UPDATE)."""

    def __init__(self, conn: sa.Connection, q: mapping.BoundQueue, schema: str) -> None:
        self.conn, self.q, self.schema = conn, q, schema
        self.shape = shape = lock_shape(q)
        self.r = r = pg_names.Renderer(conn.dialect, q)
        self.prep = prep = r.prep
        self.lo, self.ln = lo, ln = shape.locks.alias("o"), shape.locks.alias("n")
        self.item = q.table.alias("item")
        self.now = now = q.now()
        self.audit = prep.format_table(pg_names.wb_audit_table(schema))
        self.queue_name = r.literal(q.name)
        self.at = r.sql(clock.db_now())
        self.user_o, self.user_n = r.col(lo, shape.user), r.col(ln, shape.user)
        self.token_o, self.token_n = (r.sql(q.backend.token_digest(shape.token_column()), row) for row in (lo, ln))
        self.live_o, self.stale_o = r.sql(shape.live(now), lo), r.sql(shape.stale(now), lo)
        self.supervisor = f"pg_has_role(session_user, '{pg_names.SUPERVISOR_ROLE}', 'USAGE')"
        found = q.table.alias("t")
        # The lock row's item (of the row after, `n`; of the row before, `o`, for a DELETE) as `item`.
        self.find_item, self.find_item_o = (
            f"SELECT * INTO item FROM {prep.format_table(q.table)} t "
            f"WHERE {r.sql(q.key, found)} = CAST({row}.item_key AS {q.key.type.compile(dialect=conn.dialect)});"
            for row in ("n", "o")
        )
        self.first_event = "split_part(maybe[1], ':', 1)"
        self.first_outcome = "NULLIF(split_part(maybe[1], ':', 2), '')"

    def change(self, *names: str) -> str:
        """The lock row's change the transitions `names` make (their lock Write, as the lock shape says it)."""
        if len({lock_write(name) for name in names}) != 1:
            raise AssertionError(f"transitions {', '.join(names)} differ in their lock write: one branch cannot")
        login: sa.ColumnElement[Any] = sa.literal_column("login")
        return self.r.sql(self.shape.lock_row_change(names[0], self.lo, self.ln, login, capped=self.q.capped))

    def record(self, key: str, *args: Any, **kwargs: Any) -> str:
        return pg_names.recorder(self.audit, self.queue_name, key, self.at)(*args, **kwargs)

    def crumb(self, kind: str, key: str) -> str:
        return pg_names.note(LOCKS_SETTING, f"'{kind}'", self.queue_name, key)

    def limit(self) -> str:
        """A fresh lock inside the queue's lock limits (Check.WITHIN_LIMITS)."""
        q, r, shape, now, ln = self.q, self.r, self.shape, self.now, self.ln
        time_n = r.col(ln, shape.time)
        expiry_n = r.sql(shape.expiry(), ln)
        longest = clock.add_seconds(now, shape.seconds(q.config.lock_seconds))
        limit = f"{time_n} <= {r.sql(now)} AND {expiry_n} <= {r.sql(longest)}"
        if q.config.max_lock_seconds:
            most = clock.add_seconds(shape.time, shape.seconds(q.config.max_lock_seconds))
            limit += f" AND {expiry_n} <= {r.sql(most, ln)}"
        return limit

    def waits(self) -> tuple[str, str]:
        """A claim's row rule (CLAIMABLE, db/rowrules.py) for this login, of a free item and of one whose
        lock ran out, nobody holding it through another queue of the table (LockTable.held_elsewhere):
        their lock rows are apart from this queue's, so the primary key does not refuse the second holder."""
        q, r, shape, item = self.q, self.r, self.shape, self.item
        claimable = rowrules.before_all(q, "claim", "pick", user=sa.literal_column("login"))
        free_here = f"NOT {r.sql(shape.held_elsewhere(sa.literal_column('n.item_key', sa.String()), self.now))}"
        waits = f"{r.sql(sa.and_(sa.true(), *claimable.scope, *claimable.state_for('free')), item)} AND {free_here}"
        if shape.claim_id is not None and not shape.keep:  # no other program has claimed the row
            waits += f" AND {r.sql(shape.claim_id, item)} IS NULL"
        waits_again = r.sql(sa.and_(sa.true(), *claimable.scope, *claimable.state_for("stale")), item)
        waits_again += f" AND {free_here}"
        return waits, waits_again

    def not_doer(self, schema: str, reviewed: model.QueueConfig | None) -> str:
        """A reviewing queue never serves (nor hands) an item to the one whose work it is: the new holder
        (the login, for a claim; the one a supervisor reassigns it to) is not its doer."""
        if reviewed is None:
            return "true"
        reviews = self.prep.format_table(pg_names.own_table(schema, tables.REVIEWS_TABLE))
        return (
            f"NOT EXISTS (SELECT 1 FROM {reviews} rv WHERE rv.queue = {self.queue_name} "
            f"AND rv.item_key = n.item_key AND rv.doer = {self.user_n} AND rv.verdict IS NULL)"
        )

    def rules(self, reviewed: model.QueueConfig | None) -> workflow_sql.Rules:
        """The lock rules on the lock row (o: before, n: after; op: INSERT, UPDATE or DELETE). A lock row
        names its queue: "taken here" is the row's queue being this one."""
        conn, q, schema, queue_name = self.conn, self.q, self.schema, self.queue_name
        user_o, user_n, live_o, stale_o = self.user_o, self.user_n, self.live_o, self.stale_o
        here = f"o.queue = {queue_name}"
        return actors(
            conn,
            q,
            schema,
            self.supervisor,
            {
                workflow.LockRule.OWN_LIVE_HERE: f"{here} AND {user_o} = login AND {live_o}",
                workflow.LockRule.FREE_OR_STALE: f"n.queue = {queue_name} AND {user_n} = login "
                f"AND (op = 'INSERT' OR {here} AND {stale_o})",
                workflow.LockRule.STALE_HERE: f"{here} AND {stale_o}",
                workflow.LockRule.HELD_HERE: f"{here} AND {user_o} IS NOT NULL",
                # A take's: the lock row is new (the primary key admits no second one of this queue); the
                # item's other holders are read beside it (free_item).
                workflow.LockRule.FREE: f"op = 'INSERT' AND n.queue = {queue_name}",
            },
            {
                workflow.Check.WITHIN_LIMITS: self.limit(),
                workflow.Check.SERVED: pg_names.serves(conn, q, schema, "login"),
                workflow.Check.NOT_DOER: self.not_doer(schema, reviewed),
                workflow.Check.OTHER_USER: f"{user_n} IS NOT NULL AND {user_n} IS DISTINCT FROM {user_o}",
            },
        )

    def at_commit(self) -> str:
        """At commit: the lock row this transaction inserted and still holds leaves its item in the queue's work."""
        prep, shape, r, ln, find_item = self.prep, self.shape, self.r, self.ln, self.find_item
        # What a lock row held at commit asks of its item (row_held): in the queue's work, for the lock's holder.
        in_work = r.sql(row_held(self.q, sa.literal_column(self.user_n)), self.item)
        return f"""  IF op = '{AT_COMMIT}' THEN
    -- At commit: a lock row this transaction inserted and still holds leaves its item where the
    -- transitions under that lock find it (their row rule). A claim's lock row takes a waiting item; a
    -- take's lock row an escalated one, which the take's own values (on_reopen's, item_check) put back
    -- to work in the same transaction: its lock row alone leaves it escalated, and is refused here.
    IF NOT EXISTS (SELECT 1 FROM {prep.format_table(shape.locks)} l WHERE l.queue = n.queue
        AND l.item_key = n.item_key AND {r.sql(shape.token_column(), shape.locks.alias("l"))} IS NOT DISTINCT FROM
        {r.sql(shape.token_column(), ln)}) THEN
      RETURN true;  -- given up (or taken over) since
    END IF;
    {find_item}
    RETURN NOT FOUND OR {in_work};
  END IF;
"""

    def insert(self, rules: workflow_sql.Rules) -> str:
        """A lock row inserted: a supervisor's take of an escalated item, or a claim of a free one."""
        q, r, shape, item, find_item = self.q, self.r, self.shape, self.item, self.find_item
        change, record, crumb, token_n = self.change, self.record, self.crumb, self.token_n
        # A supervisor's take of an escalated item (the row rule ESCALATED, db/rowrules.py) nobody holds
        # through another queue of the table nor by another program's claim id; a queue without on_escalate
        # or on_reopen admits none (Check.ON_ESCALATE_SET, ON_REOPEN_SET).
        escalated = r.sql(sa.and_(sa.true(), *rowrules.before(q, "take").all), item)
        free_item = f"NOT {r.sql(shape.held_elsewhere(sa.literal_column('n.item_key', sa.String())))}"
        if shape.claim_id is not None and not shape.keep:
            free_item += f" AND {r.sql(shape.claim_id, item)} IS NULL"
        take_set_up = "true" if q.on_escalate and q.on_reopen else "false"
        take_checks = " ".join(
            workflow_sql.check_mark(c) for c in (workflow.Check.ON_ESCALATE_SET, workflow.Check.ON_REOPEN_SET)
        )
        waits, _ = self.waits()
        may_claim = rules.checked("claim")
        took = crumb_of("claim", "pick")
        ev, branch = workflow_sql.event, workflow.branch_mark
        return f"""  IF op = 'INSERT' THEN
    -- A supervisor's take: the lock of an escalated item, recorded as his claim. An escalated item is
    -- nobody else's to lock (it waits for no claim): refused, not a claim that came too late. The item's
    -- take values follow (item_check); without them the lock is refused at commit (op COMMIT above).
    {branch("take")} {take_checks}
    IF {take_set_up} AND {rules.lock("take")} AND {change("take")} THEN
      {find_item}
      IF FOUND AND {escalated} THEN
        IF {rules.who("take")} AND {free_item} AND {rules.checked("take")} THEN
          {record("n.item_key", ev("take"), "login", token_n)}
          {crumb(crumb_of("take"), "n.item_key")}
          RETURN true;
        END IF;
        RETURN false;
      END IF;
    END IF;
    -- A claim of a free item: one that waits, under this login, with a fresh lock inside the limits.
    {branch("claim", "pick")}
    IF {rules.lock("claim", "pick")} AND {change("claim", "pick")} THEN
      {find_item}
      IF FOUND AND {waits} AND {may_claim} THEN
        {record("n.item_key", ev("claim"), "login", token_n)}
        {crumb(took, "n.item_key")}
        RETURN true;
      END IF;
      {_gone("n", waits)}
    END IF;
    RETURN false;
  END IF;
"""

    def delete(self, rules: workflow_sql.Rules, gives_up_as: tuple[str, ...]) -> str:
        """A lock row deleted: its holder gives it up (release, defer, escalate, Complete), or it is freed
        (the sweep of an expired lock, a supervisor's force-release), or, run out on an item that left the
        queue's work, given back (expire_out_of_work: the sweep, whoever notices it)."""
        change, record, crumb = self.change, self.record, self.crumb
        first_event, first_outcome = self.first_event, self.first_outcome
        token_o, user_o, stale_o = self.token_o, self.user_o, self.stale_o
        # Giving a lock up is read as a release or a defer; it becomes a Complete (or an escalate) only when
        # the queue row gets the outcome's values (item_check), never by settling this row: that would
        # credit a Complete that never happened.
        gives_up = workflow_sql.may_be(*read_first(gives_up_as))
        gave, freed = crumb_of(*gives_up_as), crumb_of("expire", "force_release")
        # Each branch's row rule (HELD: the item in the queue's work), the lock's holder standing for a claimed
        # state's user, over the item before: a lock row is given up or freed only while its item is still
        # the queue's work (a run-out lock row of the twin's, on an item escalated since, is nobody's to free:
        # workbench's claim through the other queue gives it back first, LockTableClaim._give_back_twins).
        holder: sa.ColumnElement[Any] = sa.literal_column(user_o)
        held_given, held_freed = (
            self.r.sql(row_held(self.q, holder, *names), self.item)
            for names in (gives_up_as, ("expire", "force_release"))
        )
        # A run-out lock row whose item left the queue's work (OUT_OF_WORK, over the item before) goes back
        # alone: it leaves no crumb, so the queue row's check admits no on_release (nor anything) after it.
        left = self.r.sql(sa.and_(sa.true(), *rowrules.before(self.q, "expire_out_of_work").all), self.item)
        ev = workflow_sql.event
        branch = workflow.branch_mark
        return f"""  IF op = 'DELETE' THEN
    {self.find_item_o}
    IF {rules.lock(*gives_up_as)} AND {change(*gives_up_as)} AND (NOT FOUND OR {held_given}) THEN
      -- This login gives its own lock up: a release, defer, escalate or Complete (the queue row's values
      -- say which).
      {branch(*gives_up_as)}
      maybe := {gives_up};
      {record("o.item_key", first_event, "login", token_o, outcome=first_outcome, maybe="maybe")}
      {crumb(gave, "o.item_key")}
      RETURN true;
    END IF;
    {branch("expire", "force_release")}
    IF ({rules.lock("expire")} OR {rules.lock("force_release")} AND {rules.who("force_release")})
        AND {change("expire", "force_release")} AND (NOT FOUND OR {held_freed}) THEN
      maybe := CASE WHEN NOT {stale_o} THEN {workflow_sql.may_be("force_release")}
                    WHEN {rules.who("force_release")} THEN {workflow_sql.may_be("expire", "force_release")}
                    ELSE {workflow_sql.may_be("expire")} END;
      {record("o.item_key", first_event, user_o, token_o, maybe="maybe")}
      {crumb(freed, "o.item_key")}
      RETURN true;
    END IF;
    {branch("expire_out_of_work")}
    IF {rules.lock("expire_out_of_work")} AND {rules.who("expire_out_of_work")} AND {change("expire_out_of_work")}
        AND FOUND AND {left} THEN
      {record("o.item_key", ev("expire_out_of_work"), user_o, token_o)}
      RETURN true;
    END IF;
    RETURN false;
  END IF;
"""

    def update(self, rules: workflow_sql.Rules) -> str:
        """A lock row updated: extended or saved under its own live lock, an expired one claimed, a lock
        reassigned by a supervisor."""
        change, record, crumb, find_item = self.change, self.record, self.crumb, self.find_item
        first_event, token_o, token_n, user_o, user_n = (
            self.first_event,
            self.token_o,
            self.token_n,
            self.user_o,
            self.user_n,
        )
        _, waits_again = self.waits()
        may_claim = rules.checked("claim")
        took, handed = crumb_of("claim", "pick"), crumb_of("reassign")
        ev, branch = workflow_sql.event, workflow.branch_mark
        return f"""  IF n.queue IS DISTINCT FROM o.queue OR n.item_key IS DISTINCT FROM o.item_key THEN
    RETURN false;
  END IF;
  IF {rules.lock("extend", "save")} AND ({change("extend")} AND {rules.checked("extend")}
      OR {change("save")} AND {rules.checked("save")}) THEN
    {branch("extend", "save")}
    -- Each of the two that the lock row's change is (its lock write and checks): a lock row left as it was
    -- is an extend only where an extend may leave it so (no max_lock_duration), one whose expiry moved on
    -- never a save (a save writes no LOCK_EXTENDED).
    maybe := CASE WHEN {change("extend")} AND {rules.checked("extend")} THEN {workflow_sql.may_be("extend")}
                  ELSE ARRAY[]::text[] END
          || CASE WHEN {change("save")} AND {rules.checked("save")} THEN {workflow_sql.may_be("save")}
                  ELSE ARRAY[]::text[] END;
    {record("o.item_key", first_event, "login", token_o, maybe="maybe")}
    RETURN true;
  END IF;
  IF {rules.lock("claim", "pick")} AND {change("claim", "pick")} THEN
    -- The claim of an expired lock.
    {branch("claim", "pick", "expire")}
    {find_item}
    IF FOUND AND {waits_again} AND {may_claim} THEN
      {record("o.item_key", ev("expire"), user_o, token_o)}
      {record("o.item_key", ev("claim"), "login", token_n)}
      {crumb(took, "o.item_key")}
      RETURN true;
    END IF;
    {_gone("o", waits_again)}
  END IF;
  {branch("reassign")}
  IF {rules.lock("reassign")} AND {rules.who("reassign")} AND {change("reassign")} AND {rules.checked("reassign")} THEN
    {record("o.item_key", ev("reassign"), user_o, token_o)}
    {record("o.item_key", workflow_sql.also("reassign"), user_n, token_n)}
    {crumb(handed, "o.item_key")}
    RETURN true;
  END IF;
  RETURN false;
"""


def lock_check(conn: sa.Connection, q: mapping.BoundQueue, schema: str, reviewed: model.QueueConfig | None) -> str:
    """wb_QUEUE_lockcheck(op, o, n): is this write of a lock row of `q` (INSERT, UPDATE or DELETE; the
    row before and after) one of workbench's? True with its audit rows written."""
    check = _LockCheck(conn, q, schema)
    prep, shape = check.prep, check.shape
    rules = check.rules(reviewed)
    gives_up_as = tuple(name for name in GIVEN_UP if name in given_up(reviewed is not None))
    head = f"""
DECLARE
  login text := session_user;
  maybe text[] := ARRAY[]::text[];
  noted text;
  item {prep.format_table(q.table)}%ROWTYPE;
BEGIN
  {pg_names.TRIGGER_ONLY}
"""
    body = (
        head + check.at_commit() + check.insert(rules) + check.delete(rules, gives_up_as) + check.update(rules) + "END"
    )
    function = pg_names.qualified(prep, schema, lock_check_name(q.name))
    row_type = prep.format_table(shape.locks)
    return (
        f"CREATE OR REPLACE FUNCTION {function}(op text, o {row_type}, n {row_type}) RETURNS boolean "
        f"LANGUAGE plpgsql SECURITY DEFINER SET search_path = {pg_names.search_path(prep, q, schema)} "
        f"AS $wb${body}\n$wb$"
    )
