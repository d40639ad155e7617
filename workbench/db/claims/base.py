"""What every claim method shares: candidate predicates, the per-user limit, audit rows of a claim."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import sqlalchemy as sa

from workbench.core import errors, models, problems
from workbench.db import audit as audit_mod
from workbench.db import clock, connect, mapping, rowrules
from workbench.db import deferrals as deferrals_mod


@dataclasses.dataclass(frozen=True)
class ClaimRequest:
    user: str
    count: int = 1
    key: Any = None  # claim this item only
    use_cooldown: bool = True
    # Narrowed by the claimer to rows whose columns hold these values ((column, value) pairs, from
    # BoundQueue.coerce_filter): `next --where type=INVOICE`.
    where: tuple[tuple[str, Any], ...] = ()

    def filter_params(self) -> dict[str, Any]:
        """The filter's values as the parameters of a statement built with `bound_filter`."""
        return {f"wb_f{i}": value for i, (_, value) in enumerate(self.where)}

    def bound_filter(self, q: mapping.BoundQueue) -> tuple[tuple[str, Any], ...]:
        """The filter with parameters for values, for a statement built once and run with many."""
        return tuple(
            (name, sa.bindparam(f"wb_f{i}", type_=q.table.c[name].type)) for i, (name, _) in enumerate(self.where)
        )

    @property
    def filter_shape(self) -> tuple[str, ...]:
        """What a cached statement depends on: the filter's columns, not its values."""
        return tuple(name for name, _ in self.where)


@dataclasses.dataclass(frozen=True)
class Claimed:
    """A row just locked: all its columns plus the wb_* lock columns, and the lock it replaced."""

    row: Mapping[Any, Any]
    prev_owner: str | None
    prev_token: str | None


# (the Complete's values, as GuardedWriter.finish_params gives them, and the filter's, as
# ClaimRequest.filter_params does) -> None when the Complete's fence
# failed and nothing was claimed, else (the Complete's database time, the next item's Claim or None).
FinishThenClaim = Callable[[Mapping[str, Any]], tuple[Any, models.Claim | None] | None]
T = TypeVar("T")


class ClaimMethod:
    """Locks rows for a user: the lock is written first, the row is read after (or returned by) the write."""

    name = "abstract"
    # The lock-table claim of a database without one of its own. It builds on the portable claim, which
    # builds on this class: whoever chooses the method hands it in (claims.choose), this module names none.
    portable_lock_table: type[ClaimMethod] | None = None

    def __init__(self) -> None:
        # Statements built once per queue and request shape, their values bound when they run (built):
        # building them anew was much of a claim's CPU, and a contended claim reads its candidates
        # several times.
        self._built: dict[tuple[Any, ...], Any] = {}

    def built(self, kind: str, q: mapping.BoundQueue, request: ClaimRequest, build: Callable[[], T]) -> T:
        """`build()` (statements of `kind` for `q`) made once per queue and request shape: what a request's
        values change is bound when the statements run, so one build serves every claim."""
        return self.once((kind, id(q), request.key is not None, request.use_cooldown, request.filter_shape), build)

    def once(self, shape: tuple[Any, ...], build: Callable[[], T]) -> T:
        """`build()` made once for `shape` (a kind of statement, the queue's id, and whatever else it depends
        on), kept with the statements `built` keeps: for those a claim runs whatever the request."""
        if shape not in self._built:
            self._built[shape] = build()
        return self._built[shape]  # type: ignore[no-any-return]

    def claim(
        self, db: connect.Database, q: mapping.BoundQueue, trail: audit_mod.AuditTrail, request: ClaimRequest
    ) -> list[Claimed]:
        raise NotImplementedError

    def lock_table_claim(self) -> ClaimMethod:
        """This database's claim for a queue whose locks live in a separate lock table (shapes 5, 6)."""
        if self.portable_lock_table is None:
            raise RuntimeError(
                f"{type(self).__name__} was made without its lock-table claim: choose it by claims.choose"
            )
        return self.portable_lock_table()

    def prepare(self, db: connect.Database, q: mapping.BoundQueue, trail: audit_mod.AuditTrail) -> None:
        """Make what this method's claims of `q` keep in the database, at `workbench init` (nothing here)."""

    def claim_next(
        self, db: connect.Database, q: mapping.BoundQueue, trail: audit_mod.AuditTrail, user: str, count: int
    ) -> list[models.Claim]:
        """Up to `count` items for `user` in queue order, as the API hands them out ([] when none)."""
        return [claim_of(q, c.row) for c in self.claim(db, q, trail, ClaimRequest(user=user, count=count))]

    def finish_then_claim(
        self,
        db: connect.Database,
        q: mapping.BoundQueue,
        trail: audit_mod.AuditTrail,
        finish: object,
        request: ClaimRequest,
    ) -> FinishThenClaim | None:
        """One call (one round trip, one transaction) that runs `finish` (a Complete's part, its way's
        Way.finish: one statement, or on MySQL/MariaDB statements of a batch; each method takes the kind its
        database runs, and answers None to any other) and, only if its fence
        held, claims the next item for the same user, narrowed by the filter's columns of `request` (its
        values come with each call's); None where this database has no such call (the queue then
        completes and claims one after the other)."""
        return None

    # -- shared pieces --------------------------------------------------------------------

    @staticmethod
    def free_variants(
        q: mapping.BoundQueue, now: sa.ColumnElement[Any], request: ClaimRequest, trail: audit_mod.AuditTrail
    ) -> list[sa.ColumnElement[bool]]:
        """The free-rows branch split per IN-list value (see BoundQueue.filter_variants)."""
        extra = [q.free(), *ClaimMethod.not_own_work(q, trail, request.user), *ClaimMethod.chosen(q, request.where)]
        if request.key is not None:
            extra.append(q.key == request.key)
        if request.use_cooldown and request.key is None and q.config.release_cooldown_seconds > 0:
            extra.append(~ClaimMethod.recently_released(q, now, request.user, trail))
        if request.key is None and trail.deferrals is not None:
            extra.append(~trail.deferrals.deferred(q.key))
        return [sa.and_(*variant, *extra) for variant in q.filter_variants(request.user)]

    @staticmethod
    def branches(
        q: mapping.BoundQueue,
        now: sa.ColumnElement[Any],
        request: ClaimRequest,
        trail: audit_mod.AuditTrail,
        user: Any = None,
        *,
        anyone: bool = False,
    ) -> list[sa.ColumnElement[bool]]:
        """WHERE clauses of the rows that may be claimed, in the order they are served: expired locks,
        then deferred items whose time has come (when the queue's trail keeps deferrals), then free
        rows. `user` is the claimer as the statement names it (request.user when None); `anyone`:
        the rows someone may claim (conditions on the claiming user hold for all), for counts.

        Each branch has an index of its own (see attach.py): expired locks are found through the
        index on the expiry of locked rows, free rows through the claim index, which holds only
        unlocked waiting rows. Keeping locked rows out of the claim index matters: otherwise every
        claim leaves a dead entry at its head that every later claim has to step over. Deferred
        items are found from workbench_deferrals (a few rows) by key, and the free rows leave every
        deferred item to that branch, so no item comes from two branches.
        """
        who = request.user if user is None else user
        claimer = None if anyone else who
        # The table's row rule (CLAIMABLE, db/rowrules.py): its scope in every branch, its state as it
        # reads where the branch knows the lock run out or free.
        row = rowrules.before_all(q, "claim", "pick", user=claimer)
        scope = [
            *row.scope,
            *ClaimMethod.not_own_work(q, trail, who),
            *ClaimMethod.chosen(q, request.where),
        ]
        key_part = [q.key == request.key] if request.key is not None else []
        waiting = row.state_for("free")
        expired = sa.and_(*scope, q.shape.stale_rows(now, q.key), *row.state_for("stale"), *key_part)
        free = [*scope, *waiting, q.free(), *key_part]
        if request.use_cooldown and request.key is None and q.config.release_cooldown_seconds > 0:
            free.append(~ClaimMethod.recently_released(q, now, who, trail))
        deferrals = ClaimMethod._deferrals_served(request, trail)
        if deferrals is None:
            return [expired, sa.and_(*free)]
        due = sa.and_(*scope, *waiting, q.free(), deferrals.due(q.key, who))
        return [expired, due, sa.and_(*free, ~deferrals.deferred(q.key))]

    @staticmethod
    def served_first(
        q: mapping.BoundQueue, now: sa.ColumnElement[Any], request: ClaimRequest, trail: audit_mod.AuditTrail
    ) -> sa.ColumnElement[bool]:
        """Holds whenever a branch before the free rows (see branches) may find a row: a stale lock
        anywhere in the table, or a deferral of the queue due for anyone. It ignores scope, state
        and claimer, so it may hold while those branches find nothing; while it does not, the free
        rows are the whole claim."""
        tests = [q.shape.any_stale(now)]
        deferrals = ClaimMethod._deferrals_served(request, trail)
        if deferrals is not None:
            tests.append(deferrals.any_due())
        return sa.or_(*tests)

    @staticmethod
    def _deferrals_served(request: ClaimRequest, trail: audit_mod.AuditTrail) -> deferrals_mod.Deferrals | None:
        """The queue's deferrals, where the claim serves the due ones first (not for an item picked by
        key: that one is taken as it is)."""
        return trail.deferrals if request.key is None else None

    @staticmethod
    def chosen(q: mapping.BoundQueue, where: tuple[tuple[str, Any], ...]) -> list[sa.ColumnElement[bool]]:
        """The claimer's filter (`next --where`: ClaimRequest.where, or its bound_filter), in every branch."""
        return [q.table.c[name] == value for name, value in where]

    @staticmethod
    def not_own_work(q: mapping.BoundQueue, trail: audit_mod.AuditTrail, user: Any) -> list[sa.ColumnElement[bool]]:
        """In a queue that reviews another's completions: leave out, in every branch, the items whose
        work `user` did (four eyes); elsewhere nothing."""
        reviews = trail.reviews
        return [] if reviews is None else [~reviews.own_work(q.key, user)]

    @staticmethod
    def recently_released(
        q: mapping.BoundQueue, now: sa.ColumnElement[Any], user: Any, trail: audit_mod.AuditTrail
    ) -> sa.ColumnElement[bool]:
        """Did `user` release this row within the cool-down? The index (queue, actor, until) finds
        the user's few live entries, whatever the key's type."""
        c = trail.cooldown
        if c is None:
            return sa.false()
        return sa.exists().where(
            c.c.queue == q.name,
            c.c.actor == user,
            c.c.until > clock.db_now(),
            c.c.item_key == sa.cast(q.key, sa.String(200)),
        )

    @staticmethod
    def held_count(q: mapping.BoundQueue, now: sa.ColumnElement[Any], user: Any) -> sa.ScalarSelect[Any]:
        """How many live locks `user` holds in this queue: taken here (held_here), not in another
        queue of the same table, whose locks count against that queue's limit."""
        return (
            sa.select(sa.func.count())
            .select_from(q.locked_source)
            .where(*q.scope_clause(), q.held_here(), q.user == user, q.live(now))
            .scalar_subquery()
        )

    def held_select(self, q: mapping.BoundQueue) -> sa.Select[Any]:
        """held_count as a statement of its own, built once per queue: the user bound as `wb_user`."""
        user = sa.bindparam("wb_user", type_=sa.String())
        return self.once(("held", id(q)), lambda: sa.select(self.held_count(q, q.now(), user)))

    def room(self, conn: sa.Connection, q: mapping.BoundQueue, request: ClaimRequest) -> int:
        """How many more locks the user may take now (raises NothingToClaim at the limit)."""
        limit = q.config.max_locks_per_user
        if not limit:
            return request.count
        held = conn.execute(self.held_select(q), {"wb_user": request.user}).scalar() or 0
        room = min(request.count, limit - int(held))
        if room <= 0:
            raise limit_reached(q, int(held))
        return room

    @staticmethod
    def candidate_columns(q: mapping.BoundQueue, with_order: bool = False) -> list[sa.ColumnElement[Any]]:
        columns: list[sa.ColumnElement[Any]] = [
            q.key.label("wb_ckey"),
            q.user.label("wb_prev_owner"),
            q.shape.token_column().label("wb_prev_token"),
            q.time.label("wb_prev_time"),
        ]
        if with_order:  # to merge candidates of several queries in queue order
            columns += [column.label(f"wb_order{i}") for i, (column, _) in enumerate(q.order)]
        return columns

    @staticmethod
    def returned_columns(q: mapping.BoundQueue, now: sa.ColumnElement[Any]) -> list[sa.ColumnElement[Any]]:
        return [*q.table.c, *q.lock_select_columns(now)]

    @staticmethod
    def expiry_noticed(trail: audit_mod.AuditTrail, key: Any, user: str, owner: Any, token: Any) -> dict[str, Any]:
        """The audit row of a run-out lock (`owner`'s, `token`) that `user`'s claim of `key` noticed and gave back."""
        return trail.row(models.EventKind.EXPIRE, key, user, owner=owner, token=token, detail={"noticed_by": "claim"})

    @staticmethod
    def audit_rows(
        q: mapping.BoundQueue,
        trail: audit_mod.AuditTrail,
        user: str,
        claimed: list[Claimed],
        *,
        at_lock_time: bool = False,
    ) -> list[dict[str, Any]]:
        """The claim's audit rows (an expiry noticed, the claim); `at_lock_time`: stamped with the time
        the lock was taken, as read back (a claim whose audit rows come in a later statement, whose own
        clock would read later: AuditTrail.stamped)."""
        rows: list[dict[str, Any]] = []
        for c in claimed:
            key = c.row["wb_key"]
            start = len(rows)
            if c.prev_owner is not None:
                rows.append(ClaimMethod.expiry_noticed(trail, key, user, c.prev_owner, c.prev_token))
            rows.append(trail.row(models.EventKind.CLAIM, key, user, owner=user, token=q.lock_from_row(c.row).token))
            if at_lock_time:
                # As text with its microseconds: MariaDB's ODBC driver sends a datetime parameter without them.
                at = c.row["wb_time"].isoformat(sep=" ", timespec="microseconds")
                for row in rows[start:]:
                    row["at"] = at
        return rows

    @staticmethod
    def prev_token(q: mapping.BoundQueue, cand: Mapping[Any, Any]) -> str | None:
        return q.shape.prev_token(cand["wb_prev_owner"], cand["wb_prev_token"], cand["wb_prev_time"])


def claim_of(q: mapping.BoundQueue, row: Mapping[Any, Any]) -> models.Claim:
    """A claimed row (its columns plus the wb_* lock fields) as the Claim the API returns."""
    return models.Claim(lock=q.lock_from_row(row), item=q.item_from_row(row))


def sort_claimed(q: mapping.BoundQueue, claimed: list[Claimed]) -> list[Claimed]:
    """Claimed rows in queue order (UPDATE … OUTPUT/RETURNING gives no order)."""
    names = [column.name for column, _ in q.order]
    return [c for c, _ in _sorted(q, [(c, c.row) for c in claimed], names, "wb_key")]


def sort_candidates(q: mapping.BoundQueue, rows: list[Mapping[Any, Any]]) -> list[Mapping[Any, Any]]:
    """Candidate rows read with candidate_columns(with_order=True), in queue order."""
    names = [f"wb_order{i}" for i in range(len(q.order))]
    return [row for row, _ in _sorted(q, [(row, row) for row in rows], names, "wb_ckey")]


def _sorted(
    q: mapping.BoundQueue, pairs: list[tuple[Any, Mapping[Any, Any]]], names: list[str], key: str
) -> list[tuple[Any, Mapping[str, Any]]]:
    result = sorted(pairs, key=lambda p: p[1][key])
    for name, (_, descending) in reversed(list(zip(names, q.order, strict=False))):
        # NULLs first ascending, last descending (as PostgreSQL sorts; others differ, which only
        # matters for rows whose order column is empty).
        present = [p for p in result if p[1][name] is not None]
        missing = [p for p in result if p[1][name] is None]
        present.sort(key=lambda p: p[1][name], reverse=descending)
        result = present + missing if descending else missing + present
    return result


def limit_reached(q: mapping.BoundQueue, held: int) -> errors.NothingToClaim:
    return errors.NothingToClaim.of(problems.LIMIT_REACHED, q.name, held, q.config.max_locks_per_user, reason="limit")
