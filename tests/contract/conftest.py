"""The contract suite runs on one more backend: PostgreSQL through PgBouncer in transaction pooling
(tests/pooled.PooledEnv, `[database] pooler = "transaction"` in every config it writes). Every
workbench call goes through the pooler; the test's own look at the data (env.engine) goes direct."""

from __future__ import annotations

import pytest

from tests.conftest import BACKENDS, POOLED


@pytest.fixture(params=(*BACKENDS, POOLED))
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)
