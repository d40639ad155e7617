"""`workbench board | health | stats QUEUE`: the supervisor console's figures on the command line."""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import sys
from collections.abc import Callable
from typing import Any

from workbench.cli import argtypes, output
from workbench.core import durations, errors, models


def add_arguments(name: str, p: argparse.ArgumentParser) -> None:
    """The options of `board`, `health` and `stats` (the parsers come from main's `add`)."""
    if name in ("board", "stats"):
        p.add_argument("--csv", action="store_true", help="write CSV (a header row, then one row each) instead")
    if name == "board":
        p.add_argument(
            "--limit",
            type=argtypes.limit,
            default=20000,
            metavar="N",
            help=f"at most N locks (oldest first; up to {argtypes.MAX_LIMIT})",
        )
    if name == "stats":
        p.add_argument(
            "--since",
            metavar="WHEN",
            type=argtypes.since,
            help="start of the period: an ISO date or time "
            "(2026-11-21, 2026-11-21T08:00) or a duration back from now (8h, 1d); default: "
            "midnight today on the database clock",
        )
        p.add_argument(
            "--until",
            metavar="WHEN",
            type=argtypes.since,
            help="end of the period, written the same way (default: now)",
        )


def _formats(args: argparse.Namespace, as_json: bool) -> bool:
    """Whether to write CSV; --csv and --json exclude each other."""
    as_csv = bool(getattr(args, "csv", False))
    if as_csv and as_json:
        raise errors.UsageError("--csv and --json cannot be used together; pick one")
    return as_csv


def _csv(headers: list[str], rows: list[list[Any]]) -> None:
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(headers)
    for row in rows:
        writer.writerow(
            ["" if v is None else v.isoformat() if isinstance(v, (dt.date, dt.datetime)) else v for v in row]
        )


# -- board ------------------------------------------------------------------------------------------


def cmd_board(args: argparse.Namespace, as_json: bool, queue: Callable[[], tuple[Any, Any]]) -> int:
    as_csv = _formats(args, as_json)
    wb, sup = queue()
    with wb:
        page = sup.board([args.queue], args.limit)
        layout = sup.layout(args.queue)
    rows, total = page.rows, page.total
    if total > len(rows):  # on stderr: the listing itself stays what scripts parse
        sys.stderr.write(f"note: the oldest {len(rows)} of {total} locks; --limit N lists more\n")
    names = layout.list_columns
    due = layout.due_column is not None  # the queue names a due column: when each held item is due
    if as_json:
        output.dump_json([r.to_dict() for r in rows])
    elif as_csv:
        _csv(
            [
                "key",
                "owner",
                "locked_at",
                "expires_at",
                "last_activity",
                "age_seconds",
                "remaining_seconds",
                "idle_seconds",
                "extensions",
                "expired",
                *(["due"] if due else []),
                *names,
            ],
            [
                [
                    r.key,
                    r.owner,
                    *(models.shown(t) for t in (r.locked_at, r.expires_at, r.last_activity)),
                    *(models.seconds(d) for d in (r.age, r.remaining, r.idle)),
                    r.extensions,
                    r.expired,
                    *([r.due_shown] if due else []),
                    *(r.summary.get(n) for n in names),
                ]
                for r in rows
            ],
        )
    elif not rows:
        print("no locks")
    else:
        fmt = durations.format_duration
        output.table(
            ["KEY", "OWNER", "AGE", "LEFT", "IDLE", "EXT", *(["DUE"] if due else []), *(n.upper() for n in names)],
            [
                [
                    r.key,
                    f"{r.owner} (another program)" if r.foreign else r.owner,
                    fmt(r.age.total_seconds()),
                    "expired" if r.expired else fmt(r.remaining.total_seconds()),
                    fmt(r.idle.total_seconds()),
                    r.extensions,
                    *([_due(r)] if due else []),
                    *(r.summary.get(n) for n in names),
                ]
                for r in rows
            ],
        )
    return 0


def _due(row: models.BoardRow) -> str:
    """ "in 3h05m", "overdue 2d03h" or "-": the held item's due time from the board's clock reading."""
    seconds = durations.seconds_between(row.db_now, row.due)
    if seconds is None:
        return "-"
    if seconds < 0:
        return f"overdue {durations.format_duration(-seconds)}"
    return f"in {durations.format_duration(seconds)}"


# -- health -----------------------------------------------------------------------------------------


def cmd_health(args: argparse.Namespace, as_json: bool, queue: Callable[[], tuple[Any, Any]]) -> int:
    wb, sup = queue()
    with wb:
        (h,) = sup.health([args.queue])
    if as_json:
        output.dump_json(h.to_dict())
        return 0
    oldest = (
        ""
        if h.oldest_waiting_age_seconds is None
        else f"   (the oldest has waited {durations.format_duration(h.oldest_waiting_age_seconds)})"
    )
    print(f"{h.queue} at {output.when(h.db_now)}")
    print(f"  waiting        {h.waiting:>8}{oldest}")
    print(f"  locked         {h.locked:>8}")
    print(f"  expired locks  {h.expired_locks:>8}")
    if h.overdue is not None:
        print(f"  overdue        {h.overdue:>8}   (waiting or held, past their due time)")
    print(
        f"today: {h.completed_today} completed, {h.releases_today} released, {h.expiries_today} expired, "
        f"{h.force_releases_today} force-released"
    )
    if h.release_reasons_today:
        print("release reasons today:")
        for reason, count in h.release_reasons_today:
            print(f"  {count:>6}  {reason}")
    return 0


# -- stats ------------------------------------------------------------------------------------------


def moment(value: dt.datetime | dt.timedelta, now: dt.datetime) -> dt.datetime:
    """A point in time from the command line (argtypes.since): a duration back from `now`, or the
    date or time given (without a zone: on the queue's clock, as the engine reads it)."""
    return now - value if isinstance(value, dt.timedelta) else value


def cmd_stats(args: argparse.Namespace, as_json: bool, queue: Callable[[], tuple[Any, Any]]) -> int:
    as_csv = _formats(args, as_json)
    wb, sup = queue()
    with wb:
        reading = sup.db_clock(args.queue)
        since = moment(args.since, reading.now) if args.since else reading.today_start
        until = moment(args.until, reading.now) if args.until else None
        if until is not None and reading.to_utc(until) <= reading.to_utc(since):
            raise errors.UsageError(f"--until ({output.when(until)}) must be after --since ({output.when(since)})")
        operators, hours = sup.period(args.queue, since, until, hourly=as_json)
    if as_json:
        output.dump_json(
            {
                "queue": args.queue,
                "since": since,
                "until": until,
                "operators": [s.to_dict() for s in operators],
                "hours": [h.to_dict() for h in hours],
            }
        )
        return 0
    reviewed = any(s.accepted is not None for s in operators)  # the queue's work is reviewed (four eyes)
    headers = [
        "operator",
        "completed",
        "median_handle_seconds",
        "p90_handle_seconds",
        "releases",
        "expiries",
        "force_released",
        *(["review_accepted", "review_sent_back"] if reviewed else []),
    ]
    if as_csv:
        _csv(
            headers,
            [
                [
                    s.operator,
                    s.completed,
                    s.median_handle_seconds,
                    s.p90_handle_seconds,
                    s.releases,
                    s.expiries,
                    s.force_released,
                    *([s.accepted, s.sent_back] if reviewed else []),
                ]
                for s in operators
            ],
        )
        return 0
    end = output.when(until) if until is not None else "now"
    total = sum(s.completed for s in operators)
    print(f"{args.queue}: {output.when(since)} to {end}: {total} completed by {len(operators)} operator(s)")
    if operators:
        output.table(
            [
                "OPERATOR",
                "DONE",
                "MEDIAN",
                "P90",
                "RELEASED",
                "EXPIRED",
                "FORCE-RELEASED",
                *(["ACCEPTED", "SENT BACK"] if reviewed else []),
            ],
            [
                [
                    s.operator,
                    s.completed,
                    _seconds(s.median_handle_seconds),
                    _seconds(s.p90_handle_seconds),
                    s.releases,
                    s.expiries,
                    s.force_released,
                    *([s.accepted, s.sent_back] if reviewed else []),
                ]
                for s in operators
            ],
        )
    return 0


def _seconds(value: float | None) -> str:
    return "-" if value is None else durations.format_duration(value)
