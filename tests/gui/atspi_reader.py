"""Reads the workbench window from outside, over the Linux accessibility bus, as a screen reader does.

Run by Debian's /usr/bin/python3 (pyatspi is a Debian package, not in the project's virtualenv), so it
imports nothing of workbench. One JSON object a line on stdout; commands one a line on stdin:

    tree    the showing nodes of the application's windows: role, name, labelled (a "labelled by"
            relation: a QLabel buddy), focused
    quit

and, whenever they arrive, the events a screen reader speaks from: {"event": "announcement", "text",
"politeness"} (1 polite, 2 assertive), {"event": "focus", "role", "name"} (a control got the focus) and
{"event": "name", "role", "name"} (an accessible name changed).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pyatspi  # type: ignore[import-not-found]  # Debian's python3-pyatspi
from gi.repository import GLib  # type: ignore[import-not-found]

APP = "workbench"
SKIPPED = {"menu", "menu item", "popup menu", "separator", "menu bar"}  # the menus: Qt names them itself


def say(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def application() -> Any:
    desktop = pyatspi.Registry.getDesktop(0)
    for app in desktop:
        if app is not None and app.name == APP:
            return app
    return None


def nodes(node: Any, found: list[dict[str, Any]], depth: int = 0) -> None:
    try:
        states = node.getState()
        role = node.getRoleName()
    except GLib.Error:  # a node gone while being read (a refresh rebuilt a table)
        return
    if depth > 0 and not states.contains(pyatspi.STATE_SHOWING):
        return
    if role in SKIPPED:
        return
    relations = [r.getRelationType() for r in node.getRelationSet()]
    found.append(
        {
            "role": role,
            "name": node.name or "",
            "labelled": pyatspi.RELATION_LABELLED_BY in relations,
        }
    )
    if role in ("table", "tree table", "list", "combo box"):
        return  # their cells are the view's own (named by headers), not controls of their own
    for child in node:
        if child is not None:
            nodes(child, found, depth + 1)


def tree() -> None:
    app = application()
    found: list[dict[str, Any]] = []
    if app is not None:
        for window in app:
            if window is not None:
                nodes(window, found)
    say({"tree": found, "app": app is not None})


def on_event(event: Any) -> None:
    try:
        if event.host_application is None or event.host_application.name != APP:
            return
    except GLib.Error:
        return
    if event.type.startswith("object:announcement"):
        say({"event": "announcement", "text": str(event.any_data), "politeness": event.detail1})
    elif event.type.startswith("object:state-changed:focused") and event.detail1:
        try:
            role, name = event.source.getRoleName(), event.source.name
        except GLib.Error:
            return
        say({"event": "focus", "role": role, "name": name or ""})
    elif event.type.startswith("object:property-change:accessible-name"):
        try:
            role = event.source.getRoleName()
        except GLib.Error:
            role = ""
        say({"event": "name", "role": role, "name": str(event.any_data)})


def on_command(source: Any, _condition: Any) -> bool:
    line = source.readline().strip()
    if line == "tree":
        tree()
        return True
    pyatspi.Registry.stop()  # "quit", or stdin closed
    return False


def main() -> None:
    pyatspi.Registry.registerEventListener(
        on_event, "object:announcement", "object:property-change:accessible-name", "object:state-changed:focused"
    )
    GLib.io_add_watch(sys.stdin, GLib.PRIORITY_DEFAULT, GLib.IO_IN | GLib.IO_HUP, on_command)
    say({"listening": True})
    pyatspi.Registry.start()


if __name__ == "__main__":
    main()
