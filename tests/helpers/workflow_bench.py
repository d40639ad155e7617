"""One table of each lock shape with three queues over it, opened as each person would, for the workflow
matrix (tests/contract/test_workflow_matrix.py).

A bench is one database (a SQLite file, or a database on the shared PostgreSQL or MariaDB server) holding
one table of one lock shape, and three queues over that table:

- `main`: the work; its outcome `plain` finishes an item, `checked` hands it to review (every time), a
  release and a `plain` Complete need a note, `on_reopen` puts an item back, Next item narrows by `tag`;
- `twin`: another queue serving the very same rows (its own outcome `other`): a lock taken through
  `main` must not be acted on through `twin`;
- `review`: the four eyes over `main` (`accepted`, `sent_back`).

People: `ann` and `bob` operate, `sue` supervises. Without grants `sue` is the roles table's supervisor;
with grants (PostgreSQL) each person works through their own database login, as `workbench grants`
expects, and the database decides.

Everything a person does goes through workbench.services (what the CLI, the windows and the Python API
call); the bench reads the database directly only to take snapshots and to move the clock.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import itertools
import tomllib
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import mysql

from tests import servers, support
from workbench import services
from workbench.config import loader
from workbench.db import service

OPERATORS = ("ann", "bob")
SUPERVISOR = "sue"
ROWS = 240  # more than the cases of one bench take (each takes one or two fresh rows)
LOCK_MINUTES = 10

# The six table shapes of docs/setup/configuration.md ("The table shapes"), by what records a lock.
SHAPES = ("token", "lock_time", "status", "numeric", "lock_table", "claim_id")


@dataclasses.dataclass(frozen=True)
class Shape:
    """How one shape's table looks and which `[lock]` and workflow values its queues take."""

    columns: Callable[[], tuple[sa.Column[Any], ...]]  # the lock columns the table has (none for a lock table)
    lock: str  # the `[queues.NAME.lock]` body
    numeric: bool = False  # a numeric status (shape 4) instead of text
    status_driven: bool = False  # a claim writes status `active`, a release `new` (shape 3)

    def value(self, state: str) -> Any:
        """A status value: text, or the number shape 4 keeps for it."""
        return {"new": 0, "done": 1, "to_review": 3, "active": 4, "escalated": 5}[state] if self.numeric else state


def _micro_time() -> sa.types.TypeEngine[Any]:
    # A lock time that keeps microseconds on MariaDB as well: a legacy table's token is the lock time, and a
    # token of whole seconds could be rebuilt by a second claim within the same second.
    return sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")


def _wb_columns() -> tuple[sa.Column[Any], ...]:
    return (
        sa.Column("wb_locked_by", sa.String(50)),
        sa.Column("wb_locked_at", _micro_time()),
        sa.Column("wb_lock_expires", _micro_time()),
        sa.Column("wb_lock_token", sa.String(32)),
    )


WB_LOCK = 'user = "wb_locked_by"\ntime = "wb_locked_at"\nexpires = "wb_lock_expires"\ntoken = "wb_lock_token"\n'

SHAPE_SPECS: dict[str, Shape] = {
    # 1: workbench's four lock columns.
    "token": Shape(_wb_columns, WB_LOCK),
    # 2: a legacy lock-user and lock-time column; the lock time is the token.
    "lock_time": Shape(
        lambda: (sa.Column("lock_user", sa.String(50)), sa.Column("lock_time", _micro_time())),
        'user = "lock_user"\ntime = "lock_time"\n',
    ),
    # 3: status-driven, New / Active / Done, with a token column and no expiry column.
    "status": Shape(
        lambda: (
            sa.Column("locked_by", sa.String(50)),
            sa.Column("locked_at", _micro_time()),
            sa.Column("lock_token", sa.String(32)),
        ),
        'user = "locked_by"\ntime = "locked_at"\ntoken = "lock_token"\n',
        status_driven=True,
    ),
    # 4: a numeric status with workbench's four lock columns.
    "numeric": Shape(_wb_columns, WB_LOCK, numeric=True),
    # 5: the table is not changed: every lock in workbench's lock table.
    "lock_table": Shape(tuple, 'table = "workbench_locks"\n'),
    # 6: the table's own claim-id column; lock time and expiry in the lock table.
    "claim_id": Shape(lambda: (sa.Column("claim_id", sa.String(36)),), 'claim_id = "claim_id"\n'),
}


def _literal(value: Any) -> str:
    return str(value) if isinstance(value, int) else f'"{value}"'


def config_text(url: str, shape_name: str, pooler: str = "none") -> str:
    """The three queues over table `items` in shape `shape_name`, the database at `url` (through a
    transaction pooler: `pooler = "transaction"`)."""
    shape = SHAPE_SPECS[shape_name]
    v = {state: _literal(shape.value(state)) for state in ("new", "done", "to_review", "active", "escalated")}
    status_driven = (
        f"\n[queues.{{q}}.on_claim]\nstatus = {v['active']}\n\n[queues.{{q}}.on_release]\nstatus = {v['new']}\n"
        if shape.status_driven
        else ""
    )
    todo = [v["new"]]  # shape 3: an Active row whose lock expired is served again all the same

    def queue(name: str, todo_values: list[str], outcomes: str, extra: str = "") -> str:
        # The two queues of the work claim alike; the review queue claims without writing.
        claims = status_driven.replace("{q}", name) if name != "review" else ""
        return (
            f'[queues.{name}]\ntable = "items"\nkey = "id"\norder = ["id"]\n'
            f'lock_duration = "{LOCK_MINUTES}m"\nrelease_cooldown = "0s"\n{extra}\n'
            f"[queues.{name}.lock]\n{shape.lock}\n"
            f"[queues.{name}.todo]\nstatus = [{', '.join(todo_values)}]\n"
            + claims
            + f"\n[queues.{name}.on_escalate]\nstatus = {v['escalated']}\n"  # an escalated item waits for a supervisor
            + outcomes.replace("{q}", name)
        )

    main = queue(
        "main",
        todo,
        f"\n[queues.{{q}}.on_reopen]\nstatus = {v['new']}\ndone_by = {{ null = true }}\n"
        f"\n[queues.{{q}}.outcomes.plain]\nset = {{ status = {v['done']}, done_by = {{ user = true }} }}\n"
        f"\n[queues.{{q}}.outcomes.checked]\nset = {{ status = {v['done']}, done_by = {{ user = true }} }}\n"
        f'\n[queues.{{q}}.review]\nby = "review"\noutcomes = ["checked"]\npercent = 100\n'
        f'send_back = "sent_back"\nset = {{ status = {v["to_review"]} }}\n',
        'notes_required = ["release", "plain"]\nfilter_by = ["tag"]\nundo_within = "2m"\n',
    )
    twin = queue(
        "twin",
        todo,
        f"\n[queues.{{q}}.outcomes.other]\nset = {{ status = {v['done']} }}\n",
        'filter_by = ["tag"]\n',
    )
    review = queue(
        "review",
        [v["to_review"]],
        f"\n[queues.{{q}}.outcomes.accepted]\nset = {{ status = {v['done']} }}\n"
        f"\n[queues.{{q}}.outcomes.sent_back]\nset = {{ status = {v['new']} }}\n",
    )
    database = f'[database]\nurl = "{url}"\n' + (f'pooler = "{pooler}"\n' if pooler != "none" else "")
    return f"{database}\n{main}\n{twin}\n{review}"


def create_table(engine: sa.Engine, shape_name: str) -> sa.Table:
    shape = SHAPE_SPECS[shape_name]
    md = sa.MetaData()
    table = sa.Table(
        "items",
        md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("tag", sa.String(20), nullable=False),
        sa.Column("status", sa.SmallInteger if shape.numeric else sa.String(20), nullable=False),
        sa.Column("payload", sa.String(200)),
        sa.Column("prio", sa.Integer, nullable=False),
        sa.Column("done_by", sa.String(50)),
        *shape.columns(),
    )
    md.create_all(engine)
    with engine.begin() as conn:
        conn.execute(
            sa.insert(table),
            [
                {"id": i, "tag": f"t{i}", "status": shape.value("new"), "payload": f"item {i}", "prio": 1}
                for i in range(1, ROWS + 1)
            ],
        )
    return table


@dataclasses.dataclass
class Bench:
    """One database, one table of one shape, its three queues; each person's services."""

    backend: str  # sqlite | postgresql | postgresql-pgbouncer | mariadb
    shape_name: str
    grants: bool
    url: str  # as the owner of the table
    admin: service.Workbench  # the owner's workbench (snapshots, the clock)
    workbenches: dict[str, service.Workbench]  # per person: their own login under grants, else the owner's
    # Where the bench's own reads go (snapshots, the audit trail, a row, the clock): on a pooled bench the
    # server behind the pooler, as the owner (the people's operations still go through the pooler); None: the
    # owner's engine.
    reader: sa.Engine | None = None
    _keys: Iterator[int] = dataclasses.field(default_factory=lambda: itertools.count(1))
    # Built on first use: the tables a case may change, and the statements that read them.
    _reflected: list[sa.Table] | None = dataclasses.field(default=None, init=False, repr=False)
    _snapshot_select: Any = dataclasses.field(default=None, init=False, repr=False)
    _audit_select: Any = dataclasses.field(default=None, init=False, repr=False)
    _row_select: Any = dataclasses.field(default=None, init=False, repr=False)

    @property
    def id(self) -> str:
        return bench_id(self.backend, self.shape_name, self.grants)

    @property
    def shape(self) -> Shape:
        return SHAPE_SPECS[self.shape_name]

    def fresh(self) -> int:
        """A row no case has used yet: waiting, nobody holds it."""
        key = next(self._keys)
        assert key <= ROWS, "the bench ran out of rows: raise ROWS"
        return key

    def operator(self, user: str) -> services.Operator:
        return services.Operator(self.workbenches[user], user)

    def supervisor(self, user: str = SUPERVISOR) -> services.Supervisor:
        return services.Supervisor(self.workbenches[user], user)

    def sweep(self, user: str, queue: str = "main") -> list[Any]:
        """The sweep a scheduled job runs (`workbench sweep QUEUE`): the keys it returned to the pool."""
        supervisor = self.supervisor(user)
        if hasattr(supervisor, "sweep"):  # the front door (issue 39): the sweep is a service
            swept = supervisor.sweep(queue)
        else:  # before it, the queue's own (this branch goes once the front door is merged)
            swept = self.workbenches[user].queue(queue).sweep(user)
        return [lock.key for lock in swept]

    def age_lock(self, key: int, seconds: int, queue: str = "main") -> None:
        support.age_lock(self.admin, queue, key, seconds)

    def set_status(self, key: int, state: str) -> None:
        """The table's owner writes item `key`'s status by hand (another program than workbench)."""
        items = self._tables()[0]
        with self.admin.engine.begin() as conn:
            conn.execute(sa.update(items).where(items.c.id == key).values(status=self.shape.value(state)))

    def age_audit(self, key: int, seconds: int) -> None:
        support.age_audit(self.admin, "main", key, seconds)

    @property
    def reads(self) -> sa.Engine:
        return self.reader if self.reader is not None else self.admin.engine

    def db_now(self) -> dt.datetime:
        with self.reads.connect() as conn:
            now = conn.execute(sa.select(sa.func.current_timestamp())).scalar_one()
        if isinstance(now, str):  # SQLite
            now = dt.datetime.fromisoformat(now)
        return now if now.tzinfo is not None else now.replace(tzinfo=dt.UTC)

    # -- what a case may change -------------------------------------------------------------------

    def _tables(self) -> list[sa.Table]:
        tables = self._reflected
        if tables is None:
            md = sa.MetaData()
            md.reflect(self.reads)
            tables = [md.tables["items"]] + [
                t for name, t in sorted(md.tables.items()) if name.startswith("workbench_") and "item_key" in t.c
            ]
            self._reflected = tables
        return tables

    def _snapshot_statement(self) -> Any:
        """Every row of the tables `_tables` names about the keys bound as `keys` (the item's, as the key
        column holds them) and `item_keys` (as text, as workbench's tables hold them), in one statement: one
        round trip, built once (its compiled form is cached). Each row is (table, its values...), padded
        with NULLs to the widest table. On a server every value is read as text: a column's type is fixed
        there, so its text is its value (the timestamps with their microseconds); SQLite keeps each value as
        it is stored (its type included), so there the values come back as they are stored, unconverted."""
        statement = self._snapshot_select
        if statement is None:
            tables = self._tables()
            width = max(len(t.c) for t in tables)
            as_text = self.admin.engine.dialect.name != "sqlite"
            branches = []
            for table in tables:
                where = (
                    table.c.id.in_(sa.bindparam("keys", expanding=True))
                    if table.name == "items"
                    else table.c.item_key.in_(sa.bindparam("item_keys", expanding=True))
                )
                values: list[Any] = [
                    sa.cast(c, sa.String) if as_text else sa.type_coerce(c, sa.types.NullType()) for c in table.c
                ]
                padding = [sa.null()] * (width - len(values))
                branches.append(sa.select(sa.literal(table.name, sa.String).label("t"), *values, *padding).where(where))
            statement = sa.union_all(*branches)
            self._snapshot_select = statement
        return statement

    def snapshot(self, *keys: int) -> dict[str, list[tuple[Any, ...]]]:
        """Everything the database keeps about `keys`: the row (values and lock columns) and every row of
        workbench's own tables about them (audit trail, lock table, notes, deferrals, reviews, cooldowns),
        each table's rows in one order (a table's rows are told apart by their primary key)."""
        statement = self._snapshot_statement()
        found: dict[str, list[tuple[Any, ...]]] = {t.name: [] for t in self._tables()}
        for table, *values in self._read(statement, {"keys": list(keys), "item_keys": [str(k) for k in keys]}):
            found[table].append(tuple(values))
        for rows in found.values():
            rows.sort(key=lambda row: [(v is None, type(v).__name__, str(v)) for v in row])
        return found

    def audit_events(self, key: int) -> list[tuple[int, str, str, str]]:
        """The audit trail of `key`: (id, queue, event, actor), oldest first."""
        statement = self._audit_select
        if statement is None:
            audit = self.admin.audit_table
            statement = (
                sa.select(audit.c.id, audit.c.queue, audit.c.event, audit.c.actor)
                .where(audit.c.item_key == sa.bindparam("item_key"))
                .order_by(audit.c.id)
            )
            self._audit_select = statement
        return [(int(r.id), r.queue, r.event, r.actor) for r in self._read(statement, {"item_key": str(key)})]

    def row(self, key: int) -> dict[str, Any]:
        statement = self._row_select
        if statement is None:
            table = self._tables()[0]
            statement = self._row_select = sa.select(table).where(table.c.id == sa.bindparam("key"))
        (found,) = self._read(statement, {"key": key})
        return dict(found._mapping)

    def _read(self, statement: Any, params: dict[str, Any]) -> list[sa.Row[Any]]:
        """The rows of one read statement of the owner's. Where the backend says a statement alone is
        cheaper (Backend.reads_alone: PostgreSQL, whose autocommit is a flag on the client), in autocommit:
        no BEGIN before it and no ROLLBACK as the connection goes back to the pool, two round trips of three,
        two or three times in every case. Elsewhere in the pool's own transaction, as before (MariaDB's
        driver would send a statement to switch autocommit each way)."""
        with self.reads.connect() as conn:
            if self.admin.db.backend.reads_alone:
                conn = conn.execution_options(isolation_level="AUTOCOMMIT")
            return list(conn.execute(statement, params))

    def close(self) -> None:
        for wb in {id(w): w for w in (self.admin, *self.workbenches.values())}.values():
            wb.close()
        if self.reader is not None:
            self.reader.dispose()


def bench_id(backend: str, shape_name: str, grants: bool) -> str:
    return f"{backend}{'+grants' if grants else ''}-{shape_name}"


def _login_url(url: str, login: str) -> str:
    return sa.make_url(url).set(username=login).render_as_string(hide_password=False)


def open_bench(
    backend: str, shape_name: str, grants: bool, tmp: Path, server: servers.Server | servers.PgBouncer | None
) -> Bench:
    """Build the bench: the database, the table with ROWS waiting rows, workbench's tables, the roles (the
    roles table, or `workbench grants` for every queue and a database login per person). Given a
    PgBouncer, every login goes through it in transaction pooling, `pooler = "transaction"` in the config."""
    pooler = "transaction" if isinstance(server, servers.PgBouncer) else "none"
    if server is None:
        url = f"sqlite:///{tmp / 'matrix.db'}"
    else:
        name = f"wbm_{uuid.uuid4().hex[:12]}"
        _database_server(server).create_database(name)
        url = server.url(name)
        if isinstance(server, servers.PgBouncer):
            server.add_users(*OPERATORS, SUPERVISOR)
    engine = sa.create_engine(url)
    try:
        create_table(engine, shape_name)
    finally:
        engine.dispose()
    text = config_text(url, shape_name, pooler)
    path = tmp / "matrix.toml"
    path.write_text(text, encoding="utf-8")

    def open_as(login_url: str) -> service.Workbench:
        return service.Workbench.open(
            loader.parse(tomllib.loads(config_text(login_url, shape_name, pooler)), str(path))
        )

    admin = open_as(url)
    admin.init()
    # The roles through the services `workbench grants QUEUE --apply` and `workbench role grant` call, on the
    # owner's workbench: a CLI call would open the database and reflect the queue again for each (a third of
    # a grants bench's build).
    from workbench.services import admin as administration

    if grants:
        from tests.test_permissions import _logins

        for queue in ("main", "twin", "review"):
            assert administration.grants(admin, queue, revoke=False, apply=True).applied, queue
        _logins(url)
        people = {login: open_as(_login_url(url, login)) for login in (*OPERATORS, SUPERVISOR)}
    else:
        administration.roles(admin, SUPERVISOR, "grant", SUPERVISOR, "supervisor")
        people = dict.fromkeys((*OPERATORS, SUPERVISOR), admin)
    # Through a pooler every read would be parsed and planned anew (psycopg prepares nothing there) and take
    # two hops; straight to the server the snapshot's one statement is prepared after its fifth run.
    reader = sa.create_engine(server.server.url(name), pool_size=1) if isinstance(server, servers.PgBouncer) else None
    return Bench(backend, shape_name, grants, url, admin, people, reader)


def _database_server(server: servers.Server | servers.PgBouncer) -> servers.Server:
    return server.server if isinstance(server, servers.PgBouncer) else server


def drop_bench(bench: Bench, server: servers.Server | servers.PgBouncer | None) -> None:
    bench.close()
    if server is not None:
        _database_server(server).drop_database(sa.make_url(bench.url).database or "")
