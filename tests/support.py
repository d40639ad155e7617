"""Test helpers: a database environment that builds configs, demo data and workbenches on any backend."""

from __future__ import annotations

import atexit
import dataclasses
import datetime as dt
import os
import re
import shutil
import tempfile
import tomllib
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from tests import servers
from workbench import demo
from workbench.config import loader, model
from workbench.db import clock, service
from workbench.db.binding import reflector
from workbench.demo import invoices, schema

REPO = Path(__file__).resolve().parents[1]


def sample_config(name: str) -> str:
    """A config from resources/configs/, pointed at the test database ({url}) in its default schema."""
    text = (REPO / "resources" / "configs" / f"{name}.toml").read_text(encoding="utf-8")
    text = re.sub(r"(?m)^url = .*$", 'url = "{url}"', text)
    return re.sub(r"(?m)^schema = .*\n", "", text)


def without_table(text: str, table: str) -> str:
    """A TOML text without `[table]` and its keys (the demo's `queues.cases.on_escalate`, for a queue without it)."""
    header = "[" + table + "]"
    lines, out, skipping = text.splitlines(keepends=True), [], False
    for line in lines:
        if line.startswith("["):
            skipping = line.split("#")[0].strip() == header
        if not skipping:
            out.append(line)
    if len(out) == len(lines):
        raise AssertionError(f"no [{table}] in the text")
    return "".join(out)


def age_lock(wb: service.Workbench, queue: str, key: Any, seconds: int) -> None:
    """Move a lock `seconds` into the past using the database clock, as if time had passed."""
    q = wb.queue(queue).q
    values: dict[str, Any] = {q.time.name: clock.add_seconds(q.time, sa.literal(-seconds))}
    if q.expires is not None:
        values[q.expires.name] = clock.add_seconds(q.expires, sa.literal(-seconds))
    held_in = q.time.table  # the queue's table, or its separate lock table
    where = q.key == key if held_in is q.table else q.shape.of_item(q.shape.key_text(key))  # type: ignore[attr-defined]
    with wb.engine.begin() as conn:
        assert conn.execute(sa.update(held_in).where(where).values(values)).rowcount == 1


def age_deferral(wb: service.Workbench, queue: str, key: Any, seconds: int) -> None:
    """Move an item's deferral `seconds` into the past, as if its time were that much nearer."""
    deferrals = wb.queue(queue).trail.deferrals
    assert deferrals is not None, f"queue {queue} keeps no deferrals"
    table = deferrals.table
    with wb.engine.begin() as conn:
        moved = conn.execute(
            sa.update(table)
            .where(table.c.queue == queue, table.c.item_key == str(key))
            .values(until=clock.add_seconds(table.c.until, sa.literal(-seconds)))
        )
        assert moved.rowcount == 1


def age_audit(wb: service.Workbench, queue: str, key: Any, seconds: int) -> None:
    """Move an item's audit events `seconds` into the past."""
    table = wb.audit_table
    with wb.engine.begin() as conn:
        conn.execute(
            sa.update(table)
            .where(table.c.queue == queue, table.c.item_key == str(key))
            .values(at=clock.add_seconds(table.c.at, sa.literal(-seconds)))
        )


class Env:
    """One fresh database plus the claim method under test. `backend` is the kind of database
    ("postgresql", "mariadb", "mariadb-odbc", "sqlite"); `pooler` what stands between (the config's
    `[database] pooler`: tests/pooled.PooledEnv goes through PgBouncer)."""

    pooler = "none"
    # Whether the demo this env builds depends on its claim method. Not here: the claim method is read at the
    # first claim, so a test of either method may copy the template the other's build made (half the builds;
    # tests/test_templates.py compares the two). Through a pooler init makes the method's claim function.
    demo_by_method = False

    def __init__(
        self, backend: str, method: str, url: str, tmp: Path, server: servers.Server | SqliteFiles | None = None
    ) -> None:
        self.backend, self.method, self.url, self.tmp = backend, method, url, tmp
        # The server the database is on (on SQLite: SQLITE_FILES), where its content may be copied from a template
        # (copy_template).
        self.server = server
        self._open: list[service.Workbench] = []
        # What the build of the template copy_template last copied returned.
        self.template_made: Any = None
        self.engine = sa.create_engine(url)
        if backend == "sqlite":
            with self.engine.connect():  # creates the empty file, as a customer's database exists
                pass

    @property
    def claim_method(self) -> str:
        return "auto" if self.method == "native" else "portable"

    def close(self) -> None:
        for wb in self._open:
            wb.close()
        self.engine.dispose()

    # -- configs -----------------------------------------------------------------------------

    def config_text(self, text: str) -> str:
        """A config text with {url} filled in and the claim method under test set."""
        body = text.replace("{url}", self.url)
        if "claim_method" not in body:
            body = body.replace("[database]\n", f'[database]\nclaim_method = "{self.claim_method}"\n', 1)
        return body

    def write_config(self, text: str, name: str = "workbench.toml") -> Path:
        path = self.tmp / name
        path.write_text(self.config_text(text), encoding="utf-8")
        return path

    def load(self, text: str) -> model.Config:
        return loader.parse(tomllib.loads(self.config_text(text)), "test.toml")

    def open(self, config: model.Config, tables_read: service.TablesRead | None = None) -> service.Workbench:
        wb = service.Workbench.open(config, tables_read=tables_read)
        self._open.append(wb)
        return wb

    # -- the demo ----------------------------------------------------------------------------

    def demo_config(self, queues: dict[str, dict[str, Any]] | None = None) -> model.Config:
        """The demo config; `queues` replaces fields of the parsed queue configs, e.g.
        {"cases": {"max_locks_per_user": 2}}."""
        config = self.load(demo.config_text("{url}"))
        changed = dict(config.queues)
        for name, overrides in (queues or {}).items():
            changed[name] = dataclasses.replace(changed[name], **overrides)
        return dataclasses.replace(config, queues=changed)

    def demo(
        self, *, case_rows: int = 30, import_rows: int = 20, queues: dict[str, dict[str, Any]] | None = None
    ) -> service.Workbench:
        """The demo tables filled with a few rows, workbench initialised, claim indexes created. On a
        throwaway PostgreSQL or MariaDB server, a copy of a template database that was built so (copy_template)."""
        kind = ("demo", case_rows, import_rows, repr(queues))
        if self.copy_template(
            kind, lambda env: env.demo_template(case_rows, import_rows, queues), age_demo, by_method=self.demo_by_method
        ):
            read, stamp = self.template_made
            # Its tables as the template's read (binding them cost a test on PostgreSQL 40 ms of CPU and 60 ms
            # more of the server's), for as long as the copy's catalog is the template's (catalog_stamp): a test
            # that changes a table before it binds has it read.
            return self.open(
                self.demo_config(queues), lambda conn: read if servers.catalog_stamp(conn) == stamp else None
            )
        return self.build_demo(case_rows, import_rows, queues)

    def demo_template(
        self, case_rows: int, import_rows: int, queues: dict[str, dict[str, Any]] | None
    ) -> tuple[reflector.Read, tuple[Any, ...]]:
        """build_demo(), and what binding the demo's config reads of its tables once built (a copy's wb is handed
        it), with the catalog's stamp it was read at (servers.catalog_stamp)."""
        wb = self.build_demo(case_rows, import_rows, queues)
        with wb.engine.connect() as conn:  # the build's: its statements compiled already
            shapes = reflector.Reflector(conn, wb.config.queues.values())
            for queue in wb.config.queues.values():
                shapes.table(queue, wb.config.path)
            return shapes.read(), servers.catalog_stamp(conn)

    def build_demo(
        self, case_rows: int = 30, import_rows: int = 20, queues: dict[str, dict[str, Any]] | None = None
    ) -> service.Workbench:
        """demo(), made here and now."""
        config = self.demo_config(queues)
        wb = self.open(config)
        demo.populate(wb.engine, cases=case_rows, imports=import_rows)
        wb.init()
        demo.attach_all(wb)
        return wb

    # -- templates -----------------------------------------------------------------------------

    def copy_template(
        self,
        kind: Hashable,
        build: Callable[[Env], object],
        aged: Callable[[sa.Engine, dt.timedelta], None] | None = None,
        *,
        by_method: bool = True,
    ) -> bool:
        """Make this env's database what build(env) makes of an empty one, by copying a template
        database that build made once on the server, and say whether it did. On PostgreSQL, used
        directly or through PgBouncer (the database behind the pooler is on the same server), the copy
        is CREATE DATABASE … TEMPLATE (a tenth of a second); on MariaDB the template's tables made again
        and their rows copied (servers.Server._admin); on SQLite the file copied (SqliteFiles). Only
        where that is the same: a throwaway server,
        and a database nothing has been made in yet (Server.pristine), nobody connected to (this env's
        engine lets its idle connections go first; through a pooler, the pooler holds no session on it
        either: the test has not used it yet). Otherwise False, and the caller builds it itself.

        `kind` names what build makes, for this env's class, backend and claim method. The template is
        built as this env would build it: by an env of its kind (through the pooler, with the same
        driver) on the template database, within one minute. What build writes may count from the
        current minute (the demo's rows: workbench.demo.data): aged(engine, elapsed) moves a copy's
        on by the whole minutes since the build (age_demo), and the template serves the whole run;
        without `aged` a template is used only in the minute it was built in. With `by_method` false, what
        build makes is the same under either claim method, and the envs of both copy one template."""
        server = self.server
        if server is None or not server.templates() or server.kind != SERVER_KIND.get(self.backend, self.backend):
            return False
        name = sa.make_url(self.url).database
        assert name is not None
        self.engine.dispose()
        if not server.pristine(name):
            return False
        key = (type(self).__qualname__, self.backend, self.method if by_method else "either", kind)
        for _ in range(3):
            minute = _minute()
            try:
                template, (built_in, self.template_made) = server.template(
                    key, None if aged else minute, lambda database: self._build_template(database, build)
                )
            except _MinuteTurned:
                continue
            server.replace(name, template)
            if aged is not None:
                aged(self.engine, _minute() - built_in)
                self.engine.dispose()
                return True
            if _minute() == minute:  # not built (or found) across a minute's turn: its rows are this minute's
                return True
        return False

    def _build_template(self, database: str, build: Callable[[Env], object]) -> tuple[dt.datetime, object]:
        """build(env) on `database`; the minute it ran in (_MinuteTurned if it ran across a minute's turn) and what
        build returned."""
        minute = _minute()
        with tempfile.TemporaryDirectory(prefix="wb-template-") as tmp:
            env = self.template_env(database, Path(tmp))
            try:
                made = build(env)
            finally:
                env.close()
                self.let_go(database)
        if _minute() != minute:
            raise _MinuteTurned
        return minute, made

    def template_env(self, database: str, tmp: Path) -> Env:
        """An env like this one on database `database` of the same server, without templates (a template's
        own build)."""
        return type(self)(
            self.backend,
            self.method,
            sa.make_url(self.url).set(database=database).render_as_string(hide_password=False),
            tmp,
        )

    def let_go(self, database: str) -> None:
        """After a template's build on `database`: what holds a session on it besides the build's own
        engine lets it go (tests/pooled.PooledEnv: the pooler)."""

    def demo_config_file(self) -> Path:
        return self.write_config(demo.config_text("{url}"))

    # -- time travel ---------------------------------------------------------------------------

    def age_lock(self, wb: service.Workbench, queue: str, key: Any, seconds: int) -> None:
        age_lock(wb, queue, key, seconds)

    def age_audit(self, wb: service.Workbench, queue: str, key: Any, seconds: int) -> None:
        age_audit(wb, queue, key, seconds)

    def row(self, wb: service.Workbench, queue: str, key: Any) -> dict[str, Any]:
        q = wb.queue(queue).q
        with wb.engine.connect() as conn:
            return dict(conn.execute(sa.select(q.table).where(q.key == key)).mappings().one())

    def count(self, wb: service.Workbench, queue: str, where: sa.ColumnElement[bool] | None = None) -> int:
        q = wb.queue(queue).q
        stmt = sa.select(sa.func.count()).select_from(q.table)
        if where is not None:
            stmt = stmt.where(where)
        with wb.engine.connect() as conn:
            return int(conn.execute(stmt).scalar() or 0)

    def audit(self, wb: service.Workbench, queue: str) -> list[dict[str, Any]]:
        table = wb.audit_table
        with wb.engine.connect() as conn:
            return [
                dict(r)
                for r in conn.execute(sa.select(table).where(table.c.queue == queue).order_by(table.c.id)).mappings()
            ]


class SqliteFiles:
    """Template databases on SQLite (Env.copy_template), as servers.Server keeps them on a server: files of this
    process, built once and copied whole over a test's empty one. Building the demo on SQLite cost a test 0.25 to
    0.4 s of CPU, the copy a hundredth of that."""

    kind = "sqlite"

    def __init__(self) -> None:
        self._folder: Path | None = None
        self._templates: dict[Hashable, tuple[str, Hashable, Any]] = {}

    def templates(self) -> bool:
        return True

    def pristine(self, name: str) -> bool:
        """Whether database file `name` is as connecting to it made it: empty, no journal beside it (nothing
        written, nothing being written)."""
        path = Path(name)
        return (
            path.is_file()
            and path.stat().st_size == 0
            and not any(Path(name + suffix).exists() for suffix in ("-wal", "-shm", "-journal"))
        )

    def template(self, kind: Hashable, stamp: Hashable, build: Callable[[str], Any]) -> tuple[str, Any]:
        """As servers.Server.template: the file build(name) made for `kind` and `stamp`, and what build returned.
        Nobody may hold it open once built: its write-ahead log must be checkpointed into it."""
        held = self._templates.get(kind)
        if held is not None and held[1] == stamp:
            return held[0], held[2]
        if self._folder is None:
            self._folder = Path(tempfile.mkdtemp(prefix="wb-sqlite-templates-"))
        name = str(self._folder / f"{len(self._templates)}-{os.urandom(4).hex()}.db")
        try:
            made = build(name)
            if not Path(name).is_file() or Path(name + "-wal").exists():
                raise RuntimeError(f"the build of template {kind!r} left no file or its log open")
        except BaseException:
            for suffix in ("", "-wal", "-shm", "-journal"):
                Path(name + suffix).unlink(missing_ok=True)
            raise
        if held is not None:
            Path(held[0]).unlink(missing_ok=True)
        self._templates[kind] = (name, stamp, made)
        return name, made

    def replace(self, name: str, template: str) -> None:
        """Database file `name`, empty (pristine()), replaced by a copy of `template`."""
        shutil.copyfile(template, name)

    def remove(self) -> None:
        """The templates removed (remove_templates)."""
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
        self._folder = None
        self._templates.clear()


SQLITE_FILES = SqliteFiles()  # this process's SQLite templates


class _MinuteTurned(Exception):
    """A template's build ran across a minute's turn: its rows may count from either minute."""


def age_demo(engine: sa.Engine, elapsed: dt.timedelta) -> None:
    """The demo's rows as if written `elapsed` later: the cases' opened_at and due_at, the only values that
    count from when the demo was made (workbench.demo.data.cases; tests/test_templates.py compares a copy so
    moved with a demo made now). Read and written back through SQLAlchemy, in the form an insert writes."""
    if not elapsed:
        return
    cases = schema.build(sa.MetaData())[0]
    with engine.begin() as conn:
        rows = conn.execute(sa.select(cases.c.case_id, cases.c.opened_at, cases.c.due_at)).all()
        if rows:
            conn.execute(
                sa.update(cases)
                .where(cases.c.case_id == sa.bindparam("key"))
                .values(opened_at=sa.bindparam("opened"), due_at=sa.bindparam("due")),
                [{"key": k, "opened": opened + elapsed, "due": due and due + elapsed} for k, opened, due in rows],
            )


# The kind of server (servers.Server.kind) each server backend's database is on.
SERVER_KIND = {"postgresql": "postgresql", "mariadb": "mariadb", "mariadb-odbc": "mariadb"}

# "held": this process's demo, the minute it was built in, its folder
_SQLITE_DEMO: dict[str, tuple[dt.datetime, Path]] = {}


def sqlite_demo(directory: Path) -> Path:
    """demo.create(directory): the README's demo on SQLite (the database, its config, the scans), copied from one
    this process built, its rows moved on by the minutes since (age_demo). A copy is what the test would have
    built; the two differ only in the migrations' `applied_at` (tests/test_templates.py). A folder that exists
    already is built in, as demo.create does."""
    if directory.exists():
        return demo.create(directory)
    held = _SQLITE_DEMO.get("held")
    for _ in range(3):
        if held is not None:
            break
        minute = _minute()
        folder = Path(tempfile.mkdtemp(prefix="wb-sqlite-demo-"))
        demo.create(folder / "demo")
        if _minute() == minute:  # not built across a minute's turn: its rows are this minute's
            held = _SQLITE_DEMO["held"] = (minute, folder / "demo")
        else:
            shutil.rmtree(folder, ignore_errors=True)
    if held is None:
        return demo.create(directory)
    shutil.copytree(held[1], directory, copy_function=_copy_or_link)
    engine = sa.create_engine(f"sqlite:///{directory / demo.DB_NAME}")
    try:
        age_demo(engine, _minute() - held[0])
    finally:
        engine.dispose()
    return directory / demo.CONFIG_NAME


@atexit.register
def remove_templates() -> None:
    """This process's SQLite templates and demo removed: at its end, or at its pytest session's end
    (tests/conftest.py), for an xdist worker ends without running atexit's functions."""
    SQLITE_FILES.remove()
    held = _SQLITE_DEMO.pop("held", None)
    if held is not None:
        shutil.rmtree(held[1].parent, ignore_errors=True)


def _copy_or_link(source: str, target: str) -> None:
    """The demo's scans (300 PDFs nothing writes into: `demo --force` writes new files in their place,
    workbench.demo.invoices.write_all) hard-linked, the database and the config copied. Copying the 302
    files cost a test about 0.07 s of CPU (0.2 s wall), linking them a tenth of that."""
    if Path(source).parent.name == invoices.SCAN_DIR:
        os.link(source, target)
    else:
        shutil.copy2(source, target)


def _minute() -> dt.datetime:
    """The current minute, as the demo's rows count from it (workbench.demo.data.cases)."""
    return dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)


def run_cli(capsys: Any, *args: Any) -> tuple[int, Any, str]:
    """`workbench ARGS…` in this process: exit code, stdout (parsed when it is JSON) and stderr."""
    import json

    from workbench.cli import main

    capsys.readouterr()
    code = main.main([str(a) for a in args])
    out, err = capsys.readouterr()
    try:
        return code, json.loads(out), err
    except json.JSONDecodeError:
        return code, out, err
