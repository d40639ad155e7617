"""The queue protocol for SQL Server as a T-SQL script: operators write only through procedures that run as the owner.

The PostgreSQL design (protocol.py) checks every write with a trigger. SQL Server refuses an
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
(procedures.py, which finds each one's parameters here: procedures()).
"""

from __future__ import annotations

import dataclasses
import re
import typing
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy.sql import visitors

from workbench.config import model
from workbench.core import errors, models, problems, workflow
from workbench.db import audit as audit_mod
from workbench.db import clock, guarded, lockrules, mapping, rowrules, tables, workflow_sql
from workbench.db import deferrals as deferrals_mod
from workbench.db import notes as notes_mod
from workbench.db import reviews as reviews_mod
from workbench.db.backends import mssql as mssql_backend
from workbench.db.claims import base
from workbench.db.claims import mssql as mssql_claims
from workbench.db.rules import pg_names

OPERATOR_ROLE, SUPERVISOR_ROLE = pg_names.OPERATOR_ROLE, pg_names.SUPERVISOR_ROLE
# Each procedure and the transitions of core/workflow.py it carries: a claim and a pick are one
# procedure (p_pick) that also takes over an expired lock (its expire row written there), a
# reviewing queue's verdicts are its Complete.
CARRIES: Mapping[str, tuple[str, ...]] = {
    "next": ("claim", "pick", "expire"),
    "save": ("save",),
    "extend": ("extend",),
    "release": ("release",),
    "complete": ("complete", "review_accept", "review_send_back"),
    "defer": ("defer",),
    "escalate": ("escalate",),
    "note": ("note",),
    "undo": ("undo",),
    "force_release": ("force_release",),
    "reassign": ("reassign",),
    "reopen": ("reopen",),
    "take": ("take",),
    "move": ("move",),
}
OPERATIONS = tuple(CARRIES)


def carrier(transition: str) -> str:
    """The operation (procedure) carrying `transition`; NotRendered, naming this file, if none does."""
    for op, carried in CARRIES.items():
        if transition in carried:
            return op
    raise workflow.NotRendered(workflow.Rendering.MSSQL, missing=[transition])


# EXECUTE on these is the supervisors' alone: the table's supervisor transitions (and take, unless the
# queue names an escalate_to group: then operators may run it, and it asks inside who the caller is:
# Builder.executors, Builder.who_check).
SUPERVISOR_ONLY = tuple(op for op, names in CARRIES.items() if workflow_sql.supervisors_only(*names))
NOTE_ARGUMENT = "@p_note nvarchar(max) = NULL"  # a note written with a release, defer or Complete


class Said(typing.NamedTuple):
    """A value a refusal says that the procedure knows only when it refuses: T-SQL, evaluated then."""

    sql: str


# The procedures' own variables as SQL: the caller's login, the item's key, and that key as the
# audit trail, notes, deferrals and reviews keep it.
_LOGIN: sa.ColumnElement[Any] = sa.literal_column("@login", sa.Unicode())
_KEY: sa.ColumnElement[Any] = sa.literal_column("@p_key")
_ITEM: sa.ColumnElement[Any] = sa.literal_column("CAST(@p_key AS nvarchar(200))")
_PICK: sa.ColumnElement[Any] = sa.literal_column("@p_pick")  # the one item a claim by key asks for
_DONE: sa.ColumnElement[bool] = sa.literal_column("@done", sa.Integer()) == sa.literal_column("1")


def procedure_name(queue: str, operation: str) -> str:
    """wb_QUEUE_OPERATION, as pg_names.object_name names PostgreSQL's objects."""
    return pg_names.object_name(queue, operation)


class _Sql:
    """T-SQL text of workbench's own expressions, their bound parameters replaced by variables."""

    def __init__(self, dialect: Any, variables: Mapping[str, str]) -> None:
        self.dialect, self.variables = dialect, dict(variables)

    def __call__(self, element: Any) -> str:
        def swap(found: Any, **_: Any) -> Any:
            if isinstance(found, sa.sql.elements.BindParameter) and found.key in self.variables:
                return sa.literal_column(self.variables[found.key], type_=found.type)
            return None

        opts: dict[str, Any] = {}
        element = visitors.replacement_traverse(element, opts, swap)  # type: ignore[call-overload]  # a Protocol mypy does not match
        # literal_binds: the config's constants inline, quoted by the dialect; a parameter nobody
        # replaced fails here instead of reaching the script.
        return str(element.compile(dialect=self.dialect, compile_kwargs={"literal_binds": True}))


def script(dialect: Any, q: mapping.BoundQueue, schema: str, reviewed: model.QueueConfig | None = None) -> list[str]:
    """The batches (each run on its own, as sqlcmd's GO separates them) that enforce `q`'s protocol;
    `reviewed`: the queue whose completions `q` reviews (four eyes), if any."""
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
    builder = _Builder(dialect, q, schema, reviewed)
    return [*builder.grants(), *(builder.procedure(op) for op in builder.operations), *builder.executes()]


def procedures(dialect: Any, q: mapping.BoundQueue, schema: str) -> dict[str, tuple[str, list[str]]]:
    """What script() creates for `q`, as workbench calls it: per operation, the procedure's name (quoted
    as the dialect quotes it) and its parameters' names in order (p_key, p_token, …)."""
    builder = _Builder(dialect, q, schema)
    return {
        op: (builder.name(op), [a.split()[0].removeprefix("@") for a in getattr(builder, f"_{op}")()[0]])
        for op in builder.operations
    }


def revoke_script(dialect: Any, q: mapping.BoundQueue, schema: str) -> list[str]:
    """What undoes script() for `q`: its procedures and the operators' grants and denials on its
    table. The roles and the audit trail's denials stay: other queues and people may use them."""
    builder = _Builder(dialect, q, schema)
    return [
        *(f"DROP PROCEDURE IF EXISTS {builder.name(op)};" for op in OPERATIONS),
        f"REVOKE SELECT, INSERT, UPDATE, DELETE ON {builder.table} FROM {builder.quoted(OPERATOR_ROLE)};",
    ]


class _Builder:
    def __init__(
        self, dialect: Any, q: mapping.BoundQueue, schema: str, reviewed: model.QueueConfig | None = None
    ) -> None:
        self.dialect, self.q, self.schema = dialect, q, schema
        self.prep = dialect.identifier_preparer
        metadata, self.audit, _ = tables.build_metadata(schema)
        own = {
            name: metadata.tables[f"{schema}.{name}"]
            for name in (tables.COOLDOWN_TABLE, tables.NOTES_TABLE, tables.DEFERRALS_TABLE, tables.REVIEWS_TABLE)
        }
        self.cooldown, self.notes = own[tables.COOLDOWN_TABLE], own[tables.NOTES_TABLE]
        # The record the engine's operations keep for the queue: its claim skips deferred items too.
        self.trail = audit_mod.trail_of(
            q.config,
            reviewed,
            self.audit,
            self.cooldown,
            own[tables.NOTES_TABLE],
            own[tables.DEFERRALS_TABLE],
            own[tables.REVIEWS_TABLE],
        )
        self.writer = guarded.GuardedWriter(typing.cast(Any, None), q, self.trail)
        self.table = self.prep.format_table(q.table)
        self.key_type = q.key.type.compile(dialect=dialect)
        self.reason_type = self.audit.c.reason.type.compile(dialect=dialect)
        self.user_type = q.user.type.compile(dialect=dialect)
        # A queue whose items may not be deferred (allow_defer = false) has no defer procedure, one
        # that does not say how an item waits again (on_reopen) no reopen procedure, one without
        # on_escalate no escalate procedure (Check.ON_ESCALATE_SET), and without either no take.
        self.operations = tuple(
            op
            for op in OPERATIONS
            if (op != "defer" or q.config.allow_defer)
            and (op not in ("escalate", "take") or q.on_escalate)
            and (op != "take" or q.on_reopen)
            and (op not in ("reopen", "undo") or q.on_reopen)
            and (op != "undo" or q.config.undo_within_seconds > 0)
        )

    # -- pieces -----------------------------------------------------------------------------

    def quoted(self, name: str) -> str:
        return str(self.prep.quote(name))

    def text(self, value: str) -> str:
        return _Sql(self.dialect, {})(sa.literal(value, sa.Unicode()))

    def refusal(self, template: str, *args: Any, column: Said | None = None) -> str:
        """The THROW of the refusal saying `template` (core/problems.py) filled with `args` (a Said:
        as the procedure has it when it refuses), under its number (backends/mssql.REFUSALS), in the
        engine's words; `column`: said before it ("COLUMN: problem", InvalidValue.at's). THROW takes
        a literal or a variable, so a text with a Said in it is put together in @refusal first."""
        number = mssql_backend.number_of(template)
        parts: list[str | Said] = [mssql_backend.PREFIX]
        if column is not None:
            parts += [column, ": "]
        for piece in re.split(r"(\{\d\})", template):
            placeholder = re.fullmatch(r"\{(\d)\}", piece)
            parts.append(args[int(placeholder[1])] if placeholder else piece)
        said: list[str] = []
        literal = ""
        for part in parts:
            if isinstance(part, Said):
                said += [self.text(literal)] if literal else []
                said.append(part.sql)
                literal = ""
            else:
                literal += str(part)
        if not said:
            return f"THROW {number}, {self.text(literal)}, 1;"
        said += [self.text(literal)] if literal else []
        return f"SET @refusal = CONCAT({', '.join(said)});\nTHROW {number}, @refusal, 1;"

    def refused(self, when: str, template: str, *args: Any, rollback: bool = False, column: Said | None = None) -> str:
        """IF `when` (T-SQL), the refusal (after a ROLLBACK of the procedure's transaction, if `rollback`)."""
        lines = (["ROLLBACK;"] if rollback else []) + self.refusal(template, *args, column=column).splitlines()
        inner = "".join(f"    {line}\n" for line in lines)
        return f"  IF {when}\n  BEGIN\n{inner}  END;\n"

    def item(self) -> Said:
        """The key as a refusal names an item (str of the engine's key)."""
        return Said("CAST(@p_key AS nvarchar(200))")

    def no_item(self, when: str, *, rollback: bool = False) -> str:
        """The refusal of a key the table does not have, as BoundQueue.no_item says it (the key's repr)."""
        shown = self.item()
        if isinstance(self.q.key.type, sa.String):
            shown = Said(f"CONCAT(N, {shown.sql}, N)")
        return self.refused(when, problems.NO_ITEM, self.q.name, shown, rollback=rollback)

    def reason_check(self, name: str) -> str:
        """The refusal of a missing or blank @p_reason where the table requires one for transition
        `name` (workflow.needs_reason), in the engine's words (problems.REASON_NEEDED)."""
        if not workflow.needs_reason(name):
            return ""
        blank = "@p_reason IS NULL OR LTRIM(RTRIM(@p_reason)) = N''"
        return self.refused(blank, problems.REASON_NEEDED, workflow.command(name))

    def name(self, operation: str) -> str:
        owner = self.prep.quote_schema(self.q.table.schema or self.schema)
        return f"{owner}.{self.quoted(procedure_name(self.q.name, operation))}"

    def edited(self, name: str, edits: str = "@p_edits") -> str:
        """The value an edit (JSON object @p_edits, column name -> value) gives column `name`, or
        the column's own value when the object does not name it. OPENJSON's value is nvarchar(max):
        JSON_VALUE would cut text after 4,000 characters to NULL."""
        column = self.q.table.c[name]
        found = f"(SELECT [value] FROM OPENJSON({edits}) WHERE [key] = {self.text(name)})"
        named = f"EXISTS (SELECT 1 FROM OPENJSON({edits}) WHERE [key] = {self.text(name)})"
        cast = f"CAST({found} AS {column.type.compile(dialect=self.dialect)})"
        return f"CASE WHEN {named} THEN {cast} ELSE {self.prep.format_column(column)} END"

    def given(self, transition: str, argument: str, refusal: str) -> tuple[list[str], str]:
        """The columns the JSON object `argument` (column name -> value) may write in `transition`, as the
        engine checks them (BoundQueue.given: by the kind of values its row of core/workflow.py says the
        caller gives, none where it says none), and the refusal of the first name given that is not one of
        them (in name order), saying `refusal` (core/problems.py): the procedure's words, the table's names."""
        names = [c.name for c in self.q.given(transition)]
        # None may be written: every name given is refused (NOT IN (NULL) would refuse none).
        outside = f" WHERE [key] NOT IN ({', '.join(self.text(name) for name in names)})" if names else ""
        check = (
            f"  SET @column = (SELECT TOP 1 [key] FROM OPENJSON({argument}){outside} ORDER BY [key]);\n"
            + self.refused("@column IS NOT NULL", refusal, column=Said("@column"))
        )
        return names, check

    def audit_insert(
        self,
        event: str,
        *,
        owner: str = "@login",
        token: str | None = "@p_token",
        reason: str = "NULL",
        outcome: str = "NULL",
        detail: str = "NULL",
        when: str = "@done = 1",
    ) -> str:
        """INSERT of one audit row when `when` holds; values are T-SQL (`token` None: no lock, no digest)."""
        sql = _Sql(self.dialect, {})
        cols = ", ".join(
            self.quoted(c)
            for c in ("queue", "item_key", "event", "actor", "owner", "token", "at", "reason", "outcome", "detail")
        )
        digest = "NULL" if token is None else sql(self.q.backend.token_digest(sa.literal_column(token)))
        values = (
            f"{self.text(self.q.name)}, CAST(@p_key AS nvarchar(200)), {self.text(event)}, @login, {owner}, "
            f"{digest}, {sql(clock.db_now())}, {reason}, {outcome}, {detail}"
        )
        return f"  IF {when}\n    INSERT INTO {self.prep.format_table(self.audit)} ({cols}) VALUES ({values});\n"

    def guarded(self, shape: Any, edits: bool) -> str:
        """The engine's guarded UPDATE of `shape` (fenced by key, login, token and a live lock)."""
        statements = self.writer.statement(shape)
        assert len(statements) == 1  # shapes with the token in the row: one UPDATE
        variables = {"wb_key": "@p_key", "wb_user": "@login", "wb_token": "@p_token"}
        if edits:
            variables |= {f"wb_e{i}": self.edited(name) for i, name in enumerate(shape.edits)}
        return _Sql(self.dialect, variables)(statements[0])

    # -- the script ---------------------------------------------------------------------------

    def grants(self) -> list[str]:
        operator, supervisor = self.quoted(OPERATOR_ROLE), self.quoted(SUPERVISOR_ROLE)
        own = {
            name: self.prep.format_table(sa.Table(name, sa.MetaData(), schema=self.schema))
            for name in (
                tables.AUDIT_TABLE,
                tables.COOLDOWN_TABLE,
                tables.SETTINGS_TABLE,
                tables.VERSION_TABLE,
                tables.ROLES_TABLE,
                tables.DEFERRALS_TABLE,
                tables.NOTES_TABLE,
                tables.REVIEWS_TABLE,
                tables.COUNTS_TABLE,
                tables.GROUPS_TABLE,
            )
        }
        return [
            (
                f"IF DATABASE_PRINCIPAL_ID({self.text(OPERATOR_ROLE)}) IS NULL CREATE ROLE {operator};\n"
                f"IF DATABASE_PRINCIPAL_ID({self.text(SUPERVISOR_ROLE)}) IS NULL CREATE ROLE {supervisor};\n"
                f"IF IS_ROLEMEMBER({self.text(OPERATOR_ROLE)}, {self.text(SUPERVISOR_ROLE)}) = 0\n"
                f"  ALTER ROLE {operator} ADD MEMBER {supervisor};"
            ),
            # The queue's escalate_to group takes escalated items (executors, who_check): its members are
            # this role's and the groups table's.
            *(
                [f"IF DATABASE_PRINCIPAL_ID({self.text(group)}) IS NULL CREATE ROLE {self.quoted(group)};"]
                if (group := self.q.config.escalate_to) and "take" in self.operations
                else []
            ),
            # Read what workbench reads; write nothing directly: every change goes through a procedure.
            f"GRANT SELECT ON {self.table} TO {operator};",
            f"DENY INSERT, UPDATE, DELETE ON {self.table} TO {operator};",
            # A lookup's related table: the picker searches it, Save checks a value in it (read only).
            *(
                f"GRANT SELECT ON {self.prep.format_table(related)} TO {operator};"
                for related in {id(lk.table): lk.table for lk in self.q.lookups.values()}.values()
            ),
            f"GRANT SELECT ON {own[tables.AUDIT_TABLE]} TO {operator};",
            f"DENY INSERT, UPDATE, DELETE ON {own[tables.AUDIT_TABLE]} TO {operator};",
            f"DENY INSERT, UPDATE, DELETE ON {own[tables.COOLDOWN_TABLE]} TO {operator};",
            # A deferral keeps an item from everyone: only the defer and release procedures write them.
            f"DENY INSERT, UPDATE, DELETE ON {own[tables.DEFERRALS_TABLE]} TO {operator};",
            # Notes are read by everyone and added only through the note procedure, under the login's name.
            f"GRANT SELECT ON {own[tables.NOTES_TABLE]} TO {operator};",
            f"DENY INSERT, UPDATE, DELETE ON {own[tables.NOTES_TABLE]} TO {operator};",
            # Four eyes: who did what waits for review is read by all and written only by the procedures.
            f"GRANT SELECT ON {own[tables.REVIEWS_TABLE]} TO {operator};",
            f"DENY INSERT, UPDATE, DELETE ON {own[tables.REVIEWS_TABLE]} TO {operator};",
            # The start page's counts, kept by whichever window counts for everyone (db/counts.py):
            # figures shown, nothing decided on them.
            f"GRANT SELECT, INSERT, UPDATE ON {own[tables.COUNTS_TABLE]} TO {operator};",
            (
                f"GRANT SELECT ON {own[tables.DEFERRALS_TABLE]} TO {operator};\n"
                f"GRANT SELECT ON {own[tables.COOLDOWN_TABLE]} TO {operator};\n"
                f"GRANT SELECT ON {own[tables.SETTINGS_TABLE]} TO {operator};\n"
                f"GRANT SELECT ON {own[tables.VERSION_TABLE]} TO {operator};\n"
                f"GRANT SELECT ON {own[tables.ROLES_TABLE]} TO {operator};\n"
                # Who is in which group: the engine asks it as the login (groups.is_member, a take's).
                f"GRANT SELECT ON {own[tables.GROUPS_TABLE]} TO {operator};"
            ),
        ]

    def executes(self) -> list[str]:
        return [f"GRANT EXECUTE ON {self.name(op)} TO {', '.join(self.executors(op))};" for op in self.operations]

    def escalated_to(self, op: str) -> str | None:
        """The group whose members may run `op`'s procedure beside the supervisors: the queue's escalate_to
        where `op` carries a transition of the table's Actor.ESCALATED_TO (take); None for any other."""
        carried = any(workflow.TRANSITIONS[name].who is workflow.Actor.ESCALATED_TO for name in CARRIES[op])
        return self.q.config.escalate_to if carried else None

    def executors(self, op: str) -> list[str]:
        """The database roles that may run `op`'s procedure: operators, or supervisors alone. A procedure
        carrying the table's Actor.ESCALATED_TO (take) where the queue names an escalate_to group is the
        operators' (and the group role's) too, and asks inside who the caller is (who_check): a member of
        the group may be one in workbench's groups table, which no grant can name."""
        if op not in SUPERVISOR_ONLY:
            return [self.quoted(OPERATOR_ROLE)]
        group = self.escalated_to(op)
        if group is None:
            return [self.quoted(SUPERVISOR_ROLE)]
        return [self.quoted(OPERATOR_ROLE), self.quoted(group)]

    def who_check(self, op: str) -> str:
        """The refusal, inside `op`'s procedure, of a caller the table's actor does not admit where the
        EXECUTE grant alone does not decide it (executors): for Actor.ESCALATED_TO with a group, as the engine
        (Supervision._require_escalated_to) and PostgreSQL (pg_names.escalated_to) ask it: a supervisor (a
        member of workbench_supervisor), or a member of the group, in workbench's groups table or of the
        database role named like it, else problems.TAKE_NOT_IN_GROUP. The login is its database user's name,
        as `workbench people add` makes them (CREATE USER … FOR LOGIN of the same name)."""
        group = self.escalated_to(op)
        if group is None:
            return ""
        sql = _Sql(self.dialect, {})
        groups = tables.own(self.schema, tables.GROUPS_TABLE)
        listed = sa.exists().where(groups.c.user_name == _LOGIN, groups.c.group_name == sa.literal(group, sa.Unicode()))
        admitted = (
            f"IS_ROLEMEMBER({self.text(SUPERVISOR_ROLE)}, @login) = 1 OR IS_ROLEMEMBER({self.text(group)}, @login) = 1 "
            f"OR {_one_line(sql(listed))}"
        )
        return self.refused(f"NOT ({admitted})", problems.TAKE_NOT_IN_GROUP, self.q.name, group, Said("@login"))

    def procedure(self, operation: str) -> str:
        arguments, body = getattr(self, f"_{operation}")()
        carried = [
            name
            for name in CARRIES[operation]
            if self.trail.reviews is not None
            or workflow.Check.REVIEWED_OUTCOME not in workflow.TRANSITIONS[name].checks
        ]
        head = f"CREATE OR ALTER PROCEDURE {self.name(operation)}"
        if arguments:
            head += "\n  " + ",\n  ".join(arguments)
        return (
            f"{head}\nWITH EXECUTE AS OWNER\nAS\nBEGIN\n  SET NOCOUNT ON;\n  SET XACT_ABORT ON;\n"
            f"  -- The login that called, not the owner this runs as.\n"
            f"  DECLARE @login nvarchar(128) = ORIGINAL_LOGIN();\n  DECLARE @done int = 0;\n"
            f"  -- A refusal's text, said with what the procedure knows; the column it names, if any.\n"
            f"  DECLARE @refusal nvarchar(2048), @column nvarchar(4000);\n"
            f"  {workflow.branch_mark(*carried)}\n{self.who_check(operation)}{body}END;"
        )

    def _key(self) -> str:
        return f"@p_key {self.key_type}"

    def _next(self) -> tuple[list[str], str]:
        """Claim one item for the login: each branch in queue order (expired locks first), the
        row read WITH (UPDLOCK, READPAST) as the engine's claim reads it, then locked."""
        q = self.q
        now = q.now()
        sql = _Sql(self.dialect, {})

        def picks(request: base.ClaimRequest) -> str:
            branches = ""
            for where in base.ClaimMethod.branches(q, now, request, self.trail):
                where = _unless_null(where, [value for _, value in request.where])
                select = (
                    sa.select(q.key, q.user, q.shape.as_text(q.shape.token_column()))
                    .where(where)
                    .order_by(*q.order_by())
                    .limit(1)
                    .with_hint(q.table, mssql_claims.PICK_HINT, "mssql")
                )
                branches += f"  IF NOT EXISTS (SELECT 1 FROM @pick)\n    INSERT INTO @pick {_one_line(sql(select))};\n"
            return branches

        login = typing.cast(str, _LOGIN)
        # Next item narrowed by the queue's filter_by columns (`next --where`): @p_f0, @p_f1, … in
        # their order, each left out of the claim when NULL.
        arguments = [
            f"@{name} {column.type.compile(dialect=self.dialect)} = NULL"
            for name, column in filter_parameters(q).items()
        ]
        where = tuple(
            (column.name, sa.literal_column(f"@{name}", column.type)) for name, column in filter_parameters(q).items()
        )
        branches = picks(base.ClaimRequest(user=login, count=1, where=where))
        if q.config.allow_pick:
            # @p_pick: this item only (`workbench claim KEY`), taken as the engine's claim of a key takes it.
            arguments.append(f"@p_pick {self.key_type} = NULL")
            picked = picks(base.ClaimRequest(user=login, count=1, key=_PICK, use_cooldown=False))
            # No semicolon after END: it would end the IF, and the ELSE after it would not parse.
            branches = (
                f"  IF @p_pick IS NULL\n  BEGIN\n{_indent(branches)}  END\n  ELSE\n  BEGIN\n{_indent(picked)}  END;\n"
            )
        if q.config.max_locks_per_user:
            held = _one_line(sql(base.ClaimMethod.held_count(q, now, typing.cast(str, _LOGIN))))
            most = int(q.config.max_locks_per_user)
            limit = f"  SET @held = {held};\n" + self.refused(
                f"@held >= {most}", problems.LIMIT_REACHED, q.name, Said("@held"), most
            )
        else:
            limit = ""
        writes = {**q.lock_writes(_LOGIN, now, q.shape.new_token()), **q.writes(q.on_claim, _LOGIN, now)}
        update = sql(sa.update(q.table).where(q.key == _KEY).values(writes))
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
            + f"  COMMIT;\n  {_one_line(sql(self._row_with_lock(_DONE)))};\n"
        )
        return arguments, body

    def _row_with_lock(self, when: sa.ColumnElement[bool]) -> sa.Select[Any]:
        """The item's row with its lock (wb_*), as the engine reads a claimed row (claims.base.claim_of)."""
        q = self.q
        return sa.select(q.table, *q.lock_select_columns(q.now())).where(q.key == _KEY, when)

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

    def _save(self) -> tuple[list[str], str]:
        shape = guarded.Shape.of("save", edits=tuple(self.given("save", "@p_edits", problems.READ_ONLY)[0]))
        return self._args("@p_edits nvarchar(max)"), self._write(shape, edits="save") + self._done()

    def _extend(self) -> tuple[list[str], str]:
        shape = guarded.Shape.of("extend")
        return self._args(), self._write(shape, edits=None) + self._done()

    def _release(self) -> tuple[list[str], str]:
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
                f"  BEGIN\n{_indent(release(label))}  END\n"
            )
        body = f"{body}  ELSE\n  BEGIN\n{_indent(release(None))}  END;\n" if body else release(None)
        return (
            self._args(f"@p_reason {self.reason_type} = NULL", NOTE_ARGUMENT),
            self._note_checks("release") + body + self._done(),
        )

    def _escalate(self) -> tuple[list[str], str]:
        """Hand the item to a supervisor: the reason required, the lock cleared and on_escalate's values
        written (the engine's guarded UPDATE of core/workflow.py's escalate), its audit row with the reason."""
        shape = guarded.Shape.of("escalate")
        return (
            self._args(f"@p_reason {self.reason_type} = NULL"),
            self.reason_check("escalate") + self._write(shape, edits=None, reason="@p_reason") + self._done(),
        )

    def _undeferred(self, lapsed_too: bool = False) -> str:
        """A release forgets the item's deferral (whoever released it decided anew); a defer replaces it,
        and drops deferrals long past (as the engine's writes do)."""
        d = self.trail.deferrals
        if d is None:
            return ""
        gone = d.table.c.item_key == _ITEM
        if lapsed_too:
            gone = sa.or_(gone, deferrals_mod.lapsed(d.table))
        return f"    {_Sql(self.dialect, {})(sa.delete(d.table).where(d.table.c.queue == self.q.name, gone))};\n"

    def _defer(self) -> tuple[list[str], str]:
        """Give the item back until @p_until (UTC): the release's values, the audit row, the deferral row
        that keeps the item from everyone until then and serves it first (to the login) after."""
        d = self.trail.deferrals
        assert d is not None  # script() leaves the procedure out of a queue that does not defer
        sql = _Sql(self.dialect, {})
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
                item_key=_ITEM,
                actor=_LOGIN,
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
        until_type = d.table.c.until.type.compile(dialect=self.dialect)
        return (
            self._args(f"@p_until {until_type}", f"@p_reason {self.reason_type}", NOTE_ARGUMENT),
            checks + self._note_checks("defer") + body + self._done(),
        )

    def _note(self) -> tuple[list[str], str]:
        """Add a note to an item under the login's name (anyone may, as in the engine: notes.checked's
        rules, blanks around the text dropped); returns the note as kept."""
        q, n, sql = self.q, self.notes, _Sql(self.dialect, {})
        exists = _one_line(sql(sa.exists().where(q.key == _KEY)))
        body = (
            self._trimmed("@text", "@p_text")
            + self.refused("@text IS NULL OR @text = N''", problems.NOTE_EMPTY)
            + self.no_item(f"NOT {exists}")
            + f"  {self._note_insert(None, '@text')};\n"
            f"  SELECT * FROM {self.prep.format_table(n)} WHERE {sql(n.c.id)} = SCOPE_IDENTITY();\n"
        )
        return [self._key(), "@p_text nvarchar(max)"], body

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
        return _Sql(self.dialect, {})(
            sa.insert(self.notes)
            .inline()
            .values(
                queue=notes.queue,
                item_key=_ITEM,
                author=_LOGIN,
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
            c, sql = self.cooldown, _Sql(self.dialect, {})
            now = clock.db_now()
            lapsed = sql(sa.delete(c).where(c.c.queue == self.q.name, c.c.actor == _LOGIN, c.c.until <= now))
            remember = sql(
                sa.insert(c)
                .inline()
                .values(
                    queue=self.q.name, actor=_LOGIN, item_key=_ITEM, until=clock.add_seconds(now, sa.literal(seconds))
                )
            )
            body = body.replace(
                "  COMMIT;\n", f"  IF @done = 1\n  BEGIN\n    {lapsed};\n    {remember};\n  END;\n  COMMIT;\n"
            )
        return body

    def _complete(self) -> tuple[list[str], str]:
        body = ""
        to_review, reviews = self.trail.to_review, self.trail.reviews
        sql = _Sql(self.dialect, {})
        edits = self.given("complete", "@p_edits", problems.READ_ONLY)[0]

        def matches(column: sa.ColumnElement[Any]) -> sa.ColumnElement[bool]:
            return column == _ITEM

        def run(statements: list[sa.Executable]) -> str:
            return "".join(f"    {_one_line(sql(statement))};\n" for statement in statements)

        for outcome in self.q.config.outcomes:
            shape = guarded.Shape.of("complete", edits=tuple(edits), outcome=outcome.name)
            # In a reviewing queue the verdict is recorded with the Complete (a sent-back item deferred to its doer).
            decided = run(reviews.decide_statements(matches, _LOGIN, outcome.name)) if reviews is not None else ""
            noted = self._noted(models.EventKind.COMPLETE)
            branch = self._note_required("complete", outcome.name) + self._write(
                shape, edits="complete", outcome=self.text(outcome.name), then=decided + noted
            )
            if to_review is not None and outcome.name in to_review.review.outcomes:
                # Four eyes: chosen here, in the database, as Reviews.choose does (the client cannot skip it).
                opened = run(to_review.open_statements(matches, _ITEM, None, _LOGIN, sa.literal_column("@why")))
                chosen = self._write(
                    dataclasses.replace(shape, to_review=True),
                    edits="complete",
                    outcome=self.text(outcome.name),
                    then=decided + opened + noted,
                )
                branch = (
                    self._note_required("complete", outcome.name)
                    + self._review_choice(to_review)
                    + f"  IF @why IS NULL\n  BEGIN\n{_indent(branch)}  END\n"
                    f"  ELSE\n  BEGIN\n{_indent(chosen)}  END;\n"
                )
            # No semicolon after END: it would end the IF, and the ELSE after it would not parse.
            body += (
                f"  {'ELSE IF' if body else 'IF'} @p_outcome = {self.text(outcome.name)}\n"
                f"  BEGIN\n{_indent(branch)}  END\n"
            )
        names = ", ".join(o.name for o in self.q.config.outcomes)
        refusal = _indent(self.refusal(problems.NO_OUTCOME, self.q.name, Said("@p_outcome"), names))
        body += f"  ELSE\n  BEGIN\n{_indent(refusal)}  END;\n"
        if to_review is not None:
            body = "  DECLARE @why nvarchar(20) = NULL;\n" + body
        return (
            self._args("@p_outcome nvarchar(100)", "@p_edits nvarchar(max) = NULL", NOTE_ARGUMENT),
            self._note_checks(None) + body + self._done(),
        )

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
            .where(r.c.source == to_review.source, r.c.doer == _LOGIN, r.c.why == reviews_mod.FIRST)
            .scalar_subquery()
        )
        return (
            f"  IF {_one_line(_Sql(self.dialect, {})(firsts))} < {int(review.first_items)}\n"
            f"    SET @why = {self.text(reviews_mod.FIRST)};\n  ELSE {share}"
        )

    def _done(self) -> str:
        """The row's lock as the engine reads it after a write (BoundQueue.lock_from_row; empty after
        a release or Complete) with the database time, or no row when the lock was not the caller's."""
        q = self.q
        read = sa.select(*q.lock_select_columns(q.now())).where(q.key == _KEY, _DONE)
        return f"  {_one_line(_Sql(self.dialect, {})(read))};\n"

    def _taken(self, to_user: bool) -> str:
        """Force-release or reassign: any live or expired lock, by a supervisor (EXECUTE is theirs)."""
        # The key as the guarded writes' fences give the trail it (GuardedWriter.item_text: :wb_key).
        q, sql = self.q, _Sql(self.dialect, {"wb_key": "@p_key"})
        now = q.now()
        transition = "reassign" if to_user else "force_release"
        # The table's lock rule (HELD_HERE: a lock of this queue, lockrules.owned as the engine's and the
        # guarded writes' fences hold to it: in its state and, where a twin queue serves the same rows, claimed
        # last here), as the engine's guard renders it; read and locked by this very SELECT and UPDATE, so
        # with no lock read before to pin (read_here).
        rule = lockrules.guard(
            q, transition, now, owned=lockrules.owned(q, self.trail, self.writer.item_text), read_here=True
        )
        held = sa.and_(q.key == _KEY, rule)
        if to_user:
            values = q.lock_writes(sa.literal_column("@p_to"), now, q.shape.new_token())
            event = models.EventKind.REASSIGN.value
        else:
            values = {**q.writes(q.on_release, _LOGIN, now), **q.shape.unlock_writes()}
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
                sql(reviews.own_work(_KEY, sa.literal_column("@p_to", sa.Unicode()))),
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
        q, sql = self.q, _Sql(self.dialect, {"wb_key": "@p_key"})
        if not q.rivals:
            return ""
        taken = sa.select(self.trail.claimed_in(self.writer.item_text(), q.rivals)).where(
            q.key == _KEY, q.user.is_not(None)
        )
        queue_type = self.audit.c.queue.type.compile(dialect=self.dialect)
        return f"  DECLARE @taken {queue_type} = ({_one_line(sql(taken))});\n" + self.refused(
            f"@prev_owner IS NULL AND @taken <> {self.text(q.name)}",
            problems.TAKEN_ELSEWHERE,
            q.name,
            self.item(),
            Said("@taken"),
            workflow.command(transition),
            rollback=True,
        )

    def _undo(self) -> tuple[list[str], str]:
        """The login takes back its own Complete, as WorkQueue.undo_complete does: per outcome one UPDATE
        that holds to the table's rules (db/rowrules.py): the trail's (the item's last event the login's
        Complete with that outcome, within undo_within), the row's (finished, the outcome's values, and a
        review's, still in the row) and the lock's (free); the item gets on_reopen's values and a fresh
        lock of the login's, as after a claim. Refused, the last event read says why, as the engine's."""
        q, sql, a = self.q, _Sql(self.dialect, {}), self.audit
        now = q.now()
        here = q.key == _KEY
        last = (
            sa.select(a.c.event, a.c.actor, a.c.outcome, a.c.at, a.c.detail)
            .where(a.c.queue == q.name, a.c.item_key == _ITEM)
            .order_by(a.c.id.desc())
            .limit(1)
        )
        writes = {
            **q.writes(q.on_reopen, _LOGIN, now),
            **q.lock_writes(_LOGIN, now, q.shape.new_token()),
            **q.writes(q.on_claim, _LOGIN, now),
        }
        to_review = self.trail.to_review
        chosen: sa.ColumnElement[Any] = sa.literal_column("JSON_VALUE(@detail, '$.review')")
        branches = ""
        free = lockrules.guard(q, "undo", now)  # the table's lock rule (FREE), as the engine's undo carries it
        for outcome in q.config.outcomes:
            rule = rowrules.before(q, "undo", user=_LOGIN, outcome=outcome.name)
            still = sa.and_(sa.true(), *rule.state)
            if to_review is not None and q.review_writes:
                # Chosen for review, the review's values were written after the outcome's.
                reviewed = rowrules.before(q, "undo", user=_LOGIN, outcome=outcome.name, reviewed=True)
                still = sa.or_(
                    sa.and_(chosen.is_(None), still), sa.and_(chosen.is_not(None), sa.true(), *reviewed.state)
                )
            history = rowrules.trail(q, "undo", a, item=_ITEM, user=_LOGIN, outcome=outcome.name)
            update = (
                sa.update(q.table)
                .where(here, *rule.scope, free, still, *(() if history is None else (history,)))
                .values(writes)
            )
            # No semicolon after END: it would end the IF, and the ELSE IF after it would not parse.
            branches += (
                f"  {'ELSE IF' if branches else 'IF'} @outcome = {self.text(outcome.name)}\n  BEGIN\n"
                f"    {_one_line(sql(update))};\n    SET @done = @@ROWCOUNT;\n  END\n"
            )
        withdraw = ""
        if to_review is not None:
            withdraw = (
                f"  IF JSON_VALUE(@detail, '$.review') IS NOT NULL\n"
                f"    {_one_line(sql(to_review.withdraw_statement(_ITEM)))};\n"
            )
        token = sql(q.shape.as_text(q.shape.token_column()))
        limit = rowrules.window(q, "undo")
        item = self.item()
        # Why the UPDATE (which decided) refused, in the engine's words (WorkQueue._undo_refused).
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
                    _minutes_said("@age"),
                    _minutes(int(limit)),
                    rollback=True,
                )
            )
        )
        # Else its row changed since (or the trail did, under it).
        why += "".join(
            f"  {line}\n" for line in ["ROLLBACK;", *self.refusal(problems.UNDO_CHANGED, q.name, item).splitlines()]
        )
        body = (
            f"  DECLARE @found int = 0, @event nvarchar(20), @actor nvarchar(128), @outcome nvarchar(100), "
            f"@at datetime2, @detail nvarchar(max), @p_token nvarchar(64), @age int;\n"
            f"  BEGIN TRANSACTION;\n"
            f"  SELECT @found = 1 FROM {self.table} WITH (UPDLOCK, ROWLOCK) WHERE {sql(here)};\n"
            f"  SELECT @event = event, @actor = actor, @outcome = outcome, @at = at, @detail = detail FROM "
            f"({_one_line(sql(last))}) AS wb_last;\n"
            + self.no_item("@found = 0", rollback=True)
            + f"{branches}"
            + f"  IF @done = 0\n  BEGIN\n{_indent(why)}  END;\n"
            + f"{withdraw}"
            f"  SELECT @p_token = {token} FROM {self.table} WHERE {sql(here)};\n"
            + self.audit_insert(models.EventKind.UNDO.value, token=None, outcome="@outcome")
            + self.audit_insert(models.EventKind.CLAIM.value)
            + f"  COMMIT;\n  {_one_line(sql(self._row_with_lock(sa.true())))};\n"
        )
        return [self._key()], body

    def _reopen(self) -> tuple[list[str], str]:
        """A supervisor puts a finished item back to waiting with the queue's on_reopen values, as
        WorkQueue.reopen does: refused while someone holds it (force-release first) or while it waits."""
        q, sql = self.q, _Sql(self.dialect, {})
        now = q.now()
        here = q.key == _KEY
        waiting = sql(sa.case((sa.and_(*q.scope_clause(), q.todo_clause()), 1), else_=0))
        # The table's lock rule (FREE), as the engine's reopen reads it and its UPDATE carries it.
        free = lockrules.guard(q, "reopen", now)
        held = sql(sa.case((free, 0), else_=1))
        # Who holds it, as Supervision._refuse_reopen names them.
        holder = Said(f"COALESCE(@holder, {self.text('another queue of its table')})")
        # The table's row rule (FINISHED) and state after (back in todo, as the row reads with on_reopen's
        # values written), as the engine's reopen asks db/rowrules.py for them.
        values = q.writes(q.on_reopen, _LOGIN, now)
        reopened = (
            sa.update(q.table)
            .where(here, *rowrules.before(q, "reopen").all, free, rowrules.written_after(q, "reopen", values))
            .values(values)
        )
        body = (
            f"  DECLARE @found int = 0, @held int = 0, @waiting int = 0, @holder {self.user_type};\n"
            + self.reason_check("reopen")
            + f"  BEGIN TRANSACTION;\n"
            f"  SELECT @found = 1, @held = {_one_line(held)}, @waiting = {_one_line(waiting)}, "
            f"@holder = {sql(q.user)} FROM {self.table} WITH (UPDLOCK, ROWLOCK) WHERE {sql(here)};\n"
            + self.no_item("@found = 0", rollback=True)
            + self.refused("@held = 1", problems.REOPEN_HELD, q.name, self.item(), holder, rollback=True)
            + self.refused("@waiting = 1", problems.REOPEN_WAITING, q.name, self.item(), rollback=True)
            + f"  {_one_line(sql(reopened))};\n  SET @done = @@ROWCOUNT;\n"
            + self.audit_insert(models.EventKind.REOPEN.value, owner="NULL", token=None, reason="@p_reason")
            + "  COMMIT;\n"
        )
        return [self._key(), f"@p_reason {self.reason_type}"], body + self._done()

    def _take(self) -> tuple[list[str], str]:
        """A supervisor takes an escalated item to work it, as Supervision.take does: in one UPDATE that
        holds to the row rule (ESCALATED: out of todo, on_escalate's values still there) and the lock rule
        (FREE), on_reopen's values, a fresh lock of the login's and on_claim's; recorded as its claim.
        Of two supervisors taking it at once, one does; the other is told it is not waiting any more."""
        q, sql = self.q, _Sql(self.dialect, {})
        now = q.now()
        here = q.key == _KEY
        # The table's row rule (ESCALATED), as the engine's take asks db/rowrules.py for it.
        escalated = rowrules.before(q, "take").all
        writes = {
            **q.writes(q.on_reopen, _LOGIN, now),
            **q.lock_writes(_LOGIN, now, q.shape.new_token()),
            **q.writes(q.on_claim, _LOGIN, now),
        }
        taken = sa.update(q.table).where(here, lockrules.guard(q, "take", now), *escalated).values(writes)
        token = sql(q.shape.as_text(q.shape.token_column()))
        body = (
            "  DECLARE @found int = 0, @p_token nvarchar(64);\n"
            "  BEGIN TRANSACTION;\n"
            f"  SELECT @found = 1 FROM {self.table} WITH (UPDLOCK, ROWLOCK) WHERE {sql(here)};\n"
            + self.no_item("@found = 0", rollback=True)
            + f"  {_one_line(sql(taken))};\n  SET @done = @@ROWCOUNT;\n"
            + self.refused("@done = 0", problems.TAKE_NOT_ESCALATED, q.name, self.item(), rollback=True)
            + f"  SELECT @p_token = {token} FROM {self.table} WHERE {sql(here)};\n"
            + self.audit_insert(models.EventKind.CLAIM.value)
            + f"  COMMIT;\n  {_one_line(sql(self._row_with_lock(sa.true())))};\n"
        )
        return [self._key()], body

    def _move(self) -> tuple[list[str], str]:
        """A supervisor moves one waiting item nobody holds (WorkQueue.move, per key): @p_changes (JSON,
        column -> value) written to movable columns only, refused where it would take the item out of
        the work to do; the audit row keeps each changed column's value before and after."""
        q, sql = self.q, _Sql(self.dialect, {})
        here = q.key == _KEY
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
        as_json = f"({_one_line(sql(row))} FOR JSON PATH, WITHOUT_ARRAY_WRAPPER, INCLUDE_NULL_VALUES)"
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
            f"  SELECT @found = 1, @finishes = {_one_line(sql(sa.case((finished, 1), else_=0)))} "
            f"FROM {self.table} WITH (UPDLOCK, ROWLOCK) WHERE {_one_line(sql(sa.and_(here, waiting)))};\n"
            # The engine reads it as the row having changed since its own read (REFUSALS: lost).
            + self.refused("@found = 0", problems.MOVE_NOT_WAITING, q.name, self.item(), rollback=True)
            # The changes as the engine shows them: COL=VALUE, …
            + self.refused("@finishes = 1", problems.MOVE_FINISHES, q.name, Said(_changes_said), rollback=True)
            + f"  SET @before = {as_json};\n"
            f"  {_one_line(sql(update))};\n  SET @done = @@ROWCOUNT;\n"
            f"  SET @after = {as_json};\n"
            + self.audit_insert(
                models.EventKind.MOVE.value, owner="NULL", token=None, reason="@p_reason", detail=detail
            )
            + "  COMMIT;\n"
        )
        return ([self._key(), "@p_changes nvarchar(max)", f"@p_reason {self.reason_type}"], body + self._done())

    def _force_release(self) -> tuple[list[str], str]:
        return [self._key(), f"@p_reason {self.reason_type}"], self._taken(to_user=False)

    def _reassign(self) -> tuple[list[str], str]:
        return [self._key(), f"@p_to {self.user_type}", f"@p_reason {self.reason_type}"], self._taken(to_user=True)


def filter_parameters(q: mapping.BoundQueue) -> dict[str, sa.Column[Any]]:
    """The claim procedure's filter parameters (p_f0, p_f1, …) and the filter_by column each narrows by."""
    return {f"p_f{i}": column for i, column in enumerate(q.filter_columns.values())}


def _unless_null(clause: sa.ColumnElement[bool], variables: list[Any]) -> sa.ColumnElement[bool]:
    """`clause` with each comparison against one of `variables` (a filter's) holding when it is NULL."""

    def replace(element: Any) -> Any:
        if isinstance(element, sa.sql.elements.BinaryExpression) and any(element.right is v for v in variables):
            # Grouped: inside the branch's AND it must stay one condition.
            return sa.or_(element.right.is_(None), element).self_group()
        return None

    return visitors.replacement_traverse(clause, {}, replace)  # type: ignore[call-overload,no-any-return]


def _minutes(seconds: int) -> str:
    """A time as the engine's undo says it (workqueue._minutes): "10 min", or "45 s" under a minute."""
    return f"{seconds // 60} min" if seconds >= 60 else f"{seconds} s"


def _minutes_said(seconds: str) -> Said:
    """_minutes of the T-SQL int `seconds`, when the procedure refuses."""
    return Said(f"CASE WHEN {seconds} >= 60 THEN CONCAT({seconds} / 60, N' min') ELSE CONCAT({seconds}, N' s') END")


# A move's changes as Supervision.move shows them: COL=VALUE, … (in the order given).
_changes_said = "(SELECT STRING_AGG(CONCAT([key], N'=', [value]), N', ') FROM OPENJSON(@p_changes))"


def _one_line(sql: str) -> str:
    return " ".join(sql.split())


def _indent(text: str) -> str:
    return "".join(f"  {line}\n" for line in text.splitlines())


# The SQL Server backend prints these for `workbench grants`; it cannot import them (they build on it).
mssql_backend.GRANTS.script, mssql_backend.GRANTS.revoke_script = script, revoke_script
