"""An operator's undo of their own Complete: the item back to work under a fresh lock of theirs."""

from __future__ import annotations

import datetime as dt
from typing import Any

import sqlalchemy as sa

from workbench.core import errors, models, problems
from workbench.db import audit as audit_mod
from workbench.db import claims, connect, lockrules, mapping, operator_text, rowrules, writes
from workbench.db.figures import common as figures


class Undo:
    """workqueue.WorkQueue's undo_complete."""

    db: connect.Database
    q: mapping.BoundQueue
    trail: audit_mod.AuditTrail
    name: str
    acts: writes.Acts  # how the queue's operations other than its guarded writes run (WorkQueue.acts)

    def undo_complete(self, user: str, key: Any) -> models.Claim:
        """Take back one's own Complete within the queue's undo_within: the item gets the on_reopen
        values (its edits stay) and a fresh lock of `user`'s, as after a claim. Refused when anything
        happened to it since, or its outcome's values are not there any more."""
        operator_text.check_user(user)
        q = self.q
        if not q.on_reopen:
            raise errors.UsageError(
                f"queue {self.name} does not say how an item goes back to work: set "
                f"[queues.{self.name}.on_reopen] (undo writes those values)"
            )
        problem = q.shape.undo_problem()
        if problem is not None:
            raise errors.UsageError(
                f"undo is not available on queue {self.name}: {problem}; a supervisor can reopen the item"
            )
        key = q.coerce_key(key)
        # Where a procedure runs it (SQL Server under grants), it decides from the same rules (its trail and
        # row rules) and says why it refuses.
        return self.db.write(
            lambda conn: self.acts.run(
                conn,
                writes.Act("undo", user, (key,)),
                own=lambda: self._undo(conn, user, key),
                answer=lambda rows: claims.claim_of(q, rows[0]),
            )
        )

    def _undo(self, conn: sa.Connection, user: str, key: Any) -> models.Claim:
        q = self.q
        now = q.now()
        # The last event tells which Complete's values the row must still hold (and how a refusal is said).
        event = self.trail.last_event(conn, key)
        outcome = event.outcome if event is not None else None
        chosen = event is not None and (event.detail or {}).get("review") is not None  # the review's values too
        # The table's rules (db/rowrules.py, db/lockrules.py): the row finished, holding what this Complete
        # wrote, nobody holding it (COMPLETED_BY_CALLER, FREE); the trail's last event the caller's Complete, within
        # undo_within (LAST_OWN_COMPLETE, UNDO_WINDOW), read by the UPDATE itself.
        rule = rowrules.before(q, "undo", user=user, outcome=outcome, reviewed=chosen)
        history = rowrules.trail(q, "undo", self.trail.table, item=str(key), user=user, outcome=outcome)
        token = q.shape.new_token_value()
        values = {
            **q.writes(q.on_reopen, user, now),
            **q.lock_writes(user, now, token),
            **q.writes(q.on_claim, user, now),
        }
        free = lockrules.guard(q, "undo", now)  # the table's lock rule (FREE), on the row before
        where = [q.key == key, *rule.scope, free, *rule.state, *(() if history is None else (history,))]
        changed = conn.execute(sa.update(q.table).where(*where).values(values)).rowcount
        if changed != 1:
            raise self._undo_refused(conn, key, user, event)
        row = (
            conn.execute(
                sa.select(*claims.ClaimMethod.returned_columns(q, now)).where(q.key == key, q.shape.pinned(user, token))
            )
            .mappings()
            .one()
        )
        claimed = claims.Claimed(row=row, prev_owner=None, prev_token=None)
        if chosen and self.trail.to_review is not None:
            self.trail.to_review.withdraw(conn, key)  # nothing waits for review any more
        self.trail.write(
            conn,
            [
                self.trail.row(models.EventKind.UNDO, key, user, owner=user, outcome=outcome),
                *claims.ClaimMethod.audit_rows(q, self.trail, user, [claimed]),
            ],
        )
        return claims.claim_of(q, row)

    def _undo_refused(self, conn: sa.Connection, key: Any, user: str, event: models.Event | None) -> errors.UsageError:
        """Why the undo's UPDATE (which decided) refused, in the words of the rule that did, read from the
        item's last event: none, not the caller's Complete, too long ago, or the row changed since."""
        if event is None:
            return errors.UsageError.of(problems.UNDO_NOTHING, self.name, key)
        if event.kind != models.EventKind.COMPLETE or event.actor != user:
            return errors.UsageError.of(problems.UNDO_NOT_YOURS, self.name, key, event.kind.value, event.actor)
        limit = rowrules.window(self.q, "undo")
        age = (figures.read_clock(conn, self.q).utc.replace(tzinfo=dt.UTC) - event.at).total_seconds()
        if limit is not None and age > limit:
            return errors.UsageError.of(
                problems.UNDO_TOO_LATE, self.name, key, operator_text.minutes(round(age)), operator_text.minutes(limit)
            )
        return errors.UsageError.of(problems.UNDO_CHANGED, self.name, key)
