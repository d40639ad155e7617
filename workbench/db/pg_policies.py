"""PostgreSQL under grants: the row-level security policies and the limit on idle transactions `grants` writes."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from workbench.db import mapping, permissions, tables
from workbench.db.roles import OPERATOR_ROLE
from workbench.db.rules import pg_names

# workbench's own tables that `grants` gives operators (and supervisors) privileges on.
GRANTED = (
    tables.AUDIT_TABLE,
    tables.COOLDOWN_TABLE,
    tables.DEFERRALS_TABLE,
    tables.REVIEWS_TABLE,
    tables.SETTINGS_TABLE,
    tables.VERSION_TABLE,
    tables.ROLES_TABLE,
    tables.GROUPS_TABLE,
    tables.COUNTS_TABLE,
)


NOTES_POLICIES = ("workbench_notes_read", "workbench_notes_author")
COOLDOWN_POLICIES = ("workbench_cooldown_read", "workbench_cooldown_add", "workbench_cooldown_forget")
SEQUENCED = (
    tables.AUDIT_TABLE,
    tables.COOLDOWN_TABLE,
    tables.NOTES_TABLE,
    tables.DEFERRALS_TABLE,
    tables.REVIEWS_TABLE,
)


def idle_limit(conn: sa.Connection) -> str:
    """Every login that is a workbench operator (supervisors too) gets idle_in_transaction_session_timeout
    = IDLE_IN_TRANSACTION, unless it has a shorter one of its own: an open transaction that locked the free
    rows (by hand, or a client that hangs) would make everyone's Next item find nothing. A setting of the
    login (role settings are not inherited from workbench_operator), so logins added by hand later get it
    when `grants` runs again (`people add` gives it at once). A value that lifts the limit (0, longer, or
    one the server would not take) is put back: a login may ALTER ROLE itself SET it, which no privilege
    forbids, so each `grants --apply` undoes that, `people list` names it meanwhile, and a supervisor sees
    and ends a blocking session with `people sessions` (docs/setup/grants.md). Compared in milliseconds as
    the server reads the values (units and all): set for this transaction, read back, then restored.
    Where the applying login may not alter a role, a warning says so and the rest applies."""
    setting = "idle_in_transaction_session_timeout"
    value = sql(conn, sa.literal(permissions.IDLE_IN_TRANSACTION, sa.String()))
    return (
        f"DO $wb$\nDECLARE\n  login record;\n  own text;\n  ms bigint;\n  limit_ms bigint;\n"
        f"  before text := current_setting('{setting}');\nBEGIN\n"
        f"  PERFORM set_config('{setting}', {value}, true);\n"
        f"  SELECT setting::bigint INTO limit_ms FROM pg_catalog.pg_settings WHERE name = '{setting}';\n"
        f"  FOR login IN SELECT r.oid, r.rolname FROM pg_catalog.pg_roles r WHERE r.rolcanlogin AND NOT r.rolsuper\n"
        f"      AND pg_has_role(r.oid, '{OPERATOR_ROLE}', 'MEMBER') LOOP\n"
        f"    SELECT substr(c, length('{setting}=') + 1) INTO own FROM pg_catalog.pg_db_role_setting s, "
        f"unnest(s.setconfig) c\n"
        f"      WHERE s.setrole = login.oid AND s.setdatabase = 0 AND c LIKE '{setting}=%' LIMIT 1;\n"
        f"    ms := NULL;\n"
        f"    IF own IS NOT NULL THEN\n"
        f"      BEGIN\n"
        f"        PERFORM set_config('{setting}', own, true);\n"
        f"        SELECT setting::bigint INTO ms FROM pg_catalog.pg_settings WHERE name = '{setting}';\n"
        f"      EXCEPTION WHEN others THEN\n        ms := NULL;\n      END;\n"
        f"    END IF;\n"
        f"    IF ms IS NULL OR ms = 0 OR ms > limit_ms THEN\n"
        f"      BEGIN\n"
        f"        EXECUTE format('ALTER ROLE %I SET {setting} = %L', login.rolname, {value});\n"
        f"      EXCEPTION WHEN insufficient_privilege THEN\n"
        f"        RAISE WARNING 'workbench: could not limit idle transactions of the login %: %', login.rolname, "
        f"SQLERRM;\n      END;\n"
        f"    END IF;\n  END LOOP;\n"
        f"  PERFORM set_config('{setting}', before, true);\nEND\n$wb$"
    )


def notes_rules(conn: sa.Connection, schema: str | None) -> list[str]:
    """Operators read every note and add their own: a note is written under the login that wrote
    it, and never changed or removed (no UPDATE or DELETE is granted, and no policy admits one).
    Logins that are not workbench operators keep what their grants give them."""
    prep = conn.dialect.identifier_preparer
    notes = prep.format_table(tables.own(schema, tables.NOTES_TABLE))
    operator = prep.quote(OPERATOR_ROLE)
    read, author = (prep.quote(name) for name in NOTES_POLICIES)
    return [
        f"GRANT SELECT, INSERT ON {notes} TO {operator}",
        f"ALTER TABLE {notes} ENABLE ROW LEVEL SECURITY",
        f"DROP POLICY IF EXISTS {read} ON {notes}",
        f"CREATE POLICY {read} ON {notes} FOR SELECT USING (true)",
        f"DROP POLICY IF EXISTS {author} ON {notes}",
        (
            f"CREATE POLICY {author} ON {notes} FOR INSERT WITH CHECK (author = CAST(session_user AS varchar) "
            f"OR NOT pg_has_role(session_user, '{OPERATOR_ROLE}', 'USAGE'))"
        ),
    ]


def cooldown_rules(conn: sa.Connection, schema: str | None) -> list[str]:
    """A cool-down keeps an item from the one who released it for a while: an operator's login adds
    and forgets only its own (never holds an item back from someone else). Logins that are not
    workbench operators keep what their grants give them."""
    prep = conn.dialect.identifier_preparer
    cooldown = prep.format_table(tables.own(schema, tables.COOLDOWN_TABLE))
    read, add, forget = (prep.quote(name) for name in COOLDOWN_POLICIES)
    own = f"actor = CAST(session_user AS varchar) OR NOT pg_has_role(session_user, '{OPERATOR_ROLE}', 'USAGE')"
    return [
        f"ALTER TABLE {cooldown} ENABLE ROW LEVEL SECURITY",
        *(f"DROP POLICY IF EXISTS {policy} ON {cooldown}" for policy in (read, add, forget)),
        f"CREATE POLICY {read} ON {cooldown} FOR SELECT USING (true)",
        f"CREATE POLICY {add} ON {cooldown} FOR INSERT WITH CHECK ({own})",
        f"CREATE POLICY {forget} ON {cooldown} FOR DELETE USING ({own})",
    ]


def policy_names(queue: str) -> dict[str, str]:
    return {kind: pg_names.object_name(queue, kind) for kind in ("read", "others", "operator", "supervisor")}


def policies(conn: sa.Connection, q: mapping.BoundQueue, operator: str, supervisor: str) -> list[tuple[str, str]]:
    now = q.now()
    # session_user, not current_user: SET ROLE cannot change it, so a lock is always written
    # under the name of the login that wrote it.
    login = sa.cast(sa.func.session_user(), sa.String())
    scope = q.scope_clause()
    # The same expressions the engine's own statements use: free, mine, or stale (expired, or
    # no expiry at all); on a table without an expiry column: lock time + lock_duration.
    may_touch = sa.and_(*scope, sa.or_(q.user.is_(None), q.user == login, q.stale(now)))
    may_leave = sa.and_(*scope, sa.or_(q.user.is_(None), q.user == login))
    not_operator = sa.not_(
        sa.func.pg_has_role(
            sa.func.session_user(), sa.literal(OPERATOR_ROLE, sa.String()), sa.literal("USAGE", sa.String())
        )
    )
    names = policy_names(q.name)
    others, touch, leave = sql(conn, not_operator), sql(conn, may_touch), sql(conn, may_leave)
    return [
        (names["read"], "AS PERMISSIVE FOR SELECT TO PUBLIC USING (true)"),
        # Logins that are not workbench operators (e.g. the application that feeds the queue)
        # keep exactly what their grants give them.
        (names["others"], f"AS PERMISSIVE FOR ALL TO PUBLIC USING ({others}) WITH CHECK ({others})"),
        (names["operator"], f"AS PERMISSIVE FOR UPDATE TO {operator} USING ({touch}) WITH CHECK ({leave})"),
        (names["supervisor"], f"AS PERMISSIVE FOR UPDATE TO {supervisor} USING (true) WITH CHECK (true)"),
    ]


def sql(conn: sa.Connection, expr: sa.ColumnElement[Any]) -> str:
    """An expression as SQL text for DDL: values rendered (and quoted) by the dialect, bare column names."""
    text = str(expr.compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True, "include_table": False}))
    # Drivers with format/pyformat parameters get literal % doubled in compiled text; DDL text is plain SQL.
    return text.replace("%%", "%") if conn.dialect.paramstyle in ("format", "pyformat") else text


def sequence(conn: sa.Connection, table: sa.Table) -> str | None:
    """The quoted name of the sequence behind `table`'s id column, if it has one."""
    row = conn.execute(
        sa.text(
            "SELECT n.nspname, c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n "
            "ON n.oid = c.relnamespace WHERE c.oid = to_regclass(pg_get_serial_sequence(:t, 'id'))"
        ),
        {"t": conn.dialect.identifier_preparer.format_table(table)},
    ).first()
    if row is None:
        return None
    prep = conn.dialect.identifier_preparer
    return f"{prep.quote_schema(row[0])}.{prep.quote(row[1])}"
