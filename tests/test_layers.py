"""The layer rules: the core imports neither Qt nor SQLAlchemy, the engine no window or command, Qt
lives under workbench/gui (and lazily in the self-test); the Layout in docs/develop/architecture.md names every
module."""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

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
    "workbench.api": (*QT, "workbench.gui", "workbench.cli", "workbench.db"),
    "workbench.fieldspec": (*QT, "workbench.gui", "workbench.cli"),
    "workbench.journal": (*QT, "workbench.gui", "workbench.cli", "workbench.db"),
    # One front door: the windows and the commands reach the engine through workbench.services only
    # (its admin, operator and supervisor services; error types come from workbench.core.errors).
    "workbench.gui": ("workbench.db",),
    "workbench.cli": ("workbench.db",),
    "workbench.selftest": ("workbench.db",),
    "workbench.__main__": ("workbench.db",),
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


def parsed(path: Path) -> ast.Module:
    """The file's syntax tree, parsed once per process and content: the import graph's five tests and the
    registrations' walk every module of the package (read only, never changed)."""
    return _parse(str(path), _version(path))


def _version(path: Path) -> tuple[int, ...]:
    """What changes when the file does (a cache's key)."""
    stat = path.stat()
    return (stat.st_ino, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_size)


@functools.cache
def _parse(path: str, version: tuple[int, ...]) -> ast.Module:
    return ast.parse(Path(path).read_text(encoding="utf-8"), path)


def imports(path: Path) -> list[tuple[str, bool]]:
    """(imported module, at module level?) for every import in the file, nested ones included."""
    tree = parsed(path)
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


# -- import cycles and the order of the layers ---------------------------------------------------
#
# The layers, lowest first. A module belongs to the layer of the longest prefix below that names it
# ("workbench" itself, whose __init__ holds the version, only by its exact name); a module may import
# its own layer and those below. Within a layer, any import goes as long as it closes no cycle.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("core", ("workbench", "workbench.core")),
    (
        "config",
        (
            "workbench.config",
            "workbench.journal",
            "workbench.journal_guard",
            "workbench.logs",
            "workbench.credentials",
            "workbench.codecache",
            "workbench.start_collection",
        ),
    ),
    (
        # Small modules everything in db/ may use; fieldspec is the form's and the engine's field rules.
        "db leaves",
        (
            *(
                f"workbench.db.{name}"
                for name in (
                    "clock",
                    "dberrors",
                    "values",
                    "tables",
                    "odbc",
                    "digests",
                    "roles",
                    "fastpath",
                    "batches",
                    "filters",
                    "notes",
                    "deferrals",
                    "reviews",
                    "workflow_sql",
                    "names",
                )
            ),
            "workbench.fieldspec",
        ),
    ),
    ("db.backends", ("workbench.db.backends",)),
    ("db.lockshapes", ("workbench.db.lockshapes",)),
    (
        # A queue bound to its table, the connection, the trail, and the PostgreSQL renderings the writes call.
        "db core",
        tuple(
            f"workbench.db.{name}"
            for name in (
                "mapping",
                "binding",  # the parts mapping's BoundQueue is made of
                "lookups",
                "rowrules",
                "connect",
                "audit",
                "migrations",
                "probe",
                "lockloss",
                "rules",  # the rules rendered as PostgreSQL checks (rules/pg_*)
                "writes",  # a write under the lock as an operation states it, and the protocol of the ways it runs
                "lockrules",  # the table's lock rules, which the engine and the lock-table checks both render
            )
        ),
    ),
    # The guarded writes' statements and executor, the ways they run, and the enforcement that chooses them.
    (
        "db.guarded",
        tuple(
            f"workbench.db.{name}"
            for name in ("guarded", "two_steps", "one_statement", "trusted", "batch_writes", "enforcement")
        ),
    ),
    ("db.claims", ("workbench.db.claims",)),
    # Every other module in db/: the operations on a queue and what builds on them (the work queue,
    # permissions and the grants' renderings, SQL Server's procedures, statistics, service).
    (
        "db operations",
        (
            "workbench.db",
            "workbench.db.rules.mssql_parts",
            "workbench.db.rules.mssql_operator",
            "workbench.db.rules.mssql_script",
        ),
    ),
    ("services", ("workbench.services", "workbench.opening", "workbench.demo")),
    ("front ends", ("workbench.api", "workbench.cli", "workbench.gui", "workbench.selftest", "workbench.__main__")),
]


def _type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
    )


def import_graph(root: Path = ROOT, package: str = "workbench") -> dict[str, set[str]]:
    """module -> the modules of `package` it imports, anywhere in it (inside functions too: a lazy
    import still needs the other module loaded first), except under `if TYPE_CHECKING:`.
    `from pkg import sub` imports the module pkg.sub, as `import pkg.sub` does; `from pkg import name`
    (a name pkg/__init__ defines) imports pkg. Worked out once per process for the same files (five tests
    ask; walking every module's tree was most of this file's time) and the same `_type_checking`."""
    files = tuple((str(path), _version(path)) for path in sorted((root / package).rglob("*.py")))
    graph = _import_graph(str(root), package, files, _type_checking)
    return {module: set(targets) for module, targets in graph.items()}


@functools.cache
def _import_graph(
    root_name: str, package: str, files: tuple[tuple[str, tuple[int, ...]], ...], skip: Callable[[ast.AST], bool]
) -> dict[str, frozenset[str]]:
    root = Path(root_name)
    found: dict[str, Path] = {}
    for path in (Path(name) for name, _ in files):
        parts = path.relative_to(root).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, frozenset[str]] = {}
    for module, path in found.items():
        tree = parsed(path)
        here = module if path.name == "__init__.py" else module.rpartition(".")[0]
        skipped = {id(n) for node in ast.walk(tree) if skip(node) for b in node.body for n in ast.walk(b)}
        names: list[str] = []
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            if isinstance(node, ast.Import):
                names += [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = here.split(".")[: len(here.split(".")) - node.level + 1]
                    base = ".".join([*up, base] if base else up)
                names += [f"{base}.{a.name}" if f"{base}.{a.name}" in found else base for a in node.names]
        targets = set()
        for name in names:
            while name and name not in found:  # a name inside a module: the module
                name = name.rpartition(".")[0]
            if name and name != module:
                targets.add(name)
        graph[module] = frozenset(targets)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def layer_of(module: str) -> int | None:
    best: tuple[int, int] | None = None  # (length of the prefix, layer)
    for number, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            fits = module == prefix if prefix == "workbench" else _under(module, prefix)
            if fits and (best is None or len(prefix) > best[0]):
                best = (len(prefix), number)
    return None if best is None else best[1]


def _upward(graph: dict[str, set[str]], modules: list[str]) -> list[str]:
    return [
        f"{m} ({LAYERS[layer_of(m) or 0][0]}) imports {t} ({LAYERS[layer_of(t) or 0][0]})"
        for m in modules
        for t in sorted(graph[m])
        if (layer_of(t) or 0) > (layer_of(m) or 0)
    ]


def test_no_import_cycle() -> None:
    assert cycles(import_graph()) == []


# Type-level loops (an import under `if TYPE_CHECKING:` counted): none. A lower module that names what
# builds on it takes a small protocol instead (fieldspec.Bound, lookups.Bound, enforcement.Calls).
KNOWN_TYPE_CYCLES: list[list[str]] = []


def test_no_new_import_cycle_even_for_types(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.modules[__name__], "_type_checking", lambda node: False)
    assert cycles(import_graph()) == KNOWN_TYPE_CYCLES


def test_every_module_has_a_layer() -> None:
    assert [m for m in import_graph() if layer_of(m) is None] == []


def test_the_backends_import_only_lower_layers() -> None:
    graph = import_graph()
    backends = [m for m in graph if _under(m, "workbench.db.backends")]
    assert len(backends) > 5
    assert _upward(graph, backends) == []
    # Strictly lower: within db/backends the package's own modules only.
    assert [
        f"{m} imports {t}"
        for m in backends
        for t in graph[m]
        if layer_of(t) == layer_of(m) and not _under(t, "workbench.db.backends")
    ] == []


def test_no_module_imports_a_higher_layer() -> None:
    graph = import_graph()
    assert _upward(graph, sorted(graph)) == []


def test_the_rules_see_lazy_imports_and_packages(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from pkg import a\nNAME = 1\n")
    (pkg / "a.py").write_text("from pkg import b\n")  # the module pkg.b, not pkg/__init__
    (pkg / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import c\n")
    (pkg / "c.py").write_text("def f():\n    from pkg.sub import d\n")  # lazy: still an import
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "d.py").write_text("from .. import c\nfrom pkg import NAME\n")  # relative; a name of pkg
    graph = import_graph(tmp_path, "pkg")
    assert graph == {
        "pkg": {"pkg.a"},
        "pkg.a": {"pkg.b"},
        "pkg.b": set(),
        "pkg.c": {"pkg.sub.d"},
        "pkg.sub": set(),
        "pkg.sub.d": {"pkg.c", "pkg"},
    }
    # b -> c under TYPE_CHECKING would close pkg -> a -> b -> c -> d -> pkg; the lazy c <-> d is a cycle.
    assert cycles(graph) == [["pkg.c", "pkg.sub.d"]]


def _registrations(root: Path = ROOT, package: str = "workbench") -> list[str]:
    """Assignments at a module's top level to an attribute of a module it imported, or of what that
    module holds (`mssql_backend.GRANTS.procedures = of`): a registration made when the module is imported."""
    found = []
    for path in sorted((root / package).rglob("*.py")):
        tree = parsed(path)
        imported = {
            (alias.asname or alias.name).partition(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, (ast.Import, ast.ImportFrom))
            for alias in node.names
        }
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
            for target in targets:
                for part in ast.walk(target) if target is not None else ():
                    root_name = part
                    while isinstance(root_name, ast.Attribute):
                        root_name = root_name.value
                    if part is not root_name and isinstance(root_name, ast.Name) and root_name.id in imported:
                        found.append(f"{path.relative_to(root).as_posix()}:{node.lineno}: {ast.unparse(target)}")
                        break
    return found


def test_no_module_registers_itself_with_another_when_imported(tmp_path: Path) -> None:
    # What a lower layer needs of what builds on it is handed in by the caller that has it, not set
    # on the lower module when the higher one happens to be imported.
    assert _registrations() == []
    # The check sees one (as SQL Server's grants were handed to their backend).
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("from pkg import b\nb.HOOKS.script = print\nX = 1\nprint.seen = 1\n")
    (tmp_path / "pkg" / "b.py").write_text("import types\nHOOKS = types.SimpleNamespace()\n")
    assert _registrations(tmp_path, "pkg") == ["pkg/a.py:2: b.HOOKS.script"]


def test_sql_servers_backend_uses_what_the_caller_hands_it(tmp_path: Path) -> None:
    # SQL Server's script and procedures build on the engine, which builds on the backend: the caller
    # that chooses them hands them in (services/admin.py the script, the service and a work queue the
    # procedures' finder), and the backend uses exactly that.
    from tests import test_mssql_sql as mssql_sql
    from workbench import demo
    from workbench.config import loader
    from workbench.db import connect, enforcement, procedures, service, workqueue
    from workbench.db.backends import base, mssql

    asked: list[tuple[Any, ...]] = []

    class Scripts:
        def script(self, dialect: Any, q: Any, schema: str, reviewed: Any = None) -> list[str]:
            asked.append(("script", schema, reviewed))
            return ["made"]

        def revoke_script(self, dialect: Any, q: Any, schema: str) -> list[str]:
            asked.append(("revoke", schema))
            return ["undone"]

    def found(db: Any, q: Any, schema: str | None) -> str:
        asked.append(("procedures", db, schema))
        return "the procedures"

    backend = mssql.MssqlBackend()
    assert backend.protocol_script(Scripts(), None, None, "dbo", reviewed="r") == ["made"]
    assert backend.protocol_script(Scripts(), None, None, "dbo", revoke=True) == ["undone"]
    assert backend.procedures(found, "db", None, "dbo") == "the procedures"
    assert asked == [("script", "dbo", "r"), ("revoke", "dbo"), ("procedures", "db", "dbo")]
    # Other databases have neither, and never ask.
    assert base.Backend().protocol_script(Scripts(), None, None, "dbo") is None
    assert base.Backend().procedures(found, "db", None, "dbo") is None
    assert len(asked) == 3
    # An enforcement bound without the finder says so on SQL Server instead of writing around the procedures...
    q = mssql_sql.demo_queue()
    with pytest.raises(RuntimeError, match=r"procedures\.of"):
        enforcement.Enforcement(typing.cast(Any, None), q, "dbo").procedures()
    # ...and whoever binds a queue's writes hands it in: the service; a work queue bound by hand gets the
    # service's Enforcement, or on a database of its own one without the finder (it names no way itself).
    with service.Workbench.open(loader.load(demo.create(tmp_path / "demo"))) as wb:
        bound = wb.queue("cases")
        assert bound.enforcement.procedures_of is procedures.of
        again = workqueue.WorkQueue(wb.db, bound.q, bound.trail, bound.method)
        assert again.enforcement is bound.enforcement and again.enforcement.procedures_of is procedures.of
        by_hand = workqueue.WorkQueue(connect.Database(wb.engine), bound.q, bound.trail, bound.method)
        assert by_hand.enforcement.procedures_of is not procedures.of


def test_the_claim_chosen_brings_its_lock_table_claim() -> None:
    # Handed in by the one who chooses the method (claims.choose), not set on ClaimMethod at import: a
    # method made by hand says so rather than claiming a lock table with nothing.
    import sqlalchemy as sa

    from workbench.db import claims
    from workbench.db.claims import base, lock_table

    engine = sa.create_engine("sqlite://")
    try:
        chosen = claims.choose(engine, "portable")
    finally:
        engine.dispose()
    assert type(chosen.lock_table_claim()) is lock_table.LockTableClaim
    with pytest.raises(RuntimeError, match=r"claims\.choose"):
        base.ClaimMethod().lock_table_claim()
