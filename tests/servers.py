"""Start throwaway PostgreSQL and MariaDB servers for the tests and benchmarks."""

from __future__ import annotations

import contextlib
import dataclasses
import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any

# The password of Server.password_user: a test secret, never a real one.
TEST_PASSWORD = "wb-test-Secret-4711"
_PASSWORD_USER = "wb_pw"


class ServerUnavailable(Exception):
    """The server software is not installed or would not start; the message says why."""


# Set by tests/conftest.py while a test without the `servers` marker runs: starting (or reaching) a
# server then fails loudly instead of quietly turning the fast tier (`pytest -m "not servers"`) slow.
_refusal: list[str] = []  # the reason, while refused


def refuse_starts(reason: str | None) -> None:
    """From now on, starting a server raises RuntimeError(reason); None allows it again."""
    _refusal[:] = [] if reason is None else [reason]


def _may_start(what: str) -> None:
    if _refusal:
        raise RuntimeError(f"{what}: {_refusal[0]}")


@dataclasses.dataclass
class Server:
    """A running database server that tests may create databases on."""

    kind: str  # "postgresql" or "mariadb"
    host: str
    port: int
    user: str
    stop: Callable[[], None]
    external: bool = False
    # Take the server down and bring it back on the same port with the same data (a database
    # that goes away), and freeze/thaw its processes (a database that hangs: connections stay
    # open, nothing answers); None where not supported.
    take_down: Callable[[], None] | None = None
    bring_up: Callable[[], None] | None = None
    freeze: Callable[[], None] | None = None
    thaw: Callable[[], None] | None = None
    # A role that must log in with a password over TCP (everyone else is trusted), so that tests
    # can see a wrong password refused; None where the server's authentication is not ours to set.
    password_user: str | None = None
    _admin_engine: Any = dataclasses.field(default=None, repr=False)
    # The template databases (template()): kind -> (database, stamp, what the build returned); and what an
    # empty database looks like (pristine()).
    _templates: dict[Hashable, tuple[str, Hashable, Any]] = dataclasses.field(default_factory=dict, repr=False)
    # PostgreSQL: empty databases a template's copy took the place of (replace()), for create_database to rename
    # into use: creating one costs the server a copy of template1 (40-100 ms of its CPU).
    _spares: list[str] = dataclasses.field(default_factory=list, repr=False)
    _empty: tuple[Any, ...] | None = dataclasses.field(default=None, repr=False)

    def url(self, database: str, driver: str | None = None) -> str:
        """SQLAlchemy URL of one database on this server."""
        if self.kind == "postgresql":
            return f"postgresql+psycopg://{self.user}@{self.host}:{self.port}/{database}"
        if driver == "pyodbc":
            # The port goes in the query string: SQLAlchemy's ODBC connector would write
            # SQL Server's "host,port" syntax, which MariaDB's driver rejects.
            return (
                f"mariadb+pyodbc://{self.user}@{self.host}/{database}"
                f"?driver={odbc_driver_name().replace(' ', '+')}&port={self.port}"
            )
        return f"mariadb+pymysql://{self.user}@{self.host}:{self.port}/{database}"

    def admin_url(self) -> str:
        return self.url("postgres" if self.kind == "postgresql" else "mysql")

    def password_login(self) -> tuple[str, str]:
        """Create (or reset) `password_user` with a known password and return (user, password)."""
        if self.kind != "postgresql" or self.password_user is None:
            raise ServerUnavailable(f"this {self.kind} server has no password-checked role")
        import sqlalchemy as sa

        engine = sa.create_engine(self.admin_url(), isolation_level="AUTOCOMMIT")
        try:
            with engine.connect() as conn:
                quoted = engine.dialect.identifier_preparer.quote(self.password_user)
                exists = conn.execute(
                    sa.text("SELECT 1 FROM pg_roles WHERE rolname = :name"), {"name": self.password_user}
                ).first()
                verb = "ALTER" if exists else "CREATE"
                conn.exec_driver_sql(f"{verb} ROLE {quoted} LOGIN PASSWORD '{TEST_PASSWORD}'")
        finally:
            engine.dispose()
        return self.password_user, TEST_PASSWORD

    def create_database(self, name: str, template: str | None = None) -> None:
        """Create an empty database (dropping one of the same name first); on PostgreSQL, `template`:
        a copy of that database instead (see template())."""
        if template is None and self._spares:
            import sqlalchemy as sa

            self.drop_database(name)
            with self._engine().connect() as conn:
                quote = conn.dialect.identifier_preparer.quote
                try:
                    conn.exec_driver_sql(f"ALTER DATABASE {quote(self._spares.pop())} RENAME TO {quote(name)}")
                    return
                except sa.exc.DBAPIError:  # a test dropped it (one that empties the server): made anew
                    pass
        self._admin(name, create=True, template=template)

    def replace(self, name: str, template: str) -> None:
        """Database `name`, empty (pristine()), replaced by a copy of `template`. On PostgreSQL the empty one is
        kept as a spare (renamed), which the next create_database renames into use instead of creating one:
        nobody has connected to it since pristine() found it empty (a session on it makes the rename fail,
        and then it is dropped)."""
        if self.kind == "postgresql":
            import sqlalchemy as sa

            spare = f"wbt_spare_{uuid.uuid4().hex[:12]}"
            with self._engine().connect() as conn:
                quote = conn.dialect.identifier_preparer.quote
                try:
                    conn.exec_driver_sql(f"ALTER DATABASE {quote(name)} RENAME TO {quote(spare)}")
                except sa.exc.DBAPIError:  # someone is connected to it: no spare (create_database drops it)
                    pass
                else:
                    self._spares.append(spare)
        self.create_database(name, template=template)

    def drop_database(self, name: str) -> None:
        self._admin(name, create=False)

    def _engine(self) -> Any:
        import sqlalchemy as sa

        # One connection kept for the whole run: a new engine and login for each test's database
        # cost about 0.1 s of every test on a server. The ping replaces it after a take_down().
        if self._admin_engine is None:
            self._admin_engine = sa.create_engine(
                self.admin_url(), isolation_level="AUTOCOMMIT", pool_pre_ping=True, pool_size=1
            )
        return self._admin_engine

    def _admin(self, name: str, *, create: bool, template: str | None = None) -> None:
        engine = self._engine()
        with engine.connect() as conn:
            quote = engine.dialect.identifier_preparer.quote
            force = " WITH (FORCE)" if self.kind == "postgresql" else ""
            conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {quote(name)}{force}")
            if not create:
                return
            if template is None or self.kind == "postgresql":
                copied = f" TEMPLATE {quote(template)}" if template else ""
                if template and (conn.dialect.server_version_info or (0,)) >= (15,):
                    # File by file (PostgreSQL 15's default logs every page of the copy in the WAL): 12 against
                    # 17 ms a copy in memory, and the WAL of hundreds of copies never fills the RAM folder.
                    copied += " STRATEGY FILE_COPY"
                conn.exec_driver_sql(f"CREATE DATABASE {quote(name)}{copied}")
                return
            # MariaDB has no CREATE DATABASE … TEMPLATE: the template's tables made again from their own
            # definitions (SHOW CREATE TABLE: columns, keys, foreign keys, table options and AUTO_INCREMENT
            # counter) and their rows copied. template() made sure there is nothing else in it to copy.
            conn.exec_driver_sql(f"CREATE DATABASE {quote(name)}")
            tables = conn.exec_driver_sql(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = %s ORDER BY table_name",
                (template,),
            ).scalars()
            conn.exec_driver_sql(f"USE {quote(name)}")
            conn.exec_driver_sql("SET foreign_key_checks = 0")
            try:
                for table in list(tables):
                    source = f"{quote(template)}.{quote(table)}"
                    conn.exec_driver_sql(str(conn.exec_driver_sql(f"SHOW CREATE TABLE {source}").one()[1]))
                    conn.exec_driver_sql(f"INSERT INTO {quote(table)} SELECT * FROM {source}")
            finally:
                conn.exec_driver_sql("SET foreign_key_checks = 1")
                conn.exec_driver_sql("USE mysql")

    # -- Templates: a database built once, copied for every test that wants the same ---------------------

    def templates(self) -> bool:
        """Whether this server copies template databases (template()): a throwaway PostgreSQL or MariaDB
        only (a server given by WORKBENCH_TEST_PG or WORKBENCH_TEST_MARIADB keeps no databases of the tests'
        beyond each test)."""
        return self.kind in ("postgresql", "mariadb") and not self.external

    def template(self, kind: Hashable, stamp: Hashable, build: Callable[[str], Any]) -> tuple[str, Any]:
        """The name of a database built by build(name) for `kind` and `stamp` (what its content depends
        on beyond the kind, e.g. the minute its rows were written in; None: nothing), and what build
        returned: built the first time, kept for the run, built again (and the old one dropped) when the
        stamp changes. Copy it with create_database(name, template=…) or replace(). Nobody may be
        connected to it once built. On PostgreSQL nobody
        may connect to it then either (ALLOW_CONNECTIONS false): PostgreSQL copies only a database
        without sessions, and nothing can change it. On MariaDB, whose copy is made table by table
        (_admin), it may hold base tables only: a view, trigger, routine, event or grant of its own would
        not be copied, so the build that makes one fails here."""
        held = self._templates.get(kind)
        if held is not None and held[1] == stamp:
            return held[0], held[2]
        if held is not None:
            del self._templates[kind]
            self.drop_database(held[0])
        name = f"wbtpl_{uuid.uuid4().hex[:12]}"
        self.create_database(name)
        try:
            made = build(name)
            if self.kind == "postgresql":
                with self._engine().connect() as conn:
                    quoted = conn.dialect.identifier_preparer.quote(name)
                    conn.exec_driver_sql(f"ALTER DATABASE {quoted} ALLOW_CONNECTIONS false")
            else:
                others = self._not_tables(name)
                if others:
                    raise RuntimeError(f"template {kind!r} holds what its copy would not: {others}")
            # The build's closed connections end a moment later on the server's side.
            sessions = self._sessions(name, wait=10.0)
            if sessions:
                raise RuntimeError(f"the build of template {kind!r} left {sessions} session(s) open on it")
        except BaseException:
            self.drop_database(name)
            raise
        self._templates[kind] = (name, stamp, made)
        return name, made

    def _not_tables(self, name: str) -> dict[str, int]:
        """MariaDB: what database `name` holds besides base tables (views, triggers, routines, events,
        grants on it or its objects), counted by kind; only those found."""
        with self._engine().connect() as conn:
            counts = conn.exec_driver_sql(_MARIADB_OBJECTS, {"name": name}).one()
        return {what: int(n) for what, n in zip(_MARIADB_KINDS, counts, strict=True) if n}

    def _sessions(self, name: str, wait: float = 0.0) -> int:
        """How many sessions database `name` has, waiting up to `wait` seconds for none."""
        deadline = time.monotonic() + wait
        while True:
            with self._engine().connect() as conn:
                sessions = int(
                    conn.exec_driver_sql(
                        "SELECT count(*) FROM pg_stat_activity WHERE datname = %(name)s"
                        if self.kind == "postgresql"
                        else "SELECT count(*) FROM information_schema.processlist WHERE db = %(name)s",
                        {"name": name},
                    ).scalar()
                    or 0
                )
            if not sessions or time.monotonic() >= deadline:
                return sessions
            time.sleep(0.01)

    def pristine(self, name: str) -> bool:
        """Whether database `name` is as CREATE DATABASE made it: nobody connected, nothing created in
        it (tables, functions, types, schemas, extensions, default privileges, per-database settings,
        the public schema's owner and privileges as in a new one). Only such a database may be replaced
        by a template's copy without a test losing what it did."""
        if self._sessions(name, wait=0.5):  # a connection just closed ends a moment later
            return False
        if self._empty is None:
            empty = f"wbt_empty_{uuid.uuid4().hex[:8]}"
            self.create_database(empty)
            try:
                self._empty = self._fingerprint(empty)
            finally:
                self.drop_database(empty)
        return self._fingerprint(name) == self._empty

    def _fingerprint(self, name: str) -> tuple[Any, ...]:
        import sqlalchemy as sa

        if self.kind != "postgresql":  # MariaDB: read from outside, without a session on the database
            with self._engine().connect() as conn:
                row = conn.exec_driver_sql(_MARIADB_FINGERPRINT, {"name": name}).first()
            return ("no such database",) if row is None else ("database", *row[1:])
        engine = sa.create_engine(self.url(name), poolclass=sa.pool.NullPool)
        try:
            with engine.connect() as conn:
                row = conn.exec_driver_sql(_FINGERPRINT).one()
        finally:
            engine.dispose()
        return tuple(row)


# What a test can have made in a PostgreSQL database (Server.pristine): counts in its catalogs, the
# public schema as it comes, per-database settings and privileges.
_NOT_SYSTEM = (
    "NOT IN ('pg_catalog', 'information_schema') AND {0} NOT LIKE 'pg\\_toast%%' AND {0} NOT LIKE 'pg\\_temp%%'"
)
_FINGERPRINT = (
    "SELECT "
    "(SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
    f" WHERE n.nspname {_NOT_SYSTEM.format('n.nspname')}),"
    "(SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
    f" WHERE n.nspname {_NOT_SYSTEM.format('n.nspname')}),"
    "(SELECT count(*) FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace"
    f" WHERE n.nspname {_NOT_SYSTEM.format('n.nspname')}),"
    "(SELECT count(*) FROM pg_operator o JOIN pg_namespace n ON n.oid = o.oprnamespace"
    f" WHERE n.nspname {_NOT_SYSTEM.format('n.nspname')}),"
    "(SELECT array_agg(nspname::text || ':' || nspowner::regrole::text || ':' || coalesce(nspacl::text, '')"
    " ORDER BY nspname) FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_toast%%' AND nspname NOT LIKE 'pg\\_temp%%'),"
    "(SELECT array_agg(extname::text ORDER BY extname) FROM pg_extension),"
    "(SELECT count(*) FROM pg_default_acl),"
    "(SELECT count(*) FROM pg_event_trigger),"
    "(SELECT count(*) FROM pg_largeobject_metadata),"
    "(SELECT count(*) FROM pg_publication),"
    "(SELECT count(*) FROM pg_cast WHERE oid >= 16384),"
    "(SELECT count(*) FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase"
    " WHERE d.datname = current_database()),"
    "(SELECT datacl::text FROM pg_database WHERE datname = current_database()),"
    "(SELECT datdba::regrole::text FROM pg_database WHERE datname = current_database())"
)

# What MariaDB's database %(name)s holds besides base tables (Server._not_tables), in _MARIADB_KINDS' order.
_MARIADB_KINDS = ("views", "triggers", "routines", "events", "grants")
_MARIADB_OBJECTS = (
    "SELECT "
    "(SELECT count(*) FROM information_schema.tables WHERE table_schema = %(name)s AND table_type <> 'BASE TABLE'),"
    "(SELECT count(*) FROM information_schema.triggers WHERE trigger_schema = %(name)s),"
    "(SELECT count(*) FROM information_schema.routines WHERE routine_schema = %(name)s),"
    "(SELECT count(*) FROM information_schema.events WHERE event_schema = %(name)s),"
    "(SELECT count(*) FROM mysql.db WHERE db = %(name)s)"
    " + (SELECT count(*) FROM mysql.tables_priv WHERE db = %(name)s)"
    " + (SELECT count(*) FROM mysql.columns_priv WHERE db = %(name)s)"
    " + (SELECT count(*) FROM mysql.procs_priv WHERE db = %(name)s)"
)
# What a test can have made in a MariaDB database (Server.pristine): the database itself (its name, the first
# column, and its defaults), its tables, columns and indexes and what _MARIADB_OBJECTS counts.
_MARIADB_FINGERPRINT = (
    "SELECT schema_name, default_character_set_name, default_collation_name,"
    "(SELECT count(*) FROM information_schema.tables WHERE table_schema = %(name)s),"
    "(SELECT count(*) FROM information_schema.columns WHERE table_schema = %(name)s),"
    "(SELECT count(*) FROM information_schema.statistics WHERE table_schema = %(name)s),"
    + _MARIADB_OBJECTS.removeprefix("SELECT ")
    + " FROM information_schema.schemata WHERE schema_name = %(name)s"
)


# What binding reads of a database's tables has not changed since a stamp was taken (catalog_stamp) while these
# are the same. PostgreSQL: each catalog SQLAlchemy's reflection reads, its rows counted (a row deleted) and their
# newest xmin (every DDL statement inserts or updates a catalog row, stamped with its transaction's id; a copy made
# by CREATE DATABASE … TEMPLATE keeps its template's rows and ids, a transaction in it has a newer id).
_PG_CATALOGS = (
    "pg_namespace",
    "pg_class",
    "pg_attribute",
    "pg_attrdef",
    "pg_type",
    "pg_enum",
    "pg_constraint",
    "pg_index",
    "pg_description",
    "pg_sequence",
    "pg_collation",
    "pg_inherits",
)
_PG_STAMP = " UNION ALL ".join(
    f"SELECT '{name}', count(*), max(xmin::text::bigint) FROM pg_catalog.{name}" for name in _PG_CATALOGS
)
# MariaDB: the definitions themselves (a copy's tables are made again, Server._admin), as its information_schema
# shows them: tables, columns, indexes, constraints; not the AUTO_INCREMENT counters, which SQLAlchemy does not read.
_MARIADB_STAMP = (
    "SELECT "
    "(SELECT md5(group_concat(concat_ws('|', table_name, table_type, engine, row_format, table_collation,"
    " create_options, table_comment) ORDER BY table_name SEPARATOR '/'))"
    " FROM information_schema.tables WHERE table_schema = DATABASE()),"
    "(SELECT md5(group_concat(concat_ws('|', table_name, column_name, ordinal_position, column_default, is_nullable,"
    " column_type, collation_name, column_key, extra, column_comment, generation_expression)"
    " ORDER BY table_name, ordinal_position SEPARATOR '/'))"
    " FROM information_schema.columns WHERE table_schema = DATABASE()),"
    "(SELECT md5(group_concat(concat_ws('|', table_name, index_name, non_unique, seq_in_index, column_name,"
    " sub_part, index_type, index_comment) ORDER BY table_name, index_name, seq_in_index SEPARATOR '/'))"
    " FROM information_schema.statistics WHERE table_schema = DATABASE()),"
    "(SELECT md5(group_concat(concat_ws('|', table_name, constraint_name, column_name, ordinal_position,"
    " referenced_table_schema, referenced_table_name, referenced_column_name)"
    " ORDER BY table_name, constraint_name, ordinal_position SEPARATOR '/'))"
    " FROM information_schema.key_column_usage WHERE table_schema = DATABASE()),"
    "(SELECT md5(group_concat(concat_ws('|', constraint_name, update_rule, delete_rule, referenced_table_name)"
    " ORDER BY constraint_name SEPARATOR '/'))"
    " FROM information_schema.referential_constraints WHERE constraint_schema = DATABASE()),"
    "(SELECT md5(group_concat(concat_ws('|', table_name, constraint_name, check_clause)"
    " ORDER BY table_name, constraint_name SEPARATOR '/'))"
    " FROM information_schema.check_constraints WHERE constraint_schema = DATABASE())"
)


def catalog_stamp(conn: Any) -> tuple[Any, ...]:
    """A stamp of the tables' definitions in the database `conn` (a SQLAlchemy Connection) is on: the same while
    none has changed, and the same on an exact copy (a template's, support.Env.copy_template). SQLite counts its
    schema's changes in the file itself (schema_version)."""
    name = conn.dialect.name
    statement = {"sqlite": "PRAGMA schema_version", "postgresql": _PG_STAMP}.get(name, _MARIADB_STAMP)
    # On the driver's own cursor: a test that counts the statements binding runs (an engine's
    # before_cursor_execute) counts workbench's, not this fixture's look.
    cursor = conn.connection.dbapi_connection.cursor()
    try:
        cursor.execute(statement)
        return tuple(tuple(row) for row in cursor.fetchall())
    finally:
        cursor.close()


def _worker() -> tuple[int, int]:
    """This process's number among the suite's pytest-xdist workers, and how many there are ((0, 1) without
    xdist): PYTEST_XDIST_WORKER is "gw0", "gw1" …, PYTEST_XDIST_WORKER_COUNT their number."""
    name = os.environ.get("PYTEST_XDIST_WORKER", "")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    return (int(name[2:]) if name.startswith("gw") and name[2:].isdigit() else 0), max(count, 1)


def free_port() -> int:
    """A port nothing listens on now. Under pytest-xdist each worker starts its own servers: a port is
    free for the server only from this call until the server binds it, and two workers asking at once
    may be handed the same one by the kernel, so worker k of n takes only ports p with (p // 2) % n == k
    (not p % n: Linux hands bind() odd ports and keeps the even ones for connect())."""
    index, count = _worker()
    for _ in range(1000):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if (port // 2) % count == index:
            return port
    raise ServerUnavailable(f"no free port for worker {index} of {count}")


RAM_FOLDER = Path("/dev/shm")  # Linux's memory-backed file system, on every machine the tests run on
RAM_FREE = 4 << 30  # bytes it must have free before a server's files go there


def _workdir(prefix: str, *, in_memory: bool = False) -> Path:
    """A new folder for a server's files. `in_memory`: in RAM_FOLDER where it is usable (a server whose
    commits need not survive a crash: its files are never flushed to a disk, which MariaDB does at each
    CREATE and DROP even with its log flushed once a second: on a disk other test runs shared, a MariaDB
    contract test took two and a half to three times as long; on a quiet disk about the same, see
    docs/develop/tests.md); WORKBENCH_TEST_SERVERS_IN_MEMORY=0 keeps every one on disk."""
    where = None
    if in_memory and os.environ.get("WORKBENCH_TEST_SERVERS_IN_MEMORY", "1") != "0" and _ram_usable():
        where = str(RAM_FOLDER)
    # mkdtemp makes a 0700 directory; the server runs as another user and must enter it.
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=where))
    path.chmod(0o755)
    return path


def _ram_usable() -> bool:
    try:
        stat = os.statvfs(RAM_FOLDER)
    except OSError:
        return False
    return os.access(RAM_FOLDER, os.W_OK | os.X_OK) and stat.f_bavail * stat.f_frsize >= RAM_FREE


def _as_user(user: str, argv: list[str]) -> list[str]:
    """Run as `user` when we are root (PostgreSQL and MariaDB refuse to run as root)."""
    if os.geteuid() == 0:
        return ["runuser", "-u", user, "--", *argv]
    return argv


def _chown(path: Path, user: str) -> None:
    if os.geteuid() == 0:
        shutil.chown(path, user, user)


def postgres_bindir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def start_postgres(*, durable: bool = False, options: str = "", in_memory: bool = False) -> Server:
    """Start a PostgreSQL cluster on a free port; stop() removes it. Without `durable`, commits
    are not flushed to disk (fsync off: quicker tests); with it, the server's defaults. `options`:
    more server settings (-c name=value …). `in_memory` (the tests' servers; a benchmark's stay on
    disk): its files in memory (_workdir), unless durable."""
    _may_start("PostgreSQL")
    external = os.environ.get("WORKBENCH_TEST_PG")
    if external:  # host:port of a trust-auth server to use instead of a throwaway one
        host, port = external.rsplit(":", 1)
        return Server("postgresql", host, int(port), "postgres", lambda: None, external=True)
    bindir = postgres_bindir()
    if bindir is None:
        raise ServerUnavailable("PostgreSQL server binaries (initdb, pg_ctl) are not installed")
    work = _workdir("wb-pg-", in_memory=in_memory and not durable)
    _chown(work, "postgres")
    data = work / "data"
    port = free_port()

    def run(argv):
        return subprocess.run(_as_user("postgres", argv), check=True, capture_output=True, text=True, cwd=work)

    try:
        run(
            [
                str(bindir / "initdb"),
                "-D",
                str(data),
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
                "--no-instructions",
            ]
        )
        _write_pg_hba(data / "pg_hba.conf")
        quick = "" if durable else "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
        options = f"-k {work} -p {port} -c listen_addresses=127.0.0.1 {quick}-c max_connections=200 {options}"
        run([str(bindir / "pg_ctl"), "-D", str(data), "-l", str(work / "server.log"), "-w", "-o", options, "start"])
    except subprocess.CalledProcessError as exc:
        log = (work / "server.log").read_text() if (work / "server.log").exists() else ""
        raise ServerUnavailable(f"PostgreSQL did not start: {exc.stderr or exc.stdout}{log[-2000:]}") from exc

    def stop() -> None:
        signal_all(signal.SIGCONT)  # a frozen server does not stop
        take_down("immediate")
        shutil.rmtree(work, ignore_errors=True)

    def take_down(mode: str = "fast") -> None:
        # "fast" cuts every client off but writes what was committed first: with
        # synchronous_commit=off (set above for speed) "immediate" would lose the last commits.
        subprocess.run(
            _as_user("postgres", [str(bindir / "pg_ctl"), "-D", str(data), "-m", mode, "stop"]),
            capture_output=True,
            cwd=work,
            check=False,
        )

    def bring_up() -> None:
        run([str(bindir / "pg_ctl"), "-D", str(data), "-l", str(work / "server.log"), "-w", "-o", options, "start"])

    def signal_all(signum: int) -> None:
        try:
            postmaster = int((data / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return
        for pid in [postmaster, *_children(postmaster)]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signum)

    return Server(
        "postgresql",
        "127.0.0.1",
        port,
        "postgres",
        stop,
        take_down=take_down,
        bring_up=bring_up,
        freeze=lambda: signal_all(signal.SIGSTOP),
        thaw=lambda: signal_all(signal.SIGCONT),
        password_user=_PASSWORD_USER,
    )


@dataclasses.dataclass
class Replicated:
    """A PostgreSQL primary and a streaming standby on loopback: kill the primary, promote the standby."""

    primary: Server
    standby: Server
    promote: Callable[[], None]

    def url(self, database: str) -> str:
        """Both servers in one URL: libpq keeps the one that accepts writes (the multi-host form)."""
        return (
            f"postgresql+psycopg://postgres@/{database}?host=127.0.0.1:{self.primary.port}"
            f"&host=127.0.0.1:{self.standby.port}&target_session_attrs=read-write"
        )

    def cut(self) -> None:
        """Stop streaming (the standby forgets where its primary is): what the primary commits from now on
        never reaches the standby, as when an asynchronous standby lags at the moment of a crash."""
        import sqlalchemy as sa

        standby = sa.create_engine(self.standby.admin_url(), isolation_level="AUTOCOMMIT")
        primary = sa.create_engine(self.primary.admin_url(), isolation_level="AUTOCOMMIT")
        try:
            with standby.connect() as conn:
                conn.exec_driver_sql("ALTER SYSTEM SET primary_conninfo = ''")
                conn.exec_driver_sql("SELECT pg_reload_conf()")
            with primary.connect() as conn:
                deadline = time.monotonic() + 30
                while conn.execute(sa.text("SELECT count(*) FROM pg_stat_replication")).scalar():
                    if time.monotonic() > deadline:
                        raise ServerUnavailable("the standby keeps streaming")
                    time.sleep(0.05)
        finally:
            standby.dispose()
            primary.dispose()

    def stop(self) -> None:
        self.standby.stop()
        self.primary.stop()


def start_replicated(*, synchronous: bool) -> Replicated:
    """A primary with one streaming standby (made by pg_basebackup). `synchronous`: a commit returns
    only once the standby has it (synchronous_standby_names), so nothing acknowledged is lost when the
    standby takes over; otherwise the standby lags a little behind, as asynchronous replication does."""
    _may_start("PostgreSQL with a standby")
    bindir = postgres_bindir()
    if bindir is None or os.environ.get("WORKBENCH_TEST_PG"):
        raise ServerUnavailable("replication needs PostgreSQL server binaries and throwaway servers")
    primary = start_postgres(
        durable=True, options="-c wal_level=replica -c max_wal_senders=4 -c wal_keep_size=256MB -c fsync=off"
    )
    work = _workdir("wb-pg-standby-")
    _chown(work, "postgres")
    data = work / "data"
    port = free_port()
    options = f"-k {work} -p {port} -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=off"

    def run(argv: list[str]) -> None:
        subprocess.run(_as_user("postgres", argv), check=True, capture_output=True, text=True, cwd=work)

    try:
        run(
            [
                str(bindir / "pg_basebackup"),
                "-D",
                str(data),
                "-h",
                "127.0.0.1",
                "-p",
                str(primary.port),
                "-U",
                "postgres",
                "-R",
                "-X",
                "stream",
                "--no-sync",
                "-c",
                "fast",
            ]
        )
        run([str(bindir / "pg_ctl"), "-D", str(data), "-l", str(work / "server.log"), "-w", "-o", options, "start"])
    except subprocess.CalledProcessError as exc:
        primary.stop()
        log = (work / "server.log").read_text() if (work / "server.log").exists() else ""
        raise ServerUnavailable(f"the standby did not start: {exc.stderr or exc.stdout}{log[-2000:]}") from exc

    def stop() -> None:
        subprocess.run(
            _as_user("postgres", [str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]),
            capture_output=True,
            cwd=work,
            check=False,
        )
        shutil.rmtree(work, ignore_errors=True)

    def promote() -> None:
        run([str(bindir / "pg_ctl"), "-D", str(data), "-w", "promote"])

    standby = Server("postgresql", "127.0.0.1", port, "postgres", stop)
    import sqlalchemy as sa

    engine = sa.create_engine(primary.admin_url(), isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            deadline = time.monotonic() + 30
            while not conn.execute(
                sa.text("SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'")
            ).scalar():
                if time.monotonic() > deadline:
                    raise ServerUnavailable("the standby does not stream from the primary")
                time.sleep(0.1)
            if synchronous:
                conn.exec_driver_sql("ALTER SYSTEM SET synchronous_standby_names = '*'")
                conn.exec_driver_sql("ALTER SYSTEM SET synchronous_commit = 'on'")
                conn.exec_driver_sql("SELECT pg_reload_conf()")
    finally:
        engine.dispose()
    return Replicated(primary, standby, promote)


def _write_pg_hba(path: Path) -> None:
    """Trust everyone except _PASSWORD_USER over TCP, who must give the right password.

    The server uses the first line that matches, so the password line comes before the trust lines.
    Overwriting the file initdb wrote keeps its owner (postgres) and mode.
    """
    path.write_text(
        "# TYPE  DATABASE     USER  ADDRESS       METHOD\n"
        f"host    all          {_PASSWORD_USER}  127.0.0.1/32  scram-sha-256\n"
        f"host    all          {_PASSWORD_USER}  ::1/128       scram-sha-256\n"
        "local   all          all                 trust\n"
        "host    all          all   127.0.0.1/32  trust\n"
        "host    all          all   ::1/128       trust\n"
        "local   replication  all                 trust\n"
        "host    replication  all   127.0.0.1/32  trust\n"
        "host    replication  all   ::1/128       trust\n"
    )


def _children(parent: int) -> list[int]:
    """Direct children of a process (Linux /proc; the server's backends)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == parent:
            found.append(int(stat.parent.name))
    return found


def start_mariadb(*, durable: bool = False, in_memory: bool = False) -> Server:
    """Start a MariaDB instance on a free port; stop() removes it. Without `durable`, the log is
    flushed about once a second rather than at each commit; with it, the server's default.
    `in_memory` (the tests' servers; a benchmark's stay on disk): its files in memory (_workdir)."""
    _may_start("MariaDB")
    external = os.environ.get("WORKBENCH_TEST_MARIADB")
    if external:  # host:port of a server where root logs in without a password
        host, port = external.rsplit(":", 1)
        return Server("mariadb", host, int(port), "root", lambda: None, external=True)
    server_bin = shutil.which("mariadbd") or ("/usr/sbin/mariadbd" if Path("/usr/sbin/mariadbd").exists() else None)
    install = shutil.which("mariadb-install-db")
    if not server_bin or not install:
        raise ServerUnavailable("MariaDB server (mariadbd, mariadb-install-db) is not installed")
    work = _workdir("wb-maria-", in_memory=in_memory and not durable)
    _chown(work, "mysql")
    data = work / "data"
    port = free_port()
    user_args = ["--user=mysql"] if os.geteuid() == 0 else []
    try:
        subprocess.run(
            [
                install,
                "--no-defaults",
                f"--datadir={data}",
                *user_args,
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
                f"--tmpdir={work}",  # the bootstrap's temporary files too: never another install's
            ],
            check=True,
            capture_output=True,
            text=True,
            cwd=work,
        )
    except subprocess.CalledProcessError as exc:
        raise ServerUnavailable(f"mariadb-install-db failed: {exc.stderr or exc.stdout}") from exc
    sock = work / "mysqld.sock"
    proc = subprocess.Popen(
        [
            server_bin,
            "--no-defaults",
            f"--datadir={data}",
            f"--socket={sock}",
            f"--port={port}",
            "--bind-address=127.0.0.1",
            *user_args,
            f"--pid-file={work / 'mariadbd.pid'}",
            f"--log-error={work / 'error.log'}",
            f"--tmpdir={work}",  # its own: servers of parallel runs never share a temporary file's folder
            "--skip-log-bin",
            f"--innodb-flush-log-at-trx-commit={1 if durable else 0}",
            "--max-connections=300",
            "--transaction-isolation=READ-COMMITTED",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=work,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            log = (work / "error.log").read_text() if (work / "error.log").exists() else ""
            raise ServerUnavailable(f"mariadbd exited with {proc.returncode}: {log[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
        except OSError:
            time.sleep(0.05)
    else:
        proc.kill()
        raise ServerUnavailable("mariadbd did not accept connections within 30 s")

    return Server("mariadb", "127.0.0.1", port, "root", lambda: _end(proc, work, 20))


def _end(proc: subprocess.Popen[bytes], work: Path, seconds: float) -> None:
    """Stop a server process (killed if it takes longer than `seconds`) and remove its folder. One run through
    runuser (_as_user: PgBouncer) is signalled itself: runuser passes a signal on to it and then sleeps two
    seconds before it ends, however soon the server went (2.05 s against 0.01 s a PgBouncer)."""
    if isinstance(proc.args, list) and proc.args[:1] == ["runuser"] and proc.poll() is None:
        for child in _children(proc.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=seconds)  # runuser ends with its child
    if proc.poll() is None:
        proc.terminate()
    try:
        proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        proc.kill()
    shutil.rmtree(work, ignore_errors=True)


GALERA_PROVIDER = "/usr/lib/galera/libgalera_smm.so"


def start_galera(nodes: int = 3, *, in_memory: bool = False) -> list[Server]:
    """A MariaDB Galera cluster of `nodes` on loopback: the first bootstraps it, the others join by a
    state transfer (rsync). Every node takes writes; stop() of the first stops them all."""
    for _ in range(2):
        try:
            return _start_galera_once(nodes, in_memory)
        except ServerUnavailable as exc:
            # Four ports a node, chosen free a moment before the node binds them: another worker's server
            # may take one meanwhile (a joiner aborted on "Failed to listen: bind: Address already in use"
            # for its IST port in a -n 2 CI run). Fresh ports then; any other failure is the answer.
            if "Address already in use" not in str(exc):
                raise
    return _start_galera_once(nodes, in_memory)  # the third try's failure is the answer, whatever it is


def _start_galera_once(nodes: int, in_memory: bool) -> list[Server]:
    _may_start("a Galera cluster")
    server_bin = shutil.which("mariadbd") or ("/usr/sbin/mariadbd" if Path("/usr/sbin/mariadbd").exists() else None)
    install = shutil.which("mariadb-install-db")
    if not server_bin or not install or not Path(GALERA_PROVIDER).exists() or not shutil.which("rsync"):
        raise ServerUnavailable("a Galera cluster needs mariadbd, mariadb-install-db, galera-4 and rsync")
    user_args = ["--user=mysql"] if os.geteuid() == 0 else []
    ports = [(free_port(), free_port(), free_port(), free_port()) for _ in range(nodes)]  # sql, group, ist, sst
    cluster = "gcomm://" + ",".join(f"127.0.0.1:{group}" for _, group, _, _ in ports)
    procs: list[tuple[subprocess.Popen[bytes], Path]] = []

    def stop_all() -> None:
        for proc, work in reversed(procs):
            _end(proc, work, 30)

    servers = []
    try:
        for i, (sql, group, ist, sst) in enumerate(ports):
            work = _workdir(f"wb-galera{i}-", in_memory=in_memory)
            _chown(work, "mysql")
            data = work / "data"
            if i == 0:
                subprocess.run(
                    [
                        install,
                        "--no-defaults",
                        f"--datadir={data}",
                        *user_args,
                        "--auth-root-authentication-method=normal",
                        "--skip-test-db",
                        f"--tmpdir={work}",
                    ],
                    check=True,
                    capture_output=True,
                    text=True,
                    cwd=work,
                )
            else:  # a joiner's data directory is replaced by the donor's copy (rsync SST) anyway
                data.mkdir()
                _chown(data, "mysql")
            argv = [
                server_bin,
                "--no-defaults",
                f"--datadir={data}",
                f"--socket={work / 'mysqld.sock'}",
                f"--port={sql}",
                "--bind-address=127.0.0.1",
                *user_args,
                f"--pid-file={work / 'mariadbd.pid'}",
                f"--log-error={work / 'error.log'}",
                f"--tmpdir={work}",
                "--max-connections=300",
                "--transaction-isolation=READ-COMMITTED",
                "--innodb-flush-log-at-trx-commit=0",
                "--binlog-format=ROW",
                "--innodb-autoinc-lock-mode=2",
                "--default-storage-engine=InnoDB",
                "--wsrep-on=ON",
                f"--wsrep-provider={GALERA_PROVIDER}",
                "--wsrep-cluster-name=workbench",
                f"--wsrep-cluster-address={cluster}",
                f"--wsrep-node-address=127.0.0.1:{group}",
                f"--wsrep-node-name=node{i}",
                "--wsrep-sst-method=rsync",
                f"--wsrep-sst-receive-address=127.0.0.1:{sst}",
                (
                    f"--wsrep-provider-options=gmcast.listen_addr=tcp://127.0.0.1:{group};"
                    f"ist.recv_addr=127.0.0.1:{ist};gcache.size=128M"
                ),
            ]
            if i == 0:
                argv.append("--wsrep-new-cluster")
            proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=work)
            procs.append((proc, work))
            _wait_synced(proc, work, sql, i + 1)
            servers.append(Server("mariadb", "127.0.0.1", sql, "root", lambda: None))
    except (subprocess.CalledProcessError, ServerUnavailable) as exc:
        stop_all()
        raise ServerUnavailable(f"the Galera cluster did not form: {exc}") from exc
    servers[0].stop = stop_all
    return servers


def _wait_synced(proc: subprocess.Popen[bytes], work: Path, port: int, size: int) -> None:
    """Until the node answers, is Synced and sees `size` members."""
    import pymysql

    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            log = (work / "error.log").read_text() if (work / "error.log").exists() else ""
            raise ServerUnavailable(f"a Galera node exited with {proc.returncode}: {log[-3000:]}")
        try:
            conn = pymysql.connect(host="127.0.0.1", port=port, user="root", connect_timeout=1)
        except pymysql.err.OperationalError:
            time.sleep(0.2)
            continue
        try:
            with conn.cursor() as cur:
                cur.execute("SHOW STATUS WHERE Variable_name IN ('wsrep_local_state_comment', 'wsrep_cluster_size')")
                status = dict(cur.fetchall())
        finally:
            conn.close()
        if status.get("wsrep_local_state_comment") == "Synced" and int(status.get("wsrep_cluster_size", 0)) >= size:
            return
        time.sleep(0.2)
    raise ServerUnavailable(f"a Galera node on port {port} did not become Synced within 90 s")


def odbc_driver_name() -> str:
    """The installed MariaDB ODBC driver's registered name."""
    try:
        import pyodbc
    except ImportError as exc:  # pragma: no cover - depends on the machine
        raise ServerUnavailable("pyodbc is not installed") from exc
    names = [d for d in pyodbc.drivers() if "mariadb" in d.lower()]
    if not names:
        raise ServerUnavailable(f"no MariaDB ODBC driver is registered (installed: {pyodbc.drivers()})")
    return names[0]


@dataclasses.dataclass
class PgBouncer:
    """A PgBouncer in transaction pooling in front of a PostgreSQL server, as large sites run it:
    every transaction may land on another server connection, so nothing of a session (a named
    prepared statement, a temporary function, a SET) outlives it. It checks logins as the server
    does (Server.password_user by its password, everyone else trusted on loopback); a login must be
    listed in its auth_file (add_users)."""

    server: Server  # the PostgreSQL behind it
    port: int
    work: Path
    proc: subprocess.Popen[bytes]
    users: dict[str, str]  # login: the password PgBouncer gives the server ("" where it trusts)
    in_turn: int = 0  # the sessions per database it opens from the start and lends in turn (0: its defaults)

    def url(self, database: str, user: str | None = None) -> str:
        """SQLAlchemy URL of one database through the pooler."""
        return f"postgresql+psycopg://{user or self.server.user}@127.0.0.1:{self.port}/{database}"

    def add_users(self, *names: str, password: str = "") -> None:
        """Let these logins through (they still need a role on the server), logging in to the server
        with `password` (the server's password_user needs its own); reloads the auth_file."""
        wanted = dict.fromkeys(names, password)
        if wanted.items() <= self.users.items():
            return
        self.users.update(wanted)
        _write_bouncer_users(self.work / "users.txt", self.users)
        self.console("RELOAD")  # a signal would reach runuser, not PgBouncer

    def drop_database(self, name: str) -> None:
        """Drop database `name` of the server behind, the pooler's sessions on it closed first (KILL: and
        none opened again, for its pool stays paused; the name is not used again). The server's DROP … WITH
        (FORCE) ends the sessions itself, but waits for them to go in steps of a tenth of a second: 0.11-0.13 s
        of every test's teardown, against 0.01-0.02 s for a database nobody is on."""
        import psycopg

        with contextlib.suppress(psycopg.Error):  # a database the pooler never opened a session on
            self.console(f"KILL {name}")
        self.server._sessions(name, wait=1.0)  # the sessions it closed end a moment later
        self.server.drop_database(name)

    def fill(self, database: str) -> set[int]:
        """Have the pool of `database` hold its `in_turn` sessions now, as after a build through the pooler
        (a database copied on the server behind starts with none, and a test's first transactions then
        all land on the one session its first connection opened: what relies on a session would pass);
        the server processes its clients were lent. As many clients each hold a transaction at once, so
        each is lent a session of its own."""
        import psycopg

        clients = [
            psycopg.connect(host="127.0.0.1", port=self.port, dbname=database, user=self.server.user)
            for _ in range(self.in_turn)
        ]
        try:
            lent = {int(c.execute("SELECT pg_backend_pid()", prepare=False).fetchone()[0]) for c in clients}  # type: ignore[index]
            for client in clients:
                client.rollback()  # each session back in the pool (a client gone mid-transaction takes its own)
            return lent
        finally:
            for client in clients:
                client.close()

    def server_connections(self) -> int:
        """How many connections PgBouncer holds to the server (its SHOW SERVERS)."""
        return len(self.console("SHOW SERVERS"))

    def console(self, command: str) -> list[tuple[Any, ...]]:
        """Run a command on PgBouncer's admin console (simple query protocol: it knows no other)."""
        import psycopg

        with psycopg.connect(
            host="127.0.0.1", port=self.port, dbname="pgbouncer", user=self.server.user, autocommit=True
        ) as conn:
            cursor = conn.cursor()
            cursor.execute(command.encode(), prepare=False)  # type: ignore[call-overload]
            return cursor.fetchall() if cursor.description else []

    def stop(self) -> None:
        _end(self.proc, self.work, 10)


_RAISED_FILES = 'ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec "$0" "$@"'  # sh: the soft limit up to the hard one


def _write_bouncer_users(path: Path, users: dict[str, str]) -> None:
    path.write_text("".join(f'"{name}" "{password}"\n' for name, password in sorted(users.items())))


def start_pgbouncer(
    server: Server, *, pool_size: int = 5, in_turn: bool = True, max_clients: int = 2000, pool_mode: str = "transaction"
) -> PgBouncer:
    """Start PgBouncer (Debian's, /usr/sbin/pgbouncer) with pool_mode = transaction in front of
    `server`; every database of the server is reachable under its own name. A small pool, so that
    the clients of a test share server connections and whatever relies on a session shows;
    `in_turn`: every session open from the start and lent in turn (False: PgBouncer's defaults, as a
    benchmark runs it); `max_clients`: client connections it takes (max_client_conn); `pool_mode`: "session" for
    a pooler that keeps a server session for each client connection."""
    _may_start("PgBouncer")
    work = _workdir("wb-pgbouncer-")
    port = free_port()
    users = {server.user: ""}
    _write_bouncer_users(work / "users.txt", users)
    # As the server's own pg_hba.conf: the password user gives its password (PgBouncer checks it
    # against the auth_file and logs in to the server with it), everyone else is trusted.
    (work / "hba.conf").write_text(
        f"host all {_PASSWORD_USER} 127.0.0.1/32 scram-sha-256\nhost all all 127.0.0.1/32 trust\n"
    )
    ini = (
        "[databases]\n"
        f"* = host={server.host} port={server.port}\n"
        "[pgbouncer]\n"
        f"listen_addr = 127.0.0.1\nlisten_port = {port}\nunix_socket_dir =\n"
        f"auth_type = hba\nauth_hba_file = {work / 'hba.conf'}\nauth_file = {work / 'users.txt'}\n"
        f"admin_users = {server.user}\n"
        f"pool_mode = {pool_mode}\nmax_client_conn = {max_clients}\ndefault_pool_size = {pool_size}\n"
        # Every session of the pool open from the start and lent in turn (not the last one used
        # first): one client's transactions in a row land on different sessions, as under load.
        + (f"min_pool_size = {pool_size}\nserver_round_robin = 1\n" if in_turn else "")
        +
        # libpq clients that pass `options` are refused without this; the settings are then dropped,
        # which is what a client must not rely on.
        "ignore_startup_parameters = extra_float_digits,options\n"
    )
    proc = run_pgbouncer(ini, work, port)
    return PgBouncer(server, port, work, proc, users, pool_size if in_turn else 0)


def run_pgbouncer(ini: str, work: Path, port: int) -> subprocess.Popen[bytes]:
    """Start Debian's PgBouncer as postgres with the pgbouncer.ini `ini` (listening on `port`, its log
    added) in `work`, whose files it may then read; returns once it takes connections."""
    binary = shutil.which("pgbouncer") or ("/usr/sbin/pgbouncer" if Path("/usr/sbin/pgbouncer").exists() else None)
    if binary is None:
        shutil.rmtree(work, ignore_errors=True)
        raise ServerUnavailable("pgbouncer is not installed (Debian: apt-get install pgbouncer)")
    (work / "pgbouncer.ini").write_text(ini + f"logfile = {work / 'pgbouncer.log'}\n")
    _chown(work, "postgres")
    for path in work.iterdir():
        _chown(path, "postgres")
    # In the foreground (no -d): the process is ours to stop, and it refuses to run as root.
    proc = subprocess.Popen(
        # One file descriptor per client and server connection: runuser's login session lowers the
        # soft limit to 1,024 (PgBouncer logs "kernel file descriptor limit"), and the clients beyond
        # it wait in the listen queue until their connect_timeout. Raised to the hard limit.
        _as_user("postgres", ["sh", "-c", _RAISED_FILES, binary, str(work / "pgbouncer.ini")]),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=work,
    )
    deadline = time.monotonic() + 15
    while True:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            break
        if proc.poll() is not None or time.monotonic() > deadline:
            log = (work / "pgbouncer.log").read_text() if (work / "pgbouncer.log").exists() else ""
            _end(proc, work, 5)
            raise ServerUnavailable(f"PgBouncer did not start: {log[-2000:]}")
        time.sleep(0.05)
    return proc


def stop_process(proc: subprocess.Popen[bytes], work: Path) -> None:
    """Stop a server run_pgbouncer (or the like) started, and remove its folder."""
    _end(proc, work, 10)
