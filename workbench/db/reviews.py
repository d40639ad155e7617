"""Four eyes: completions chosen for review, kept in workbench_reviews with who did the work, so that
the reviewing queue's claim never serves an item to its doer, and the reviewer's verdict."""

from __future__ import annotations

import dataclasses
import datetime as dt
import random
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa

from workbench.config import model
from workbench.db import clock

ACCEPTED, SENT_BACK = "accepted", "sent_back"
SUPERSEDED = "superseded"  # chosen for review again before a verdict (e.g. reopened, done anew)
FIRST, SHARE = "first", "share"  # why a completion was chosen

# Finds one item's rows in workbench's tables from their item_key column (a comparison with the key
# as text, or a subquery over the statement's own UPDATE).
Matcher = Callable[[sa.ColumnElement[Any]], sa.ColumnElement[bool]]


def firsts(table: sa.Table, source: str, doer: Any) -> sa.Select[int]:
    """How many of `doer`'s completions in queue `source` went to review as one of their first items
    (Check.FIRST_ITEMS_REVIEWED: fewer than review.first_items, and the next one goes too): the
    engine's choice and PostgreSQL's check of a Complete ask it alike."""
    return sa.select(sa.func.count()).where(table.c.source == source, table.c.doer == doer, table.c.why == FIRST)


@dataclasses.dataclass(frozen=True)
class Verdicts:
    """How one operator's reviewed work fared in a period."""

    doer: str
    accepted: int
    sent_back: int


class Reviews:
    """The reviews of one pair of queues: `source`, whose completions are chosen, and `queue`, which
    reviews them. Writes run inside the caller's transaction (or are CTEs of its statement)."""

    def __init__(self, table: sa.Table, deferrals: sa.Table, review: model.Review, source: str) -> None:
        self.table, self.deferrals, self.review = table, deferrals, review
        self.queue, self.source = review.by, source

    # -- at Complete in the source queue ------------------------------------------------------------

    def choose(self, outcome: str, doer: str, read: Callable[[Callable[[sa.Connection], int]], int]) -> str | None:
        """Is `doer`'s Complete with `outcome` reviewed: FIRST (one of their first items), SHARE (drawn
        at random), or None. `read` runs a read on the database, needed only with `first_items`."""
        review = self.review
        if outcome not in review.outcomes:
            return None
        if review.first_items and read(lambda conn: self._firsts(conn, doer)) < review.first_items:
            return FIRST
        return SHARE if random.random() * 100 < review.percent else None  # sampling, not secrets

    def _firsts(self, conn: sa.Connection, doer: str) -> int:
        """How many of `doer`'s first items were chosen already (their index finds them; the audit
        trail has none by actor)."""
        return int(conn.execute(firsts(self.table, self.source, doer)).scalar() or 0)

    def open(self, conn: sa.Connection, key: Any, doer: str, why: str) -> None:
        """`doer` completed `key` and it waits for review: recorded, an older open review of it superseded."""
        text = str(key)
        for stmt in self.open_statements(
            lambda column: column == text, sa.literal(text), None, sa.literal(doer), sa.literal(why)
        ):
            conn.execute(stmt)

    def open_statements(
        self,
        matches: Matcher,
        key: sa.ColumnElement[Any],
        written: sa.FromClause | None,
        doer: sa.ColumnElement[Any],
        why: sa.ColumnElement[Any],
    ) -> list[sa.Executable]:
        """The writes of `open`: `matches(item_key)` finds the item's rows, `key` is its key as text, read
        from `written` (the statement's own UPDATE, or nothing)."""
        r = self.table
        row = sa.select(
            sa.literal(self.queue, literal_execute=True),
            key,
            sa.literal(self.source, literal_execute=True),
            doer,
            clock.db_now(),
            why,
        )
        return [
            self._supersede(matches),
            sa.insert(r).from_select(
                ["queue", "item_key", "source", "doer", "at", "why"],
                row.select_from(written) if written is not None else row,
            ),
        ]

    def withdraw(self, conn: sa.Connection, key: Any) -> None:
        """The Complete was undone: its review is no longer wanted."""
        text = str(key)
        conn.execute(self._supersede(lambda column: column == text))

    def withdraw_statement(self, key: sa.ColumnElement[Any]) -> sa.Update:
        """withdraw() as a statement, for the item `key` names (e.g. a procedure's variable)."""
        return self._supersede(lambda column: column == key)

    def _supersede(self, matches: Matcher) -> sa.Update:
        """The item's review still to come is no longer wanted (done anew, or undone)."""
        r = self.table
        return (
            sa.update(r)
            .where(r.c.queue == self.queue, matches(r.c.item_key), r.c.verdict.is_(None))
            .values(verdict=SUPERSEDED)
        )

    # -- at Complete in the reviewing queue -----------------------------------------------------------

    def verdict(self, outcome: str) -> str:
        return SENT_BACK if outcome == self.review.send_back else ACCEPTED

    def decide_statements(self, matches: Matcher, reviewer: sa.ColumnElement[Any], outcome: str) -> list[sa.Executable]:
        """The reviewer's verdict on the item `matches(item_key)` finds: its open review gets it; a
        sent-back item is deferred in the source queue to its doer, due at once, so that it is served
        to them first (for the source's defer_owner_first), then to anyone."""
        r, d = self.table, self.deferrals
        is_open = sa.and_(r.c.queue == self.queue, matches(r.c.item_key), r.c.verdict.is_(None))
        verdict = self.verdict(outcome)
        statements: list[sa.Executable] = []
        if verdict == SENT_BACK:
            statements += [
                sa.delete(d).where(d.c.queue == self.source, matches(d.c.item_key)),
                sa.insert(d).from_select(
                    ["queue", "item_key", "actor", "until", "at", "reason"],
                    sa.select(
                        sa.literal(self.source, literal_execute=True),
                        r.c.item_key,
                        r.c.doer,
                        clock.db_now(),
                        clock.db_now(),
                        sa.literal("sent back by review", literal_execute=True),
                    ).where(is_open),
                ),
            ]
        statements.append(
            sa.update(r)
            .where(is_open)
            .values(verdict=sa.literal(verdict, literal_execute=True), reviewer=reviewer, reviewed_at=clock.db_now())
        )
        return statements

    def decide(self, conn: sa.Connection, key: Any, reviewer: str, outcome: str) -> None:
        text = str(key)
        for stmt in self.decide_statements(lambda column: column == text, sa.literal(reviewer), outcome):
            conn.execute(stmt)

    # -- what the reviewing queue's claim asks --------------------------------------------------------

    def own_work(self, key: sa.ColumnElement[Any], user: Any) -> sa.ColumnElement[bool]:
        """Did `user` do the work on item `key` (the queue's key column) that waits for review here."""
        r = self.table
        return sa.exists().where(
            r.c.queue == self.queue,
            r.c.item_key == sa.cast(key, sa.String(200)),
            r.c.doer == user,
            r.c.verdict.is_(None),
        )

    # -- reads ---------------------------------------------------------------------------------------

    def open_review(self, conn: sa.Connection, key: Any) -> tuple[str, str] | None:
        """(doer, why) of the item's review still to come, or None."""
        r = self.table
        row = conn.execute(
            sa.select(r.c.doer, r.c.why)
            .where(r.c.queue == self.queue, r.c.item_key == str(key), r.c.verdict.is_(None))
            .order_by(r.c.id.desc())
            .limit(1)
        ).first()
        return (row[0], row[1]) if row else None

    def waiting_for(self, doer: Any) -> sa.Select[Any]:
        """A row while work of `doer` (a name, or a bound parameter) waits for review, which the claim will
        not serve them."""
        r = self.table
        return (
            sa.select(r.c.id)
            .where(r.c.source == self.source, r.c.doer == doer, r.c.queue == self.queue, r.c.verdict.is_(None))
            .limit(1)
        )

    def verdicts(self, conn: sa.Connection, since: dt.datetime, until: dt.datetime | None = None) -> list[Verdicts]:
        """Per operator of the source queue: their work reviewed in the period, accepted and sent back."""
        r = self.table
        when = [r.c.source == self.source, r.c.reviewed_at >= _naive(since)]
        if until is not None:
            when.append(r.c.reviewed_at < _naive(until))
        counts = (
            sa.select(r.c.doer, r.c.verdict, sa.func.count())
            .where(*when, r.c.verdict.in_([ACCEPTED, SENT_BACK]))
            .group_by(r.c.doer, r.c.verdict)
        )
        found: dict[str, dict[str, int]] = {}
        for doer, verdict, n in conn.execute(counts):
            found.setdefault(doer, {})[verdict] = int(n)
        return [Verdicts(doer, v.get(ACCEPTED, 0), v.get(SENT_BACK, 0)) for doer, v in sorted(found.items())]


def _naive(value: dt.datetime) -> dt.datetime:
    """As workbench's tables keep times: UTC without zone."""
    return value.astimezone(dt.UTC).replace(tzinfo=None) if value.tzinfo else value
