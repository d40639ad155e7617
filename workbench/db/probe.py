"""Try one database connection ("Test connection") and say exactly what failed."""

from __future__ import annotations

import dataclasses
import os
import re
import time
from pathlib import Path

import sqlalchemy as sa

from workbench.core.records import ProbeResult  # what the admin services hand out: core's records
from workbench.db import backends

# The extra in pyproject.toml that installs each Python driver module.
_EXTRAS = {"psycopg": "postgresql", "pymysql": "mysql", "pyodbc": "odbc"}
_SUPPORTED = "sqlite, postgresql+psycopg, mariadb+pymysql, mysql+pymysql, mariadb+pyodbc, mysql+pyodbc, mssql+pyodbc"

# Driver error numbers: MySQL/MariaDB (client 2002-2013, server 1044-1049) and SQL Server (18456, 4060).
_DATABASE_NUMBERS = {1049, 4060}
_LOGIN_NUMBERS = {1045, 18456}
_PERMISSION_NUMBERS = {1044}
_UNREACHABLE_NUMBERS = {2002, 2003, 2005, 2006, 2013, 20009}
# Server messages, for drivers that give no code: psycopg carries no SQLSTATE on a failed connect.
_LOGIN_TEXT = (
    "password authentication failed",
    "no password supplied",
    "login failed for user",
    "access denied for user",
    "no pg_hba.conf entry",
    "authentication failed",
)
_NO_ROLE = re.compile(r'role "[^"]*" does not exist')
_DATABASE_TEXT = (
    re.compile(r'database "[^"]*" does not exist'),
    re.compile(r"unknown database"),
    re.compile(r"cannot open database"),
)
_PERMISSION_TEXT = ("permission denied", "connect privilege")
_NO_HOST_TEXT = (
    "could not translate host",
    "failed to resolve host",
    "name or service not known",
    "unknown server host",
    "unknown mysql server host",
    "temporary failure in name resolution",
    "nodename nor servname",
    "no such host is known",
)
# "system error: 110" is MariaDB Connector/ODBC's way of saying ETIMEDOUT.
_TIMEOUT_TEXT = ("timeout expired", "timed out", "login timeout", "system error: 110")
_UNREACHABLE_TEXT = (
    "connection refused",
    "could not connect",
    "can't connect",
    "no route to host",
    "network is unreachable",
    "adaptive server is unavailable",
    "lost connection",
    "server has gone away",
    "connection reset",
    "the database system is starting up",
    "the database system is shutting down",
    "server closed the connection",
    *_NO_HOST_TEXT,
    *_TIMEOUT_TEXT,
)
_SQLITE_FILE_ERRORS = {
    "SQLITE_CANTOPEN",
    "SQLITE_NOTADB",
    "SQLITE_CORRUPT",
    "SQLITE_PERM",
    "SQLITE_AUTH",
    "SQLITE_IOERR",
}


@dataclasses.dataclass(frozen=True)
class _Target:
    """Where the URL points, in words for messages."""

    backend: str
    driver: str
    host: str
    port: int | None
    database: str
    user: str
    timeout: int
    windows_auth: bool = False  # SQL Server Trusted_Connection: no user name in the URL

    @property
    def where(self) -> str:
        return f"{self.host}:{self.port}" if self.port else self.host

    @property
    def who(self) -> str:
        if self.windows_auth:
            return "your Windows account"
        return f"user '{self.user}'" if self.user else "the default user"


def check(url: sa.URL | str, *, password: str | None = None, connect_timeout: int = 5) -> ProbeResult:
    """Connect once (no pool), run a trivial query, classify any failure."""
    started = time.monotonic()
    try:
        parsed = sa.make_url(url)
    except sa.exc.ArgumentError:
        return _done(
            ProbeResult(
                False,
                "other",
                "This is not a database URL; e.g. sqlite:///cases.db or postgresql+psycopg://user@host/dbname.",
                reason="not_url",
            ),
            password or "",
            started,
        )
    secret = password or parsed.password or _odbc_params(parsed).get("PWD", "")
    if password:
        parsed = parsed.set(password=password)
    target = _target(parsed, connect_timeout)
    try:
        result = _attempt(parsed, target, started)
    except Exception as exc:  # noqa: BLE001 - every failure becomes a result; that is the point
        result = _classify(exc, target)
    return _done(result, secret, started)


def _done(result: ProbeResult, secret: str, started: float) -> ProbeResult:
    message, detail = result.message, result.detail
    if secret:
        # The driver may echo connection parameters; the operator's screen and logs must not.
        message, detail = message.replace(secret, "***"), detail.replace(secret, "***")
    return dataclasses.replace(result, message=message, detail=detail, seconds=time.monotonic() - started)


def _target(url: sa.URL, timeout: int) -> _Target:
    backend, driver = url.get_backend_name(), url.get_driver_name()
    if backends.for_dialect(backend).is_file:
        return _Target(backend, driver, _sqlite_path(url), None, url.database or "", "", timeout)
    odbc = _odbc_params(url)
    query = {k.lower(): str(v) for k, v in url.query.items()}
    port = url.port or _int(odbc.get("PORT") or query.get("port")) or backends.for_dialect(backend).default_port
    trusted = "yes" in (query.get("trusted_connection", "").lower(), odbc.get("TRUSTED_CONNECTION", "").lower())
    return _Target(
        backend,
        driver,
        url.host or odbc.get("SERVER", "") or "localhost",
        port,
        url.database or odbc.get("DATABASE", ""),
        url.username or odbc.get("UID", ""),
        timeout,
        windows_auth=trusted,
    )


def _int(text: str | None) -> int | None:
    return int(text) if text and text.isdigit() else None


def _odbc_params(url: sa.URL) -> dict[str, str]:
    """The keys of an odbc_connect= string, upper-cased (ODBC keywords are case-insensitive)."""
    text = str(url.query.get("odbc_connect") or "")
    params: dict[str, str] = {}
    for part in text.split(";"):
        key, sep, value = part.partition("=")
        if sep:
            params[key.strip().upper()] = value.strip().strip("{}")
    return params


def _attempt(url: sa.URL, target: _Target, started: float) -> ProbeResult:
    backend = backends.for_dialect(target.backend)
    problem = backend.probe_problem(url)
    if problem:
        return ProbeResult(False, "other", problem, reason="url")
    url, connect_args = backend.probe_options(url, target.timeout)
    engine = sa.create_engine(url, poolclass=sa.pool.NullPool, connect_args=connect_args)
    try:
        with engine.connect() as conn:
            version = backend.server_version(conn)
    finally:
        engine.dispose()
    seconds = time.monotonic() - started
    if backend.is_file:
        return _sqlite_writable(target, version, seconds)
    database = f", database {target.database}," if target.database else ""
    who = target.user if target.user and not target.windows_auth else target.who
    return ProbeResult(
        True,
        None,
        f"Connected to {version} at {target.where}{database} as {who} in {seconds:.2f} s.",
        server_version=version,
    )


def _sqlite_path(url: sa.URL) -> str:
    database = url.database or ""
    if database.startswith("file:"):
        return database[len("file:") :].split("?", 1)[0]
    return os.path.abspath(database) if database and database != ":memory:" else database or ":memory:"


def _sqlite_writable(target: _Target, version: str, seconds: float) -> ProbeResult:
    path = target.host
    if path != ":memory:":
        # SQLite opens a write-protected file read-only without complaint; workbench would fail
        # at the first save. WAL mode also creates files next to it, so the folder counts too.
        for what, place in (("file", path), ("folder", os.path.dirname(path) or ".")):
            if not os.access(place, os.W_OK):
                return ProbeResult(
                    False,
                    "file",
                    f"The SQLite {what} {place} is read-only for this account; "
                    "workbench needs to write there. Fix its permissions or use another copy.",
                    server_version=version,
                    reason="read_only",
                )
    return ProbeResult(True, None, f"Opened the {version} database {path} in {seconds:.2f} s.", server_version=version)


def _classify(exc: Exception, target: _Target) -> ProbeResult:
    if isinstance(exc, ImportError):
        return _missing_module(exc, target)
    if isinstance(exc, sa.exc.NoSuchModuleError):
        return ProbeResult(
            False,
            "driver",
            f"SQLAlchemy has no driver for '{target.backend}+{target.driver}'. Use one of: {_SUPPORTED}.",
            detail=_first_line(str(exc)),
            reason="dialect",
        )
    orig = getattr(exc, "orig", None) or exc
    sqlstate, text, detail = _error_parts(orig)
    lower = text.lower()
    numbers = {int(n) for n in re.findall(r"\((\d+)\)", text)}
    if isinstance(orig.args[0] if orig.args else None, int):
        numbers.add(orig.args[0])  # PyMySQL: (1045, "Access denied …")

    if target.driver == "pyodbc" and (
        sqlstate == "IM002" or "can't open lib" in lower or ("[driver manager]" in lower and "file not found" in lower)
    ):
        return _missing_odbc_driver(text, target, detail)
    if backends.for_dialect(target.backend).is_file and (
        getattr(orig, "sqlite_errorname", "") in _SQLITE_FILE_ERRORS
        or "unable to open database" in lower
        or "not a database" in lower
    ):
        return _sqlite_problem(orig, target, detail)
    if numbers & _DATABASE_NUMBERS or sqlstate == "3D000" or any(p.search(lower) for p in _DATABASE_TEXT):
        return ProbeResult(
            False,
            "database",
            f"The server at {target.where} has no database named "
            f"'{target.database}'. Check the database name, or ask the administrator to create "
            "it.",
            detail=detail,
        )
    if numbers & _PERMISSION_NUMBERS:
        # MySQL answers 1044 both for a missing grant and for a database the user may not even see.
        return ProbeResult(
            False,
            "permission",
            f"The server accepted {target.who} but denies access to "
            f"database '{target.database}' (or it does not exist). Ask the administrator for "
            "a grant, or check the database name.",
            detail=detail,
        )
    if (
        numbers & _LOGIN_NUMBERS
        or sqlstate in ("28P01", "28000")
        or any(m in lower for m in _LOGIN_TEXT)
        or _NO_ROLE.search(lower)
    ):
        return _login_problem(lower, target, detail)
    if sqlstate == "42501" or any(m in lower for m in _PERMISSION_TEXT):
        return ProbeResult(
            False,
            "permission",
            f"The server accepted {target.who} but denies access to "
            f"database '{target.database}' (no CONNECT privilege or similar). Ask the "
            "administrator to grant it.",
            detail=detail,
        )
    if (
        numbers & _UNREACHABLE_NUMBERS
        or sqlstate.startswith("08")
        or sqlstate in ("HYT00", "57P01", "57P03")
        or type(orig).__name__ == "ConnectionTimeout"
        or any(m in lower for m in _UNREACHABLE_TEXT)
    ):
        return _unreachable(lower, target, detail)
    return ProbeResult(
        False,
        "other",
        f"Connecting to {_label(target.backend)} at "
        f"{target.where} failed ({type(orig).__name__}); the details below say why.",
        detail=detail,
    )


def _error_parts(orig: BaseException) -> tuple[str, str, str]:
    """SQLSTATE (or ""), the full error text, and its first line for the operator."""
    args = orig.args
    if type(orig).__module__ == "pyodbc" and len(args) == 2:
        # pyodbc: ("28000", "[28000] [driver]message (native number) (SQLDriverConnect)")
        return str(args[0]).upper(), str(args[1]), _first_line(str(args[1]))
    if len(args) == 2 and isinstance(args[0], int):  # PyMySQL: (1049, "Unknown database 'x'")
        return str(getattr(orig, "sqlstate", "") or ""), str(args[1]), _first_line(f"({args[0]}) {args[1]}")
    sqlstate = getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None) or ""
    text = str(orig)
    return str(sqlstate).upper(), text, _first_line(text)


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0] if lines else ""


def _missing_module(exc: ImportError, target: _Target) -> ProbeResult:
    module = (exc.name or "").split(".")[0] or target.driver
    extra = _EXTRAS.get(module)
    how = f'pip install "workbench[{extra}]"' if extra else f"pip install {module}"
    return ProbeResult(
        False,
        "driver",
        f"The Python driver '{module}' for {_label(target.backend)} is not installed. Install it with: {how}",
        detail=_first_line(str(exc)),
        odbc_drivers=() if module == "pyodbc" else _odbc_drivers(target),
        reason="module",
    )


def _odbc_drivers(target: _Target) -> tuple[str, ...]:
    return installed_odbc_drivers() if target.driver == "pyodbc" else ()


def installed_odbc_drivers() -> tuple[str, ...]:
    """The ODBC drivers this machine has (none when pyodbc itself is missing)."""
    try:
        import pyodbc
    except ImportError:
        return ()
    return tuple(pyodbc.drivers())


def _missing_odbc_driver(text: str, target: _Target, detail: str) -> ProbeResult:
    found = re.search(r"can't open lib '([^']*)'", text, re.IGNORECASE)
    name = found.group(1) if found else ""
    installed = _odbc_drivers(target)
    listing = f"installed ODBC drivers: {', '.join(installed)}" if installed else "no ODBC drivers are installed"
    what = f"The ODBC driver '{name}' is not installed" if name else "No usable ODBC driver was named"
    return ProbeResult(
        False,
        "driver",
        f"{what} ({listing}). Install it, or choose one of the installed drivers.",
        detail=detail,
        odbc_drivers=installed,
        reason="odbc_driver",
    )


def _sqlite_problem(orig: BaseException, target: _Target, detail: str) -> ProbeResult:
    path = Path(target.host)
    name = getattr(orig, "sqlite_errorname", "")
    if not path.exists():
        reason, message = (
            "missing",
            (f"There is no SQLite database file at {path}. Check the path (a new file is not created here)."),
        )
    elif path.is_dir():
        reason, message = "folder", f"{path} is a folder, not a SQLite database file. Check the path."
    elif name in ("SQLITE_NOTADB", "SQLITE_CORRUPT") or "not a database" in detail.lower():
        reason, message = (
            "not_database",
            (f"{path} is not a SQLite database (or it is damaged). Check the path, or restore a backup."),
        )
    else:
        reason, message = (
            "cannot_open",
            (f"The SQLite file {path} cannot be opened; check that this account may read and write it."),
        )
    return ProbeResult(False, "file", message, detail=detail, reason=reason)


def _login_problem(lower: str, target: _Target, detail: str) -> ProbeResult:
    if "no password supplied" in lower:
        reason = "no_password"
        message = f"The server at {target.where} requires a password for {target.who}, and none was given."
    elif "no pg_hba.conf entry" in lower:
        reason = "not_allowed"
        message = (
            f"The server at {target.where} does not accept {target.who} from this computer (no "
            "pg_hba.conf entry). Ask the administrator to allow it."
        )
    else:
        reason = "wrong_password"
        message = f"The server refused the login for {target.who}: wrong password or no such user."
    return ProbeResult(False, "login", message, detail=detail, reason=reason)


def _unreachable(lower: str, target: _Target, detail: str) -> ProbeResult:
    if "connection refused" in lower:
        code, reason = "refused", "connection refused"
    elif any(m in lower for m in _NO_HOST_TEXT):
        code, reason = "unknown_host", "the host name is not known"
    elif any(m in lower for m in _TIMEOUT_TEXT):
        code, reason = "timeout", f"no answer within {target.timeout} s"
    else:
        code, reason = "", "the connection failed"
    return ProbeResult(
        False,
        "unreachable",
        f"Cannot reach the server at {target.where}: {reason}. Check the "
        "host name and port, and that the server is running and accepts network connections.",
        detail=detail,
        reason=code,
    )


def _label(name: str) -> str:
    return backends.for_dialect(name).label or name
