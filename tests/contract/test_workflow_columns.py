"""Workflow columns that a claim fills with the claimer's name or the claim time: expired items come back."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa

from tests import support
from workbench.core import errors

CONFIG = """
[database]
url = "{url}"

[queues.jobs]
table = "jobs"
key = "id"
order = ["id"]
lock_duration = "5m"
release_cooldown = "0s"
lock = { user = "locked_by", time = "locked_at", token = "lock_token" }
todo = { COLUMN = { null = true } }
on_claim = { COLUMN = { KIND = true } }
on_release = { COLUMN = { null = true } }
outcomes.done.set = { COLUMN = { KIND = true }, done = true }
"""


def _jobs(env: support.Env, column: str, kind: str) -> Any:
    md = sa.MetaData()
    sa.Table(
        "jobs",
        md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("title", sa.String(50)),
        sa.Column("assignee", sa.String(50)),
        sa.Column("picked_at", sa.DateTime),
        sa.Column("done", sa.Boolean, nullable=False),
        sa.Column("locked_by", sa.String(50)),
        sa.Column("locked_at", sa.DateTime().with_variant(sa.dialects.mysql.DATETIME(fsp=6), "mysql", "mariadb")),
        sa.Column("lock_token", sa.String(32)),
    ).create(env.engine)
    with env.engine.begin() as conn:
        conn.execute(
            sa.text("INSERT INTO jobs (id, title, done) VALUES (1, 'a', :f), (2, 'b', :f), (3, 'c', :f)"), {"f": False}
        )
    wb = env.open(env.load(CONFIG.replace("COLUMN", column).replace("KIND", kind)))
    wb.init()
    return wb


@pytest.mark.parametrize(("column", "kind"), [("assignee", "user"), ("picked_at", "now")])
def test_expired_item_is_served_again_when_the_claim_wrote_a_todo_column(
    env: support.Env, column: str, kind: str
) -> None:
    wb = _jobs(env, column, kind)
    q = wb.queue("jobs")
    lost = q.claim_next("alice")[0]
    assert env.row(wb, "jobs", lost.lock.key)[column] is not None  # out of todo while claimed
    env.age_lock(wb, "jobs", lost.lock.key, 6 * 60)
    # The row still carries alice's claim in `column`, but her lock expired: the claim serves it, first.
    again = q.claim_next("bob")[0]
    assert again.lock.key == lost.lock.key and again.lock.owner == "bob"
    if kind == "user":
        assert again.item["assignee"] == "bob"
    with pytest.raises(errors.LockLost):
        q.complete("alice", lost.lock.key, lost.lock.token)
    # An outcome writing the user (or the time) into a column todo wants NULL takes the row out of todo.
    q.complete("bob", again.lock.key, again.lock.token)
    assert [e.kind.value for e in q.history(lost.lock.key)] == ["claim", "expire", "claim", "complete"]
    assert lost.lock.key not in {c.lock.key for c in q.claim_next("carol", 5)}


def test_a_filter_on_a_lock_column_is_refused(env: support.Env) -> None:
    md = sa.MetaData()
    sa.Table(
        "jobs",
        md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("done", sa.Boolean, nullable=False),
        sa.Column("locked_by", sa.String(50)),
        sa.Column("locked_at", sa.DateTime),
        sa.Column("lock_token", sa.String(32)),
    ).create(env.engine)
    config = CONFIG.replace("todo = { COLUMN = { null = true } }", "todo = { locked_by = { null = true } }")
    for line in (
        "on_claim = { COLUMN = { KIND = true } }\n",
        "on_release = { COLUMN = { null = true } }\n",
        "COLUMN = { KIND = true }, ",
    ):
        config = config.replace(line, "")
    wb = env.open(env.load(config))
    wb.init()
    with pytest.raises(errors.ConfigError, match="'locked_by' holds the lock, which workbench tests itself") as info:
        wb.queue("jobs")
    assert info.value.key == "queues.jobs.todo.locked_by.null"
