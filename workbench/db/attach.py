"""`workbench attach`: the DDL that adds a queue's lock columns and the indexes that keep claims fast."""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import io
import re
import zoneinfo
from typing import Any

import sqlalchemy as sa
from sqlalchemy.schema import CreateIndex

from workbench.config import model
from workbench.core import errors
from workbench.db import audit, backends, clock, dberrors, filters, lookups, mapping, values
from workbench.db.backends.indexes import column_name
from workbench.db.binding import binder as binding
from workbench.db.binding import reflector


@dataclasses.dataclass
class AttachPlan:
    queue: str
    table: sa.Table
    add_columns: list[sa.Column[Any]]
    indexes: list[sa.Index]
    notes: list[str]
    # Indexes only suggested, never created by --apply (a table workbench must not change).
    suggested: list[sa.Index] = dataclasses.field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.add_columns and not self.indexes


def _datetime() -> sa.types.TypeEngine[Any]:
    from sqlalchemy.dialects import mssql, mysql

    datetime2 = mssql.DATETIME2()  # type: ignore[no-untyped-call]
    return sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb").with_variant(datetime2, "mssql")


def _index_name(*parts: str) -> str:
    name = "wb_" + "_".join(re.sub(r"[^A-Za-z0-9]+", "_", p).strip("_").lower() for p in parts)
    return name[:60]


def plan(conn: sa.Connection, queue: model.QueueConfig, config_path: str) -> AttachPlan:
    """What is missing on the queue's table; nothing is changed."""
    backend = backends.of(conn)
    table = reflector.reflect_table(conn, queue, config_path)
    if queue.lock.table:
        return _lock_table_plan(conn, queue, table, config_path, backend)
    notes: list[str] = []
    add: list[sa.Column[Any]] = []
    wanted = [
        ("user", queue.lock.user, sa.String(128)),
        ("time", queue.lock.time, _datetime()),
        ("expires", queue.lock.expires, _datetime()),
        ("token", queue.lock.token, sa.String(32)),
    ]
    found_by = binding.Binder(queue, table, config_path)
    for key, name, kind in wanted:
        if not name:
            continue
        # Found as the config's names are everywhere (names.resolve_name): `LockUser` is the `lockuser`
        # PostgreSQL folded it to. A second one beside it would be a lock the old application never sees.
        have = found_by.find(name, f"lock.{key}")
        if have is None:
            add.append(sa.Column(name, kind, nullable=True))
        elif have.name != name:
            notes.append(
                f"lock.{key} '{name}' is column '{have.name}' of {table.name} (the same name in "
                "another case): using it, not adding a column"
            )
    # Work on a copy that has the new columns (and the table's keys and indexes), so indexes can
    # name them and the config can be checked against the table as it will be.
    full = table.to_metadata(sa.MetaData())
    for column in add:
        full.append_column(column._copy())
    binder = binding.Binder(queue, full, config_path)
    existing = {ix.name for ix in table.indexes if ix.name}
    reflected = sa.inspect(conn).get_indexes(table.name, schema=table.schema) if not add else []
    indexes = []
    for index in _indexes(queue, full, binder, backend, notes):
        if index.name in existing:
            continue
        # The customer's own index may already serve the claim: a second one would cost every
        # claim and completion its upkeep and buy nothing.
        same = next((found for found in reflected if backend.index_serves(conn, table, found, index)), None)
        if same is not None:
            notes.append(
                f"index {same['name']} already serves what {index.name} would (same leading columns "
                "and condition): not adding it"
            )
            continue
        indexes.append(index)
    notes += _guessable_fence(queue, binder)
    return AttachPlan(queue=queue.name, table=full, add_columns=add, indexes=indexes, notes=notes)


# A lookup's related table from this many rows gets a search index suggested: below it, reading the
# whole table per keystroke takes a few milliseconds (docs/explanation/performance.md, "Lookups").
SEARCH_INDEX_ROWS = lookups.LARGE_ROWS


def search_indexes(conn: sa.Connection, found: list[lookups.Lookup]) -> tuple[list[sa.Index], list[str]]:
    """Indexes that let the lookups' searches read their related tables' display columns by index
    (Backend.search_index), for related tables of SEARCH_INDEX_ROWS rows or more that have none;
    suggested, never made: the related table is not the queue's. And notes saying why."""
    indexes: list[sa.Index] = []
    notes: list[str] = []
    seen: set[tuple[str, str]] = set()
    for lookup in found:
        where = (lookup.table.fullname, lookup.display.name)
        if where in seen:
            continue
        seen.add(where)
        rows = conn.execute(sa.select(sa.func.count()).select_from(lookup.table)).scalar() or 0
        if rows < SEARCH_INDEX_ROWS:
            continue
        wanted, note = lookup.backend.search_index(conn, lookup.display)
        if not wanted and note is None:
            continue
        told = f"lookup {lookup.field} searches {lookup.table.name}.{lookup.display.name} ({rows:,} rows)"
        if wanted:
            which = "the index below lets" if len(wanted) == 1 else "the indexes below let"
            notes.append(
                f"suggested, not applied: {told}; {which} each keystroke's search read an index "
                "instead of the whole table; the related table's owner may create it" + (f"; {note}" if note else "")
            )
            indexes.extend(wanted)
        elif note is not None:
            notes.append(f"{told}: {note}")
    return indexes, notes


def _lock_table_plan(
    conn: sa.Connection, queue: model.QueueConfig, table: sa.Table, config_path: str, backend: backends.Backend
) -> AttachPlan:
    """A queue whose locks live in a separate table: nothing to change on its own table. The claim
    looks for waiting rows without a lock row in queue order; an index on the filter and order
    columns lets it read the first few instead of the whole table, so it is suggested, not made."""
    binder = binding.Binder(queue, table, config_path)
    key = binder.column(queue.key, "key")
    order = [
        binder.column(t.column, "order").desc() if t.descending else binder.column(t.column, "order")
        for t in queue.order
    ]
    filt = _conditions(queue, binder, queue.scope + queue.todo)
    where_kw = backend.partial_index_keyword
    name = _index_name(queue.name, "waiting")
    if where_kw and filt:
        waiting = sa.and_(*(filters.clause(col, cond, value) for cond, col, value in filt))
        partial: dict[str, Any] = {where_kw: waiting}
        index = sa.Index(name, *_once(*order, key), **partial)
    else:
        index = sa.Index(name, *_once(*(col for cond, col, _ in filt if _exact(cond)), *order, key))
    notes = [
        (
            f"queue {queue.name} keeps its locks in table '{queue.lock.table}': attach changes nothing in "
            f"{queue.table_label}"
        )
    ]
    reflected = sa.inspect(conn).get_indexes(table.name, schema=table.schema)
    same = next(
        (found for found in reflected if found.get("name") == name or backend.index_serves(conn, table, found, index)),
        None,
    )
    if same is not None:
        notes.append(f"index {same['name']} already lets a claim read the waiting rows in queue order")
        return AttachPlan(queue=queue.name, table=table, add_columns=[], indexes=[], notes=notes)
    notes.append(
        "suggested, not applied: the index below lets a claim read the first waiting rows in queue "
        "order instead of every waiting row (the larger the table, the more it saves); the table's "
        "owner may create it"
    )
    return AttachPlan(queue=queue.name, table=table, add_columns=[], indexes=[], notes=notes, suggested=[index])


def _conditions(
    queue: model.QueueConfig, binder: binding.Binder, conditions: tuple[model.Condition, ...]
) -> list[tuple[model.Condition, sa.Column[Any], Any]]:
    result = []
    for cond in conditions:
        if cond.dynamic:  # compared with the time or the claimer: each claim tests it, no index can hold it
            continue
        column = binder.column(cond.column, cond.key.split(f"queues.{queue.name}.", 1)[-1])
        if cond.op in ("in", "not_in"):
            value: Any = tuple(values.coerce(column, v) for v in cond.value)
        elif cond.op == "null":
            value = cond.value
        else:
            value = values.coerce(column, cond.value)
        result.append((cond, column, value))
    return result


def _indexes(
    queue: model.QueueConfig, table: sa.Table, binder: binding.Binder, backend: backends.Backend, notes: list[str]
) -> list[sa.Index]:
    key = binder.column(queue.key, "key")
    user = binder.column(queue.lock.user, "lock.user")
    expiry = binder.column(queue.lock.expires or queue.lock.time, "lock.time")
    order = [
        binder.column(t.column, "order").desc() if t.descending else binder.column(t.column, "order")
        for t in queue.order
    ]
    filt = _conditions(queue, binder, queue.scope + queue.todo)
    # The supervisor's "oldest waiting item" is min(created) over the waiting rows: with the
    # `created` column in the claim index (as an order column, or else at its end) the index
    # alone answers it, as it answers the count of waiting rows.
    created = [binder.column(queue.created, "created")] if queue.created else []
    where_kw = backend.partial_index_keyword
    if where_kw:
        # Free rows only: a claimed row leaves this index at once, so claims never step over a
        # growing run of dead entries of locked rows at its head.
        free = sa.and_(*(filters.clause(col, cond, value) for cond, col, value in filt), user.is_(None))
        return [
            sa.Index(_index_name(queue.name, "claim"), *_once(*order, key, *created), **_where(where_kw, free)),
            # Locked rows only: expired locks by expiry (the claim serves them first, `sweep`
            # clears them); "my locks", the per-user limit, the lock board and the supervisor's
            # counts of locks read all locked rows, which are few. One index, as every claim pays
            # for each index.
            sa.Index(_index_name(table.name, "lock"), expiry, user, **_where(where_kw, user.is_not(None))),
        ]
    # No partial indexes (MySQL/MariaDB): lead with the equality filters and the lock user
    # (`IS NULL` is an equality to InnoDB), then the order, so that one index range is already
    # in queue order. A filter that is not an equality cannot be served in order; the claim then
    # reads a small window of candidates without locking first (mapping.BoundQueue.index_ordered).
    # An IN list counts as an equality: the claim runs one query per listed value.
    equal = [col for cond, col, _ in filt if _exact(cond)]
    other = [cond.key for cond in queue.scope + queue.todo if not _exact(cond)]
    if other:
        notes.append(
            "MySQL/MariaDB have no partial indexes: with " + ", ".join(other) + " not an exact "
            "value or list of values, the claim index cannot return rows in queue order, so each "
            "claim sorts the waiting rows it reads (without locking them); on a large queue prefer "
            'conditions such as status = "open" or status = ["new", "open"]'
        )
    return [
        sa.Index(_index_name(queue.name, "claim"), *_once(*equal, user, *order, key, *created)),
        # Without a partial index the unlocked rows are in it too; leading with the user keeps
        # "locked rows" (user IS NOT NULL) one short range, and a user's own locks another.
        sa.Index(_index_name(table.name, "lock"), user, expiry),
        # The claim's stale locks by expiry (free rows have none, so `expires <= now` skips them): with
        # the user leading, the claim read every live lock to find the few stale ones.
        sa.Index(_index_name(table.name, "stale"), expiry, user),
    ]


def _once(*terms: sa.ColumnElement[Any]) -> list[sa.ColumnElement[Any]]:
    """Index terms with each column once, where it first comes: the key or `created` may be an order
    column too (`order = ["ItemId"]`), a filter column an order column; the same column twice is an
    error on some databases and a wasted entry on the others."""
    seen: set[str] = set()
    result = []
    for term in terms:
        name = column_name(term)
        if name not in seen:
            seen.add(name)
            result.append(term)
    return result


def _exact(cond: model.Condition) -> bool:
    """Does the condition pick exact values of its column (so an index led by it stays in queue order)?"""
    return cond.op in ("eq", "null", "in") and not cond.dynamic and not cond.or_null


def _where(keyword: str, condition: sa.ColumnElement[bool]) -> dict[str, Any]:
    """The Index keyword argument of a partial index's condition (e.g. postgresql_where=…)."""
    return {keyword: condition}


def _alembic() -> tuple[Any, Any]:
    """Alembic's migration context and operations: imported only to add columns, since importing it
    (and every dialect's DDL module with it) costs every command that opens a queue ~0.1 s."""
    from alembic.migration import MigrationContext
    from alembic.operations import Operations

    return MigrationContext, Operations


def render(conn: sa.Connection, attach: AttachPlan) -> str:
    """The DDL text of a plan, for the database `conn` is connected to."""
    buffer = io.StringIO()
    if attach.add_columns:
        MigrationContext, Operations = _alembic()
        context = MigrationContext.configure(
            dialect_name=conn.dialect.name, opts={"as_sql": True, "output_buffer": buffer}
        )
        ops = Operations(context)
        for column in attach.add_columns:
            ops.add_column(attach.table.name, column._copy(), schema=attach.table.schema)
    for index in attach.indexes:
        buffer.write(str(CreateIndex(index).compile(dialect=conn.dialect)).strip() + ";\n\n")
    for index in attach.suggested:
        ddl = str(CreateIndex(index).compile(dialect=conn.dialect)).strip()
        buffer.write("-- suggested, not applied by --apply:\n-- " + ddl.replace("\n", "\n-- ") + ";\n\n")
    return buffer.getvalue().strip() + "\n" if buffer.getvalue().strip() else ""


def apply(conn: sa.Connection, attach: AttachPlan) -> None:
    """Run the plan's DDL on `conn` (inside the caller's transaction where the database allows)."""
    try:
        _apply(conn, attach)
    except sa.exc.DBAPIError as exc:
        if not dberrors.is_denied(exc):
            raise
        raise errors.NotPermitted(
            f"cannot add the lock columns and claim indexes to table {attach.table.fullname}: "
            f"{dberrors.first_line(exc)}; run `workbench attach {attach.queue} --apply` as the table's owner, "
            f"or give the owner the DDL that `workbench attach {attach.queue}` prints",
            user=conn.engine.url.username,
        ) from exc


def _apply(conn: sa.Connection, attach: AttachPlan) -> None:
    if attach.add_columns:
        MigrationContext, Operations = _alembic()
        ops = Operations(MigrationContext.configure(conn))
        for column in attach.add_columns:
            ops.add_column(attach.table.name, column._copy(), schema=attach.table.schema)
    for index in attach.indexes:
        index.create(conn)


def _guessable_fence(queue: model.QueueConfig, binder: binding.Binder) -> list[str]:
    """Say so when a table without a token column keeps its lock time (the fence) in whole seconds."""
    column = binder.find(queue.lock.time, "lock.time") if not queue.lock.token else None
    if column is None:
        return []
    kind = column.type
    fraction = getattr(kind, "fsp", getattr(kind, "precision", None))
    if not (hasattr(kind, "fsp") and not fraction) and fraction != 0 and type(kind).__name__ != "SMALLDATETIME":
        return []
    note = (
        f"queue {queue.name} has no token column, so its lock time is the fence, and column '{column.name}' "
        "keeps whole seconds: a lock token can be guessed from when the item was locked; give the column "
        "fractions of a second (e.g. DATETIME(6)) or configure a token column (lock.token)"
    )
    return [note]


# How far the lock times in a table may be from the chosen clock before `attach` and `queues` say so.
CLOCK_TOLERANCE = dt.timedelta(minutes=1)
_QUARTER = 15 * 60  # time zones are whole quarter-hours from UTC (and from each other)


def clock_warning(conn: sa.Connection, q: mapping.BoundQueue, trail: audit.AuditTrail | None = None) -> str | None:
    """What the lock times already in the row say about the clock another program writes: a held lock
    time ahead of the queue's lock clock (`lock.clock`) by more than a minute, or one of the newest
    held ones behind it by what a time zone's wall time is behind that clock now, give or take a
    minute. Locks the audit trail (`trail`) says workbench took are left out: workbench writes the
    queue's clock, so one of them behind it is only old. None when they agree, nothing is locked,
    or the times are absolute (a time-zone-aware column). A hint, not a proof: it ends in a question."""
    if q.shape.separate_locks or q.aware:
        return None  # workbench's own lock table, or times that carry their offset
    as_naive = sa.DateTime()
    stamps = sa.select(sa.type_coerce(q.now(), as_naive), sa.type_coerce(clock.db_now(), as_naive))
    now, utc = (_naive(value) for value in conn.execute(stamps).one())
    held = conn.execute(
        sa.select(q.key, q.user, q.time)
        .where(q.user.is_not(None), q.time.is_not(None))
        .order_by(q.time.desc())
        .limit(20)
    ).all()
    ours = trail.holders(conn, [str(k) for k, _, _ in held], q.backend.keys_per_statement) if trail and held else {}
    times = [t for key, user, value in held if ours.get(str(key)) != user and (t := _naive(value)) is not None]
    if now is None or utc is None or not times:
        return None
    tolerance = CLOCK_TOLERANCE.total_seconds()
    lags = _zone_lags(now - utc)
    how = None
    for time in times:
        off = (time - now).total_seconds()
        if off > tolerance:
            how, shown = f"{_span(off)} ahead of", time
            break
        if any(abs(-off - lag) <= tolerance for lag in lags):
            how, shown = f"{_span(-off)} behind", time
            break
    if how is None:
        return None
    return (
        f"queue {q.name}: a lock time in {q.table.name}.{q.time.name} ({shown:%Y-%m-%d %H:%M:%S}) is "
        f"{how} the queue's lock clock ({q.lock_clock}, now {now:%Y-%m-%d %H:%M:%S}): another program writes "
        "local time? Every program on the lock columns must write the same clock and keep the same "
        "maximum age: set lock.clock to `utc`, `local` or the zone it writes (e.g. `Europe/Berlin`)"
    )


def _zone_lags(clock_ahead: dt.timedelta) -> set[int]:
    """How many seconds some time zone's wall time is behind the lock clock now (which is
    `clock_ahead` ahead of UTC): only those, not every quarter-hour, since an old lock is a whole
    number of quarter-hours old one time in about seven and no zone is 30 minutes behind UTC.
    Without time zone data (Windows without the tzdata package): every quarter-hour up to 14 hours."""
    own = round(clock_ahead.total_seconds() / _QUARTER) * _QUARTER
    offsets = _zone_offsets(dt.datetime.now(dt.UTC).replace(minute=0, second=0, microsecond=0))
    lags = {own - offset for offset in offsets} if offsets else {n * _QUARTER for n in range(1, 57)}
    return {lag for lag in lags if lag > 0}


@functools.lru_cache(maxsize=4)
def _zone_offsets(hour: dt.datetime) -> frozenset[int]:
    """The UTC offsets (seconds) the time zones have in `hour`; worked out once an hour."""
    found = set()
    for name in zoneinfo.available_timezones():
        offset = hour.astimezone(zoneinfo.ZoneInfo(name)).utcoffset()
        if offset is not None:
            found.add(int(offset.total_seconds()))
    return frozenset(found)


def _naive(value: Any) -> dt.datetime | None:
    if isinstance(value, str):
        try:
            value = dt.datetime.fromisoformat(value)
        except ValueError:
            return None
    if not isinstance(value, dt.datetime):
        return None
    return value.astimezone(dt.UTC).replace(tzinfo=None) if value.tzinfo is not None else value


def _span(seconds: float) -> str:
    minutes = round(seconds / 60)
    return f"{minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f"{minutes} min"
