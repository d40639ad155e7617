"""A queue's config bound to the real, reflected table: checked names, typed values, lock predicates."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections.abc import Callable, Mapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy.sql import visitors

from workbench import fieldspec
from workbench.config import model
from workbench.core import errors, models, problems, workflow
from workbench.db import backends, clock, filters, lockshapes, lookups, values

# Configured names are found by one rule, named here too (mapping.resolve_name is what most callers say).
from workbench.db.names import AmbiguousName as AmbiguousName
from workbench.db.names import resolve_name as resolve_name

_UTC = dt.UTC
# What a lock time or expiry that cannot be read is listed as: no expiry at all (the claim treats
# the lock as expired), or text that is not a date-time (it never expires for the claim).
UNREADABLE_PAST = dt.datetime(1, 1, 2, tzinfo=_UTC)
UNREADABLE_FUTURE = dt.datetime(9999, 12, 24, tzinfo=_UTC)


def reflect_table(conn: sa.Connection, queue: model.QueueConfig, config_path: str) -> sa.Table:
    """The queue's table as the database has it; a config error when it does not exist."""
    names = sa.inspect(conn).get_table_names(schema=queue.schema)
    try:
        # By the name the database keeps, even where it would find `TBLQUEUE` itself: SQLite does, but
        # then reflects no primary key for it (it looks the table's SQL up by the exact name).
        found = resolve_name(queue.table, names) or queue.table
    except AmbiguousName as exc:
        raise errors.ConfigError(f"table {exc}", file=config_path, key=f"queues.{queue.name}.table") from None
    try:
        return sa.Table(found, sa.MetaData(), schema=queue.schema, autoload_with=conn)
    except sa.exc.NoSuchTableError:
        import difflib  # only for a hint in a message: no part of a command that works

        hint = difflib.get_close_matches(queue.table, names, n=1)
        more = (
            f"; did you mean '{hint[0]}'?"
            if hint
            else (f" (tables: {', '.join(sorted(names)[:20])})" if names else " (the database has no tables)")
        )
        raise errors.ConfigError(
            f"table '{queue.table_label}' does not exist{more}", file=config_path, key=f"queues.{queue.name}.table"
        ) from None


MAX_VARIANTS = 8  # IN-list combinations worth one query each; beyond that, read a window instead


def is_equality(condition: model.Condition) -> bool:
    """Can an index serve this condition as one exact value (so the rest of the index stays ordered)?"""
    return condition.op in ("eq", "null") or (condition.op == "in" and len(condition.value) == 1)


def _kind_of(value: Any) -> str:
    """What a TOML value is, in words."""
    for kind, words in (
        (bool, "true/false"),
        (int, "a number"),
        (float, "a number"),
        (dt.datetime, "a date-time"),
        (dt.date, "a date"),
        (dt.time, "a time"),
    ):
        if isinstance(value, kind):
            return words
    return f"a {type(value).__name__}"


class _Binder:
    """Resolves configured names against the reflected table, failing with the config key."""

    def __init__(self, queue: model.QueueConfig, table: sa.Table, config_path: str) -> None:
        self.queue, self.table, self.path = queue, table, config_path

    def fail(self, key: str, problem: str) -> errors.ConfigError:
        return errors.ConfigError(problem, file=self.path, key=f"queues.{self.queue.name}.{key}")

    def find(self, name: str, key: str) -> sa.Column[Any] | None:
        """The table's column `name` (see resolve_name); None when it has none."""
        try:
            found = resolve_name(name, (c.name for c in self.table.c))
        except AmbiguousName as exc:
            raise self.fail(key, f"column {exc}") from None
        return None if found is None else next(c for c in self.table.c if c.name == found)

    def column(self, name: str, key: str) -> sa.Column[Any]:
        column = self.find(name, key)
        if column is not None:
            return column
        names = [c.name for c in self.table.c]
        import difflib  # only for a hint in a message: no part of a command that works

        hint = difflib.get_close_matches(name, names, n=1)
        more = f"; did you mean '{hint[0]}'?" if hint else f" (columns: {', '.join(names)})"
        if key.startswith("lock"):
            more += f"; `workbench attach {self.queue.name}` prints the DDL that adds the lock columns"
        elif key == "order" and " " in name:
            more += '; an order term is "column", "column asc" or "column desc"'
        raise self.fail(key, f"column '{name}' is not in table {self.queue.table_label}{more}")

    def value(self, column: sa.Column[Any], raw: Any, key: str) -> Any:
        if isinstance(column.type, sa.String) and raw is not None and not isinstance(raw, str):
            # A number for a text column would match only its text form: a queue that looks empty.
            raise self.fail(
                key.split(f"queues.{self.queue.name}.", 1)[-1],
                f"{raw!r} is {_kind_of(raw)}, but column '{column.name}' holds text "
                f'({column.type}); write the value in quotes, e.g. "{raw}"',
            )
        try:
            return values.coerce(column, raw)
        except errors.InvalidValue as exc:
            raise self.fail(key.split(f"queues.{self.queue.name}.", 1)[-1], str(exc)) from None


_CLOCK_DEFAULT = re.compile(
    r"\b(now|current_timestamp|localtimestamp|current_date|getdate|getutcdate|sysdatetime|"
    r"sysutcdatetime|sysdatetimeoffset|utc_timestamp|clock_timestamp|statement_timestamp|"
    r"transaction_timestamp|datetime)\b",
    re.IGNORECASE,
)


def _stamped_by_database(column: sa.Column[Any]) -> bool:
    """A date or time column whose default is the database's clock (when a row was made)."""
    default = column.server_default
    if not isinstance(column.type, (sa.DateTime, sa.Date)) or default is None:
        return False
    text = getattr(getattr(default, "arg", None), "text", getattr(default, "arg", ""))
    return bool(_CLOCK_DEFAULT.search(str(text)))


@dataclasses.dataclass(frozen=True)
class BoundCondition:
    condition: model.Condition
    column: sa.Column[Any]
    value: Any
    now: sa.ColumnElement[Any] | None = None  # the database's clock as this column keeps time

    def clause(self, user: Any = None) -> sa.ColumnElement[bool]:
        """The condition in SQL; one on the claiming user compares with `user`, or holds for all when None."""
        return filters.clause(self.column, self.condition, self.value, user=user, now=self.now)


@dataclasses.dataclass(frozen=True)
class BoundAssignment:
    assignment: model.Assignment
    column: sa.Column[Any]
    value: Any

    def holds(self, user: Any) -> sa.ColumnElement[bool]:
        """The row still holds what this assignment wrote for `user` (a time: some time)."""
        kind = self.assignment.kind
        if kind == "value":
            return self.column == sa.bindparam(None, self.value, type_=self.column.type)
        if kind == "user":
            return self.column == sa.type_coerce(user, self.column.type)
        return self.column.is_(None) if kind == "null" else self.column.is_not(None)

    def held(self) -> sa.ColumnElement[bool]:
        """The row still holds what this assignment wrote, whoever wrote it (a user's name: some name)."""
        return self.column.is_not(None) if self.assignment.kind == "user" else self.holds(None)


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
        binder = _Binder(queue, table, config_path)
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
        self._check_unique_key(binder)
        # `locks`: the separate lock table (shape 5), whose columns hold the lock instead of the queue's.
        lock_binder = _Binder(queue, locks, config_path) if locks is not None else binder
        self.user = lock_binder.column(queue.lock.user, "lock.user")
        self.time = lock_binder.column(queue.lock.time, "lock.time")
        self.expires = lock_binder.column(queue.lock.expires, "lock.expires") if queue.lock.expires else None
        self.token = lock_binder.column(queue.lock.token, "lock.token") if queue.lock.token else None
        claim_id = binder.column(queue.lock.claim_id, "lock.claim_id") if queue.lock.claim_id else None
        self._check_lock_types(binder)
        self.created = self._date_column(binder, "created")
        self.due = self._date_column(binder, "due")
        # The item's source (a scan's path or URL, or the text it was read from): shown beside the form.
        self.source_column = binder.column(queue.source, "source") if queue.source else None
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
            backend=backend,
            lock_seconds=queue.lock_seconds,
            aware=self.aware,
            aware_time=self._aware,
        )
        problem = self.shape.check_key(self.key)
        if problem:
            raise binder.fail(
                "lock.claim_id" if claim_id is not None and "claim-id" in problem else "lock.table", problem
            )
        # What a row is read from together with its lock.
        self.source = self.shape.source(table, self.key)
        self.locked_source = self.shape.locked_source(table, self.key)  # for rows known to be locked
        # MySQL/MariaDB DATETIME without a fraction stores whole seconds; times we compute for
        # it must be whole seconds too, or a comparison with the stored value is always off.
        self.whole_seconds = hasattr(self.time.type, "fsp") and not self.time.type.fsp
        self.order = [(binder.column(term.column, "order"), term.descending) for term in queue.order]
        self.scope = [self._bind_condition(binder, c) for c in queue.scope]
        self.todo = [self._bind_condition(binder, c) for c in queue.todo]
        self.on_claim = [self._bind_assignment(binder, a) for a in queue.on_claim]
        self.on_release = [self._bind_assignment(binder, a) for a in queue.on_release]
        self.on_reopen = [self._bind_assignment(binder, a) for a in queue.on_reopen]
        if self.on_reopen:  # and what the lock shape clears with it (a kept claim id)
            self.on_reopen += [
                BoundAssignment(model.Assignment(c.name, "null", None, f"queues.{queue.name}.lock"), c, None)
                for c in self.shape.cleared_on_reopen()
            ]
        self.on_escalate = [self._bind_assignment(binder, a) for a in queue.on_escalate]
        self.outcomes = {o.name: [self._bind_assignment(binder, a) for a in o.assignments] for o in queue.outcomes}
        # Changed columns whose values the audit trail leaves out (names only).
        self.audit_hidden = {binder.column(name, "audit_hidden").name for name in queue.audit_hidden}
        # The columns a claim may be narrowed to one value of (`next --where`).
        self.filter_columns = {name: binder.column(name, "filter_by") for name in queue.filter_by}
        # What a Complete chosen for review writes after its outcome's values (four eyes).
        self.review_writes = [self._bind_assignment(binder, a) for a in queue.review.writes] if queue.review else []
        # What each offered release reason writes besides on_release (only reasons that write something).
        self.reason_writes = {
            r.label: [self._bind_assignment(binder, a) for a in r.assignments]
            for r in queue.release_reasons
            if r.assignments
        }
        released = {b.column.name for b in self.on_release}
        for writes in self.reason_writes.values():
            for b in writes:
                if b.column.name in released:
                    raise binder.fail(
                        b.assignment.key.split(f"queues.{self.name}.", 1)[-1],
                        f"on_release already sets '{b.column.name}'; a reason may set other columns",
                    )
        self.claim_leaves_todo = self._leaves(self.todo, self.on_claim) is True
        # Whether the claim index (see attach.py) returns waiting rows in queue order without a sort,
        # once each IN list is split into one exact value per query (filter_variants()).
        self.index_ordered = (
            all(
                b.condition.op in ("eq", "null", "in") and not b.condition.dynamic and not b.condition.or_null
                for b in (*self.scope, *self.todo)
            )
            and len(self.filter_variants()) <= MAX_VARIANTS
        )
        self._check_workflow(binder)
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
            c.name for c in table.c if _stamped_by_database(c) or (self.created is not None and c is self.created)
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
        # The other queues over this table whose held rows may be this one's too (may_share_rows): the
        # row's state does not tell whose lock it is, the audit trail's newest claim does. Set by
        # the service, which binds every queue.
        self.rivals: tuple[str, ...] = ()
        # Columns whose value is a key of another table (db/lookups.py), by column; set by the service.
        self.lookups: dict[str, lookups.Lookup] = {}

    def bind_lookups(self, found: Mapping[str, lookups.Lookup]) -> None:
        """Bind the lookups the service found (db/lookups.py): the form's specs name their related tables."""
        self.lookups = dict(found)
        for name, lookup in found.items():
            if name in self.specs:
                self.specs[name] = dataclasses.replace(self.specs[name], lookup=lookup.label)

    _SUMMARY_NAMES = ("subject", "title", "summary", "name", "description", "customer", "vendor")

    def _pick_list_columns(self, lock_names: set[str]) -> list[sa.Column[Any]]:
        """Up to three columns that tell items apart in a list: the most telling names first."""
        candidates = [c for c in self.table.c if c is not self.key and c.name not in lock_names]
        ranked = sorted(
            candidates,
            key=lambda c: next(
                (i for i, n in enumerate(self._SUMMARY_NAMES) if n in c.name.lower()), len(self._SUMMARY_NAMES)
            ),
        )
        chosen = [c for c in ranked if any(n in c.name.lower() for n in self._SUMMARY_NAMES)][:3]
        for column in candidates:
            if len(chosen) >= 3:
                break
            if column not in chosen and isinstance(column.type, (sa.String, sa.Integer, sa.DateTime, sa.Date)):
                chosen.append(column)
        return sorted(chosen, key=ranked.index)

    # -- checks -----------------------------------------------------------------------------

    def _check_unique_key(self, binder: _Binder) -> None:
        pk = list(self.table.primary_key.columns)
        if pk == [self.key]:
            return
        for index in self.table.indexes:
            if index.unique and list(index.columns) == [self.key]:
                return
        for constraint in self.table.constraints:
            if isinstance(constraint, sa.UniqueConstraint) and list(constraint.columns) == [self.key]:
                return
        raise binder.fail(
            "key",
            f"column '{self.key.name}' must be unique (the primary key or a unique "
            "index on that column alone), or two rows could share one lock",
        )

    def _check_lock_types(self, binder: _Binder) -> None:
        if not isinstance(self.user.type, (sa.String, sa.types.NullType)):
            raise binder.fail("lock.user", f"column '{self.user.name}' must be a text column")
        for column, key in ((self.time, "lock.time"), (self.expires, "lock.expires")):
            if column is None:
                continue
            if not self.backend.holds_times(column):
                raise binder.fail(key, f"column '{column.name}' must be a date-time column (it is {column.type})")
        if self.token is not None and not isinstance(self.token.type, sa.Uuid):
            length = getattr(self.token.type, "length", None)
            if not isinstance(self.token.type, (sa.String, sa.types.NullType)) or (length and length < 32):
                raise binder.fail(
                    "lock.token",
                    f"column '{self.token.name}' must be text of at least "
                    "32 characters, or of the database's UUID type",
                )

    def _date_column(self, binder: _Binder, key: str) -> sa.Column[Any] | None:
        """The `created` (when an item arrived) or `due` column, which must hold dates or date-times."""
        name = getattr(self.config, key)
        if name is None:
            return None
        column = binder.column(name, key)
        if not self.backend.holds_dates(column):
            raise binder.fail(key, f"column '{column.name}' must be a date or date-time column (it is {column.type})")
        return column

    def open_clause(self) -> sa.ColumnElement[bool]:
        """Rows of this queue still being worked on: waiting (todo) or locked, live or expired."""
        return sa.and_(*self.scope_clause(), sa.or_(self.todo_clause(), self.user.is_not(None)))

    def overdue_clause(self, now: sa.ColumnElement[Any]) -> sa.ColumnElement[bool]:
        """Open rows whose due time has passed (on the database clock); needs the `due` column."""
        assert self.due is not None
        return sa.and_(self.open_clause(), self.due < now)

    def _bind_condition(self, binder: _Binder, condition: model.Condition) -> BoundCondition:
        key = condition.key.split(f"queues.{self.name}.", 1)[-1]
        column = binder.column(condition.column, key)
        if column in self.lock_columns:
            # Every claim writes the lock columns: a row filtered on them would leave the queue when
            # claimed and never come back when its lock expired.
            raise binder.fail(
                key, f"column '{column.name}' holds the lock, which workbench tests itself; remove it from the filter"
            )
        if condition.dynamic:
            return self._bind_relative(binder, condition, column, key)
        if condition.op == "null":
            value: Any = condition.value
        elif condition.op in ("in", "not_in"):
            value = tuple(binder.value(column, v, condition.key) for v in condition.value)
        else:
            value = binder.value(column, condition.value, condition.key)
        return BoundCondition(condition, column, value)

    def _bind_relative(
        self, binder: _Binder, condition: model.Condition, column: sa.Column[Any], key: str
    ) -> BoundCondition:
        """A condition on the database's time or on the claiming user, checked against the column's type."""
        if condition.value.kind == "user":
            if not isinstance(column.type, (sa.String, sa.types.NullType)):
                raise binder.fail(
                    key, f"column '{column.name}' holds {column.type}, not text: it cannot hold a user's name"
                )
            return BoundCondition(condition, column, condition.value)
        if not self.backend.holds_dates(column):
            raise binder.fail(
                key,
                f"column '{column.name}' must be a date or date-time column to compare with "
                f"the time (it is {column.type})",
            )
        aware = bool(getattr(column.type, "timezone", False))
        return BoundCondition(
            condition, column, condition.value, now=clock.db_now(aware=aware, local=self.db_local_clock and not aware)
        )

    def _bind_assignment(self, binder: _Binder, assignment: model.Assignment) -> BoundAssignment:
        column = binder.column(assignment.column, assignment.key.split(f"queues.{self.name}.", 1)[-1])
        if column in self.lock_columns or column is self.key:
            raise binder.fail(
                assignment.key.split(f"queues.{self.name}.", 1)[-1],
                f"column '{column.name}' is managed by workbench (key or lock) and cannot be set here",
            )
        value = binder.value(column, assignment.value, assignment.key) if assignment.kind == "value" else None
        return BoundAssignment(assignment, column, value)

    @staticmethod
    def _holds_after(cond: BoundCondition, assignment: BoundAssignment) -> bool | None:
        """Does `cond` hold on a row once `assignment` wrote its column? None when that cannot be known."""
        kind = assignment.assignment.kind
        if kind in ("value", "null"):
            return filters.holds(cond.condition, cond.value, assignment.value if kind == "value" else None)
        # The acting user or the database time: some value, never NULL; only a NULL test can tell.
        return (not cond.value) if cond.condition.op == "null" else None

    @classmethod
    def _leaves(cls, conditions: list[BoundCondition], assignments: list[BoundAssignment]) -> bool | None:
        """True when the assignments surely make a row fail `conditions`; None when unknown."""
        written = {b.column.name: b for b in assignments}
        unknown = False
        for cond in conditions:
            assignment = written.get(cond.column.name)
            if assignment is None:
                continue
            holds = cls._holds_after(cond, assignment)
            if holds is False:
                return True
            unknown = unknown or holds is None
        return None if unknown else False

    def _check_workflow(self, binder: _Binder) -> None:
        for name, assignments in self.outcomes.items():
            if self._leaves(self.todo, assignments) is not True:
                raise binder.fail(
                    f"outcomes.{name}.set",
                    "Complete would leave the row matching `todo`, so "
                    "completed items would be served again; write a todo column (e.g. a "
                    "status) to a value outside the todo filter",
                )
        if self.claim_leaves_todo:
            # The claimed row no longer matches todo; a release must bring it back.
            restored = {b.column.name: b for b in self.on_release}
            for cond in self.todo:
                claimed = next((b for b in self.on_claim if b.column.name == cond.column.name), None)
                if claimed is None:
                    continue
                back = restored.get(cond.column.name)
                if back is None or self._holds_after(cond, back) is not True:
                    raise binder.fail(
                        "on_release",
                        f"on_claim sets '{cond.column.name}', so on_release must "
                        "set it back to a todo value, or released and expired items would "
                        "leave the queue",
                    )
        elif self._leaves(self.todo, self.on_release) is True:
            raise binder.fail(
                "on_release", "on_release would take the row out of `todo`, so released items would leave the queue"
            )
        if self.review_writes and self._leaves(self.todo, self.review_writes) is not True:
            raise binder.fail(
                "review.set",
                "a Complete chosen for review would leave the row matching `todo`, so "
                "it would be served here again; write a todo column (e.g. a status) to the value "
                "the reviewing queue's todo waits for",
            )
        if self.on_escalate and self._leaves(self.todo, self.on_escalate) is not True:
            raise binder.fail(
                "on_escalate",
                "escalate would leave the row matching `todo`, so an item handed to a supervisor would be "
                "served to operators again; write a todo column (e.g. a status) to a value outside the todo filter",
            )
        if self.on_reopen:
            # The todo columns a Complete writes must come back to a waiting value; the others keep theirs.
            reopened = {b.column.name: b for b in self.on_reopen}
            finished = {b.column.name for group in self.outcomes.values() for b in group}
            for cond in self.todo:
                if cond.column.name not in finished:
                    continue
                back = reopened.get(cond.column.name)
                if back is None or self._holds_after(cond, back) is not True:
                    raise binder.fail(
                        "on_reopen",
                        f"on_reopen must set '{cond.column.name}' to a value `todo` "
                        "waits for, or a reopened item would not be served again",
                    )

    # -- expressions ------------------------------------------------------------------------

    @property
    def lock_columns(self) -> list[sa.Column[Any]]:
        """The queue table's columns that hold the lock (none where a separate table holds it)."""
        return self.shape.columns_in_table

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
        """Rows in the state a claim puts them in: `todo` with each column the claim writes replaced
        by what it writes (None when the claim surely leaves a row matching `todo`).

        An expired lock is served again when its row is waiting or in this state, whatever the claim
        wrote: a value, NULL, the claimer's name (still in the lock user column) or the claim time.
        `fixed`: without todo's conditions on the time or the claiming user (see held_here).
        """
        if self._leaves(self.todo, self.on_claim) is False:
            return None
        written = {b.column.name: b for b in self.on_claim}
        parts = []
        for cond in self.todo:
            b = written.get(cond.column.name)
            kind = b.assignment.kind if b is not None else None
            if b is None:
                if not (fixed and cond.condition.dynamic):
                    parts.append(cond.clause(user))
            elif kind == "value":
                parts.append(b.column == sa.bindparam(None, b.value, type_=b.column.type, literal_execute=True))
            elif kind == "null":
                parts.append(b.column.is_(None))
            elif kind == "user":
                parts.append(b.column == self.user)
            else:  # the claim time; an extension moves the lock time, so only "set" is known
                parts.append(b.column.is_not(None))
        return sa.and_(sa.true(), *parts)

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
        writes hold the row to in_work() themselves (LockShape.guarded_statements)."""
        if self.shape.separate_locks:
            return sa.true()
        return self.in_work()

    def in_work(self) -> sa.ColumnElement[bool]:
        """The row rule, the same for every lock shape: the row is still this queue's work, in its
        scope and waiting or in the state its claim put it in (not moved out of it since, by another
        program or by hand). A write under a lock (Save, Release, Complete, extend) is refused when
        it fails: "the item is no longer in this queue's work". A condition on the queue's row."""
        scope = [b.clause() for b in self.scope if not b.condition.dynamic]
        todo = [b.clause() for b in self.todo if not b.condition.dynamic]
        claimed = self.claimed_state_clause(fixed=True)
        if not todo:
            return sa.and_(sa.true(), *scope)
        waiting = sa.and_(*todo)
        return sa.and_(sa.true(), *scope, waiting if claimed is None else sa.or_(waiting, claimed))

    def _held_states(self) -> list[dict[str, list[tuple[model.Condition, Any]]]]:
        """What held_here allows, per column: the conditions (and their bound values) of a waiting row
        and, if the claim changes it, of a claimed one (each column on_claim writes: what it writes)."""

        def state(written: list[BoundAssignment]) -> dict[str, list[tuple[model.Condition, Any]]]:
            replaced = {b.column.name: b for b in written}
            found: dict[str, list[tuple[model.Condition, Any]]] = {}
            kept = [*self.scope, *(b for b in self.todo if b.column.name not in replaced)]
            for b in kept:
                if not b.condition.dynamic:
                    found.setdefault(b.column.name, []).append((b.condition, b.value))
            for name, a in replaced.items():
                if any(b.column.name == name for b in self.todo):
                    kind = a.assignment.kind
                    wrote = (
                        model.Condition(name, "eq", a.value, a.assignment.key)
                        if kind == "value"
                        else model.Condition(name, "null", kind == "null", a.assignment.key)
                    )
                    found.setdefault(name, []).append((wrote, wrote.value))
            return found

        states = [state([])]
        if self.claimed_state_clause() is not None:
            states.append(state(self.on_claim))
        return states

    def may_share_rows(self, other: BoundQueue) -> bool:
        """Could a row be held in this queue and in `other` (over the same table) alike, so that its
        state does not tell whose lock it is? False only where some column's values set them apart
        (a status, a type: each value one of them allows, the other refuses)."""

        def values(conditions: list[tuple[model.Condition, Any]]) -> set[Any] | None:
            """The few values a column may hold under `conditions` (None: too many to list)."""
            found: set[Any] | None = None
            for condition, value in conditions:
                some = (
                    {value}
                    if condition.op == "eq"
                    else set(value)
                    if condition.op == "in"
                    else {None}
                    if condition.op == "null" and value
                    else None
                )
                if some is not None and condition.or_null:
                    some.add(None)
                if some is not None:
                    found = some if found is None else found & some
            return found

        def apart(mine: list[tuple[model.Condition, Any]], theirs: list[tuple[model.Condition, Any]]) -> bool:
            listed = values(mine)
            return listed is not None and all(
                any(filters.holds(c, v, candidate) is False for c, v in theirs) for candidate in listed
            )

        return any(
            not any(apart(a[name], b[name]) or apart(b[name], a[name]) for name in a.keys() & b.keys())
            for a in self._held_states()
            for b in other._held_states()
        )

    def order_by(self) -> list[sa.ColumnElement[Any]]:
        terms: list[sa.ColumnElement[Any]] = [col.desc() if desc else col.asc() for col, desc in self.order]
        terms.append(self.key.asc())  # a stable order, and the index tail
        return terms

    def writes(
        self, assignments: list[BoundAssignment], user: sa.ColumnElement[Any] | str, now: sa.ColumnElement[Any]
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
        """A claim-time filter ({column: value}) checked against `filter_by` and converted to the
        columns' types, as (column, value) pairs in the order given."""
        chosen = []
        for name, raw in where.items():
            column = self.filter_columns.get(name)
            if column is None:  # `--where category=…` for `filter_by = ["Category"]`: the column, however written
                named = self._named_column(name)
                column = next((c for c in self.filter_columns.values() if c is named), None)
            if column is None:
                allowed = ", ".join(self.filter_columns) or "none: set filter_by in the queue's config"
                raise errors.UsageError(f"queue {self.name} cannot be narrowed by '{name}' (columns it can: {allowed})")
            if raw is None or (isinstance(raw, str) and not raw.strip()):
                raise errors.UsageError(f"give a value to narrow {self.name} by: {name}=VALUE")
            value = values.coerce(column, raw)
            chosen.append((column.name, value))
        return tuple(chosen)

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
        if value is None:  # no expiry: the claim treats the lock as expired
            return UNREADABLE_PAST
        if value.__class__ is str:  # SQLite keeps times as text
            try:
                value = dt.datetime.fromisoformat(str(value))
            except ValueError:  # written by another program; it sorts after every date as text
                return UNREADABLE_FUTURE
        assert isinstance(value, dt.datetime)
        if value.tzinfo is None and not self.local_clock:
            return value.replace(tzinfo=_UTC)
        return value

    def time_reader(self) -> Callable[[Any], dt.datetime]:
        """A fast _aware for many lock times that the driver already parsed into datetimes."""
        if self.aware or self.local_clock:
            return self._aware  # nothing to add (and SQLite's text is parsed)
        # datetime.combine is about five times faster than replace(tzinfo=…), whose keyword
        # arguments cost over 1 µs a call: it counts on a board of 10,000 locks.
        combine, parse = dt.datetime.combine, dt.datetime.fromisoformat

        def in_utc(value: Any) -> dt.datetime:
            if value.__class__ is not dt.datetime:
                if value.__class__ is str:  # SQLite's text: parsed with its zone, five times faster than replace()
                    try:
                        parsed = parse(str(value) + "+00:00")
                    except ValueError:  # an offset of its own, another program's text
                        parsed = None
                    if parsed is not None and parsed.tzinfo is not None:  # a date alone ignores the zone
                        return parsed
                return self._aware(value)  # NULL or unusual text: see _aware
            return combine(value.date(), value.time(), _UTC)

        return in_utc

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
        """Typed values for a supervisor's move of waiting items (`--set`) or its selection (`--where`):
        any column but the key and the lock, checked by the column's field rules."""
        result = {}
        written = {c.name for c in self.given("move")} if what == "--set" else None
        for name, raw in changes.items():
            column = self.movable_column(name, what)
            if written is not None and column.name not in written:
                # Beside what a move may select by: what the table says a move writes (its Write.MOVED_VALUES).
                raise errors.InvalidValue(f"{what} {column.name}: a move does not write it", column=column.name)
            if what == "--where" and (raw is None or (isinstance(raw, str) and not raw.strip())):
                raise errors.UsageError(f"give a value to select by: --where {column.name}=VALUE")
            result[column.name] = fieldspec.check(self.specs[column.name], raw)
        return result

    def movable_column(self, name: str, what: str = "column") -> sa.Column[Any]:
        """The column called `name` if a move may select by it or write it (not the key, the lock, or
        computed); InvalidValue says why not."""
        column = self._named_column(name)
        if column is None:
            import difflib  # only for a hint in a message: no part of a command that works

            hint = difflib.get_close_matches(name, self._column_names, n=1)
            raise errors.InvalidValue(
                f"{what} {name}: no such column in {self.config.table_label}"
                + (f"; did you mean '{hint[0]}'?" if hint else ""),
                column=name,
            )
        if not self.movable(column):
            why = (
                "is the key"
                if column is self.key
                else ("holds the lock" if column.computed is None else "is computed by the database")
            )
            raise errors.InvalidValue(f"{what} {column.name}: a move cannot use it: it {why}", column=column.name)
        return column

    def written(self, expr: sa.ColumnElement[Any], values: Mapping[str, Any]) -> sa.ColumnElement[Any]:
        """`expr` as it reads for a row once `values` ({column: value, or an SQL expression}) are written to it."""

        def replace(element: Any) -> Any:
            if isinstance(element, sa.Column) and element.table is self.table and element.name in values:
                value = values[element.name]
                return value if isinstance(value, sa.ColumnElement) else sa.literal(value, element.type)
            return None

        return visitors.replacement_traverse(expr, {}, replace)  # type: ignore[call-overload,no-any-return]

    def given(self, transition: str) -> list[sa.Column[Any]]:
        """The columns the values a caller gives with `transition` may write, in table order: by the kind
        its row of core/workflow.py says it takes (workflow.given: Write.EDITS, the editable columns;
        Write.MOVED_VALUES, the movable ones), none where it takes none. The engine checks an edit's and a
        move's names against it (coerce_edits, coerce_moves), SQL Server's procedures their JSON argument."""
        kind = workflow.given(transition)
        if kind is None:
            return []
        names = {c.name for c in _GIVEN[kind](self)}
        return [c for c in self.table.c if c.name in names]

    def movable(self, column: sa.Column[Any]) -> bool:
        """May a supervisor's move select by `column` or write it (not the key, the lock, or computed)?"""
        return column is not self.key and column not in self.lock_columns and column.computed is None

    def _named_column(self, name: str) -> sa.Column[Any] | None:
        """The table's column called `name` (see resolve_name), e.g. `--set Subject=…` from a script
        written for a database that kept the name's case; None when there is none."""
        try:
            found = resolve_name(name, self._column_names)
        except AmbiguousName as exc:
            raise errors.InvalidValue(f"column {exc}", column=name) from None
        return None if found is None else self.table.c[found]

    def coerce_edits(self, edits: Mapping[str, Any], transition: str = "save") -> dict[str, Any]:
        """Typed values for an edit made with `transition` (a save, a Complete), checked against the columns
        it may write (given) and the field rules; InvalidValue names the first column that cannot take its value."""
        editable = {c.name: c for c in self.given(transition)}
        result = {}
        for name, raw in edits.items():
            column = editable.get(name)
            if column is None:
                column = self._named_column(name)
            if column is None or column.name not in editable:
                if column is not None and column.name in self.protected:
                    raise errors.InvalidValue(
                        f"{name}: cannot be edited: it {self.protected[column.name]}", column=column.name
                    )
                import difflib  # only for a hint in a message: no part of a command that works

                hint = difflib.get_close_matches(name, list(editable), n=1)
                raise errors.InvalidValue(
                    f"{name}: no such column in {self.config.table_label}"
                    + (f"; did you mean '{hint[0]}'?" if hint else ""),
                    column=name,
                )
            result[column.name] = fieldspec.check(self.specs[column.name], raw)
        return result


# The columns each kind of given values (core/workflow.py GIVEN) may write: which columns is the queue's.
_GIVEN: Mapping[workflow.Write, Callable[[BoundQueue], list[sa.Column[Any]]]] = {
    workflow.Write.EDITS: lambda q: q.editable,
    workflow.Write.MOVED_VALUES: lambda q: [c for c in q.table.c if q.movable(c)],
}
