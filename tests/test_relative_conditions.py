"""Conditions on the claiming user and on the database's time: `assigned_to` is the claimer or NULL,
`follow_up_at` before now plus an hour; served per user on every database and claim method, counted
for everyone, and kept out of the claim index."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa

from tests import support
from workbench.config import model
from workbench.core import errors
from workbench.db import attach, clock
from workbench.db.supervision import Supervision

CONFIG = """
[database]
url = "{url}"

[queues.callbacks]
table = "callbacks"
key = "call_id"
order = ["opened_at"]
max_locks_per_user = 0
release_cooldown = "0s"

[queues.callbacks.lock]
user = "locked_by"
time = "locked_at"
expires = "lock_expires"
token = "lock_token"

[queues.callbacks.todo]
status = "open"
assigned_to = { eq = { user = true }, or_null = true }
follow_up_at = { lt = { now = "+1h" }, or_null = true }

[queues.callbacks.outcomes.done]
set = { status = "done" }
"""

# call_id: (assigned_to, follow_up_at in seconds from the database's now, or None)
ROWS = {
    1: ("alice", None),
    2: ("bob", None),
    3: (None, None),
    4: (None, 3 * 3600),  # three hours ahead: not yet
    5: (None, 1800),  # within the hour the queue looks ahead
    6: ("alice", -86400),
    7: ("carol", 2 * 86400),  # carol's, and not for two days
}


def _callbacks(env: support.Env, config: str = CONFIG) -> Any:
    md = sa.MetaData()
    table = sa.Table(
        "callbacks",
        md,
        sa.Column("call_id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("subject", sa.String(200), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("assigned_to", sa.String(50)),
        sa.Column("follow_up_at", sa.DateTime),
        sa.Column("opened_at", sa.DateTime, nullable=False),
        sa.Column("locked_by", sa.String(128)),
        sa.Column("locked_at", sa.DateTime),
        sa.Column("lock_expires", sa.DateTime),
        sa.Column("lock_token", sa.String(32)),
    )
    md.create_all(env.engine)
    with env.engine.begin() as conn:
        for call_id, (assigned, ahead) in ROWS.items():
            follow_up = None if ahead is None else clock.add_seconds(clock.db_now(), sa.literal_column(str(ahead)))
            conn.execute(
                sa.insert(table).values(
                    call_id=call_id,
                    subject=f"Call back {call_id}",
                    status="open",
                    assigned_to=assigned,
                    follow_up_at=follow_up,
                    opened_at=clock.add_seconds(clock.db_now(), sa.literal_column(str(call_id - 100))),
                )
            )
    wb = env.open(env.load(config))
    wb.init()
    return wb


def _keys(claims: list[Any]) -> set[int]:
    return {int(c.lock.key) for c in claims}


def test_each_user_is_served_their_own_and_the_unassigned_whose_time_has_come(env: support.Env) -> None:
    wb = _callbacks(env)
    q = wb.queue("callbacks")
    assert {row["call_id"] for row in q.open_items(50, "bob")} == {2, 3, 5}
    assert q.count_waiting(50) == 5  # waiting for someone: all but 4 and 7, which are not due yet
    assert q.count_waiting(50, "carol") == 2
    assert _keys(q.claim_next("alice", 10)) == {1, 3, 5, 6}
    assert _keys(q.claim_next("bob", 10)) == {2}
    with pytest.raises(errors.NothingToClaim):
        q.claim_next("carol")
    assert Supervision(q).health().waiting == 0
    # Time passes, as the database sees it: call 4 falls within the hour, and anyone may take it.
    table = q.q.table
    with wb.engine.begin() as conn:
        conn.execute(
            sa.update(table)
            .where(table.c.call_id == 4)
            .values(follow_up_at=clock.add_seconds(clock.db_now(), sa.literal_column("-60")))
        )
    assert _keys(q.claim_next("carol")) == {4}


def test_an_expired_lock_goes_only_to_whom_the_item_waits_for(native_env: support.Env) -> None:
    env = native_env
    wb = _callbacks(env)
    q = wb.queue("callbacks")
    assert _keys(q.claim_next("alice", 10)) == {1, 3, 5, 6}
    for key in (1, 3):
        env.age_lock(wb, "callbacks", key, 3600)
    # Call 3 is nobody's: bob takes over the lapsed lock. Call 1 is alice's: bob never gets it.
    assert _keys(q.claim_next("bob", 10)) == {2, 3}
    with pytest.raises(errors.NothingToClaim):
        q.claim_next("bob")
    assert _keys(q.claim_next("alice")) == {1}


LOCK_TABLE = CONFIG.replace(
    '''[queues.callbacks.lock]
user = "locked_by"
time = "locked_at"
expires = "lock_expires"
token = "lock_token"''',
    '''[queues.callbacks.lock]
table = "workbench_locks"''',
)


def test_a_queue_whose_locks_live_in_a_lock_table(native_env: support.Env) -> None:
    wb = _callbacks(native_env, LOCK_TABLE)
    q = wb.queue("callbacks")
    assert _keys(q.claim_next("bob", 10)) == {2, 3, 5}
    assert _keys(q.claim_next("alice", 10)) == {1, 6}
    with pytest.raises(errors.NothingToClaim):
        q.claim_next("carol")


def test_the_claim_index_leaves_out_what_each_claim_tests(native_env: support.Env) -> None:
    wb = _callbacks(native_env)
    queue = wb.config.queues["callbacks"]
    with wb.engine.begin() as conn:
        plan = attach.plan(conn, queue, wb.config.path)
        ddl = attach.render(conn, plan)
        attach.apply(conn, plan)
    assert "status" in ddl and "follow_up_at" not in ddl and "assigned_to" not in ddl
    q = wb.queue("callbacks")
    assert _keys(q.claim_next("bob", 10)) == {2, 3, 5}  # the index serves the claim; the claim tests the rest


def _todo(native_env: support.Env, todo: str) -> model.Config:
    return native_env.load(
        CONFIG.split("[queues.callbacks.todo]")[0]
        + f"[queues.callbacks.todo]\n{todo}\n[queues.callbacks.outcomes.done]\n"
        'set = { status = "done" }\n'
    )


@pytest.mark.parametrize("backend", ["sqlite"])
@pytest.mark.parametrize(
    ("todo", "problem"),
    [
        ('status = "open"\nfollow_up_at = { eq = { now = true } }', "works with lt, le, gt, ge, not with eq"),
        ('status = "open"\nassigned_to = { lt = { user = true } }', "works with eq, ne, not with lt"),
        ('status = "open"\nfollow_up_at = { lt = { now = "yesterday" } }', "a sign moves it back"),
        ('status = "open"\nfollow_up_at = { lt = { when = true } }', "a table value must be one of"),
        ('status = "open"\nassigned_to = { or_null = true }', "or_null needs a test to widen"),
        ('status = "open"\nassigned_to = { null = true, or_null = true }', "remove or_null"),
        ('status = "open"\nassigned_to = { eq = "x", or_null = "yes" }', "expected true"),
    ],
)
def test_config_mistakes_are_named(native_env: support.Env, todo: str, problem: str) -> None:
    with pytest.raises(errors.ConfigError, match=problem):
        _todo(native_env, todo)


@pytest.mark.parametrize("backend", ["sqlite"])
def test_the_columns_must_hold_times_and_names(native_env: support.Env) -> None:
    wb = _callbacks(native_env)
    wrong = wb.config.queues["callbacks"]
    for todo, problem in (
        ('status = "open"\nsubject = { lt = { now = true } }', "date or date-time column"),
        ('status = "open"\nopened_at = { eq = { user = true } }', "cannot hold a user's name"),
    ):
        config = _todo(native_env, todo)
        assert config.queues["callbacks"].todo != wrong.todo
        with pytest.raises(errors.ConfigError, match=problem):
            native_env.open(config).queue("callbacks")


@pytest.mark.parametrize("backend", ["sqlite"])
def test_parsed_values(native_env: support.Env) -> None:
    config = _todo(
        native_env,
        'status = "open"\nfollow_up_at = { le = { now = "-1d2h" }, or_null = true }\n'
        "assigned_to = { ne = { user = true } }",
    )
    todo = {c.column: c for c in config.queues["callbacks"].todo}
    assert todo["follow_up_at"].value == model.Relative("now", -(86400 + 7200)) and todo["follow_up_at"].or_null
    assert todo["assigned_to"].value == model.Relative("user") and not todo["assigned_to"].or_null
    assert not todo["status"].dynamic and todo["follow_up_at"].dynamic
