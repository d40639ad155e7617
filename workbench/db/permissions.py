"""Who may supervise: PostgreSQL roles and row-level security, or workbench's roles table elsewhere."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import typing
from collections.abc import Iterator
from typing import Any

import sqlalchemy as sa

from workbench.config import model
from workbench.core import errors, models, problems
from workbench.db import audit, backends, clock, guarded, mapping, migrations, tables
from workbench.db.claims import postgresql as pg_claims

# The roles and the refusals naming them live in a leaf (the engine's writes raise them); their names stay here too.
from workbench.db.roles import OPERATOR_ROLE as OPERATOR_ROLE
from workbench.db.roles import SUPERVISOR_ROLE as SUPERVISOR_ROLE
from workbench.db.roles import login_mismatch_error as login_mismatch_error
from workbench.db.roles import refused as refused
from workbench.db.rules import pg_lock_check, pg_locks, pg_names, pg_row_check, pg_shared, pg_triggers, pg_trusted

SUPERVISOR, OPERATOR = tables.ROLE_NAMES

# How long an operator's login may sit in an open transaction (ALTER ROLE … SET, by `grants`): rows it
# locked by hand (SELECT … FOR UPDATE) would hide them from everyone's Next item meanwhile.
IDLE_IN_TRANSACTION = "1min"

NO_ROLES_NOTE = (
    "no supervisor is set up in the roles table, so everyone may force-release, reassign and "
    "publish; `workbench --user NAME role grant NAME supervisor` sets up the first one"
)


@dataclasses.dataclass(frozen=True)
class RoleGrant:
    """One row of the roles table."""

    user: str
    role: str
    granted_by: str
    granted_at: dt.datetime  # database clock, UTC

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


# -- who may supervise ----------------------------------------------------------------------------


def roles_table(schema: str | None) -> sa.Table:
    return tables.own(schema, tables.ROLES_TABLE)


def supervisors(conn: sa.Connection, schema: str | None) -> list[str]:
    """Users with the supervisor role in the roles table (empty: roles are not set up)."""
    t = roles_table(schema)
    return list(conn.execute(sa.select(t.c.user_name).where(t.c.role == SUPERVISOR).order_by(t.c.user_name)).scalars())


def row_security(conn: sa.Connection, table: sa.Table) -> bool:
    """Is `table` under PostgreSQL row-level security (`workbench grants --apply`)? Then the
    database itself decides who may change someone else's lock."""
    if not backends.of(conn).roles:
        return False
    found = conn.execute(
        sa.text("SELECT relrowsecurity FROM pg_catalog.pg_class WHERE oid = to_regclass(:name)"),
        {"name": _regclass(conn, table)},
    ).scalar()
    return bool(found)


def database_decides(conn: sa.Connection, q: mapping.BoundQueue, schema: str | None) -> bool:
    """Does the database itself decide who may make a supervisor's change on `q` (PostgreSQL under
    `workbench grants`: an in-row queue's row-level security, a lock-table queue's lock check)?"""
    if row_security(conn, q.table):
        return True
    if not q.shape.separate_locks or not backends.of(conn).roles:
        return False
    prep = conn.dialect.identifier_preparer
    wb_schema = str(schema or conn.execute(sa.select(sa.func.current_schema())).scalar())
    check = pg_names.qualified(prep, wb_schema, pg_lock_check.lock_check_name(q.name))
    return bool(conn.execute(sa.select(sa.func.to_regproc(check).isnot(None))).scalar())


def require_supervisor(conn: sa.Connection, schema: str | None, actor: str, action: errors.Phrase) -> None:
    """Raise NotPermitted unless `actor` may `action` (e.g. "force-release cases 3"), as the roles
    table says; with no supervisor in it roles are not set up, and everyone may. (Where the database
    decides on a queue's writes, database_decides, Supervision asks the login's role instead.)
    """
    names = supervisors(conn, schema)
    if not names or actor in names:
        return
    shown = ", ".join(names[:5]) + (" …" if len(names) > 5 else "")
    raise errors.NotPermitted.of(problems.NOT_SUPERVISOR, actor, action, shown, user=actor)


def require_publisher(conn: sa.Connection, schema: str | None, actor: str) -> None:
    """Raise NotPermitted unless `actor` may publish queue settings.

    On PostgreSQL with `workbench grants` applied (workbench_supervisor may insert into the
    settings table) the database's grants decide; elsewhere the roles table does.
    """
    action = errors.Phrase.of(problems.DO_PUBLISH)
    if backends.of(conn).roles and _role_exists(conn, SUPERVISOR_ROLE):
        settings = _regclass(conn, _workbench_table(schema, tables.SETTINGS_TABLE))
        privilege = sa.func.has_table_privilege
        role_may, login, may = conn.execute(
            sa.select(
                privilege(SUPERVISOR_ROLE, settings, "INSERT"),
                sa.func.current_user(),
                privilege(sa.func.current_user(), settings, "INSERT"),
            )
        ).one()
        if role_may:
            if not may:
                raise refused(actor, action, login)
            return
    require_supervisor(conn, schema, actor, action)


def database_refusal(conn: sa.Connection, actor: str, action: errors.Phrase) -> errors.NotPermitted | None:
    """On PostgreSQL: NotPermitted when this login is not a workbench_supervisor (so that a row the
    policy hid, or a write it filtered out, is reported as what it is); None otherwise."""
    if not backends.of(conn).roles or not _role_exists(conn, SUPERVISOR_ROLE):
        return None
    login, member = conn.execute(
        sa.select(sa.func.current_user(), sa.func.pg_has_role(sa.func.current_user(), SUPERVISOR_ROLE, "USAGE"))
    ).one()
    if member:
        return None
    return refused(actor, action, login)


def login_mismatch(conn: sa.Connection, table: sa.Table, user: str) -> errors.NotPermitted | None:
    """On PostgreSQL: NotPermitted when row-level security binds this login and it is not `user`
    (so a write under `user`'s lock was filtered out, not lost); None otherwise."""
    if not backends.of(conn).roles:
        return None
    row = conn.execute(
        sa.text(
            "SELECT session_user, c.relrowsecurity AND NOT r.rolsuper AND NOT r.rolbypassrls "
            "AND NOT pg_has_role(session_user, c.relowner, 'USAGE') FROM pg_catalog.pg_class c "
            "JOIN pg_catalog.pg_roles r ON r.rolname = session_user WHERE c.oid = to_regclass(:name)"
        ),
        {"name": _regclass(conn, table)},
    ).first()
    if row is None or not row[1] or row[0] == user:
        return None
    return login_mismatch_error(user, row[0])


def not_an_operator(conn: sa.Connection) -> str | None:
    """On PostgreSQL under `workbench grants`: this login's name when it is not a member of
    workbench_operator and not exempt (superuser, BYPASSRLS); None otherwise. Says why a login was
    refused workbench's own tables, which grants gives to operators only."""
    if not backends.of(conn).roles or not _role_exists(conn, OPERATOR_ROLE):
        return None
    login, member = conn.execute(
        sa.text(
            "SELECT session_user, r.rolsuper OR r.rolbypassrls OR pg_has_role(session_user, :role, 'USAGE') "
            "FROM pg_catalog.pg_roles r WHERE r.rolname = session_user"
        ),
        {"role": OPERATOR_ROLE},
    ).one()
    return None if member else str(login)


def roles_sql() -> str:
    """What a database administrator runs once so that a table owner without CREATEROLE may run
    `grants --apply`: the two NOLOGIN roles, the supervisor a member of the operator."""
    return (
        f"CREATE ROLE {OPERATOR_ROLE} NOLOGIN;\n"
        f"CREATE ROLE {SUPERVISOR_ROLE} NOLOGIN;\n"
        f"GRANT {OPERATOR_ROLE} TO {SUPERVISOR_ROLE};"
    )


def roles_it_cannot_make(conn: sa.Connection) -> str | None:
    """On PostgreSQL: why `grants --apply` would fail making workbench's roles (they are missing and this
    login may not create roles), with the grant it lacks and the alternative; None when it can go ahead."""
    if not backends.of(conn).roles:
        return None
    login, may = conn.execute(
        sa.text("SELECT rolname, rolsuper OR rolcreaterole FROM pg_catalog.pg_roles WHERE rolname = current_user")
    ).one()
    missing = [role for role in (OPERATOR_ROLE, SUPERVISOR_ROLE) if not _role_exists(conn, role)]
    member = (
        not missing and conn.execute(sa.select(sa.func.pg_has_role(SUPERVISOR_ROLE, OPERATOR_ROLE, "MEMBER"))).scalar()
    )
    if may or (not missing and member):
        return None
    what = " and ".join(missing) if missing else f"{SUPERVISOR_ROLE}'s membership of {OPERATOR_ROLE}"
    return (
        f"`grants --apply` makes the database roles {what}, and the login {login} may not create roles: it "
        f"needs CREATEROLE (a database administrator runs ALTER ROLE {login} CREATEROLE), or the administrator "
        f"makes the roles first, once for the server, and then {login} runs `grants --apply` again:\n" + roles_sql()
    )


def database_roles_in_use(conn: sa.Connection) -> bool:
    """PostgreSQL with `workbench grants` applied somewhere on the server (the supervisor role exists)."""
    return backends.of(conn).roles and _role_exists(conn, SUPERVISOR_ROLE)


def is_refusal(exc: sa.exc.DBAPIError) -> bool:
    """Did the database refuse for lack of a privilege or because a row-level security policy said no?"""
    code = str(getattr(exc.orig, "sqlstate", "") or "")
    return code == "42501" or "row-level security" in str(exc.orig).lower()


def lacks_role(exc: sa.exc.DBAPIError) -> bool:
    """Does a supervisor's refused write mean the login is not in workbench_supervisor? A refusal (see
    is_refusal) the protocol's trigger did not explain: where it said why ("workbench: …", e.g. the
    row is in no state the queue holds), that is passed on instead (dberrors), the login may well be one."""
    return is_refusal(exc) and not str(exc.orig).startswith("workbench: ")


@contextlib.contextmanager
def supervising(conn: sa.Connection, actor: str, action: errors.Phrase) -> Iterator[None]:
    """A supervisor's write: a refusal for want of the supervisor role (lacks_role) is said as one,
    naming the login; any other error passes unchanged."""
    try:
        yield
    except sa.exc.DBAPIError as exc:
        if not lacks_role(exc):
            raise
        raise refused(actor, action, conn.engine.url.username) from exc


def _role_exists(conn: sa.Connection, role: str) -> bool:
    return (
        conn.execute(sa.text("SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = :role"), {"role": role}).first()
        is not None
    )


def _regclass(conn: sa.Connection, table: sa.Table) -> str:
    return conn.dialect.identifier_preparer.format_table(table)


def _workbench_table(schema: str | None, name: str) -> sa.Table:
    return tables.own(schema, name)


# -- the roles table ------------------------------------------------------------------------------


def list_roles(conn: sa.Connection, schema: str | None) -> list[RoleGrant]:
    t = roles_table(schema)
    rows = conn.execute(sa.select(t).order_by(t.c.role.desc(), t.c.user_name)).mappings()
    return [_grant(row) for row in rows]


def grant(conn: sa.Connection, schema: str | None, actor: str, user: str, role: str) -> RoleGrant:
    """Give `user` a role (replacing the one they had). Only a supervisor may, except while the
    table has no supervisor yet: then anyone may set up the first one."""
    _check_name(actor, "your user name (--user NAME)")
    _check_name(user, "the user to grant a role to")
    if role not in tables.ROLE_NAMES:
        raise errors.InvalidValue(f"no role '{role}'; the roles are {' and '.join(tables.ROLE_NAMES)}")
    require_supervisor(conn, schema, actor, errors.Phrase.of(problems.DO_GRANT_ROLE, role, user))
    return record_role(conn, schema, actor, user, role)


def record_role(conn: sa.Connection, schema: str | None, actor: str, user: str, role: str) -> RoleGrant:
    """Write `user`'s role, unchecked: for `people add`, run by a login that may create the database's
    logins (and so may decide who supervises)."""
    t = roles_table(schema)
    conn.execute(sa.delete(t).where(t.c.user_name == user))
    conn.execute(sa.insert(t).values(user_name=user, role=role, granted_by=actor, granted_at=clock.db_now()))
    return _grant(conn.execute(sa.select(t).where(t.c.user_name == user)).mappings().one())


def revoke(conn: sa.Connection, schema: str | None, actor: str, user: str) -> RoleGrant:
    """Remove `user`'s role; returns what they had. Only a supervisor may (while there is one)."""
    _check_name(actor, "your user name (--user NAME)")
    t = roles_table(schema)
    row = conn.execute(sa.select(t).where(t.c.user_name == user)).mappings().first()
    if row is None:
        raise errors.InvalidValue(f"{user} has no role in this database's roles table")
    require_supervisor(conn, schema, actor, errors.Phrase.of(problems.DO_REVOKE_ROLE, user))
    conn.execute(sa.delete(t).where(t.c.user_name == user))
    return _grant(row)


def forget_role(conn: sa.Connection, schema: str | None, user: str) -> None:
    """Remove `user`'s row, unchecked (`people remove`, as record_role)."""
    t = roles_table(schema)
    conn.execute(sa.delete(t).where(t.c.user_name == user))


def _check_name(name: str, what: str) -> None:
    if not name or not name.strip() or len(name) > 128:
        raise errors.UsageError(f"{what} must be 1 to 128 characters")


def _grant(row: Any) -> RoleGrant:
    at = row["granted_at"]
    if isinstance(at, str):
        at = dt.datetime.fromisoformat(at)
    return RoleGrant(
        user=row["user_name"],
        role=row["role"],
        granted_by=row["granted_by"],
        granted_at=at if at.tzinfo else at.replace(tzinfo=dt.UTC),
    )


# -- PostgreSQL: roles, grants and row-level security ---------------------------------------------

# workbench's own tables that `grants` gives operators (and supervisors) privileges on.
_GRANTED = (
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
    prep = conn.dialect.identifier_preparer
    operator, supervisor = prep.quote(OPERATOR_ROLE), prep.quote(SUPERVISOR_ROLE)
    table = prep.format_table(q.table)
    wb_tables = {name: prep.format_table(_workbench_table(schema, name)) for name in _GRANTED}
    current = conn.execute(sa.select(sa.func.current_schema())).scalar()
    schemas = list(dict.fromkeys([q.table.schema or current, schema or current]))
    sequences = [_sequence(conn, _workbench_table(schema, name)) for name in _SEQUENCED]

    def literal(value: str) -> str:
        return _sql(conn, sa.literal(value, sa.String()))

    statements = [
        (
            "DO $wb$\nBEGIN\n"
            f"  IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = {literal(OPERATOR_ROLE)}) THEN\n"
            f"    CREATE ROLE {operator} NOLOGIN;\n  END IF;\n"
            f"  IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = {literal(SUPERVISOR_ROLE)}) THEN\n"
            f"    CREATE ROLE {supervisor} NOLOGIN;\n  END IF;\n"
            f"  IF NOT pg_has_role({literal(SUPERVISOR_ROLE)}, {literal(OPERATOR_ROLE)}, 'MEMBER') THEN\n"
            f"    GRANT {operator} TO {supervisor};\n  END IF;\nEND\n$wb$"
        ),
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
        _idle_limit(conn),
        *_notes_rules(conn, schema),
        *_cooldown_rules(conn, schema),
    ]
    wb_schema = str(schema or current)
    if not q.shape.separate_locks:
        # Row-level security filters first (free, own or expired rows); the trigger decides.
        statements.append(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")
        for name, body in _policies(conn, q, operator, supervisor):
            policy = prep.quote(name)
            statements += [f"DROP POLICY IF EXISTS {policy} ON {table}", f"CREATE POLICY {policy} ON {table} {body}"]
        statements += [*pg_shared.shared(conn, wb_schema), *pg_row_check.queue_trigger(conn, q, wb_schema, reviews)]
    else:
        # The locks are in workbench's lock table: operators write its rows, each write checked.
        statements += [*pg_shared.shared(conn, wb_schema), *pg_locks.queue_trigger(conn, q, wb_schema, reviews)]
    # The busiest writes as trusted functions (rules/pg_trusted.py): one round trip, checked in SQL. Their
    # statements are the engine's own, built here without a connection.
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
    if q.shape.all_in_row and not q.shape.separate_locks:
        statements += pg_trusted.trusted_next(conn, q, wb_schema, pg_claims.SkipLockedClaim().trusted_next(q, trail))
    if q.shape.one_statement and not q.shape.separate_locks:  # Complete without edits
        writer = guarded.GuardedWriter(typing.cast(Any, None), q, trail)
        completes = {
            o.name: writer.statement(guarded.Shape(models.EventKind.COMPLETE, outcome=o.name, unlock=True))
            for o in q.config.outcomes
        }
        statements += pg_trusted.trusted_complete(conn, q, wb_schema, completes)
    # sa.DDL formats its text with %; the text holds no placeholders, so every % is a literal one.
    return [sa.DDL(text.replace("%", "%%")) for text in statements]  # type: ignore[no-untyped-call]


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
    wb_tables = ", ".join(prep.format_table(_workbench_table(wb_schema, name)) for name in _GRANTED)
    sequences = [seq for seq in (_sequence(conn, _workbench_table(wb_schema, name)) for name in _SEQUENCED) if seq]
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
    statements += [f"DROP POLICY IF EXISTS {prep.quote(name)} ON {table}" for name in policy_names(q.name).values()]
    if not others:
        statements.append(f"ALTER TABLE {table} DISABLE ROW LEVEL SECURITY")
    shared: list[str] = []
    if roles and not others:
        statements.append(f"REVOKE ALL ON {table} FROM {operator}, {supervisor}")
    if roles:
        notes = prep.format_table(_workbench_table(wb_schema, tables.NOTES_TABLE))
        cooldown = prep.format_table(_workbench_table(wb_schema, tables.COOLDOWN_TABLE))
        shared = [
            f"REVOKE ALL ON {wb_tables}, {notes} FROM {operator}",
            f"REVOKE ALL ON {wb_tables} FROM {supervisor}",
            *(f"REVOKE ALL ON SEQUENCE {seq} FROM {operator}" for seq in sequences),
            *(f"DROP POLICY IF EXISTS {prep.quote(name)} ON {notes}" for name in NOTES_POLICIES),
            f"ALTER TABLE {notes} DISABLE ROW LEVEL SECURITY",
            *(f"DROP POLICY IF EXISTS {prep.quote(name)} ON {cooldown}" for name in COOLDOWN_POLICIES),
            f"ALTER TABLE {cooldown} DISABLE ROW LEVEL SECURITY",
        ]
    statements.append(pg_shared.drop_shared(conn, wb_schema, shared))
    return [sa.DDL(text.replace("%", "%%")) for text in statements]  # type: ignore[no-untyped-call]


NOTES_POLICIES = ("workbench_notes_read", "workbench_notes_author")
COOLDOWN_POLICIES = ("workbench_cooldown_read", "workbench_cooldown_add", "workbench_cooldown_forget")
_SEQUENCED = (
    tables.AUDIT_TABLE,
    tables.COOLDOWN_TABLE,
    tables.NOTES_TABLE,
    tables.DEFERRALS_TABLE,
    tables.REVIEWS_TABLE,
)


def _idle_limit(conn: sa.Connection) -> str:
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
    value = _sql(conn, sa.literal(IDLE_IN_TRANSACTION, sa.String()))
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


def _notes_rules(conn: sa.Connection, schema: str | None) -> list[str]:
    """Operators read every note and add their own: a note is written under the login that wrote
    it, and never changed or removed (no UPDATE or DELETE is granted, and no policy admits one).
    Logins that are not workbench operators keep what their grants give them."""
    prep = conn.dialect.identifier_preparer
    notes = prep.format_table(_workbench_table(schema, tables.NOTES_TABLE))
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


def _cooldown_rules(conn: sa.Connection, schema: str | None) -> list[str]:
    """A cool-down keeps an item from the one who released it for a while: an operator's login adds
    and forgets only its own (never holds an item back from someone else). Logins that are not
    workbench operators keep what their grants give them."""
    prep = conn.dialect.identifier_preparer
    cooldown = prep.format_table(_workbench_table(schema, tables.COOLDOWN_TABLE))
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


def _policies(conn: sa.Connection, q: mapping.BoundQueue, operator: str, supervisor: str) -> list[tuple[str, str]]:
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
    others, touch, leave = _sql(conn, not_operator), _sql(conn, may_touch), _sql(conn, may_leave)
    return [
        (names["read"], "AS PERMISSIVE FOR SELECT TO PUBLIC USING (true)"),
        # Logins that are not workbench operators (e.g. the application that feeds the queue)
        # keep exactly what their grants give them.
        (names["others"], f"AS PERMISSIVE FOR ALL TO PUBLIC USING ({others}) WITH CHECK ({others})"),
        (names["operator"], f"AS PERMISSIVE FOR UPDATE TO {operator} USING ({touch}) WITH CHECK ({leave})"),
        (names["supervisor"], f"AS PERMISSIVE FOR UPDATE TO {supervisor} USING (true) WITH CHECK (true)"),
    ]


def _sql(conn: sa.Connection, expr: sa.ColumnElement[Any]) -> str:
    """An expression as SQL text for DDL: values rendered (and quoted) by the dialect, bare column names."""
    text = str(expr.compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True, "include_table": False}))
    # Drivers with format/pyformat parameters get literal % doubled in compiled text; DDL text is plain SQL.
    return text.replace("%%", "%") if conn.dialect.paramstyle in ("format", "pyformat") else text


def _sequence(conn: sa.Connection, table: sa.Table) -> str | None:
    """The quoted name of the sequence behind `table`'s id column, if it has one."""
    row = conn.execute(
        sa.text(
            "SELECT n.nspname, c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n "
            "ON n.oid = c.relnamespace WHERE c.oid = to_regclass(pg_get_serial_sequence(:t, 'id'))"
        ),
        {"t": _regclass(conn, table)},
    ).first()
    if row is None:
        return None
    prep = conn.dialect.identifier_preparer
    return f"{prep.quote_schema(row[0])}.{prep.quote(row[1])}"


def render(statements: list[sa.DDL]) -> str:
    """The plan as a script."""
    return "".join(stmt.statement.replace("%%", "%") + ";\n\n" for stmt in statements).strip() + "\n"


def apply(conn: sa.Connection, statements: list[sa.DDL]) -> None:
    """Run the plan on `conn`, inside the caller's transaction (PostgreSQL DDL is transactional)."""
    for stmt in statements:
        conn.execute(stmt)
