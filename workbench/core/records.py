"""Plain answers of the administrator's services: a connection probe, the claim check, published settings,
people and their sessions (made in db/, handed out through services/admin.py)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any


@dataclasses.dataclass(frozen=True)
class ProbeResult:
    """What one connection attempt found; never holds the password."""

    ok: bool
    # None when ok, else: "driver", "unreachable", "login", "database", "file", "permission", "other"
    problem: str | None
    message: str  # one or two plain sentences for an operator: what failed and what to do
    detail: str = ""  # the driver's own first line of the error, password scrubbed
    server_version: str | None = None  # on success, e.g. "PostgreSQL 15.18"
    odbc_drivers: tuple[str, ...] = ()  # the installed ODBC drivers, when an ODBC driver is missing
    seconds: float = 0.0
    # Which case of `problem` it is, so a window can say it in the user's language (`message` is English):
    # driver: module, odbc_driver, dialect; unreachable: refused, unknown_host, timeout;
    # login: wrong_password, no_password, not_allowed; file: missing, folder, not_database, read_only,
    # cannot_open; other: not_url, url; "" where the problem says it all.
    reason: str = ""


@dataclasses.dataclass(frozen=True)
class RaceResult:
    ok: bool | None  # None: not run (no row to race for)
    message: str


@dataclasses.dataclass(frozen=True)
class Published:
    """One published version of the queue settings."""

    version: int
    body: str  # TOML: [app] and [queues.*]
    published_by: str
    published_at: dt.datetime  # database clock, UTC
    note: str | None


@dataclasses.dataclass(frozen=True)
class Change:
    """What `people add` or `people remove` runs for one person (or leaves to the administrator)."""

    name: str
    role: str
    statements: list[str]  # the SQL, in order; to run as it is
    applied: bool = False  # run here; False: printed for the database administrator
    password: str | None = None  # a password generated for a login made now (shown once, never kept)
    notes: list[str] = dataclasses.field(default_factory=list)
    script: bool = False  # printed only, never run by workbench (SQL Server)

    @property
    def sql(self) -> str:
        return "".join(f"{s};\n" for s in self.statements)


@dataclasses.dataclass(frozen=True)
class Person:
    """One person's login as `people list` shows it."""

    name: str
    role: str  # "operator" or "supervisor"
    queues: list[str]  # the configured queues this login may work
    problems: list[str]  # what keeps the login from working (empty: ready)

    @property
    def ready(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "ready": self.ready}


@dataclasses.dataclass(frozen=True)
class Session:
    """A session idle inside an open transaction: row locks it took (SELECT … FOR UPDATE) hide those items
    from every Next item until it ends."""

    pid: int
    login: str
    idle_seconds: int  # since its last statement
    open_seconds: int  # since its transaction began
    tables: list[str]  # queue tables it holds locks on

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
