"""Frozen dataclasses that describe a parsed configuration: database, queues, filters, outcomes."""

from __future__ import annotations

import dataclasses
from typing import Any

from workbench.config import settings

# Filter operators a condition may use (the TOML spelling is the same).
OPERATORS = ("eq", "ne", "in", "not_in", "lt", "le", "gt", "ge", "null")
CLAIM_METHODS = settings.CLAIM_METHODS
CLOCKS = settings.CLOCKS
WIDGETS = settings.get(settings.FIELD, "widget").choices  # a config may ask for these; others follow the type

# Upper bounds of the duration settings, in seconds (README, "Keys").
MAX_SECONDS = settings.max_seconds()
_APP = {s.name: s.default for s in settings.APP}
# The defaults of [queues.NAME] (settings.QUEUE): a QueueConfig built without the loader keeps them too.
_QUEUE = {s.name: s.default for s in settings.QUEUE}


@dataclasses.dataclass(frozen=True)
class Condition:
    """One test on one column; a filter is a tuple of these, all of which must hold."""

    column: str
    op: str  # one of OPERATORS; for "null" the value is True (IS NULL) or False (IS NOT NULL)
    value: Any  # a constant, or a Relative (the database's time, the claiming user)
    key: str  # config key it came from, for error messages
    or_null: bool = False  # a NULL in the column passes too (`or_null = true`)

    @property
    def dynamic(self) -> bool:
        """Is the value known only when a statement runs (so no index condition can hold it)?"""
        return isinstance(self.value, Relative)


# What a condition's value may be besides a constant: `{ now = "-2h" }`, `{ user = true }`.
RELATIVE_KINDS = ("now", "user")
RELATIVE_OPERATORS = {"now": ("lt", "le", "gt", "ge"), "user": ("eq", "ne")}


@dataclasses.dataclass(frozen=True)
class Relative:
    """A condition's value known only when it runs: the database's time plus `seconds` (which may be
    negative), or the user who claims."""

    kind: str  # one of RELATIVE_KINDS
    seconds: int = 0


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
    # The clock of a lock time kept in the row: "utc", "local" or an IANA zone (None: [database] clock).
    clock: str | None = None


@dataclasses.dataclass(frozen=True)
class Outcome:
    """A named way to complete an item, and what it writes."""

    name: str
    label: str
    assignments: tuple[Assignment, ...]


@dataclasses.dataclass(frozen=True)
class ReleaseReason:
    """A reason Release offers, and what it writes besides on_release (e.g. "Needs level 2": tier = 2)."""

    label: str
    assignments: tuple[Assignment, ...]


@dataclasses.dataclass(frozen=True)
class Review:
    """`[queues.Q.review]`: completions of Q that the queue `by` reviews (four eyes)."""

    by: str  # the reviewing queue (same table and key)
    writes: tuple[Assignment, ...]  # what a Complete chosen for review writes after its outcome's values
    send_back: str  # the reviewing queue's outcome that sends an item back to Q
    outcomes: tuple[str, ...]  # Q's outcomes whose completions may be reviewed
    percent: int = 100  # share of those reviewed, chosen at random at Complete
    first_items: int = 0  # an operator's first N completions in Q are all reviewed
    key: str = ""  # config key, for error messages


@dataclasses.dataclass(frozen=True)
class LookupConfig:
    """`fields.COL.lookup`: the related table a column's value is a key of; None: from its foreign key."""

    key: str  # config key, for error messages
    table: str | None = None
    key_column: str | None = None
    display: str | None = None
    detail: str | None = None


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
    lookup: LookupConfig | None = None


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
    due: str | None = None  # a date or date-time column: when the item is due (overdue counts, time to due)
    summary: tuple[str, ...] = ()  # the columns that tell items apart in lists (empty: chosen by name and type)
    notes_required: tuple[str, ...] = ()  # "release" and outcome names whose action needs a note
    release_reasons: tuple[ReleaseReason, ...] = ()  # offered by Release, in order (empty: a built-in list)
    defer_owner_first_seconds: int = _QUEUE["defer_owner_first"]  # a due deferred item goes to its operator first
    allow_defer: bool = _QUEUE["allow_defer"]  # operators may defer; the claim then consults workbench_deferrals
    on_reopen: tuple[Assignment, ...] = ()  # what a supervisor's reopen writes (empty: reopen is refused)
    on_escalate: tuple[Assignment, ...] = ()  # what an operator's escalate writes (empty: escalate is refused)
    undo_within_seconds: int = _QUEUE["undo_within"]  # how long after a Complete its operator may undo it
    review: Review | None = None  # which completions another queue reviews
    # A review queue's labels from the queue it reviews (set by the loader), for columns it labels not itself.
    labels: dict[str, str] = dataclasses.field(default_factory=dict)
    filter_by: tuple[str, ...] = ()  # columns a claim may be narrowed to a value of
    audit_hidden: tuple[str, ...] = ()  # changed columns the audit records without their values
    serves: str | None = None  # a group: only its members are served this queue (None: everyone)
    escalate_to: str | None = None  # a group whose members take escalated items, as supervisors do (None: those only)
    source: str | None = None  # a column naming the item's source document (path, URL) or holding its text
    source_dir: str | None = None  # where relative source paths start (None: the config file's folder)

    def needs_note(self, action: str) -> bool:
        """Does `action` ("release", or an outcome's name) need a note?"""
        return action in self.notes_required

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
    # "transaction": through a transaction pooler (declared in settings.DATABASE); a default here,
    # so that a DatabaseConfig made in code (a connection profile's) needs no value.
    pooler: str = settings.default(settings.DATABASE, "pooler")


def relay_address(address: str) -> tuple[str, int]:
    """`[app] relay`'s "host:port" (IPv6 as "[::1]:7700") as (host, port); ValueError saying what to fix."""
    host, sep, port = address.strip().rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"expected host:port (e.g. relay.example.org:7700), got {address!r}")
    return host, int(port)


@dataclasses.dataclass(frozen=True)
class AppConfig:
    """`[app]`: how the operator window behaves for everyone using this config; seconds."""

    # The defaults and their meaning are declared in settings.APP.
    warn_before: int = _APP["warn_before"]
    check_every: int = _APP["check_every"]
    backstop_every: int = _APP["backstop_every"]  # the lock check's pace while the change feed is live
    auto_extend: bool = _APP["auto_extend"]
    next_after_complete: bool = _APP["next_after_complete"]
    retry_every: int = _APP["retry_every"]
    changes_every: int = _APP["changes_every"]
    board_every: int = _APP["board_every"]
    relay: str | None = _APP["relay"]  # host:port of the change relay (services/relay.py), or none
    listen: bool = _APP["listen"]  # no relay, PostgreSQL direct: windows wake on the database's notices
    counts_every: int = _APP["counts_every"]
    idle_after: int = _APP["idle_after"]


@dataclasses.dataclass(frozen=True)
class Config:
    path: str
    database: DatabaseConfig
    queues: dict[str, QueueConfig]
    app: AppConfig = AppConfig()

    def queue(self, name: str) -> QueueConfig:
        return self.queues[name]

    def reviewed_by(self, name: str) -> QueueConfig | None:
        """The queue whose completions queue `name` reviews (None: it reviews nothing)."""
        return next((q for q in self.queues.values() if q.review is not None and q.review.by == name), None)
