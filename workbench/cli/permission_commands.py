"""`workbench grants QUEUE` (PostgreSQL roles and row-level security) and `workbench role …` (the roles table)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from workbench.cli import common, output

PG_NOTES = (
    (
        "each operator logs in with their own database login, named exactly like their workbench user and a "
        "member of workbench_operator; supervisors are members of workbench_supervisor: "
        "`workbench people add ann --role operator` (or --role supervisor) makes one in one step"
    ),
    (
        "the table owner (and any superuser) is not bound by the policies: keep that login for `attach`, `init` "
        "and `grants`, never for operators"
    ),
    (
        "a login made an operator by hand (not with `workbench people add`) needs `grants` run again: it limits "
        "how long each of them may stay idle in a transaction (idle_in_transaction_session_timeout, ALTER ROLE "
        "… SET), so that a session which locked waiting rows cannot hide them from everyone's Next item for long"
    ),
)


def add_parsers(sub: Any, parser_class: type[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    text = (
        "print the PostgreSQL roles, grants and row-level security policies that let only supervisors change "
        "other users' locks on QUEUE's table"
    )
    p = sub.add_parser("grants", help=text, description=text, parents=[common])
    p.add_argument("queue", metavar="QUEUE")
    p.add_argument("--apply", action="store_true", help="run them (one transaction) instead of printing them")
    p.add_argument(
        "--revoke",
        action="store_true",
        help="the statements that undo them for QUEUE (the roles stay); with --apply, run those",
    )
    text = (
        "who is a supervisor, in workbench's roles table (with no supervisor in it, everyone may "
        "force-release, reassign and publish)"
    )
    p = sub.add_parser("role", help=text, description=text, parents=[common])
    actions = p.add_subparsers(dest="action", metavar="ACTION", parser_class=parser_class, required=True)
    g = actions.add_parser(
        "grant", help="give USER a role (supervisors; anyone while there is no supervisor)", parents=[common]
    )
    g.add_argument("who", metavar="USER", help="the user's login name, as workbench shows it")
    g.add_argument("role", choices=["supervisor", "operator"], help="the role to give")
    r = actions.add_parser("revoke", help="remove USER's role (supervisors)", parents=[common])
    r.add_argument("who", metavar="USER", help="the user's login name")
    actions.add_parser("list", help="every user with a role", parents=[common])
    text = 'groups of users: a queue with `serves = "GROUP"` serves the group\'s members only'
    p = sub.add_parser("group", help=text, description=text, parents=[common])
    actions = p.add_subparsers(dest="action", metavar="ACTION", parser_class=parser_class, required=True)
    for name, what in (("add", "put USER in GROUP (supervisors)"), ("remove", "take USER out of GROUP (supervisors)")):
        a = actions.add_parser(name, help=what, parents=[common])
        a.add_argument("who", metavar="USER", help="the user's login name")
        a.add_argument("group", metavar="GROUP", help="the group's name, as a queue's `serves` names it")
    a = actions.add_parser("list", help="the members of GROUP, or of every group", parents=[common])
    a.add_argument("group", metavar="GROUP", nargs="?", help="(default: every group)")


def cmd_grants(args: argparse.Namespace, as_json: bool) -> int:
    from workbench.services import admin

    with common.open_database(args) as wb:
        done = admin.grants(wb, args.queue, revoke=args.revoke, apply=args.apply)
    dialect = done.dialect
    if not done.roles:
        if done.batches is not None:
            return _script(args, as_json, dialect, done.batches)
        note = (
            f"{dialect}: workbench sets up database-enforced roles on PostgreSQL only. Here workbench's "
            "roles table decides who is a supervisor (`workbench role grant USER supervisor`, "
            "`workbench role list`); workbench itself checks it, so it does not stop a modified client "
            "or someone who passes another --user. Give operators' database logins only the privileges "
            "they need."
        )
        if as_json:
            output.dump_json({"queue": args.queue, "dialect": dialect, "ddl": "", "applied": False, "notes": [note]})
        else:
            print(note)
        return 0
    ddl = done.ddl
    if as_json:
        output.dump_json(
            {
                "queue": args.queue,
                "dialect": dialect,
                "ddl": ddl,
                "applied": bool(args.apply),
                "revoke": bool(args.revoke),
                "notes": list(PG_NOTES),
            }
        )
    else:
        print(ddl, end="")
        if args.apply:
            sys.stderr.write(f"{'revoked from' if args.revoke else 'applied to'} {done.table_label}\n")
        for note in PG_NOTES:
            sys.stderr.write(f"note: {note}\n")
    return 0


def cmd_role(args: argparse.Namespace, as_json: bool) -> int:
    from workbench.services import admin

    with common.own_tables(args) as wb:
        done = admin.roles(wb, common.user(args), args.action, getattr(args, "who", ""), getattr(args, "role", ""))
    result, supervisors, database_roles = done.result, done.supervisors, done.database_roles
    notes = []
    if not supervisors:
        notes.append(admin.NO_ROLES_NOTE)
    if database_roles:
        notes.append(
            "on PostgreSQL, queues set up with `workbench grants` ignore this table: there the "
            "database role workbench_supervisor decides (GRANT workbench_supervisor TO LOGIN)"
        )
    if as_json:
        data: dict[str, Any] = {"roles_set_up": bool(supervisors), "notes": notes}
        if args.action == "list":
            data["roles"] = [g.to_dict() for g in result]
        else:
            data[args.action if args.action == "grant" else "revoked"] = result.to_dict()
        output.dump_json(data)
        return 0
    if args.action == "grant":
        print(
            f"{result.user} is now {'a supervisor' if result.role == 'supervisor' else 'an operator'} "
            f"(granted by {result.granted_by})"
        )
    elif args.action == "revoke":
        print(f"revoked {result.user}'s role ({result.role})")
    elif result:
        output.table(
            ["USER", "ROLE", "GRANTED BY", "GRANTED AT"],
            [[g.user, g.role, g.granted_by, output.when(g.granted_at)] for g in result],
        )
    else:
        print("no roles in this database")
    for note in notes:
        sys.stderr.write(f"note: {note}\n")
    return 0


def cmd_group(args: argparse.Namespace, as_json: bool) -> int:
    from workbench.services import admin

    with common.own_tables(args) as wb:
        result = admin.group(wb, common.user(args), args.action, getattr(args, "who", ""), args.group)
    if as_json:
        output.dump_json(
            [m.to_dict() for m in result]
            if args.action == "list"
            else {args.action if args.action == "add" else "removed": result.to_dict()}
        )
    elif args.action == "add":
        print(f"{result.user} is in the group {result.group} (added by {result.added_by})")
    elif args.action == "remove":
        print(f"{result.user} is no longer in the group {result.group}")
    elif result:
        output.table(
            ["GROUP", "USER", "ADDED BY", "ADDED AT"],
            [[m.group, m.user, m.added_by, output.when(m.added_at)] for m in result],
        )
    else:
        print(f"nobody is in the group {args.group}" if args.group else "no groups in this database")
    return 0


SCRIPT_NOTE = (
    "untested on a live SQL Server: review it, then run it yourself (e.g. sqlcmd -i FILE); "
    "once it is applied workbench calls these procedures for every login that may (README, "
    '"Who is a supervisor")'
)


def _script(args: argparse.Namespace, as_json: bool, dialect: str, batches: list[str]) -> int:
    """A database where `grants` prints the script and leaves running it to the administrator."""
    from workbench.core import errors

    if args.apply:
        raise errors.UsageError(f"{dialect}: grants --apply is not offered here; the script is {SCRIPT_NOTE}")
    text = "".join(f"{batch}\nGO\n" for batch in batches)
    if as_json:
        output.dump_json(
            {
                "queue": args.queue,
                "dialect": dialect,
                "ddl": text,
                "applied": False,
                "revoke": bool(args.revoke),
                "notes": [SCRIPT_NOTE],
            }
        )
    else:
        print(text, end="")
        sys.stderr.write(f"note: {SCRIPT_NOTE}\n")
    return 0
