"""A server with no connection free (max_connections, a login's CONNECTION LIMIT) is a database that
cannot be reached for now: retried quietly, never an "unexpected error" with the driver's text."""

from __future__ import annotations

import uuid

import pytest
import sqlalchemy as sa

from tests import support
from workbench import demo
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
