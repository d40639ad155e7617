"""What a claim + Complete pair costs, counted rather than timed, this tree against another (`--reference`):
the statements the database runs per pair, the schema they run on, and the client's instructions per pair.

Pairs per second on a shared 2-core machine swing by a quarter from round to round (claim_bench's `--aa`),
so "not slower" cannot rest on them alone. These three do not swing: on PostgreSQL the statements come from
`pg_stat_statements` with `track = all` (the claim function's inner statements counted too), on MariaDB
from the wire (every command PyMySQL sends); the schema is each database's tables, columns, indexes,
triggers and function bodies; the client's instructions come from callgrind (valgrind), counting from
the first measured pair on, the difference between a run of `--pairs` pairs and one of `--pairs / 6`, so
that what the switch itself costs cancels out. Each side runs in a process of its own tree, on a database
that tree initialised.

    python -m tests.benchmarks.pair_cost_bench --backend postgresql --reference /tmp/ref
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import sqlalchemy as sa

from tests.benchmarks import harness, sides

MODES = ("plain", "then_next")

# Run by a side's interpreter path: warm up, then `pairs` pairs; with `wire`, every PyMySQL command counted.
_PAIRS = """
import collections, json, os, re, subprocess, sys
sys.path.insert(0, sys.argv[1])
from tests.benchmarks import harness
url, mode, pairs, how = sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
wire = how == "wire"
sent = collections.Counter()
if wire:
    import pymysql.connections
    real = pymysql.connections.Connection._execute_command
    def counting(self, command, sql):
        text = sql.decode() if isinstance(sql, bytes) else str(sql)
        text = re.sub(r"\\b\\d+(\\.\\d+)?\\b", "N", re.sub(r"'[^']*'", "'?'", text))
        sent[f"{command} " + re.sub(r"\\s+", " ", text)] += 1
        return real(self, command, sql)
    pymysql.connections.Connection._execute_command = counting
ops = harness.WorkbenchOps(url, None, "bench1", then_next=mode == "then_next")
for number in range(5 + pairs):
    if number == 5:
        sent.clear()
        if how == "callgrind":  # count from here: the start, the imports and the warm-up are not counted
            subprocess.run(["callgrind_control", "-i", "on", str(os.getpid())], check=True, capture_output=True)
    ops.complete(ops.claim())
ops.close()
print(json.dumps(sent))
"""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.pair_cost_bench", description=__doc__)
    parser.add_argument("--backend", choices=("postgresql", "mariadb"), default="postgresql")
    parser.add_argument("--url", help="MariaDB: admin URL of an existing server; default: a throwaway one")
    sides_given = parser.add_mutually_exclusive_group(required=True)
    sides_given.add_argument("--reference", help="a checkout of another commit (`git archive C | tar -x`)")
    sides_given.add_argument("--aa", action="store_true", help="A/A: against a copy of this tree")
    parser.add_argument("--pairs", type=int, default=600, help="pairs of the longer callgrind run (and statements)")
    parser.add_argument("--no-callgrind", action="store_true", help="statements and schema only")
    args = parser.parse_args(argv)
    if args.pairs < 60:
        parser.error("--pairs must be at least 60")
    if args.url and args.backend == "postgresql":
        parser.error("--url is for MariaDB: on PostgreSQL the benchmark starts a server with pg_stat_statements")
    return args


def run_side(tree: Path, url: str, mode: str, pairs: int, *, wire: bool = False, callgrind: Path | None = None) -> str:
    """Run `pairs` pairs with `tree`'s workbench in a process of its own; its stdout."""
    how = "wire" if wire else "callgrind" if callgrind is not None else "-"
    command = [sys.executable, "-c", _PAIRS, str(tree), url, mode, str(pairs), how]
    if callgrind is not None:  # instrumented only from the measured pairs on (callgrind_control)
        command = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={callgrind}", *command]
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=tree)
    if done.returncode != 0:
        raise SystemExit(f"{tree} {mode}: the pairs failed:\n{done.stderr[-3000:]}")
    return done.stdout


def instructions(path: Path) -> int:
    """The instructions callgrind counted in a run (its `summary:` line)."""
    found = re.search(r"^summary: (\d+)", path.read_text(), re.M)
    if found is None:
        raise SystemExit(f"{path}: no callgrind summary")
    return int(found.group(1))


def statements(target: harness.Target, db: str, url: str, tree: Path, mode: str, pairs: int) -> dict[str, float]:
    """Each statement the database ran, by its normalised text, with its calls per pair."""
    if target.backend == "mariadb":
        sent = json.loads(run_side(tree, url, mode, pairs, wire=True).splitlines()[-1])
        return {text: count / pairs for text, count in sent.items()}
    engine = sa.create_engine(target.url(db, native=True))
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("CREATE EXTENSION IF NOT EXISTS pg_stat_statements"))
        run_side(tree, url, mode, 5)  # the statements' first runs (plans, the function's cache) not counted
        with engine.begin() as conn:
            conn.execute(sa.text("SELECT pg_stat_statements_reset()"))
        run_side(tree, url, mode, pairs)
        with engine.begin() as conn:
            rows = conn.execute(
                sa.text(
                    "SELECT s.query, sum(s.calls) FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid "
                    "WHERE d.datname = :db AND s.query NOT LIKE '%pg_stat_statements%' GROUP BY s.query"
                ),
                {"db": db},
            ).all()
    finally:
        engine.dispose()
    # A side's runs also count its connections' set-up (the same in both); per pair it is what grows.
    return {re.sub(r"\s+", " ", query): float(calls) / pairs for query, calls in rows}


def schema(target: harness.Target, db: str) -> list[str]:
    """The database's tables, columns, indexes, triggers and (PostgreSQL) function bodies, one line each."""
    engine = sa.create_engine(target.url(db, native=True))
    lines: list[str] = []
    try:
        inspector = sa.inspect(engine)
        for table in sorted(inspector.get_table_names()):
            lines += [f"{table}.{c['name']} {c['type']} null={c['nullable']}" for c in inspector.get_columns(table)]
            for index in sorted(inspector.get_indexes(table), key=lambda i: str(i["name"])):
                options = index.get("dialect_options") or {}
                lines.append(f"{table} index {index['name']} {index['column_names']} {index['unique']} {options}")
        with engine.connect() as conn:
            if target.backend == "postgresql":
                extra = conn.execute(
                    sa.text(
                        "SELECT 'trigger ' || tgname || ' on ' || tgrelid::regclass::text FROM pg_trigger "
                        "WHERE NOT tgisinternal UNION ALL SELECT 'function ' || p.oid::regprocedure::text || ' ' "
                        "|| md5(pg_get_functiondef(p.oid)) FROM pg_proc p JOIN pg_namespace n "
                        "ON n.oid = p.pronamespace WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') "
                        "AND p.prokind IN ('f', 'p')"
                    )
                ).scalars()
            else:
                extra = conn.execute(
                    sa.text(
                        "SELECT CONCAT('trigger ', trigger_name, ' ', MD5(action_statement)) "
                        "FROM information_schema.triggers WHERE trigger_schema = DATABASE()"
                    )
                ).scalars()
            lines += list(extra)
    finally:
        engine.dispose()
    return sorted(lines)


def compare(title: str, this: dict[str, float] | list[str], ref: dict[str, float] | list[str]) -> bool:
    """Print whether the two sides agree and, where not, what only one side has."""
    if isinstance(this, dict) and isinstance(ref, dict):
        a = {f"{calls:.2f} {text}" for text, calls in this.items()}
        b = {f"{calls:.2f} {text}" for text, calls in ref.items()}
        calls = f"{sum(this.values()):.2f} statements per pair, {len(this)} distinct"
    else:
        a, b, calls = set(this), set(ref), f"{len(this)} lines"
    if a == b:
        print(f"{title}: the same on both sides ({calls})")
        return True
    print(f"{title}: DIFFERENT")
    for line in sorted(a - b):
        print(f"  this only: {line[:400]}")
    for line in sorted(b - a):
        print(f"  ref only:  {line[:400]}")
    return False


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not args.no_callgrind and shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (apt-get install valgrind), or pass --no-callgrind")
    options = "-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all"
    target = harness.Target.open(args.backend, args.url, options=options if args.backend == "postgresql" else "")
    reference = sides.copy_of_this_tree(target.tmp / "aa") if args.aa else sides.prepare(args.reference)
    trees = {"this": sides.THIS_TREE, "ref": reference}
    print(f"pair_cost: {args.backend}, {target.description}; {harness.machine_load()}")
    print(f"this: {trees['this']}; reference: {trees['ref']}", flush=True)
    same = True
    try:
        # One database per side, both modes on it: a run takes its pairs from the waiting rows.
        urls = {}
        for side, tree in trees.items():
            url, _ = harness.build_workbench_db(target, f"pc_{side}", args.pairs * 8, tree=str(tree))
            urls[side] = f"pc_{side}", url
        same &= compare("schema", schema(target, urls["this"][0]), schema(target, urls["ref"][0]))
        for mode in MODES:
            found = {side: statements(target, *urls[side], trees[side], mode, args.pairs) for side in trees}
            same &= compare(f"statements per pair, {mode}", found["this"], found["ref"])
        if not args.no_callgrind:
            counted: dict[tuple[str, str], dict[int, int]] = collections.defaultdict(dict)
            for mode in MODES:
                for side, tree in trees.items():
                    url = urls[side][1]
                    for pairs in (args.pairs // 6, args.pairs):
                        out = target.tmp / f"callgrind-{side}-{mode}-{pairs}.out"
                        run_side(tree, url, mode, pairs, callgrind=out)
                        counted[side, mode][pairs] = instructions(out)
                per = {
                    side: (counted[side, mode][args.pairs] - counted[side, mode][args.pairs // 6])
                    / (args.pairs - args.pairs // 6)
                    for side in trees
                }
                print(
                    f"client instructions per pair, {mode} (callgrind): this {per['this'] / 1e6:.3f} M, "
                    f"ref {per['ref'] / 1e6:.3f} M, this/ref {per['this'] / per['ref']:.3f}",
                    flush=True,
                )
    finally:
        target.close()
    print("statements and schema: the same" if same else "statements or schema differ (above)")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
