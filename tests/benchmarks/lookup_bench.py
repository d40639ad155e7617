"""A lookup over a large related table: one keystroke's search (the picker's first call through the
service, in the database) at 1, 2 and 3 letters, ASCII and beyond, found and not found, and with the
rows inside names the picker adds after it, p50/p99, beside the reference of reading the whole table
(what a combo box filled once would do) and of resolving one key."""

from __future__ import annotations

import argparse
import random
import sys
import time
import tomllib

import sqlalchemy as sa

from tests.benchmarks import harness
from workbench import demo, services
from workbench.config import loader
from workbench.db import lookups, service
from workbench.demo import schema

# The index `workbench attach` suggests for a large related table's display column (Backend.search_index:
# the search's LIKE/ILIKE then reads an index, not the table): docs/setup/configuration.md, "Lookups".
# PostgreSQL's trigram index needs the pg_trgm extension, which the benchmark creates first.
_SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "da", "be", "fo", "gu", "ha", "je", "pi", "zo"]
_SYLLABLES += ["mö", "zü", "éd"]  # letters beyond ASCII, which SQLite's LIKE does not fold
_MISSING = "qwx"  # in no name: a search for them finds nothing (ASCII)
_MISSING_BEYOND = "þæø"  # nor these, beyond ASCII (no default collation takes them for a letter of the names)
_KINDS = ["Logistics", "Supplies", "Services", "Energy", "Telecom", "Catering", "Paper", "Freight"]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.lookup_bench", description=__doc__)
    parser.add_argument("--backend", choices=harness.BACKENDS, default="postgresql")
    parser.add_argument("--url", help="admin URL of an existing server; default: start a throwaway server")
    parser.add_argument("--rows", type=int, default=100_000, help="rows of the related table (vendors)")
    parser.add_argument("--searches", type=int, default=200, help="measured searches per kind")
    return parser.parse_args(argv)


def vendor_names(count: int, seed: int = 5) -> list[str]:
    """Distinct, name-like vendors: "Kalomi Logistics 00042" (prefixes spread like real names)."""
    rng = random.Random(seed)
    return [
        f"{''.join(rng.choice(_SYLLABLES) for _ in range(3)).capitalize()} {rng.choice(_KINDS)} {i:05d}"
        for i in range(count)
    ]


def fill(engine: sa.Engine, names: list[str]) -> None:
    """The demo's tables, their vendors table grown to `names`."""
    demo.populate(engine, cases=50, imports=50)
    vendors = schema.vendors(sa.MetaData())
    with engine.begin() as conn:
        for start in range(0, len(names), 5_000):
            part = names[start : start + 5_000]
            conn.execute(sa.insert(vendors), [{"name": n, "city": "Riga", "vat_id": None} for n in part])


def search_index(wb: service.Workbench, target: harness.Target) -> str:
    """Create the indexes `workbench attach imports` suggests for the vendor lookup (at 10,000 rows or
    more: attach.search_indexes; here whatever the rows); their DDL."""
    from sqlalchemy.schema import CreateIndex

    lookup = wb.queue("imports").q.lookups["vendor"]
    with wb.engine.begin() as conn:
        if target.backend.startswith("postgresql"):
            conn.exec_driver_sql("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        indexes, note = lookup.backend.search_index(conn, lookup.display)
        for index in indexes:
            index.create(conn)
    harness.analyze(wb.engine, "vendors")
    if not indexes:
        return f"none suggested ({note or 'an index already serves it'})"
    return "; ".join(str(CreateIndex(index).compile(dialect=wb.engine.dialect)).strip() for index in indexes)


def timed(fn: object, runs: list[str]) -> tuple[list[float], int]:
    seconds, found = [], 0
    for text in runs:
        start = time.perf_counter()
        result = fn(text)  # type: ignore[operator]
        seconds.append(time.perf_counter() - start)
        found += len(result)
    return seconds, found


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    target = harness.Target.open(args.backend, args.url)
    wb: service.Workbench | None = None
    try:
        print(
            f"lookup_bench: {args.backend}, vendors with {args.rows:,} rows, {args.searches} searches per kind "
            f"indexed, a quarter as many as is (one keystroke's search, after the picker's 150 ms pause); "
            f"{target.description}",
            flush=True,
        )
        url = target.fresh("wblookup")
        config = loader.parse(tomllib.loads(demo.config_text(url)), "lookup-bench.toml")
        wb = service.Workbench.open(config, password=target.password, create_sqlite=target.is_sqlite)
        names = vendor_names(args.rows)
        started = time.perf_counter()
        fill(wb.engine, names)
        wb.init()
        harness.analyze(wb.engine, "vendors")
        print(f"setup: {time.perf_counter() - started:.1f} s; machine: {harness.machine_load()}", flush=True)
        op = services.Operator(wb, "measurer")
        rng = random.Random(9)
        picks = [rng.choice(names) for _ in range(args.searches)]

        def search(text: str) -> list[object]:
            """What the picker shows when the keystroke's search answers (Operator.lookup_search_start)."""
            return list(op.lookup_search_start("imports", "vendor", text)[0])

        def search_all(text: str) -> list[object]:
            """And with the rows containing the text, which the picker adds when they come."""
            return list(op.lookup_search("imports", "vendor", text))

        search("ka")  # connect and warm the statement cache

        def beyond(letters: int) -> list[str]:  # "É", "MÖ", "KAÉ": the first letters of names
            return [n[:letters].upper() for n in names if not n[:letters].isascii()]

        def missing(letters: str, length: int) -> list[str]:
            return ["".join(rng.choice(letters) for _ in range(length)) for _ in range(args.searches)]

        def cycle(found: list[str]) -> list[str]:
            return [found[i % len(found)] for i in range(args.searches)]

        kinds = {
            "1 letter": [p[:1].lower() for p in picks],
            "2 letters": [p[:2].lower() for p in picks],
            "3 letters": [p[:3].lower() for p in picks],
            # Letters SQLite's LIKE does not fold, typed in capitals: "É", "MÖ", "KAÉ".
            "1 letter beyond ASCII": cycle(beyond(1)),
            "2 letters beyond ASCII": cycle(beyond(2)),
            "3 letters beyond ASCII": cycle(beyond(3)),
            "1 letter, none found": missing(_MISSING, 1),
            "2 letters, none found": missing(_MISSING, 2),
            "3 letters, none found": missing(_MISSING, 3),  # and none inside: the whole search
            "1 letter beyond, none found": missing(_MISSING_BEYOND.upper(), 1),
            "2 letters beyond, none found": missing(_MISSING_BEYOND.upper(), 2),
            "3 letters beyond, none found": missing(_MISSING_BEYOND.upper(), 3),
            "3 digits inside (no prefix)": [p.split()[-1][-3:] for p in picks],  # "042": only inside
            "resolve a key": picks,
        }

        # From the third letter a large table's search also looks inside names, asked for apart: the
        # keystroke's answer is the rows starting with the text; these rows time the two together.
        inside = [k for k in kinds if k.startswith("3 ")]
        rows = [*kinds, *(f"{k}, + inside names" for k in inside)]

        with wb.engine.connect() as conn:
            count_rows = conn.execute(sa.select(sa.func.count()).select_from(sa.table("vendors"))).scalar() or 0

        def measure(state: str, searches: int) -> None:
            for kind in rows:
                base = kind.removesuffix(", + inside names")
                texts = kinds[base][:searches]
                if kind == "resolve a key":
                    seconds, found = timed(lambda key: op.lookup_resolve("imports", "vendor", [key]), texts)
                else:
                    seconds, found = timed(search_all if base != kind else search, texts)
                columns[f"{state} p50"][kind] = harness.percentile(seconds, 50) * 1000
                columns[f"{state} p99"][kind] = harness.percentile(seconds, 99) * 1000
                # A broken search measures nothing: each kind finds what it should, or nothing (the
                # digits only inside names: nothing at once in a large table).
                only_inside = kind == "3 digits inside (no prefix)" and count_rows >= lookups.LARGE_ROWS
                expected = "none found" not in kind and not only_inside
                assert bool(found) == expected, f"{kind}: {found} rows found"

        columns: dict[str, dict[str, float]] = {f"{s} {p}": {} for s in ("as is", "indexed") for p in ("p50", "p99")}
        measure("as is", max(5, args.searches // 4))  # a whole table per search: fewer suffice to compare
        print(f"  as is: 2 letters p50 {columns['as is p50']['2 letters']:.2f} ms", flush=True)
        indexed = search_index(wb, target)
        measure("indexed", args.searches)
        vendors = wb.queue("imports").q.lookups["vendor"].table
        whole: list[float] = []
        for _ in range(max(3, args.searches // 50)):
            start = time.perf_counter()
            with wb.engine.connect() as conn:
                count = len(conn.execute(sa.select(vendors.c.name, vendors.c.city)).all())
            whole.append(time.perf_counter() - start)
        for state in ("as is", "indexed"):  # the reference: a combo box filled with the whole table, once
            columns[f"{state} p50"]["reference: read all rows"] = harness.percentile(whole, 50) * 1000
            columns[f"{state} p99"]["reference: read all rows"] = harness.percentile(whole, 99) * 1000
        print()
        print(f"milliseconds per keystroke's search ({count:,} rows in vendors); indexed: {indexed}")
        print(
            harness.table(
                columns, [("as is/indexed p50", "as is p50", "indexed p50")], [*rows, "reference: read all rows"]
            )
        )
        print(f"machine: {harness.machine_load()}")
    finally:
        if wb is not None:
            wb.close()
        target.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
