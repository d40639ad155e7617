"""Each axis has one owner: database names only in db/backends, lock-shape branches only in db/lockshapes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "workbench"
DATABASE_NAME = re.compile(
    r"dialect\.name|get_backend_name\(\) ==|dialect ==|"
    r'(==|!=|in) *\(?"(postgresql|sqlite|mssql|mysql|mariadb)"'
)
SHAPE_BRANCH = re.compile(
    r"\.token is (not )?None|\.expires is (not )?None|\.lock\.(table|claim_id)\b|"
    r"if .*isinstance\([^)]*lockshapes\."
)

# Where a database name is compared outside db/backends, and why that is its right place.
DATABASE_NAMES_ALLOWED = {
    # SQLAlchemy's own per-dialect layer (a TypeDecorator, @compiles, DDL conditions) is chosen by
    # the dialect compiling the statement, without a Database at hand.
    "db/clock.py",
    "db/tables.py",
    # Alembic's migration context is configured by dialect name.
    "db/attach.py",
    # The backend registry itself: dialect name -> backend.
    "db/claims/__init__.py",
    # Connection profiles: which fields a connection form asks for, per kind of server.
    "config/profiles.py",
    "gui/connect_dialog.py",
    # The one place a Database records its dialect name (for messages).
    "db/connect.py",
}
# Where a lock column's presence is tested outside db/lockshapes, and why:
SHAPE_BRANCHES_ALLOWED = {
    # Binding a queue: the configured lock columns choose the shape; their types are checked.
    "db/mapping.py",
    # The own-columns claim statement asserts the columns it copies into audit rows.
    "db/claims/postgresql.py",
    # `attach` plans DDL from the config before any shape exists (the table may lack the columns a
    # shape needs): lock columns to add, or, for a separate lock table, an index to suggest.
    "db/attach.py",
    # `init` creates the lock tables the config names.
    "db/service.py",
}


def _hits(pattern: re.Pattern[str], skip: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in sorted(ROOT.rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        if name.startswith(skip):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line.split("#", 1)[0]):
                found.setdefault(name, []).append(f"{number}: {line.strip()}")
    return found


@pytest.mark.parametrize(
    ("pattern", "owner", "allowed"),
    [
        (DATABASE_NAME, "db/backends/", DATABASE_NAMES_ALLOWED),
        (SHAPE_BRANCH, "db/lockshapes/", SHAPE_BRANCHES_ALLOWED),
    ],
    ids=["database names", "lock-shape branches"],
)
def test_each_axis_is_branched_only_in_its_owner(pattern: re.Pattern[str], owner: str, allowed: set[str]) -> None:
    outside = {name: lines for name, lines in _hits(pattern, owner).items() if name not in allowed}
    assert not outside, f"branch in {owner} instead (or add the file with a reason to the allowed list): {outside}"


def test_the_patterns_find_what_they_look_for() -> None:
    assert DATABASE_NAME.search('if conn.dialect.name in ("mysql", "mariadb"):')
    assert DATABASE_NAME.search('if backend == "sqlite":')
    assert SHAPE_BRANCH.search("if q.token is None:")
    assert "db/backends/sqlite.py" not in _hits(DATABASE_NAME, "db/backends/")
