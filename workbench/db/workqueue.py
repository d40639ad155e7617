"""The operations of one operator on one queue: claim, show, save, complete, release, defer, extend, undo, lists
(a supervisor's actions are supervision.Supervision's)."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
from collections.abc import Iterator, Mapping
from typing import Any

import sqlalchemy as sa

from workbench.core import errors, models, problems, workflow
from workbench.db import audit as audit_mod
from workbench.db import (
    claims,
    connect,
    enforcement,
    groups,
    guarded,
    lockloss,
    mapping,
    operator_text,
    permissions,
    queue_lookups,
    queue_reading,
    undo,
    writes,
)
from workbench.db import deferrals as deferrals_mod
from workbench.db import notes as notes_mod
from workbench.db.figures import common as figures


@dataclasses.dataclass(frozen=True)
class _Probe:
    """WorkQueue._why_nothing's statements for one queue (None: not asked there)."""

    own_work: sa.Select[Any] | None  # the user's work waiting for review (Reviews.waiting_for)
    held_open: Any  # the backend's held_open_reads of the waiting items


class WorkQueue(queue_reading.QueueReading, queue_lookups.QueueLookups, undo.Undo):
    """One configured queue on one database. Every method is one or a few short transactions."""

    def __init__(
        self,
        db: connect.Database,
        q: mapping.BoundQueue,
        trail: audit_mod.AuditTrail,
        method: claims.ClaimMethod,
        neighbours: tuple[str, ...] = (),
        enforced: enforcement.Enforcement | None = None,
    ) -> None:
        """`neighbours`: the other queues over the same table, one of which may hold a lock on a row
        of it (a refused write names it). `enforced`: how the writes run, as the service bound the
        queue (enforcement.py)."""
        self.db, self.q, self.trail, self.method = db, q, trail, method
        self.enforcement = enforced or enforcement.of(db, q, trail.table.schema)
        self.name = q.name
        self.config = q.config
        self.writer = guarded.GuardedWriter(db, q, trail, self.enforcement.ways)
        self.acts = self.enforcement.acts()  # the other operations' executor (undo, notes, a supervisor's)
        self.lost = lockloss.Diagnosis(q, trail, neighbours)
        self._shapes: dict[str, guarded.Shape] = {}  # a Complete without edits, per outcome: built and hashed once

    # -- claiming ---------------------------------------------------------------------------

    def claim_next(self, user: str, count: int = 1, where: Mapping[str, Any] | None = None) -> list[models.Claim]:
        """Lock up to `count` items for `user` in queue order; NothingToClaim when none is free.

        `where` narrows the claim to items whose columns hold these values ({column: value}; the
        columns the queue's `filter_by` names), e.g. {"msg_type": "INVOICE"}.
        """
        operator_text.check_user(user)
        if count < 1:
            raise errors.UsageError("count must be at least 1")
        self._check_group(user)
        if where:
            request = claims.ClaimRequest(user=user, count=count, where=self.q.coerce_filter(where))
            claimed = [
                claims.base.claim_of(self.q, c.row) for c in self.method.claim(self.db, self.q, self.trail, request)
            ]
        else:
            claimed = self.method.claim_next(self.db, self.q, self.trail, user, count)
        if not claimed:
            error = self._why_nothing(user)
            if where and error.reason == "empty":
                narrowed = ", ".join(f"{name}={value}" for name, value in where.items())
                raise errors.NothingToClaim.of(problems.NOTHING_WITH, self.name, narrowed, reason="empty")
            raise error
        return claimed

    def ask_ahead(self) -> None:
        """Ask the database now how this queue's claim and Complete run (Enforcement.ask_ahead): inside a
        window's opening read (Database.one_read) that costs no transaction of its own, where the first
        Next item would spend one."""
        self.enforcement.ask_ahead()

    def claim(self, user: str, key: Any) -> models.Claim:
        """Lock one specific item; returns the caller's existing lock when they already hold it."""
        operator_text.check_user(user)
        if not self.config.allow_pick:
            raise errors.UsageError(f"queue {self.name} serves items in order only (allow_pick = false)")
        key = self.q.coerce_key(key)
        current = self.show(key)
        lock = current.lock
        if lock is not None and lock.owner == user and not lock.expired and self._took(lock):
            if not self._held_here(key):
                # The caller's own lock, taken in another queue of the table: resumed there, not here.
                taken = self.db.read(lambda conn: self.lost.elsewhere(conn, key, "work on"))
                raise errors.NothingToClaim(taken.happened, reason="unavailable")
            return models.Claim(lock=lock, item=current.item, resumed=True)
        self._check_group(user)
        claimed = self.method.claim(
            self.db, self.q, self.trail, claims.ClaimRequest(user=user, count=1, key=key, use_cooldown=False)
        )
        if claimed:
            return claims.base.claim_of(self.q, claimed[0].row)
        view = self.show(key)
        elsewhere = self.db.read(lambda conn: self._held_elsewhere(conn, key, view))
        if elsewhere is not None:
            # Held through another queue of the table (whose lock this queue may not even see).
            raise errors.NothingToClaim.of(problems.HELD_THROUGH, self.name, key, *elsewhere, reason="unavailable")
        if view.lock is not None and not view.lock.expired:
            raise errors.NothingToClaim.of(
                problems.HELD_BY if self._took(view.lock) else problems.HELD_BY_PROGRAM,
                self.name,
                key,
                view.lock.owner,
                operator_text.when(view.lock.locked_at),
                operator_text.when(view.lock.expires_at),
                reason="unavailable",
            )
        if self.config.max_locks_per_user:
            held = len([lock for lock in self.mine(user) if not lock.expired])
            if held >= self.config.max_locks_per_user:
                raise claims.base.limit_reached(self.q, held)
        reviews = self.trail.reviews
        review = self.db.read(lambda conn: reviews.open_review(conn, key)) if reviews is not None else None
        if review is not None and review[0] == user and view.state == "waiting":
            raise errors.NothingToClaim.of(problems.OWN_WORK, self.name, key, reason="unavailable")
        raise errors.NothingToClaim.of(problems.NOT_WAITING, self.name, key, view.state, reason="unavailable")

    def _held_elsewhere(self, conn: sa.Connection, key: Any, view: models.ItemView) -> tuple[str, str] | None:
        """Who holds `key` and through which other queue of the table, when a lock taken there is what
        keeps this queue from claiming it (None: it is not)."""
        q, neighbours = self.q, self.lost.neighbours
        if not neighbours:
            return None
        if view.lock is not None:
            if view.lock.expired or conn.execute(sa.select(q.key).where(q.key == key, self._owned(conn))).first():
                return None  # run out, or taken here
        elif conn.execute(sa.select(q.key).where(q.key == key, q.shape.unheld(q.key))).first() is not None:
            return None  # nobody holds it
        newest = self.trail.newest_claim(conn, key, neighbours)
        if newest is None or newest[0] == self.name:
            return None
        queue, owner = newest
        return (view.lock.owner if view.lock is not None else owner) or "someone", queue

    def _held_here(self, key: Any) -> bool:
        """Is the lock on `key` this queue's (BoundQueue.held_here)?"""
        q = self.q
        return self.db.read(
            lambda conn: conn.execute(sa.select(q.key).where(q.key == key, self._owned(conn))).first() is not None
        )

    def _check_group(self, user: str) -> None:
        """A queue that serves a group (`serves`) serves its members only: checked before every claim."""
        group = self.config.serves
        if group is None:
            return
        schema = self.trail.table.schema
        if not self.db.read(lambda conn: groups.is_member(conn, schema, user, group)):
            raise errors.NotPermitted.of(problems.NOT_IN_GROUP, self.name, group, user, user=user)

    def _why_nothing(self, user: str) -> errors.NothingToClaim:
        """Why a claim of `user` found nothing, each question asked only where it can be the answer: in a read
        transaction, none where there is nothing to ask. A window polls an empty queue often: the statements
        are built once per queue (_nothing_probe)."""
        q = self.q
        probe = self.method.once(("why-nothing", id(q)), self._nothing_probe)
        if q.config.max_locks_per_user or probe.own_work is not None or probe.held_open is not None:
            found = self.db.read(lambda conn: self._asked(conn, probe, user))
            if found is not None:
                return found
        return errors.NothingToClaim.of(problems.NOTHING_WAITING, q.name, reason="empty")

    def _asked(self, conn: sa.Connection, probe: _Probe, user: str) -> errors.NothingToClaim | None:
        """_why_nothing's answer from the database; None: nothing is waiting."""
        q, params = self.q, {"wb_user": user}
        if q.config.max_locks_per_user:
            held = int(conn.execute(self.method.held_select(q), params).scalar() or 0)
            if held >= q.config.max_locks_per_user:
                return claims.base.limit_reached(q, held)
        reviews = self.trail.reviews
        if reviews is not None and probe.own_work is not None and conn.execute(probe.own_work, params).first():
            return errors.NothingToClaim.of(problems.NOTHING_BUT_OWN_WORK, q.name, reviews.source, reason="empty")
        if probe.held_open is not None and self.db.backend.held_open(conn, probe.held_open, params):
            return errors.NothingToClaim.of(problems.NOTHING_FREE_NOW, q.name, reason="empty")
        return None

    def _nothing_probe(self) -> _Probe:
        """_why_nothing's statements for this queue, the user bound as `wb_user` when they run."""
        q, user = self.q, sa.bindparam("wb_user", type_=sa.String())
        reviews = self.trail.reviews
        held_open = None
        if not q.shape.separate_locks:
            # Items wait but an open transaction locked them all (under grants an operator's login may);
            # asked of rows that hold their lock (a separate lock table's claim does not lock the item's row).
            waiting = (
                sa.select(q.key)
                .select_from(q.table)
                .where(*q.scope_clause(user), q.todo_clause(user), sa.or_(q.free(), q.stale(q.now())))
            )
            held_open = self.db.backend.held_open_reads(waiting)
        return _Probe(own_work=None if reviews is None else reviews.waiting_for(user), held_open=held_open)

    # -- writing under the lock -------------------------------------------------------------

    def save(self, user: str, key: Any, token: str, edits: Mapping[str, Any]) -> models.Lock:
        """Store edits while holding the lock (the lock is kept)."""
        return self.save_recorded(user, key, token, edits).lock

    def save_recorded(self, user: str, key: Any, token: str, edits: Mapping[str, Any]) -> models.Saved:
        """save, with the audit row it wrote where the way it ran says what that holds (models.Saved)."""
        key = self.q.coerce_key(key)
        values = self.q.coerce_edits(edits)
        if not values:
            return models.Saved(self.check(user, key, token, "save"), None)
        self._check_lookups(values)
        shape = guarded.Shape.of("save", edits=tuple(values))
        with self._refused_as_lost(key, token, user, "save"):
            row = self.writer.run(
                shape, key=key, token=token, user=user, edits=values, detail={"columns": sorted(values)}
            )
        if row is None:
            raise self._lost(key, token, user, "save")
        lock = self.q.lock_from_row(row)
        if writes.RECORDED not in row:
            return models.Saved(lock, None)
        # As AuditTrail.event reads the row back: stamped in the write's transaction, at the lock's clock reading.
        event = models.Event(
            id=0,
            queue=self.name,
            key=str(key),
            kind=models.EventKind.SAVE,
            actor=user,
            owner=user,
            token=audit_mod.token_digest(lock.token),
            at=lock.db_now.astimezone(dt.UTC),
            detail=row[writes.RECORDED],
        )
        return models.Saved(lock, event)

    def complete(
        self,
        user: str,
        key: Any,
        token: str,
        outcome: str | None = None,
        edits: Mapping[str, Any] | None = None,
        note: str | None = None,
        *,
        then_next: bool = False,
        where: Mapping[str, Any] | None = None,
    ) -> models.Completion:
        """Finish the item with an outcome (and final edits, and a note written with it); accepted
        only under the caller's live lock. With `then_next`, the next item (narrowed by `where`, as
        claim_next) is claimed for the caller once the Complete is in, and handed back as the
        Completion's `next` (None when none could be claimed: claim_next tells why); on PostgreSQL
        the Complete and the claim are then one call, one round trip and one commit (on MySQL/MariaDB
        one transaction and one commit, the Complete sent with the claim's first batch)."""
        key = self.q.coerce_key(key)
        note = self._note_for("complete", note, outcome if outcome is not None else self.config.outcomes[0].name)
        why = self._review_choice(user, outcome)
        then = None
        if then_next and not edits and note is None and why is None:
            # On PostgreSQL the Complete and the claim in one call, one round trip and one commit; on
            # MySQL/MariaDB one transaction, the Complete sent with the claim's first batch.
            # A wrong filter is refused before anything is written.
            request = claims.ClaimRequest(user=user, where=self.q.coerce_filter(where) if where else ())
            then = writes.ThenNext(
                (outcome, request.filter_shape),
                lambda finish: self.method.finish_then_claim(self.db, self.q, self.trail, finish, request),
                request.filter_params(),
                lambda: self._may_claim(user),
            )
        try:
            name = self.config.outcome(outcome).name
        except KeyError:
            names = ", ".join(o.name for o in self.config.outcomes)
            raise errors.InvalidValue.of(problems.NO_OUTCOME, self.name, outcome, names) from None
        values = self.q.coerce_edits(edits, "complete") if edits else {}
        self._check_lookups(values)
        plain = not values and note is None and why is None
        shape = self._shapes.get(name) if plain else None
        if shape is None:
            shape = guarded.Shape.of(
                "complete", edits=tuple(values), outcome=name, note=note is not None, to_review=why is not None
            )
            if plain:
                self._shapes[name] = shape  # the common case: built and hashed once
        write = writes.Write(
            shape, key, token, user, values, detail={"columns": sorted(values)} if values else None, note=note, why=why
        )
        with self._refused_as_lost(key, token, user, "complete"):
            row, claimed = self.writer.complete(write, then)  # claimed: PASS where no claim was made
        if claimed is not writes.PASS:
            return self._completion(user, key, token, name, row, why, claimed)
        done = self._completion(user, key, token, name, row, why)
        if not then_next:
            return done
        if done.replayed:
            # A retry of a Complete whose reply was lost: if that call claimed the next item too (in
            # its transaction, so at the same database time), that item is the one to hand back.
            kept = next((lock for lock in self.mine(user) if lock.locked_at == done.at and not lock.expired), None)
            if kept is not None:
                return dataclasses.replace(
                    done, next=models.Claim(lock=kept, item=self.show(kept.key).item, resumed=True)
                )
        try:
            next_claim = self.claim_next(user, 1, where)[0]
        except errors.WorkbenchError:
            # The Complete is in either way: next is None, and the caller's own claim_next says why
            # (nothing waiting, a limit, the database gone meanwhile).
            return done
        return dataclasses.replace(done, next=next_claim)

    def _may_claim(self, user: str) -> bool:
        """Is `user` served by this queue (its `serves` group, if it names one)?"""
        try:
            self._check_group(user)
        except errors.NotPermitted:
            return False
        return True

    def _completion(
        self,
        user: str,
        key: Any,
        token: str,
        name: str,
        row: Mapping[Any, Any] | None,
        why: str | None,
        claimed: models.Claim | None = None,
    ) -> models.Completion:
        """The Complete as written (`row`), or as first written where this was a retry after a lost
        reply; LockLost (or why else) where the caller's lock was gone."""
        at = row["wb_now"] if row is not None else None
        if at is None:
            replay = self.db.read(lambda conn: self.lost.completed_by(conn, key, token, user))
            if replay is not None and replay.outcome == name:
                # The same Complete again (a retry after a lost reply): report the first one.
                return models.Completion(
                    queue=self.name,
                    key=key,
                    owner=user,
                    token=token,
                    outcome=replay.outcome or name,
                    at=replay.at,
                    replayed=True,
                    review=self._reviewer if (replay.detail or {}).get("review") is not None else None,
                )
            raise self._lost(key, token, user, "complete")
        return models.Completion(
            queue=self.name,
            key=key,
            owner=user,
            token=token,
            outcome=name,
            at=operator_text.utc(at, self.q.local_clock),
            review=self._reviewer if why is not None else None,
            next=claimed,
        )

    @property
    def _reviewer(self) -> str | None:
        """The queue that reviews this one's completions (four eyes), if any."""
        return self.trail.to_review.queue if self.trail.to_review is not None else None

    def _review_choice(self, user: str, outcome: str | None) -> str | None:
        """Whether this Complete goes to review (four eyes), decided now: why (reviews.FIRST or SHARE), or None."""
        to_review = self.trail.to_review
        if to_review is None:
            return None
        return to_review.choose(outcome if outcome is not None else self.config.outcomes[0].name, user, self.db.read)

    def release(self, user: str, key: Any, token: str, reason: str | None = None, note: str | None = None) -> None:
        """Give the item back to the pool (not served to this user again during the cool-down),
        with a note written with it if given (or if the queue requires one)."""
        key = self.q.coerce_key(key)
        note = self._note_for("release", note)
        writes = reason if reason in self.q.reason_writes else None  # a configured reason's own values
        shape = guarded.Shape.of("release", note=note is not None, reason_writes=writes)
        with self._refused_as_lost(key, token, user, "release"):
            row = self.writer.run(shape, key=key, token=token, user=user, reason=reason or None, note=note)
        if row is None:
            already = self.db.read(lambda conn: self.lost.released_by(conn, key, token, user))
            if not already:
                raise self._lost(key, token, user, "release")

    def defer(
        self, user: str, key: Any, token: str, until: dt.datetime, reason: str, note: str | None = None
    ) -> models.Deferral:
        """Give the item back until `until` (aware; a time still to come on the database's clock):
        nobody is served it before, then it comes first, to `user` alone for the queue's
        defer_owner_first. The release's values are written, the reason is required."""
        if not self.config.allow_defer:
            raise errors.UsageError(f"queue {self.name} does not let items be deferred (allow_defer = false)")
        key = self.q.coerce_key(key)
        reason = deferrals_mod.checked_reason(reason)
        deferrals_mod.checked_until(until, self.db_clock().utc.replace(tzinfo=dt.UTC))
        note = self._note_for("defer", note)
        shape = guarded.Shape.of("defer", note=note is not None)
        with self._refused_as_lost(key, token, user, "defer"):
            row = self.writer.run(shape, key=key, token=token, user=user, reason=reason, note=note, until=until)
        if row is None:
            done = self.db.read(lambda conn: self.trail.last_for_token(conn, key, token))
            if done is None or done.kind != models.EventKind.DEFER or done.actor != user:
                raise self._lost(key, token, user, "defer")
            # The same defer again (a retry after a lost reply): it stands as first made.
        deferral = self.db.read(lambda conn: self._deferrals().of_item(conn, key))
        assert deferral is not None
        return deferral

    def escalate(self, user: str, key: Any, token: str, reason: str) -> None:
        """Hand the item `user` holds to a supervisor, saying why (required): the lock is cleared and
        the queue's on_escalate values take it out of todo (core/workflow.py's escalate)."""
        reason = workflow.reason_given("escalate", reason)
        if not self.q.on_escalate:  # Check.ON_ESCALATE_SET
            raise errors.UsageError.of(problems.ESCALATE_NOT_SET, self.name, self.name)
        key = self.q.coerce_key(key)
        shape = guarded.Shape.of("escalate")
        with self._refused_as_lost(key, token, user, "escalate"):
            row = self.writer.run(shape, key=key, token=token, user=user, reason=reason)
        if row is None:
            done = self.db.read(lambda conn: self.trail.last_for_token(conn, key, token))
            if done is None or done.kind != models.EventKind.ESCALATE or done.actor != user:
                raise self._lost(key, token, user, "escalate")
            # The same escalate again (a retry after a lost reply): it stands as first made.

    def _note_for(self, transition: str, note: str | None, outcome: str | None = None) -> str | None:
        """The note to write with `transition` (core/workflow.py: "release", "defer", "complete" with
        `outcome`): checked, or None when none was given; UsageError when the transition's note rule
        (the table's, and for a configured one the queue's notes_required) requires one."""
        if note is not None and note.strip():
            return notes_mod.checked(note)
        action = outcome if outcome is not None else transition
        if workflow.needs_text(workflow.TRANSITIONS[transition].note, lambda: self.config.needs_note(action)):
            what = f"a {action}" if outcome is None else f"Complete with outcome '{action}'"
            raise errors.UsageError.of(problems.NOTE_NEEDED, self.name, what)
        return None

    # -- notes ------------------------------------------------------------------------------

    def add_note(self, user: str, key: Any, text: str) -> models.Note:
        """Add a note to an item (anyone may; notes are never changed or removed)."""
        operator_text.check_user(user)
        key = self.q.coerce_key(key)
        text = notes_mod.checked(text)

        def exists(conn: sa.Connection) -> None:
            if conn.execute(sa.select(self.q.key).where(self.q.key == key)).first() is None:
                raise self.q.no_item(key)

        def write(conn: sa.Connection) -> models.Note:
            exists(conn)  # where a procedure writes it, too: said as by workbench's own (it checks it again)
            return self.acts.run(
                conn,
                writes.Act("note", user, (key,), {"text": text}),
                own=lambda: self._notebook().add(conn, key, user, text),
                answer=lambda rows: notes_mod.Notes.note(rows[0]),
            )

        return self.db.write(write)

    def extend(self, user: str, key: Any, token: str) -> models.Lock:
        """Push the expiry to now + lock duration (never past max_lock_duration from the claim)."""
        q = self.q
        key = q.coerce_key(key)
        extend_to = None
        if q.shape.extend_moves_time:
            extend_to = self.db.read(lambda conn: self._moved_lock_time(conn, key, token, user))
        shape = guarded.Shape.of("extend")
        with self._refused_as_lost(key, token, user, "extend"):
            row = self.writer.run(shape, key=key, token=token, user=user, extend_until=extend_to)
        if row is None:
            refused = self.db.read(lambda conn: permissions.login_mismatch(conn, q.table, user))
            if refused is not None:
                raise refused
            lock = self.check(user, key, token, "extend")  # raises LockLost if it is not ours any more
            # Still ours, and refused: the row left the queue's work (said as for Save and Complete),
            # or the extension is at its limit.
            left = self.db.read(
                lambda conn: (
                    self.lost.elsewhere(conn, key, "extend", holder=user) if self.lost.left_work(conn, key) else None
                )
            )
            if left is not None:
                raise left
            limit = q.config.max_lock_seconds
            raise errors.ExtendLimitReached(
                f"{self.name} {key}: the lock cannot be extended beyond {operator_text.when(lock.expires_at)}"
                + (
                    f"; this queue allows at most {operator_text.minutes(limit)} per lock"
                    if limit is not None
                    else "; the database clock is behind the lock's own time"
                )
            )
        return q.lock_from_row(row)

    def _moved_lock_time(self, conn: sa.Connection, key: Any, token: str, user: str) -> Any:
        """The new lock time for a table without an expiry column: now, capped by the original claim."""
        q = self.q
        now = conn.execute(sa.select(sa.type_coerce(q.now(), sa.DateTime(timezone=q.aware)))).scalar()
        assert now is not None
        if isinstance(now, str):
            now = dt.datetime.fromisoformat(now)
        result = now
        claim = self.trail.last_claim(conn, key) if q.config.max_lock_seconds is not None else None
        if claim is not None and claim.owner == user and claim.at is not None:
            claimed_at = claim.at if q.aware else claim.at.replace(tzinfo=None)
            if q.local_clock and not q.aware:  # the trail's UTC on the lock's clock (local, a zone)
                claimed_at = figures.read_clock(conn, q).from_utc(claimed_at)
            assert q.config.max_lock_seconds is not None
            latest = claimed_at + dt.timedelta(seconds=q.config.max_lock_seconds - q.config.lock_seconds)
            result = min(now, latest)
        return result.replace(microsecond=0) if q.whole_seconds else result

    @contextlib.contextmanager
    def _refused_as_lost(self, key: Any, token: str, user: str, doing: str) -> Iterator[None]:
        """A write under the caller's lock that the database refused (under `workbench grants` its own
        checks, which run after the fence: a lock that ran out between the two was refused there as "not
        permitted"): when the lock is no longer the caller's, that is what is said (LockLost, exit 4, as
        the fence says it); any other refusal passes unchanged."""
        try:
            yield
        except errors.NotPermitted as refused:
            if refused.template == problems.LOGIN_MISMATCH:
                raise  # another login than the user's: said as that, whatever became of the lock
            explained = self._lost(key, token, user, doing)
            # other_queue: the caller's own live lock, so the lock was not what the database refused.
            if isinstance(explained, errors.LockLost) and explained.cause != "other_queue":
                raise explained from None
            raise

    def _lost(self, key: Any, token: str, user: str, doing: str) -> errors.WorkbenchError:
        """Why a write under the lock (`doing`: "save", "complete", …) was refused."""
        return self.db.read(
            lambda conn: (
                permissions.login_mismatch(conn, self.q.table, user) or self.lost.explain(conn, key, token, user, doing)
            )
        )

    def db_clock(self) -> figures.Clock:
        """The database clock now: `.now` and `.today_start` on the queue's clock (e.g. for a period)."""
        return self.db.read(lambda conn: figures.read_clock(conn, self.q))
