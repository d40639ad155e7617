"""shiboken's support modules from the bytecode kept by the last start (workbench/gui/qt_bytecode.py)."""

from __future__ import annotations

import marshal
import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# A fresh process: counts the support modules compiled from source while workbench.gui loads Qt.
IMPORT = textwrap.dedent(
    r"""
    import builtins
    compiled = []
    real = builtins.compile
    def counting(source, filename, mode, *args, **kwargs):
        if isinstance(filename, str) and filename.startswith("shibokensupport/"):
            compiled.append(filename)
        return real(source, filename, mode, *args, **kwargs)
    builtins.compile = counting
    import workbench.gui
    from PySide6.QtWidgets import QApplication, QPushButton
    app = QApplication([])
    button = QPushButton("ok")
    assert builtins.compile is counting  # put back after the import
    print("compiled:", len(compiled), button.text(), QPushButton.__name__, flush=True)
    """
)


def run(home: Path) -> str:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", WORKBENCH_HOME=str(home))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    proc = subprocess.run(
        [sys.executable, "-c", IMPORT], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return next(line for line in proc.stdout.splitlines() if line.startswith("compiled:"))


def test_the_second_start_compiles_none_of_shibokens_support_modules(tmp_path: Path) -> None:
    first = run(tmp_path)
    count = int(first.split()[1])
    assert count > 10 and first.endswith("ok QPushButton"), first  # the first start compiles them all
    (cache,) = (tmp_path / "cache").iterdir()
    assert cache.name.startswith("shibokensupport-")
    assert run(tmp_path) == "compiled: 0 ok QPushButton"
    # A damaged file is made again; the start compiles from source as PySide6 does on its own.
    cache.write_bytes(b"not bytecode")
    assert run(tmp_path) == first
    assert run(tmp_path) == "compiled: 0 ok QPushButton"
    # So is one that reads but holds something other than (hash, code) under a module's name.
    table = marshal.loads(cache.read_bytes())
    cache.write_bytes(marshal.dumps(dict.fromkeys(table, 0)))
    assert run(tmp_path) == first
    assert run(tmp_path) == "compiled: 0 ok QPushButton"
