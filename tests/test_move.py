"""A supervisor's bulk move: waiting items nobody holds get new values (another category, tier, queue);
held and finished items are left alone; each move is in the item's history with before and after."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa

from tests import support
from workbench.core import errors, models
from workbench.db.supervision import Supervision

OPEN = {"cases": {"max_locks_per_user": 0, "release_cooldown_seconds": 0}}


def _categories(env: support.Env, wb: Any) -> dict[Any, str]:
    q = wb.queue("cases").q
    with wb.engine.connect() as conn:
        return dict(conn.execute(sa.select(q.key, q.table.c.category)).all())


def test_every_waiting_item_of_a_value_moves_and_held_ones_stay(native_env: support.Env) -> None:
    env = native_env
    wb = env.demo(case_rows=40, import_rows=1, queues=OPEN)
    q = wb.queue("cases")
    before = _categories(env, wb)
    waiting = {item["case_id"] for item in q.open_items(500)}
    category = max({before[k] for k in waiting}, key=lambda c: sum(before[k] == c for k in waiting))
    held = next(c for c in q.claim_next("ann", 40) if before[c.lock.key] == category)
    for other in q.mine("ann"):
        if other.key != held.lock.key:
            q.release("ann", other.key, other.token)
    held_key = held.lock.key
    target = "Printing" if category != "Printing" else "Email"
    moved = Supervision(q).move("sue", {"category": target}, "level 2 takes these", where={"category": category})
    expected = sorted(k for k in waiting if before[k] == category and k != held_key)
    assert moved == expected and moved
    after = _categories(env, wb)
    assert all(after[k] == target for k in moved)
    assert all(after[k] == before[k] for k in after if k not in moved)  # held, finished, other values: as they were
    event = q.history(moved[0])[-1]
    assert (event.kind, event.actor, event.reason) == (models.EventKind.MOVE, "sue", "level 2 takes these")
    assert event.detail["changes"] == {"category": [category, target]}
    # The holder's lock and Complete are untouched by the move.
    q.complete("ann", held_key, held.lock.token, None, {"resolution": "done"})


def test_named_items_move_only_while_they_wait_unheld(native_env: support.Env) -> None:
    env = native_env
    wb = env.demo(case_rows=12, import_rows=1, queues=OPEN)
    q = wb.queue("cases")
    waiting = [item["case_id"] for item in q.open_items(500)]
    held = q.claim("bob", waiting[0])
    finished = next(k for k in _categories(env, wb) if k not in waiting)
    moved = Supervision(q).move(
        "sue", {"priority": "1"}, "urgent after the outage", keys=[waiting[0], waiting[1], finished, str(waiting[2])]
    )
    assert moved == sorted([waiting[1], waiting[2]])
    assert env.row(wb, "cases", waiting[1])["priority"] == 1
    assert env.row(wb, "cases", waiting[0])["wb_locked_by"] == "bob" and held.lock.key == waiting[0]


@pytest.mark.parametrize("backend", ["sqlite"])
@pytest.mark.parametrize(
    ("changes", "where", "keys", "problem"),
    [
        ({}, {"category": "Network"}, None, "say what to change"),
        ({"category": "Email"}, {}, None, "name the items to move"),
        ({"category": "Escalated"}, {"category": "Network"}, None, "category: must be one of"),
        ({"case_id": 5}, {"category": "Network"}, None, "--set case_id: a move cannot use it: it is the key"),
        ({"wb_locked_by": "x"}, {"category": "Network"}, None, "it holds the lock"),
        ({"categroy": "Email"}, {"category": "Network"}, None, "did you mean 'category'"),
        ({"priority": "high"}, {"category": "Network"}, None, "priority"),
        ({"category": "Email"}, {"category": ""}, None, "give a value to select by"),
    ],
)
def test_mistakes_are_named_and_nothing_moves(
    native_env: support.Env, changes: Any, where: Any, keys: Any, problem: str
) -> None:
    wb = native_env.demo(case_rows=10, import_rows=1, queues=OPEN)
    before = _categories(native_env, wb)
    with pytest.raises((errors.UsageError, errors.InvalidValue), match=problem):
        wb.supervision("cases").move("sue", changes, "why", keys=keys, where=where)
    with pytest.raises(errors.UsageError, match="say why"):
        wb.supervision("cases").move("sue", {"category": "Email"}, " ", where={"category": "Network"})
    assert _categories(native_env, wb) == before


@pytest.mark.parametrize("backend", ["sqlite"])
def test_only_supervisors_move_once_roles_are_set(native_env: support.Env, capsys: Any) -> None:
    env = native_env
    wb = env.demo(case_rows=10, import_rows=1, queues=OPEN)
    config = env.demo_config_file()
    assert support.run_cli(capsys, "--config", config, "--user", "sue", "role", "grant", "sue", "supervisor")[0] == 0
    code, _, err = support.run_cli(
        capsys,
        "--config",
        config,
        "--user",
        "ann",
        "move",
        "cases",
        "--where",
        "category=Network",
        "--set",
        "category=Email",
        "--reason",
        "why",
    )
    assert code != 0 and "ann may not move items of cases" in err
    code, out, _ = support.run_cli(
        capsys,
        "--config",
        config,
        "--user",
        "sue",
        "move",
        "cases",
        "--where",
        "category=Network",
        "--set",
        "priority=4",
        "--reason",
        "quiet week",
        "--json",
    )
    assert code == 0 and out["moved"] and all(env.row(wb, "cases", k)["priority"] == 4 for k in out["moved"])
    code, text, _ = support.run_cli(
        capsys,
        "--config",
        config,
        "--user",
        "sue",
        "move",
        "cases",
        "999999",
        "--set",
        "priority=4",
        "--reason",
        "quiet week",
    )
    assert code == 0 and "moved 0 item(s) of cases; none was waiting unheld as named" in text


def test_a_lock_table_queue_keeps_its_held_items(native_env: support.Env) -> None:
    from tests.contract import test_lock_table

    wb = test_lock_table._tickets(native_env, rows=5)
    q = wb.queue("tickets")
    held = q.claim_next("ann")[0].lock.key
    moved = Supervision(q).move("sue", {"priority": 3}, "reprioritised", where={"state": "open"})
    assert moved == [k for k in range(1, 6) if k != held]
    assert native_env.row(wb, "tickets", held)["priority"] == 1
    assert all(native_env.row(wb, "tickets", k)["priority"] == 3 for k in moved)


def test_a_move_that_would_finish_items_is_refused(native_env: support.Env) -> None:
    wb = native_env.demo(case_rows=6, import_rows=1)
    q = wb.queue("cases")
    waiting = sorted(item["case_id"] for item in q.open_items(50))[:2]
    before = [native_env.row(wb, "cases", key)["status"] for key in waiting]
    with pytest.raises(errors.UsageError, match="status=resolved would take waiting items of cases out of its work"):
        Supervision(q).move("sue", {"status": "resolved"}, "clean-up", keys=waiting)
    assert [native_env.row(wb, "cases", key)["status"] for key in waiting] == before
    assert Supervision(q).move("sue", {"status": "new"}, "back to the start", keys=waiting) == sorted(waiting)
