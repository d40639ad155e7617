"""What the edit form shows for each column, and the rules a value must pass (no Qt here).

Derived from the real column (type, length, nullability) and the queue's `[queues.Q.fields.COL]`
settings. The same rules are checked by the engine on Save and Complete, so the CLI and the GUI
refuse the same values with the same message; the GUI checks them first, at the field.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import re
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from workbench.config import model
from workbench.core import errors, problems

if TYPE_CHECKING:
    import sqlalchemy as sa

# SQLAlchemy is imported where a value is checked or a column read, not with this module: the window
# builds and paints its first screen from the config while SQLAlchemy loads off the GUI thread.

# Widget kinds a field can have.
KINDS = ("text", "multiline", "integer", "decimal", "float", "boolean", "date", "datetime", "time", "choice")


@dataclasses.dataclass(frozen=True)
class FieldSpec:
    """One column on the form."""

    name: str  # the column
    label: str
    kind: str  # one of KINDS
    read_only: bool  # shown, never editable (key, workflow and lock columns, read_only, fields.X.read_only)
    required: bool  # a value must be given (NOT NULL without default, or fields.X.required)
    max_length: int | None = None  # text: from the column type
    minimum: Any = None  # numbers, dates: fields.X.min
    maximum: Any = None  # fields.X.max
    pattern: str | None = None  # text: fields.X.pattern, a Python regular expression matched in full
    choices: tuple[Any, ...] = ()  # choice: fields.X.choices
    decimals: int | None = None  # decimal: scale of the column
    help: str | None = None  # fields.X.help, shown as a tooltip / under the field
    hidden: bool = False  # fields.X.hidden: not on the form at all
    # The related table the value is a key of (a foreign key or fields.X.lookup): the form shows a
    # picker searching it through the service; None: a plain field.
    lookup: str | None = None
    # How the engine types a value of the reflected column, exactly (precision, 16/64-bit integers):
    # the column stays with the engine, the form gets this. None in a spec built by hand, which then
    # types values by `kind`.
    typed: Callable[[Any], Any] | None = dataclasses.field(default=None, compare=False, repr=False)
    keeps_text: bool = True  # blank text is a value (a text column, not an ENUM): for text kinds


class Bound(Protocol):
    """What the form is derived from: a queue bound to its table (db/mapping.py's BoundQueue)."""

    name: str
    config: model.QueueConfig
    key: sa.Column[Any]
    table: sa.Table
    source_column: sa.Column[Any] | None
    specs: dict[str, FieldSpec]

    @property
    def lock_columns(self) -> list[sa.Column[Any]]: ...

    @property
    def editable(self) -> list[sa.Column[Any]]: ...


_MULTILINE_FROM = 256  # a text column this long or longer gets a multi-line editor
_ACRONYMS = {"id": "ID"}  # words a readable label spells differently


def field_specs(q: Bound) -> list[FieldSpec]:
    """The form of queue `q`: the key first, then the other columns in table order; no lock columns."""
    return list(q.specs.values())


def validate(spec: FieldSpec, raw: Any) -> Any:
    """`raw` (form text, a bool, a choice) as the typed value the column stores; InvalidValue "COL: what to fix"."""
    if spec.read_only:
        raise _fail(spec, problems.READ_ONLY)
    return check(spec, raw)


def check(spec: FieldSpec, raw: Any) -> Any:
    """The type and the rules of `spec`, without the read-only test (the engine reports that its own way)."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        if spec.required:
            raise _fail(spec, problems.REQUIRED)
        if not _keeps_text(spec):
            raw = None  # an empty number, date, flag or choice is no value (as the form sends it)
    value = _typed(spec, raw)
    if value is None or value == "":
        return value  # empty and allowed: no rule applies to nothing
    if spec.choices:
        value = _choice(spec, value)
    if spec.minimum is not None and _compare(value, spec.minimum) < 0:
        raise _fail(spec, problems.AT_LEAST, _show(spec.minimum))
    if spec.maximum is not None and _compare(value, spec.maximum) > 0:
        raise _fail(spec, problems.AT_MOST, _show(spec.maximum))
    if spec.pattern is not None and not re.fullmatch(spec.pattern, str(value)):
        if spec.help:  # the config's own words, shown as written
            raise errors.InvalidValue(f"{spec.name}: {spec.help}", column=spec.name)
        raise _fail(spec, problems.PATTERN, spec.pattern)
    return value


def _keeps_text(spec: FieldSpec) -> bool:
    """Is blank text a value of this field (a text column edited as text), rather than no value?"""
    return spec.kind in ("text", "multiline") and spec.keeps_text


def _fail(spec: FieldSpec, problem: str, *args: Any) -> errors.InvalidValue:
    return errors.InvalidValue.at(spec.name, problem, *args)


def _typed(spec: FieldSpec, raw: Any) -> Any:
    if spec.typed is not None:
        return spec.typed(raw)
    import sqlalchemy as sa

    return typer(sa.Column(spec.name, _type_of(spec), nullable=not spec.required), spec.kind)(raw)


def typer(column: sa.Column[Any], kind: str) -> Callable[[Any], Any]:
    """`raw` as `column` stores it (values.coerce), for a field of `kind`."""
    import sqlalchemy as sa

    from workbench.db import values

    if kind == "boolean" and not isinstance(column.type, sa.Boolean):
        # A flag kept in an integer column (MySQL TINYINT(1)): read yes/no/true/1 like a real boolean.
        column = sa.Column(column.name, sa.Boolean(), nullable=column.nullable)

    def typed(raw: Any) -> Any:
        return values.coerce(column, raw)

    return typed


def _type_of(spec: FieldSpec) -> sa.types.TypeEngine[Any]:
    """A column type for a spec built without a column."""
    import sqlalchemy as sa

    if spec.kind == "decimal":
        return sa.Numeric(38, spec.decimals) if spec.decimals is not None else sa.Numeric()
    simple = {
        "integer": sa.Integer,
        "float": sa.Float,
        "boolean": sa.Boolean,
        "date": sa.Date,
        "datetime": sa.DateTime,
        "time": sa.Time,
        "text": sa.String,
        "multiline": sa.String,
    }
    if spec.kind in simple:
        kind = simple[spec.kind]
        return kind(spec.max_length) if kind is sa.String else kind()
    return sa.types.NullType()  # a choice: the value is one of the (already typed) choices


def _choice(spec: FieldSpec, value: Any) -> Any:
    if value in spec.choices:
        return value
    # Typed by a spec without a column, "2" still picks the choice 2.
    same = [c for c in spec.choices if str(c) == str(value)]
    if spec.typed is None and len(same) == 1:
        return same[0]
    raise _fail(spec, problems.CHOICES, ", ".join(_show(c) for c in spec.choices))


def _compare(value: Any, bound: Any) -> int:
    if (
        isinstance(value, dt.datetime)
        and isinstance(bound, dt.datetime)
        and (value.tzinfo is None) != (bound.tzinfo is None)
    ):
        # One side with a time zone, one without: compare both as naive UTC.
        value, bound = (v.astimezone(dt.UTC).replace(tzinfo=None) if v.tzinfo else v for v in (value, bound))
    return int(value > bound) - int(value < bound)


def _show(value: Any) -> str:
    if isinstance(value, decimal.Decimal):
        return f"{value.normalize():f}"  # 0.00 -> 0, 1440 stays 1440
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat(sep=" ") if isinstance(value, dt.datetime) else value.isoformat()
    return str(value)


def label_of(name: str) -> str:
    """A column name made readable: "time_spent_min" -> "Time spent min", "invoiceNo" -> "Invoice no"."""
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).replace("_", " ").replace("-", " ").split()
    # Acronyms the name already spells in capitals stay so ("VAT_rate" -> "VAT rate").
    text = " ".join(_ACRONYMS.get(w.lower(), w if len(w) > 1 and w.isupper() else w.lower()) for w in words)
    return text[:1].upper() + text[1:] if text else name


def kind_of(column: sa.Column[Any]) -> tuple[str, dict[str, Any]]:
    """The widget kind the column's type calls for, and what goes with it (length, scale, values)."""
    import sqlalchemy as sa

    t = column.type
    # MySQL's TINYINT(1) is its boolean; a column reflected from MySQL has loaded its dialect already.
    mysql = sys.modules.get("sqlalchemy.dialects.mysql")
    if isinstance(t, sa.Boolean) or (mysql is not None and isinstance(t, mysql.TINYINT) and t.display_width == 1):
        return "boolean", {}
    if isinstance(t, sa.Enum):  # before String, which it extends
        return "choice", {"choices": tuple(t.enums)}
    if isinstance(t, sa.Integer):
        return "integer", {}
    if isinstance(t, sa.Float):  # before Numeric, which it extends up to SQLAlchemy 2.0
        return "float", {}
    if isinstance(t, sa.Numeric):
        if t.scale == 0:
            return "integer", {}
        return "decimal", {"decimals": t.scale}
    if isinstance(t, sa.DateTime):
        return "datetime", {}
    if isinstance(t, sa.Date):
        return "date", {}
    if isinstance(t, sa.Time):
        return "time", {}
    length = getattr(t, "length", None) if isinstance(t, sa.String) else None
    if isinstance(t, sa.Text) or (length is not None and length >= _MULTILINE_FROM):
        return "multiline", {"max_length": length}
    return "text", {"max_length": length}


def derive(
    q: Bound,
    fail: Callable[[str, str], errors.ConfigError],
    column_of: Callable[[str, str], sa.Column[Any]],
) -> dict[str, FieldSpec]:
    """Every column's spec, by name, checking the queue's `fields` settings against the real columns.

    `column_of(name, key)` resolves a configured column name; `fail(key, problem)` makes the
    config error (keys relative to the queue).
    """
    configured = {column_of(name, f"fields.{name}").name: field for name, field in q.config.fields.items()}
    lock_names = {c.name for c in q.lock_columns}
    editable = {c.name for c in q.editable}
    columns = [q.key, *(c for c in q.table.c if c is not q.key and c.name not in lock_names)]
    # The source column's document is shown beside the form; its path is not a field, unless configured.
    source = q.source_column.name if q.source_column is not None else None
    # A review queue: the reviewed queue's labels, for the columns it labels not itself.
    inherited = {column_of(name, f"fields.{name}").name: label for name, label in q.config.labels.items()}
    result = {}
    for column in columns:
        field = configured.get(column.name) or model.FieldConfig(
            key=f"queues.{q.name}.fields.{column.name}", hidden=column.name == source
        )
        if not field.label and column.name in inherited:
            field = dataclasses.replace(field, label=inherited[column.name])
        result[column.name] = _spec(column, field, column.name not in editable, fail)
    return result


def _spec(
    column: sa.Column[Any], field: model.FieldConfig, read_only: bool, fail: Callable[[str, str], errors.ConfigError]
) -> FieldSpec:
    import sqlalchemy as sa

    key = field.key.split(".", 2)[-1]  # "queues.Q.fields.COL" -> "fields.COL", as fail() wants it
    kind, extra = kind_of(column)
    if isinstance(column.type, (sa.LargeBinary, sa.PickleType)):
        read_only = True  # bytes have no form widget; values.coerce refuses them too
    choices = extra.pop("choices", ())
    if field.choices:
        choices = tuple(_config_value(column, c, f"{key}.choices", fail) for c in field.choices)
        for i, choice in enumerate(choices):
            if choice in choices[:i]:  # e.g. 1 and "1" for an integer column
                raise fail(f"{key}.choices", f"lists {_show(choice)} twice (as '{column.name}' stores it)")
    if field.widget == "choice" and not choices:
        raise fail(f"{key}.widget", "a choice needs choices = [...] (or an ENUM column)")
    if field.widget is not None:
        kind = field.widget
        extra.pop("decimals", None)
    if kind != "choice":
        choices = ()  # an ENUM shown as text: values.coerce still checks its values
    numeric_or_time = isinstance(column.type, (sa.Integer, sa.Numeric, sa.Float, sa.Date, sa.DateTime, sa.Time))
    bounds = []
    for name, bound in (("min", field.minimum), ("max", field.maximum)):
        if bound is not None and not numeric_or_time:
            raise fail(
                f"{key}.{name}", f"min and max apply to number, date and time columns; '{column.name}' is {column.type}"
            )
        bounds.append(None if bound is None else _config_value(column, bound, f"{key}.{name}", fail))
    if None not in bounds and _compare(bounds[0], bounds[1]) > 0:
        raise fail(f"{key}.min", f"must not be greater than max ({_show(bounds[0])} > {_show(bounds[1])})")
    if field.pattern is not None and not isinstance(column.type, (sa.String, sa.types.NullType)):
        raise fail(f"{key}.pattern", f"a pattern applies to text columns; '{column.name}' is {column.type}")
    derived_required = not column.nullable and column.server_default is None and column.computed is None
    return FieldSpec(
        name=column.name,
        label=field.label or label_of(column.name),
        kind=kind,
        read_only=read_only,
        required=not read_only and (field.required or derived_required),
        max_length=extra.get("max_length"),
        minimum=bounds[0],
        maximum=bounds[1],
        pattern=field.pattern,
        choices=choices,
        decimals=extra.get("decimals"),
        help=field.help,
        hidden=field.hidden,
        typed=typer(column, kind),
        keeps_text=isinstance(column.type, sa.String) and not isinstance(column.type, sa.Enum),
    )


def _config_value(column: sa.Column[Any], raw: Any, key: str, fail: Callable[[str, str], errors.ConfigError]) -> Any:
    """A value from the config as the column stores it, or a config error at `key`."""
    from workbench.db import values

    try:
        return values.coerce(column, raw)
    except errors.InvalidValue as exc:
        raise fail(key, str(exc).split(": ", 1)[-1]) from None
