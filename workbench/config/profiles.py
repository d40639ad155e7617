"""Connection profiles: where a user's databases are, kept in profiles.toml in the user config directory."""

from __future__ import annotations

import dataclasses
import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.config import loader, paths, secrets, settings
from workbench.core import errors, problems

if TYPE_CHECKING:  # imported by url() only: the window and most commands start without SQLAlchemy
    import sqlalchemy as sa

FILE_NAME = "profiles.toml"
KINDS = ("sqlite", "postgresql", "sqlserver", "mariadb", "mysql")
KIND_LABELS = {
    "sqlite": "SQLite file",
    "postgresql": "PostgreSQL",
    "sqlserver": "SQL Server",
    "mariadb": "MariaDB",
    "mysql": "MySQL",
}
DEFAULT_PORTS = {"postgresql": 5432, "sqlserver": 1433, "mariadb": 3306, "mysql": 3306}
# Which Python driver each kind may use; the first is the default.
DRIVERS = {
    "sqlite": ("sqlite",),
    "postgresql": ("psycopg",),
    "sqlserver": ("odbc",),
    "mariadb": ("pymysql", "odbc"),
    "mysql": ("pymysql", "odbc"),
}
SOURCES = ("file", "database")  # queue settings from a config file, or published in the database
_NAME = re.compile(r"^\S(?:[^\x00-\x1f\x7f]{0,62}\S)?$")  # what people call it; no control characters
_KEYS = {
    "kind",
    "driver",
    "host",
    "port",
    "database",
    "user",
    "path",
    "odbc_driver",
    "encrypt",
    "trust_server_certificate",
    "windows_auth",
    "options",
    "source",
    "config",
    "schema",
    "connect_timeout",
    "statement_timeout",
    "pooler",
}


@dataclasses.dataclass(frozen=True)
class Profile:
    """One named connection and where its queue settings come from; never a password."""

    name: str
    kind: str  # one of KINDS
    driver: str = ""  # one of DRIVERS[kind]; "" means the default
    host: str = ""
    port: int | None = None  # None: the kind's default port
    database: str = ""
    user: str = ""
    path: str = ""  # SQLite file
    odbc_driver: str = ""  # ODBC driver name, e.g. "ODBC Driver 18 for SQL Server"
    encrypt: bool = True  # SQL Server: encrypt the connection (Driver 18 refuses plain by default)
    trust_server_certificate: bool = False  # SQL Server: accept a self-signed certificate
    windows_auth: bool = False  # SQL Server: log in as the Windows user (no password)
    options: dict[str, str] = dataclasses.field(default_factory=dict)  # extra URL query options
    source: str = "file"  # one of SOURCES
    config: str = ""  # the queue config file when source == "file"
    schema: str = ""  # where workbench's own tables live ("" = the default schema)
    connect_timeout: int = settings.default(settings.DATABASE, "connect_timeout")
    statement_timeout: int = settings.default(settings.DATABASE, "statement_timeout")
    # "transaction": the server is reached through a transaction pooler (PgBouncer), as a config's
    # `[database] pooler`; either saying so is enough.
    pooler: str = settings.default(settings.DATABASE, "pooler")

    @property
    def effective_driver(self) -> str:
        return self.driver or DRIVERS[self.kind][0]

    @property
    def effective_port(self) -> int | None:
        return self.port if self.port is not None else DEFAULT_PORTS.get(self.kind)

    @property
    def is_file(self) -> bool:
        """A database in a file on this computer (SQLite), not a server."""
        return self.kind == "sqlite"

    @property
    def needs_password(self) -> bool:
        return not self.is_file and not self.windows_auth

    @property
    def credential_id(self) -> str:
        """The keyring entry: one login on one server, whichever profile or database uses it."""
        return f"{self.kind}:{self.user}@{self.host}:{self.effective_port}"

    def describe(self) -> str:
        if self.kind == "sqlite":
            return f"SQLite {self.path}"
        who = "Windows login" if self.windows_auth else self.user
        return f"{KIND_LABELS[self.kind]} {who}@{self.host}:{self.effective_port}/{self.database}"

    def url(self) -> sa.URL:
        """The SQLAlchemy URL (never with a password: that is set on the engine at connect time)."""
        import sqlalchemy as sa

        check(self)
        if self.kind == "sqlite":
            return sa.URL.create("sqlite", database=str(Path(self.path).expanduser()))
        query: dict[str, str] = {}
        if self.kind == "postgresql":
            drivername, port = "postgresql+psycopg", self.effective_port
        elif self.effective_driver == "odbc" and self.kind != "sqlserver":
            # The port goes in the query: SQLAlchemy's ODBC connector writes SQL Server's
            # "host,port", which MariaDB's and MySQL's drivers reject.
            drivername, port = f"{self.kind}+pyodbc", None
            query.update(driver=self.odbc_driver, port=str(self.effective_port))
        elif self.kind == "sqlserver":
            drivername, port = "mssql+pyodbc", self.effective_port
            query.update(driver=self.odbc_driver, Encrypt="yes" if self.encrypt else "no")
            if self.trust_server_certificate:
                query["TrustServerCertificate"] = "yes"
            if self.windows_auth:
                query["Trusted_Connection"] = "yes"
        else:
            drivername, port = f"{self.kind}+pymysql", self.effective_port
        query.update(self.options)
        host: str | None = self.host
        if self.kind == "postgresql" and "," not in self.host and ":" in self.host:
            # One server written "name:port" (by hand in the file): its own port wins over the default.
            host, own_port = self.servers()[0]
            port = own_port or port
        elif self.kind == "postgresql" and "," in self.host:
            # Several servers (a primary and its standbys): libpq tries them in turn and keeps the one
            # that accepts writes, so a promoted standby is found after a failover.
            query["host"] = tuple(f"{name}:{own_port or port}" for name, own_port in self.servers())  # type: ignore[assignment]
            query.setdefault("target_session_attrs", "read-write")
            host, port = None, None
        return sa.URL.create(
            drivername,
            username=None if self.windows_auth else (self.user or None),
            host=host,
            port=port,
            database=self.database or None,
            query=query,
        )

    def servers(self) -> list[tuple[str, int | None]]:
        """The servers `host` names, each with its own port where it says one ("db1:5432,db2:5433")."""
        found = []
        for entry in self.host.split(","):
            name, _, port = entry.strip().rpartition(":") if ":" in entry else (entry.strip(), "", "")
            found.append((name.strip(), int(port) if port.strip().isdigit() else None))
        return found

    def to_toml(self) -> dict[str, Any]:
        """The profile as a TOML table: only what differs from the defaults, so the file stays short."""
        defaults = Profile(name=self.name, kind=self.kind)
        data: dict[str, Any] = {}
        for field in dataclasses.fields(self):
            if field.name == "name":
                continue
            value = getattr(self, field.name)
            if field.name == "kind" or value != getattr(defaults, field.name):
                data[field.name] = value
        return data


def split_host(host: str, port: int | None) -> tuple[str, int | None]:
    """`--host name:port` as a host and a port; a list of servers ("db1:5432,db2:5432"), a plain name
    and an IPv6 address are kept. A UsageError when the port is not one or disagrees with `port`."""
    text = host.strip()
    if "," in text or ":" not in text or any(c in text for c in "/@?# "):
        return text, port  # check() says what is wrong with "user:password@host" without echoing it
    name, _, tail = text.rpartition(":")
    if ":" in name:  # an IPv6 address (its port goes in --port)
        return text, port
    if not tail.isdigit() or not 0 < int(tail) < 65536 or not name:
        raise errors.UsageError(  # the text is not echoed: what follows a colon may be a password
            "--host: write the server's name or address, and its port with --port "
            "(or as name:port, e.g. db.example.com:5433)"
        )
    if port is not None and port != int(tail):
        raise errors.UsageError(f"--host {name}:{tail} says port {tail} and --port says {port}: give the port once")
    return name, int(tail)


def check(profile: Profile) -> None:
    """Raise ConfigError naming the profile and field that is wrong, and how to fix it."""
    where = f"profile '{profile.name}'"

    def fail(key: str, problem: str, *args: Any) -> errors.ConfigError:
        # A template of core/problems.py is said in the dialog's language (gui/connect_dialog.py).
        if problem in problems.templates().values():
            return errors.ConfigError.of(problem, *args, file=where, key=key)
        return errors.ConfigError(problem, file=where, key=key)

    if not _NAME.match(profile.name or ""):
        raise fail("name", problems.PROFILE_NAME)
    if profile.kind not in KINDS:
        raise fail("kind", f"must be one of {', '.join(KINDS)}")
    if profile.driver and profile.driver not in DRIVERS[profile.kind]:
        raise fail("driver", f"{KIND_LABELS[profile.kind]} connects with {', '.join(DRIVERS[profile.kind])}")
    _refuse_passwords(profile, fail)
    if profile.kind == "sqlite":
        if not profile.path.strip():
            raise fail("path", problems.PROFILE_PATH)
    else:
        if not profile.host.strip():
            raise fail("host", problems.PROFILE_HOST)
        if any(c in profile.host for c in "/@?# "):
            raise fail("host", problems.PROFILE_NOT_A_HOST, repr(profile.host))
        if "," in profile.host or (":" in profile.host and profile.kind == "postgresql"):
            if profile.kind != "postgresql":
                raise fail(
                    "host",
                    "several servers (db1,db2) are for PostgreSQL, which finds the one that "
                    "accepts writes; for others give one server",
                )
            for name, port in profile.servers():
                if not name or (port is not None and not 0 < port < 65536):
                    raise fail(
                        "host",
                        f"{profile.host!r}: list the servers as name or name:port, separated "
                        "by commas, e.g. db1:5432,db2:5432",
                    )
        if profile.port is not None and not 0 < profile.port < 65536:
            raise fail("port", problems.PROFILE_PORT)
        if not profile.database.strip():
            raise fail("database", problems.PROFILE_DATABASE)
        if not profile.windows_auth and not profile.user.strip():
            raise fail("user", problems.PROFILE_USER)
        if profile.effective_driver == "odbc" and not profile.odbc_driver.strip():
            raise fail("odbc_driver", problems.PROFILE_ODBC_DRIVER)
    if profile.windows_auth and profile.kind != "sqlserver":
        raise fail("windows_auth", "Windows authentication is for SQL Server only")
    for name in profile.options:
        if secrets.secret_option(name):  # sslpassword, PWD, …: profiles.toml is plain text
            raise fail(
                f"options.{name}",
                "a password or other secret is never stored in a profile (the file is "
                "plain text): remove the option; the login password is kept in the OS "
                "keyring (`workbench profile password NAME`, or you are asked for it)",
            )
    for name in ("connect_timeout", "statement_timeout"):
        seconds, bound = getattr(profile, name), settings.get(settings.DATABASE, name).maximum  # as a config's
        if seconds < 1 or (bound is not None and seconds > bound):
            raise fail(name, f"must be between 1 and {bound} seconds")
    if profile.pooler not in settings.POOLERS:
        raise fail("pooler", f"must be one of {', '.join(settings.POOLERS)}")
    if profile.source not in SOURCES:
        raise fail("source", "must be 'file' (a queue config file) or 'database' (settings a supervisor published)")
    if profile.source == "file" and not profile.config.strip():
        raise fail("config", problems.PROFILE_CONFIG)


def _refuse_passwords(profile: Profile, fail: Callable[[str, str], errors.ConfigError]) -> None:
    """A password typed into any field (user "alice:PW", database "cases?password=…", an option's
    value) would be written to profiles.toml: refused, as a config file's URL is, without echoing it."""
    fields = {
        "user": profile.user,
        "host": profile.host,
        "database": profile.database,
        "path": profile.path,
        "odbc_driver": profile.odbc_driver,
        **{f"options.{k}": v for k, v in profile.options.items()},
    }
    for key, text in fields.items():
        login = text.rpartition("@")[0] if key == "host" else text if key == "user" else ""
        if ":" in login or secrets.password_in(text):
            raise fail(key, f"must not contain a password; {secrets.KEYRING_HINT}")


def from_toml(name: str, data: dict[str, Any], file: str) -> Profile:
    """Build a profile from its table in profiles.toml; wrong types and unknown keys are named."""
    prefix = f"profiles.{name}"
    if not isinstance(data, dict):
        raise errors.ConfigError("expected a table", file=file, key=prefix)
    values: dict[str, Any] = {"name": name}
    defaults = {f.name: f for f in dataclasses.fields(Profile)}
    for key, value in data.items():
        if key not in _KEYS:
            import difflib

            hint = difflib.get_close_matches(key, sorted(_KEYS), n=1)
            raise errors.ConfigError(
                "unknown key" + (f"; did you mean '{hint[0]}'?" if hint else ""), file=file, key=f"{prefix}.{key}"
            )
        expected = defaults[key].type
        ok = {
            "int | None": isinstance(value, int) and not isinstance(value, bool),
            "int": isinstance(value, int) and not isinstance(value, bool),
            "bool": isinstance(value, bool),
            "str": isinstance(value, str),
            "dict[str, str]": isinstance(value, dict) and all(isinstance(v, str) for v in value.values()),
        }.get(str(expected), True)
        if not ok:
            raise errors.ConfigError(
                f"expected {expected}, got {type(value).__name__} {value!r}", file=file, key=f"{prefix}.{key}"
            )
        values[key] = value
    if "kind" not in values:
        raise errors.ConfigError(f"is required (one of {', '.join(KINDS)})", file=file, key=f"{prefix}.kind")
    profile = Profile(**values)
    try:
        check(profile)
    except errors.ConfigError as exc:
        raise errors.ConfigError(exc.problem, file=file, key=f"{prefix}.{exc.key}") from None
    return profile


class ProfileStore:
    """profiles.toml: the user's profiles and which one opens by default."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or paths.config_dir() / FILE_NAME

    def load(self) -> tuple[dict[str, Profile], str | None]:
        """All profiles by name, and the default's name (None when there are none)."""
        if not self.path.exists():
            return {}, None
        label = str(self.path)
        try:
            raw = self.path.read_bytes()
        except OSError as exc:
            raise errors.ConfigError(f"cannot read: {exc.strerror}", file=label) from None
        data = loader.toml(loader.text_of(raw, label), label, hint="; fix or delete the file")
        unknown = set(data) - {"default", "profiles"}
        if unknown:
            raise errors.ConfigError(
                "unknown key; the file has `default = NAME` and [profiles.NAME] tables", file=label, key=min(unknown)
            )
        tables = data.get("profiles", {})
        if not isinstance(tables, dict):
            raise errors.ConfigError("expected [profiles.NAME] tables", file=label, key="profiles")
        profiles = {name: from_toml(name, table, label) for name, table in tables.items()}
        default = data.get("default")
        if default is not None and default not in profiles:
            raise errors.ConfigError(f"no profile named {default!r}", file=label, key="default")
        # No default named: none. The first profile is not taken silently (the first one added is often
        # the table owner's, which would then open the window as the owner).
        return profiles, default

    def get(self, name: str | None) -> Profile:
        """The named profile, or the default one; a clear error when there is none."""
        profiles, default = self.load()
        wanted = name or default
        if wanted is None and profiles:
            raise errors.UsageError(
                f"no default connection profile in {self.path}: name one with --profile NAME "
                f"({', '.join(profiles)}), or choose the default with `workbench profile default NAME`"
            )
        if wanted is None:
            raise errors.UsageError(
                f"no connection profiles yet ({self.path}); create one with "
                "`workbench profile add NAME …` or in the app's first-run dialog"
            )
        if wanted not in profiles:
            import difflib

            hint = difflib.get_close_matches(wanted, list(profiles), n=1)
            known = f"did you mean '{hint[0]}'?" if hint else f"profiles: {', '.join(profiles) or 'none'}"
            raise errors.UsageError(f"no connection profile named '{wanted}' in {self.path}; {known}")
        return profiles[wanted]

    def save(self, profile: Profile, *, make_default: bool = False, replace: str | None = None) -> None:
        """Add or replace `profile` (renaming the one called `replace`, if given)."""
        check(profile)
        profiles, default = self.load()
        if replace is not None and replace != profile.name:
            profiles.pop(replace, None)
            if default == replace:
                default = profile.name
        profiles[profile.name] = profile
        if make_default:
            default = profile.name
        self._write(profiles, default)

    def remove(self, name: str) -> None:
        profiles, default = self.load()
        if name not in profiles:
            raise errors.UsageError(f"no connection profile named '{name}' in {self.path}")
        del profiles[name]
        if default == name:
            default = None
        self._write(profiles, default)

    def set_default(self, name: str) -> None:
        profiles, _ = self.load()
        if name not in profiles:
            raise errors.UsageError(f"no connection profile named '{name}' in {self.path}")
        self._write(profiles, name)

    def _write(self, profiles: dict[str, Profile], default: str | None) -> None:
        import tomli_w

        data: dict[str, Any] = {}
        if default is not None:
            data["default"] = default
        data["profiles"] = {name: p.to_toml() for name, p in profiles.items()}
        text = (
            "# workbench connection profiles. Passwords are not kept here: they live in the OS\n"
            "# keyring, or come from the WORKBENCH_DB_PASSWORD environment variable.\n\n" + tomli_w.dumps(data)
        )
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Write a temporary file and rename it over the old one: a crash never leaves half a file.
        fd, tmp = tempfile.mkstemp(prefix=".profiles-", suffix=".toml", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
