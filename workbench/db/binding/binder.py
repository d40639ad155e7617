"""Configured table and column names and values resolved against the reflected table, failing with the config key."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import sqlalchemy as sa

from workbench.config import model
from workbench.core import errors
from workbench.db import values
from workbench.db.names import AmbiguousName, resolve_name


def _kind_of(value: Any) -> str:
    """What a TOML value is, in words."""
    for kind, words in (
        (bool, "true/false"),
        (int, "a number"),
        (float, "a number"),
        (dt.datetime, "a date-time"),
        (dt.date, "a date"),
        (dt.time, "a time"),
    ):
        if isinstance(value, kind):
            return words
    return f"a {type(value).__name__}"


class Binder:
    """Resolves configured names against the reflected table, failing with the config key."""

    def __init__(self, queue: model.QueueConfig, table: sa.Table, config_path: str) -> None:
        self.queue, self.table, self.path = queue, table, config_path

    def fail(self, key: str, problem: str) -> errors.ConfigError:
        return errors.ConfigError(problem, file=self.path, key=f"queues.{self.queue.name}.{key}")

    def key_of(self, full_key: str) -> str:
        """A config key without its `queues.NAME.` (what fail() takes)."""
        return full_key.split(f"queues.{self.queue.name}.", 1)[-1]

    def find(self, name: str, key: str) -> sa.Column[Any] | None:
        """The table's column `name` (see resolve_name); None when it has none."""
        try:
            found = resolve_name(name, (c.name for c in self.table.c))
        except AmbiguousName as exc:
            raise self.fail(key, f"column {exc}") from None
        return None if found is None else next(c for c in self.table.c if c.name == found)

    def column(self, name: str, key: str) -> sa.Column[Any]:
        column = self.find(name, key)
        if column is not None:
            return column
        names = [c.name for c in self.table.c]
        import difflib  # only for a hint in a message: no part of a command that works

        hint = difflib.get_close_matches(name, names, n=1)
        more = f"; did you mean '{hint[0]}'?" if hint else f" (columns: {', '.join(names)})"
        if key.startswith("lock"):
            more += f"; `workbench attach {self.queue.name}` prints the DDL that adds the lock columns"
        elif key == "order" and " " in name:
            more += '; an order term is "column", "column asc" or "column desc"'
        raise self.fail(key, f"column '{name}' is not in table {self.queue.table_label}{more}")

    def value(self, column: sa.Column[Any], raw: Any, key: str) -> Any:
        if isinstance(column.type, sa.String) and raw is not None and not isinstance(raw, str):
            # A number for a text column would match only its text form: a queue that looks empty.
            raise self.fail(
                self.key_of(key),
                f"{raw!r} is {_kind_of(raw)}, but column '{column.name}' holds text "
                f'({column.type}); write the value in quotes, e.g. "{raw}"',
            )
        try:
            return values.coerce(column, raw)
        except errors.InvalidValue as exc:
            raise self.fail(self.key_of(key), str(exc)) from None


_CLOCK_DEFAULT = re.compile(
    r"\b(now|current_timestamp|localtimestamp|current_date|getdate|getutcdate|sysdatetime|"
    r"sysutcdatetime|sysdatetimeoffset|utc_timestamp|clock_timestamp|statement_timestamp|"
    r"transaction_timestamp|datetime)\b",
    re.IGNORECASE,
)


def stamped_by_database(column: sa.Column[Any]) -> bool:
    """A date or time column whose default is the database's clock (when a row was made)."""
    default = column.server_default
    if not isinstance(column.type, (sa.DateTime, sa.Date)) or default is None:
        return False
    text = getattr(getattr(default, "arg", None), "text", getattr(default, "arg", ""))
    return bool(_CLOCK_DEFAULT.search(str(text)))
