"""Messages of core/problems.py in the user's language: a field's problem, why nothing was claimed or undone."""

# The translation tools read the templates from core/problems.py itself (installer/translations.py),
# so a new message is written once.

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtCore import QCoreApplication

from workbench.core import errors, problems


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
