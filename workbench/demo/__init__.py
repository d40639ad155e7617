"""`workbench demo`: write a SQLite demo database and a config for it."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.demo import data, invoices

if TYPE_CHECKING:  # `workbench --demo` finds an existing demo by its file names, without SQLAlchemy
    import sqlalchemy as sa

    from workbench.db import service

DB_NAME = "workbench-demo.db"
CONFIG_NAME = "workbench.toml"


def config_text(url: str = f"sqlite:///{DB_NAME}") -> str:
    """The demo config, pointing at `url`."""
    template = resources.files("workbench.resources").joinpath("demo", "workbench.toml").read_text("utf-8")
    return template.replace("sqlite:///workbench-demo.db", url)


def populate(engine: sa.Engine, *, cases: int = 400, imports: int = 300) -> None:
    """Create the demo tables (lock columns included) and fill them."""
    import sqlalchemy as sa

    from workbench.demo import schema

    metadata = sa.MetaData()
    case_table, import_table = schema.build(metadata)
    vendor_table = schema.vendors(metadata)
    metadata.drop_all(engine)
    metadata.create_all(engine)
    with engine.begin() as conn:
        conn.execute(sa.insert(vendor_table), list(data.vendors()))
        conn.execute(sa.insert(case_table), list(data.cases(cases)))
        conn.execute(sa.insert(import_table), list(data.imports(imports)))


def create(directory: Path, *, overwrite: bool = False) -> Path:
    """Write DIR/workbench-demo.db and DIR/workbench.toml; returns the config path."""
    from workbench.config import loader
    from workbench.db import service

    directory.mkdir(parents=True, exist_ok=True)
    db_path = directory / DB_NAME
    config_path = directory / CONFIG_NAME
    if db_path.exists():
        if not overwrite:
            from workbench.core import errors

            raise errors.UsageError(f"{db_path} already exists; pass --force to replace it")
        db_path.unlink()
        for suffix in ("-wal", "-shm"):
            Path(str(db_path) + suffix).unlink(missing_ok=True)
    config_path.write_text(config_text(), encoding="utf-8")
    config = loader.load(config_path)
    with service.Workbench.open(config, create_sqlite=True) as wb:
        populate(wb.engine)
        wb.init()
        attach_all(wb)
    cities = {vendor["name"]: vendor["city"] for vendor in data.vendors()}
    invoices.write_all(directory, list(data.imports()), cities)  # the scans the import lines name
    return config_path


def attach_all(wb: service.Workbench) -> None:
    """Create the claim indexes `workbench attach --apply` would create, for every queue."""
    from workbench.db import attach

    for queue in wb.config.queues.values():
        with wb.engine.begin() as conn:
            attach.apply(conn, attach.plan(conn, queue, wb.config.path))
