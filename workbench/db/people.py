"""`workbench people`: each person's own database login in workbench's roles, made in one step (or the SQL
for the administrator), and who may work which queue with a login that is ready."""

from __future__ import annotations

import dataclasses
import re
import secrets
from typing import Any

import sqlalchemy as sa

from workbench.core import errors
from workbench.core.records import Change, Person, Session  # what the admin services hand out: core's records
from workbench.db import groups, permissions
from workbench.db.roles import OPERATOR_ROLE, SUPERVISOR_ROLE

ROLES = ("operator", "supervisor")
# A person's login is also their workbench user: the name written into lock columns and the trail.
# Letters, digits, _ . - only: it is quoted as a PostgreSQL identifier, a MariaDB account and a T-SQL name.
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]{0,62}$")
_IDLE = "idle_in_transaction_session_timeout"


@dataclasses.dataclass(frozen=True)
class QueueRef:
    """What `people` needs of a configured queue: its table and the group it serves (None: everyone)."""

    name: str
    schema: str | None
    table: str
    serves: str | None = None
    works: bool = True  # one of the queues the person works (the others are only read: a config is checked whole)
    reads: tuple[str, ...] = ()  # the related tables its configured lookups name (fields.COL.lookup.table): read only


# What a supervisor's login needs to see other logins' sessions and end them (a database administrator
# grants it: both are server-wide powers over every non-superuser session, which is why `grants` does not).
SESSION_GRANTS = f"GRANT pg_read_all_stats, pg_signal_backend TO {SUPERVISOR_ROLE}"


def check_name(name: str) -> None:
    if not _NAME.match(name or ""):
        raise errors.UsageError(
            f"{name!r} cannot be a person's login: use 1 to 63 letters, digits, '_', '.' or '-', starting with a "
            "letter or '_' (it is also the workbench user name, written into lock columns and the audit trail)"
        )
    if name in (OPERATOR_ROLE, SUPERVISOR_ROLE) or name.lower().startswith("pg_"):
        raise errors.UsageError(f"{name!r} is a role's name, not a person's")


def check_role(role: str) -> None:
    if role not in ROLES:
        raise errors.UsageError(f"no role '{role}'; the roles are {' and '.join(ROLES)}")


def new_password() -> str:
    """A password to hand to the person once: 24 characters, no quoting needed in any SQL."""
    return secrets.token_urlsafe(18)


class Logins:
    """The people commands on one kind of database; the base has no logins (SQLite)."""

    applies = True  # workbench may run the statements itself (not: SQL Server's script)

    def may_make(self, conn: sa.Connection) -> bool:
        """May this login create logins and grant workbench's roles?"""
        return False

    def add(
        self, conn: Any, schema: str | None, name: str, role: str, password: bool, queues: list[QueueRef]
    ) -> Change:
        raise errors.UsageError(
            "a SQLite database has no logins: whoever may open the file works the queue; supervisors are named "
            "in workbench's roles table (`workbench role grant USER supervisor`)"
        )

    def remove(self, conn: Any, name: str, keep_login: bool) -> Change:
        return self.add(conn, None, name, "operator", False, [])

    def people(self, conn: Any, schema: str | None, queues: list[QueueRef]) -> list[Person]:
        self.add(conn, schema, "", "operator", False, [])
        return []

    def sessions(self, conn: sa.Connection, queues: list[QueueRef]) -> tuple[list[Session], bool]:
        """Sessions idle in an open transaction, and whether this login sees every login's."""
        raise errors.UsageError("`people sessions` is for PostgreSQL, where a session may hold rows locked by hand")

    def end_session(self, conn: sa.Connection, pid: int) -> Session:
        self.sessions(conn, [])
        raise AssertionError  # pragma: no cover

    def run(self, conn: sa.Connection, change: Change) -> Change:
        """Run `change`'s statements (one transaction where the database has transactional DDL)."""
        for statement in change.statements:
            conn.exec_driver_sql(statement.replace("%", "%%") if _percent_escaped(conn) else statement)
        return dataclasses.replace(change, applied=True)


def _percent_escaped(conn: sa.Connection) -> bool:
    return conn.dialect.paramstyle in ("format", "pyformat")


def _literal(conn: sa.Connection, value: str) -> str:
    text = str(sa.literal(value, sa.String()).compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True}))
    return text.replace("%%", "%") if _percent_escaped(conn) else text


def _serving(conn: sa.Connection, schema: str | None, name: str, queues: list[QueueRef]) -> list[str]:
    """The queues of `queues` whose group (if any) `name` is in."""
    return [q.name for q in queues if q.serves is None or groups.is_member(conn, schema, name, q.serves)]


class RoleLogins(Logins):
    """PostgreSQL: a LOGIN role per person, a member of workbench_operator or workbench_supervisor,
    with the idle-transaction limit `grants` gives operators' logins."""

    def may_make(self, conn: sa.Connection) -> bool:
        return bool(
            conn.execute(
                sa.text("SELECT rolsuper OR rolcreaterole FROM pg_catalog.pg_roles WHERE rolname = current_user")
            ).scalar()
        )

    def _login(self, conn: sa.Connection, name: str) -> Any:
        return conn.execute(
            sa.text(
                "SELECT r.rolname, r.rolsuper, r.rolcanlogin, r.rolname = current_user AS me, "
                "EXISTS (SELECT 1 FROM pg_catalog.pg_auth_members m WHERE m.roleid = r.oid) AS members, "
                + ("pg_has_role(r.oid, :sup, 'MEMBER')" if permissions.database_roles_in_use(conn) else "false")
                + " AS supervisor FROM pg_catalog.pg_roles r WHERE r.rolname = :n"
            ),
            {"n": name, "sup": SUPERVISOR_ROLE},
        ).first()

    def add(
        self, conn: Any, schema: str | None, name: str, role: str, password: bool, queues: list[QueueRef]
    ) -> Change:
        check_name(name)
        check_role(role)
        q = conn.dialect.identifier_preparer.quote
        found = self._login(conn, name)
        if found is not None and not found.rolcanlogin and found.members:
            raise errors.UsageError(
                f"{name} is a group role with members (a queue's group?), not a person's login; choose another name"
            )
        if found is not None and (found.rolsuper or found.me):
            raise errors.UsageError(
                f"{name} is {'a superuser' if found.rolsuper else 'the login you are using'}: it is not bound by "
                "workbench's grants, so it is never an operator's or supervisor's login; choose another name"
            )
        statements: list[str] = []
        notes: list[str] = []
        exists = {
            r
            for (r,) in conn.execute(
                sa.text("SELECT rolname FROM pg_catalog.pg_roles WHERE rolname IN (:o, :s)"),
                {"o": OPERATOR_ROLE, "s": SUPERVISOR_ROLE},
            )
        }
        if len(exists) < 2:  # `grants` has not run on this server yet: its roles first, as it makes them
            statements += [f"CREATE ROLE {q(r)} NOLOGIN" for r in (OPERATOR_ROLE, SUPERVISOR_ROLE) if r not in exists]
            statements.append(f"GRANT {q(OPERATOR_ROLE)} TO {q(SUPERVISOR_ROLE)}")
            notes.append("the queues are protected only once `workbench grants QUEUE --apply` has run for each")
        secret = new_password() if password and found is None else None
        if found is None:
            statements.append(
                f"CREATE ROLE {q(name)} LOGIN" + (f" PASSWORD {_literal(conn, secret)}" if secret else "")
            )
        else:
            statements.append(f"ALTER ROLE {q(name)} LOGIN")
            notes.append(f"the login {name} was there already: its password is unchanged")
        if role == "supervisor":
            statements.append(f"GRANT {q(SUPERVISOR_ROLE)} TO {q(name)}")
        else:
            statements.append(f"GRANT {q(OPERATOR_ROLE)} TO {q(name)}")
            if found is not None and found.supervisor:
                statements.append(f"REVOKE {q(SUPERVISOR_ROLE)} FROM {q(name)}")
        # What `grants` gives every operator's login (a role setting is not inherited from workbench_operator).
        statements.append(f"ALTER ROLE {q(name)} SET {_IDLE} = {_literal(conn, permissions.IDLE_IN_TRANSACTION)}")
        return Change(name, role, statements, password=secret, notes=notes)

    def remove(self, conn: Any, name: str, keep_login: bool) -> Change:
        check_name(name)
        q = conn.dialect.identifier_preparer.quote
        found = self._login(conn, name)
        if found is None:
            raise errors.UsageError(f"there is no login {name} on this server")
        if found.rolsuper or found.me:
            raise errors.UsageError(f"{name} is not a person's login workbench made (a superuser, or your own)")
        statements = [f"REVOKE {q(SUPERVISOR_ROLE)}, {q(OPERATOR_ROLE)} FROM {q(name)}"]
        if not keep_login:
            statements.append(f"DROP ROLE {q(name)}")
        return Change(name, "supervisor" if found.supervisor else "operator", statements)

    def run(self, conn: sa.Connection, change: Change) -> Change:
        notes = list(change.notes)
        for statement in change.statements:
            if not statement.startswith("DROP ROLE "):
                conn.exec_driver_sql(statement.replace("%", "%%"))
                continue
            try:
                with conn.begin_nested():
                    conn.exec_driver_sql(statement)
            except sa.exc.DBAPIError as exc:  # it owns objects or holds grants elsewhere: it stays, locked out
                conn.exec_driver_sql(f"ALTER ROLE {conn.dialect.identifier_preparer.quote(change.name)} NOLOGIN")
                first = str(exc.orig).strip().splitlines()[0]
                notes.append(f"the login {change.name} stays, without LOGIN: it could not be dropped ({first})")
                return dataclasses.replace(
                    change, applied=True, notes=notes, statements=[*change.statements[:-1], "ALTER ROLE … NOLOGIN"]
                )
        return dataclasses.replace(change, applied=True, notes=notes)

    def people(self, conn: Any, schema: str | None, queues: list[QueueRef]) -> list[Person]:
        if not permissions.database_roles_in_use(conn):
            return []
        rows = conn.execute(
            sa.text(
                "WITH RECURSIVE m(member) AS ("
                " SELECT am.member FROM pg_catalog.pg_auth_members am JOIN pg_catalog.pg_roles g"
                " ON g.oid = am.roleid WHERE g.rolname IN (:o, :s)"
                " UNION SELECT am.member FROM pg_catalog.pg_auth_members am JOIN m ON am.roleid = m.member)"
                " SELECT DISTINCT r.oid, r.rolname, r.rolcanlogin, r.rolvaliduntil < now() AS expired,"
                " r.rolconnlimit = 0 AS no_connections, pg_has_role(r.oid, :s, 'MEMBER') AS supervisor,"
                " has_database_privilege(r.oid, current_database(), 'CONNECT') AS may_connect,"
                " (SELECT c FROM pg_catalog.pg_db_role_setting st, unnest(st.setconfig) c"
                "   WHERE st.setrole = r.oid AND st.setdatabase = 0 AND c LIKE :idle LIMIT 1) AS idle"
                " FROM m JOIN pg_catalog.pg_roles r ON r.oid = m.member"
                " WHERE r.rolname NOT IN (:o, :s) ORDER BY r.rolname"
            ),
            {"o": OPERATOR_ROLE, "s": SUPERVISOR_ROLE, "idle": f"{_IDLE}=%"},
        ).all()
        limit = idle_ms(conn, permissions.IDLE_IN_TRANSACTION) or 60_000
        prep = conn.dialect.identifier_preparer
        found = []
        for row in rows:
            problems = []
            if not row.rolcanlogin:
                problems.append("cannot log in (NOLOGIN)")
            if row.expired:
                problems.append("its password has expired (VALID UNTIL)")
            if row.no_connections:
                problems.append("its connection limit is 0")
            if not row.may_connect:
                problems.append("may not connect to this database")
            value = row.idle.partition("=")[2] if row.idle else None
            ms = idle_ms(conn, value) if value is not None else None
            if ms is None or ms == 0 or ms > limit:
                problems.append(
                    f"no idle-transaction limit ({_IDLE} {'unset' if value is None else '= ' + value}): "
                    f"`workbench people add {row.rolname} --role …` or `grants --apply` sets it"
                )
            workable = []
            for queue in queues:
                table = prep.format_table(sa.table(queue.table, schema=queue.schema))
                may = conn.execute(sa.select(sa.func.has_any_column_privilege(row.oid, table, "UPDATE"))).scalar()
                if may:
                    workable.append(queue)
            names = _serving(conn, schema, row.rolname, workable)
            found.append(Person(row.rolname, "supervisor" if row.supervisor else "operator", names, problems))
        return found

    def sessions(self, conn: sa.Connection, queues: list[QueueRef]) -> tuple[list[Session], bool]:
        prep = conn.dialect.identifier_preparer
        names = [prep.format_table(sa.table(q.table, schema=q.schema)) for q in queues]
        rows = conn.execute(
            sa.text(
                "SELECT a.pid, a.usename, CAST(extract(epoch FROM now() - a.state_change) AS bigint) AS idle_s, "
                "CAST(extract(epoch FROM now() - a.xact_start) AS bigint) AS open_s, ARRAY(SELECT DISTINCT "
                "c.relname FROM pg_catalog.pg_locks l JOIN pg_catalog.pg_class c ON c.oid = l.relation "
                "WHERE l.pid = a.pid AND l.relation IN (SELECT to_regclass(n) FROM unnest(CAST(:names AS text[])) n)"
                ") AS tables FROM pg_catalog.pg_stat_activity a WHERE a.datname = current_database() "
                "AND a.pid <> pg_backend_pid() AND a.state LIKE 'idle in transaction%' ORDER BY a.xact_start"
            ),
            {"names": names},
        ).all()
        sees_all = bool(
            conn.execute(
                sa.text(
                    "SELECT rolsuper OR pg_has_role(current_user, 'pg_read_all_stats', 'USAGE') "
                    "FROM pg_catalog.pg_roles WHERE rolname = current_user"
                )
            ).scalar()
        )
        return [Session(r.pid, r.usename, int(r.idle_s), int(r.open_s), sorted(r.tables)) for r in rows], sees_all

    def end_session(self, conn: sa.Connection, pid: int) -> Session:
        found = [s for s in self.sessions(conn, [])[0] if s.pid == pid]
        if not found:
            raise errors.UsageError(
                f"no session {pid} idle in a transaction on this database (`workbench people sessions` lists them)"
            )
        try:
            conn.execute(sa.select(sa.func.pg_terminate_backend(pid)))
        except sa.exc.DBAPIError as exc:
            if str(getattr(exc.orig, "sqlstate", "")) != "42501":
                raise
            raise errors.NotPermitted(
                f"this login may not end {found[0].login}'s session: a database administrator grants it "
                f"({SESSION_GRANTS}), or ends it (SELECT pg_terminate_backend({pid}))"
            ) from exc
        return found[0]


def idle_ms(conn: sa.Connection, value: str) -> int | None:
    """`value` of idle_in_transaction_session_timeout in milliseconds, as the server reads it (units and
    all); None when the server would not take it. Set for this transaction only, then put back."""
    before = conn.execute(sa.select(sa.func.current_setting(_IDLE))).scalar()
    try:
        with conn.begin_nested():
            conn.execute(sa.select(sa.func.set_config(_IDLE, value, sa.true())))
            ms = conn.execute(
                sa.text("SELECT setting::bigint FROM pg_catalog.pg_settings WHERE name = :n"), {"n": _IDLE}
            ).scalar()
            conn.execute(sa.select(sa.func.set_config(_IDLE, before, sa.true())))
    except sa.exc.DBAPIError:
        return None
    return int(ms) if ms is not None else None


class AccountLogins(Logins):
    """MariaDB/MySQL: an account per person ('name'@'%') with the privileges workbench's statements
    need on the queues' tables and workbench's own; who is a supervisor, in workbench's roles table."""

    host = "%"

    def _account(self, conn: sa.Connection, name: str) -> str:
        return f"{_literal(conn, name)}@{_literal(conn, self.host)}"

    def may_make(self, conn: sa.Connection) -> bool:
        me = (
            "CONCAT('''', SUBSTRING_INDEX(CURRENT_USER(), '@', 1), '''@''', "
            "SUBSTRING_INDEX(CURRENT_USER(), '@', -1), '''')"
        )
        return bool(
            conn.execute(
                sa.text(
                    "SELECT EXISTS (SELECT 1 FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = "
                    f"{me} AND PRIVILEGE_TYPE = 'CREATE USER') AND (EXISTS (SELECT 1 FROM "
                    f"information_schema.USER_PRIVILEGES WHERE GRANTEE = {me} AND IS_GRANTABLE = 'YES') OR EXISTS "
                    f"(SELECT 1 FROM information_schema.SCHEMA_PRIVILEGES WHERE GRANTEE = {me} AND "
                    "TABLE_SCHEMA = DATABASE() AND IS_GRANTABLE = 'YES'))"
                )
            ).scalar()
        )

    def _exists(self, conn: sa.Connection, name: str) -> bool:
        # mysql.user may not be readable; the account's privileges are (to one who may grant them).
        return (
            conn.execute(
                sa.text("SELECT 1 FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = :g LIMIT 1"),
                {"g": f"'{name}'@'{self.host}'"},
            ).first()
            is not None
        )

    def _own_tables(self, conn: sa.Connection, schema: str | None) -> list[str]:
        names = set(sa.inspect(conn).get_table_names(schema=schema))
        return sorted(n for n in names if n.startswith("workbench_"))

    def add(
        self, conn: Any, schema: str | None, name: str, role: str, password: bool, queues: list[QueueRef]
    ) -> Change:
        check_name(name)
        check_role(role)
        prep = conn.dialect.identifier_preparer
        account = self._account(conn, name)
        exists = self._exists(conn, name)
        secret = new_password() if password and not exists else None
        notes = [] if not exists else [f"the account {name}@{self.host} was there already: its password is unchanged"]
        statements = []
        if not exists:
            statements.append(f"CREATE USER {account}" + (f" IDENTIFIED BY {_literal(conn, secret)}" if secret else ""))
        # Every queue's table is read (workbench checks the whole config against the tables before any
        # command); only the tables of the queues they work are written.
        granted: dict[str, bool] = {}
        for queue in queues:
            table = prep.format_table(sa.table(queue.table, schema=queue.schema))
            granted[table] = granted.get(table, False) or queue.works
            for related in queue.reads:  # a lookup's table: the picker searches it, Save checks in it
                related_table = prep.format_table(sa.table(related, schema=queue.schema))
                granted[related_table] = granted.get(related_table, False)
        for table, works in granted.items():
            statements.append(f"GRANT {'SELECT, UPDATE' if works else 'SELECT'} ON {table} TO {account}")
        for own in self._own_tables(conn, schema):
            table = prep.format_table(sa.table(own, schema=schema))
            statements.append(f"GRANT SELECT, INSERT, UPDATE, DELETE ON {table} TO {account}")
        return Change(name, role, statements, password=secret, notes=notes)

    def remove(self, conn: Any, name: str, keep_login: bool) -> Change:
        check_name(name)
        if not self._exists(conn, name):
            raise errors.UsageError(f"there is no account {name}@{self.host} on this server")
        account = self._account(conn, name)
        statements = [f"REVOKE ALL PRIVILEGES, GRANT OPTION FROM {account}"]
        if not keep_login:
            statements.append(f"DROP USER {account}")
        return Change(name, "operator", statements)

    def people(self, conn: Any, schema: str | None, queues: list[QueueRef]) -> list[Person]:
        roles = {g.user: g.role for g in permissions.list_roles(conn, schema)}
        rows = conn.execute(
            sa.text(
                "SELECT GRANTEE, TABLE_NAME, PRIVILEGE_TYPE FROM information_schema.TABLE_PRIVILEGES "
                "WHERE TABLE_SCHEMA = DATABASE()"
            )
        ).all()
        held: dict[str, set[tuple[str, str]]] = {}
        for grantee, table, privilege in rows:
            user, _, host = grantee.partition("@")
            if host.strip("'") == self.host:
                held.setdefault(user.strip("'"), set()).add((table, privilege))
        own = self._own_tables(conn, schema)
        found = []
        for user in sorted(held):
            workable = [q for q in queues if (q.table, "UPDATE") in held[user]]
            if not workable:
                continue
            missing = [t for t in own if (t, "INSERT") not in held[user]]
            problems = (
                [f"no privileges on workbench's tables ({', '.join(missing)}): `workbench people add {user}` again"]
                if missing
                else []
            )
            found.append(Person(user, roles.get(user, "operator"), _serving(conn, schema, user, workable), problems))
        return found


class ScriptLogins(Logins):
    """SQL Server: the logins, users and role memberships as T-SQL, for the administrator to run (like
    `grants`' script, never run by workbench)."""

    applies = False

    def add(
        self, conn: Any, schema: str | None, name: str, role: str, password: bool, queues: list[QueueRef]
    ) -> Change:
        check_name(name)
        check_role(role)
        q = conn.dialect.identifier_preparer.quote
        secret = new_password() if password else None
        login = (
            f"CREATE LOGIN {q(name)} WITH PASSWORD = N'{secret}'" if secret else f"CREATE LOGIN {q(name)} FROM WINDOWS"
        )
        target = SUPERVISOR_ROLE if role == "supervisor" else OPERATOR_ROLE
        statements = [
            login,
            f"CREATE USER {q(name)} FOR LOGIN {q(name)}",
            f"ALTER ROLE {q(target)} ADD MEMBER {q(name)}",
        ]
        return Change(name, role, statements, password=secret, script=True)

    def remove(self, conn: Any, name: str, keep_login: bool) -> Change:
        check_name(name)
        q = conn.dialect.identifier_preparer.quote
        statements = [
            (
                f"IF IS_ROLEMEMBER({_literal(conn, SUPERVISOR_ROLE)}, {_literal(conn, name)}) = 1 "
                f"ALTER ROLE {q(SUPERVISOR_ROLE)} DROP MEMBER {q(name)}"
            ),
            f"ALTER ROLE {q(OPERATOR_ROLE)} DROP MEMBER {q(name)}",
        ]
        if not keep_login:
            statements += [f"DROP USER {q(name)}", f"DROP LOGIN {q(name)}"]
        return Change(name, "operator", statements, script=True)

    def people(self, conn: Any, schema: str | None, queues: list[QueueRef]) -> list[Person]:
        raise errors.UsageError(
            "on SQL Server workbench does not read the logins: the members of workbench_operator and "
            "workbench_supervisor are in sys.database_role_members"
        )


_KINDS: dict[str | None, type[Logins]] = {"roles": RoleLogins, "accounts": AccountLogins, "script": ScriptLogins}


def of(backend: Any) -> Logins:
    """The people commands for a database's backend (its `logins_kind`)."""
    return _KINDS.get(backend.logins_kind, Logins)()
