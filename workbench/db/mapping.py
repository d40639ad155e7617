"""A queue's config bound to the real, reflected table: checked names, typed values, lock predicates."""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
from collections.abc import Callable, Mapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy.sql import visitors

from workbench import fieldspec
from workbench.config import model
from workbench.core import errors, models, problems
from workbench.db import backends, clock, lockshapes, lookups, values
from workbench.db.binding import binder as binding
from workbench.db.binding import checks, conditions, states, times
from workbench.db.binding import edits as _edits

MAX_VARIANTS = 8  # IN-list combinations worth one query each; beyond that, read a window instead
_SUMMARY_NAMES = ("subject", "title", "summary", "name", "description", "customer", "vendor")


class BoundQueue:
    """Everything the claim methods and operations need to build statements for one queue."""

    def __init__(
        self,
        queue: model.QueueConfig,
        table: sa.Table,
        *,
        config_path: str,
        backend: backends.Backend,
        local_clock: bool,
        locks: sa.Table | None = None,
    ) -> None:
        binder = binding.Binder(queue, table, config_path)
        self.config, self.table, self.name, self.backend = queue, table, queue.name, backend
        # The lock time's clock (`lock.clock`, else the database's): a zone's wall time is a local
        # clock too (naive times on it), with its own "now".
        chosen = queue.lock.clock or ("local" if local_clock else "utc")
        self.lock_clock = chosen
        self.db_local_clock = local_clock  # the database's clock: conditions on the table's other times
        self.local_clock = chosen != "utc"
        self.lock_zone = chosen if chosen not in ("utc", "local") else None
        self.key = binder.column(queue.key, "key")
        self._key_type = values.python_type(self.key)
        self._column_names = [c.name for c in table.c]
        checks.check_unique_key(binder, self.key)
        claim_id = self._bind_lock_columns(binder, locks)
        self.created = checks.date_column(binder, backend, "created")
        self.due = checks.date_column(binder, backend, "due")
        # The item's source (a scan's path or URL, or the text it was read from): shown beside the form.
        self.source_column = binder.column(queue.source, "source") if queue.source else None
        self._choose_shape(binder, locks, claim_id)
        # What a row is read from together with its lock.
        self.source = self.shape.source(table, self.key)
        self.locked_source = self.shape.locked_source(table, self.key)  # for rows known to be locked
        # MySQL/MariaDB DATETIME without a fraction stores whole seconds; times we compute for
        # it must be whole seconds too, or a comparison with the stored value is always off.
        self.whole_seconds = hasattr(self.time.type, "fsp") and not self.time.type.fsp
        self._bind_workflow(binder)
        self._bind_columns(binder)
        # The other queues over this table whose held rows may be this one's too (may_share_rows): the
        # row's state does not tell whose lock it is, the audit trail's newest claim does. Set by
        # the service, which binds every queue.
        self.rivals: tuple[str, ...] = ()
        # Columns whose value is a key of another table (db/lookups.py), by column; set by the service.
        self.lookups: dict[str, lookups.Lookup] = {}

    def _bind_lock_columns(self, binder: binding.Binder, locks: sa.Table | None) -> sa.Column[Any] | None:
        """The lock's columns, checked; the claim-id column if any. `locks`: the separate lock table
        (shape 5), whose columns hold the lock instead of the queue's."""
        queue = self.config
        lock_binder = binding.Binder(queue, locks, binder.path) if locks is not None else binder
        self.user = lock_binder.column(queue.lock.user, "lock.user")
        self.time = lock_binder.column(queue.lock.time, "lock.time")
        self.expires = lock_binder.column(queue.lock.expires, "lock.expires") if queue.lock.expires else None
        self.token = lock_binder.column(queue.lock.token, "lock.token") if queue.lock.token else None
        claim_id = binder.column(queue.lock.claim_id, "lock.claim_id") if queue.lock.claim_id else None
        checks.check_lock_types(
            binder, self.backend, self.user, {"lock.time": self.time, "lock.expires": self.expires}, self.token
        )
        return claim_id

    def _choose_shape(self, binder: binding.Binder, locks: sa.Table | None, claim_id: sa.Column[Any] | None) -> None:
        """The lock shape the lock's columns make, and whether the key suits it."""
        queue = self.config
        self.aware = bool(getattr(self.time.type, "timezone", False))
        self.shape = lockshapes.choose(
            queue=queue.name,
            user=self.user,
            time=self.time,
            expires=self.expires,
            token=self.token,
            locks=locks,
            claim_id=claim_id,
            keep_claim_id=queue.lock.keep_claim_id,
            backend=self.backend,
            lock_seconds=queue.lock_seconds,
            aware=self.aware,
            aware_time=self._aware,
        )
        problem = self.shape.check_key(self.key)
        if problem:
            raise binder.fail(
                "lock.claim_id" if claim_id is not None and "claim-id" in problem else "lock.table", problem
            )

    def _bind_workflow(self, binder: binding.Binder) -> None:
        """The queue's conditions and the writes of each transition, bound to their columns and checked."""
        queue = self.config
        at = conditions.Context(binder, self.lock_columns, self.key, self.backend, self.db_local_clock)

        def assigned(group: tuple[model.Assignment, ...]) -> list[conditions.BoundAssignment]:
            return [conditions.bind_assignment(at, a) for a in group]

        self.order = [(binder.column(term.column, "order"), term.descending) for term in queue.order]
        self.scope = [conditions.bind_condition(at, c) for c in queue.scope]
        self.todo = [conditions.bind_condition(at, c) for c in queue.todo]
        self.on_claim = assigned(queue.on_claim)
        self.on_release = assigned(queue.on_release)
        self.on_reopen = assigned(queue.on_reopen)
        if self.on_reopen:  # and what the lock shape clears with it (a kept claim id)
            self.on_reopen += [
                conditions.BoundAssignment(model.Assignment(c.name, "null", None, f"queues.{queue.name}.lock"), c, None)
                for c in self.shape.cleared_on_reopen()
            ]
        self.on_escalate = assigned(queue.on_escalate)
        self.outcomes = {o.name: assigned(o.assignments) for o in queue.outcomes}
        # Changed columns whose values the audit trail leaves out (names only).
        self.audit_hidden = {binder.column(name, "audit_hidden").name for name in queue.audit_hidden}
        # The columns a claim may be narrowed to one value of (`next --where`).
        self.filter_columns = {name: binder.column(name, "filter_by") for name in queue.filter_by}
        # What a Complete chosen for review writes after its outcome's values (four eyes).
        self.review_writes = assigned(queue.review.writes) if queue.review else []
        # What each offered release reason writes besides on_release (only reasons that write something).
        self.reason_writes = {r.label: assigned(r.assignments) for r in queue.release_reasons if r.assignments}
        checks.check_reasons(binder, self.on_release, self.reason_writes)
        self.work = states.Work(self.scope, self.todo, self.on_claim, self.user)
        self.claim_leaves_todo = conditions.leaves(self.todo, self.on_claim) is True
        # Whether the claim index (see attach.py) returns waiting rows in queue order without a sort,
        # once each IN list is split into one exact value per query (filter_variants()).
        self.index_ordered = (
            all(
                b.condition.op in ("eq", "null", "in") and not b.condition.dynamic and not b.condition.or_null
                for b in (*self.scope, *self.todo)
            )
            and len(self.filter_variants()) <= MAX_VARIANTS
        )
        checks.check_workflow(
            binder,
            self.todo,
            on_claim=self.on_claim,
            on_release=self.on_release,
            outcomes=self.outcomes,
            review_writes=self.review_writes,
            on_escalate=self.on_escalate,
            on_reopen=self.on_reopen,
        )

    def _bind_columns(self, binder: binding.Binder) -> None:
        """Which columns a person edits, which the list shows, and why the others are protected; the form."""
        queue, table = self.config, self.table
        lock_names = {c.name for c in self.lock_columns}
        workflow = {b.column.name for b in (*self.scope, *self.todo)} | {
            b.column.name
            for group in (
                self.on_claim,
                self.on_release,
                self.on_reopen,
                self.on_escalate,
                *self.outcomes.values(),
                *self.reason_writes.values(),
                self.review_writes,
            )
            for b in group
        }
        read_only = (
            {binder.column(name, "read_only").name for name in queue.read_only}
            | {binder.column(name, f"fields.{name}").name for name, field in queue.fields.items() if field.read_only}
            | {c.name for c in (self.source_column,) if c is not None}
        )  # what the document was is not edited
        # Times the database writes itself (a clock default: created_at DEFAULT now()) and the queue's
        # `created` column are shown, not edited, unless the queue configures their field.
        configured = {binder.column(name, f"fields.{name}").name for name in queue.fields}
        stamped = {
            c.name
            for c in table.c
            if binding.stamped_by_database(c) or (self.created is not None and c is self.created)
        } - configured
        self.editable = [
            c
            for c in table.c
            if c.name not in lock_names | workflow | read_only | stamped and c is not self.key and not c.computed
        ]
        self.list_columns = [binder.column(name, "summary") for name in queue.summary] or self._pick_list_columns(
            lock_names
        )
        self.protected = {
            c.name: why
            for why, names in (
                ("is the key", {self.key.name}),
                ("holds the lock", lock_names),
                ("is set by the workflow", workflow),
                ("is read-only", read_only),
                ("is set by the database", stamped),
            )
            for c in table.c
            if c.name in names
        }
        # Form fields and the value rules Save and Complete enforce (the GUI checks the same ones).
        self.specs = fieldspec.derive(self, binder.fail, binder.column)

    def bind_lookups(self, found: Mapping[str, lookups.Lookup]) -> None:
        """Bind the lookups the service found (db/lookups.py): the form's specs name their related tables."""
        self.lookups = dict(found)
        for name, lookup in found.items():
            if name in self.specs:
                self.specs[name] = dataclasses.replace(self.specs[name], lookup=lookup.label)

    def _pick_list_columns(self, lock_names: set[str]) -> list[sa.Column[Any]]:
        """Up to three columns that tell items apart in a list: the most telling names first."""
        candidates = [c for c in self.table.c if c is not self.key and c.name not in lock_names]
        ranked = sorted(
            candidates,
            key=lambda c: next((i for i, n in enumerate(_SUMMARY_NAMES) if n in c.name.lower()), len(_SUMMARY_NAMES)),
        )
        chosen = [c for c in ranked if any(n in c.name.lower() for n in _SUMMARY_NAMES)][:3]
        for column in candidates:
            if len(chosen) >= 3:
                break
            if column not in chosen and isinstance(column.type, (sa.String, sa.Integer, sa.DateTime, sa.Date)):
                chosen.append(column)
        return sorted(chosen, key=ranked.index)

    # -- expressions ------------------------------------------------------------------------

    def open_clause(self) -> sa.ColumnElement[bool]:
        """Rows of this queue still being worked on: waiting (todo) or locked, live or expired."""
        return sa.and_(*self.scope_clause(), sa.or_(self.todo_clause(), self.user.is_not(None)))

    def overdue_clause(self, now: sa.ColumnElement[Any]) -> sa.ColumnElement[bool]:
        """Open rows whose due time has passed (on the database clock); needs the `due` column."""
        assert self.due is not None
        return sa.and_(self.open_clause(), self.due < now)

    @property
    def lock_columns(self) -> list[sa.Column[Any]]:
        """The queue table's columns that hold the lock (none where a separate table holds it)."""
        return self.shape.columns_in_table

    @property
    def capped(self) -> bool:
        """Has a lock a cap on its whole life (max_lock_duration)? An extension then moves it strictly on
        (lockshapes.base.moved_on), in the engine's guard and in the databases' checks alike."""
        return self.config.max_lock_seconds is not None

    def now(self) -> sa.ColumnElement[Any]:
        return clock.db_now(aware=self.aware, local=self.local_clock, zone=self.lock_zone)

    def expiry(self) -> sa.ColumnElement[Any]:
        return self.shape.expiry()

    def expired(self, now: sa.ColumnElement[Any]) -> sa.ColumnElement[bool]:
        return self.shape.expired(now)

    def live(self, now: sa.ColumnElement[Any]) -> sa.ColumnElement[bool]:
        return self.shape.live(now)

    def free(self) -> sa.ColumnElement[bool]:
        """Rows nobody holds (the free branch of a claim)."""
        return self.shape.free()

    def stale(self, now: sa.ColumnElement[Any]) -> sa.ColumnElement[bool]:
        return self.shape.stale(now)

    def with_lock_aliases(self, row: dict[str, Any]) -> dict[str, Any]:
        """Add the wb_* lock fields lock_from_row() reads, from the table's own columns (so that a
        statement need not return them twice)."""
        row["wb_key"] = row[self.key.name]
        row["wb_user"] = row[self.user.name]
        row["wb_time"] = row[self.time.name]
        row["wb_token"] = self.shape.stored_token(row)
        row["wb_expires"] = self.shape.expires_in_row(row)
        return row

    def scope_clause(self, user: Any = None) -> list[sa.ColumnElement[bool]]:
        """The rows of this queue; conditions on the claiming user compare with `user` (all pass when None)."""
        return [b.clause(user) for b in self.scope]

    @property
    def names_user(self) -> bool:
        """Does a condition of scope or todo name the claiming user (so the waiting items differ per user)?"""
        return any(isinstance(b.value, model.Relative) and b.value.kind == "user" for b in (*self.scope, *self.todo))

    def todo_clause(self, user: Any = None) -> sa.ColumnElement[bool]:
        """The rows that are work to do (for `user`, where the queue's conditions name the claimer)."""
        return sa.and_(*(b.clause(user) for b in self.todo))

    def filter_variants(self, user: Any = None) -> list[list[sa.ColumnElement[bool]]]:
        """scope + todo as several filters, one per combination of IN-list values, each of which
        an index led by the filter columns can serve in queue order (MySQL has no partial index)."""
        variants: list[list[sa.ColumnElement[bool]]] = [[]]
        for b in (*self.scope, *self.todo):
            if b.condition.op == "in" and len(b.value) > 1 and not b.condition.or_null:
                options = [
                    b.column == sa.bindparam(None, v, type_=b.column.type, literal_execute=True) for v in b.value
                ]
                variants = [[*variant, option] for variant in variants for option in options]
            else:
                variants = [[*variant, b.clause(user)] for variant in variants]
        return variants

    def claimed_state_clause(self, user: Any = None, *, fixed: bool = False) -> sa.ColumnElement[bool] | None:
        """Rows in the state a claim puts them in (states.Work.claimed_state_clause); None when the claim
        surely leaves a row matching `todo`."""
        return self.work.claimed_state_clause(user, fixed=fixed)

    def held_here(self) -> sa.ColumnElement[bool]:
        """A lock on the row is this queue's: the row is in its scope and waiting (`todo`) or in the
        state its claim puts rows in. Every write under a lock or to a lock (save, extend, release,
        defer, Complete, force-release, reassign, the sweep) and every list of a queue's locks holds
        to it. Several queues may share a table (a queue and the one reviewing it, one queue per
        message type): the lock columns are the table's, and what tells a lock taken in one from a
        lock taken in another is the row's state, which each queue's todo, scope and on_claim set
        apart. Without it a lock taken in `imports` was completed through `imports_review` with the
        review's outcome (no review), or force-released with the other queue's on_release.

        Conditions on the time or the claiming user are left out: they tell no queue from another,
        and a held row may pass out of one (`follow_up_at > now`) while it is held. True where the
        locks live in a lock table: its rows name their queue (LockTable.key_clause), and the guarded
        writes hold the row to in_work() themselves (LockShape.guarded_statements), as do the sweep and a
        force-release or reassign (their row rule HELD, Supervision)."""
        if self.shape.separate_locks:
            return sa.true()
        return self.in_work()

    def in_work(self) -> sa.ColumnElement[bool]:
        """The row rule, the same for every lock shape: the row is still this queue's work (states.Work.in_work)."""
        return self.work.in_work()

    def may_share_rows(self, other: BoundQueue) -> bool:
        """Could a row be held in this queue and in `other` (over the same table) alike (states.Work.may_share_rows)?"""
        return self.work.may_share_rows(other.work)

    def order_by(self) -> list[sa.ColumnElement[Any]]:
        terms: list[sa.ColumnElement[Any]] = [col.desc() if desc else col.asc() for col, desc in self.order]
        terms.append(self.key.asc())  # a stable order, and the index tail
        return terms

    def writes(
        self,
        assignments: list[conditions.BoundAssignment],
        user: sa.ColumnElement[Any] | str,
        now: sa.ColumnElement[Any],
    ) -> dict[str, Any]:
        """Column values for an UPDATE from configured assignments."""
        result: dict[str, Any] = {}
        for b in assignments:
            kind = b.assignment.kind
            if kind == "value":
                result[b.column.name] = sa.bindparam(None, b.value, type_=b.column.type, literal_execute=True)
            elif kind == "null":
                result[b.column.name] = sa.null()
            elif kind == "user":
                result[b.column.name] = user
            else:
                result[b.column.name] = self.backend.time_written(now, b.column)
        return result

    def unlock_writes(self) -> dict[str, Any]:
        return self.shape.unlock_writes()

    def lock_writes(self, user: Any, now: sa.ColumnElement[Any], token: Any) -> dict[str, Any]:
        return self.shape.lock_writes(user, now, token)

    @functools.cached_property
    def lock_insert(self) -> backends.NewRow:
        """The insert of a lock row (locks in a lock table: LockTable.new_lock, on this queue's clock), built
        once per queue, as the lock row's shape is the queue's: building it and its cache key at every
        attempt cost ~135 µs of client CPU. A claim and a supervisor's take run it with their values
        (new_lock_params) through the backend's insert_new."""
        assert isinstance(self.shape, lockshapes.LockTable)
        return self.backend.new_row(self.shape.locks, self.shape.new_lock(self.now()))

    # -- fences -----------------------------------------------------------------------------

    def no_item(self, key: Any) -> errors.InvalidValue:
        """The error for a key that names no row of the table."""
        return errors.InvalidValue.of(problems.NO_ITEM, self.name, repr(key), column=self.key.name)

    def coerce_key(self, raw: Any) -> Any:
        if type(raw) is self._key_type:  # a key handed out by a claim: already the right type
            return raw
        try:
            return values.coerce(self.key, raw)
        except errors.InvalidValue as exc:
            raise errors.InvalidValue(
                f"key {raw!r} is not valid for {self.config.table_label}."
                f"{self.key.name}: {str(exc).split(': ', 1)[-1]}",
                column=self.key.name,
            ) from None

    def coerce_filter(self, where: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
        """A claim-time filter ({column: value}) as typed (column, value) pairs (edits.coerce_filter)."""
        return _edits.coerce_filter(self, where)

    def fence(self, key: Any, token: str, user: str, now: sa.ColumnElement[Any]) -> sa.ColumnElement[bool]:
        """The compare-and-set guard: this row, this exact lock, still live."""
        return sa.and_(self.key == key, self.user == user, self.live(now), self.shape.token_matches(token))

    def token_of(self, row: Mapping[Any, Any]) -> str:
        return self.shape.token_of(row)

    # -- reading ----------------------------------------------------------------------------

    def readable_times(self) -> tuple[sa.ColumnElement[Any], sa.ColumnElement[Any]]:
        return self.shape.readable_times()

    def read_type(self) -> sa.types.TypeEngine[Any]:
        # SQLite keeps date-times as text, which _aware parses; SQLAlchemy's own parsing would
        # raise on text another program wrote there.
        return self.backend.time_read_type(self.aware)

    def item_columns(self) -> list[sa.ColumnElement[Any]]:
        """The table's columns for reading a whole row, its lock times readable (see readable_times)."""
        times = self.shape.readable_columns()
        return [
            sa.type_coerce(times[c.name], self.read_type()).label(c.name) if c.name in times else c
            for c in self.table.c
        ]

    def lock_select_columns(self, now: sa.ColumnElement[Any]) -> list[sa.ColumnElement[Any]]:
        """Columns that describe a row's lock, plus the database clock, for lock_from_row()."""
        when = sa.DateTime(timezone=self.aware)
        time, expiry = self.readable_times()
        return [
            self.key.label("wb_key"),
            self.user.label("wb_user"),
            sa.type_coerce(time, self.read_type()).label("wb_time"),
            sa.type_coerce(expiry, self.read_type()).label("wb_expires"),
            self.shape.token_column().label("wb_token"),
            sa.type_coerce(now, when).label("wb_now"),
        ]

    def _aware(self, value: dt.datetime | str | None) -> dt.datetime:
        return times.aware(value, local_clock=self.local_clock)

    def time_reader(self) -> Callable[[Any], dt.datetime]:
        """A fast _aware for many lock times that the driver already parsed into datetimes."""
        return times.reader(self._aware, in_utc=not (self.aware or self.local_clock))

    def lock_from_row(self, row: Mapping[Any, Any]) -> models.Lock:
        time = self._aware(row["wb_time"])
        token = self.shape.token_from_lock_row(row, time)
        return models.Lock(
            queue=self.name,
            key=row["wb_key"],
            owner=row["wb_user"],
            token=token,
            locked_at=time,
            expires_at=self._aware(row["wb_expires"]),
            db_now=self._aware(row["wb_now"]),
        )

    def item_from_row(self, row: Mapping[Any, Any]) -> dict[str, Any]:
        return {name: row[name] for name in self._column_names if name in row}

    def changes(self, before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, list[Any]]:
        """What the audit keeps of a write: {column: [before, after]} for each column whose value changed
        (`audit_hidden` columns as [None, None]: that they changed, not to what)."""
        return {
            name: [None, None] if name in self.audit_hidden else [before[name], new]
            for name, new in after.items()
            if before[name] != new
        }

    def coerce_moves(self, changes: Mapping[str, Any], what: str) -> dict[str, Any]:
        """Typed values for a supervisor's move (`--set`) or its selection (`--where`) (edits.coerce_moves)."""
        return _edits.coerce_moves(self, changes, what)

    def movable_column(self, name: str, what: str = "column") -> sa.Column[Any]:
        """The column called `name` if a move may select by it or write it (edits.movable_column)."""
        return _edits.movable_column(self, name, what)

    def written(self, expr: sa.ColumnElement[Any], values: Mapping[str, Any]) -> sa.ColumnElement[Any]:
        """`expr` as it reads for a row once `values` ({column: value, or an SQL expression}) are written to it."""

        def replace(element: Any) -> Any:
            if isinstance(element, sa.Column) and element.table is self.table and element.name in values:
                value = values[element.name]
                return value if isinstance(value, sa.ColumnElement) else sa.literal(value, element.type)
            return None

        return visitors.replacement_traverse(expr, {}, replace)  # type: ignore[call-overload,no-any-return]

    def given(self, transition: str) -> list[sa.Column[Any]]:
        """The columns the values a caller gives with `transition` may write, in table order (edits.given)."""
        return _edits.given(self, transition)

    def movable(self, column: sa.Column[Any]) -> bool:
        """May a supervisor's move select by `column` or write it (not the key, the lock, or computed)?"""
        return _edits.movable(self, column)

    def coerce_edits(self, edits: Mapping[str, Any], transition: str = "save") -> dict[str, Any]:
        """Typed values for an edit made with `transition`, checked (edits.coerce_edits)."""
        return _edits.coerce_edits(self, edits, transition)
