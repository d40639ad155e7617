"""The benchmarks are scripts run by hand (python -m tests.benchmarks.…), never collected as tests."""

collect_ignore = [
    "board_bench.py",
    "bundle_bench.py",
    "claim_bench.py",
    "growth_bench.py",
    "harness.py",
    "lock_table_bench.py",
    "wal_bench.py",
]
