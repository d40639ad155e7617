"""The lock board's fast paths build the same rows and times as the plain ones."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.test_fieldspec import bound, items_table
from workbench.core import models


def test_board_row_maker_builds_what_the_constructor_builds() -> None:
    at = dt.datetime(2026, 11, 23, 21, 19, 33, tzinfo=dt.UTC)
    fields = (
        "cases",
        7,
        "ann",
        at,
        at + dt.timedelta(minutes=15),
        at + dt.timedelta(minutes=5),
        at + dt.timedelta(minutes=1),
        2,
        {"subject": "Printer"},
        dt.date(2026, 11, 25),
    )
    made, plain = models.BoardRow.maker()(*fields), models.BoardRow(*fields)
    assert made == plain and made.to_dict() == plain.to_dict() and made.idle == plain.idle
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.owner = "bob"  # type: ignore[misc]


@pytest.mark.parametrize(
    "text",
    [
        "2026-11-23 21:19:33.863040",
        "2026-11-23T21:19:33",
        "2026-11-23 21:19",
        "2026-11-23",
        "2026-11-23 21:19:33+02:00",
        "2026-11-23T21:19:33Z",
        "not a time",
        None,
    ],
)
def test_the_boards_time_reader_reads_sqlite_text_as_the_lock_reader_does(tmp_path: Path, text: str | None) -> None:
    url = f"sqlite:///{tmp_path / 'items.db'}"
    engine = sa.create_engine(url)
    items_table(sa.MetaData()).create(engine)
    engine.dispose()
    q = bound(tmp_path, url)
    fast, plain = q.time_reader()(text), q._aware(text)
    assert fast == plain and fast.utcoffset() == plain.utcoffset()
    assert fast.tzinfo is not None or plain.tzinfo is None
