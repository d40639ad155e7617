"""How one queue's writes are executed on its database: decided here, once per queue, for every operation.

The ways a claim or a write under a lock runs:

- SQL Server under `workbench grants`: the queue's procedures (procedures.py) do every write, with its
  audit row; operators may not write the table themselves (the way: _ByProcedures, below).
- PostgreSQL under `workbench grants`: the trusted claim and Complete functions (rules/pg_trusted.py), run as
  the table's owner for the calling login (the Complete's way: trusted.py; the claim's: claims/pg_trusted.py).
- PostgreSQL otherwise: the claim as a PL/pgSQL function where the login may create one
  (claims/pg_function.py, which says so once per statement), else the prepared one-statement fast
  path (fastpath.py), as claims/pg_next.py chooses for Next item; the writes without edits as one
  prepared statement, with their audit row (one_statement.py).
- MySQL/MariaDB: a Complete as one batch of statements (batches.py), one round trip (batch_writes.py).
- Everywhere else, and every write with edits: two steps in one transaction, the fenced UPDATE and
  its audit row (two_steps.py).

The service hands each queue its Enforcement when it binds the queue (Workbench.queue); the queue's
writer gets its ways from it then, in order (`ways`: each a writes.Way, the first that takes a write
runs it), its other operations their executor (`acts`: SQL Server's procedure, else their own
statements), and the claim methods ask it (`of`: `claim`, the trusted claim's login) instead of asking
the database. What the database tells later, that `workbench grants --revoke` removed a function or
procedure while workbench ran, or that a script was applied (SQL Server's procedures are asked again
every RECHECK_SECONDS while they are not there), is reported here and changes the answer for every
operation from then on.
"""

from __future__ import annotations

import datetime as dt
import enum
import threading
import typing
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import sqlalchemy as sa

from workbench.core import errors, models
from workbench.db import (
    batch_writes,
    connect,
    guarded,
    mapping,
    one_statement,
    trusted,
    two_steps,
    writes,
)
from workbench.db.rules import pg_names

T = TypeVar("T")


class Calls(typing.Protocol):
    """What the guarded writes and the claim call of a queue's SQL Server procedures (db/procedures.py's
    Procedures, which build on the guarded writes, which build on this module)."""

    def write(
        self,
        kind: models.EventKind,
        *,
        key: Any,
        token: str,
        user: str,
        edits: Mapping[str, Any] | None,
        reason: str | None,
        note: str | None,
        until: dt.datetime | None,
        outcome: str | None,
    ) -> Mapping[str, Any] | None: ...

    def claim(
        self, user: str, count: int, key: Any = None, where: tuple[tuple[str, Any], ...] = ()
    ) -> list[dict[str, Any]]: ...

    def act(self, conn: sa.Connection, act: writes.Act) -> list[dict[str, Any]]: ...


class ProceduresRevoked(errors.DatabaseUnavailable):
    """The queue's procedure is gone (`grants --revoke` while workbench ran): the claim and the
    guarded writes go on with workbench's own statements; other operations say to try again."""

    def __init__(self) -> None:
        super().__init__(
            "the queue's SQL Server procedures were removed (`workbench grants --revoke`) while "
            "workbench ran: try again"
        )


class Own(enum.Enum):
    """by_procedures' answer where workbench's own statements do the write."""

    STATEMENTS = "own statements"


OWN = Own.STATEMENTS

# How a queue's procedures are found on a database (db/procedures.py's `of`, which builds on this module).
ProceduresOf = Callable[[connect.Database, mapping.BoundQueue, "str | None"], "Calls | None"]
_known_lock = threading.Lock()


def of(
    db: connect.Database, q: mapping.BoundQueue, schema: str | None, procedures: ProceduresOf | None = None
) -> Enforcement:
    """`q`'s Enforcement on `db`: the one the service bound it with (made here for a queue bound by hand).
    `procedures`: how SQL Server's procedures are found (db/procedures.py's `of`), from whoever binds."""
    with _known_lock:
        per_db: dict[int, Enforcement] = db.kept.setdefault(__name__, {})
        found = per_db.get(id(q))
        if found is None or found.q is not q:
            found = per_db[id(q)] = Enforcement(db, q, schema, procedures)
        elif procedures is not None:
            found.procedures_of = procedures
        return found


def _not_handed_in(db: Any, q: Any, schema: str | None) -> Calls | None:
    raise RuntimeError(
        "SQL Server's procedures were not handed in: bind the queue's writes with enforcement.of(…, procedures.of)"
    )


class Enforcement:
    """The execution variant of one queue's writes on one database (see the module's text)."""

    def __init__(
        self, db: connect.Database, q: mapping.BoundQueue, schema: str | None, procedures: ProceduresOf | None = None
    ) -> None:
        self.db, self.q, self.schema = db, q, schema
        self.procedures_of = procedures or _not_handed_in  # asked only where the backend has procedures
        # One prepared statement per write (PostgreSQL, a lock kept in the row): the write and its
        # audit row in one round trip; else two steps in a transaction.
        self.one_statement = q.backend.one_statement_writes and q.shape.single_write
        # The trusted functions' login (None: not there, or this login may not call them), asked of
        # the database the first time an operation needs to know; forgotten when one goes away.
        self._trusted: dict[str, str | None] = {}

    def ways(self, writer: guarded.GuardedWriter) -> list[writes.Way]:
        """The ways `writer`'s writes run, in the order they are tried (see the module's text): chosen
        here once, from what the backend and the lock shape offer; what the database tells later
        (a function or procedure there or not, batches sent or not) each way asks itself."""
        ways: list[writes.Way] = []
        if self.q.backend.writes_by_procedures:
            ways.append(_ByProcedures(self))
        if self.one_statement:
            if self.q.backend.roles:
                ways.append(trusted.TrustedComplete(writer, self.trusted_complete, self.function_gone))
            ways.append(one_statement.OneStatement(writer))
        else:
            ways.append(batch_writes.BatchedComplete(writer, lambda: self.batches))
        ways.append(two_steps.TwoSteps(writer))
        return ways

    def claim(
        self, user: str, count: int, key: Any = None, where: tuple[tuple[str, Any], ...] = ()
    ) -> list[dict[str, Any]] | writes.Pass:
        """A claim (ClaimRequest's values) by the way this queue's writes run, where that way claims too: SQL
        Server's procedure under `workbench grants` (the rows it locked); PASS where the claim method's own
        statements claim (also when the procedures were removed while this process ran)."""
        if not self.q.backend.writes_by_procedures:
            return writes.PASS
        done = self.by_procedures(lambda calls: calls.claim(user, count, key, where))
        return writes.PASS if done is OWN else done

    def acts(self) -> writes.Acts:
        """The executor of the queue's other operations (undo, a note, a supervisor's): by SQL Server's
        procedures where the backend has them (asked on each act, as the writes ask), else by each
        operation's own statements."""
        return writes.Acts([_ByProcedures(self)] if self.q.backend.writes_by_procedures else [])

    @property
    def batches(self) -> bool:
        """Does the database take several statements in one round trip (MySQL/MariaDB)? The fast
        pool is made when first asked."""
        return bool(self.db.held.batches)

    # -- SQL Server's procedures --------------------------------------------------------------

    def procedures(self) -> Calls | None:
        """SQL Server under `workbench grants`: the queue's procedures, which alone may write (else None)."""
        return typing.cast("Calls | None", self.q.backend.procedures(self.procedures_of, self.db, self.q, self.schema))

    def by_procedures(self, run: Callable[[Calls], T]) -> T | Own:
        """`run(the queue's procedures)` where they do this queue's writes; OWN where workbench's own
        statements do, also when the procedures were removed (`grants --revoke`) while this process ran."""
        calls = self.procedures()
        if calls is None:
            return OWN
        try:
            return run(calls)
        except ProceduresRevoked:
            return OWN  # `grants --revoke` while this process ran: workbench's own statements

    # -- PostgreSQL's trusted functions -------------------------------------------------------

    def trusted_next(self) -> str | None:
        """The login the database's own claim of the next item runs for (None: workbench's statement)."""
        return self._asked("next", pg_names.callable_next)

    def trusted_complete(self) -> str | None:
        """The login the database's own Complete without edits runs for (None: workbench's statement)."""
        return self._asked("complete", pg_names.callable_complete)

    def ask_ahead(self) -> None:
        """Ask now what the claim and the Complete would ask the first time (the trusted functions)."""
        self.trusted_next()
        self.trusted_complete()

    def _asked(
        self, which: str, probe: Callable[[sa.Connection, mapping.BoundQueue, str | None], str | None]
    ) -> str | None:
        if not self.q.backend.roles:
            return None  # `workbench grants` installs functions on PostgreSQL only
        if which not in self._trusted:
            self._trusted[which] = self.db.read(lambda conn: probe(conn, self.q, self.schema))
        return self._trusted[which]

    def function_gone(self, exc: sa.exc.DBAPIError) -> bool:
        """Was `exc` a trusted function missing (`grants --revoke` while workbench ran)? Then every
        operation uses workbench's own statements from now on (the functions are asked about again)."""
        if not pg_names.is_missing_function(exc):
            return False
        self._trusted.clear()
        return True


class _ByProcedures:
    """writes.Way: SQL Server under `workbench grants`: the write by the queue's procedure, with its record;
    PASS where the procedures are not there, or were removed (`grants --revoke`) while this process ran."""

    def __init__(self, enforced: Enforcement) -> None:
        self.enforcement = enforced

    def takes(self, shape: writes.Shape) -> bool:
        return True

    def finish(self, shape: writes.Shape) -> None:
        return None  # no statement of workbench's own runs where the procedures do the writes

    def run(self, write: writes.Write) -> writes.Row | writes.Pass | None:
        done = self.enforcement.by_procedures(
            lambda calls: calls.write(
                write.shape.kind,
                key=write.key,
                token=write.token,
                user=write.user,
                edits=write.edits,
                reason=write.reason,
                note=write.note,
                until=write.until,
                outcome=write.shape.outcome,
            )
        )
        return writes.PASS if done is OWN else typing.cast("writes.Row | None", done)

    def act(self, conn: sa.Connection, act: writes.Act) -> list[writes.Row] | writes.Pass:
        calls = self.enforcement.procedures()
        if calls is None:
            return writes.PASS
        return typing.cast("list[writes.Row]", calls.act(conn, act))
