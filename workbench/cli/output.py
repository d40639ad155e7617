"""Print command results for people (short text) or for scripts (--json)."""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import datetime as dt
import decimal
import json
import sys
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, TextIO

from workbench.core import durations, models

# Control characters (C0 but tab and newline, DEL, C1) as visible escapes: a value another program
# stored must not move the cursor, recolour or retitle the terminal of whoever runs `show`.
_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0))}


def escape(text: str) -> str:
    """`text` with terminal control characters written as \\xNN."""
    return text.translate(_CONTROLS)


class _Escaping:
    """A text stream that writes control characters as visible escapes."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(escape(text))

    def __getattr__(self, name: str) -> Any:  # flush, fileno, encoding …
        return getattr(self._stream, name)


@contextlib.contextmanager
def escaped(*, json_stdout: bool) -> Iterator[None]:
    """Escape control characters in what a command prints for people (stderr always; stdout unless it
    carries JSON, whose strings json already escapes)."""
    saved = sys.stdout, sys.stderr
    if not json_stdout:
        sys.stdout = _Escaping(sys.stdout)
    sys.stderr = _Escaping(sys.stderr)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


def _json_default(value: Any) -> Any:
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)  # exact; a float could change an amount
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return value.to_dict() if hasattr(value, "to_dict") else dataclasses.asdict(value)
    if hasattr(value, "value"):  # enums
        return value.value
    return str(value)


def dump_json(data: Any, out: TextIO | None = None) -> None:
    out = out or sys.stdout  # looked up per call: redirect_stdout and capsys work
    json.dump(data, out, default=_json_default, indent=2, ensure_ascii=False)
    out.write("\n")


def when(value: dt.datetime | None) -> str:
    if value is None:
        return "-"
    text = value.strftime("%Y-%m-%d %H:%M:%S")
    return f"{text} UTC" if value.utcoffset() == dt.timedelta(0) else text


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dt.datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    text = str(value).replace("\n", " ")
    return text if len(text) <= 70 else text[:67] + "..."


def table(headers: list[str], rows: Iterable[list[Any]], out: TextIO | None = None) -> None:
    out = out or sys.stdout  # looked up per call: redirect_stdout and capsys work
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(headers)]
    out.write("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=False)).rstrip() + "\n")
    for row in cells:
        out.write("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=False)).rstrip() + "\n")


def item(values: Mapping[str, Any], out: TextIO | None = None) -> None:
    out = out or sys.stdout  # looked up per call: redirect_stdout and capsys work
    width = max((len(k) for k in values), default=0)
    for name, value in values.items():
        text = "" if value is None else str(value)
        # Only line breaks break lines: splitlines() would also obey \r and other controls, which
        # the stream then shows as escapes (see escaped()).
        lines = text.replace("\r\n", "\n").split("\n")
        out.write(f"  {name.ljust(width)}  {lines[0]}\n")
        for line in lines[1:]:
            out.write(f"  {' ' * width}  {line}\n")


def claim(result: models.Claim, out: TextIO | None = None, hide: set[str] | None = None) -> None:
    out = out or sys.stdout  # looked up per call: redirect_stdout and capsys work
    lock = result.lock
    verb = "Resumed" if result.resumed else "Claimed"
    out.write(
        f"{verb} {lock.queue} {lock.key} until {when(lock.expires_at)} "
        f"({durations.format_duration(lock.remaining.total_seconds())} left)\n"
    )
    out.write(f"token: {lock.token}\n")
    item({k: v for k, v in result.item.items() if k not in (hide or set())}, out)


def locks(rows: list[models.Lock], *, show_token: bool, out: TextIO | None = None) -> None:
    out = out or sys.stdout  # looked up per call: redirect_stdout and capsys work
    if not rows:
        out.write("no locks\n")
        return
    headers = ["KEY", "OWNER", "LOCKED AT", "AGE", "LEFT"] + (["TOKEN"] if show_token else [])
    body = []
    for lock in rows:
        left = (
            "expired"
            if lock.expired
            else "over a year"
            if lock.remaining.days > 366
            else durations.format_duration(lock.remaining.total_seconds())
        )
        row = [lock.key, lock.owner, lock.locked_at, durations.format_duration(lock.age.total_seconds()), left]
        body.append(row + ([lock.token] if show_token else []))
    table(headers, body, out)


def notes(found: list[models.Note], out: TextIO | None = None) -> None:
    out = out or sys.stdout
    if not found:
        out.write("no notes\n")
        return
    for n in found:
        written_with = f"  (with {n.kind})" if n.kind else ""
        out.write(f"{when(n.at)}  {n.author}{written_with}\n")
        out.write("".join(f"    {line}\n" for line in n.text.splitlines()))


def _detail_part(name: str, value: Any) -> str:
    """One entry of an event's detail; changed columns as "amount 6452.82 -> 99.50" (hidden ones by name)."""
    if name == "changes" and isinstance(value, dict):
        return ", ".join(
            f"{column} {old!s} -> {new!s}" if [old, new] != [None, None] else f"{column} changed"
            for column, (old, new) in value.items()
        )
    return f"{name}={value}"


def history(events: list[models.Event], out: TextIO | None = None) -> None:
    out = out or sys.stdout  # looked up per call: redirect_stdout and capsys work
    if not events:
        out.write("no history\n")
        return
    rows = []
    for e in events:
        extra = "; ".join(
            p
            for p in (
                f"outcome {e.outcome}" if e.outcome else "",
                f"reason: {e.reason}" if e.reason else "",
                ", ".join(
                    _detail_part(k, v)
                    for k, v in (e.detail or {}).items()
                    if k != "columns" or "changes" not in (e.detail or {})
                ),
            )
            if p
        )
        rows.append([e.at, e.kind.value, e.actor, e.owner or "", extra])
    table(["AT (UTC)", "EVENT", "BY", "HOLDER", "DETAIL"], rows, out)
