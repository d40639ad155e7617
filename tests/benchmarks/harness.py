"""Shared pieces of the claim benchmarks: databases to run on, the demo table filled fast, the timed loop, figures."""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import math
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
import traceback
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

import sqlalchemy as sa
from sqlalchemy import event

from tests import servers
from workbench import demo
from workbench.config import loader, model
from workbench.core import errors
from workbench.db import service
from workbench.demo import data

BACKENDS = ("postgresql", "sqlite", "mariadb", "mariadb-odbc")
QUEUE = "cases"
OUTCOME = "resolved"
LOCK_SECONDS = 3600  # far longer than any run: no lock may expire and be taken over mid-benchmark


# -- where the databases live -----------------------------------------------------------------


@dataclasses.dataclass
class Target:
    """A server (throwaway, or an existing one given by --url) or a directory of SQLite files."""

    backend: str
    server: servers.Server | None
    password: str | None
    admin_database: str
    tmp: Path
    description: str
    created: list[str] = dataclasses.field(default_factory=list)

    @classmethod
    def open(cls, backend: str, url: str | None, *, durable: bool = False, options: str = "") -> Target:
        """`durable`: a throwaway server at its default durability (commits flushed to disk);
        `options`: more settings of a throwaway PostgreSQL (-c name=value …)."""
        if backend not in BACKENDS:
            raise SystemExit(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
        tmp = Path(tempfile.mkdtemp(prefix="wb-bench-"))
        if backend == "sqlite":
            if url:
                raise SystemExit("--url applies to server backends only; SQLite runs on files in a temp dir")
            return cls(backend, None, None, "", tmp, f"SQLite {sqlite3.sqlite_version}, files in {tmp}")
        kind = "postgresql" if backend == "postgresql" else "mariadb"
        if backend == "mariadb-odbc":
            servers.odbc_driver_name()  # fail before any setup if the driver is missing
        if url:
            parsed = sa.make_url(url)
            family = parsed.get_backend_name()
            if (kind == "postgresql") != (family == "postgresql"):
                raise SystemExit(f"--url is a {family} URL but the backend is {backend}")
            default_port, default_user = (5432, "postgres") if kind == "postgresql" else (3306, "root")
            server = servers.Server(
                kind,
                parsed.host or "127.0.0.1",
                parsed.port or default_port,
                parsed.username or default_user,
                stop=lambda: None,
                external=True,
            )
            admin = parsed.database or ("postgres" if kind == "postgresql" else "mysql")
            return cls(
                backend, server, parsed.password, admin, tmp, f"existing {kind} server at {server.host}:{server.port}"
            )
        try:
            if kind == "postgresql":
                server = servers.start_postgres(durable=durable, options=options)
            else:
                server = servers.start_mariadb(durable=durable)
        except servers.ServerUnavailable as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            raise SystemExit(f"cannot start a throwaway {kind} server: {exc}") from None
        admin = "postgres" if kind == "postgresql" else "mysql"
        where = "existing" if server.external else "throwaway"
        speed = "default durability" if durable else "commits not flushed"
        return cls(backend, server, None, admin, tmp, f"{where} {kind} server at {server.host}:{server.port} ({speed})")

    @property
    def is_sqlite(self) -> bool:
        return self.server is None

    def url(self, name: str, *, with_password: bool = False, native: bool = False) -> str:
        """SQLAlchemy URL of database `name`. `native` forces PyMySQL on mariadb-odbc (fast bulk loads)."""
        if self.server is None:
            return f"sqlite:///{self.tmp / (name + '.db')}"
        driver = "pyodbc" if self.backend == "mariadb-odbc" and not native else None
        text = self.server.url(name, driver=driver)
        if with_password and self.password:
            return sa.make_url(text).set(password=self.password).render_as_string(hide_password=False)
        return text

    def conninfo(self, name: str) -> str:
        """libpq connection string of database `name` (PostgreSQL references)."""
        from psycopg import conninfo

        assert self.server is not None and self.server.kind == "postgresql"
        extra = {"password": self.password} if self.password else {}
        return conninfo.make_conninfo(
            host=self.server.host,
            port=self.server.port,
            user=self.server.user,
            dbname=name,
            application_name="claim-bench",
            **extra,
        )

    def admin(self) -> sa.Engine:
        return sa.create_engine(
            self.url(self.admin_database, with_password=True, native=True), isolation_level="AUTOCOMMIT"
        )

    def fresh(self, name: str, *, template: str | None = None) -> str:
        """Create an empty database `name` (replacing one left over) and return its workbench URL. With
        `template` (PostgreSQL: a database nobody is connected to) `name` is a copy of it instead."""
        if self.server is None:
            self._remove_sqlite(name)
        else:
            engine = self.admin()
            try:
                with engine.connect() as conn:
                    quote = engine.dialect.identifier_preparer.quote
                    force = " WITH (FORCE)" if self.server.kind == "postgresql" else ""
                    conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {quote(name)}{force}")
                    copy = f" TEMPLATE {quote(template)}" if template is not None else ""
                    conn.exec_driver_sql(f"CREATE DATABASE {quote(name)}{copy}")
            finally:
                engine.dispose()
        self.created.append(name)
        return self.url(name)

    def checkpoint(self) -> None:
        """Flush dirty pages now so that a checkpoint does not land inside the next measured run."""
        with contextlib.suppress(sa.exc.DBAPIError):  # not a superuser on an existing server: measure without
            self._postgres_command(self.admin_database, "CHECKPOINT")

    def vacuum(self, name: str) -> None:
        """VACUUM database `name` (PostgreSQL): the dead index entries earlier rounds left at the head
        of a queue, which every claim steps over, are gone before the next round."""
        self._postgres_command(name, "VACUUM")

    def _postgres_command(self, database: str, sql: str) -> None:
        """Run `sql` (a maintenance command, outside a transaction) in `database`; nothing elsewhere
        than on PostgreSQL."""
        if self.server is None or self.server.kind != "postgresql":
            return
        engine = sa.create_engine(self.url(database, with_password=True, native=True), isolation_level="AUTOCOMMIT")
        try:
            with engine.connect() as conn:
                conn.exec_driver_sql(sql)
        finally:
            engine.dispose()

    def _remove_sqlite(self, name: str) -> None:
        for suffix in ("", "-wal", "-shm"):
            (self.tmp / f"{name}.db{suffix}").unlink(missing_ok=True)

    def close(self) -> None:
        try:
            if self.server is not None and self.server.external:
                # Someone else's server: take our databases away, leave the server running.
                engine = self.admin()
                try:
                    with engine.connect() as conn:
                        for name in self.created:
                            quoted = engine.dialect.identifier_preparer.quote(name)
                            force = " WITH (FORCE)" if self.server.kind == "postgresql" else ""
                            conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {quoted}{force}")
                finally:
                    engine.dispose()
            elif self.server is not None:
                self.server.stop()
        finally:
            shutil.rmtree(self.tmp, ignore_errors=True)


# -- the demo table, filled fast --------------------------------------------------------------


def bench_config(url: str, *, allow_defer: bool = True, pooler: str = "none") -> model.Config:
    """The demo config on `url`; the cases queue with long locks, no per-user limit and no cool-down;
    `pooler` as `[database] pooler` says."""
    config = loader.parse(tomllib.loads(demo.config_text(url)), "claim-bench.toml")
    config = dataclasses.replace(config, database=dataclasses.replace(config.database, pooler=pooler))
    cases = dataclasses.replace(
        config.queues[QUEUE],
        lock_seconds=LOCK_SECONDS,
        max_lock_seconds=max(LOCK_SECONDS, config.queues[QUEUE].max_lock_seconds or 0),
        max_locks_per_user=0,
        release_cooldown_seconds=0,
        allow_defer=allow_defer,
    )
    return dataclasses.replace(config, queues={**config.queues, QUEUE: cases})


def waiting_predicate(rows: int, fraction: float, layout: str) -> str:
    """SQL on the row number g: which rows are waiting ('new'); the rest are completed ('resolved')."""
    waiting = round(rows * fraction)
    if waiting >= rows:
        return "1 = 1"
    if layout == "newest":
        # As in a real helpdesk table: old cases are resolved, the most recent ones wait.
        return f"g > {rows - waiting}"
    every = max(1, round(1 / fraction))
    return f"g % {every} = 0"


_CATEGORY = (
    "CASE g % 6 WHEN 0 THEN 'Hardware' WHEN 1 THEN 'Software' WHEN 2 THEN 'Network' "
    "WHEN 3 THEN 'Access' WHEN 4 THEN 'Email' ELSE 'Printing' END"
)
_COLUMNS = (
    "case_id, opened_at, customer, email, subject, description, category, priority, status, due_at, "
    "resolution, time_spent_min"
)

# One INSERT … SELECT per dialect, generating the rows in the server: a million rows in seconds
# where a client-side executemany takes minutes. opened_at rises with case_id, one minute apart.
_FILL = {
    "postgresql": f"""
        INSERT INTO cases ({_COLUMNS})
        SELECT g, TIMESTAMP '2020-01-01' + g * INTERVAL '1 minute', 'Customer ' || (g % 997),
               'customer' || (g % 997) || '@example.com', 'Case ' || g, 'Generated for the benchmark.',
               {_CATEGORY}, 1 + (g * 7) % 4, CASE WHEN {{w}} THEN 'new' ELSE 'resolved' END,
               TIMESTAMP '2020-01-01' + (g + 4320) * INTERVAL '1 minute',
               CASE WHEN {{w}} THEN NULL ELSE 'Done.' END, CASE WHEN {{w}} THEN NULL ELSE 30 END
          FROM generate_series({{a}}, {{n}}) AS s(g)""",
    "sqlite": f"""
        INSERT INTO cases ({_COLUMNS})
        WITH RECURSIVE s(g) AS (SELECT {{a}} UNION ALL SELECT g + 1 FROM s WHERE g < {{n}})
        SELECT g, strftime('%Y-%m-%d %H:%M:%S', '2020-01-01', g || ' minutes') || '.000000',
               'Customer ' || (g % 997), 'customer' || (g % 997) || '@example.com', 'Case ' || g,
               'Generated for the benchmark.', {_CATEGORY}, 1 + (g * 7) % 4,
               CASE WHEN {{w}} THEN 'new' ELSE 'resolved' END,
               strftime('%Y-%m-%d %H:%M:%S', '2020-01-01', (g + 4320) || ' minutes') || '.000000',
               CASE WHEN {{w}} THEN NULL ELSE 'Done.' END, CASE WHEN {{w}} THEN NULL ELSE 30 END
          FROM s""",
    # MariaDB's Sequence engine (seq_1_to_N) is built in since 10.1.
    "mariadb": f"""
        INSERT INTO cases ({_COLUMNS})
        SELECT g, DATE_ADD('2020-01-01', INTERVAL g MINUTE), CONCAT('Customer ', g % 997),
               CONCAT('customer', g % 997, '@example.com'), CONCAT('Case ', g), 'Generated for the benchmark.',
               {_CATEGORY}, 1 + (g * 7) % 4, CASE WHEN {{w}} THEN 'new' ELSE 'resolved' END,
               DATE_ADD('2020-01-01', INTERVAL g + 4320 MINUTE),
               CASE WHEN {{w}} THEN NULL ELSE 'Done.' END, CASE WHEN {{w}} THEN NULL ELSE 30 END
          FROM (SELECT seq AS g FROM seq_{{a}}_to_{{n}}) AS s""",
}


def create_demo_tables(engine: sa.Engine) -> sa.Table:
    """The demo's two tables, empty (import_rows must exist: attach_all reflects every queue's table),
    and the vendors its import's lookup names, filled."""
    from workbench.demo import schema  # here: its MySQL and SQL Server types are ~25 ms of every claimer's start

    metadata = sa.MetaData()
    cases, _ = schema.build(metadata)
    vendors = schema.vendors(metadata)
    metadata.drop_all(engine)
    metadata.create_all(engine)
    with engine.begin() as conn:
        conn.execute(sa.insert(vendors), list(data.vendors()))
    return cases


def fill_cases(
    engine: sa.Engine,
    table: sa.Table,
    rows: int,
    *,
    fraction: float = 1.0,
    layout: str = "newest",
    first: int = 1,
) -> None:
    """Insert `rows` cases; `fraction` of them waiting (status 'new'), the others 'resolved'. `first`: the
    first row's case_id (more waiting rows behind those there are: `fraction` 1 only)."""
    if first != 1 and fraction != 1.0:
        raise ValueError("rows added behind others are all waiting (fraction 1)")
    dialect = "mariadb" if engine.dialect.name in ("mysql", "mariadb") else engine.dialect.name
    sql = _FILL.get(dialect)
    where = waiting_predicate(rows, fraction, layout)
    if sql is not None and rows > 0:
        try:
            with engine.begin() as conn:
                # no_parameters: the driver gets the text as written, without %-interpolation.
                text = sql.format(a=first, n=first + rows - 1, w=where)
                conn.execution_options(no_parameters=True).exec_driver_sql(text)
            return
        except sa.exc.ProgrammingError:
            if dialect != "mariadb":
                raise  # only the Sequence engine may be missing (a server built without it)
    _fill_in_chunks(engine, table, rows, fraction, layout, first)


def _fill_in_chunks(engine: sa.Engine, table: sa.Table, rows: int, fraction: float, layout: str, first: int) -> None:
    import datetime as dt

    waiting = round(rows * fraction)
    every = max(1, round(1 / fraction)) if fraction > 0 else rows + 1
    base = dt.datetime(2020, 1, 1)
    categories = ("Printing", "Hardware", "Software", "Network", "Access", "Email")
    chunk: list[dict[str, Any]] = []
    with engine.begin() as conn:
        for g in range(first, first + rows):
            new = g - first + 1 > rows - waiting if layout == "newest" else g % every == 0
            opened = base + dt.timedelta(minutes=g)
            chunk.append(
                {
                    "case_id": g,
                    "opened_at": opened,
                    "customer": f"Customer {g % 997}",
                    "email": f"customer{g % 997}@example.com",
                    "subject": f"Case {g}",
                    "description": "Generated for the benchmark.",
                    "category": categories[(g + 1) % 6],
                    "priority": 1 + (g * 7) % 4,
                    "status": "new" if new else "resolved",
                    "due_at": opened + dt.timedelta(days=3),
                    "resolution": None if new else "Done.",
                    "time_spent_min": None if new else 30,
                }
            )
            if len(chunk) == 10_000:
                conn.execute(sa.insert(table), chunk)
                chunk = []
        if chunk:
            conn.execute(sa.insert(table), chunk)


def analyze(engine: sa.Engine, *tables: str) -> None:
    """Fresh planner statistics (and on PostgreSQL a vacuumed table), as a table in service would have."""
    with engine.connect() as conn:
        conn = conn.execution_options(isolation_level="AUTOCOMMIT")
        for table in tables:
            if engine.dialect.name == "postgresql":
                conn.exec_driver_sql(f"VACUUM ANALYZE {table}")
            elif engine.dialect.name == "sqlite":
                conn.exec_driver_sql(f"ANALYZE {table}")
            else:
                conn.exec_driver_sql(f"ANALYZE TABLE {table}").fetchall()


def build_workbench_db(
    target: Target,
    name: str,
    rows: int,
    *,
    fraction: float = 1.0,
    layout: str = "newest",
    pooler: str = "none",
    tree: str | None = None,
) -> tuple[str, dict[str, float]]:
    """A fresh database with the demo cases table filled, workbench initialised and the claim indexes made
    (with `pooler = "transaction"`: init makes the claim function, PgBouncer's clients find it). With
    `tree` (another commit's checkout) that tree's workbench initialises it, in a process of its own: its
    tables at its own migration, its functions, as a site running that version has them.

    Returns the workbench URL and the seconds each setup step took.
    """
    url = target.fresh(name)
    timings: dict[str, float] = {}
    load = sa.create_engine(target.url(name, with_password=True, native=True))
    try:
        started = time.perf_counter()
        table = create_demo_tables(load)
        fill_cases(load, table, rows, fraction=fraction, layout=layout)
        timings["fill"] = time.perf_counter() - started
    finally:
        load.dispose()
    started = time.perf_counter()
    if tree is not None:
        _init_with(tree, url, target.password, pooler)
        timings["init+attach+analyze"] = time.perf_counter() - started
        return url, timings
    with service.Workbench.open(bench_config(url, pooler=pooler), password=target.password) as wb:
        wb.init()
        demo.attach_all(wb)  # the indexes `workbench attach --apply` would create
        timings["init+attach"] = time.perf_counter() - started
        started = time.perf_counter()
        analyze(wb.engine, "cases")
        timings["analyze"] = time.perf_counter() - started
    return url, timings


# Run by another tree's interpreter path: the same three steps with that tree's harness and workbench.
_INIT_WITH = """
import os, sys
sys.path.insert(0, sys.argv[1])
import workbench
from tests.benchmarks import harness
from workbench import demo
from workbench.db import service
config = harness.bench_config(sys.argv[2], pooler=sys.argv[3])
with service.Workbench.open(config, password=os.environ.get("WB_BENCH_PASSWORD") or None) as wb:
    wb.init()
    demo.attach_all(wb)
    harness.analyze(wb.engine, "cases")
print(os.path.realpath(workbench.__file__))
"""


def _init_with(tree: str, url: str, password: str | None, pooler: str) -> None:
    """Initialise `url`'s workbench with `tree`'s code (the password in the environment, not argv)."""
    env = {**os.environ, "WB_BENCH_PASSWORD": password or ""}
    done = subprocess.run(
        [sys.executable, "-c", _INIT_WITH, str(Path(tree).resolve()), url, pooler],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"initialising {url} with {tree} failed:\n{done.stderr[-3000:]}")
    imported = Path(done.stdout.strip().splitlines()[-1]) if done.stdout.strip() else None
    if imported is None or not imported.is_relative_to(Path(tree).resolve()):
        raise RuntimeError(f"initialising {url}: workbench came from {imported}, not from {tree}")


# Rows still waiting and the highest key, by table: what top_up counts before it adds rows behind them.
_WAITING = {
    "cases": (
        "SELECT count(*) FROM cases WHERE status = 'new' AND wb_locked_by IS NULL",
        "SELECT max(case_id) FROM cases",
    ),
    "jobs": ("SELECT count(*) FROM jobs WHERE status = 'todo'", "SELECT max(id) FROM jobs"),
    "procrastinate_jobs": ("SELECT count(*) FROM procrastinate_jobs WHERE status = 'todo'", None),
}


def top_up(target: Target, name: str, table: str, rows: int) -> int:
    """Add waiting rows behind those left in database `name` until `rows` wait, as new work arrives in a
    queue: every run starts with a full queue (a drained one ends its window early, and a round that
    finds nothing measures nothing). Returns how many rows it added."""
    count_sql, max_sql = _WAITING[table]
    engine = sa.create_engine(target.url(name, with_password=True, native=True))
    try:
        with engine.connect() as conn:
            missing = rows - int(conn.exec_driver_sql(count_sql).scalar() or 0)
            last = int(conn.exec_driver_sql(max_sql).scalar() or 0) if max_sql else 0
        if missing <= 0:
            return 0
        if table == "cases":
            from workbench.demo import schema

            fill_cases(engine, schema.build(sa.MetaData())[0], missing, first=last + 1)
            return missing
        fill = HAND_FILL_FROM if table == "jobs" else PROC_FILL
        with engine.begin() as conn:
            conn.exec_driver_sql(fill, (last + 1, last + missing) if table == "jobs" else (missing,))
        return missing
    finally:
        engine.dispose()


# -- what is measured ---------------------------------------------------------------------------


class Ops(Protocol):
    """One claimer: claim one item (None when nothing is waiting) and complete it."""

    def claim(self) -> Any | None: ...

    def complete(self, handle: Any) -> None: ...

    def close(self) -> None: ...

    def driver_errors(self) -> dict[str, int]: ...


class WorkbenchOps:
    """workbench's public API, through its own engine, as one operator."""

    def __init__(
        self,
        url: str,
        password: str | None,
        user: str,
        *,
        allow_defer: bool = True,
        then_next: bool = False,
        pooler: str = "none",
    ) -> None:
        config = bench_config(url, allow_defer=allow_defer, pooler=pooler)
        self.wb = service.Workbench.open(config, password=password)
        # Each Complete claims the next item as well (as the window does after Complete): claim()
        # hands that one out without a round trip of its own.
        self.then_next = then_next
        self._next: Any = None
        self._seen: collections.Counter[str] = collections.Counter()
        self._seen_lock = threading.Lock()

        # Every DBAPI error, including those workbench retries internally (SQLite busy, deadlock
        # victims): a retried "database is locked" is invisible to the caller but costs latency.
        @event.listens_for(self.wb.engine, "handle_error")
        def _seen(context: Any) -> None:
            with self._seen_lock:
                self._seen[describe(context.original_exception)] += 1

        self.queue = self.wb.queue(QUEUE)
        self.user = user

    def claim(self) -> tuple[Any, str] | None:
        if self._next is not None:
            lock, self._next = self._next.lock, None
            return lock.key, lock.token
        try:
            claimed = self.queue.claim_next(self.user, 1)
        except errors.NothingToClaim as exc:
            if exc.reason == "empty":
                return None
            raise
        return claimed[0].lock.key, claimed[0].lock.token

    def complete(self, handle: tuple[Any, str]) -> None:
        done = self.queue.complete(self.user, handle[0], handle[1], outcome=OUTCOME, then_next=self.then_next)
        self._next = done.next

    def close(self) -> None:
        self.wb.close()

    def driver_errors(self) -> dict[str, int]:
        return dict(self._seen)


class FenceFailed(Exception):
    """A reference's complete matched no row: its claim was not (or no longer) ours."""


# The minimal hand-written loop: what a careful developer would write without a framework.
HAND_SCHEMA = [
    """CREATE TABLE jobs (id bigint PRIMARY KEY, status text NOT NULL, locked_by text, locked_at timestamptz,
                          token text, payload text)""",
    "CREATE INDEX jobs_todo ON jobs (id) WHERE status = 'todo'",
]
HAND_FILL = "INSERT INTO jobs (id, status, payload) SELECT g, 'todo', 'job ' || g FROM generate_series(1, %s) g"
HAND_FILL_FROM = "INSERT INTO jobs (id, status, payload) SELECT g, 'todo', 'job ' || g FROM generate_series(%s, %s) g"
HAND_CLAIM = """UPDATE jobs SET status = 'doing', locked_by = %s, locked_at = now(), token = md5(random()::text)
                 WHERE id = (SELECT id FROM jobs WHERE status = 'todo' ORDER BY id FOR UPDATE SKIP LOCKED LIMIT 1)
                RETURNING *"""
HAND_COMPLETE = "UPDATE jobs SET status = 'done' WHERE id = %s AND token = %s"


class HandWrittenOps:
    def __init__(self, conninfo: str, user: str, *, prepare: bool = True) -> None:
        """`prepare`: psycopg prepares each statement from its fifth run (its default); not through
        a transaction pooler, whose next transaction may run on another server session."""
        import psycopg
        from psycopg import rows

        self.conn = psycopg.connect(conninfo, autocommit=True, row_factory=rows.dict_row)
        if not prepare:
            self.conn.prepare_threshold = None
        self.user = user

    def claim(self) -> tuple[int, str] | None:
        row = self.conn.execute(HAND_CLAIM, (self.user,)).fetchone()
        return None if row is None else (row["id"], row["token"])

    def complete(self, handle: tuple[int, str]) -> None:
        if self.conn.execute(HAND_COMPLETE, handle).rowcount != 1:
            raise FenceFailed(f"job {handle[0]} was not ours to complete")

    def close(self) -> None:
        self.conn.close()

    def driver_errors(self) -> dict[str, int]:
        return {}


# procrastinate's own SQL functions (fetch_job_v2 / finish_job_v1 in procrastinate 3.x), called the
# way its worker calls them (procrastinate/sql/queries.sql), minus the Python job machinery around them.
PROC_FILL = (
    "INSERT INTO procrastinate_jobs (queue_name, task_name, status) "
    "SELECT 'default', 'bench', 'todo' FROM generate_series(1, %s)"
)
PROC_REGISTER = "SELECT worker_id FROM procrastinate_register_worker_v1()"
PROC_FETCH = "SELECT id FROM procrastinate_fetch_job_v2(%s::varchar[], %s)"
PROC_FINISH = "SELECT procrastinate_finish_job_v1(%s, 'succeeded', false)"


class ProcrastinateOps:
    def __init__(self, conninfo: str) -> None:
        import psycopg

        self.conn = psycopg.connect(conninfo, autocommit=True)
        row = self.conn.execute(PROC_REGISTER).fetchone()
        assert row is not None
        self.worker_id = row[0]

    def claim(self) -> int | None:
        row = self.conn.execute(PROC_FETCH, (["default"], self.worker_id)).fetchone()
        # The function returns one all-NULL row when no job is free.
        return None if row is None or row[0] is None else int(row[0])

    def complete(self, handle: int) -> None:
        self.conn.execute(PROC_FINISH, (handle,))

    def close(self) -> None:
        self.conn.close()

    def driver_errors(self) -> dict[str, int]:
        return {}


def make_ops(spec: dict[str, Any], user: str) -> Ops:
    # claim_bench's --thin-audit: the same contender on a database whose audit table is thinned.
    kind = spec["kind"].removesuffix(", audit thinned")
    if kind == "workbench":
        return WorkbenchOps(spec["url"], spec.get("password"), user)
    if kind == "workbench, then next":  # each Complete claims the next item in the same step
        return WorkbenchOps(spec["url"], spec.get("password"), user, then_next=True)
    if kind == "workbench, allow_defer = false":  # the claim without its deferral lookups
        return WorkbenchOps(spec["url"], spec.get("password"), user, allow_defer=False)
    if kind == "workbench+grants":  # each claimer logs in as itself, an operator login named like its user
        url = sa.make_url(spec["url"]).set(username=user).render_as_string(hide_password=False)
        return WorkbenchOps(url, spec.get("password"), user)
    if kind == "hand-written":
        return HandWrittenOps(spec["conninfo"], user)
    if kind == "workbench, pooler setting":  # `pooler = "transaction"` on a direct connection
        return WorkbenchOps(spec["url"], spec.get("password"), user, pooler="transaction")
    if kind == "workbench via PgBouncer":  # through PgBouncer's pool_mode = transaction, with the setting
        return WorkbenchOps(spec["url"], spec.get("password"), user, pooler="transaction")
    if kind == "hand-written via PgBouncer":
        return HandWrittenOps(spec["conninfo"], user, prepare=False)
    if kind == "procrastinate":
        return ProcrastinateOps(spec["conninfo"])
    raise ValueError(kind)


# -- the timed loop -----------------------------------------------------------------------------


@dataclasses.dataclass
class LoopResult:
    claim: list[float] = dataclasses.field(default_factory=list)  # seconds per successful claim
    complete: list[float] = dataclasses.field(default_factory=list)  # seconds per successful complete
    pairs: int = 0
    duration: float = 0.0  # this claimer's own measured window
    empty: int = 0  # claims that found nothing waiting
    errors: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    driver_errors: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    stopped: str = ""

    def merge(self, other: LoopResult, *, concurrent: bool = True) -> None:
        """Add another claimer's figures (concurrent: same window) or a later stretch of the same one."""
        self.claim += other.claim
        self.complete += other.complete
        self.pairs += other.pairs
        # Concurrent claimers start together at the barrier, so the window is the longest of them.
        self.duration = max(self.duration, other.duration) if concurrent else self.duration + other.duration
        self.empty += other.empty
        self.errors.update(other.errors)
        self.driver_errors.update(other.driver_errors)
        if other.stopped and other.stopped not in self.stopped:
            self.stopped = "; ".join(filter(None, [self.stopped, other.stopped]))


EMPTY_TRIES = 3  # a claimer sees "empty" this many times in a row before it believes the queue is drained
MAX_ERRORS_IN_A_ROW = 200


def warm_up(ops: Ops, pairs: int) -> None:
    """A few unmeasured pairs: connections opened, statements compiled and prepared."""
    for _ in range(pairs):
        handle = ops.claim()
        if handle is None:
            return
        ops.complete(handle)


def run_loop(ops: Ops, *, seconds: float | None = None, pairs: int | None = None) -> LoopResult:
    """Claim one, complete it, again, until the time or the pair count is up or the queue is empty."""
    result = LoopResult()
    clock = time.perf_counter
    started = clock()
    deadline = started + seconds if seconds is not None else math.inf
    empty_in_a_row = errors_in_a_row = 0

    def count_error(exc: Exception, in_a_row: int) -> bool:
        """Count a failure by type; True when there have been too many in a row to go on."""
        result.errors[describe(exc)] += 1
        if in_a_row >= MAX_ERRORS_IN_A_ROW:
            result.stopped = f"stopped after {in_a_row} errors in a row"
            return True
        return False

    last_pair_end = started
    while clock() < deadline and (pairs is None or result.pairs < pairs):
        t0 = clock()
        try:
            handle = ops.claim()
        except Exception as exc:  # noqa: BLE001 - every failure is counted, by type
            errors_in_a_row += 1
            if count_error(exc, errors_in_a_row):
                break
            continue
        t1 = clock()
        if handle is None:
            # With SKIP LOCKED a claimer can see nothing while the last rows are being claimed by
            # others; look again briefly before deciding the queue is drained.
            result.empty += 1
            empty_in_a_row += 1
            if empty_in_a_row >= EMPTY_TRIES:
                result.stopped = "queue empty"
                # The window ends with the last pair, not after the pauses spent making sure.
                result.duration = last_pair_end - started
                break
            time.sleep(0.02)
            continue
        empty_in_a_row = 0
        result.claim.append(t1 - t0)
        t2 = clock()
        try:
            ops.complete(handle)
        except Exception as exc:  # noqa: BLE001
            errors_in_a_row += 1
            if count_error(exc, errors_in_a_row):
                break
            continue
        last_pair_end = clock()
        result.complete.append(last_pair_end - t2)
        result.pairs += 1
        errors_in_a_row = 0
    if not result.duration:
        result.duration = clock() - started
    result.driver_errors.update(ops.driver_errors())
    return result


def worker_main(spec: dict[str, Any], index: int, barrier: Any, out: Any, seconds: float, warmup: int) -> None:
    """One claimer process: set up, wait at the barrier with the others, run the loop, send the figures."""
    try:
        ops = make_ops(spec, f"w{index}")
        warm_up(ops, warmup)
    except BaseException:  # noqa: BLE001 - report why, and release the others from the barrier
        out.put({"index": index, "fatal": traceback.format_exc()})
        barrier.abort()
        return
    try:
        barrier.wait()
        result = run_loop(ops, seconds=seconds)
    except BaseException:  # noqa: BLE001
        out.put({"index": index, "fatal": traceback.format_exc()})
        return
    finally:
        ops.close()
    out.put({"index": index, "result": result})


def server_pid(target: Target) -> int | None:
    """The process id of the target's own database server on this machine (PostgreSQL's postmaster,
    from its postmaster.pid, else the parent of our backend; MariaDB's mariadbd, from its pid file);
    None for SQLite, a server on another host, or one whose process this machine cannot see."""
    server = target.server
    if server is None or server.host not in ("127.0.0.1", "localhost", "::1"):
        return None
    engine = target.admin()
    try:
        with engine.connect() as conn:
            if server.kind == "postgresql":
                candidates = [_pid_in_file(_setting(conn, "SHOW data_directory"), "postmaster.pid")]
                backend = conn.exec_driver_sql("SELECT pg_backend_pid()").scalar()
                candidates.append(_parent_of(int(backend)) if backend is not None else None)
                names = ("postgres", "postmaster")
            else:
                candidates = [_pid_in_file(_setting(conn, "SELECT @@pid_file"), None)]
                names = ("mariadbd", "mysqld")
    except sa.exc.DBAPIError:
        return None
    finally:
        engine.dispose()
    # A pid read from a file names our server only if that process runs here under the server's name.
    return next((pid for pid in candidates if pid is not None and _process_name(pid) in names), None)


def _setting(conn: sa.Connection, sql: str) -> str | None:
    try:
        value = conn.exec_driver_sql(sql).scalar()
    except sa.exc.DBAPIError:  # not allowed to read it (not a superuser): the other way is tried
        return None
    return None if value is None else str(value)


def _pid_in_file(where: str | None, name: str | None) -> int | None:
    """The number on the first line of a pid file (`where`, or the file `name` in directory `where`)."""
    if not where:
        return None
    try:
        first = (Path(where) / name if name else Path(where)).read_text().split("\n", 1)[0]
        return int(first.strip())
    except (OSError, ValueError):
        return None


def _stat_fields(pid: int) -> tuple[str, list[str]] | None:
    """(name, the fields of /proc/PID/stat after the name), None for a process that is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.index("(") + 1 : text.rindex(")")], text[text.rindex(")") + 2 :].split()


def _process_name(pid: int) -> str | None:
    found = _stat_fields(pid)
    return found[0] if found else None


def _parent_of(pid: int) -> int | None:
    found = _stat_fields(pid)
    return int(found[1][1]) if found else None


def process_tree_cpu_seconds(root: int) -> float:
    """CPU seconds (user + system) of process `root` and all its descendants, ended ones included.

    Each process's own time (utime, stime; a process's threads included) plus what its ended
    children left it once reaped (cutime, cstime): a backend that ends moves from the live sum into
    its parent's. /proc is read one process at a time, so a backend that ends during a reading may be
    counted twice (read alive, then again in its parent's) or not at all; a reading is taken again
    until two in a row see the same processes and the same reaped time."""
    last = _tree_times(root)
    for _ in range(50):
        now = _tree_times(root)
        if now[:2] == last[:2]:
            return now[2] / os.sysconf("SC_CLK_TCK")
        last = now
    return last[2] / os.sysconf("SC_CLK_TCK")


def _tree_times(root: int) -> tuple[frozenset[int], int, int]:
    """One pass over /proc: the tree's processes, their reaped children's ticks, and all their ticks."""
    children: dict[int, list[int]] = collections.defaultdict(list)
    own: dict[int, int] = {}
    reaped: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        found = _stat_fields(int(stat.parent.name))
        if found is None:
            continue  # ended meanwhile (its time is in its parent's cutime once reaped)
        rest = found[1]
        pid = int(stat.parent.name)
        children[int(rest[1])].append(pid)
        own[pid] = sum(int(field) for field in rest[11:13])  # utime, stime
        reaped[pid] = sum(int(field) for field in rest[13:15])  # cutime, cstime
    pids, todo = set(), [root]
    while todo:
        pid = todo.pop()
        if pid in own:
            pids.add(pid)
        todo += children.get(pid, [])
    gone = sum(reaped[p] for p in pids)
    return frozenset(pids), gone, gone + sum(own[p] for p in pids)


class ServerCpu:
    """The CPU of the benchmark's own database server (its process tree), nothing else on the machine.

    `seconds()` is None where it cannot be told: SQLite (no server process), a server on another host."""

    def __init__(self, target: Target) -> None:
        self.pid = server_pid(target)

    def seconds(self) -> float | None:
        return None if self.pid is None else process_tree_cpu_seconds(self.pid)


def server_cpu_seconds(target: Target) -> float | None:
    """CPU seconds used so far by the target's own server process tree (None: cannot be told here)."""
    return ServerCpu(target).seconds()


def machine_load() -> str:
    """The load average (1, 5, 15 min) and the cores, to print beside figures: on a shared machine
    the figures follow what else runs."""
    try:
        one, five, fifteen = os.getloadavg()
        load = f"load average {one:.2f} / {five:.2f} / {fifteen:.2f} (1 / 5 / 15 min)"
    except OSError:
        load = "load average unknown"
    return f"{load}, {os.cpu_count()} cores"


# -- figures ------------------------------------------------------------------------------------


def describe(exc: BaseException) -> str:
    """An error's type and first message line, numbers blanked so that one kind of error counts once."""
    lines = str(exc).strip().splitlines()
    first = re.sub(r"\d+", "N", lines[0] if lines else "")[:100]
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def is_database_locked(description: str) -> bool:
    return "database is locked" in description.lower() or "stayed busy" in description.lower()


def percentile(values: list[float], pct: float) -> float:
    """Nearest-rank percentile; NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[rank - 1]


def figures(result: LoopResult) -> dict[str, float]:
    ms = 1000.0
    return {
        "pairs/s": result.pairs / result.duration if result.duration else math.nan,
        "claim p50 ms": percentile(result.claim, 50) * ms,
        "claim p99 ms": percentile(result.claim, 99) * ms,
        "complete p50 ms": percentile(result.complete, 50) * ms,
        "complete p99 ms": percentile(result.complete, 99) * ms,
        "pairs": float(result.pairs),
        "window s": result.duration,
        "errors": float(sum(result.errors.values())),
    }


def fmt(value: float) -> str:
    if math.isnan(value):
        return "-"
    if value >= 1000 or value == int(value):
        return f"{value:,.0f}"
    return f"{value:.2f}" if value >= 10 else f"{value:.3f}"


def table(
    columns: dict[str, dict[str, float]], ratios: Iterable[tuple[str, str, str]] = (), rows: Iterable[str] | None = None
) -> str:
    """Figures side by side; each ratio (label, a, b) adds a column a/b."""
    ratios = list(ratios)
    names = list(columns)
    rows = list(rows or next(iter(columns.values())).keys())
    header = [""] + names + [label for label, _, _ in ratios]
    body = []
    for row in rows:
        line = [row] + [fmt(columns[n][row]) for n in names]
        for _, a, b in ratios:
            x, y = columns[a][row], columns[b][row]
            line.append(
                "-"
                if row in ("pairs", "window s", "errors") or not y or math.isnan(x) or math.isnan(y)
                else f"{x / y:.2f}"
            )
        body.append(line)
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    out = [
        "  ".join([r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:], strict=False)])
        for r in [header, *body]
    ]
    return "\n".join(out)


def error_report(name: str, result: LoopResult) -> list[str]:
    lines = []
    for what, counter in (
        ("errors", result.errors),
        ("driver errors (incl. retried inside workbench)", result.driver_errors),
    ):
        for description, count in counter.most_common():
            lines.append(f"  {name}: {what}: {count} x {description}")
    if result.stopped:
        lines.append(f"  {name}: claimers ended: {result.stopped}")
    return lines
