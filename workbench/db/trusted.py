"""The way a Complete without edits runs under `workbench grants` on PostgreSQL: the database's own trusted function."""

from __future__ import annotations

import typing
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa

from workbench.db import fastpath, guarded, one_statement, roles, writes
from workbench.db.rules import pg_names

_ASK = object()  # the login not asked yet


class TrustedComplete:
    """writes.Way: the trusted Complete function (db/rules/pg_trusted.py), the same statement run as the table's
    owner for the login it was made for; PASS (the plain statement) where it is not there, and from the
    moment it went away (`grants --revoke` while this process ran)."""

    def __init__(
        self, writer: guarded.GuardedWriter, login: Callable[[], str | None], gone: Callable[[sa.exc.DBAPIError], bool]
    ) -> None:
        """`login`: the login the function completes for (None: not there), asked when first needed;
        `gone`: was an error the function missing (Enforcement.trusted_complete, .function_gone)?"""
        self.w, self._ask, self._function_gone = writer, login, gone
        self._login: Any = _ASK  # asked of the database the first time a Complete needs to know
        self._gone = False
        self._fast: dict[writes.Shape, fastpath.FastStatement] = {}

    def takes(self, shape: writes.Shape) -> bool:
        return shape.finishes and one_statement.takes(shape)

    def _callable(self) -> str | None:
        if self._gone:
            return None
        if self._login is _ASK:
            self._login = self._ask()
        return typing.cast("str | None", self._login)

    def finish(self, shape: writes.Shape) -> writes.Pass | None:
        """None: the function does the Complete, no statement of the claim's may; PASS where it is not there."""
        return writes.PASS if self._callable() is None else None

    def run(self, write: writes.Write) -> writes.Row | writes.Pass | None:
        login = self._callable()
        if login is None:
            return writes.PASS
        if write.user != login:  # the function completes for the login only
            raise roles.login_mismatch_error(write.user, login)
        fast = self._fast.get(write.shape)
        if fast is None:
            db = self.w.db
            fast = self._fast[write.shape] = fastpath.FastStatement(
                db.held,
                pg_names.complete_call(db.held.engine.dialect, self.w.q, self.w.trail.table.schema),
                {"wb_key": None, "wb_token": "", "wb_outcome": ""},
            )
        try:
            rows = fast.rows({"wb_key": write.key, "wb_token": str(write.token), "wb_outcome": write.shape.outcome})
        except sa.exc.DBAPIError as exc:
            if not self._function_gone(exc):
                raise
            self._gone = True  # `grants --revoke` while this process ran: the plain statement from now on
            return writes.PASS
        return {"wb_now": rows[0][0]} if rows else None
