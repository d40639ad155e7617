"""Times the database writes itself (created_at DEFAULT CURRENT_TIMESTAMP) are shown, not edited."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from tests import support
from workbench.core import errors

CONFIG = """
[database]
url = "{url}"

[queues.tickets]
table = "tickets"
key = "id"
lock = { user = "lock_user", time = "lock_time" }
todo = { state = "new" }
outcomes.done.set = { state = "done" }
%s
"""


def _table(env: support.Env) -> None:
    md = sa.MetaData()
    sa.Table(
        "tickets",
        md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("subject", sa.String(200)),
        sa.Column("created_at", sa.DateTime, server_default=sa.func.current_timestamp(), nullable=False),
        sa.Column("due_at", sa.DateTime),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("lock_user", sa.String(128)),
        sa.Column("lock_time", sa.DateTime(timezone=False)),
    )
    md.create_all(env.engine)
    with env.engine.begin() as conn:
        conn.execute(sa.text("INSERT INTO tickets (id, subject, state) VALUES (1, 'Printer', 'new')"))


def test_a_column_the_database_stamps_is_read_only_unless_configured(native_env: support.Env) -> None:
    env = native_env
    _table(env)
    wb = env.open(env.load(CONFIG % ""))
    wb.init()
    q = wb.queue("tickets")
    editable = [c.name for c in q.q.editable]
    assert "created_at" not in editable and "due_at" in editable and "subject" in editable
    assert q.q.specs["created_at"].read_only and q.q.specs["subject"].kind == "text"  # one line: varchar(200)
    claim = q.claim_next("alice")[0]
    with pytest.raises(errors.InvalidValue, match="set by the database"):
        q.save("alice", 1, claim.lock.token, {"created_at": "2026-01-01 00:00"})
    # Configuring the field makes it the queue's own again.
    configured = env.open(env.load(CONFIG % '[queues.tickets.fields.created_at]\nlabel = "Opened"')).queue("tickets")
    assert "created_at" in [c.name for c in configured.q.editable]
