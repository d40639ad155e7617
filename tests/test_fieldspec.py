"""Form fields: kinds and labels from the real columns, `fields` settings, and the value rules
that the form and the engine (Save, Complete) both enforce."""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

from workbench import demo, fieldspec
from workbench.config import loader
from workbench.core import errors
from workbench.db import backends, mapping, service
from workbench.db.binding import reflector
from workbench.demo import schema

D = decimal.Decimal

# -- a real SQLite table, a real config, a real BoundQueue ---------------------------------------


def items_table(metadata: sa.MetaData) -> sa.Table:
    """A table with one column of every kind the form knows, plus the workbench lock columns."""
    return sa.Table(
        "items",
        metadata,
        sa.Column("item_id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("title", sa.String(40), nullable=False),  # NOT NULL, no default: required
        sa.Column("flag", sa.Boolean, nullable=False, server_default=sa.text("0")),  # has a default
        sa.Column("active", sa.Boolean),
        sa.Column("count", sa.Integer),
        sa.Column("whole", sa.Numeric(10, 0)),
        sa.Column("amount", sa.Numeric(12, 2)),
        sa.Column("ratio", sa.Float),
        sa.Column("seen_at", sa.DateTime),
        sa.Column("due_on", sa.Date),
        sa.Column("opens", sa.Time),
        sa.Column("code", sa.String(40)),
        sa.Column("summary", sa.String(300)),
        sa.Column("body", sa.Text),
        sa.Column("created", sa.String(30)),
        sa.Column("invoiceNo", sa.String(20)),
        *schema.lock_columns(),
    )


QUEUE = """
[database]
url = "{url}"

[queues.items]
table = "items"
key = "item_id"
read_only = {read_only}
todo = {{ status = "new" }}
outcomes.done.set = {{ status = "done" }}
{fields}
"""


@pytest.fixture
def db_url(tmp_path: Path) -> Iterator[str]:
    url = f"sqlite:///{tmp_path / 'items.db'}"
    engine = sa.create_engine(url)
    items_table(sa.MetaData()).create(engine)
    engine.dispose()
    return url


def bound(tmp_path: Path, url: str, fields: str = "", read_only: str = '["created"]') -> mapping.BoundQueue:
    """Load a config with `fields` through the real loader and bind it to the real table."""
    path = tmp_path / "workbench.toml"
    path.write_text(QUEUE.format(url=url, fields=fields, read_only=read_only), encoding="utf-8")
    config = loader.load(path)
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            table = reflector.reflect_table(conn, config.queue("items"), config.path)
    finally:
        engine.dispose()
    return mapping.BoundQueue(
        config.queue("items"), table, config_path=config.path, backend=backends.for_dialect("sqlite"), local_clock=False
    )


@pytest.fixture
def q(tmp_path: Path, db_url: str) -> mapping.BoundQueue:
    return bound(
        tmp_path,
        db_url,
        """
[queues.items.fields.count]
min = 0
max = 10

[queues.items.fields.amount]
label = "Amount (EUR)"
min = 0
max = 1000.5

[queues.items.fields.due_on]
min = 2026-01-01
max = "2026-12-31"

[queues.items.fields.seen_at]
min = "2026-01-01T08:00"
max = 2026-01-31T18:00:00

[queues.items.fields.opens]
min = 08:00:00
max = "18:30"

[queues.items.fields.ratio]
min = -1.5
max = 1.5

[queues.items.fields.code]
pattern = "[A-Z]{2}[0-9]+"
help = "two capitals and digits, such as AB12"

[queues.items.fields.summary]
pattern = "[a-z ]+"

[queues.items.fields.whole]
choices = [1, 2, 3]

[queues.items.fields.body]
hidden = true
required = true
""",
    )


def spec(q: mapping.BoundQueue, name: str) -> fieldspec.FieldSpec:
    return q.specs[name]


def refused(spec_: fieldspec.FieldSpec, raw: Any) -> str:
    """The message check() refuses `raw` with; also asserts the error names the column."""
    with pytest.raises(errors.InvalidValue) as info:
        fieldspec.check(spec_, raw)
    assert info.value.column == spec_.name
    assert info.value.exit_code == 5
    return str(info.value)


# -- kinds from column types ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "column_type, kind, extra",
    [
        (sa.Boolean(), "boolean", {}),
        (mysql.TINYINT(display_width=1), "boolean", {}),
        (mysql.TINYINT(display_width=4), "integer", {}),
        (mysql.TINYINT(), "integer", {}),
        (sa.Enum("low", "high", name="level"), "choice", {"choices": ("low", "high")}),
        (sa.Integer(), "integer", {}),
        (sa.SmallInteger(), "integer", {}),
        (sa.BigInteger(), "integer", {}),
        (sa.Float(), "float", {}),
        (sa.Double(), "float", {}),
        (sa.Numeric(10, 0), "integer", {}),
        (sa.Numeric(12, 2), "decimal", {"decimals": 2}),
        (sa.Numeric(), "decimal", {"decimals": None}),
        (sa.DateTime(), "datetime", {}),
        (sa.DateTime(timezone=True), "datetime", {}),
        (sa.Date(), "date", {}),
        (sa.Time(), "time", {}),
        (sa.String(40), "text", {"max_length": 40}),
        (sa.String(255), "text", {"max_length": 255}),
        (sa.String(), "text", {"max_length": None}),
        (sa.String(256), "multiline", {"max_length": 256}),
        (sa.String(300), "multiline", {"max_length": 300}),
        (sa.Text(), "multiline", {"max_length": None}),
        (sa.Unicode(20), "text", {"max_length": 20}),
        (sa.UnicodeText(), "multiline", {"max_length": None}),
    ],
)
def test_kind_of_column_type(column_type: sa.types.TypeEngine[Any], kind: str, extra: dict[str, Any]) -> None:
    assert fieldspec.kind_of(sa.Column("c", column_type)) == (kind, extra)


def test_kinds_of_a_reflected_sqlite_table(q: mapping.BoundQueue) -> None:
    kinds = {name: s.kind for name, s in q.specs.items()}
    assert kinds == {
        "item_id": "integer",
        "status": "text",
        "title": "text",
        "flag": "boolean",
        "active": "boolean",
        "count": "integer",
        "whole": "choice",
        "amount": "decimal",
        "ratio": "float",
        "seen_at": "datetime",
        "due_on": "date",
        "opens": "time",
        "code": "text",
        "summary": "multiline",
        "body": "multiline",
        "created": "text",
        "invoiceNo": "text",
    }
    assert (spec(q, "title").max_length, spec(q, "summary").max_length, spec(q, "body").max_length) == (40, 300, None)
    assert spec(q, "amount").decimals == 2


def test_form_lists_the_key_first_then_table_order_without_lock_columns(q: mapping.BoundQueue) -> None:
    names = [s.name for s in fieldspec.field_specs(q)]
    assert names[0] == "item_id"
    assert names == [c.name for c in items_table(sa.MetaData()).c if not c.name.startswith("wb_")]
    assert all(isinstance(s, fieldspec.FieldSpec) for s in fieldspec.field_specs(q))


def test_key_first_even_when_it_is_not_the_first_column(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'late.db'}"
    engine = sa.create_engine(url)
    md = sa.MetaData()
    sa.Table(
        "items",
        md,
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("note", sa.String(50)),
        sa.Column("item_id", sa.Integer, primary_key=True, autoincrement=False),
        *schema.lock_columns(),
    )
    md.create_all(engine)
    engine.dispose()
    q = bound(tmp_path, url, read_only="[]")
    assert [s.name for s in fieldspec.field_specs(q)] == ["item_id", "status", "note"]


# -- labels --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, label",
    [
        ("time_spent_min", "Time spent min"),
        ("invoiceNo", "Invoice no"),
        ("case_id", "Case ID"),
        ("id", "ID"),
        ("VAT_rate", "VAT rate"),
        ("IBAN", "IBAN"),
        ("customer", "Customer"),
        ("CUSTOMER_NAME", "CUSTOMER NAME"),
        ("order-no", "Order no"),
        ("__x__", "X"),
        ("line2_no", "Line2 no"),
    ],
)
def test_label_of(name: str, label: str) -> None:
    assert fieldspec.label_of(name) == label


def test_labels_come_from_the_config_or_the_column_name(q: mapping.BoundQueue) -> None:
    assert spec(q, "amount").label == "Amount (EUR)"
    assert spec(q, "invoiceNo").label == "Invoice no"
    assert spec(q, "item_id").label == "Item ID"


def test_demo_labels_help_and_widgets(tmp_path: Path) -> None:
    with service.Workbench.open(loader.load(demo.create(tmp_path / "demo"))) as wb:
        cases, imports = wb.queue("cases").q, wb.queue("imports").q
    assert spec(cases, "case_id").label == "Case" and spec(cases, "email").label == "E-mail"
    assert spec(cases, "time_spent_min").label == "Time spent (minutes)"
    assert spec(cases, "subject").label == "Subject"
    assert spec(cases, "description").kind == "multiline"
    assert spec(cases, "priority").help == "1 urgent, 2 high, 3 normal, 4 low"
    assert spec(imports, "iban").label == "IBAN" and spec(imports, "iban").kind == "text"
    assert spec(imports, "checker_note").kind == "multiline"  # String(500) and widget = "multiline"
    assert spec(imports, "paid").kind == "boolean"


# -- required and read-only ----------------------------------------------------------------------


def test_required_from_not_null_without_default(q: mapping.BoundQueue) -> None:
    assert spec(q, "title").required is True  # NOT NULL, no default
    assert spec(q, "flag").required is False  # NOT NULL with a server default
    assert spec(q, "active").required is False  # nullable
    assert spec(q, "code").required is False
    assert spec(q, "body").required is True  # fields.body.required on a nullable column


def test_read_only_columns(q: mapping.BoundQueue) -> None:
    read_only = {name for name, s in q.specs.items() if s.read_only}
    # The key, the workflow column (todo and outcomes write it) and `read_only = [...]`.
    assert read_only == {"item_id", "status", "created"}
    # A read-only column is never required, even when NOT NULL without a default.
    assert spec(q, "status").required is False and spec(q, "item_id").required is False


def test_read_only_from_fields_and_from_on_claim(tmp_path: Path, db_url: str) -> None:
    q = bound(
        tmp_path,
        db_url,
        "[queues.items.fields.title]\nread_only = true\n"
        "[queues.items.on_claim]\nactive = true\n"
        "[queues.items.on_release]\nactive = false\n",
    )
    assert spec(q, "title").read_only is True and spec(q, "title").required is False
    assert spec(q, "active").read_only is True
    assert spec(q, "code").read_only is False
    with pytest.raises(errors.InvalidValue, match="title: cannot be edited: it is read-only"):
        q.coerce_edits({"title": "New title"})


def test_demo_required_and_read_only(tmp_path: Path) -> None:
    with service.Workbench.open(loader.load(demo.create(tmp_path / "demo"))) as wb:
        cases, imports = wb.queue("cases").q, wb.queue("imports").q
    assert {n for n, s in cases.specs.items() if s.read_only} == {
        "case_id",
        "status",
        "opened_at",
        "customer",
        "email",
        "due_at",
    }
    assert {n for n, s in cases.specs.items() if s.required} == {"subject", "category", "priority"}
    assert {n for n, s in imports.specs.items() if s.required} == {"vendor", "invoice_no", "currency", "paid"}
    assert not any(name.startswith("wb_") for name in cases.specs)


def test_validate_refuses_read_only_but_check_does_not(q: mapping.BoundQueue) -> None:
    with pytest.raises(errors.InvalidValue) as info:
        fieldspec.validate(spec(q, "created"), "yesterday")
    assert str(info.value) == "created: cannot be edited" and info.value.column == "created"
    assert fieldspec.check(spec(q, "created"), "yesterday") == "yesterday"
    assert fieldspec.validate(spec(q, "code"), "AB1") == "AB1"


def test_binary_columns_are_read_only(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'bin.db'}"
    engine = sa.create_engine(url)
    md = sa.MetaData()
    sa.Table(
        "items",
        md,
        sa.Column("item_id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("scan", sa.LargeBinary, nullable=False),
        *schema.lock_columns(),
    )
    md.create_all(engine)
    engine.dispose()
    s = spec(bound(tmp_path, url, read_only="[]"), "scan")
    assert s.read_only is True and s.required is False


# -- required values -----------------------------------------------------------------------------


@pytest.mark.parametrize("raw", [None, "", "   ", "\t\n"])
def test_required_field_refuses_empty(q: mapping.BoundQueue, raw: Any) -> None:
    assert refused(spec(q, "title"), raw) == "title: required"
    assert refused(spec(q, "body"), raw) == "body: required"  # fields.body.required


@pytest.mark.parametrize("name", ["count", "amount", "ratio", "seen_at", "due_on", "opens", "active", "whole"])
@pytest.mark.parametrize("raw", [None, "", "  "])
def test_optional_non_text_field_takes_empty_as_no_value(q: mapping.BoundQueue, name: str, raw: Any) -> None:
    assert fieldspec.check(spec(q, name), raw) is None


def test_optional_text_field_keeps_empty_text(q: mapping.BoundQueue) -> None:
    # Text is text: the pattern does not apply to nothing, and "" is what was typed.
    assert fieldspec.check(spec(q, "code"), "") == ""
    assert fieldspec.check(spec(q, "code"), None) is None


def test_not_null_with_default_refuses_empty_as_the_column_would(q: mapping.BoundQueue) -> None:
    assert refused(spec(q, "flag"), None) == "flag: a value is required (the column does not allow empty values)"


def test_boolean_false_is_a_value_not_empty(q: mapping.BoundQueue) -> None:
    assert fieldspec.check(spec(q, "flag"), False) is False
    assert fieldspec.check(spec(q, "flag"), "no") is False


# -- types ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, raw, value",
    [
        ("count", "7", 7),
        ("count", " 7 ", 7),
        ("count", 7, 7),
        ("amount", "12.5", D("12.50")),
        ("amount", "0", D("0.00")),
        ("ratio", "0.25", 0.25),
        ("active", "yes", True),
        ("active", "0", False),
        ("active", True, True),
        ("seen_at", "2026-01-02 14:30", dt.datetime(2026, 1, 2, 14, 30)),
        ("due_on", "2026-11-21", dt.date(2026, 11, 21)),
        ("opens", "09:15", dt.time(9, 15)),
        ("title", "Printer on fire", "Printer on fire"),
    ],
)
def test_values_are_typed_as_the_column_stores_them(q: mapping.BoundQueue, name: str, raw: Any, value: Any) -> None:
    result = fieldspec.check(spec(q, name), raw)
    assert result == value and type(result) is type(value)


@pytest.mark.parametrize(
    "name, raw, message",
    [
        ("count", "soon", "count: 'soon' is not a whole number"),
        ("count", "2.5", "count: '2.5' is not a whole number"),
        ("whole", "1.5", "whole: 1.5 has more than 0 decimal places"),
        ("amount", "ten", "amount: 'ten' is not a number"),
        ("amount", "1.234", "amount: 1.234 has more than 2 decimal places"),
        ("amount", "nan", "amount: 'nan' is not a finite number"),
        ("ratio", "half", "ratio: 'half' is not a number"),
        ("active", "maybe", "active: 'maybe' is not true/false (use true, false, yes, no, 1 or 0)"),
        ("seen_at", "tomorrow", "seen_at: 'tomorrow' is not a date and time (use 2026-11-21 14:30)"),
        ("due_on", "2026-13-01", "due_on: '2026-13-01' is not a date (use 2026-11-21)"),
        ("opens", "25:00", "opens: '25:00' is not a time (use 14:30)"),
    ],
)
def test_wrong_type_messages(q: mapping.BoundQueue, name: str, raw: Any, message: str) -> None:
    assert refused(spec(q, name), raw) == message


def test_text_length(q: mapping.BoundQueue) -> None:
    assert fieldspec.check(spec(q, "title"), "x" * 40) == "x" * 40
    assert refused(spec(q, "title"), "x" * 41) == "title: at most 40 characters (41 given)"
    assert fieldspec.check(spec(q, "body"), "long " * 2000) == "long " * 2000  # TEXT: no limit


# -- min and max ---------------------------------------------------------------------------------


def test_bounds_are_typed_as_the_column(q: mapping.BoundQueue) -> None:
    assert (spec(q, "count").minimum, spec(q, "count").maximum) == (0, 10)
    amount = spec(q, "amount")
    assert (amount.minimum, amount.maximum) == (D("0.00"), D("1000.50"))
    assert isinstance(amount.minimum, D) and isinstance(amount.maximum, D)
    assert (spec(q, "due_on").minimum, spec(q, "due_on").maximum) == (dt.date(2026, 1, 1), dt.date(2026, 12, 31))
    assert spec(q, "seen_at").minimum == dt.datetime(2026, 1, 1, 8, 0)
    assert (spec(q, "opens").minimum, spec(q, "opens").maximum) == (dt.time(8, 0), dt.time(18, 30))


@pytest.mark.parametrize(
    "name, inside, below, above, low, high",
    [
        ("count", ["0", "5", "10"], "-1", "11", "0", "10"),
        ("amount", ["0", "0.01", "1000.50"], "-0.01", "1000.51", "0", "1000.5"),
        ("ratio", ["-1.5", "0", "1.5"], "-1.6", "1.51", "-1.5", "1.5"),
        ("due_on", ["2026-01-01", "2026-12-31"], "2025-12-31", "2027-01-01", "2026-01-01", "2026-12-31"),
        (
            "seen_at",
            ["2026-01-01 08:00", "2026-01-31 18:00"],
            "2026-01-01 07:59:59",
            "2026-01-31 18:00:01",
            "2026-01-01 08:00:00",
            "2026-01-31 18:00:00",
        ),
        ("opens", ["08:00", "18:30"], "07:59", "18:31", "08:00:00", "18:30:00"),
    ],
)
def test_min_and_max_are_inclusive(
    q: mapping.BoundQueue, name: str, inside: list[str], below: str, above: str, low: str, high: str
) -> None:
    s = spec(q, name)
    for raw in inside:
        fieldspec.check(s, raw)
    assert refused(s, below) == f"{name}: must be at least {low}"
    assert refused(s, above) == f"{name}: must be at most {high}"


def test_aware_date_time_is_compared_with_a_naive_bound_in_utc(q: mapping.BoundQueue) -> None:
    s = spec(q, "seen_at")  # min 2026-01-01 08:00
    fieldspec.check(s, "2026-01-01T09:30+01:00")  # 08:30 UTC
    assert refused(s, "2026-01-01T08:30+01:00") == "seen_at: must be at least 2026-01-01 08:00:00"  # 07:30 UTC


def test_type_is_checked_before_the_range(q: mapping.BoundQueue) -> None:
    assert refused(spec(q, "count"), "eleven") == "count: 'eleven' is not a whole number"


# -- pattern -------------------------------------------------------------------------------------


@pytest.mark.parametrize("raw", ["AB1", "ZZ0123456789"])
def test_pattern_accepts_a_full_match(q: mapping.BoundQueue, raw: str) -> None:
    assert fieldspec.check(spec(q, "code"), raw) == raw


@pytest.mark.parametrize("raw", ["ab1", "AB", "xAB1", "AB1x", "AB1\n", " AB1"])
def test_pattern_must_match_the_whole_value_and_says_the_help(q: mapping.BoundQueue, raw: str) -> None:
    assert refused(spec(q, "code"), raw) == "code: two capitals and digits, such as AB12"


def test_pattern_without_help_names_the_pattern(q: mapping.BoundQueue) -> None:
    assert fieldspec.check(spec(q, "summary"), "all lower case") == "all lower case"
    assert refused(spec(q, "summary"), "Not lower") == "summary: must match [a-z ]+"


def test_pattern_with_alternatives_matches_each_in_full(tmp_path: Path, db_url: str) -> None:
    q = bound(tmp_path, db_url, '[queues.items.fields.code]\npattern = "A|B[0-9]"\n')
    assert fieldspec.check(spec(q, "code"), "A") == "A"
    assert fieldspec.check(spec(q, "code"), "B7") == "B7"
    assert refused(spec(q, "code"), "AB7") == "code: must match A|B[0-9]"
    assert refused(spec(q, "code"), "A7") == "code: must match A|B[0-9]"


def test_pattern_keeps_its_spaces(tmp_path: Path, db_url: str) -> None:
    q = bound(tmp_path, db_url, '[queues.items.fields.code]\npattern = " +"\n')
    assert spec(q, "code").pattern == " +"
    assert fieldspec.check(spec(q, "code"), "   ") == "   "
    assert refused(spec(q, "code"), "x") == "code: must match  +"


# -- choices -------------------------------------------------------------------------------------


def test_choices_are_typed_and_text_picks_the_typed_choice(q: mapping.BoundQueue) -> None:
    s = spec(q, "whole")  # NUMERIC(10, 0) with choices = [1, 2, 3]
    assert s.kind == "choice" and s.choices == (D(1), D(2), D(3))
    assert fieldspec.check(s, "2") == D(2)
    assert fieldspec.check(s, 3) == D(3)
    assert refused(s, "4") == "whole: must be one of 1, 2, 3"
    assert refused(s, "two") == "whole: 'two' is not a number"


def test_integer_choices_of_the_demo(tmp_path: Path) -> None:
    with service.Workbench.open(loader.load(demo.create(tmp_path / "demo"))) as wb:
        cases, imports = wb.queue("cases").q, wb.queue("imports").q
    priority = spec(cases, "priority")
    assert priority.kind == "choice" and priority.choices == (1, 2, 3, 4) and priority.required
    assert fieldspec.check(priority, "2") == 2 and type(fieldspec.check(priority, "2")) is int
    assert refused(priority, "5") == "priority: must be one of 1, 2, 3, 4"
    assert refused(priority, "") == "priority: required"
    category = spec(cases, "category")
    assert category.choices == ("Hardware", "Software", "Network", "Access", "Email", "Printing")
    assert fieldspec.check(category, "Network") == "Network"
    assert refused(category, "network").startswith("category: must be one of Hardware, Software")
    assert refused(spec(imports, "currency"), "CHF") == "currency: must be one of EUR, USD, GBP, SEK"


def test_optional_choice_takes_empty_as_no_value(tmp_path: Path, db_url: str) -> None:
    q = bound(tmp_path, db_url, '[queues.items.fields.code]\nchoices = ["A", "B"]\n')
    assert spec(q, "code").kind == "choice"
    assert fieldspec.check(spec(q, "code"), "") is None
    assert fieldspec.check(spec(q, "code"), "B") == "B"
    assert refused(spec(q, "code"), "C") == "code: must be one of A, B"


def test_enum_column_is_a_choice_of_its_values() -> None:
    column = sa.Column("level", sa.Enum("low", "high", name="level"), nullable=True)
    kind, extra = fieldspec.kind_of(column)
    s = fieldspec.FieldSpec(
        name="level",
        label="Level",
        kind=kind,
        read_only=False,
        required=False,
        typed=fieldspec.typer(column, kind),
        **extra,
    )
    assert fieldspec.check(s, "high") == "high"
    assert fieldspec.check(s, "") is None  # the empty entry of an optional choice
    assert refused(s, "medium") == "level: 'medium' is not one of low, high"


def test_tinyint_1_flag_reads_yes_and_no() -> None:
    column = sa.Column("done", mysql.TINYINT(display_width=1), nullable=False)
    kind, _ = fieldspec.kind_of(column)
    s = fieldspec.FieldSpec(
        name="done", label="Done", kind=kind, read_only=False, required=True, typed=fieldspec.typer(column, kind)
    )
    assert (fieldspec.check(s, "yes"), fieldspec.check(s, "0"), fieldspec.check(s, 1)) == (True, False, True)
    assert refused(s, "2") == "done: '2' is not true/false (use true, false, yes, no, 1 or 0)"
    assert refused(s, "") == "done: required"


# -- specs built by hand (no column) -------------------------------------------------------------


def hand(kind: str, **kw: Any) -> fieldspec.FieldSpec:
    return fieldspec.FieldSpec(
        name="f", label="F", kind=kind, read_only=False, required=kw.pop("required", False), **kw
    )


def test_hand_built_specs_type_values_by_kind() -> None:
    assert fieldspec.check(hand("integer"), "12") == 12
    assert refused(hand("integer"), "x") == "f: 'x' is not a whole number"
    assert fieldspec.check(hand("decimal", decimals=2), "1.5") == D("1.50")
    assert refused(hand("decimal", decimals=2), "1.555") == "f: 1.555 has more than 2 decimal places"
    assert fieldspec.check(hand("date"), "2026-02-03") == dt.date(2026, 2, 3)
    assert fieldspec.check(hand("boolean"), "y") is True
    assert refused(hand("text", max_length=3), "abcd") == "f: at most 3 characters (4 given)"
    assert refused(hand("text", required=True), " ") == "f: required"
    assert fieldspec.check(hand("integer", minimum=1), "") is None


def test_hand_built_choice_picks_the_choice_from_text() -> None:
    s = hand("choice", choices=(1, 2, 3))
    assert fieldspec.check(s, "2") == 2 and fieldspec.check(s, 3) == 3
    assert refused(s, "9") == "f: must be one of 1, 2, 3"


def test_hand_built_range_and_pattern() -> None:
    s = hand("integer", minimum=1, maximum=5)
    assert refused(s, "0") == "f: must be at least 1" and refused(s, "6") == "f: must be at most 5"
    p = hand("text", pattern=r"\d{3}", help="three digits")
    assert fieldspec.check(p, "123") == "123" and refused(p, "1234") == "f: three digits"


# -- hidden --------------------------------------------------------------------------------------


def test_hidden_field_is_marked_and_its_rules_still_hold(q: mapping.BoundQueue) -> None:
    body = spec(q, "body")
    assert body.hidden is True and body in fieldspec.field_specs(q)
    assert [s.name for s in fieldspec.field_specs(q) if s.hidden] == ["body"]
    # Not on the form, but the engine still checks what the command line sends.
    with pytest.raises(errors.InvalidValue, match=r"^body: required$"):
        q.coerce_edits({"body": ""})


def test_config_details_reach_the_spec(q: mapping.BoundQueue) -> None:
    code = spec(q, "code")
    assert (code.pattern, code.help, code.hidden, code.read_only) == (
        "[A-Z]{2}[0-9]+",
        "two capitals and digits, such as AB12",
        False,
        False,
    )
    plain = spec(q, "invoiceNo")
    assert (plain.minimum, plain.maximum, plain.pattern, plain.choices, plain.help, plain.hidden) == (
        None,
        None,
        None,
        (),
        None,
        False,
    )


# -- the engine enforces the same rules ----------------------------------------------------------


def test_coerce_edits_types_valid_values(q: mapping.BoundQueue) -> None:
    assert q.coerce_edits({"count": "3", "code": "AB9", "whole": "2", "due_on": "2026-05-01"}) == {
        "count": 3,
        "code": "AB9",
        "whole": D(2),
        "due_on": dt.date(2026, 5, 1),
    }


@pytest.mark.parametrize(
    "edits, message",
    [
        ({"count": "11"}, "count: must be at most 10"),
        ({"code": "ab"}, "code: two capitals and digits, such as AB12"),
        ({"whole": "7"}, "whole: must be one of 1, 2, 3"),
        ({"title": ""}, "title: required"),
        ({"title": "x" * 41}, "title: at most 40 characters (41 given)"),
        ({"due_on": "2025-06-01"}, "due_on: must be at least 2026-01-01"),
        ({"count": "2", "amount": "-1"}, "amount: must be at least 0"),
    ],
)
def test_coerce_edits_refuses_what_the_form_refuses(q: mapping.BoundQueue, edits: dict[str, Any], message: str) -> None:
    with pytest.raises(errors.InvalidValue) as info:
        q.coerce_edits(edits)
    assert str(info.value) == message
    name = message.split(":")[0]
    form_message = None
    try:
        fieldspec.validate(spec(q, name), edits[name])
    except errors.InvalidValue as exc:
        form_message = str(exc)
    assert form_message == message  # the form's check says the same
