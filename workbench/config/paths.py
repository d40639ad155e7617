"""Where workbench keeps its files, and how a command finds its configuration file."""

from __future__ import annotations

import hashlib
import os
import re
import warnings
from pathlib import Path

from workbench.core import errors

CONFIG_NAME = "workbench.toml"


def _home() -> Path | None:
    # WORKBENCH_HOME puts every file of ours under one directory (tests, portable installs).
    value = os.environ.get("WORKBENCH_HOME")
    return Path(value) if value else None


# platformdirs is imported where a directory is asked for: a command given --config needs none
# (every import counts in `workbench next`, see docs/explanation/performance.md).


def config_dir() -> Path:
    home = _home()
    if home:
        return home / "config"
    import platformdirs

    return Path(platformdirs.user_config_dir("workbench", appauthor=False))


def data_dir() -> Path:
    home = _home()
    if home:
        return home / "data"
    import platformdirs

    return Path(platformdirs.user_data_dir("workbench", appauthor=False))


def cache_dir() -> Path:
    """Files made again when missing: bytecode of Qt's embedded support modules (gui/qt_bytecode.py)."""
    home = _home()
    if home:
        return home / "cache"
    import platformdirs

    return Path(platformdirs.user_cache_dir("workbench", appauthor=False))


def runtime_dir() -> Path:
    """Files that live as long as the user's session: the command server's socket."""
    home = _home()
    if home:
        return home / "run"
    import platformdirs

    with warnings.catch_warnings():  # newer platformdirs warn when they fall back to a temporary dir
        warnings.simplefilter("ignore")
        return Path(platformdirs.user_runtime_dir("workbench", appauthor=False))


def user_folder(user: str) -> str:
    """The folder of one workbench user's own files (drafts, window settings) on a computer several
    people share: readable, safe on every file system, and distinct for names that differ only in
    case (Windows and macOS folders do not tell Alice from alice)."""
    readable = re.sub(r"[^A-Za-z0-9._-]", "_", user)[:40].strip(".") or "user"
    digest = hashlib.sha256(user.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{readable}-{digest}"


def demo_dir() -> Path:
    return data_dir() / "demo"


def candidates(explicit: str | None = None) -> list[Path]:
    """Config files tried in order: --config, $WORKBENCH_CONFIG, ./workbench.toml, user config, demo."""
    if explicit:
        return [Path(explicit)]
    env = os.environ.get("WORKBENCH_CONFIG")
    if env:
        return [Path(env)]
    return [Path.cwd() / CONFIG_NAME, config_dir() / CONFIG_NAME, demo_dir() / CONFIG_NAME]


def find_config(explicit: str | None = None) -> Path:
    tried = candidates(explicit)
    if explicit or os.environ.get("WORKBENCH_CONFIG"):
        return tried[0]  # an explicit file that is missing is reported by the loader
    for path in tried:
        if path.is_file():
            return path
    raise errors.ConfigError(
        "no configuration file found (tried " + ", ".join(str(p) for p in tried) + "); "
        "pass --config FILE, set WORKBENCH_CONFIG, or run `workbench demo` to create a demo"
    )
