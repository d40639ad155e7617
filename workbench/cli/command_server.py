"""The command server: a process with the CLI's modules already imported forks one child per command.

A `workbench next` spends most of its time importing (SQLAlchemy alone takes 0.2-0.4 s), and
scripts and cron jobs call it in loops. So, on Linux, the first command starts this server in the
background; later commands hand it their arguments, environment, working directory and the three
standard file descriptors over a Unix socket, and it forks a child that runs the command in a
process of its own, exactly as if it had been started fresh but with the imports done. The
pattern is Mercurial's chg. The server holds no password, connection or engine (each child opens
its own), accepts only its own user, and exits when idle or when the installed code changed.

This module is imported by every `workbench` command before anything else: the client side uses
only the standard library, and the server imports the CLI lazily.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import struct
import sys
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:  # started lazily: a command handed to the server need not load it
    import subprocess

# The one setting: "off", or how many seconds the server waits for a command before it exits.
ENV = "WORKBENCH_COMMAND_SERVER"
IDLE_DEFAULT = 600

# The command names that are worth a server (the window and the self-test are not): the launcher
# hands the server only a command line that names one. tests/test_command_server.py checks the
# list against the parser's commands.
COMMANDS = frozenset(
    (
        "demo",
        "init",
        "queues",
        "attach",
        "next",
        "claim",
        "show",
        "save",
        "complete",
        "release",
        "defer",
        "deferred",
        "escalate",
        "escalated",
        "reopen",
        "take",
        "undo",
        "move",
        "extend",
        "mine",
        "locks",
        "force-release",
        "reassign",
        "sweep",
        "history",
        "note",
        "notes",
        "profile",
        "publish",
        "published",
        "board",
        "health",
        "stats",
        "grants",
        "role",
        "group",
        "people",
    )
)
# The commands that run in a process of their own: `relay` serves windows until it is stopped.
OWN_PROCESS = frozenset(("relay",))

# What a command may need, imported once by the server; a driver that is not installed is skipped.
PRELOAD = (
    "workbench.cli.main",
    "workbench.opening",
    "workbench.services",  # the commands' way in to the engine (it imports workbench.db)
    "workbench.services.admin",
    "workbench.db.claims",
    "workbench.credentials",
    "workbench.config.loader",
    "sqlalchemy.dialects.sqlite",
    "sqlalchemy.dialects.postgresql",
    "sqlalchemy.dialects.mysql",
    "sqlalchemy.dialects.mssql",
    "sqlite3",
    "psycopg",
    "pymysql",
    "pyodbc",
    "keyring",
)

OUTDATED = "outdated"  # the server's answer when its code is not the caller's
_UNIX_PATH_MAX = 100  # sun_path is 108 bytes on Linux; keep a margin
_HEADER = struct.Struct("!I")


def idle_seconds() -> int | None:
    """The setting: None when the server is off."""
    value = os.environ.get(ENV, "").strip().lower()
    if value in ("off", "0", "no", "false"):
        return None
    try:
        return max(1, int(value)) if value else IDLE_DEFAULT
    except ValueError:
        return IDLE_DEFAULT


def wanted(argv: Sequence[str]) -> bool:
    """Whether this command line should go through a command server at all."""
    # Linux only: it checks the peer's user with SO_PEERCRED, and macOS frameworks are not safe to
    # use in a child forked without exec.
    return sys.platform == "linux" and idle_seconds() is not None and any(arg in COMMANDS for arg in argv)


# -- where the server listens, and which code it runs --------------------------------------------


def _package_dir() -> Path:
    return Path(__file__).resolve().parent.parent


def socket_path() -> Path | None:
    """The server's socket for this Python and this installation, or None when there is no safe place."""
    from workbench.config import paths

    directory = paths.runtime_dir()
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = directory.stat()
    except OSError:
        return None
    if st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None  # not ours alone: another user could swap the socket
    # One server per interpreter and installation: two venvs must not take each other's server down.
    tag = zlib.crc32(f"{sys.executable}\0{_package_dir()}".encode())
    path = directory / f"command-{tag:08x}.sock"
    return path if len(os.fsencode(path)) <= _UNIX_PATH_MAX else None


def identity() -> str:
    """What the server's imports were made from: the interpreter, the import path, and every module
    file of workbench and of the installed packages (their directory's time). A server whose
    identity differs from its caller's runs outdated code and steps down."""
    # sys.path[0] is where the caller was started from (the script's directory, or the working
    # directory under -m), not where modules come from.
    parts = [sys.executable, sys.version, "\0".join(sys.path[1:])]
    with contextlib.suppress(OSError):  # a bundle (the installers') replaces its executable on upgrade
        parts.append(str(os.stat(sys.executable).st_mtime_ns))
    for root, dirs, files in os.walk(_package_dir()):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            if name.endswith(".py"):
                st = os.stat(os.path.join(root, name))
                parts.append(f"{root}/{name}:{st.st_mtime_ns}:{st.st_size}")
    for entry in sys.path:
        if entry.endswith("-packages"):
            with contextlib.suppress(OSError):  # changes when a package is (un)installed
                parts.append(f"{entry}:{os.stat(entry).st_mtime_ns}")
    text = "\n".join(parts).encode()
    return f"{zlib.crc32(text):08x}-{zlib.adler32(text):08x}-{len(text)}"


# -- the client: the `workbench` command hands its command line over -----------------------------


class _Forwarder:
    """Signals the caller receives (Ctrl-C, a timeout's TERM) go on to the child running the command."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)

    def __init__(self) -> None:
        self.child: int | None = None
        self.received: int | None = None
        self._saved = {sig: signal.signal(sig, self._forward) for sig in self.SIGNALS}

    def _forward(self, sig: int, _frame: Any) -> None:
        self.received = sig
        if self.child is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.child, sig)

    def restore(self) -> None:
        for sig, handler in self._saved.items():
            signal.signal(sig, handler)


def _std_fds() -> list[int]:
    fds = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
            fds.append(fd)
        except OSError:  # closed (some cron setups close stdin): the child gets /dev/null there
            fds.append(os.open(os.devnull, os.O_RDWR))
    return fds


class Outcome(NamedTuple):
    """What became of a command handed to the server."""

    status: int | None  # its exit status; None: not run, the caller runs it itself
    start_server: bool = False  # and should start a server for the next (none runs, or an outdated one)


def run(argv: Sequence[str]) -> Outcome:
    """Run the command in the user's command server."""
    path = socket_path()
    if path is None:
        return Outcome(None)
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(os.fspath(path))
        request = json.dumps(
            {"identity": identity(), "argv": list(argv), "cwd": os.getcwd(), "env": dict(os.environ)}
        ).encode()
    except OSError:  # no server (or the working directory is gone: the command says so itself)
        conn.close()
        return Outcome(None, start_server=True)
    forwarder = _Forwarder()
    try:
        socket.send_fds(conn, [_HEADER.pack(len(request)) + request], _std_fds())
        reader = conn.makefile("rb")
        started = False
        for line in reader:
            message = json.loads(line)
            if "pid" in message:
                started = True
                forwarder.child = message["pid"]
                if forwarder.received is not None:
                    os.kill(forwarder.child, forwarder.received)
            elif "exit" in message:
                return Outcome(int(message["exit"]))
            else:  # "here": the child needs a process of its own, or the server is outdated
                return _unstarted(forwarder, start_server=message["here"] == OUTDATED)
        # The child ended without a word: killed (e.g. by the signal passed on), or it crashed.
        if not started:
            return _unstarted(forwarder)
        if forwarder.received is not None:
            return Outcome(128 + forwarder.received)
        sys.stderr.write(
            "workbench: the command ended abnormally in the command server's process; "
            "check its effect (e.g. `workbench mine QUEUE`) before running it again\n"
        )
        return Outcome(1)
    except OSError:  # the server went away before it took the command: nothing was run
        return _unstarted(forwarder)
    finally:
        forwarder.restore()
        conn.close()


def _unstarted(forwarder: _Forwarder, start_server: bool = True) -> Outcome:
    """Nothing ran in the server: the caller runs the command, unless the user interrupted it meanwhile."""
    if forwarder.received is not None:
        return Outcome(128 + forwarder.received)
    return Outcome(None, start_server=start_server)


def status() -> dict[str, Any] | None:
    """The running server's pid, how many commands it has served and its identity; None: no server."""
    path = socket_path()
    if path is None:
        return None
    request = json.dumps({"status": True}).encode()
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(10)
            conn.connect(os.fspath(path))
            conn.sendall(_HEADER.pack(len(request)) + request)
            answer: dict[str, Any] = json.loads(conn.makefile("rb").readline())
            return answer
    except (OSError, ValueError):
        return None


SERVE = "--command-server"  # the server's command line: `workbench --command-server` (not in --help)


def _workbench() -> list[str]:
    """How to start this workbench: the bundle's executable, or this Python with `-m workbench`."""
    return [sys.executable] if getattr(sys, "frozen", False) else [sys.executable, "-m", "workbench"]


def start() -> subprocess.Popen[bytes] | None:
    """Start the user's command server in the background, unless one is starting or running; the process
    started (None where it could not be), for a caller that reaps what it starts."""
    import subprocess

    with contextlib.suppress(OSError):  # no server: commands run as before
        return subprocess.Popen(
            [*_workbench(), SERVE],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd="/",
            start_new_session=True,
            close_fds=True,
        )
    return None


# -- the server --------------------------------------------------------------------------------


def serve(idle: int) -> int:
    """Import what commands need, then fork a child per command until idle for `idle` seconds."""
    import fcntl
    import importlib
    import time

    path = socket_path()
    if path is None:
        return 1
    guard = open(path.with_suffix(".lock"), "a")  # noqa: SIM115 - held for the server's life
    for attempt in range(21):
        try:
            fcntl.flock(guard, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except OSError:
            if attempt == 20:
                return 0  # another server is running (an outdated one steps down within this wait)
            time.sleep(0.1)
    for name in PRELOAD:
        # Not installed, or a driver whose library is broken: the command that needs it says so itself.
        with contextlib.suppress(Exception):
            importlib.import_module(name)
    from workbench.cli import main as cli

    parser = cli.build_parser()
    from workbench import start_collection

    start_collection.release()  # what every child shares, frozen: its collections skip it
    mine = identity()
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(os.fspath(path))
    bound = os.stat(path).st_ino
    listener.listen(64)
    listener.settimeout(idle)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    served = 0
    try:
        while True:
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                return 0
            except InterruptedError:
                continue
            try:
                if not _same_user(conn):
                    continue
                request, fds = _receive(conn)
                if not fds:  # a status request
                    _send(conn, {"pid": os.getpid(), "served": served, "identity": mine})
                    continue
                if request.get("identity") != mine:
                    _send(conn, {"here": OUTDATED})
                    return 0
                served += 1
                pid = os.fork()
                if pid == 0:
                    listener.close()
                    guard.close()
                    _child(conn, request, fds, parser, cli)  # never returns
                for fd in fds:
                    os.close(fd)
            except (OSError, ValueError):
                pass  # a caller that went away or spoke nonsense: it runs the command itself
            finally:
                conn.close()
    finally:
        _remove(path, bound)
        listener.close()


def _same_user(conn: socket.socket) -> bool:
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    uid: int = struct.unpack("3i", creds)[1]
    return uid == os.getuid()


def _receive(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    conn.settimeout(10)
    data, fds, _flags, _addr = socket.recv_fds(conn, 65536, 3)
    if len(fds) not in (0, 3) or len(data) < _HEADER.size:
        for fd in fds:
            os.close(fd)
        raise ValueError("not a request")
    (size,) = _HEADER.unpack_from(data)
    body = data[_HEADER.size :]
    while len(body) < size:
        more = conn.recv(size - len(body))
        if not more:
            raise ValueError("cut short")
        body += more
    conn.settimeout(None)
    return json.loads(body), fds


def _send(conn: socket.socket, message: dict[str, Any]) -> None:
    conn.sendall(json.dumps(message).encode() + b"\n")


def _remove(path: Path, bound: int) -> None:
    """Remove the socket file if it is still this server's (`bound`: its inode)."""
    try:
        if os.stat(path).st_ino == bound:
            path.unlink()
    except OSError:
        pass


def _child(conn: socket.socket, request: dict[str, Any], fds: list[int], parser: Any, cli: Any) -> None:
    """Become the process the caller would have started, run its command, report the exit status."""
    import atexit

    code = 1
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        _take_over(request, fds)
        _send(conn, {"pid": os.getpid()})
        try:
            code = cli.main(request["argv"], parser=parser, served=True)
        except SystemExit as exc:  # argparse's --help and usage errors
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except cli.OwnProcessNeeded:
            _send(conn, {"here": "own process"})
            os._exit(0)
        atexit._run_exitfuncs()  # what a normal exit runs: log handlers flushed, engines disposed
        _finish()
        _send(conn, {"exit": code})
    except BaseException:  # noqa: BLE001 - whatever happened, this process must not return into the server
        os._exit(1)
    os._exit(code)


def _take_over(request: dict[str, Any], fds: list[int]) -> None:
    import getpass
    import io
    import locale
    import time

    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    time.tzset()
    with contextlib.suppress(locale.Error):
        locale.setlocale(locale.LC_ALL, "")
    encoding = os.environ.get("PYTHONIOENCODING", "").split(":")[0] or locale.getpreferredencoding(False)
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding=encoding)
    sys.stdout = io.TextIOWrapper(
        io.FileIO(1, "w", closefd=False), encoding=encoding, line_buffering=os.isatty(1), write_through=False
    )
    sys.stderr = io.TextIOWrapper(
        io.FileIO(2, "w", closefd=False), encoding=encoding, errors="backslashreplace", line_buffering=True
    )
    sys.argv = ["workbench", *request["argv"]]

    def no_terminal(*_: Any, **__: Any) -> str:
        # This process has no controlling terminal: a prompt would echo the password.
        from workbench.cli import main as cli

        raise cli.OwnProcessNeeded

    getpass.getpass = no_terminal


def _finish() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()


def main() -> int:
    """The server process (`workbench --command-server`)."""
    idle = idle_seconds()
    if idle is None or sys.platform != "linux":
        return 1
    os.umask(0o077)
    return serve(idle)
