"""The supervisor console's figures: the lock board, queue health, operator statistics and throughput.

Everything here only reads, in one short transaction per call (`Database.read`), with a fixed
number of statements whatever the number of rows (never one per row):

- the **board**: the clock; the locked rows with their list columns (through the lock index),
  each with the aggregates of its audit rows under its token (through the audit index
  `(queue, item_key, id)`: LATERAL on PostgreSQL, a scalar subquery on MySQL/MariaDB, a derived
  table on SQLite, see `board`; `_activity` on SQL Server and for tables without a token column);
- **health**: one statement of counts on the table (each through the claim or the lock index,
  with the rows a claim could take defined as the claim defines them) and one on today's audit
  rows (through the audit time index);
- **operator statistics** and **handle times**: the completions of the period with the start of
  each one's lock (see `completions`), and for the statistics, in the same reading of the
  period's audit rows, its releases, expiries and force releases;
- **throughput**: counted per hour by the database.

Audit times are UTC; results are given on the queue's clock like every other time workbench
hands out (aware UTC, or naive server-local time with `database.clock = "local"`), and naive
times passed in are read on that clock too.
"""
