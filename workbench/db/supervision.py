"""A supervisor's actions on one queue: force-release, reassign, reopen, take, move, sweep, and the console's
figures (lock board, health, statistics). The operator's operations are workqueue.WorkQueue's."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any, NoReturn

import sqlalchemy as sa

from workbench.core import errors, models, problems, workflow
from workbench.db import (
    claims,
    groups,
    lockrules,
    lockshapes,
    moves,
    permissions,
    rowrules,
    supervisor_choices,
    workqueue,
    writes,
)
from workbench.db import reviews as reviews_mod
from workbench.db.figures import hourly, lock_board, operators, queue_health
from workbench.db.operator_text import check_user as _check_user

SWEEP_BATCH = 500  # rows per transaction: short transactions, no lock escalation on SQL Server
# Locks the lock board lists per queue, oldest first: a window never loads a hundred thousand rows
# at once (painted in ~110 ms at 10,000, README "Benchmarks"); it says how many it left out.
BOARD_ROWS = 20_000


class Supervision(supervisor_choices.SupervisorChoices):
    """A supervisor's actions on one queue, bound to its WorkQueue (the same table, trail and lock rules)."""

    def __init__(self, work: workqueue.WorkQueue) -> None:
        self.work = work
        self.db, self.q, self.trail, self.name, self.lost = work.db, work.q, work.trail, work.name, work.lost
        # The queue's own answers, shared with its operator operations: which locks are this queue's, how its
        # operations run (WorkQueue.acts, as its enforcement chose), the values waiting items hold.
        self._owned, self.acts, self._held_values = work._owned, work.acts, work._held_values
        self.db_clock = work.db_clock  # the period of the figures starts on the database clock

    # -- supervisor -------------------------------------------------------------------------

    def _require_supervisor(self, conn: sa.Connection, actor: str, action: errors.Phrase) -> None:
        """Refuse `action` unless `actor` may supervise (the table says reopen, move, force-release and
        reassign are a supervisor's). Under PostgreSQL's grants the database decides on the write (an
        in-row queue's policies and check, a lock-table queue's lock check), and refuses an operator's
        reopen, move or take with no more than "may not make this change": the login's role is asked
        first, so that the refusal says only supervisors may."""
        schema = self.trail.table.schema
        if not permissions.database_decides(conn, self.q, schema):
            permissions.require_supervisor(conn, schema, actor, action)
            return
        # The database decides (an in-row queue's policies, a lock-table queue's lock check): its role.
        refusal = permissions.database_refusal(conn, actor, action)
        if refusal is not None:
            raise refusal

    def _require_escalated_to(self, conn: sa.Connection, actor: str, action: errors.Phrase) -> None:
        """Refuse a take unless `actor` is whom the queue hands its escalated items to (the table's
        Actor.ESCALATED_TO): a supervisor, or a member of its escalate_to group where it names one (in
        workbench's groups table, or a database role of that name). Without the group, a supervisor's."""
        group = self.q.config.escalate_to
        if group is None:
            self._require_supervisor(conn, actor, action)
            return
        schema = self.trail.table.schema
        if groups.is_member(conn, schema, actor, group):
            return
        # A supervisor: where the database decides (PostgreSQL's grants) its role, else the roles table.
        if permissions.database_decides(conn, self.q, schema):
            if permissions.database_refusal(conn, actor, action) is None:
                return
        elif actor in permissions.supervisors(conn, schema):
            return
        raise errors.NotPermitted.of(problems.TAKE_NOT_IN_GROUP, self.name, group, actor, user=actor)

    def force_release(self, actor: str, key: Any, reason: str) -> models.Lock:
        """Take an item away from whoever holds it (recorded with the reason); returns the lock removed."""
        _check_user(actor)
        reason = workflow.reason_given("force_release", reason)
        key = self.q.coerce_key(key)
        return self.db.write(lambda conn: self._take_away(conn, actor, key, reason, None))

    def reassign(self, actor: str, key: Any, to_user: str, reason: str) -> models.Lock:
        """Move a lock to another user with a fresh token; returns the new lock."""
        _check_user(actor)
        _check_user(to_user)
        reason = workflow.reason_given("reassign", reason)
        key = self.q.coerce_key(key)
        return self.db.write(lambda conn: self._take_away(conn, actor, key, reason, to_user))

    def reopen(self, actor: str, key: Any, reason: str) -> None:
        """Put a completed (or otherwise finished) item back to waiting with the queue's on_reopen
        values (supervisors; recorded with the reason)."""
        _check_user(actor)
        reason = workflow.reason_given("reopen", reason)
        q = self.q
        if not q.on_reopen:
            raise errors.UsageError.of(problems.REOPEN_NOT_SET, self.name, self.name)
        key = q.coerce_key(key)
        self.db.write(lambda conn: self._reopen(conn, actor, key, reason))

    def _reopen(self, conn: sa.Connection, actor: str, key: Any, reason: str) -> None:
        q = self.q
        now = q.now()
        action = errors.Phrase.of(problems.DO_REOPEN, q.name, key)
        self._require_supervisor(conn, actor, action)
        # The table's lock rule (FREE), read here and carried by the UPDATE: an undo committed in
        # between gives the doer a fresh lock, which the reopen must never overwrite.
        free = lockrules.guard(q, "reopen", now)
        self._refuse_reopen(key, self._reopen_state(conn, key, free, locking=False))
        self.acts.run(
            conn,
            writes.Act(
                "reopen",
                actor,
                (key,),
                {"reason": reason},
                action,
                refused=lambda: errors.DatabaseUnavailable.of(problems.CHANGED_REOPENING, q.name, key),
            ),
            own=lambda: self._reopen_here(conn, actor, key, reason, now, free, action),
            answer=lambda rows: None,
        )

    def _reopen_here(
        self,
        conn: sa.Connection,
        actor: str,
        key: Any,
        reason: str,
        now: sa.ColumnElement[Any],
        free: sa.ColumnElement[bool],
        action: errors.Phrase,
    ) -> None:
        """The reopen by workbench's own statements: the UPDATE that holds to the table's rules, its record."""
        q = self.q
        # The table's row rule (FINISHED) on the row before, and its state after (back in todo) as the
        # row reads with on_reopen's values written (db/rowrules.py).
        values = q.writes(q.on_reopen, actor, now)
        update = (
            sa.update(q.table)
            .where(q.key == key, *rowrules.before(q, "reopen").all, free, rowrules.written_after(q, "reopen", values))
            .values(values)
        )
        with permissions.supervising(conn, actor, action):
            changed = conn.execute(update).rowcount
        if changed != 1:
            # It changed since it was read: say what it is now (read as the next writer would see it).
            self._refuse_reopen(key, self._reopen_state(conn, key, free, locking=True))
            raise errors.DatabaseUnavailable.of(problems.CHANGED_REOPENING, q.name, key)
        self.trail.write(conn, [self.trail.row(models.EventKind.REOPEN, key, actor, reason=reason)])

    def _reopen_state(
        self, conn: sa.Connection, key: Any, free: sa.ColumnElement[bool], *, locking: bool
    ) -> dict[str, Any] | None:
        """The row of `key` as a reopen decides on it: its lock, whether it waits, and whether the lock
        rule (`free`) holds, asked of the queue's table alone (a lock table's rule looks its rows up
        from there); `locking`: read as the next writer would see it."""
        q = self.q
        now = q.now()
        waiting = sa.case((sa.and_(*q.scope_clause(), q.todo_clause()), 1), else_=0).label("wb_waiting")
        read = sa.select(waiting, *q.lock_select_columns(now)).select_from(q.source).where(q.key == key)
        row = conn.execute(self.db.backend.lock_row(read, q.table) if locking else read).mappings().first()
        if row is None:
            return None
        found = conn.execute(sa.select(q.key).where(q.key == key, free)).first()
        return {**row, "wb_free": found is not None}

    def _refuse_reopen(self, key: Any, row: Mapping[Any, Any] | None) -> None:
        """Raise why a reopen of `key` (its row as _reopen reads it) is refused, if it is."""
        q = self.q
        if row is None:
            raise q.no_item(key)
        if not row["wb_free"]:
            # Someone holds it (live or run out): a lock is taken away by force-release, never overwritten.
            raise errors.UsageError.of(
                problems.REOPEN_HELD, q.name, key, row["wb_user"] or "another queue of its table"
            )
        if row["wb_waiting"]:
            raise errors.UsageError.of(problems.REOPEN_WAITING, q.name, key)

    def take(self, actor: str, key: Any) -> models.Claim:
        """Take an escalated item to work it (the table's "take"): it gets on_reopen's values and a fresh
        lock of `actor`'s with on_claim's, as after a claim, in one UPDATE that holds to the row rule
        (ESCALATED: out of todo, on_escalate's values) and the lock rule (FREE): of two supervisors
        taking it at once, one does, the other is told it is not waiting for a supervisor any more.
        Where the locks live in a lock table, the lock is its row, inserted first (_take_lock_row)."""
        _check_user(actor)
        q = self.q
        if not q.on_escalate:
            raise errors.UsageError.of(problems.ESCALATE_NOT_SET, self.name, self.name)
        if not q.on_reopen:
            raise errors.UsageError.of(problems.REOPEN_NOT_SET, self.name, self.name)
        # The lock is written into the row, as undo writes it, or (a lock table) inserted as a claim's.
        problem = None if q.shape.separate_locks else q.shape.undo_problem()
        if problem is not None:
            raise errors.UsageError.of(problems.TAKE_NOT_AVAILABLE, self.name, problem)
        key = q.coerce_key(key)
        return self.db.write(lambda conn: self._take(conn, actor, key))

    def _take(self, conn: sa.Connection, actor: str, key: Any) -> models.Claim:
        q = self.q
        now = q.now()
        action = errors.Phrase.of(problems.DO_TAKE, q.name, key)
        self._require_escalated_to(conn, actor, action)
        # Where a procedure runs it, it holds to the same rules and writes the same, with its record (wb_QUEUE_take).
        return self.acts.run(
            conn,
            writes.Act(
                "take",
                actor,
                (key,),
                action=action,
                refused=lambda: errors.UsageError.of(problems.TAKE_NOT_ESCALATED, q.name, key),
            ),
            own=lambda: self._take_here(conn, actor, key, now, action),
            answer=lambda rows: claims.claim_of(q, rows[0]),
        )

    def _take_here(
        self, conn: sa.Connection, actor: str, key: Any, now: sa.ColumnElement[Any], action: errors.Phrase
    ) -> models.Claim:
        """The take by workbench's own statements: one UPDATE held to the row and lock rules, the claim's record."""
        q = self.q
        # The row rule (ESCALATED) and the lock rule (FREE), carried by the UPDATE itself.
        escalated = rowrules.before(q, "take").all
        token = q.shape.new_token_value()
        in_row = not q.shape.separate_locks
        values = {
            **q.writes(q.on_reopen, actor, now),
            **(q.lock_writes(actor, now, token) if in_row else {}),
            **q.writes(q.on_claim, actor, now),
        }
        with permissions.supervising(conn, actor, action):
            free = lockrules.guard(q, "take", now) if in_row else self._take_lock_row(conn, actor, key, token)
            update = sa.update(q.table).where(q.key == key, free, *escalated).values(values)
            changed = conn.execute(update).rowcount
        if changed != 1:
            self._refuse_take(conn, key)
        row = (
            conn.execute(
                sa.select(*claims.ClaimMethod.returned_columns(q, now))
                .select_from(q.source)
                .where(q.key == key, q.shape.pinned(actor, token))
            )
            .mappings()
            .one()
        )
        claimed = claims.Claimed(row=row, prev_owner=None, prev_token=None)
        self.trail.write(conn, claims.ClaimMethod.audit_rows(q, self.trail, actor, [claimed]))
        return claims.claim_of(q, row)

    def _take_lock_row(self, conn: sa.Connection, actor: str, key: Any, token: Any) -> sa.ColumnElement[bool]:
        """A lock table's take: the lock is a row of its own, inserted as a claim inserts it (the lock
        table's primary key admits one per item and queue), on a row read and locked as escalated and
        free (the table's row rule and lock rule FREE, lockrules.guard); the claim id stamped where the
        row has one. Returns what the queue row's UPDATE still holds to of the lock rule: nobody holds
        the item through another queue of the table (the lock row is now this one)."""
        q = self.q
        shape = q.shape
        assert isinstance(shape, lockshapes.LockTable)
        now = q.now()
        read = sa.select(q.key).where(q.key == key, lockrules.guard(q, "take", now), *rowrules.before(q, "take").all)
        if conn.execute(self.db.backend.lock_row(read, q.table)).first() is None:
            self._refuse_take(conn, key)
        if not q.backend.insert_new(conn, q.lock_insert, shape.new_lock_params(key, actor, token)):
            self._refuse_take(conn, key)  # taken meanwhile: its lock row is there
        if not shape.stamp(conn, q.table, q.key, key, token, None):
            self._refuse_take(conn, key)  # another program's claim id: the lock row goes with the transaction
        return ~shape.held_elsewhere(q.key)

    def _refuse_take(self, conn: sa.Connection, key: Any) -> NoReturn:
        """Raise why a take of `key` is refused: no such item, or it does not wait for a supervisor."""
        q = self.q
        if conn.execute(sa.select(q.key).where(q.key == key)).first() is None:
            raise q.no_item(key)
        raise errors.UsageError.of(problems.TAKE_NOT_ESCALATED, q.name, key)

    def move(
        self,
        actor: str,
        changes: Mapping[str, Any],
        reason: str,
        *,
        keys: list[Any] | None = None,
        where: Mapping[str, Any] | None = None,
    ) -> list[Any]:
        """A supervisor's bulk move of waiting items nobody holds (moves.py): the keys moved, in key order."""
        mover = moves.Mover(self.db, self.q, self.trail, self.acts, self._require_supervisor)
        return mover.move(actor, changes, reason, keys=keys, where=where)

    def _take_away(self, conn: sa.Connection, actor: str, key: Any, reason: str, to_user: str | None) -> models.Lock:
        q = self.q
        now = q.now()
        action = errors.Phrase.of(problems.DO_FORCE_RELEASE if to_user is None else problems.DO_REASSIGN, q.name, key)
        self._require_supervisor(conn, actor, action)
        # The table's row rule (HELD), which a lock table's fence does not carry (as for the sweep): the item,
        # read and locked here, still in the queue's work.
        held = rowrules.before(q, "force_release" if to_user is None else "reassign").state
        here_clause = sa.and_(self._owned(conn), *(held if q.shape.separate_locks else ()))
        here = sa.case((here_clause, 1), else_=0).label("wb_here")
        # A run-out lock row whose item left the queue's work is no force-release's (HELD), but the clock's to
        # give back, the item left as it is (expire_out_of_work, whoever notices it): the supervisor who sees
        # it on the lock board and frees it does that, recorded as its expiry.
        left = rowrules.before(q, "expire_out_of_work").all if q.shape.separate_locks and to_user is None else ()
        run_out = sa.and_(self._owned(conn), *left, q.expired(now)) if left else sa.false()
        out = sa.case((run_out, 1), else_=0).label("wb_out_of_work")
        stmt = sa.select(*q.lock_select_columns(now), here, out).select_from(q.source).where(q.key == key)
        row = conn.execute(self.db.backend.lock_row(stmt, q.table)).mappings().first()
        if row is None:
            if self.db.backend.hides_rows(conn) and conn.execute(sa.select(q.key).where(q.key == key)).first():
                # The row is there, but row-level security hides it from this login's updates.
                raise permissions.database_refusal(conn, actor, action) or errors.NotPermitted.of(
                    problems.HIDDEN_BY_POLICY, actor, action, user=actor
                )
            raise q.no_item(key)
        if row["wb_user"] is None or row["wb_time"] is None:
            raise errors.LockLost.of(problems.NOT_LOCKED, q.name, key, queue=q.name, key=key, cause="not_held")
        if not row["wb_here"] and row["wb_out_of_work"]:
            lock = q.lock_from_row(row)
            if not self._give_back(conn, lock, now):
                raise errors.DatabaseUnavailable.of(problems.CHANGED_RELEASING, q.name, key)
            self.trail.write(conn, [self._expired(lock, actor, "force_release")])
            return lock
        if not row["wb_here"]:
            # Taken in another queue of the table: this queue's on_release (or a lock of this queue)
            # would leave the row served by neither queue, or an item under review back at work.
            raise self.lost.elsewhere(conn, key, "force-release" if to_user is None else "reassign")
        lock = q.lock_from_row(row)
        reviews = self.trail.reviews
        if to_user is not None and reviews is not None:
            # Four eyes: a review is never handed to the one whose work it is (the claim never serves it them).
            review = reviews.open_review(conn, key)
            if review is not None and review[0] == to_user:
                raise errors.NotPermitted.of(problems.REASSIGN_TO_DOER, q.name, key, to_user, user=actor)
        # Where a procedure runs it (the row read and locked above), it records it under the login.
        return self.acts.run(
            conn,
            writes.Act(
                "force_release" if to_user is None else "reassign",
                actor,
                (key,),
                {"reason": reason, "to": to_user},
                action,
                refused=lambda: errors.DatabaseUnavailable.of(problems.CHANGED_RELEASING, q.name, key),
            ),
            own=lambda: self._take_away_here(conn, actor, key, reason, to_user, lock, now, action),
            answer=lambda rows: lock if to_user is None else q.lock_from_row(rows[0]),
        )

    def _take_away_here(
        self,
        conn: sa.Connection,
        actor: str,
        key: Any,
        reason: str,
        to_user: str | None,
        lock: models.Lock,
        now: sa.ColumnElement[Any],
        action: errors.Phrase,
    ) -> models.Lock:
        """A force-release or reassign by workbench's own statements: the lock pinned (HELD_HERE) cleared or
        moved, and its records."""
        q = self.q
        # The table's lock rule (HELD_HERE): this very lock, taken in this queue.
        pinned = lockrules.guard(
            q, "force_release" if to_user is None else "reassign", now, lock=lock, owned=self._owned(conn)
        )
        try:
            # A row-level security policy may refuse the new row (e.g. an operator reassigning to someone else).
            with permissions.supervising(conn, actor, action):
                if to_user is None:
                    changed = q.shape.unlock(conn, q.table, q.key, key, pinned, q.writes(q.on_release, actor, now))
                else:
                    changed = q.shape.relock(
                        conn,
                        q.table,
                        q.key,
                        key,
                        pinned,
                        q.lock_writes(to_user, now, q.shape.new_token_value()),
                        lock.token,
                    )
        except lockshapes.FenceFailed:
            raise errors.DatabaseUnavailable.of(problems.CHANGED_REASSIGNING, q.name, key) from None
        if not changed:
            refusal = permissions.database_refusal(conn, actor, action)  # PostgreSQL: a policy filtered it out
            if refusal is not None:
                raise refusal
            raise errors.DatabaseUnavailable.of(problems.CHANGED_RELEASING, q.name, key)
        kind = models.EventKind.FORCE_RELEASE if to_user is None else models.EventKind.REASSIGN
        rows = [
            self.trail.row(
                kind,
                key,
                actor,
                owner=lock.owner,
                token=lock.token,
                reason=reason,
                detail={"to": to_user} if to_user else None,
            )
        ]
        result = lock
        if to_user is not None:
            new_row = (
                conn.execute(sa.select(*q.lock_select_columns(now)).select_from(q.source).where(q.key == key))
                .mappings()
                .one()
            )
            result = q.lock_from_row(new_row)
            rows.append(
                self.trail.row(
                    models.EventKind.CLAIM,
                    key,
                    actor,
                    owner=to_user,
                    token=result.token,
                    detail={"reassigned_from": lock.owner},
                )
            )
        self.trail.write(conn, rows)
        return result

    # -- the supervisor console's figures (workbench.db.figures) -----------------------------

    def count_locks(self) -> int:
        """How many locks the queue has (live, or expired and not yet taken): the board lists at most
        its limit of them, and says how many there are."""
        q = self.q

        def count(conn: sa.Connection) -> int:
            return int(
                conn.execute(
                    sa.select(sa.func.count())
                    .select_from(q.locked_source)
                    .where(*q.scope_clause(), self._owned(conn), q.user.is_not(None), q.time.is_not(None))
                ).scalar_one()
            )

        return self.db.read(count)

    def board(self, limit: int = BOARD_ROWS, keys: list[Any] | None = None) -> list[models.BoardRow]:
        """Every lock (live, or expired and not yet taken), oldest first, with its item's list
        columns, its last activity and its extensions; at most `limit`. Never tokens. With `keys`:
        only those items' locks."""
        return self.db.read(lambda conn: lock_board.board(conn, self.q, self.trail, limit, keys))

    def health(self) -> models.QueueHealth:
        """Waiting, locked and expired now; completions, releases, expiries and force releases today
        (since midnight on the database clock)."""
        return self.db.read(lambda conn: queue_health.health(conn, self.q, self.trail))

    def operator_stats(self, since: dt.datetime, until: dt.datetime | None = None) -> list[models.OperatorStats]:
        """Per operator in [since, until), most completions first (see operators.operator_stats).

        Aware times are converted; naive ones are read on the queue's clock (UTC, or the server's
        local time with `database.clock = "local"`). The same holds for throughput and handle_times.
        """
        return self.db.read(lambda conn: operators.operator_stats(conn, self.q, self.trail, since, until))

    def review_verdicts(self, since: dt.datetime, until: dt.datetime | None = None) -> list[reviews_mod.Verdicts]:
        """How the reviewed work of each operator fared in [since, until) (this queue is reviewed, or
        reviews another; [] otherwise)."""
        found = self.trail.to_review or self.trail.reviews
        if found is None:
            return []
        return self.db.read(lambda conn: found.verdicts(conn, since, until))

    def throughput(self, since: dt.datetime, until: dt.datetime | None = None) -> list[models.HourCount]:
        """Completions and claims per hour in [since, until) (until: now), every hour included."""
        return self.db.read(lambda conn: hourly.throughput(conn, self.q, self.trail, since, until))

    def handle_times(self, since: dt.datetime, until: dt.datetime | None = None) -> list[float]:
        """Seconds from claim to completion of each completion in [since, until), for a histogram."""
        return self.db.read(lambda conn: operators.handle_times(conn, self.q, self.trail, since, until))

    def open_per_hour(self, since: dt.datetime) -> list[tuple[dt.datetime, int]] | None:
        """Items open (waiting or in progress) at the end of each hour since `since`; None without `created`."""
        from workbench.db import backlog

        return self.db.read(lambda conn: backlog.open_per_hour(conn, self.q, self.trail, since))

    def sweep(self, actor: str) -> list[models.Lock]:
        """Return every expired lock's item to the pool and record the expiries; returns them. A lock row
        whose item left the queue's work goes back alone (expire_out_of_work: the item left as it is)."""
        _check_user(actor)
        expired: list[models.Lock] = []
        while True:
            batch = self.db.write(lambda conn: self._sweep_batch(conn, actor))
            expired += batch
            if len(batch) < SWEEP_BATCH:
                return expired

    def _sweep_batch(self, conn: sa.Connection, actor: str) -> list[models.Lock]:
        q = self.q
        now = q.now()
        # The table's row rules for an expiry. Where the lock lives in the row the fence carries HELD
        # (BoundQueue.held_here): a lock is this queue's only while its row is in the work. A lock table's row
        # names its queue but not the item's state: one whose item is in the queue's work goes back with
        # on_release (expire, HELD), one whose item left it (changed by hand or by another program) goes back
        # alone, the item left as it is (expire_out_of_work, OUT_OF_WORK): on_release is not that item's, and
        # nothing else may remove it (_give_back).
        held = rowrules.before(q, "expire").state if q.shape.separate_locks else ()
        in_work = sa.case((sa.and_(sa.true(), *held), 1), else_=0) if held else sa.literal(1)
        stmt = (
            sa.select(*q.lock_select_columns(now), in_work.label("wb_in_work"))
            .select_from(q.locked_source)
            .where(*q.scope_clause(), self._owned(conn), q.user.is_not(None), q.time.is_not(None), q.expired(now))
            .order_by(q.time)
            .limit(SWEEP_BATCH)
        )
        done, rows = [], []
        for row in conn.execute(stmt).mappings().all():
            lock = q.lock_from_row(row)
            if row["wb_in_work"]:
                # The table's lock rule for an expiry (STALE_HERE): this lock, run out, taken in this queue.
                stale = lockrules.guard(q, "expire", now, lock=lock, owned=self._owned(conn))
                if held:  # and its row rule again: the item may have left the queue's work since it was read
                    stale = sa.and_(stale, sa.exists().where(q.key == lock.key, *held))
                given = q.shape.unlock(conn, q.table, q.key, lock.key, stale, q.writes(q.on_release, actor, now))
            else:
                given = self._give_back(conn, lock, now)
            if given:
                done.append(lock)
                rows.append(self._expired(lock, actor, "sweep"))
        self.trail.write(conn, rows)
        return done

    def _give_back(self, conn: sa.Connection, lock: models.Lock, now: sa.ColumnElement[Any]) -> bool:
        """The table's expire_out_of_work: a run-out lock row of this queue (STALE_HERE, this very lock) whose
        item is out of the queue's work (OUT_OF_WORK, asked again by the DELETE) deleted, the item not
        written. False where it is not (any more) so."""
        q = self.q
        stale = lockrules.guard(q, "expire_out_of_work", now, lock=lock, owned=self._owned(conn))
        left = rowrules.before(q, "expire_out_of_work").all  # in the queue's scope, as the sweep reads it
        return q.shape.unlock(
            conn, q.table, q.key, lock.key, sa.and_(stale, sa.exists().where(q.key == lock.key, *left)), {}
        )

    def _expired(self, lock: models.Lock, actor: str, noticed_by: str) -> dict[str, Any]:
        """The audit row of an expiry (expire or expire_out_of_work) that `noticed_by` gave back."""
        detail = {"expired_at": lock.expires_at, "noticed_by": noticed_by}
        return self.trail.row(
            models.EventKind.EXPIRE, lock.key, actor, owner=lock.owner, token=lock.token, detail=detail
        )
