"""Every config key is declared once: the loader, the model, the window and the docs follow it."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from typing import Any

import pytest

from workbench.config import loader, model, settings
from workbench.core import durations, errors

ROOT = Path(__file__).resolve().parent.parent

MINIMAL = {
    "database": {"url": "sqlite:///x.db"},
    "queues": {
        "q": {"table": "t", "key": "id", "todo": {"status": "open"}, "outcomes": {"done": {"set": {"status": "done"}}}}
    },
}

# Where a scalar key's value lands in the model, when the attribute is named otherwise.
_QUEUE_ATTRIBUTES = {
    "lock_duration": "lock_seconds",
    "max_lock_duration": "max_lock_seconds",
    "release_cooldown": "release_cooldown_seconds",
    "defer_owner_first": "defer_owner_first_seconds",
    "undo_within": "undo_within_seconds",
}


def parse(data: dict[str, Any]) -> model.Config:
    return loader.parse(data, "cfg.toml")


def with_key(section: str, name: str, value: Any) -> dict[str, Any]:
    data = copy.deepcopy(MINIMAL)
    if section == "queue":
        data["queues"]["q"][name] = value
    else:
        data.setdefault(section, {})[name] = value
    return data


def test_the_docs_key_tables_are_written_from_the_declarations() -> None:
    # The site writes them anew at every build (docs/hooks.py); the page's own copy, which GitHub
    # shows, must say the same.
    page = (ROOT / "docs" / "reference" / "config.md").read_text(encoding="utf-8")
    for name in settings.SECTIONS:
        assert f"<!-- keys:{name} -->" in page, f"docs/reference/config.md has no key table for {name}"
    assert settings.render_key_tables(page) == page, (
        "the key tables in docs/reference/config.md differ from workbench/config/settings.py: "
        "run python -m workbench.config.settings docs/reference/config.md"
    )


def test_the_loader_accepts_exactly_the_declared_keys() -> None:
    for section, declared in (("database", settings.DATABASE), ("app", settings.APP), ("queue", settings.QUEUE)):
        with pytest.raises(errors.ConfigError, match="unknown key"):
            parse(with_key(section, "no_such_key", 1))
        assert {s.name for s in declared} == set(getattr(loader, f"_{section.upper()}_KEYS"))


@pytest.mark.parametrize("setting", list(settings.APP), ids=lambda s: s.name)
def test_app_defaults_come_from_the_declaration(setting: settings.Setting) -> None:
    assert getattr(parse(MINIMAL).app, setting.name) == setting.default
    assert getattr(model.AppConfig(), setting.name) == setting.default


@pytest.mark.parametrize("setting", [s for s in settings.DATABASE if not s.required], ids=lambda s: s.name)
def test_database_defaults_come_from_the_declaration(setting: settings.Setting) -> None:
    assert getattr(parse(MINIMAL).database, setting.name) == setting.default


@pytest.mark.parametrize(
    "setting",
    [s for s in settings.QUEUE if s.kind in settings.SCALAR_KINDS and not s.required and s.name != "title"],
    ids=lambda s: s.name,
)
def test_queue_defaults_come_from_the_declaration(setting: settings.Setting) -> None:
    queue = parse(MINIMAL).queue("q")
    attribute = _QUEUE_ATTRIBUTES.get(setting.name, setting.name)
    assert getattr(queue, attribute) == setting.default
    # A QueueConfig built without the loader (the API, tests) has the same default, not a copy of it.
    field = {f.name: f for f in dataclasses.fields(model.QueueConfig)}[attribute]
    if field.default is not dataclasses.MISSING:
        assert field.default == setting.default


def _durations() -> list[tuple[str, settings.Setting]]:
    return [
        (section, s)
        for section, declared in (("app", settings.APP), ("queue", settings.QUEUE))
        for s in declared
        if s.kind == "duration"
    ]


@pytest.mark.parametrize(("section", "setting"), _durations(), ids=lambda v: getattr(v, "name", v))
def test_durations_keep_their_declared_bounds(section: str, setting: settings.Setting) -> None:
    assert setting.maximum, f"{setting.name} declares no upper bound"
    key = f"queues.q.{setting.name}" if section == "queue" else f"app.{setting.name}"
    with pytest.raises(errors.ConfigError, match="must be at most") as too_long:
        parse(with_key(section, setting.name, setting.maximum + 1))
    assert too_long.value.key == key
    longest = parse(with_key(section, setting.name, durations.format_setting(setting.maximum)))
    value = (
        getattr(longest.app, setting.name)
        if section == "app"
        else getattr(longest.queue("q"), _QUEUE_ATTRIBUTES[setting.name])
    )
    assert value == setting.maximum
    if setting.minimum:
        with pytest.raises(errors.ConfigError, match=f"at least {setting.minimum}"):
            parse(with_key(section, setting.name, setting.minimum - 1))


def test_choices_are_checked_against_the_declaration() -> None:
    with pytest.raises(errors.ConfigError, match="must be one of auto, skip-locked") as info:
        parse(with_key("database", "claim_method", "fastest"))
    assert info.value.key == "database.claim_method"


def test_durations_are_written_as_a_config_reads_them() -> None:
    for seconds in (0, 1, 59, 60, 90, 300, 1800, 5400, 86400, 7 * 86400, 90061):
        assert durations.parse_duration(durations.format_setting(seconds)) == seconds
    assert durations.format_setting(5400) == "1h30m"


def test_the_window_starts_from_the_declared_defaults() -> None:
    pytest.importorskip("PySide6")
    from workbench.gui import session

    window = session.SessionSettings()
    app = dataclasses.asdict(model.AppConfig())
    assert window == session.SessionSettings.from_config(model.AppConfig())
    assert (window.check_interval, window.warn_before, window.retry_interval) == (
        app["check_every"],
        app["warn_before"],
        app["retry_every"],
    )
