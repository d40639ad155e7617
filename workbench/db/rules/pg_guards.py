"""PostgreSQL under grants: the guards of workbench's notes, deferrals and reviews tables."""

from __future__ import annotations

import functools
from typing import Any

import sqlalchemy as sa
from sqlalchemy.sql import util as sql_util

from workbench.core import problems, workflow
from workbench.db import clock, tables, workflow_sql
from workbench.db import deferrals as deferrals_mod
from workbench.db import reviews as reviews_mod
from workbench.db.rules.pg_names import (
    DEFERRAL_GUARD,
    NOTES_GUARD,
    OPERATOR_ROLE,
    REVIEW_GUARD,
    REVIEWED_SETTING,
    THIS_TRANSACTION,
    Renderer,
    crumb_text,
    enforced_table,
    own_table,
    owner_oid,
    private,
    qualified,
    wb_audit_table,
)


def refusing_defer(enforced: str, queue: str) -> str:
    """SQL: the queue `queue` (SQL text) is enforced and lets no item be deferred (Check.ALLOW_DEFER)."""
    return (
        f"{workflow_sql.check_mark(workflow.Check.ALLOW_DEFER)} "
        f"EXISTS (SELECT 1 FROM {enforced} e WHERE e.queue = {queue} AND e.defers = false)"
    )


def reason_refused(event: str, conn: sa.Connection) -> str:
    """plpgsql: refuse the act `event` (SQL text, one of reasoned()'s) for want of a reason."""
    texts = " ".join(
        f"WHEN '{name}' THEN {Renderer.literal_of(conn, text)}" for name, text in sorted(reasoned().items())
    )
    return (
        f"RAISE EXCEPTION 'workbench: %', CASE {event} {texts} END USING ERRCODE = '42501',\n"
        "      HINT = 'write your own audit row of the change with its reason in the same transaction, as "
        "workbench does';"
    )


def reasoned() -> dict[str, str]:
    """The events of the transitions that need a reason (workflow.needs_reason, as workflow.reason_given
    asks it: a supervisor's act, a defer, an escalate), whoever makes them, each with the engine's refusal
    (problems.REASON_NEEDED)."""
    return {
        t.event.value: problems.REASON_NEEDED.format(workflow.command(t.name))
        for t in workflow.TRANSITIONS.values()
        if t.event is not None and workflow.needs_reason(t.name)
    }


def reasoned_deferrals() -> dict[str, str]:
    """Those of reasoned() whose reason is kept in the deferral they write (Write.DEFERRAL: a defer's
    deferral keeps its reason, shown to whoever looks at the deferred item)."""
    return {
        t.event.value: reasoned()[t.event.value]
        for t in workflow.TRANSITIONS.values()
        if t.event is not None and workflow.needs_reason(t.name) and workflow.Write.DEFERRAL in t.writes
    }


def deferral_reason(conn: sa.Connection, deferrals: str, enforced: str, release: str) -> str:
    """plpgsql for the notes guard: an act whose reason is its deferral's (reasoned_deferrals()) keeps one
    that is not blank in the deferral this transaction wrote for the item; a release that left a
    deferral is a defer (the row the database wrote for it says release until a client settles it)."""
    out = ""
    for event, text in sorted(reasoned_deferrals().items()):
        out += f"""
  IF a.event IN ('{event}', {release}) AND EXISTS (SELECT 1 FROM {deferrals} d WHERE d.queue = a.queue
      AND d.item_key = a.item_key AND d.xmin = {THIS_TRANSACTION} AND coalesce(btrim(d.reason), '') = '')
      AND EXISTS (SELECT 1 FROM {enforced} e WHERE e.queue = a.queue) THEN
    RAISE EXCEPTION 'workbench: %', {Renderer.literal_of(conn, text)} USING ERRCODE = '42501',
      HINT = 'the reason is kept in the deferral (its reason column), as workbench writes it';
  END IF;"""
    return out


def _reasons_and_defers(conn: sa.Connection, schema: str) -> str:
    """The notes guard's checks of an act's reason (reasoned()) and of a defer: its queue lets items be
    deferred, and it comes with the deferral this transaction wrote for it, until the time it names."""
    prep = conn.dialect.identifier_preparer
    enforced = prep.format_table(enforced_table(schema))
    deferrals = prep.format_table(own_table(schema, tables.DEFERRALS_TABLE))
    needs_reason = reasoned()
    release, defer = (workflow_sql.event(name) for name in ("release", "defer"))
    reasons = ", ".join(f"'{event}'" for event in needs_reason)
    return f"""  IF a.event IN ({reasons}) AND coalesce(btrim(a.reason), '') = ''
      AND EXISTS (SELECT 1 FROM {enforced} e WHERE e.queue = a.queue) THEN
    {reason_refused("a.event", conn)}
  END IF;{deferral_reason(conn, deferrals, enforced, release)}
  -- A defer is its queue's (the one the lock was taken in), with the deferral this transaction wrote
  -- for it, and names no other time than that deferral's.
  IF a.event = {defer} AND EXISTS (SELECT 1 FROM {enforced} e WHERE e.queue = a.queue) THEN
    IF {refusing_defer(enforced, "a.queue")} THEN
      RAISE EXCEPTION 'workbench: queue % does not let items be deferred (allow_defer = false)', a.queue
        USING ERRCODE = '42501';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM {deferrals} d WHERE d.queue = a.queue AND d.item_key = a.item_key
        AND d.actor = a.actor AND d.xmin = {THIS_TRANSACTION}
        AND (a.detail IS NULL OR jsonb_typeof(a.detail::jsonb -> 'until') IS DISTINCT FROM 'string'
             OR d.until = CAST(CAST(a.detail::jsonb ->> 'until' AS timestamptz) AT TIME ZONE 'UTC' AS timestamp))) THEN
      RAISE EXCEPTION 'workbench: the defer of % item % has no deferral of its own until the time it names',
        a.queue, a.item_key USING ERRCODE = '42501', HINT = 'an item is deferred by a deferral of its queue '
                                                             'written with it, as workbench does';
    END IF;
  END IF;
"""


def _notes_needed(schema: str, prep: Any, enforced: str, deferrals: str, events: str) -> str:
    """The notes guard's check that each act its queue needs a note with (notes_required) has one, by
    the act's login, written in this transaction (a reviewing queue's go with the reviewed queue's)."""
    notes = prep.format_table(own_table(schema, tables.NOTES_TABLE))
    release, defer, complete = (workflow_sql.event(name) for name in ("release", "defer", "complete"))
    return f"""  -- A reviewing queue keeps its notes with the reviewed queue's (its doer reads them there).
  SELECT e.notes, coalesce(e.reviews, e.queue) INTO needed, notebook FROM {enforced} e WHERE e.queue = a.queue;
  IF needed IS NULL THEN
    RETURN NULL;  -- not enforced, or no note required
  END IF;
  FOR candidate IN SELECT split_part(m, ':', 1) AS event, NULLIF(split_part(m, ':', 2), '') AS outcome
      FROM unnest(CASE WHEN a.detail LIKE '{{"recorded_by" : "database"%'
                       THEN ARRAY(SELECT jsonb_array_elements_text(a.detail::jsonb -> 'may_be'))
                       ELSE ARRAY[a.event || ':' || coalesce(a.outcome, '')] END) m LOOP
    ev := CASE WHEN candidate.event = {release} AND EXISTS (SELECT 1 FROM {deferrals} d WHERE d.queue = a.queue
                    AND d.item_key = a.item_key AND d.xmin = {THIS_TRANSACTION}) THEN {defer}
               ELSE candidate.event END;
    CONTINUE WHEN ev NOT IN ({events})
      OR NOT (CASE WHEN ev = {complete} THEN candidate.outcome ELSE ev END) = ANY (needed);
    IF NOT EXISTS (SELECT 1 FROM {notes} n WHERE n.queue = notebook AND n.item_key = a.item_key
                   AND n.author = a.actor AND n.kind = ev AND n.xmin = {THIS_TRANSACTION}) THEN
      RAISE EXCEPTION 'workbench: queue % needs a note with this % of item %: say what happened', a.queue,
        CASE WHEN ev = {complete} THEN 'Complete as ' || candidate.outcome ELSE ev END, a.item_key
        USING ERRCODE = '42501', HINT = 'write the note in the same transaction, as workbench does (--note TEXT)';
    END IF;
  END LOOP;
"""


def notes_guard(conn: sa.Connection, schema: str) -> list[str]:
    """notes_required, checked by the database (Text.CONFIGURED in core/workflow.py): at commit, each
    release, defer or Complete an operator's login made on a queue that needs a note with that action
    (a Complete: with its outcome) comes with a note of that kind, by that login, written in the same
    transaction. At commit, because workbench writes the note in the change's own statement or just
    after it. A row the database wrote and nobody settled may still be any of the changes it names:
    each of them that needs a note needs its note; a release that left a deferral is a defer.

    An act the table requires a reason for (Text.REQUIRED, reasoned(): a supervisor's, a defer) as
    settled by commit keeps a reason: the database writes its row with the change, and the client's own
    audit row settles it with the reason; a defer's reason is also its deferral's, which must not be
    blank either (reasoned_deferrals())."""
    prep = conn.dialect.identifier_preparer
    audit_table = wb_audit_table(schema)
    audit = prep.format_table(audit_table)
    enforced = prep.format_table(enforced_table(schema))
    deferrals = prep.format_table(own_table(schema, tables.DEFERRALS_TABLE))
    guard = qualified(prep, schema, NOTES_GUARD)
    needs_reason = reasoned()
    events = ", ".join(
        dict.fromkeys(
            [workflow_sql.event(name) for name in workflow_sql.noted()] + [f"'{event}'" for event in needs_reason]
        )
    )
    reasons_and_defers = _reasons_and_defers(conn, schema)
    notes_needed = _notes_needed(schema, prep, enforced, deferrals, events)
    body = f"""
DECLARE
  a record;
  needed text[];
  notebook text;
  candidate record;
  ev text;
BEGIN
  IF NOT pg_has_role(session_user, '{OPERATOR_ROLE}', 'USAGE') THEN
    RETURN NULL;  -- logins that are not workbench operators
  END IF;
  SELECT x.* INTO a FROM {audit} x WHERE x.id = NEW.id;  -- as settled by now
{reasons_and_defers}{notes_needed}  RETURN NULL;
END"""
    return [
        (
            f"CREATE OR REPLACE FUNCTION {guard}() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER "
            f"SET search_path = pg_catalog, pg_temp AS $wb${body}\n$wb$"
        ),
        private(f"{guard}()"),
        f"DROP TRIGGER IF EXISTS {prep.quote(NOTES_GUARD)} ON {audit}",
        # Deferred: it looks at the audit row, and the notes, as the transaction leaves them.
        (
            f"CREATE CONSTRAINT TRIGGER {prep.quote(NOTES_GUARD)} AFTER INSERT ON {audit} "
            f"DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.event IN ({events})) EXECUTE FUNCTION {guard}()"
        ),
    ]


def _deferral_sql(conn: sa.Connection, table: sa.Table, expr: sa.ColumnElement[Any], row: str) -> str:
    """`expr` over the deferrals table as the trigger's row `row` (old, new)."""
    adapted = sql_util.ClauseAdapter(table.alias(row)).traverse(expr)
    return str(adapted.compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True})).replace("%%", "%")


def _given_back(audit: str, row: str) -> str:
    """This login released or deferred `row`'s item in this transaction."""
    return (
        f"EXISTS (SELECT 1 FROM {audit} a WHERE a.queue = {row}.queue AND a.item_key = {row}.item_key "
        f"AND a.xmin = {THIS_TRANSACTION} AND a.actor = session_user "
        f"AND a.event IN ('release', 'defer'))"
    )


def _sent_back(enforced: str, audit: str, row: str) -> str:
    """This login's review sent the item back to `row`'s queue in this transaction (a Complete of the
    reviewing queue with its send_back outcome): its deferral to the doer is the review's."""
    return (
        f"EXISTS (SELECT 1 FROM {enforced} e JOIN {audit} a ON a.queue = e.queue WHERE e.reviews = {row}.queue "
        f"AND a.item_key = {row}.item_key AND a.xmin = {THIS_TRANSACTION} AND a.actor = session_user "
        f"AND a.event = 'complete' AND a.outcome = e.send_back)"
    )


def _enforced_for(enforced: str, row: str) -> str:
    """The review `row` is of an enforced queue (the reviewing one or the reviewed one)."""
    return f"EXISTS (SELECT 1 FROM {enforced} WHERE queue IN ({row}.queue, {row}.source))"


def _review_verdict(conn: sa.Connection, enforced: str, audit: str, same: str) -> str:
    """The review guard's branch of a verdict: given by the reviewer (not the doer) whose Complete in the
    reviewing queue, in this transaction, says which; the reviewer and the time are the database's."""
    now = str(clock.db_now().compile(dialect=conn.dialect))
    here = THIS_TRANSACTION
    return f"""  ELSIF OLD.verdict IS NULL AND {same} AND OLD.doer <> session_user THEN
    SELECT * INTO e FROM {enforced} WHERE queue = OLD.queue;
    IF NOT FOUND THEN
      RETURN NEW;  -- the reviewing queue is not enforced
    END IF;
    IF EXISTS (SELECT 1 FROM {audit} a WHERE a.queue = OLD.queue AND a.item_key = OLD.item_key AND a.xmin = {here}
               AND a.actor = session_user AND a.event = 'complete'
               AND {workflow_sql.check_mark(workflow.Check.REVIEWED_OUTCOME)}
               NEW.verdict = CASE WHEN a.outcome = e.send_back THEN '{reviews_mod.SENT_BACK}'
                                  ELSE '{reviews_mod.ACCEPTED}' END) THEN
      NEW.reviewer := session_user;
      NEW.reviewed_at := {now};
      RETURN NEW;
    END IF;
"""


def deferral_guard(conn: sa.Connection, schema: str) -> list[str]:
    """A deferral hides an item from everyone until its time: an operator's login may add one only
    under its own name, within MAX_DAYS, for an item it gave back (released or deferred) in the same
    transaction, and remove one only of such an item or one long lapsed (workbench's clean-up)."""
    prep = conn.dialect.identifier_preparer
    table = own_table(schema, tables.DEFERRALS_TABLE)
    deferrals = prep.format_table(table)
    audit = prep.format_table(wb_audit_table(schema))
    enforced = prep.format_table(enforced_table(schema))
    owner = owner_oid(conn, table)
    guard = qualified(prep, schema, DEFERRAL_GUARD)
    refuses_defer = refusing_defer(enforced, "NEW.queue")

    sql = functools.partial(_deferral_sql, conn, table)
    now = clock.db_now()
    lapsed = sql(deferrals_mod.lapsed(table), "old")
    # Still to come and within MAX_DAYS: neither of the rules the engine and SQL Server refuse a deferral by.
    ahead = sql(sa.not_(sa.or_(deferrals_mod.too_soon(table.c.until), deferrals_mod.too_far(table.c.until))), "new")

    given_back, sent_back = functools.partial(_given_back, audit), functools.partial(_sent_back, enforced, audit)

    reviews = prep.format_table(own_table(schema, tables.REVIEWS_TABLE))
    # Due at once, to the doer of the item's latest review (whose verdict may be written already:
    # the parts of one statement run in no fixed order).
    to_doer = (
        f"NEW.until <= {sql(now, 'new')} AND NEW.actor = (SELECT rv.doer FROM {reviews} rv "
        "WHERE rv.source = NEW.queue AND rv.item_key = NEW.item_key ORDER BY rv.id DESC LIMIT 1)"
    )

    body = f"""
BEGIN
  IF NOT pg_has_role(session_user, '{OPERATOR_ROLE}', 'USAGE') THEN
    RETURN CASE TG_OP WHEN 'DELETE' THEN OLD ELSE NEW END;  -- logins that are not workbench operators
  END IF;
  IF TG_OP = 'DELETE' THEN
    IF ({lapsed}) OR NOT EXISTS (SELECT 1 FROM {enforced} WHERE queue = OLD.queue) OR {given_back("OLD")}
        OR {sent_back("OLD")} THEN
      RETURN OLD;
    END IF;
    RAISE EXCEPTION 'workbench: % may not remove the deferral of % item %', session_user, OLD.queue, OLD.item_key
      USING ERRCODE = '42501', HINT = 'a deferral goes when its item is released or deferred again';
  END IF;
  IF NOT EXISTS (SELECT 1 FROM {enforced} WHERE queue = NEW.queue)
      OR NEW.actor = session_user AND ({ahead}) AND {given_back("NEW")} AND NOT {refuses_defer}
      OR {to_doer} AND {sent_back("NEW")} THEN
    RETURN NEW;
  END IF;
  IF {refuses_defer} THEN
    RAISE EXCEPTION 'workbench: queue % does not let items be deferred (allow_defer = false)', NEW.queue
      USING ERRCODE = '42501';
  END IF;
  RAISE EXCEPTION 'workbench: % may not defer % item % this way', session_user, NEW.queue, NEW.item_key
    USING ERRCODE = '42501',
          HINT = 'an item is deferred by the one who holds it, under their own login, '
                 'at most {deferrals_mod.MAX_DAYS} days ahead';
END"""
    return [
        (
            f"CREATE OR REPLACE FUNCTION {guard}() RETURNS trigger LANGUAGE plpgsql SECURITY INVOKER "
            f"SET search_path = pg_catalog, pg_temp AS $wb${body}\n$wb$"
        ),
        private(f"{guard}()"),
        f"DROP TRIGGER IF EXISTS {prep.quote(DEFERRAL_GUARD)} ON {deferrals}",
        (
            f"CREATE TRIGGER {prep.quote(DEFERRAL_GUARD)} BEFORE INSERT OR DELETE ON {deferrals} FOR EACH ROW "
            f"WHEN (NOT pg_has_role(current_user, {owner}::oid, 'MEMBER')) EXECUTE FUNCTION {guard}()"
        ),
    ]


def review_guard(conn: sa.Connection, schema: str) -> list[str]:
    """Four eyes, checked by the database: an operator's login does not add a review (the protocol
    check records the one a Complete chose; workbench's own copy is dropped), and changes one only
    the ways workbench does: superseded by its doer's new Complete or undo in the same transaction,
    or given its verdict by the reviewer whose Complete in the reviewing queue, in the same
    transaction, says which (the send-back outcome, or any other), never by the doer. Reviews of
    queues the database does not enforce keep what the grants give."""
    prep = conn.dialect.identifier_preparer
    recorded = crumb_text("NEW.queue", "NEW.item_key")
    table = own_table(schema, tables.REVIEWS_TABLE)
    reviews = prep.format_table(table)
    audit = prep.format_table(wb_audit_table(schema))
    enforced = prep.format_table(enforced_table(schema))
    guard = qualified(prep, schema, REVIEW_GUARD)
    here = THIS_TRANSACTION

    enforced_for = functools.partial(_enforced_for, enforced)

    same = " AND ".join(
        f"NEW.{c} IS NOT DISTINCT FROM OLD.{c}" for c in ("id", "queue", "item_key", "source", "doer", "at", "why")
    )
    verdict = _review_verdict(conn, enforced, audit, same)
    body = f"""
DECLARE
  e record;
BEGIN
  IF NOT pg_has_role(session_user, '{OPERATOR_ROLE}', 'USAGE') THEN
    RETURN CASE TG_OP WHEN 'DELETE' THEN OLD ELSE NEW END;  -- logins that are not workbench operators
  END IF;
  IF TG_OP = 'INSERT' THEN
    IF NOT {enforced_for("NEW")} THEN
      RETURN NEW;
    END IF;
    IF strpos(coalesce(current_setting('{REVIEWED_SETTING}', true), ''), {recorded}) > 0 THEN
      RETURN NULL;  -- the database recorded this review with the Complete that chose it
    END IF;
  ELSIF TG_OP = 'DELETE' THEN
    IF NOT {enforced_for("OLD")} THEN
      RETURN OLD;
    END IF;
  ELSIF NOT {enforced_for("OLD")} THEN
    RETURN NEW;
  ELSIF OLD.verdict IS NULL AND {same} AND NEW.verdict = '{reviews_mod.SUPERSEDED}' THEN
    IF EXISTS (SELECT 1 FROM {reviews} rv WHERE rv.id = OLD.id AND rv.xmin = {here}) THEN
      RETURN NULL;  -- the review the database recorded in this transaction stays open
    END IF;
    IF EXISTS (SELECT 1 FROM {audit} a WHERE a.queue = OLD.source AND a.item_key = OLD.item_key AND a.xmin = {here}
               AND a.actor = session_user AND a.event IN ('complete', 'undo')) THEN
      RETURN NEW;
    END IF;
{verdict}  END IF;
  RAISE EXCEPTION 'workbench: % may not write this review of % item %', session_user,
    CASE TG_OP WHEN 'DELETE' THEN OLD.queue ELSE NEW.queue END,
    CASE TG_OP WHEN 'DELETE' THEN OLD.item_key ELSE NEW.item_key END
    USING ERRCODE = '42501', HINT = 'reviews are recorded by the Complete that chooses them and decided by '
                                    'the reviewer''s Complete, someone else than the one who did the work';
END"""
    return [
        (
            f"CREATE OR REPLACE FUNCTION {guard}() RETURNS trigger LANGUAGE plpgsql SECURITY INVOKER "
            f"SET search_path = pg_catalog, pg_temp AS $wb${body}\n$wb$"
        ),
        private(f"{guard}()"),
        f"DROP TRIGGER IF EXISTS {prep.quote(REVIEW_GUARD)} ON {reviews}",
        (
            f"CREATE TRIGGER {prep.quote(REVIEW_GUARD)} BEFORE INSERT OR UPDATE OR DELETE ON {reviews} FOR EACH ROW "
            f"WHEN (NOT pg_has_role(current_user, {owner_oid(conn, table)}::oid, 'MEMBER')) EXECUTE FUNCTION {guard}()"
        ),
    ]
