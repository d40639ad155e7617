"""MkDocs hooks: the reference pages' generated parts, written from the code at every build.

Three parts of the Reference are never typed by hand, so they cannot drift from the code:
- the configuration key tables (between `<!-- keys:NAME -->` and `<!-- /keys -->`), from their one
  declaration in workbench/config/settings.py; the Markdown files keep a copy too, so that the pages
  read right on GitHub, and tests/test_settings.py fails when that copy is stale;
- the command reference (`<!-- generated:cli -->`), from the parser in workbench/cli/main.py;
- the Python API (`<!-- generated:api -->`), from the docstrings and signatures of workbench.api.

The tests import this file too (tests/test_docs.py), so what they check is what the site shows.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# The docs describe this checkout's code, not an installed copy. MkDocs restores sys.path once this
# file is loaded, so the package is imported now, while the checkout is first on the path.
sys.path.insert(0, str(ROOT))
try:
    import workbench
finally:
    sys.path.remove(str(ROOT))
assert Path(workbench.__file__).resolve().parent == ROOT / "workbench", workbench.__file__

MARK_CLI = "<!-- generated:cli -->"
MARK_API = "<!-- generated:api -->"

# What the parser's positional arguments mean where it gives no help of its own.
_POSITIONALS = {
    "QUEUE": "the queue's name in the config (`workbench queues` lists them)",
    "KEY": "the item's key",
    "NAME": "the profile's name",
    "USER": "a workbench user (the login name)",
    "GROUP": "a group's name",
    "KEYS": "items' keys",
}


# -- the command line -------------------------------------------------------------------------------


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    """(name, help, parser) of each subcommand, in the order they were added."""
    for action in parser._actions:  # argparse keeps them nowhere public
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            return [(name, helps.get(name, ""), p) for name, p in action.choices.items()]
    return []


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _arguments(parser: argparse.ArgumentParser, shared: set[str]) -> list[str]:
    rows = []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction | argparse._SubParsersAction) or action.dest in shared:
            continue
        if action.help == argparse.SUPPRESS:
            continue
        shown = action.metavar if isinstance(action.metavar, str) else action.dest.upper()
        if action.option_strings:
            metavar = "" if action.nargs == 0 else " " + shown
            name = ", ".join(f"`{o}{metavar}`" for o in action.option_strings)
        else:
            name = f"`{shown}`"
        help_text = (action.help or "") % {"default": action.default} if action.help else ""
        if not action.option_strings and not help_text.strip("() "):
            help_text = _POSITIONALS.get(shown, "") + " " + help_text
        if action.choices and not isinstance(action.choices, dict):
            help_text += " (one of: " + ", ".join(f"`{c}`" for c in action.choices) + ")"
        rows.append(f"| {name} | {_cell(help_text)} |")
    return ["| argument | meaning |", "|---|---|", *rows] if rows else []


def _command(path: str, help_text: str, parser: argparse.ArgumentParser, shared: set[str], level: int) -> list[str]:
    out = [f"{'#' * level} `{path}`", ""]
    if help_text:
        out += [help_text[0].upper() + help_text[1:] + ("" if help_text.endswith(".") else "."), ""]
    out += ["```", parser.format_usage().strip(), "```", ""]
    table = _arguments(parser, shared)
    out += [*table, ""] if table else []
    for name, sub_help, sub in _subcommands(parser):
        out += _command(f"{path} {name}", sub_help, sub, shared, level + 1)
    return out


def cli_reference() -> str:
    """Every command of `workbench`, its usage and its arguments, read off the real parser."""
    os.environ["COLUMNS"] = "100"  # argparse wraps usage lines at the terminal's width: make it fixed
    from workbench.cli import main

    parser = main.build_parser()
    parser.prog = "workbench"
    global_rows = _arguments(parser, set())
    shared = {a.dest for a in parser._actions if not isinstance(a, argparse._SubParsersAction)}
    out = ["## Options before or after any command", "", *global_rows, "", "## Every command", ""]
    for name, help_text, sub in _subcommands(parser):
        sub.prog = f"workbench {name}"
        out += _command(f"workbench {name}", help_text, sub, shared, 3)
    return "\n".join(out).rstrip() + "\n"


# -- the Python API ---------------------------------------------------------------------------------


def _doc(obj: Any) -> str:
    return inspect.cleandoc(obj.__doc__) if obj.__doc__ else ""


class _Text(str):
    """An annotation as the source writes it (they are strings here: `from __future__ import annotations`)."""

    def __repr__(self) -> str:
        return str(self)


def _signature(name: str, func: Any) -> str:
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return name
    params = [
        p.replace(annotation=_Text(p.annotation)) if isinstance(p.annotation, str) else p
        for p in sig.parameters.values()
        if p.name != "self"
    ]
    returns = sig.return_annotation
    sig = sig.replace(parameters=params, return_annotation=_Text(returns) if isinstance(returns, str) else returns)
    return f"{name}{sig}"


def _fenced(doc: str) -> list[str]:
    """A docstring as Markdown: its indented example (if any) as a code block, the rest as text."""
    out: list[str] = []
    code: list[str] = []
    for line in [*doc.splitlines(), ""]:
        if line.startswith("    "):
            code.append(line[4:])
            continue
        if code and line == "" and out and out[-1] != "```":
            code.append("")
            continue
        if code:
            while code and not code[-1]:
                code.pop()
            out += ["```python", *code, "```"]
            code = []
        out.append(line)
    return out


def api_reference() -> str:
    """workbench.api as its docstrings describe it: connect, the Worker's operations, records, errors."""
    from workbench import api

    out = ["## Module `workbench.api`", "", *_fenced(_doc(api)), ""]
    out += ["### `api.connect`", "", "```python", _signature("connect", api.connect), "```", "", _doc(api.connect), ""]
    out += ["### `api.Worker`", "", _doc(api.Worker), ""]
    seen: set[str] = set()
    for cls in api.Worker.__mro__:
        if not cls.__module__.startswith("workbench"):
            continue
        for name, member in vars(cls).items():
            if name.startswith("_") or name in seen or not callable(member):
                continue
            seen.add(name)
            out += [
                f"#### `Worker.{name}`",
                "",
                "```python",
                _signature(name, member),
                "```",
                "",
                _doc(member) or "(no description)",
                "",
            ]
    out += ["## Records", "", "What the operations return (`workbench.core.models`, frozen dataclasses).", ""]
    for name in ("Claim", "Lock", "Completion", "ItemView", "Event", "Deferral"):
        cls = getattr(api, name)
        out += [f"### `api.{name}`", "", _doc(cls), ""]
        if dataclasses.is_dataclass(cls):
            out += ["| field | type |", "|---|---|"]
            out += [f"| `{f.name}` | `{_cell(str(f.type))}` |" for f in dataclasses.fields(cls)]
            out.append("")
    out += [
        "## Errors",
        "",
        (
            "Every error a script can act on is an `api.WorkbenchError`; its `exit_code` is "
            "the command line's for the same failure."
        ),
        "",
        "| error | exit code | meaning |",
        "|---|---|---|",
    ]
    errors = sorted(
        (
            n
            for n in api.__all__
            if isinstance(getattr(api, n), type) and issubclass(getattr(api, n), api.WorkbenchError)
        ),
        key=lambda n: n != "WorkbenchError",
    )
    for name in errors:
        cls = getattr(api, name)
        out.append(f"| `api.{name}` | {getattr(cls, 'exit_code', '')} | {_cell(_doc(cls))} |")
    return "\n".join(out).rstrip() + "\n"


# -- the hook MkDocs calls --------------------------------------------------------------------------


def render(markdown: str) -> str:
    """A page's Markdown with every generated part written anew from the code."""
    from workbench.config import settings

    markdown = settings.render_key_tables(markdown)
    if MARK_CLI in markdown:
        markdown = markdown.replace(MARK_CLI, cli_reference())
    if MARK_API in markdown:
        markdown = markdown.replace(MARK_API, api_reference())
    return markdown


def on_page_markdown(markdown: str, **_: Any) -> str:
    return render(markdown)
