"""Groups of users (level 1, level 2, "experienced"), kept in workbench_groups: a queue with `serves`
serves its members only."""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

import sqlalchemy as sa

from workbench.core import errors, problems
from workbench.db import backends, clock, permissions, tables

NAME_LENGTH = 100


@dataclasses.dataclass(frozen=True)
class Membership:
    """One row of the groups table."""

    user: str
    group: str
    added_by: str
    added_at: dt.datetime  # database clock, UTC

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def groups_table(schema: str | None) -> sa.Table:
    return tables.own(schema, tables.GROUPS_TABLE)


def add(conn: sa.Connection, schema: str | None, actor: str, user: str, group: str) -> Membership:
    """Put `user` in `group` (supervisors only, while the roles table has any)."""
    _check(user, "the user to add")
    _check(group, "the group's name", NAME_LENGTH)
    permissions.require_supervisor(conn, schema, actor, errors.Phrase.of(problems.DO_GROUP_ADD, user, group))
    return record(conn, schema, actor, user, group)


def record(conn: sa.Connection, schema: str | None, actor: str, user: str, group: str) -> Membership:
    """Put `user` in `group`, unchecked: for `people add`, run by a login that may create logins."""
    t = groups_table(schema)
    if _row(conn, t, user, group) is None:
        conn.execute(sa.insert(t).values(user_name=user, group_name=group, added_by=actor, added_at=clock.db_now()))
    return _membership(_row(conn, t, user, group))


def remove(conn: sa.Connection, schema: str | None, actor: str, user: str, group: str) -> Membership:
    """Take `user` out of `group` (supervisors only); returns what was removed."""
    t = groups_table(schema)
    row = _row(conn, t, user, group)
    if row is None:
        raise errors.InvalidValue(f"{user} is not in the group {group}")
    permissions.require_supervisor(conn, schema, actor, errors.Phrase.of(problems.DO_GROUP_REMOVE, user, group))
    conn.execute(sa.delete(t).where(t.c.user_name == user, t.c.group_name == group))
    return _membership(row)


def members(conn: sa.Connection, schema: str | None, group: str | None = None) -> list[Membership]:
    """Everyone in `group` (every group when None), by group, then user."""
    t = groups_table(schema)
    stmt = sa.select(t).order_by(t.c.group_name, t.c.user_name)
    if group is not None:
        stmt = stmt.where(t.c.group_name == group)
    return [_membership(row) for row in conn.execute(stmt).mappings()]


def is_member(conn: sa.Connection, schema: str | None, user: str, group: str) -> bool:
    """In the groups table, or (PostgreSQL, SQL Server) a member of a database role of that name."""
    if _row(conn, groups_table(schema), user, group) is not None:
        return True
    return backends.of(conn).in_database_role(conn, user, group)


def _row(conn: sa.Connection, t: sa.Table, user: str, group: str) -> Any:
    """`user`'s row in `group`, or None."""
    return conn.execute(sa.select(t).where(t.c.user_name == user, t.c.group_name == group)).mappings().first()


def _check(name: str, what: str, length: int = 128) -> None:
    if not name or not name.strip() or len(name) > length or name != name.strip():
        raise errors.UsageError(f"{what} must be 1 to {length} characters without leading or trailing blanks")


def _membership(row: Any) -> Membership:
    return Membership(
        user=row["user_name"],
        group=row["group_name"],
        added_by=row["added_by"],
        added_at=clock.stored_utc(row["added_at"]),
    )
