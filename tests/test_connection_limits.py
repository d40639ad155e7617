"""A server with no connection free (max_connections, a login's CONNECTION LIMIT) is a database that
cannot be reached for now: retried quietly, never an "unexpected error" with the driver's text."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
import sqlalchemy as sa

from tests import support
from workbench import demo, services
from workbench.core import errors


@pytest.mark.parametrize("backend", ["postgresql"])
def test_no_connection_free_is_unreachable_for_now(native_env: support.Env) -> None:
    native_env.demo(case_rows=2, import_rows=1)
    login = f"wb_limited_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(native_env.url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f"CREATE ROLE {login} LOGIN CONNECTION LIMIT 1")
        conn.exec_driver_sql(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {login}")
    limited_url = sa.make_url(native_env.url).set(username=login).render_as_string(hide_password=False)
    holder = sa.create_engine(limited_url, poolclass=sa.pool.NullPool)
    try:
        with holder.connect():  # the login's one connection, held by another program
            limited = native_env.open(native_env.load(demo.config_text(limited_url)))
            with pytest.raises(errors.DatabaseUnavailable, match="no connection free for this login now"):
                limited.queue("cases").count_waiting(10)
    finally:
        holder.dispose()
        with admin.connect() as conn:
            conn.exec_driver_sql(f"DROP OWNED BY {login}")
            conn.exec_driver_sql(f"DROP ROLE {login}")
        admin.dispose()


def _read_paths(op: services.Operator, boss: services.Supervisor, key: Any) -> dict[str, Callable[[], Any]]:
    """What an idle window and a supervisor's console read, through the services they use."""
    return {
        "queue counts": op.queue_counts,
        "mine": lambda: op.mine("cases"),
        "item log": lambda: op.item_log("cases", key),
        "history": lambda: op.history("cases", key),
        "show": lambda: op.show("cases", key),
        "summaries": lambda: op.summaries("cases", [key]),
        "pick list": lambda: op.pick_list("cases"),
        "settings version": op.settings_version,
        "board": lambda: boss.board(["cases"]),
        "health": lambda: boss.health(["cases"]),
        "supervisor's item log": lambda: boss.item_log("cases", key),
        "operators": lambda: boss.operators(["cases"]),
    }


@pytest.mark.parametrize("backend", ["postgresql"])
def test_every_read_path_says_unreachable_when_no_connection_is_free(native_env: support.Env) -> None:
    wb = native_env.demo(case_rows=5, import_rows=1)
    key = services.Operator(wb, "bob").next_item("cases").lock.key  # a lock, an audit row: something to read
    admin = sa.create_engine(native_env.url)
    with admin.connect() as conn:
        limit = int(conn.exec_driver_sql("SHOW max_connections").scalar_one())
    wb2 = native_env.open(native_env.demo_config())
    op, boss = services.Operator(wb2, "alice"), services.Supervisor(wb2, "boss")
    paths = _read_paths(op, boss, key)
    for read in paths.values():  # each works while connections are free (and the queue is bound)
        read()
    wb2.db.dispose()
    # Every connection the server has taken by another program (the superuser's reserved ones too).
    hog = sa.create_engine(native_env.url, poolclass=sa.pool.NullPool)
    held = []
    try:
        for _ in range(limit + 1):
            try:
                held.append(hog.connect())
            except sa.exc.OperationalError:
                break
        assert len(held) < limit + 1, "the server kept accepting connections"
        failures = {}
        for name, read in paths.items():
            try:
                read()
                failures[name] = "answered"
            except errors.DatabaseUnavailable:
                pass
            except Exception as exc:  # noqa: BLE001 - what the test reports
                failures[name] = f"{type(exc).__name__}: {exc}"[:200]
        assert failures == {}
    finally:
        for conn in held:
            conn.close()
        hog.dispose()
        admin.dispose()
