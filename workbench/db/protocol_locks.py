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
from sqlalchemy.sql import visitors

from workbench.config import model
from workbench.core import workflow
from workbench.db import clock, lockrules, mapping, rowrules, tables, workflow_sql
from workbench.db.lockshapes import LockTable
from workbench.db.lockshapes.lock_table import lock_write
from workbench.db.rules import pg_names, pg_row_check, pg_row_rules, pg_triggers

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


def row_held(q: mapping.BoundQueue, holder: sa.ColumnElement[Any]) -> sa.ColumnElement[bool]:
    """The row rule every transition under the caller's own lock shares (HELD, db/rowrules.py: the row in
    the queue's work), over the queue's row, the lock's holder being `holder` (a state a claim leaves may
    name the claimer, whose name is the lock row's)."""
    names = [
        name
        for name in workflow.rendered_in(workflow.Rendering.PG_LOCK_TABLE)
        if workflow.TRANSITIONS[name].lock is workflow.LockRule.OWN_LIVE_HERE
    ]
    clause = sa.and_(sa.true(), *rowrules.before_all(q, *names).state)
    users = (q.user, _shape(q).user)

    def holder_for(element: Any) -> Any:
        return holder if any(element is u for u in users) else None

    return visitors.replacement_traverse(clause, {}, holder_for)  # type: ignore[call-overload,no-any-return]


def _actors(
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


def _shape(q: mapping.BoundQueue) -> LockTable:
    assert isinstance(q.shape, LockTable)
    return q.shape


def lock_check(conn: sa.Connection, q: mapping.BoundQueue, schema: str, reviewed: model.QueueConfig | None) -> str:
    """wb_QUEUE_lockcheck(op, o, n): is this write of a lock row of `q` (INSERT, UPDATE or DELETE; the
    row before and after) one of workbench's? True with its audit rows written."""
    shape = _shape(q)
    r = pg_names.Renderer(conn.dialect, q)
    prep = r.prep
    lo, ln = shape.locks.alias("o"), shape.locks.alias("n")
    item = q.table.alias("item")
    now = q.now()
    audit = prep.format_table(pg_names.wb_audit_table(schema))
    queue_name = r.literal(q.name)
    at = r.sql(clock.db_now())
    user_o, user_n = r.col(lo, shape.user), r.col(ln, shape.user)
    time_n = r.col(ln, shape.time)
    expiry_n = r.sql(shape.expiry(), ln)
    token_o, token_n = (r.sql(q.backend.token_digest(shape.token_column()), row) for row in (lo, ln))
    login: sa.ColumnElement[Any] = sa.literal_column("login")

    def change(*names: str) -> str:
        """The lock row's change the transitions `names` make (their lock Write, as the lock shape says it)."""
        if len({lock_write(name) for name in names}) != 1:
            raise AssertionError(f"transitions {', '.join(names)} differ in their lock write: one branch cannot")
        return r.sql(shape.lock_row_change(names[0], lo, ln, login))

    longest = clock.add_seconds(now, shape.seconds(q.config.lock_seconds))
    limit = f"{time_n} <= {r.sql(now)} AND {expiry_n} <= {r.sql(longest)}"
    if q.config.max_lock_seconds:
        limit += (
            f" AND {expiry_n} <= {r.sql(clock.add_seconds(shape.time, shape.seconds(q.config.max_lock_seconds)), ln)}"
        )
    live_o, stale_o = r.sql(shape.live(now), lo), r.sql(shape.stale(now), lo)
    supervisor = f"pg_has_role(session_user, '{pg_names.SUPERVISOR_ROLE}', 'USAGE')"
    # The table's row rule of a claim (CLAIMABLE, db/rowrules.py) for this login: waiting, or (a lock that
    # ran out) in the state its claim left it in.
    claimable = rowrules.before_all(q, "claim", "pick", user=sa.literal_column("login"))
    # Nobody holds the item through another queue of the table (LockTable.held_elsewhere): their lock
    # rows are apart from this queue's, so the primary key does not refuse the second holder.
    free_here = f"NOT {r.sql(shape.held_elsewhere(sa.literal_column('n.item_key', sa.String()), now))}"
    waits = f"{r.sql(sa.and_(sa.true(), *claimable.scope, *claimable.state_for('free')), item)} AND {free_here}"
    if shape.claim_id is not None and not shape.keep:  # no other program has claimed the row
        waits += f" AND {r.sql(shape.claim_id, item)} IS NULL"
    waits_again = r.sql(sa.and_(sa.true(), *claimable.scope, *claimable.state_for("stale")), item)
    waits_again += f" AND {free_here}"
    found = q.table.alias("t")
    find_item = (
        f"SELECT * INTO item FROM {prep.format_table(q.table)} t "
        f"WHERE {r.sql(q.key, found)} = CAST(n.item_key AS {q.key.type.compile(dialect=conn.dialect)});"
    )
    # A reviewing queue never serves (nor hands) an item to the one whose work it is: the new holder
    # (the login, for a claim; the one a supervisor reassigns it to) is not its doer.
    not_doer = "true"
    if reviewed is not None:
        reviews = prep.format_table(pg_names.own_table(schema, tables.REVIEWS_TABLE))
        not_doer = (
            f"NOT EXISTS (SELECT 1 FROM {reviews} rv WHERE rv.queue = {queue_name} "
            f"AND rv.item_key = n.item_key AND rv.doer = {user_n} AND rv.verdict IS NULL)"
        )
    # The lock rules on the lock row (o: before, n: after; op: INSERT, UPDATE or DELETE). A lock row
    # names its queue: "taken here" is the row's queue being this one.
    here = f"o.queue = {queue_name}"
    rules = _actors(
        conn,
        q,
        schema,
        supervisor,
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
            workflow.Check.WITHIN_LIMITS: limit,
            workflow.Check.SERVED: pg_names.serves(conn, q, schema, "login"),
            workflow.Check.NOT_DOER: not_doer,
            workflow.Check.OTHER_USER: f"{user_n} IS NOT NULL AND {user_n} IS DISTINCT FROM {user_o}",
        },
    )
    may_claim = rules.checked("claim")
    # A supervisor's take of an escalated item (the row rule ESCALATED, db/rowrules.py) nobody holds
    # through another queue of the table nor by another program's claim id; a queue without on_escalate
    # or on_reopen admits none (Check.ON_ESCALATE_SET, ON_REOPEN_SET).
    escalated = r.sql(sa.and_(sa.true(), *rowrules.before(q, "take").all), item)
    free_item = f"NOT {r.sql(shape.held_elsewhere(sa.literal_column('n.item_key', sa.String())))}"
    if shape.claim_id is not None and not shape.keep:
        free_item += f" AND {r.sql(shape.claim_id, item)} IS NULL"
    take_set_up = "true" if q.on_escalate and q.on_reopen else "false"
    # What a lock row held at commit asks of its item (row_held): in the queue's work, for the lock's holder.
    in_work = r.sql(row_held(q, sa.literal_column(user_n)), item)
    take_checks = " ".join(
        workflow_sql.check_mark(c) for c in (workflow.Check.ON_ESCALATE_SET, workflow.Check.ON_REOPEN_SET)
    )
    # Giving a lock up is read as a release or a defer; it becomes a Complete (or an escalate) only when
    # the queue row gets the outcome's values (item_check), never by settling this row: that would
    # credit a Complete that never happened.
    gives_up_as = tuple(name for name in GIVEN_UP if name in given_up(reviewed is not None))
    gives_up = workflow_sql.may_be(*read_first(gives_up_as))
    ev, branch = workflow_sql.event, workflow.branch_mark
    took, gave, freed, handed = (
        crumb_of(*names) for names in (("claim", "pick"), gives_up_as, ("expire", "force_release"), ("reassign",))
    )
    first_event = "split_part(maybe[1], ':', 1)"
    first_outcome = "NULLIF(split_part(maybe[1], ':', 2), '')"

    def record(key: str, *args: Any, **kwargs: Any) -> str:
        return pg_names.recorder(audit, queue_name, key, at)(*args, **kwargs)

    def crumb(kind: str, key: str) -> str:
        return pg_names.note(LOCKS_SETTING, f"'{kind}'", queue_name, key)

    body = f"""
DECLARE
  login text := session_user;
  maybe text[] := ARRAY[]::text[];
  noted text;
  item {prep.format_table(q.table)}%ROWTYPE;
BEGIN
  {pg_names.TRIGGER_ONLY}
  IF op = '{AT_COMMIT}' THEN
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
  IF op = 'INSERT' THEN
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
  IF op = 'DELETE' THEN
    IF {rules.lock(*gives_up_as)} AND {change(*gives_up_as)} THEN
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
        AND {change("expire", "force_release")} THEN
      maybe := CASE WHEN NOT {stale_o} THEN {workflow_sql.may_be("force_release")}
                    WHEN {rules.who("force_release")} THEN {workflow_sql.may_be("expire", "force_release")}
                    ELSE {workflow_sql.may_be("expire")} END;
      {record("o.item_key", first_event, user_o, token_o, maybe="maybe")}
      {crumb(freed, "o.item_key")}
      RETURN true;
    END IF;
    RETURN false;
  END IF;
  IF n.queue IS DISTINCT FROM o.queue OR n.item_key IS DISTINCT FROM o.item_key THEN
    RETURN false;
  END IF;
  IF {rules.lock("extend", "save")} AND ({change("extend")} AND {rules.checked("extend")}
      OR {change("save")} AND {rules.checked("save")}) THEN
    {branch("extend", "save")}
    maybe := {workflow_sql.may_be("extend", "save")};
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
END"""
    function = pg_names.qualified(prep, schema, lock_check_name(q.name))
    row_type = prep.format_table(shape.locks)
    return (
        f"CREATE OR REPLACE FUNCTION {function}(op text, o {row_type}, n {row_type}) RETURNS boolean "
        f"LANGUAGE plpgsql SECURITY DEFINER SET search_path = {pg_names.search_path(prep, q, schema)} "
        f"AS $wb${body}\n$wb$"
    )


def item_check(conn: sa.Connection, q: mapping.BoundQueue, schema: str) -> str:
    """wb_QUEUE_check(o, n) for a lock-table queue: is this update of the queue row one that goes with
    a lock this login took, holds or gave up in this transaction, or a supervisor's move or reopen?"""
    shape = _shape(q)
    r = pg_names.Renderer(conn.dialect, q, rows=pg_names.CHECK_ROWS)
    prep = r.prep
    old, new = r.old, r.new
    held = shape.locks.alias("held")
    now = q.now()
    audit = prep.format_table(pg_names.wb_audit_table(schema))
    queue_name = r.literal(q.name)
    key = f"CAST({r.col(old, q.key)} AS text)"
    at = r.sql(clock.db_now())
    record = pg_names.recorder(audit, queue_name, key, at)
    # What each transition leaves as it was, read from core/workflow.py (pg_row_rules.kept).
    kept, values = functools.partial(pg_row_rules.kept, q), functools.partial(pg_row_rules.values_of, q)
    # The row rules (db/rowrules.py): the queue's scope, which every one rendered here holds to, and a
    # claim's (CLAIMABLE: waiting, or in the state a claim left it in, the lock being the lock row's).
    scope_old = r.sql(
        sa.and_(sa.true(), *rowrules.scope(q, *workflow.rendered_in(workflow.Rendering.PG_LOCK_TABLE))), old
    )
    claimable = rowrules.before_all(q, "claim", "pick", user=sa.literal_column("login"))
    waits_old = r.sql(sa.and_(sa.true(), *claimable.state_for("stale")), old)
    supervisor = f"pg_has_role(session_user, '{pg_names.SUPERVISOR_ROLE}', 'USAGE')"
    unchanged, assigned = r.unchanged, r.assigned
    lock_row = f"FROM {prep.format_table(shape.locks)} held WHERE held.queue = {queue_name} AND held.item_key = {key}"
    holds = f"{lock_row} AND {r.sql(shape.user, held)} = login AND {r.sql(shape.live(now), held)}"
    # The lock rules on the queue row: the login's own live lock row (a save), nobody's (move, reopen:
    # the table's FREE as the engine's statements carry it, db/lockrules.py, over the row before).
    rules = _actors(conn, q, schema, supervisor, {workflow.LockRule.OWN_LIVE_HERE: f"EXISTS (SELECT 1 {holds})"})
    take_set_up = "true" if q.on_escalate and q.on_reopen else "false"  # Check.ON_ESCALATE_SET, ON_REOPEN_SET
    ev, branch = workflow_sql.event, workflow.branch_mark

    # The queue row's columns as the function's argument `o` itself: a subquery (the lock rule's) would
    # otherwise add the table to its own FROM.
    as_old = {c.name: sa.literal_column(f"{pg_names.CHECK_ROWS[0]}.{prep.quote(c.name)}", c.type) for c in q.table.c}

    def free(name: str) -> str:
        return r.sql(q.written(lockrules.guard(q, name, now), as_old))

    def stamped(*names: str) -> str:
        """What the lock write of the transitions `names` leaves in the queue row itself (shape 6: its
        claim id, db/lockshapes/claim_id.py), as the lock shape says it."""
        login: sa.ColumnElement[Any] = sa.literal_column("login")
        item_key: sa.ColumnElement[Any] = sa.literal_column(key, sa.String())
        parts = {r.sql(shape.row_lock_change(name, old, new, item_key, login)) for name in names}
        if len(parts) != 1:
            raise AssertionError(f"transitions {', '.join(names)} leave the row's lock differently")
        return parts.pop()

    took, gave, freed, handed = (
        crumb_of(*names) for names in (("claim", "pick"), given_up(True), ("expire", "force_release"), ("reassign",))
    )
    # Every column the release (or defer) does not write stays as it was: no edits with it.
    releases = " OR ".join(
        f"({unchanged(kept('release', 'defer', reason=reason))} AND "
        f"{assigned(values('release', 'defer', reason=reason))} AND {stamped('release', 'defer')})"
        for reason in (None, *q.reason_writes)
    )
    here = f"a.xmin = {pg_names.THIS_TRANSACTION}"
    review = q.config.review
    reviews = pg_names.own_table(schema, tables.REVIEWS_TABLE)

    # A Complete, and a reviewing queue's verdict given as one: the same columns of the row.
    finishes = ("complete", "review_accept", "review_send_back")

    def completes(name: str, group: list[mapping.BoundAssignment], reviewed: bool) -> str:
        """The lock given up was a Complete with this outcome (and, `reviewed`, chosen for review)."""
        chosen = (
            ""
            if review is None
            else pg_row_check._review_opened(r, q, review, reviews, queue_name, key, at, r.literal(name))
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

    outcome_checks = "".join(
        completes(name, group, reviewed)
        for name, group in q.outcomes.items()
        for reviewed in ((False, True) if review is not None and name in review.outcomes else (False,))
    )
    # An escalate: the lock given up, on_escalate's values and nothing else (Check.ON_ESCALATE_SET: none
    # where the queue has no on_escalate); recorded as one where the lock row's release was.
    escalates = (
        f"{unchanged(kept('escalate'))} AND {assigned(values('escalate'))} AND {stamped('escalate')}"
        if q.on_escalate
        else "false"
    )
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

    edits = pg_row_rules.changes_of(r, q)

    def crumb(kind: str) -> str:
        return pg_names.noted(LOCKS_SETTING, f"'{kind}'", queue_name, key)

    body = f"""
DECLARE
  login text := session_user;
  noted text;
  held_token text;
  changed jsonb;
  to_review boolean := false;
BEGIN
  {pg_names.TRIGGER_ONLY}
  IF NOT ({unchanged([q.key])} AND {scope_old}) THEN
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
  IF {crumb(gave)} THEN
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
  IF {crumb(freed)} AND {unchanged(kept("expire", "force_release"))} AND {assigned(values("expire"))}
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
END"""
    function = pg_names.qualified(prep, schema, pg_names.check_function_name(q.name))
    row_type = prep.format_table(q.table)
    rows = pg_names.CHECK_ROWS
    return (
        f"CREATE OR REPLACE FUNCTION {function}({rows[0]} {row_type}, {rows[1]} {row_type}) RETURNS boolean "
        f"LANGUAGE plpgsql SECURITY DEFINER SET search_path = {pg_names.search_path(prep, q, schema)} "
        f"AS $wb${body}\n$wb$"
    )


def locks_trigger(conn: sa.Connection, q: mapping.BoundQueue, schema: str, queues: list[str]) -> list[str]:
    """The trigger on the lock table: a write of a lock row of one of `queues` (the enforced queues
    whose locks it keeps) must be one its queue's check admits, or the statement fails; other queues'
    rows are left alone."""
    shape = _shape(q)
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
    locks = pg_names.table_oid(conn, _shape(q).locks)
    prep = conn.dialect.identifier_preparer
    grant = (
        f"GRANT SELECT, INSERT, UPDATE, DELETE ON {prep.format_table(_shape(q).locks)} "
        f"TO {prep.quote(pg_names.OPERATOR_ROLE)}"
    )  # revoked in drop() with the last queue using it
    row_types = {"queue": prep.format_table(q.table), "locks": prep.format_table(_shape(q).locks)}
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
    others = pg_triggers.enforced_where(conn, schema, "locks", pg_names.table_oid(conn, _shape(q).locks), q.name)
    row_type = prep.format_table(_shape(q).locks)
    function = pg_names.qualified(prep, schema, lock_check_name(q.name))
    statements = [
        *locks_trigger(conn, q, schema, others),
        f"DROP FUNCTION IF EXISTS {function}(text, {row_type}, {row_type})",
    ]
    if not others:  # the lock table's grants go with the last enforced queue whose locks it keeps
        statements.append(f"REVOKE ALL ON {row_type} FROM {prep.quote(pg_names.OPERATOR_ROLE)}")
    return statements
