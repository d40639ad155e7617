"""The command server: commands it runs behave as commands run in their own process, only sooner."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import support
from workbench.cli import command_server
from workbench.cli import main as cli
from workbench.config import loader
from workbench.db import service

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the command server runs on Linux only")


class Commands:
    """`workbench` command lines run as real processes, with the command server on or off."""

    def __init__(self, home: Path) -> None:
        self.home = home
        # PYTHONPATH: the tests' own modules (a test keyring) importable in the commands and the server.
        self.env = {
            **os.environ,
            "WORKBENCH_HOME": str(home),
            command_server.ENV: "120",
            "PYTHONPATH": str(Path(__file__).resolve().parent.parent),
        }
        self.config = ""

    def popen(
        self,
        *args: str,
        served: bool = True,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        stdin: object = subprocess.DEVNULL,
    ) -> subprocess.Popen[str]:
        environment = {**self.env, **(env or {})}
        if not served:
            environment[command_server.ENV] = "off"
        return subprocess.Popen(
            [sys.executable, "-m", "workbench", *args],
            env=environment,
            cwd=cwd or self.home,
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def run(self, *args: str, input: str | None = None, **kwargs: object) -> tuple[int, str, str]:
        if input is not None:
            kwargs["stdin"] = subprocess.PIPE
        process = self.popen(*args, **kwargs)  # type: ignore[arg-type]
        out, err = process.communicate(input, timeout=120)
        return process.returncode, out, err

    def status(self) -> dict[str, object] | None:
        return command_server.status()

    def wait_for_server(self) -> dict[str, object]:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            found = self.status()
            if found is not None:
                return found
            time.sleep(0.1)
        raise AssertionError("no command server started within 30 s")


@contextlib.contextmanager
def _commands(monkeypatch: pytest.MonkeyPatch, *, started_by_a_command: bool) -> Iterator[Commands]:
    # A short home: a Unix socket's path may not be longer than about 100 bytes.
    home = Path(tempfile.mkdtemp(prefix="wbcs", dir="/tmp"))
    monkeypatch.setenv("WORKBENCH_HOME", str(home))
    monkeypatch.setenv(command_server.ENV, "120")
    runner = Commands(home)
    server = None
    if started_by_a_command:
        code, out, err = runner.run("demo", str(home / "demo"))  # run here; starts the server
        assert code == 0, err
        runner.config = out.strip()
    else:  # the server that command starts, started as it starts it, beside the demo it would have made
        monkeypatch.setenv("PYTHONPATH", runner.env["PYTHONPATH"])
        server = command_server.start()
        assert server is not None
        runner.config = str(support.sqlite_demo(home / "demo").resolve())
    try:
        yield runner
    finally:
        found = command_server.status()
        if found is not None:
            os.kill(int(found["pid"]), signal.SIGTERM)  # type: ignore[call-overload]
        if server is not None:  # this process is its parent: it reaps it
            server.terminate()
            server.wait(timeout=60)
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def commands(monkeypatch: pytest.MonkeyPatch) -> Iterator[Commands]:
    """A command server of its own (one per test: some end it or count what it served), and the demo."""
    with _commands(monkeypatch, started_by_a_command=False) as runner:
        yield runner


@pytest.fixture
def commands_started_by_a_command(monkeypatch: pytest.MonkeyPatch) -> Iterator[Commands]:
    """As `commands`, but the server is the one the first command (`demo`, run in its own process) starts."""
    with _commands(monkeypatch, started_by_a_command=True) as runner:
        yield runner


def test_the_server_knows_every_command_of_the_parser() -> None:
    parser = cli.build_parser()
    subparsers = next(a for a in parser._actions if a.dest == "command")
    assert set(subparsers.choices) == command_server.COMMANDS | command_server.OWN_PROCESS  # type: ignore[arg-type]
    assert not command_server.COMMANDS & command_server.OWN_PROCESS


def test_the_window_and_the_self_test_never_go_to_a_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(command_server.ENV, "60")
    assert command_server.wanted(["--config", "x.toml", "next", "cases"])
    assert not command_server.wanted(["--config", "x.toml", "--demo"])  # the window
    assert not command_server.wanted(["--self-test"])
    assert not command_server.wanted(["--config", "x.toml", "relay"])  # it serves until stopped
    monkeypatch.setenv(command_server.ENV, "off")
    assert not command_server.wanted(["next", "cases"])


def test_commands_in_the_server_answer_exactly_as_in_their_own_process(
    commands_started_by_a_command: Commands,
) -> None:
    commands = commands_started_by_a_command
    before = commands.wait_for_server()
    cfg = ["--config", commands.config]
    demo_dir = Path(commands.config).parent
    lines: list[tuple[tuple[str, ...], dict[str, object]]] = [
        ((*cfg, "queues"), {}),
        ((*cfg, "--json", "queues"), {}),
        ((*cfg, "next", "nosuch"), {}),  # a config error: exit 2, the message on stderr
        ((*cfg, "--json", "next", "nosuch"), {}),
        ((*cfg, "next", "--bogus"), {}),  # argparse's usage error
        (("next", "--help"), {}),
        (("queues",), {"cwd": demo_dir}),  # ./workbench.toml of the caller's directory
        (("--json", "queues"), {"env": {"WORKBENCH_CONFIG": commands.config}}),  # the caller's environment
        ((*cfg, "--user", "nobody", "mine", "cases"), {}),
    ]
    for line, options in lines:
        alone = commands.run(*line, served=False, **options)
        served = commands.run(*line, **options)
        assert served == alone, line
    assert commands.status()["served"] == int(before["served"]) + len(lines)  # type: ignore[index, call-overload]
    assert commands.status()["pid"] == before["pid"]  # type: ignore[index]


def test_parallel_claims_through_the_server_never_share_an_item(commands: Commands) -> None:
    before = commands.wait_for_server()
    users = [f"user{n}" for n in range(8)]
    running = [commands.popen("--config", commands.config, "--user", user, "--json", "next", "cases") for user in users]
    keys = []
    for process in running:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        keys.append(json.loads(out)["key"])
    assert len(set(keys)) == len(users)
    assert commands.status()["served"] == int(before["served"]) + len(users)  # type: ignore[index, call-overload]
    # The claims are in the database, under each user: read here, apart from the server (a command in its
    # own process each, eight interpreters started, cost more than all the claims).
    with service.Workbench.open(loader.load(commands.config)) as wb:
        for user, key in zip(users, keys, strict=True):
            assert [lock.key for lock in wb.queue("cases").mine(user)] == [key], user


def test_an_outdated_server_steps_down_and_the_command_runs_here(
    commands: Commands, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = int(commands.wait_for_server()["pid"])  # type: ignore[call-overload]
    path = command_server.socket_path()
    assert path is not None and path.exists()
    monkeypatch.setattr(command_server, "identity", lambda: "code installed since the server started")
    assert command_server.run(["queues"]) == (None, True)  # not run: the caller runs it and starts a new server
    deadline = time.monotonic() + 10
    while not _ended(server) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _ended(server)
    assert not path.exists()


def _ended(pid: int) -> bool:
    """Whether process `pid` has ended: gone, or a zombie its parent has not reaped yet. The server's parent is
    whoever adopted it (init, or a child subreaper such as a container's init or a CPU-measuring wrapper, which
    may reap late): its /proc entry stays until then."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rpartition(")")[2].split()[0] == "Z"


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rpartition(")")[2].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def test_a_signal_to_the_caller_reaches_the_command_the_server_runs(commands: Commands) -> None:
    # SIGTERM (a timeout's, a service manager's) ends the command at once; Ctrl-C's SIGINT is passed
    # on the same way, but takes effect only when SQLite's wait for its lock returns.
    server = int(commands.wait_for_server()["pid"])  # type: ignore[call-overload]
    database = Path(commands.config).parent / "workbench-demo.db"
    assert database.exists()
    blocker = sqlite3.connect(database, isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")  # the claim waits for the database
    try:
        process = commands.popen("--config", commands.config, "--user", "waiting", "next", "cases")
        deadline = time.monotonic() + 30
        while not _children(server) and time.monotonic() < deadline:
            time.sleep(0.05)
        (child,) = _children(server)
        time.sleep(0.5)
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=60)
        assert process.returncode == 128 + signal.SIGTERM
        deadline = time.monotonic() + 10
        while not _ended(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _ended(child)
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    code, out, _ = commands.run("--config", commands.config, "--user", "waiting", "--json", "mine", "cases")
    assert code == 0 and json.loads(out) == []  # interrupted before it claimed: nothing held


def test_stdin_and_a_password_prompt_reach_the_user(commands: Commands, monkeypatch: pytest.MonkeyPatch) -> None:
    before = int(commands.wait_for_server()["served"])  # type: ignore[call-overload]
    keyring = {"PYTHON_KEYRING_BACKEND": "tests.helpers.memkeyring.MemoryKeyring"}  # per process: nothing kept
    code, _, err = commands.run(
        "profile",
        "add",
        "office",
        "--kind",
        "postgresql",
        "--host",
        "db.example",
        "--database",
        "helpdesk",
        "--db-user",
        "ann",
        "--queues",
        commands.config,
    )
    assert code == 0, err
    # The caller's stdin is the command's stdin.
    assert commands.run("profile", "password", "office", "--stdin", input="s3cret\n", env=keyring)[:2] == (
        0,
        "password for ann@db.example stored in memkeyring MemoryKeyring\n",
    )
    code, _, err = commands.run("profile", "password", "office", "--stdin", input="", env=keyring)
    assert (code, err) == (2, "workbench: no password given; nothing stored\n")
    assert int(commands.status()["served"]) == before + 3  # type: ignore[index, call-overload]
    # A prompt at a terminal: the server's child has no terminal (getpass would echo there), so the
    # command runs in the caller's process, which asks once.
    main, terminal = os.openpty()
    try:
        process = commands.popen("profile", "password", "office", env=keyring, stdin=terminal)
        prompt = "Password for ann@db.example: "
        assert process.stderr is not None
        assert process.stderr.read(len(prompt)) == prompt  # asked once; getpass flushed the terminal before
        os.write(main, b"typed\n")
        out, err = process.communicate(timeout=120)
    finally:
        os.close(terminal)
        os.close(main)
    assert process.returncode == 0, err
    assert "Password for" not in err
    assert out == "password for ann@db.example stored in memkeyring MemoryKeyring\n"
    assert int(commands.status()["served"]) == before + 4  # type: ignore[index, call-overload]
    # Handed back like that, the caller starts no second server: one runs.
    theirs = commands.status()["identity"]  # type: ignore[index]
    monkeypatch.setattr(command_server, "identity", lambda: theirs)  # this test's Python has another path
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", keyring["PYTHON_KEYRING_BACKEND"])
    assert command_server.run(["profile", "password", "office"]) == (None, False)
