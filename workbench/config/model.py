"""Frozen dataclasses that describe a parsed configuration: database, queues, filters, outcomes."""

from __future__ import annotations

import dataclasses
from typing import Any

# Filter operators a condition may use (the TOML spelling is the same).
OPERATORS = ("eq", "ne", "in", "not_in", "lt", "le", "gt", "ge", "null")
CLAIM_METHODS = ("auto", "skip-locked", "select-skip-locked", "readpast", "immediate", "portable")
CLOCKS = ("utc", "local")
WIDGETS = ("text", "multiline", "choice")  # the ones a config may ask for; others follow the column type

# Upper bounds of the duration settings, in seconds (README, "Keys"). A lock time or expiry far in
# the future overflows some databases' date arithmetic (PostgreSQL: "timestamp out of range"), and a
# lock nobody can take over for weeks is a mistake, not a setting.
_DAY = 86400
MAX_SECONDS = {
    "lock_duration": 7 * _DAY, "max_lock_duration": 7 * _DAY, "release_cooldown": 30 * _DAY,
    "warn_before": _DAY, "check_every": _DAY, "retry_every": _DAY,
}


@dataclasses.dataclass(frozen=True)
class Condition:
    """One test on one column; a filter is a tuple of these, all of which must hold."""

    column: str
    op: str  # one of OPERATORS; for "null" the value is True (IS NULL) or False (IS NOT NULL)
    value: Any
    key: str  # config key it came from, for error messages


@dataclasses.dataclass(frozen=True)
class Assignment:
    """One column an action writes: a constant, the database time, the acting user, or NULL."""

    column: str
    kind: str  # "value", "now", "user" or "null"
    value: Any
    key: str


@dataclasses.dataclass(frozen=True)
class OrderTerm:
    column: str
    descending: bool


@dataclasses.dataclass(frozen=True)
class LockColumns:
    """Columns that hold the lock. `expires` and `token` may be absent (legacy tables).

    With `table` set, every lock lives in that separate lock table (shape 5) and the names are its
    columns; the queue's own table is only read, and written only by the workflow (and, with
    `claim_id`, in that one column of its own).
    """

    user: str
    time: str
    expires: str | None
    token: str | None
    table: str | None = None
    # Shape 6: the queue's own claim-id column (`Lock`, `process_uuid`), set to the lock's token by a
    # claim and cleared by a release (and by Complete unless keep_claim_id); time and expiry live in `table`.
    claim_id: str | None = None
    keep_claim_id: bool = False


@dataclasses.dataclass(frozen=True)
class Outcome:
    """A named way to complete an item, and what it writes."""

    name: str
    label: str
    assignments: tuple[Assignment, ...]


@dataclasses.dataclass(frozen=True)
class FieldConfig:
    """Form settings of one column, `[queues.Q.fields.COL]`; None and empty mean "from the column"."""

    key: str  # config key, for error messages
    label: str | None = None
    widget: str | None = None  # one of WIDGETS
    choices: tuple[Any, ...] = ()
    minimum: Any = None  # a number, date, date-time or time (ISO text is parsed by the loader)
    maximum: Any = None
    pattern: str | None = None  # a Python regular expression the whole text must match
    required: bool = False
    read_only: bool = False
    hidden: bool = False
    help: str | None = None


@dataclasses.dataclass(frozen=True)
class QueueConfig:
    name: str
    title: str
    table: str
    schema: str | None
    key: str
    order: tuple[OrderTerm, ...]
    lock: LockColumns
    lock_seconds: int
    max_lock_seconds: int | None  # cap on a lock's total life, extensions included
    max_locks_per_user: int  # 0 = no limit
    release_cooldown_seconds: int
    scope: tuple[Condition, ...]  # rows that belong to the queue at all
    todo: tuple[Condition, ...]  # rows that are work to do
    on_claim: tuple[Assignment, ...]
    on_release: tuple[Assignment, ...]
    outcomes: tuple[Outcome, ...]  # the first is the default
    read_only: tuple[str, ...]
    allow_pick: bool
    fields: dict[str, FieldConfig]  # per-column form settings and value rules, by column name
    created: str | None = None  # a date or date-time column: when the item arrived (for its waiting age)

    def outcome(self, name: str | None) -> Outcome:
        if name is None:
            return self.outcomes[0]
        for outcome in self.outcomes:
            if outcome.name == name:
                return outcome
        raise KeyError(name)

    @property
    def table_label(self) -> str:
        return f"{self.schema}.{self.table}" if self.schema else self.table


@dataclasses.dataclass(frozen=True)
class DatabaseConfig:
    url: str
    claim_method: str
    workbench_schema: str | None
    clock: str
    connect_timeout: int
    statement_timeout: int


@dataclasses.dataclass(frozen=True)
class AppConfig:
    """`[app]`: how the operator window behaves for everyone using this config; seconds."""

    warn_before: int = 120  # warn this long before a lock expires (as set, at most the whole lock)
    check_every: int = 15  # ask the database whether the lock still holds this often
    auto_extend: bool = True  # extend while the operator is typing or clicking in the form
    next_after_complete: bool = True  # open the next item right after Complete
    retry_every: int = 5  # try again this often while the database is unreachable


@dataclasses.dataclass(frozen=True)
class Config:
    path: str
    database: DatabaseConfig
    queues: dict[str, QueueConfig]
    app: AppConfig = AppConfig()

    def queue(self, name: str) -> QueueConfig:
        return self.queues[name]
