"""Release reasons from the config: offered in order, and a reason may write values (e.g. "Needs level 2")."""

from __future__ import annotations

import tomllib
from typing import Any

import pytest

from tests import support
from workbench import demo
from workbench.config import loader, model
from workbench.core import errors
from workbench.db.supervision import Supervision

REASONS = """
[queues.cases.release_reasons]
"Not my area" = {}
"Needs a specialist" = { category = "Hardware" }
"""


def _config(env: support.Env, extra: str = REASONS) -> model.Config:
    return env.load(demo.config_text("{url}") + extra)


def test_a_configured_reason_writes_its_values_with_the_release(native_env: support.Env) -> None:
    wb = native_env.open(_config(native_env))
    demo.populate(wb.engine, cases=6, imports=1)
    wb.init()
    demo.attach_all(wb)
    q = wb.queue("cases")
    assert [r.label for r in wb.config.queues["cases"].release_reasons] == ["Not my area", "Needs a specialist"]
    assert "category" not in {c.name for c in q.q.editable}  # the workflow writes it now
    first, second, third = (q.claim_next("alice")[0].lock for _ in range(3))
    before = {lock.key: native_env.row(wb, "cases", lock.key)["category"] for lock in (first, second, third)}
    q.release("alice", first.key, first.token, "Needs a specialist")
    q.release("alice", second.key, second.token, "Not my area")
    q.release("alice", third.key, third.token, "my own words")
    rows = {lock.key: native_env.row(wb, "cases", lock.key) for lock in (first, second, third)}
    assert rows[first.key]["category"] == "Hardware" and rows[first.key]["wb_locked_by"] is None
    assert rows[second.key]["category"] == before[second.key]
    assert rows[third.key]["category"] == before[third.key]
    assert q.history(first.key)[-1].reason == "Needs a specialist"
    # A lost lock writes nothing, reason or not.
    again = q.claim("bob", second.key).lock
    Supervision(q).force_release("sue", second.key, "needed now")
    with pytest.raises(errors.LockLost):
        q.release("bob", again.key, again.token, "Needs a specialist")
    assert native_env.row(wb, "cases", second.key)["category"] == before[second.key]


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)  # the config check is the same everywhere
@pytest.mark.parametrize(
    "extra, message",
    [
        ('[queues.cases.release_reasons]\n" padded " = {}\n', "without leading or trailing blanks"),
        ('[queues.cases.release_reasons]\n"x" = { wb_locked_by = "a" }\n', "managed by workbench"),
        (
            '[queues.cases.on_release]\nstatus = "open"\n\n[queues.cases.release_reasons]\n"x" = { status = "new" }\n',
            "on_release already sets 'status'",
        ),
        ('[queues.cases.release_reasons]\n"x" = { nosuch = 1 }\n', "nosuch"),
    ],
)
def test_bad_reasons_are_refused_with_what_to_fix(native_env: Any, extra: str, message: str) -> None:
    def check() -> None:
        wb = native_env.open(_config(native_env, extra))
        demo.populate(wb.engine, cases=1, imports=1)
        wb.validate()

    with pytest.raises(errors.ConfigError, match=message):
        check()


def test_reasons_keep_the_files_order() -> None:
    text = demo.config_text("sqlite:///x.db") + REASONS.replace('"Not my area"', '"Zeta"')
    config = loader.parse(tomllib.loads(text), "x.toml")
    assert [r.label for r in config.queues["cases"].release_reasons] == ["Zeta", "Needs a specialist"]
