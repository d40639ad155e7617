"""`summary`: a queue chooses the columns that tell its items apart in lists (Pick, resume, board)."""

from __future__ import annotations

import pytest

from tests import support
from workbench import demo
from workbench.core import errors


def _config(env: support.Env, summary: str) -> str:
    text = demo.config_text("{url}")
    old = next(line for line in text.splitlines() if line.startswith('summary = ["vendor"'))  # the demo's choice
    return text.replace(old, summary)


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_the_queue_chooses_its_summary_columns(native_env: support.Env) -> None:
    env = native_env
    wb = env.demo(case_rows=2, import_rows=3)
    chosen = env.open(env.load(_config(env, 'summary = ["invoice_no", "amount"]'))).queue("imports")
    assert [c.name for c in chosen.q.list_columns] == ["invoice_no", "amount"]
    rows = chosen.open_items()
    assert rows and all(list(row) == ["row_id", "invoice_no", "amount"] for row in rows)
    # Without the setting, up to three columns are chosen by name and type, as before.
    default = env.open(env.load(_config(env, ""))).queue("imports")
    assert len(default.q.list_columns) == 3 and "vendor" in [c.name for c in default.q.list_columns]
    assert [c.name for c in env.open(env.load(demo.config_text("{url}"))).queue("imports").q.list_columns] == [
        "vendor",
        "invoice_no",
        "amount",
    ]  # the demo's choice: every line of a batch shares its file
    del wb


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_an_unknown_summary_column_is_named(native_env: support.Env) -> None:
    env = native_env
    env.demo(case_rows=1, import_rows=1)
    with pytest.raises(errors.ConfigError) as caught:
        env.open(env.load(_config(env, 'summary = ["invoice_number"]'))).queue("imports")
    assert caught.value.key == "queues.imports.summary" and "invoice_number" in str(caught.value)
    with pytest.raises(errors.ConfigError, match="expected a list of column names"):
        env.load(_config(env, 'summary = "vendor"'))
