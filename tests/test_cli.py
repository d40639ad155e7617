"""The `workbench` command line: exit codes, --json output, token hiding, demo, init and attach."""

from __future__ import annotations

import dataclasses
import datetime as dt
import getpass
import gettext
import json
import os
import socket
import sqlite3
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests import support
from workbench import demo
from workbench.cli import main


@dataclasses.dataclass
class Run:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


CLI = Callable[..., Run]


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> CLI:
    """Run `workbench ARGS…` in this process; returns the exit code and what it printed."""
    capsys.readouterr()

    def run(*args: Any) -> Run:
        code = main.main([str(a) for a in args])
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    return run


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return support.sqlite_demo(tmp_path / "demo")


@pytest.fixture
def wb(cli: CLI, config: Path) -> Callable[..., Run]:
    """`wb(USER, COMMAND…)`: a command on the demo config as USER."""
    return lambda user, *args: cli("--config", config, "--user", user, *args)


def usage_exit(*args: Any) -> int:
    """Exit code of an argparse usage error (argparse exits instead of returning)."""
    with pytest.raises(SystemExit) as info:
        main.main([str(a) for a in args])
    return int(info.value.code)


def sql(config: Path, statement: str, *params: Any) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(config.parent / demo.DB_NAME)
    try:
        with conn:
            return conn.execute(statement, params).fetchall()
    finally:
        conn.close()


def age_case_lock(config: Path, key: int, seconds: int) -> None:
    """Move a demo case's lock into the past, as if `seconds` had passed."""
    shift = f"-{seconds} seconds"
    sql(
        config,
        "UPDATE cases SET wb_locked_at = strftime('%Y-%m-%d %H:%M:%f', wb_locked_at, ?) || '000', "
        "wb_lock_expires = strftime('%Y-%m-%d %H:%M:%f', wb_lock_expires, ?) || '000' WHERE case_id = ?",
        shift,
        shift,
        key,
    )


def waiting_case(config: Path) -> int:
    return sql(config, "SELECT min(case_id) FROM cases WHERE status IN ('new', 'open') AND wb_locked_by IS NULL")[0][0]


def edit_config(config: Path, old: str, new: str) -> None:
    text = config.read_text(encoding="utf-8")
    assert old in text
    config.write_text(text.replace(old, new, 1), encoding="utf-8")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- the README round trip, through the real console entry ----------------------------------------


def test_readme_round_trip_through_the_console_entry(tmp_path: Path) -> None:
    env = {**os.environ, "WORKBENCH_HOME": str(tmp_path / "home")}

    def workbench(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "workbench", *args],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    made = workbench("demo", str(tmp_path / "demo"))
    assert made.returncode == 0, made.stderr
    cfg = made.stdout.strip()
    assert Path(cfg) == (tmp_path / "demo" / "workbench.toml").resolve()
    as_alice = ["--user", "alice", "--config", cfg]

    claimed = workbench(*as_alice, "next", "cases", "--json")
    assert claimed.returncode == 0, claimed.stderr
    data = json.loads(claimed.stdout)
    assert {"queue", "key", "token", "owner", "locked_at", "expires_at", "item"} <= set(data)
    assert data["queue"] == "cases" and data["owner"] == "alice" and data["item"]["case_id"] == data["key"]
    key, token = str(data["key"]), data["token"]

    saved = workbench(*as_alice, "save", "cases", key, "--token", token, "--set", "resolution=Replaced the cable")
    assert saved.returncode == 0, saved.stderr
    assert saved.stdout.startswith(f"saved cases {key}")
    done = workbench(*as_alice, "complete", "cases", key, "--token", token, "--outcome", "resolved")
    assert done.returncode == 0 and done.stdout.strip() == f"completed cases {key} as resolved"

    history = workbench(*as_alice, "history", "cases", key)
    assert history.returncode == 0
    events = [line.split()[2] for line in history.stdout.splitlines()[1:]]
    assert events == ["claim", "save", "complete"]
    assert "outcome resolved" in history.stdout and token not in history.stdout

    again = workbench(*as_alice, "complete", "cases", key, "--token", token, "--outcome", "waiting")
    assert again.returncode == 4
    assert f"cases {key} was already completed by alice" in again.stderr


# What `workbench next` loads: every module counts in a command's time when it runs in a process
# of its own (docs/explanation/performance.md); these are no part of a claim on a config file.
NOT_FOR_A_CLAIM = (
    "PySide6",
    "shiboken6",
    "workbench.gui",
    "workbench.services.admin",  # grants, groups, attach, the self-checks
    "workbench.db.attach",
    "urllib.request",  # http.client and email: a source pane's fetch
    "difflib",  # hints in error messages
    "statistics",  # the console's figures
    "sqlalchemy.dialects.postgresql",  # other databases' dialects and drivers
    "sqlalchemy.dialects.mysql",
    "sqlalchemy.dialects.mssql",
    "psycopg",
    "pymysql",
    "pyodbc",
    "keyring",  # no password for a SQLite file
)


def test_next_in_its_own_process_loads_only_what_a_claim_needs(tmp_path: Path, config: Path) -> None:
    listing = tmp_path / "modules.json"
    code = (
        "import json, runpy, sys\n"
        f"sys.argv = ['workbench', '--config', {str(config)!r}, '--user', 'alice', '--json', 'next', 'cases']\n"
        "try:\n"
        "    runpy.run_module('workbench', run_name='__main__')\n"
        "except SystemExit as exc:\n"
        "    assert exc.code == 0, exc.code\n"
        f"open({str(listing)!r}, 'w').write(json.dumps(sorted(sys.modules)))\n"
    )
    env = {**os.environ, "WORKBENCH_HOME": str(tmp_path / "home"), "WORKBENCH_COMMAND_SERVER": "off"}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["owner"] == "alice"
    loaded = json.loads(listing.read_text(encoding="utf-8"))
    assert "workbench.db.claims" in loaded  # the listing is of a process that claimed
    unwanted = sorted(m for m in loaded if any(m == n or m.startswith(n + ".") for n in NOT_FOR_A_CLAIM))
    assert unwanted == []


# -- usage and configuration errors: exit 2 -------------------------------------------------------


def test_help_lists_commands_and_exit_codes(cli: CLI, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli("--help")
    out = capsys.readouterr().out
    assert exit_.value.code == 0 and "usage: workbench" in out and "exit codes:" in out and "complete" in out


def test_no_command_opens_the_window(cli: CLI, monkeypatch: pytest.MonkeyPatch) -> None:
    from workbench.gui import app

    calls = []
    monkeypatch.setattr(
        app, "run", lambda config, user, demo, profile, supervisor: calls.append((config, user, demo, profile)) or 0
    )
    assert cli("--user", "alice", "--demo").code == 0
    assert cli("--config", "x.toml", "--user", "bob").code == 0
    assert cli("--profile", "office", "--user", "bob").code == 0
    assert calls == [(None, "alice", True, None), ("x.toml", "bob", False, None), (None, "bob", False, "office")]


def test_no_command_without_a_display_says_so(cli: CLI, monkeypatch: pytest.MonkeyPatch) -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("only X11/Wayland systems need a display variable")
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(name, raising=False)
    result = cli("--user", "alice")
    assert result.code == 1
    assert "no display" in result.err and "workbench --help" in result.err


@pytest.mark.parametrize(
    "args",
    [
        ["frobnicate"],
        ["next"],
        ["next", "cases", "--count", "0"],
        ["next", "cases", "--count", "many"],
        ["save", "cases", "1", "--token", "t"],
        ["save", "cases", "1", "--token", "t", "--set", "resolution"],
        ["complete", "cases", "1"],
        ["force-release", "cases", "1"],
        ["reassign", "cases", "1", "--reason", "r"],
    ],
)
def test_argparse_usage_errors_exit_2(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert usage_exit(*args) == 2
    assert "workbench: error:" in capsys.readouterr().err


def test_a_command_line_is_parsed_by_its_own_command_s_parser(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    built: list[Any] = []
    real = main.build_parser

    def build(only: frozenset[str] | None = None) -> Any:
        built.append(only)
        return real(only)

    monkeypatch.setattr(main, "build_parser", build)
    parsed = main._parse(None, ["--user", "next", "--json", "next", "cases", "--count", "2"])
    assert (parsed.user, parsed.command, parsed.queue, parsed.count) == ("next", "next", "cases", 2)
    assert len(built) == 1 and "next" in built[0]  # one parser, of the command line's words
    commands = next(a for a in real(built[0])._actions if a.dest == "command")
    assert sorted(commands.choices) == ["next"]  # type: ignore[arg-type]
    # What that parser refuses, the whole one says: every command listed, as before.
    assert usage_exit("--user", "next", "nxt", "cases") == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'nxt'" in err and "'complete'" in err and "'people'" in err


def test_the_whole_parser_is_built_once_a_process(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """What a command's own parser refuses goes to the whole parser (about 4 ms to build): a process
    that runs several command lines (the command server's, a test's) builds it once."""
    built: list[Any] = []
    real = main.build_parser
    monkeypatch.setattr(main, "build_parser", lambda only=None: built.append(only) or real(only))
    main.whole_parser.cache_clear()
    for words in (["nxt", "cases"], ["next", "cases", "--bogus"], ["--help"]):
        assert usage_exit(*words) in (0, 2)
    assert "invalid choice: 'nxt'" in capsys.readouterr().err
    assert [only for only in built if only is None] == [None]


def _write_mo(path: Path, messages: dict[str, str]) -> None:
    """A GNU gettext catalogue (.mo) of `messages`, in UTF-8."""
    entries = sorted({"": "Content-Type: text/plain; charset=UTF-8\n", **messages}.items())
    keys = [k.encode() for k, _ in entries]
    values = [v.encode() for _, v in entries]
    start = 7 * 4 + 16 * len(entries)  # the header, then the two tables of (length, offset)
    table, strings = [], b""
    for text in keys + values:
        table.append((len(text), start + len(strings)))
        strings += text + b"\0"
    header = struct.pack("<7I", 0x950412DE, 0, len(entries), 28, 28 + 8 * len(entries), 0, 0)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(header + b"".join(struct.pack("<2I", *t) for t in table) + strings)


def test_argparse_text_is_translated_as_gettext_finds_it_looked_up_once_a_language(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """argparse asks gettext for each of its strings, and gettext searched the locale directories each
    time (8 ms of the whole parser's 12): the same translation, found once for each language."""
    _write_mo(tmp_path / "de" / "LC_MESSAGES" / "messages.mo", {"usage: ": "Aufruf: "})
    monkeypatch.setitem(gettext._localedirs, gettext.textdomain(), str(tmp_path))  # type: ignore[attr-defined]
    searched: list[object] = []
    find = gettext.find
    monkeypatch.setattr(gettext, "find", lambda *a, **k: searched.append(a) or find(*a, **k))
    for language, usage in (("de", "Aufruf: workbench"), ("de", "Aufruf: workbench"), ("fr", "usage: workbench")):
        monkeypatch.setenv("LANGUAGE", language)
        assert usage_exit("--user", "ann", "nxt", "cases") == 2
        assert capsys.readouterr().err.startswith(usage)
    assert len(searched) == 2  # German, then French


def test_usage_error_points_at_the_subcommand_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert usage_exit("save", "cases", "1", "--token", "t", "--set", "resolution") == 2
    err = capsys.readouterr().err
    assert "'resolution': write COLUMN=VALUE" in err and "see `workbench save --help`" in err


def test_set_given_twice_is_a_usage_error(wb: Callable[..., Run]) -> None:
    lock = wb("alice", "next", "cases", "--json").json()
    result = wb(
        "alice",
        "save",
        "cases",
        lock["key"],
        "--token",
        lock["token"],
        "--set",
        "resolution=a",
        "--set",
        "resolution=b",
    )
    assert result.code == 2 and "--set resolution is given twice" in result.err


def test_unknown_queue_exits_2_and_lists_the_queues(wb: Callable[..., Run], config: Path) -> None:
    result = wb("alice", "next", "nope")
    assert result.code == 2
    queues = "cases, imports, imports_review"
    assert result.err.strip() == f"workbench: no queue named 'nope' in {config} (queues: {queues})"


def test_missing_config_file_exits_2(cli: CLI, tmp_path: Path) -> None:
    result = cli("--config", tmp_path / "missing.toml", "queues")
    assert result.code == 2 and "missing.toml: file not found" in result.err


def test_no_config_anywhere_exits_2(cli: CLI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = cli("queues")
    assert result.code == 2 and "no configuration file found" in result.err and "workbench demo" in result.err


def test_config_error_as_json_names_file_and_key(cli: CLI, config: Path) -> None:
    edit_config(config, 'lock_duration = "15m"', 'lok_duration = "15m"')
    result = cli("--config", config, "--json", "queues")
    assert result.code == 2
    error = result.json()["error"]
    assert error == {
        "type": "ConfigError",
        "exit_code": 2,
        "file": str(config),
        "key": "queues.cases.lok_duration",
        "message": f"{config}: queues.cases.lok_duration: unknown key; did you mean 'lock_duration'?",
    }


def test_config_checked_against_the_table_exits_2(wb: Callable[..., Run], config: Path) -> None:
    edit_config(config, 'order = ["priority asc"', 'order = ["priorty asc"')
    result = wb("alice", "next", "cases")
    assert result.code == 2
    assert "queues.cases.order: column 'priorty' is not in table cases; did you mean 'priority'?" in result.err


def test_password_in_url_is_refused_and_not_printed(cli: CLI, config: Path) -> None:
    edit_config(config, 'url = "sqlite:///workbench-demo.db"', 'url = "postgresql+psycopg://bob:Pa55word@db/x"')
    result = cli("--config", config, "--user", "bob", "--json", "next", "cases")
    assert result.code == 2 and "must not contain a password" in result.err
    assert "Pa55word" not in result.out + result.err


# -- nothing to claim: exit 3 ------------------------------------------------------------------


def test_empty_queue_exits_3(wb: Callable[..., Run], config: Path) -> None:
    sql(config, "UPDATE cases SET status = 'closed'")
    result = wb("alice", "next", "cases")
    assert result.code == 3 and result.out == ""
    assert result.err.strip() == "workbench: nothing to do in cases: no item is waiting"
    error = wb("alice", "--json", "next", "cases").json()["error"]
    assert error["type"] == "NothingToClaim" and error["exit_code"] == 3 and error["reason"] == "empty"


def test_item_held_by_someone_else_exits_3(wb: Callable[..., Run]) -> None:
    key = wb("alice", "next", "cases", "--json").json()["key"]
    result = wb("bob", "claim", "cases", key)
    assert result.code == 3 and f"cases {key} is held by alice since" in result.err


def test_per_user_limit_exits_3(wb: Callable[..., Run]) -> None:
    assert len(wb("alice", "next", "cases", "--count", "5", "--json").json()) == 3  # max_locks_per_user = 3
    result = wb("alice", "next", "cases")
    assert result.code == 3 and "you already hold 3 item(s) in cases" in result.err


# -- lock lost or not held: exit 4 ---------------------------------------------------------------


def test_wrong_token_exits_4_and_says_who_holds_it(wb: Callable[..., Run]) -> None:
    lock = wb("alice", "next", "cases", "--json").json()
    key = lock["key"]
    mine = wb("alice", "save", "cases", key, "--token", "0" * 32, "--set", "resolution=x")
    assert mine.code == 4 and "held by you (with a newer token)" in mine.err
    theirs = wb("bob", "--json", "complete", "cases", key, "--token", "f" * 32)
    assert theirs.code == 4
    error = theirs.json()["error"]
    assert error["type"] == "LockLost" and error["cause"] == "not_held" and error["holder"] == "alice"
    assert f"you hold no lock on cases {key} with that token; it is now held by alice" in error["message"]


def test_stale_token_after_release_exits_4(wb: Callable[..., Run]) -> None:
    lock = wb("alice", "next", "cases", "--json").json()
    assert wb("alice", "release", "cases", lock["key"], "--token", lock["token"], "--reason", "later").code == 0
    result = wb("alice", "save", "cases", lock["key"], "--token", lock["token"], "--set", "resolution=x")
    assert result.code == 4 and f"cases {lock['key']} was released by alice" in result.err


def test_force_released_lock_exits_4_with_who_and_why(wb: Callable[..., Run]) -> None:
    lock = wb("alice", "next", "cases", "--json").json()
    key = lock["key"]
    assert wb("boss", "force-release", "cases", key, "--reason", "customer called back").code == 0
    result = wb("alice", "--json", "save", "cases", key, "--token", lock["token"], "--set", "resolution=x")
    assert result.code == 4
    assert (
        f"supervisor boss force-released cases {key}" in result.err and "(reason: customer called back)" in result.err
    )
    error = result.json()["error"]
    assert (error["cause"], error["by"], error["reason"]) == ("force_released", "boss", "customer called back")


def test_force_release_of_an_unlocked_item_exits_4(wb: Callable[..., Run], config: Path) -> None:
    result = wb("boss", "force-release", "cases", waiting_case(config), "--reason", "tidy up")
    assert result.code == 4 and "is not locked by anyone" in result.err


# -- invalid values: exit 5 ----------------------------------------------------------------------


def test_invalid_set_value_exits_5_and_names_the_column(wb: Callable[..., Run]) -> None:
    lock = wb("alice", "next", "cases", "--json").json()
    result = wb(
        "alice", "--json", "save", "cases", lock["key"], "--token", lock["token"], "--set", "time_spent_min=soon"
    )
    assert result.code == 5
    error = result.json()["error"]
    assert error["type"] == "InvalidValue" and error["column"] == "time_spent_min"
    assert error["message"] == "time_spent_min: 'soon' is not a whole number"


def case_row(config: Path, key: int) -> tuple[Any, ...]:
    return sql(
        config,
        "SELECT status, priority, time_spent_min, resolution, category, wb_locked_by, wb_lock_token "
        "FROM cases WHERE case_id = ?",
        key,
    )[0]


@pytest.mark.parametrize("command", ["save", "complete"])
@pytest.mark.parametrize(
    "sets, column, message",
    [
        (["time_spent_min=1441"], "time_spent_min", "time_spent_min: must be at most 1440"),
        (["time_spent_min=-5"], "time_spent_min", "time_spent_min: must be at least 0"),
        (["priority=7"], "priority", "priority: must be one of 1, 2, 3, 4"),
        (["priority="], "priority", "priority: required"),
        (
            ["category=Plumbing"],
            "category",
            "category: must be one of Hardware, Software, Network, Access, Email, Printing",
        ),
        # A valid value alongside is not written either: the edit is refused as a whole.
        (["resolution=Rebooted", "time_spent_min=2000"], "time_spent_min", "time_spent_min: must be at most 1440"),
    ],
)
def test_value_breaking_a_field_rule_exits_5_and_changes_nothing(
    wb: Callable[..., Run], config: Path, command: str, sets: list[str], column: str, message: str
) -> None:
    lock = wb("alice", "next", "cases", "--json").json()
    before = case_row(config, lock["key"])
    args = [command, "cases", lock["key"], "--token", lock["token"]]
    for assignment in sets:
        args += ["--set", assignment]
    result = wb("alice", "--json", *args)
    assert result.code == 5
    error = result.json()["error"]
    assert (error["type"], error["column"], error["message"]) == ("InvalidValue", column, message)
    assert result.err == f"workbench: {message}\n"
    after = case_row(config, lock["key"])
    assert after == before and after[0] == "open" and after[5] == "alice"  # still open, still alice's
    # The same values within the rules go through, so the refusal above was the rule's doing.
    good = wb(
        "alice",
        command,
        "cases",
        lock["key"],
        "--token",
        lock["token"],
        "--set",
        "time_spent_min=1440",
        "--set",
        "priority=2",
        "--set",
        "category=Network",
    )
    assert good.code == 0, good.err
    status, priority, spent, _, category, holder, _ = case_row(config, lock["key"])
    assert (priority, spent, category) == (2, 1440, "Network")
    assert (status, holder) == (("open", "alice") if command == "save" else ("resolved", None))


def test_pattern_breach_exits_5_with_the_help_text(wb: Callable[..., Run], config: Path) -> None:
    lock = wb("bob", "next", "imports", "--json").json()
    query = "SELECT iban, invoice_no, check_status, wb_locked_by FROM import_rows WHERE row_id = ?"
    before = sql(config, query, lock["key"])
    for command in ("save", "complete"):
        result = wb(
            "bob",
            command,
            "imports",
            lock["key"],
            "--token",
            lock["token"],
            "--set",
            "iban=de89 3704 0044 0532 0130 00",
        )
        assert result.code == 5
        assert result.err == "workbench: iban: an IBAN in capitals without spaces, such as DE89370400440532013000\n"
        required = wb("bob", command, "imports", lock["key"], "--token", lock["token"], "--set", "invoice_no=")
        assert required.code == 5 and required.err == "workbench: invoice_no: required\n"
    assert sql(config, query, lock["key"]) == before
    ok = wb("bob", "complete", "imports", lock["key"], "--token", lock["token"], "--set", "iban=DE89370400440532013000")
    assert ok.code == 0, ok.err
    iban, _, status, holder = sql(config, query, lock["key"])[0]
    assert (iban, status, holder) == ("DE89370400440532013000", "to_review", None)  # a clerk's first go to review


def test_empty_value_clears_an_optional_number(wb: Callable[..., Run], config: Path) -> None:
    lock = wb("alice", "next", "cases", "--json").json()
    base = ["save", "cases", lock["key"], "--token", lock["token"]]
    assert wb("alice", *base, "--set", "time_spent_min=30").code == 0
    assert case_row(config, lock["key"])[2] == 30
    assert wb("alice", *base, "--set", "time_spent_min= ").code == 0
    assert case_row(config, lock["key"])[2] is None


def test_protected_and_unknown_columns_exit_5(wb: Callable[..., Run]) -> None:
    lock = wb("alice", "next", "cases", "--json").json()
    base = ["save", "cases", lock["key"], "--token", lock["token"], "--set"]
    status = wb("alice", *base, "status=resolved")
    assert status.code == 5 and "status: cannot be edited: it is set by the workflow" in status.err
    typo = wb("alice", *base, "resolutoin=x")
    assert typo.code == 5 and "did you mean 'resolution'" in typo.err


def test_unknown_item_key_exits_5(wb: Callable[..., Run]) -> None:
    missing = wb("alice", "show", "cases", "999999")
    assert missing.code == 5 and "cases has no item with key 999999" in missing.err
    bad = wb("alice", "claim", "cases", "abc")
    assert bad.code == 5 and "key 'abc' is not valid for cases.case_id" in bad.err
    assert wb("alice", "history", "cases", "999999").code == 5


def test_unknown_outcome_exits_5(wb: Callable[..., Run]) -> None:
    lock = wb("alice", "next", "cases", "--json").json()
    result = wb("alice", "complete", "cases", lock["key"], "--token", lock["token"], "--outcome", "closed")
    assert result.code == 5 and "no outcome 'closed' (outcomes: resolved, waiting)" in result.err


# -- database unreachable: exit 6 ----------------------------------------------------------------


QUEUE = """
[queues.cases]
table = "cases"
key = "case_id"
todo = { status = "open" }
outcomes.done.set = { status = "done" }
"""


def test_missing_sqlite_file_exits_6_and_is_not_created(cli: CLI, tmp_path: Path) -> None:
    cfg = tmp_path / "workbench.toml"
    cfg.write_text('[database]\nurl = "sqlite:///gone.db"\n' + QUEUE, encoding="utf-8")
    result = cli("--config", cfg, "--user", "alice", "--json", "next", "cases")
    assert result.code == 6
    error = result.json()["error"]
    assert error["type"] == "DatabaseUnavailable" and error["exit_code"] == 6
    assert f"the SQLite database file {tmp_path / 'gone.db'} does not exist" in error["message"]
    assert not (tmp_path / "gone.db").exists()


def test_closed_postgresql_port_exits_6(cli: CLI, tmp_path: Path) -> None:
    cfg = tmp_path / "workbench.toml"
    cfg.write_text(
        f'[database]\nurl = "postgresql+psycopg://wb@127.0.0.1:{free_port()}/wb"\nconnect_timeout = 2\n' + QUEUE,
        encoding="utf-8",
    )
    result = cli("--config", cfg, "--user", "alice", "next", "cases")
    assert result.code == 6 and result.out == ""
    assert result.err.startswith("workbench: cannot reach the database:")
    assert "Traceback" not in result.err


# -- anything else: exit 1 -----------------------------------------------------------------------


def test_extend_beyond_the_cap_exits_1(wb: Callable[..., Run], config: Path) -> None:
    edit_config(config, 'max_lock_duration = "2h"', 'max_lock_duration = "15m"')  # = lock_duration
    lock = wb("alice", "next", "cases", "--json").json()
    result = wb("alice", "--json", "extend", "cases", lock["key"], "--token", lock["token"])
    assert result.code == 1
    error = result.json()["error"]
    assert error["type"] == "ExtendLimitReached" and error["exit_code"] == 1
    assert "cannot be extended beyond" in error["message"] and "at most 15 min" in error["message"]


def test_extend_moves_the_expiry(wb: Callable[..., Run], config: Path) -> None:
    lock = wb("alice", "next", "cases", "--json").json()
    age_case_lock(config, lock["key"], 600)
    extended = wb("alice", "extend", "cases", lock["key"], "--token", lock["token"], "--json")
    assert extended.code == 0
    data = extended.json()
    assert data["token"] == lock["token"] and data["expired"] is False
    # Times are shown to the second, and the extension lands within a second of the claim: compare
    # with the expiry the aged lock had (600 s earlier), not with the claim's own.
    aged = dt.datetime.fromisoformat(lock["expires_at"]) - dt.timedelta(seconds=600)
    assert dt.datetime.fromisoformat(data["expires_at"]) >= aged + dt.timedelta(seconds=599)


# -- --json on every command ---------------------------------------------------------------------


def test_json_setup_commands(cli: CLI, tmp_path: Path) -> None:
    made = cli("demo", tmp_path / "d", "--json")
    assert made.code == 0
    assert made.json() == {"config": str((tmp_path / "d" / "workbench.toml").resolve()), "created": True}
    cfg = made.json()["config"]
    assert cli("--config", cfg, "init", "--json").json() == {"applied": []}
    queues = cli("--config", cfg, "queues", "--json").json()
    assert queues["config"] == cfg
    assert queues["queues"][0] == {
        "name": "cases",
        "title": "Helpdesk cases",
        "table": "cases",
        "outcomes": ["resolved", "waiting"],
    }
    assert [q["name"] for q in queues["queues"]] == ["cases", "imports", "imports_review"]
    attach = cli("--config", cfg, "attach", "cases", "--json").json()
    assert attach == {"queue": "cases", "ddl": "", "applied": False, "notes": [], "suggested": False}


def test_json_holder_commands(wb: Callable[..., Run], config: Path) -> None:
    first = wb("alice", "next", "cases", "--json").json()
    assert first["owner"] == "alice" and first["resumed"] is False and first["item"]["status"] == "open"
    span = dt.datetime.fromisoformat(first["expires_at"]) - dt.datetime.fromisoformat(first["locked_at"])
    assert span == dt.timedelta(minutes=15)
    both = wb("alice", "next", "imports", "--count", "2", "--json").json()
    assert isinstance(both, list) and len(both) == 2 and both[0]["key"] < both[1]["key"]

    picked = wb("alice", "claim", "cases", waiting_case(config), "--json").json()
    assert picked["owner"] == "alice" and picked["item"]["status"] == "open"
    resumed = wb("alice", "claim", "cases", picked["key"], "--json").json()
    assert resumed["resumed"] is True and resumed["token"] == picked["token"]

    key, token = first["key"], first["token"]
    saved = wb("alice", "save", "cases", key, "--token", token, "--set", "time_spent_min=15", "--json").json()
    assert saved["key"] == key and saved["token"] == token
    age_case_lock(config, key, 60)  # so that extending surely moves the expiry
    assert wb("alice", "extend", "cases", key, "--token", token, "--json").json()["owner"] == "alice"
    mine = wb("alice", "mine", "cases", "--json").json()
    assert {m["key"] for m in mine} == {key, picked["key"]} and {m["token"] for m in mine} == {token, picked["token"]}

    released = wb("alice", "release", "cases", picked["key"], "--token", picked["token"], "--json").json()
    assert (released["queue"], str(released["key"]), released["released"]) == ("cases", str(picked["key"]), True)
    done = wb("alice", "complete", "cases", key, "--token", token, "--outcome", "waiting", "--json").json()
    assert {k: done[k] for k in ("queue", "key", "owner", "outcome", "replayed")} == {
        "queue": "cases",
        "key": key,
        "owner": "alice",
        "outcome": "waiting",
        "replayed": False,
    }
    again = wb("alice", "complete", "cases", key, "--token", token, "--outcome", "waiting", "--json").json()
    assert again["replayed"] is True

    history = wb("alice", "history", "cases", key, "--json").json()
    assert [(e["kind"], e["actor"], e["outcome"]) for e in history] == [
        ("claim", "alice", None),
        ("save", "alice", None),
        ("extend", "alice", None),
        ("complete", "alice", "waiting"),
    ]
    shown = wb("alice", "show", "cases", key, "--json").json()
    assert shown["state"] == "done:waiting" and shown["lock"] is None and shown["item"]["time_spent_min"] == 15


def test_json_supervisor_commands(wb: Callable[..., Run], config: Path) -> None:
    a = wb("alice", "next", "cases", "--json").json()
    b = wb("bob", "next", "cases", "--json").json()
    c = wb("carol", "next", "cases", "--json").json()
    locks = wb("boss", "locks", "cases", "--json").json()
    assert {(entry["key"], entry["owner"]) for entry in locks} == {
        (a["key"], "alice"),
        (b["key"], "bob"),
        (c["key"], "carol"),
    }
    assert all(entry["expired"] is False for entry in locks)

    gone = wb("boss", "force-release", "cases", a["key"], "--reason", "wrong team", "--json").json()
    assert gone["reason"] == "wrong team" and gone["released"]["owner"] == "alice"
    moved = wb("boss", "reassign", "cases", b["key"], "--to", "dave", "--reason", "holiday", "--json").json()
    assert moved["owner"] == "dave" and moved["key"] == b["key"] and "token" not in moved

    age_case_lock(config, c["key"], 16 * 60)
    swept = wb("boss", "sweep", "cases", "--json").json()
    assert [(e["key"], e["owner"]) for e in swept["expired"]] == [(c["key"], "carol")]
    assert wb("boss", "sweep", "cases", "--json").json() == {"expired": []}
    assert [entry["owner"] for entry in wb("boss", "locks", "cases", "--json").json()] == ["dave"]


def test_json_flag_works_before_and_after_the_command(wb: Callable[..., Run]) -> None:
    lock = wb("alice", "--json", "next", "cases").json()
    before = wb("alice", "--json", "mine", "cases").json()
    after = wb("alice", "mine", "cases", "--json").json()
    assert [m["token"] for m in before] == [m["token"] for m in after] == [lock["token"]]


def test_json_errors_go_to_stdout_and_the_message_to_stderr(wb: Callable[..., Run]) -> None:
    result = wb("alice", "--json", "show", "cases", "999999")
    assert result.code == 5
    error = result.json()["error"]
    assert set(error) >= {"type", "message", "exit_code"} and error["exit_code"] == 5
    assert result.err.strip() == f"workbench: {error['message']}"


# -- tokens are the holder's ---------------------------------------------------------------------


def test_show_and_locks_do_not_reveal_tokens(wb: Callable[..., Run]) -> None:
    lock = wb("alice", "next", "cases", "--json").json()
    token = lock["token"]
    for command in (["show", "cases", lock["key"]], ["locks", "cases"], ["history", "cases", lock["key"]]):
        for as_json in ([], ["--json"]):
            result = wb("bob", *command, *as_json)
            assert result.code == 0 and token not in result.out + result.err, (command, as_json)
    shown = wb("bob", "show", "cases", lock["key"], "--json").json()
    assert shown["state"] == "locked" and shown["lock"]["owner"] == "alice" and "token" not in shown["lock"]
    assert "wb_lock_token" not in shown["item"]


def test_the_holder_sees_the_token(wb: Callable[..., Run]) -> None:
    lock = wb("alice", "next", "cases", "--json").json()
    assert lock["token"] in wb("alice", "mine", "cases").out
    assert wb("alice", "mine", "cases", "--json").json()[0]["token"] == lock["token"]


def test_human_next_prints_token_and_quiet_prints_key_and_token(wb: Callable[..., Run]) -> None:
    human = wb("alice", "next", "cases")
    assert human.code == 0
    head, token_line = human.out.splitlines()[:2]
    assert head.startswith("Claimed cases ") and "(15m00s left)" in head
    token = token_line.removeprefix("token: ")
    assert len(token) == 32 and human.out.count(token) == 1  # lock columns are not repeated among the fields
    quiet = wb("alice", "next", "cases", "-q")
    key, quiet_token = quiet.out.split()
    assert quiet.code == 0 and int(key) > 0 and len(quiet_token) == 32


def test_complete_next_shows_the_next_item_until_there_is_none(wb: Callable[..., Run], config: Path) -> None:
    key, token = wb("alice", "next", "cases", "-q").out.split()
    human = wb("alice", "complete", "cases", key, "--token", token, "--next")
    assert human.code == 0
    done_line, claimed_line, token_line = human.out.splitlines()[:3]
    assert done_line == f"completed cases {key} as resolved" and claimed_line.startswith("Claimed cases ")
    key, token = claimed_line.split()[2], token_line.removeprefix("token: ")
    quiet = wb("alice", "complete", "cases", key, "--token", token, "--next", "-q")
    key, token = quiet.out.split()
    assert quiet.code == 0 and len(token) == 32
    sql(config, f"UPDATE cases SET status = 'closed' WHERE case_id <> {int(key)}")
    last = wb("alice", "complete", "cases", key, "--token", token, "--next", "--json")
    assert last.code == 0 and last.json()["key"] == int(key) and last.json()["next"] is None
    assert last.json()["nothing_to_claim"] == "nothing to do in cases: no item is waiting"
    assert wb("alice", "mine", "cases", "--json").json() == []
    misplaced = wb("alice", "complete", "cases", key, "--token", token, "--where", "category=x")
    assert misplaced.code == 2 and "use them with --next" in misplaced.err


# -- the user name -------------------------------------------------------------------------------


def test_user_defaults_to_the_login_name(cli: CLI, config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(getpass, "getuser", lambda: "carol")
    lock = cli("--config", config, "next", "cases", "--json").json()
    assert lock["owner"] == "carol"
    assert cli("--config", config, "--user", "dave", "next", "cases", "--json").json()["owner"] == "dave"


def test_no_user_name_at_all_is_a_usage_error(cli: CLI, config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_login() -> str:
        raise OSError("no login name")

    monkeypatch.setattr(getpass, "getuser", no_login)
    monkeypatch.delenv("USER", raising=False)
    monkeypatch.delenv("USERNAME", raising=False)
    result = cli("--config", config, "next", "cases")
    assert result.code == 2 and "pass --user NAME" in result.err


# -- demo ----------------------------------------------------------------------------------------


def test_demo_twice_keeps_the_database_and_force_recreates_it(cli: CLI, tmp_path: Path) -> None:
    target = tmp_path / "d"
    first = cli("demo", target)
    assert first.code == 0 and first.err == ""
    cfg = first.out.strip()
    lock = cli("--config", cfg, "--user", "alice", "next", "cases", "--json").json()

    second = cli("demo", target)
    assert second.code == 0 and second.out.strip() == cfg
    assert second.err.strip() == "demo already exists (use --force to start over)"
    assert cli("demo", target, "--json").json()["created"] is False
    kept = cli("--config", cfg, "--user", "alice", "mine", "cases", "--json").json()
    assert [entry["token"] for entry in kept] == [lock["token"]]

    forced = cli("demo", target, "--force", "--json")
    assert forced.code == 0 and forced.json() == {"config": cfg, "created": True}
    assert cli("--config", cfg, "--user", "alice", "mine", "cases", "--json").json() == []


def test_demo_without_dir_goes_to_the_data_dir_and_is_found_without_config(
    cli: CLI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    made = cli("demo", "--json").json()
    expected = (Path(os.environ["WORKBENCH_HOME"]) / "data" / "demo" / "workbench.toml").resolve()
    assert made == {"config": str(expected), "created": True}
    assert Path(cli("queues", "--json").json()["config"]).resolve() == expected


# -- attach --------------------------------------------------------------------------------------


def test_attach_on_the_demo_says_everything_is_in_place(wb: Callable[..., Run]) -> None:
    for queue in ("cases", "imports"):
        result = wb("alice", "attach", queue)
        assert result.code == 0
        assert result.out.strip() == f"-- {queue}: lock columns and claim indexes are already in place"


@pytest.fixture
def plain_table(tmp_path: Path) -> Path:
    """A customer's table without lock columns, and a config naming new ones."""
    db = tmp_path / "plain.db"
    conn = sqlite3.connect(db)
    with conn:
        conn.executescript("""
            CREATE TABLE tickets (id INTEGER PRIMARY KEY, status VARCHAR(20) NOT NULL, prio INTEGER);
            INSERT INTO tickets VALUES (1, 'open', 2), (2, 'open', 1), (3, 'done', 1);
        """)
    conn.close()
    cfg = tmp_path / "plain.toml"
    cfg.write_text(
        """
[database]
url = "sqlite:///plain.db"

[queues.tickets]
table = "tickets"
key = "id"
order = ["prio"]
lock = { user = "held_by", time = "held_at", expires = "held_until", token = "held_token" }
todo = { status = "open" }
outcomes.done.set = { status = "done" }
""",
        encoding="utf-8",
    )
    return cfg


def columns(db: Path, table: str) -> list[str]:
    conn = sqlite3.connect(db)
    try:
        return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
    finally:
        conn.close()


def test_attach_prints_the_missing_ddl_without_changing_anything(cli: CLI, plain_table: Path) -> None:
    result = cli("--config", plain_table, "attach", "tickets")
    assert result.code == 0
    ddl = result.out
    for column, kind in (
        ("held_by", "VARCHAR(128)"),
        ("held_at", "DATETIME"),
        ("held_until", "DATETIME"),
        ("held_token", "VARCHAR(32)"),
    ):
        assert f"ALTER TABLE tickets ADD COLUMN {column} {kind};" in ddl
    # The claim index holds only free waiting rows; locked rows are found through the lock index.
    assert "CREATE INDEX wb_tickets_claim ON tickets (prio, id) WHERE status = 'open' AND held_by IS NULL;" in ddl
    assert "CREATE INDEX wb_tickets_lock ON tickets (held_until, held_by) WHERE held_by IS NOT NULL;" in ddl
    assert ddl.count("CREATE INDEX") == 2
    assert columns(plain_table.parent / "plain.db", "tickets") == ["id", "status", "prio"]


def test_attach_apply_adds_the_columns_so_next_works(cli: CLI, plain_table: Path) -> None:
    base = ["--config", plain_table, "--user", "alice"]
    assert cli(*base, "init").out.startswith("applied migration 1: ")
    before = cli(*base, "next", "tickets")
    assert before.code == 2 and "`workbench attach tickets` prints the DDL" in before.err

    applied = cli(*base, "attach", "tickets", "--apply", "--json")
    assert applied.code == 0 and applied.json()["applied"] is True and "ALTER TABLE" in applied.json()["ddl"]
    assert columns(plain_table.parent / "plain.db", "tickets")[3:] == ["held_by", "held_at", "held_until", "held_token"]
    assert "already in place" in cli(*base, "attach", "tickets").out

    lock = cli(*base, "next", "tickets", "--json").json()
    assert lock["key"] == 2 and lock["owner"] == "alice"  # prio 1 first
    done = cli(*base, "complete", "tickets", "2", "--token", lock["token"])
    assert done.code == 0 and done.out.strip() == "completed tickets 2 as done"


def test_init_reports_when_up_to_date(cli: CLI, config: Path) -> None:
    result = cli("--config", config, "init")
    assert result.code == 0 and result.out.strip() == "workbench's tables are up to date"


def test_commands_before_init_exit_2(cli: CLI, plain_table: Path) -> None:
    result = cli("--config", plain_table, "--user", "alice", "next", "tickets")
    assert result.code == 2 and "run `workbench init`" in result.err


# -- hostile values: clear messages, never an internal error (issue 12 items 9 and 12) ------------


@pytest.mark.parametrize(
    ("queue", "sets", "message"),
    [
        ("imports", "amount=1e400", "amount: 1e400 is too large (at most 10 digits before the point)"),
        ("imports", "amount=-1e400", "amount: -1e400 is too large (at most 10 digits before the point)"),
        (
            "cases",
            "time_spent_min=11111111111111111111111",
            "time_spent_min: 11111111111111111111111 is out of range for this column",
        ),
        ("imports", "checker_note=ok\x00then", "checker_note: contains a NUL character (code 0)"),
    ],
)
def test_hostile_set_values_exit_5(wb: Callable[..., Run], queue: str, sets: str, message: str) -> None:
    lock = wb("alice", "next", queue, "--json").json()
    result = wb("alice", "save", queue, lock["key"], "--token", lock["token"], "--set", sets)
    assert result.code == 5, result.err
    assert message in result.err and "internal error" not in result.err


def test_a_23_digit_key_exits_5(wb: Callable[..., Run]) -> None:
    result = wb("alice", "show", "cases", "12345678901234567890123")
    assert result.code == 5 and "is out of range for this column" in result.err, result.err


def test_a_todo_value_of_the_wrong_type_is_refused_with_the_type(wb: Callable[..., Run], config: Path) -> None:
    # A number for a text column matched nothing: the queue looked empty (exit 3) instead of wrong.
    edit_config(config, 'check_status = "pending"', "check_status = 1")
    result = wb("alice", "next", "imports")
    assert result.code == 2, result.err
    assert (
        "queues.imports.todo.check_status: 1 is a number, but column 'check_status' holds text "
        '(VARCHAR(20)); write the value in quotes, e.g. "1"'
    ) in result.err


def test_show_escapes_control_characters_a_stored_value_carries(wb: Callable[..., Run], config: Path) -> None:
    key = waiting_case(config)
    sql(config, "UPDATE cases SET subject = ? WHERE case_id = ?", "\x1b]0;owned\x07\x1b[2J\x9bred\rdone", key)
    result = wb("alice", "show", "cases", key)
    assert result.code == 0
    assert "\x1b" not in result.out and "\x07" not in result.out and "\x9b" not in result.out
    assert "\\x1b]0;owned\\x07\\x1b[2J\\x9bred\\x0ddone" in result.out
    as_json = wb("alice", "show", "cases", key, "--json")
    assert as_json.json()["item"]["subject"] == "\x1b]0;owned\x07\x1b[2J\x9bred\rdone"  # exact, JSON-escaped
    assert "\x1b" not in as_json.out


def test_notes_from_the_command_line(wb: Callable[..., Run]) -> None:
    lock = wb("alice", "--json", "next", "cases").json()
    key, token = str(lock["key"]), lock["token"]
    assert wb("alice", "note", "cases", key, "--text", "Waiting for the part.").code == 0
    listed = wb("bob", "--json", "notes", "cases", key).json()
    assert [(n["author"], n["text"], n["kind"]) for n in listed] == [("alice", "Waiting for the part.", None)]
    assert listed[0]["at"].endswith("Z") or "+00:00" in listed[0]["at"]
    shown = wb("bob", "notes", "cases", key).out
    assert "alice" in shown and "\n    Waiting for the part.\n" in shown
    released = wb("alice", "release", "cases", key, "--token", token, "--note", "The customer is away until Monday.")
    assert released.code == 0
    assert [n["kind"] for n in wb("bob", "--json", "notes", "cases", key).json()] == [None, "release"]
    missing = wb("bob", "note", "cases", "999999", "--text", "x")
    assert missing.code != 0 and "no item with key" in missing.err
    empty = wb("bob", "note", "cases", key, "--text", "  ")
    assert empty.code != 0 and "needs some text" in empty.err
    assert wb("bob", "notes", "cases", "999999").code != 0


def test_the_demo_wins_over_a_default_profile_when_asked_for(
    cli: CLI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    from workbench.config import profiles

    # A default profile on a database that is not there: whatever uses it fails.
    profiles.ProfileStore().save(
        profiles.Profile(name="office", kind="sqlite", path=str(tmp_path / "gone" / "x.db"), source="database"),
        make_default=True,
    )
    made = cli("demo")
    assert made.code == 0
    # It says the profile comes first, and how to reach the demo anyway.
    assert "office" in made.err and "--demo" in made.err
    queues = cli("--demo", "--user", "alice", "queues", "--json")
    assert queues.code == 0 and "cases" in [q["name"] for q in queues.json()["queues"]]
    assert cli("--demo", "--user", "alice", "next", "cases", "--json").json()["key"] is not None
    both = cli("--demo", "--profile", "office", "queues")
    assert both.code == 2 and "--demo" in both.err
