"""Open items per hour, rebuilt from arrivals and completions: checked against a count made by hand."""

from __future__ import annotations

import datetime as dt

import pytest
import sqlalchemy as sa

from tests import support
from workbench.db.supervision import Supervision


@pytest.mark.parametrize("backend", ["sqlite", "postgresql", "mariadb"])
def test_open_items_per_hour(native_env: support.Env, backend: str) -> None:
    wb = native_env.demo(case_rows=40, import_rows=5)
    q = wb.queue("cases")
    start = q.db_clock().today_start
    hours = Supervision(q).open_per_hour(start)
    assert hours is not None and len(hours) >= 1
    last_hour = hours[-1][0]
    # Three cases arrive in the current hour; two are completed now.
    table, created = q.q.table, q.q.created
    waiting = [c.lock.key for c in q.claim_next("ann", 5)]
    naive_hour = last_hour.replace(tzinfo=None)
    with wb.engine.begin() as conn:
        conn.execute(sa.update(table).where(q.q.key.in_(waiting[:3])).values({created.name: naive_hour}))
    for claim in q.mine("ann")[:2]:
        q.complete("ann", claim.key, claim.token, "resolved", {})
    result = dict(Supervision(q).open_per_hour(start))
    health = Supervision(q).health()
    assert result[last_hour] == health.waiting + health.locked  # now
    if len(hours) > 1:  # not just after midnight: the hour before had the two completed, not the three new
        with wb.engine.connect() as conn:
            arrived = conn.execute(sa.select(sa.func.count()).select_from(table).where(created >= naive_hour)).scalar()
        before = last_hour - dt.timedelta(hours=1)
        assert arrived >= 3
        assert result[before] == result[last_hour] + 2 - arrived
    # A queue without `created` cannot tell.
    assert wb.supervision("imports").open_per_hour(start) is None
