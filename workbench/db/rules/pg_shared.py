"""PostgreSQL under grants: what every enforced queue shares (the audit guard and settle function), and its removal."""

from __future__ import annotations

import functools

import sqlalchemy as sa

from workbench.core import workflow
from workbench.db import tables, workflow_sql
from workbench.db.rules.pg_guards import (
    deferral_guard,
    notes_guard,
    reason_refused,
    reasoned,
    refusing_defer,
    review_guard,
)
from workbench.db.rules.pg_names import (
    AUDIT_GUARD,
    AUDITED_SETTING,
    DEFERRAL_GUARD,
    NOTES_GUARD,
    OPERATOR_ROLE,
    REVIEW_GUARD,
    SETTLE,
    SETTLE_ARGS,
    THIS_TRANSACTION,
    Renderer,
    create_function,
    crumb_text,
    enforced_table,
    own_table,
    owner_oid,
    private,
    qualified,
    wb_audit_table,
)


def _relabel() -> str:
    """SQL: the events a row of another queue over the same table may be relabelled to."""
    # The events a row of another queue over the same table may be relabelled to: those of a change of
    # a row nobody holds (a claim, a supervisor's move or reopen, an undo), which the table's trigger
    # records under the first of its queues that admits it, while the client acted through another;
    # and the expire a claim of a run-out lock records with it. A change under a lock belongs to the
    # queue the lock was taken in (taken_here), whatever a label says: never relabelled.
    free = (workflow.LockRule.FREE_OR_STALE, workflow.LockRule.FREE)
    relabelled = {e.value for t in workflow.TRANSITIONS.values() if t.lock in free for e in t.events}
    return "(" + ", ".join(f"'{e}'" for e in sorted(relabelled | {workflow_sql.event("expire")[1:-1]})) + ")"


def _unheld_in() -> str:
    """SQL: the events of a lock-table queue's rows that may take a sibling's name."""
    # A lock-table queue's lock row names the queue it was taken in, and the rows written with it (a
    # claim, the expire of a run-out lock) are that queue's: of its rows only those of a change of an
    # item nobody holds (LockRule.FREE, a move or a reopen, which the table's trigger records under the
    # first queue that admits it) may take a sibling's name; a take's claim is its lock row's, as a claim's.
    unheld = {
        e.value
        for t in workflow.TRANSITIONS.values()
        if t.lock is workflow.LockRule.FREE
        and workflow.Rendering.PG_LOCK_TABLE not in t.not_in
        and workflow.Write.LOCK_TAKEN not in t.writes
        for e in t.events
    }
    return "(" + ", ".join(f"'{e}'" for e in sorted(unheld)) + ")"


class _AuditGuard:
    """The audit table's guard and the settle function: what they share, and each one's body."""

    def __init__(self, conn: sa.Connection, schema: str) -> None:
        self.conn = conn
        prep = conn.dialect.identifier_preparer
        self.audit_table = wb_audit_table(schema)
        self.audit = prep.format_table(self.audit_table)
        self.enforced = prep.format_table(enforced_table(schema))
        self.guard, self.settle = qualified(prep, schema, AUDIT_GUARD), qualified(prep, schema, SETTLE)
        self.relabel, self.unheld_in = _relabel(), _unheld_in()
        self.written_here = f"a.xmin = {THIS_TRANSACTION}"  # rows this transaction wrote

    @staticmethod
    def may_be(event: str, outcome: str) -> str:
        """The row the database wrote names `event` (with `outcome`) among the events it may be."""
        return (
            f"(prior.detail LIKE '{{\"recorded_by\" : \"database\"%' AND (prior.detail::jsonb -> 'may_be') "
            f"? ({event} || ':' || coalesce({outcome}, '')))"
        )

    def sibling(self, queue: str, acted: str) -> str:
        """`queue` is `acted` or an enforced queue over the same table."""
        enforced = self.enforced
        return (
            f"({queue} = {acted} OR {queue} IN (SELECT s.queue FROM {enforced} s JOIN {enforced} e "
            f"ON e.tbl = s.tbl WHERE e.queue = {acted}))"
        )

    def relabels(self, event: str, queue: str) -> str:
        """SQL: a row of `queue` recording `event` may take a sibling queue's name."""
        return (
            f"({event} IN {self.unheld_in} OR {event} IN {self.relabel} AND NOT EXISTS "
            f"(SELECT 1 FROM {self.enforced} l WHERE l.queue = {queue} AND l.locks IS NOT NULL))"
        )

    def guard_body(self) -> str:
        """The audit table's guard: an operator's own audit row is dropped, settles the database's, or is refused."""
        enforced, audit, settle, written_here = self.enforced, self.audit, self.settle, self.written_here
        may_be, sibling, relabels = self.may_be, self.sibling, self.relabels
        # Runs as the caller (SECURITY INVOKER): current_user (in the trigger's WHEN clause) tells the
        # protocol trigger, which writes as the table's owner, from an operator's own statement.
        return f"""
DECLARE
  prior record;
BEGIN
  IF NEW.reason IS NULL AND NEW.detail IS NULL AND strpos(current_setting('{AUDITED_SETTING}', true),
      {crumb_text("NEW.queue", "NEW.item_key", "NEW.event", "NEW.owner", "NEW.outcome")}) > 0 THEN
    RETURN NULL;  -- the database wrote this very row for the change it came with
  END IF;
  IF NOT pg_has_role(session_user, '{OPERATOR_ROLE}', 'USAGE') THEN
    RETURN NEW;  -- logins that are not workbench operators
  END IF;
  PERFORM 1 FROM {enforced} WHERE queue = NEW.queue;
  IF NOT FOUND THEN
    RETURN NEW;  -- a queue whose protocol the database does not enforce
  END IF;
  -- The database wrote this change's audit row already: this one is dropped, or settles it. Queues
  -- that share a table (one todo served twice) admit the same claims, and the table's trigger writes
  -- the row of the first that admits it: a claim's row of a sibling queue is this change's too, and
  -- takes the queue the client acted through (its own queue's rows first). A change under a lock is
  -- the queue's the lock was taken in: its row is never another's.
  FOR prior IN SELECT a.id, a.queue, a.event, a.owner, a.outcome, a.reason, a.detail FROM {audit} a
      WHERE (a.queue = NEW.queue OR {relabels("a.event", "a.queue")} AND NEW.event = a.event
             AND {sibling("a.queue", "NEW.queue")})
      AND a.item_key = NEW.item_key AND {written_here}
      ORDER BY a.queue = NEW.queue DESC, a.id DESC LIMIT 16 LOOP
    CONTINUE WHEN prior.owner IS DISTINCT FROM NEW.owner;
    IF prior.event = NEW.event AND prior.outcome IS NOT DISTINCT FROM NEW.outcome
        AND prior.reason IS NOT DISTINCT FROM NEW.reason AND prior.detail IS NOT DISTINCT FROM NEW.detail
        AND prior.queue = NEW.queue THEN
      RETURN NULL;
    END IF;
    IF prior.event = NEW.event AND prior.outcome IS NOT DISTINCT FROM NEW.outcome
        OR {may_be("NEW.event", "NEW.outcome")} THEN
      PERFORM {settle}(prior.id, NEW.event, NEW.outcome, NEW.reason, NEW.detail, NEW.queue);
      RETURN NULL;
    END IF;
  END LOOP;
  RAISE EXCEPTION 'workbench: % may not write this % row for % item %: no such change was made',
    session_user, NEW.event, NEW.queue, NEW.item_key
    USING ERRCODE = '42501', HINT = 'the database writes the audit row of every change to a queue row itself';
END"""

    def settle_body(self) -> str:
        """The settle function: an audit row the database wrote this transaction, settled as the client says."""
        conn, audit, written_here = self.conn, self.audit, self.written_here
        may_be, sibling, relabels = self.may_be, self.sibling, self.relabels
        refuses_defer = functools.partial(refusing_defer, self.enforced)
        return f"""
DECLARE
  prior record;
BEGIN
  SELECT a.* INTO prior FROM {audit} a WHERE a.id = settle_id AND {written_here} FOR UPDATE;
  -- A claim's row of one queue may be settled to another over the same table (see the guard); any
  -- other row keeps its queue, the one the lock was taken in.
  IF NOT FOUND OR prior.actor <> session_user OR NOT (coalesce(p_queue, prior.queue) = prior.queue
      OR {relabels("prior.event", "prior.queue")} AND p_event = prior.event AND {sibling("prior.queue", "p_queue")})
      OR NOT (prior.event = p_event AND prior.outcome IS NOT DISTINCT FROM p_outcome
              OR {may_be("p_event", "p_outcome")}) THEN
    RAISE EXCEPTION 'workbench: % may not change audit row %', session_user, settle_id USING ERRCODE = '42501';
  END IF;
  IF p_event IN ({", ".join(f"'{event}'" for event in reasoned())}) AND coalesce(btrim(p_reason), '') = '' THEN
    -- An act that needs a reason keeps it (reasoned()), also where its row was written as another event.
    {reason_refused("p_event", conn)}
  END IF;
  IF p_event = {workflow_sql.event("defer")} AND {refuses_defer("prior.queue")} THEN
    RAISE EXCEPTION 'workbench: queue % does not let items be deferred (allow_defer = false)', prior.queue
      USING ERRCODE = '42501';
  END IF;
  -- What the change edited is the database's account (written with the row), never the caller's; the
  -- rest of the caller's detail is kept if it is a JSON object, as workbench's is.
  UPDATE {audit} SET queue = coalesce(p_queue, prior.queue), event = p_event, outcome = p_outcome,
    reason = p_reason,
    detail = NULLIF((CASE WHEN jsonb_typeof(p_detail::jsonb) = 'object' THEN p_detail::jsonb - 'changes'
                          ELSE '{{}}' END) || CASE
      WHEN jsonb_typeof(prior.detail::jsonb -> 'changes') = 'object' AND prior.detail::jsonb -> 'changes' <> '{{}}'
      THEN jsonb_build_object('changes', prior.detail::jsonb -> 'changes') ELSE '{{}}' END, '{{}}')::text
    WHERE id = settle_id;
END"""


def shared(conn: sa.Connection, schema: str) -> list[str]:
    """What every enforced queue shares: the audit table's guard, the function that settles an audit
    row the database wrote, and the list of enforced queues."""
    prep = conn.dialect.identifier_preparer
    parts = _AuditGuard(conn, schema)
    audit, enforced, guard, settle = parts.audit, parts.enforced, parts.guard, parts.settle
    owner = owner_oid(conn, parts.audit_table)
    operator = prep.quote(OPERATOR_ROLE)
    guard_body, settle_body = parts.guard_body(), parts.settle_body()
    return [
        f"CREATE TABLE IF NOT EXISTS {enforced} (queue varchar(100) PRIMARY KEY)",
        f"ALTER TABLE {enforced} ADD COLUMN IF NOT EXISTS tbl oid",  # the queue's table
        f"ALTER TABLE {enforced} ADD COLUMN IF NOT EXISTS locks oid",  # its separate lock table
        # A reviewing queue: the queue whose completions it reviews, and its outcome that sends them back.
        f"ALTER TABLE {enforced} ADD COLUMN IF NOT EXISTS reviews varchar(100)",
        f"ALTER TABLE {enforced} ADD COLUMN IF NOT EXISTS send_back varchar(100)",
        # The queue's notes_required and allow_defer (enforced_row), for the guards below.
        f"ALTER TABLE {enforced} ADD COLUMN IF NOT EXISTS notes text[]",
        f"ALTER TABLE {enforced} ADD COLUMN IF NOT EXISTS defers boolean",
        f"REVOKE ALL ON {enforced} FROM PUBLIC",
        f"GRANT SELECT ON {enforced} TO {operator}",
        # The settle before queues sharing a table could relabel a row had no queue argument.
        f"DROP FUNCTION IF EXISTS {settle}(bigint, text, text, text, text)",
        (
            f"CREATE OR REPLACE FUNCTION {settle}(settle_id bigint, p_event text, p_outcome text, "
            f"p_reason text, p_detail text, p_queue text DEFAULT NULL) RETURNS void LANGUAGE plpgsql "
            "SECURITY DEFINER "
            f"SET search_path = pg_catalog, pg_temp AS $wb${settle_body}\n$wb$"
        ),
        f"REVOKE ALL ON FUNCTION {settle}({SETTLE_ARGS}) FROM PUBLIC",
        f"GRANT EXECUTE ON FUNCTION {settle}({SETTLE_ARGS}) TO {operator}",
        create_function(guard, guard_body, security="INVOKER"),
        private(f"{guard}()"),
        f"DROP TRIGGER IF EXISTS {prep.quote(AUDIT_GUARD)} ON {audit}",
        # Rows written as the owner (by the protocol trigger, or by the owner) are not checked.
        (
            f"CREATE TRIGGER {prep.quote(AUDIT_GUARD)} BEFORE INSERT ON {audit} FOR EACH ROW "
            f"WHEN (NOT pg_has_role(current_user, {owner}::oid, 'MEMBER')) EXECUTE FUNCTION {guard}()"
        ),
        *deferral_guard(conn, schema),
        *review_guard(conn, schema),
        *notes_guard(conn, schema),
    ]


def drop_shared(conn: sa.Connection, schema: str, also: list[str]) -> str:
    """A block that removes what queues share once no enforced queue is left, with `also`."""
    prep = conn.dialect.identifier_preparer
    audit = prep.format_table(wb_audit_table(schema))
    enforced = prep.format_table(enforced_table(schema))
    deferrals = prep.format_table(own_table(schema, tables.DEFERRALS_TABLE))
    statements = [
        f"DROP TRIGGER IF EXISTS {prep.quote(AUDIT_GUARD)} ON {audit}",
        f"DROP TRIGGER IF EXISTS {prep.quote(DEFERRAL_GUARD)} ON {deferrals}",
        f"DROP FUNCTION IF EXISTS {qualified(prep, schema, DEFERRAL_GUARD)}()",
        (
            f"DROP TRIGGER IF EXISTS {prep.quote(REVIEW_GUARD)} ON "
            f"{prep.format_table(own_table(schema, tables.REVIEWS_TABLE))}"
        ),
        f"DROP FUNCTION IF EXISTS {qualified(prep, schema, REVIEW_GUARD)}()",
        f"DROP TRIGGER IF EXISTS {prep.quote(NOTES_GUARD)} ON {audit}",
        f"DROP FUNCTION IF EXISTS {qualified(prep, schema, NOTES_GUARD)}()",
        f"DROP TABLE IF EXISTS {enforced}",
        f"DROP FUNCTION IF EXISTS {qualified(prep, schema, AUDIT_GUARD)}()",
        f"DROP FUNCTION IF EXISTS {qualified(prep, schema, SETTLE)}({SETTLE_ARGS})",
        f"DROP FUNCTION IF EXISTS {qualified(prep, schema, SETTLE)}(bigint, text, text, text, text)",  # before 6
        *also,
    ]
    body = "".join(f"    EXECUTE {Renderer.literal_of(conn, text)};\n" for text in statements)
    return (
        "DO $wb$\nBEGIN\n"
        f"  IF to_regclass({Renderer.literal_of(conn, enforced)}) IS NULL\n"
        f"      OR NOT EXISTS (SELECT 1 FROM {enforced}) THEN\n"
        f"{body}  END IF;\nEND\n$wb$"
    )
