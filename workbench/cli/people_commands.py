"""`workbench people add|list|remove`: each operator's and supervisor's own database login, in one step."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from workbench.cli import common, output
from workbench.core import errors


def add_parser(sub: Any, parser_class: type[argparse.ArgumentParser], common_parser: argparse.ArgumentParser) -> None:
    text = (
        "each person's own database login, in workbench's roles: made here where this login may create logins "
        "(else the SQL for the database administrator), listed with the queues it may work, removed"
    )
    p = sub.add_parser("people", help=text, description=text, parents=[common_parser])
    actions = p.add_subparsers(dest="action", metavar="ACTION", parser_class=parser_class, required=True)
    a = actions.add_parser(
        "add",
        help="make PERSON's login an operator's or a supervisor's, and print the profile line they need",
        parents=[common_parser],
    )
    a.add_argument("person", metavar="PERSON", help="the login, named like the person's workbench user")
    a.add_argument(
        "--role",
        required=True,
        choices=["operator", "supervisor"],
        help="an operator works the queues; a supervisor also watches them in the console and may release or "
        "move anyone's lock",
    )
    a.add_argument(
        "--queues",
        metavar="Q,…",
        help="the queues they work, comma-separated (default: every queue of the config); a queue that serves "
        "a group puts them in it",
    )
    secret = a.add_mutually_exclusive_group()
    secret.add_argument(
        "--keyring",
        action="store_true",
        help="store a new login's generated password in this computer's OS keyring instead of printing it",
    )
    secret.add_argument(
        "--no-password",
        action="store_true",
        help="make the login without a password (the server authenticates it otherwise: Kerberos, "
        "certificates, pg_hba.conf, Windows authentication)",
    )
    actions.add_parser(
        "list", help="who may work which queue, and whether their login is ready", parents=[common_parser]
    )
    s = actions.add_parser(
        "sessions",
        help="PostgreSQL: sessions idle in an open transaction (row locks they hold hide items from every Next "
        "item), and --end PID to end one",
        parents=[common_parser],
    )
    s.add_argument("--end", metavar="PID", type=int, help="end this session (its transaction rolls back)")
    r = actions.add_parser(
        "remove", help="take PERSON out of workbench's roles and drop their login", parents=[common_parser]
    )
    r.add_argument("person", metavar="PERSON", help="the login `people add` made or found")
    r.add_argument("--keep-login", action="store_true", help="only take them out of workbench's roles")


def run(args: argparse.Namespace, as_json: bool) -> int:
    from workbench.services import admin

    with common.open_database(args) as wb:
        if args.action == "add":
            queues = [q.strip() for q in args.queues.split(",") if q.strip()] if args.queues else None
            added = admin.people_add(
                wb,
                common.user(args),
                args.person,
                args.role,
                queues,
                password=not args.no_password,
                keyring=args.keyring,
            )
            return _added(added, as_json)
        if args.action == "sessions":
            return _sessions(wb, args.end, as_json)
        if args.action == "remove":
            return _removed(admin.people_remove(wb, args.person, keep_login=args.keep_login), as_json)
        return _listed(admin.people_list(wb), as_json)


def _added(added: Any, as_json: bool) -> int:
    change = added.change
    shown = change.password if change.password and not added.password_stored else None
    if as_json:
        output.dump_json(
            {
                "person": change.name,
                "role": change.role,
                "applied": change.applied,
                "sql": change.sql,
                "password": shown,
                "password_stored": added.password_stored or None,
                "groups": added.groups,
                "profile": added.profile_line,
                "notes": change.notes,
            }
        )
    elif change.applied:
        print(
            f"{change.name} is now {'an operator' if change.role == 'operator' else 'a supervisor'}: "
            "their login is ready"
        )
        if shown:
            print(f"password (shown once, not kept anywhere; hand it to {change.name}): {shown}")
        elif added.password_stored:
            print(f"password stored in {added.password_stored} on this computer (not shown)")
        for group in added.groups:
            print(f"in the group {group} (a queue serves it)")
        print(f"{change.name}'s profile (they run it, then `workbench profile password` with that password):")
        print(f"  {added.profile_line}")
    else:
        print(change.sql, end="")
    for note in change.notes:
        sys.stderr.write(f"note: {note}\n")
    if change.applied:
        return 0
    if change.script:
        sys.stderr.write(
            "note: SQL Server: review this and run it as an administrator (workbench does not run it); "
            f"then {change.name}'s profile: {added.profile_line}\n"
        )
        return 0
    sys.stderr.write(
        f"workbench: this login may not create logins (PostgreSQL: CREATEROLE; MariaDB: CREATE USER and "
        f"GRANT OPTION), so nothing was changed: a database administrator runs the SQL above; then "
        f"{change.name}'s profile: {added.profile_line}\n"
    )
    return errors.NotPermitted.exit_code


def _removed(change: Any, as_json: bool) -> int:
    if as_json:
        output.dump_json({"person": change.name, "applied": change.applied, "sql": change.sql, "notes": change.notes})
    elif change.applied:
        print(
            f"{change.name} is no longer in workbench's roles" + ("" if "DROP" not in change.sql else "; login dropped")
        )
    else:
        print(change.sql, end="")
    for note in change.notes:
        sys.stderr.write(f"note: {note}\n")
    if change.applied or change.script:
        return 0
    sys.stderr.write("workbench: this login may not drop logins: a database administrator runs the SQL above\n")
    return errors.NotPermitted.exit_code


def _listed(found: list[Any], as_json: bool) -> int:
    if as_json:
        output.dump_json([p.to_dict() for p in found])
    elif found:
        output.table(
            ["PERSON", "ROLE", "QUEUES", "LOGIN"],
            [
                [p.name, p.role, ", ".join(p.queues) or "(none)", "ready" if p.ready else "; ".join(p.problems)]
                for p in found
            ],
        )
    else:
        print("nobody is in workbench's roles here yet; add people with `workbench people add NAME --role operator`")
    return 0


def _sessions(wb: Any, end: int | None, as_json: bool) -> int:
    from workbench.services import admin

    if end is not None:
        ended = admin.end_session(wb, end)
        if as_json:
            output.dump_json({"ended": ended.to_dict()})
        else:
            print(f"ended session {ended.pid} of {ended.login}: its transaction rolled back, its row locks are gone")
        return 0
    found, sees_all = admin.idle_sessions(wb)
    if as_json:
        output.dump_json({"sessions": [s.to_dict() for s in found], "sees_every_login": sees_all})
    elif found:
        output.table(
            ["PID", "LOGIN", "IDLE", "OPEN", "HOLDS ROWS OF"],
            [[s.pid, s.login, f"{s.idle_seconds}s", f"{s.open_seconds}s", ", ".join(s.tables) or "-"] for s in found],
        )
    else:
        print("no session is idle in an open transaction")
    if not sees_all:
        sys.stderr.write(
            "note: this login sees only its own sessions' state; to see and end everyone's, a database "
            f"administrator runs: {admin.SESSION_GRANTS}\n"
        )
    return 0
