"""Operator statistics and handle times: the completions of a period, each with the start of its lock."""

from __future__ import annotations

import collections
import dataclasses
import datetime as dt
import math
from collections.abc import Iterable, Sequence
from typing import Any

import sqlalchemy as sa

from workbench.core import models
from workbench.db import audit as audit_mod
from workbench.db import mapping
from workbench.db.figures import common


@dataclasses.dataclass(frozen=True)
class Completed:
    """One completion in a period and how long its lock was held (None when the claim is not in the trail)."""

    owner: str
    seconds: float | None


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
            *before, s.c.token == a.c.token, s.c.event.in_((common.CLAIM, common.REASSIGN))
        )
    else:
        start = sa.select(s.c.at).where(*before, s.c.event == common.CLAIM).order_by(s.c.id.desc()).limit(1)
    started: sa.ColumnElement[Any] = sa.type_coerce(start.scalar_subquery(), a.c.at.type)
    if lost:  # the start only of completions; the owner of a lost lock, the actor of a completion without one
        events: tuple[str, ...] = (common.COMPLETE, common.RELEASE, common.EXPIRE, common.FORCE)
        done = a.c.event == common.COMPLETE
        owner: sa.ColumnElement[Any] = sa.case((done, sa.func.coalesce(a.c.owner, a.c.actor)), else_=a.c.owner)
        started = sa.case((done, started))
    else:
        events = (common.COMPLETE,)
        owner = sa.func.coalesce(a.c.owner, a.c.actor)
    # MySQL/MariaDB subtract the times: one integer a row instead of two date-times, which PyMySQL
    # decodes slowly (with both as text and fromisoformat, 17,000 completions cost some 40 ms more).
    in_sql = q.backend.durations_in_sql
    micro = sa.func.timestampdiff(sa.literal_column("MICROSECOND"), started, a.c.at, type_=sa.BigInteger())
    times = [micro] if in_sql else [a.c.at, started]
    stmt = (
        sa.select(a.c.event, owner, *times)
        .where(a.c.queue == q.name, a.c.event.in_(events), *common.in_period(a, since, until))
        .order_by(a.c.at)
    )
    result = []
    others = []
    for event, who, *held in common.streamed(conn, stmt):
        if event != common.COMPLETE:
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
    _, start, end = common.period(conn, q, since, until)
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
                releases=lost[operator][common.RELEASE],
                expiries=lost[operator][common.EXPIRE],
                force_released=lost[operator][common.FORCE],
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
    _, start, end = common.period(conn, q, since, until)
    return [c.seconds for c in completions(conn, q, trail, start, end) if c.seconds is not None]


def _median(times: Sequence[float]) -> float | None:
    import statistics  # here: statistics (and fractions) are no part of a claim, which imports this module

    return statistics.median(times) if times else None
