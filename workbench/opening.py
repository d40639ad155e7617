"""From a connection profile or a config file to an open Workbench: the queue settings, the password, the engine."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import TYPE_CHECKING

from workbench import credentials
from workbench.config import loader, model, paths, profiles
from workbench.core import errors

if TYPE_CHECKING:  # imported by open_target, on the thread that connects: the window paints meanwhile
    from workbench.services import door

PROFILE_ENV = "WORKBENCH_PROFILE"


@dataclasses.dataclass(frozen=True)
class Target:
    """What the user asked to open: a profile, or a config file that names its own database."""

    profile: profiles.Profile | None = None
    config_path: Path | None = None

    @property
    def label(self) -> str:
        """For messages: the profile with its connection, or the config file."""
        return f"{self.profile.name} ({self.profile.describe()})" if self.profile else str(self.config_path)

    def database(self, base: model.DatabaseConfig | None = None) -> model.DatabaseConfig:
        """The connection: the profile's (keeping `base`'s claim method and clock), else the config file's."""
        if self.profile is not None:
            return database_config(self.profile, base)
        assert self.config_path is not None  # choose() gives a profile or a config file
        return loader.load(self.config_path).database


def choose(config: str | None = None, profile: str | None = None, demo: bool = False) -> Target:
    """--demo, --config FILE, then --profile NAME, then $WORKBENCH_CONFIG / $WORKBENCH_PROFILE, then
    ./workbench.toml, then the default profile, then the user config file, then the demo."""
    if demo and (config or profile):
        raise errors.UsageError("give --demo, --config or --profile, only one of them")
    if demo:  # asked for by name: it wins over a default profile, which would otherwise come first
        return demo_target()
    if config and profile:
        raise errors.UsageError("give --config or --profile, not both")
    if config:
        return Target(config_path=Path(config))
    if profile:
        return Target(profile=profiles.ProfileStore().get(profile))
    if os.environ.get("WORKBENCH_CONFIG"):
        return Target(config_path=paths.find_config(None))
    if os.environ.get(PROFILE_ENV):
        return Target(profile=profiles.ProfileStore().get(os.environ[PROFILE_ENV]))
    local = Path.cwd() / paths.CONFIG_NAME
    if local.is_file():
        return Target(config_path=local)
    store = profiles.ProfileStore()
    found, default = store.load()
    if default is not None:
        return Target(profile=store.get(default))
    try:
        return Target(config_path=paths.find_config(None))
    except errors.ConfigError:
        if not found:
            raise
        # Profiles, but none is the default: which login to use is the user's to say, never a guess.
        raise errors.ConfigError(
            f"no default connection profile in {store.path}: name one with --profile NAME "
            f"({', '.join(found)}), or choose the default with `workbench profile default NAME`"
        ) from None


def demo_target() -> Target:
    """The demo in the data dir, created on first use (or again when a file of it has gone)."""
    from workbench import demo as demo_mod

    directory = paths.demo_dir()
    if not (directory / demo_mod.CONFIG_NAME).exists() or not (directory / demo_mod.DB_NAME).exists():
        demo_mod.create(directory, overwrite=True)
    return Target(config_path=directory / demo_mod.CONFIG_NAME)


def database_config(profile: profiles.Profile, base: model.DatabaseConfig | None = None) -> model.DatabaseConfig:
    """The profile's connection, keeping the claim method and clock of a config file if there is one."""
    url = profile.url().render_as_string(hide_password=False)  # a profile URL never holds a password
    schema = profile.schema or (base.workbench_schema if base else None)
    return model.DatabaseConfig(
        url=url,
        claim_method=base.claim_method if base else "auto",
        workbench_schema=schema or None,
        clock=base.clock if base else "utc",
        connect_timeout=profile.connect_timeout,
        statement_timeout=profile.statement_timeout,
        pooler="transaction" if "transaction" in (profile.pooler, base.pooler if base else "") else "none",
    )


def file_config(path: Path, profile: profiles.Profile | None = None) -> model.Config:
    """A config file; with a profile, its [database] connection is the profile's."""
    if profile is None:
        return loader.load(path)
    config = loader.load(path, require_url=False)
    return dataclasses.replace(config, database=database_config(profile, config.database))


def password_for(profile: profiles.Profile) -> str | None:
    """The stored password (environment, then keyring) or None when the user must be asked."""
    if not profile.needs_password:
        return None
    return credentials.lookup(profile.credential_id)


def local_config(target: Target) -> model.Config | None:
    """The target's queue settings when they come from a file (read without the database), else None:
    a profile whose settings are published in the database."""
    if target.profile is None:
        assert target.config_path is not None
        return loader.load(target.config_path)
    if target.profile.source == "file":
        return file_config(Path(target.profile.config).expanduser(), target.profile)
    return None


def open_target(target: Target, password: str | None = None, config: model.Config | None = None) -> door.Workbench:
    """Open the target's database and queue settings (touches the database when settings are published:
    call off the GUI thread). `config`: the target's local_config, already read. Raises
    DatabaseUnavailable when the login is refused or the server is away."""
    from workbench.services import door

    config = config or local_config(target)
    if config is not None:
        return door.Workbench.open(config, password=password)
    from workbench.db import connect, published, service

    profile = target.profile
    assert profile is not None  # local_config read a config file's target

    database = database_config(profile)
    engine = connect.create_engine(database, f"profile '{profile.name}'", password=password)
    try:
        config, version = published.load_config(engine, database.workbench_schema, database)
    except BaseException:
        engine.dispose()
        raise
    wb = service.Workbench(config, engine)
    wb.settings_version = version
    return door.Workbench(wb)
