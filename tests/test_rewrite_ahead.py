"""`pytest -n 2` in a clean tree: the controller rewrites the test modules once, the workers read what it wrote."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import test_tiers
from tests.helpers import rewrite_ahead

CONFTEST = """\
import pytest

from tests.helpers import rewrite_ahead


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session):
    rewrite_ahead.before_workers(session)
"""
# Each import of a module notes who imported it and which file of rewritten code it came from (pytest
# replaces that file by a rename: a worker that rewrote the module again leaves a file of its own).
MODULE = """\
import os
import pytest
from pathlib import Path
from tests.helpers import rewrite_ahead

cached = rewrite_ahead.cached(Path(__file__))
with open(Path(__file__).parent / "imports.log", "a") as log:
    log.write(f"{__name__} {os.environ.get('PYTEST_XDIST_WORKER', 'controller')} {cached.stat().st_ino}\\n")
"""


def test_the_workers_read_the_rewrites_the_controller_made_before_they_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    probe = tmp_path / "probe"
    probe.mkdir()
    (probe / "__init__.py").write_text("")
    (probe / "conftest.py").write_text(CONFTEST)
    for name in ("a", "b", "c"):
        test = f"\n\ndef test_{name}():\n    assert {name!r} * 2 == {name * 2!r}\n"
        (probe / f"test_{name}.py").write_text(MODULE + test)
    (probe / "test_skipped.py").write_text('import pytest\n\npytest.skip("not here", allow_module_level=True)\n')
    modules = sorted(probe.glob("test_*.py"))
    assert rewrite_ahead.stale([probe], ["test_*.py"]) == [probe / "conftest.py", *modules]

    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)  # the run writes what it rewrites
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # this run's worker is not the inner run's
    plugins = [f"-pno:{name}" for name in ("faulthandler", "pytest-qt", "hypothesispytest")]
    run = test_tiers._pytest(*plugins, "-q", "-n", "2", "probe", cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "3 passed, 1 skipped" in run.stdout, run.stdout

    imports = [line.split() for line in (probe / "imports.log").read_text().splitlines()]
    for name in ("probe.test_a", "probe.test_b", "probe.test_c"):
        by = [(who, inode) for module, who, inode in imports if module == name]
        # First in a child of the controller, then once in each worker, each reading the child's rewrite.
        assert by[0][0] == "controller" and sorted(who for who, _ in by[1:]) == ["gw0", "gw1"], imports
        assert len({inode for _, inode in by}) == 1, imports
    assert rewrite_ahead.stale([probe], ["test_*.py"]) == []  # the next run forks nothing
