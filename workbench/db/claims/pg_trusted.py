"""PostgreSQL under `workbench grants`: Next item as the database's trusted claim function (rules/pg_trusted.py), the
one-statement claim run as the table's owner for the login that calls it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

import sqlalchemy as sa

from workbench.db import audit as audit_mod
from workbench.db import connect, fastpath, mapping, roles, writes
from workbench.db.claims import base
from workbench.db.rules import pg_names


class Builds(Protocol):
    """The one-statement claim (postgresql.SkipLockedClaim, which hands itself): the function runs its statement."""

    def _build(
        self,
        q: mapping.BoundQueue,
        trail: audit_mod.AuditTrail,
        request: base.ClaimRequest,
        count: int,
        check_limit: bool,
        *,
        user: Any = None,
        table_row: bool = False,
        after: sa.CTE | None = None,
    ) -> sa.Select[Any]: ...


def statement(method: Builds, q: mapping.BoundQueue, trail: audit_mod.AuditTrail) -> sa.Select[Any]:
    """The claim of the next item as `workbench grants` installs it in the database: run as the
    table's owner, for the login that calls it (session_user), returning the queue's row."""
    login = sa.cast(sa.func.session_user(), sa.String())
    request = base.ClaimRequest(user="", count=1)
    return method._build(q, trail, request, 1, bool(q.config.max_locks_per_user), user=login, table_row=True)


class TrustedClaim:
    """The trusted claim's call, prepared (pg_next.Call): it claims for its login only. From the moment
    the function is gone (`grants --revoke` while this process ran) it raises writes.Gone, and the
    claim is chosen again."""

    def __init__(
        self,
        db: connect.Database,
        q: mapping.BoundQueue,
        schema: str | None,
        login: str,
        gone: Callable[[sa.exc.DBAPIError], bool],
    ) -> None:
        """`gone`: was an error the function missing (Enforcement.function_gone)?"""
        self.login, self._gone = login, gone
        self._fast = fastpath.FastStatement(
            db.held, pg_names.next_call(db.held.engine.dialect, q, schema), {"wb_user": login}
        )

    @property
    def columns(self) -> list[str]:
        return self._fast.columns

    def rows(self, values: Mapping[Any, Any]) -> list[tuple[Any, ...]]:
        user = values["wb_user"]
        if user != self.login:
            # The trusted claim locks under the login; another workbench name cannot use it.
            raise roles.login_mismatch_error(user, self.login)
        try:
            return self._fast.rows(values)
        except sa.exc.DBAPIError as exc:
            if not self._gone(exc):
                raise
            raise writes.Gone() from exc
