"""The lock board: every lock of a queue with its item's list columns, last activity and extensions."""

from __future__ import annotations

import contextlib
import datetime as dt
import gc
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.sql import util as sql_util

from workbench.core import models
from workbench.db import audit as audit_mod
from workbench.db import mapping
from workbench.db.figures import common


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
    reading = common.read_clock(conn, q)  # one reading for the whole board
    held = [*q.scope_clause(), q.held_here(), q.user.is_not(None), q.time.is_not(None)]
    if keys is not None:
        held.append(q.key.in_([q.coerce_key(key) for key in keys]))
    # How each lock meets its audit aggregates is the backend's choice (Backend.board_activity):
    # LATERAL on PostgreSQL (_activity_of_each_lock), a packed scalar subquery on MySQL/MariaDB
    # (_packed_activity), a derived table on SQLite (_activity_per_lock), a second statement elsewhere.
    joining = q.backend.board_activity
    merged = q.shape.stable_token and joining != "keys"
    packed = merged and joining == "packed"
    stmt = _board_statement(conn, q, trail, held, joining if merged else None)
    stmt = stmt.where(*held).order_by(q.time, q.key).limit(limit)
    activity: dict[Any, Any] = {}
    rows: Iterable[Any]
    holders: dict[str, str] | None = None
    if merged:
        rows = common.streamed(conn, stmt)
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
    if packed:
        how = "packed"
    elif merged:
        how = "merged"
    else:
        how = "legacy" if not q.shape.stable_token else "token"
    return _made_rows(q, reading, rows, how, activity, holders)


def _board_statement(
    conn: sa.Connection,
    q: mapping.BoundQueue,
    trail: audit_mod.AuditTrail,
    held: list[sa.ColumnElement[bool]],
    joining: str | None,
) -> sa.Select[Any]:
    """The locked rows' key, holder, times, due time and list columns, then (`joining`: how the backend
    meets each lock's audit aggregates) the lock's activity, or (None: read in a second statement) its token."""
    when = q.read_type()
    time, expiry = q.readable_times()
    due = q.due if q.due is not None else sa.null()  # the supervisor sees which held items are overdue
    columns = [
        q.key,
        q.user,
        common.fast_time(conn, sa.type_coerce(time, when)),
        common.fast_time(conn, sa.type_coerce(expiry, when)),
        due,
        *q.list_columns,
    ]
    if joining == "packed":  # after the list columns: the lock's extensions and last activity, as one text
        return sa.select(*columns, _packed_activity(conn, q, trail)).select_from(q.locked_source)
    if joining is not None:  # after the list columns: the lock's last activity and extensions
        if joining == "lateral":
            per_lock = _activity_of_each_lock(conn, q, trail)
            joined = q.locked_source.join(per_lock, sa.true())
        else:
            per_lock = _activity_per_lock(conn, q, trail, held)
            joined = q.locked_source.join(per_lock, per_lock.c.wb_key == q.key)
        last = common.fast_time(conn, per_lock.c.wb_last)
        return sa.select(*columns, last, per_lock.c.wb_extensions).select_from(joined)
    # after the list columns: the token
    return sa.select(*columns, q.shape.token_column()).select_from(q.locked_source)


def _made_rows(
    q: mapping.BoundQueue,
    reading: common.Clock,
    rows: Iterable[Any],
    how: str,
    activity: dict[Any, Any],
    holders: dict[str, str] | None,
) -> list[models.BoardRow]:
    """The board's rows from the statement's: `how` its activity comes ("packed" or "merged" in the row,
    "legacy" or "token": from `activity`); `holders`: whose locks the trail says workbench took."""
    names = [c.name for c in q.list_columns]
    width = len(names)
    aware = q.time_reader()
    from_utc = reading.converter()
    db_now = reading.now
    name = q.name
    make = models.BoardRow.maker()
    result = []
    for key, owner, locked, expires, due_at, *rest in rows:
        locked_at = aware(locked)
        if how == "packed":
            last, extensions = _unpacked_activity(rest[width])
        elif how == "merged":
            last, extensions = rest[width], rest[width + 1]
        elif how == "legacy":
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
        sa.func.count(sa.case((a.c.event == common.EXTEND, 1))).label("wb_extensions"),
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
            a.c.event.in_(common.ACTIVITY),
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
        sa.select(sa.func.concat(sa.func.count(sa.case((a.c.event == common.EXTEND, 1))), " ", latest))
        .where(
            a.c.queue == q.name,
            a.c.item_key == trail.key_text(conn, q.key),
            a.c.token == q.backend.token_digest(q.shape.token_column()),
            a.c.event.in_(common.ACTIVITY),
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
        a.c.event.in_(common.ACTIVITY),
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
        sa.func.sum(sa.case((a.c.event == common.EXTEND, 1), else_=0)).label("extensions"),
    ]
    if legacy:
        columns += [
            sa.func.min(a.c.id).label("first_id"),
            sa.func.sum(sa.case((a.c.event == common.CLAIM, 1), else_=0)).label("claims"),
        ]
    where = [a.c.queue == q.name, a.c.event.in_(common.ACTIVITY)]
    columns[2] = common.fast_time(conn, columns[2])  # type: ignore[call-overload]
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
    return max(common.as_datetime(g[1]) for g in chain), sum(g[2] for g in chain)
