"""SQL Server under `workbench grants`: a queue's operations as calls of its procedures (rules/mssql_script.py).

With the script applied, operators may read the queue table but not write it; every change goes
through one procedure per operation, which runs as the owner for the calling login. The engine
calls them where it would otherwise run its own statements: the claim (claims/mssql.py), the
guarded writes (guarded.py) and the queue's other operations (workqueue.py). What each procedure
answers is what the engine's own statement would: the row's lock as BoundQueue.lock_from_row
reads it, no row when the caller's lock is gone.

No SQL Server runs here: tests/test_mssql_procedures.py checks the calls against the script's text.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import re
import threading
import time
import typing
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa

from workbench.core import errors, models, problems, workflow
from workbench.db import connect, enforcement, mapping, roles, writes
from workbench.db.backends import mssql as mssql_backend
from workbench.db.rules import mssql_parts, mssql_script

# SQL Server's ODBC drivers end a server message with its number and the ODBC call:
# "[42000] [Microsoft][ODBC Driver 18 for SQL Server][SQL Server]workbench: … (50403) (SQLExecDirectW)".
_NUMBERED = re.compile(r"\[SQL Server\](?P<text>[^\[]*?)\s*\((?P<number>\d+)\)\s*\(SQL\w+\)")
MISSING = 2812  # "Could not find stored procedure": `workbench grants --revoke` while workbench ran
DENIED = 229  # "The EXECUTE permission was denied": an operator calling a supervisor's procedure
# The types the procedures' parameters are bound with (the key: the key column's own).
_TYPES: Mapping[str, sa.types.TypeEngine[Any]] = {
    "p_token": sa.Unicode(64),
    "p_edits": sa.UnicodeText(),
    "p_reason": sa.Unicode(),
    "p_outcome": sa.Unicode(100),
    "p_note": sa.UnicodeText(),
    "p_text": sa.UnicodeText(),
    "p_to": sa.Unicode(128),
    "p_until": sa.DateTime(),
    "p_changes": sa.UnicodeText(),
}
RECHECK_SECONDS = 60.0
_known_lock = threading.Lock()
Revoked = enforcement.ProceduresRevoked  # the claim and the guarded writes, below this module, catch it there


def of(db: connect.Database, q: mapping.BoundQueue, schema: str | None) -> Procedures | None:
    """`q`'s procedures on `db`, if the script is applied and this login may call them; else None."""
    if not (q.shape.all_in_row and q.shape.token_in_row):
        return None  # the script covers these shapes only (mssql_script.script)
    with _known_lock:
        per_db: dict[int, Procedures] = db.kept.setdefault(__name__, {})
        found = per_db.get(id(q))
        if found is None or found.q is not q:
            found = per_db[id(q)] = Procedures(db, q, schema or "dbo")
    return found if found.login() is not None else None


def error_number(exc: BaseException) -> tuple[int, str] | None:
    """SQL Server's error number and message in a driver's exception, or None."""
    found = _NUMBERED.search(str(getattr(exc, "orig", None) or exc))
    return (int(found["number"]), found["text"].strip()) if found else None


def edits_json(q: mapping.BoundQueue, values: Mapping[str, Any]) -> str:
    """Edits as the procedures take them: one JSON object, column name -> value as text SQL Server
    CASTs back to the column's type (times to the millisecond: DATETIME takes no more digits)."""

    def plain(name: str, value: Any) -> Any:
        if isinstance(value, dt.datetime):
            if value.tzinfo is not None and "OFFSET" not in str(q.table.c[name].type).upper():
                value = value.astimezone(dt.UTC).replace(tzinfo=None)
            return value.isoformat(timespec="milliseconds" if value.microsecond else "seconds")
        if isinstance(value, (dt.date, dt.time)):
            return value.isoformat()
        if isinstance(value, decimal.Decimal):
            return str(value)
        if isinstance(value, (bytes, bytearray)):
            raise errors.InvalidValue(f"{name}: binary values cannot be edited under `workbench grants` on SQL Server")
        return value

    return json.dumps({name: plain(name, value) for name, value in values.items()}, ensure_ascii=False)


class Procedures:
    """One queue's procedures, called through one database's connections."""

    def __init__(self, db: connect.Database, q: mapping.BoundQueue, schema: str) -> None:
        self.db, self.q = db, q
        made = mssql_script.procedures(db.engine.dialect, q, schema)
        self.parameters = {operation: parameters for operation, (_, parameters) in made.items()}
        self.calls = {operation: call_statement(q, name, parameters) for operation, (name, parameters) in made.items()}
        self._next_name = made["next"][0]
        self._filters = {name: column.name for name, column in mssql_parts.filter_parameters(q).items()}
        self._login: str | None = None
        self._checked: float | None = None  # when the database was last asked (time.monotonic)

    def login(self) -> str | None:
        """This login, if the queue's procedures are there and it may call the claim's; else None.
        Asked once while they are, again after one went away, and every RECHECK_SECONDS while they
        are not: a script applied while workbench runs is used from then on."""
        now = time.monotonic()
        if self._checked is None or (self._login is None and now - self._checked > RECHECK_SECONDS):
            self._login = self.db.read(self._callable)
            self._checked = now
        return self._login

    def _callable(self, conn: sa.Connection) -> str | None:
        may, login = conn.execute(
            sa.text(
                "SELECT CASE WHEN OBJECT_ID(:name, 'P') IS NOT NULL AND HAS_PERMS_BY_NAME(:name, 'OBJECT', 'EXECUTE') = 1 "  # noqa: E501
                "THEN 1 ELSE 0 END, ORIGINAL_LOGIN()"
            ),
            {"name": self._next_name},
        ).one()
        return str(login) if may == 1 else None

    def for_user(self, user: str) -> str:
        """The login the procedures act for, which must be `user`: they take it from the connection."""
        login = self.login()
        if login is None:
            raise Revoked()
        if user != login:
            raise roles.login_mismatch_error(user, login)
        return login

    # -- calls --------------------------------------------------------------------------------

    def run(
        self,
        conn: sa.Connection,
        operation: str,
        values: Mapping[str, Any],
        *,
        action: errors.Phrase | None = None,
        user: str | None = None,
    ) -> list[dict[str, Any]]:
        """The rows the procedure answers; [] when the caller's lock was not there any more."""
        statement = self.calls.get(operation)
        if statement is None:
            raise errors.UsageError(
                f"queue {self.q.name}: the SQL Server script has no {operation} procedure "
                'for this queue (see README, "Who is a supervisor")'
            )
        bound = {name: values.get(name) for name in self.parameters[operation]}
        try:
            return [dict(row) for row in conn.execute(statement, bound).mappings()]
        except sa.exc.DBAPIError as exc:
            said = error_number(exc)
            if said is None:
                raise
            number, text = said
            refusal = mssql_backend.REFUSALS.get(number)
            if number == mssql_backend.OLD_NOT_HELD or (refusal is not None and refusal.lost):
                return []
            if refusal is not None:
                raise refused(self.q, refusal, text, values.get("p_key"), user) from exc
            if number == MISSING:
                self._checked = None
                raise Revoked() from exc
            if number == DENIED and action is not None and user is not None:
                raise roles.refused(user, action, self._login) from exc
            if number in (mssql_backend.OLD_REFUSED, DENIED):
                raise errors.NotPermitted(
                    f"the database did not permit this: {text.removeprefix(mssql_backend.PREFIX)}", user=user
                ) from exc
            raise

    def call(
        self, user: str, operation: str, values: Mapping[str, Any], action: errors.Phrase | None = None
    ) -> list[dict[str, Any]]:
        """run() in a transaction of its own, for `user`, who must be this login."""
        self.for_user(user)
        return self.db.write(lambda conn: self.run(conn, operation, values, action=action, user=user))

    def act(self, conn: sa.Connection, act: writes.Act) -> list[dict[str, Any]]:
        """An operation other than a guarded write (writes.Act: undo, a note, a supervisor's) by its
        procedure, in the caller's transaction, for its user, who must be this login: the rows each item's
        call answered; [] from the first item whose call answered none (it changed meanwhile)."""
        self.for_user(act.user)
        values = {f"p_{name}": value for name, value in act.values.items()}
        if "changes" in act.values:
            values["p_changes"] = edits_json(self.q, act.values["changes"])
        rows: list[dict[str, Any]] = []
        for key in act.keys:
            answered = self.run(conn, act.transition, {"p_key": key, **values}, action=act.action, user=act.user)
            if not answered:
                return []
            rows += answered
        return rows

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
    ) -> Mapping[str, Any] | None:
        """A guarded write (GuardedWriter.run) by its procedure: the row's lock after it, None if the
        caller's lock was gone. A Complete's review is chosen by the procedure itself."""
        values: dict[str, Any] = {
            "p_key": key,
            "p_token": str(token),
            "p_reason": reason,
            "p_note": note,
            "p_outcome": outcome,
            "p_edits": edits_json(self.q, edits) if edits else None,
            "p_until": until.astimezone(dt.UTC).replace(tzinfo=None) if until else None,
        }
        # The procedure carrying the own-lock transition that records `kind` (NotRendered if none).
        rows = self.call(user, mssql_parts.carrier(workflow.of_event(kind).name), values)
        return rows[0] if rows else None

    def claim(
        self, user: str, count: int, key: Any = None, where: tuple[tuple[str, Any], ...] = ()
    ) -> list[dict[str, Any]]:
        """Up to `count` items for the login (the item `key` only, if given; narrowed by `where`'s
        filter_by values), one call each: the rows with their lock (wb_*); fewer when nothing more
        waits or the procedure refuses another (the caller then says why)."""
        narrowed = dict(where)
        values = {"p_pick": key, **{name: narrowed.get(column) for name, column in self._filters.items()}}
        claimed: list[dict[str, Any]] = []
        for _ in range(count):
            try:
                rows = self.call(user, "next", values)
            except (errors.NothingToClaim, errors.NotPermitted):
                break  # the limit of locks per person: claim_next's own reading says so
            if not rows:
                break
            claimed.append(rows[0])
        return claimed


def refused(
    q: mapping.BoundQueue, refusal: mssql_backend.Refusal, text: str, key: Any, user: str | None
) -> errors.WorkbenchError:
    """The error the engine raises for `refusal` (backends/mssql.REFUSALS), said by a procedure as `text`:
    its template with the values the procedure filled in, so the window says it in the user's language
    (a text the template does not say, e.g. cut by the driver: the error with the text as it came)."""
    said = text.removeprefix(mssql_backend.PREFIX)
    column = None
    if refusal.column:
        column, _, said = said.partition(": ")
    args = mssql_backend.said_args(refusal.template, said)
    kwargs: dict[str, Any] = {}
    if refusal.error is errors.InvalidValue:
        if column is not None:
            if args is None:
                return errors.InvalidValue(f"{column}: {said}", column=column)
            return errors.InvalidValue.at(column, refusal.template, *args)
        # The key the table does not have is the key's problem, as BoundQueue.no_item says it.
        kwargs["column"] = q.key.name if refusal.template == problems.NO_ITEM else None
    elif refusal.error is errors.NothingToClaim:
        kwargs["reason"] = "limit"  # LIMIT_REACHED, as claims.base says it
    elif refusal.error is errors.NotPermitted:
        kwargs["user"] = user
    elif refusal.error is errors.LockLost:
        # A lock taken in another queue of the table, as lockloss.Diagnosis.elsewhere says it.
        elsewhere = refusal.template == problems.TAKEN_ELSEWHERE
        kwargs.update(queue=q.name, key=key, cause="other_queue" if elsewhere else "not_held")
    if args is None:
        error: Any = refusal.error
        return typing.cast(errors.WorkbenchError, error(said, **kwargs))
    return refusal.error.of(refusal.template, *args, **kwargs)


def call_statement(q: mapping.BoundQueue, name: str, parameters: list[str]) -> sa.TextClause:
    """EXEC of the procedure `name`, each parameter bound by name."""
    sql = f"EXEC {name}" + ", ".join(f" @{p} = :{p}" for p in parameters)
    types = {
        **_TYPES,
        "p_key": q.key.type,
        "p_pick": q.key.type,
        **{p: column.type for p, column in mssql_parts.filter_parameters(q).items()},
    }
    return sa.text(sql).bindparams(*(sa.bindparam(p, type_=types[p]) for p in parameters))
