"""The queue protocol for SQL Server as a T-SQL script: operators write only through procedures that run as the owner.

The PostgreSQL design (rules/pg_*.py) checks every write with a trigger. SQL Server refuses an
UPDATE … OUTPUT without INTO on a table with an enabled trigger (error 334), and workbench's claim
there is exactly such a statement; so here the model is the one procedures give:

- operators (database role workbench_operator) may SELECT the queue table and the audit trail but
  not INSERT, UPDATE or DELETE them (DENY: also against grants of other roles);
- every operation is a procedure WITH EXECUTE AS OWNER, built from workbench's own statements for
  the queue (the claim's branches and order, the guarded writes' fences and values), with the
  actor taken from ORIGINAL_LOGIN() (SUSER_SNAME() would name the owner inside EXECUTE AS OWNER),
  checking holder, token, live lock and the queue's limits on the database clock, and writing its
  audit row (the token's digest) in the same transaction;
- notes and four-eyes reviews are read by all and written only by the procedures (a note, undo, a
  Complete chosen for review in the database, a reviewer's verdict);
- supervisors (workbench_supervisor, a member of workbench_operator) may EXECUTE force-release,
  reassign, reopen and move as well.

It is rendered as text (no SQL Server runs here; tests/test_mssql_protocol.py checks the text)
and `workbench grants QUEUE` prints it for review; once applied, workbench calls the procedures
(procedures.py, which finds each one's parameters here: procedures()). The procedures' parts are in
mssql_parts.py, an operator's in mssql_operator.py, a supervisor's (and undo) here.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from workbench.config import model
from workbench.core import errors, models, problems, workflow
from workbench.db import clock, lockrules, mapping, rowrules
from workbench.db.rules.mssql_operator import OperatorProcedures
from workbench.db.rules.mssql_parts import (
    CARRIES,
    CHANGES_SAID,
    ITEM,
    KEY,
    LOGIN,
    OPERATIONS,
    OPERATOR_ROLE,
    Said,
    Sql,
    indent,
    minutes,
    minutes_said,
    one_line,
)


class Procedures(OperatorProcedures):
    """A queue's procedures: undo and a supervisor's (force-release, reassign, reopen, take, move) here."""

    def arguments(self, operation: str) -> list[str]:
        reason = f"@p_reason {self.reason_type}"
        match operation:
            case "undo" | "take":
                return [self._key()]
            case "reopen" | "force_release":
                return [self._key(), reason]
            case "reassign":
                return [self._key(), f"@p_to {self.user_type}", reason]
            case "move":
                return [self._key(), "@p_changes nvarchar(max)", reason]
        return super().arguments(operation)

    def _undo(self) -> str:
        """The login takes back its own Complete, as WorkQueue.undo_complete does: per outcome one UPDATE
        that holds to the table's rules (db/rowrules.py): the trail's (the item's last event the login's
        Complete with that outcome, within undo_within), the row's (finished, the outcome's values, and a
        review's, still in the row) and the lock's (free); the item gets on_reopen's values and a fresh
        lock of the login's, as after a claim. Refused, the last event read says why, as the engine's."""
        q, sql, a = self.q, Sql(self.dialect, {}), self.audit
        here = q.key == KEY
        last = (
            sa.select(a.c.event, a.c.actor, a.c.outcome, a.c.at, a.c.detail)
            .where(a.c.queue == q.name, a.c.item_key == ITEM)
            .order_by(a.c.id.desc())
            .limit(1)
        )
        to_review = self.trail.to_review
        branches = self._undo_branches()
        withdraw = ""
        if to_review is not None:
            withdraw = (
                f"  IF JSON_VALUE(@detail, '$.review') IS NOT NULL\n"
                f"    {one_line(sql(to_review.withdraw_statement(ITEM)))};\n"
            )
        token = sql(q.shape.as_text(q.shape.token_column()))
        why = self._undo_refused()
        body = (
            f"  DECLARE @found int = 0, @event nvarchar(20), @actor nvarchar(128), @outcome nvarchar(100), "
            f"@at datetime2, @detail nvarchar(max), @p_token nvarchar(64), @age int;\n"
            f"  BEGIN TRANSACTION;\n"
            f"  SELECT @found = 1 FROM {self.table} WITH (UPDLOCK, ROWLOCK) WHERE {sql(here)};\n"
            f"  SELECT @event = event, @actor = actor, @outcome = outcome, @at = at, @detail = detail FROM "
            f"({one_line(sql(last))}) AS wb_last;\n"
            + self.no_item("@found = 0", rollback=True)
            + f"{branches}"
            + f"  IF @done = 0\n  BEGIN\n{indent(why)}  END;\n"
            + f"{withdraw}"
            f"  SELECT @p_token = {token} FROM {self.table} WHERE {sql(here)};\n"
            + self.audit_insert(models.EventKind.UNDO.value, token=None, outcome="@outcome")
            + self.audit_insert(models.EventKind.CLAIM.value)
            + f"  COMMIT;\n  {one_line(sql(self._row_with_lock(sa.true())))};\n"
        )
        return body

    def _undo_branches(self) -> str:
        """Undo's UPDATE per outcome, each holding to the table's rules for a Complete with that outcome."""
        q, sql, a = self.q, Sql(self.dialect, {}), self.audit
        now = q.now()
        here = q.key == KEY
        writes = {
            **q.writes(q.on_reopen, LOGIN, now),
            **q.lock_writes(LOGIN, now, q.shape.new_token()),
            **q.writes(q.on_claim, LOGIN, now),
        }
        to_review = self.trail.to_review
        chosen: sa.ColumnElement[Any] = sa.literal_column("JSON_VALUE(@detail, '$.review')")
        branches = ""
        free = lockrules.guard(q, "undo", now)  # the table's lock rule (FREE), as the engine's undo carries it
        for outcome in q.config.outcomes:
            rule = rowrules.before(q, "undo", user=LOGIN, outcome=outcome.name)
            still = sa.and_(sa.true(), *rule.state)
            if to_review is not None and q.review_writes:
                # Chosen for review, the review's values were written after the outcome's.
                reviewed = rowrules.before(q, "undo", user=LOGIN, outcome=outcome.name, reviewed=True)
                still = sa.or_(
                    sa.and_(chosen.is_(None), still), sa.and_(chosen.is_not(None), sa.true(), *reviewed.state)
                )
            history = rowrules.trail(q, "undo", a, item=ITEM, user=LOGIN, outcome=outcome.name)
            update = (
                sa.update(q.table)
                .where(here, *rule.scope, free, still, *(() if history is None else (history,)))
                .values(writes)
            )
            # No semicolon after END: it would end the IF, and the ELSE IF after it would not parse.
            branches += (
                f"  {'ELSE IF' if branches else 'IF'} @outcome = {self.text(outcome.name)}\n  BEGIN\n"
                f"    {one_line(sql(update))};\n    SET @done = @@ROWCOUNT;\n  END\n"
            )
        return branches

    def _undo_refused(self) -> str:
        """Why undo's UPDATE (which decided) refused, in the engine's words (WorkQueue._undo_refused): the
        last event read says it; else its row changed since (or the trail did, under it)."""
        q, sql = self.q, Sql(self.dialect, {})
        limit = rowrules.window(q, "undo")
        item = self.item()
        why = (
            self.refused("@event IS NULL", problems.UNDO_NOTHING, q.name, item, rollback=True)
            + self.refused(
                f"@event <> {self.text(models.EventKind.COMPLETE.value)} OR @actor <> @login",
                problems.UNDO_NOT_YOURS,
                q.name,
                item,
                Said("@event"),
                Said("@actor"),
                rollback=True,
            )
            + f"  SET @age = DATEDIFF(second, @at, {sql(clock.db_now())});\n"
            + (
                ""
                if limit is None
                else self.refused(
                    f"@age > {int(limit)}",
                    problems.UNDO_TOO_LATE,
                    q.name,
                    item,
                    minutes_said("@age"),
                    minutes(int(limit)),
                    rollback=True,
                )
            )
        )
        return why + "".join(
            f"  {line}\n" for line in ["ROLLBACK;", *self.refusal(problems.UNDO_CHANGED, q.name, item).splitlines()]
        )

    def _reopen(self) -> str:
        """A supervisor puts a finished item back to waiting with the queue's on_reopen values, as
        WorkQueue.reopen does: refused while someone holds it (force-release first) or while it waits."""
        q, sql = self.q, Sql(self.dialect, {})
        now = q.now()
        here = q.key == KEY
        waiting = sql(sa.case((sa.and_(*q.scope_clause(), q.todo_clause()), 1), else_=0))
        # The table's lock rule (FREE), as the engine's reopen reads it and its UPDATE carries it.
        free = lockrules.guard(q, "reopen", now)
        held = sql(sa.case((free, 0), else_=1))
        # Who holds it, as Supervision._refuse_reopen names them.
        holder = Said(f"COALESCE(@holder, {self.text('another queue of its table')})")
        # The table's row rule (FINISHED) and state after (back in todo, as the row reads with on_reopen's
        # values written), as the engine's reopen asks db/rowrules.py for them.
        values = q.writes(q.on_reopen, LOGIN, now)
        reopened = (
            sa.update(q.table)
            .where(here, *rowrules.before(q, "reopen").all, free, rowrules.written_after(q, "reopen", values))
            .values(values)
        )
        body = (
            f"  DECLARE @found int = 0, @held int = 0, @waiting int = 0, @holder {self.user_type};\n"
            + self.reason_check("reopen")
            + f"  BEGIN TRANSACTION;\n"
            f"  SELECT @found = 1, @held = {one_line(held)}, @waiting = {one_line(waiting)}, "
            f"@holder = {sql(q.user)} FROM {self.table} WITH (UPDLOCK, ROWLOCK) WHERE {sql(here)};\n"
            + self.no_item("@found = 0", rollback=True)
            + self.refused("@held = 1", problems.REOPEN_HELD, q.name, self.item(), holder, rollback=True)
            + self.refused("@waiting = 1", problems.REOPEN_WAITING, q.name, self.item(), rollback=True)
            + f"  {one_line(sql(reopened))};\n  SET @done = @@ROWCOUNT;\n"
            + self.audit_insert(models.EventKind.REOPEN.value, owner="NULL", token=None, reason="@p_reason")
            + "  COMMIT;\n"
        )
        return body + self._done()

    def _take(self) -> str:
        """A supervisor takes an escalated item to work it, as Supervision.take does: in one UPDATE that
        holds to the row rule (ESCALATED: out of todo, on_escalate's values still there) and the lock rule
        (FREE), on_reopen's values, a fresh lock of the login's and on_claim's; recorded as its claim.
        Of two supervisors taking it at once, one does; the other is told it is not waiting any more."""
        q, sql = self.q, Sql(self.dialect, {})
        now = q.now()
        here = q.key == KEY
        # The table's row rule (ESCALATED), as the engine's take asks db/rowrules.py for it.
        escalated = rowrules.before(q, "take").all
        writes = {
            **q.writes(q.on_reopen, LOGIN, now),
            **q.lock_writes(LOGIN, now, q.shape.new_token()),
            **q.writes(q.on_claim, LOGIN, now),
        }
        taken = sa.update(q.table).where(here, lockrules.guard(q, "take", now), *escalated).values(writes)
        token = sql(q.shape.as_text(q.shape.token_column()))
        body = (
            "  DECLARE @found int = 0, @p_token nvarchar(64);\n"
            "  BEGIN TRANSACTION;\n"
            f"  SELECT @found = 1 FROM {self.table} WITH (UPDLOCK, ROWLOCK) WHERE {sql(here)};\n"
            + self.no_item("@found = 0", rollback=True)
            + f"  {one_line(sql(taken))};\n  SET @done = @@ROWCOUNT;\n"
            + self.refused("@done = 0", problems.TAKE_NOT_ESCALATED, q.name, self.item(), rollback=True)
            + f"  SELECT @p_token = {token} FROM {self.table} WHERE {sql(here)};\n"
            + self.audit_insert(models.EventKind.CLAIM.value)
            + f"  COMMIT;\n  {one_line(sql(self._row_with_lock(sa.true())))};\n"
        )
        return body

    def _move(self) -> str:
        """A supervisor moves one waiting item nobody holds (WorkQueue.move, per key): @p_changes (JSON,
        column -> value) written to movable columns only, refused where it would take the item out of
        the work to do; the audit row keeps each changed column's value before and after."""
        q, sql = self.q, Sql(self.dialect, {})
        here = q.key == KEY
        # The columns a move's values may write, and the refusal of any other, as the engine's (BoundQueue.given).
        movable, unmovable = self.given("move", "@p_changes", problems.MOVE_NOT_MOVABLE)
        values = {name: sa.literal_column(self.edited(name, "@p_changes"), q.table.c[name].type) for name in movable}
        # The table's row rule (WAITING) and state after (still waiting, or out of the queue's scope, as the
        # row reads with the values written) from db/rowrules.py, as the engine's move asks for them, and
        # its lock rule (FREE).
        waiting = sa.and_(*rowrules.before(q, "move").all, lockrules.guard(q, "move", q.now()))
        finished = sa.not_(rowrules.written_after(q, "move", values))
        # Each movable column's value before and after, as JSON (FOR JSON keeps each type's notation).
        row = sa.select(*(q.table.c[name] for name in movable)).where(here)
        as_json = f"({one_line(sql(row))} FOR JSON PATH, WITHOUT_ARRAY_WRAPPER, INCLUDE_NULL_VALUES)"
        hidden = ", ".join(self.text(name) for name in sorted(q.audit_hidden)) or "NULL"

        def value(side: str) -> str:
            return (
                f"CASE WHEN c.[key] IN ({hidden}) THEN N'null' WHEN {side}.[type] = 0 THEN N'null' "
                f"WHEN {side}.[type] = 1 THEN CONCAT(N'\"', STRING_ESCAPE({side}.[value], 'json'), N'\"') "
                f"ELSE {side}.[value] END"
            )

        detail = (
            f"(SELECT CONCAT(N'{{\"changes\": {{', STRING_AGG(CONCAT(N'\"', c.[key], N'\": [', {value('b')}, "
            f"N', ', {value('a')}, N']'), N', ') WITHIN GROUP (ORDER BY c.[key]), N'}}}}') "
            f"FROM OPENJSON(@p_changes) AS c JOIN OPENJSON(@before) AS b ON b.[key] = c.[key] "
            f"JOIN OPENJSON(@after) AS a ON a.[key] = c.[key] "
            f"WHERE NOT (b.[type] = a.[type] AND (b.[type] = 0 OR b.[value] = a.[value])))"
        )
        update = sa.update(q.table).where(here, waiting).values(values)
        body = (
            "  DECLARE @found int = 0, @finishes int = 0, @before nvarchar(max), @after nvarchar(max);\n"
            + self.reason_check("move")
            + self.refused(
                "@p_changes IS NULL OR NOT EXISTS (SELECT 1 FROM OPENJSON(@p_changes))", problems.MOVE_NOTHING
            )
            + unmovable
            + f"  BEGIN TRANSACTION;\n"
            f"  SELECT @found = 1, @finishes = {one_line(sql(sa.case((finished, 1), else_=0)))} "
            f"FROM {self.table} WITH (UPDLOCK, ROWLOCK) WHERE {one_line(sql(sa.and_(here, waiting)))};\n"
            # The engine reads it as the row having changed since its own read (REFUSALS: lost).
            + self.refused("@found = 0", problems.MOVE_NOT_WAITING, q.name, self.item(), rollback=True)
            # The changes as the engine shows them: COL=VALUE, …
            + self.refused("@finishes = 1", problems.MOVE_FINISHES, q.name, Said(CHANGES_SAID), rollback=True)
            + f"  SET @before = {as_json};\n"
            f"  {one_line(sql(update))};\n  SET @done = @@ROWCOUNT;\n"
            f"  SET @after = {as_json};\n"
            + self.audit_insert(
                models.EventKind.MOVE.value, owner="NULL", token=None, reason="@p_reason", detail=detail
            )
            + "  COMMIT;\n"
        )
        return body + self._done()

    def _force_release(self) -> str:
        return self._taken(to_user=False)

    def _reassign(self) -> str:
        return self._taken(to_user=True)


def script(dialect: Any, q: mapping.BoundQueue, schema: str, reviewed: model.QueueConfig | None = None) -> list[str]:
    """The batches (each run on its own, as sqlcmd's GO separates them) that enforce `q`'s protocol;
    `reviewed`: the queue whose completions `q` reviews (four eyes), if any."""
    _require_covered(q)
    builder = Procedures(dialect, q, schema, reviewed)
    return [*builder.grants(), *(builder.procedure(op) for op in builder.operations), *builder.executes()]


def _require_covered(q: mapping.BoundQueue) -> None:
    """UsageError for a queue the procedures do not cover; NotRendered for a transition none carries."""
    problem = q.shape.grants_problem() or (
        "its locks live in a separate table, which the SQL Server procedures do not cover"
        if q.shape.separate_locks
        else None
        if q.shape.token_in_row
        else "the procedures need a token column in the table (lock.token)"
    )
    if problem:
        raise errors.UsageError(f"queue {q.name}: {problem}")
    # A transition of the table no procedure carries fails here, naming this file (not mid-script).
    workflow.require_rendered(workflow.Rendering.MSSQL, (name for carried in CARRIES.values() for name in carried))


def procedures(dialect: Any, q: mapping.BoundQueue, schema: str) -> dict[str, tuple[str, list[str]]]:
    """What script() creates for `q`, as workbench calls it: per operation, the procedure's name (quoted
    as the dialect quotes it) and its parameters' names in order (p_key, p_token, …): as the procedures
    declare them (Procedures.arguments), without building their bodies; refused as script() refuses."""
    _require_covered(q)
    builder = Procedures(dialect, q, schema)
    return {
        op: (builder.name(op), [a.split()[0].removeprefix("@") for a in builder.arguments(op)])
        for op in builder.operations
    }


def revoke_script(dialect: Any, q: mapping.BoundQueue, schema: str) -> list[str]:
    """What undoes script() for `q`: its procedures and the operators' grants and denials on its
    table. The roles and the audit trail's denials stay: other queues and people may use them."""
    builder = Procedures(dialect, q, schema)
    return [
        *(f"DROP PROCEDURE IF EXISTS {builder.name(op)};" for op in OPERATIONS),
        f"REVOKE SELECT, INSERT, UPDATE, DELETE ON {builder.table} FROM {builder.quoted(OPERATOR_ROLE)};",
    ]
