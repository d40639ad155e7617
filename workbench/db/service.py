"""Open a configured database once and hand out its queues: the engine's entry point."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

import sqlalchemy as sa

from workbench.config import model
from workbench.core import errors
from workbench.db import (
    claims,
    connect,
    counts,
    enforcement,
    lockshapes,
    lookups,
    mapping,
    migrations,
    procedures,
    rowrules,
    tables,
    workqueue,
)
from workbench.db.audit import trail_of as trail_of  # lives with the trail: the grants' renderings build on it too
from workbench.db.binding import reflector

if TYPE_CHECKING:  # imported by supervision(): an operator's process never loads the console's actions
    from workbench.db import supervision


# Binding's tables as read before on this database (or an exact copy of it), given the binding's connection: the
# caller answers for them being the database's as it is now (None: they are read, as without it).
TablesRead = Callable[[sa.Connection], reflector.Read | None]


class Workbench:
    """A connection to one configured database. Thread-safe; queues are bound on first use."""

    def __init__(self, config: model.Config, engine: sa.Engine, *, tables_read: TablesRead | None = None) -> None:
        self.config = config
        self.engine = engine
        # What binding would read of the tables, when the caller has it already (see TablesRead).
        self._tables_read = tables_read
        self.db = connect.Database(engine)
        self._metadata, self.audit_table, _ = tables.build_metadata(config.database.workbench_schema, engine)
        own = {t.name: t for t in self._metadata.tables.values()}
        self.cooldown_table, self.notes_table = own[tables.COOLDOWN_TABLE], own[tables.NOTES_TABLE]
        self.deferrals_table, self.reviews_table = own[tables.DEFERRALS_TABLE], own[tables.REVIEWS_TABLE]
        self.counts = counts.SharedCounts(self.db, own[tables.COUNTS_TABLE])
        self._queues: dict[str, workqueue.WorkQueue] = {}
        self._method: claims.ClaimMethod | None = None
        self._schema_checked = False
        self._lock = threading.Lock()
        self.settings_version = 0  # the published queue settings in use (0: from a config file)

    @classmethod
    def open(
        cls,
        config: model.Config,
        *,
        password: str | None = None,
        create_sqlite: bool = False,
        tables_read: TablesRead | None = None,
    ) -> Workbench:
        engine = connect.create_engine(config.database, config.path, password=password, create_sqlite=create_sqlite)
        return cls(config, engine, tables_read=tables_read)

    def close(self) -> None:
        """End every server session this Workbench opened; a call after it raises connect.Closed (a
        DatabaseUnavailable) and opens none. Closing again does nothing."""
        self.db.dispose()

    def __enter__(self) -> Workbench:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def method(self) -> claims.ClaimMethod:
        if self._method is None:
            from workbench.db import dberrors

            with dberrors.translated():
                self._method = claims.choose(self.engine, self.config.database.claim_method)
        return self._method

    def mine_counts(self, user: str) -> dict[str, int]:
        """How many locks `user` holds in each queue, in the config's order: len(queue.mine(user)) for each,
        in one statement for every queue where the user's name holds none (each queue's holds); a queue where
        it holds some is read again by mine(), which asks the trail which of them workbench took."""
        works = {name: self.queue(name) for name in self.config.queues}

        def held(conn: sa.Connection) -> tuple[bool, ...]:
            asked = [work.holds(conn, user).label(f"wb_q{i}") for i, work in enumerate(works.values())]
            return tuple(key is not None for key in conn.execute(sa.select(*asked)).one())

        found = self.db.read(held)
        return {
            name: len(work.mine(user)) if any_held else 0
            for (name, work), any_held in zip(works.items(), found, strict=True)
        }

    def database_label(self) -> str:
        """Which database this is, for people: "SQLite /path/cases.db", "postgresql db1/cases"."""
        return self.db.backend.describe(self.engine.url)

    def database_login(self) -> str | None:
        """The login workbench uses on the server (None where there is none, e.g. SQLite)."""
        return self.engine.url.username or None

    def init(self) -> list[migrations.Migration]:
        """Create or upgrade workbench's own tables."""
        from workbench.db import dberrors

        schema = self.config.database.workbench_schema
        with dberrors.translated():
            applied = migrations.upgrade(self.engine, schema)
            named = {q.lock.table for q in self.config.queues.values() if q.lock.table}
            migrations.create_lock_tables(self.engine, schema, named)
            if connect.pooled(self.engine):
                self._prepare_claims()
        self._schema_checked = False
        return applied

    def _prepare_claims(self) -> None:
        """Through a transaction pooler: what the claims keep in the database (PostgreSQL's claim
        function) made by init, for the logins that may not make it. Queues not ready yet (lock columns
        still to attach) get theirs at the next init, or at the first claim of a login that may."""
        try:
            bound = self.db.read(lambda conn: self._check(conn, attaching=False, schema=True))
        except errors.ConfigError:
            return
        for q in bound.values():
            queue = self._work_queue(q)
            queue.method.prepare(self.db, q, queue.trail)

    def queue(self, name: str) -> workqueue.WorkQueue:
        """The named queue, its table reflected and every configured name checked.

        The first call checks every queue of the config (see validate), so a config that one
        command would refuse is refused by all of them, before anything runs.
        """
        with self._lock:
            if name not in self.config.queues:
                names = ", ".join(self.config.queues)
                raise errors.UsageError(f"no queue named '{name}' in {self.config.path} (queues: {names})")
            if not self._queues:
                try:
                    bound = self.db.read(lambda conn: self._check(conn, attaching=False, schema=True))
                except errors.NotPermitted as exc:
                    # Refused workbench's own tables: under `grants`, most often a login that is not an
                    # operator's (one shared login from before grants); name that cause.
                    login = self._not_an_operator()
                    if login is not None:
                        raise errors.LoginNotOperator(login) from exc
                    raise
                self._queues = {n: self._work_queue(q) for n, q in bound.items()}
            return self._queues[name]

    def _not_an_operator(self) -> str | None:
        from workbench.db import permissions

        try:
            return self.db.read(permissions.not_an_operator)
        except errors.WorkbenchError:
            return None

    def supervision(self, name: str) -> supervision.Supervision:
        """The named queue's supervisor actions (force-release, reassign, reopen, move, sweep, the
        console's figures), bound to the same queue as queue(name)."""
        from workbench.db import supervision

        return supervision.Supervision(self.queue(name))

    def validate(self, *, attaching: bool = False) -> dict[str, mapping.BoundQueue]:
        """Check the whole config against the database: every queue's names, types and workflow
        rules, as a claim would. Changes nothing; raises ConfigError with the file, key and fix.
        Returns the queues bound to their tables.

        attaching: check the tables as `attach --apply` would leave them (lock columns added).
        """
        return self.db.read(lambda conn: self._check(conn, attaching=attaching, schema=False))

    def _check(self, conn: sa.Connection, *, attaching: bool, schema: bool) -> dict[str, mapping.BoundQueue]:
        """The one place a config is bound to its tables: every queue, or a ConfigError."""
        if schema and not self._schema_checked:
            migrations.check(conn, self.config.database.workbench_schema)
            self._schema_checked = True
        bound = {}
        read = self._tables_read(conn) if self._tables_read is not None else None
        shapes = reflector.Reflector(conn, self.config.queues.values(), read)  # queues over one table read it once
        for name, queue_config in self.config.queues.items():
            if attaching:
                from workbench.db import attach  # only here: a claim need not load the DDL planner

                table = attach.plan(conn, queue_config, self.config.path).table
            else:
                table = shapes.table(queue_config, self.config.path)
            locks = self._lock_table(conn, queue_config, schema)
            bound[name] = mapping.BoundQueue(
                queue_config,
                table,
                config_path=self.config.path,
                backend=self.db.backend,
                local_clock=self.config.database.clock == "local",
                locks=locks,
            )
            # Columns whose value is a key of another table: searched and checked there.
            bound[name].bind_lookups(lookups.bind(shapes, bound[name], self.config.path))
        for q in bound.values():  # names written in another case: only now is it known what they name
            review = q.config.review
            by = bound[review.by] if review is not None else q
            if review is not None and (by.table.fullname, by.key.name) != (q.table.fullname, q.key.name):
                raise errors.ConfigError(
                    f"queue {review.by} works {by.table.fullname} by {by.key.name}; a review "
                    f"queue works the same table by the same key ({q.table.fullname} by "
                    f"{q.key.name})",
                    file=self.config.path,
                    key=f"{review.key}.by",
                )
        for q in bound.values():
            sharing = [
                other
                for other in bound.values()
                if other is not q and other.table.fullname == q.table.fullname and q.may_share_rows(other)
            ]
            if isinstance(q.shape, lockshapes.LockTable):
                # A lock table's rows name their queue: a row is free only while no other queue's row
                # holds it (LockTable.held_elsewhere).
                twins = [
                    other
                    for other in sharing
                    if isinstance(other.shape, lockshapes.LockTable)
                    and other.shape.locks.fullname == q.shape.locks.fullname
                ]
                q.shape.neighbours = tuple(other.name for other in twins)
                # What a claim here asks before it gives back a twin's run-out lock row of the item (expire's
                # row rule, the twin's own: LockTableClaim._give_back_twins).
                q.shape.neighbour_held = {
                    other.name: sa.and_(sa.true(), *rowrules.before(other, "expire").state) for other in twins
                }
            else:
                q.rivals = tuple(other.name for other in sharing if not other.shape.separate_locks)
        return bound

    def _lock_table(self, conn: sa.Connection, queue: model.QueueConfig, check: bool) -> sa.Table | None:
        """The separate lock table a queue keeps its locks in (None: its own table holds them)."""
        name = queue.lock.table
        if name is None:
            return None
        schema = self.config.database.workbench_schema
        if check and name != tables.LOCKS_TABLE and not sa.inspect(conn).has_table(name, schema=schema):
            raise errors.NotInitialized(
                f"queue {queue.name} keeps its locks in table '{name}', which is not in "
                "the database yet: run `workbench init` (it creates it)"
            )
        return tables.lock_table(self._metadata, name)

    def _work_queue(self, bound: mapping.BoundQueue) -> workqueue.WorkQueue:
        trail = trail_of(
            bound.config,
            self.config.reviewed_by(bound.name),
            self.audit_table,
            self.cooldown_table,
            self.notes_table,
            self.deferrals_table,
            self.reviews_table,
        )
        where = (bound.config.schema, bound.config.table)
        neighbours = tuple(
            name
            for name, other in self.config.queues.items()
            if (other.schema, other.table) == where and name != bound.name
        )
        # How the queue's writes run on this database is decided by one owner, handed to the queue; its
        # claim method and guarded writes ask it (enforcement.of) instead of probing the database.
        enforced = enforcement.of(self.db, bound, self.config.database.workbench_schema, procedures.of)
        method = bound.shape.claim_method(self.method)
        return workqueue.WorkQueue(self.db, bound, trail, method, neighbours, enforced)
