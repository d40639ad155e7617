"""Messages of core/problems.py in the user's language: a field's problem, why nothing was claimed or undone."""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtCore import QCoreApplication

from workbench.core import errors, problems
from workbench.gui.i18n import QT_TRANSLATE_NOOP

# The templates of core/problems.py, spelled out for the translation tools (tests/gui/test_language.py
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
    QT_TRANSLATE_NOOP("Problem", "{0} is not in {1}; pick one of its rows"),
    QT_TRANSLATE_NOOP("Problem", "a note holds at most {0} characters ({1} given); shorten it or split it in two"),
    QT_TRANSLATE_NOOP("Problem", "{0} needs a reason: say why (--reason TEXT); it is kept in the item's history"),
    QT_TRANSLATE_NOOP(
        "Problem",
        "{0}'s lock cannot be used from the database login {1}: under `workbench grants` each person logs in with their own database login, named exactly like their workbench user",  # noqa: E501
    ),
    QT_TRANSLATE_NOOP("Problem", "{0} has no item with key {1}"),
    QT_TRANSLATE_NOOP("Problem", "nothing to do in {0}: no item is waiting"),
    QT_TRANSLATE_NOOP(
        "Problem",
        "nothing to claim in {0} right now: the items waiting are held by open transactions (a session that locked them has not finished); try again in a moment",  # noqa: E501
    ),
    QT_TRANSLATE_NOOP("Problem", "nothing to do in {0} with {1}"),
    QT_TRANSLATE_NOOP(
        "Problem",
        "nothing for you in {0}: the items waiting are your own work from {1}, and someone else reviews them (four eyes)",  # noqa: E501
    ),
    QT_TRANSLATE_NOOP(
        "Problem",
        "you already hold {1} item(s) in {0}, the most this queue allows ({2}); complete or release one first",
    ),
    QT_TRANSLATE_NOOP("Problem", "{0} {1} is held by {2} since {3} (until {4})"),
    QT_TRANSLATE_NOOP(
        "Problem",
        "{0} {1} is held by another program under the name {2} since {3}: workbench does not take it before {4}; a supervisor can release it",  # noqa: E501
    ),
    QT_TRANSLATE_NOOP(
        "Problem", "{0} {1} is held by {2} through queue {3}: it is worked on there until it is given back"
    ),
    QT_TRANSLATE_NOOP("Problem", "{0} {1} is your own work; someone else reviews it (four eyes)"),
    QT_TRANSLATE_NOOP("Problem", "{0} {1} is {2}'s own work: reassign its review to someone else (four eyes)"),
    QT_TRANSLATE_NOOP("Problem", "{0} {1} is not waiting to be worked on (state: {2})"),
    QT_TRANSLATE_NOOP(
        "Problem",
        "queue {0} serves the group {1} only, and {2} is not in it; a supervisor adds you with `workbench group add {2} {1}`",  # noqa: E501
    ),
    QT_TRANSLATE_NOOP("Problem", "nothing of yours to undo on {0} {1}: nothing has happened to it"),
    QT_TRANSLATE_NOOP(
        "Problem", "nothing of yours to undo on {0} {1}: the last thing that happened to it was {2} by {3}"
    ),
    QT_TRANSLATE_NOOP(
        "Problem", "too late to undo: {0} {1} was completed {2} ago, and undo works for {3}; a supervisor can reopen it"
    ),
    QT_TRANSLATE_NOOP("Problem", "{0} {1} changed since you completed it: undo is refused; a supervisor can reopen it"),
    QT_TRANSLATE_NOOP("Problem", "{0} {1} is held by {2}, not finished: force-release it instead"),
    QT_TRANSLATE_NOOP("Problem", "{0} {1} is waiting already: nothing to reopen"),
    QT_TRANSLATE_NOOP(
        "Problem",
        'queue {0} does not say how to reopen an item: set [queues.{1}.on_reopen] to the values that make it wait again, e.g. status = "open"',  # noqa: E501
    ),
    QT_TRANSLATE_NOOP(
        "Problem",
        'queue {0} does not say how to hand an item to a supervisor: set [queues.{1}.on_escalate] to the values that take it out of the work to do, e.g. status = "escalated"',  # noqa: E501
    ),
    QT_TRANSLATE_NOOP("Problem", "{0} {1} changed while it was being reopened; try again"),
    QT_TRANSLATE_NOOP(
        "Problem", "{0} {1} is not waiting for a supervisor (taken, reopened or never escalated): nothing to take"
    ),
    QT_TRANSLATE_NOOP("Problem", "take is not available on queue {0}: {1}; reopen the item, then claim it"),
    QT_TRANSLATE_NOOP("Problem", "{0} {1} is not locked by anyone"),
    QT_TRANSLATE_NOOP("Problem", "{0} {1} changed while it was being reassigned; try again"),
    QT_TRANSLATE_NOOP("Problem", "{0} {1} changed while it was being released; try again"),
    QT_TRANSLATE_NOOP(
        "Problem",
        "{1} would take waiting items of {0} out of its work to do: a move keeps items waiting (another category, tier, team or priority); items are finished by working them",  # noqa: E501
    ),
    QT_TRANSLATE_NOOP("Problem", "force-release {0} {1}"),
    QT_TRANSLATE_NOOP("Problem", "reassign {0} {1}"),
    QT_TRANSLATE_NOOP("Problem", "reopen {0} {1}"),
    QT_TRANSLATE_NOOP("Problem", "take {0} {1}"),
    QT_TRANSLATE_NOOP("Problem", "move items of {0}"),
    QT_TRANSLATE_NOOP("Problem", "publish queue settings"),
    QT_TRANSLATE_NOOP("Problem", "change groups (here: add {0} to {1})"),
    QT_TRANSLATE_NOOP("Problem", "change groups (here: remove {0} from {1})"),
    QT_TRANSLATE_NOOP("Problem", "grant roles (here: {0} to {1})"),
    QT_TRANSLATE_NOOP("Problem", "revoke roles (here: {0}'s)"),
    QT_TRANSLATE_NOOP(
        "Problem",
        "{0} may not {1}: only supervisors may, and {0} is not one in this database's roles table (supervisors: {2}); a supervisor grants it with `workbench --user NAME role grant {0} supervisor`",  # noqa: E501
    ),
    QT_TRANSLATE_NOOP(
        "Problem",
        "{0} may not {1}: the database allows that only to members of the role {2}, and the login {3} is not one; a database administrator grants it with GRANT {2} TO {3}",  # noqa: E501
    ),
    QT_TRANSLATE_NOOP(
        "Problem", "{0} may not {1}: the database's row-level security does not let this login change it"
    ),
    QT_TRANSLATE_NOOP(
        "Problem", "give the profile a name of 1 to 64 characters (no line breaks, no spaces at the ends)"
    ),
    QT_TRANSLATE_NOOP("Problem", "choose the SQLite database file"),
    QT_TRANSLATE_NOOP("Problem", "enter the server's host name or address"),
    QT_TRANSLATE_NOOP(
        "Problem", "{0} is not a host name; write only the name or address, and the port in its own field"
    ),
    QT_TRANSLATE_NOOP("Problem", "must be between 1 and 65535"),
    QT_TRANSLATE_NOOP("Problem", "enter the database name"),
    QT_TRANSLATE_NOOP("Problem", "enter the user name to log in with"),
    QT_TRANSLATE_NOOP("Problem", "choose the installed ODBC driver, e.g. 'ODBC Driver 18 for SQL Server'"),
    QT_TRANSLATE_NOOP("Problem", "choose the queue config file, or use the settings published in the database"),
)


def problem(exc: errors.InvalidValue) -> str:
    """What to fix, without the column's name: translated when it is one of the templates."""
    if exc.template is None:
        return str(exc).split(": ", 1)[-1]
    return _translated(exc)


def config_problem(exc: errors.ConfigError) -> str:
    """What to fix in a configured field, without its file and key: translated when it is a template."""
    return _translated(exc) if exc.template is not None else exc.problem


def message(exc: errors.WorkbenchError, titles: Mapping[str, str] | None = None) -> str:
    """The error's message, translated when it is one of the templates ("COLUMN: what to fix" for a value);
    `titles`: the queues' titles by name, for a message about a queue (its {0})."""
    if isinstance(exc, errors.InvalidValue) and exc.column:
        return f"{exc.column}: {problem(exc)}"
    if exc.template is None:
        return str(exc)
    values = _titled(exc.template, exc.template_args, titles)
    for i, phrase in exc.phrases:  # e.g. the action a refusal names
        values[i] = QCoreApplication.translate("Problem", phrase.template).format(
            *_titled(phrase.template, phrase.args, titles)
        )
    return _translated(exc, values)


def _titled(template: str, args: tuple[str, ...], titles: Mapping[str, str] | None) -> list[str]:
    """The values with the queue's title for its name: every message but a value's names its queue first."""
    values = list(args)
    if values and titles and template not in problems.NOT_ABOUT_A_QUEUE:
        values[0] = titles.get(values[0], values[0])
    return values


def _translated(exc: errors.WorkbenchError, values: list[str] | None = None) -> str:
    assert exc.template is not None
    return QCoreApplication.translate("Problem", exc.template).format(
        *(exc.template_args if values is None else values)
    )


def said(exc: errors.WorkbenchError, titles: Mapping[str, str] | None = None) -> tuple[str, str]:
    """What a dialog says of `exc`: its message in the user's language, and the details to show under a
    Details button ("" when the message says it all). A message that is one of the templates is said
    whole; another (the engine's English: a file's problem, a driver's words) gets a sentence of its
    kind in the user's language, its English under Details, for whoever helps the user fix it."""
    if exc.template is not None:
        return message(exc, titles), ""
    if isinstance(exc, errors.ConfigError) and exc.file:
        where = f"{exc.file}, {exc.key}" if exc.key else exc.file
        text = QCoreApplication.translate("ErrorKind", "{0} has a problem; Details says what to fix.").format(where)
    elif isinstance(exc, errors.ConfigError):
        text = QCoreApplication.translate("ErrorKind", "The configuration has a problem; Details says what to fix.")
    elif isinstance(exc, errors.CredentialStoreError):
        text = QCoreApplication.translate(
            "ErrorKind", "The password could not be kept in this computer's password store."
        )
    elif isinstance(exc, errors.DatabaseUnavailable):
        text = QCoreApplication.translate(
            "ErrorKind", "The database cannot be reached; Details has the database's own words."
        )
    elif isinstance(exc, errors.NotPermitted):
        text = QCoreApplication.translate("ErrorKind", "This login may not do that; Details says who can grant it.")
    elif isinstance(exc, errors.UsageError):
        text = QCoreApplication.translate("ErrorKind", "That cannot be done as asked; Details says why.")
    else:
        text = QCoreApplication.translate("ErrorKind", "That could not be done; Details says why.")
    return text, str(exc)
