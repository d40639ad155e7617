"""What every command needs before it acts: who the user is, and the database opened (with a login)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from workbench.cli import argtypes, profile_commands
from workbench.core import errors, login


def default_user() -> str:
    return login.login_name()


def user(args: argparse.Namespace) -> str:
    """--user, else the login name: who acts (UsageError when neither is usable)."""
    name = args.user if args.user is not None else default_user()
    if not name or not name.strip():
        raise errors.UsageError("cannot tell your user name; pass --user NAME")
    if not argtypes.is_text(name):  # --user is checked by the parser; the login name is not
        raise errors.UsageError(
            f"your login name '{argtypes.shown(name)}' is not valid text in this system's encoding; pass --user NAME"
        )
    return name.strip()


def open_database(args: argparse.Namespace) -> Any:
    """The database --config, --profile or --demo names (or the one found first), logged in to."""
    from workbench import opening

    target = opening.choose(args.config, args.profile, args.demo)
    return _started(login_to(target, lambda password: opening.open_target(target, password)))


def login_to(target: Any, open_with: Callable[[str | None], Any]) -> Any:
    """`open_with(password)` with the stored password; with none stored, try without one first
    (trust, Kerberos and .pgpass need none) and ask only when the server refuses."""
    from workbench import opening

    profile = target.profile
    if profile is None:  # a config file's password comes from WORKBENCH_DB_PASSWORD
        return open_with(None)
    password = opening.password_for(profile)
    if not profile.needs_password or password is not None:
        return open_with(password)
    from workbench.services import admin  # only here: `next` with a stored password need not load it

    wb = None
    try:
        wb = open_with(None)
        admin.log_in(wb)
        return wb
    except errors.LoginRefused:
        if wb is not None:
            wb.close()
    return open_with(profile_commands.ask_password(profile))


def own_tables(args: argparse.Namespace, *, demo: bool = False) -> Any:
    """The database of --config/--profile opened for workbench's own tables (roles, groups, published
    settings): no queue is bound."""
    from workbench import opening
    from workbench.services import admin

    target = opening.choose(args.config, args.profile, demo)
    database = target.database()
    return _started(
        login_to(target, lambda password: admin.open_database(admin.no_queues(database), password=password))
    )


def _started(wb: Any) -> Any:
    """The database is open, its engine's modules imported: the start is over for the collector."""
    from workbench import start_collection

    start_collection.release()
    return wb
