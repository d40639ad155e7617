"""PostgreSQL under `workbench grants`: the roles, privileges, policies, triggers and trusted functions, as a plan."""

from __future__ import annotations

import typing
from typing import Any

import sqlalchemy as sa

from workbench.config import model
from workbench.core import errors, models
from workbench.db import audit, backends, guarded, mapping, migrations, one_statement, pg_policies, tables
from workbench.db.claims import pg_trusted as pg_trusted_claim
from workbench.db.claims import postgresql as pg_claims
from workbench.db.roles import OPERATOR_ROLE, SUPERVISOR_ROLE
from workbench.db.rules import pg_locks, pg_names, pg_row_check, pg_shared, pg_triggers, pg_trusted


def plan(
    conn: sa.Connection, q: mapping.BoundQueue, schema: str | None, reviews: model.QueueConfig | None = None
) -> list[sa.DDL]:
    # `reviews`: the queue whose completions `q` reviews (four eyes), if any.
    """The statements that let only supervisors change other users' locks on `q`'s table.

    Creates the NOLOGIN roles workbench_operator and workbench_supervisor (a member of the
    first), grants operators what workbench reads and writes (UPDATE only on the columns it
    writes), and turns on row-level security with policies: operators may update a row that is
    free, locked by their own login or whose lock expired (database clock), and may leave only
    their own login or nobody as the lock user; supervisors may update any row; logins that are
    not workbench operators keep what their grants give them. The table owner is not subject to
    the policies (no FORCE): it runs `attach` and `init`, and operators must not use it.
    Idempotent; nothing is changed here.
    """
    if not backends.of(conn).roles:
        raise errors.UsageError(
            "row-level security is set up on PostgreSQL only; elsewhere the roles "
            "table decides who is a supervisor (`workbench role`)"
        )
    problem = q.shape.grants_problem()
    if problem:
        raise errors.UsageError(f"queue {q.name}: {problem}")
    migrations.check(conn, schema)
    current = conn.execute(sa.select(sa.func.current_schema())).scalar()
    statements = [_roles(conn), *_privileges(conn, q, schema, current)]
    wb_schema = str(schema or current)
    statements += _row_rules(conn, q, wb_schema, reviews)
    statements += _trusted_functions(conn, q, wb_schema, reviews)
    # sa.DDL formats its text with %; the text holds no placeholders, so every % is a literal one.
    return [sa.DDL(text.replace("%", "%%")) for text in statements]  # type: ignore[no-untyped-call]


def _roles(conn: sa.Connection) -> str:
    """The NOLOGIN roles workbench_operator and workbench_supervisor (a member of the first), if missing."""
    prep = conn.dialect.identifier_preparer
    operator, supervisor = prep.quote(OPERATOR_ROLE), prep.quote(SUPERVISOR_ROLE)

    def literal(value: str) -> str:
        return pg_policies.sql(conn, sa.literal(value, sa.String()))

    return (
        "DO $wb$\nBEGIN\n"
        f"  IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = {literal(OPERATOR_ROLE)}) THEN\n"
        f"    CREATE ROLE {operator} NOLOGIN;\n  END IF;\n"
        f"  IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = {literal(SUPERVISOR_ROLE)}) THEN\n"
        f"    CREATE ROLE {supervisor} NOLOGIN;\n  END IF;\n"
        f"  IF NOT pg_has_role({literal(SUPERVISOR_ROLE)}, {literal(OPERATOR_ROLE)}, 'MEMBER') THEN\n"
        f"    GRANT {operator} TO {supervisor};\n  END IF;\nEND\n$wb$"
    )


def _privileges(conn: sa.Connection, q: mapping.BoundQueue, schema: str | None, current: Any) -> list[str]:
    """What operators (and supervisors) may read and write: the queue's table, its lookups' tables,
    workbench's own tables and their sequences; the idle limit, and the notes' and cool-downs' policies."""
    prep = conn.dialect.identifier_preparer
    operator, supervisor = prep.quote(OPERATOR_ROLE), prep.quote(SUPERVISOR_ROLE)
    table = prep.format_table(q.table)
    wb_tables = {name: prep.format_table(tables.own(schema, name)) for name in pg_policies.GRANTED}
    schemas = list(dict.fromkeys([q.table.schema or current, schema or current]))
    sequences = [pg_policies.sequence(conn, tables.own(schema, name)) for name in pg_policies.SEQUENCED]
    return [
        *(f"GRANT USAGE ON SCHEMA {prep.quote_schema(str(name))} TO {operator}" for name in schemas),
        (
            f"GRANT SELECT, UPDATE ({', '.join(prep.quote(c.name) for c in pg_names.written_columns(q))}) "
            f"ON {table} TO {operator}"
        ),
        # A lookup's related table: the picker searches it, Save checks a value in it (read only).
        *(
            f"GRANT SELECT ON {prep.format_table(related)} TO {operator}"
            for related in {id(lk.table): lk.table for lk in q.lookups.values()}.values()
        ),
        # A move may change other columns of waiting items: supervisors only, the trigger checks it.
        *(
            [f"GRANT UPDATE ({', '.join(prep.quote(c.name) for c in moved)}) ON {table} TO {supervisor}"]
            if (moved := pg_names.moved_columns(q))
            else []
        ),
        f"GRANT SELECT, INSERT ON {wb_tables[tables.AUDIT_TABLE]} TO {operator}",
        # A release records a cool-down entry and deletes the releasing user's lapsed ones.
        f"GRANT SELECT, INSERT, DELETE ON {wb_tables[tables.COOLDOWN_TABLE]} TO {operator}",
        # A defer records the item's deferral (replacing one before); a release forgets it.
        f"GRANT SELECT, INSERT, DELETE ON {wb_tables[tables.DEFERRALS_TABLE]} TO {operator}",
        # Four eyes: workbench's own review writes reach the database's checks (rules/pg_guards.py), which
        # record a chosen Complete's review themselves and admit only workbench's changes of one.
        f"GRANT SELECT, INSERT, UPDATE ON {wb_tables[tables.REVIEWS_TABLE]} TO {operator}",
        # The start page's counts, kept by whichever window counts for everyone (db/counts.py).
        f"GRANT SELECT, INSERT, UPDATE ON {wb_tables[tables.COUNTS_TABLE]} TO {operator}",
        *(f"GRANT USAGE ON SEQUENCE {seq} TO {operator}" for seq in sequences if seq),
        (
            f"GRANT SELECT ON {wb_tables[tables.SETTINGS_TABLE]}, {wb_tables[tables.VERSION_TABLE]}, "
            f"{wb_tables[tables.ROLES_TABLE]}, {wb_tables[tables.GROUPS_TABLE]} TO {operator}"
        ),
        f"GRANT INSERT ON {wb_tables[tables.SETTINGS_TABLE]} TO {supervisor}",
        pg_policies.idle_limit(conn),
        *pg_policies.notes_rules(conn, schema),
        *pg_policies.cooldown_rules(conn, schema),
    ]


def _row_rules(
    conn: sa.Connection, q: mapping.BoundQueue, wb_schema: str, reviews: model.QueueConfig | None
) -> list[str]:
    """Row-level security and the queue's trigger, or the lock table's checks."""
    prep = conn.dialect.identifier_preparer
    operator, supervisor = prep.quote(OPERATOR_ROLE), prep.quote(SUPERVISOR_ROLE)
    table = prep.format_table(q.table)
    statements: list[str] = []
    if not q.shape.separate_locks:
        # Row-level security filters first (free, own or expired rows); the trigger decides.
        statements.append(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")
        for name, body in pg_policies.policies(conn, q, operator, supervisor):
            policy = prep.quote(name)
            statements += [f"DROP POLICY IF EXISTS {policy} ON {table}", f"CREATE POLICY {policy} ON {table} {body}"]
        statements += [*pg_shared.shared(conn, wb_schema), *pg_row_check.queue_trigger(conn, q, wb_schema, reviews)]
    else:
        # The locks are in workbench's lock table: operators write its rows, each write checked.
        statements += [*pg_shared.shared(conn, wb_schema), *pg_locks.queue_trigger(conn, q, wb_schema, reviews)]
    return statements


def _trusted_functions(
    conn: sa.Connection, q: mapping.BoundQueue, wb_schema: str, reviews: model.QueueConfig | None
) -> list[str]:
    """The busiest writes as trusted functions (rules/pg_trusted.py): one round trip, checked in SQL. Their
    statements are the engine's own, built here without a connection."""
    metadata, audit_table, _ = tables.build_metadata(wb_schema)
    own = {
        name: metadata.tables[f"{wb_schema}.{name}"]
        for name in (tables.COOLDOWN_TABLE, tables.DEFERRALS_TABLE, tables.REVIEWS_TABLE)
    }
    trail = audit.trail_of(
        q.config,
        reviews,
        audit_table,
        own[tables.COOLDOWN_TABLE],
        None,
        own[tables.DEFERRALS_TABLE],
        own[tables.REVIEWS_TABLE],
    )
    statements: list[str] = []
    if q.shape.all_in_row and not q.shape.separate_locks:
        statements += pg_trusted.trusted_next(
            conn, q, wb_schema, pg_trusted_claim.statement(pg_claims.SkipLockedClaim(), q, trail)
        )
    if q.shape.single_write and not q.shape.separate_locks:  # Complete without edits
        writer = guarded.GuardedWriter(typing.cast(Any, None), q, trail)
        completes = {
            o.name: one_statement.statement(
                writer, guarded.Shape(models.EventKind.COMPLETE, outcome=o.name, unlock=True)
            )
            for o in q.config.outcomes
        }
        statements += pg_trusted.trusted_complete(conn, q, wb_schema, completes)
    return statements


def revoke_plan(conn: sa.Connection, q: mapping.BoundQueue, schema: str | None) -> list[sa.DDL]:
    """The statements that undo plan() for `q`: its trigger, policies, row-level security and the
    operators' grants on its table; what queues share (the audit guard, the operators' grants on
    workbench's tables) goes with the last queue. The roles stay: people may be members of them."""
    if not backends.of(conn).roles:
        raise errors.UsageError("row-level security is set up on PostgreSQL only; there is nothing to revoke here")
    prep = conn.dialect.identifier_preparer
    operator, supervisor = prep.quote(OPERATOR_ROLE), prep.quote(SUPERVISOR_ROLE)
    table = prep.format_table(q.table)
    wb_schema = str(schema or conn.execute(sa.select(sa.func.current_schema())).scalar())
    wb_tables = ", ".join(prep.format_table(tables.own(wb_schema, name)) for name in pg_policies.GRANTED)
    sequences = [
        seq
        for seq in (pg_policies.sequence(conn, tables.own(wb_schema, name)) for name in pg_policies.SEQUENCED)
        if seq
    ]
    roles = (
        conn.execute(
            sa.text("SELECT count(*) FROM pg_catalog.pg_roles WHERE rolname IN (:o, :s)"),
            {"o": OPERATOR_ROLE, "s": SUPERVISOR_ROLE},
        ).scalar()
        == 2
    )
    others = pg_triggers.enforced_on(conn, q, wb_schema)  # the table's other enforced queues keep theirs
    statements = pg_triggers.drop_queue_trigger(conn, q, wb_schema, others)
    if q.shape.separate_locks:
        statements += pg_locks.drop(conn, q, wb_schema)
    statements += [
        f"DROP POLICY IF EXISTS {prep.quote(name)} ON {table}" for name in pg_policies.policy_names(q.name).values()
    ]
    if not others:
        statements.append(f"ALTER TABLE {table} DISABLE ROW LEVEL SECURITY")
    shared: list[str] = []
    if roles and not others:
        statements.append(f"REVOKE ALL ON {table} FROM {operator}, {supervisor}")
    if roles:
        notes = prep.format_table(tables.own(wb_schema, tables.NOTES_TABLE))
        cooldown = prep.format_table(tables.own(wb_schema, tables.COOLDOWN_TABLE))
        shared = [
            f"REVOKE ALL ON {wb_tables}, {notes} FROM {operator}",
            f"REVOKE ALL ON {wb_tables} FROM {supervisor}",
            *(f"REVOKE ALL ON SEQUENCE {seq} FROM {operator}" for seq in sequences),
            *(f"DROP POLICY IF EXISTS {prep.quote(name)} ON {notes}" for name in pg_policies.NOTES_POLICIES),
            f"ALTER TABLE {notes} DISABLE ROW LEVEL SECURITY",
            *(f"DROP POLICY IF EXISTS {prep.quote(name)} ON {cooldown}" for name in pg_policies.COOLDOWN_POLICIES),
            f"ALTER TABLE {cooldown} DISABLE ROW LEVEL SECURITY",
        ]
    statements.append(pg_shared.drop_shared(conn, wb_schema, shared))
    return [sa.DDL(text.replace("%", "%%")) for text in statements]  # type: ignore[no-untyped-call]


def render(statements: list[sa.DDL]) -> str:
    """The plan as a script."""
    return "".join(stmt.statement.replace("%%", "%") + ";\n\n" for stmt in statements).strip() + "\n"


def apply(conn: sa.Connection, statements: list[sa.DDL]) -> None:
    """Run the plan on `conn`, inside the caller's transaction (PostgreSQL DDL is transactional)."""
    for stmt in statements:
        conn.execute(stmt)
