"""The database backends: one object per database family, chosen once when a database is opened."""

from __future__ import annotations

import sqlalchemy as sa

from workbench.db.backends.base import Backend, ChangeListener, ListenLost, ListenRefused, NewRow
from workbench.db.backends.mssql import MssqlBackend
from workbench.db.backends.mysql import MysqlBackend
from workbench.db.backends.postgresql import PostgresqlBackend
from workbench.db.backends.sqlite import SqliteBackend

_BY_DIALECT: dict[str, Backend] = {
    "postgresql": PostgresqlBackend(),
    "sqlite": SqliteBackend(),
    "mysql": MysqlBackend(),
    "mariadb": MysqlBackend(label="MariaDB"),
    "mssql": MssqlBackend(),
}
_PORTABLE = Backend()


def for_dialect(name: str) -> Backend:
    """The backend of a SQLAlchemy dialect name; the portable base for any other database."""
    return _BY_DIALECT.get(name, _PORTABLE)


def of(conn: sa.Connection | sa.Engine) -> Backend:
    """The backend of an open connection or an engine."""
    return for_dialect(conn.dialect.name)


__all__ = ["Backend", "ChangeListener", "ListenLost", "ListenRefused", "NewRow", "for_dialect", "of"]
