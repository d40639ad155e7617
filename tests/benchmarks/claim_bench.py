"""Claim + complete throughput and latency of N concurrent processes; on PostgreSQL beside two reference loops."""

from __future__ import annotations

import argparse
import importlib.util
import multiprocessing
import queue
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from tests import servers
from tests.benchmarks import harness, sides
from workbench.db import tables

SETUP_TIMEOUT = 300.0  # seconds for all processes to start, import, connect and warm up (a busy 2-core box)
ROWS = ["pairs/s", "claim p50 ms", "claim p99 ms", "complete p50 ms", "complete p99 ms", "pairs", "window s", "errors"]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.claim_bench", description=__doc__)
    parser.add_argument("--backend", choices=harness.BACKENDS, default="postgresql")
    parser.add_argument(
        "--url",
        help="admin URL of an existing server (e.g. postgresql+psycopg://postgres@host/"
        "postgres); fresh databases are created on it and dropped afterwards. "
        "Default: start a throwaway server",
    )
    parser.add_argument(
        "--processes",
        default="8",
        help="claimer processes; several levels comma-separated (e.g. 8,32), measured interleaved: each round "
        "visits every level with every contender, in the reverse order of the round before",
    )
    parser.add_argument("--rows", type=int, default=20_000, help="waiting rows in each fresh database")
    parser.add_argument("--seconds", type=float, default=10.0, help="measured window (ends early if drained)")
    parser.add_argument("--warmup", type=int, default=3, help="unmeasured pairs per process before the barrier")
    parser.add_argument(
        "--no-references",
        action="store_true",
        help="PostgreSQL: measure workbench only, not procrastinate and the hand-written loop",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="measure each implementation this many times, alternating the order, and report "
        "the round with the median pairs/s (a 2-core box varies from run to run)",
    )
    parser.add_argument(
        "--no-defer",
        action="store_true",
        help="also measure workbench on a queue with allow_defer = false (the claim without its "
        "deferral lookups), in a database of its own",
    )
    parser.add_argument(
        "--then-next",
        action="store_true",
        help="also measure workbench completing with then_next (each Complete claims the next "
        "item in the same step, as the window does), in a database of its own",
    )
    parser.add_argument(
        "--vacuum",
        action="store_true",
        help="PostgreSQL: VACUUM each implementation's database before each of its rounds, so that "
        "no round inherits the dead index entries of the rounds before (steadier ratios)",
    )
    parser.add_argument(
        "--durable",
        action="store_true",
        help="the throwaway server at its default durability (fsync, synchronous commit): "
        "the figures a user's server gives",
    )
    parser.add_argument(
        "--thin-audit",
        action="store_true",
        help="PostgreSQL, an experiment: also measure workbench (and with --then-next its then_next) on a "
        "database whose audit table is UNLOGGED and has no index, so that the audit rows' index entries and WAL "
        "cost (nearly) nothing: what they cost the server is the difference (no setting of workbench's)",
    )
    parser.add_argument(
        "--grants",
        action="store_true",
        help="PostgreSQL: also measure workbench under `workbench grants` (every claimer its own "
        "operator login, the protocol checked by the database)",
    )
    parser.add_argument(
        "--pgbouncer",
        action="store_true",
        help='PostgreSQL: also measure workbench with `pooler = "transaction"` on a direct connection, '
        "and workbench and the hand-written loop through a PgBouncer (pool_mode = transaction, a pool "
        "of --processes server connections) in front of the same server",
    )
    parser.add_argument(
        "--reference",
        metavar="TREE",
        help="a checkout of another commit (e.g. `git archive main | tar -x -C /tmp/ref`): each workbench "
        "contender runs a second time with that tree's workbench, in a database of its own, interleaved "
        "with this tree's in the same run (its databases initialised by that tree: its own migration and functions); "
        "both sides built alike, in alternating order, and run one right after the other, the first alternating",
    )
    parser.add_argument(
        "--aa",
        action="store_true",
        help="A/A: this tree against a copy of itself as the --reference, built and run as a reference is: "
        "its this/ref ratios (each round's and their min–max) show what differences between two trees are noise",
    )
    args = parser.parse_args(argv)
    if args.aa and args.reference:
        parser.error("--aa is this tree against a copy of itself: not with --reference")
    try:
        args.levels = [int(level) for level in str(args.processes).split(",")]
    except ValueError:
        parser.error(f"--processes: {args.processes!r} is not a number or a comma-separated list of numbers")
    args.processes = max(args.levels)  # what a pool is sized for
    if min(args.levels) < 1 or args.rows < 1 or args.seconds <= 0 or args.rounds < 1:
        parser.error("--processes, --rows, --seconds and --rounds must be positive")
    return args


# -- one fresh database per implementation ------------------------------------------------------


def setup_workbench(target: harness.Target, rows: int) -> dict[str, Any]:
    url, timings = harness.build_workbench_db(target, "wbbench_workbench", rows)
    return {"kind": "workbench", "url": url, "password": target.password, "db": "wbbench_workbench", "setup": timings}


def setup_workbench_no_defer(target: harness.Target, rows: int) -> dict[str, Any]:
    url, timings = harness.build_workbench_db(target, "wbbench_nodefer", rows)
    return {
        "kind": "workbench, allow_defer = false",
        "url": url,
        "password": target.password,
        "db": "wbbench_nodefer",
        "setup": timings,
    }


def setup_workbench_then_next(target: harness.Target, rows: int) -> dict[str, Any]:
    url, timings = harness.build_workbench_db(target, "wbbench_then_next", rows)
    return {
        "kind": "workbench, then next",
        "url": url,
        "password": target.password,
        "db": "wbbench_then_next",
        "setup": timings,
    }


THINNED = ", audit thinned"  # an experiment's contender: the same claims on an audit table without its costs


def _thin_audit(target: harness.Target, name: str) -> None:
    """Make database `name`'s audit table UNLOGGED and drop its indexes (its key included): each audit row
    then costs one heap insert, no index entry and no WAL. Only for measuring what those cost."""
    engine = sa.create_engine(target.url(name, with_password=True, native=True), isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            audit = sa.Table(tables.AUDIT_TABLE, sa.MetaData(), autoload_with=conn)
            if audit.primary_key.columns:
                conn.execute(sa.schema.DropConstraint(audit.primary_key))
            for index in audit.indexes:
                conn.execute(sa.schema.DropIndex(index))
            conn.exec_driver_sql(f"ALTER TABLE {tables.AUDIT_TABLE} SET UNLOGGED")
            left = sa.inspect(conn).get_indexes(tables.AUDIT_TABLE)
            if left:
                raise RuntimeError(f"indexes left on the thinned audit table: {left}")
    finally:
        engine.dispose()


def _thinned(setup: Any) -> Any:
    """`setup`'s contender on a database of its own whose audit table is thinned (_thin_audit)."""

    def thinned(target: harness.Target, rows: int) -> dict[str, Any]:
        kind = {setup_workbench: "workbench", setup_workbench_then_next: "workbench, then next"}[setup] + THINNED
        db = "wbbench_thin" + ("_next" if "then next" in kind else "")
        url, timings = harness.build_workbench_db(target, db, rows)
        _thin_audit(target, db)
        return {"kind": kind, "url": url, "password": target.password, "db": db, "setup": timings}

    return thinned


def setup_workbench_grants(target: harness.Target, rows: int) -> dict[str, Any]:
    """The same database under `workbench grants`, and one operator login per claimer (w0, w1, …)."""
    from workbench.db import permissions, pg_grants, service

    url, timings = harness.build_workbench_db(target, "wbbench_grants", rows)
    started = time.perf_counter()
    with service.Workbench.open(harness.bench_config(url), password=target.password) as wb, wb.engine.begin() as conn:
        bound = wb.queue(harness.QUEUE).q
        pg_grants.apply(conn, pg_grants.plan(conn, bound, None))
        quote = conn.dialect.identifier_preparer.quote
        for i in range(64):
            name = f"w{i}"
            if conn.execute(sa.text("SELECT 1 FROM pg_roles WHERE rolname = :n"), {"n": name}).first() is None:
                conn.exec_driver_sql(f"CREATE ROLE {quote(name)} LOGIN")
            conn.exec_driver_sql(f"GRANT {permissions.OPERATOR_ROLE} TO {quote(name)}")
    timings["grants"] = time.perf_counter() - started
    return {
        "kind": "workbench+grants",
        "url": url,
        "password": target.password,
        "db": "wbbench_grants",
        "setup": timings,
    }


def setup_pooler_setting(target: harness.Target, rows: int) -> dict[str, Any]:
    url, timings = harness.build_workbench_db(target, "wbbench_pooler", rows, pooler="transaction")
    return {"kind": "workbench, pooler setting", "url": url, "password": None, "db": "wbbench_pooler", "setup": timings}


def pgbouncer_setups(target: harness.Target, bouncer: servers.PgBouncer) -> list[Any]:
    """workbench (with `pooler = "transaction"`) and the hand-written loop, through `bouncer`."""

    def through(spec: dict[str, Any]) -> dict[str, Any]:
        if "url" in spec:
            spec["url"] = bouncer.url(spec["db"])
        else:
            spec["conninfo"] = spec["conninfo"].replace(f"port={target.server.port}", f"port={bouncer.port}")
        spec["kind"] += " via PgBouncer"
        return spec

    def workbench(target: harness.Target, rows: int) -> dict[str, Any]:
        url, timings = harness.build_workbench_db(target, "wbbench_pgbouncer", rows, pooler="transaction")
        return through({"kind": "workbench", "url": url, "db": "wbbench_pgbouncer", "setup": timings})

    def hand_written(target: harness.Target, rows: int) -> dict[str, Any]:
        return through(setup_hand_written(target, rows, "wbbench_hand_pgbouncer"))

    return [workbench, hand_written]


def setup_hand_written(target: harness.Target, rows: int, name: str = "wbbench_hand") -> dict[str, Any]:
    import psycopg

    target.fresh(name)
    started = time.perf_counter()
    with psycopg.connect(target.conninfo(name), autocommit=True) as conn:
        for statement in harness.HAND_SCHEMA:
            conn.execute(statement)
        conn.execute(harness.HAND_FILL, (rows,))
        conn.execute("VACUUM ANALYZE jobs")
    return {
        "kind": "hand-written",
        "conninfo": target.conninfo(name),
        "db": name,
        "setup": {"fill": time.perf_counter() - started},
    }


def setup_procrastinate(target: harness.Target, rows: int) -> dict[str, Any]:
    import psycopg
    from procrastinate import schema

    target.fresh("wbbench_procrastinate")
    started = time.perf_counter()
    with psycopg.connect(target.conninfo("wbbench_procrastinate"), autocommit=True) as conn:
        # No parameters: psycopg sends the whole schema file as one simple query, as
        # `procrastinate schema --apply` does.
        conn.execute(schema.SchemaManager.get_schema())
        conn.execute(harness.PROC_FILL, (rows,))
        conn.execute("VACUUM ANALYZE procrastinate_jobs")
        conn.execute("VACUUM ANALYZE procrastinate_events")
    return {
        "kind": "procrastinate",
        "conninfo": target.conninfo("wbbench_procrastinate"),
        "db": "wbbench_procrastinate",
        "setup": {"fill": time.perf_counter() - started},
    }


# Rows each implementation has finished, and rows still claimed, read after the run as a cross-check.
_DONE_SQL = {
    "workbench": (
        "SELECT count(*) FROM cases WHERE status = 'resolved'",
        "SELECT count(*) FROM cases WHERE wb_locked_by IS NOT NULL",
    ),
    "hand-written": (
        "SELECT count(*) FROM jobs WHERE status = 'done'",
        "SELECT count(*) FROM jobs WHERE status = 'doing'",
    ),
    "procrastinate": (
        "SELECT count(*) FROM procrastinate_jobs WHERE status = 'succeeded'",
        "SELECT count(*) FROM procrastinate_jobs WHERE status = 'doing'",
    ),
}


# The contenders a --reference tree runs too (workbench's own, on a direct connection), by name.
_REFERENCED = {
    setup_workbench: "workbench",
    setup_workbench_no_defer: "workbench, allow_defer = false",
    setup_workbench_then_next: "workbench, then next",
}
REFERENCE = " (reference)"
_SHORT = {"workbench": "wb", "workbench, allow_defer = false": "nodefer", "workbench, then next": "next"}


def _on_tree(setup: Any, tree: Path, *, reference: bool) -> Any:
    """`setup`'s contender in a database of its own, initialised by `tree`'s workbench in a process of its
    own and its claimers importing workbench from `tree`: this tree's side and the reference's alike."""

    def on_tree(target: harness.Target, rows: int) -> dict[str, Any]:
        name = f"wb{'ref' if reference else 'this'}{setup.__name__.removeprefix('setup_workbench')}"
        url, timings = harness.build_workbench_db(target, name, rows, tree=str(tree))
        return {
            "kind": _REFERENCED[setup] + (REFERENCE if reference else ""),
            "url": url,
            "password": target.password,
            "db": name,
            "setup": timings,
            "tree": str(tree),
        }

    return on_tree


def _revision(tree: str) -> str:
    """The commit a tree is at (a `git archive` has none: its path is all there is)."""
    done = subprocess.run(
        ["git", "-C", tree, "log", "-1", "--format=%h %s"], capture_output=True, text=True, check=False
    )
    return done.stdout.strip()[:80] if done.returncode == 0 else "not a git checkout"


def db_check(target: harness.Target, spec: dict[str, Any]) -> tuple[int, int]:
    engine = sa.create_engine(target.url(spec["db"], with_password=True, native=True))
    try:
        with engine.connect() as conn:
            # Every workbench variant works the same demo table.
            kind = spec["kind"].removesuffix(" via PgBouncer")
            done_sql, held_sql = _DONE_SQL["workbench" if kind.startswith("workbench") else kind]
            return int(conn.exec_driver_sql(done_sql).scalar() or 0), int(conn.exec_driver_sql(held_sql).scalar() or 0)
    finally:
        engine.dispose()


# -- running N processes together ---------------------------------------------------------------


def run_processes(spec: dict[str, Any], processes: int, seconds: float, warmup: int) -> harness.LoopResult:
    """Start the claimers, release them together through a barrier, merge what they report."""
    # spawn: every claimer is a clean interpreter with its own engine and connections, as separate
    # operators' PCs would be; nothing is inherited from the parent's pools.
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(processes)
    out = ctx.Queue()
    worker_spec = {k: v for k, v in spec.items() if k not in ("setup", "tree")}
    worker_spec["kind"] = spec["kind"].removesuffix(REFERENCE)  # the tree's harness knows it by its name
    procs = [
        ctx.Process(target=harness.worker_main, args=(worker_spec, i, barrier, out, seconds, warmup), daemon=True)
        for i in range(processes)
    ]
    # A reference tree's claimers: spawn hands them the parent's sys.path as it is at start(), so
    # with the tree first they import its workbench (and its harness) instead of this one's.
    tree = spec.get("tree")
    if tree:
        sys.path.insert(0, tree)
    try:
        for proc in procs:
            proc.start()
    finally:
        if tree:
            sys.path.remove(tree)
    reports: dict[int, dict[str, Any]] = {}
    deadline = time.monotonic() + SETUP_TIMEOUT + seconds
    # Results are read before join(): a child cannot exit while its queue data is unread.
    while len(reports) < processes:
        try:
            report = out.get(timeout=1.0)
            reports[report["index"]] = report
            continue
        except queue.Empty:
            pass
        for i, proc in enumerate(procs):
            if i not in reports and not proc.is_alive() and proc.exitcode is not None:
                try:  # it may have reported just before exiting
                    report = out.get(timeout=1.0)
                    reports[report["index"]] = report
                    continue
                except queue.Empty:
                    pass
                if i not in reports:
                    # Died without a word (e.g. in interpreter start-up): free the others waiting at the barrier.
                    reports[i] = {"index": i, "fatal": f"exited with code {proc.exitcode} before reporting"}
                    barrier.abort()
        if time.monotonic() > deadline:
            barrier.abort()
            for i in range(processes):
                reports.setdefault(i, {"index": i, "fatal": "no report in time"})
    for proc in procs:
        proc.join(timeout=30)
        if proc.is_alive():
            proc.kill()
    fatal = [r for r in reports.values() if "fatal" in r]
    if fatal:
        # A run with a claimer missing measures something else; show why and stop.
        first = min(fatal, key=lambda r: "BrokenBarrierError" in r["fatal"])
        raise SystemExit(
            f"{spec['kind']}: {len(fatal)} of {processes} claimers failed; w{first['index']}:\n{first['fatal']}"
        )
    merged = harness.LoopResult()
    for i in sorted(reports):
        merged.merge(reports[i]["result"])
    return merged


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    target = harness.Target.open(args.backend, args.url, durable=args.durable)
    bouncer = None
    try:
        print(
            f"claim_bench: {args.backend}, {'/'.join(map(str, args.levels))} processes, "
            f"{args.rows:,} rows per database, "
            f"{args.seconds:g} s window, {args.warmup} warm-up pairs per process; {target.description}; "
            f"{harness.machine_load()}",
            flush=True,
        )
        setups = [setup_workbench]
        if args.no_defer:
            setups.append(setup_workbench_no_defer)
        if args.then_next:
            setups.append(setup_workbench_then_next)
        if args.thin_audit:
            if args.backend != "postgresql":
                raise SystemExit("--thin-audit is measured on PostgreSQL only")
            setups += [_thinned(setup_workbench)] + ([_thinned(setup_workbench_then_next)] if args.then_next else [])
        if args.grants:
            if args.backend != "postgresql" or args.url:
                raise SystemExit("--grants needs PostgreSQL on a throwaway server (it creates login roles)")
            setups.append(setup_workbench_grants)
        if args.backend == "postgresql" and not args.no_references:
            if importlib.util.find_spec("procrastinate") is None:
                print("procrastinate is not installed: measured without it", flush=True)
            else:
                setups.append(setup_procrastinate)
            setups.append(setup_hand_written)
        if args.pgbouncer:
            if args.backend != "postgresql" or target.server is None or target.password:
                raise SystemExit("--pgbouncer needs PostgreSQL on a server without a password (it trusts loopback)")
            bouncer = servers.start_pgbouncer(target.server, pool_size=args.processes, in_turn=False)
            setups += [setup_pooler_setting, *pgbouncer_setups(target, bouncer)]
        if args.aa:
            args.reference = str(sides.copy_of_this_tree(target.tmp / "aa-reference"))
            print(f"A/A: the reference is a copy of this tree ({args.reference}): its this/ref ratios are noise")
        pairs = []
        if args.reference:
            reference = sides.prepare(args.reference)
            pairs = [
                (_on_tree(setup, sides.THIS_TREE, reference=False), _on_tree(setup, reference, reference=True))
                for setup in setups
                if setup in _REFERENCED
            ]
            setups = [setup for setup in setups if setup not in _REFERENCED]
            print(f"reference: {reference} ({_revision(str(reference))}); this tree: {_revision(str(sides.THIS_TREE))}")
        specs: dict[str, dict[str, Any]] = {}
        for setup in sides.build_order(pairs) + setups:
            spec = setup(target, args.rows)
            steps = ", ".join(f"{k} {v:.1f} s" for k, v in spec["setup"].items())
            print(f"setup {spec['kind']}: {steps}", flush=True)
            specs[spec["kind"]] = spec
        # A contender's two sides run one right after the other (the same machine for both), as a block.
        kinds = [[kind, kind + REFERENCE] for kind in specs if kind + REFERENCE in specs]
        kinds += [[kind] for kind in specs if kind + REFERENCE not in specs and not kind.endswith(REFERENCE)]
        groups = [[(level, kind) for kind in group] for level in args.levels for group in kinds]
        rounds: dict[tuple[int, str], list[harness.LoopResult]] = {run: [] for group in groups for run in group}
        # The CPU of this benchmark's own server (its process tree), warm-up included; None on SQLite.
        own_server = harness.ServerCpu(target)
        server_cpu = dict.fromkeys(rounds, 0.0)
        checks: dict[str, tuple[int, int]] = {}
        for number, order in enumerate(sides.schedule(groups, args.rounds)):
            for level, kind in order:
                spec = specs[kind]
                added = harness.top_up(target, spec["db"], _table(kind), args.rows)
                if args.vacuum:
                    target.vacuum(spec["db"])
                target.checkpoint()
                at = f", {level} processes" if len(args.levels) > 1 else ""
                more = f"; {added:,} waiting rows added" if number and added else ""
                print(f"running {kind} (round {number + 1} of {args.rounds}{at}{more}) ...", flush=True)
                cpu = own_server.seconds()
                rounds[level, kind].append(run_processes(spec, level, args.seconds, args.warmup))
                after = own_server.seconds()
                if cpu is not None and after is not None:
                    server_cpu[level, kind] += after - cpu
                checks[kind] = db_check(target, spec)
        if args.rounds > 1:
            for (level, kind), results_of in rounds.items():
                at = f" at {level} processes" if len(args.levels) > 1 else ""
                print(
                    f"{kind}{at}: pairs/s by round "
                    + ", ".join(f"{harness.figures(r)['pairs/s']:,.0f}" for r in results_of)
                )
        for level, kind in rounds:
            if kind + REFERENCE in specs:  # this tree over the reference, round by round (each pair ran together)
                this, ref = (
                    [harness.figures(r)["pairs/s"] for r in rounds[level, k]] for k in (kind, kind + REFERENCE)
                )
                at = f" at {level} processes" if len(args.levels) > 1 else ""
                print(f"{_SHORT[kind]} this/ref pairs/s{at} by round: {sides.spread(sides.ratios(this, ref))}")
        counted = dict.fromkeys(specs, 0)
        for (level, kind), results_of in rounds.items():
            counted[kind] += _pairs(results_of, level, args.warmup)
        for level in args.levels:
            if len(args.levels) > 1:
                print(f"\nat {level} processes:")
            results = {kind: _median(results_of) for (n, kind), results_of in rounds.items() if n == level}
            report(args, results, checks, counted)
        if own_server.pid is not None:
            print(
                f"database server CPU per pair (its process tree, pid {own_server.pid}; all rounds, warm-up "
                "included): "
                + ", ".join(
                    f"{kind}{f' at {level} processes' if len(args.levels) > 1 else ''} "
                    f"{server_cpu[level, kind] / _pairs(rounds[level, kind], level, args.warmup) * 1000:.3f} ms"
                    for level, kind in server_cpu
                )
            )
        else:
            print("database server CPU: not measured (no server process of this benchmark on this machine)")
        print(f"machine: {harness.machine_load()}")
    finally:
        if bouncer is not None:
            bouncer.stop()
        target.close()
    return 0


def _table(kind: str) -> str:
    """The table a contender's queue is (what top_up fills)."""
    return {"hand-written": "jobs", "procrastinate": "procrastinate_jobs"}.get(
        kind.removesuffix(" via PgBouncer"), "cases"
    )


def _pairs(results: list[harness.LoopResult], processes: int, warmup: int) -> int:
    """Pairs done over these rounds, warm-up included (what the server's CPU was spent on)."""
    return sum(r.pairs for r in results) + len(results) * processes * warmup


def _median(results: list[harness.LoopResult]) -> harness.LoopResult:
    """The round with the median pairs/s (the lower middle one of an even count)."""
    ranked = sorted(results, key=lambda r: harness.figures(r)["pairs/s"])
    return ranked[(len(ranked) - 1) // 2]


def report(
    args: argparse.Namespace,
    results: dict[str, harness.LoopResult],
    checks: dict[str, tuple[int, int]],
    counted: dict[str, int],
) -> None:
    columns = {name: harness.figures(result) for name, result in results.items()}
    short = {
        "procrastinate": "wb/proc",
        "hand-written": "wb/hand",
        "workbench+grants": "grants/wb",
        "workbench, allow_defer = false": "wb/nodefer",
        "workbench, then next": "next/wb",
        "workbench, pooler setting": "wb/pooler",
        "workbench via PgBouncer": "wb/pgb",
        "hand-written via PgBouncer": "wb/hand-pgb",
        "workbench" + THINNED: "wb/thinned",
        "workbench, then next" + THINNED: "next/thinned",
    }
    ratios = [
        (short[name], name, "workbench")
        if name in ("workbench+grants", "workbench, then next")
        else (short[name], "workbench, then next", name)
        if name == "workbench, then next" + THINNED
        else (short[name], "workbench", name)
        for name in results
        if name != "workbench" and not name.endswith(REFERENCE)
    ]
    # This tree against the reference tree's, contender by contender; then next against its plain pair there too.
    ratios += [
        (f"{_SHORT[name.removesuffix(REFERENCE)]} this/ref", name.removesuffix(REFERENCE), name)
        for name in results
        if name.endswith(REFERENCE)
    ]
    if "workbench, then next" + REFERENCE in results and "workbench" + REFERENCE in results:
        ratios.append(("next/wb ref", "workbench, then next" + REFERENCE, "workbench" + REFERENCE))
    if "workbench, then next" in results and "hand-written" in results:
        ratios.append(("next/hand", "workbench, then next", "hand-written"))
    print()
    print(harness.table(columns, ratios, ROWS))
    if ratios:
        print("(ratios: pairs/s below 1 and latencies above 1 mean workbench is slower)")
    print()
    for name, result in results.items():
        done, held = checks[name]
        print(
            f"{name}: {result.pairs:,} pairs measured, {result.empty} empty claims; in the database "
            f"{done:,} done (measured + warm-up, all rounds = {counted[name]:,}), {held} still claimed"
        )
    lines = [line for name, result in results.items() for line in harness.error_report(name, result)]
    print("errors by type:" if lines else "errors by type: none")
    for line in lines:
        print(line)
    if args.backend == "sqlite":
        wb = results["workbench"]
        surfaced = sum(n for d, n in wb.errors.items() if harness.is_database_locked(d))
        retried = sum(n for d, n in wb.driver_errors.items() if harness.is_database_locked(d))
        print(
            f"sqlite: claim p99 {harness.fmt(columns['workbench']['claim p99 ms'])} ms; "
            f"'database is locked': {surfaced} reached the caller, {retried} seen by the driver "
            f"(retried inside workbench)"
        )


if __name__ == "__main__":
    sys.exit(main())
