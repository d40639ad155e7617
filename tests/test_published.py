"""Queue settings published in the database: versions, history, validation, upgrade, concurrent publishers."""

from __future__ import annotations

import datetime as dt
import queue as queue_mod
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests import servers, support
from tests.helpers import forked, publisher
from workbench.config import loader, model
from workbench.core import errors
from workbench.db import clock, connect, migrations, published, service, tables

SAMPLES = sorted((support.REPO / "resources" / "configs").glob("*.toml"))
PUBLISHERS = 4


@pytest.fixture
def wb(native_env: support.Env) -> Iterator[service.Workbench]:
    """A workbench on a fresh database with `init` done (no queue tables: publishing needs none)."""
    workbench = native_env.open(native_env.demo_config())
    workbench.init()
    return workbench


def _body(env: support.Env) -> tuple[str, Path]:
    path = env.demo_config_file()
    return loader.queue_settings_text(path), path


# -- publish and read back -----------------------------------------------------------------------


def test_publish_twice_keeps_both_versions_and_serves_the_newest(
    native_env: support.Env, wb: service.Workbench
) -> None:
    body, path = _body(native_env)
    assert published.latest(wb.engine, None) is None
    assert published.latest_version(wb.engine, None) == 0
    assert published.history(wb.engine, None) == []

    first = published.publish(wb.engine, None, body, "sue", note="first cut")
    changed = body.replace('lock_duration = "15m"', 'lock_duration = "20m"', 1)
    assert changed != body
    second = published.publish(wb.engine, None, changed, "tom")

    assert (first.version, second.version) == (1, 2)
    assert (first.published_by, first.note, second.note) == ("sue", "first cut", None)
    now = dt.datetime.now(dt.UTC)
    for item in (first, second):  # the database clock, in UTC
        assert item.published_at.tzinfo is not None and abs(item.published_at - now) < dt.timedelta(minutes=5)
    assert first.published_at <= second.published_at
    assert published.latest_version(wb.engine, None) == 2
    assert published.latest(wb.engine, None) == second
    assert published.history(wb.engine, None) == [second, first]  # newest first, bodies included
    assert published.get(wb.engine, None, 1) == first
    assert published.get(wb.engine, None, 3) is None

    config, version = published.load_config(wb.engine, None, wb.config.database)
    from_file = loader.load(path)
    assert version == 2
    assert config.path == "published settings v2 in the database"
    assert config.database == wb.config.database  # the user's connection, not the publisher's
    assert config.queues["cases"].lock_seconds == 20 * 60
    assert config.queues["imports"] == from_file.queues["imports"] and config.app == from_file.app

    # Rolling back is publishing an old body again: history keeps every step.
    again = published.publish(wb.engine, None, first.body, "sue", note="back to v1")
    assert again.version == 3
    config, version = published.load_config(wb.engine, None, wb.config.database)
    assert (config.queues, config.app, version) == (from_file.queues, from_file.app, 3)
    assert [p.version for p in published.history(wb.engine, None)] == [3, 2, 1]


def test_publish_keeps_the_body_exactly(native_env: support.Env, wb: service.Workbench) -> None:
    body, _ = _body(native_env)
    body = body.replace('title = "Helpdesk cases"', 'title = "Fälle → Erledigung 😀"', 1)
    stored = published.publish(wb.engine, None, body, "søren")
    assert published.get(wb.engine, None, stored.version) == stored
    assert stored.body == body and stored.published_by == "søren"
    config, _ = published.load_config(wb.engine, None, wb.config.database)
    assert config.queues["cases"].title == "Fälle → Erledigung 😀"


def test_load_config__nothing_published(wb: service.Workbench) -> None:
    with pytest.raises(errors.ConfigError) as caught:
        published.load_config(wb.engine, None, wb.config.database)
    assert str(caught.value) == (
        "no queue settings are published in this database yet: a supervisor runs `workbench --config FILE publish`"
    )


# -- what is refused -----------------------------------------------------------------------------


def test_publish_refuses_a_database_table(native_env: support.Env, wb: service.Workbench) -> None:
    text = native_env.demo_config_file().read_text(encoding="utf-8")
    with pytest.raises(errors.ConfigError) as caught:
        published.publish(wb.engine, None, text, "sue")
    assert caught.value.key == "database"
    assert caught.value.problem == (
        "published settings must not contain [database]; the connection comes from each user's profile"
    )
    assert published.latest_version(wb.engine, None) == 0


def test_publish_refuses_invalid_settings_with_the_loaders_message(
    native_env: support.Env, wb: service.Workbench
) -> None:
    body, path = _body(native_env)
    typo = '[queues.cases]\nlock_duraton = "5m"\n'
    bad_body = body.replace("[queues.cases]\n", typo, 1)
    with pytest.raises(errors.ConfigError) as caught:
        published.publish(wb.engine, None, bad_body, "sue")
    # The same mistake in a whole config file gets the same key and message.
    path.write_text(path.read_text(encoding="utf-8").replace("[queues.cases]\n", typo, 1), encoding="utf-8")
    with pytest.raises(errors.ConfigError) as from_file:
        loader.load(path)
    assert (caught.value.key, caught.value.problem) == (from_file.value.key, from_file.value.problem)
    assert caught.value.key == "queues.cases.lock_duraton" and "did you mean 'lock_duration'" in str(caught.value)
    assert published.latest_version(wb.engine, None) == 0


def test_publish_refuses_a_missing_user_and_a_long_note(native_env: support.Env, wb: service.Workbench) -> None:
    body, _ = _body(native_env)
    with pytest.raises(errors.UsageError):
        published.publish(wb.engine, None, body, " ")
    with pytest.raises(errors.InvalidValue):
        published.publish(wb.engine, None, body, "sue", note="x" * 1001)
    assert published.latest_version(wb.engine, None) == 0


def test_parse_text_labels_its_errors() -> None:
    database = model.DatabaseConfig("sqlite://", "auto", None, "utc", 10, 30)
    with pytest.raises(errors.ConfigError) as caught:
        loader.parse_text("[queues.cases]\ntable = 'cases'\n", "published settings v3", database)
    assert str(caught.value) == "published settings v3: queues.cases.key: is required"
    with pytest.raises(errors.ConfigError) as caught:
        loader.parse_text("[queues\n", "published settings v3", database)
    assert str(caught.value).startswith("published settings v3: not valid TOML")
    with pytest.raises(errors.ConfigError) as caught:
        loader.parse_text("[app]\nwarn_before = '1m'\n[extra]\n", "published settings v3", database)
    assert caught.value.key == "extra" and "allowed: app, queues" in caught.value.problem


# -- cutting [database] out of a config file (no database needed) ----------------------------------


@pytest.mark.parametrize("sample", SAMPLES, ids=[p.stem for p in SAMPLES])
def test_queue_settings_text_is_the_file_without_its_database(sample: Path) -> None:
    body = loader.queue_settings_text(sample)
    full = loader.load(sample)
    data = tomllib.loads(body)
    assert "database" not in data
    assert data == {k: v for k, v in tomllib.loads(sample.read_text(encoding="utf-8")).items() if k != "database"}
    again = loader.parse_text(body, "published settings v1", full.database)
    assert (again.queues, again.app, again.database) == (full.queues, full.app, full.database)
    # Only the [database] table went: every other line, comments included, is kept as written.
    removed, kept = [], iter(body.splitlines())
    line_kept = next(kept, None)
    for line in sample.read_text(encoding="utf-8").splitlines():
        if line == line_kept:
            line_kept = next(kept, None)
        else:
            removed.append(line)
    assert line_kept is None  # every kept line is a line of the file, in order
    assert [line.split()[0] for line in removed if line] == ["[database]", "url"]


def test_queue_settings_text_keeps_the_comment_above_the_next_table(tmp_path: Path) -> None:
    path = tmp_path / "w.toml"
    path.write_text(
        '# top\n[app]\nwarn_before = "1m"\n\n[ "database" ]  # the connection\nurl = "sqlite://"\n'
        '# claim_method = "portable"\n\n# The queue\n[queues.q]\ntable = "t"\nkey = "id"\n'
        "todo = { done = false }\noutcomes.done.set = { done = true }\n",
        encoding="utf-8",
    )
    assert loader.queue_settings_text(path) == (
        '# top\n[app]\nwarn_before = "1m"\n\n# The queue\n[queues.q]\n'
        'table = "t"\nkey = "id"\ntodo = { done = false }\n'
        "outcomes.done.set = { done = true }\n"
    )


@pytest.mark.parametrize(
    "database",
    [
        'database = { url = "sqlite://" }\n',
        'database.url = "sqlite://"\n',
    ],
    ids=["inline", "dotted"],
)
def test_queue_settings_text__database_not_a_table(tmp_path: Path, database: str) -> None:
    path = tmp_path / "w.toml"
    path.write_text(
        database + '[queues.q]\ntable = "t"\nkey = "id"\ntodo = { done = false }\n'
        "outcomes.done.set = { done = true }\n",
        encoding="utf-8",
    )
    loader.load(path)  # a valid config
    with pytest.raises(errors.ConfigError) as caught:
        loader.queue_settings_text(path)
    assert caught.value.key == "database" and "write the database settings as one [database] table" in str(caught.value)


@pytest.mark.parametrize("database", ['[database]\nclaim_method = "portable"\n\n', ""], ids=["no-url", "none"])
def test_queue_settings_text__connection_from_a_profile(tmp_path: Path, database: str) -> None:
    # A settings file used with a connection profile may leave the URL, or [database], out.
    path = tmp_path / "w.toml"
    queues = '[queues.q]\ntable = "t"\nkey = "id"\ntodo = { done = false }\noutcomes.done.set = { done = true }\n'
    path.write_text(database + queues, encoding="utf-8")
    assert loader.queue_settings_text(path) == queues


def test_queue_settings_text__header_inside_a_string_is_not_cut(tmp_path: Path) -> None:
    # A line cut would take "[database]" inside the multi-line string for a table: refused, not mangled.
    path = tmp_path / "w.toml"
    path.write_text(
        '[database]\nurl = "sqlite://"\n\n[queues.q]\ntable = "t"\nkey = "id"\n'
        "todo = { done = false }\noutcomes.done.set = { done = true }\n"
        'fields.note.help = """\nExample:\n[database]\nurl = x\n"""\n',
        encoding="utf-8",
    )
    loader.load(path)
    with pytest.raises(errors.ConfigError, match="cannot take the connection out of this file safely"):
        loader.queue_settings_text(path)


def test_queue_settings_text__invalid_file_is_refused_before_cutting(tmp_path: Path) -> None:
    path = tmp_path / "w.toml"
    path.write_text('[database]\nurl = "sqlite://"\n[queues.q]\ntable = "t"\n', encoding="utf-8")
    with pytest.raises(errors.ConfigError) as caught:
        loader.queue_settings_text(path)
    assert str(caught.value) == f"{path}: queues.q.key: is required"


# -- schema version and upgrade --------------------------------------------------------------------


def _v1_database(engine: sa.Engine, schema: str | None = None) -> None:
    """workbench's tables as a program with SCHEMA_VERSION 1 left them (migration 1 only)."""
    metadata, _, version = tables.build_metadata(schema)
    with engine.begin() as conn:
        version.create(conn)
        migrations.MIGRATIONS[0].apply(conn, metadata)
        conn.execute(sa.insert(version).values(version=1, applied_at=clock.db_now()))


def test_upgrade_from_version_1(native_env: support.Env) -> None:
    engine = native_env.engine
    _v1_database(engine)
    with engine.connect() as conn:
        assert migrations.current_version(conn, None) == 1
        assert not sa.inspect(conn).has_table(tables.SETTINGS_TABLE)
        needs = f"at version 1, this program needs {tables.SCHEMA_VERSION}: run `workbench init`"
        with pytest.raises(errors.NotInitialized, match=needs):
            migrations.check(conn, None)
    body, _ = _body(native_env)
    for read in (published.latest_version, published.latest, published.history):
        with pytest.raises(errors.NotInitialized, match=f"needs {tables.SCHEMA_VERSION}"):
            read(engine, None)
    with pytest.raises(errors.NotInitialized, match=f"needs {tables.SCHEMA_VERSION}"):
        published.publish(engine, None, body, "sue")

    wb = native_env.open(native_env.demo_config())
    assert [m.version for m in wb.init()] == list(range(2, tables.SCHEMA_VERSION + 1))  # `init`
    assert wb.init() == []
    with engine.connect() as conn:
        migrations.check(conn, None)
        assert migrations.current_version(conn, None) == tables.SCHEMA_VERSION
        assert conn.execute(sa.text("SELECT COUNT(*) FROM workbench_schema_version")).scalar() == tables.SCHEMA_VERSION
    assert published.publish(engine, None, body, "sue").version == 1


def test_fresh_init_applies_every_migration(native_env: support.Env) -> None:
    wb = native_env.open(native_env.demo_config())
    assert [m.version for m in wb.init()] == list(range(1, tables.SCHEMA_VERSION + 1))
    with wb.engine.connect() as conn:
        assert {
            tables.AUDIT_TABLE,
            tables.COOLDOWN_TABLE,
            tables.SETTINGS_TABLE,
            tables.VERSION_TABLE,
            tables.ROLES_TABLE,
        } <= set(sa.inspect(conn).get_table_names())


def test_reading_a_database_without_workbench_tables(native_env: support.Env) -> None:
    with pytest.raises(errors.NotInitialized, match="run `workbench init`"):
        published.latest_version(native_env.engine, None)


def test_workbench_schema(pg_server: servers.Server, tmp_path: Path) -> None:
    name = "wbt_published_schema"
    pg_server.create_database(name)
    engine = sa.create_engine(pg_server.url(name))
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql("CREATE SCHEMA wbx")
        migrations.upgrade(engine, "wbx")
        body = loader.queue_settings_text(SAMPLES[0])
        assert published.publish(engine, "wbx", body, "sue").version == 1
        assert published.latest_version(engine, "wbx") == 1
        with engine.connect() as conn:
            assert sa.inspect(conn).has_table(tables.SETTINGS_TABLE, schema="wbx")
            assert not sa.inspect(conn).has_table(tables.SETTINGS_TABLE)
        with pytest.raises(errors.NotInitialized):
            published.latest_version(engine, None)
    finally:
        engine.dispose()
        pg_server.drop_database(name)


def test_unreachable_database() -> None:
    database = model.DatabaseConfig(
        f"postgresql+psycopg://nobody@127.0.0.1:{servers.free_port()}/x", "auto", None, "utc", 2, 5
    )
    engine = connect.create_engine(database)
    try:
        for call in (
            lambda: published.latest_version(engine, None),
            lambda: published.load_config(engine, None, database),
            lambda: published.publish(engine, None, loader.queue_settings_text(SAMPLES[0]), "sue"),
        ):
            with pytest.raises(errors.DatabaseUnavailable):
                call()
    finally:
        engine.dispose()


# -- publishers at the same time ---------------------------------------------------------------------


def test_a_publisher_that_lost_the_race_takes_the_next_version(
    native_env: support.Env, wb: service.Workbench, monkeypatch: pytest.MonkeyPatch
) -> None:
    body, _ = _body(native_env)
    published.publish(wb.engine, None, body, "sue")
    real = published._next_version
    calls: list[int] = []

    def stale_once(conn: sa.Connection, table: sa.Table) -> int:
        calls.append(1)
        return 1 if len(calls) == 1 else real(conn, table)  # read before the other publisher committed

    monkeypatch.setattr(published, "_next_version", stale_once)
    assert published.publish(wb.engine, None, body, "tom").version == 2
    assert len(calls) == 2

    monkeypatch.setattr(published, "_next_version", lambda conn, table: 1)
    with pytest.raises(errors.WorkbenchError, match="publishing queue settings at the same moment"):
        published.publish(wb.engine, None, body, "ann")
    assert [p.version for p in published.history(wb.engine, None)] == [2, 1]


@pytest.mark.slow
def test_concurrent_publishers_get_distinct_versions(native_env: support.Env, wb: service.Workbench) -> None:
    body, _ = _body(native_env)
    # Processes of their own, forked with workbench already imported (tests/helpers/forked.py), not started afresh.
    context = forked.context()
    barrier, results = context.Barrier(PUBLISHERS), context.Queue()
    procs = [
        context.Process(target=publisher.publish_in_process, args=(wb.config.database, body, f"p{i}", barrier, results))
        for i in range(PUBLISHERS)
    ]
    for proc in procs:
        proc.start()
    got = []
    try:
        for _ in procs:
            got.append(results.get(timeout=120))
    except queue_mod.Empty:
        pytest.fail(f"a publisher did not report: {got}")
    finally:
        for proc in procs:
            proc.join(timeout=30)
    assert sorted(version for _, version in got if isinstance(version, int)) == list(range(1, PUBLISHERS + 1)), got
    history = published.history(wb.engine, None)
    assert [p.version for p in history] == list(range(PUBLISHERS, 0, -1))
    assert {(p.published_by, p.version) for p in history} == set(got)
