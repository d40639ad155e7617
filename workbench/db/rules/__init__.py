"""The workflow table's rules rendered as SQL the database enforces under `workbench grants`: PostgreSQL's checks
(pg_*: in-row locks, lock table, trusted functions, shared guards) and SQL Server's procedures (mssql_*)."""
