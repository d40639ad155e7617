"""The set-up pages run as written (issue 50: the order is the one that works): docs/setup/index.md's
`workbench …` commands in the page's order on a helpdesk table of one's own (PostgreSQL and MariaDB),
ending with two operators and a supervisor in their windows; docs/setup/grants.md's (its psql lines run
as the database administrator); docs/setup/pgbouncer.md's through a PgBouncer made from its settings."""

from __future__ import annotations

import dataclasses
import getpass
import os
import re
import shlex
import signal
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from PySide6.QtCore import Qt

from tests import servers, support
from tests.gui.conftest import FAST, close_window
from tests.test_people import fresh_pg  # noqa: F401 - a PostgreSQL of its own, as a fixture
from workbench.demo import data
from workbench.gui import app as gui_app
from workbench.gui import board_model, launcher
from workbench.services import door

PAGE = support.REPO / "docs" / "setup" / "index.md"
GRANTS = support.REPO / "docs" / "setup" / "grants.md"
pytestmark = pytest.mark.servers
HOLDER = board_model.COLUMNS.index("Holder")  # the supervisor's board: who holds the row's item


def page_lines(page: Path, start: str, end: str, language: str = "sh") -> list[str]:
    """The lines of the page's ```sh (or other) blocks between two headings, in order (a line continued
    with a backslash joined)."""
    text = page.read_text(encoding="utf-8")
    text = text[text.index(start) : text.index(end)]
    return [
        line
        for block in re.findall(rf"```{language}\n(.*?)```", text, flags=re.DOTALL)
        for line in block.replace("\\\n", " ").splitlines()
    ]


def page_commands(page: Path, start: str, end: str, programs: tuple[str, ...] = ("workbench",)) -> list[list[str]]:
    """The commands of the page's ```sh blocks between two headings as words, comments dropped, each with
    its program: those of `programs` only."""
    found = []
    for line in page_lines(page, start, end):
        words = shlex.split(line, comments=True)
        if words and words[0] in programs:
            found.append(words)
    return found


def commands() -> list[list[str]]:
    """index.md's commands from step 4 on, without the program's name (a bare `workbench`: [])."""
    return [words[1:] for words in page_commands(PAGE, "## 4.", "## Per database")]


@pytest.fixture
def pg(fresh_pg: servers.Server) -> Iterator[servers.Server]:
    """The module's own PostgreSQL, left as found: its logins are the cluster's (alice, sue, the roles
    `grants` makes), and each page starts where nobody has run it yet."""
    yield fresh_pg
    admin = sa.create_engine(fresh_pg.admin_url(), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        quote = admin.dialect.identifier_preparer.quote
        for (name,) in conn.execute(
            sa.text("SELECT datname FROM pg_database WHERE datname <> ALL(:keep)"),
            {"keep": ["postgres", "template0", "template1"]},
        ):
            conn.exec_driver_sql(f"DROP DATABASE {quote(name)} WITH (FORCE)")
        roles = (
            conn.execute(sa.text("SELECT rolname FROM pg_roles WHERE rolname !~ '^pg_' AND rolname <> current_user"))
            .scalars()
            .all()
        )
        for name in roles:
            conn.exec_driver_sql(f"DROP ROLE {quote(name)}")
    admin.dispose()


@pytest.fixture(params=["postgresql", "mariadb"])
def site(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A helpdesk table of one's own on a server, and its config (helpdesk below); the server's
    superuser owns it."""
    if request.param == "postgresql":
        # A server of its own: logins are the cluster's, and the suite's other tests have made an alice
        # on the shared one (`people add` then finds her and prints no password).
        server: servers.Server = request.getfixturevalue("pg")
    else:
        server = request.getfixturevalue("mariadb_server")
    name = f"wbt_{uuid.uuid4().hex[:12]}"
    server.create_database(name)
    helpdesk(server.url(name), tmp_path)
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    server.drop_database(name)


# The reader's own table has its own names: mixed case (quoted identifiers on PostgreSQL), which the
# sample's config is changed to name (the substitution the page asks for: the table's names).
NAMES = {
    "case_id": "CaseId",
    "opened_at": "OpenedAt",
    "customer": "Customer",
    "subject": "Subject",
    "priority": "Priority",
    "status": "Status",
    "resolved_by": "ResolvedBy",
    "resolved_at": "ResolvedAt",
}


def helpdesk(url: str, where: Path) -> None:
    """A helpdesk table as a customer has it (no lock columns, mixed-case column names), made by the
    login of `url`, and the sample config the page starts from in where/workbench.toml, with the
    substitutions it asks for: the URL, the column names (and on MariaDB no schema "public")."""
    engine = sa.create_engine(url)
    md = sa.MetaData()
    table = sa.Table(
        "cases",
        md,
        sa.Column("CaseId", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("OpenedAt", sa.DateTime, nullable=False),
        sa.Column("Customer", sa.String(100), nullable=False),
        sa.Column("Subject", sa.String(200), nullable=False),
        sa.Column("Priority", sa.Integer, nullable=False),
        sa.Column("Status", sa.String(20), nullable=False),
        sa.Column("ResolvedBy", sa.String(50)),
        sa.Column("ResolvedAt", sa.DateTime),
    )
    md.create_all(engine)
    with engine.begin() as conn:
        conn.execute(sa.insert(table), [{NAMES[k]: v for k, v in r.items() if k in NAMES} for r in data.cases(10)])
    engine.dispose()
    text = (support.REPO / "resources" / "configs" / "helpdesk.toml").read_text(encoding="utf-8")
    text = re.sub(r"(?m)^url = .*$", f'url = "{url}"', text)
    assert 'key = "CaseId"' in PAGE.read_text(encoding="utf-8")  # the page says to, in step 2
    for sample, ours in NAMES.items():
        text = re.sub(rf"\b{sample}\b", ours, text)
    assert "Priority asc" in text and "ResolvedBy = { user = true }" in text, text
    if not url.startswith("postgresql"):
        text = text.replace('schema = "public"\n', "")
    (where / "workbench.toml").write_text(text, encoding="utf-8")


def test_the_setup_page_runs_in_its_order(
    site: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    qtbot: Any,
    memory_keyring: Any,
) -> None:
    """Ends as step 8 says: alice's and bob's windows each take a different case with Next item, and
    sue's console shows both locks, each through the person's own login; then alice completes hers."""
    steps = commands()
    assert [s[2] for s in steps[:4]] == ["attach", "attach", "init", "queues"], steps
    printed: dict[str, str] = {}  # what `people add PERSON` printed: the profile line the person runs
    person = ""  # whose computer the commands run on from their `profile add` on
    opened: dict[str, launcher.Launcher] = {}
    try:
        for words in steps:
            if words[:2] == ["profile", "add"]:
                # The page's own words: the person runs the line `people add` printed (server, port, file).
                person = words[words.index("--db-user") + 1]
                words = shlex.split(printed[person])[1:]
                computer = site / f"{person}s-computer"  # no workbench.toml here: their default profile opens
                computer.mkdir()
                monkeypatch.chdir(computer)
                monkeypatch.setenv("WORKBENCH_HOME", str(computer / "home"))
            elif words[:2] == ["profile", "password"]:
                # The profile that line made (named after the database: the page's is "helpdesk"), and what
                # the person types at the prompt: the password `people add` printed for them.
                words = [*words[:2], shlex.split(printed[person])[3], *words[3:]]
                monkeypatch.setattr(getpass, "getpass", lambda _prompt="", typed=printed[f"{person} password"]: typed)
            if words in ([], ["--supervisor"]):
                opened[person] = open_as(person, supervisor=bool(words))
                if not words:  # an operator's window: Next item
                    next_item(qtbot, opened[person])
                continue
            code, out, err = support.run_cli(capsys, *words)
            assert code == 0, f"`workbench {' '.join(words)}` failed ({code}): {err}"
            if words[2:4] == ["people", "add"]:
                printed[words[4]] = next(line.strip() for line in out.splitlines() if "workbench profile add" in line)
                printed[f"{words[4]} password"] = next(
                    line.rpartition(": ")[2] for line in out.splitlines() if line.startswith("password (shown once")
                )
            if words[-2:] == ["next", "cases"]:
                assert out.startswith("Claimed cases"), out  # under grants: only as her own login
        assert sorted(opened) == ["alice", "bob", "sue"], opened
        held = {name: opened[name].window.session.current.lock.key for name in ("alice", "bob")}  # type: ignore[union-attr]
        assert held["alice"] != held["bob"], held
        console = opened["sue"].console
        assert console is not None and console.user == "sue"
        qtbot.waitUntil(lambda: "Refreshed" in console.status.text(), timeout=20_000)
        cell = console.model.index
        board = {(cell(r, 1).data(), cell(r, HOLDER).data()) for r in range(console.model.rowCount())}
        assert {(str(held["alice"]), "alice"), (str(held["bob"]), "bob")} <= board, board
        # And alice's window completes hers: the outcome writes the mixed-case columns, under grants.
        window = opened["alice"].window
        assert window is not None
        with qtbot.waitSignal(window.session.completed, timeout=20_000):
            qtbot.mouseClick(window.complete_buttons["resolved"], Qt.MouseButton.LeftButton)
        cases = sa.table("cases", sa.column("CaseId"), sa.column("Status"), sa.column("ResolvedBy"))
        with door.engine(window.session.wb).engine.connect() as conn:
            done = conn.execute(sa.select(cases.c.Status, cases.c.ResolvedBy).where(cases.c.CaseId == held["alice"]))
            assert done.one() == ("resolved", "alice")
        shots = os.environ.get("WORKBENCH_GUIDE_SHOTS")  # where to save the three windows as PNG, to look at
        if shots:
            for name, the in opened.items():
                shown = the.console if the.console is not None else the.window
                assert shown is not None
                shown.grab().save(str(Path(shots) / f"{site.name}-{name}.png"))
    finally:
        for the in opened.values():
            if the.window is not None and the.window.isVisible():
                close_window(qtbot, the.window, answer="quit_keep")
            the.shutdown()


def open_as(user: str, *, supervisor: bool) -> launcher.Launcher:
    """What a bare `workbench` (or `workbench --supervisor`) does on `user`'s computer (gui/app.run, up to
    its event loop): their default profile opened, with the password in their keyring."""
    gui_app.application(user)
    the = launcher.Launcher(user, lambda wb: gui_app.window_for(wb, user, settings=dataclasses.replace(FAST)))
    the.show_operator = not supervisor
    assert the.start(None, None, False), f"{user}'s window did not open"
    assert the.window is not None and door.engine(the.window.session.wb).engine.url.username == user
    if supervisor:
        assert the.open_console() is not None
    return the


def next_item(qtbot: Any, the: launcher.Launcher) -> None:
    """Click Next item in the person's window once it is ready, and wait for the case it takes."""
    window = the.window
    assert window is not None
    # Ready, under the person's own login (else it would say "database login …" too).
    qtbot.waitUntil(lambda: window.connection_label.text().startswith(f"Connected as {the.user} — "), timeout=20_000)
    assert window.next_button.isEnabled()
    with qtbot.waitSignal(window.session.claimed, timeout=20_000):
        qtbot.mouseClick(window.next_button, Qt.MouseButton.LeftButton)


# == docs/setup/grants.md ==========================================================================

OWNER = "helpdesk_app"  # the table owner's login the page names


def run_psql(server: servers.Server, database: str, line: list[str] | str) -> None:
    """A psql line of a page (words, or a shell line), as the database administrator (the server's
    superuser) on `database`."""
    rc = Path(tempfile.mkdtemp(prefix="wb-psqlrc-")) / "psqlrc"
    rc.write_text("\\set ON_ERROR_STOP on\n")  # a failing statement fails the line (psql goes on otherwise)
    env = dict(os.environ, PGHOST=server.host, PGPORT=str(server.port), PGUSER=server.user, PGDATABASE=database)
    env["PSQLRC"] = str(rc)
    shell = isinstance(line, str)
    done = subprocess.run(line, shell=shell, check=False, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"`{line if shell else shlex.join(line)}` failed: {done.stderr}"


def test_the_grants_page_runs_in_its_order_on_postgresql(
    pg: servers.Server,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The owner is an ordinary login (no CREATEROLE) that owns the database and ran attach and init; the
    page's psql lines run as the administrator, its workbench lines as the owner, each succeeds."""
    name = f"wbt_{uuid.uuid4().hex[:12]}"
    pg.create_database(name)
    admin = sa.create_engine(pg.url(name), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f"CREATE ROLE {OWNER} LOGIN")
        conn.exec_driver_sql(f"ALTER DATABASE {name} OWNER TO {OWNER}")
        conn.exec_driver_sql(f"ALTER SCHEMA public OWNER TO {OWNER}")
    admin.dispose()
    helpdesk(sa.make_url(pg.url(name)).set(username=OWNER).render_as_string(hide_password=False), tmp_path)
    monkeypatch.chdir(tmp_path)
    for words in commands()[:3]:  # index.md's step 4: attach, attach --apply, init, as the owner
        code, _, err = support.run_cli(capsys, *words)
        assert code == 0, err
    steps = page_commands(GRANTS, "## PostgreSQL", "## SQL Server", ("workbench", "psql"))
    assert [w[0] for w in steps[:3]] == ["psql", "psql", "workbench"], steps
    for words in steps:
        if words[0] == "psql":
            run_psql(pg, name, words)
            continue
        code, out, err = support.run_cli(capsys, *words[1:])
        assert code == 0, f"`{shlex.join(words)}` failed ({code}): {err}"
    # Where the page leaves the site: sue a ready supervisor, alice removed again.
    code, out, err = support.run_cli(capsys, "--config", "workbench.toml", "people", "list")
    assert code == 0 and "sue" in out and "alice" not in out, out + err


def test_the_grants_page_runs_in_its_order_on_mariadb(
    mariadb_server: servers.Server, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The roles-table section (and groups) on a MariaDB site that ran index.md's step 4; the commands
    name no config: workbench.toml in the current directory is the one found."""
    name = f"wbt_{uuid.uuid4().hex[:12]}"
    mariadb_server.create_database(name)
    helpdesk(mariadb_server.url(name), tmp_path)
    monkeypatch.chdir(tmp_path)
    for words in commands()[:3]:
        code, _, err = support.run_cli(capsys, *words)
        assert code == 0, err
    steps = page_commands(GRANTS, "## SQLite, MariaDB/MySQL", "A queue with `serves")
    assert len(steps) == 5, steps
    for words in steps:
        code, out, err = support.run_cli(capsys, *words[1:])
        assert code == 0, f"`{shlex.join(words)}` failed ({code}): {err}"
    code, out, err = support.run_cli(capsys, "role", "list")
    assert "sue" in out and "ann" not in out, out
    mariadb_server.drop_database(name)


# == docs/setup/pgbouncer.md =======================================================================

BOUNCER = support.REPO / "docs" / "setup" / "pgbouncer.md"


def test_the_pgbouncer_page_runs_in_its_order(
    pg: servers.Server,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    memory_keyring: Any,
) -> None:
    """A PgBouncer made from the page's settings (its host, ports and file substituted), the owner's config
    with the page's [database] lines; the step-by-step lines in order: the administrator's (psql, the
    service manager's reload), the owner's through PgBouncer, bob's claim through it with his own login."""
    server = pg
    server.create_database("cases")
    admin = sa.create_engine(server.url("cases"), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f"CREATE ROLE {OWNER} LOGIN CREATEROLE PASSWORD 'owner-secret'")
        conn.exec_driver_sql(f"ALTER DATABASE cases OWNER TO {OWNER}")
        conn.exec_driver_sql(f"ALTER SCHEMA public OWNER TO {OWNER}")
    helpdesk(sa.make_url(server.url("cases")).set(username=OWNER).render_as_string(hide_password=False), tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("WORKBENCH_DB_PASSWORD", "owner-secret")  # the owner's scripts (index.md, step 3)
    work, port = Path(tempfile.mkdtemp(prefix="wb-guide-bouncer-")), servers.free_port()
    work.chmod(0o755)
    users = work / "userlist.txt"
    users.touch()
    ini = "\n".join(page_lines(BOUNCER, "## PgBouncer settings that work", "Each window keeps", "ini")) + "\n"
    for page, ours in [
        ("host=db.example.org port=5432", f"host={server.host} port={server.port}"),
        ("listen_addr = 0.0.0.0", "listen_addr = 127.0.0.1"),
        ("listen_port = 6432", f"listen_port = {port}"),
        ("/etc/pgbouncer/userlist.txt", str(users)),
    ]:
        assert page in ini, page
        ini = ini.replace(page, ours)
    config = (tmp_path / "workbench.toml").read_text(encoding="utf-8")
    database = "\n".join(page_lines(BOUNCER, "# PgBouncer", "A [connection profile]", "")).strip() + "\n"
    assert database.startswith("[database]\nurl = ") and 'pooler = "transaction"' in database, database
    database = database.replace("bob@pgbouncer.example.org:6432", f"{OWNER}@127.0.0.1:{port}")
    (tmp_path / "workbench.toml").write_text(
        re.sub(r"(?m)^\[database\]\nurl = .*\n", database, config), encoding="utf-8"
    )
    proc = servers.run_pgbouncer(ini, work, port)
    try:
        printed: dict[str, str] = {}
        for line in page_lines(BOUNCER, "## Step by step", "The tests run every operation"):
            words = shlex.split(line, comments=True)
            if not words:
                continue
            if words[0] == "psql":
                run_psql(server, "cases", line.replace("/etc/pgbouncer/userlist.txt", str(users)))
                continue
            if words == ["systemctl", "reload", "pgbouncer"]:
                (bouncer,) = servers._children(proc.pid)  # runuser's child: PgBouncer itself
                os.kill(bouncer, signal.SIGHUP)  # what the service manager's reload sends
                continue
            words = words[1:]
            if words[:2] == ["profile", "add"]:
                words = shlex.split(printed["bob"])[1:]
                assert f"--port {port}" in printed["bob"], printed  # PgBouncer's, not the server's
                (tmp_path / "bobs-computer").mkdir()
                monkeypatch.chdir(tmp_path / "bobs-computer")
                monkeypatch.delenv("WORKBENCH_DB_PASSWORD")  # bob's own password, from his keyring
            elif words[:2] == ["profile", "password"]:
                words = [*words[:2], shlex.split(printed["bob"])[3]]
                monkeypatch.setattr(getpass, "getpass", lambda _prompt="": printed["bob password"])
            code, out, err = support.run_cli(capsys, *words)
            assert code == 0, f"`{line}` failed ({code}): {err}"
            if words[2:4] == ["people", "add"]:
                printed["bob"] = next(line.strip() for line in out.splitlines() if "workbench profile add" in line)
                printed["bob password"] = next(
                    line.rpartition(": ")[2] for line in out.splitlines() if line.startswith("password (shown once")
                )
            if words[-2:] == ["next", "cases"]:
                assert out.startswith("Claimed cases"), out
        with admin.connect() as conn:  # the claim function `init` made through the pooler, a permanent object
            assert conn.execute(sa.text("SELECT count(*) FROM pg_proc WHERE proname LIKE 'wb_claim_%'")).scalar()
            locked = conn.execute(sa.text("SELECT wb_locked_by FROM cases WHERE wb_locked_by IS NOT NULL")).all()
        assert [tuple(r) for r in locked] == [("bob",)], locked
    finally:
        admin.dispose()
        servers.stop_process(proc, work)
