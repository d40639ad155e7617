"""Source that Python writes and compiles at every start, compiled once and kept between starts.

A `@dataclass` is made at import: Python writes the source of its `__init__`, `__repr__`, `__eq__`,
`__hash__` (and a frozen one's `__setattr__`, `__delattr__`) and compiles it with `exec`; a string
annotation in a `NamedTuple` or `TypedDict` (SQLAlchemy has about 270) is compiled by `typing` as a
`ForwardRef`. A `workbench next` makes 74 such classes, about 440 functions, and parsing and compiling
that source is about a seventh of its instructions (docs/explanation/performance.md).
Once `install()` has run, the code objects of the last start are used instead: one file in the user's
cache directory, named by the interpreter's bytecode magic number and optimisation level, holds each
source text with its code object. A text not in the file is compiled as the caller would compile it
(no `__future__` flags inherited: neither `dataclasses` nor `typing` has any), and the file is
written again (at exit, and by the window once its queues are open). The same text always compiles to
the same code on one interpreter, so a class is the same either way.

Only the `exec` that `dataclasses` calls with a string and the `compile(text, "<string>", "eval")`
of `typing` are answered here; every other call is Python's own. A start without a writable cache
directory compiles as before.
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import dataclasses
import importlib.util
import marshal
import os
import sys
import tempfile
import typing
from pathlib import Path
from types import CodeType
from typing import Any

# Left out of the file once it holds more than this many texts, those this process did not use: a
# file that outgrew the code (classes changed by upgrades) is trimmed to what is in use.
KEEP_AT_MOST = 4000

_table: dict[str, CodeType] = {}
_used: set[str] = set()
_state = {"installed": False, "new": 0, "saving": True}


def cache_file() -> Path:
    from workbench.config import paths

    magic = importlib.util.MAGIC_NUMBER.hex()
    return paths.cache_dir() / f"dataclasses-{magic}-O{sys.flags.optimize}.code"


def _read(path: Path) -> dict[str, CodeType]:
    try:
        table = marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return {}  # none yet, or damaged: made again
    if not isinstance(table, dict):
        return {}
    return {k: v for k, v in table.items() if isinstance(k, str) and isinstance(v, CodeType)}


def write_marshal(path: Path, table: Any) -> None:
    """`table` marshalled into `path` (the start caches' files: this one's and gui/qt_bytecode.py's)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # Written aside and renamed: a start beside this one reads the old file or the new one, never half.
    fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(marshal.dumps(table))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _compiled(text: str, mode: str) -> CodeType:
    key = f"{mode}\n{text}"
    code = _table.get(key)
    if code is None:
        code = builtins.compile(text, "<string>", mode, dont_inherit=True)
        _table[key] = code
        _state["new"] += 1
    _used.add(key)
    return code


def _exec(source: Any, globals: Any = None, locals: Any = None, /) -> None:
    """`exec` as `dataclasses` calls it."""
    builtins.exec(_compiled(source, "exec") if isinstance(source, str) else source, globals, locals)


def _compile(source: Any, filename: Any, mode: Any, *args: Any, **kwargs: Any) -> Any:
    """`compile` as `typing` calls it (a ForwardRef's text); any other call as Python's own."""
    if not args and not kwargs and mode == "eval" and filename == "<string>" and isinstance(source, str):
        return _compiled(source, "eval")
    return builtins.compile(source, filename, mode, *args, **kwargs)


def save(path: Path | None = None) -> None:
    """Write the file if this process compiled a text it did not hold (and may write: write_nothing())."""
    if not _state["new"] or not _state["saving"]:
        return
    _state["new"] = 0
    table = _table if len(_table) <= KEEP_AT_MOST else {k: v for k, v in _table.items() if k in _used}
    with contextlib.suppress(Exception):  # no cache to be had: the next start compiles as before
        write_marshal(path or cache_file(), dict(table))


def write_nothing() -> None:
    """This process keeps what it compiled to itself: the self-test writes nothing outside its own temporary
    folder (an installer runs it, the user's cache is not its to fill)."""
    _state["saving"] = False


def install() -> None:
    """From now on, `dataclasses` compiles each method's text once per machine (see the module's doc)."""
    if _state["installed"]:
        return
    _state["installed"] = True
    try:
        path = cache_file()
    except Exception:  # noqa: BLE001 - no cache directory: dataclasses compile as they do on their own
        return
    _table.update(_read(path))
    dataclasses.exec = _exec  # type: ignore[attr-defined]
    typing.compile = _compile  # type: ignore[attr-defined]
    atexit.register(save, path)
