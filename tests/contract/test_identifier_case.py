"""One config for every database: `tblQueue`, `LockUser` as written for SQL Server or MariaDB also
find the table PostgreSQL folded to `tblqueue`, `lockuser`; a name that matches two is refused."""

from __future__ import annotations

import datetime as dt

import pytest
import sqlalchemy as sa

from tests import support
from workbench.core import errors

CONFIG = """
[database]
url = "{url}"

[queues.inbox]
table = "tblQueue"
key = "QueueID"
order = ["CreatedAt"]
lock = { user = "LockUser", time = "LockTime" }
todo = { Status = "new" }
outcomes.done.set = { Status = "done" }
"""


def _unquoted_table(env: support.Env, rows: int = 3) -> None:
    """The table as a script with unquoted names makes it: PostgreSQL folds every name to lower case."""
    md = sa.MetaData()
    table = sa.Table(
        "tblQueue", md,
        sa.Column("QueueID", sa.Integer, primary_key=True, autoincrement=False, quote=False),
        sa.Column("CreatedAt", sa.DateTime, nullable=False, quote=False),
        sa.Column("Subject", sa.String(100), quote=False),
        sa.Column("Status", sa.String(20), nullable=False, quote=False),
        sa.Column("LockUser", sa.String(128), quote=False),
        sa.Column("LockTime", sa.DateTime, quote=False),
        quote=False,
    )
    md.create_all(env.engine)
    start = dt.datetime(2026, 5, 1)
    with env.engine.begin() as conn:
        conn.execute(sa.insert(table), [{"QueueID": i, "CreatedAt": start + dt.timedelta(minutes=i),
                                         "Subject": f"Message {i}", "Status": "new"} for i in range(1, rows + 1)])


def test_one_config_finds_the_table_and_columns_whatever_the_database_did_to_their_case(
        native_env: support.Env) -> None:
    env = native_env
    _unquoted_table(env)
    with env.engine.connect() as conn:
        names = sa.inspect(conn).get_table_names()
    if env.backend == "postgresql":
        assert "tblqueue" in names  # folded: the config's spelling is not the table's
    wb = env.open(env.load(CONFIG))
    wb.init()
    q = wb.queue("inbox")
    claim = q.claim_next("alice")[0]
    assert claim.lock.key == 1 and claim.lock.owner == "alice"
    q.save("alice", 1, claim.lock.token, {"Subject": "Message 1, read"})
    q.complete("alice", 1, claim.lock.token)
    with env.engine.connect() as conn:
        table = sa.Table(next(n for n in names if n.lower() == "tblqueue"), sa.MetaData(), autoload_with=conn)
        row = {k.lower(): v for k, v in conn.execute(sa.select(table).where(table.c[0] == 1)).mappings().one().items()}
    assert (row["subject"], row["status"], row["lockuser"]) == ("Message 1, read", "done", None)


def test_a_name_that_matches_two_tables_by_case_is_refused(native_env: support.Env) -> None:
    env = native_env
    if env.backend != "postgresql":
        pytest.skip("only PostgreSQL keeps two tables whose names differ only in case here")
    _unquoted_table(env)
    with env.engine.begin() as conn:
        conn.execute(sa.text('CREATE TABLE "TBLQUEUE" (id integer primary key)'))
    wb = env.open(env.load(CONFIG))
    wb.init()
    with pytest.raises(errors.ConfigError, match="differ from it only in case") as info:
        wb.queue("inbox")
    assert info.value.key == "queues.inbox.table"
