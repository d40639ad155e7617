"""The README's promises: two command lines first, and configuration examples that really load."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from workbench.config import loader

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")


def test_readme_starts_with_the_two_command_lines() -> None:
    lines = README.splitlines()
    assert lines[0] == "```sh" and lines[3] == "```"
    demo, tests = lines[1], lines[2]
    assert "pip install" in demo and demo.endswith("workbench --demo")
    assert "pip install" in tests and "pytest" in tests and "[test]" in tests


def test_every_toml_example_is_a_sample_config_that_loads() -> None:
    blocks = [b for b in re.findall(r"```toml\n(.*?)```", README, flags=re.DOTALL) if not b.startswith("[app]")]
    samples = {p.name: p.read_text(encoding="utf-8") for p in (REPO / "resources" / "configs").glob("*.toml")}
    assert len(blocks) == len(samples) >= 6  # every sample config is shown, and every shown one is a sample
    for block in blocks:
        assert block in samples.values(), block[:80]
        config = loader.parse(tomllib.loads(block), "README.md")
        assert config.queues


def test_sample_configs_load(tmp_path: Path) -> None:
    for path in (REPO / "resources" / "configs").glob("*.toml"):
        config = loader.load(path)
        assert all(q.outcomes and q.todo for q in config.queues.values()), path


def test_the_app_settings_table_loads_with_its_defaults() -> None:
    # The defaults column of the README's [app] table, written into a config, gives the declared defaults.
    block = README[README.index("<!-- keys:app -->"):README.index("<!-- /keys -->", README.index("<!-- keys:app -->"))]
    rows = re.findall(r"^\| `(\w+)` \| `([^`]+)` \|", block, flags=re.MULTILINE)
    assert len(rows) == 5
    written = "[app]\n" + "".join(f"{k} = {v if v in ('true', 'false') else repr(v)}\n" for k, v in rows)
    sample = (REPO / "resources" / "configs" / "helpdesk.toml").read_text(encoding="utf-8")
    config = loader.parse(tomllib.loads(sample + "\n" + written), "README.md")
    assert (config.app.warn_before, config.app.check_every, config.app.retry_every) == (120, 15, 5)
    assert config.app.auto_extend is True and config.app.next_after_complete is True


def test_every_shortcut_is_in_the_readme() -> None:
    from workbench.gui import hotkeys

    section = README[README.index("## The operator window"):README.index("## A round trip by hand")]
    missing = [h.keys for h in hotkeys.HOTKEYS if h.action not in ("check", "queue", "quit") and h.keys not in section]
    assert missing == []
