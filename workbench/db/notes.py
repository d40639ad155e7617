"""Notes on items: append-only text that anyone working a queue adds, kept in workbench_notes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa

from workbench.core import errors, models, problems
from workbench.db import clock

MAX_LENGTH = 4000  # characters: a hand-over note, not a document


def checked(text: Any) -> str:
    """A note's text as it is kept (surrounding blanks dropped), or UsageError saying what to fix."""
    if not isinstance(text, str) or not text.strip():
        raise errors.UsageError.of(problems.NOTE_EMPTY)
    kept: str = text.strip()
    if len(kept) > MAX_LENGTH:
        raise errors.UsageError.of(problems.NOTE_TOO_LONG, MAX_LENGTH, len(kept))
    return kept


class Notes:
    """The notes of one queue's items. Inserts run inside the caller's transaction; nothing here
    changes or deletes a note."""

    def __init__(self, table: sa.Table, queue: str) -> None:
        self.table, self.queue = table, queue
        self._insert = sa.insert(table).values(at=clock.db_now())

    def values(self, key: Any, author: str, text: str, kind: str | None = None) -> dict[str, Any]:
        return {"queue": self.queue, "item_key": str(key), "author": author, "kind": kind, "text": checked(text)}

    def add(self, conn: sa.Connection, key: Any, author: str, text: str, kind: str | None = None) -> models.Note:
        """Write a note; returns it as the database keeps it (its id and time)."""
        inserted = conn.execute(self._insert, self.values(key, author, text, kind)).inserted_primary_key
        assert inserted is not None
        new_id = inserted[0]
        row = conn.execute(sa.select(self.table).where(self.table.c.id == new_id)).mappings().one()
        return self.note(row)

    def of_item(self, conn: sa.Connection, key: Any) -> list[models.Note]:
        t = self.table
        stmt = sa.select(t).where(t.c.queue == self.queue, t.c.item_key == str(key)).order_by(t.c.id)
        return [self.note(row) for row in conn.execute(stmt).mappings()]

    @staticmethod
    def note(row: Mapping[Any, Any]) -> models.Note:
        return models.Note(
            id=int(row["id"]),
            queue=row["queue"],
            key=row["item_key"],
            author=row["author"],
            at=clock.stored_utc(row["at"]),
            text=row["text"],
            kind=row["kind"],
        )
