"""The claim self-check: two real connections race for one row; exactly one may win."""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa

from tests import support
from workbench.cli import main as cli
from workbench.db import racecheck


def test_two_connections_racing_for_one_row_have_one_winner(native_env: support.Env) -> None:
    wb = native_env.demo(case_rows=3, import_rows=1)
    result = racecheck.check(wb)
    assert result.ok is True, result.message
    assert "one won" in result.message
    assert wb.queue("cases").locks() == []  # nothing was written: both transactions were rolled back


def test_a_server_that_ignores_row_locks_is_caught(native_env: support.Env) -> None:
    wb = native_env.demo(case_rows=3, import_rows=1)
    q = wb.queue("cases").q
    result = racecheck.race(wb.engine, q.table, q.key, 1, lock=False)  # what a lock-ignoring server does
    assert result.ok is False and "NOT exclusive" in result.message


def test_no_row_to_race_for_is_reported_not_failed(native_env: support.Env) -> None:
    wb = native_env.demo(case_rows=1, import_rows=1)
    with wb.engine.begin() as conn:
        for name in wb.config.queues:
            conn.execute(sa.delete(wb.queue(name).q.table))
    result = racecheck.check(wb)
    assert result.ok is None and "no queue table has a row" in result.message


@pytest.mark.parametrize("backend", ["sqlite"])
def test_self_test_with_a_config_runs_the_claim_check(
    native_env: support.Env, capsys: pytest.CaptureFixture[str]
) -> None:
    native_env.demo(case_rows=3, import_rows=1)
    config = native_env.demo_config_file()
    code = cli.main(["--config", str(config), "--self-test", "--json"])
    report = json.loads(capsys.readouterr().out)
    check = next(c for c in report["checks"] if c["name"] == "claim race")
    assert check["ok"] and "one won" in check["detail"], check
    assert code == 0


@pytest.mark.parametrize("backend", ["sqlite"])
def test_profile_test_runs_the_claim_check(native_env: support.Env, capsys: pytest.CaptureFixture[str]) -> None:
    native_env.demo(case_rows=3, import_rows=1)
    config = native_env.demo_config_file()
    database = native_env.url.removeprefix("sqlite:///")
    assert cli.main(["profile", "add", "demo", "--kind", "sqlite", "--path", database, "--queues", str(config)]) == 0
    capsys.readouterr()
    assert cli.main(["profile", "test", "demo", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] and report["claim_check"]["ok"] is True, report
