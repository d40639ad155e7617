"""Routing by group: a queue with `serves` serves its group's members only; supervisors keep the groups."""

from __future__ import annotations

from typing import Any

import pytest

from tests import support
from workbench.core import errors
from workbench.db import groups, permissions

LEVEL_2 = {"cases": {"serves": "level2", "max_locks_per_user": 0}}


def test_only_members_are_served(native_env: support.Env) -> None:
    wb = native_env.demo(case_rows=6, import_rows=8, queues=LEVEL_2)
    q = wb.queue("cases")
    with pytest.raises(errors.NotPermitted, match="serves the group level2 only, and ann is not in it"):
        q.claim_next("ann")
    waiting = q.open_items(1)[0]["case_id"]
    with pytest.raises(errors.NotPermitted, match="workbench group add ann level2"):
        q.claim("ann", waiting)
    with wb.engine.begin() as conn:
        groups.add(conn, None, "sue", "ann", "level2")
        groups.add(conn, None, "sue", "ann", "experienced")  # one user, several groups
    assert q.claim_next("ann")[0].lock.owner == "ann"
    assert q.claim("ann", waiting).lock.key == waiting
    # Other queues serve everyone.
    assert wb.queue("imports").claim_next("bob")[0].lock.owner == "bob"
    with wb.engine.begin() as conn:
        removed = groups.remove(conn, None, "sue", "ann", "level2")
        assert (removed.user, removed.group, removed.added_by) == ("ann", "level2", "sue")
        assert [(m.group, m.user) for m in groups.members(conn, None)] == [("experienced", "ann")]
    with pytest.raises(errors.NotPermitted):
        q.claim_next("ann")


def test_only_supervisors_change_groups_once_there_are_any(native_env: support.Env) -> None:
    wb = native_env.demo(case_rows=1, import_rows=1)
    with wb.engine.begin() as conn:
        permissions.grant(conn, None, "sue", "sue", "supervisor")
    with wb.engine.begin() as conn, pytest.raises(errors.NotPermitted, match="only supervisors"):
        groups.add(conn, None, "ann", "ann", "level2")
    with wb.engine.begin() as conn:
        groups.add(conn, None, "sue", "ann", "level2")
    with wb.engine.begin() as conn, pytest.raises(errors.InvalidValue, match="not in the group level3"):
        groups.remove(conn, None, "sue", "ann", "level3")
    with wb.engine.begin() as conn, pytest.raises(errors.UsageError, match="group's name"):
        groups.add(conn, None, "sue", "ann", " ")


def test_the_command_line_keeps_groups(native_env: support.Env, capsys: Any) -> None:
    env = native_env
    env.demo(case_rows=1, import_rows=1)
    config = env.demo_config_file()
    base = ("--config", config, "--user", "sue")
    code, out, _ = support.run_cli(capsys, *base, "group", "add", "ann", "level2")
    assert code == 0 and "ann is in the group level2" in out
    code, out, _ = support.run_cli(capsys, *base, "group", "list", "--json")
    assert code == 0 and [(m["group"], m["user"]) for m in out] == [("level2", "ann")]
    code, out, _ = support.run_cli(capsys, *base, "group", "list", "level3")
    assert code == 0 and "nobody is in the group level3" in out
    code, out, _ = support.run_cli(capsys, *base, "group", "remove", "ann", "level2")
    assert code == 0 and "no longer in the group level2" in out


@pytest.mark.parametrize("backend", ["postgresql"])  # database roles a group can be are PostgreSQL's
def test_on_postgresql_a_database_role_is_a_group_too(native_env: support.Env) -> None:
    wb = native_env.demo(case_rows=4, import_rows=1, queues={"cases": {"serves": "wb_test_level2"}})
    with wb.engine.begin() as conn:  # a throwaway server: roles are the cluster's, so names are the test's own
        for statement in (
            "DROP ROLE IF EXISTS wb_test_ann",
            "DROP ROLE IF EXISTS wb_test_level2",
            "CREATE ROLE wb_test_level2 NOLOGIN",
            "CREATE ROLE wb_test_ann NOLOGIN",
            "GRANT wb_test_level2 TO wb_test_ann",
        ):
            conn.exec_driver_sql(statement)
    try:
        q = wb.queue("cases")
        assert q.claim_next("wb_test_ann")[0].lock.owner == "wb_test_ann"
        with pytest.raises(errors.NotPermitted):
            q.claim_next("bob")  # no such role: not a member
    finally:
        with wb.engine.begin() as conn:
            conn.exec_driver_sql("DROP ROLE wb_test_ann")
            conn.exec_driver_sql("DROP ROLE wb_test_level2")
