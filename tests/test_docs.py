"""The README's and the docs' promises: the two command lines first, a short README whose links
lead into docs/, configuration examples that really load, and reference pages that match the code."""

from __future__ import annotations

import importlib.util
import re
import tomllib
from pathlib import Path
from types import ModuleType

from workbench.config import loader, settings

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
README = (REPO / "README.md").read_text(encoding="utf-8")


def page(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def pages() -> dict[Path, str]:
    return {p: p.read_text(encoding="utf-8") for p in sorted(DOCS.rglob("*.md"))}


def hooks() -> ModuleType:
    """docs/hooks.py, which writes the generated parts of the site at every build."""
    spec = importlib.util.spec_from_file_location("docs_hooks", DOCS / "hooks.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_starts_with_the_two_command_lines() -> None:
    lines = README.splitlines()
    assert lines[0] == "```sh" and lines[3] == "```"
    demo, tests = lines[1], lines[2]
    assert "pip install" in demo and demo.endswith("workbench --demo")
    assert "pip install" in tests and "pytest" in tests and "[test]" in tests


def test_the_readme_is_short_and_its_links_lead_to_files() -> None:
    assert len(README.splitlines()) <= 250
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README)
    local = [link for link in links if not link.startswith(("http://", "https://"))]
    assert len(local) >= 20  # the tour and the documentation index point into docs/
    assert [link for link in local if not (REPO / link).exists()] == []
    linked = {(REPO / link).resolve() for link in local}
    nav = re.findall(r":\s+(\S+\.md)$", (REPO / "mkdocs.yml").read_text(encoding="utf-8"), flags=re.MULTILINE)
    # Every page of the site's navigation is one click from the README.
    assert sorted(n for n in nav if (DOCS / n).resolve() not in linked) == []


def test_every_toml_example_is_a_sample_config_that_loads() -> None:
    blocks = [b for text in pages().values() for b in re.findall(r"```toml\n(.*?)```", text, flags=re.DOTALL)]
    samples = {p.name: p.read_text(encoding="utf-8") for p in (REPO / "resources" / "configs").glob("*.toml")}
    assert len(blocks) == len(samples) >= 6  # every sample config is shown, and every shown one is a sample
    for block in blocks:
        assert block in samples.values(), block[:80]
        config = loader.parse(tomllib.loads(block), "docs")
        assert config.queues


def test_sample_configs_load() -> None:
    for path in (REPO / "resources" / "configs").glob("*.toml"):
        config = loader.load(path)
        assert all(q.outcomes and q.todo for q in config.queues.values()), path


def test_the_app_settings_table_loads_with_its_defaults() -> None:
    # The defaults column of the docs' [app] table, written into a config, gives the declared defaults.
    text = page("reference/config.md")
    block = text[text.index("<!-- keys:app -->") : text.index("<!-- /keys -->", text.index("<!-- keys:app -->"))]
    rows = re.findall(r"^\| `(\w+)` \| `([^`]+)` \|", block, flags=re.MULTILINE)
    # Every declared [app] key with a default has its row (one without, e.g. relay, says "none").
    assert len(rows) == len([s for s in settings.APP if s.default is not None])
    written = "[app]\n" + "".join(f"{k} = {v if v in ('true', 'false') else repr(v)}\n" for k, v in rows)
    sample = (REPO / "resources" / "configs" / "helpdesk.toml").read_text(encoding="utf-8")
    config = loader.parse(tomllib.loads(sample + "\n" + written), "docs/reference/config.md")
    assert (config.app.warn_before, config.app.check_every, config.app.retry_every) == (120, 15, 5)
    assert config.app.auto_extend is True and config.app.next_after_complete is True
    assert (config.app.counts_every, config.app.idle_after) == (30, 30)


def test_every_shortcut_is_on_the_operators_page() -> None:
    from workbench.gui import hotkeys

    section = page("use/operator.md")
    missing = [h.keys for h in hotkeys.HOTKEYS if h.action not in ("check", "queue", "quit") and h.keys not in section]
    assert missing == []


def test_the_command_synopsis_names_exactly_the_parsers_commands() -> None:
    # The hand-written overview at the top of the command line page, against the real parser
    # (the per-command reference below it is generated from the parser at build time).
    from workbench.cli import main

    text = page("reference/cli.md")
    synopsis = text[text.index("```\nworkbench [--config") :]
    synopsis = synopsis[4 : synopsis.index("```", 4)]
    written = set(re.findall(r"(?:^  |\s{2,}|\| )([a-z][a-z-]+)(?= |$)", synopsis, flags=re.MULTILINE))
    parsed = {name for name, _, _ in hooks()._subcommands(main.build_parser())}
    assert parsed - written == set(), "commands missing from the synopsis in docs/reference/cli.md"
    assert written - parsed <= {"list", "show", "add", "remove", "default", "test", "password", "grant", "revoke"}


def test_the_generated_references_cover_the_code() -> None:
    from workbench import api

    generated = hooks()
    reference = generated.api_reference()
    for name in api.__all__:
        assert f"api.{name}`" in reference, name
    assert "(no description)" not in reference, "a public method of workbench.api.Worker has no docstring"
    commands = generated.cli_reference()
    assert "### `workbench next`" in commands and "#### `workbench profile add`" in commands
    # The administrator's people commands (issue 50), each argument explained.
    people = commands[commands.index("### `workbench people`") :]
    people = people.split("\n### ")[0]  # up to the next command
    for action in ("add", "list", "remove", "sessions"):
        assert f"#### `workbench people {action}`" in people, action
    assert "|  |" not in people and "| (one of" not in people, people
    # Every argument of every command says what it is (an empty cell, or only its choices, is a gap).
    empty = [line for line in commands.splitlines() if line.endswith("|  |") or "| (one of" in line]
    assert empty == [], empty
    for marker in (generated.MARK_CLI, generated.MARK_API):
        # On a line of its own in exactly one page (other pages may mention it in a code span).
        assert sum(f"\n{marker}\n" in text for text in pages().values()) == 1, marker
    rendered = generated.render(page("reference/cli.md"))
    assert generated.MARK_CLI not in rendered and "`--where COL=VALUE`" in rendered
