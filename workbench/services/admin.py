"""What setting up and looking after a database takes: open and log in, attach a queue's table, grants,
roles and groups, published queue settings, a connection's and the claim's self-checks.

The command line and the windows reach the engine through here (and operator.py, supervisor.py) only;
tests/test_layers.py keeps it so.
"""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Callable
from typing import Any, TypeVar

from workbench.config import model
from workbench.core import errors

# Its answers are core's records, named here too (the commands say admin.RaceResult).
from workbench.core.records import Change as PeopleChange
from workbench.core.records import Person as Person
from workbench.core.records import ProbeResult as ProbeResult
from workbench.core.records import Published as Published
from workbench.core.records import RaceResult as RaceResult
from workbench.core.records import Session as Session
from workbench.db import attach as attach_mod
from workbench.db import (
    dberrors,
    groups,
    migrations,
    permissions,
    pg_grants,
    probe,
    published,
    racecheck,
)
from workbench.db import people as people_mod
from workbench.db.rules import mssql_script
from workbench.services import door

Workbench = door.Workbench  # an open database: the handle the windows and commands pass around
NO_ROLES_NOTE = permissions.NO_ROLES_NOTE

T = TypeVar("T")


def open_database(config: model.Config, *, password: str | None = None) -> Workbench:
    """A handle on the config's database (nothing is read yet)."""
    return door.Workbench.open(config, password=password)


def no_queues(database: model.DatabaseConfig) -> model.Config:
    """A Config with no queues: enough to open a connection to `database`."""
    return model.Config(path="", database=database, queues={})


def log_in(opened: Workbench) -> None:
    """Connect once: LoginRefused or DatabaseUnavailable (core errors) now rather than at the first command."""
    wb = door.engine(opened)
    with dberrors.translated(), wb.engine.connect():
        pass


@dataclasses.dataclass(frozen=True)
class Attached:
    """What `attach` found missing on a queue's table, as DDL, and whether it ran it."""

    ddl: str
    applied: bool
    notes: list[str]
    suggested: bool  # indexes it suggests (never adds by itself)
    empty: bool  # nothing is missing


def attach(opened: Workbench, queue: str, *, apply: bool) -> Attached:
    """The lock columns and claim indexes `queue`'s table lacks, as DDL; run when `apply`."""
    wb = door.engine(opened)
    if queue not in wb.config.queues:
        wb.queue(queue)  # raises the "no such queue" usage error
    config = wb.config.queues[queue]
    # The whole config first, against the tables as they will be: nothing changes for a config that
    # `next` would refuse.
    bound = wb.validate(attaching=True)[queue]
    with dberrors.translated(), wb.engine.begin() as conn:
        plan = attach_mod.plan(conn, config, wb.config.path)
        # A large related table of a lookup: the index its search wants, suggested beside the queue's.
        searched, search_notes = attach_mod.search_indexes(conn, list(bound.lookups.values()))
        plan.suggested += searched
        plan.notes += search_notes
        ddl = attach_mod.render(conn, plan)
        if apply and not plan.empty:
            attach_mod.apply(conn, plan)
    notes = list(plan.notes)
    if not plan.add_columns:  # the lock columns are there: do their times agree with the lock clock?
        notes += clock_warnings(opened, [queue])
    return Attached(ddl, bool(apply and not plan.empty), notes, bool(plan.suggested), plan.empty)


def clock_warnings(opened: Workbench, queues: list[str] | None = None) -> list[str]:
    """For `queues` (all): where the lock times already in a table disagree with the queue's lock
    clock (another program writing local time; attach.clock_warning), workbench's own locks left out."""
    wb = door.engine(opened)
    names = list(wb.config.queues) if queues is None else queues
    works = [wb.queue(name) for name in names]
    with dberrors.translated(), wb.engine.connect() as conn:
        found = [attach_mod.clock_warning(conn, work.q, work.trail) for work in works]
    return [warning for warning in found if warning]


@dataclasses.dataclass(frozen=True)
class Grants:
    """What `grants` sets up for a queue: statements run here (PostgreSQL), a script to run elsewhere
    (SQL Server), or neither (the database has no roles workbench sets up)."""

    dialect: str
    table_label: str
    roles: bool  # the database has roles workbench sets up (PostgreSQL): the statements are below
    ddl: str = ""  # the statements, as text (PostgreSQL)
    applied: bool = False
    batches: list[str] | None = None  # the script's batches (SQL Server)


def grants(opened: Workbench, queue: str, *, revoke: bool, apply: bool) -> Grants:
    """The grants, policies and functions that make the database enforce `queue`'s rules (or take them back)."""
    wb = door.engine(opened)
    dialect = wb.db.dialect
    bound = wb.queue(queue).q
    label = bound.config.table_label
    if not wb.db.backend.roles:
        with dberrors.translated():
            batches = wb.db.backend.protocol_script(
                mssql_script,  # the script SQL Server runs itself: handed to its backend, which it builds on
                wb.engine.dialect,
                bound,
                wb.config.database.workbench_schema or "dbo",
                revoke=revoke,
                reviewed=wb.config.reviewed_by(queue),
            )
        return Grants(dialect, label, roles=False, batches=batches)
    with dberrors.translated(), wb.engine.begin() as conn:
        own = wb.config.database.workbench_schema
        statements = (
            pg_grants.revoke_plan(conn, bound, own)
            if revoke
            else pg_grants.plan(conn, bound, own, wb.config.reviewed_by(queue))
        )
        ddl = pg_grants.render(statements)
        missing = permissions.roles_it_cannot_make(conn) if apply and not revoke else None
        if missing is not None:
            raise errors.NotPermitted(missing)
        if apply:
            pg_grants.apply(conn, statements)
    return Grants(dialect, label, roles=True, ddl=ddl, applied=apply)


def _own(opened: Workbench, change: bool, run: Callable[[Any, str | None], T]) -> T:
    """`run(conn, schema)` on workbench's own tables, checked to be there first (a write when `change`)."""
    wb = door.engine(opened)
    schema = wb.config.database.workbench_schema

    def checked(conn: Any) -> T:
        migrations.check(conn, schema)
        return run(conn, schema)

    return wb.db.write(checked) if change else wb.db.read(checked)


@dataclasses.dataclass(frozen=True)
class Roles:
    """What a `role` command did (a grant, a revocation, or the list), and what the database holds now."""

    result: Any
    supervisors: list[str]
    database_roles: bool  # the database's own roles are in use (PostgreSQL grants)


def roles(opened: Workbench, actor: str, action: str, who: str = "", role: str = "") -> Roles:
    """`action`: "grant" `who` the `role`, "revoke" `who`'s role, or "list" every role."""

    def run(conn: Any, schema: str | None) -> Roles:
        if action == "grant":
            result: Any = permissions.grant(conn, schema, actor, who, role)
        elif action == "revoke":
            result = permissions.revoke(conn, schema, actor, who)
        else:
            result = permissions.list_roles(conn, schema)
        return Roles(result, permissions.supervisors(conn, schema), bool(permissions.database_roles_in_use(conn)))

    return _own(opened, action != "list", run)


def group(opened: Workbench, actor: str, action: str, who: str = "", name: str | None = None) -> Any:
    """`action`: "add" `who` to group `name`, "remove" them, or "list" its members (every group's: None)."""

    def run(conn: Any, schema: str | None) -> Any:
        if action == "add":
            return groups.add(conn, schema, actor, who, name or "")
        if action == "remove":
            return groups.remove(conn, schema, actor, who, name or "")
        return groups.members(conn, schema, name)

    return _own(opened, action != "list", run)


def publish(opened: Workbench, body: str, actor: str, note: str | None) -> Published:
    """Publish queue settings (every queue of wb's config is checked against the database first)."""
    wb = door.engine(opened)
    for name in wb.config.queues:
        wb.queue(name)
    return published.publish(wb.engine, wb.config.database.workbench_schema, body, actor, note)


def published_settings(opened: Workbench, *, every: bool) -> list[Published]:
    """The newest published queue settings (every version, newest first, when `every`)."""
    wb = door.engine(opened)
    schema = wb.config.database.workbench_schema
    if every:
        return published.history(wb.engine, schema)
    return [v for v in [published.latest(wb.engine, schema)] if v is not None]


def check_connection(url: Any, *, password: str | None, connect_timeout: int) -> ProbeResult:
    """Can this computer reach and log in to the database at `url`? Why not, in plain words."""
    return probe.check(url, password=password, connect_timeout=connect_timeout)


def odbc_drivers() -> tuple[str, ...]:
    """The ODBC drivers installed on this computer."""
    return probe.installed_odbc_drivers()


def claim_check(opened: Workbench) -> RaceResult:
    """The claim self-check: two claims at once never take the same item (db/racecheck.py)."""
    wb = door.engine(opened)
    return racecheck.check(wb)


# -- people: each person's own login ----------------------------------------------------------------

PEOPLE_ROLES = people_mod.ROLES


@dataclasses.dataclass(frozen=True)
class PersonAdded:
    """What `people add` did for one person (or printed for the administrator), and the profile they need."""

    change: PeopleChange
    profile_line: str  # the `workbench profile add …` the person runs
    password_stored: str = ""  # the keyring's name, when the password went there
    groups: list[str] = dataclasses.field(default_factory=list)  # groups joined for queues that serve one


def _queue_refs(opened: Workbench, names: list[str] | None) -> list[people_mod.QueueRef]:
    wb = door.engine(opened)
    chosen = names or list(wb.config.queues)
    for name in chosen:
        if name not in wb.config.queues:
            wb.queue(name)  # raises the "no such queue" usage error
    return [
        people_mod.QueueRef(
            name,
            q.schema,
            q.table,
            q.serves,
            works=name in chosen,
            reads=tuple(f.lookup.table for f in q.fields.values() if f.lookup is not None and f.lookup.table),
        )
        for name, q in wb.config.queues.items()
    ]


class _Offline:
    """A dialect without a connection: the SQL Server script is written for a server never reached."""

    def __init__(self, engine: Any) -> None:
        self.dialect = engine.dialect


def profile_line(opened: Workbench, name: str) -> tuple[str, Any]:
    """The `workbench profile add` a person runs to connect with their own login; and that profile."""
    wb = door.engine(opened)
    from pathlib import Path

    from workbench.config import profiles

    url = wb.engine.url
    kind = wb.db.backend.profile_kind or url.get_backend_name()
    config = Path(wb.config.path) if wb.config.path else None
    source = f"--queues {config.resolve()}" if config is not None and config.is_file() else "--published"
    port = url.port or profiles.DEFAULT_PORTS.get(kind)
    profile = profiles.Profile(
        name=url.database or "workbench",
        kind=kind,
        host=url.host or "localhost",
        port=port,
        database=url.database or "",
        user=name,
        source="file" if source != "--published" else "database",
        config=str(config.resolve()) if config is not None and config.is_file() else "",
    )
    odbc = url.query.get("driver")  # an ODBC connection names its installed driver
    via = f" --driver odbc --odbc-driver {shlex.quote(str(odbc))}" if odbc else ""
    if odbc and profiles.DRIVERS.get(kind) == ("odbc",):  # ODBC is its only driver (SQL Server): no --driver
        via = f" --odbc-driver {shlex.quote(str(odbc))}"
    line = (
        f"workbench profile add {profile.name} --kind {kind} --host {profile.host} --port {port} "
        f"--database {profile.database} --db-user {name}{via} {source} --default"
    )
    return line, profile


def people_add(
    opened: Workbench, actor: str, name: str, role: str, queues: list[str] | None, *, password: bool, keyring: bool
) -> PersonAdded:
    """Make `name` a usable operator or supervisor: their login, its role and what `grants` gives each
    operator's login, run here where this login may (else the SQL for the administrator)."""
    wb = door.engine(opened)
    from workbench import credentials

    logins = people_mod.of(wb.db.backend)
    refs = _queue_refs(opened, queues)
    schema = wb.config.database.workbench_schema
    line, profile = profile_line(opened, name)
    if not logins.applies:
        return PersonAdded(logins.add(_Offline(wb.engine), schema, name, role, password, refs), line)
    joined: list[str] = []
    with dberrors.translated(), wb.engine.begin() as conn:
        change = logins.add(conn, schema, name, role, password, refs)
        if not logins.may_make(conn):
            return PersonAdded(change, line)
        change = logins.run(conn, change)
        migrations.check(conn, schema)
        if not wb.db.backend.roles:  # the roles table decides who supervises here
            permissions.record_role(conn, schema, actor, name, role)
        for group in dict.fromkeys(q.serves for q in refs if q.serves and q.works):
            groups.record(conn, schema, actor, name, group)
            joined.append(group)
    stored = ""
    if keyring and change.password:
        status = credentials.keyring_status()
        if not status.available:
            raise errors.CredentialStoreError(
                f"{name}'s login is made, but its password cannot be stored: {status.reason}; it is shown instead"
            )
        credentials.store(profile.credential_id, change.password)
        stored = status.name
    return PersonAdded(change, line, stored, joined)


def people_remove(opened: Workbench, name: str, *, keep_login: bool) -> PeopleChange:
    """Take `name` out of workbench's roles and drop their login (kept, locked out, where it owns things)."""
    wb = door.engine(opened)
    logins = people_mod.of(wb.db.backend)
    schema = wb.config.database.workbench_schema
    if not logins.applies:
        return logins.remove(_Offline(wb.engine), name, keep_login)
    with dberrors.translated(), wb.engine.begin() as conn:
        change = logins.remove(conn, name, keep_login)
        if not logins.may_make(conn):
            return change
        change = logins.run(conn, change)
        if not wb.db.backend.roles:
            permissions.forget_role(conn, schema, name)
    return change


def people_list(opened: Workbench, queues: list[str] | None = None) -> list[Person]:
    """Who may work which of the config's queues, and whether their login is ready."""
    wb = door.engine(opened)
    logins = people_mod.of(wb.db.backend)
    refs = _queue_refs(opened, queues)
    if not logins.applies:
        return logins.people(_Offline(wb.engine), wb.config.database.workbench_schema, refs)
    with dberrors.translated(), wb.engine.begin() as conn:
        return logins.people(conn, wb.config.database.workbench_schema, refs)


SESSION_GRANTS = people_mod.SESSION_GRANTS


def idle_sessions(opened: Workbench) -> tuple[list[Session], bool]:
    """Sessions idle in an open transaction (their row locks hide items from every Next item), the
    config's queue tables each holds locks on, and whether this login sees every login's sessions."""
    wb = door.engine(opened)
    logins = people_mod.of(wb.db.backend)
    with dberrors.translated(), wb.engine.begin() as conn:
        return logins.sessions(conn, _queue_refs(opened, None))


def end_session(opened: Workbench, pid: int) -> Session:
    """End session `pid` (one idle in a transaction here): its transaction rolls back, its row locks go."""
    wb = door.engine(opened)
    logins = people_mod.of(wb.db.backend)
    with dberrors.translated(), wb.engine.begin() as conn:
        return logins.end_session(conn, pid)
