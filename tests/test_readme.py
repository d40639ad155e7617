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
    assert "workbench demo" in demo and "next cases" in demo and "complete cases" in demo
    assert "pip install" in tests and "pytest" in tests and "[test]" in tests


def test_every_toml_example_is_a_sample_config_that_loads() -> None:
    blocks = re.findall(r"```toml\n(.*?)```", README, flags=re.S)
    samples = {p.name: p.read_text(encoding="utf-8") for p in (REPO / "resources" / "configs").glob("*.toml")}
    assert len(blocks) == len(samples) == 4
    for block in blocks:
        assert block in samples.values(), block[:80]
        config = loader.parse(tomllib.loads(block), "README.md")
        assert config.queues


def test_sample_configs_load(tmp_path: Path) -> None:
    for path in (REPO / "resources" / "configs").glob("*.toml"):
        config = loader.load(path)
        assert all(q.outcomes and q.todo for q in config.queues.values()), path
