"""Config loading: what a valid file becomes, and errors that name the file, the key and the fix."""

from __future__ import annotations

import sqlite3
import tomllib
from pathlib import Path

import pytest
import sqlalchemy as sa

from workbench import demo
from workbench.config import loader, model
from workbench.core import durations, errors
from workbench.db import service

VALID = """
[database]
url = "sqlite:///cases.db"
claim_method = "portable"
connect_timeout = 3

[queues.cases]
title = "Helpdesk"
table = "cases"
key = "case_id"
order = ["priority desc", "opened_at", "case_id ASC"]
lock_duration = "90s"
max_lock_duration = "1h30m"
release_cooldown = "30m"
max_locks_per_user = 2
lock = { user = "who", time = "since" }

[queues.cases.scope]
team = "support"
region = ["eu", "us"]
category = { ne = "spam" }
deleted_at = { null = true }
priority = { ge = 2 }

[queues.cases.todo]
status = "new"

[queues.cases.on_claim]
status = "working"
picked_at = { now = true }
picked_by = { user = true }

[queues.cases.on_release]
status = "new"
picked_by = { null = true }

[queues.cases.outcomes.waiting]
set = { status = "waiting" }

[queues.cases.outcomes.resolved]
label = "Resolve it"
set = { status = "resolved" }
"""

MINIMAL = """
[database]
url = "sqlite:///x.db"

[queues.q]
table = "t"
key = "id"
todo = { status = "open" }
outcomes.done.set = { status = "done" }
"""


def parse(text: str, label: str = "cfg.toml") -> model.Config:
    return loader.parse(tomllib.loads(text), label)


def config_error(text: str) -> errors.ConfigError:
    with pytest.raises(errors.ConfigError) as info:
        parse(text)
    return info.value


def edited(text: str, old: str, new: str) -> str:
    assert old in text, f"fixture text has no {old!r}"
    return text.replace(old, new, 1)


# -- a valid file ------------------------------------------------------------------------------


def test_valid_config_parses_database_and_queue() -> None:
    config = parse(VALID)
    assert config.path == "cfg.toml"
    assert config.database.claim_method == "portable" and config.database.connect_timeout == 3
    assert config.database.clock == "utc" and config.database.statement_timeout == 30
    assert list(config.queues) == ["cases"]
    q = config.queue("cases")
    assert (q.title, q.table, q.key, q.schema) == ("Helpdesk", "cases", "case_id", None)
    assert q.max_locks_per_user == 2


def test_order_terms_default_to_ascending() -> None:
    q = parse(VALID).queue("cases")
    assert q.order == (
        model.OrderTerm("priority", True),
        model.OrderTerm("opened_at", False),
        model.OrderTerm("case_id", False),
    )


def test_durations_are_seconds() -> None:
    q = parse(VALID).queue("cases")
    assert (q.lock_seconds, q.max_lock_seconds, q.release_cooldown_seconds) == (90, 5400, 1800)


def test_defaults_of_a_minimal_queue() -> None:
    q = parse(MINIMAL).queue("q")
    assert q.title == "Q" and q.order == ()
    assert (q.lock_seconds, q.max_lock_seconds, q.release_cooldown_seconds) == (1800, None, 300)
    assert q.lock == model.LockColumns("wb_locked_by", "wb_locked_at", "wb_lock_expires", "wb_lock_token")
    assert q.allow_pick is True and q.max_locks_per_user == 0


def test_lock_columns_without_expiry_and_token() -> None:
    assert parse(VALID).queue("cases").lock == model.LockColumns("who", "since", None, None)


def test_outcomes_keep_file_order_and_first_is_default() -> None:
    q = parse(VALID).queue("cases")
    assert [o.name for o in q.outcomes] == ["waiting", "resolved"]
    assert q.outcome(None).name == "waiting"
    assert q.outcome("resolved").label == "Resolve it"
    assert q.outcome("waiting").label == "Waiting"  # from the name
    with pytest.raises(KeyError):
        q.outcome("closed")


def test_assignments_now_user_null_and_value() -> None:
    q = parse(VALID).queue("cases")
    assert [(a.column, a.kind, a.value) for a in q.on_claim] == [
        ("status", "value", "working"),
        ("picked_at", "now", None),
        ("picked_by", "user", None),
    ]
    assert [(a.column, a.kind) for a in q.on_release] == [("status", "value"), ("picked_by", "null")]
    assert q.on_claim[1].key == "queues.cases.on_claim.picked_at"


def test_filter_operators() -> None:
    q = parse(VALID).queue("cases")
    assert [(c.column, c.op, c.value) for c in q.scope] == [
        ("team", "eq", "support"),
        ("region", "in", ("eu", "us")),
        ("category", "ne", "spam"),
        ("deleted_at", "null", True),
        ("priority", "ge", 2),
    ]
    assert [(c.column, c.op, c.value) for c in q.todo] == [("status", "eq", "new")]
    assert q.scope[2].key == "queues.cases.scope.category.ne"


def test_relative_sqlite_path_resolves_next_to_the_config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "configs"
    folder.mkdir()
    path = folder / "workbench.toml"
    path.write_text(edited(MINIMAL, "sqlite:///x.db", "sqlite:///data/x.db?timeout=5"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # not the config's directory
    url = loader.load(path).database.url
    assert url == f"sqlite:///{(folder / 'data' / 'x.db').resolve()}?timeout=5"


def test_absolute_and_memory_sqlite_urls_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "workbench.toml"
    for url in (f"sqlite:///{tmp_path / 'abs.db'}", "sqlite:///:memory:", "postgresql+psycopg://me@db/cases"):
        path.write_text(edited(MINIMAL, "sqlite:///x.db", url), encoding="utf-8")
        assert loader.load(path).database.url == url


def test_the_demo_config_parses() -> None:
    config = parse(demo.config_text())
    assert list(config.queues) == ["cases", "imports", "imports_review"]
    assert [o.name for o in config.queue("imports").outcomes] == ["verified", "rejected"]
    assert config.reviewed_by("imports_review") is config.queue("imports")


# -- structural errors -------------------------------------------------------------------------


def test_unknown_key_names_the_key_and_suggests_the_right_one() -> None:
    err = config_error(edited(MINIMAL, 'key = "id"', 'key = "id"\nlok_duration = "5m"'))
    assert str(err) == "cfg.toml: queues.q.lok_duration: unknown key; did you mean 'lock_duration'?"
    assert (err.file, err.key, err.exit_code) == ("cfg.toml", "queues.q.lok_duration", 2)


@pytest.mark.parametrize(
    "old, new, key, hint",
    [
        ("[database]", "queus = 1\n[database]", "queus", "queues"),
        ('url = "sqlite:///x.db"', 'urll = "sqlite:///x.db"\nurl = "sqlite:///x.db"', "database.urll", "url"),
        ("outcomes.done.set", "outcomes.done.sett = {}\noutcomes.done.set", "queues.q.outcomes.done.sett", "set"),
    ],
)
def test_unknown_keys_at_every_level(old: str, new: str, key: str, hint: str) -> None:
    err = config_error(edited(MINIMAL, old, new))
    assert err.key == key and str(err).startswith(f"cfg.toml: {key}: unknown key; did you mean '{hint}'?")


def test_unknown_key_without_a_close_match_lists_the_allowed_ones() -> None:
    err = config_error(edited(MINIMAL, "[database]", "[database]\nzzz = 1"))
    assert "database.zzz: unknown key; allowed: claim_method, clock, connect_timeout" in str(err)


@pytest.mark.parametrize(
    "removed, key, problem",
    [
        ('table = "t"\n', "queues.q.table", "is required"),
        ('key = "id"\n', "queues.q.key", "is required"),
        ('todo = { status = "open" }\n', "queues.q.todo", "is required: which rows are work to do"),
        ('outcomes.done.set = { status = "done" }\n', "queues.q.outcomes", "is required: what Complete writes"),
        ('url = "sqlite:///x.db"\n', "database.url", "is required"),
    ],
)
def test_missing_required_keys(removed: str, key: str, problem: str) -> None:
    err = config_error(edited(MINIMAL, removed, ""))
    assert err.key == key and str(err).startswith(f"cfg.toml: {key}: {problem}")


def test_missing_queues() -> None:
    err = config_error('[database]\nurl = "sqlite:///x.db"\n')
    assert str(err) == "cfg.toml: queues: define at least one queue, e.g. [queues.cases]"


def test_empty_todo_and_outcome_without_set() -> None:
    assert config_error(edited(MINIMAL, 'todo = { status = "open" }', "todo = {}")).key == "queues.q.todo"
    err = config_error(edited(MINIMAL, 'outcomes.done.set = { status = "done" }', 'outcomes.done.label = "Done"'))
    assert err.key == "queues.q.outcomes.done.set" and "is required" in str(err)


@pytest.mark.parametrize("value", ['"soon"', '"30 minutes"', '"-5m"', "true", '""'])
def test_bad_duration(value: str) -> None:
    err = config_error(edited(MINIMAL, 'key = "id"', f'key = "id"\nlock_duration = {value}'))
    assert err.key == "queues.q.lock_duration"
    assert str(err).startswith("cfg.toml: queues.q.lock_duration: ")


def test_bad_duration_message_shows_examples() -> None:
    err = config_error(edited(MINIMAL, 'key = "id"', 'key = "id"\nlock_duration = "soon"'))
    assert str(err) == (
        'cfg.toml: queues.q.lock_duration: \'soon\' is not a duration; write e.g. "30m", "90s", "1h30m"'
    )


def test_zero_lock_duration_is_refused() -> None:
    err = config_error(edited(MINIMAL, 'key = "id"', 'key = "id"\nlock_duration = "0s"'))
    assert err.key == "queues.q.lock_duration" and "at least 1" in str(err)


@pytest.mark.parametrize(
    ("setting", "value", "bound"),
    [
        ("lock_duration", '"100000d"', "7 days"),
        ("lock_duration", "1e400", None),
        ("max_lock_duration", '"8d"', "7 days"),
        ("release_cooldown", '"31d"', "30 days"),
    ],
)
def test_durations_have_an_upper_bound(setting: str, value: str, bound: str | None) -> None:
    # A lock far in the future overflowed PostgreSQL's timestamps and broke every listing of the queue.
    err = config_error(edited(MINIMAL, 'key = "id"', f'key = "id"\n{setting} = {value}'))
    assert err.key == f"queues.q.{setting}"
    assert (f"must be at most {bound} (" if bound else "is not a duration") in str(err)
    assert model.MAX_SECONDS[setting] <= 30 * 86400


def test_app_durations_have_an_upper_bound() -> None:
    err = config_error(MINIMAL + '\n[app]\ncheck_every = "2d"\n')
    assert str(err) == "cfg.toml: app.check_every: must be at most 1 day ('2d' is 2 days)"


def test_longest_lock_duration_is_accepted() -> None:
    q = parse(edited(MINIMAL, 'key = "id"', 'key = "id"\nlock_duration = "7d"')).queue("q")
    assert q.lock_seconds == 7 * 86400


def test_max_lock_duration_shorter_than_lock_duration() -> None:
    err = config_error(edited(MINIMAL, 'key = "id"', 'key = "id"\nlock_duration = "1h"\nmax_lock_duration = "30m"'))
    assert str(err) == "cfg.toml: queues.q.max_lock_duration: must not be shorter than lock_duration"


def test_max_lock_duration_equal_to_lock_duration_is_fine() -> None:
    q = parse(edited(MINIMAL, 'key = "id"', 'key = "id"\nlock_duration = "1h"\nmax_lock_duration = "60m"')).queue("q")
    assert q.lock_seconds == q.max_lock_seconds == 3600


@pytest.mark.parametrize(
    "order, key",
    [
        ('["  "]', "queues.q.order[0]"),
        ('["id", "desc"]', "queues.q.order[1]"),
        ("[1]", "queues.q.order[0]"),
        ("{ priority = 1 }", "queues.q.order"),
    ],
)
def test_bad_order_term(order: str, key: str) -> None:
    err = config_error(edited(MINIMAL, 'key = "id"', f'key = "id"\norder = {order}'))
    assert err.key == key and 'desc"' in str(err)  # shows how to write a term


def test_unknown_filter_operator_suggests_the_close_one() -> None:
    err = config_error(edited(MINIMAL, 'todo = { status = "open" }', 'todo = { status = { nee = "done" } }'))
    assert str(err) == "cfg.toml: queues.q.todo.status.nee: unknown operator; did you mean 'ne'?"


def test_unknown_filter_operator_without_a_close_one_lists_them() -> None:
    err = config_error(edited(MINIMAL, 'todo = { status = "open" }', 'todo = { status = { zzz = "done" } }'))
    assert err.key == "queues.q.todo.status.zzz" and "use one of eq, ne, in, not_in" in str(err)


@pytest.mark.parametrize(
    "todo, key, problem",
    [
        ("{ status = [] }", "queues.q.todo.status", "non-empty list"),
        ("{ status = { null = 1 } }", "queues.q.todo.status.null", "true (IS NULL) or false"),
        ("{ status = { eq = [1] } }", "queues.q.todo.status.eq", "single value"),
        ("{ status = {} }", "queues.q.todo.status", "empty condition"),
    ],
)
def test_bad_filter_values(todo: str, key: str, problem: str) -> None:
    err = config_error(edited(MINIMAL, 'todo = { status = "open" }', f"todo = {todo}"))
    assert err.key == key and problem in str(err)


def test_bad_assignment_table() -> None:
    err = config_error(edited(MINIMAL, 'status = "done" }', 'status = "done", at = { today = true } }'))
    assert err.key == "queues.q.outcomes.done.set.at" and "{ now = true }" in str(err)


def test_bad_claim_method_lists_the_choices() -> None:
    err = config_error(edited(MINIMAL, 'url = "sqlite:///x.db"', 'url = "sqlite:///x.db"\nclaim_method = "fast"'))
    assert str(err) == (
        "cfg.toml: database.claim_method: must be one of auto, skip-locked, "
        "select-skip-locked, readpast, immediate, portable"
    )


def test_bad_clock_and_timeout() -> None:
    assert config_error(edited(MINIMAL, "[database]", '[database]\nclock = "mars"')).key == "database.clock"
    err = config_error(edited(MINIMAL, "[database]", "[database]\nconnect_timeout = 0"))
    assert err.key == "database.connect_timeout" and "at least 1" in str(err)


def test_same_column_for_two_lock_roles() -> None:
    err = config_error(edited(MINIMAL, 'key = "id"', 'key = "id"\nlock = { user = "x", time = "x" }'))
    assert err.key == "queues.q.lock" and "different column" in str(err)


def test_bad_queue_name() -> None:
    err = config_error(edited(MINIMAL, "[queues.q]", '[queues."my queue"]'))
    assert err.key == "queues.my queue" and "letters, digits" in str(err)


def test_password_in_database_url_is_refused_without_echoing_it(tmp_path: Path) -> None:
    path = tmp_path / "workbench.toml"
    path.write_text(
        edited(MINIMAL, "sqlite:///x.db", "postgresql+psycopg://bob:S3cr3t-pw@db.example/cases"), encoding="utf-8"
    )
    with pytest.raises(errors.ConfigError) as info:
        loader.load(path)  # refused as soon as the file is read, before any command runs
    err = info.value
    assert (err.file, err.key) == (str(path), "database.url")
    assert "must not contain a password" in str(err) and "WORKBENCH_DB_PASSWORD" in str(err)
    assert "S3cr3t" not in str(err) and "S3cr3t" not in repr(err.args)


@pytest.mark.parametrize(
    "url",
    [
        "mssql+pyodbc:///?odbc_connect=DRIVER%3D%7BODBC+Driver+18%7D%3BSERVER%3Ddb%3BUID%3Dsa%3BPWD%3DS3cr3t",
        "mysql+pyodbc://u@h/db?driver=MariaDB&password=S3cr3t",
    ],
)
def test_password_inside_driver_options_is_refused(tmp_path: Path, url: str) -> None:
    path = tmp_path / "workbench.toml"
    path.write_text(edited(MINIMAL, "sqlite:///x.db", url), encoding="utf-8")
    with pytest.raises(errors.ConfigError, match="must not contain a password") as info:
        loader.load(path)
    assert "S3cr3t" not in str(info.value)


def test_invalid_toml_names_the_file_and_the_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text('[database]\nurl = "sqlite:///x.db\n', encoding="utf-8")
    with pytest.raises(errors.ConfigError) as info:
        loader.load(path)
    assert str(info.value).startswith(f"{path}: not valid TOML: ")
    assert "line 2" in str(info.value)


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nowhere.toml"
    with pytest.raises(errors.ConfigError) as info:
        loader.load(path)
    assert str(info.value) == f"{path}: file not found; pass --config FILE or run `workbench demo`"
    assert info.value.exit_code == 2


# -- checks against the real table ---------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A demo database (read only in these tests) plus a table whose key column is not unique."""
    config = demo.create(tmp_path_factory.mktemp("demo"))
    db = config.parent / demo.DB_NAME
    with sqlite3.connect(db) as conn:
        conn.execute(
            "CREATE TABLE loose (code VARCHAR(10), status VARCHAR(10), wb_locked_by VARCHAR(128), "
            "wb_locked_at DATETIME, wb_lock_expires DATETIME, wb_lock_token VARCHAR(32))"
        )
    conn.close()
    return db


def bind(demo_db: Path, tmp_path: Path, *edits: tuple[str, str], queue: str = "cases") -> None:
    """Write the demo config with `edits` applied, then bind `queue` against the real table."""
    text = demo.config_text(f"sqlite:///{demo_db}")
    for old, new in edits:
        text = edited(text, old, new)
    path = tmp_path / "workbench.toml"
    path.write_text(text, encoding="utf-8")
    with service.Workbench.open(loader.load(path)) as wb:
        wb.queue(queue)


def table_error(demo_db: Path, tmp_path: Path, *edits: tuple[str, str]) -> errors.ConfigError:
    with pytest.raises(errors.ConfigError) as info:
        bind(demo_db, tmp_path, *edits)
    assert info.value.file == str(tmp_path / "workbench.toml")
    return info.value


def test_demo_config_binds_to_its_tables(demo_db: Path, tmp_path: Path) -> None:
    bind(demo_db, tmp_path)
    bind(demo_db, tmp_path, queue="imports")


def test_richer_filters_bind_to_the_demo(demo_db: Path, tmp_path: Path) -> None:
    bind(
        demo_db,
        tmp_path,
        (
            'status = ["new", "open"]',
            (
                'status = ["new", "open"]\npriority = { ge = 2 }\nresolution = { null = true }\n'
                'category = { ne = "Spam" }'
            ),
        ),
    )


@pytest.mark.parametrize(
    "old, new, key, wrong, right",
    [
        ('order = ["priority asc"', 'order = ["priorty asc"', "order", "priorty", "priority"),
        ('status = ["new", "open"]', 'statsu = ["new", "open"]', "todo.statsu", "statsu", "status"),
        ('key = "case_id"', 'key = "caseid"', "key", "caseid", "case_id"),
        (
            'token = "wb_lock_token"\n\n[queues.cases.todo]',
            'token = "wb_lock_tokn"\n\n[queues.cases.todo]',
            "lock.token",
            "wb_lock_tokn",
            "wb_lock_token",
        ),
        (
            'set = { status = "resolved" }',
            'set = { status = "resolved", resolutoin = "ok" }',
            "outcomes.resolved.set.resolutoin",
            "resolutoin",
            "resolution",
        ),
    ],
)
def test_unknown_column_names_the_key_and_suggests_the_column(
    demo_db: Path, tmp_path: Path, old: str, new: str, key: str, wrong: str, right: str
) -> None:
    err = table_error(demo_db, tmp_path, (old, new))
    assert err.key == f"queues.cases.{key}"
    assert f"column '{wrong}' is not in table cases; did you mean '{right}'?" in str(err)


def test_an_order_column_with_a_space_in_its_name_binds_and_orders(demo_db: Path, tmp_path: Path) -> None:
    # Issue 12 item 9: a customer's column "due date" in `order` (was an internal error).
    with sa.create_engine(f"sqlite:///{demo_db}").begin() as conn:
        conn.execute(sa.text('ALTER TABLE cases ADD COLUMN "due date" INTEGER'))
        conn.execute(sa.text('UPDATE cases SET "due date" = 1000 - case_id'))
    text = edited(demo.config_text(f"sqlite:///{demo_db}"), 'order = ["priority asc"', 'order = ["due date desc"')
    path = tmp_path / "workbench.toml"
    path.write_text(text, encoding="utf-8")
    config = loader.load(path)
    assert config.queue("cases").order[0] == model.OrderTerm("due date", True)
    with service.Workbench.open(config) as wb:
        claimed = wb.queue("cases").claim_next("alice")[0]
        with wb.engine.connect() as conn:
            waiting = conn.execute(
                sa.select(sa.func.max(sa.column("due date")))
                .select_from(sa.table("cases"))
                .where(sa.column("wb_locked_by").is_(None), sa.column("status").in_(["new", "open"]))
            ).scalar()
    assert claimed.item["due date"] >= waiting  # the highest "due date" first


def test_an_order_term_that_is_no_column_says_how_to_write_one(demo_db: Path, tmp_path: Path) -> None:
    err = table_error(demo_db, tmp_path, ('order = ["priority asc"', 'order = ["priority sideways"'))
    assert err.key == "queues.cases.order"
    assert "column 'priority sideways' is not in table cases; did you mean 'priority'?" in str(err)
    assert '"column", "column asc" or "column desc"' in str(err)


def test_missing_table_suggests_a_close_name(demo_db: Path, tmp_path: Path) -> None:
    err = table_error(demo_db, tmp_path, ('table = "cases"', 'table = "casez"'))
    assert err.key == "queues.cases.table"
    assert str(err).endswith("table 'casez' does not exist; did you mean 'cases'?")


def test_missing_table_without_a_close_name_lists_the_tables(demo_db: Path, tmp_path: Path) -> None:
    err = table_error(demo_db, tmp_path, ('table = "cases"', 'table = "zzz"'))
    assert "table 'zzz' does not exist (tables: cases, import_rows, loose" in str(err)


def test_key_column_must_be_unique(demo_db: Path, tmp_path: Path) -> None:
    err = table_error(
        demo_db,
        tmp_path,
        ('table = "cases"', 'table = "loose"'),
        ('key = "case_id"', 'key = "code"'),
        ('order = ["priority asc", "opened_at asc"]', "order = []"),
        ('read_only = ["opened_at", "customer", "email", "due_at"]', ""),
    )
    assert err.key == "queues.cases.key"
    assert "column 'code' must be unique" in str(err) and "two rows could share one lock" in str(err)


def test_outcome_that_leaves_the_row_in_todo_is_refused(demo_db: Path, tmp_path: Path) -> None:
    err = table_error(demo_db, tmp_path, ('set = { status = "waiting_customer" }', 'set = { status = "new" }'))
    assert err.key == "queues.cases.outcomes.waiting.set"
    assert "completed items would be served again" in str(err)


def test_outcome_that_does_not_touch_todo_columns_is_refused(demo_db: Path, tmp_path: Path) -> None:
    err = table_error(demo_db, tmp_path, ('set = { status = "resolved" }', 'set = { resolution = "done" }'))
    assert err.key == "queues.cases.outcomes.resolved.set"


def test_on_claim_leaving_todo_needs_on_release_to_restore_it(demo_db: Path, tmp_path: Path) -> None:
    claim = ('[queues.cases.on_claim]\nstatus = "open"', '[queues.cases.on_claim]\nstatus = "in_progress"')
    err = table_error(demo_db, tmp_path, claim)
    assert err.key == "queues.cases.on_release"
    assert "on_claim sets 'status', so on_release must set it back to a todo value" in str(err)
    restore_wrong = (claim[0], claim[1] + '\n[queues.cases.on_release]\nstatus = "paused"')
    assert table_error(demo_db, tmp_path, restore_wrong).key == "queues.cases.on_release"
    bind(demo_db, tmp_path, (claim[0], claim[1] + '\n[queues.cases.on_release]\nstatus = "new"'))


def test_workflow_cannot_write_lock_columns(demo_db: Path, tmp_path: Path) -> None:
    err = table_error(
        demo_db, tmp_path, ('set = { status = "resolved" }', 'set = { status = "resolved", wb_locked_by = "x" }')
    )
    assert err.key == "queues.cases.outcomes.resolved.set.wb_locked_by" and "managed by workbench" in str(err)


def test_filter_value_the_column_cannot_hold(demo_db: Path, tmp_path: Path) -> None:
    err = table_error(demo_db, tmp_path, ('status = ["new", "open"]', 'status = ["new", "open"]\npriority = "high"'))
    assert err.key == "queues.cases.todo.priority" and "'high'" in str(err)


# -- durations -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, seconds",
    [
        ("90s", 90),
        ("30m", 1800),
        ("1h30m", 5400),
        ("2h", 7200),
        ("1d", 86400),
        ("1h 30m", 5400),
        ("1.5h", 5400),
        ("45", 45),
        (" 10M ", 600),
        (45, 45),
        (2.4, 2),
        (0, 0),
        ("0s", 0),
    ],
)
def test_parse_duration(text: object, seconds: int) -> None:
    assert durations.parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "soon", "5x", "m30", "30mm", "1h30", "h", "-5", None, True, [1]])
def test_parse_duration_refuses(text: object) -> None:
    with pytest.raises(ValueError):
        durations.parse_duration(text)


def test_parse_duration_refuses_negative_numbers() -> None:
    with pytest.raises(ValueError, match="cannot be negative"):
        durations.parse_duration(-5)


@pytest.mark.parametrize(
    "seconds, text",
    [
        (0, "0s"),
        (45, "45s"),
        (59.9, "59s"),
        (60, "1m00s"),
        (725, "12m05s"),
        (3600, "1h00m"),
        (7380, "2h03m"),
        (90000, "1d01h"),
        (561 * 3600 + 27 * 60, "23d09h"),
        (-30, "-30s"),
        (-725, "-12m05s"),
    ],
)
def test_format_duration(seconds: float, text: str) -> None:
    assert durations.format_duration(seconds) == text


def test_app_settings_default_and_parse() -> None:
    assert parse(VALID).app == model.AppConfig()
    app = parse(
        VALID + '\n[app]\nwarn_before = "5m"\ncheck_every = 30\nauto_extend = false\n'
        'next_after_complete = false\nretry_every = "10s"\n'
    ).app
    assert app == model.AppConfig(
        warn_before=300, check_every=30, auto_extend=False, next_after_complete=False, retry_every=10
    )


@pytest.mark.parametrize(
    "line, key, problem",
    [
        ('warn_before = "soon"', "app.warn_before", "not a duration"),
        ("check_every = 0", "app.check_every", "at least 1"),
        ('auto_extend = "yes"', "app.auto_extend", "true or false"),
        ("warn_befor = 10", "app.warn_befor", "warn_before"),
    ],
)
def test_app_setting_errors_name_the_key(line: str, key: str, problem: str) -> None:
    exc = config_error(VALID + f"\n[app]\n{line}\n")
    assert key in str(exc) and problem in str(exc)


def test_on_reopen_must_bring_the_completed_columns_back_to_waiting(demo_db: Path, tmp_path: Path) -> None:
    reopen = '# a supervisor\'s `reopen` puts a finished case back\nstatus = "open"'
    err = table_error(demo_db, tmp_path, (reopen, '# reopen\nstatus = "resolved"'))
    assert err.key == "queues.cases.on_reopen" and "must set 'status'" in str(err)
