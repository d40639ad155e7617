"""Queue settings a supervisor publishes in the database, versioned, for every operator's app."""

from __future__ import annotations

import datetime as dt
import random
import time
from collections.abc import Callable
from typing import Any, TypeVar

import sqlalchemy as sa

from workbench.config import loader, model, settings
from workbench.core import errors
from workbench.core.records import Published  # what the admin services hand out: core's records
from workbench.db import clock, dberrors, migrations, permissions, tables

T = TypeVar("T")

# Publishers that pick the same version number collide on the primary key; the loser tries
# again with the next number. Publishing is rare, so a few tries cover any real contention.
_ATTEMPTS = 8
_VALIDATION_LABEL = "settings to publish"


def publish(engine: sa.Engine, schema: str | None, body: str, actor: str, note: str | None = None) -> Published:
    """Store `body` as the next version of the queue settings and return it.

    Args:
        engine: the database.
        schema: workbench's schema (`[database] workbench_schema`), or None for the default.
        body: TOML with `[app]` and `[queues.*]`, e.g. from `loader.queue_settings_text`.
        actor: who publishes (1 to 128 characters).
        note: why, shown in the history (up to 1000 characters).

    Raises:
        ConfigError: the body is not valid settings; nothing is stored.
        NotInitialized: workbench's tables are missing or older than this program.
        NotPermitted: `actor` is not a supervisor (permissions.require_publisher).
    """
    loader.parse_text(body, _VALIDATION_LABEL, _placeholder_database(engine, schema))
    if not actor or not actor.strip() or len(actor) > 128:
        raise errors.UsageError("a user name is required (1 to 128 characters); pass --user NAME")
    if note is not None and len(note) > 1000:
        raise errors.InvalidValue(f"the note is at most 1000 characters ({len(note)} given)")
    table = _table(schema)
    with dberrors.translated(), engine.connect() as conn:
        migrations.check(conn, schema)
    collisions = busy = 0
    while True:
        try:
            with dberrors.translated(), engine.connect() as conn:
                # BEGIN IMMEDIATE on SQLite (connect.create_engine's engines): publishers queue up there.
                conn.execution_options(workbench_write=True)
                with conn.begin():
                    permissions.require_publisher(conn, schema, actor)
                    number = _next_version(conn, table)
                    conn.execute(
                        sa.insert(table).values(
                            version=number, body=body, published_by=actor, published_at=clock.db_now(), note=note
                        )
                    )
                    row = conn.execute(sa.select(table).where(table.c.version == number)).one()
            return _published(row)
        except errors.InvalidValue as exc:
            # From an IntegrityError, with the inputs checked above: another publisher took this
            # version number between our read and our insert. Our transaction was rolled back.
            if not isinstance(exc.__cause__, sa.exc.IntegrityError):
                raise
            collisions += 1
            if collisions >= _ATTEMPTS:
                raise errors.WorkbenchError(
                    "other supervisors kept publishing queue settings at the same "
                    "moment; look at the history and publish again"
                ) from exc
        except dberrors.Busy:
            busy += 1
            if busy > 2:
                raise errors.DatabaseUnavailable("the database stayed busy; try again in a moment") from None
        time.sleep(random.uniform(0.005, 0.02) * (collisions + busy))


def _next_version(conn: sa.Connection, table: sa.Table) -> int:
    return int(conn.execute(sa.select(sa.func.max(table.c.version))).scalar() or 0) + 1


def latest(engine: sa.Engine, schema: str | None) -> Published | None:
    """The settings in force (the newest version), or None when nothing is published."""
    table = _table(schema)
    row = _read(
        engine, schema, lambda conn: conn.execute(sa.select(table).order_by(table.c.version.desc()).limit(1)).first()
    )
    return None if row is None else _published(row)


def latest_version(engine: sa.Engine, schema: str | None) -> int:
    """The newest version number, 0 when nothing is published; one index lookup, cheap to poll."""
    table = _table(schema)
    return int(_read(engine, schema, lambda conn: conn.execute(sa.select(sa.func.max(table.c.version))).scalar()) or 0)


def history(engine: sa.Engine, schema: str | None) -> list[Published]:
    """Every published version, newest first, bodies included."""
    table = _table(schema)
    rows = _read(engine, schema, lambda conn: conn.execute(sa.select(table).order_by(table.c.version.desc())).all())
    return [_published(row) for row in rows]


def get(engine: sa.Engine, schema: str | None, version: int) -> Published | None:
    """One version, or None when there is no such version."""
    table = _table(schema)
    row = _read(engine, schema, lambda conn: conn.execute(sa.select(table).where(table.c.version == version)).first())
    return None if row is None else _published(row)


def load_config(engine: sa.Engine, schema: str | None, database: model.DatabaseConfig) -> tuple[model.Config, int]:
    """The settings in force as a Config on `database` (the user's connection), and their version.

    Raises:
        ConfigError: nothing is published yet, or the published body is not valid for this program.
    """
    current = latest(engine, schema)
    if current is None:
        raise errors.ConfigError(
            "no queue settings are published in this database yet: a supervisor runs `workbench --config FILE publish`"
        )
    label = f"published settings v{current.version} in the database"
    return loader.parse_text(current.body, label, database), current.version


def _table(schema: str | None) -> sa.Table:
    metadata, _, _ = tables.build_metadata(schema)
    return metadata.tables[f"{schema}.{tables.SETTINGS_TABLE}" if schema else tables.SETTINGS_TABLE]


def _read(engine: sa.Engine, schema: str | None, query: Callable[[sa.Connection], T]) -> T:
    """Run `query`; if it fails because the table is missing, say that `workbench init` is needed."""
    with dberrors.translated():
        try:
            with engine.connect() as conn:
                return query(conn)
        except sa.exc.DBAPIError as exc:
            if exc.connection_invalidated:
                raise
            failure = exc
        # Checked only after a failure, so that polling costs one query.
        with engine.connect() as conn:
            migrations.check(conn, schema)
        raise failure


def _published(row: Any) -> Published:
    at = row.published_at
    return Published(
        version=int(row.version),
        body=row.body,
        published_by=row.published_by,
        published_at=at if at.tzinfo else at.replace(tzinfo=dt.UTC),
        note=row.note,
    )


def _placeholder_database(engine: sa.Engine, schema: str | None) -> model.DatabaseConfig:
    # Validation needs a Config, but only its queues and [app] come from the body.
    defaults = {s.name: s.default for s in settings.DATABASE if not s.required}
    return model.DatabaseConfig(
        **{**defaults, "url": engine.url.render_as_string(hide_password=True), "workbench_schema": schema}
    )
