"""Claim + complete latency while many people hold locks: 10, 1,000, 10,000 and 100,000 live locks on a
large demo table, one process measuring (is the claim's cost flat in the number of live locks?).

The levels are measured interleaved: `--rounds` rounds, each visiting every level (ascending, then
descending in the next round), the live locks taken or given back to reach each level, so that a
drift of the machine over the run (other work, a checkpoint, a growing audit table) spreads over
every level instead of growing with the level."""

from __future__ import annotations

import argparse
import sys

import sqlalchemy as sa

from tests.benchmarks import harness
from workbench.db import clock

ROWS = ["pairs/s", "claim p50 ms", "claim p99 ms", "complete p50 ms", "complete p99 ms", "pairs", "errors"]
LEVELS = (10, 1_000, 10_000, 100_000)
HOLDERS = 200  # the live locks belong to this many people
WARMUP = 5  # unmeasured pairs after each change of level (fresh plans, warm caches)
HELD_TOKEN = "0" * 32  # the token of the live locks this benchmark sets (the measurer's are real ones)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.live_locks_bench", description=__doc__)
    parser.add_argument("--backend", choices=harness.BACKENDS, default="postgresql")
    parser.add_argument("--url", help="admin URL of an existing server; default: start a throwaway server")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--pairs", type=int, default=1_000, help="measured pairs per level (over all rounds)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds over the levels, alternating their order")
    parser.add_argument("--levels", type=int, nargs="+", default=list(LEVELS))
    parser.add_argument("--durable", action="store_true", help="the throwaway server at default durability")
    args = parser.parse_args(argv)
    args.rounds = max(1, args.rounds)
    warm = 20 + WARMUP * args.rounds * len(args.levels)  # the first level's warm-up is longer
    if max(args.levels) + args.pairs * len(args.levels) + warm + 100 > args.rows // 2:
        parser.error("--rows is too small: half of it waits, and locks and pairs take from that half")
    return args


def set_live_locks(url: str, password: str | None, wanted: int) -> int:
    """Lock waiting rows (from the head of the queue) under HOLDERS people, or give back the newest of
    those locks, until `wanted` live locks exist, as claims would have (expiry an hour ahead on the
    database clock); returns how many exist."""
    engine = sa.create_engine(_with_password(url, password))
    try:
        with engine.begin() as conn:
            table = sa.Table("cases", sa.MetaData(), autoload_with=conn)
            c = table.c
            held = conn.execute(sa.select(sa.func.count()).where(c.wb_locked_by.is_not(None))).scalar() or 0
            missing = wanted - held
            if missing < 0:  # give back the locks taken last (the tail of the held block)
                held_keys = (
                    sa.select(c.case_id)
                    .where(c.wb_lock_token == HELD_TOKEN)
                    .order_by(c.priority, c.opened_at.desc(), c.case_id.desc())
                    .limit(-missing)
                )
                keys = list(conn.execute(held_keys).scalars())
                for start in range(0, len(keys), 5_000):
                    conn.execute(
                        sa.update(table)
                        .where(c.case_id.in_(keys[start : start + 5_000]))
                        .values(wb_locked_by=None, wb_locked_at=None, wb_lock_expires=None, wb_lock_token=None)
                    )
            if missing > 0:
                head = (
                    sa.select(c.case_id)
                    .where(c.status.in_(["new", "open"]), c.wb_locked_by.is_(None))
                    .order_by(c.priority.desc(), c.opened_at, c.case_id)
                    .limit(missing)
                )
                keys = list(conn.execute(head).scalars())
                now = clock.db_now()
                for start in range(0, len(keys), 5_000):
                    part = keys[start : start + 5_000]
                    conn.execute(
                        sa.update(table)
                        .where(c.case_id.in_(part))
                        .values(
                            wb_locked_by=sa.func.concat("holder", c.case_id % HOLDERS)
                            if engine.dialect.name != "sqlite"
                            else "holder" + sa.cast(c.case_id % HOLDERS, sa.String()),
                            wb_locked_at=now,
                            wb_lock_expires=clock.add_seconds(now, sa.literal_column("3600")),
                            wb_lock_token=sa.literal(HELD_TOKEN),
                        )
                    )
            return int(conn.execute(sa.select(sa.func.count()).where(c.wb_locked_by.is_not(None))).scalar() or 0)
    finally:
        engine.dispose()


def _with_password(url: str, password: str | None) -> sa.URL:
    parsed = sa.make_url(url)
    return parsed.set(password=password) if password else parsed


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    target = harness.Target.open(args.backend, args.url, durable=args.durable)
    ops: harness.WorkbenchOps | None = None
    try:
        print(
            f"live_locks_bench: {args.backend}, {args.rows:,} rows (half waiting), 1 process, {args.pairs:,} "
            f"pairs per level in {args.rounds} interleaved rounds; {target.description}; {harness.machine_load()}",
            flush=True,
        )
        url, timings = harness.build_workbench_db(target, "wblive", args.rows, fraction=0.5, layout="newest")
        print("setup: " + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items()), flush=True)
        ops = harness.WorkbenchOps(url, target.password, "measurer")
        levels = sorted(set(args.levels))
        merged = {level: harness.LoopResult() for level in levels}
        live_at = dict.fromkeys(levels, 0)
        by_round: dict[int, list[str]] = {level: [] for level in levels}
        per_round = max(1, args.pairs // args.rounds)
        for number in range(args.rounds):
            for level in levels if number % 2 == 0 else levels[::-1]:
                live_at[level] = set_live_locks(url, target.password, level)
                harness.analyze(ops.wb.engine, "cases")
                harness.warm_up(ops, WARMUP if any(by_round.values()) else 20)
                result = harness.run_loop(ops, pairs=per_round)
                merged[level].merge(result, concurrent=False)
                by_round[level].append(harness.fmt(harness.figures(result)["claim p50 ms"]))
                print(
                    f"  round {number + 1}, {live_at[level]:,} live locks: claim p50 {by_round[level][-1]} ms",
                    flush=True,
                )
        columns = {f"{live_at[level]:,} live locks": harness.figures(merged[level]) for level in levels}
        print()
        for level in levels:
            print(f"claim p50 ms by round, {live_at[level]:,} live locks: {', '.join(by_round[level])}")
        names = list(columns)
        print()
        print(harness.table(columns, [("most/fewest", names[-1], names[0])], ROWS))
    finally:
        if ops is not None:
            ops.close()
        target.close()
    print(f"machine: {harness.machine_load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
