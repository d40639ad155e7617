"""The database roles `workbench grants` makes, and the refusals that name them. A leaf: the engine's
writes (guarded.py, the claims, procedures.py) raise these, and pg_grants.py, which sets the roles
up, builds on those writes."""

from __future__ import annotations

from workbench.core import errors, problems

# PostgreSQL roles made by `workbench grants` (NOLOGIN: people log in with their own login, a member).
OPERATOR_ROLE = "workbench_operator"
SUPERVISOR_ROLE = "workbench_supervisor"


def login_mismatch_error(user: str, login: str) -> errors.NotPermitted:
    """`user`'s lock used from another database login, which row-level security binds."""
    return errors.NotPermitted.of(problems.LOGIN_MISMATCH, user, login, user=user)


def refused(actor: str, action: errors.Phrase, login: str | None) -> errors.NotPermitted:
    """`actor` may not `action`: the database's grants allow it to workbench_supervisor only."""
    return errors.NotPermitted.of(problems.NOT_IN_ROLE, actor, action, SUPERVISOR_ROLE, login or "LOGIN", user=actor)
