"""What every claim method shares: candidate predicates, the per-user limit, audit rows of a claim."""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

import sqlalchemy as sa

from workbench.core import errors, models
from workbench.db import audit as audit_mod
from workbench.db import clock, connect, mapping


@dataclasses.dataclass(frozen=True)
class ClaimRequest:
    user: str
    count: int = 1
    key: Any = None  # claim this item only
    use_cooldown: bool = True


@dataclasses.dataclass(frozen=True)
class Claimed:
    """A row just locked: all its columns plus the wb_* lock columns, and the lock it replaced."""

    row: Mapping[str, Any]
    prev_owner: str | None
    prev_token: str | None


class ClaimMethod:
    """Locks rows for a user: the lock is written first, the row is read after (or returned by) the write."""

    name = "abstract"

    def claim(self, db: connect.Database, q: mapping.BoundQueue, trail: audit_mod.AuditTrail,
              request: ClaimRequest) -> list[Claimed]:
        raise NotImplementedError

    # -- shared pieces --------------------------------------------------------------------

    @staticmethod
    def branches(q: mapping.BoundQueue, now: sa.ColumnElement[Any], request: ClaimRequest,
                 trail: audit_mod.AuditTrail) -> list[sa.ColumnElement[bool]]:
        """WHERE clauses of the rows that may be claimed, most urgent branch first.

        Expired locks of a status-driven queue (claim moved the row out of `todo`) form their own
        branch so that each branch can be served by its own index instead of one OR across both.
        """
        scope = q.scope_clause()
        key_part = [q.key == request.key] if request.key is not None else []
        todo = [*scope, q.todo_clause(), q.free(now), *key_part]
        if request.use_cooldown and request.key is None and q.config.release_cooldown_seconds > 0:
            todo.append(~ClaimMethod.recently_released(q, now, request.user, trail))
        result = []
        claimed = q.claimed_state_clause()
        if claimed is not None:
            result.append(sa.and_(*scope, claimed, q.user.is_not(None), q.expired(now), *key_part))
        result.append(sa.and_(*todo))
        return result

    @staticmethod
    def recently_released(q: mapping.BoundQueue, now: sa.ColumnElement[Any], user: str,
                          trail: audit_mod.AuditTrail) -> sa.ColumnElement[bool]:
        """Did `user` release this row within the cool-down? (Served by the audit (queue, actor, …) index.)"""
        a = trail.table
        since = clock.add_seconds(clock.db_now(), sa.bindparam(None, -q.config.release_cooldown_seconds,
                                                               type_=sa.Integer()))
        return sa.exists().where(
            a.c.queue == q.name, a.c.actor == user, a.c.event == models.EventKind.RELEASE.value,
            a.c.at > since, a.c.item_key == sa.cast(q.key, sa.String(200)))

    @staticmethod
    def held_count(q: mapping.BoundQueue, now: sa.ColumnElement[Any], user: str) -> sa.ScalarSelect[Any]:
        return (sa.select(sa.func.count()).select_from(q.table)
                .where(*q.scope_clause(), q.user == user, q.live(now)).scalar_subquery())

    @staticmethod
    def room(conn: sa.Connection, q: mapping.BoundQueue, request: ClaimRequest) -> int:
        """How many more locks the user may take now (raises NothingToClaim at the limit)."""
        limit = q.config.max_locks_per_user
        if not limit:
            return request.count
        held = conn.execute(sa.select(ClaimMethod.held_count(q, q.now(), request.user))).scalar() or 0
        room = min(request.count, limit - int(held))
        if room <= 0:
            raise limit_reached(q, int(held))
        return room

    @staticmethod
    def candidate_columns(q: mapping.BoundQueue) -> list[sa.ColumnElement[Any]]:
        return [q.key.label("wb_ckey"), q.user.label("wb_prev_owner"),
                (q.token if q.token is not None else sa.null()).label("wb_prev_token"),
                q.time.label("wb_prev_time")]

    @staticmethod
    def returned_columns(q: mapping.BoundQueue, now: sa.ColumnElement[Any]) -> list[sa.ColumnElement[Any]]:
        return [*q.table.c, *q.lock_select_columns(now)]

    @staticmethod
    def audit_rows(q: mapping.BoundQueue, trail: audit_mod.AuditTrail, user: str,
                   claimed: list[Claimed]) -> list[dict[str, Any]]:
        rows = []
        for c in claimed:
            key = c.row["wb_key"]
            if c.prev_owner is not None:
                rows.append(trail.row(models.EventKind.EXPIRE, key, user, owner=c.prev_owner, token=c.prev_token,
                                      detail={"noticed_by": "claim"}))
            rows.append(trail.row(models.EventKind.CLAIM, key, user, owner=user,
                                  token=q.lock_from_row(c.row).token))
        return rows

    @staticmethod
    def prev_token(q: mapping.BoundQueue, cand: Mapping[str, Any]) -> str | None:
        if cand["wb_prev_owner"] is None:
            return None
        if q.token is not None:
            return cand["wb_prev_token"]
        when = cand["wb_prev_time"]
        return q.token_of({q.time.name: when}) if when is not None else None


def sort_claimed(q: mapping.BoundQueue, claimed: list[Claimed]) -> list[Claimed]:
    """Claimed rows in queue order (UPDATE … OUTPUT/RETURNING gives no order). NULLs sort first."""
    result = sorted(claimed, key=lambda c: c.row["wb_key"])
    for column, descending in reversed(q.order):
        present = [c for c in result if c.row[column.name] is not None]
        missing = [c for c in result if c.row[column.name] is None]
        present.sort(key=lambda c: c.row[column.name], reverse=descending)
        result = missing + present if not descending else present + missing
    return result


def limit_reached(q: mapping.BoundQueue, held: int) -> errors.NothingToClaim:
    return errors.NothingToClaim(
        f"you already hold {held} item(s) in {q.name}, the most this queue allows "
        f"({q.config.max_locks_per_user}); complete or release one first", reason="limit")
