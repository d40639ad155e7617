"""Errors a user can act on, each with the CLI exit code that reports it."""

from __future__ import annotations

import datetime as dt
from typing import Any, NamedTuple, Self


class Phrase(NamedTuple):
    """A part of a message that is a template of its own (core/problems.py), e.g. the action a
    refusal names ("reopen cases 12"): said in English by str(), in the user's language by the window."""

    template: str
    args: tuple[str, ...] = ()

    @classmethod
    def of(cls, template: str, *args: Any) -> Phrase:
        return cls(template, tuple(str(a) for a in args))

    def __str__(self) -> str:
        return self.template.format(*self.args)


class WorkbenchError(Exception):
    """Base of every error whose message tells the user what to fix; not a bug."""

    exit_code = 1
    # The message's template (core/problems.py) and the values filled in, for the window to say it
    # in the user's language; None for a message that is not one of them.
    template: str | None = None
    template_args: tuple[str, ...] = ()
    phrases: tuple[tuple[int, Phrase], ...] = ()  # the values that are templates themselves, by position

    @classmethod
    def of(cls, template: str, *args: Any, **kwargs: Any) -> Self:
        """The error whose message is `template` (core/problems.py) filled with `args` (a Phrase
        among them is said in the user's language too); `kwargs` go to the error's constructor."""
        shown = tuple(str(a) for a in args)
        error = cls(template.format(*shown), **kwargs)
        error.template, error.template_args = template, shown
        error.phrases = tuple((i, a) for i, a in enumerate(args) if isinstance(a, Phrase))
        return error


class ConfigError(WorkbenchError):
    """The configuration file (or a configured name) is wrong; names file, key and problem."""

    exit_code = 2

    def __init__(self, problem: str, *, file: str | None = None, key: str | None = None) -> None:
        self.file, self.key, self.problem = file, key, problem
        where = ": ".join(part for part in (file, key) if part)
        super().__init__(f"{where}: {problem}" if where else problem)


class UsageError(WorkbenchError):
    """The command was called the wrong way."""

    exit_code = 2


class NotInitialized(WorkbenchError):
    """workbench's own tables are missing or older than this program."""

    exit_code = 2


class NothingToClaim(WorkbenchError):
    """No item could be claimed: the queue is empty, the item is taken, or the user is at the limit."""

    exit_code = 3

    def __init__(self, message: str, *, reason: str = "empty") -> None:
        self.reason = reason  # "empty", "limit" or "unavailable"
        super().__init__(message)


class LockLost(WorkbenchError):
    """The caller's lock is gone (expired, force-released, completed, taken) or was never held."""

    exit_code = 4

    def __init__(
        self,
        message: str,
        *,
        queue: str,
        key: Any,
        cause: str,
        holder: str | None = None,
        by: str | None = None,
        at: dt.datetime | None = None,
        reason: str | None = None,
        happened: str | None = None,
        to: str | None = None,
    ) -> None:
        # cause: expired | force_released | reassigned | completed | released | taken | not_held
        # | other_queue (the lock was taken in another queue of the same table)
        self.queue, self.key, self.cause = queue, key, cause
        self.holder, self.by, self.at, self.reason = holder, by, at, reason
        self.to = to  # reassigned: to whom the supervisor gave it (who holds it now may differ)
        # What happened to the lock, without who holds the item now (which goes stale: the
        # window says that part again after its own fresh read).
        self.happened = happened or message
        super().__init__(message)


class InvalidValue(WorkbenchError):
    """A value (edit, key, argument) cannot be stored; says which and why."""

    exit_code = 5

    def __init__(
        self, message: str, *, column: str | None = None, template: str | None = None, args: tuple[str, ...] = ()
    ) -> None:
        self.column = column
        # What is wrong, without the column: the template and its values (None: e.g. a field's own help).
        self.template, self.template_args = template, args
        super().__init__(message)

    @classmethod
    def at(cls, column: str, template: str, *args: Any) -> Self:
        """ "COLUMN: what to fix", `template` (core/problems.py) filled with `args`."""
        shown = tuple(str(a) for a in args)
        return cls(f"{column}: {template.format(*shown)}", column=column, template=template, args=shown)


class DatabaseUnavailable(WorkbenchError):
    """The database cannot be reached; nothing was changed by the failed call, or it is unknown."""

    exit_code = 6


class LoginRefused(DatabaseUnavailable):
    """The server refused the user name or password (or none was given); asking again may help."""


class NotPermitted(WorkbenchError):
    """The user may not do this (a supervisor's action); says who can grant the right."""

    exit_code = 1

    def __init__(self, message: str, *, user: str | None = None) -> None:
        self.user = user
        super().__init__(message)


class LoginNotOperator(NotPermitted):
    """Under `workbench grants`, the database login is not a member of workbench_operator (and, when
    `user` is known, not that user's own): the cause named, and how each person gets a login."""

    def __init__(self, login: str, user: str | None = None) -> None:
        self.login = login
        whose = f" is not {user}'s and" if user is not None and user != login else ""
        person = user or "NAME"
        super().__init__(
            f"the database login {login}{whose} is not a member of workbench_operator, so it may not use "
            "workbench's tables now that `workbench grants` protects them: each person connects with their own "
            f"database login, named like their workbench user (a profile with --db-user {person}, or that name "
            f"in the URL), a member of workbench_operator or workbench_supervisor; the administrator makes it "
            f"with `workbench people add {person} --role operator`",
            user=user,
        )


class ExtendLimitReached(WorkbenchError):
    """The lock is already at the longest total time the queue allows."""

    exit_code = 1


class CredentialStoreError(WorkbenchError):
    """The OS password store is missing or refused to keep a password."""

    exit_code = 1
