"""The per-transition parts of the database's renderings, read from core/workflow.py's table.

PostgreSQL's check functions (rules/pg_*.py) and SQL Server's procedures
(rules/mssql_*.py) write the fixed parts of each branch themselves (which columns may change,
the queue's values); what a transition is — the audit events a branch records, the precondition
on the lock, who may make it — comes from here, so a rule changed in the table changes every
rendering. Each branch carries workflow.branch_mark(), which tests/test_workflow_table.py reads.
"""

from __future__ import annotations

from collections.abc import Mapping

from workbench.core import workflow

TRANSITIONS = workflow.TRANSITIONS


def event(name: str) -> str:
    """SQL: the audit event of transition `name`, as a text literal ('claim')."""
    kind = TRANSITIONS[name].event
    if kind is None:
        raise ValueError(f"transition {name} writes no audit row")
    return f"'{kind.value}'"


def also(name: str, index: int = 0) -> str:
    """SQL: a further audit event of transition `name` (a reassign's claim for the new holder)."""
    return f"'{TRANSITIONS[name].also[index].value}'"


def may_be(*names: str) -> str:
    """SQL (text[]): the events a change may be, for the audit guard to settle ('release:', 'defer:'),
    in the order given (the first is recorded until workbench's own row says which)."""
    return "ARRAY[" + ", ".join(f"{event(name)[:-1]}:'" for name in names) + "]"


def prefix(name: str) -> str:
    """SQL: the settling prefix of transition `name`'s event ('complete:'), an outcome's name follows."""
    return f"{event(name)[:-1]}:'"


def one(names: tuple[str, ...], field: str) -> object:
    """The value of `field` the transitions `names` share (a branch checks them once); a rendering
    that groups transitions the table tells apart fails here, when it is generated."""
    values = {getattr(TRANSITIONS[name], field) for name in names}
    if len(values) != 1:
        raise AssertionError(f"transitions {', '.join(names)} differ in {field}: one branch cannot render them")
    return values.pop()


class Rules:
    """One rendering's SQL for the table's precondition and actor kinds: `locks` per LockRule,
    `actors` per Actor (the condition under which the caller may make the transition)."""

    def __init__(
        self,
        locks: Mapping[workflow.LockRule, str],
        actors: Mapping[workflow.Actor, str],
        checks: Mapping[workflow.Check, str] | None = None,
    ) -> None:
        self.locks, self.actors, self.checks = locks, actors, dict(checks or {})

    def lock(self, *names: str) -> str:
        """SQL: the lock precondition the transitions `names` share."""
        rule = one(names, "lock")
        assert isinstance(rule, workflow.LockRule)
        return self.locks[rule]

    def checked(self, *names: str) -> str:
        """SQL: the further checks (Check) the transitions `names` share that this rendering tests, in
        the order it lists them; a check the table drops from a transition drops from its branch."""
        shared = one(names, "checks")
        assert isinstance(shared, frozenset)
        return (
            " AND ".join(f"{check_mark(check)} {sql}" for check, sql in self.checks.items() if check in shared)
            or "true"
        )

    def who(self, *names: str) -> str:
        """SQL: may the caller make the transitions `names` (who they share)?"""
        actor = one(names, "who")
        assert isinstance(actor, workflow.Actor)
        return self.actors[actor]


def supervisors_only(*names: str) -> bool:
    """Are the transitions `names` all refused to operators: a supervisor's, or (a take) the queue's
    escalate_to group's, which supervisors are always in?"""
    return all(TRANSITIONS[name].who in (workflow.Actor.SUPERVISOR, workflow.Actor.ESCALATED_TO) for name in names)


def check_mark(check: workflow.Check) -> str:
    """SQL: the comment a rendered Check carries, for tests/test_workflow_table.py to find it."""
    return f"/* check: {check.name.lower()} */"


def noted() -> tuple[str, ...]:
    """The transitions a queue's notes_required may ask a note with (Text.CONFIGURED) that record
    an audit row of their own, each event once."""
    names: dict[str, str] = {}
    for name, t in TRANSITIONS.items():
        if t.note is workflow.Text.CONFIGURED and t.event is not None:
            names.setdefault(t.event.value, name)
    return tuple(names.values())
