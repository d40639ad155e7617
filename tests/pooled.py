"""A PostgreSQL test database reached through PgBouncer in transaction pooling (the `pooled_env` fixture's)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import sqlalchemy as sa

from tests import servers, support


class PooledEnv(support.Env):
    """A fresh PostgreSQL database reached through PgBouncer in transaction pooling, with
    `[database] pooler = "transaction"` in every config it writes; `direct_url` bypasses the pooler.
    Its `backend` is "postgresql": a test treats it as PostgreSQL everywhere."""

    pooler = "transaction"  # in every config it writes (config_text)
    demo_by_method = True  # init makes the claim method's function in the database (Workbench._prepare_claims)

    def __init__(
        self, bouncer: servers.PgBouncer, database: str, tmp: Path, method: str = "native", templates: bool = True
    ) -> None:
        # On the server behind the pooler, env.demo() copies a template database (support.Env.copy_template).
        super().__init__("postgresql", method, bouncer.url(database), tmp, bouncer.server if templates else None)
        self.bouncer, self.database = bouncer, database
        self.direct_url = bouncer.server.url(database)
        self.engine.dispose()
        self.engine = sa.create_engine(self.direct_url)  # the test's own look at the data

    def config_text(self, text: str) -> str:
        return super().config_text(text).replace("[database]\n", f'[database]\npooler = "{self.pooler}"\n', 1)

    def template_env(self, database: str, tmp: Path) -> PooledEnv:
        """A template is built through the pooler, as the test would have built its database."""
        return PooledEnv(self.bouncer, database, tmp, self.method, templates=False)

    def copy_template(self, *args: Any, **kwargs: Any) -> bool:
        """As support.Env's; a copy's pool then holds its sessions, as the pooled build left them (the test
        meets transactions lent in turn on several sessions, not all on one)."""
        copied = super().copy_template(*args, **kwargs)
        if copied:
            self.bouncer.fill(self.database)
        return copied

    def let_go(self, database: str) -> None:
        """The pooler closes its sessions on the template (KILL: and opens none again, for the pool is
        paused until a RESUME that never comes), for a database with sessions cannot be copied."""
        self.bouncer.console(f"KILL {database}")
