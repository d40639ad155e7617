"""Bytecode of shiboken's support modules, kept between starts.

shiboken6 carries its Python support modules (`shibokensupport`: signatures, enums, features) as a zip
inside `libshiboken6` and compiles each from source whenever a process imports it: about a tenth of the
instructions the window's thread runs before its first show (docs/explanation/performance.md). Imported
through `load()`, the code objects of the last start are used instead, from one file in the user's cache
directory, checked module by module against a hash of the source shiboken hands over; a module whose
source differs (another PySide6) is compiled as before and the file written again.

Only `compile()` calls for those modules' files during `import shiboken6` are answered from the file;
everything else reaches Python's own `compile()`. No Qt import here: this runs before Qt loads.
"""

from __future__ import annotations

import builtins
import hashlib
import importlib.util
import logging
import marshal
import sys
from pathlib import Path
from types import CodeType
from typing import Any

from workbench import codecache

log = logging.getLogger("workbench.gui")

PREFIX = "shibokensupport/"  # the file names shiboken compiles its embedded modules under


def cache_file() -> Path:
    from workbench.config import paths

    # Code objects are only valid for the interpreter that made them: its magic number names the file.
    return paths.cache_dir() / f"shibokensupport-{importlib.util.MAGIC_NUMBER.hex()}.bytecode"


def _read(path: Path) -> dict[str, tuple[bytes, Any]]:
    try:
        data = path.read_bytes()
    except OSError:
        return {}
    try:
        table = marshal.loads(data)
    except (EOFError, ValueError, TypeError):
        return {}  # damaged: made again
    return table if isinstance(table, dict) else {}


def load() -> None:
    """Import shiboken6 (which PySide6 imports first), its support modules' bytecode from the cache."""
    if "shiboken6" in sys.modules:
        return
    try:
        path = cache_file()
    except Exception:  # noqa: BLE001 - no cache directory to be had: import as PySide6 does on its own
        import shiboken6

        return
    table = _read(path)
    seen: dict[str, tuple[bytes, Any]] = {}
    real_compile = builtins.compile

    def compile_cached(source: Any, filename: Any, mode: str, *args: Any, **kwargs: Any) -> Any:
        if (
            not args
            and not kwargs
            and mode == "exec"
            and isinstance(filename, str)
            and filename.startswith(PREFIX)
            and isinstance(source, bytes)
        ):
            digest = hashlib.sha256(source).digest()
            kept = table.get(filename)
            if isinstance(kept, tuple) and len(kept) == 2 and kept[0] == digest and isinstance(kept[1], CodeType):
                code = kept[1]
            else:  # not kept, another source, or an entry not of ours: compiled as shiboken would
                code = real_compile(source, filename, mode)
            seen[filename] = (digest, code)
            return code
        return real_compile(source, filename, mode, *args, **kwargs)

    builtins.compile = compile_cached
    try:
        import shiboken6  # noqa: F401
    finally:
        builtins.compile = real_compile
    if seen and seen != table:
        try:
            codecache.write_marshal(path, seen)
        except OSError as exc:
            log.debug("shiboken's bytecode not kept in %s: %s", path, exc)
