"""Single-process claim + complete latency on a small and a large demo cases table, mostly completed rows."""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event

from tests.benchmarks import harness
from workbench.db import claims, service

ROWS = ["pairs/s", "claim p50 ms", "claim p99 ms", "complete p50 ms", "complete p99 ms", "pairs", "errors"]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.growth_bench", description=__doc__)
    parser.add_argument("--backend", choices=harness.BACKENDS, default="postgresql")
    parser.add_argument("--url", help="admin URL of an existing server; default: start a throwaway server")
    parser.add_argument("--small", type=int, default=10_000, help="rows in the small table")
    parser.add_argument("--large", type=int, default=1_000_000, help="rows in the large table")
    parser.add_argument("--waiting", type=float, default=0.1, help="fraction of rows waiting (the rest resolved)")
    parser.add_argument(
        "--layout",
        choices=("newest", "spread"),
        default="newest",
        help="which rows wait: the newest (as in a real table: old cases are closed) or every n-th row",
    )
    parser.add_argument(
        "--pairs", type=int, default=2_000, help="measured pairs per size (capped by the small table's waiting rows)"
    )
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument(
        "--max-seconds",
        type=float,
        default=120.0,
        help="stop measuring a size after this long even if fewer pairs are done",
    )
    parser.add_argument(
        "--rounds", type=int, default=5, help="the pairs are measured in this many alternating rounds per size"
    )
    args = parser.parse_args(argv)
    if not 0 < args.waiting <= 1 or min(args.small, args.large, args.pairs, args.rounds) < 1:
        parser.error("sizes, --pairs and --rounds must be positive, --waiting in (0, 1]")
    return args


def explain(wb: service.Workbench) -> list[str]:
    """The plan of the claim's candidate pick, executed once and rolled back (so with real row counts)."""
    wq = wb.queue(harness.QUEUE)
    request = claims.ClaimRequest(user="explain")
    dialect = wb.engine.dialect
    with wb.engine.connect() as conn:
        trans = conn.begin()
        try:
            if dialect.name == "postgresql":
                # The very statement claim_next runs (cached per shape), candidate CTE included.
                stmt = wb.method.statement(wq.q, wq.trail, request)  # type: ignore[attr-defined]

                # Prefix the SQL text on its way to the driver, so the statement is bound and
                # rendered exactly as in a claim.
                def prefix(
                    conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, executemany: bool
                ) -> tuple[str, Any]:
                    return "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " + statement, parameters

                event.listen(conn, "before_cursor_execute", prefix, retval=True)
                try:
                    result = conn.execute(stmt, {"wb_user": "explain", "wb_count": 1, "wb_limit": 0})
                    rows = result.cursor.fetchall()  # the plan's rows, not the statement's columns
                finally:
                    event.remove(conn, "before_cursor_execute", prefix)
                return [r[0] for r in rows]
            # SQLite and MariaDB claim in steps; the first step is this candidate SELECT.
            q = wq.q
            lines = []
            for where in claims.ClaimMethod.branches(q, q.now(), request, wq.trail):
                select = (
                    sa.select(*claims.ClaimMethod.candidate_columns(q)).where(where).order_by(*q.order_by()).limit(1)
                )
                if dialect.name != "sqlite":
                    select = select.with_for_update(skip_locked=True)
                sql = str(select.compile(dialect=dialect, compile_kwargs={"literal_binds": True}))
                lines.append(sql.replace("\n", " "))
                if dialect.name == "sqlite":
                    lines += ["  " + str(r[-1]) for r in conn.exec_driver_sql("EXPLAIN QUERY PLAN " + sql).all()]
                else:
                    # MariaDB's ANALYZE runs the query and adds the rows actually read (r_rows).
                    result = conn.exec_driver_sql("ANALYZE " + sql)
                    for row in result.mappings().all():
                        lines.append("  " + ", ".join(f"{k}={v}" for k, v in row.items() if v is not None))
            return lines
        finally:
            trans.rollback()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # The same number of pairs on both sizes, so that the percentiles compare like with like.
    pairs = min(args.pairs, round(min(args.small, args.large) * args.waiting) - args.warmup)
    if pairs < 1:
        raise SystemExit("the small table has too few waiting rows; raise --small or --waiting")
    target = harness.Target.open(args.backend, args.url)
    opened: list[harness.WorkbenchOps] = []
    try:
        capped = (
            f" (capped from {args.pairs:,}: the small table has only that many waiting)" if pairs < args.pairs else ""
        )
        print(
            f"growth_bench: {args.backend}, 1 process, {pairs:,} pairs per size{capped}, "
            f"{args.waiting:.0%} of rows waiting ({args.layout}); {target.description}",
            flush=True,
        )
        ops: dict[str, harness.WorkbenchOps] = {}
        for label, rows in (("small", args.small), ("large", args.large)):
            url, timings = harness.build_workbench_db(
                target, f"wbgrowth_{label}", rows, fraction=args.waiting, layout=args.layout
            )
            steps = ", ".join(f"{k} {v:.1f} s" for k, v in timings.items())
            print(f"setup {rows:,} rows ({round(rows * args.waiting):,} waiting): {steps}", flush=True)
            name = f"{rows:,} rows" if args.small != args.large else f"{label} {rows:,} rows"
            ops[name] = harness.WorkbenchOps(url, target.password, "g1")
            opened.append(ops[name])
        for one in ops.values():
            harness.warm_up(one, args.warmup)
        target.checkpoint()
        results = {name: harness.LoopResult() for name in ops}
        # Interleaved rounds (small, large, large, small, …): a burst of load from elsewhere on the
        # machine then hits both sizes instead of whichever happened to run at the time.
        per_round = math.ceil(pairs / args.rounds)
        for i in range(args.rounds):
            for name in list(ops) if i % 2 == 0 else list(reversed(ops)):
                done = results[name]
                budget = args.max_seconds - done.duration
                if done.pairs >= pairs or budget <= 0 or done.stopped:
                    continue
                part = harness.run_loop(ops[name], pairs=min(per_round, pairs - done.pairs), seconds=budget)
                done.merge(part, concurrent=False)
                if part.stopped:
                    done.stopped = part.stopped
                elif done.duration >= args.max_seconds and done.pairs < pairs:
                    done.stopped = f"--max-seconds {args.max_seconds:g} reached after {done.pairs} pairs"
        small, large = list(ops)
        plan = explain(ops[large].wb)
        columns = {name: harness.figures(result) for name, result in results.items()}
        print()
        print(harness.table(columns, [("large/small", large, small)], ROWS))
        lines = [line for name, result in results.items() for line in harness.error_report(name, result)]
        print("errors by type:" if lines else "errors by type: none")
        for line in lines:
            print(line)
        print()
        print(f"claim plan on the {large} table, after the measured pairs (executed once, rolled back):")
        for line in plan:
            print("  " + line)
    finally:
        for one in opened:
            one.close()
        target.close()
    print(f"machine: {harness.machine_load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
