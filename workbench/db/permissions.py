"""Who may supervise: PostgreSQL roles and row-level security, or workbench's roles table elsewhere."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
from collections.abc import Iterator
from typing import Any

import sqlalchemy as sa

from workbench.core import errors, problems
from workbench.db import backends, clock, mapping, tables

# The roles and the refusals naming them live in a leaf (the engine's writes raise them); their names stay here too.
from workbench.db.roles import OPERATOR_ROLE as OPERATOR_ROLE
from workbench.db.roles import SUPERVISOR_ROLE as SUPERVISOR_ROLE
from workbench.db.roles import login_mismatch_error as login_mismatch_error
from workbench.db.roles import refused as refused
from workbench.db.rules import pg_lock_check, pg_names

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
