"""The racing tests' worker processes, started without paying Python's start-up each time.

`python -m tests.helpers.claim_worker …` in a fresh interpreter costs a second or more of CPU before the
worker's first claim (the interpreter, SQLAlchemy, the drivers, workbench: most of a racing test's time on the
two-core machine, twelve processes at a time). Here one process per test session imports them once (a
multiprocessing forkserver, preloaded with the worker modules) and forks each worker from it: every worker
is still an OS process of its own, with its own connections, started together by the `go` file as before;
only the imports are shared. The forkserver itself imports nothing else (no Qt, no pytest, no engine, no
thread), so what a worker inherits is what a fresh interpreter would have after the same imports.

`Popen` takes the command line the tests wrote for `subprocess.Popen` (`[sys.executable, "-m", MODULE,
*ARGS]`) and answers `poll`, `communicate` and `returncode` as `subprocess.Popen` does (stdout and stderr as
text, read from files the worker writes them to).

The workers of one start (one `--go` file) find their queues' tables already read: the test's process reads the
tables of each `--config` once and hands them, pickled, to every worker, whose binding then asks the database
for none of them (about 40 ms of a worker's CPU, and the server's catalog queries, eight times a race). Only
the tables' shape is handed over: each worker opens its own engine and connections and binds as before.
"""

from __future__ import annotations

import functools
import importlib
import multiprocessing
import os
import pickle
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

# The modules a forked worker may run (each has main() -> int, reading sys.argv as `python -m` gives it).
WORKERS = ("tests.helpers.claim_worker", "tests.helpers.takeover_worker", "tests.helpers.api_worker")
# Imported once in the forkserver: the workers and the drivers they connect with (psycopg alone costs as much as
# the rest). One that is not installed is left out (the forkserver passes over an ImportError).
PRELOAD = (
    *WORKERS,
    "tests.helpers.publisher",  # not a worker: a target of context().Process
    "sqlalchemy.dialects.sqlite.pysqlite",
    "psycopg",
    "sqlalchemy.dialects.postgresql.psycopg",
    "pymysql",
    "sqlalchemy.dialects.mysql.pymysql",
    "pyodbc",
    "sqlalchemy.dialects.mysql.pyodbc",
)


@functools.cache
def _forkserver() -> Any:
    """The forkserver context (its server started by the first worker, kept for the session)."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(PRELOAD))
    return context


def context() -> Any:
    """The forkserver's multiprocessing context, for a test that starts a function of a preloaded module as a
    Process of its own (its arguments pickled, as under "spawn")."""
    return _forkserver()


@functools.lru_cache(maxsize=16)
def _tables(config: str, text: str, go: str) -> bytes | None:
    """The tables the queues of `config` (its `text`) are bound to, read here once for the workers of one start
    (`go`), pickled; None when they cannot be read here (the workers then read them, and say why)."""
    from workbench.config import loader
    from workbench.db import service

    try:
        with service.Workbench.open(loader.load(config)) as wb:
            bound = wb.validate()
    except Exception:  # noqa: BLE001 - a worker meets the same error and reports it
        return None
    return pickle.dumps(next(iter(bound.values())).table.metadata) if bound else None


def _read_already(tables: bytes) -> None:
    """In the forked worker: queues bound to the tables the test's process read (_tables), not read again."""
    from workbench.db.binding import reflector

    metadata = pickle.loads(tables)  # this test session's own pickle
    schemas = {table.schema for table in metadata.tables.values()}
    read = reflector.Reflector.__init__

    def init(self: reflector.Reflector, *args: Any, **kwargs: Any) -> None:
        read(self, *args, **kwargs)
        self._metadata = metadata
        self._batched |= schemas

    reflector.Reflector.__init__ = init  # type: ignore[method-assign]


def _child(
    module: str,
    argv: list[str],
    env: dict[str, str],
    cwd: str,
    stderr_path: str,
    tables: bytes | None = None,
    stdout_path: str | None = None,
) -> None:
    """In the forked worker: the environment, directory, stdout, stderr and argv `python -m module` would have had."""
    if tables is not None:
        _read_already(tables)
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    for path, number in ((stdout_path, 1), (stderr_path, 2)):
        if path is not None:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(fd, number)
            os.close(fd)
    if stdout_path is not None:
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False, buffering=1)  # noqa: SIM115
    sys.argv = [module, *argv]
    code = importlib.import_module(module).main()
    sys.stdout.flush()
    sys.stderr.flush()
    sys.exit(code)


def Popen(cmd: Sequence[str], cwd: Path | str, env: Mapping[str, str], stdout: bool = False) -> Any:
    """The worker `cmd` (`[sys.executable, "-m", MODULE, *ARGS]`) forked from the preloaded forkserver, or with
    WORKBENCH_TEST_FORK=0 in a fresh interpreter (subprocess.Popen); with `stdout`, its output is kept too."""
    if os.environ.get("WORKBENCH_TEST_FORK") == "0":
        out = subprocess.PIPE if stdout else None
        return subprocess.Popen(list(cmd), cwd=cwd, env=dict(env), stdout=out, stderr=subprocess.PIPE, text=True)
    return Forked(cmd, cwd, env, stdout)


def _read_here(cmd: Sequence[str], env: Mapping[str, str]) -> bytes | None:
    """_tables for the worker `cmd`, when it would read them as this process does (its environment this one's
    but PYTHONPATH, its config given relative to nothing else)."""
    args = list(cmd)
    if "--config" not in args or "--go" not in args:
        return None
    mine = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if {k: v for k, v in env.items() if k != "PYTHONPATH"} != mine:
        return None
    config = Path(args[args.index("--config") + 1])
    if not config.is_absolute():
        return None
    return _tables(str(config), config.read_text(encoding="utf-8"), args[args.index("--go") + 1])


class Forked:
    """A worker forked from the preloaded forkserver, answering as subprocess.Popen(cmd, stderr=PIPE, text=True)
    (and stdout=PIPE, with `stdout`)."""

    def __init__(self, cmd: Sequence[str], cwd: Path | str, env: Mapping[str, str], stdout: bool = False) -> None:
        if len(cmd) < 3 or cmd[1] != "-m" or cmd[2] not in WORKERS:
            raise ValueError(f"not a forkable worker: {cmd[:3]}")
        self._stderr, self._stdout = _temp(".stderr"), _temp(".stdout") if stdout else None
        out = None if self._stdout is None else str(self._stdout)
        self._process = _forkserver().Process(
            target=_child,
            args=(cmd[2], list(cmd[3:]), dict(env), str(cwd), str(self._stderr), _read_here(cmd, env), out),
            daemon=True,
        )
        self._process.start()
        self.pid = self._process.pid

    @property
    def returncode(self) -> int | None:
        return self._process.exitcode  # type: ignore[no-any-return]

    def poll(self) -> int | None:
        return self.returncode

    def communicate(self, timeout: float | None = None) -> tuple[str | None, str]:
        self._process.join(timeout)
        if self._process.exitcode is None:
            raise subprocess.TimeoutExpired(str(self._process.name), timeout or 0.0)
        return None if self._stdout is None else _taken(self._stdout), _taken(self._stderr)

    def kill(self) -> None:
        self._process.kill()


def _temp(suffix: str) -> Path:
    """A new empty file for a worker's output."""
    handle, path = tempfile.mkstemp(prefix="worker-", suffix=suffix)
    os.close(handle)
    return Path(path)


def _taken(path: Path) -> str:
    """A worker's output file's text, the file removed."""
    try:
        return path.read_text(encoding="utf-8", errors="backslashreplace")
    finally:
        path.unlink(missing_ok=True)
