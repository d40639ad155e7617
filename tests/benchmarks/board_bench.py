"""Refresh times of the supervisor console's figures on a large table: board, health, operator stats.

Builds the demo `cases` table with `--rows` rows (default 1,000,000; `--waiting` of them waiting,
the rest resolved), `--locks` live locks (default 10,000, `--expired` of them past their expiry)
and an audit trail of every resolved case over `--days` days (a claim and a completion each,
plus saves, releases with reasons, expiries and force releases: about 2.3 audit rows per row),
inserted in time order as a real trail grows. Then it times `Supervision.board()`, `health()`,
`operator_stats()` over the last 24 hours, `throughput()` over the last 24 hours and
`handle_times()` over the same period: a warm-up call, then `--runs` calls each, median and max.
The aim is < 200 ms each.

    python -m tests.benchmarks.board_bench                              # postgresql, sqlite, mariadb
    python -m tests.benchmarks.board_bench --backend sqlite --rows 100000 --locks 2000
    python -m tests.benchmarks.board_bench --backend postgresql --explain
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event

from tests.benchmarks import board_gui, harness
from workbench.db import service
from workbench.db.supervision import Supervision

OPERATORS = 50
REASONS = ("customer unreachable", "needs second level", "wrong queue")
AIM_MS = 200.0
STALL_AIM_MS = 50.0  # the longest the supervisor's window may not react during a refresh
FILL_SLICE = 10_000  # cases per INSERT of their audit rows


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m tests.benchmarks.board_bench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--backend",
        action="append",
        choices=harness.BACKENDS,
        help="repeatable; default: postgresql, sqlite and mariadb",
    )
    parser.add_argument("--url", help="admin URL of an existing server (one server backend only)")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--waiting", type=float, default=0.1, help="fraction of rows waiting (the rest resolved)")
    parser.add_argument("--locks", type=int, default=10_000, help="locks held (taken from the waiting rows)")
    parser.add_argument("--expired", type=int, default=500, help="how many of the locks are past their expiry")
    parser.add_argument("--days", type=int, default=60, help="the resolved rows were completed over this many days")
    parser.add_argument("--runs", type=int, default=7, help="timed calls per figure")
    parser.add_argument(
        "--gui-locks",
        help="lock counts (at most --locks) at which the supervisor window's refresh is timed, "
        "largest first (locks are released in between); default 10000,1000,100 (each at "
        "most --locks); empty: no window",
    )
    parser.add_argument(
        "--quick-server",
        action="store_true",
        help="start the throwaway server with commits not flushed to disk (fsync off), as the "
        "other benchmarks do; by default it runs at its default durability",
    )
    parser.add_argument(
        "--explain", action="store_true", help="print the plans of the statements of board, health and operator_stats"
    )
    args = parser.parse_args(argv)
    args.backend = args.backend or ["postgresql", "sqlite", "mariadb"]
    waiting = round(args.rows * args.waiting)
    if not 0 < args.locks <= waiting or not 0 <= args.expired <= args.locks or args.runs < 1:
        parser.error("--locks must be between 1 and the waiting rows, --expired at most --locks, --runs >= 1")
    if args.gui_locks is None:
        args.gui_locks = ",".join(str(min(n, args.locks)) for n in (10_000, 1_000, 100))
    try:
        args.gui_locks = sorted({int(n) for n in args.gui_locks.split(",") if n.strip()}, reverse=True)
    except ValueError:
        parser.error("--gui-locks takes whole numbers separated by commas, e.g. 10000,1000,100")
    if any(not 0 < n <= args.locks for n in args.gui_locks):
        parser.error("--gui-locks must be between 1 and --locks")
    if args.url and len(args.backend) != 1:
        parser.error("--url needs exactly one --backend")
    return args


# -- building the history ---------------------------------------------------------------------------


class _Sql:
    """The few expressions the fill statements need, per dialect."""

    def __init__(self, dialect: str) -> None:
        self.dialect = "mariadb" if dialect in ("mysql", "mariadb") else dialect

    def ago(self, seconds: str) -> str:
        """The database's UTC time `seconds` (an SQL integer expression) ago, as the audit stores it."""
        if self.dialect == "postgresql":
            return f"(timezone('UTC', now()) - make_interval(secs => ({seconds})))"
        if self.dialect == "mariadb":
            return f"DATE_SUB(UTC_TIMESTAMP(6), INTERVAL ({seconds}) SECOND)"
        return f"(strftime('%Y-%m-%d %H:%M:%f', 'now', printf('%+d seconds', -({seconds}))) || '000')"

    def text(self, expr: str) -> str:
        return (
            f"CAST({expr} AS CHAR)"
            if self.dialect == "mariadb"
            else f"CAST({expr} AS VARCHAR(20))"
            if self.dialect == "postgresql"
            else f"CAST({expr} AS TEXT)"
        )

    def concat(self, *parts: str) -> str:
        return f"CONCAT({', '.join(parts)})" if self.dialect == "mariadb" else "(" + " || ".join(parts) + ")"

    def op(self, expr: str) -> str:
        return self.concat("'op'", self.text(f"({expr}) % {OPERATORS}"))


def fill_history(engine: sa.Engine, *, rows: int, waiting: int, locks: int, expired: int, days: int) -> dict[str, int]:
    """Lock `locks` waiting rows and write the audit trail of the resolved ones; returns row counts."""
    sql = _Sql(engine.dialect.name)
    resolved = rows - waiting
    step = max(1, days * 86400 // max(1, resolved))  # seconds between two completions
    handle = "(60 + (case_id * 37) % 900)"  # 1 to 16 minutes per case
    done_ago = f"(({resolved} - case_id) * {step})"
    claim_ago = f"({done_ago} + {handle})"
    tok = sql.concat("'tok-'", sql.text("case_id"))
    key = sql.text("case_id")
    # Three reasons and none, at different frequencies (3:2:1:1), so that their order is known.
    reason = (
        f"CASE WHEN case_id % 7 < 3 THEN '{REASONS[0]}' WHEN case_id % 7 < 5 THEN '{REASONS[1]}' "
        f"WHEN case_id % 7 = 5 THEN '{REASONS[2]}' ELSE NULL END"
    )
    first_lock, last_lock = resolved + 1, resolved + locks
    live_age = "(1 + case_id % 600)"  # claimed 1 s to 10 min ago, 15 min locks
    lock_age = f"CASE WHEN case_id > {last_lock - expired} THEN 1000 + case_id % 600 ELSE {live_age} END"
    cols = "queue, item_key, event, actor, owner, token, at, reason, outcome"

    def events(
        event: str,
        actor: str,
        owner: str,
        token: str,
        ago: str,
        where: str,
        *,
        reason_sql: str = "NULL",
        outcome: str = "NULL",
    ) -> str:
        return (
            f"SELECT 'cases' AS queue, {key} AS item_key, '{event}' AS event, {actor} AS actor, "
            f"{owner} AS owner, {token} AS token, {sql.ago(ago)} AS at, {reason_sql} AS reason, "
            f"{outcome} AS outcome FROM cases WHERE {where}"
        )

    done = f"case_id <= {resolved}"
    other = sql.op("case_id + 7")
    parts = [
        # A release by another operator an hour before the claim, for every 20th case.
        events("claim", other, other, sql.concat("'rel-'", key), f"{claim_ago} + 3600", f"{done} AND case_id % 20 = 0"),
        events(
            "release",
            other,
            other,
            sql.concat("'rel-'", key),
            f"{claim_ago} + 3000",
            f"{done} AND case_id % 20 = 0",
            reason_sql=reason,
        ),
        # An expiry (noticed by a sweep) two hours before the claim, for every 50th case.
        events("claim", other, other, sql.concat("'exp-'", key), f"{claim_ago} + 9000", f"{done} AND case_id % 50 = 0"),
        events(
            "expire", "'cron'", other, sql.concat("'exp-'", key), f"{claim_ago} + 7200", f"{done} AND case_id % 50 = 0"
        ),
        # A force release three hours before the claim, for every 500th case.
        events(
            "claim", other, other, sql.concat("'frc-'", key), f"{claim_ago} + 12000", f"{done} AND case_id % 500 = 0"
        ),
        events(
            "force_release",
            "'sue'",
            other,
            sql.concat("'frc-'", key),
            f"{claim_ago} + 10800",
            f"{done} AND case_id % 500 = 0",
            reason_sql="'gone home'",
        ),
        # The lock that completed the case: claim, a save for every 10th, the completion.
        events("claim", sql.op("case_id"), sql.op("case_id"), tok, claim_ago, done),
        events("save", sql.op("case_id"), sql.op("case_id"), tok, f"{done_ago} + 30", f"{done} AND case_id % 10 = 0"),
        events("complete", sql.op("case_id"), sql.op("case_id"), tok, done_ago, done, outcome="'resolved'"),
        # The locks held now: a claim each, a save for every 3rd, an extension for every 5th.
        events(
            "claim",
            sql.op("case_id"),
            sql.op("case_id"),
            tok,
            lock_age,
            f"case_id BETWEEN {first_lock} AND {last_lock}",
        ),
        events(
            "save",
            sql.op("case_id"),
            sql.op("case_id"),
            tok,
            f"({lock_age}) - case_id % 60",
            f"case_id BETWEEN {first_lock} AND {last_lock} AND case_id % 3 = 0",
        ),
        events(
            "extend",
            sql.op("case_id"),
            sql.op("case_id"),
            tok,
            f"({lock_age}) - case_id % 30",
            f"case_id BETWEEN {first_lock} AND {last_lock} AND case_id % 5 = 0",
        ),
    ]
    lock_time = sql.ago(lock_age)
    expires = sql.ago(f"({lock_age}) - 900")
    if sql.dialect == "postgresql":
        lock_time, expires = f"CAST({lock_time} AS TIMESTAMP)", f"CAST({expires} AS TIMESTAMP)"
    with engine.begin() as conn:
        conn = conn.execution_options(no_parameters=True)
        conn.exec_driver_sql(
            f"UPDATE cases SET status = 'open', wb_locked_by = {sql.op('case_id')}, "
            f"wb_locked_at = {lock_time}, wb_lock_expires = {expires}, wb_lock_token = {tok} "
            f"WHERE case_id BETWEEN {first_lock} AND {last_lock}"
        )
        # Roughly in time order, as a real trail is written (ids rise with the time): times rise
        # with the case number, so the cases go in slices, in order. One INSERT per kind of event
        # and slice: no statement sorts or materialises millions of rows in a temporary table.
        for low in range(0, rows, FILL_SLICE):
            for part in parts:
                sliced = part.replace(
                    "FROM cases WHERE ", f"FROM cases WHERE case_id > {low} AND case_id <= {low + FILL_SLICE} AND "
                )
                conn.exec_driver_sql(f"INSERT INTO workbench_audit ({cols}) {sliced}")
        audit_rows = conn.exec_driver_sql("SELECT count(*) FROM workbench_audit").scalar() or 0
    return {"audit rows": int(audit_rows), "locks": locks, "expired locks": expired}


def derived_table_board(q: Any) -> Any:
    """`board()` with the statement it had before PostgreSQL got the LATERAL join and MariaDB the
    scalar subquery: the locked rows joined to a derived table of their audit aggregates (SQLite's
    form, Backend.board_activity), set on this one queue's backend for the call."""
    backend = q.q.backend
    backend.board_activity = "derived"
    try:
        return Supervision(q).board()
    finally:
        del backend.board_activity  # the class's choice again


def keep_locks(engine: sa.Engine, args: argparse.Namespace, locks: int) -> None:
    """Release every lock but the first `locks` of those `fill_history` took (the oldest are kept)."""
    first_lock = args.rows - round(args.rows * args.waiting) + 1
    with engine.begin() as conn:
        conn.execute(
            sa.text(
                "UPDATE cases SET status = 'new', wb_locked_by = NULL, wb_locked_at = NULL, "
                "wb_lock_expires = NULL, wb_lock_token = NULL WHERE case_id >= :low AND case_id < :high"
            ),
            {"low": first_lock + locks, "high": first_lock + args.locks},
        )


def build(target: harness.Target, args: argparse.Namespace) -> tuple[str, dict[str, float], dict[str, int]]:
    url, timings = harness.build_workbench_db(target, "wbboard", args.rows, fraction=args.waiting, layout="newest")
    engine = sa.create_engine(target.url("wbboard", with_password=True, native=True))
    try:
        started = time.perf_counter()
        counts = fill_history(
            engine,
            rows=args.rows,
            waiting=round(args.rows * args.waiting),
            locks=args.locks,
            expired=args.expired,
            days=args.days,
        )
        timings["history"] = time.perf_counter() - started
        started = time.perf_counter()
        harness.analyze(engine, "cases", "workbench_audit")
        timings["analyze"] = time.perf_counter() - started
    finally:
        engine.dispose()
    return url, timings, counts


# -- measuring --------------------------------------------------------------------------------------


def timed(fn: Callable[[], Any], runs: int) -> tuple[list[float], Any]:
    result = fn()  # warm-up: connections, reflection, compiled statements
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - started) * 1000)
    return times, result


def explain(wb: service.Workbench, calls: list[tuple[str, Callable[[], Any]]]) -> list[str]:
    """The plans of the statements each call runs (captured as sent to the driver, then explained)."""
    captured: list[tuple[str, str, Any]] = []
    dialect = wb.engine.dialect.name
    label = ""

    def grab(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, executemany: bool) -> None:
        # Plans of the queries; not of BEGIN (SQLite) nor of the clock reading.
        if statement.lstrip().upper().startswith("SELECT") and "wb_now" not in statement:
            captured.append((label, statement, parameters))

    event.listen(wb.engine, "before_cursor_execute", grab)
    try:
        for _label, fn in calls:
            fn()
    finally:
        event.remove(wb.engine, "before_cursor_execute", grab)
    prefix = {"postgresql": "EXPLAIN (ANALYZE, COSTS OFF) ", "sqlite": "EXPLAIN QUERY PLAN "}.get(dialect, "EXPLAIN ")
    lines = []
    with wb.engine.connect() as conn:
        for name, statement, parameters in captured:
            lines.append(f"-- {name}: {' '.join(statement.split())[:150]}…")
            for row in conn.exec_driver_sql(prefix + statement, parameters):
                if dialect == "postgresql":
                    text = row[0]
                elif dialect == "sqlite":
                    text = str(row[-1])
                else:
                    text = ", ".join(f"{k}={v}" for k, v in row._mapping.items() if v is not None)
                lines.append("   " + text[:160])
    return lines


def run_backend(backend: str, args: argparse.Namespace) -> dict[str, list[float]]:
    target = harness.Target.open(backend, args.url, durable=not args.quick_server)
    try:
        print(f"\n== {backend}: {target.description}", flush=True)
        url, timings, counts = build(target, args)
        print(
            f"built {args.rows:,} rows ({round(args.rows * args.waiting):,} waiting), "
            + ", ".join(f"{v:,} {k}" for k, v in counts.items())
            + "; "
            + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items()),
            flush=True,
        )
        figures: dict[str, list[float]] = {}
        with service.Workbench.open(harness.bench_config(url), password=target.password) as wb:
            q = wb.queue(harness.QUEUE)
            sup = Supervision(q)
            day_ago = q.db_clock().now - dt.timedelta(days=1)
            calls: list[tuple[str, Callable[[], Any], Callable[[Any], str]]] = [
                (
                    "board",
                    sup.board,
                    lambda r: (
                        f"{len(r):,} rows, {sum(x.expired for x in r):,} expired, "
                        f"{sum(x.extensions for x in r):,} extensions"
                    ),
                ),
                (
                    "health",
                    sup.health,
                    lambda h: (
                        f"waiting {h.waiting:,}, locked {h.locked:,}, expired "
                        f"{h.expired_locks:,}, completed today {h.completed_today:,}, "
                        f"reasons {len(h.release_reasons_today)}"
                    ),
                ),
                (
                    "operator_stats 24 h",
                    lambda: sup.operator_stats(day_ago),
                    lambda r: f"{len(r)} operators, {sum(s.completed for s in r):,} completed",
                ),
                ("throughput 24 h", lambda: sup.throughput(day_ago), lambda r: f"{len(r)} hours"),
                ("handle_times 24 h", lambda: sup.handle_times(day_ago), lambda r: f"{len(r):,} values"),
            ]
            if backend != "sqlite":  # the statement before, in the same run
                calls.insert(1, ("board, old statement", lambda: derived_table_board(q), calls[0][2]))
            target.checkpoint()  # the load's dirty pages written now, not during the timed calls
            for name, fn, describe in calls:
                times, result = timed(fn, args.runs)
                figures[name] = times
                verdict = "ok" if statistics.median(times) < AIM_MS else "ABOVE AIM"
                print(
                    f"  {name:22} median {statistics.median(times):7.1f} ms  max {max(times):7.1f} ms  "
                    f"[{verdict}]  ({describe(result)})",
                    flush=True,
                )
            if args.explain:
                explained = [(name, fn) for name, fn, _ in calls if name.startswith(("board", "health", "operator"))]
                for line in explain(wb, explained):
                    print("    " + line)
            for locks in args.gui_locks:
                keep_locks(wb.engine, args, locks)
                window = board_gui.measure(wb, args.runs)
                figures[f"window {locks:,}: painted"] = [r.painted for r in window.runs]
                figures[f"window {locks:,}: stall"] = [r.stall for r in window.runs]
                for line in board_gui.report(locks, window, AIM_MS, STALL_AIM_MS):
                    print(line, flush=True)
        return figures
    finally:
        target.close()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    print(
        f"board_bench: {args.rows:,} rows, {args.locks:,} locks, {args.days} days of history, "
        f"{args.runs} timed runs per figure (aim: median < {AIM_MS:.0f} ms)"
    )
    results = {}
    for backend in args.backend:
        try:
            results[backend] = run_backend(backend, args)
        except SystemExit as exc:  # a server that cannot start: report it, go on with the others
            print(f"{backend}: skipped: {exc}")
    if results:
        names = list(dict.fromkeys(name for r in results.values() for name in r))  # every backend's, in order
        print("\nmedian ms " + "".join(f"{b:>14}" for b in results))
        for name in names:
            print(
                f"{name:22}"
                + "".join(
                    f"{statistics.median(r[name]):14.1f}" if name in r else f"{'-':>14}" for r in results.values()
                )
            )
    print(f"machine: {harness.machine_load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
