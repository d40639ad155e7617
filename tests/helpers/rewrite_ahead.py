"""The test modules' assertion rewriting done once before the xdist workers start, not once in every worker."""

# pytest rewrites a test module's asserts as it imports it, and keeps the result in __pycache__ beside the
# source (`<module>.<cache tag>-pytest-<version>.pyc`, PYC_TAIL in _pytest/assertion/rewrite.py). In a clean
# clone there is none, and every xdist worker imports every test module: each of the four rewrote all of them
# (about 5 s of CPU per worker, 4,300 asserts), racing to write the same files. Here the controller, before it
# starts the workers, forks one process per core that imports the modules lacking a current rewrite through
# pytest's own import hook (which writes it) and exits; the workers then read what was written. The imports
# happen in those children only: what the controller and the workers import, and in what order, is unchanged.

from __future__ import annotations

import contextlib
import fnmatch
import importlib
import os
import signal
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import pytest

TAIL = f".{sys.implementation.cache_tag}-pytest-{pytest.__version__}.pyc"


def cached(source: Path) -> Path:
    """Where pytest keeps `source`'s rewritten code."""
    return source.parent / "__pycache__" / (source.stem + TAIL)


def stale(paths: Iterable[Path], patterns: Sequence[str], skip_dirs: Sequence[str] = ()) -> list[Path]:
    """The test modules and conftest files under `paths` whose rewritten code is missing or older than them."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not any(fnmatch.fnmatch(d, p) for p in skip_dirs))
                found.extend(Path(root, name) for name in sorted(files))
        else:
            found.append(path)
    wanted = [p for p in found if p.name == "conftest.py" or any(fnmatch.fnmatch(p.name, pat) for pat in patterns)]
    return [p for p in wanted if not _current(p)]


def _current(source: Path) -> bool:
    try:
        return cached(source).stat().st_mtime >= source.stat().st_mtime
    except OSError:
        return False


def module_name(source: Path) -> tuple[Path, str]:
    """The directory pytest's default import mode puts on sys.path for `source`, and the module's name there."""
    parts = [source.stem]
    directory = source.parent
    while (directory / "__init__.py").exists():
        parts.insert(0, directory.name)
        directory = directory.parent
    return directory, ".".join(parts)


def rewrite(sources: Sequence[Path], processes: int, timeout: float = 120.0) -> None:
    """Import `sources` in `processes` forked children, the largest first spread evenly, and wait for them."""
    shares: list[list[Path]] = [[] for _ in range(max(1, min(processes, len(sources))))]
    sizes = [0] * len(shares)
    for source in sorted(sources, key=lambda p: -p.stat().st_size):
        least = sizes.index(min(sizes))
        shares[least].append(source)
        sizes[least] += source.stat().st_size
    children = [_fork(share) for share in shares if share]
    deadline = time.monotonic() + timeout
    while children:
        for pid in list(children):
            if os.waitpid(pid, os.WNOHANG)[0]:
                children.remove(pid)
        if children and time.monotonic() > deadline:  # a module hangs on import: the workers meet it as before
            for pid in children:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            return
        time.sleep(0.02)


def _fork(sources: Sequence[Path]) -> int:
    pid = os.fork()
    if pid:
        return pid
    try:  # the child: its output is no one's, a module that fails to import is the workers' to report
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        for source in sources:
            directory, name = module_name(source)
            if str(directory) not in sys.path:
                sys.path.insert(0, str(directory))
            with contextlib.suppress(BaseException):  # a skip at module level is a BaseException too
                importlib.import_module(name)
    finally:
        os._exit(0)


def before_workers(session: pytest.Session) -> None:
    """In the controller of a `-n N` run that writes bytecode, from its pytest_sessionstart (tryfirst: xdist's,
    trylast, starts the workers): the missing rewrites."""
    config = session.config
    workers = config.getoption("numprocesses", None) or 0
    if (
        hasattr(config, "workerinput")
        or not isinstance(workers, int)
        or workers < 1
        or config.getoption("dist", "no") == "no"
        or config.getoption("assertmode") != "rewrite"
        or sys.dont_write_bytecode
        or sys.pycache_prefix
    ):
        return
    here = config.invocation_params.dir
    paths = [here / arg.split("::")[0] for arg in config.args]
    sources = stale([p for p in paths if p.exists()], config.getini("python_files"), config.getini("norecursedirs"))
    if sources:
        rewrite(sources, min(workers, os.cpu_count() or 1))
