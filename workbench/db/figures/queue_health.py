"""A queue's health: waiting, locked and expired now, the oldest waiting item, and today's events."""

from __future__ import annotations

import collections
import datetime as dt
from typing import Any

import sqlalchemy as sa

from workbench.core import models
from workbench.db import audit as audit_mod
from workbench.db import claims, mapping
from workbench.db.figures import common

_ENDED = (common.COMPLETE, common.RELEASE, common.EXPIRE, common.FORCE)  # today's events: how locks ended


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
        *common.clock_columns(q),
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
    reading = common.clock_from_row(q, row)
    oldest = None
    if q.created is not None:
        arrived = [common.as_datetime(v) for v in (row["wb_oldest_free"], row["wb_oldest_retake"]) if v is not None]
        if arrived:
            oldest = _age_seconds(reading, min(arrived))
    a = trail.table
    since = reading.to_utc(reading.today_start)
    today = (
        sa.select(a.c.event, a.c.reason, sa.func.count().label("n"))
        .where(
            a.c.queue == q.name,
            a.c.at >= since,
            a.c.event.in_((common.COMPLETE, common.RELEASE, common.EXPIRE, common.FORCE)),
        )
        .group_by(a.c.event, a.c.reason)
    )
    totals: collections.Counter[str] = collections.Counter()
    reasons: collections.Counter[str] = collections.Counter()
    for event, reason, n in conn.execute(today):
        totals[event] += n
        if event == common.RELEASE:
            reasons[reason if reason else common.NO_REASON] += n
    return models.QueueHealth(
        queue=q.name,
        waiting=int(row["wb_free"]) + int(row["wb_retake"]),
        locked=int(row["wb_locked"]),
        expired_locks=int(row["wb_expired"]),
        completed_today=totals[common.COMPLETE],
        oldest_waiting_age_seconds=oldest,
        releases_today=totals[common.RELEASE],
        expiries_today=totals[common.EXPIRE],
        force_releases_today=totals[common.FORCE],
        release_reasons_today=sorted(reasons.items(), key=lambda item: (-item[1], item[0])),
        db_now=reading.now,
        overdue=int(row["wb_overdue"]) if q.due is not None else None,
    )


def _age_seconds(reading: common.Clock, arrived: dt.datetime) -> float:
    """Seconds from `arrived` (a value of the `created` column, on the queue's clock) to now."""
    return (reading.utc - reading.to_utc(arrived)).total_seconds()
