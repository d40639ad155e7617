"""Connection profiles: round trip through profiles.toml, URLs per database, checks, keyring, CLI."""

from __future__ import annotations

import dataclasses
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import keyring
import pytest
from keyring.backends import fail, null

from tests.helpers.memkeyring import MemoryKeyring
from workbench import credentials, demo, opening
from workbench.cli import main
from workbench.config import paths, profiles
from workbench.core import errors
from workbench.services.door import engine


@pytest.fixture
def no_keyring() -> Iterator[None]:
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    yield
    keyring.set_keyring(previous)


PG = profiles.Profile(
    name="office",
    kind="postgresql",
    host="db.example.org",
    database="cases",
    user="bob",
    source="database",
    options={"sslmode": "require"},
)
MSSQL = profiles.Profile(
    name="erp",
    kind="sqlserver",
    host="sql01",
    database="erp",
    windows_auth=True,
    odbc_driver="ODBC Driver 18 for SQL Server",
    trust_server_certificate=True,
    source="file",
    config="/etc/workbench/erp.toml",
)


def test_profiles_round_trip_through_the_file() -> None:
    store = profiles.ProfileStore()
    maria = profiles.Profile(
        name="shop floor",
        kind="mariadb",
        driver="odbc",
        host="10.0.0.5",
        port=3307,
        database="orders",
        user="packer",
        odbc_driver="MariaDB Unicode",
        source="file",
        config="~/orders.toml",
        schema="wb",
        connect_timeout=3,
    )
    lite = profiles.Profile(name="local", kind="sqlite", path="/tmp/x.db", source="file", config="/tmp/x.toml")
    for p in (PG, MSSQL, maria, lite):
        store.save(p)
    store.set_default("erp")
    found, default = profiles.ProfileStore(store.path).load()
    assert found == {"office": PG, "erp": MSSQL, "shop floor": maria, "local": lite}
    assert default == "erp"
    assert store.path == paths.config_dir() / "profiles.toml"
    # Renaming keeps the default pointing at the renamed profile; removing the default leaves none
    # (another profile, maybe the table owner's, is never picked silently).
    store.save(dataclasses.replace(MSSQL, name="erp2"), replace="erp")
    assert store.load()[1] == "erp2" and "erp" not in store.load()[0]
    store.remove("erp2")
    assert store.load()[1] is None


def test_urls_per_database() -> None:
    assert (
        PG.url().render_as_string(hide_password=False)
        == "postgresql+psycopg://bob@db.example.org:5432/cases?sslmode=require"
    )
    url = MSSQL.url()
    assert url.drivername == "mssql+pyodbc" and url.username is None and url.port == 1433
    assert url.query == {
        "driver": "ODBC Driver 18 for SQL Server",
        "Encrypt": "yes",
        "TrustServerCertificate": "yes",
        "Trusted_Connection": "yes",
    }
    odbc = profiles.Profile(
        name="m",
        kind="mariadb",
        driver="odbc",
        host="h",
        database="d",
        user="u",
        odbc_driver="MariaDB Unicode",
        source="database",
    ).url()
    assert odbc.port is None and odbc.query == {"driver": "MariaDB Unicode", "port": "3306"}
    assert (
        profiles.Profile(name="m", kind="mysql", host="h", database="d", user="u", source="database").url().drivername
        == "mysql+pymysql"
    )
    assert profiles.Profile(name="s", kind="sqlite", path="~/a.db", source="database").url().database == str(
        Path("~/a.db").expanduser()
    )


@pytest.mark.parametrize(
    ("change", "key", "words"),
    [
        ({"host": ""}, "host", "host name"),
        ({"host": "db:5432"}, None, None),
        ({"host": "user@db"}, "host", "not a host name"),
        ({"port": 70000}, "port", "65535"),
        ({"database": ""}, "database", "database name"),
        ({"user": ""}, "user", "user name"),
        ({"kind": "oracle"}, "kind", "one of"),
        ({"driver": "odbc"}, "driver", "psycopg"),
        ({"options": {"password": "x"}}, "options.password", "keyring"),
        ({"options": {"PWD": "x"}}, "options.PWD", "keyring"),
        ({"windows_auth": True}, "windows_auth", "SQL Server only"),
        ({"name": " padded"}, "name", "no spaces at the ends"),
        ({"name": "two\nlines"}, "name", "no line breaks"),
        ({"name": "Helpdesk (office) & co."}, None, None),
        ({"source": "file"}, "config", "config file"),
    ],
)
def test_a_bad_profile_names_the_field(change: dict[str, Any], key: str | None, words: str | None) -> None:
    profile = dataclasses.replace(PG, **change)
    if key is None:  # fine as far as we can tell (a host "db:5432" is for the server to judge)
        profiles.check(profile)
        return
    with pytest.raises(errors.ConfigError) as caught:
        profiles.check(profile)
    assert caught.value.key == key and words in str(caught.value)


def test_a_damaged_profiles_file_names_the_key() -> None:
    store = profiles.ProfileStore()
    store.path.parent.mkdir(parents=True)
    store.path.write_text('[profiles.x]\nkind = "postgresql"\nhots = "a"\n')
    with pytest.raises(errors.ConfigError, match=r"profiles.x.hots: unknown key; did you mean 'host'"):
        store.load()
    store.path.write_text('[profiles.x]\nkind = "postgresql"\nport = "5432"\n')
    with pytest.raises(errors.ConfigError, match=r"profiles.x.port: expected int \| None, got str"):
        store.load()
    store.path.write_text('default = "y"\n[profiles.x]\nkind = "sqlite"\npath = "a.db"\nconfig = "a.toml"\n')
    with pytest.raises(errors.ConfigError, match=r"default: no profile named 'y'"):
        store.load()
    store.path.write_text("[profiles.x\n")
    with pytest.raises(errors.ConfigError, match="not valid TOML"):
        store.load()


def test_passwords_go_to_the_keyring_never_to_the_file(memory_keyring: MemoryKeyring) -> None:
    store = profiles.ProfileStore()
    store.save(PG)
    credentials.store(PG.credential_id, "s3cret-Pa55")
    assert memory_keyring.store == {("workbench", "postgresql:bob@db.example.org:5432"): "s3cret-Pa55"}
    assert opening.password_for(PG) == "s3cret-Pa55"
    assert "s3cret" not in store.path.read_text()
    # Another profile for the same login on the same server shares it; another server does not.
    assert opening.password_for(dataclasses.replace(PG, name="other", database="x")) == "s3cret-Pa55"
    assert opening.password_for(dataclasses.replace(PG, host="elsewhere")) is None
    assert credentials.forget(PG.credential_id) is True and credentials.forget(PG.credential_id) is False
    assert opening.password_for(PG) is None
    assert opening.password_for(MSSQL) is None  # Windows login: no password at all


def test_the_environment_variable_beats_the_keyring(
    memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    credentials.store(PG.credential_id, "from-keyring")
    monkeypatch.setenv(credentials.PASSWORD_ENV, "from-env")
    assert opening.password_for(PG) == "from-env"


@pytest.mark.parametrize("backend", [fail.Keyring, null.Keyring])
def test_no_keyring_is_said_plainly_and_nothing_is_written(backend: type, tmp_path: Path) -> None:
    previous = keyring.get_keyring()
    keyring.set_keyring(backend())
    try:
        status = credentials.keyring_status()
        assert not status.available and "password store" in status.reason
        with pytest.raises(errors.CredentialStoreError, match="cannot remember the password: no OS password"):
            credentials.store("x", "secret-value")
        assert credentials.lookup("x") is None
    finally:
        keyring.set_keyring(previous)
    written = [p for p in tmp_path.rglob("*") if p.is_file() and b"secret-value" in p.read_bytes()]
    assert written == []


def test_a_plain_text_keyring_is_not_a_password_store() -> None:
    class PlaintextKeyring(MemoryKeyring):  # stands for keyrings.alt's file backend
        pass

    PlaintextKeyring.__module__ = "keyrings.alt.file"
    previous = keyring.get_keyring()
    keyring.set_keyring(PlaintextKeyring())
    try:
        assert not credentials.keyring_status().available
    finally:
        keyring.set_keyring(previous)


# -- choosing what to open ----------------------------------------------------------------------


def test_choose_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = demo.create(tmp_path / "demo")
    store = profiles.ProfileStore()
    store.save(
        profiles.Profile(
            name="demo", kind="sqlite", path=str(tmp_path / "demo" / demo.DB_NAME), source="file", config=str(config)
        ),
        make_default=True,
    )
    monkeypatch.chdir(tmp_path)
    assert opening.choose().profile.name == "demo"  # the default profile
    assert opening.choose(config=str(config)).config_path == config
    with pytest.raises(errors.UsageError, match="not both"):
        opening.choose(config=str(config), profile="demo")
    with pytest.raises(errors.UsageError, match=r"no connection profile named 'dmeo'.*did you mean 'demo'"):
        opening.choose(profile="dmeo")
    (tmp_path / "workbench.toml").write_text(config.read_text())
    assert opening.choose().config_path == tmp_path / "workbench.toml"  # ./workbench.toml first
    monkeypatch.setenv(opening.PROFILE_ENV, "demo")
    assert opening.choose().profile.name == "demo"


def test_a_profile_over_a_config_file_uses_the_profiles_connection(tmp_path: Path) -> None:
    config = demo.create(tmp_path / "demo")
    copy = tmp_path / "copy.db"
    copy.write_bytes((tmp_path / "demo" / demo.DB_NAME).read_bytes())
    profile = profiles.Profile(name="p", kind="sqlite", path=str(copy), source="file", config=str(config))
    with opening.open_target(opening.Target(profile=profile)) as door:
        wb = engine(door)
        assert wb.engine.url.database.startswith(f"file:{copy.as_posix()}")
        assert wb.queue("cases").claim_next("ann")[0].lock.owner == "ann"
    with opening.open_target(opening.Target(profile=profile)) as door:
        assert len(engine(door).queue("cases").mine("ann")) == 1
    with opening.open_target(opening.Target(config_path=config)) as door:  # the file's own database
        assert engine(door).queue("cases").mine("ann") == []


# -- CLI ----------------------------------------------------------------------------------------


def test_the_first_profile_is_the_default_only_when_asked(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # Issue 50 (6): the first `profile add` (often the table owner's login) became the default silently.
    config = demo.create(tmp_path / "demo")
    add = ["profile", "add", "--kind", "sqlite", "--path", tmp_path / "demo" / demo.DB_NAME, "--queues", config]
    code, out, _ = _cli(capsys, *add[:2], "owner", *add[2:])
    assert code == 0 and "not the default profile" in out and "workbench profile default owner" in out
    assert profiles.ProfileStore().load()[1] is None
    code, _, err = _cli(capsys, "--user", "ann", "queues")
    assert code == 2 and "no default connection profile" in err and "--profile NAME (owner)" in err
    code, out, _ = _cli(capsys, *add[:2], "ann", *add[2:], "--default")
    assert code == 0 and "ann is the default profile" in out
    assert profiles.ProfileStore().load()[1] == "ann"
    code, out, _ = _cli(capsys, "profile", "remove", "ann")  # the owner's is not made the default instead
    assert code == 0 and "there is no default profile now" in out and profiles.ProfileStore().load()[1] is None


@pytest.mark.parametrize(
    ("given", "host", "port"),
    [
        (["--host", "127.0.0.1:49311"], "127.0.0.1", 49311),
        (["--host", "db.example.org:5433", "--port", "5433"], "db.example.org", 5433),
        (["--host", "db1:5432,db2:5433"], "db1:5432,db2:5433", None),  # a primary and its standby: kept
        (["--host", "db.example.org", "--port", "6000"], "db.example.org", 6000),
    ],
)
def test_profile_add_reads_host_and_port(
    capsys: pytest.CaptureFixture[str], given: list[str], host: str, port: int | None
) -> None:
    # Issue 50 (4): `--host 127.0.0.1:49311` was stored as is and became 127.0.0.1:49311:5432.
    code, _, err = _cli(
        capsys,
        "--json",
        "profile",
        "add",
        "p",
        "--kind",
        "postgresql",
        "--database",
        "d",
        "--db-user",
        "u",
        "--published",
        *given,
    )
    assert code == 0, err
    saved = profiles.ProfileStore().get("p")
    assert (saved.host, saved.port) == (host, port)
    url = saved.url()
    if "," not in host:
        assert (url.host, url.port) == (host, port)


@pytest.mark.parametrize(
    ("given", "words"),
    [
        (["--host", "db:5433", "--port", "5432"], "--host db:5433 says port 5433 and --port says 5432"),
        (["--host", "db:abc"], "write the server's name or address, and its port with --port"),
        (["--host", "db:70000"], "write the server's name or address"),
    ],
)
def test_profile_add_refuses_a_host_and_port_it_cannot_read(
    capsys: pytest.CaptureFixture[str], given: list[str], words: str
) -> None:
    code, _, err = _cli(
        capsys,
        "profile",
        "add",
        "p",
        "--kind",
        "mariadb",
        "--database",
        "d",
        "--db-user",
        "u",
        "--published",
        *given,
    )
    assert code == 2 and words in err
    assert profiles.ProfileStore().load() == ({}, None)


def test_a_hand_written_host_and_port_in_the_file_connects_there() -> None:
    profile = dataclasses.replace(PG, host="127.0.0.1:49311")
    assert (profile.url().host, profile.url().port) == ("127.0.0.1", 49311)


def _cli(capsys: pytest.CaptureFixture[str], *args: Any) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_profiles(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = demo.create(tmp_path / "demo")
    code, out, _ = _cli(
        capsys,
        "profile",
        "add",
        "demo",
        "--kind",
        "sqlite",
        "--path",
        tmp_path / "demo" / demo.DB_NAME,
        "--queues",
        config,
        "--default",
    )
    assert code == 0 and "saved profile demo" in out and "demo is the default profile" in out
    code, out, _ = _cli(
        capsys,
        "profile",
        "add",
        "office",
        "--kind",
        "postgresql",
        "--host",
        "db",
        "--database",
        "cases",
        "--db-user",
        "bob",
        "--published",
        "--option",
        "sslmode=require",
    )
    assert code == 0 and "workbench profile password office" in out
    code, out, _ = _cli(capsys, "--json", "profile", "list")
    listed = json.loads(out)
    assert listed["default"] == "demo" and [p["name"] for p in listed["profiles"]] == ["demo", "office"]
    assert listed["profiles"][1]["url"] == "postgresql+psycopg://bob@db:5432/cases?sslmode=require"
    monkeypatch.setattr("sys.stdin", io.StringIO("pw-from-stdin\n"))
    code, out, _ = _cli(capsys, "profile", "password", "office", "--stdin")
    assert code == 0 and memory_keyring.store[("workbench", "postgresql:bob@db:5432")] == "pw-from-stdin"
    code, out, _ = _cli(capsys, "profile", "show", "office")
    assert "stored in the OS keyring" in out and "pw-from-stdin" not in out
    # A command through the profile works like one through --config.
    code, out, _ = _cli(capsys, "--profile", "demo", "--user", "ann", "--json", "next", "cases")
    assert code == 0 and json.loads(out)["owner"] == "ann"
    code, out, _ = _cli(capsys, "--user", "ann", "--json", "mine", "cases")  # the default profile
    assert code == 0 and len(json.loads(out)) == 1
    code, _, err = _cli(capsys, "--profile", "nope", "queues")
    assert code == 2 and "no connection profile named 'nope'" in err
    code, _, err = _cli(capsys, "profile", "add", "bad", "--kind", "postgresql", "--published", "--host", "h")
    assert code == 2 and "profile 'bad': database: enter the database name" in err
    code, out, _ = _cli(capsys, "profile", "password", "office", "--forget")
    assert code == 0 and memory_keyring.store == {}


def test_cli_asks_for_a_password_only_when_the_server_wants_one(
    capsys: pytest.CaptureFixture[str], memory_keyring: MemoryKeyring, pg_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    user, password = pg_server.password_login()
    checked = profiles.Profile(
        name="checked",
        kind="postgresql",
        host=pg_server.host,
        port=pg_server.port,
        database="postgres",
        user=user,
        source="database",
    )
    trusted = dataclasses.replace(checked, name="trusted", user=pg_server.user)
    for p in (checked, trusted):
        profiles.ProfileStore().save(p)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # not a terminal: nobody to ask
    code, _, err = _cli(capsys, "--profile", "checked", "published")
    assert code == 6 and "workbench profile password checked" in err and credentials.PASSWORD_ENV in err
    # A server that trusts the login needs no password and is not asked for one.
    code, _, err = _cli(capsys, "--profile", "trusted", "published")
    assert code == 2 and "not in this database yet" in err and "password" not in err
    monkeypatch.setenv(credentials.PASSWORD_ENV, password)
    code, _, err = _cli(capsys, "--profile", "checked", "published")
    assert code == 2 and "not in this database yet" in err


def test_profile_test_needs_no_password_for_a_trusted_login(
    capsys: pytest.CaptureFixture[str], memory_keyring: MemoryKeyring, pg_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 50 (3): `profile test` said "no password" (exit 6) for a login that needs none (trust,
    # .pgpass), while every other command through the same profile worked.
    user, password = pg_server.password_login()
    trusted = profiles.Profile(
        name="trusted",
        kind="postgresql",
        host=pg_server.host,
        port=pg_server.port,
        database="postgres",
        user=pg_server.user,
        source="database",
    )
    profiles.ProfileStore().save(trusted)
    profiles.ProfileStore().save(dataclasses.replace(trusted, name="checked", user=user))
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # not a terminal
    code, out, _ = _cli(capsys, "profile", "test", "trusted")
    assert code == 0 and "Connected" in out and "password" not in out
    # A login that needs one, with none stored and nobody to ask: the server's answer, and what to do.
    code, out, _ = _cli(capsys, "profile", "test", "checked")
    assert code == errors.DatabaseUnavailable.exit_code
    assert "requires a password" in out and "workbench profile password checked" in out
    monkeypatch.setenv(credentials.PASSWORD_ENV, password)
    code, out, _ = _cli(capsys, "profile", "test", "checked")
    assert code == 0 and "Connected" in out


def test_cli_refuses_to_store_without_a_keyring(
    capsys: pytest.CaptureFixture[str], no_keyring: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    profiles.ProfileStore().save(PG)
    monkeypatch.setattr("sys.stdin", io.StringIO("pw\n"))
    code, _, err = _cli(capsys, "profile", "password", "office", "--stdin")
    assert code == 1 and "no OS password store" in err and credentials.PASSWORD_ENV in err
    assert "pw" not in profiles.ProfileStore().path.read_text()


@pytest.mark.parametrize(
    "given",
    [
        ["--db-user", "alice:S3cr3t-pw"],
        ["--db-user", "alice", "--database", "cases?password=S3cr3t-pw"],
        ["--db-user", "alice", "--database", "cases;PWD=S3cr3t-pw"],
        ["--db-user", "alice", "--database", "cases?sslmode=require&passwd=S3cr3t-pw"],
        ["--db-user", "alice", "--database", "cases%3Fpassword%3DS3cr3t-pw"],
        ["--db-user", "alice", "--host", "alice:S3cr3t-pw@db"],
        ["--db-user", "alice", "--option", "application_name=x;pwd=S3cr3t-pw"],
    ],
)
def test_profile_add_refuses_a_password_in_any_field(capsys: pytest.CaptureFixture[str], given: list[str]) -> None:
    store = profiles.ProfileStore()
    code, out, err = _cli(
        capsys,
        "profile",
        "add",
        "office",
        "--kind",
        "postgresql",
        "--host",
        "db",
        "--database",
        "cases",
        "--published",
        *given,
    )
    assert code == 2, (out, err)
    assert "must not contain a password" in err and "keyring" in err and "WORKBENCH_DB_PASSWORD" in err
    assert "S3cr3t" not in out + err
    written = store.path.read_text(encoding="utf-8") if store.path.exists() else ""
    assert "S3cr3t" not in written
    # The same check as a config file's database.url: one rule for both.
    code, _, err = _cli(
        capsys,
        "--json",
        "profile",
        "add",
        "office",
        "--kind",
        "postgresql",
        "--host",
        "db",
        "--database",
        "cases",
        "--db-user",
        "alice",
        "--published",
    )
    assert code == 0 and "S3cr3t" not in store.path.read_text(encoding="utf-8")


def test_a_primary_and_its_standbys_in_one_profile() -> None:
    """`--host db1:5432,db2:5433`: libpq's multi-host form, keeping the server that accepts writes."""
    import sqlalchemy as sa

    p = profiles.Profile(
        name="ha", kind="postgresql", host="db1:5432,db2:5433", database="cases", user="bob", config="x.toml"
    )
    profiles.check(p)
    args = sa.create_engine(p.url()).dialect.create_connect_args(p.url())[1]
    assert (args["host"], args["port"], args["target_session_attrs"]) == ("db1,db2", "5432,5433", "read-write")
    same_port = profiles.Profile(
        name="ha", kind="postgresql", host="db1,db2", port=6432, database="cases", user="bob", config="x.toml"
    )
    assert sa.create_engine(same_port.url()).dialect.create_connect_args(same_port.url())[1]["port"] == "6432,6432"
    for bad, kind in (("db1,db2", "mariadb"), ("db1:99999,db2", "postgresql"), ("db1,,db2", "postgresql")):
        with pytest.raises(errors.ConfigError, match="host"):
            profiles.check(profiles.Profile(name="x", kind=kind, host=bad, database="d", user="u", config="x.toml"))


@pytest.mark.parametrize(
    "option",
    [
        "sslpassword=S3cr3t-pw",
        "SSLPassword=S3cr3t-pw",
        "ssl_key_password=S3cr3t-pw",
        "passphrase=S3cr3t-pw",
        "access_token=S3cr3t-pw",
        "Pwd=S3cr3t-pw",
    ],
)
def test_profile_add_refuses_every_secret_option(capsys: pytest.CaptureFixture[str], option: str) -> None:
    store = profiles.ProfileStore()
    code, out, err = _cli(
        capsys,
        "profile",
        "add",
        "office",
        "--kind",
        "postgresql",
        "--host",
        "db",
        "--database",
        "cases",
        "--db-user",
        "alice",
        "--published",
        "--option",
        option,
    )
    assert code == 2, (out, err)
    assert f"options.{option.partition('=')[0]}" in err and "keyring" in err
    assert "S3cr3t" not in out + err and not store.path.exists()


def test_a_secret_already_in_the_profiles_file_is_refused_and_never_printed(capsys: pytest.CaptureFixture[str]) -> None:
    """A file written before secrets were refused (or by hand): every command says which option to remove."""
    store = profiles.ProfileStore()
    store.path.parent.mkdir(parents=True)
    store.path.write_text(
        '[profiles.office]\nkind = "postgresql"\nhost = "db"\ndatabase = "cases"\nuser = "alice"\n'
        'source = "database"\noptions = { sslmode = "require", sslpassword = "S3cr3t-pw" }\n',
        encoding="utf-8",
    )
    for args in (
        ["profile", "show", "office"],
        ["--json", "profile", "show", "office"],
        ["profile", "list"],
        ["--json", "profile", "list"],
        ["--profile", "office", "queues"],
    ):
        code, out, err = _cli(capsys, *args)
        assert code == 2, (args, out, err)
        assert "profiles.office.options.sslpassword" in err and str(store.path) in err
        assert "S3cr3t" not in out + err


def test_a_secret_option_in_a_config_files_url_is_refused(tmp_path: Path) -> None:
    from workbench.config import loader

    path = tmp_path / "workbench.toml"
    path.write_text(demo.config_text("postgresql+psycopg://alice@db/cases?sslpassword=S3cr3t-pw"), encoding="utf-8")
    with pytest.raises(errors.ConfigError) as caught:
        loader.load(path)
    assert caught.value.key == "database.url" and "S3cr3t" not in str(caught.value)


def test_a_password_that_is_not_text_is_refused(
    capsys: pytest.CaptureFixture[str], memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bytes that are not UTF-8 on stdin (or at the prompt): said, nothing stored, no internal error."""
    code, _, _ = _cli(
        capsys,
        "profile",
        "add",
        "office",
        "--kind",
        "postgresql",
        "--host",
        "db",
        "--database",
        "cases",
        "--db-user",
        "bob",
        "--published",
    )
    assert code == 0
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"pa\xdfword\n"), encoding="utf-8"))
    code, out, err = _cli(capsys, "profile", "password", "office", "--stdin")
    assert code == 2 and "not valid text" in err and "internal error" not in err, (out, err)
    assert memory_keyring.store == {}
