"""Never two holders: twelve processes claim from a few rows whose one-second locks expire all the time,
and no claim takes over a lock another claimer has just taken (every save soon after its claim holds).

The narrow window: a claimer finds a row with an expired lock in its snapshot; before it locks the row,
another claimer takes the same expired lock and commits. PostgreSQL then re-checks the row's new
version against the statement's conditions; a condition that is not on the row itself (the keys of an
index search made with the old snapshot) passes again, and the second claimer wrote over a lock a
millisecond old.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from tests import support
from tests.conftest import POOLED
from tests.helpers import forked
from tests.test_permissions import OPERATORS, Pg, pg  # noqa: F401  (the fixture: a demo database under `grants`)
from workbench import demo
from workbench.db import pg_grants

PROCESSES = 12
ROWS = 30
SECONDS = 6.0
# A save this soon after its claim must find its lock: the lock lasts a second.
SOON = 0.5
# Each worker claims at least this often, however slow the machine: together past the 100 the check wants.
MIN_SAVES = 10
REPO = Path(__file__).resolve().parents[2]


def _config_text(url: str, claim_method: str = "auto") -> str:
    text = demo.config_text(url).replace("max_locks_per_user = 3", "max_locks_per_user = 0")
    text = text.replace('lock_duration = "15m"', 'lock_duration = "1s"', 1)
    assert 'lock_duration = "1s"' in text
    return text.replace("[database]\n", f'[database]\nclaim_method = "{claim_method}"\n', 1)


def _waiting_rows(engine: sa.Engine) -> None:
    """ROWS cases waiting, the rest finished: the claimers meet on a few rows, as at a queue's head."""
    with engine.begin() as conn:
        conn.execute(
            sa.text(
                "UPDATE cases SET status = CASE WHEN case_id <= :n THEN 'new' ELSE 'resolved' END, "
                "wb_locked_by = NULL, wb_locked_at = NULL, wb_lock_expires = NULL, wb_lock_token = NULL"
            ),
            {"n": ROWS},
        )


def _run(
    tmp: Path,
    configs: list[Path],
    users: list[str],
    count: int = 1,
    queues: list[str] | None = None,
    extra: tuple[str, ...] = (),
    enough: Callable[[list[dict]], bool] | None = None,
) -> list[dict]:
    """Run the takeover workers, one per config and user (in `queues`, or `cases`), `extra` their further
    options, all starting at once; their results. Once `enough` holds for the saves so far (as the results
    are shaped), each worker stops as soon as it has its MIN_SAVES; at the latest after SECONDS, as without."""
    go, stop = tmp / "go", tmp / "stop"
    procs = []
    for i, (config, user) in enumerate(zip(configs, users, strict=True)):
        out, ready = tmp / f"taker{i}.json", tmp / f"taker{i}.ready"
        if enough is not None:
            extra_here = (*extra, "--progress", str(out.with_suffix(".lines")), "--stop", str(stop))
        else:
            extra_here = extra
        cmd = [
            sys.executable,
            "-m",
            "tests.helpers.takeover_worker",
            "--config",
            str(config),
            "--queue",
            queues[i] if queues else "cases",
            "--user",
            user,
            "--out",
            str(out),
            "--go",
            str(go),
            "--ready",
            str(ready),
            "--seconds",
            str(SECONDS),
            "--count",
            str(count),
            "--min-saves",
            str(MIN_SAVES),
            *extra_here,
        ]
        procs.append(
            (
                forked.Popen(cmd, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}),
                out,
                ready,
            )
        )
    deadline = time.monotonic() + 180
    while not all(ready.exists() or proc.poll() is not None for proc, _, ready in procs):
        assert time.monotonic() < deadline, "waited 180 s for the workers to connect"
        time.sleep(0.1)
    go.write_text("go")
    if enough is not None:
        _stop_when(enough, [out.with_suffix(".lines") for _, out, _ in procs], [proc for proc, _, _ in procs], stop)
    results = []
    for proc, out, _ in procs:
        _, stderr = proc.communicate(timeout=300)
        assert out.exists(), f"worker died: {stderr[-3000:]}"
        data = json.loads(out.read_text())
        assert not data["failures"], data["failures"][0]
        results.append(data)
    return results


def _stop_when(enough: Callable[[list[dict]], bool], lines: list[Path], procs: list[Any], stop: Path) -> None:
    """Write `stop` once `enough` holds for the saves so far (read from the workers' progress `lines`), or
    return when the workers have ended by themselves."""
    saves: list[list[dict]] = [[] for _ in lines]
    read = [0] * len(lines)
    while any(proc.poll() is None for proc in procs):
        time.sleep(0.1)
        for i, path in enumerate(lines):
            if path.exists():
                text = path.read_text(encoding="utf-8")[read[i] :]
                complete = text[: text.rfind("\n") + 1]  # a line still being written waits for the next look
                read[i] += len(complete)
                saves[i] += [json.loads(line) for line in complete.splitlines()]
        if enough([{"saves": s, "failures": []} for s in saves]):
            stop.write_text("stop")
            return


def _holds(check: Callable[[list[dict]], None]) -> Callable[[list[dict]], bool]:
    """`check` (assertions on the results) as a question: do the results so far pass it already?"""

    def holds(results: list[dict]) -> bool:
        try:
            check(results)
        except AssertionError:
            return False
        return True

    return holds


def _check(results: list[dict]) -> None:
    saves = [s for r in results for s in r["saves"]]
    soon = [s for s in saves if s["after"] < SOON]
    taken = [s for s in soon if not s["ok"]]
    # The test exercised the window: many claims, and many of them of expired locks.
    assert len(saves) >= 100, f"only {len(saves)} claims in {SECONDS} s: the test did not contend"
    keys = {s["key"] for s in saves}
    # Only the waiting rows, and most of them: the claimers met at the queue's head (on a loaded machine
    # one row may stay with a claimer whose turns came late, so not every row is required).
    assert ROWS * 2 // 3 <= len(keys) <= ROWS, sorted(keys)
    assert soon, f"none of {len(saves)} saves came within {SOON} s of its claim's start: nothing was checked"
    assert not taken, (
        f"{len(taken)} of {len(soon)} claims lost their lock within {SOON} s: {taken[0]['key']}: {taken[0]['why']}"
    )


def _expired_claims(engine: sa.Engine) -> int:
    with engine.connect() as conn:
        return int(
            conn.execute(
                sa.text("SELECT count(*) FROM workbench_audit WHERE queue = 'cases' AND event = 'expire'")
            ).scalar()
            or 0
        )


@pytest.mark.slow
@pytest.mark.parametrize(
    "backend, claim_method, count",
    [
        ("postgresql", "auto", 1),  # Next item: the claim function of the connection (pg_function.py)
        ("postgresql", "auto", 2),  # several at once: the one statement (claims/postgresql.py)
        ("postgresql", "select-skip-locked", 1),
        ("postgresql", "portable", 1),
        (POOLED, "auto", 1),
        (POOLED, "auto", 2),
        ("mariadb", "auto", 1),
        ("sqlite", "auto", 1),
    ],
)
def test_no_claim_takes_over_a_live_lock(native_env: support.Env, claim_method: str, count: int) -> None:
    env = native_env
    wb = env.demo(case_rows=ROWS + 10, import_rows=1)
    _waiting_rows(wb.engine)
    config = env.write_config(_config_text("{url}", claim_method), "takers.toml")
    results = _run(env.tmp, [config] * PROCESSES, [f"t{i}" for i in range(PROCESSES)], count, enough=_done(wb.engine))
    _check(results)
    assert _expired_claims(wb.engine) >= ROWS, "the locks did not expire under the claimers"


def _done(engine: sa.Engine) -> Callable[[list[dict]], bool]:
    """The run has what the test checks: _check passes, and ROWS expired locks were claimed."""
    checked = _holds(_check)
    return lambda results: checked(results) and _expired_claims(engine) >= ROWS


@pytest.mark.slow
def test_no_claim_through_the_databases_own_function_takes_over_a_live_lock(pg: Pg) -> None:
    """Under `workbench grants` each operator login claims through wb_cases_next(), as the table's owner."""
    owner = pg.open(pg.server.user, _config_text("{url}"))
    with owner.engine.begin() as conn:  # the owner applies grants again for one-second locks
        pg_grants.apply(conn, pg_grants.plan(conn, owner.queue("cases").q, None))
    with pg.admin.engine.begin() as conn:  # the fixture's demo has fewer cases
        conn.execute(
            sa.text(
                "INSERT INTO cases (case_id, opened_at, customer, subject, category, priority, status) "
                "SELECT 1000 + i, timezone('UTC', now()), 'c', 's', 'Email', 2, 'new' "
                "FROM generate_series(1, :n) AS i"
            ),
            {"n": ROWS},
        )
        conn.execute(sa.text("UPDATE cases SET status = 'resolved' WHERE case_id < 1000"))
    configs, users = [], []
    for i in range(PROCESSES):
        login = OPERATORS[i % len(OPERATORS)]
        config = pg.tmp / f"taker{i}.toml"
        config.write_text(_config_text(pg.url_as(login)), encoding="utf-8")
        configs.append(config)
        users.append(login)
    _check(_run(pg.tmp, configs, users, enough=_done(pg.admin.engine)))
    assert _expired_claims(pg.admin.engine) >= ROWS
