"""Python's cyclic garbage collector held off while a process starts; what the start made, frozen after.

A start (the window's, a `workbench next`) makes tens of thousands of objects the collector tracks (78,000 by
the time a `next` has its database open) that live as long as the process: modules, classes, functions,
SQLAlchemy's and Qt's tables. Python's automatic collector runs every 700 new objects and its older passes
walk them again: about a quarter of a `workbench next`'s time, a tenth of SQLAlchemy's, psycopg's and
PySide6's imports (docs/explanation/performance.md). Nothing a start makes is
garbage worth a collection, so the entry point holds the collector off (`hold`) and, once the start is
over (the database open), `release` freezes what is alive (gc.freeze: later passes skip it) and turns
automatic collection back on, unless the window's own collector took it over (`handed_over`).
"""

from __future__ import annotations

import gc
from dataclasses import dataclass


@dataclass
class _State:
    held: bool = False  # between hold() and release()
    enable_after: bool = True  # False once another collector took over


_STATE = _State()  # the process's


def hold() -> None:
    """No automatic collection until release() (the `workbench` command's entry point, first thing)."""
    if gc.isenabled():
        gc.disable()
        _STATE.held = True


def handed_over() -> None:
    """Another collector runs from now on (the window's, on its GUI thread): release() leaves Python's
    automatic collection off."""
    _STATE.enable_after = False


def holding() -> bool:
    """True between hold() and release()."""
    return _STATE.held


def release() -> None:
    """The start is over: what is alive now is kept out of every later collection, and automatic
    collection back on (as it was before hold, unless handed over). Idempotent; nothing without hold()."""
    if not _STATE.held:
        return
    _STATE.held = False
    gc.freeze()
    if _STATE.enable_after:
        gc.enable()
