"""PostgreSQL's Next item: the way its claim runs for a queue, chosen the first time it claims there (then kept):
under `workbench grants` the database's trusted claim (pg_trusted.py); else the connection's own PL/pgSQL
function, where the login may make one (pg_function.py); else the one prepared statement (postgresql.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

import sqlalchemy as sa

from workbench.db import audit as audit_mod
from workbench.db import connect, enforcement, mapping
from workbench.db.claims import base, pg_function, pg_trusted


class Call(Protocol):
    """A claim's call, however it runs: the rows it answers for the values, their columns' names."""

    @property
    def columns(self) -> list[str]: ...

    def rows(self, values: Mapping[Any, Any]) -> list[tuple[Any, ...]]: ...


def call(
    method: pg_function.Pieces,
    db: connect.Database,
    q: mapping.BoundQueue,
    trail: audit_mod.AuditTrail,
    request: base.ClaimRequest,
    check_limit: bool,
    statement: pg_function.Statement,
    *,
    exact_time: bool,
) -> Call:
    """Next item's claim of `request.count` items: `statement()` (the one prepared statement) for several;
    for one, the trusted claim where the login may call it and the lock time is kept as the claim's time
    (`exact_time`: the trusted function returns the queue's row, no clock reading), else the function."""
    if request.count != 1:
        return statement()
    if exact_time:
        enforced = enforcement.of(db, q, trail.table.schema)
        login = enforced.trusted_next()
        if login is not None:
            return pg_trusted.TrustedClaim(db, q, trail.table.schema, login, enforced.function_gone)
    return pg_function.next_claim(method, db, q, trail, request, check_limit, statement)


def after_finish(
    method: pg_function.Pieces,
    db: connect.Database,
    q: mapping.BoundQueue,
    trail: audit_mod.AuditTrail,
    request: base.ClaimRequest,
    check_limit: bool,
    statement: pg_function.Statement,
    finish: sa.Select[Any],
) -> Call | None:
    """The claim of the next item after `finish` (a Complete's statement) in one call; None under
    `workbench grants`, where the claim is the database's own function."""
    if enforcement.of(db, q, trail.table.schema).trusted_next() is not None:
        return None
    return pg_function.next_claim(method, db, q, trail, request, check_limit, statement, finish)


def prepare(
    method: pg_function.Pieces, db: connect.Database, q: mapping.BoundQueue, trail: audit_mod.AuditTrail
) -> None:
    """Through a transaction pooler Next item's claim function is a permanent object, made here by the
    owner running init, so that logins that may not create it find it (pg_function.py)."""
    if connect.pooled(db.engine) and q.shape.all_in_row:
        request = base.ClaimRequest(user="", count=1)
        pg_function.install(method, db, q, trail, request, bool(q.config.max_locks_per_user))
