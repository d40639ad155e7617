"""The layer rules: the core imports neither Qt nor SQLAlchemy, the engine no window or command, Qt
lives under workbench/gui (and lazily in the self-test); the Layout in docs/develop/architecture.md names every
module."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "workbench"

QT = ("PySide6", "shiboken6")

# Package (or module) prefix -> what it must not import, anywhere in the module.
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "workbench.core": (
        *QT,
        "sqlalchemy",
        "workbench.db",
        "workbench.gui",
        "workbench.cli",
        "workbench.config",
        "workbench.services",
        "workbench.api",
    ),
    "workbench.config": (*QT, "workbench.db", "workbench.gui", "workbench.cli", "workbench.services"),
    "workbench.db": (*QT, "workbench.gui", "workbench.cli", "workbench.services", "workbench.api"),
    "workbench.services": (*QT, "workbench.gui", "workbench.cli"),
    "workbench.api": (*QT, "workbench.gui", "workbench.cli"),
    "workbench.fieldspec": (*QT, "workbench.gui", "workbench.cli"),
    "workbench.journal": (*QT, "workbench.gui", "workbench.cli", "workbench.db"),
    # One front door: the windows and the commands reach the engine through workbench.services only
    # (its admin, operator and supervisor services; error types come from workbench.core.errors).
    "workbench.gui": ("workbench.db",),
    "workbench.cli": ("workbench.db",),
}

# Outside workbench/gui, Qt (or a window) may only be imported inside a function, and only here:
# the self-test opens the windows offscreen; the command line starts the app when asked to.
LAZY_QT = {"workbench.selftest": (*QT, "workbench.gui"), "workbench.cli.main": ("workbench.gui",)}


def modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def imports(path: Path) -> list[tuple[str, bool]]:
    """(imported module, at module level?) for every import in the file, nested ones included."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    top = {id(node) for node in tree.body}
    # An import under `if TYPE_CHECKING:` or try/except at module level is still a module-level import.
    for node in tree.body:
        if isinstance(node, (ast.If, ast.Try)):
            top |= {id(n) for n in ast.walk(node)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, id(node) in top) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, id(node) in top))
            # `from workbench import gui` imports workbench.gui
            found += [(f"{node.module}.{alias.name}", id(node) in top) for alias in node.names]
    return found


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


@pytest.mark.parametrize("module", sorted(modules()))
def test_each_module_keeps_to_its_layer(module: str) -> None:
    path = modules()[module]
    found = imports(path)
    broken = []
    for prefix, banned in FORBIDDEN.items():
        if _under(module, prefix):
            broken += [f"{module} imports {name}" for name, _ in found if any(_under(name, b) for b in banned)]
    if not _under(module, "workbench.gui"):
        lazy_ok = LAZY_QT.get(module, ())
        for name, at_top in found:
            windowing = any(_under(name, b) for b in (*QT, "workbench.gui"))
            if windowing and (at_top or not any(_under(name, b) for b in lazy_ok)):
                broken.append(f"{module} imports {name}" + (" at module level" if at_top else ""))
    assert broken == []


def test_the_rules_catch_a_breach(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("import os\nfrom PySide6 import QtCore\n\ndef f():\n    from workbench import gui\n")
    assert imports(sample) == [
        ("os", True),
        ("PySide6", True),
        ("PySide6.QtCore", True),
        ("workbench", False),
        ("workbench.gui", False),
    ]


def test_the_engine_and_the_command_line_load_without_qt() -> None:
    # Transitive imports too: what the CLI, the API and the engine pull in must not bring Qt.
    engine = [
        m for m in modules() if not _under(m, "workbench.gui") and m not in LAZY_QT and not m.endswith("__main__")
    ]
    code = (
        "import sys\n"
        f"for m in {engine!r}: __import__(m)\n"
        "import workbench.cli.main\n"
        "qt = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6'))\n"
        "assert not qt, qt\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=120)
    core = [m for m in modules() if _under(m, "workbench.core")]
    code = (
        "import sys\n"
        f"for m in {core!r}: __import__(m)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'sqlalchemy'))\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=120)


def layout_entries() -> list[str]:
    """The module paths the Layout lists: `  name.py  what it does` under a `folder/` line."""
    page = (ROOT / "docs" / "develop" / "architecture.md").read_text(encoding="utf-8")
    start = page.index("```", page.index("## Layout")) + 3
    block = page[start : page.index("```", start)]
    folder, listed = "", []
    for line in block.splitlines():
        if not line.strip():
            continue
        first = line.split()[0]
        if not line.startswith(" "):
            folder = first if first.startswith("workbench/") and first.endswith("/") else ""
        elif first.endswith(".py") and folder:
            listed.append(folder + first)
    return listed


LAYOUT = "the Layout in docs/develop/architecture.md"


def test_the_layout_names_every_module() -> None:
    listed = layout_entries()
    present = [p.relative_to(ROOT).as_posix() for p in PACKAGE.rglob("*.py") if p.name != "__init__.py"]
    assert sorted(set(present) - set(listed)) == [], f"{LAYOUT} does not name these modules"
    assert sorted(set(listed) - set(present)) == [], f"{LAYOUT} names modules that are gone"
    assert len(listed) == len(set(listed)), f"{LAYOUT} names a module twice"


def cycles(within: tuple[str, ...]) -> list[list[str]]:
    """The import cycles (strongly connected components) among the modules under `within`, every
    import counted, nested ones too: `from workbench.services import x` inside the package
    workbench.services is an edge to the package itself."""
    found = modules()
    edges: dict[str, set[str]] = {}
    for name, path in found.items():
        if not any(_under(name, w) for w in within):
            continue
        targets = set()
        for imported, _ in imports(path):
            while imported and imported not in found:
                imported = imported.rpartition(".")[0]
            if imported and imported != name and any(_under(imported, w) for w in within):
                targets.add(imported)
        edges[name] = targets
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    components = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for v in edges:
        if v not in index:
            visit(v)
    return components


def test_the_services_and_the_command_line_import_no_cycle() -> None:
    # services <-> services.operator/supervisor and cli.main <-> cli.permission_commands were cycles.
    assert cycles(("workbench.services", "workbench.cli")) == []
