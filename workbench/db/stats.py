"""The supervisor console's figures: the lock board, queue health, operator statistics and throughput.

Everything here only reads, in one short transaction per call (`Database.read`), with a fixed
number of statements whatever the number of rows (never one per row):

- the **board**: the clock; the locked rows with their list columns (through the lock index),
  each with the aggregates of its audit rows under its token (through the audit index
  `(queue, item_key, id)`: LATERAL on PostgreSQL, a scalar subquery on MySQL/MariaDB, a derived
  table on SQLite, see `board`; `_activity` on SQL Server and for tables without a token column);
- **health**: one statement of counts on the table (each through the claim or the lock index,
  with the rows a claim could take defined as the claim defines them) and one on today's audit
  rows (through the audit time index);
- **operator statistics** and **handle times**: the completions of the period with the start of
  each one's lock (see `completions`), and for the statistics, in the same reading of the
  period's audit rows, its releases, expiries and force releases;
- **throughput**: counted per hour by the database.

Audit times are UTC; results are given on the queue's clock like every other time workbench
hands out (aware UTC, or naive server-local time with `database.clock = "local"`), and naive
times passed in are read on that clock too.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import datetime as dt
import gc
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql import util as sql_util
from sqlalchemy.sql.expression import FunctionElement

from workbench.core import clocks, models
from workbench.db import audit as audit_mod
from workbench.db import claims, clock, mapping

_UTC = dt.UTC
_CLAIM, _SAVE, _EXTEND, _REASSIGN = (
    models.EventKind.CLAIM.value,
    models.EventKind.SAVE.value,
    models.EventKind.EXTEND.value,
    models.EventKind.REASSIGN.value,
)
_COMPLETE, _RELEASE, _EXPIRE, _FORCE = (
    models.EventKind.COMPLETE.value,
    models.EventKind.RELEASE.value,
    models.EventKind.EXPIRE.value,
    models.EventKind.FORCE_RELEASE.value,
)
# Events that show someone working under a lock (the board's "last activity").
_ACTIVITY = (_CLAIM, _SAVE, _EXTEND, _REASSIGN)
NO_REASON = "(no reason)"


# -- the database clock ---------------------------------------------------------------------------


Clock = clocks.Clock  # a reading of the database clock, read here (read_clock), handed out as core's
_datetime, _in_zone = clocks.as_datetime, clocks.in_zone


def clock_columns(q: mapping.BoundQueue) -> list[sa.ColumnElement[Any]]:
    """The two columns a statement selects so that `clock_from_row` can read the clock from it."""
    return [
        sa.type_coerce(q.now(), sa.DateTime(timezone=q.aware)).label("wb_now"),
        sa.type_coerce(clock.db_now(), sa.DateTime()).label("wb_utc"),
    ]


def clock_from_row(q: mapping.BoundQueue, row: Mapping[Any, Any]) -> Clock:
    """The reading of the database clock `clock_columns` selected, on the queue's clock."""
    raw, utc = _datetime(row["wb_now"]), _datetime(row["wb_utc"])
    if raw.tzinfo is not None:
        return Clock(
            now=raw,
            utc=raw.astimezone(_UTC).replace(tzinfo=None),
            offset=raw.utcoffset() or dt.timedelta(0),
            local=False,
        )
    if not q.local_clock:
        return Clock(now=raw.replace(tzinfo=_UTC), utc=raw, offset=dt.timedelta(0), local=False)
    minutes = round((raw - utc).total_seconds() / 60)
    return Clock(now=raw, utc=utc, offset=dt.timedelta(minutes=minutes), local=True)


def read_clock(conn: sa.Connection, q: mapping.BoundQueue) -> Clock:
    return clock_from_row(q, conn.execute(sa.select(*clock_columns(q))).mappings().one())


# -- the lock board -------------------------------------------------------------------------------


def board(
    conn: sa.Connection,
    q: mapping.BoundQueue,
    trail: audit_mod.AuditTrail,
    limit: int = 20000,
    keys: list[Any] | None = None,
) -> list[models.BoardRow]:
    """Every lock of the queue (live, or expired and not yet taken over), oldest first, with the
    list columns of its item, when it was last worked on and how often it was extended.

    Two statements: the clock; the locked rows with their list columns (through the lock index),
    each with the aggregates of its audit rows (`_activity_of_each_lock` on PostgreSQL,
    `_packed_activity` on MySQL/MariaDB, `_activity_per_lock` on SQLite). On SQL Server and
    for a table without a token column, three: the clock; the locked rows; the audit aggregates of
    exactly those items (see `_activity`); for a table without a token column a fourth, whose lock
    the trail says workbench took (AuditTrail.holders). A lock workbench did not take is marked as
    another program's (BoardRow.foreign).

    With `keys`, the locks of those items only (the console's update after the change feed named them).
    """
    with _collector_paused():
        return _board_rows(conn, q, trail, limit, keys)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while thousands of rows are built.

    Each row is a few new container objects (the row, its dict, its summary), none in a cycle;
    10,000 of them set off some 40 collections, each walking the rows built so far: 25-45 ms
    of a 10,000-lock board on every backend. The switch is the process's, so another thread
    building objects meanwhile is not collected either, for these few hundred ms; it is turned
    back on only if it was on (a caller that turned it off keeps it off).
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _board_rows(
    conn: sa.Connection, q: mapping.BoundQueue, trail: audit_mod.AuditTrail, limit: int, keys: list[Any] | None
) -> list[models.BoardRow]:
    reading = read_clock(conn, q)  # one reading for the whole board
    when = q.read_type()
    held = [*q.scope_clause(), q.held_here(), q.user.is_not(None), q.time.is_not(None)]
    if keys is not None:
        held.append(q.key.in_([q.coerce_key(key) for key in keys]))
    time, expiry = q.readable_times()
    due = q.due if q.due is not None else sa.null()  # the supervisor sees which held items are overdue
    columns = [
        q.key,
        q.user,
        _fast_time(conn, sa.type_coerce(time, when)),
        _fast_time(conn, sa.type_coerce(expiry, when)),
        due,
        *q.list_columns,
    ]
    # How each lock meets its audit aggregates is the backend's choice (Backend.board_activity):
    # LATERAL on PostgreSQL (_activity_of_each_lock), a packed scalar subquery on MySQL/MariaDB
    # (_packed_activity), a derived table on SQLite (_activity_per_lock), a second statement elsewhere.
    joining = q.backend.board_activity
    merged = q.shape.stable_token and joining != "keys"
    packed = merged and joining == "packed"
    if packed:  # after the list columns: the lock's extensions and last activity, as one text
        stmt = sa.select(*columns, _packed_activity(conn, q, trail)).select_from(q.locked_source)
    elif merged:  # after the list columns: the lock's last activity and extensions
        if joining == "lateral":
            per_lock = _activity_of_each_lock(conn, q, trail)
            joined = q.locked_source.join(per_lock, sa.true())
        else:
            per_lock = _activity_per_lock(conn, q, trail, held)
            joined = q.locked_source.join(per_lock, per_lock.c.wb_key == q.key)
        stmt = sa.select(*columns, _fast_time(conn, per_lock.c.wb_last), per_lock.c.wb_extensions).select_from(joined)
    else:  # after the list columns: the token
        stmt = sa.select(*columns, q.shape.token_column()).select_from(q.locked_source)
    stmt = stmt.where(*held).order_by(q.time, q.key).limit(limit)
    activity: dict[Any, Any] = {}
    rows: Iterable[Any]
    holders: dict[str, str] | None = None
    if merged:
        rows = _streamed(conn, stmt)
    else:  # the audit aggregates need every locked key first
        rows = conn.execute(stmt).all()
        if not rows:
            return []
        keys = [str(row[0]) for row in rows]
        activity = _activity(conn, q, trail, keys, every_lock=len(rows) < limit)
        if not q.shape.stable_token:
            # Without a token column a lock is workbench's when the trail's last word on the item is a
            # claim for its holder (AuditTrail.took); with one, when the trail has activity under its token.
            holders = trail.holders(conn, keys, q.backend.keys_per_statement)
    names = [c.name for c in q.list_columns]
    width = len(names)
    legacy = not q.shape.stable_token
    aware = q.time_reader()
    from_utc = reading.converter()
    db_now = reading.now
    name = q.name
    make = models.BoardRow.maker()
    result = []
    for key, owner, locked, expires, due_at, *rest in rows:
        locked_at = aware(locked)
        if packed:
            last, extensions = _unpacked_activity(rest[width])
        elif merged:
            last, extensions = rest[width], rest[width + 1]
        elif legacy:
            last, extensions = _legacy_lock_activity(activity.get(str(key), ()))
        else:
            last, extensions = activity.get((str(key), audit_mod.token_digest(rest[width])), (None, 0))
        foreign = last is None if holders is None else holders.get(str(key)) != owner
        if foreign:  # the activity of an earlier lock of workbench's on the item is not this lock's
            last, extensions = None, 0
        result.append(
            make(
                name,
                key,
                owner,
                locked_at,
                aware(expires),
                db_now,
                from_utc(last) if last is not None else locked_at,
                extensions,
                dict(zip(names, rest, strict=False)),
                due_at,
                foreign,
            )
        )
    return result


def _aggregates(a: sa.Table) -> list[sa.ColumnElement[Any]]:
    """A lock's latest activity (NULL if none) and extensions, over its audit rows."""
    return [
        sa.func.max(a.c.at).label("wb_last"),
        sa.func.count(sa.case((a.c.event == _EXTEND, 1))).label("wb_extensions"),
    ]


def _activity_of_each_lock(conn: sa.Connection, q: mapping.BoundQueue, trail: audit_mod.AuditTrail) -> Any:
    """`_activity_per_lock` as a LATERAL subquery (PostgreSQL): the aggregates of one locked row's
    audit rows under its token, evaluated for each row the board reads (always one row: an
    aggregate without GROUP BY).

    Each lock is one probe of the audit index (queue, item_key, id) and nothing else: the derived
    table read the locked rows twice (once for the probes, once for the list columns, joined
    by key), sorted its probes' rows to group them, and cost some 20-30 ms more of the server's
    time for 10,000 locks on a 1,000,000-row table.
    """
    a = trail.table
    return (
        sa.select(*_aggregates(a))
        .where(
            a.c.queue == q.name,
            a.c.item_key == trail.key_text(conn, q.key),
            a.c.token == q.backend.token_digest(q.shape.token_column()),
            a.c.event.in_(_ACTIVITY),
        )
        .lateral("wb_activity")
    )


def _packed_activity(conn: sa.Connection, q: mapping.BoundQueue, trail: audit_mod.AuditTrail) -> Any:
    """A lock's extensions and latest activity as one text, "3 2026-11-23 21:19:33.863040" ("0 " if
    none), from a scalar subquery on its audit rows under its token (MySQL/MariaDB).

    One probe of the audit index per lock, like the derived table that MariaDB evaluated per
    locked row ("lateral derived"), without filling a temporary table for each; and one value per
    row for PyMySQL, which decodes rows in Python. In the same runs on 1,000,000 rows with 10,000
    locks (a loaded machine) the board's statement took about a third less (see board_bench).
    """
    a = trail.table
    latest = sa.func.coalesce(sa.cast(sa.func.max(a.c.at), sa.String()), "")
    return (
        sa.select(sa.func.concat(sa.func.count(sa.case((a.c.event == _EXTEND, 1))), " ", latest))
        .where(
            a.c.queue == q.name,
            a.c.item_key == trail.key_text(conn, q.key),
            a.c.token == q.backend.token_digest(q.shape.token_column()),
            a.c.event.in_(_ACTIVITY),
        )
        .scalar_subquery()
        .label("wb_activity")
    )


def _unpacked_activity(value: str) -> tuple[dt.datetime | None, int]:
    """(latest activity or None, extensions) from `_packed_activity`'s text."""
    count, _, latest = value.partition(" ")
    return (dt.datetime.fromisoformat(latest) if latest else None), int(count)


def _activity_per_lock(
    conn: sa.Connection, q: mapping.BoundQueue, trail: audit_mod.AuditTrail, held: list[sa.ColumnElement[bool]]
) -> sa.Subquery:
    """Each lock's latest activity (claim, save, extend or reassign under its token, NULL if none)
    and extensions: a derived table with one row per lock (`wb_key`, `wb_last`, `wb_extensions`)
    that the board joins to the locked rows by key.

    The locked rows (through the lock index) are outer-joined to their audit rows with one probe
    of the audit index (queue, item_key, id) per lock (a nested loop; the key cast as
    `AuditTrail.key_text` says) and grouped by the key; the board uses it on SQLite (PostgreSQL
    and MySQL/MariaDB have a quicker form, see `board`). The client reads one row per lock and
    sends no list of keys: the lock rows and the aggregates as two result sets cost PyMySQL,
    which decodes rows in Python, about 50 ms more for 10,000 locks.
    """
    a = trail.table
    own = q.table.alias("wb_held")
    adapt = sql_util.ClauseAdapter(own).traverse
    key, token = adapt(q.key), adapt(q.shape.token_column())
    on = [
        a.c.queue == q.name,
        a.c.item_key == trail.key_text(conn, key),
        a.c.token == q.backend.token_digest(token),
        a.c.event.in_(_ACTIVITY),
    ]
    return (
        sa.select(key.label("wb_key"), *_aggregates(a))
        .select_from(q.shape.locked_source(own, key).outerjoin(a, sa.and_(*on)))
        .where(*(adapt(clause) for clause in held))
        .group_by(key)
        .subquery("wb_activity")
    )


def _activity(
    conn: sa.Connection, q: mapping.BoundQueue, trail: audit_mod.AuditTrail, keys: list[str], *, every_lock: bool
) -> dict[Any, Any]:
    """The claim, save, extend and reassign events of the locked items, aggregated per item and token.

    With a token column: {(item_key, token digest): (latest time, extensions)}. Without one (shape 2):
    {item_key: [(first id, latest time, extensions, claims), …] oldest first}.

    The board uses it for tables without a token column, and on SQL Server (tables with one
    get `_activity_per_lock` elsewhere). On PostgreSQL, SQLite and MySQL/MariaDB the audit trail
    is joined to the locked rows, which the planner runs as one probe of the audit index (queue,
    item_key, id) per lock (a nested loop; a hash join only wins over a trail smaller than that),
    with the key cast as `AuditTrail.key_text` says (on MySQL/MariaDB, to item_key's character
    set and collation; any other cast rules the index out or fails). SQL Server may convert the
    column instead of the key; there, and when the board was cut by its limit, the keys go in as
    an IN list, `_KEYS_PER_STATEMENT` at a time. `keys` are the locked items' keys; `every_lock`
    says that they are all the queue's locks (the board was not cut by its limit), which the
    join needs.
    """
    a = trail.table
    legacy = not q.shape.stable_token
    columns = [
        a.c.item_key,
        a.c.token,
        sa.func.max(a.c.at).label("last_at"),
        sa.func.sum(sa.case((a.c.event == _EXTEND, 1), else_=0)).label("extensions"),
    ]
    if legacy:
        columns += [
            sa.func.min(a.c.id).label("first_id"),
            sa.func.sum(sa.case((a.c.event == _CLAIM, 1), else_=0)).label("claims"),
        ]
    where = [a.c.queue == q.name, a.c.event.in_(_ACTIVITY)]
    columns[2] = _fast_time(conn, columns[2])  # type: ignore[call-overload]
    statements: list[tuple[sa.Select[Any], dict[str, Any]]] = []
    if q.backend.board_activity != "keys" and every_lock:
        on = [a.c.item_key == trail.key_text(conn, q.key)]
        if not legacy:
            on.append(a.c.token == q.backend.token_digest(q.shape.token_column()))
        stmt = (
            sa.select(*columns)
            .select_from(q.locked_source.join(a, sa.and_(*on)))
            .where(*where, *q.scope_clause(), q.held_here(), q.user.is_not(None), q.time.is_not(None))
        )
        statements.append((stmt, {}))
    else:
        stmt = sa.select(*columns).where(*where, a.c.item_key.in_(sa.bindparam("wb_keys", expanding=True)))
        size = q.backend.keys_per_statement
        unique = sorted(set(keys))
        statements += [(stmt, {"wb_keys": unique[i : i + size]}) for i in range(0, len(unique), size)]
    found: dict[Any, Any] = {}
    for stmt, params in statements:
        stmt = stmt.group_by(a.c.item_key, a.c.token)
        if legacy:
            for item, _, last, extensions, first_id, claims_ in conn.execute(stmt, params):
                found.setdefault(item, []).append((first_id, last, int(extensions or 0), int(claims_ or 0)))
        else:
            for item, token, last, extensions in conn.execute(stmt, params):
                found[(item, token)] = (last, int(extensions or 0))
    if legacy:
        for groups in found.values():
            groups.sort(key=lambda g: g[0])
    return found


def _legacy_lock_activity(groups: Sequence[tuple[int, Any, int, int]]) -> tuple[Any, int]:
    """(latest activity, extensions) of the current lock of a table without a token column.

    Such a lock gets a new token at every extension (the lock time moves), so its events are those
    from the item's latest claim on, under however many tokens.
    """
    start = max((i for i, g in enumerate(groups) if g[3]), default=None)
    if start is None:
        return None, 0
    chain = groups[start:]
    return max(_datetime(g[1]) for g in chain), sum(g[2] for g in chain)


class _IsoDateTime(sa.types.TypeDecorator[dt.datetime]):
    """A date-time selected as text and parsed with datetime.fromisoformat."""

    impl = sa.String
    cache_ok = True

    def process_result_value(self, value: Any, dialect: Any) -> Any:  # a datetime, or unreadable text
        try:
            return None if value is None else dt.datetime.fromisoformat(value)
        except ValueError:  # e.g. a zero date another program wrote: listed as unreadable (mapping._aware)
            return str(value)


def _streamed(conn: sa.Connection, stmt: sa.Select[Any]) -> Iterable[Any]:
    """The rows of `stmt`, for a loop that reads them once (thousands of rows).

    Over PyMySQL, which decodes rows in Python, they are streamed (an unbuffered cursor): the
    client decodes and handles each row while the server works on the next ones, on the other
    core, instead of first reading every row and only then handling them; and each raw row is
    freed at once rather than kept to the end, so fewer objects reach the garbage collector's
    older generations. The board of 10,000 locks took 104 instead of 159 ms that way. Other
    drivers hand the loop one buffered row at a time too (over MariaDB's ODBC driver that was
    faster than all rows in one list: 152 against 180 ms for the board).
    """
    if conn.dialect.driver == "pymysql":
        stmt = stmt.execution_options(stream_results=True)
    return conn.execute(stmt)


def _fast_time(conn: sa.Connection, column: sa.ColumnElement[Any]) -> sa.ColumnElement[Any]:
    """`column` (a date-time) for a select list that may return thousands of rows.

    PyMySQL parses DATETIME values in Python, about 30 times slower than fromisoformat; thousands of
    them cost more than the query. Over PyMySQL the value is selected as text and parsed here.
    """
    if conn.dialect.driver != "pymysql":
        return column
    return sa.type_coerce(sa.cast(column, sa.String()), _IsoDateTime())


# -- queue health ---------------------------------------------------------------------------------


def health(conn: sa.Connection, q: mapping.BoundQueue, trail: audit_mod.AuditTrail) -> models.QueueHealth:
    """The queue now (waiting, locked, expired locks, the oldest waiting item) and today's events."""
    now = q.now()
    # The rows a claim could take now, as the claim itself defines them: expired locks, then free rows.
    # (Deferred items are neither: they wait for their time, or are served through a branch of their own.)
    branches = claims.ClaimMethod.branches(q, now, claims.ClaimRequest(user="", use_cooldown=False), trail, anyone=True)
    expired_branch, free_branch = branches[0], branches[-1]
    held = [*q.scope_clause(), q.held_here(), q.user.is_not(None)]  # this queue's locks (not a neighbour's)

    def count(where: sa.ColumnElement[bool], source: sa.FromClause = q.locked_source) -> sa.ScalarSelect[Any]:
        return sa.select(sa.func.count()).select_from(source).where(where).scalar_subquery()

    columns = [
        count(free_branch, q.source).label("wb_free"),
        count(expired_branch).label("wb_retake"),
        count(sa.and_(*held, q.live(now))).label("wb_locked"),
        count(sa.and_(*held, q.stale(now))).label("wb_expired"),
        *clock_columns(q),
    ]
    if q.due is not None:
        columns.append(count(q.overdue_clause(now), q.source).label("wb_overdue"))
    if q.created is not None:
        for name, where, source in (
            ("wb_oldest_free", free_branch, q.source),
            ("wb_oldest_retake", expired_branch, q.locked_source),
        ):
            columns.append(
                sa.select(sa.func.min(q.created)).select_from(source).where(where).scalar_subquery().label(name)
            )
    row = conn.execute(sa.select(*columns)).mappings().one()
    reading = clock_from_row(q, row)
    oldest = None
    if q.created is not None:
        arrived = [_datetime(v) for v in (row["wb_oldest_free"], row["wb_oldest_retake"]) if v is not None]
        if arrived:
            oldest = _age_seconds(reading, min(arrived))
    a = trail.table
    since = reading.to_utc(reading.today_start)
    today = (
        sa.select(a.c.event, a.c.reason, sa.func.count().label("n"))
        .where(a.c.queue == q.name, a.c.at >= since, a.c.event.in_((_COMPLETE, _RELEASE, _EXPIRE, _FORCE)))
        .group_by(a.c.event, a.c.reason)
    )
    totals: collections.Counter[str] = collections.Counter()
    reasons: collections.Counter[str] = collections.Counter()
    for event, reason, n in conn.execute(today):
        totals[event] += n
        if event == _RELEASE:
            reasons[reason if reason else NO_REASON] += n
    return models.QueueHealth(
        queue=q.name,
        waiting=int(row["wb_free"]) + int(row["wb_retake"]),
        locked=int(row["wb_locked"]),
        expired_locks=int(row["wb_expired"]),
        completed_today=totals[_COMPLETE],
        oldest_waiting_age_seconds=oldest,
        releases_today=totals[_RELEASE],
        expiries_today=totals[_EXPIRE],
        force_releases_today=totals[_FORCE],
        release_reasons_today=sorted(reasons.items(), key=lambda item: (-item[1], item[0])),
        db_now=reading.now,
        overdue=int(row["wb_overdue"]) if q.due is not None else None,
    )


def _age_seconds(reading: Clock, arrived: dt.datetime) -> float:
    """Seconds from `arrived` (a value of the `created` column, on the queue's clock) to now."""
    return (reading.utc - reading.to_utc(arrived)).total_seconds()


# -- operators, handle times, throughput ----------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Completed:
    """One completion in a period and how long its lock was held (None when the claim is not in the trail)."""

    owner: str
    seconds: float | None


def period(
    conn: sa.Connection, q: mapping.BoundQueue, since: dt.datetime, until: dt.datetime | None
) -> tuple[Clock, dt.datetime, dt.datetime | None]:
    """The clock and the period as naive UTC bounds for the audit trail."""
    reading = read_clock(conn, q)
    return reading, reading.to_utc(since), reading.to_utc(until) if until is not None else None


def _in_period(a: sa.Table, since: dt.datetime, until: dt.datetime | None) -> list[sa.ColumnElement[bool]]:
    where = [a.c.at >= since]
    if until is not None:
        where.append(a.c.at < until)
    return where


def completions(
    conn: sa.Connection,
    q: mapping.BoundQueue,
    trail: audit_mod.AuditTrail,
    since: dt.datetime,
    until: dt.datetime | None,
) -> list[Completed]:
    """Every completion in [since, until) (naive UTC) with its handle time, in completion order; one statement.

    Handle time = the completion's time minus the start of the lock it completed: the earliest
    claim (or reassignment) event under the same token. A reassignment writes a claim event for
    the new holder's token, so a reassigned lock counts from the reassignment. Tables without a
    token column get a new token at every extension; there the lock starts at the item's latest
    claim before the completion (a completion is accepted only under the live lock, so no other
    claim of the item can come in between).

    The completions of the period come through the audit time index; each one's start through
    the audit index (queue, item_key, id), which holds the item's few rows next to each other.
    """
    return _period_events(conn, q, trail, since, until, lost=False)[0]


def _period_events(
    conn: sa.Connection,
    q: mapping.BoundQueue,
    trail: audit_mod.AuditTrail,
    since: dt.datetime,
    until: dt.datetime | None,
    *,
    lost: bool,
) -> tuple[list[Completed], list[tuple[str, str]]]:
    """`completions`, and with `lost` the (owner, event) of every release, expiry and force release
    of a lock in the period, from the same one reading of the period's audit rows."""
    a = trail.table
    s = a.alias("wb_start")
    before = [s.c.queue == q.name, s.c.item_key == a.c.item_key, s.c.id < a.c.id]
    if q.shape.stable_token:
        start = sa.select(sa.func.min(s.c.at)).where(
            *before, s.c.token == a.c.token, s.c.event.in_((_CLAIM, _REASSIGN))
        )
    else:
        start = sa.select(s.c.at).where(*before, s.c.event == _CLAIM).order_by(s.c.id.desc()).limit(1)
    started: sa.ColumnElement[Any] = sa.type_coerce(start.scalar_subquery(), a.c.at.type)
    if lost:  # the start only of completions; the owner of a lost lock, the actor of a completion without one
        events: tuple[str, ...] = (_COMPLETE, _RELEASE, _EXPIRE, _FORCE)
        done = a.c.event == _COMPLETE
        owner: sa.ColumnElement[Any] = sa.case((done, sa.func.coalesce(a.c.owner, a.c.actor)), else_=a.c.owner)
        started = sa.case((done, started))
    else:
        events = (_COMPLETE,)
        owner = sa.func.coalesce(a.c.owner, a.c.actor)
    # MySQL/MariaDB subtract the times: one integer a row instead of two date-times, which PyMySQL
    # decodes slowly (with both as text and fromisoformat, 17,000 completions cost some 40 ms more).
    in_sql = q.backend.durations_in_sql
    micro = sa.func.timestampdiff(sa.literal_column("MICROSECOND"), started, a.c.at, type_=sa.BigInteger())
    times = [micro] if in_sql else [a.c.at, started]
    stmt = (
        sa.select(a.c.event, owner, *times)
        .where(a.c.queue == q.name, a.c.event.in_(events), *_in_period(a, since, until))
        .order_by(a.c.at)
    )
    result = []
    others = []
    for event, who, *held in _streamed(conn, stmt):
        if event != _COMPLETE:
            if who is not None:
                others.append((who, event))
            continue
        if in_sql:
            seconds = held[0] / 1_000_000 if held[0] is not None else None
        else:
            at, began = held
            seconds = (at - began).total_seconds() if began is not None else None
        result.append(Completed(owner=who, seconds=seconds))
    return result, others


def operator_stats(
    conn: sa.Connection,
    q: mapping.BoundQueue,
    trail: audit_mod.AuditTrail,
    since: dt.datetime,
    until: dt.datetime | None = None,
) -> list[models.OperatorStats]:
    """Per operator in [since, until): completions with median and 90th-percentile handle time, and
    the releases, expiries and force releases of their locks; most completions first.

    The median is the usual one (the mean of the two middle values for an even count); the 90th
    percentile is by nearest rank (the smallest value with at least 90 % of the values at or below it).
    Two statements: the clock, and the period's completions (see `completions`) together with its
    releases, expiries and force releases, in one reading of the period's audit rows.
    """
    _, start, end = period(conn, q, since, until)
    handled: dict[str, list[float]] = collections.defaultdict(list)
    completed: collections.Counter[str] = collections.Counter()
    done, others = _period_events(conn, q, trail, start, end, lost=True)
    for c in done:
        completed[c.owner] += 1
        if c.seconds is not None:
            handled[c.owner].append(c.seconds)
    lost: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for owner, event in others:
        lost[owner][event] += 1
    # Four eyes: how the work reviewed in the period fared, by the operator who did it.
    reviewed = {v.doer: v for v in trail.to_review.verdicts(conn, start, end)} if trail.to_review else None
    result = []
    for operator in set(completed) | set(lost) | set(reviewed or ()):
        times = handled.get(operator, [])
        verdicts = reviewed.get(operator) if reviewed is not None else None
        result.append(
            models.OperatorStats(
                operator=operator,
                completed=completed[operator],
                median_handle_seconds=_median(times),
                p90_handle_seconds=nearest_rank(times, 90),
                releases=lost[operator][_RELEASE],
                expiries=lost[operator][_EXPIRE],
                force_released=lost[operator][_FORCE],
                accepted=None if reviewed is None else verdicts.accepted if verdicts else 0,
                sent_back=None if reviewed is None else verdicts.sent_back if verdicts else 0,
            )
        )
    result.sort(key=lambda s: (-s.completed, s.operator))
    return result


def nearest_rank(values: Iterable[float], pct: float) -> float | None:
    """The nearest-rank percentile: the smallest value with at least `pct` % of the values at or below it."""
    ordered = sorted(values)
    if not ordered:
        return None
    return ordered[max(1, math.ceil(pct / 100 * len(ordered))) - 1]


def handle_times(
    conn: sa.Connection,
    q: mapping.BoundQueue,
    trail: audit_mod.AuditTrail,
    since: dt.datetime,
    until: dt.datetime | None = None,
) -> list[float]:
    """Seconds from claim to completion of every completion in [since, until), in completion order."""
    _, start, end = period(conn, q, since, until)
    return [c.seconds for c in completions(conn, q, trail, start, end) if c.seconds is not None]


class _hour_of(FunctionElement[Any]):
    """The start of the hour of a date-time (text on SQLite and MySQL/MariaDB, parsed by the caller)."""

    inherit_cache = True
    type = sa.String()


@compiles(_hour_of)
def _hour_default(element: _hour_of, compiler: Any, **kw: Any) -> str:
    raise sa.exc.CompileError("no hour truncation for this database")


@compiles(_hour_of, "postgresql")
def _hour_pg(element: _hour_of, compiler: Any, **kw: Any) -> str:
    return f"to_char(date_trunc('hour', {compiler.process(element.clauses, **kw)}), 'YYYY-MM-DD HH24:00:00')"


@compiles(_hour_of, "sqlite")
def _hour_sqlite(element: _hour_of, compiler: Any, **kw: Any) -> str:
    return f"strftime('%Y-%m-%d %H:00:00', {compiler.process(element.clauses, **kw)})"


@compiles(_hour_of, "mysql")
@compiles(_hour_of, "mariadb")
def _hour_mysql(element: _hour_of, compiler: Any, **kw: Any) -> str:
    pattern = "%Y-%m-%d %H:00:00"
    if compiler.dialect.paramstyle in ("format", "pyformat"):  # PyMySQL: a literal % is written %%
        pattern = pattern.replace("%", "%%")
    return f"DATE_FORMAT({compiler.process(element.clauses, **kw)}, '{pattern}')"


@compiles(_hour_of, "mssql")
def _hour_mssql(element: _hour_of, compiler: Any, **kw: Any) -> str:
    return f"CONVERT(VARCHAR(13), {compiler.process(element.clauses, **kw)}, 120) + ':00:00'"


def throughput(
    conn: sa.Connection,
    q: mapping.BoundQueue,
    trail: audit_mod.AuditTrail,
    since: dt.datetime,
    until: dt.datetime | None = None,
) -> list[models.HourCount]:
    """Completions and claims per hour of the queue's clock, every hour of [since, until) included.

    The database counts per hour (one range of the audit time index, a row per hour and kind
    back), so a week costs little more than a day. Hours are those of the queue's clock: the
    audit times (UTC) are shifted by the clock's offset from UTC as it is now (a change to or from
    summer time inside the period shifts the hours before it by one). Claims are the claims
    operators made; a reassignment's claim moves an existing lock and is not counted.
    """
    reading, start, end = period(conn, q, since, until)
    a = trail.table
    where = [
        a.c.queue == q.name,
        *_in_period(a, start, end),
        sa.or_(a.c.event == _COMPLETE, sa.and_(a.c.event == _CLAIM, a.c.actor == a.c.owner)),
    ]
    offset = int(reading.offset.total_seconds())
    # A constant in the statement text, not a parameter: the same expression is in GROUP BY.
    at = clock.add_seconds(a.c.at, sa.literal(offset, literal_execute=True)) if offset else a.c.at
    counts: dict[dt.datetime, list[int]] = collections.defaultdict(lambda: [0, 0])
    shift = _queue_time(reading)
    if q.backend.hours_in_sql:
        hour = _hour_of(at)
        for text, event, n in conn.execute(
            sa.select(hour, a.c.event, sa.func.count()).where(*where).group_by(hour, a.c.event)
        ):
            counts[shift(dt.datetime.fromisoformat(text))][0 if event == _COMPLETE else 1] += n
    else:  # count in Python: one row per event
        for event, when in conn.execute(sa.select(a.c.event, a.c.at).where(*where)):
            counts[_hour(reading.from_utc(when))][0 if event == _COMPLETE else 1] += 1
    first = _hour(reading.from_utc(start))
    last = _hour(reading.from_utc((end if end is not None else reading.utc) - dt.timedelta(microseconds=1)))
    last = max([last, *counts])  # an event written after the clock was read
    hours = []
    hour_start = first
    while hour_start <= last:
        done, claimed = counts.get(hour_start, (0, 0))
        hours.append(models.HourCount(hour=hour_start, completed=done, claimed=claimed))
        hour_start += dt.timedelta(hours=1)
    return hours


def _queue_time(reading: Clock) -> Callable[[dt.datetime], dt.datetime]:
    """A naive time already shifted to the queue's clock, as the queue hands times out."""
    if reading.local:
        return lambda value: value
    return _in_zone(_UTC if not reading.offset else dt.timezone(reading.offset))


def _hour(value: dt.datetime) -> dt.datetime:
    return value.replace(minute=0, second=0, microsecond=0)


def _median(times: Sequence[float]) -> float | None:
    import statistics  # here: statistics (and fractions) are no part of a claim, which imports this module

    return statistics.median(times) if times else None
