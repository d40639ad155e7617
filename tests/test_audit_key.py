"""The audit trail's key: by item on PostgreSQL (one index entry fewer per audit row), and migration 11
that moves an older trail there without losing a row."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from tests import servers, support
from workbench.core import errors
from workbench.db import clock, migrations, service, tables
from workbench.db.supervision import Supervision

BY_ITEM = ["queue", "item_key", "id"]


def _keys(wb: service.Workbench) -> tuple[list[str], set[str]]:
    """The trail's primary-key columns and index names, as the database reports them."""
    a = wb.audit_table
    with wb.engine.connect() as conn:
        inspector = sa.inspect(conn)
        key = inspector.get_pk_constraint(a.name, schema=a.schema)["constrained_columns"]
        return key, {str(index["name"]) for index in inspector.get_indexes(a.name, schema=a.schema)}


def _as_version_10_left_it(wb: service.Workbench) -> None:
    """Key the trail by `id` with an item index beside it, and forget migration 11."""
    a = wb.audit_table
    _, old, version = tables.build_metadata(a.schema)  # no database named: the key every version had
    with wb.engine.begin() as conn:
        found = sa.inspect(conn).get_pk_constraint(a.name, schema=a.schema)
        if found["constrained_columns"] != ["id"]:
            named = sa.Table(
                a.name,
                sa.MetaData(schema=a.schema),
                *(sa.Column(n, sa.Integer) for n in BY_ITEM),
                sa.PrimaryKeyConstraint(*BY_ITEM, name=found["name"]),
            )
            conn.execute(sa.schema.DropConstraint(named.primary_key))
            conn.execute(sa.schema.AddConstraint(old.primary_key))
            for index in old.indexes:
                if index.name == tables.AUDIT_ITEM_INDEX:
                    conn.execute(sa.schema.CreateIndex(index))
        conn.execute(sa.delete(version).where(version.c.version >= 11))


def test_a_new_trail_is_keyed_by_item_on_postgresql_only(native_env: support.Env) -> None:
    wb = native_env.demo(case_rows=3, import_rows=1)
    key, indexes = _keys(wb)
    if wb.engine.dialect.name == "postgresql":
        assert key == BY_ITEM and tables.AUDIT_ITEM_INDEX not in indexes
    else:
        assert key == ["id"] and tables.AUDIT_ITEM_INDEX in indexes


def test_migration_11_rekeys_an_older_trail_and_keeps_every_row(native_env: support.Env) -> None:
    wb = native_env.demo(case_rows=5, import_rows=1)
    q = wb.queue("cases")
    done = q.claim_next("alice")[0]
    q.complete("alice", done.lock.key, done.lock.token)
    gone = q.claim_next("bob")[0]
    Supervision(q).force_release("sue", gone.lock.key, "needed now")
    live = q.claim_next("carol")[0]
    before = native_env.audit(wb, "cases")
    _as_version_10_left_it(wb)
    key, indexes = _keys(wb)
    assert key == ["id"] and tables.AUDIT_ITEM_INDEX in indexes
    with wb.engine.connect() as conn, pytest.raises(errors.NotInitialized, match="at version 10"):
        migrations.check(conn, wb.audit_table.schema)

    assert [m.version for m in wb.init()] == [m.version for m in migrations.MIGRATIONS[10:]]  # 11 and what came after
    assert wb.init() == []  # once only
    key, indexes = _keys(wb)
    postgresql = wb.engine.dialect.name == "postgresql"
    assert key == (BY_ITEM if postgresql else ["id"])
    assert (tables.AUDIT_ITEM_INDEX in indexes) is not postgresql
    assert native_env.audit(wb, "cases") == before
    assert [e.kind.value for e in q.history(done.lock.key)] == ["claim", "complete"]
    with pytest.raises(errors.LockLost) as lost:  # "why was my lock lost" still reads the trail by item
        q.complete("bob", gone.lock.key, gone.lock.token)
    assert lost.value.cause == "force_released" and lost.value.by == "sue"
    assert q.complete("carol", live.lock.key, live.lock.token).outcome
    newest = native_env.audit(wb, "cases")[len(before) :]
    assert newest and min(row["id"] for row in newest) > max(row["id"] for row in before)  # still numbered in order


def test_migration_11_in_a_schema_of_its_own(pg_server: servers.Server) -> None:
    name = "wbt_audit_key_schema"
    pg_server.create_database(name)
    engine = sa.create_engine(pg_server.url(name))
    try:
        generic, audit, version = tables.build_metadata("wbx")  # no database named: keyed by id, as up to 10
        with engine.begin() as conn:
            conn.exec_driver_sql("CREATE SCHEMA wbx")
            version.create(conn)
            for step in migrations.MIGRATIONS[:10]:
                step.apply(conn, generic)
                conn.execute(sa.insert(version).values(version=step.version, applied_at=clock.db_now()))
            conn.execute(
                sa.insert(audit).values(queue="q", item_key="7", event="claim", actor="ann", at=clock.db_now())
            )
        assert [m.version for m in migrations.upgrade(engine, "wbx")] == [m.version for m in migrations.MIGRATIONS[10:]]
        with engine.connect() as conn:
            inspector = sa.inspect(conn)
            assert inspector.get_pk_constraint(tables.AUDIT_TABLE, schema="wbx")["constrained_columns"] == BY_ITEM
            assert tables.AUDIT_ITEM_INDEX not in {
                i["name"] for i in inspector.get_indexes(tables.AUDIT_TABLE, schema="wbx")
            }
            assert conn.execute(sa.select(audit.c.item_key, audit.c.actor)).all() == [("7", "ann")]
    finally:
        engine.dispose()
        pg_server.drop_database(name)
