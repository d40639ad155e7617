"""Binding a config reads its queues' tables together (db/binding/reflector.py): on PostgreSQL a batch of catalog
queries per schema, however many tables the queues and their lookups name, where each table alone took about ten
(47 statements for the demo's three tables, 15 since). Every window's start and every command binds."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import sqlalchemy as sa

from tests import support
from tests.conftest import POOLED
from workbench.config import model
from workbench.db.binding import reflector


def _binding_statements(env: support.Env, config: model.Config) -> list[str]:
    """The statements a new Workbench on `config` runs to bind its queues."""
    wb = env.open(config)
    seen: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        seen.append(statement)

    sa.event.listen(wb.engine, "before_cursor_execute", count)
    try:
        wb.queue(next(iter(config.queues)))
    finally:
        sa.event.remove(wb.engine, "before_cursor_execute", count)
    return seen


@pytest.mark.parametrize("backend", ["postgresql", POOLED], indirect=True)
def test_more_tables_cost_no_more_catalog_reads(env: support.Env) -> None:
    env.demo(case_rows=2, import_rows=2)
    config = env.demo_config()
    one = dataclasses.replace(config, queues={"cases": config.queues["cases"]})
    assert {config.queues[q].table for q in config.queues} == {"cases", "import_rows"}
    assert any(f.lookup is not None and f.lookup.table == "vendors" for f in config.queues["imports"].fields.values())
    alone = _binding_statements(env, one)
    three = _binding_statements(env, config)  # cases, import_rows and the lookup's vendors
    # One table or three: the same batch of catalog queries (before: about ten more for each table).
    assert len(three) == len(alone), (len(alone), len(three), three)
    assert len(three) <= 16, three


def test_the_tables_foreign_keys_name_are_read_too(env: support.Env) -> None:
    """A queue table's foreign key names a table no queue names: read with the next batch, so the key
    resolves (db/lookups.py makes it a lookup) as when SQLAlchemy followed it itself."""
    meta = sa.MetaData()
    teams = sa.Table("teams", meta, sa.Column("id", sa.Integer, primary_key=True), sa.Column("title", sa.String(40)))
    sa.Table(
        "team_cases",
        meta,
        sa.Column("case_id", sa.Integer, primary_key=True),
        sa.Column("team_id", sa.Integer, sa.ForeignKey("teams.id")),
        sa.Column("status", sa.String(20)),
    )
    meta.create_all(env.engine)
    queue = dataclasses.replace(env.demo_config().queues["cases"], table="team_cases")
    with env.engine.connect() as conn:
        table = reflector.Reflector(conn, [queue]).table(queue, "workbench.toml")
    (fk,) = table.c.team_id.foreign_keys
    assert fk.column.table.name == teams.name
    assert [c.name for c in fk.column.table.c] == ["id", "title"]
