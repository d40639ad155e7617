"""SQL Server under grants: what the procedures share (the transitions each carries, their variables, the
builder's common parts: grants, refusals, audit rows, who may run each)."""

from __future__ import annotations

import re
import typing
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy.sql import visitors

from workbench.config import model
from workbench.core import problems, workflow
from workbench.db import audit as audit_mod
from workbench.db import clock, guarded, mapping, tables, workflow_sql
from workbench.db.backends import mssql as mssql_backend
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
# ProcedureParts.executors, ProcedureParts.who_check).
SUPERVISOR_ONLY = tuple(op for op, names in CARRIES.items() if workflow_sql.supervisors_only(*names))
NOTE_ARGUMENT = "@p_note nvarchar(max) = NULL"  # a note written with a release, defer or Complete


class Said(typing.NamedTuple):
    """A value a refusal says that the procedure knows only when it refuses: T-SQL, evaluated then."""

    sql: str


# The procedures' own variables as SQL: the caller's login, the item's key, and that key as the
# audit trail, notes, deferrals and reviews keep it.
LOGIN: sa.ColumnElement[Any] = sa.literal_column("@login", sa.Unicode())
KEY: sa.ColumnElement[Any] = sa.literal_column("@p_key")
ITEM: sa.ColumnElement[Any] = sa.literal_column("CAST(@p_key AS nvarchar(200))")
PICK: sa.ColumnElement[Any] = sa.literal_column("@p_pick")  # the one item a claim by key asks for
DONE: sa.ColumnElement[bool] = sa.literal_column("@done", sa.Integer()) == sa.literal_column("1")


def procedure_name(queue: str, operation: str) -> str:
    """wb_QUEUE_OPERATION, as pg_names.object_name names PostgreSQL's objects."""
    return pg_names.object_name(queue, operation)


class Sql:
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


class ProcedureParts:
    """The parts every procedure of a queue's script is built from; the operations are its subclasses'."""

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
        return Sql(self.dialect, {})(sa.literal(value, sa.Unicode()))

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
        sql = Sql(self.dialect, {})
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
        return Sql(self.dialect, variables)(statements[0])

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
        sql = Sql(self.dialect, {})
        groups = tables.own(self.schema, tables.GROUPS_TABLE)
        listed = sa.exists().where(groups.c.user_name == LOGIN, groups.c.group_name == sa.literal(group, sa.Unicode()))
        admitted = (
            f"IS_ROLEMEMBER({self.text(SUPERVISOR_ROLE)}, @login) = 1 OR IS_ROLEMEMBER({self.text(group)}, @login) = 1 "
            f"OR {one_line(sql(listed))}"
        )
        return self.refused(f"NOT ({admitted})", problems.TAKE_NOT_IN_GROUP, self.q.name, group, Said("@login"))

    def arguments(self, operation: str) -> list[str]:
        """`operation`'s parameters as its procedure declares them (@p_key int, …): its head here, and what
        workbench binds by name (mssql_script.procedures), read without building its body (_OPERATION)."""
        raise KeyError(operation)

    def procedure(self, operation: str) -> str:
        arguments, body = self.arguments(operation), getattr(self, f"_{operation}")()
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


def filter_parameters(q: mapping.BoundQueue) -> dict[str, sa.Column[Any]]:
    """The claim procedure's filter parameters (p_f0, p_f1, …) and the filter_by column each narrows by."""
    return {f"p_f{i}": column for i, column in enumerate(q.filter_columns.values())}


def unless_null(clause: sa.ColumnElement[bool], variables: list[Any]) -> sa.ColumnElement[bool]:
    """`clause` with each comparison against one of `variables` (a filter's) holding when it is NULL."""

    def replace(element: Any) -> Any:
        if isinstance(element, sa.sql.elements.BinaryExpression) and any(element.right is v for v in variables):
            # Grouped: inside the branch's AND it must stay one condition.
            return sa.or_(element.right.is_(None), element).self_group()
        return None

    return visitors.replacement_traverse(clause, {}, replace)  # type: ignore[call-overload,no-any-return]


def minutes(seconds: int) -> str:
    """A time as the engine's undo says it (workqueue._minutes): "10 min", or "45 s" under a minute."""
    return f"{seconds // 60} min" if seconds >= 60 else f"{seconds} s"


def minutes_said(seconds: str) -> Said:
    """minutes of the T-SQL int `seconds`, when the procedure refuses."""
    return Said(f"CASE WHEN {seconds} >= 60 THEN CONCAT({seconds} / 60, N' min') ELSE CONCAT({seconds}, N' s') END")


# A move's changes as Supervision.move shows them: COL=VALUE, … (in the order given).
CHANGES_SAID = "(SELECT STRING_AGG(CONCAT([key], N'=', [value]), N', ') FROM OPENJSON(@p_changes))"


def one_line(sql: str) -> str:
    return " ".join(sql.split())


def indent(text: str) -> str:
    return "".join(f"  {line}\n" for line in text.splitlines())
