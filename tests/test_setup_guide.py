"""docs/setup/index.md run as written: its `workbench --config workbench.toml …` commands, in the page's
order, on a helpdesk table of one's own (PostgreSQL), each succeeds (issue 50: the order is the one that works)."""

from __future__ import annotations

import re
import shlex
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests import servers, support
from tests.test_people import fresh_pg  # noqa: F401 - a PostgreSQL of its own, as a fixture
from workbench.demo import data

PAGE = support.REPO / "docs" / "setup" / "index.md"
pytestmark = pytest.mark.servers


def commands() -> list[list[str]]:
    """The page's commands from step 4 on, in order, comments dropped (a line continued with a backslash
    joined); not the window (a bare `workbench`)."""
    text = PAGE.read_text(encoding="utf-8")
    text = text[text.index("## 4.") : text.index("## Per database")]
    found = []
    for block in re.findall(r"```sh\n(.*?)```", text, flags=re.DOTALL):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if len(words) > 1 and words[0] == "workbench":
                found.append(words[1:])
    return found


@pytest.fixture(params=["postgresql", "mariadb"])
def site(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A helpdesk table as a customer has it (no lock columns), and the sample config the page starts
    from, with the substitutions it asks for: the URL (and on MariaDB no schema "public")."""
    if request.param == "postgresql":
        # A server of its own: logins are the cluster's, and the suite's other tests have made an alice
        # on the shared one (`people add` then finds her and prints no password).
        server: servers.Server = request.getfixturevalue("fresh_pg")
    else:
        server = request.getfixturevalue("mariadb_server")
    name = f"wbt_{uuid.uuid4().hex[:12]}"
    server.create_database(name)
    engine = sa.create_engine(server.url(name))
    md = sa.MetaData()
    table = sa.Table(
        "cases",
        md,
        sa.Column("case_id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("opened_at", sa.DateTime, nullable=False),
        sa.Column("customer", sa.String(100), nullable=False),
        sa.Column("subject", sa.String(200), nullable=False),
        sa.Column("priority", sa.Integer, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("resolved_by", sa.String(50)),
        sa.Column("resolved_at", sa.DateTime),
    )
    md.create_all(engine)
    keep = {c.name for c in table.c}
    with engine.begin() as conn:
        conn.execute(sa.insert(table), [{k: v for k, v in r.items() if k in keep} for r in data.cases(10)])
    engine.dispose()
    text = (support.REPO / "resources" / "configs" / "helpdesk.toml").read_text(encoding="utf-8")
    text = re.sub(r"(?m)^url = .*$", f'url = "{server.url(name)}"', text)
    if request.param == "mariadb":
        text = text.replace('schema = "public"\n', "")
    (tmp_path / "workbench.toml").write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    server.drop_database(name)


def test_the_setup_page_runs_in_its_order(
    site: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    steps = commands()
    assert [s[2] for s in steps][:4] == ["attach", "attach", "init", "queues"], steps
    printed: dict[str, str] = {}  # what `people add PERSON` printed: the profile line the person runs
    for words in steps:
        if words[:2] == ["profile", "add"]:
            # The page's own words: alice runs the line `people add` printed (her server, port, file).
            words = shlex.split(printed["alice"])[1:]
            (site / "alices-computer").mkdir()
            monkeypatch.chdir(site / "alices-computer")  # no workbench.toml here: her default profile opens
        elif words[:2] == ["profile", "password"]:
            # What alice types: the password `people add` printed (the environment stands for the keyring).
            monkeypatch.setenv("WORKBENCH_DB_PASSWORD", printed["alice password"])
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
