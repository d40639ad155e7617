"""A value's problem (core/problems.py) in the user's language: the field shows what to fix in words it reads."""

from __future__ import annotations

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

from workbench.core import errors

# The templates of core/problems.py, spelled out for the translation tools (tests/gui/test_problem_text.py
# checks the two lists are one).
TEMPLATES = (
    QT_TRANSLATE_NOOP("Problem", "contains a NUL character (code 0), which text in a database cannot hold; remove it"),
    QT_TRANSLATE_NOOP("Problem", "a value is required (the column does not allow empty values)"),
    QT_TRANSLATE_NOOP("Problem", "{0} is not one of {1}"),
    QT_TRANSLATE_NOOP("Problem", "binary columns cannot be edited"),
    QT_TRANSLATE_NOOP("Problem", "{0} is not true/false (use true, false, yes, no, 1 or 0)"),
    QT_TRANSLATE_NOOP("Problem", "{0} is not a whole number"),
    QT_TRANSLATE_NOOP("Problem", "{0} is out of range for this column"),
    QT_TRANSLATE_NOOP("Problem", "{0} is not a number"),
    QT_TRANSLATE_NOOP("Problem", "{0} is not a finite number"),
    QT_TRANSLATE_NOOP("Problem", "{0} is too large for this column"),
    QT_TRANSLATE_NOOP("Problem", "{0} is too large (at most {1} digits before the point)"),
    QT_TRANSLATE_NOOP("Problem", "{0} has more than {1} decimal places"),
    QT_TRANSLATE_NOOP("Problem", "{0} is not a date and time (use 2026-11-21 14:30)"),
    QT_TRANSLATE_NOOP("Problem", "{0} is not a date (use 2026-11-21)"),
    QT_TRANSLATE_NOOP("Problem", "{0} is not a time (use 14:30)"),
    QT_TRANSLATE_NOOP("Problem", "expected text"),
    QT_TRANSLATE_NOOP("Problem", "at most {0} characters ({1} given)"),
    QT_TRANSLATE_NOOP("Problem", "cannot be edited"),
    QT_TRANSLATE_NOOP("Problem", "required"),
    QT_TRANSLATE_NOOP("Problem", "must be at least {0}"),
    QT_TRANSLATE_NOOP("Problem", "must be at most {0}"),
    QT_TRANSLATE_NOOP("Problem", "must match {0}"),
    QT_TRANSLATE_NOOP("Problem", "must be one of {0}"),
)


def problem(exc: errors.InvalidValue) -> str:
    """What to fix, without the column's name: translated when it is one of the templates."""
    if exc.problem is None:
        return str(exc).split(": ", 1)[-1]
    return QCoreApplication.translate("Problem", exc.problem).format(*exc.problem_args)


def message(exc: errors.InvalidValue) -> str:
    """"COLUMN: what to fix", for the status bar and the banner."""
    return f"{exc.column}: {problem(exc)}" if exc.column else problem(exc)
