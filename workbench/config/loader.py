"""Read a workbench TOML file into a Config; every problem names the file, the key and the fix."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
import tomllib
import zoneinfo
from collections.abc import Set
from pathlib import Path
from typing import Any

from workbench.config import model, secrets, settings
from workbench.core import durations, errors

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]*$")

_TOP_KEYS = {"database", "queues", "app"}
_APP_KEYS = settings.names(settings.APP)
_DATABASE_KEYS = settings.names(settings.DATABASE)
_QUEUE_KEYS = settings.names(settings.QUEUE)
_LOCK_KEYS = settings.names(settings.LOCK)
_OUTCOME_KEYS = settings.names(settings.OUTCOME)
_FIELD_KEYS = settings.names(settings.FIELD)
_REVIEW_KEYS = settings.names(settings.REVIEW)
_LOOKUP_KEYS = settings.names(settings.LOOKUP)


class _Reader:
    """Walks the parsed TOML, tracking the file for error messages."""

    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, key: str, problem: str) -> errors.ConfigError:
        return errors.ConfigError(problem, file=self.path, key=key)

    def table(self, data: Any, key: str) -> dict[str, Any]:
        if not isinstance(data, dict):
            raise self.fail(key, f"expected a table ([{key}] or {{ … }}), got {_kind(data)}")
        return data

    def check_keys(self, data: dict[str, Any], allowed: Set[str], key: str) -> None:
        for name in data:
            if name not in allowed:
                import difflib  # only for a hint in a message: no part of a command that works

                hint = difflib.get_close_matches(name, sorted(allowed), n=1)
                suggestion = f"; did you mean '{hint[0]}'?" if hint else f"; allowed: {', '.join(sorted(allowed))}"
                raise self.fail(_join(key, name), f"unknown key{suggestion}")

    def string(
        self, data: dict[str, Any], name: str, key: str, *, required: bool = True, default: str | None = None
    ) -> str | None:
        if name not in data:
            if required:
                raise self.fail(_join(key, name), "is required")
            return default
        value = data[name]
        if not isinstance(value, str) or not value.strip():
            raise self.fail(_join(key, name), f"expected a non-empty string, got {_kind(value)}")
        return value.strip()

    def identifier(self, data: dict[str, Any], name: str, key: str, *, required: bool = True) -> str | None:
        value = self.string(data, name, key, required=required)
        if value is not None:
            _check_identifier(self, value, _join(key, name))
        return value

    def integer(
        self, data: dict[str, Any], name: str, key: str, default: int, *, minimum: int = 0, maximum: int | None = None
    ) -> int:
        value = data.get(name, default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(_join(key, name), f"expected a whole number, got {_kind(value)}")
        if value < minimum:
            raise self.fail(_join(key, name), f"must be at least {minimum}, got {value}")
        if maximum is not None and value > maximum:
            raise self.fail(_join(key, name), f"must be at most {maximum}, got {value}")
        return value

    def setting(self, data: dict[str, Any], setting: settings.Setting, key: str) -> Any:
        """The value of a scalar key as its declaration says: kind, default, bounds."""
        name, default = setting.name, setting.default
        if setting.kind == "duration":
            return self.duration(data, name, key, default, minimum=setting.minimum, maximum=setting.maximum)
        if setting.kind == "integer":
            return self.integer(data, name, key, default, minimum=setting.minimum, maximum=setting.maximum)
        if setting.kind == "boolean":
            return self.boolean(data, name, key, default)
        if setting.kind == "name":
            return self.identifier(data, name, key, required=setting.required)
        value = self.string(data, name, key, required=setting.required, default=None if setting.required else default)
        if setting.kind == "choice" and value is not None and value not in setting.choices:
            hint = f" ({setting.hint})" if setting.hint else ""
            raise self.fail(_join(key, name), f"must be one of {', '.join(setting.choices)}{hint}")
        return value

    def values(self, data: dict[str, Any], section: tuple[settings.Setting, ...], key: str) -> dict[str, Any]:
        """Every scalar key of a section, by name (structured keys are each read on their own)."""
        return {s.name: self.setting(data, s, key) for s in section if s.kind in settings.SCALAR_KINDS}

    def duration(
        self,
        data: dict[str, Any],
        name: str,
        key: str,
        default: int | None,
        *,
        minimum: int = 0,
        maximum: int | None = None,
    ) -> int | None:
        if name not in data:
            return default
        try:
            seconds = durations.parse_duration(data[name])
        except ValueError as exc:
            raise self.fail(_join(key, name), str(exc)) from None
        if seconds < minimum:
            raise self.fail(_join(key, name), f"must be at least {minimum} s")
        if maximum is not None and seconds > maximum:
            raise self.fail(
                _join(key, name),
                f"must be at most {durations.format_bound(maximum)} "
                f"({data[name]!r} is {durations.format_bound(seconds)})",
            )
        return seconds

    def boolean(self, data: dict[str, Any], name: str, key: str, default: bool) -> bool:
        value = data.get(name, default)
        if not isinstance(value, bool):
            raise self.fail(_join(key, name), f"expected true or false, got {_kind(value)}")
        return value


def _join(*parts: str) -> str:
    return ".".join(p for p in parts if p)


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    return f"{type(value).__name__} {value!r}"


def _check_identifier(reader: _Reader, value: str, key: str) -> None:
    # Names are checked again against the real table; this only rejects what no table could have.
    if (
        len(value) > 128
        or any(ord(c) < 32 for c in value)
        or '"' in value
        or "`" in value
        or "[" in value
        or "]" in value
    ):
        raise reader.fail(key, f"{value!r} is not a valid table or column name")


def load(path: str | Path, *, require_url: bool = True) -> model.Config:
    """Parse and check the config at `path` (structure only; names are checked against the database later).

    require_url=False: a connection profile supplies the database, so `database.url` may be absent.
    """
    path = Path(path)
    return parse(toml(_read(path), str(path)), str(path), base_dir=path.parent, require_url=require_url)


def _read(path: Path) -> str:
    try:
        return text_of(path.read_bytes(), str(path))
    except FileNotFoundError:
        raise errors.ConfigError("file not found; pass --config FILE or run `workbench demo`", file=str(path)) from None
    except OSError as exc:
        raise errors.ConfigError(f"cannot read: {exc.strerror}", file=str(path)) from None


def text_of(raw: bytes, label: str) -> str:
    """A TOML file's text: UTF-8, as TOML requires (an editor may have saved it as Latin-1 or UTF-16)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise errors.ConfigError(
            f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at line {line}, column {column}): save the file as UTF-8",
            file=label,
        ) from None


# How deep a TOML file may nest tables and lists: the deepest settings nest 6 levels (a queue's
# todo condition with a list: queues.Q.todo.COL.in[…]); deeper data is a mistake, and deep enough
# data exhausts Python's recursion (in tomllib, in comparing and printing it).
MAX_DEPTH = 16


def toml(text: str, label: str, hint: str = "") -> dict[str, Any]:
    """Parse TOML `text` (from the file or settings named `label`); `hint`: what to do when it is not TOML."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise errors.ConfigError(f"not valid TOML: {exc}{hint}", file=label) from None
    except RecursionError:
        raise errors.ConfigError(
            f"lists or tables nested too deeply (more than {MAX_DEPTH} levels): no setting "
            "nests like that; fix the brackets",
            file=label,
        ) from None
    _check_depth(data, label)
    return data


def _check_depth(data: dict[str, Any], label: str) -> None:
    """Refuse tables and lists nested deeper than MAX_DEPTH, naming where (without recursion of its own)."""
    stack: list[tuple[Any, str, int]] = [(data, "", 0)]
    while stack:
        value, key, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise errors.ConfigError(
                f"nested too deeply (more than {MAX_DEPTH} levels of tables and lists): no "
                "setting nests like that; fix the brackets or dotted keys",
                file=label,
                key=_short_key(key),
            )
        if isinstance(value, dict):
            stack.extend((v, _join(key, str(k)), depth + 1) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, f"{key}[{i}]", depth + 1) for i, v in enumerate(value))


def _short_key(key: str) -> str:
    return key if len(key) <= 80 else key[:77] + "..."


def parse(data: dict[str, Any], label: str, base_dir: Path | None = None, *, require_url: bool = True) -> model.Config:
    reader = _Reader(label)
    reader.check_keys(data, _TOP_KEYS, "")
    database = _parse_database(
        reader, reader.table(data.get("database"), "database") if "database" in data else {}, base_dir, require_url
    )
    queues, app = _parse_settings(reader, data)
    return model.Config(path=label, database=database, queues=queues, app=app)


def parse_text(text: str, label: str, database: model.DatabaseConfig) -> model.Config:
    """Parse published queue settings (`[app]` and `[queues.*]`, no `[database]`) into a Config.

    Args:
        text: the TOML text.
        label: names the settings in error messages, e.g. "published settings v3".
        database: the connection, from the user's own profile.
    """
    data = toml(text, label)
    reader = _Reader(label)
    if "database" in data:
        raise reader.fail(
            "database", "published settings must not contain [database]; the connection comes from each user's profile"
        )
    reader.check_keys(data, _TOP_KEYS - {"database"}, "")
    queues, app = _parse_settings(reader, data)
    return model.Config(path=label, database=database, queues=queues, app=app)


# A table header line, and one that opens `[database]` or one of its sub-tables (bare or quoted key).
_HEADER = re.compile(r"^\s*\[")
_DATABASE_HEADER = re.compile(r"""^\s*\[\[?\s*(database|"database"|'database')\s*[.\]]""")


def queue_settings_text(path: str | Path) -> str:
    """The text of the config file at `path` without its `[database]` table: the settings to publish.

    The whole file is checked first, as `load` does (`database.url` may be absent: it is not
    published). The table is cut out line by line, so every other line and comment stays as
    written, and the result is parsed again to prove that it holds exactly the same queues and
    `[app]`; anything else is refused.
    """
    path = Path(path)
    label = str(path)
    text = _read(path)
    data = toml(text, label)
    config = parse(data, label, base_dir=path.parent, require_url=False)
    kept, cut = _cut_database(text)
    refusal = errors.ConfigError(
        "cannot take the connection out of this file safely to publish the rest: write the database "
        "settings as one [database] table (a line `[database]`, then `url = …`), not as "
        "`database = { … }` or `database.url = …`",
        file=label,
        key="database",
    )
    body = "".join(kept)
    try:
        rest, removed = tomllib.loads(body), tomllib.loads("".join(cut))
        published = parse_text(body, label, config.database)
    except (tomllib.TOMLDecodeError, errors.ConfigError):
        raise refusal from None
    database = {"database": data["database"]} if "database" in data else {}
    if (
        removed != database
        or rest != {k: v for k, v in data.items() if k != "database"}
        or (published.queues, published.app) != (config.queues, config.app)
    ):
        raise refusal
    return body


def _cut_database(text: str) -> tuple[list[str], list[str]]:
    """Split `text` into its lines outside and inside `[database]` (and `[database.*]`) tables.

    Comment lines right above the header that ends a cut stay: they describe the next table.
    The caller proves the split by parsing both halves.
    """
    kept: list[str] = []
    cut: list[str] = []
    cutting = False
    for line in text.splitlines(keepends=True):
        if _HEADER.match(line):
            if _DATABASE_HEADER.match(line):
                cutting = True
            elif cutting:
                cutting = False
                comments: list[str] = []
                while cut and cut[-1].lstrip().startswith("#"):
                    comments.insert(0, cut.pop())
                kept.extend(comments)
        (cut if cutting else kept).append(line)
    return kept, cut


def _parse_settings(reader: _Reader, data: dict[str, Any]) -> tuple[dict[str, model.QueueConfig], model.AppConfig]:
    """`[queues.*]` and `[app]`: everything but the connection."""
    queues_data = reader.table(data.get("queues", {}), "queues")
    if not queues_data:
        raise reader.fail("queues", "define at least one queue, e.g. [queues.cases]")
    queues = {}
    for name, qdata in queues_data.items():
        key = f"queues.{name}"
        if not _NAME.match(name):
            raise reader.fail(key, "queue names use letters, digits, '_' and '-' and start with a letter")
        queues[name] = _parse_queue(reader, name, reader.table(qdata, key), key)
    _check_reviews(reader, queues)
    app = _parse_app(reader, reader.table(data["app"], "app") if "app" in data else {})
    return queues, app


def _parse_app(reader: _Reader, data: dict[str, Any]) -> model.AppConfig:
    reader.check_keys(data, _APP_KEYS, "app")
    values = reader.values(data, settings.APP, "app")
    relay = values.get("relay")
    if relay is not None:
        try:
            model.relay_address(relay)
        except ValueError as exc:
            raise reader.fail("app.relay", str(exc)) from None
    return model.AppConfig(**values)


def _parse_database(
    reader: _Reader, data: dict[str, Any], base_dir: Path | None, require_url: bool = True
) -> model.DatabaseConfig:
    reader.check_keys(data, _DATABASE_KEYS, "database")
    url = reader.string(data, "url", "database", required=require_url, default="")
    assert url is not None
    _refuse_password(reader, url)
    values = reader.values(
        {k: v for k, v in data.items() if k != "url"},
        tuple(s for s in settings.DATABASE if s.name != "url"),
        "database",
    )
    return model.DatabaseConfig(url=_resolve_sqlite_path(url, base_dir), **values)


def _refuse_password(reader: _Reader, url: str) -> None:
    """Passwords live in the OS keyring or the environment, never in a config file."""
    if secrets.password_in(url):
        raise reader.fail("database.url", f"must not contain a password; {secrets.KEYRING_HINT}")


def _resolve_sqlite_path(url: str, base_dir: Path | None) -> str:
    """Make a relative SQLite path relative to the config file, not the current directory."""
    prefix = next((p for p in ("sqlite:///", "sqlite+pysqlite:///") if url.startswith(p)), None)
    if prefix is None or base_dir is None:
        return url
    rest = url[len(prefix) :]
    path_part, sep, query = rest.partition("?")
    if not path_part or path_part == ":memory:" or Path(path_part).is_absolute():
        return url
    return prefix + str((base_dir / path_part).resolve()) + sep + query


def _parse_queue(reader: _Reader, name: str, data: dict[str, Any], key: str) -> model.QueueConfig:
    reader.check_keys(data, _QUEUE_KEYS, key)
    values = reader.values(data, settings.QUEUE, key)
    lock = _parse_lock(reader, reader.table(data.get("lock"), f"{key}.lock") if "lock" in data else None, f"{key}.lock")
    lock_seconds, max_lock = values["lock_duration"], values["max_lock_duration"]
    if max_lock is not None and max_lock < lock_seconds:
        raise reader.fail(f"{key}.max_lock_duration", "must not be shorter than lock_duration")
    todo = _parse_filter(reader, data.get("todo"), f"{key}.todo", required=True)
    scope = _parse_filter(reader, data.get("scope", {}), f"{key}.scope", required=False)
    outcomes = _parse_outcomes(reader, data.get("outcomes"), f"{key}.outcomes")
    read_only, summary, filter_by, audit_hidden = (
        _column_names(reader, data, name, key) for name in ("read_only", "summary", "filter_by", "audit_hidden")
    )
    fields = _parse_fields(reader, data.get("fields", {}), f"{key}.fields")
    notes_required = _notes_required(reader, data, outcomes, key)
    release_reasons = _parse_release_reasons(reader, data.get("release_reasons", {}), f"{key}.release_reasons")
    return model.QueueConfig(
        name=name,
        title=values["title"] or name.replace("_", " ").title() or name,
        table=values["table"],
        schema=values["schema"],
        key=values["key"],
        order=_parse_order(reader, data.get("order", []), f"{key}.order"),
        lock=lock,
        lock_seconds=lock_seconds,
        max_lock_seconds=max_lock,
        max_locks_per_user=values["max_locks_per_user"],
        release_cooldown_seconds=values["release_cooldown"],
        scope=scope,
        todo=todo,
        on_claim=_parse_assignments(reader, data.get("on_claim", {}), f"{key}.on_claim"),
        on_release=_parse_assignments(reader, data.get("on_release", {}), f"{key}.on_release"),
        outcomes=outcomes,
        read_only=read_only,
        summary=summary,
        allow_pick=values["allow_pick"],
        fields=fields,
        created=values["created"],
        due=values["due"],
        notes_required=notes_required,
        release_reasons=release_reasons,
        defer_owner_first_seconds=values["defer_owner_first"],
        allow_defer=values["allow_defer"],
        on_reopen=_parse_assignments(reader, data.get("on_reopen", {}), f"{key}.on_reopen"),
        on_escalate=_parse_assignments(reader, data.get("on_escalate", {}), f"{key}.on_escalate"),
        undo_within_seconds=values["undo_within"],
        review=_parse_review(reader, data["review"], outcomes, f"{key}.review") if "review" in data else None,
        filter_by=filter_by,
        audit_hidden=audit_hidden,
        serves=values["serves"],
        escalate_to=values["escalate_to"],
        source=values["source"],
        source_dir=values["source_dir"],
    )


def _parse_review(reader: _Reader, data: Any, outcomes: tuple[model.Outcome, ...], key: str) -> model.Review:
    """`[queues.Q.review]`; what it says about the reviewing queue is checked once every queue is read."""
    data = reader.table(data, key)
    reader.check_keys(data, _REVIEW_KEYS, key)
    values = reader.values(data, settings.REVIEW, key)
    writes = _required_writes(
        reader,
        data,
        key,
        'what a Complete chosen for review writes, e.g. set = { status = "to_review" }',
        ": the one the reviewing queue's todo reads",
    )
    names = [o.name for o in outcomes]
    chosen = data.get("outcomes", names)
    if not isinstance(chosen, list) or not chosen or not all(isinstance(n, str) for n in chosen):
        raise reader.fail(f"{key}.outcomes", f'expected a list of this queue\'s outcomes, e.g. ["{names[0]}"]')
    for name in chosen:
        if name not in names:
            raise reader.fail(
                f"{key}.outcomes", f"'{name}' is not an outcome of this queue; outcomes: {', '.join(names)}"
            )
    return model.Review(
        by=values["by"],
        writes=writes,
        send_back=values["send_back"],
        outcomes=tuple(dict.fromkeys(chosen)),
        percent=values["percent"],
        first_items=values["first_items"],
        key=key,
    )


def _check_reviews(reader: _Reader, queues: dict[str, model.QueueConfig]) -> None:
    """A review names another queue over the same table, reviewing nothing else, with the send-back outcome."""
    reviewers: dict[str, str] = {}
    for name, q in queues.items():
        review = q.review
        if review is None:
            continue
        by = queues.get(review.by)
        if by is None or review.by == name:
            raise reader.fail(
                f"{review.key}.by",
                f"'{review.by}' is not another queue of this config; queues: "
                f"{', '.join(n for n in queues if n != name)}",
            )
        # In any case: whether `tblWork` and `TBLWORK` are one table the database says (db/service.py).
        if (by.table.casefold(), by.schema, by.key.casefold()) != (q.table.casefold(), q.schema, q.key.casefold()):
            raise reader.fail(
                f"{review.key}.by",
                f"queue {review.by} works {by.table_label} by {by.key}; a review "
                f"queue works the same table by the same key ({q.table_label} by "
                f"{q.key})",
            )
        if by.review is not None:
            raise reader.fail(
                f"{review.key}.by", f"queue {review.by} is reviewed itself; a review of a review is not supported"
            )
        if review.by in reviewers:
            raise reader.fail(
                f"{review.key}.by",
                f"queue {review.by} reviews {reviewers[review.by]} already; one queue reviews one queue",
            )
        reviewers[review.by] = name
        outcomes = [o.name for o in by.outcomes]
        if review.send_back not in outcomes:
            raise reader.fail(
                f"{review.key}.send_back",
                f"'{review.send_back}' is not an outcome of queue {review.by}; its outcomes: {', '.join(outcomes)}",
            )
        if review.send_back not in by.notes_required:  # the operator learns why from the reviewer's note
            queues[review.by] = dataclasses.replace(by, notes_required=(*by.notes_required, review.send_back))
        # The reviewer reads the clerk's field labels, where the review queue names none of its own.
        labels = {column: field.label for column, field in q.fields.items() if field.label}
        if labels:
            queues[review.by] = dataclasses.replace(queues[review.by], labels=labels)


def _parse_release_reasons(reader: _Reader, data: Any, key: str) -> tuple[model.ReleaseReason, ...]:
    """`"REASON" = { COL = VALUE, … }` entries, in the file's order."""
    data = reader.table(data, key)
    reasons = []
    for label, writes in data.items():
        rkey = f'{key}."{label}"'
        if not label.strip() or label != label.strip() or len(label) > 200:
            raise reader.fail(
                rkey, "a reason is a short text without leading or trailing blanks (at most 200 characters)"
            )
        reasons.append(model.ReleaseReason(label, _parse_assignments(reader, writes, rkey)))
    return tuple(reasons)


def _notes_required(
    reader: _Reader, data: dict[str, Any], outcomes: tuple[model.Outcome, ...], key: str
) -> tuple[str, ...]:
    """The actions that need a note: `release`, `defer` and outcome names."""
    names = data.get("notes_required", [])
    allowed = ["release", "defer", *(o.name for o in outcomes)]
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise reader.fail(
            f"{key}.notes_required", f'expected a list of actions, e.g. ["release"] (actions: {", ".join(allowed)})'
        )
    for name in names:
        if name not in allowed:
            raise reader.fail(
                f"{key}.notes_required", f"'{name}' is not an action of this queue; actions: {', '.join(allowed)}"
            )
    return tuple(dict.fromkeys(names))


def _column_names(reader: _Reader, data: dict[str, Any], name: str, key: str) -> tuple[str, ...]:
    """A list of column names (checked against the table when the queue is bound)."""
    names = data.get(name, [])
    if not isinstance(names, list) or not all(isinstance(c, str) and c for c in names):
        raise reader.fail(f"{key}.{name}", "expected a list of column names")
    return tuple(names)


def _parse_fields(reader: _Reader, data: Any, key: str) -> dict[str, model.FieldConfig]:
    """`[queues.Q.fields.COL]` tables; the column names and value types are checked when the queue is bound."""
    result = {}
    for column, fdata in reader.table(data, key).items():
        fkey = f"{key}.{column}"
        _check_identifier(reader, column, fkey)
        fdata = reader.table(fdata, fkey)
        reader.check_keys(fdata, _FIELD_KEYS, fkey)
        values = reader.values(fdata, settings.FIELD_SCALARS, fkey)
        widget = values["widget"]
        choices = _choices(reader, fdata, fkey)
        if choices and widget not in (None, "choice"):
            raise reader.fail(f"{fkey}.widget", f'choices are shown as a choice; remove widget = "{widget}"')
        minimum, maximum = _bound(reader, fdata, "min", fkey), _bound(reader, fdata, "max", fkey)
        _check_range(reader, minimum, maximum, fkey)
        pattern = fdata.get("pattern")  # not stripped: spaces can be part of a regular expression
        if pattern is not None and (not isinstance(pattern, str) or not pattern):
            raise reader.fail(f"{fkey}.pattern", f"expected a non-empty string, got {_kind(pattern)}")
        if pattern is not None:
            try:
                re.compile(pattern)
            # A repetition past 4 billion overflows, groups nested a thousand deep exhaust the recursion.
            except (re.error, OverflowError, RecursionError) as exc:
                raise reader.fail(f"{fkey}.pattern", f"not a valid regular expression: {exc}") from None
        result[column] = model.FieldConfig(
            key=fkey,
            label=values["label"],
            widget="choice" if choices else widget,
            choices=choices,
            minimum=minimum,
            maximum=maximum,
            pattern=pattern,
            required=values["required"],
            read_only=values["read_only"],
            hidden=values["hidden"],
            help=values["help"],
            lookup=_parse_lookup(reader, fdata["lookup"], f"{fkey}.lookup") if "lookup" in fdata else None,
        )
    return result


def _parse_lookup(reader: _Reader, data: Any, key: str) -> model.LookupConfig:
    """`fields.COL.lookup`; its names are checked against the related table when the queue is bound."""
    data = reader.table(data, key)
    reader.check_keys(data, _LOOKUP_KEYS, key)
    values = reader.values(data, settings.LOOKUP, key)
    return model.LookupConfig(
        key=key, table=values["table"], key_column=values["key"], display=values["display"], detail=values["detail"]
    )


def _choices(reader: _Reader, data: dict[str, Any], key: str) -> tuple[Any, ...]:
    if "choices" not in data:
        return ()
    value = data["choices"]
    if not isinstance(value, list) or not value:
        raise reader.fail(f"{key}.choices", 'expected a non-empty list of values, e.g. ["EUR", "USD"]')
    for item in value:
        _scalar(reader, item, f"{key}.choices")
        if value.count(item) > 1:
            raise reader.fail(f"{key}.choices", f"lists {item!r} twice")
    return tuple(value)


def _bound(reader: _Reader, data: dict[str, Any], name: str, key: str) -> Any:
    """A min or max: a number, or a date, date-time or time (a TOML value or ISO text)."""
    if name not in data:
        return None
    value = data[name]
    if isinstance(value, (int, float, dt.date, dt.time)) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        if re.fullmatch(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*", value):
            # Without this, "12" would parse as the time 12:00.
            raise reader.fail(f"{key}.{name}", f"write a number without quotes: {name} = {value.strip()}")
        for parse in (dt.date.fromisoformat, dt.datetime.fromisoformat, dt.time.fromisoformat):
            try:
                return parse(value.strip())
            except ValueError:
                pass
    raise reader.fail(
        f"{key}.{name}",
        f'expected a number, a date or a date-time (e.g. 0, 2026-11-21 or "2026-11-21T08:00"), got {_kind(value)}',
    )


def _check_range(reader: _Reader, minimum: Any, maximum: Any, key: str) -> None:
    if minimum is None or maximum is None:
        return

    def family(value: Any) -> type:
        # datetime is a date subclass, but the two do not compare; numbers all compare.
        return next(t for t in (dt.datetime, dt.date, dt.time, object) if isinstance(value, t))

    low, high = minimum, maximum
    # A date and a date-time bound a date-time column alike (the date is its midnight).
    if {family(low), family(high)} == {dt.date, dt.datetime}:
        low, high = (v if isinstance(v, dt.datetime) else dt.datetime.combine(v, dt.time()) for v in (low, high))
    try:
        if family(low) is not family(high):
            raise TypeError
        reversed_ = low > high
    except TypeError:  # also: one date-time with a time zone, one without
        raise reader.fail(key, f"min ({minimum}) and max ({maximum}) must be the same kind of value") from None
    if reversed_:
        raise reader.fail(f"{key}.min", f"must not be greater than max ({minimum} > {maximum})")


def _parse_lock(reader: _Reader, data: dict[str, Any] | None, key: str) -> model.LockColumns:
    if data is None:
        return model.LockColumns(
            user="wb_locked_by", time="wb_locked_at", expires="wb_lock_expires", token="wb_lock_token"
        )
    reader.check_keys(data, _LOCK_KEYS, key)
    if "table" in data or "claim_id" in data:
        if "clock" in data:
            raise reader.fail(
                f"{key}.clock", "applies to a lock time in the queue's row; a lock table keeps workbench's own times"
            )
        return _parse_lock_table(reader, data, key)
    if "keep_claim_id" in data:
        raise reader.fail(f"{key}.keep_claim_id", "applies to a claim-id column only; set claim_id too")
    user = reader.identifier(data, "user", key)
    time = reader.identifier(data, "time", key)
    assert user is not None and time is not None
    columns = model.LockColumns(
        user=user,
        time=time,
        expires=reader.identifier(data, "expires", key, required=False),
        token=reader.identifier(data, "token", key, required=False),
        clock=_lock_clock(reader, data, key),
    )
    named = [c for c in (columns.user, columns.time, columns.expires, columns.token) if c]
    if len(set(named)) != len(named):
        raise reader.fail(key, "each lock column must be a different column")
    return columns


def _known_zone(name: str) -> bool:
    try:
        zoneinfo.ZoneInfo(name)
    except (ValueError, zoneinfo.ZoneInfoNotFoundError):
        return False
    return True


def _lock_clock(reader: _Reader, data: dict[str, Any], key: str) -> str | None:
    """`lock.clock`: utc, local or an IANA zone name (None: the database's clock setting)."""
    clock_name = reader.string(data, "clock", key, required=False)
    if clock_name is None or clock_name in settings.CLOCKS:
        return clock_name
    # A zone name goes into SQL nowhere (its offset is a bound number), but keep it to what zones look like.
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_+\-]*(/[A-Za-z0-9_+\-]+)*", clock_name) or not _known_zone(clock_name):
        raise reader.fail(
            f"{key}.clock",
            f"{clock_name!r} is not a clock: use `utc`, `local` (the database's local time) or an IANA time "
            "zone name such as `Europe/Berlin`",
        )
    return clock_name


def _parse_lock_table(reader: _Reader, data: dict[str, Any], key: str) -> model.LockColumns:
    """Shape 5: every lock in a separate table (workbench's own by default); the queue's table keeps
    none, or (shape 6) only a claim-id column that a claim sets to the lock's token."""
    table = reader.identifier(data, "table", key, required=False) or "workbench_locks"
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]{0,59}", table):
        # workbench creates this table (`workbench init`): a plain name every database takes unquoted.
        raise reader.fail(
            f"{key}.table",
            f"{table!r} is not a name workbench can give its lock table: use "
            'letters, digits and _ (starting with a letter, at most 60), e.g. "workbench_locks"',
        )
    named = sorted(set(data) & {"user", "time", "expires", "token"})
    if named:
        raise reader.fail(
            f"{key}.{named[0]}",
            f"a queue whose locks live in table '{table}' keeps no other lock "
            f"columns of its own; remove {', '.join(named)} (or remove `table` and `claim_id`)",
        )
    claim_id = reader.identifier(data, "claim_id", key, required=False)
    keep = reader.boolean(data, "keep_claim_id", key, False)
    if keep and claim_id is None:
        raise reader.fail(f"{key}.keep_claim_id", "applies to a claim-id column only; set claim_id too")
    return model.LockColumns(
        user="lock_user",
        time="locked_at",
        expires="expires_at",
        token="token",
        table=table,
        claim_id=claim_id,
        keep_claim_id=keep,
    )


def _parse_order(reader: _Reader, data: Any, key: str) -> tuple[model.OrderTerm, ...]:
    if isinstance(data, str):
        data = [data]
    if not isinstance(data, list):
        raise reader.fail(key, 'expected a list such as ["priority desc", "created_at"]')
    terms = []
    for i, item in enumerate(data):
        item_key = f"{key}[{i}]"
        if not isinstance(item, str):
            raise reader.fail(item_key, 'expected "column", "column asc" or "column desc"')
        column, descending = _order_term(item)
        if not column:
            raise reader.fail(item_key, f'{item!r}: write "column", "column asc" or "column desc"')
        _check_identifier(reader, column, item_key)
        terms.append(model.OrderTerm(column, descending))
    return tuple(terms)


def _order_term(item: str) -> tuple[str, bool]:
    """("due date desc") -> ("due date", True): a trailing asc/desc is the direction, the rest the column.

    Column names may hold spaces (customers' tables do); whether the column exists is checked
    against the table when the queue is bound, which then names the columns it has.
    """
    words = item.strip().rsplit(None, 1)
    if len(words) == 1 and words[0].lower() in ("asc", "desc"):
        return "", False  # a direction with no column: ["priority", "desc"] meant "priority desc"
    if len(words) == 2 and words[1].lower() in ("asc", "desc"):
        return words[0].strip(), words[1].lower() == "desc"
    return item.strip(), False


def _parse_filter(reader: _Reader, data: Any, key: str, *, required: bool) -> tuple[model.Condition, ...]:
    if data is None:
        raise reader.fail(key, 'is required: which rows are work to do, e.g. status = "open"')
    data = reader.table(data, key)
    if required and not data:
        raise reader.fail(key, 'needs at least one condition, e.g. status = "open"')
    conditions = []
    for column, spec in data.items():
        ckey = f"{key}.{column}"
        _check_identifier(reader, column, ckey)
        if isinstance(spec, dict):
            spec = dict(spec)
            or_null = spec.pop("or_null", False)
            if not isinstance(or_null, bool):
                raise reader.fail(f"{ckey}.or_null", "expected true (a NULL passes too) or false")
            if not spec:
                raise reader.fail(
                    ckey,
                    "empty condition"
                    + (
                        ": or_null needs a test to widen, e.g. { eq = { user = true }, or_null = true }"
                        if or_null
                        else ""
                    ),
                )
            for op, value in spec.items():
                if op not in model.OPERATORS:
                    import difflib  # only for a hint in a message: no part of a command that works

                    hint = difflib.get_close_matches(op, model.OPERATORS, n=1)
                    raise reader.fail(
                        f"{ckey}.{op}",
                        "unknown operator"
                        + (f"; did you mean '{hint[0]}'?" if hint else f"; use one of {', '.join(model.OPERATORS)}"),
                    )
                if or_null and op == "null":
                    raise reader.fail(f"{ckey}.or_null", "a `null` test already says what NULL does; remove or_null")
                condition = _condition(reader, column, op, value, f"{ckey}.{op}")
                conditions.append(dataclasses.replace(condition, or_null=or_null))
        elif isinstance(spec, list):
            conditions.append(_condition(reader, column, "in", spec, ckey))
        else:
            conditions.append(_condition(reader, column, "eq", spec, ckey))
    return tuple(conditions)


def _condition(reader: _Reader, column: str, op: str, value: Any, key: str) -> model.Condition:
    if isinstance(value, dict):
        return model.Condition(column, op, _relative(reader, op, value, key), key)
    if op in ("in", "not_in"):
        if not isinstance(value, list) or not value:
            raise reader.fail(key, "expected a non-empty list of values")
        for v in value:
            _scalar(reader, v, key)
        return model.Condition(column, op, tuple(value), key)
    if op == "null":
        if not isinstance(value, bool):
            raise reader.fail(key, "expected true (IS NULL) or false (IS NOT NULL)")
        return model.Condition(column, op, value, key)
    _scalar(reader, value, key)
    return model.Condition(column, op, value, key)


def _relative(reader: _Reader, op: str, value: dict[str, Any], key: str) -> model.Relative:
    """`{ now = true }`, `{ now = "-2h" }` (the database's time, moved) or `{ user = true }` (the claimer)."""
    example = '{ now = true }, { now = "-2h" }, { now = "+1d" } or { user = true }'
    if len(value) != 1 or next(iter(value)) not in model.RELATIVE_KINDS:
        raise reader.fail(key, f"a table value must be one of {example}")
    kind, raw = next(iter(value.items()))
    if op not in model.RELATIVE_OPERATORS[kind]:
        allowed = ", ".join(model.RELATIVE_OPERATORS[kind])
        raise reader.fail(key, f"{{ {kind} = … }} works with {allowed}, not with {op}")
    if kind == "user":
        if raw is not True:
            raise reader.fail(f"{key}.user", "expected true: { user = true } is the user who claims")
        return model.Relative("user")
    if raw is True:
        return model.Relative("now")
    if not isinstance(raw, str):
        raise reader.fail(f"{key}.now", 'expected true or a signed duration such as "-2h" or "+30m"')
    text = raw.strip()
    sign = -1 if text.startswith("-") else 1
    try:
        seconds = durations.parse_duration(text.lstrip("+-").strip())
    except ValueError as exc:
        raise reader.fail(f"{key}.now", f'{exc}; a sign moves it back ("-2h") or ahead ("+1d")') from None
    return model.Relative("now", sign * seconds)


def _scalar(reader: _Reader, value: Any, key: str) -> None:
    if isinstance(value, (dict, list)):
        raise reader.fail(key, f"expected a single value, got {_kind(value)}")


def _parse_assignments(reader: _Reader, data: Any, key: str) -> tuple[model.Assignment, ...]:
    data = reader.table(data, key)
    result = []
    for column, spec in data.items():
        ckey = f"{key}.{column}"
        _check_identifier(reader, column, ckey)
        if isinstance(spec, dict):
            if len(spec) != 1 or next(iter(spec)) not in ("now", "user", "null") or spec[next(iter(spec))] is not True:
                raise reader.fail(
                    ckey,
                    "a table value must be { now = true } (database time), "
                    "{ user = true } (the acting user) or { null = true }",
                )
            result.append(model.Assignment(column, next(iter(spec)), None, ckey))
        else:
            _scalar(reader, spec, ckey)
            result.append(model.Assignment(column, "value", spec, ckey))
    return tuple(result)


def _required_writes(
    reader: _Reader, data: dict[str, Any], key: str, what: str, which: str = ""
) -> tuple[model.Assignment, ...]:
    """A table's `set`: required, and writing at least one column."""
    if "set" not in data:
        raise reader.fail(f"{key}.set", f"is required: {what}")
    writes = _parse_assignments(reader, data["set"], f"{key}.set")
    if not writes:
        raise reader.fail(f"{key}.set", f"must write at least one column{which}")
    return writes


def _parse_outcomes(reader: _Reader, data: Any, key: str) -> tuple[model.Outcome, ...]:
    if data is None:
        raise reader.fail(
            key, 'is required: what Complete writes, e.g. [queues.NAME.outcomes.done] set = { status = "done" }'
        )
    data = reader.table(data, key)
    if not data:
        raise reader.fail(key, "define at least one outcome")
    outcomes = []
    for name, odata in data.items():
        okey = f"{key}.{name}"
        if not _NAME.match(name):
            raise reader.fail(okey, "outcome names use letters, digits, '_' and '-'")
        odata = reader.table(odata, okey)
        reader.check_keys(odata, _OUTCOME_KEYS, okey)
        assignments = _required_writes(
            reader, odata, okey, 'the columns Complete writes, e.g. set = { status = "done" }'
        )
        label = reader.string(odata, "label", okey, required=False, default=name.replace("_", " ").capitalize())
        outcomes.append(model.Outcome(name=name, label=label or name, assignments=assignments))
    return tuple(outcomes)
