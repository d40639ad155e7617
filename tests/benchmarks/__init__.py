"""Benchmarks of the claim path: scripts that print figures, not tests (see docs/explanation/benchmarks.md)."""
