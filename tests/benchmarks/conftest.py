"""The benchmarks are scripts run by hand (python -m tests.benchmarks.…), never collected as tests."""

collect_ignore = ["claim_bench.py", "growth_bench.py", "harness.py"]
