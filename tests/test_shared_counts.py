"""The start page's counts are counted once per queue and interval for every window (issue 51,
db/counts.py), on every database: a thousand windows counting each for itself were most of the
server's work."""

from __future__ import annotations

import dataclasses
import time
import uuid
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy import event

from tests import support
from workbench import services
from workbench.db import clock, service, tables


def _counting(wb: service.Workbench) -> list[str]:
    """The queue tables' counts `wb` runs (not the counts table's reads)."""
    counted: list[str] = []

    @event.listens_for(wb.engine, "before_cursor_execute")
    def _statement(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if "count(" in statement.lower() and tables.COUNTS_TABLE not in statement:
            counted.append(statement)

    return counted


def _figures(operator: services.Operator) -> dict[str, tuple[int, int | None, int]]:
    return {c.queue: (c.waiting, c.overdue, c.deferred) for c in operator.queue_counts()}


def _age_counts(wb: service.Workbench, seconds: int) -> None:
    table = wb.counts.table
    with wb.engine.begin() as conn:
        conn.execute(sa.update(table).values(counted_at=clock.add_seconds(clock.db_now(), -seconds)))


def test_windows_share_one_count_per_queue_and_interval(native_env: support.Env) -> None:
    env = native_env
    first = env.demo(case_rows=12)
    windows = [env.open(env.demo_config()) for _ in range(4)]
    counted = [_counting(wb) for wb in (first, *windows)]
    # The first window counts for everyone; the others read its figures.
    expected = _figures(services.Operator(first, "ann"))
    one_round = len(counted[0])
    assert one_round and expected["cases"][0] > 1
    for i, wb in enumerate(windows, 1):
        assert _figures(services.Operator(wb, f"user{i}")) == expected
        assert counted[i] == [], f"window {i} counted for itself"
    # An item taken; within the interval every window still shows the figures counted.
    services.Operator(first, "ann").next_item("cases")
    before = sum(len(c) for c in counted)
    assert _figures(services.Operator(windows[0], "zoe"))["cases"] == expected["cases"]
    # The interval passed: of all the windows that look now, one counts again, for everyone.
    _age_counts(first, first.config.app.counts_every + 5)
    seen = [_figures(services.Operator(wb, f"again{i}")) for i, wb in enumerate((first, *windows))]
    assert sum(len(c) for c in counted) - before == one_round
    assert all(figures["cases"][0] == expected["cases"][0] - 1 for figures in seen), seen


@pytest.mark.parametrize("backend", ["postgresql"])
def test_a_login_refused_the_counts_table_counts_for_itself(native_env: support.Env) -> None:
    """A database set up by hand may not give a login the counts table: its start page is counted
    as before, by the window itself, instead of failing."""
    env = native_env
    admin = env.demo(case_rows=6)
    expected = _figures(services.Operator(admin, "ann"))
    login = f"wbt_nocounts_{uuid.uuid4().hex[:8]}"
    with admin.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.exec_driver_sql(f'CREATE ROLE "{login}" LOGIN')
        conn.exec_driver_sql(f'GRANT ALL ON ALL TABLES IN SCHEMA public TO "{login}"')
        conn.exec_driver_sql(f'GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO "{login}"')
        conn.exec_driver_sql(f'REVOKE ALL ON {tables.COUNTS_TABLE} FROM "{login}"')
    try:
        url = sa.make_url(env.url).set(username=login).render_as_string(hide_password=False)
        config = env.demo_config()
        wb = env.open(dataclasses.replace(config, database=dataclasses.replace(config.database, url=url)))
        counted = _counting(wb)
        assert _figures(services.Operator(wb, "bob")) == expected
        assert counted and not wb.counts.shared
        wb.close()
    finally:
        with admin.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.exec_driver_sql(f'DROP OWNED BY "{login}"')
            conn.exec_driver_sql(f'DROP ROLE "{login}"')


def test_figures_another_window_counted_are_kept_only_for_what_is_left_of_the_interval(
    native_env: support.Env,
) -> None:
    """`counts_every` stays the ceiling: figures read when they were already nearly that old are
    counted again when the interval ends, not a whole interval after they were read."""
    env = native_env
    first = env.demo(case_rows=6)
    services.Operator(first, "ann").queue_counts()
    other = env.open(env.demo_config())
    counted = _counting(other)
    _age_counts(first, first.config.app.counts_every - 1)
    window = services.Operator(other, "bob")
    window.queue_counts()
    assert counted == []  # read, not counted: another window counted them 29 s ago
    time.sleep(1.5)
    window.queue_counts()
    assert counted, "the same window kept figures older than counts_every"
