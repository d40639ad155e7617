"""The fast tier, `pytest -m "not servers"`: tests/conftest.py marks every test that needs a database
server, and a test without the marker that starts one fails instead of quietly slowing the tier."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import servers

REPO = Path(__file__).resolve().parents[1]


def _pytest(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return _finished(_started(*args, cwd=cwd))


def _started(*args: str, cwd: Path = REPO) -> subprocess.Popen[str]:
    """`pytest ARGS` begun in a process of its own (two of them run side by side: each mostly imports)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for name in ("WORKBENCH_REQUIRE_SERVERS", "PYTEST_ADDOPTS"):  # this run's options are not the inner one's
        env.pop(name, None)
    return subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finished(process: subprocess.Popen[str]) -> subprocess.CompletedProcess[str]:
    try:
        out, err = process.communicate(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def test_the_fast_tier_collects_no_test_that_needs_a_server() -> None:
    files = [
        "tests/test_probe.py",  # pg_server / mariadb_server, and two that ask for one by name
        "tests/test_backlog.py",  # parametrized over `backend`
        "tests/contract/test_no_takeover.py",  # `backend` among other parameters
        "tests/contract/test_attach.py",  # the `backend` fixture's own params, through `env`
        "tests/test_failover.py",
        "tests/test_galera.py",
        "tests/gui/test_patroni.py",
    ]  # they start servers themselves
    both = [_started("--collect-only", "-q", "-m", tier, *files) for tier in ("not servers", "servers")]
    fast, slow = (_finished(process).stdout.splitlines() for process in both)
    fast_ids = {line for line in fast if "::" in line}
    slow_ids = {line for line in slow if "::" in line}
    assert fast_ids and slow_ids and not fast_ids & slow_ids

    def fast(file: str, part: str) -> list[str]:
        return [i for i in fast_ids if i.startswith(file + "::") and part in i]

    for file in files[1:4]:  # parametrized over the backend: only SQLite stays
        assert fast(file, "[sqlite") or fast(file, "-sqlite"), file
        assert not fast(file, "postgresql") and not fast(file, "mariadb"), file
    for name in (
        "test_missing_database",
        "test_existing_database_connects",
        "test_right_password",
        "test_mariadb_user_without_grant",
    ):
        assert not fast(files[0], name), name
    assert fast(files[0], "test_closed_port_is_unreachable[postgresql]")  # a closed port: no server
    assert fast(files[0], "test_sqlite_good_file")
    for file in files[4:]:
        assert not fast(file, ""), file
        assert [i for i in slow_ids if i.startswith(file + "::")], file


def test_an_unmarked_test_that_starts_a_server_fails(tmp_path: Path) -> None:
    test = tmp_path / "test_unmarked.py"
    test.write_text(
        "import pytest\n\n\ndef test_asks_for_a_server(request: pytest.FixtureRequest) -> None:\n"
        "    request.getfixturevalue('pg_server')  # unseen when the tests are collected\n"
    )
    run = _pytest("-q", "-p", "tests.conftest", str(test), cwd=tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "RuntimeError: PostgreSQL: " in run.stdout
    assert "test_asks_for_a_server has no `servers` marker but starts a server" in run.stdout


def test_xdist_workers_never_share_a_free_port(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under `pytest -n 2` each worker starts its own servers on ports from servers.free_port: the two
    workers' ports are disjoint, so one cannot start a server on the port the other was just given."""
    given: dict[int, set[int]] = {}
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "2")
    for worker in (0, 1):
        monkeypatch.setenv("PYTEST_XDIST_WORKER", f"gw{worker}")
        given[worker] = {servers.free_port() for _ in range(40)}
    assert all(len(ports) > 10 for ports in given.values())
    assert {(p // 2) % 2 for p in given[0]} == {0} and {(p // 2) % 2 for p in given[1]} == {1}


def test_each_workflow_bench_stays_on_one_xdist_worker() -> None:
    """`--dist loadgroup` (pyproject's addopts) sends a group's tests to one worker in order: every case of
    the workflow matrix is in its bench's group, so each worker builds a bench once, not case by case;
    every other test is a group of its own."""
    from tests.contract import test_workflow_matrix as matrix
    from tests.scheduling import MATRIX, xdist_group

    params = list(matrix._params())
    assert len(params) > 1000
    for param in params:
        assert xdist_group(f"{MATRIX}{param.id}]") == f"workflow-bench:{param.values[0]}", param.id
    assert len({xdist_group(f"{MATRIX}{p.id}]") for p in params}) == len(matrix.BENCHES)
    for other in ("tests/test_cli.py::test_version", "tests/contract/test_attach.py::test_attach[postgresql]"):
        assert xdist_group(other) == other
    # The admission tests of one family share it (built once per module): two groups of three.
    admission = [
        f"tests/test_admission.py::{name}"
        for name in (
            "test_the_database_admits_what_the_table_admits_on_a_lock_table",
            "test_the_database_admits_what_the_table_admits_on_row_locks",
            *(
                f"{test}[{family}]"
                for test in ("test_each_known_gap_is_still_reachable", "test_named_sequences")
                for family in ("family", "tickets")
            ),
        )
    ]
    assert sorted(xdist_group(n) for n in admission) == ["admission:family"] * 3 + ["admission:tickets"] * 3
    assert "--dist loadgroup" in (REPO / "pyproject.toml").read_text(encoding="utf-8")
