"""WAL bytes per claim+complete pair on PostgreSQL, and where they go, beside the hand-written loop.

Each implementation runs `--pairs` pairs on one connection in a fresh database, after a CHECKPOINT
(as claim_bench runs each round). The script reads the WAL position before and after
(pg_wal_lsn_diff), pg_stat_wal, the tables' update counters (n_tup_upd against n_tup_hot_upd), and
with pg_walinspect every WAL record written in between, summed by relation and record type: which
table and index got an entry per pair, and how many bytes went to full-page images. WAL bytes do
not depend on CPU noise, so one run is enough to compare.
"""

from __future__ import annotations

import argparse
import collections
import math
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from tests.benchmarks import harness

# Relations each implementation writes, for the update counters (pg_stat_user_tables).
_TABLES = {"workbench": ("cases", "workbench_audit"), "hand-written": ("jobs",)}
# A backend hands its table counters to pg_stat_user_tables after a second idle, or as it exits.
STATS_FLUSH_SECONDS = 1.5
_REL = re.compile(r"rel (\d+)/(\d+)/(\d+)")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.wal_bench", description=__doc__)
    parser.add_argument(
        "--url",
        help="admin URL of an existing PostgreSQL server (superuser, for "
        "pg_walinspect); default: start a throwaway server",
    )
    parser.add_argument("--rows", type=int, default=40_000, help="rows in each fresh database")
    parser.add_argument("--pairs", type=int, default=5_000, help="measured pairs per implementation")
    parser.add_argument("--warmup", type=int, default=20, help="unmeasured pairs before the checkpoint")
    parser.add_argument(
        "--waiting",
        type=float,
        default=0.25,
        help="the newest rows wait, the older ones are resolved and each has a claim and a "
        "completion in workbench's trail, as in a database in service (1: every row waits, "
        "a fresh trail, as in claim_bench)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="the throwaway server without fsync and full-page writes (default: its default "
        "durability, full-page images included, as claim_bench --durable)",
    )
    parser.add_argument(
        "--no-checkpoint",
        action="store_true",
        help="do not checkpoint before the measured pairs (fewer full-page images)",
    )
    parser.add_argument(
        "--autovacuum",
        action="store_true",
        help="leave autovacuum on (default: off, so that its WAL does not land in a run)",
    )
    parser.add_argument("--top", type=int, default=25, help="rows of the breakdown to print per implementation")
    args = parser.parse_args(argv)
    if not 0 < args.waiting <= 1 or args.pairs < 1 or args.pairs + args.warmup > round(args.rows * args.waiting):
        parser.error("--waiting in (0, 1], --pairs positive, and --pairs + --warmup at most the waiting rows")
    return args


def setup_hand_written(target: harness.Target, rows: int, waiting: float) -> dict[str, Any]:
    import psycopg

    target.fresh("wbwal_hand")
    with psycopg.connect(target.conninfo("wbwal_hand"), autocommit=True) as conn:
        for statement in harness.HAND_SCHEMA:
            conn.execute(statement)
        conn.execute(harness.HAND_FILL, (rows,))
        # The same share of older jobs done as workbench's resolved cases.
        conn.execute("UPDATE jobs SET status = 'done' WHERE id <= %s", (rows - round(rows * waiting),))
        conn.execute("VACUUM ANALYZE jobs")
    return {"kind": "hand-written", "conninfo": target.conninfo("wbwal_hand"), "db": "wbwal_hand"}


# A claim and a completion of every resolved case (the oldest ones), in case order, one second
# apart, as workbench wrote them (users w0…w7, the token's digest): the trail of a table in service.
_HISTORY = """
    INSERT INTO workbench_audit (queue, item_key, event, actor, owner, token, at, outcome)
    SELECT 'cases', CAST(case_id AS VARCHAR(20)), e.event, 'w' || case_id % 8, 'w' || case_id % 8,
           encode(sha256(CAST(CAST(case_id AS text) AS bytea)), 'hex'),
           timezone('UTC', now()) - make_interval(secs => 2 * ({resolved} - case_id) + e.late),
           CASE WHEN e.event = 'complete' THEN 'resolved' END
      FROM cases CROSS JOIN (VALUES ('claim', 1), ('complete', 0)) AS e(event, late)
     WHERE status = 'resolved'
     ORDER BY case_id, e.late DESC"""


def setup_workbench(target: harness.Target, rows: int, waiting: float) -> dict[str, Any]:
    url, _ = harness.build_workbench_db(target, "wbwal_workbench", rows, fraction=waiting, layout="newest")
    resolved = rows - round(rows * waiting)
    if resolved:
        engine = sa.create_engine(target.url("wbwal_workbench", with_password=True, native=True))
        try:
            with engine.begin() as conn:
                conn.execution_options(no_parameters=True).exec_driver_sql(_HISTORY.format(resolved=resolved))
            harness.analyze(engine, "workbench_audit")
        finally:
            engine.dispose()
    return {"kind": "workbench", "url": url, "password": target.password, "db": "wbwal_workbench"}


def counters(conn: sa.Connection, tables: tuple[str, ...]) -> dict[str, float]:
    """pg_stat_wal's totals and each table's insert/update/HOT-update counters."""
    conn.exec_driver_sql("SELECT pg_stat_clear_snapshot()")
    wal = conn.exec_driver_sql("SELECT wal_records, wal_fpi, wal_bytes FROM pg_stat_wal").mappings().one()
    out = {f"stat {k}": float(v) for k, v in wal.items()}
    for name in tables:
        row = (
            conn.execute(
                sa.text("SELECT n_tup_ins, n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = :n"),
                {"n": name},
            )
            .mappings()
            .one()
        )
        out.update({f"{name} {k}": float(v) for k, v in row.items()})
    return out


def measure(target: harness.Target, spec: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """Run the pairs between two WAL positions; return the figures and the records in between."""
    ops = harness.make_ops(spec, "w0")
    engine = sa.create_engine(target.url(spec["db"], with_password=True, native=True), isolation_level="AUTOCOMMIT")
    try:
        harness.warm_up(ops, args.warmup)
        time.sleep(STATS_FLUSH_SECONDS)  # the warm-up's counters reach pg_stat_user_tables before the first read
        if not args.no_checkpoint:
            target.checkpoint()
        with engine.connect() as conn:
            tables = _TABLES[spec["kind"]]
            before = counters(conn, tables)
            pids = conn.exec_driver_sql(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid() AND backend_type = 'client backend'"
            ).scalars()
            backends = list(pids)
            cpu = backend_cpu_seconds(backends)
            start = conn.exec_driver_sql("SELECT pg_current_wal_insert_lsn()").scalar()
            result = harness.run_loop(ops, pairs=args.pairs)
            if result.pairs != args.pairs or result.errors:
                raise SystemExit(f"{spec['kind']}: {result.pairs} pairs, errors {dict(result.errors)}")
            end = conn.exec_driver_sql("SELECT pg_current_wal_insert_lsn()").scalar()
            cpu = backend_cpu_seconds(backends) - cpu
            ops.close()
            settled(conn, backends, end)
            after = counters(conn, tables)
            total = conn.execute(sa.text("SELECT pg_wal_lsn_diff(:e, :s)"), {"e": end, "s": start}).scalar()
            records = conn.execute(
                sa.text(
                    "SELECT resource_manager, record_type, record_length, fpi_length, block_ref "
                    "FROM pg_get_wal_records_info(CAST(:s AS pg_lsn), CAST(:e AS pg_lsn))"
                ),
                {"s": start, "e": end},
            ).all()
            names = relation_names(conn, records)
    finally:
        ops.close()  # a second close does nothing
        engine.dispose()
    delta = {k: after[k] - before[k] for k in after}
    return {
        "pairs": args.pairs,
        "wal": float(total or 0),
        "delta": delta,
        "records": records,
        "names": names,
        "cpu": cpu,
        "seconds": result.duration,
    }


def settled(conn: sa.Connection, pids: list[int], end: Any, timeout: float = 30.0) -> None:
    """End the measured run's backends (idle ones its closed pools left too) and wait until they have left
    pg_stat_activity and the WAL is flushed up to `end`: a backend flushes its statistics as it exits, before
    its entry there is cleared (before_shmem_exit hooks run before on_shmem_exit ones), and pg_walinspect
    reads flushed WAL only (commits not flushed here: the WAL writer's next round). Sooner than a second idle."""
    left = sa.text("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE pid = ANY(:pids)")
    behind = sa.text("SELECT pg_current_wal_flush_lsn() < CAST(:end AS pg_lsn)")
    deadline = time.monotonic() + timeout
    while conn.execute(left, {"pids": pids}).scalar() or conn.execute(behind, {"end": end}).scalar():
        if time.monotonic() > deadline:
            raise SystemExit(f"backends {pids} not ended, or the WAL not flushed to {end}, {timeout:.0f} s on")
        time.sleep(0.02)


def backend_cpu_seconds(pids: list[int]) -> float:
    """CPU seconds (user + system) the server processes `pids` used so far; NaN where /proc cannot
    tell (a server on another host). The claimer's own backend only: the machine's other
    PostgreSQL servers (another test run) do not count."""
    total = 0
    for pid in pids:
        try:
            text = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return math.nan
        total += sum(int(field) for field in text[text.rindex(")") + 2 :].split()[11:13])
    return total / os.sysconf("SC_CLK_TCK") if pids else math.nan


def relation_names(conn: sa.Connection, records: list[Any]) -> dict[str, str]:
    """relfilenode → relation name for the blocks the records touched (in this database)."""
    found: dict[str, str] = {}
    for row in records:
        match = _REL.search(row.block_ref or "")
        if match and match.group(3) not in found:
            name = conn.execute(
                sa.text("SELECT CAST(pg_filenode_relation(0, CAST(:f AS oid)) AS regclass)"), {"f": match.group(3)}
            ).scalar()
            found[match.group(3)] = str(name) if name else f"filenode {match.group(3)}"
    return found


def breakdown(measured: dict[str, Any]) -> list[tuple[str, str, float, float, float]]:
    """(relation, resource manager/record type, records per pair, bytes per pair, FPI bytes per pair)."""
    pairs = measured["pairs"]
    sums: dict[tuple[str, str], list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0.0])
    for row in measured["records"]:
        match = _REL.search(row.block_ref or "")
        relation = measured["names"].get(match.group(3), "?") if match else "-"
        entry = sums[(relation, f"{row.resource_manager}/{row.record_type}")]
        entry[0] += 1
        entry[1] += row.record_length
        entry[2] += row.fpi_length or 0
    rows = [(rel, kind, n / pairs, size / pairs, fpi / pairs) for (rel, kind), (n, size, fpi) in sums.items()]
    return sorted(rows, key=lambda r: -r[3])


def by_relation(rows: list[tuple[str, str, float, float, float]]) -> dict[str, float]:
    out: dict[str, float] = collections.defaultdict(float)
    for rel, _, _, size, _ in rows:
        out[rel] += size
    return dict(out)


def report(results: dict[str, dict[str, Any]], top: int) -> None:
    summary: dict[str, dict[str, float]] = {}
    for kind, measured in results.items():
        pairs, delta = measured["pairs"], measured["delta"]
        rows = breakdown(measured)
        fpi = sum(r[4] for r in rows)
        figures = {
            "WAL bytes/pair": measured["wal"] / pairs,
            "  of which full-page images": fpi,
            "  without full-page images": measured["wal"] / pairs - fpi,
            "WAL records/pair": sum(r[2] for r in rows),
            "backend CPU ms/pair": measured["cpu"] / pairs * 1000,
            "wall ms/pair (one connection)": measured["seconds"] / pairs * 1000,
        }
        for name in _TABLES[kind]:
            upd, hot = delta.get(f"{name} n_tup_upd", 0.0), delta.get(f"{name} n_tup_hot_upd", 0.0)
            if upd:
                figures[f"{name}: HOT updates / updates"] = hot / upd
        summary[kind] = figures
        print(f"\n{kind}: {pairs:,} pairs; WAL by relation and record type, per pair")
        print(f"  {'relation':<34} {'record':<28} {'records':>8} {'bytes':>9} {'FPI bytes':>10}")
        for rel, kind_, n, size, fpi_bytes in rows[:top]:
            print(f"  {rel:<34} {kind_:<28} {n:>8.2f} {size:>9.1f} {fpi_bytes:>10.1f}")
        if len(rows) > top:
            rest = rows[top:]
            print(
                f"  {'(' + str(len(rest)) + ' more)':<63} {sum(r[2] for r in rest):>8.2f} "
                f"{sum(r[3] for r in rest):>9.1f} {sum(r[4] for r in rest):>10.1f}"
            )
        print(
            "  by relation: "
            + ", ".join(f"{rel} {size:.0f}" for rel, size in sorted(by_relation(rows).items(), key=lambda kv: -kv[1]))
        )
    print()
    names = list(summary)
    keys = list(dict.fromkeys(k for figures in summary.values() for k in figures))
    width = max(len(k) for k in keys)
    print(f"{'':<{width}}  " + "  ".join(f"{n:>14}" for n in names) + ("  workbench/hand" if len(names) == 2 else ""))
    for key in keys:
        values = [summary[n].get(key) for n in names]
        cells = "  ".join(f"{v:>14.2f}" if v is not None else f"{'-':>14}" for v in values)
        ratio = ""
        if len(names) == 2 and all(values) and "HOT" not in key:
            ratio = f"  {values[0] / values[1]:>15.2f}"  # type: ignore[operator]
        print(f"{key:<{width}}  {cells}{ratio}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    target = harness.Target.open("postgresql", args.url, durable=not args.quick)
    try:
        admin = target.admin()
        try:
            with admin.connect() as conn:
                settings = {
                    name: conn.exec_driver_sql(f"SHOW {name}").scalar()
                    for name in ("server_version", "full_page_writes", "wal_level", "autovacuum")
                }
                if not args.autovacuum and target.server is not None and not target.server.external:
                    conn.exec_driver_sql("ALTER SYSTEM SET autovacuum = off")
                    conn.exec_driver_sql("SELECT pg_reload_conf()")
                    settings["autovacuum"] = "off (for the run)"
        finally:
            admin.dispose()
        print(
            f"wal_bench: {target.description}; {args.rows:,} rows, {args.pairs:,} pairs on one connection, "
            f"{args.waiting:.0%} waiting, the others resolved with their audit rows; "
            f"{'no checkpoint' if args.no_checkpoint else 'CHECKPOINT'} before them; "
            + ", ".join(f"{k} {v}" for k, v in settings.items()),
            flush=True,
        )
        results = {}
        for setup in (setup_workbench, setup_hand_written):
            spec = setup(target, args.rows, args.waiting)
            # Disposed here: a session left open on the database would sit among the claimer's own in
            # measure()'s list of backends, and stay after the claimer closed.
            extension = sa.create_engine(target.url(spec["db"], with_password=True, native=True))
            try:
                with extension.begin() as conn:
                    conn.exec_driver_sql("CREATE EXTENSION IF NOT EXISTS pg_walinspect")
            finally:
                extension.dispose()
            results[spec["kind"]] = measure(target, spec, args)
        report(results, args.top)
    finally:
        target.close()
    print(f"machine: {harness.machine_load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
