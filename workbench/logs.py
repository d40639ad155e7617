"""The log file, with every password the program has seen masked in everything written to it."""

from __future__ import annotations

import logging
import logging.handlers
import sys
import threading
import traceback
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from workbench.config import paths

MASK = "***"
_secrets: set[str] = set()
_lock = threading.Lock()


def register_secret(value: str | None) -> None:
    """Mask `value` wherever it would appear in a log line or crash report from now on."""
    if value:
        with _lock:
            _secrets.add(value)


def scrub(text: str) -> str:
    """`text` with every registered secret replaced by ***."""
    with _lock:
        secrets = sorted(_secrets, key=len, reverse=True)  # longest first: one may contain another
    for secret in secrets:
        text = text.replace(secret, MASK)
    return text


class ScrubbingFormatter(logging.Formatter):
    """Masks secrets after formatting, so messages, arguments and tracebacks are all covered."""

    def format(self, record: logging.LogRecord) -> str:
        return scrub(super().format(record))


class _FileHandler(logging.handlers.RotatingFileHandler):
    """The log file; a disk that fills up or turns read-only later is ignored quietly."""

    workbench_file = True

    def handleError(self, record: logging.LogRecord) -> None:
        # logging's default prints "--- Logging error ---" and a traceback to stderr on every
        # record: the log is a help, not a need, and the window says what matters about the disk.
        pass


def log_path() -> Path:
    return paths.data_dir() / "logs" / "workbench.log"


def setup(level: int = logging.INFO) -> Path | None:
    """Send workbench's log to a rotating file in the data directory; returns its path (None if unwritable)."""
    path = log_path()
    root = logging.getLogger("workbench")
    if any(getattr(h, "workbench_file", False) for h in root.handlers):
        return path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = _FileHandler(path, maxBytes=2_000_000, backupCount=3, encoding="utf-8")
    except OSError:
        return None  # a read-only home must not stop the app; logging is a help, not a need
    handler.setFormatter(ScrubbingFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    root.setLevel(level)
    return path


def close() -> None:
    root = logging.getLogger("workbench")
    for handler in [h for h in root.handlers if getattr(h, "workbench_file", False)]:
        root.removeHandler(handler)
        handler.close()


def crash_report(exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> str:
    """The text of a crash report (logged, and shown to the user), secrets masked."""
    text = "".join(traceback.format_exception(exc_type, exc, tb))
    logging.getLogger("workbench.crash").critical("unhandled error\n%s", text)
    return scrub(text)


def install_excepthook(show: Callable[[str], None] | None = None) -> None:
    """Log every unhandled exception (secrets masked) and let `show` tell the user, instead of dying silently."""

    def hook(exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        if issubclass(exc_type, KeyboardInterrupt):
            sys.__excepthook__(exc_type, exc, tb)
            return
        report = crash_report(exc_type, exc, tb)
        if show is not None:
            show(report)
        else:
            sys.stderr.write(report)

    sys.excepthook = hook
