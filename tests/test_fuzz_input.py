"""Bad input ends in a message that says what to fix, never in "internal error" or a traceback.

The named cases of issue 37 first (bytes that are not text in any argument, numbers past any range,
broken config files); then fuzz tests of the config loader and of every command's arguments. The
fuzz tests use hypothesis derandomized (the same examples on every run, none kept between runs), so
CI runs them each time in a few seconds and a failure is reproducible.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import io
import json
import os
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import support
from tests.helpers.memkeyring import MemoryKeyring
from workbench import demo
from workbench.cli import argtypes, main
from workbench.config import loader, profiles
from workbench.config import settings as keys
from workbench.core import errors
from workbench.db import deferrals

REPO = Path(__file__).resolve().parents[1]
# The same examples every run; nothing saved between runs (CI starts from a fresh clone anyway).
# WORKBENCH_FUZZ_EXAMPLES=5000 searches longer and anew each run, by hand.
EXAMPLES = int(os.environ.get("WORKBENCH_FUZZ_EXAMPLES") or 0)
FUZZ = settings(
    derandomize=not EXAMPLES,
    max_examples=EXAMPLES or 100,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.filter_too_much],
)
HUGE = "99999999999999999999999999"  # beyond 64 bits


@dataclasses.dataclass
class Run:
    code: int
    out: str
    err: str


def run(*args: Any) -> Run:
    """`workbench ARGS…` in this process, its output captured; argparse's exit is an exit code too."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main.main([str(a) for a in args])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    return Run(code, out.getvalue(), err.getvalue())


def assert_clean(result: Run) -> None:
    """No internal error, no traceback, a documented exit code, and output a UTF-8 terminal can show."""
    shown = result.out + result.err
    assert "internal error" not in shown and "Traceback" not in shown, result
    assert 0 <= result.code <= 6, result
    shown.encode("utf-8")  # a lone surrogate here is a crash on a real terminal


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return support.sqlite_demo(tmp_path / "demo")


def held(config: Path) -> tuple[str, str]:
    """A case claimed by ann: (key, token)."""
    result = run("--config", config, "--user", "ann", "--json", "next", "cases")
    data = json.loads(result.out)
    return str(data["key"]), data["token"]


# -- arguments that are not text -------------------------------------------------------------------

# Each text argument with the command that takes it: bytes that are not UTF-8 go in its place.
TEXT_ARGUMENTS = [
    ("--set", ["save", "cases", "{key}", "--token", "{token}", "--set", "description=\udcff"]),
    ("--text", ["note", "cases", "{key}", "--text", "caf\udce9"]),
    ("--note", ["release", "cases", "{key}", "--token", "{token}", "--note", "\udcff"]),
    ("--reason", ["force-release", "cases", "{key}", "--reason", "\udcff\udcfe"]),
    ("--user", ["--user", "\udcff", "mine", "cases"]),
    ("--to", ["reassign", "cases", "{key}", "--to", "b\udcf6b", "--reason", "x"]),
    ("--where", ["next", "cases", "--where", "category=\udcff"]),
    ("--token", ["extend", "cases", "{key}", "--token", "\udcff"]),
    ("--outcome", ["complete", "cases", "{key}", "--token", "{token}", "--outcome", "\udcff"]),
    ("KEY", ["show", "cases", "\udcff"]),
    ("QUEUE", ["locks", "\udcff"]),
    ("--config", ["--config", "\udcff.toml", "queues"]),
    ("--since", ["stats", "cases", "--since", "\udcff"]),
    (
        "--db-user",
        [
            "profile",
            "add",
            "x",
            "--kind",
            "postgresql",
            "--host",
            "db",
            "--database",
            "d",
            "--db-user",
            "\udcff",
            "--published",
        ],
    ),
]


@pytest.mark.parametrize(("name", "args"), TEXT_ARGUMENTS, ids=[name for name, _ in TEXT_ARGUMENTS])
def test_bytes_that_are_not_text_name_the_argument(config: Path, name: str, args: list[str]) -> None:
    key, token = held(config)
    filled = [a.replace("{key}", key).replace("{token}", token) for a in args]
    if "--user" not in filled:
        filled = ["--user", "ann", *filled]
    for as_json in (False, True):
        result = run("--config", config, *(["--json"] if as_json else []), *filled)
        assert_clean(result)
        assert result.code == 2, result
        assert f"argument {name}" in result.err and "not valid text" in result.err, result
        # The bytes as they are, e.g. "caf\xe9".
        assert "UTF-8" in result.err and any(f"\\x{b}" in result.err for b in ("ff", "e9", "f6")), result
        if as_json:
            assert json.loads(result.out)["error"]["type"] == "UsageError"


def _process(argv: list[bytes], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """`python -m workbench ARGV` with its arguments as raw bytes, as a shell passes them."""
    return _process_env(argv, cwd, {})


def _process_env(argv: list[bytes], cwd: Path, extra: dict[bytes, bytes]) -> subprocess.CompletedProcess[bytes]:
    # A UTF-8 desktop's terminal: stdout refuses what is not text (the C locale would let it through).
    env = {
        **os.environb,
        b"PYTHONPATH": os.fsencode(REPO),
        b"LC_ALL": b"C.UTF-8",
        b"PYTHONIOENCODING": b"utf-8:strict",
        b"WORKBENCH_COMMAND_SERVER": b"off",
        **extra,
    }
    return subprocess.run(
        [sys.executable.encode(), b"-m", b"workbench", *argv],
        capture_output=True,
        cwd=cwd,
        env=env,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize(
    "argv",
    [
        [b"note", b"cases", b"1", b"--text", b"Gr\xfc\xdfe"],  # Latin-1, not UTF-8
        [b"--json", b"save", b"cases", b"1", b"--token", b"t", b"--set", b"description=\xff\xfe"],
        [b"--user", b"\xe9ric", b"mine", b"cases"],
        [b"next", b"cases", b"--where", b"category=\x80"],
        [b"reassign", b"cases", b"1", b"--to", b"\xc3", b"--reason", b"\xa0"],
        [b"n\xe9xt", b"cases"],  # no such command: argparse says so, and shows the bytes
        [b"--json", b"next", b"cases", b"--b\xe9d"],
    ],
)
def test_real_argv_bytes_in_a_process_of_their_own(config: Path, argv: list[bytes]) -> None:
    done = _process([b"--config", os.fsencode(config), *argv], config.parent)
    err = done.stderr.decode("utf-8")  # what we print is text
    assert done.returncode == 2, err
    assert "internal error" not in err and "Traceback" not in err, err
    assert "\\x" in err, err  # the bytes shown as they are
    if b"--json" in argv:
        assert json.loads(done.stdout)["error"]["exit_code"] == 2


@pytest.mark.parametrize(
    ("extra", "argv", "words"),
    [
        ({b"USER": b"\xe9ric", b"LOGNAME": b"\xe9ric"}, [b"--json", b"mine", b"cases"], "--user NAME"),
        ({b"WORKBENCH_PROFILE": b"caf\xe9"}, [b"--json", b"mine", b"cases"], "caf\\xe9"),
        ({b"WORKBENCH_CONFIG": b"/nowhere/caf\xe9.toml"}, [b"--json", b"mine", b"cases"], "caf\\xe9"),
    ],
)
def test_environment_bytes_that_are_not_text(
    config: Path, extra: dict[bytes, bytes], argv: list[bytes], words: str
) -> None:
    """The login name and the environment's settings are read as the arguments are: said, not a crash."""
    if b"USER" in extra:  # (with --config, WORKBENCH_PROFILE and WORKBENCH_CONFIG are not read)
        argv = [b"--config", os.fsencode(config), *argv]
    done = _process_env(argv, config.parent, {b"WORKBENCH_HOME": os.fsencode(config.parent / "home"), **extra})
    err = done.stderr.decode("utf-8")
    assert done.returncode == 2, err
    assert "internal error" not in err and "Traceback" not in err and words in err, err
    error = json.loads(done.stdout)["error"]
    assert error["exit_code"] == 2 and words in error["message"]


# -- numbers past every range ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["defer", "cases", "{key}", "--token", "{token}", "--until", HUGE, "--reason", "x"], "--until"),
        (["defer", "cases", "{key}", "--token", "{token}", "--until", "99999999999999d", "--reason", "x"], "--until"),
        (
            ["defer", "cases", "{key}", "--token", "{token}", "--until", "9999-12-31T23:00-12:00", "--reason", "x"],
            "--until",
        ),
        (["next", "cases", "--count", HUGE], "--count"),
        (["next", "cases", "--count", str(2**63)], "--count"),
        (["stats", "cases", "--since", HUGE], "--since"),
        (["stats", "cases", "--until", HUGE], "--until"),
        (["stats", "cases", "--since", "0001-01-01"], "--since"),
        (["board", "cases", "--limit", HUGE], "--limit"),
        (
            [
                "profile",
                "add",
                "x",
                "--kind",
                "postgresql",
                "--host",
                "h",
                "--database",
                "d",
                "--db-user",
                "u",
                "--published",
                "--port",
                HUGE,
            ],
            "--port",
        ),
    ],
)
def test_numbers_past_the_range_say_the_range(config: Path, args: list[str], words: str) -> None:
    key, token = held(config)
    result = run(
        "--config", config, "--user", "ann", *(a.replace("{key}", key).replace("{token}", token) for a in args)
    )
    assert_clean(result)
    assert result.code == 2 and f"argument {words}" in result.err, result
    assert "between" in result.err or "at most" in result.err or "at least" in result.err, result


def test_the_largest_numbers_allowed_work_on_every_database(
    native_env: support.Env, capsys: pytest.CaptureFixture[str]
) -> None:
    """The bounds are ones every database takes: the largest count, the farthest deferral and the
    earliest and latest stats period reach the database and work (MariaDB printed its SQL before)."""
    native_env.demo(case_rows=3, import_rows=1)
    base = ["--config", native_env.demo_config_file(), "--user", "ann"]
    code, claimed, err = support.run_cli(capsys, *base, "--json", "next", "cases", "--count", argtypes.MAX_COUNT)
    assert code == 0 and len(claimed) == 3, err
    key, token = claimed[0]["key"], claimed[0]["token"]
    code, _, err = support.run_cli(
        capsys, *base, "defer", "cases", key, "--token", token, "--until", f"{deferrals.MAX_DAYS}d", "--reason", "far"
    )
    assert code == 0, err
    for period in (
        ["--since", f"{argtypes.MAX_BACK_DAYS}d"],
        ["--since", argtypes.EARLIEST.isoformat()],
        ["--since", "1d", "--until", argtypes.LATEST.isoformat()],
    ):
        code, _, err = support.run_cli(capsys, *base, "stats", "cases", *period)
        assert code == 0, (period, err)
    refused = run(*base, "next", "cases", "--count", HUGE)
    assert refused.code == 2 and "argument --count" in refused.err and "SELECT" not in refused.err


@pytest.mark.parametrize(
    ("args", "codes"),
    [
        (["--user", "ann\U0001f600", "mine", "cases"], (0, 5)),
        (["--user", "ann", "extend", "cases", "{key}", "--token", "\x91\U0001f600"], (4, 5)),
        (["--user", "ann", "next", "cases", "--where", "category=\U0001f600"], (3, 5)),
        (["--user", "ann", "show", "cases", "\U0001f600"], (5,)),
    ],
)
def test_characters_a_latin1_table_cannot_hold(
    native_env: support.Env, args: list[str], codes: tuple[int, ...]
) -> None:
    """The test servers' MariaDB tables are latin1: a value it cannot compare is an invalid value (exit 5),
    not an internal error quoting the statement; elsewhere it simply matches nothing."""
    native_env.demo(case_rows=3, import_rows=1)
    config = native_env.demo_config_file()
    key, _ = held(config)
    result = run("--config", config, *(a.replace("{key}", key) for a in args))
    assert_clean(result)
    assert result.code in codes and "SELECT" not in result.err and "UPDATE" not in result.err, result


# -- broken config files ---------------------------------------------------------------------------


def load_problem(path: Path) -> errors.ConfigError | None:
    """The loader's refusal of `path`, or None when it reads it; anything else fails the test."""
    problem = None
    try:
        loader.load(path)
    except errors.ConfigError as exc:
        problem = exc
    if problem is not None:
        assert str(path) in str(problem), problem  # names the file
        str(problem).encode("utf-8")
    return problem


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b'[database]\nurl = "sqlite:///x.db"\n# caf\xe9\n', "UTF-8"),
        (b"\xff\xfe[\x00d\x00", "UTF-8"),  # UTF-16
        (b"a = " + b"[" * 5000 + b"]" * 5000, "nested"),
        (b"a = " + b"{b = " * 5000 + b"}" * 5000, "nested"),
        (b"[" + b".".join([b"a"] * 5000) + b"]\n", "nested"),
        (b"a." * 5000 + b"b = 1\n", "nested"),
        (b"[queues.cases]\ntodo = { status = " + b"[" * 200 + b"]" * 200 + b" }\n", "nested"),
    ],
)
def test_a_broken_config_file_names_the_file_and_the_fix(tmp_path: Path, body: bytes, words: str) -> None:
    path = tmp_path / "broken.toml"
    path.write_bytes(body)
    problem = load_problem(path)
    assert problem is not None and words in str(problem)
    result = run("--config", path, "--user", "ann", "queues")
    assert_clean(result)
    assert result.code == 2 and str(path) in result.err


def test_a_broken_profiles_file_names_the_file(tmp_path: Path) -> None:
    store = profiles.ProfileStore(tmp_path / "profiles.toml")
    for body in (b'default = "caf\xe9"\n', b"a = " + b"[" * 5000 + b"]" * 5000):
        store.path.write_bytes(body)
        with pytest.raises(errors.ConfigError) as caught:
            store.load()
        assert str(store.path) in str(caught.value)


# -- fuzz: the config loader -----------------------------------------------------------------------

DEMO = tomllib.loads(demo.config_text())
# Where each section's keys live in the demo config.
SECTIONS = {
    "database": (keys.DATABASE, ("database",)),
    "app": (keys.APP, ("app",)),
    "queue": (keys.QUEUE, ("queues", "cases")),
    "lock": (keys.LOCK, ("queues", "cases", "lock")),
    "outcome": (keys.OUTCOME, ("queues", "cases", "outcomes", "resolved")),
    "field": (keys.FIELD, ("queues", "cases", "fields", "time_spent_min")),
    "review": (keys.REVIEW, ("queues", "imports", "review")),
}
# Every declared key, and a few tables and entries that are not keys of a section.
KEY_PATHS = sorted(
    {(*where, s.name) for section, where in SECTIONS.values() for s in section}
    | {
        ("database",),
        ("queues",),
        ("app",),
        ("queues", "cases"),
        ("queues", "cases", "todo", "status"),
        ("queues", "cases", "on_claim", "status"),
        ("queues", "cases", "outcomes", "resolved", "set", "status"),
        ("queues", "imports", "outcomes", "verified", "set", "checked_at"),
        ("queues", "cases", "todo", "x"),
        ("queues", "cases", "release_reasons", "Left"),
        ("queues", "c a"),
        ("unknown",),
    }
)

INTERESTING = [
    "",
    " ",
    "0",
    "-1",
    HUGE,
    "1e400",
    "nan",
    "inf",
    "-inf",
    "2h",
    "-2h",
    "0s",
    "999999999999999d",
    "9999-12-31",
    "0001-01-01T00:00:00",
    "25:61",
    "sqlite:///x.db",
    "postgresql://u:pw@h/db",
    "postgresql://u@h/db?sslpassword=x",
    "mssql+pyodbc://h/db?odbc_connect=PWD%3Dx",
    "a\x00b",
    "\x1b[31m",
    "[",
    "(",
    "*",
    "status",
    "case_id",
    "x" * 300,
    "resolved",
    "imports_review",
    "a{4294967296}",
    "(" * 1500 + ")" * 1500,
]
SCALARS = st.one_of(
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.sampled_from([0, 1, -1, 2**63, -(2**63) - 1, 10**30]),
    st.floats(),
    st.text(max_size=12),
    st.sampled_from(INTERESTING),
    st.dates(),
    st.times(),
    st.datetimes(),
)
TOML_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.one_of(
                st.text(max_size=6),
                st.sampled_from(["eq", "in", "null", "now", "user", "or_null", "set", "gt", "status"]),
            ),
            inner,
            max_size=3,
        ),
    ),
    max_leaves=10,
)


def _put(data: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    data = copy.deepcopy(data)
    node = data
    for part in path[:-1]:
        if not isinstance(node.get(part), dict):
            node[part] = {}
        node = node[part]
    node[path[-1]] = value
    return data


def _check_loads(path: Path) -> None:
    if load_problem(path) is None:
        with contextlib.suppress(errors.ConfigError):  # what `publish` reads: the same file, cut
            loader.queue_settings_text(path)


@pytest.mark.parametrize(
    ("where", "value"),
    [
        (("database", "connect_timeout"), 10**30),
        (("database", "statement_timeout"), 2**63),
        (("queues", "cases", "max_locks_per_user"), 2**64),
        (("queues", "imports", "review", "first_items"), 10**20),
    ],
)
def test_whole_numbers_in_a_config_have_a_range(tmp_path: Path, where: tuple[str, ...], value: int) -> None:
    """A timeout past 24 days breaks PostgreSQL's connection options; a count past 64 bits a query."""
    path = tmp_path / "workbench.toml"
    path.write_text(tomli_w.dumps(_put(DEMO, where, value)), encoding="utf-8")
    problem = load_problem(path)
    assert problem is not None and problem.key == ".".join(where) and "must be at most" in str(problem)
    store = profiles.ProfileStore(tmp_path / "profiles.toml")
    if where[0] == "database":  # a profile's timeouts have the same range
        store.path.write_text(
            f'[profiles.demo]\nkind = "sqlite"\npath = "x.db"\nconfig = "x.toml"\n{where[1]} = {value}\n',
            encoding="utf-8",
        )
        with pytest.raises(errors.ConfigError) as caught:
            store.load()
        assert caught.value.key == f"profiles.demo.{where[1]}" and "between 1 and" in str(caught.value)


@pytest.mark.parametrize("pattern", ["a{4294967296}", "x{99999999999999999999}", "(" * 2000 + ")" * 2000, "[a"])
def test_a_pattern_python_cannot_compile_is_refused(tmp_path: Path, pattern: str) -> None:
    path = tmp_path / "workbench.toml"
    path.write_text(
        tomli_w.dumps(_put(DEMO, ("queues", "cases", "fields", "subject", "pattern"), pattern)), encoding="utf-8"
    )
    problem = load_problem(path)
    assert problem is not None and problem.key == "queues.cases.fields.subject.pattern"
    assert "not a valid regular expression" in str(problem)


@FUZZ
@given(where=st.sampled_from(KEY_PATHS), value=TOML_VALUES)
def test_fuzz_every_key_with_values_of_every_kind(tmp_path: Path, where: tuple[str, ...], value: Any) -> None:
    path = tmp_path / "fuzzed.toml"
    path.write_text(tomli_w.dumps(_put(DEMO, where, value)), encoding="utf-8")
    _check_loads(path)


TEXT = demo.config_text().encode()
EDITS = st.one_of(
    st.tuples(st.just("insert"), st.integers(0, len(TEXT)), st.binary(min_size=1, max_size=8)),
    st.tuples(
        st.just("insert"),
        st.integers(0, len(TEXT)),
        st.sampled_from(
            [
                b"[",
                b"]",
                b"{",
                b"}",
                b"=",
                b'"',
                b"'",
                b"\n",
                b".",
                b",",
                b"#",
                b"\\",
                b'"""',
                b"[[x]]",
                b"\xff",
                b"[" * 3000,
                b"{a=" * 3000,
                b"a." * 3000,
                b"\xc3",
                b"\r",
                b"\t",
                b"\x00",
            ]
        ),
    ),
    st.tuples(st.just("delete"), st.integers(0, len(TEXT)), st.integers(1, 200)),
)


@FUZZ
@given(edits=st.lists(EDITS, min_size=1, max_size=4))
def test_fuzz_the_config_text(tmp_path: Path, edits: list[tuple[str, int, Any]]) -> None:
    body = TEXT
    for kind, at, what in edits:
        body = body[:at] + what + body[at:] if kind == "insert" else body[:at] + body[at + what :]
    path = tmp_path / "fuzzed.toml"
    path.write_bytes(body)
    _check_loads(path)


@FUZZ
@given(body=st.one_of(st.binary(max_size=64), st.text(max_size=64).map(str.encode)))
def test_fuzz_any_bytes_as_config_and_profiles(tmp_path: Path, body: bytes) -> None:
    path = tmp_path / "fuzzed.toml"
    path.write_bytes(body)
    load_problem(path)
    store = profiles.ProfileStore(tmp_path / "profiles.toml")
    store.path.write_bytes(body)
    with contextlib.suppress(errors.ConfigError):
        store.load()


# -- fuzz: every command's arguments ---------------------------------------------------------------


def _subcommands(parser: Any, prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """(the words naming a command, its parser) for every command and action of the parser."""
    for action in parser._actions:
        if isinstance(action.choices, dict) and action.nargs == "A...":  # the sub-commands
            for name, sub in action.choices.items():
                if any(isinstance(a.choices, dict) and a.nargs == "A..." for a in sub._actions):
                    yield from _subcommands(sub, (*prefix, name))
                else:
                    yield (*prefix, name), sub


# `profile test` connects to whatever server a fuzzed profile names: not for a test without a network.
COMMANDS = [(words, sub) for words, sub in _subcommands(main.build_parser()) if words != ("profile", "test")]
NASTY = [
    "",
    " ",
    "-",
    "=",
    "x=",
    "=x",
    "0",
    "-1",
    "1",
    "2",
    HUGE,
    "-" + HUGE,
    str(2**63),
    str(2**64),
    "1e400",
    "nan",
    "inf",
    "9999999999d",
    "99999999999999999999h",
    "2h",
    "-2h",
    "+2h",
    "0s",
    "9999-12-31",
    "0001-01-01",
    "9999-12-31T23:59:59-12:00",
    "2026-02-30",
    "Z",
    "case_id=1",
    "category=\udcff",
    "category=Network",
    "status=open",
    "priority=99999999999999999999",
    "time_spent_min=" + HUGE,
    "x" * 3000,
    "'; DROP TABLE cases; --",
    "\u202e",
    "\x1b[31m",
    "caf\udce9",
    "\udcff",
    "cases",
    "imports",
    "imports_review",
    "resolved",
    "sslpassword=x",
    "password=x",
    "sslmode=require",
]
TEXTS = st.one_of(
    st.sampled_from(NASTY),
    st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=16),
    st.binary(max_size=8).filter(lambda b: b"\0" not in b).map(os.fsdecode),  # how Linux hands bytes over
    st.integers(-(2**80), 2**80).map(str),
)


@st.composite
def command_lines(draw: st.DrawFn, commands: list[tuple[tuple[str, ...], Any]] = COMMANDS) -> list[str]:
    words, sub = draw(st.sampled_from(commands))
    argv = [*words]
    for action in sub._actions:
        if action.dest in ("help", "json") or (action.nargs == 0 and not draw(st.booleans())):
            continue
        options = action.option_strings
        if options and not action.required and draw(st.integers(0, 2)) == 0:
            continue
        if action.nargs == 0:
            argv.append(options[0])
            continue
        # Mostly a value that gets the command going (a queue, a demo item), so that the bad ones reach
        # the engine too, not only the parser.
        likely = [str(c) for c in action.choices or ()] or {
            "queue": ["cases", "imports", "imports_review"],
            "key": [str(k) for k in range(1, 300, 7)],
            "outcome": ["resolved", "waiting"],
            "who": ["ann", "bob"],
        }.get(action.dest, [])
        count = draw(st.integers(0 if action.nargs in ("?", "*") else 1, 2 if action.nargs == "*" else 1))
        for _ in range(count):
            value = draw(st.sampled_from(likely) if likely and draw(st.integers(0, 3)) else TEXTS)
            argv.extend([options[0], value] if options else [value])
    if draw(st.booleans()):
        argv.insert(0, "--json")
    return argv


@pytest.fixture
def quiet_prompts(monkeypatch: pytest.MonkeyPatch, memory_keyring: MemoryKeyring) -> None:
    """No terminal and no real keyring: a password prompt reads an empty line."""
    monkeypatch.setattr("getpass.getpass", lambda *_a, **_k: "")
    monkeypatch.setattr("sys.stdin", io.StringIO(""))


@settings(FUZZ, max_examples=EXAMPLES or 250)
@given(argv=command_lines(), user=st.one_of(st.sampled_from(["ann", "bob", "sue"]), TEXTS))
def test_fuzz_every_command_with_bad_arguments(
    config: Path, tmp_path: Path, quiet_prompts: None, monkeypatch: pytest.MonkeyPatch, argv: list[str], user: str
) -> None:
    monkeypatch.chdir(tmp_path)  # `demo DIR` writes where it is told
    assert_clean(run("--config", config, "--user", user, *argv))


# The commands that work a queue, on the servers too (SQLite: above): a value past what the database
# takes must be said there too, not as an internal error quoting the statement.
QUEUE_COMMANDS = [
    (words, sub) for words, sub in COMMANDS if words[0] not in ("demo", "profile", "publish", "published")
]


@pytest.mark.parametrize("backend", ["postgresql", "mariadb", "mariadb-odbc"])
@settings(FUZZ, max_examples=EXAMPLES or 40)
@given(data=st.data())
def test_fuzz_the_queue_commands_on_the_servers(
    native_env: support.Env, quiet_prompts: None, data: st.DataObject
) -> None:
    if not hasattr(native_env, "fuzzed"):  # the demo once for all examples
        native_env.demo(case_rows=20, import_rows=10)
        native_env.fuzzed = native_env.demo_config_file()  # type: ignore[attr-defined]
    argv = data.draw(command_lines(QUEUE_COMMANDS))
    user = data.draw(st.sampled_from(["ann", "bob"]))
    assert_clean(run("--config", native_env.fuzzed, "--user", user, *argv))  # type: ignore[attr-defined]
