"""SQL Server: UPDLOCK/READPAST claims, READ COMMITTED, DATETIME precision, 2,100 parameters per statement."""

from __future__ import annotations

import re
import typing
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

import sqlalchemy as sa

from workbench.core import errors, problems
from workbench.db import clock
from workbench.db.backends.base import LIKE_ESCAPE, Backend, NewRow, ProceduresOf, Scripts, like_pattern

if TYPE_CHECKING:
    from workbench.config import model


class Refusal(NamedTuple):
    """A refusal of the queue's procedures: the problem it says (a template's name in core/problems.py,
    filled in by the procedure), the error the engine raises for it, and whether the engine reads it as
    the row having changed since it read it (`lost`: the procedure answers no row, the engine says what
    changed)."""

    problem: str
    error: type[errors.WorkbenchError]
    lost: bool = False
    column: bool = False  # said as "COLUMN: problem" (InvalidValue.at)

    @property
    def template(self) -> str:
        """The problem's text, read when said (a text changed in core/problems.py changes the script)."""
        return typing.cast(str, getattr(problems, self.problem))


# Each refusal's number, THROWn by the procedures (db/rules/mssql_*.py) and read back by the engine
# (db/procedures.py): declared once here, stable (an applied script keeps them until applied again).
REFUSALS: Mapping[int, Refusal] = {
    50410: Refusal("REASON_NEEDED", errors.UsageError),
    50411: Refusal("LIMIT_REACHED", errors.NothingToClaim),
    50412: Refusal("READ_ONLY", errors.InvalidValue, column=True),
    50413: Refusal("DEFER_PAST", errors.UsageError),
    50414: Refusal("DEFER_TOO_FAR", errors.UsageError),
    50415: Refusal("NOTE_EMPTY", errors.UsageError),
    50416: Refusal("NOTE_TOO_LONG", errors.UsageError),
    50417: Refusal("NOTE_NEEDED", errors.UsageError),
    50418: Refusal("NO_ITEM", errors.InvalidValue),
    50419: Refusal("NO_OUTCOME", errors.InvalidValue),
    50420: Refusal("NOT_LOCKED", errors.LockLost, lost=True),
    50421: Refusal("REASSIGN_TO_DOER", errors.NotPermitted),
    50422: Refusal("UNDO_NOTHING", errors.UsageError),
    50423: Refusal("UNDO_NOT_YOURS", errors.UsageError),
    50424: Refusal("UNDO_TOO_LATE", errors.UsageError),
    50425: Refusal("UNDO_CHANGED", errors.UsageError),
    50426: Refusal("REOPEN_HELD", errors.UsageError),
    50427: Refusal("REOPEN_WAITING", errors.UsageError),
    50428: Refusal("MOVE_NOTHING", errors.UsageError),
    50429: Refusal("MOVE_NOT_MOVABLE", errors.InvalidValue, column=True),
    50430: Refusal("MOVE_NOT_WAITING", errors.UsageError, lost=True),
    50431: Refusal("MOVE_FINISHES", errors.UsageError),
    50432: Refusal("TAKE_NOT_ESCALATED", errors.UsageError),
    50433: Refusal("TAKEN_ELSEWHERE", errors.LockLost),
    50434: Refusal("TAKE_NOT_IN_GROUP", errors.NotPermitted),
}
NUMBERS: Mapping[str, int] = {refusal.problem: number for number, refusal in REFUSALS.items()}
# The numbers of a script applied by a workbench before REFUSALS: the lock gone; any other refusal.
OLD_NOT_HELD, OLD_REFUSED = 50401, 50403
PREFIX = "workbench: "  # before each refusal's text, for whoever reads it in sqlcmd or a log


def number_of(template: str) -> int:
    """The number of the refusal that says `template` (one of core/problems.py's texts)."""
    names = [name for name, text in problems.templates().items() if text == template and name in NUMBERS]
    if len(names) != 1:
        raise KeyError(f"no refusal of SQL Server's procedures says {template!r}: declare it in REFUSALS")
    return NUMBERS[names[0]]


def said_args(template: str, text: str) -> tuple[str, ...] | None:
    """The values `template` was filled with to say `text`, or None if `text` is not said by it."""
    seen: set[str] = set()

    def group(piece: str) -> str:
        if not re.fullmatch(r"\{\d\}", piece):
            return re.escape(piece)
        name = f"a{piece[1:-1]}"
        if name in seen:  # a value said twice (TAKE_NOT_IN_GROUP's user): the same text again
            return f"(?P={name})"
        seen.add(name)
        return f"(?P<{name}>.*?)"

    pattern = "".join(group(piece) for piece in re.split(r"(\{\d\})", template))
    found = re.fullmatch(pattern, text, re.S)
    if found is None:
        return None
    return tuple(found[f"a{i}"] for i in range(len(found.groupdict())))


class MssqlBackend(Backend):
    name = "mssql"
    label = "SQL Server"
    profile_kind = "sqlserver"
    logins_kind = "script"
    writes_by_procedures = True
    default_port = 1433
    claim_methods = ("readpast",)
    keys_per_statement = 2000  # SQL Server takes at most 2,100 parameters per statement
    hours_in_sql = True
    partial_index_keyword = "mssql_where"
    create_grant = "GRANT CREATE TABLE TO {login}; GRANT ALTER ON SCHEMA::{schema} TO {login}"

    def engine_options(
        self, url: sa.URL, db: model.DatabaseConfig, create: bool
    ) -> tuple[sa.URL, dict[str, Any], dict[str, Any]]:
        return url, {"isolation_level": "READ COMMITTED"}, {"timeout": db.connect_timeout}

    def server_version(self, conn: sa.Connection) -> str:
        # SERVERPROPERTY returns sql_variant, which pyodbc cannot fetch (ODBC type -150).
        number = conn.exec_driver_sql("SELECT CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128))").scalar()
        return f"SQL Server {number}"

    def time_equals(self, column: sa.Column[Any], value: Any) -> sa.ColumnElement[bool]:
        # DATETIME keeps 1/300 s and DATETIME2(7) 100 ns, neither of which survives a round trip
        # through Python's microseconds exactly; a window of a few milliseconds is still a fence,
        # as one user cannot claim the same row twice within it.
        if not isinstance(value, sa.ColumnElement):
            value = sa.bindparam(None, value, type_=clock.ExactTime())
        return sa.and_(column > clock.add_milliseconds(value, -4), column < clock.add_milliseconds(value, 4))

    def token_digest(self, token: sa.ColumnElement[Any]) -> sa.ColumnElement[str]:
        # HASHBYTES hashes the bytes of its argument: VARCHAR, whose bytes are the token's ASCII
        # (NVARCHAR would hash UTF-16). CONVERT style 2: hex without 0x.
        text = sa.func.lower(sa.cast(token, sa.String(200)))
        digest = sa.func.hashbytes(sa.literal("SHA2_256", literal_execute=True), text)
        return sa.func.lower(
            sa.func.convert(sa.literal_column("VARCHAR(64)"), digest, sa.literal(2, literal_execute=True)),
            type_=sa.String(),
        )

    def lock_one(
        self, conn: sa.Connection, table: sa.Table, key_column: sa.Column[Any], key: Any, *, lock: bool = True
    ) -> bool:
        stmt = sa.select(key_column).where(key_column == key)
        if lock:
            stmt = stmt.with_hint(table, "WITH (UPDLOCK, ROWLOCK, READPAST)", "mssql")
        return conn.execute(stmt).first() is not None

    def text_as(self, text: sa.ColumnElement[Any], type_: sa.types.TypeEngine[Any]) -> sa.ColumnElement[Any]:
        # SQL Server may convert before it filters by queue: another queue's text key must not fail.
        return sa.try_cast(text, type_)

    def new_row(self, table: sa.Table, row: Mapping[str, sa.ColumnElement[Any]]) -> NewRow:
        # INSERT … SELECT … WHERE NOT EXISTS with UPDLOCK, HOLDLOCK: the key range stays locked from
        # the test to the insert, so a concurrent claim waits and then finds the row (no key
        # violation, no savepoint to roll back after a deadlock).
        taken = (
            sa.select(sa.literal(1))
            .select_from(table)
            .with_hint(table, "WITH (UPDLOCK, HOLDLOCK)", "mssql")
            .where(*(table.c[name] == row[name] for name in (c.name for c in table.primary_key.columns)))
        )
        source = sa.select(*row.values()).where(~sa.exists(taken))
        return NewRow(sa.insert(table).from_select(list(row), source))

    def insert_new(self, conn: sa.Connection, new: NewRow, params: Mapping[str, Any]) -> bool:
        return conn.execute(new.insert, params).rowcount == 1

    def text_match(self, column: sa.ColumnElement[Any], text: str, how: str) -> sa.ColumnElement[bool]:
        # LIKE compares in the column's collation, case-insensitive by default (…_CI_…); plain, an
        # index on the column serves a prefix.
        return column.like(like_pattern(text, how), escape=LIKE_ESCAPE)

    def lock_row(self, stmt: sa.Select[Any], table: sa.Table) -> sa.Select[Any]:
        return stmt.with_hint(table, "WITH (UPDLOCK, ROWLOCK)", "mssql")

    def in_database_role(self, conn: sa.Connection, user: str, group: str) -> bool:
        # IS_ROLEMEMBER, as the take procedure asks it (db/rules/mssql_parts.py, ProcedureParts.who_check): the
        # database user named like the login, as `workbench people add` makes them; NULL (not a member)
        # where either principal does not exist.
        return conn.execute(sa.select(sa.func.IS_ROLEMEMBER(group, user))).scalar() == 1

    def protocol_script(
        self, scripts: Scripts, dialect: Any, q: Any, schema: str, revoke: bool = False, reviewed: Any = None
    ) -> list[str] | None:
        if revoke:
            return scripts.revoke_script(dialect, q, schema)
        return scripts.script(dialect, q, schema, reviewed)

    def procedures(self, of: ProceduresOf, db: Any, q: Any, schema: str | None) -> Any:
        return of(db, q, schema)

    def auto_claim_method(self, engine: sa.Engine) -> str:
        return "readpast"
