"""A demo copied from a template binds with the tables its template's build read (support.Env.demo hands them to the
Workbench, service.TablesRead), not read again: the same tables a fresh read gives, and a table changed before the
copy binds is read, not taken."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from tests import support


def _described(metadata: sa.MetaData) -> dict[str, Any]:
    """What binding takes from each table: columns, keys, constraints, indexes, comments, options."""

    def column(c: sa.Column[Any]) -> tuple[Any, ...]:
        default = c.server_default
        return (
            c.name,
            repr(c.type),
            c.nullable,
            c.primary_key,
            c.autoincrement,
            str(getattr(default, "arg", None)),
            repr(c.computed),
            repr(c.identity),
            c.comment,
        )

    def constraint(k: sa.Constraint) -> tuple[Any, ...]:
        target = [fk.target_fullname for fk in k.elements] if isinstance(k, sa.ForeignKeyConstraint) else []
        text = str(getattr(k, "sqltext", ""))
        columns = [c.name for c in getattr(k, "columns", [])]
        return (type(k).__name__, k.name, columns, target, text)

    def index(i: sa.Index) -> tuple[Any, ...]:
        return (i.name, i.unique, [str(e) for e in i.expressions], _texts(i.dialect_kwargs))

    return {
        key: (
            [column(c) for c in table.columns],
            sorted(map(repr, (constraint(k) for k in table.constraints))),
            sorted(
                repr((i.name, i.unique, list(map(str, i.expressions)), _texts(i.dialect_kwargs))) for i in table.indexes
            ),
            table.comment,
            _texts(table.dialect_kwargs),
        )
        for key, table in sorted(metadata.tables.items())
    }


def _texts(options: Any) -> list[tuple[str, str]]:
    return sorted((name, str(value)) for name, value in options.items())


def _bound(wb: Any) -> dict[str, Any]:
    bound = wb.validate()
    tables = {id(q.table.metadata): q.table.metadata for q in bound.values()}
    assert len(tables) == 1
    return _described(next(iter(tables.values())))


def _catalog_reads(wb: Any) -> int:
    """How many statements the first binding of `wb` runs."""
    seen: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        seen.append(statement)

    sa.event.listen(wb.engine, "before_cursor_execute", count)
    try:
        wb.queue("cases")
    finally:
        sa.event.remove(wb.engine, "before_cursor_execute", count)
    return len(seen)


def test_a_copy_binds_the_tables_a_fresh_read_gives(env: support.Env) -> None:
    copied = env.demo()
    fresh = env.open(env.demo_config())
    handed, read = _catalog_reads(copied), _catalog_reads(fresh)
    assert handed < read, (handed, read)  # the copy took its tables, the fresh one read them
    assert _bound(copied) == _bound(fresh)


def test_a_table_changed_before_the_copy_binds_is_read(env: support.Env) -> None:
    wb = env.demo()
    with env.engine.begin() as conn:
        conn.execute(sa.text("ALTER TABLE cases ADD notes_added VARCHAR(20)"))
    assert "notes_added" in wb.queue("cases").q.table.c
    assert _bound(wb) == _bound(env.open(env.demo_config()))
