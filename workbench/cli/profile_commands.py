"""`workbench profile …`: add, list, show, remove, choose the default, test, and keep a password in the keyring."""

from __future__ import annotations

import argparse
import dataclasses
import getpass
import sys
from collections.abc import Callable
from typing import Any

from workbench import credentials
from workbench.cli import argtypes, output
from workbench.config import profiles
from workbench.core import errors


def add_parser(sub: Any, parser_class: type[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "profile",
        help="manage connection profiles (where your databases are)",
        description="Connection profiles live in profiles.toml in your config directory; "
        "passwords are kept in the OS keyring, never in the file.",
        parents=[common],
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", parser_class=parser_class, required=True)
    actions.add_parser("list", help="list the profiles", parents=[common])
    for name, text in (
        ("show", "show one profile"),
        ("remove", "delete a profile (and not its password)"),
        ("default", "open this profile when none is named"),
    ):
        actions.add_parser(name, help=text, parents=[common]).add_argument("name", metavar="NAME")
    t = actions.add_parser("test", help="try to connect and say exactly what failed", parents=[common])
    t.add_argument("name", metavar="NAME", nargs="?", help="(default: the default profile)")
    pw = actions.add_parser(
        "password",
        help="store the profile's password in the OS keyring (asked for, or read from stdin with --stdin)",
        parents=[common],
    )
    pw.add_argument("name", metavar="NAME", help="the profile whose password to store")
    pw.add_argument("--stdin", action="store_true", help="read the password from the first line of stdin")
    pw.add_argument("--forget", action="store_true", help="remove the stored password instead")
    a = actions.add_parser("add", help="add or replace a profile", parents=[common])
    a.add_argument("name", metavar="NAME", help="the profile's name (replaces one of that name)")
    a.add_argument("--kind", required=True, choices=profiles.KINDS, help="which database it is")
    a.add_argument(
        "--host",
        help="the server: NAME or NAME:PORT; a PostgreSQL cluster as NAME:PORT,NAME:PORT (default: this machine)",
    )
    a.add_argument("--port", type=argtypes.port, help="1 to 65535 (default: the database's own)")
    a.add_argument("--database", help="the database's name on the server")
    a.add_argument("--db-user", dest="db_user", metavar="USER", help="the database login")
    a.add_argument("--path", metavar="FILE", help="SQLite database file")
    a.add_argument("--driver", help="pymysql or odbc (MariaDB/MySQL)")
    a.add_argument("--odbc-driver", metavar="NAME", help="installed ODBC driver name")
    a.add_argument("--no-encrypt", action="store_true", help="SQL Server: do not encrypt the connection")
    a.add_argument(
        "--trust-server-certificate", action="store_true", help="SQL Server: accept a self-signed certificate"
    )
    a.add_argument("--windows-auth", action="store_true", help="SQL Server: log in as your Windows user")
    a.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra driver option (repeatable), e.g. sslmode=require",
    )
    source = a.add_mutually_exclusive_group(required=True)
    source.add_argument("--queues", metavar="FILE", help="the queue config file to use")
    source.add_argument(
        "--published",
        action="store_true",
        help="use the queue settings a supervisor published in the database (`workbench publish`)",
    )
    a.add_argument("--schema", default="", help="schema of workbench's own tables")
    a.add_argument("--default", action="store_true", help="make it the default profile")


def run(args: argparse.Namespace, as_json: bool) -> int:
    store = profiles.ProfileStore()
    return _ACTIONS[args.action](store, args, as_json)


def _list(store: profiles.ProfileStore, args: argparse.Namespace, as_json: bool) -> int:
    found, default = store.load()
    if as_json:
        output.dump_json(
            {"file": str(store.path), "default": default, "profiles": [_public(p) for p in found.values()]}
        )
    elif not found:
        print(f"no profiles yet ({store.path}); add one with `workbench profile add NAME --kind …`")
    else:
        output.table(
            ["", "PROFILE", "CONNECTION", "QUEUES"],
            [["*" if name == default else "", name, p.describe(), _source(p)] for name, p in found.items()],
        )
    return 0


def _show(store: profiles.ProfileStore, args: argparse.Namespace, as_json: bool) -> int:
    profile = store.get(args.name)
    if as_json:
        output.dump_json(_public(profile))
    else:
        print(f"{profile.name}: {profile.describe()}")
        print(f"  queues: {_source(profile)}")
        print(f"  url: {profile.url().render_as_string(hide_password=False)}")
        if profile.needs_password:
            stored = "stored in the OS keyring" if _has_password(profile) else "not stored (asked when needed)"
            print(f"  password: {stored}")
    return 0


def _remove(store: profiles.ProfileStore, args: argparse.Namespace, as_json: bool) -> int:
    was_default = store.load()[1] == args.name
    store.remove(args.name)
    if as_json:
        output.dump_json({"removed": args.name})
    else:
        print(f"removed profile {args.name}")
        if was_default:  # another is never made the default silently
            print("there is no default profile now: choose one with `workbench profile default NAME`")
    return 0


def _default(store: profiles.ProfileStore, args: argparse.Namespace, as_json: bool) -> int:
    store.set_default(args.name)
    if as_json:
        output.dump_json({"default": args.name})
    else:
        print(f"{args.name} is now the default profile")
    return 0


def _add(store: profiles.ProfileStore, args: argparse.Namespace, as_json: bool) -> int:
    options = {}
    for text in args.option:
        key, sep, value = text.partition("=")
        if not sep or not key.strip():
            raise errors.UsageError(f"--option {text!r}: write KEY=VALUE")
        options[key.strip()] = value
    host, port = profiles.split_host(args.host or "", args.port)
    profile = profiles.Profile(
        name=args.name,
        kind=args.kind,
        driver=args.driver or "",
        host=host,
        port=port,
        database=args.database or "",
        user=args.db_user or "",
        path=args.path or "",
        odbc_driver=args.odbc_driver or "",
        encrypt=not args.no_encrypt,
        trust_server_certificate=args.trust_server_certificate,
        windows_auth=args.windows_auth,
        options=options,
        source="database" if args.published else "file",
        config=args.queues or "",
        schema=args.schema,
    )
    store.save(profile, make_default=args.default)
    default = store.load()[1]
    if as_json:
        output.dump_json({**_public(profile), "default": default == profile.name})
    else:
        print(f"saved profile {profile.name}: {profile.describe()}")
        if default == profile.name:
            print(f"{profile.name} is the default profile (opened when no --profile or --config is given)")
        else:
            # Never the default by itself: the first profile is often the table owner's login.
            print(
                f"not the default profile: use it with `workbench --profile {profile.name} …`, or make it the "
                f"default with `workbench profile default {profile.name}`"
            )
        if profile.needs_password and not _has_password(profile):
            print(
                f"store its password with `workbench profile password {profile.name}` (or you are asked "
                "when it is needed)"
            )
    return 0


def _test(store: profiles.ProfileStore, args: argparse.Namespace, as_json: bool) -> int:
    from workbench import opening
    from workbench.services import admin

    profile = store.get(args.name)
    password = opening.password_for(profile)
    result = admin.check_connection(profile.url(), password=password, connect_timeout=profile.connect_timeout)
    if profile.needs_password and password is None and result.reason == "no_password" and sys.stdin.isatty():
        # None stored: tried without one first (trust, .pgpass, Kerberos need none), as every command does;
        # refused, so ask at the terminal and try again.
        password = ask_password(profile)
        result = admin.check_connection(profile.url(), password=password, connect_timeout=profile.connect_timeout)
    race = _claim_race(profile, password) if result.ok else None
    if as_json:
        data = dataclasses.asdict(result)
        data["profile"] = profile.name
        if race is not None:
            data["claim_check"] = {"ok": race.ok, "message": race.message}
        output.dump_json(data)
    else:
        print(result.message)
        if result.detail and not result.ok:
            print(f"  ({result.detail})")
        if result.reason == "no_password" and password is None:
            print(
                f"  store it with `workbench profile password {profile.name}`, or set {credentials.PASSWORD_ENV} "
                "in a script"
            )
        if race is not None:
            print(race.message)
    if not result.ok:
        return errors.DatabaseUnavailable.exit_code
    return 1 if race is not None and race.ok is False else 0


def _claim_race(profile: profiles.Profile, password: str | None) -> Any:
    """The claim self-check (db/racecheck.py) on the profile's queues; None when they cannot be opened."""
    from workbench import opening
    from workbench.services import admin

    try:
        with opening.open_target(opening.Target(profile=profile), password) as wb:
            return admin.claim_check(wb)
    except errors.WorkbenchError as exc:  # no queue settings or tables yet: the connection itself is fine
        return admin.RaceResult(None, f"claim check skipped: {exc}")


def _password(store: profiles.ProfileStore, args: argparse.Namespace, as_json: bool) -> int:
    profile = store.get(args.name)
    if not profile.needs_password:
        raise errors.UsageError(f"profile '{profile.name}' logs in without a password")
    if args.forget:
        removed = credentials.forget(profile.credential_id)
        if as_json:
            output.dump_json({"profile": profile.name, "forgotten": removed})
        else:
            print("password removed from the OS keyring" if removed else "no password was stored")
        return 0
    status = credentials.keyring_status()
    if not status.available:
        raise errors.CredentialStoreError(
            f"cannot store the password: {status.reason}. Scripts may set {credentials.PASSWORD_ENV} instead"
        )
    password = _typed(
        lambda: (
            sys.stdin.readline().rstrip("\r\n")
            if args.stdin
            else getpass.getpass(f"Password for {profile.user}@{profile.host}: ")
        )
    )
    if not password:
        raise errors.UsageError("no password given; nothing stored")
    credentials.store(profile.credential_id, password)
    if as_json:
        output.dump_json({"profile": profile.name, "stored": True, "keyring": status.name})
    else:
        print(f"password for {profile.user}@{profile.host} stored in {status.name}")
    return 0


def ask_password(profile: profiles.Profile) -> str:
    """Ask at the terminal, or explain how to give the password when there is no terminal."""
    if not sys.stdin.isatty():
        raise errors.LoginRefused(
            f"no password for {profile.user}@{profile.host} (profile '{profile.name}'): store it with "
            f"`workbench profile password {profile.name}`, or set {credentials.PASSWORD_ENV} in a script"
        )
    return _typed(lambda: getpass.getpass(f"Password for {profile.user}@{profile.host}: "))


def _typed(read: Callable[[], str]) -> str:
    """A password read from the terminal or stdin, which must be text in its encoding."""
    try:
        return read()
    except UnicodeDecodeError:
        raise errors.UsageError(
            "the password given is not valid text in this system's encoding; nothing was stored or sent"
        ) from None


def _has_password(profile: profiles.Profile) -> bool:
    return credentials.keyring_status().available and credentials.lookup(profile.credential_id) is not None


def _source(profile: profiles.Profile) -> str:
    return "published in the database" if profile.source == "database" else profile.config


def _public(profile: profiles.Profile) -> dict[str, Any]:
    data = dataclasses.asdict(profile)
    data["url"] = profile.url().render_as_string(hide_password=False)
    return data


_ACTIONS = {
    "list": _list,
    "show": _show,
    "remove": _remove,
    "default": _default,
    "add": _add,
    "test": _test,
    "password": _password,
}
