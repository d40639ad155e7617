"""The start page's counts are read at most once per `[app] counts_every`, not after every Complete
(issue 42: with next-after-complete off they cost the server more than the claims and Completes)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

import pytest
import sqlalchemy as sa

from tests import support
from workbench import services
from workbench.config import model
from workbench.services import door


def _counting(engine: sa.Engine) -> list[str]:
    """The statements that count rows, as the engine runs them."""
    seen: list[str] = []

    @sa.event.listens_for(engine, "before_cursor_execute")
    def _seen(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if statement.lstrip().lower().startswith("select count("):
            seen.append(statement)

    return seen


def _operator(env: support.Env, counts_every: int) -> services.Operator:
    env.demo(case_rows=40, import_rows=5)
    config = env.demo_config()
    wb = env.open(dataclasses.replace(config, app=model.AppConfig(counts_every=counts_every)))
    return services.Operator(wb, "alice")


@pytest.mark.parametrize("backend", ["postgresql"])
def test_counts_after_every_complete_are_read_once_per_period(native_env: support.Env) -> None:
    op = _operator(native_env, counts_every=3600)
    first = {c.queue: c for c in op.queue_counts()}
    seen = _counting(door.engine(op.database).engine)
    for _ in range(5):
        claim = op.next_item("cases")
        op.complete(claim.lock)
        counts = {c.queue: c for c in op.queue_counts()}  # the start page, after each Complete
    assert seen == []  # within the period: no count ran again
    assert counts["cases"].waiting == first["cases"].waiting - 5  # as counted, less this user's own claims
    assert counts["cases"].mine == 0  # the user's own locks are always current


@pytest.mark.parametrize("backend", ["postgresql"])
def test_counts_every_zero_counts_each_time(native_env: support.Env) -> None:
    op = _operator(native_env, counts_every=0)
    first = {c.queue: c for c in op.queue_counts()}
    seen = _counting(door.engine(op.database).engine)
    op.next_item("cases")
    counts = {c.queue: c for c in op.queue_counts()}
    assert seen and counts["cases"].mine == 1 and counts["cases"].waiting == first["cases"].waiting - 1


@pytest.mark.parametrize("backend", ["postgresql"])
def test_the_users_own_claims_releases_and_deferrals_show_without_counting(native_env: support.Env) -> None:
    op = _operator(native_env, counts_every=3600)
    before = {c.queue: c for c in op.queue_counts()}["cases"]
    seen = _counting(door.engine(op.database).engine)
    first, second = op.next_item("cases"), op.next_item("cases")
    op.release(first.lock)
    until = door.engine(op.database).queue("cases").db_clock().utc.replace(tzinfo=dt.UTC) + dt.timedelta(days=1)
    op.defer(second.lock, until, "customer calls back")
    after = {c.queue: c for c in op.queue_counts()}["cases"]
    assert (after.waiting, after.deferred) == (before.waiting - 1, before.deferred + 1)
    assert seen == []
