"""`workbench --self-test`: every check runs and passes here, and a failing check fails the run."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest

from workbench import selftest

CHECKS = {
    "python",
    "driver SQLite",
    "driver PostgreSQL",
    "driver MariaDB/MySQL",
    "driver MariaDB/MySQL ODBC",
    "driver SQL Server",
    "odbc drivers",
    "password store",
    "demo database",
    "claim round trip",
    "qt offscreen",
    "qt text (ICU)",
    "translations",
    "colours",
    "operator window",
    "scanned sources",
    "supervisor console",
}


def test_self_test_in_a_fresh_process_passes_every_check(tmp_path):
    # As an installer runs it: its own process, no display, a home that is not the developer's.
    env = {**os.environ, "HOME": str(tmp_path), "WORKBENCH_HOME": str(tmp_path)}
    env.pop("DISPLAY", None)
    env.pop("QT_QPA_PLATFORM", None)
    result = subprocess.run(
        [sys.executable, "-m", "workbench", "--self-test", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=tmp_path,
        check=False,
    )
    report = json.loads(result.stdout)
    failed = [check for check in report["checks"] if not check["ok"]]
    assert result.returncode == 0 and report["passed"] and not failed, (failed, result.stderr[-2000:])
    assert {check["name"] for check in report["checks"]} == CHECKS
    round_trip = next(c for c in report["checks"] if c["name"] == "claim round trip")
    assert "claimed, saved, completed (resolved), audited" in round_trip["detail"]
    assert list(tmp_path.iterdir()) == []  # nothing written outside its temporary folder


def test_a_failing_check_is_reported_and_fails_the_run(qapp, monkeypatch):
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    monkeypatch.setattr(selftest, "DIALECTS", (*selftest.DIALECTS, ("Nowhere", "nowhere://", "no_such_driver")))
    out = io.StringIO()
    assert selftest.run(out) == 1
    text = out.getvalue()
    assert "FAIL driver Nowhere" in text
    assert "self-test FAILED: 1 of 18 checks (driver Nowhere)" in text
    assert "ok   claim round trip" in text  # the other checks still ran


def test_a_bundle_without_qts_own_translations_fails_the_check(qapp, monkeypatch, tmp_path):
    from workbench.gui import i18n

    monkeypatch.setattr(i18n, "qt_translations_dirs", lambda: [tmp_path])
    with pytest.raises(AssertionError, match=r"qtbase_de\.qm is missing"):
        selftest._translations()


def test_a_bundle_without_german_fails_the_check(qapp, monkeypatch, tmp_path):
    from workbench.gui import i18n

    shipped = {name: (i18n.translations_dir() / name).read_bytes() for name in ("workbench_de.qm", "workbench_fr.qm")}
    monkeypatch.setattr(i18n, "translations_dir", lambda: tmp_path)  # a bundle's own folder
    # French is there, German is not: not enough (German is the language the bundle must speak).
    (tmp_path / "workbench_fr.qm").write_bytes(shipped["workbench_fr.qm"])
    with pytest.raises(AssertionError, match=r"workbench_de\.qm is not in the bundle"):
        selftest._translations()
    # A German file that does not load is no better.
    (tmp_path / "workbench_de.qm").write_bytes(b"not a translation file")
    with pytest.raises(AssertionError, match=r"workbench_de\.qm did not load"):
        selftest._translations()
    # The real one: the check passes and shows what German says.
    (tmp_path / "workbench_de.qm").write_bytes(shipped["workbench_de.qm"])
    assert selftest._translations().startswith("de ('Eintrag auswählen'")


def test_self_test_takes_no_command(capsys):
    from workbench.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main.main(["--self-test", "mine", "cases"])
    assert exit_info.value.code == 2
    assert "--self-test takes no command" in capsys.readouterr().err
