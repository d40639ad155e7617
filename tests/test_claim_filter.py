"""Claim-time filters: `next QUEUE --where COL=VALUE` serves only items whose column holds the value,
in queue order, on every database and claim method; only the queue's `filter_by` columns."""

from __future__ import annotations

import collections
from typing import Any

import pytest
import sqlalchemy as sa

from tests import support
from workbench.core import errors

FILTERED = {"cases": {"filter_by": ("category",), "max_locks_per_user": 0, "release_cooldown_seconds": 0}}


def _waiting_by_category(env: support.Env, wb: Any) -> dict[str, list[Any]]:
    q = wb.queue("cases")
    found: dict[str, list[Any]] = collections.defaultdict(list)
    for item in q.open_items(500):
        found[item["category"]].append(item["case_id"])
    return found


def test_only_items_of_the_value_in_queue_order(env: support.Env) -> None:
    wb = env.demo(case_rows=40, import_rows=1, queues=FILTERED)
    q = wb.queue("cases")
    waiting = _waiting_by_category(env, wb)
    order = [item["case_id"] for item in q.open_items(500)]
    category = max(waiting, key=lambda c: len(waiting[c]))
    other = next(c for c in waiting if c != category)
    got = [q.claim_next("ann", where={"category": category})[0].lock.key for _ in range(2)]
    # The same statement with another value (statements are built once per filter's columns).
    got.append(q.claim_next("bob", where={"category": other})[0].lock.key)
    several = q.claim_next("carla", 2, where={"category": category})
    got += [c.lock.key for c in several]
    assert all(c.item["category"] == category for c in several)
    if env.method == "native":  # in queue order; the portable method spreads claimers over the first few
        assert got == [*waiting[category][:2], waiting[other][0], *waiting[category][2:4]]
    else:
        assert set(got) <= {*waiting[category], *waiting[other]} and len(set(got)) == 5
        assert got[2] in waiting[other]
    with pytest.raises(errors.NothingToClaim, match="nothing to do in cases with category=Plumbing"):
        q.claim_next("ann", where={"category": "Plumbing"})
    # Without a filter the queue's head is served as ever: the first items nobody took.
    rest = [k for k in order if k not in got]
    assert q.claim_next("dev")[0].lock.key in (rest[:1] if env.method == "native" else rest)


def test_the_values_waiting_items_hold_and_refusals(native_env: support.Env) -> None:
    wb = native_env.demo(case_rows=30, import_rows=1, queues=FILTERED)
    q = wb.queue("cases")
    waiting = _waiting_by_category(native_env, wb)
    choices = q.filter_choices()
    assert set(choices) == {"category"} and sorted(choices["category"]) == sorted(waiting)
    counts = [len(waiting[c]) for c in choices["category"]]
    assert counts == sorted(counts, reverse=True)  # the most common first
    with pytest.raises(errors.UsageError, match=r"cannot be narrowed by 'priority' \(columns it can: category\)"):
        q.claim_next("ann", where={"priority": "1"})
    with pytest.raises(errors.UsageError, match="give a value"):
        q.claim_next("ann", where={"category": None})
    plain = wb.queue("imports")
    with pytest.raises(errors.UsageError, match="none: set filter_by"):
        plain.claim_next("ann", where={"vendor": "x"})


def test_a_filter_column_must_exist(native_env: support.Env) -> None:
    wb = native_env.demo(case_rows=2, import_rows=1, queues={"cases": {"filter_by": ("kategorie",)}})
    with pytest.raises(errors.ConfigError, match="filter_by"):
        wb.queue("cases")


def test_the_command_line_narrows_next(native_env: support.Env, capsys: Any) -> None:
    env = native_env
    wb = env.demo(case_rows=20, import_rows=1, queues=FILTERED)
    waiting = _waiting_by_category(env, wb)
    category = max(waiting, key=lambda c: len(waiting[c]))
    config = env.demo_config_file()  # the demo's cases can be narrowed by category
    code, out, _ = support.run_cli(
        capsys, "--config", config, "--user", "ann", "next", "cases", "--where", f"category={category}", "--json"
    )
    assert code == 0 and out["item"]["category"] == category and out["key"] == waiting[category][0]
    code, _, err = support.run_cli(
        capsys, "--config", config, "--user", "ann", "next", "cases", "--where", "category=A", "--where", "category=B"
    )
    assert code == 2 and "--where category is given twice" in err


def test_queues_whose_locks_live_in_a_lock_table_are_narrowed_the_same(native_env: support.Env) -> None:
    from tests.contract import test_lock_table

    config = test_lock_table.CONFIG.replace('created = "opened_at"', 'created = "opened_at"\nfilter_by = ["subject"]')
    wb = test_lock_table._tickets(native_env, rows=6, config=config)
    q = wb.queue("tickets")
    got = q.claim_next("ann", where={"subject": "Ticket 4"})
    assert [c.item["subject"] for c in got] == ["Ticket 4"]
    with wb.engine.connect() as conn:
        locks = q.q.shape.locks
        assert conn.execute(sa.select(sa.func.count()).select_from(locks)).scalar() == 1
