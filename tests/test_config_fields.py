"""`[queues.Q.fields.COL]`: what the loader makes of it, and errors that name the file, the key and
the fix, both when the file is read and when the queue is bound to the real table."""

from __future__ import annotations

import datetime as dt
import sqlite3
import tomllib
from pathlib import Path

import pytest

from tests.test_config import MINIMAL
from workbench import demo
from workbench.config import loader, model
from workbench.core import errors
from workbench.db import service

BASE = MINIMAL  # one queue q on table t; the tests add [queues.q.fields.*]


def parse_fields(fields: str) -> dict[str, model.FieldConfig]:
    return loader.parse(tomllib.loads(BASE + fields), "cfg.toml").queue("q").fields


def field_error(fields: str) -> errors.ConfigError:
    with pytest.raises(errors.ConfigError) as info:
        parse_fields(fields)
    err = info.value
    assert err.file == "cfg.toml" and err.exit_code == 2
    assert str(err) == f"cfg.toml: {err.key}: {err.problem}"
    return err


# -- what a valid fields table becomes ---------------------------------------------------------------


def test_fields_parse_into_field_configs() -> None:
    fields = parse_fields("""
[queues.q.fields.amount]
label = "Amount (EUR)"
min = 0
max = 99.5
required = true
help = "  Net amount  "

[queues.q.fields.note]
widget = "multiline"
hidden = true
read_only = true
pattern = "[a-z]+"

[queues.q.fields.due]
min = 2026-01-01
max = "2026-12-31T18:00"

[queues.q.fields.opens]
min = "08:00"
max = 18:30:00

[queues.q.fields.currency]
choices = ["EUR", "USD"]
""")
    assert list(fields) == ["amount", "note", "due", "opens", "currency"]
    assert fields["amount"] == model.FieldConfig(
        key="queues.q.fields.amount", label="Amount (EUR)", minimum=0, maximum=99.5, required=True, help="Net amount"
    )
    assert fields["note"] == model.FieldConfig(
        key="queues.q.fields.note", widget="multiline", hidden=True, read_only=True, pattern="[a-z]+"
    )
    assert (fields["due"].minimum, fields["due"].maximum) == (dt.date(2026, 1, 1), dt.datetime(2026, 12, 31, 18))
    assert (fields["opens"].minimum, fields["opens"].maximum) == (dt.time(8), dt.time(18, 30))
    # choices make the field a choice without saying widget = "choice"
    assert fields["currency"].choices == ("EUR", "USD") and fields["currency"].widget == "choice"


def test_no_fields_and_empty_field_tables() -> None:
    assert parse_fields("") == {}
    assert parse_fields("[queues.q.fields.note]\n") == {"note": model.FieldConfig(key="queues.q.fields.note")}


def test_explicit_choice_widget_with_choices_is_fine() -> None:
    field = parse_fields('[queues.q.fields.c]\nwidget = "choice"\nchoices = [1, 2]\n')["c"]
    assert field.widget == "choice" and field.choices == (1, 2)


def test_pattern_is_kept_as_written() -> None:
    assert parse_fields('[queues.q.fields.c]\npattern = " [0-9]+ "\n')["c"].pattern == " [0-9]+ "


def test_the_demo_fields_parse() -> None:
    config = loader.parse(tomllib.loads(demo.config_text()), "demo.toml")
    cases, imports = config.queue("cases").fields, config.queue("imports").fields
    assert cases["priority"].choices == (1, 2, 3, 4)
    assert (cases["time_spent_min"].minimum, cases["time_spent_min"].maximum) == (0, 1440)
    assert imports["iban"].pattern == "[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}"
    assert imports["iban"].help == "an IBAN in capitals without spaces, such as DE89370400440532013000"


# -- errors when the file is read ------------------------------------------------------------------


def test_unknown_key_under_a_field_suggests_the_right_one() -> None:
    err = field_error("[queues.q.fields.amount]\nmaxx = 5\n")
    assert err.key == "queues.q.fields.amount.maxx"
    assert err.problem == "unknown key; did you mean 'max'?"


def test_unknown_key_under_a_field_without_a_close_one_lists_them() -> None:
    err = field_error("[queues.q.fields.amount]\ncolour = 'red'\n")
    assert err.key == "queues.q.fields.amount.colour"
    assert err.problem == (
        "unknown key; allowed: choices, help, hidden, label, lookup, max, min, pattern, read_only, required, widget"
    )


def test_fields_must_be_a_table() -> None:
    text = BASE.replace("outcomes.done.set", 'fields = "amount"\noutcomes.done.set')
    with pytest.raises(errors.ConfigError) as info:
        loader.parse(tomllib.loads(text), "cfg.toml")
    assert info.value.key == "queues.q.fields"
    assert info.value.problem == "expected a table ([queues.q.fields] or { … }), got str 'amount'"


def test_a_field_must_be_a_table() -> None:
    err = field_error("[queues.q.fields]\namount = 5\n")
    assert err.key == "queues.q.fields.amount"
    assert err.problem == "expected a table ([queues.q.fields.amount] or { … }), got int 5"


def test_bad_widget_lists_the_choices() -> None:
    err = field_error('[queues.q.fields.note]\nwidget = "textarea"\n')
    assert err.key == "queues.q.fields.note.widget"
    assert err.problem == "must be one of text, multiline, choice (other widgets follow the column type)"


def test_widget_that_is_not_a_string() -> None:
    err = field_error("[queues.q.fields.note]\nwidget = 3\n")
    assert err.key == "queues.q.fields.note.widget" and "expected a non-empty string" in err.problem


def test_choices_with_another_widget() -> None:
    err = field_error('[queues.q.fields.c]\nwidget = "text"\nchoices = ["a", "b"]\n')
    assert err.key == "queues.q.fields.c.widget"
    assert err.problem == 'choices are shown as a choice; remove widget = "text"'


@pytest.mark.parametrize("choices", ['"EUR"', "[]", "{ a = 1 }", "3"])
def test_choices_must_be_a_non_empty_list(choices: str) -> None:
    err = field_error(f"[queues.q.fields.currency]\nchoices = {choices}\n")
    assert err.key == "queues.q.fields.currency.choices"
    assert err.problem == 'expected a non-empty list of values, e.g. ["EUR", "USD"]'


def test_choices_listed_twice() -> None:
    err = field_error('[queues.q.fields.currency]\nchoices = ["EUR", "USD", "EUR"]\n')
    assert err.key == "queues.q.fields.currency.choices" and err.problem == "lists 'EUR' twice"


@pytest.mark.parametrize("item", ["[1, 2]", "{ v = 1 }"])
def test_a_choice_must_be_a_single_value(item: str) -> None:
    err = field_error(f"[queues.q.fields.c]\nchoices = [1, {item}]\n")
    assert err.key == "queues.q.fields.c.choices" and err.problem.startswith("expected a single value, got a")


def test_min_greater_than_max() -> None:
    err = field_error("[queues.q.fields.n]\nmin = 10\nmax = 5\n")
    assert err.key == "queues.q.fields.n.min" and err.problem == "must not be greater than max (10 > 5)"


def test_min_greater_than_max_for_dates() -> None:
    err = field_error('[queues.q.fields.d]\nmin = "2026-12-31"\nmax = 2026-01-01\n')
    assert err.key == "queues.q.fields.d.min"
    assert err.problem == "must not be greater than max (2026-12-31 > 2026-01-01)"


@pytest.mark.parametrize(
    "bounds, problem",
    [
        ('min = "2026-01-02"\nmax = 2026-01-01T23:59:59', "2026-01-02 > 2026-01-01 23:59:59"),
        ("min = 2026-01-02T00:00:01\nmax = 2026-01-02", "2026-01-02 00:00:01 > 2026-01-02"),
    ],
)
def test_a_date_and_a_date_time_compare_as_midnight(bounds: str, problem: str) -> None:
    err = field_error(f"[queues.q.fields.d]\n{bounds}\n")
    assert err.key == "queues.q.fields.d.min" and err.problem == f"must not be greater than max ({problem})"
    field = parse_fields("[queues.q.fields.d]\nmin = 2026-01-02\nmax = 2026-01-02T00:00:00\n")["d"]
    assert (field.minimum, field.maximum) == (dt.date(2026, 1, 2), dt.datetime(2026, 1, 2))


def test_min_equal_to_max_is_fine() -> None:
    field = parse_fields("[queues.q.fields.n]\nmin = 3\nmax = 3.0\n")["n"]
    assert (field.minimum, field.maximum) == (3, 3.0)


@pytest.mark.parametrize(
    "bounds",
    [
        'min = 0\nmax = "2026-01-01"',
        'min = "08:00"\nmax = 2026-01-01',
        "min = 2026-01-01T00:00:00Z\nmax = 2026-01-02T00:00:00",
    ],
)
def test_min_and_max_of_different_kinds(bounds: str) -> None:
    err = field_error(f"[queues.q.fields.n]\n{bounds}\n")
    assert err.key == "queues.q.fields.n" and err.problem.endswith("must be the same kind of value")


@pytest.mark.parametrize("name", ["min", "max"])
@pytest.mark.parametrize(
    "value, got",
    [
        ("true", "bool True"),
        ("[1]", "a list"),
        ('"soon"', "str 'soon'"),
        ('"2026-02-30"', "str '2026-02-30'"),
    ],
)
def test_bad_bound_values(name: str, value: str, got: str) -> None:
    err = field_error(f"[queues.q.fields.n]\n{name} = {value}\n")
    assert err.key == f"queues.q.fields.n.{name}"
    assert err.problem.startswith("expected a number, a date or a date-time") and err.problem.endswith(f"got {got}")


@pytest.mark.parametrize("value", ['"12"', '"0"', '"1200"', '"-5"', '" 2.5 "'])
def test_quoted_number_bound_is_refused_not_read_as_a_time(value: str) -> None:
    err = field_error(f"[queues.q.fields.n]\nmax = {value}\n")
    assert err.key == "queues.q.fields.n.max"
    assert err.problem == f"write a number without quotes: max = {value.strip(chr(34)).strip()}"


@pytest.mark.parametrize("pattern", ['"[A-Z"', '"(?P<x"', '"*a"'])
def test_invalid_regular_expression(pattern: str) -> None:
    err = field_error(f"[queues.q.fields.iban]\npattern = {pattern}\n")
    assert err.key == "queues.q.fields.iban.pattern"
    assert err.problem.startswith("not a valid regular expression: ")


@pytest.mark.parametrize("pattern, got", [('""', "str ''"), ("5", "int 5"), ('["a"]', "a list")])
def test_pattern_must_be_a_non_empty_string(pattern: str, got: str) -> None:
    err = field_error(f"[queues.q.fields.iban]\npattern = {pattern}\n")
    assert err.key == "queues.q.fields.iban.pattern"
    assert err.problem == f"expected a non-empty string, got {got}"


@pytest.mark.parametrize("key", ["required", "read_only", "hidden"])
def test_flags_must_be_booleans(key: str) -> None:
    err = field_error(f'[queues.q.fields.n]\n{key} = "yes"\n')
    assert err.key == f"queues.q.fields.n.{key}" and err.problem == "expected true or false, got str 'yes'"


@pytest.mark.parametrize("key", ["label", "help"])
def test_label_and_help_must_be_non_empty_text(key: str) -> None:
    err = field_error(f'[queues.q.fields.n]\n{key} = "  "\n')
    assert err.key == f"queues.q.fields.n.{key}" and err.problem.startswith("expected a non-empty string")


def test_field_name_that_no_table_could_have() -> None:
    err = field_error('[queues.q.fields."a`b"]\nlabel = "x"\n')
    assert err.key == "queues.q.fields.a`b" and "is not a valid table or column name" in err.problem


# -- errors when the queue is bound to the real table ---------------------------------------------


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A demo database, only read by these tests."""
    config = demo.create(tmp_path_factory.mktemp("demo"))
    return config.parent / demo.DB_NAME


def bind(demo_db: Path, tmp_path: Path, *edits: tuple[str, str], extra: str = "", queue: str = "cases") -> None:
    """The demo config with `edits` applied and `extra` appended, bound to the real table."""
    text = demo.config_text(f"sqlite:///{demo_db}")
    for old, new in edits:
        assert old in text, f"demo config has no {old!r}"
        text = text.replace(old, new, 1)
    path = tmp_path / "workbench.toml"
    path.write_text(text + extra, encoding="utf-8")
    with service.Workbench.open(loader.load(path)) as wb:
        wb.queue(queue)


def bind_error(
    demo_db: Path, tmp_path: Path, *edits: tuple[str, str], extra: str = "", queue: str = "cases"
) -> errors.ConfigError:
    with pytest.raises(errors.ConfigError) as info:
        bind(demo_db, tmp_path, *edits, extra=extra, queue=queue)
    err = info.value
    assert err.file == str(tmp_path / "workbench.toml") and err.exit_code == 2
    assert str(err) == f"{err.file}: {err.key}: {err.problem}"
    return err


PRIORITY = "[queues.cases.fields.priority]\nchoices = [1, 2, 3, 4]"


def test_demo_fields_bind(demo_db: Path, tmp_path: Path) -> None:
    bind(demo_db, tmp_path)
    bind(demo_db, tmp_path, queue="imports")


def test_unknown_column_suggests_a_close_name(demo_db: Path, tmp_path: Path) -> None:
    err = bind_error(demo_db, tmp_path, extra='\n[queues.cases.fields.priorty]\nlabel = "Priority"\n')
    assert err.key == "queues.cases.fields.priorty"
    assert err.problem == "column 'priorty' is not in table cases; did you mean 'priority'?"


def test_unknown_read_only_column_suggests_a_close_name(demo_db: Path, tmp_path: Path) -> None:
    err = bind_error(demo_db, tmp_path, extra="\n[queues.cases.fields.resolutoin]\nread_only = true\n")
    assert err.key == "queues.cases.fields.resolutoin"
    assert err.problem == "column 'resolutoin' is not in table cases; did you mean 'resolution'?"


def test_unknown_column_without_a_close_name_lists_the_columns(demo_db: Path, tmp_path: Path) -> None:
    err = bind_error(demo_db, tmp_path, extra='\n[queues.cases.fields.zzz]\nlabel = "Z"\n')
    assert err.key == "queues.cases.fields.zzz"
    assert err.problem.startswith("column 'zzz' is not in table cases (columns: case_id, opened_at, customer")


def test_column_name_case_is_forgiven(demo_db: Path, tmp_path: Path) -> None:
    bind(demo_db, tmp_path, extra='\n[queues.cases.fields.Subject]\nlabel = "Topic"\n')


@pytest.mark.parametrize(
    "choices, problem",
    [
        ('[1, 2, "high"]', "'high' is not a whole number"),
        ("[1, 2.5]", "2.5 is not a whole number"),
        ('[1, "1"]', "lists 1 twice (as 'priority' stores it)"),
    ],
)
def test_choice_value_the_column_cannot_hold(demo_db: Path, tmp_path: Path, choices: str, problem: str) -> None:
    err = bind_error(demo_db, tmp_path, (PRIORITY, f"[queues.cases.fields.priority]\nchoices = {choices}"))
    assert err.key == "queues.cases.fields.priority.choices"
    assert err.problem == problem


def test_choice_longer_than_the_text_column(demo_db: Path, tmp_path: Path) -> None:
    err = bind_error(
        demo_db, tmp_path, ('choices = ["EUR", "USD", "GBP", "SEK"]', 'choices = ["EUR", "EURO"]'), queue="imports"
    )
    assert err.key == "queues.imports.fields.currency.choices"
    assert err.problem == "at most 3 characters (4 given)"


def test_choice_widget_without_choices(demo_db: Path, tmp_path: Path) -> None:
    err = bind_error(demo_db, tmp_path, extra='\n[queues.cases.fields.subject]\nwidget = "choice"\n')
    assert err.key == "queues.cases.fields.subject.widget"
    assert err.problem == "a choice needs choices = [...] (or an ENUM column)"


@pytest.mark.parametrize("name", ["min", "max"])
def test_min_or_max_on_a_text_column(demo_db: Path, tmp_path: Path, name: str) -> None:
    err = bind_error(demo_db, tmp_path, extra=f"\n[queues.cases.fields.subject]\n{name} = 1\n")
    assert err.key == f"queues.cases.fields.subject.{name}"
    assert err.problem == "min and max apply to number, date and time columns; 'subject' is VARCHAR(200)"


def test_min_on_a_boolean_column(demo_db: Path, tmp_path: Path) -> None:
    err = bind_error(
        demo_db, tmp_path, ("[queues.imports.fields.paid]", "[queues.imports.fields.paid]\nmin = 0"), queue="imports"
    )
    assert err.key == "queues.imports.fields.paid.min" and "'paid' is BOOLEAN" in err.problem


TIME_SPENT = 'label = "Time spent (minutes)"\nmin = 0'


@pytest.mark.parametrize(
    "edit, key, problem",
    [
        ((TIME_SPENT, TIME_SPENT.replace("min = 0", "min = 0.5")), "time_spent_min.min", "0.5 is not a whole number"),
        (("max = 1440", "max = 1440.5"), "time_spent_min.max", "1440.5 is not a whole number"),
        (("min = 0\nmax = 1440", "min = 2026-01-01\n#"), "time_spent_min.min", "is not a whole number"),
        (
            ("[queues.cases.fields.due_at]", "[queues.cases.fields.due_at]\nmin = 5"),
            "due_at.min",
            "5 is not a date and time (use 2026-11-21 14:30)",
        ),
    ],
)
def test_bound_the_column_cannot_hold(
    demo_db: Path, tmp_path: Path, edit: tuple[str, str], key: str, problem: str
) -> None:
    err = bind_error(demo_db, tmp_path, edit)
    assert err.key == f"queues.cases.fields.{key}"
    assert err.problem.endswith(problem)


def test_bounds_that_fit_the_column_bind(demo_db: Path, tmp_path: Path) -> None:
    bind(
        demo_db,
        tmp_path,
        ("[queues.cases.fields.due_at]", '[queues.cases.fields.due_at]\nmin = 2020-01-01\nmax = "2030-12-31T23:59"'),
    )
    bind(
        demo_db,
        tmp_path,
        ("[queues.imports.fields.amount]\nmin = 0", "[queues.imports.fields.amount]\nmin = -0.5\nmax = 1e6"),
        queue="imports",
    )


def test_decimal_bound_with_too_many_places(demo_db: Path, tmp_path: Path) -> None:
    err = bind_error(
        demo_db,
        tmp_path,
        ("[queues.imports.fields.amount]\nmin = 0", "[queues.imports.fields.amount]\nmin = 0.001"),
        queue="imports",
    )
    assert err.key == "queues.imports.fields.amount.min" and err.problem == "0.001 has more than 2 decimal places"


@pytest.mark.parametrize(
    "edit, column, kind",
    [
        ((PRIORITY, PRIORITY + '\npattern = "[0-9]+"'), "priority", "INTEGER"),
        (("[queues.cases.fields.due_at]", '[queues.cases.fields.due_at]\npattern = "[0-9]+"'), "due_at", "DATETIME"),
    ],
)
def test_pattern_on_a_non_text_column(
    demo_db: Path, tmp_path: Path, edit: tuple[str, str], column: str, kind: str
) -> None:
    err = bind_error(demo_db, tmp_path, edit)
    assert err.key == f"queues.cases.fields.{column}.pattern"
    assert err.problem == f"a pattern applies to text columns; '{column}' is {kind}"


def test_field_error_through_the_cli_exits_2(demo_db: Path, tmp_path: Path) -> None:
    from workbench.cli import main

    text = demo.config_text(f"sqlite:///{demo_db}") + '\n[queues.cases.fields.priorty]\nlabel = "P"\n'
    path = tmp_path / "workbench.toml"
    path.write_text(text, encoding="utf-8")
    assert main.main(["--config", str(path), "--user", "alice", "show", "cases", "1"]) == 2


def test_the_demo_database_is_untouched_by_binding(demo_db: Path) -> None:
    with sqlite3.connect(demo_db) as conn:
        assert conn.execute("SELECT count(*) FROM cases WHERE wb_locked_by IS NOT NULL").fetchone() == (0,)
    conn.close()
