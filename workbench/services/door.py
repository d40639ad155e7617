"""The front door: an open database as the windows, the commands and scripts hold it, the engine inside."""

from __future__ import annotations

import dataclasses
from typing import Self

from workbench.config import model
from workbench.db import service


@dataclasses.dataclass(frozen=True)
class Applied:
    """A change `init` made to workbench's own tables."""

    version: int
    description: str


class Workbench:
    """One configured database, opened. What the front ends may do with it is here (close it, say which
    database and login it is, create its tables, check its config, show its settings); its queues are
    worked through the services (Operator, Supervisor, admin), which alone reach the engine inside."""

    def __init__(self, engine: service.Workbench) -> None:
        self._engine = engine

    @classmethod
    def of(cls, wb: Workbench | service.Workbench) -> Workbench:
        """The door to `wb`: itself, or the door around an engine a test or script opened itself."""
        return wb if isinstance(wb, Workbench) else cls(wb)

    @classmethod
    def open(cls, config: model.Config, *, password: str | None = None, create_sqlite: bool = False) -> Workbench:
        """A handle on the config's database (nothing is read yet)."""
        return cls(service.Workbench.open(config, password=password, create_sqlite=create_sqlite))

    @property
    def config(self) -> model.Config:
        """The queue settings it was opened with (a config file's, or those published in the database):
        what the windows are built from and may show."""
        return self._engine.config

    @property
    def settings_version(self) -> int:
        """The published queue settings in use (0: from a config file)."""
        return self._engine.settings_version

    def database_label(self) -> str:
        """Which database this is, for people: "SQLite /path/cases.db", "postgresql db1/cases"."""
        return self._engine.database_label()

    def database_login(self) -> str | None:
        """The login workbench uses on the server (None where there is none, e.g. SQLite)."""
        return self._engine.database_login()

    def init(self) -> list[Applied]:
        """Create or upgrade workbench's own tables: the changes made."""
        return [Applied(m.version, m.description) for m in self._engine.init()]

    def validate(self) -> None:
        """Check the whole config against the database as a claim would (ConfigError with the file, key
        and fix); changes nothing."""
        self._engine.validate()

    def close(self) -> None:
        self._engine.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def engine(wb: Workbench | service.Workbench) -> service.Workbench:
    """The engine behind the door: for the services only (tests/test_front_door.py keeps it so)."""
    return wb._engine if isinstance(wb, Workbench) else wb
