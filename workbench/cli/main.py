"""`workbench [--config FILE] [--user NAME] [--json] COMMAND …`: parse, run, print, exit with a documented code."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime as dt
import functools
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from workbench import __version__
from workbench.cli import (
    argtypes,
    common,
    output,
    people_commands,
    permission_commands,
    profile_commands,
    stats_commands,
    translations,
)
from workbench.core import errors, models

translations.install()  # before any parser is built: each of its strings looks up the translation

EXIT_CODES = """exit codes:
  0  ok
  1  anything else (e.g. not permitted: a supervisor's action by someone who is not one)
  2  usage or config error
  3  nothing to claim
  4  lock lost or not held
  5  invalid value
  6  database unreachable
"""


class _Partial(Exception):
    """A parser built for some commands only refused the command line: the whole parser says why."""


class _Parser(argparse.ArgumentParser):
    json_errors = False  # set by main() when --json is anywhere on the command line
    partial = False  # set by main() while a parser of the named commands only parses

    def error(self, message: str) -> None:  # type: ignore[override]
        if _Parser.partial:
            raise _Partial(message)
        # argparse exits 2 for usage errors, which is our usage code too; add the fix hint. The
        # message may quote an argument that is not text (an unknown option in Latin-1) or holds
        # terminal controls: both as \xNN.
        message = output.escape(argtypes.shown(message))
        if _Parser.json_errors:
            output.dump_json({"error": {"type": "UsageError", "message": message, "exit_code": 2}})
        self.print_usage(sys.stderr)
        self.exit(
            2,
            f"workbench: error: {message} (see `workbench {self.prog.split()[-1]} --help`)\n"
            if " " in self.prog
            else f"workbench: error: {message}\n",
        )


class _Unused:
    """Stands in for the parser of a command that the command line does not name: takes every call."""

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: self


class _Only:
    """The sub-command action, adding only the parsers of `names` (each costs ~0.4 ms to build)."""

    def __init__(self, sub: Any, names: frozenset[str]) -> None:
        self.sub, self.names = sub, names

    def add_parser(self, name: str, **kwargs: Any) -> Any:
        return self.sub.add_parser(name, **kwargs) if name in self.names else _Unused()


def build_parser(only: frozenset[str] | None = None) -> argparse.ArgumentParser:
    """Every command's parser; with `only`, those of the commands named there (a command line's words:
    its command is one of them), which parses that command line as the whole parser does."""
    common = _Parser(add_help=False)  # a parent of _Parser subparsers (typeshed: one parser class)
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print machine-readable JSON")
    parser = _Parser(
        prog="workbench",
        description="Work a queue of records in a database table, one locked item at a time.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="queue configuration (default: $WORKBENCH_CONFIG, ./workbench.toml, the user config dir, then the demo)",
    )
    parser.add_argument(
        "--profile",
        metavar="NAME",
        help="connection profile to use (default: "
        "$WORKBENCH_PROFILE, then the default profile); see `workbench profile list`",
    )
    parser.add_argument(
        "--user", metavar="NAME", default=None, help="user name to lock under (default: your login name)"
    )
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")
    parser.add_argument(
        "--demo",
        action="store_true",
        help="use the demo database (created on first use), even when a default profile exists; "
        "without a command: open the window on it",
    )
    parser.add_argument(
        "--supervisor",
        action="store_true",
        help="without a command: open the supervisor "
        "console (lock board, queue health, operators, history) instead of the operator window",
    )
    parser.add_argument(
        "--self-test",
        action="store_true",
        help="check this installation without a display "
        "(drivers, a demo database round trip, the windows offscreen) and exit",
    )
    parser.add_argument("--version", action="version", version=f"workbench {__version__}")
    sub: Any = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    if only is not None:
        sub = _Only(sub, only)

    def add(name: str, help_text: str, queue: bool = True, key: bool = False) -> argparse.ArgumentParser:
        p: argparse.ArgumentParser = sub.add_parser(name, help=help_text, description=help_text, parents=[common])
        if queue:
            p.add_argument("queue", metavar="QUEUE")
        if key:
            p.add_argument("key", metavar="KEY")
        return p

    p = add("demo", "write a SQLite demo database and config; prints the config path", queue=False)
    p.add_argument("dir", metavar="DIR", nargs="?", help="where to write it (default: your workbench data dir)")
    p.add_argument("--force", action="store_true", help="replace an existing demo database")
    add("init", "create or upgrade workbench's own tables (audit trail)", queue=False)
    add("queues", "list the configured queues", queue=False)
    p = add("attach", "print the DDL that adds the lock columns and claim indexes")
    p.add_argument("--apply", action="store_true", help="run the DDL instead of printing it")
    p = add("next", "claim the next item(s) in queue order")
    p.add_argument(
        "--count",
        type=argtypes.count,
        default=1,
        metavar="N",
        help=f"claim up to N items (at most {argtypes.MAX_COUNT})",
    )
    p.add_argument(
        "--where",
        dest="where",
        type=_assignment,
        action="append",
        default=[],
        metavar="COL=VALUE",
        help="only items whose column holds this value (repeatable; the queue's filter_by columns)",
    )
    _quiet(p)
    _quiet(add("claim", "claim one specific item", key=True))
    add("show", "show an item and its lock", key=True)
    p = add("save", "store edits while holding the lock", key=True)
    _token(p)
    _sets(p, required=True)
    p = add("complete", "complete an item you hold", key=True)
    _token(p)
    p.add_argument("--outcome", metavar="NAME", help="which outcome (default: the queue's first)")
    _sets(p, required=False)
    _note(p)
    p.add_argument(
        "--next",
        dest="then_next",
        action="store_true",
        help="then claim the next item and show it, as `next` does (on PostgreSQL in the same statement)",
    )
    p.add_argument(
        "--where",
        dest="where",
        type=_assignment,
        action="append",
        default=[],
        metavar="COL=VALUE",
        help="with --next: only items whose column holds this value (as for `next`)",
    )
    p.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help='with --next: print only the next item\'s "KEY TOKEN" (nothing when none was claimed)',
    )
    p = add("release", "give an item back to the queue", key=True)
    _token(p)
    p.add_argument("--reason", metavar="TEXT", help="why (shown in the history)")
    _note(p)
    p = add(
        "defer",
        "give an item back until a time: nobody gets it before, then it comes first (to you for a while)",
        key=True,
    )
    _token(p)
    p.add_argument(
        "--until",
        metavar="WHEN",
        required=True,
        type=argtypes.moment,
        help='"2026-11-26 10:00" (your computer\'s zone unless given) or a duration from now: "2h" '
        "(at most a year ahead)",
    )
    p.add_argument("--reason", metavar="TEXT", required=True, help="why (shown in the history)")
    _note(p)
    add("deferred", "the items deferred to a time still to come, soonest first")
    p = add("escalate", "hand an item you hold to a supervisor, with the queue's on_escalate values", key=True)
    _token(p)
    p.add_argument("--reason", metavar="TEXT", required=True, help="why (shown to the supervisor and in the history)")
    p = add("escalated", "the items handed to a supervisor, newest first, and what became of each")
    p.add_argument("--mine", action="store_true", help="only the items you escalated")
    p = add("extend", "extend your lock by the queue's lock duration", key=True)
    _token(p)
    add("mine", "list your locks in a queue")
    add("locks", "list every lock in a queue with its age and time left")
    p = add("force-release", "take an item away from its holder (supervisors)", key=True)
    p.add_argument("--reason", metavar="TEXT", required=True, help="why (shown to the holder)")
    _quiet(
        add(
            "undo",
            "take back your Complete of an item within the queue's undo_within: it is yours again, with a fresh lock",
            key=True,
        )
    )
    _quiet(
        add(
            "take",
            "take an escalated item to work it: yours, with a fresh lock, as after a claim (supervisors)",
            key=True,
        )
    )
    p = add("reopen", "put a finished item back to waiting with the queue's on_reopen values (supervisors)", key=True)
    p.add_argument("--reason", metavar="TEXT", required=True, help="why (kept in the item's history)")
    p = add(
        "move",
        "change waiting items nobody holds, e.g. another category or tier so that another queue or "
        "group serves them (supervisors)",
    )
    p.add_argument("keys", metavar="KEY", nargs="*", help="the items to move (or --where)")
    p.add_argument(
        "--where",
        dest="where",
        type=_assignment,
        action="append",
        default=[],
        metavar="COL=VALUE",
        help="every waiting item whose column holds this value (repeatable)",
    )
    _sets(p, required=True)
    p.add_argument("--reason", metavar="TEXT", required=True, help="why (kept in each item's history)")
    p = add("reassign", "move an item's lock to another user (supervisors)", key=True)
    p.add_argument("--to", metavar="USER", required=True, help="the new holder")
    p.add_argument("--reason", metavar="TEXT", required=True, help="why (shown to the old holder)")
    add("sweep", "return expired locks to the queue and record the expiries")
    add("history", "every recorded event of one item", key=True)
    p = add("note", "add a note to an item (notes are kept, never changed)", key=True)
    p.add_argument("--text", metavar="TEXT", required=True, help="the note")
    add("notes", "the notes on one item, oldest first", key=True)
    stats_commands.add_arguments(
        "board",
        add("board", "the lock board: every lock with its age, time left, idle time and extensions (supervisors)"),
    )
    stats_commands.add_arguments(
        "health",
        add("health", "waiting, locked and expired now; today's completions, releases and expiries (supervisors)"),
    )
    stats_commands.add_arguments(
        "stats", add("stats", "per operator: completions, handle times, releases, expiries (supervisors)")
    )
    p = add(
        "publish",
        "publish a config file's queue settings in the database for every operator (supervisors)",
        queue=False,
    )
    p.add_argument("--file", metavar="FILE", help="the settings to publish (default: the --config file)")
    p.add_argument("--note", metavar="TEXT", help="what changed (shown in `workbench published`)")
    p = add("published", "show the queue settings published in the database", queue=False)
    p.add_argument("--history", action="store_true", help="every published version, newest first")
    p = add(
        "relay",
        "serve the change relay: read the audit trail once per interval for every window and wake the windows "
        "it concerns (run one per site, beside PgBouncer or as a service; windows find it by [app] relay)",
        queue=False,
    )
    p.add_argument(
        "--listen",
        metavar="HOST:PORT",
        help="where to listen (default: the config's [app] relay; 0.0.0.0:PORT for every interface)",
    )
    p.add_argument(
        "--every",
        type=float,
        default=0.5,
        metavar="SECONDS",
        help="seconds between two reads of the audit trail (default 0.5; 0.1 to 2)",
    )
    profile_commands.add_parser(sub, _Parser, common)
    permission_commands.add_parsers(sub, _Parser, common)
    people_commands.add_parser(sub, _Parser, common)
    argtypes.require_text(parser)  # every argument: bytes that are not text are refused by name
    return parser


def _quiet(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help='print only "KEY TOKEN" per item, for shell scripts: workbench next Q -q | { read KEY TOKEN; …; }',
    )


def _note(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--note",
        metavar="TEXT",
        help="a note for whoever works the item next, kept with the item "
        "(required where the queue's notes_required names this action)",
    )


def _token(p: argparse.ArgumentParser) -> None:
    p.add_argument("--token", required=True, metavar="T", help="the token printed when you claimed the item")


def _assignment(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"{text!r}: write COLUMN=VALUE")
    return name.strip(), value


def _sets(p: argparse.ArgumentParser, required: bool) -> None:
    p.add_argument(
        "--set",
        dest="sets",
        type=_assignment,
        action="append",
        default=[],
        required=required,
        metavar="COL=VALUE",
        help="a column value (repeatable; an empty VALUE clears a non-text column; a lookup column "
        'takes in save and complete the related row\'s key or its display text, e.g. vendor="Acme")',
    )


class OwnProcessNeeded(BaseException):
    """Raised in a command server's child for what needs a process of its own (the window, the
    self-test, a password prompt at the terminal): the caller runs the command itself instead.
    A BaseException, so that no command's error handling takes it for a failure."""


def main(
    argv: Sequence[str] | None = None, *, parser: argparse.ArgumentParser | None = None, served: bool = False
) -> int:
    """Run one command line. `parser`: one built before (the command server builds it once);
    `served`: this process is a command server's child (see OwnProcessNeeded)."""
    words = sys.argv[1:] if argv is None else list(argv)
    _Parser.json_errors = "--json" in words
    args = _parse(parser, words)
    if served and (args.self_test or args.command is None):
        raise OwnProcessNeeded
    as_json = bool(getattr(args, "json", False))
    if args.self_test:
        if args.command is not None:
            (parser or whole_parser()).error("--self-test takes no command")
        from workbench import codecache, opening, selftest

        codecache.write_nothing()
        target = opening.choose(args.config, args.profile) if args.config or args.profile else None
        return selftest.run(as_json=as_json, target=target)
    if args.command is None:
        return _gui(args)
    with output.escaped(json_stdout=as_json):
        return _run(args, as_json)


def _parse(parser: argparse.ArgumentParser | None, words: list[str]) -> argparse.Namespace:
    """The command line parsed. Without a parser given, by one of the commands it names only (the
    whole parser takes ten times as long to build: about 4 ms against 0.4); what that one refuses, or a request
    for help, goes to the whole parser, so that every message and help text is the whole parser's."""
    if parser is None and not {"-h", "--help"} & set(words):
        _Parser.partial = True
        try:
            return build_parser(only=frozenset(words)).parse_args(words)
        except _Partial:
            pass
        finally:
            _Parser.partial = False
    return (parser or whole_parser()).parse_args(words)


@functools.cache
def whole_parser() -> argparse.ArgumentParser:
    """build_parser(), once a process: a parser keeps nothing of a command line it parsed (the
    command server's children share one), and a process that runs several command lines (a test's)
    need not build it for each."""
    return build_parser()


def _run(args: argparse.Namespace, as_json: bool) -> int:
    try:
        return _COMMANDS[args.command](args, as_json)
    except errors.LoginNotOperator as exc:  # the cause said for the user this command acts as
        with contextlib.suppress(errors.WorkbenchError):
            exc = errors.LoginNotOperator(exc.login, common.user(args))
        _report(exc, as_json)
        return exc.exit_code
    except errors.WorkbenchError as exc:
        _report(exc, as_json)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader (e.g. `| head`) went away: stop quietly, as a process killed by SIGPIPE would.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as exc:  # noqa: BLE001 - last resort: one line, details on request
        if os.environ.get("WORKBENCH_DEBUG"):
            traceback.print_exc()
        _report(exc, as_json, prefix="internal error: ")
        return 1


def _report(exc: BaseException, as_json: bool, prefix: str = "") -> None:
    code = getattr(exc, "exit_code", 1)
    # A message may quote a name from the environment that is not text (WORKBENCH_CONFIG in
    # Latin-1): its bytes as \xNN, which any terminal and JSON can show.
    message = argtypes.shown(str(exc))
    sys.stderr.write(f"workbench: {prefix}{message}\n")
    if as_json:
        error: dict[str, Any] = {"type": type(exc).__name__, "message": message, "exit_code": code}
        for field in ("cause", "holder", "by", "at", "reason", "column", "file", "key", "user"):
            if hasattr(exc, field) and getattr(exc, field) is not None:
                value = getattr(exc, field)
                value = argtypes.shown(value) if isinstance(value, str) else value
                error[field] = models.shown(value) if field == "at" else value  # may be another's lock time
        output.dump_json({"error": error})


def _gui(args: argparse.Namespace) -> int:
    """No command: the operator window (the desktop app is the main way in)."""
    if sys.platform.startswith("linux") and not any(
        os.environ.get(name) for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")
    ):
        # Qt would abort the process with a core dump; say what is wrong instead.
        sys.stderr.write(
            "workbench: no display to open the window on (DISPLAY and WAYLAND_DISPLAY are "
            "unset); run it in a desktop session, or use a command, see `workbench --help`\n"
        )
        return 1
    try:
        from workbench.gui import app
    except ImportError as exc:  # the Qt runtime or PySide6 is missing
        sys.stderr.write(
            f"workbench: the desktop app cannot start ({exc}); install PySide6 "
            "(pip install PySide6-Essentials) or use a command, see `workbench --help`\n"
        )
        return 1
    try:
        return app.run(args.config, common.user(args), demo=args.demo, profile=args.profile, supervisor=args.supervisor)
    except errors.WorkbenchError as exc:
        _report(exc, False)
        return exc.exit_code


# -- commands ----------------------------------------------------------------------------------


def _serve(args: argparse.Namespace, role: str, *, acting: bool = True) -> tuple[Any, Any]:
    """The open database and the service (`role`: "Operator" or "Supervisor") for the command's queue:
    the queue is checked first, then who acts (commands that only read name nobody)."""
    from workbench import services

    wb = common.open_database(args)
    try:
        served = getattr(services, role)(wb, "")
        served.check_queue(args.queue)
        if acting:
            served.user = common.user(args)
    except BaseException:
        wb.close()
        raise
    return wb, served


def _operator(args: argparse.Namespace, *, acting: bool = True) -> tuple[Any, Any]:
    return _serve(args, "Operator", acting=acting)


def _supervisor(args: argparse.Namespace, *, acting: bool = True) -> tuple[Any, Any]:
    return _serve(args, "Supervisor", acting=acting)


def _held(args: argparse.Namespace) -> Any:
    """The lock the command names: QUEUE KEY TOKEN."""
    from workbench import services

    return services.HeldLock(args.queue, args.key, args.token)


def cmd_demo(args: argparse.Namespace, as_json: bool) -> int:
    from workbench import demo
    from workbench.config import paths

    directory = Path(args.dir) if args.dir else paths.demo_dir()
    config_path = directory / demo.CONFIG_NAME
    created = True
    if (directory / demo.DB_NAME).exists() and config_path.exists() and not args.force:
        created = False  # keep an existing demo (and its work); --force starts over
    else:
        config_path = demo.create(directory, overwrite=True)
    if as_json:
        output.dump_json({"config": str(config_path.resolve()), "created": created})
    else:
        if not created:
            sys.stderr.write("demo already exists (use --force to start over)\n")
        print(config_path.resolve())
    first = _comes_first(config_path)
    if first:  # commands would quietly use that, not this demo
        how = "--demo" if directory == paths.demo_dir() else f"--config {config_path.resolve()}"
        sys.stderr.write(f"note: commands and the window use {first} first; add {how} to use this demo\n")
    return 0


def _comes_first(config_path: Path) -> str | None:
    """What a command without --demo/--config/--profile opens when that is not `config_path`: its label."""
    from workbench import opening

    try:
        target = opening.choose()
    except errors.WorkbenchError:
        return None  # nothing else is found first
    if target.config_path is not None and target.config_path.resolve() == config_path.resolve():
        return None
    return target.label


def cmd_init(args: argparse.Namespace, as_json: bool) -> int:
    with common.open_database(args) as wb:
        applied = wb.init()
    if as_json:
        output.dump_json({"applied": [{"version": m.version, "description": m.description} for m in applied]})
    elif applied:
        for m in applied:
            print(f"applied migration {m.version}: {m.description}")
    else:
        print("workbench's tables are up to date")
    return 0


def cmd_queues(args: argparse.Namespace, as_json: bool) -> int:
    from workbench.services import admin

    with common.open_database(args) as wb:  # published settings are read from the database
        wb.validate()  # what `next` would refuse is refused here too
        config = wb.config
        warnings = admin.clock_warnings(wb)  # lock times written on another clock
    rows = [
        {"name": q.name, "title": q.title, "table": q.table_label, "outcomes": [o.name for o in q.outcomes]}
        for q in config.queues.values()
    ]
    for warning in warnings if not as_json else []:
        sys.stderr.write(f"warning: {warning}\n")
    if as_json:
        output.dump_json({"config": config.path, "queues": rows, "warnings": warnings})
    else:
        output.table(
            ["QUEUE", "TITLE", "TABLE", "OUTCOMES"],
            [[r["name"], r["title"], r["table"], ", ".join(r["outcomes"])] for r in rows],
        )
    return 0


def cmd_attach(args: argparse.Namespace, as_json: bool) -> int:
    from workbench.services import admin

    with common.open_database(args) as wb:
        plan = admin.attach(wb, args.queue, apply=args.apply)
    if as_json:
        output.dump_json(
            {
                "queue": args.queue,
                "ddl": plan.ddl,
                "applied": plan.applied,
                "notes": plan.notes,
                "suggested": plan.suggested,
            }
        )
    else:
        if plan.empty and not plan.suggested:
            print(f"-- {args.queue}: lock columns and claim indexes are already in place")
        else:
            print(plan.ddl, end="")
            if plan.applied:
                sys.stderr.write(f"applied to {wb.config.queues[args.queue].table_label}\n")
        for note in plan.notes:
            sys.stderr.write(f"note: {note}\n")
    return 0


def cmd_next(args: argparse.Namespace, as_json: bool) -> int:
    wb, op = _operator(args)
    with wb:
        result = op.next_items(args.queue, args.count, _pairs(args.where, "--where"))
    if as_json:
        output.dump_json(result[0].to_dict() if args.count == 1 else [c.to_dict() for c in result])
    elif args.quiet:
        for c in result:
            print(c.lock.key, c.lock.token)
    else:
        for c in result:
            output.claim(c, hide=op.lock_columns(args.queue))
    return 0


def cmd_claim(args: argparse.Namespace, as_json: bool) -> int:
    wb, op = _operator(args)
    with wb:
        result = op.claim(args.queue, args.key)
    return _claimed(args, as_json, op, result)


def _claimed(args: argparse.Namespace, as_json: bool, op: Any, result: Any) -> int:
    """Print one item just locked for the caller (claim, undo)."""
    if as_json:
        output.dump_json(result.to_dict())
    elif args.quiet:
        print(result.lock.key, result.lock.token)
    else:
        output.claim(result, hide=op.lock_columns(args.queue))
    return 0


def cmd_show(args: argparse.Namespace, as_json: bool) -> int:
    wb, op = _operator(args, acting=False)
    with wb:
        view = op.show(args.queue, args.key)
    if as_json:
        data = view.to_dict()
        # A token is the holder's, not for anyone who looks.
        if data["lock"]:
            data["lock"].pop("token")
        data["item"] = op.shown_item(args.queue, data["item"])
        output.dump_json(data)
    else:
        lock = view.lock
        state = view.state
        if lock is not None:
            state += f" by {lock.owner} since {output.when(lock.locked_at)} until {output.when(lock.expires_at)}"
        print(f"{view.queue} {view.key}: {state}")
        output.item({k: v for k, v in view.item.items() if k not in op.lock_columns(args.queue)})
    return 0


def _edits(args: argparse.Namespace) -> dict[str, str]:
    return _pairs(args.sets, "--set")


def _pairs(given: list[tuple[str, str]], option: str) -> dict[str, str]:
    """COL=VALUE options as a dict; a column given twice is refused."""
    pairs: dict[str, str] = {}
    for name, value in given:
        if name in pairs:
            raise errors.UsageError(f"{option} {name} is given twice")
        pairs[name] = value
    return pairs


def cmd_save(args: argparse.Namespace, as_json: bool) -> int:
    wb, op = _operator(args)
    with wb:
        lock = op.save(_held(args), op.resolve_lookups(args.queue, _edits(args)))
    if as_json:
        output.dump_json(lock.to_dict())
    else:
        print(f"saved {lock.queue} {lock.key}; your lock runs until {output.when(lock.expires_at)}")
    return 0


def cmd_complete(args: argparse.Namespace, as_json: bool) -> int:
    if (args.where or args.quiet) and not args.then_next:
        raise errors.UsageError("--where and --quiet are about the next item: use them with --next")
    wb, op = _operator(args)
    where = _pairs(args.where, "--where")
    nothing: errors.NothingToClaim | None = None
    with wb:
        done = op.complete(
            _held(args),
            args.outcome,
            op.resolve_lookups(args.queue, _edits(args)),
            note=args.note,
            then_next=args.then_next,
            where=where,
        )
        following = done.next
        if args.then_next and following is None:
            try:  # the claim says why there is none (or takes one that has come free since)
                following = op.next_item(args.queue, where)
            except errors.NothingToClaim as exc:
                nothing = exc
    if as_json:
        data = done.to_dict()
        if args.then_next:
            data["next"] = following.to_dict() if following is not None else None
            data["nothing_to_claim"] = str(nothing) if nothing is not None else None
        output.dump_json(data)
        return 0
    if args.quiet:
        if following is not None:
            print(following.lock.key, following.lock.token)
        return 0
    note = " (already completed earlier with this token)" if done.replayed else ""
    if done.review is not None:
        # Not yet its outcome: the item waits for someone else's verdict first.
        print(f"completed {done.queue} {done.key}: sent to review in {done.review} (four eyes){note}")
    else:
        print(f"completed {done.queue} {done.key} as {done.outcome}{note}")
    if following is not None:
        output.claim(following, hide=op.lock_columns(args.queue))
    elif nothing is not None:
        print(f"no next item: {nothing}")
    return 0


def cmd_release(args: argparse.Namespace, as_json: bool) -> int:
    wb, op = _operator(args)
    with wb:
        op.release(_held(args), args.reason, note=args.note)
        key = op.key_of(args.queue, args.key)
    if as_json:
        output.dump_json({"queue": args.queue, "key": key, "released": True, "reason": args.reason})
    else:
        print(f"released {args.queue} {args.key}")
    return 0


def cmd_defer(args: argparse.Namespace, as_json: bool) -> int:
    wb, op = _operator(args)
    with wb:
        until = args.until
        if isinstance(until, dt.timedelta):  # from now on the database's clock
            until = op.db_clock(args.queue).utc.replace(tzinfo=dt.UTC) + until
        deferral = op.defer(_held(args), until, args.reason, note=args.note)
    if as_json:
        output.dump_json(deferral.to_dict())
    else:
        print(f"deferred {args.queue} {args.key} until {output.when(deferral.until)}")
    return 0


def cmd_escalate(args: argparse.Namespace, as_json: bool) -> int:
    wb, op = _operator(args)
    with wb:
        op.escalate(_held(args), args.reason)
        key, to = op.key_of(args.queue, args.key), op.escalated_to(args.queue)
        group = wb.config.queues[args.queue].escalate_to  # None: the supervisors
    if as_json:
        output.dump_json(
            {"queue": args.queue, "key": key, "escalated": True, "reason": args.reason, "escalated_to": group}
        )
    else:
        print(f"escalated {args.queue} {args.key}: handed to {to}")
    return 0


def cmd_escalated(args: argparse.Namespace, as_json: bool) -> int:
    wb, op = _operator(args, acting=args.mine)  # --mine asks who you are; the list alone names nobody
    with wb:
        rows, to = op.escalations(args.queue, mine=args.mine), op.escalated_to(args.queue)
        group = wb.config.queues[args.queue].escalate_to  # whom they are handed to; None: the supervisors
    if as_json:
        output.dump_json(
            [{"escalate": e.to_dict(), "since": last.to_dict(), "escalated_to": group} for e, last in rows]
        )
    elif not rows:
        print(f"no items of {args.queue} were escalated" + (" by you" if args.mine else ""))
    else:
        for e, last in rows:
            since = (
                f"waiting for {to}"
                if last.id == e.id
                else f"then {last.kind.value.replace('_', '-')} by {last.actor} at {output.when(last.at)}"
            )
            print(f"{e.key}  by {e.actor} at {output.when(e.at)}: {e.reason}  ({since})")
    return 0


def cmd_undo(args: argparse.Namespace, as_json: bool) -> int:
    wb, op = _operator(args)
    with wb:
        result = op.undo_complete(args.queue, args.key)
    return _claimed(args, as_json, op, result)


def cmd_take(args: argparse.Namespace, as_json: bool) -> int:
    wb, sup = _supervisor(args)
    with wb:
        result = sup.take(args.queue, args.key)
    return _claimed(args, as_json, sup, result)


def cmd_reopen(args: argparse.Namespace, as_json: bool) -> int:
    wb, sup = _supervisor(args)
    with wb:
        sup.reopen(args.queue, args.key, args.reason)
        key = sup.key_of(args.queue, args.key)
    if as_json:
        output.dump_json({"queue": args.queue, "key": key, "reopened": True, "reason": args.reason})
    else:
        print(f"reopened {args.queue} {args.key}")
    return 0


def cmd_move(args: argparse.Namespace, as_json: bool) -> int:
    wb, sup = _supervisor(args)
    with wb:
        moved = sup.move(
            args.queue, _pairs(args.sets, "--set"), args.reason, keys=args.keys, where=_pairs(args.where, "--where")
        )
    if as_json:
        output.dump_json(
            {"queue": args.queue, "moved": moved, "set": _pairs(args.sets, "--set"), "reason": args.reason}
        )
    else:
        print(
            f"moved {len(moved)} item(s) of {args.queue}"
            + (f": {' '.join(map(str, moved))}" if moved else "; none was waiting unheld as named")
        )
    return 0


def cmd_deferred(args: argparse.Namespace, as_json: bool) -> int:
    wb, op = _operator(args, acting=False)
    with wb:
        rows = op.deferred(args.queue)
    if as_json:
        output.dump_json([d.to_dict() for d in rows])
    elif not rows:
        print(f"no items of {args.queue} are deferred")
    else:
        for d in rows:
            print(f"{d.key}  until {output.when(d.until)}  by {d.actor}  {d.reason or ''}".rstrip())
    return 0


def cmd_extend(args: argparse.Namespace, as_json: bool) -> int:
    wb, op = _operator(args)
    with wb:
        lock = op.extend(_held(args))
    if as_json:
        output.dump_json(lock.to_dict())
    else:
        print(f"extended {lock.queue} {lock.key} until {output.when(lock.expires_at)}")
        if lock.token != args.token:
            print(f"token: {lock.token}")
    return 0


def cmd_mine(args: argparse.Namespace, as_json: bool) -> int:
    wb, op = _operator(args)
    with wb:
        rows = op.mine(args.queue)
    if as_json:
        output.dump_json([lock.to_dict() for lock in rows])
    else:
        output.locks(rows, show_token=True)
    return 0


def cmd_locks(args: argparse.Namespace, as_json: bool) -> int:
    wb, op = _operator(args, acting=False)
    with wb:
        rows = op.locks(args.queue)
    data = []
    for lock in rows:
        entry = lock.to_dict()
        entry.pop("token")  # only the holder's own listing shows tokens
        data.append(entry)
    if as_json:
        output.dump_json(data)
    else:
        output.locks(rows, show_token=False)
    return 0


def cmd_force_release(args: argparse.Namespace, as_json: bool) -> int:
    wb, sup = _supervisor(args)
    with wb:
        lock = sup.force_release(args.queue, args.key, args.reason)
    if as_json:
        entry = lock.to_dict()
        entry.pop("token")
        output.dump_json({"released": entry, "reason": args.reason})
    else:
        print(f"released {lock.queue} {lock.key} from {lock.owner}")
    return 0


def cmd_reassign(args: argparse.Namespace, as_json: bool) -> int:
    wb, sup = _supervisor(args)
    with wb:
        lock = sup.reassign(args.queue, args.key, args.to, args.reason)
    if as_json:
        entry = lock.to_dict()
        entry.pop("token")  # the new holder reads it with `mine`; the supervisor has no use for it
        output.dump_json(entry)
    else:
        print(f"{lock.queue} {lock.key} is now held by {lock.owner} until {output.when(lock.expires_at)}")
    return 0


def cmd_sweep(args: argparse.Namespace, as_json: bool) -> int:
    wb, sup = _supervisor(args)
    with wb:
        expired = sup.sweep(args.queue)
    if as_json:
        output.dump_json({"expired": [{k: v for k, v in lock.to_dict().items() if k != "token"} for lock in expired]})
    else:
        print(f"returned {len(expired)} expired lock(s) to {args.queue}")
        for lock in expired:
            print(f"  {lock.key}  {lock.owner}  expired {output.when(lock.expires_at)}")
    return 0


def cmd_history(args: argparse.Namespace, as_json: bool) -> int:
    wb, op = _operator(args, acting=False)
    with wb:
        op.show(args.queue, args.key)  # says "no such item" instead of printing an empty history
        events = op.history(args.queue, args.key)
    if as_json:
        # Like `show` and `locks`: anyone may read the history, but a live token is the holder's.
        output.dump_json([{k: v for k, v in e.to_dict().items() if k != "token"} for e in events])
    else:
        output.history(events)
    return 0


def cmd_note(args: argparse.Namespace, as_json: bool) -> int:
    wb, op = _operator(args)
    with wb:
        note = op.add_note(args.queue, args.key, args.text)
    if as_json:
        output.dump_json(note.to_dict())
    else:
        print(f"noted on {note.queue} {note.key}")
    return 0


def cmd_notes(args: argparse.Namespace, as_json: bool) -> int:
    wb, op = _operator(args, acting=False)
    with wb:
        op.show(args.queue, args.key)  # says "no such item" instead of printing no notes
        found = op.notes(args.queue, args.key)
    if as_json:
        output.dump_json([n.to_dict() for n in found])
    else:
        output.notes(found)
    return 0


def cmd_board(args: argparse.Namespace, as_json: bool) -> int:
    return stats_commands.cmd_board(args, as_json, lambda: _supervisor(args, acting=False))


def cmd_health(args: argparse.Namespace, as_json: bool) -> int:
    return stats_commands.cmd_health(args, as_json, lambda: _supervisor(args, acting=False))


def cmd_stats(args: argparse.Namespace, as_json: bool) -> int:
    return stats_commands.cmd_stats(args, as_json, lambda: _supervisor(args, acting=False))


def cmd_publish(args: argparse.Namespace, as_json: bool) -> int:
    from workbench import opening
    from workbench.config import loader
    from workbench.services import admin

    target = opening.choose(args.config, args.profile, args.demo)
    source = (
        args.file
        or target.config_path
        or (target.profile.config if target.profile and target.profile.source == "file" else None)
    )
    if not source:
        raise errors.UsageError("which settings? pass --file FILE (a workbench config file)")
    body = loader.queue_settings_text(source)
    settings = loader.load(source, require_url=False)
    # The queues are the file's; the connection is the profile's, or the --config file's.
    database = target.database(settings.database)
    config = dataclasses.replace(settings, database=database)
    with common.login_to(target, lambda password: admin.open_database(config, password=password)) as wb:
        done = admin.publish(wb, body, common.user(args), args.note)  # the queues are checked first
    if as_json:
        output.dump_json(_published_dict(done, body=False))
    else:
        print(
            f"published queue settings version {done.version} ({', '.join(config.queues)}); operators' "
            "windows pick them up within a minute"
        )
    return 0


def cmd_published(args: argparse.Namespace, as_json: bool) -> int:
    from workbench.services import admin

    with common.own_tables(args, demo=args.demo) as wb:
        versions = admin.published_settings(wb, every=args.history)
    if as_json:
        output.dump_json([_published_dict(v, body=True) for v in versions])
    elif not versions:
        print("no queue settings are published in this database")
    else:
        for v in versions:
            note = f" — {v.note}" if v.note else ""
            print(f"version {v.version} by {v.published_by} at {output.when(v.published_at)}{note}")
        if not args.history:
            print(versions[0].body, end="" if versions[0].body.endswith("\n") else "\n")
    return 0


def _published_dict(v: Any, *, body: bool) -> dict[str, Any]:
    data = {"version": v.version, "published_by": v.published_by, "published_at": v.published_at, "note": v.note}
    if body:
        data["body"] = v.body
    return data


def cmd_relay(args: argparse.Namespace, as_json: bool) -> int:
    from workbench.services import relay, relay_client

    if not 0.1 <= args.every <= 2:
        raise errors.UsageError(f"--every must be between 0.1 and 2 seconds, got {args.every}")
    wb = common.open_database(args)
    with wb:
        address = args.listen or wb.config.app.relay
        if not address:
            raise errors.UsageError("where should the relay listen? pass --listen HOST:PORT or set [app] relay")
        try:
            host, port = relay_client.parse_address(address)
        except ValueError as exc:
            raise errors.UsageError(f"--listen: {exc}") from None
        # The relay reads every change of the config's queues: its login must read the whole audit trail.
        watcher = relay.Watcher(wb, common.user(args))

        def ready(bound: int) -> None:
            print(f"workbench relay: listening on {host}:{bound}, reading the audit trail every {args.every:g} s")
            sys.stdout.flush()

        relay.run(watcher, host, port, args.every, ready)
    return 0


_COMMANDS: dict[str, Callable[[argparse.Namespace, bool], int]] = {
    "demo": cmd_demo,
    "init": cmd_init,
    "queues": cmd_queues,
    "attach": cmd_attach,
    "next": cmd_next,
    "claim": cmd_claim,
    "show": cmd_show,
    "save": cmd_save,
    "complete": cmd_complete,
    "release": cmd_release,
    "defer": cmd_defer,
    "deferred": cmd_deferred,
    "escalate": cmd_escalate,
    "escalated": cmd_escalated,
    "reopen": cmd_reopen,
    "take": cmd_take,
    "undo": cmd_undo,
    "move": cmd_move,
    "extend": cmd_extend,
    "mine": cmd_mine,
    "locks": cmd_locks,
    "force-release": cmd_force_release,
    "reassign": cmd_reassign,
    "sweep": cmd_sweep,
    "history": cmd_history,
    "note": cmd_note,
    "notes": cmd_notes,
    "profile": profile_commands.run,
    "publish": cmd_publish,
    "published": cmd_published,
    "relay": cmd_relay,
    "board": cmd_board,
    "health": cmd_health,
    "stats": cmd_stats,
    "grants": permission_commands.cmd_grants,
    "people": people_commands.run,
    "role": permission_commands.cmd_role,
    "group": permission_commands.cmd_group,
}
