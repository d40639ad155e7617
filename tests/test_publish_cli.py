"""`workbench publish` / `published`, and profiles whose queue settings are the published ones."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from tests import support
from workbench.config import profiles

pytestmark = pytest.mark.parametrize("backend", ["sqlite", "postgresql", "mariadb"], indirect=True)


_cli = support.run_cli


def _profile(backend: str, url: str) -> profiles.Profile:
    """A profile for the test database, its queues published in it."""
    parsed = sa.make_url(url)
    if backend == "sqlite":
        return profiles.Profile(name="shared", kind="sqlite", path=parsed.database or "", source="database")
    return profiles.Profile(
        name="shared",
        kind="postgresql" if backend == "postgresql" else "mariadb",
        host=parsed.host or "",
        port=parsed.port,
        database=parsed.database or "",
        user=parsed.username or "",
        source="database",
    )


def test_publish_then_operators_use_the_published_settings(
    native_env: support.Env, backend: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    native_env.demo(case_rows=5, import_rows=3)
    config = native_env.demo_config_file()
    profiles.ProfileStore().save(_profile(backend, native_env.url))
    # Nothing published yet: the profile says what to do.
    code, _, err = _cli(capsys, "--profile", "shared", "--user", "ann", "next", "cases")
    assert code == 2 and "no queue settings are published" in err and "publish" in err, err

    code, out, _ = _cli(capsys, "--config", config, "--user", "sup", "--json", "publish", "--note", "first")
    assert code == 0 and out["version"] == 1 and out["published_by"] == "sup"
    code, out, _ = _cli(capsys, "--profile", "shared", "--user", "ann", "--json", "next", "cases")
    assert code == 0 and out["owner"] == "ann"

    # A changed title reaches the profile's users as version 2.
    changed = tmp_path / "changed.toml"
    changed.write_text(config.read_text().replace('title = "Helpdesk cases"', 'title = "Cases (new rules)"'))
    assert "Cases (new rules)" in changed.read_text()
    code, out, _ = _cli(capsys, "--profile", "shared", "--user", "sup", "--json", "publish", "--file", changed)
    assert code == 0 and out["version"] == 2
    code, out, _ = _cli(capsys, "--profile", "shared", "--json", "queues")
    assert code == 0 and out["queues"][0]["title"] == "Cases (new rules)"
    code, out, _ = _cli(capsys, "--profile", "shared", "--json", "published", "--history")
    assert [v["version"] for v in out] == [2, 1] and out[1]["note"] == "first"
    assert "[database]" not in out[0]["body"] and "Cases (new rules)" in out[0]["body"]

    # Settings naming a column the table does not have are refused before anyone gets them.
    broken = tmp_path / "broken.toml"
    broken.write_text(config.read_text().replace('order = ["priority asc"', 'order = ["priorty asc"'))
    assert broken.read_text() != config.read_text()
    code, _, err = _cli(capsys, "--profile", "shared", "--user", "sup", "publish", "--file", broken)
    assert code == 2 and "priorty" in err
    code, out, _ = _cli(capsys, "--profile", "shared", "--json", "published")
    assert [v["version"] for v in out] == [2]
