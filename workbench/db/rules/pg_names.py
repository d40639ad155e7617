"""PostgreSQL under grants: the names, roles, tables, columns and small renderings every check shares."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy.sql import util as sql_util

from workbench.db import mapping, tables
from workbench.db.binding import conditions

ENFORCED_TABLE = "workbench_enforced"
AUDIT_GUARD = "workbench_audit_guard"
DEFERRAL_GUARD = "workbench_deferral_guard"
SETTLE = "workbench_audit_settle"
SETTLE_ARGS = "bigint, text, text, text, text, text"  # its argument types
AUDITED_SETTING = "workbench.audited"  # transaction-local: the audit rows the database wrote
REVIEWED_SETTING = "workbench.reviewed"  # transaction-local: the reviews the database recorded
REVIEW_GUARD = "workbench_review_guard"
NOTES_GUARD = "workbench_notes_guard"
THIS_TRANSACTION = "pg_current_xact_id()::xid"  # a row's xmin equals it: this transaction wrote the row
OPERATOR_ROLE = "workbench_operator"
SUPERVISOR_ROLE = "workbench_supervisor"


def object_name(queue: str, kind: str) -> str:
    """The name of one of `queue`'s database objects (policy, trigger, function): wb_QUEUE_KIND, the
    queue's name cut so that the whole stays within PostgreSQL's 63 characters."""
    base = "wb_" + re.sub(r"[^A-Za-z0-9]+", "_", queue).strip("_").lower()
    return f"{base[: 63 - len(kind) - 1]}_{kind}"


def trigger_name(table: str) -> str:
    """The name of a queue table's protocol trigger and of its function (earlier: of one queue's)."""
    return object_name(table, "protocol")


def check_function_name(queue: str) -> str:
    """The name of `queue`'s check of one update (the table's trigger calls it)."""
    return object_name(queue, "check")


# The writes under the caller's own live lock: one branch of the check function tells them apart by
# what the update changed.
OWN_LOCK = ("release", "defer", "escalate", "complete", "review_accept", "review_send_back", "save", "extend")
CHECK_ROWS = ("o", "n")  # the check function's arguments: the row before and after the update

# plpgsql: a check of the protocol runs inside its trigger only. It writes audit and review rows as
# the owner, so called by hand with made-up rows it would credit a Complete that never happened (its
# EXECUTE is revoked from PUBLIC, see private(); this holds even if someone grants it).
TRIGGER_ONLY = (
    "IF pg_trigger_depth() = 0 THEN\n    RAISE EXCEPTION 'workbench: a check of the protocol is called by "
    "its trigger only' USING ERRCODE = '42501';\n  END IF;"
)


def private(function: str) -> str:
    """Nobody but the owner may call `function` (name and argument types): PostgreSQL gives EXECUTE on a
    new function to PUBLIC. A trigger's function needs no EXECUTE to fire; a check called from a
    SECURITY DEFINER trigger function runs as the owner."""
    return f"REVOKE ALL ON FUNCTION {function} FROM PUBLIC"


class Renderer:
    """SQL text for trigger bodies: values quoted by the dialect, queue columns as OLD.x / NEW.x
    (`rows` names the two aliases), the caller's login as `login`."""

    login = "login"

    def __init__(self, dialect: Any, q: mapping.BoundQueue, rows: tuple[str, str] = ("old", "new")) -> None:
        self.dialect, self.q = dialect, q
        self.prep = dialect.identifier_preparer
        self.old, self.new = q.table.alias(rows[0]), q.table.alias(rows[1])

    def sql(self, expr: sa.ColumnElement[Any], row: sa.FromClause | None = None) -> str:
        if row is not None:
            expr = sql_util.ClauseAdapter(row).traverse(expr)
        text = str(expr.compile(dialect=self.dialect, compile_kwargs={"literal_binds": True}))
        text = text.replace("%%", "%") if self.dialect.paramstyle in ("format", "pyformat") else text
        return f"({text})"  # it goes inside larger conditions: never let an OR in it bind to them

    def literal(self, value: str) -> str:
        return self.sql(sa.literal(value, sa.String()))

    @staticmethod
    def literal_value(conn: sa.Connection, value: Any, type_: Any) -> str:
        text = str(sa.literal(value, type_).compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True}))
        return text.replace("%%", "%") if conn.dialect.paramstyle in ("format", "pyformat") else text

    @staticmethod
    def literal_of(conn: sa.Connection, value: str) -> str:
        return Renderer.literal_value(conn, value, sa.String())

    def col(self, row: sa.FromClause, column: sa.Column[Any]) -> str:
        return self.sql(column, row)

    def unchanged(self, columns: list[sa.Column[Any]]) -> str:
        """None of `columns` changed (compared as text where the type has no equality, e.g. json)."""
        parts = []
        for c in columns:
            old, new = self.col(self.old, c), self.col(self.new, c)
            if isinstance(c.type, (sa.JSON, sa.types.NullType)):
                old, new = f"CAST({old} AS text)", f"CAST({new} AS text)"
            parts.append(f"{old} IS NOT DISTINCT FROM {new}")
        return " AND ".join(parts) or "true"

    def assigned(self, assignments: list[conditions.BoundAssignment], row: sa.FromClause | None = None) -> str:
        """The new row (or `row`) holds what `assignments` write (the user being this login)."""
        parts = []
        for b in assignments:
            new = self.col(self.new if row is None else row, b.column)
            kind = b.assignment.kind
            if kind == "value":
                parts.append(f"{new} IS NOT DISTINCT FROM {self.sql(sa.literal(b.value, type_=b.column.type))}")
            elif kind == "null":
                parts.append(f"{new} IS NULL")
            elif kind == "user":
                parts.append(f"{new} = {self.login}")
            else:  # a time: the database's clock at the write
                parts.append(f"{new} IS NOT NULL")
        return " AND ".join(parts) or "true"


# The first of the events a change may be (recorded until the client's own audit row settles which).
FIRST_EVENT = "split_part(maybe[1], ':', 1)"


def recorder(audit: str, queue_name: str, key: str, at: str) -> Callable[..., str]:
    """record(event, owner, token, outcome, maybe, changes): plpgsql that writes one audit row of the item
    `key` (SQL text) of the queue, acted by `login` (the function's variable), and notes it for the audit
    guard. `maybe`: the events the change may be (e.g. save or extend), for the guard to settle;
    `changes`: a jsonb variable holding the edits the change made (changes_of()), which the row keeps
    whatever workbench's own audit row says."""

    def record(
        event: str, owner: str, token: str, outcome: str = "NULL", maybe: str = "NULL", changes: str | None = None
    ) -> str:
        edits = "" if changes is None else f", 'changes', NULLIF({changes}, '{{}}')"
        whens = []
        if maybe != "NULL":
            whens.append(
                f"WHEN cardinality({maybe}) > 1 THEN json_build_object('recorded_by', 'database', "
                f"'may_be', {maybe}{edits})::text"
            )
        if changes is not None:
            whens.append(f"WHEN {changes} <> '{{}}' THEN json_build_object('changes', {changes})::text")
        detail = f"CASE {' '.join(whens)} END" if whens else "NULL"
        insert = (
            f"INSERT INTO {audit} (queue, item_key, event, actor, owner, token, outcome, detail, at) VALUES "
            f"({queue_name}, {key}, {event}, login, {owner}, {token}, {outcome}, {detail}, {at});"
        )
        # A note that lets the audit guard drop workbench's own copy of a settled row without a
        # query; forging one only makes the forger's own audit row vanish.
        crumb = note(AUDITED_SETTING, queue_name, key, event, owner, outcome)
        if maybe != "NULL":
            crumb = f"IF cardinality({maybe}) = 1 THEN {crumb} END IF;"
        return f"{insert}\n        {crumb}"

    return record


def note(setting: str, *fields: str) -> str:
    """plpgsql: add a crumb of `fields` (SQL text) to a transaction-local setting."""
    return (
        f"noted := set_config('{setting}', coalesce(current_setting('{setting}', true), '') "
        f"|| {crumb_text(*fields)}, true);"
    )


def noted(setting: str, *fields: str) -> str:
    """SQL: is the crumb of `fields` in the transaction-local setting?"""
    return f"(strpos(coalesce(current_setting('{setting}', true), ''), {crumb_text(*fields)}) > 0)"


def table_oid(conn: sa.Connection, table: sa.Table) -> int:
    return int(
        conn.execute(
            sa.text("SELECT CAST(to_regclass(:t) AS oid)"), {"t": conn.dialect.identifier_preparer.format_table(table)}
        ).scalar_one()
    )


def serves(conn: sa.Connection, q: mapping.BoundQueue, schema: str, login: str) -> str:
    """SQL: may `login` (SQL text) claim from `q`? With `serves`, only a member of the group."""
    return "true" if q.config.serves is None else member_of(conn, q.config.serves, schema, login)


def escalated_to(conn: sa.Connection, q: mapping.BoundQueue, schema: str, login: str, supervisor: str) -> str:
    """SQL: may `login` take `q`'s escalated items (the table's Actor.ESCALATED_TO)? A supervisor
    (`supervisor`, SQL), or a member of the queue's escalate_to group where it names one."""
    group = q.config.escalate_to
    return supervisor if group is None else f"({supervisor} OR {member_of(conn, group, schema, login)})"


def member_of(conn: sa.Connection, name: str, schema: str, login: str) -> str:
    """SQL: is `login` (SQL text) in the group `name`: in workbench's groups table, or a member of a
    database role of that name (directly or not)?"""
    prep = conn.dialect.identifier_preparer
    groups = prep.format_table(own_table(schema, tables.GROUPS_TABLE))
    group = Renderer.literal_of(conn, name)
    return (
        f"(EXISTS (SELECT 1 FROM {groups} g WHERE g.user_name = {login} AND g.group_name = {group}) OR "
        f"EXISTS (SELECT 1 FROM pg_catalog.pg_roles u, pg_catalog.pg_roles g WHERE u.rolname = {login} "
        f"AND g.rolname = {group} AND pg_has_role(u.oid, g.oid, 'MEMBER')))"
    )


def next_function_name(queue: str) -> str:
    """The name of `queue`'s trusted claim of the next item."""
    return object_name(queue, "next")


def complete_function_name(queue: str) -> str:
    """The name of `queue`'s trusted Complete without edits."""
    return object_name(queue, "complete")


def next_call(dialect: Any, q: mapping.BoundQueue, schema: str | None) -> sa.TextClause:
    """The trusted claim as the engine calls it: the queue's row it locked, if any."""
    return sa.text(f"SELECT * FROM {_called(dialect, schema, next_function_name(q.name))}()")


def complete_call(dialect: Any, q: mapping.BoundQueue, schema: str | None) -> sa.TextClause:
    """The trusted Complete as the engine calls it: key, token and outcome bound; the time it happened."""
    name = _called(dialect, schema, complete_function_name(q.name))
    return sa.text(f"SELECT * FROM {name}(:wb_key, :wb_token, :wb_outcome)").bindparams(
        sa.bindparam("wb_key", type_=q.key.type),
        sa.bindparam("wb_token", type_=sa.String()),
        sa.bindparam("wb_outcome", type_=sa.String()),
    )


def _called(dialect: Any, schema: str | None, function: str) -> str:
    prep = dialect.identifier_preparer
    return f"{prep.quote_schema(schema)}.{prep.quote(function)}" if schema else prep.quote(function)


def callable_next(conn: sa.Connection, q: mapping.BoundQueue, schema: str | None) -> str | None:
    """This login, if the database has `q`'s trusted claim and this login may call it; else None."""
    return _callable(conn, _called(conn.dialect, schema, next_function_name(q.name)) + "()")


def callable_complete(conn: sa.Connection, q: mapping.BoundQueue, schema: str | None) -> str | None:
    """This login, if the database has `q`'s trusted Complete and this login may call it; else None."""
    key_type = q.key.type.compile(dialect=conn.dialect)
    return _callable(conn, f"{_called(conn.dialect, schema, complete_function_name(q.name))}({key_type}, text, text)")


def _callable(conn: sa.Connection, name: str) -> str | None:
    may, login = conn.execute(
        sa.text(
            "SELECT to_regprocedure(:f) IS NOT NULL AND has_function_privilege(to_regprocedure(:f), 'EXECUTE'), "
            "CAST(session_user AS text)"
        ),
        {"f": name},
    ).one()
    return str(login) if may else None


def is_missing_function(exc: sa.exc.DBAPIError) -> bool:
    """Was a trusted function dropped (`grants --revoke`) while workbench ran?"""
    return str(getattr(exc.orig, "sqlstate", "") or "") == "42883"


def search_path(prep: Any, q: mapping.BoundQueue, schema: str) -> str:
    """A function's fixed search_path, built-ins first: the queue's and workbench's tables, nothing of
    the caller's."""
    return ", ".join(
        dict.fromkeys(["pg_catalog", prep.quote_schema(q.table.schema or schema), prep.quote_schema(schema), "pg_temp"])
    )


def with_params(conn: sa.Connection, statement: sa.Executable, params: Mapping[str, str]) -> str:
    """`statement` as SQL with its bound parameters replaced by the given SQL (function arguments)."""
    assert isinstance(statement, sa.sql.ClauseElement)
    compiled = statement.compile(dialect=conn.dialect)
    assert isinstance(compiled, sa.sql.compiler.SQLCompiler)
    # Constants (literal_execute: outcome values, the queue's name) rendered in; the rest stay %(name)s.
    sql = compiled.construct_expanded_state({name: None for name in params if name in compiled.binds}).statement
    assert conn.dialect.paramstyle == "pyformat"  # psycopg

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in params:
            return params[name]
        bind = compiled.binds.get(name)
        if bind is None or bind.required or bind.callable is not None:
            raise ValueError(f"the statement has a parameter {name} the function does not give")
        # A constant of the statement (e.g. a queue's name in a review's condition): rendered in.
        return Renderer.literal_value(conn, bind.value, bind.type)

    return re.sub(r"%\((\w+)\)s", replace, sql).replace("%%", "%")


def checked_columns(q: mapping.BoundQueue) -> list[sa.Column[Any]]:
    """The columns the trigger holds to each operation's rules: every one an operator or a supervisor
    may update (workbench's writes, and what a supervisor's move may change)."""
    written = {c.name for c in written_columns(q)}
    return [c for c in q.table.c if c.name in written or q.movable(c)]


def moved_columns(q: mapping.BoundQueue) -> list[sa.Column[Any]]:
    """The columns a supervisor's move may write and workbench's operations do not: granted to
    supervisors alone, checked by the trigger's move."""
    written = {c.name for c in written_columns(q)}
    return [c for c in q.table.c if c.name not in written and q.movable(c)]


def written_columns(q: mapping.BoundQueue) -> list[sa.Column[Any]]:
    """Every column workbench may write: lock columns, on_claim/on_release/outcome columns, edits."""
    names = (
        {c.name for c in q.lock_columns}
        | {c.name for c in q.editable}
        | {
            b.column.name
            for group in (
                q.on_claim,
                q.on_release,
                q.on_reopen,
                q.on_escalate,
                *q.outcomes.values(),
                *q.reason_writes.values(),
            )
            for b in group
        }
    )
    return [c for c in q.table.c if c.name in names]


def crumb_text(*fields: str) -> str:
    """One audit row the database wrote, as text (queue, key, event, owner, outcome given as SQL)."""
    return "(chr(30) || " + " || chr(31) || ".join(f"coalesce({field}, '')" for field in fields) + " || chr(30))"


@functools.cache
def own_table(schema: str, name: str) -> sa.Table:
    """One of workbench's own tables in `schema`, for SQL text (their metadata built once per schema)."""
    return tables.build_metadata(schema)[0].tables[f"{schema}.{name}"]


def enforced_table(schema: str) -> sa.Table:
    """The queues whose protocol the database enforces (for the audit guard, which serves them all)."""
    return sa.Table(ENFORCED_TABLE, sa.MetaData(), schema=schema)


def wb_audit_table(schema: str) -> sa.Table:
    return own_table(schema, tables.AUDIT_TABLE)


def owner_oid(conn: sa.Connection, table: sa.Table) -> int:
    """The oid of the role that owns `table` (who is not checked, and as whom the triggers write)."""
    name = conn.dialect.identifier_preparer.format_table(table)
    return int(
        conn.execute(
            sa.text("SELECT relowner FROM pg_catalog.pg_class WHERE oid = to_regclass(:t)"), {"t": name}
        ).scalar_one()
    )


def create_function(name: str, body: str, *, security: str) -> str:
    # A fixed search_path: nothing a caller puts on their path runs inside (as the owner, for DEFINER).
    return (
        f"CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql SECURITY {security} "
        f"SET search_path = pg_catalog, pg_temp AS $wb${body}\n$wb$"
    )


def qualified(prep: Any, schema: str, name: str) -> str:
    return f"{prep.quote_schema(schema)}.{prep.quote(name)}"


def if_exists(table: str, statement: str) -> str:
    return f"DO $wb$\nBEGIN\n  IF to_regclass('{table}') IS NOT NULL THEN\n    {statement};\n  END IF;\nEND\n$wb$"
