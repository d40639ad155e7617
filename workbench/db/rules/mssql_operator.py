"""SQL Server under grants: an operator's procedures (next, save, extend, release, escalate, defer, note,
complete), each built from workbench's own statements for the queue."""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

import sqlalchemy as sa

from workbench.core import models, problems, workflow
from workbench.db import clock, guarded, lockrules
from workbench.db import deferrals as deferrals_mod
from workbench.db import notes as notes_mod
from workbench.db import reviews as reviews_mod
from workbench.db.claims import base
from workbench.db.claims import mssql as mssql_claims
from workbench.db.rules.mssql_parts import (
    DONE,
    ITEM,
    KEY,
    LOGIN,
    NOTE_ARGUMENT,
    PICK,
    ProcedureParts,
    Said,
    Sql,
    filter_parameters,
    indent,
    one_line,
    unless_null,
)


class OperatorProcedures(ProcedureParts):
    """An operator's procedures: one method per operation, returning its body; arguments() declares their parameters."""

    def arguments(self, operation: str) -> list[str]:
        # Declared apart from the bodies: workbench binds a queue's calls by these names (procedures()),
        # and building every body to read them cost ~80 ms a bind.
        match operation:
            case "next":
                # Next item narrowed by the queue's filter_by columns (`next --where`): @p_f0, @p_f1, … in
                # their order, each left out of the claim when NULL; @p_pick: this item only (allow_pick).
                filters = [
                    f"@{name} {column.type.compile(dialect=self.dialect)} = NULL"
                    for name, column in filter_parameters(self.q).items()
                ]
                return filters + ([f"@p_pick {self.key_type} = NULL"] if self.q.config.allow_pick else [])
            case "save":
                return self._args("@p_edits nvarchar(max)")
            case "extend":
                return self._args()
            case "release":
                return self._args(f"@p_reason {self.reason_type} = NULL", NOTE_ARGUMENT)
            case "escalate":
                return self._args(f"@p_reason {self.reason_type} = NULL")
            case "defer":
                d = self.trail.deferrals
                assert d is not None  # script() leaves the procedure out of a queue that does not defer
                until_type = d.table.c.until.type.compile(dialect=self.dialect)
                return self._args(f"@p_until {until_type}", f"@p_reason {self.reason_type}", NOTE_ARGUMENT)
            case "note":
                return [self._key(), "@p_text nvarchar(max)"]
            case "complete":
                return self._args("@p_outcome nvarchar(100)", "@p_edits nvarchar(max) = NULL", NOTE_ARGUMENT)
        return super().arguments(operation)

    def _key(self) -> str:
        return f"@p_key {self.key_type}"

    def _next(self) -> str:
        """Claim one item for the login: each branch in queue order (expired locks first), the
        row read WITH (UPDLOCK, READPAST) as the engine's claim reads it, then locked."""
        q = self.q
        now = q.now()
        sql = Sql(self.dialect, {})

        def picks(request: base.ClaimRequest) -> str:
            branches = ""
            for where in base.ClaimMethod.branches(q, now, request, self.trail):
                where = unless_null(where, [value for _, value in request.where])
                select = (
                    sa.select(q.key, q.user, q.shape.as_text(q.shape.token_column()))
                    .where(where)
                    .order_by(*q.order_by())
                    .limit(1)
                    .with_hint(q.table, mssql_claims.PICK_HINT, "mssql")
                )
                branches += f"  IF NOT EXISTS (SELECT 1 FROM @pick)\n    INSERT INTO @pick {one_line(sql(select))};\n"
            return branches

        login = typing.cast(str, LOGIN)
        # The filters (@p_f0, …: arguments()) each narrow by their column.
        where = tuple(
            (column.name, sa.literal_column(f"@{name}", column.type)) for name, column in filter_parameters(q).items()
        )
        branches = picks(base.ClaimRequest(user=login, count=1, where=where))
        if q.config.allow_pick:
            # @p_pick: this item only (`workbench claim KEY`), taken as the engine's claim of a key takes it.
            picked = picks(base.ClaimRequest(user=login, count=1, key=PICK, use_cooldown=False))
            # No semicolon after END: it would end the IF, and the ELSE after it would not parse.
            branches = (
                f"  IF @p_pick IS NULL\n  BEGIN\n{indent(branches)}  END\n  ELSE\n  BEGIN\n{indent(picked)}  END;\n"
            )
        if q.config.max_locks_per_user:
            held = one_line(sql(base.ClaimMethod.held_count(q, now, typing.cast(str, LOGIN))))
            most = int(q.config.max_locks_per_user)
            limit = f"  SET @held = {held};\n" + self.refused(
                f"@held >= {most}", problems.LIMIT_REACHED, q.name, Said("@held"), most
            )
        else:
            limit = ""
        writes = {**q.lock_writes(LOGIN, now, q.shape.new_token()), **q.writes(q.on_claim, LOGIN, now)}
        update = sql(sa.update(q.table).where(q.key == KEY).values(writes))
        token = sql(q.shape.as_text(q.shape.token_column()))
        body = (
            f"  DECLARE @pick TABLE (wb_key {self.key_type} NOT NULL, wb_prev_owner nvarchar(128) NULL, "
            f"wb_prev_token nvarchar(64) NULL);\n  DECLARE @p_key {self.key_type}, @prev_owner nvarchar(128), "
            f"@prev_token nvarchar(64), @p_token nvarchar(64), @held int;\n  BEGIN TRANSACTION;\n{limit}{branches}"
            f"  SELECT TOP 1 @p_key = wb_key, @prev_owner = wb_prev_owner, @prev_token = wb_prev_token, "
            f"@done = 1 FROM @pick;\n  IF @done = 1\n    {update};\n"
            f"  SELECT @p_token = {token} FROM {self.table} WHERE {sql(q.key)} = @p_key;\n"
            + self.audit_insert(
                models.EventKind.EXPIRE.value,
                owner="@prev_owner",
                token="@prev_token",
                detail=self.text('{"noticed_by": "claim"}'),
                when="@done = 1 AND @prev_owner IS NOT NULL",
            )
            + self.audit_insert(models.EventKind.CLAIM.value)
            + f"  COMMIT;\n  {one_line(sql(self._row_with_lock(DONE)))};\n"
        )
        return body

    def _row_with_lock(self, when: sa.ColumnElement[bool]) -> sa.Select[Any]:
        """The item's row with its lock (wb_*), as the engine reads a claimed row (claims.base.claim_of)."""
        q = self.q
        return sa.select(q.table, *q.lock_select_columns(q.now())).where(q.key == KEY, when)

    def _write(
        self,
        shape: Any,
        *,
        edits: str | None,
        reason: str = "NULL",
        outcome: str = "NULL",
        detail: str = "NULL",
        then: str = "",
    ) -> str:
        """The guarded UPDATE, its audit row and `then` (statements run when it happened), one transaction;
        `edits`: the transition whose given values (@p_edits) it writes (a save, a Complete), or None."""
        # As the engine writes it: {"columns": ["a", "b"]}, names sorted (editable names are plain), and
        # for a Complete chosen for review {"columns": [...], "review": "first"}.
        if edits:
            columns = (
                "(SELECT CONCAT(N'{0}\"columns\": [', STRING_AGG(CONCAT(N'\"', [key], N'\"'), N', ') "
                "WITHIN GROUP (ORDER BY [key]), N']{1}') FROM OPENJSON(@p_edits) HAVING COUNT(*) > 0)"
            )
            # Without edits: NULL, or {"review": "first"}.
            detail = (
                f"CONCAT(N'{{', {columns.format('', ', ')}, N'\"review\": \"', @why, N'\"}}')"
                if shape.to_review
                else columns.format("{", "}")
            )
        # The first column named that the transition may not write, said as the engine says it (fieldspec's READ_ONLY).
        unknown = self.given(edits, "@p_edits", problems.READ_ONLY)[1] if edits else ""
        return (
            f"{unknown}  BEGIN TRANSACTION;\n  {self.guarded(shape, edits is not None)};\n  SET @done = @@ROWCOUNT;\n"
            + self.audit_insert(shape.kind.value, reason=reason, outcome=outcome, detail=detail)
            + (f"  IF @done = 1\n  BEGIN\n{then}  END;\n" if then else "")
            + "  COMMIT;\n"
        )

    def _args(self, *more: str) -> list[str]:
        return [self._key(), "@p_token nvarchar(64)", *more]

    def _save(self) -> str:
        shape = guarded.Shape.of("save", edits=tuple(self.given("save", "@p_edits", problems.READ_ONLY)[0]))
        return self._write(shape, edits="save") + self._done()

    def _extend(self) -> str:
        shape = guarded.Shape.of("extend")
        return self._write(shape, edits=None) + self._done()

    def _release(self) -> str:
        def release(writes: str | None) -> str:
            shape = guarded.Shape.of("release", reason_writes=writes)
            return self._cooled(
                self._write(
                    shape,
                    edits=None,
                    reason="@p_reason",
                    then=self._undeferred() + self._noted(models.EventKind.RELEASE),
                )
            )

        # A configured reason also writes its own values; any other reason, only on_release's.
        body = ""
        for label in self.q.reason_writes:
            body += (
                f"  {'ELSE IF' if body else 'IF'} @p_reason = {self.text(label)}\n"
                f"  BEGIN\n{indent(release(label))}  END\n"
            )
        body = f"{body}  ELSE\n  BEGIN\n{indent(release(None))}  END;\n" if body else release(None)
        return self._note_checks("release") + body + self._done()

    def _escalate(self) -> str:
        """Hand the item to a supervisor: the reason required, the lock cleared and on_escalate's values
        written (the engine's guarded UPDATE of core/workflow.py's escalate), its audit row with the reason."""
        shape = guarded.Shape.of("escalate")
        return self.reason_check("escalate") + self._write(shape, edits=None, reason="@p_reason") + self._done()

    def _undeferred(self, lapsed_too: bool = False) -> str:
        """A release forgets the item's deferral (whoever released it decided anew); a defer replaces it,
        and drops deferrals long past (as the engine's writes do)."""
        d = self.trail.deferrals
        if d is None:
            return ""
        gone = d.table.c.item_key == ITEM
        if lapsed_too:
            gone = sa.or_(gone, deferrals_mod.lapsed(d.table))
        return f"    {Sql(self.dialect, {})(sa.delete(d.table).where(d.table.c.queue == self.q.name, gone))};\n"

    def _defer(self) -> str:
        """Give the item back until @p_until (UTC): the release's values, the audit row, the deferral row
        that keeps the item from everyone until then and serves it first (to the login) after."""
        d = self.trail.deferrals
        assert d is not None  # script() leaves the procedure out of a queue that does not defer
        sql = Sql(self.dialect, {})
        now = clock.db_now()
        until = sa.literal_column("@p_until", d.table.c.until.type)
        # The clock as deferrals.checked_until says it: 2026-11-21 14:30 (style 120, to the minute).
        clock_said = Said(f"CONVERT(nvarchar(16), {sql(now)}, 120)")
        checks = (
            self.reason_check("defer")
            + self.refused(sql(deferrals_mod.too_soon(until)), problems.DEFER_PAST, clock_said)
            + self.refused(sql(deferrals_mod.too_far(until)), problems.DEFER_TOO_FAR, deferrals_mod.MAX_DAYS)
        )
        kept = sql(
            sa.insert(d.table)
            .inline()
            .values(
                queue=self.q.name,
                item_key=ITEM,
                actor=LOGIN,
                until=sa.literal_column("@p_until"),
                at=now,
                reason=sa.literal_column("@p_reason"),
            )
        )
        # As the engine writes it: {"until": "2026-11-27T09:00:00+00:00"}.
        detail = "CONCAT(N'{\"until\": \"', CONVERT(nvarchar(30), @p_until, 126), N'+00:00\"}')"
        shape = guarded.Shape.of("defer")
        body = self._write(
            shape,
            edits=None,
            reason="@p_reason",
            detail=detail,
            then=self._undeferred(lapsed_too=True) + f"    {kept};\n" + self._noted(models.EventKind.DEFER),
        )
        return checks + self._note_checks("defer") + body + self._done()

    def _note(self) -> str:
        """Add a note to an item under the login's name (anyone may, as in the engine: notes.checked's
        rules, blanks around the text dropped); returns the note as kept."""
        q, n, sql = self.q, self.notes, Sql(self.dialect, {})
        exists = one_line(sql(sa.exists().where(q.key == KEY)))
        body = (
            self._trimmed("@text", "@p_text")
            + self.refused("@text IS NULL OR @text = N''", problems.NOTE_EMPTY)
            + self.no_item(f"NOT {exists}")
            + f"  {self._note_insert(None, '@text')};\n"
            f"  SELECT * FROM {self.prep.format_table(n)} WHERE {sql(n.c.id)} = SCOPE_IDENTITY();\n"
        )
        return body

    def _trimmed(self, variable: str, parameter: str) -> str:
        """`variable`: a note's text as notes.checked keeps it (blanks around dropped), within its limit."""
        return (
            "  -- Tab, line feed, carriage return and space, as Python's strip() drops them.\n"
            f"  DECLARE {variable} nvarchar(max) = TRIM(CHAR(9) + CHAR(10) + CHAR(13) + N' ' FROM {parameter});\n"
        ) + self.refused(
            f"LEN({variable}) > {notes_mod.MAX_LENGTH}",
            problems.NOTE_TOO_LONG,
            notes_mod.MAX_LENGTH,
            Said(f"LEN({variable})"),
        )

    def _note_insert(self, kind: models.EventKind | None, text: str) -> str:
        """The note row, kept where the engine keeps the queue's notes (a reviewing queue: the reviewed one's)."""
        notes = self.trail.notes
        assert notes is not None  # the builder's trail is opened with its notes
        return Sql(self.dialect, {})(
            sa.insert(self.notes)
            .inline()
            .values(
                queue=notes.queue,
                item_key=ITEM,
                author=LOGIN,
                at=clock.db_now(),
                kind=kind.value if kind is not None else None,
                text=sa.literal_column(text),
            )
        )

    def _note_checks(self, action: str | None) -> str:
        """@note: the note given with a release or defer (`action`, the transition) or a Complete (None;
        per outcome, _note_required); required where its note rule and the queue say so."""
        return self._trimmed("@note", "@p_note") + (self._note_required(action, action) if action else "")

    def _note_required(self, transition: str, action: str) -> str:
        """The refusal of a missing note where transition's note rule (core/workflow.py) asks for one:
        always, or for a configured rule where the queue's notes_required names `action`."""
        rule = workflow.TRANSITIONS[transition].note
        if not workflow.needs_text(rule, lambda: self.q.config.needs_note(action)):
            return ""
        # As WorkQueue._note_for names the act.
        what = f"a {action}" if transition != "complete" else f"Complete with outcome '{action}'"
        return self.refused("@note IS NULL OR @note = N''", problems.NOTE_NEEDED, self.q.name, what)

    def _noted(self, kind: models.EventKind) -> str:
        """The note given with the write, in its transaction, where there is one."""
        return f"    IF @note <> N''\n      {self._note_insert(kind, '@note')};\n"

    def _cooled(self, body: str) -> str:
        """A release's body that also keeps the releasing login from being served the item at once."""
        seconds = self.q.config.release_cooldown_seconds
        if seconds > 0:
            c, sql = self.cooldown, Sql(self.dialect, {})
            now = clock.db_now()
            lapsed = sql(sa.delete(c).where(c.c.queue == self.q.name, c.c.actor == LOGIN, c.c.until <= now))
            remember = sql(
                sa.insert(c)
                .inline()
                .values(
                    queue=self.q.name, actor=LOGIN, item_key=ITEM, until=clock.add_seconds(now, sa.literal(seconds))
                )
            )
            body = body.replace(
                "  COMMIT;\n", f"  IF @done = 1\n  BEGIN\n    {lapsed};\n    {remember};\n  END;\n  COMMIT;\n"
            )
        return body

    def _complete(self) -> str:
        body = ""
        to_review, reviews = self.trail.to_review, self.trail.reviews
        sql = Sql(self.dialect, {})
        edits = self.given("complete", "@p_edits", problems.READ_ONLY)[0]

        def matches(column: sa.ColumnElement[Any]) -> sa.ColumnElement[bool]:
            return column == ITEM

        def run(statements: list[sa.Executable]) -> str:
            return "".join(f"    {one_line(sql(statement))};\n" for statement in statements)

        for outcome in self.q.config.outcomes:
            shape = guarded.Shape.of("complete", edits=tuple(edits), outcome=outcome.name)
            # In a reviewing queue the verdict is recorded with the Complete (a sent-back item deferred to its doer).
            decided = run(reviews.decide_statements(matches, LOGIN, outcome.name)) if reviews is not None else ""
            noted = self._noted(models.EventKind.COMPLETE)
            branch = self._note_required("complete", outcome.name) + self._write(
                shape, edits="complete", outcome=self.text(outcome.name), then=decided + noted
            )
            if to_review is not None and outcome.name in to_review.review.outcomes:
                # Four eyes: chosen here, in the database, as Reviews.choose does (the client cannot skip it).
                opened = run(to_review.open_statements(matches, ITEM, None, LOGIN, sa.literal_column("@why")))
                chosen = self._write(
                    dataclasses.replace(shape, to_review=True),
                    edits="complete",
                    outcome=self.text(outcome.name),
                    then=decided + opened + noted,
                )
                branch = (
                    self._note_required("complete", outcome.name)
                    + self._review_choice(to_review)
                    + f"  IF @why IS NULL\n  BEGIN\n{indent(branch)}  END\n"
                    f"  ELSE\n  BEGIN\n{indent(chosen)}  END;\n"
                )
            # No semicolon after END: it would end the IF, and the ELSE after it would not parse.
            body += (
                f"  {'ELSE IF' if body else 'IF'} @p_outcome = {self.text(outcome.name)}\n"
                f"  BEGIN\n{indent(branch)}  END\n"
            )
        names = ", ".join(o.name for o in self.q.config.outcomes)
        refusal = indent(self.refusal(problems.NO_OUTCOME, self.q.name, Said("@p_outcome"), names))
        body += f"  ELSE\n  BEGIN\n{indent(refusal)}  END;\n"
        if to_review is not None:
            body = "  DECLARE @why nvarchar(20) = NULL;\n" + body
        return self._note_checks(None) + body + self._done()

    def _review_choice(self, to_review: reviews_mod.Reviews) -> str:
        """@why: FIRST while the login has fewer than first_items chosen, else SHARE for percent % at random."""
        r, review = to_review.table, to_review.review
        share = (
            f"IF RAND(CHECKSUM(NEWID())) * 100 < {int(review.percent)}\n"
            f"    SET @why = {self.text(reviews_mod.SHARE)};\n"
        )
        if not review.first_items:
            return "  " + share
        firsts = (
            sa.select(sa.func.count())
            .where(r.c.source == to_review.source, r.c.doer == LOGIN, r.c.why == reviews_mod.FIRST)
            .scalar_subquery()
        )
        return (
            f"  IF {one_line(Sql(self.dialect, {})(firsts))} < {int(review.first_items)}\n"
            f"    SET @why = {self.text(reviews_mod.FIRST)};\n  ELSE {share}"
        )

    def _done(self) -> str:
        """The row's lock as the engine reads it after a write (BoundQueue.lock_from_row; empty after
        a release or Complete) with the database time, or no row when the lock was not the caller's."""
        q = self.q
        read = sa.select(*q.lock_select_columns(q.now())).where(q.key == KEY, DONE)
        return f"  {one_line(Sql(self.dialect, {})(read))};\n"

    def _taken(self, to_user: bool) -> str:
        """Force-release or reassign: any live or expired lock, by a supervisor (EXECUTE is theirs)."""
        # The key as the guarded writes' fences give the trail it (GuardedWriter.item_text: :wb_key).
        q, sql = self.q, Sql(self.dialect, {"wb_key": "@p_key"})
        now = q.now()
        transition = "reassign" if to_user else "force_release"
        # The table's lock rule (HELD_HERE: a lock of this queue, lockrules.owned as the engine's and the
        # guarded writes' fences hold to it: in its state and, where a twin queue serves the same rows, claimed
        # last here), as the engine's guard renders it; read and locked by this very SELECT and UPDATE, so
        # with no lock read before to pin (read_here).
        rule = lockrules.guard(
            q, transition, now, owned=lockrules.owned(q, self.trail, self.writer.item_text), read_here=True
        )
        held = sa.and_(q.key == KEY, rule)
        if to_user:
            values = q.lock_writes(sa.literal_column("@p_to"), now, q.shape.new_token())
            event = models.EventKind.REASSIGN.value
        else:
            values = {**q.writes(q.on_release, LOGIN, now), **q.shape.unlock_writes()}
            event = models.EventKind.FORCE_RELEASE.value
        token = sql(q.shape.as_text(q.shape.token_column()))
        body = (
            "  DECLARE @prev_owner nvarchar(128), @p_token nvarchar(64), @new_token nvarchar(64);\n"
            + self.reason_check(transition)
            + f"  BEGIN TRANSACTION;\n"
            f"  SELECT @prev_owner = {sql(q.user)}, @p_token = {token} FROM {self.table} WITH (UPDLOCK, ROWLOCK) "
            f"WHERE {sql(held)};\n"
            + self._taken_elsewhere(transition)
            # The engine reads it as the row having changed since its own read (REFUSALS: lost).
            + self.refused("@prev_owner IS NULL", problems.NOT_LOCKED, q.name, self.item(), rollback=True)
        )
        reviews = self.trail.reviews
        if to_user and reviews is not None:  # four eyes: never handed to the one whose work it is
            body += self.refused(
                sql(reviews.own_work(KEY, sa.literal_column("@p_to", sa.Unicode()))),
                problems.REASSIGN_TO_DOER,
                q.name,
                self.item(),
                Said("@p_to"),
                rollback=True,
            )
        body += f"  {sql(sa.update(q.table).where(held).values(values))};\n  SET @done = @@ROWCOUNT;\n"
        detail = "CONCAT(N'{\"to\": \"', STRING_ESCAPE(@p_to, 'json'), N'\"}')" if to_user else "NULL"
        body += self.audit_insert(event, owner="@prev_owner", reason="@p_reason", detail=detail)
        if to_user:
            body += (
                f"  SELECT @new_token = {token} FROM {self.table} WHERE {sql(q.key)} = @p_key;\n"
                + self.audit_insert(
                    models.EventKind.CLAIM.value,
                    owner="@p_to",
                    token="@new_token",
                    detail="CONCAT(N'{\"reassigned_from\": \"', STRING_ESCAPE(@prev_owner, 'json'), N'\"}')",
                )
            )
        return body + "  COMMIT;\n" + self._done()

    def _taken_elsewhere(self, transition: str) -> str:
        """Refused, a lock held through a twin queue (one serving the same rows, `q.rivals`) is said as the
        engine says it (lockloss.Diagnosis.elsewhere): the queue of the item's newest claim, where it goes."""
        q, sql = self.q, Sql(self.dialect, {"wb_key": "@p_key"})
        if not q.rivals:
            return ""
        taken = sa.select(self.trail.claimed_in(self.writer.item_text(), q.rivals)).where(
            q.key == KEY, q.user.is_not(None)
        )
        queue_type = self.audit.c.queue.type.compile(dialect=self.dialect)
        return f"  DECLARE @taken {queue_type} = ({one_line(sql(taken))});\n" + self.refused(
            f"@prev_owner IS NULL AND @taken <> {self.text(q.name)}",
            problems.TAKEN_ELSEWHERE,
            q.name,
            self.item(),
            Said("@taken"),
            workflow.command(transition),
            rollback=True,
        )
