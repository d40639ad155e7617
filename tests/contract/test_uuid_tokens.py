"""A token column of the database's UUID type (PostgreSQL `uuid`, SQL Server `uniqueidentifier`)."""

from __future__ import annotations

import tomllib
import uuid

import pytest
import sqlalchemy as sa
from sqlalchemy.dialects import mssql, postgresql

from tests import support
from tests.conftest import POOLED
from workbench.config import loader
from workbench.core import errors
from workbench.db import audit, backends, claims, mapping, tables
from workbench.db.claims.mssql import ReadpastClaim
from workbench.db.supervision import Supervision

CONFIG = """
[database]
url = "{url}"

[queues.tickets]
table = "tickets"
key = "ticket_id"
order = ["ticket_id"]
lock_duration = "10m"

[queues.tickets.lock]
user = "locked_by"
time = "locked_at"
expires = "lock_expires"
token = "lock_id"

[queues.tickets.todo]
state = "new"

[queues.tickets.outcomes.done]
set = { state = "done" }
"""


def _table(md: sa.MetaData, token_type: sa.types.TypeEngine) -> sa.Table:
    return sa.Table(
        "tickets",
        md,
        sa.Column("ticket_id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("state", sa.String(10), nullable=False),
        sa.Column("subject", sa.String(100)),
        sa.Column("locked_by", sa.String(50)),
        sa.Column("locked_at", sa.DateTime),
        sa.Column("lock_expires", sa.DateTime),
        sa.Column("lock_id", token_type),
    )


@pytest.mark.parametrize("backend", ["postgresql", POOLED])
def test_a_uuid_token_column_serves_every_operation(env: support.Env) -> None:
    table = _table(sa.MetaData(), postgresql.UUID())
    table.metadata.create_all(env.engine)
    with env.engine.begin() as conn:
        conn.execute(sa.insert(table), [{"ticket_id": i, "state": "new", "subject": f"s{i}"} for i in range(1, 6)])
    wb = env.open(env.load(CONFIG))
    wb.init()
    q = wb.queue("tickets")

    claim = q.claim_next("alice")[0]
    assert uuid.UUID(claim.lock.token)  # the UUID's text
    stored = env.row(wb, "tickets", claim.lock.key)["lock_id"]
    assert str(stored) == claim.lock.token
    lock = q.save("alice", claim.lock.key, claim.lock.token, {"subject": "edited"})
    lock = q.extend("alice", lock.key, lock.token)
    assert [row.key for row in Supervision(q).board()] == [claim.lock.key]
    with pytest.raises(errors.LockLost):
        q.complete("bob", lock.key, lock.token)
    with pytest.raises(errors.LockLost):
        q.complete("alice", lock.key, "not-a-uuid")  # refused as a lock that is not held, not a database error
    with pytest.raises(errors.LockLost):
        q.complete("alice", lock.key, str(uuid.uuid4()))
    done = q.complete("alice", lock.key, lock.token)
    assert done.outcome == "done" and env.row(wb, "tickets", lock.key)["lock_id"] is None
    events = [e.kind.value for e in q.history(lock.key)]
    assert events == ["claim", "save", "extend", "complete"]
    # The audit keeps the digest of the UUID's text, whichever case the database writes it in.
    assert {e.token for e in q.history(lock.key)} == {audit.token_digest(lock.token)}

    taken = q.claim_next("bob")[0]
    moved = Supervision(q).reassign("alice", taken.lock.key, "carol", "holiday")
    assert uuid.UUID(moved.token) and moved.token != taken.lock.token
    q.release("carol", moved.key, moved.token)


def test_sql_server_claims_make_uniqueidentifier_tokens_with_newid() -> None:
    table = _table(sa.MetaData(), mssql.UNIQUEIDENTIFIER())
    config = loader.parse(tomllib.loads(CONFIG.replace("{url}", "mssql+pyodbc://@h/d?driver=x")), "t.toml")
    q = mapping.BoundQueue(
        config.queue("tickets"), table, config_path="t.toml", backend=backends.for_dialect("mssql"), local_clock=False
    )
    metadata, audit_table, _ = tables.build_metadata()
    trail = audit.AuditTrail(audit_table, "tickets", metadata.tables[tables.COOLDOWN_TABLE])
    request = claims.ClaimRequest(user="alice")
    for stmt in ReadpastClaim().statements(q, trail, request, room=1):
        sql = " ".join(str(stmt.compile(dialect=mssql.dialect())).split())
        assert "lock_id=NEWID()" in sql, sql
    fence = " ".join(str(q.fence(3, str(uuid.uuid4()), "alice", q.now()).compile(dialect=mssql.dialect())).split())
    assert "tickets.lock_id = :lock_id_1" in fence
    with pytest.raises(errors.LockLost):
        q.fence(3, "not-a-uuid", "alice", q.now())
