"""Refusals say the rule they enforce (issue 47, hole 8), through the command line: its exit code and message."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests import support
from tests.helpers import workflow_bench as wbench
from tests.test_permissions import Pg, pg  # noqa: F401  # the PostgreSQL database under `workbench grants`
from workbench.core import errors, models
from workbench.db import guarded

_cli = support.run_cli


def test_an_operators_reopen_or_move_under_grants_says_only_supervisors_may(
    pg: Pg,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The database refused them with its generic "may not make this change": they say who may."""
    ann, bob = pg.config_file("ann"), pg.config_file("bob")
    code, claim, _ = _cli(capsys, "--config", ann, "--user", "ann", "--json", "next", "cases")
    assert code == 0
    key = str(claim["key"])
    code, _, err = _cli(
        capsys,
        "--config",
        ann,
        "--user",
        "ann",
        "complete",
        "cases",
        key,
        "--token",
        claim["token"],
        "--outcome",
        "resolved",
    )
    assert code == 0, err
    code, _, err = _cli(capsys, "--config", bob, "--user", "bob", "reopen", "cases", key, "--reason", "x")
    assert code == 1 and f"bob may not reopen cases {key}" in err and "workbench_supervisor" in err, err
    assert "may not make this change" not in err
    waiting = str(pg.admin.queue("cases").open_items(1)[0]["case_id"])
    code, _, err = _cli(
        capsys, "--config", bob, "--user", "bob", "move", "cases", waiting, "--set", "priority=1", "--reason", "x"
    )
    assert code == 1 and "bob may not move items of cases" in err and "workbench_supervisor" in err, err
    assert "may not make this change" not in err


@pytest.mark.parametrize("shape", wbench.SHAPES)
def test_a_pick_of_an_item_held_through_the_twin_queue_says_who_holds_it_and_where(
    shape: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`claim twin K` of an item ann holds through `main`: it said "not waiting … (state: waiting)" where
    the locks are kept per queue (a lock table); it says who holds it and through which queue."""
    bench = wbench.open_bench("sqlite", shape, False, tmp_path, None)
    try:
        key = bench.fresh()
        bench.operator("ann").claim("main", key)
        config = tmp_path / "matrix.toml"
        code, _, err = _cli(capsys, "--config", config, "--user", "bob", "claim", "twin", str(key))
        assert code == 3 and f"twin {key} is held by ann" in err, err
        assert "through queue main" in err and "not waiting" not in err, err
    finally:
        bench.close()


def test_a_complete_sent_to_review_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The demo's imports send a clerk's first verified lines to review: "completed … as verified" said the
    line was verified; it waits for someone else's verdict in imports_review."""
    env = support.Env("sqlite", "native", f"sqlite:///{tmp_path / 'demo.db'}", tmp_path)
    try:
        env.demo(case_rows=1, import_rows=20)
        config = env.demo_config_file()
        code, claim, _ = _cli(capsys, "--config", config, "--user", "ann", "--json", "next", "imports")
        assert code == 0
        key, token = str(claim["key"]), claim["token"]
        args = ("complete", "imports", key, "--token", token, "--outcome", "verified")
        code, out, err = _cli(capsys, "--config", config, "--user", "ann", *args)
        assert code == 0, err
        assert out.strip() == f"completed imports {key}: sent to review in imports_review (four eyes)", out
        code, data, _ = _cli(capsys, "--config", config, "--user", "ann", "--json", *args)  # the retry says it too
        assert code == 0 and data["replayed"] and data["review"] == "imports_review", data
        # A Complete not chosen for review says its outcome, as before.
        code, claim, err = _cli(capsys, "--config", config, "--user", "ann", "--json", "next", "imports")
        assert code == 0, (claim, err)
        args = ("complete", "imports", str(claim["key"]), "--token", claim["token"], "--outcome", "rejected")
        code, out, _ = _cli(capsys, "--config", config, "--user", "ann", *args)
        assert code == 0 and out.strip() == f"completed imports {claim['key']} as rejected", out
    finally:
        env.close()


def test_a_defer_after_its_lock_ran_out_says_the_lock_was_lost(
    pg: Pg,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Under grants the database refused the deferral of an item whose lock had run out as "not permitted"
    (exit 1): the lock was lost (exit 4), as everywhere else."""
    ann = pg.config_file("ann")
    code, claim, _ = _cli(capsys, "--config", ann, "--user", "ann", "--json", "next", "cases")
    assert code == 0
    key = str(claim["key"])
    pg.env.age_lock(pg.admin, "cases", claim["key"], 16 * 60)  # 15 minutes' lock, run out a minute ago
    args = (
        "defer",
        "cases",
        key,
        "--token",
        claim["token"],
        "--until",
        "3d",
        "--reason",
        "customer away",
    )
    code, data, err = _cli(capsys, "--config", ann, "--user", "ann", "--json", *args)
    assert code == 4 and data["error"]["type"] == "LockLost", (data, err)
    assert "expired" in data["error"]["message"], data
    assert pg.env.row(pg.admin, "cases", claim["key"])["wb_locked_by"] == "ann"  # nothing written


def test_a_defer_the_database_refuses_as_its_lock_runs_out_says_the_lock_was_lost(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race seen under grants: the fence passed, the lock ran out, and the database's own check
    refused the defer, said as "not permitted" (exit 1). The lock is what was lost (exit 4). The race is
    forced here: the lock runs out and the database's refusal (as dberrors words it) comes from the write."""
    env = support.Env("sqlite", "native", f"sqlite:///{tmp_path / 'demo.db'}", tmp_path)
    try:
        wb = env.demo(case_rows=3, import_rows=1)
        config = env.demo_config_file()
        code, claim, _ = _cli(capsys, "--config", config, "--user", "ann", "--json", "next", "cases")
        assert code == 0
        key = claim["key"]
        run = guarded.GuardedWriter.run

        def racing(self: guarded.GuardedWriter, shape: guarded.Shape, **kw: Any) -> Any:
            if shape.kind is models.EventKind.DEFER:
                env.age_lock(wb, "cases", key, 16 * 60)  # ran out meanwhile
                raise errors.NotPermitted(
                    f"the database did not permit this: ann may not make this change to cases item {key}"
                )
            return run(self, shape, **kw)

        monkeypatch.setattr(guarded.GuardedWriter, "run", racing)
        args = ("defer", "cases", key, "--token", claim["token"], "--until", "3d", "--reason", "customer away")
        code, data, err = _cli(capsys, "--config", config, "--user", "ann", "--json", *args)
        assert code == 4 and data["error"]["type"] == "LockLost", (data, err)
        assert f"your lock on cases {key} expired" in data["error"]["message"], data
        # A refusal while the lock is still the caller's is the database's to say, unchanged.
        code, claim, _ = _cli(capsys, "--config", config, "--user", "ann", "--json", "next", "cases")

        def refusing(self: guarded.GuardedWriter, shape: guarded.Shape, **kw: Any) -> Any:
            raise errors.NotPermitted("the database did not permit this: queue cases needs a note")

        monkeypatch.setattr(guarded.GuardedWriter, "run", refusing)
        args = ("defer", "cases", claim["key"], "--token", claim["token"], "--until", "3d", "--reason", "away")
        code, data, err = _cli(capsys, "--config", config, "--user", "ann", "--json", *args)
        assert code == 1 and data["error"]["type"] == "NotPermitted" and "needs a note" in data["error"]["message"]
    finally:
        env.close()
