"""A crash-safe local journal of unsaved form edits, one file per item (no Qt here).

Every change in the edit form is written here before anything else happens, so that after a
crash, a power cut or a lost lock the operator's edits are still there to restore or reapply.
An entry is removed when its edits are saved, completed or deliberately discarded.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import decimal
import errno
import hashlib
import json
import os
import tempfile
import threading
import time
import zoneinfo
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]


@dataclasses.dataclass(frozen=True)
class Draft:
    """Unsaved edits of one item by one operator."""

    database: str  # which database (its URL without password), so two configs never mix drafts
    queue: str
    key: Any  # the item's key (str, int, …)
    owner: str  # the operator who typed them
    token: str | None  # the lock they were typed under (None once the lock is gone)
    values: dict[str, Any]  # column -> edited value (str, int, float, bool, None, Decimal, date, datetime, time)
    base: dict[str, Any]  # column -> the value the edit started from (to show what changed)
    updated_at: str  # ISO 8601 UTC time of the last change, from the local clock (for display only)


# Bumped only if the file layout changes incompatibly; a file of another format is left alone.
FORMAT = 1
_SUFFIX = ".json"
_TEMP_SUFFIX = ".tmp"
_CORRUPT_SUFFIX = ".corrupt"
# A temp file older than this belongs to a save that died; younger ones may be another
# process's save in flight, so they are never touched.
STALE_TEMP_SECONDS = 3600.0


class _Unreadable(Exception):
    """A journal file whose contents are not a valid draft (torn, garbage, wrong shape)."""


# -- values <-> tagged JSON ------------------------------------------------------------------------
# Plain JSON scalars stand for themselves; every other supported type is a one-key dict
# ({"$decimal": "12.30"}). No supported value is a dict, so a tag can never be confused
# with a value. Exact type checks (not isinstance): a subclass would come back as its base
# type, which is precisely the silent change of type this format exists to avoid.


def _encode(value: Any, what: str) -> Any:
    kind = type(value)
    if value is None or kind in (str, int, bool):
        return value
    if isinstance(value, str):
        return str.__str__(value)  # a str subclass (SQLAlchemy's quoted_name) is just its text
        # (str.__str__, not str(): a subclass may override __str__ to return other text)
    if kind is float:
        return value  # json writes repr(), which reads back as the identical float (NaN/inf too)
    if kind is decimal.Decimal:
        return {"$decimal": str(value)}  # str keeps the exponent: 12.30 stays 12.30, not 12.3
    if kind is dt.date:
        return {"$date": value.isoformat()}
    if kind is dt.datetime:
        return _encode_datetime(value)
    if kind is dt.time:
        if value.tzinfo is not None and type(value.tzinfo) is not dt.timezone:
            # A named zone has no offset without a date: isoformat() would drop it silently.
            raise TypeError(
                f"cannot journal {what}: a time of day with time zone {value.tzinfo!r} "
                "(only fixed UTC offsets are supported for times)"
            )
        return _with_fold({"$time": value.isoformat()}, value.fold)
    raise TypeError(
        f"cannot journal {what}: values of type {kind.__module__}.{kind.__qualname__} are "
        "not supported (str, int, float, bool, None, Decimal, date, datetime, time are)"
    )


def _encode_datetime(value: dt.datetime) -> dict[str, Any]:
    tz = value.tzinfo
    if tz is None or type(tz) is dt.timezone:
        return _with_fold({"$datetime": value.isoformat()}, value.fold)
    offset = value.utcoffset()
    if offset is None:
        raise TypeError(f"cannot journal the datetime {value!r}: its time zone gives no UTC offset")
    # Always store the fixed offset, so the instant survives even where the zone is unknown.
    fixed = value.replace(tzinfo=dt.timezone(offset), fold=0).isoformat()
    key = getattr(tz, "key", None) if isinstance(tz, zoneinfo.ZoneInfo) else None
    if key is None:
        return {"$datetime": fixed}  # pytz, dateutil, …: same instant, as a fixed offset
    # The zone's name and fold as well, so DST rules, the tzinfo and ambiguous times come back.
    return _with_fold({"$datetime": fixed, "zone": key}, value.fold)


def _with_fold(tagged: dict[str, Any], fold: int) -> dict[str, Any]:
    if fold:  # isoformat() drops fold; only the rare second pass through a repeated hour needs it
        tagged["fold"] = fold
    return tagged


def _encode_mapping(mapping: Any, what: str) -> dict[str, Any]:
    if not isinstance(mapping, dict):
        raise TypeError(f"cannot journal {what}: expected a dict of column -> value, got {type(mapping).__name__}")
    result = {}
    for name, value in mapping.items():
        if not isinstance(name, str):  # json would turn 1 into "1" without a word
            raise TypeError(f"cannot journal {what}: column names must be str, got {name!r}")
        # str(): reflected names are SQLAlchemy's quoted_name, a str subclass; the text is what counts.
        result[str.__str__(name)] = _encode(value, f"{what}[{name!r}]")
    return result


def _decode(raw: Any) -> Any:
    if raw is None or type(raw) in (str, int, bool, float):
        return raw
    if type(raw) is not dict or len(raw) not in (1, 2, 3):
        raise _Unreadable(f"not a journal value: {raw!r:.80}")
    if raw.keys() == {"$decimal"}:
        return decimal.Decimal(_text(raw["$decimal"]))
    if raw.keys() == {"$date"}:
        return dt.date.fromisoformat(_text(raw["$date"]))
    if raw.keys() <= {"$time", "fold"} and "$time" in raw:
        return dt.time.fromisoformat(_text(raw["$time"])).replace(fold=_fold(raw))
    if raw.keys() <= {"$datetime", "zone", "fold"} and "$datetime" in raw:
        value = dt.datetime.fromisoformat(_text(raw["$datetime"]))
        zone = raw.get("zone")
        if zone is None:
            return value.replace(fold=_fold(raw))
        try:
            tz = zoneinfo.ZoneInfo(_text(zone))
        except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
            # zone unknown on this machine (OSError: "Europe" is a directory of tzdata, a name too
            # long for the filesystem, …): the same instant at its fixed offset
            return value
        return value.replace(tzinfo=tz, fold=_fold(raw))  # same wall time, now in the named zone
    raise _Unreadable(f"not a journal value: {raw!r:.80}")


def _text(raw: Any) -> str:
    if type(raw) is not str:
        raise _Unreadable(f"expected a string, got {raw!r:.80}")
    return raw


def _fold(raw: dict[str, Any]) -> int:
    fold = raw.get("fold", 0)
    if fold not in (0, 1) or type(fold) is not int:
        raise _Unreadable(f"bad fold {fold!r:.20}")
    return fold


def _encode_key(key: Any) -> Any:
    if key is None:
        raise TypeError("cannot journal a draft whose key is None")
    return _encode(key, f"the key {key!r}")


def _file_name(database: str, queue: str, encoded_key: Any) -> str:
    # The key goes in with its type tag, so 1 and "1" are different files; hashing makes any
    # database URL, queue name or key (slashes, "..", 10 000 characters) a safe, short name.
    identity = json.dumps([database, queue, encoded_key], ensure_ascii=True, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(identity.encode("ascii")).hexdigest() + _SUFFIX


def _check_str(value: Any, what: str, optional: bool = False) -> None:
    if not (type(value) is str or (optional and value is None)):
        raise TypeError(
            f"cannot journal a draft whose {what} is {value!r} (expected str{' or None' if optional else ''})"
        )


def _to_bytes(draft: Draft) -> tuple[str, bytes]:
    """The draft's file name and contents; raises TypeError before anything touches the disk."""
    if not isinstance(draft, Draft):
        raise TypeError(f"expected a Draft, got {type(draft).__name__}")
    for field in ("database", "queue", "owner", "updated_at"):
        _check_str(getattr(draft, field), field)
    _check_str(draft.token, "token", optional=True)
    key = _encode_key(draft.key)
    document = {
        "format": FORMAT,
        "database": draft.database,
        "queue": draft.queue,
        "key": key,
        "owner": draft.owner,
        "token": draft.token,
        "values": _encode_mapping(draft.values, "values"),
        "base": _encode_mapping(draft.base, "base"),
        "updated_at": draft.updated_at,
    }
    # ensure_ascii: the file is plain ASCII, and a lone surrogate in a str still round-trips.
    data = json.dumps(document, ensure_ascii=True, indent=1).encode("ascii")
    return _file_name(draft.database, draft.queue, key), data


def _from_bytes(data: bytes) -> Draft | None:
    """The draft in a file's contents; None if it is another format; _Unreadable if damaged."""
    try:
        document = json.loads(data)
        if type(document) is not dict:
            raise _Unreadable("not a JSON object")
        if document.get("format") != FORMAT:
            return None
        strings = {name: _text(document[name]) for name in ("database", "queue", "owner", "updated_at")}
        token = document["token"]
        if token is not None:
            _text(token)
        values, base = document["values"], document["base"]
        if type(values) is not dict or type(base) is not dict:
            raise _Unreadable("values/base are not objects")
        key = _decode(document["key"])
        if key is None:
            raise _Unreadable("no key")
        return Draft(
            key=key,
            token=token,
            values={name: _decode(value) for name, value in values.items()},
            base={name: _decode(value) for name, value in base.items()},
            **strings,
        )
    except (_Unreadable, ValueError, TypeError, KeyError, ArithmeticError, RecursionError) as exc:
        # ValueError covers bad JSON, bad UTF-8 and bad ISO dates; ArithmeticError bad Decimals.
        raise _Unreadable(str(exc)) from exc


# -- disk --------------------------------------------------------------------------------------


def _fsync(fd: int) -> None:
    # On macOS fsync() only reaches the drive's cache; F_FULLFSYNC asks the drive to flush it.
    if hasattr(fcntl, "F_FULLFSYNC"):
        try:
            fcntl.fcntl(fd, fcntl.F_FULLFSYNC)
            return
        except OSError:
            pass  # not supported by this filesystem: fall back to plain fsync
    os.fsync(fd)


def _fsync_directory(directory: Path) -> None:
    """Make a rename/unlink/create in `directory` itself durable (POSIX; a no-op on Windows)."""
    if os.name == "nt":
        return  # directories cannot be opened for fsync there; NTFS journals the rename itself
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        _fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF, errno.EROFS):
            raise  # a real I/O error must not be mistaken for "not supported"
    finally:
        os.close(fd)


class Journal:
    """Drafts stored as files under one directory (the user's data directory in the app)."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        # One lock for all writes: the GUI saves from one thread, but a save racing a discard or a
        # second save of the same item from another thread must not reorder their renames.
        self._lock = threading.Lock()
        existed = self.directory.is_dir()
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        if os.name != "nt":
            os.chmod(self.directory, 0o700)  # drafts hold personal data; mkdir's mode obeys umask
        if not existed:
            _fsync_directory(self.directory.parent)  # the directory entry itself must survive a power cut
        self._remove_stale_temp_files()

    # -- public ----------------------------------------------------------------------------------

    def save(self, draft: Draft) -> None:
        """Write (or replace) the item's draft durably: after this returns, a power cut keeps it."""
        name, data = _to_bytes(draft)  # TypeError here leaves the previous draft untouched
        with self._lock:
            # Unique temp name in the same directory (os.replace is only atomic within one
            # filesystem); it does not end in .json, so drafts() never sees a half-written one.
            fd, temp = tempfile.mkstemp(prefix="." + name + ".", suffix=_TEMP_SUFFIX, dir=self.directory)
            try:
                with os.fdopen(fd, "wb") as file:  # mkstemp makes it 0600
                    file.write(data)
                    file.flush()
                    _fsync(file.fileno())  # contents on disk before the name points at them
                os.replace(temp, self.directory / name)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temp)
                raise
            _fsync_directory(self.directory)  # ... and the new name on disk before we return

    def load(self, database: str, queue: str, key: Any) -> Draft | None:
        """The item's draft, or None (also when its file is damaged: that file is set aside)."""
        name = _file_name(database, queue, _encode_key(key))
        with self._lock:
            draft = self._read(self.directory / name)
        # Compared by file name, not by ==: 1 == 1.0 == True, and a NaN key is never == itself.
        if draft is None or _file_name(draft.database, draft.queue, _encode_key(draft.key)) != name:
            return None  # cannot happen short of someone copying files around; never mix items
        return draft

    def discard(self, database: str, queue: str, key: Any) -> None:
        """Forget the item's draft (no error if there is none)."""
        self.discard_entry(entry_name(database, queue, key))

    def discard_entry(self, name: str) -> None:
        """Forget the draft stored under `name` (an entry_name())."""
        with self._lock:
            try:
                os.unlink(self.directory / name)
            except FileNotFoundError:
                return
            # Durable too: a discard lost to a power cut would bring back edits already saved.
            _fsync_directory(self.directory)

    def drafts(self, database: str | None = None, queue: str | None = None, owner: str | None = None) -> list[Draft]:
        """Every stored draft matching the filters, newest first; unreadable files are skipped."""
        found = []
        for path in sorted(self.directory.glob("*" + _SUFFIX)):  # sorted: ties come out stably
            with self._lock:
                try:
                    draft = self._read(path)
                except OSError:
                    continue  # unreadable (permissions, I/O): skip it, leave it where it is
            if draft is None or _file_name(draft.database, draft.queue, _encode_key(draft.key)) != path.name:
                continue  # a file under the wrong name would be listed but never found by load()
            if (
                (database is None or draft.database == database)
                and (queue is None or draft.queue == queue)
                and (owner is None or draft.owner == owner)
            ):
                found.append(draft)
        found.sort(key=updated_at, reverse=True)
        return found

    # -- internals -------------------------------------------------------------------------------

    def _read(self, path: Path) -> Draft | None:
        """The draft in `path`; a damaged file is renamed aside (never deleted) and reads as None."""
        try:
            with open(path, "rb") as file:
                data = file.read()
                identity = os.fstat(file.fileno())
        except FileNotFoundError:
            return None
        try:
            return _from_bytes(data)
        except _Unreadable:
            self._set_aside(path, identity)
            return None

    def _set_aside(self, path: Path, identity: os.stat_result) -> None:
        try:
            current = os.stat(path)
        except FileNotFoundError:
            return
        if (current.st_ino, current.st_dev) != (identity.st_ino, identity.st_dev):
            return  # another process has just saved a good draft over it: keep that one
        # A unique name, so an earlier damaged copy is never overwritten; not *.json, so skipped.
        aside = path.with_name(f"{path.name}.{time.time_ns()}{_CORRUPT_SUFFIX}")
        with contextlib.suppress(FileNotFoundError):
            os.rename(path, aside)

    def _remove_stale_temp_files(self) -> None:
        # Left by a save that died before its rename; the previous draft (if any) is still in
        # place, and these hold personal data, so they should not pile up forever.
        cutoff = time.time() - STALE_TEMP_SECONDS
        for path in self.directory.glob(".*" + _TEMP_SUFFIX):
            with contextlib.suppress(OSError):
                if path.stat().st_mtime < cutoff:
                    path.unlink()


def adopt(shared: Path, journal: Journal, owner: str) -> int:
    """Move the drafts of `owner` from `shared` (the one folder every user's drafts were kept in
    before each user had a folder of their own) into `journal`; returns how many moved. A draft
    already in `journal` is newer and stays; others' drafts stay where they are."""
    moved = 0
    for path in sorted(shared.glob("*" + _SUFFIX)):
        draft = journal._read(path)
        if draft is None or draft.owner != owner:
            continue
        target = journal.directory / path.name
        if target.exists():
            continue
        os.replace(path, target)
        moved += 1
    if moved:
        _fsync_directory(journal.directory)
        _fsync_directory(shared)
    return moved


def entry_name(database: str, queue: str, key: Any) -> str:
    """The name the item's draft is stored under (one per database, queue and key)."""
    return _file_name(database, queue, _encode_key(key))


def check(draft: Draft) -> None:
    """Raise TypeError if `draft` cannot be journalled (without touching the disk)."""
    _to_bytes(draft)


def updated_at(draft: Draft) -> dt.datetime:
    """Sort key: updated_at as an aware time (ISO strings with different offsets do not sort)."""
    try:
        moment = dt.datetime.fromisoformat(draft.updated_at)
    except ValueError:
        return dt.datetime.min.replace(tzinfo=dt.UTC)  # unparseable: oldest
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=dt.UTC)
