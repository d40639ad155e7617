"""Every config key declared once: name, kind, default, bounds and doc; the loader, the model, the
window and the docs' key tables (docs/reference/config.md) all read them from here."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from workbench.core import durations

_DAY = 86400


class _Required:
    """The default of a key that must be given."""

    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()

# What a key holds. The scalar kinds are read by the loader's Reader.setting; the structured ones
# (a table or a list with its own grammar) by the loader's own function for that key.
SCALAR_KINDS = ("duration", "integer", "boolean", "text", "name", "choice")
STRUCTURED_KINDS = (
    "order",
    "lock",
    "conditions",
    "assignments",
    "outcomes",
    "fields",
    "names",
    "bound",
    "pattern",
    "reasons",
    "review",
    "lookup",
)


@dataclasses.dataclass(frozen=True)
class Setting:
    """One key of a config section."""

    name: str
    kind: str  # one of SCALAR_KINDS or STRUCTURED_KINDS
    default: Any  # REQUIRED, None (absent: no value), or the value (durations: seconds)
    doc: str  # one line for the docs' key table
    shown_default: str | None = None  # the key table's default column, when the value does not say it
    minimum: int = 0  # integers and durations (seconds)
    maximum: int | None = None  # durations: seconds. A lock far in the future overflows some
    # databases' date arithmetic (PostgreSQL: "timestamp out of range"), and a lock nobody can take
    # over for weeks is a mistake, not a setting.
    choices: tuple[str, ...] = ()  # kind "choice"
    hint: str = ""  # said after "must be one of …" when a choice is refused

    def __post_init__(self) -> None:
        if self.kind not in SCALAR_KINDS + STRUCTURED_KINDS:
            raise ValueError(f"{self.name}: unknown kind {self.kind!r}")

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


CLAIM_METHODS = ("auto", "skip-locked", "select-skip-locked", "readpast", "immediate", "portable")
CLOCKS = ("utc", "local")
POOLERS = ("none", "transaction")

DATABASE: tuple[Setting, ...] = (
    Setting(
        "url",
        "text",
        REQUIRED,
        "SQLAlchemy URL without a password, e.g. `postgresql+psycopg://user@host/db`, `mssql+pyodbc://…`, "
        "`mariadb+pymysql://…`, `sqlite:///file.db` (relative to the config file)",
    ),
    Setting(
        "claim_method",
        "choice",
        "auto",
        "`auto`, `skip-locked`, `select-skip-locked`, `readpast`, "
        '`immediate` or `portable` (see "Databases and claim methods")',
        choices=CLAIM_METHODS,
    ),
    Setting("workbench_schema", "name", None, "schema for workbench's own tables", shown_default="connection default"),
    Setting(
        "clock",
        "choice",
        "utc",
        "`utc`: lock times in timestamp columns without time zone are UTC; `local`: the server's local time",
        choices=CLOCKS,
    ),
    # Bounded: PostgreSQL takes its timeouts in milliseconds as 32-bit numbers (24 days at most), and a
    # statement or connection wait of days is a mistake, not a setting.
    Setting(
        "connect_timeout", "integer", 10, "seconds to wait for a connection (at most an hour)", minimum=1, maximum=3600
    ),
    Setting(
        "statement_timeout", "integer", 30, "seconds one statement may take (at most a day)", minimum=1, maximum=86400
    ),
    Setting(
        "pooler",
        "choice",
        "none",
        "`transaction`: the connection goes through a pooler in transaction pooling (PgBouncer's "
        "`pool_mode = transaction`), so nothing is kept in a server session between transactions "
        '(see "PgBouncer"); `none`: a connection is one server session',
        choices=POOLERS,
    ),
)

APP: tuple[Setting, ...] = (
    Setting(
        "warn_before",
        "duration",
        120,
        "warn this long before a lock expires (as set; one longer than the lock warns at claim); at most a day",
        maximum=_DAY,
    ),
    Setting(
        "check_every",
        "duration",
        15,
        "check the lock with the database this often (and before every action); at most a day",
        minimum=1,
        maximum=_DAY,
    ),
    Setting(
        "backstop_every",
        "duration",
        60,
        "while the window's change feed is live (a relay or the database's notices wake it, or it reads the "
        "feed every changes_every), check the lock this often instead of check_every (never more often), and "
        "woken by a relay or notices look at the feed this often besides: what workbench does (a "
        "force-release, a reassign, a takeover) is said within the feed's time, a change made outside "
        "workbench (another program, SQL by hand) or one a relay failed to wake the window for within about "
        "this; at most a day",
        minimum=1,
        maximum=_DAY,
    ),
    Setting("auto_extend", "boolean", True, "extend the lock while the operator works in the form"),
    Setting(
        "next_after_complete",
        "boolean",
        True,
        "open the next item right after Complete (each user may change it in the View menu)",
    ),
    Setting(
        "retry_every",
        "duration",
        5,
        "while the database is unreachable: retry 1 s, 2 s, 4 s … apart, at most this; at most a day",
        minimum=1,
        maximum=_DAY,
    ),
    Setting(
        "changes_every",
        "duration",
        1,
        "look in the audit trail for changes to this window's items this often: a lock taken away or handed "
        "to the user is said within about this (0: only the lock check, check_every); at most a minute",
        maximum=60,
    ),
    Setting(
        "relay",
        "text",
        None,
        "host:port of the site's change relay (`workbench relay`): windows look in the audit trail only when it "
        "wakes them (and every backstop_every), not every changes_every (consoles look every changes_every and "
        "when woken), and take the start page's figures it reads for everyone every counts_every; unreachable, "
        "they poll and count as without it",
        shown_default="none",
    ),
    Setting(
        "listen",
        "boolean",
        True,
        "PostgreSQL reached directly (no transaction pooler) and no relay: each window waits on a connection of "
        "its own for the database's notice of a change to its items (LISTEN) and looks at once, and every "
        "backstop_every besides, not every changes_every; false: it polls (one connection fewer per window)",
    ),
    Setting(
        "board_every",
        "duration",
        60,
        "the supervisor's lock board is read whole again this often while the change feed keeps it current "
        "(claims and releases within changes_every; time left counts down on the console); without the feed, "
        "every refresh; at most a day",
        minimum=5,
        maximum=_DAY,
    ),
    Setting(
        "counts_every",
        "duration",
        30,
        "the start page counts waiting and overdue items again at most this often (0: every time); with a relay, "
        "the relay reads them this often for every window and sends them (a window reads them itself only when "
        "the relay's are older); at most a day",
        maximum=_DAY,
    ),
    Setting(
        "idle_after",
        "duration",
        30,
        "a window that asked nothing of the database this long closes its connections but one; at most a day",
        minimum=1,
        maximum=_DAY,
    ),
)

QUEUE: tuple[Setting, ...] = (
    Setting("table", "name", REQUIRED, "the table"),
    Setting("schema", "name", None, "the table's schema", shown_default="default schema"),
    Setting("key", "name", REQUIRED, "a unique column (primary key or unique index)"),
    Setting("title", "text", None, "shown to people", shown_default="the name"),
    Setting(
        "order",
        "order",
        (),
        '`["col", "col desc", …]` (a name may hold spaces: `"due date desc"`); the key is always the last tie-breaker',
        shown_default="key only",
    ),
    Setting(
        "lock_duration",
        "duration",
        30 * 60,
        "how long a claim holds (`90s`, `30m`, `1h30m`, `2d`, or seconds); at most 7 days",
        minimum=1,
        maximum=7 * _DAY,
    ),
    Setting(
        "max_lock_duration",
        "duration",
        None,
        "cap on a lock's total life, extensions included; not shorter than `lock_duration`; at most 7 days",
        minimum=1,
        maximum=7 * _DAY,
    ),
    Setting(
        "max_locks_per_user",
        "integer",
        0,
        "how many items one user may hold in this queue (at most 1000000)",
        shown_default="0 (no limit)",
        maximum=1_000_000,
    ),
    Setting(
        "release_cooldown",
        "duration",
        300,
        "a released item is not served to the same user again for this long; at most 30 days",
        maximum=30 * _DAY,
    ),
    Setting(
        "undo_within",
        "duration",
        120,
        "how long after a Complete its operator may take it back (`undo`; needs `on_reopen`); at most a day",
        maximum=_DAY,
    ),
    Setting(
        "defer_owner_first",
        "duration",
        15 * 60,
        "a deferred item, once its time has come, is served first: "
        "for this long only to the operator who deferred it, then to anyone; at most a day",
        maximum=_DAY,
    ),
    Setting(
        "release_reasons",
        "reasons",
        (),
        '`[…release_reasons]` `"REASON" = { COL = VALUE, … }`: the reasons '
        "Release offers, in this order, each writing its values besides `on_release` (`{}`: none); people may "
        "still type their own",
        shown_default="a built-in list",
    ),
    Setting(
        "notes_required",
        "names",
        (),
        "actions that need a note from the operator: `release`, `defer`, or an outcome's name (its Complete)",
    ),
    Setting(
        "due",
        "name",
        None,
        "a date/time column: when an item is due; the window shows the time to it "
        "and marks overdue items, `health` and the start page count them; ordering by it (`order = "
        '["due_at asc"]`) serves the most overdue first',
    ),
    Setting(
        "created",
        "name",
        None,
        "a date/time column: when the item arrived (the supervisor's \"oldest "
        'waiting"); `attach` adds it to the claim index',
    ),
    Setting(
        "audit_hidden",
        "names",
        (),
        "columns whose old and new values the audit trail does not keep when "
        "Save or Complete changes them (only that they changed), e.g. a bank account",
    ),
    Setting(
        "read_only",
        "names",
        (),
        "columns Save and Complete may not change (the key, lock and "
        "workflow columns never can; nor, unless their field is configured, the `created` column and "
        "date/time columns whose default is the database's clock)",
    ),
    Setting(
        "summary",
        "names",
        (),
        "the columns that tell items apart in lists: Pick, the resume panel, the lock board, `locks`",
        shown_default="up to three, chosen by name and type",
    ),
    Setting(
        "serves",
        "name",
        None,
        "a group: only its members are served this queue's items (`workbench group "
        "add USER GROUP`), e.g. level 2 or experienced clerks",
        shown_default="everyone",
    ),
    Setting(
        "escalate_to",
        "name",
        None,
        "a group: its members may take this queue's escalated items (`workbench take`, the supervisor "
        "console's Escalated tab), and so may supervisors (`workbench group add USER GROUP`, or members of "
        "the database role of that name on PostgreSQL and SQL Server), e.g. level 2",
        shown_default="the supervisors",
    ),
    Setting(
        "filter_by",
        "names",
        (),
        "columns a claimer may narrow Next item to a value of (`next QUEUE --where "
        "COL=VALUE`, the window's filter box), e.g. a message type: one queue serves every type",
    ),
    Setting(
        "source",
        "name",
        None,
        "a column holding the item's source: the path or http(s) URL of a PDF or "
        "image (the scanned document), or the source text itself; the window shows it beside the form",
    ),
    Setting(
        "source_dir",
        "text",
        None,
        "the folder relative paths in the `source` column start from",
        shown_default="the config file's folder",
    ),
    Setting("allow_pick", "boolean", True, "whether `claim QUEUE KEY` may pick a specific item"),
    Setting(
        "allow_defer",
        "boolean",
        True,
        "whether operators may defer items (`defer`); `false` also spares every claim its two deferral lookups",
    ),
    Setting(
        "lock",
        "lock",
        None,
        "`user`, `time` (required), `expires`, `token` (optional; text of at least "
        "32 characters, or the database's UUID type: PostgreSQL `uuid`, SQL Server `uniqueidentifier`, "
        "whose tokens are the UUID's text); or `table` alone: every lock in that separate lock table "
        "(shape 5); or `claim_id` (the table's claim-id column), optionally with `keep_claim_id` and "
        "`table` (shape 6)",
        shown_default="`wb_locked_by`, `wb_locked_at`, `wb_lock_expires`, `wb_lock_token`",
    ),
    Setting("scope", "conditions", (), "conditions for rows that belong to this queue at all (e.g. one message type)"),
    Setting("todo", "conditions", REQUIRED, "conditions for rows that are work to do"),
    Setting("on_claim", "assignments", (), "columns a claim writes"),
    Setting("on_release", "assignments", (), "columns a release (or expiry) writes"),
    Setting(
        "on_reopen",
        "assignments",
        (),
        "columns a supervisor's `reopen` writes to put a completed item back: "
        "every `todo` column to a waiting value (without it, reopen is refused)",
    ),
    Setting(
        "on_escalate",
        "assignments",
        (),
        "columns an operator's `escalate` writes to hand the item he holds to a supervisor: at least one "
        "`todo` column out of its waiting values, so that it is not served again (without it, escalate is refused)",
    ),
    Setting(
        "outcomes",
        "outcomes",
        REQUIRED,
        "`[…outcomes.NAME]`: `set = {…}` what Complete writes, `label`; the first outcome is the default",
    ),
    Setting(
        "fields",
        "fields",
        (),
        "`[…fields.COL]`: the form field of column COL and the rules Save and Complete enforce (keys below)",
        shown_default="from the column",
    ),
    Setting(
        "review",
        "review",
        None,
        "`[…review]`: a second pair of eyes: which completions another queue reviews (keys below)",
        shown_default="none",
    ),
)

REVIEW: tuple[Setting, ...] = (
    Setting(
        "by",
        "name",
        REQUIRED,
        "the queue that reviews this one's completions: another queue over the "
        "same table, whose `todo` matches what `set` writes",
    ),
    Setting(
        "set",
        "assignments",
        REQUIRED,
        'what a Complete chosen for review writes after its outcome\'s values, e.g. `{ status = "to_review" }`',
    ),
    Setting(
        "send_back",
        "name",
        REQUIRED,
        "the reviewing queue's outcome that sends an item back; it writes "
        "this queue's `todo` values again and needs a note. The item is served first to the operator "
        "who did it, for this queue's `defer_owner_first`, then to anyone",
    ),
    Setting("outcomes", "names", (), "the outcomes whose completions may be reviewed", shown_default="every outcome"),
    Setting(
        "percent",
        "integer",
        100,
        "the share of those completions reviewed, chosen at random at Complete (0–100)",
        maximum=100,
    ),
    Setting(
        "first_items",
        "integer",
        0,
        "every completion of an operator's first N items in this queue is "
        "reviewed, whatever `percent` says (at most 1000000)",
        maximum=1_000_000,
    ),
)

LOCK: tuple[Setting, ...] = (
    Setting(
        "user",
        "name",
        REQUIRED,
        "the column holding who has the lock",
        shown_default="required without `table` and `claim_id`",
    ),
    Setting(
        "time",
        "name",
        REQUIRED,
        "the column holding when the lock was taken",
        shown_default="required without `table` and `claim_id`",
    ),
    Setting("expires", "name", None, "the column holding when the lock runs out"),
    Setting("token", "name", None, "the column holding the lock's token"),
    Setting(
        "table",
        "name",
        None,
        "every lock in this separate table (shape 5)",
        shown_default="`workbench_locks` with `claim_id`",
    ),
    Setting("claim_id", "name", None, "the table's own claim-id column (shape 6)"),
    Setting("keep_claim_id", "boolean", False, "Complete leaves the claim id on the row"),
    Setting(
        "clock",
        "text",
        None,
        "the clock of the lock time in the row (shapes 1 and 2): `utc`, `local` (the database's local "
        "time) or an IANA zone name such as `Europe/Berlin`; every program that writes the lock columns "
        'must write this clock (see "Running beside the old program")',
        shown_default="`[database] clock`",
    ),
)

OUTCOME: tuple[Setting, ...] = (
    Setting("label", "text", None, "shown on the Complete button", shown_default="the name"),
    Setting("set", "assignments", (), "what Complete with this outcome writes"),
)

FIELD: tuple[Setting, ...] = (
    Setting("label", "text", None, "the field's label", shown_default="the column name"),
    Setting(
        "widget",
        "choice",
        None,
        "`text`, `multiline` or `choice` (other widgets follow the column type)",
        shown_default="from the column type",
        hint="other widgets follow the column type",
        choices=("text", "multiline", "choice"),
    ),
    Setting("choices", "names", (), "the values a choice offers"),
    Setting("min", "bound", None, "a number, or a date or date-time (TOML value or ISO text)"),
    Setting("max", "bound", None, "a number, or a date or date-time (TOML value or ISO text)"),
    Setting("pattern", "pattern", None, "a Python regular expression the whole text must match (spaces count)"),
    Setting("required", "boolean", False, "Save and Complete refuse it empty"),
    Setting("read_only", "boolean", False, "shown, not editable"),
    Setting("hidden", "boolean", False, "not on the form"),
    Setting("help", "text", None, "what is expected, in words (shown with the field's errors)"),
    Setting(
        "lookup",
        "lookup",
        None,
        "`{ table = …, display = … }`: the value is a row of another table, picked by its display column "
        "(keys below); a column with a foreign key is a lookup without it",
        shown_default="the column's foreign key",
    ),
)

LOOKUP: tuple[Setting, ...] = (
    Setting(
        "table",
        "name",
        None,
        "the related table the value is a key of",
        shown_default="the column's foreign key (required without one)",
    ),
    Setting("key", "name", None, "the related table's column the value is", shown_default="its primary key"),
    Setting("display", "name", None, "the column shown and searched", shown_default="its first text column"),
    Setting("detail", "name", None, "a second column shown beside it, to tell rows with one display apart"),
)


# The keys of a field table the loader reads as plain scalars (min, max, pattern and choices have rules of
# their own).
FIELD_SCALARS: tuple[Setting, ...] = tuple(s for s in FIELD if s.kind in SCALAR_KINDS)


def names(section: tuple[Setting, ...]) -> frozenset[str]:
    return frozenset(s.name for s in section)


def get(section: tuple[Setting, ...], name: str) -> Setting:
    return next(s for s in section if s.name == name)


def default(section: tuple[Setting, ...], name: str) -> Any:
    return get(section, name).default


def max_seconds() -> dict[str, int]:
    """The upper bound of every duration key, by name (lock times, warnings, retries)."""
    return {s.name: s.maximum for s in DATABASE + APP + QUEUE if s.kind == "duration" and s.maximum}


def shown_default(setting: Setting) -> str:
    """The default as the docs' key table writes it."""
    if setting.shown_default is not None:
        return setting.shown_default
    value = setting.default
    if value is REQUIRED:
        return "required"
    if value is None:
        return "none"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if setting.kind == "duration":
        return f"`{durations.format_setting(value)}`"
    if isinstance(value, tuple):
        return "`[]`" if setting.kind == "names" else "none"
    return f"`{value}`" if isinstance(value, str) else str(value)


_TABLE_KINDS = ("lock", "conditions", "assignments", "outcomes", "fields", "review", "lookup")


def markdown(section: tuple[Setting, ...]) -> str:
    """The docs' key table of one section (a key that is a TOML table is written `[…key]`)."""
    lines = ["| key | default | meaning |", "|---|---|---|"]
    for s in section:
        shown = f"`[…{s.name}]`" if s.kind in _TABLE_KINDS else f"`{s.name}`"
        lines.append(f"| {shown} | {shown_default(s)} | {s.doc} |")
    return "\n".join(lines)


# The key tables of docs/reference/config.md, each between `<!-- keys:NAME -->` and `<!-- /keys -->`.
SECTIONS: dict[str, tuple[Setting, ...]] = {
    "database": DATABASE,
    "app": APP,
    "queue": QUEUE,
    "lock": LOCK,
    "outcome": OUTCOME,
    "field": FIELD,
    "review": REVIEW,
    "lookup": LOOKUP,
}
_BLOCK = re.compile(r"(<!-- keys:(\w+) -->\n).*?(<!-- /keys -->)", re.DOTALL)


def render_key_tables(text: str) -> str:
    """`text` (a docs page) with every key table written anew from the declarations (docs/hooks.py does
    it at every build; tests/test_settings.py checks the copy kept in the page)."""
    return _BLOCK.sub(lambda m: f"{m.group(1)}{markdown(SECTIONS[m.group(2)])}\n{m.group(3)}", text)


if __name__ == "__main__":  # python -m workbench.config.settings docs/reference/config.md: rewrite its key tables
    import sys
    from pathlib import Path

    page = Path(sys.argv[1])
    page.write_text(render_key_tables(page.read_text(encoding="utf-8")), encoding="utf-8")
