"""The front door: what gui/ and cli/ get from the services (and opening, api) is core's, config's and the
services' own types, never the engine's (workbench.db, SQLAlchemy): by their annotations, and at run time."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import pkgutil
import re
import types
import typing
from pathlib import Path
from typing import Any

import pytest

import workbench.services

ENGINE = ("workbench.db", "sqlalchemy")
# The modules gui/ and cli/ (and scripts, through api) may import to reach the database.
DOORS = (
    "workbench.opening",
    "workbench.api",
    *(f"workbench.services.{m.name}" for m in pkgutil.iter_modules(workbench.services.__path__)),
    "workbench.services",
)
# The services' own way in: the engine behind a door, for them alone.
INSIDE = {"workbench.services.door.engine"}


def _engines(kind: Any) -> bool:
    module = getattr(kind, "__module__", "")
    return any(module == prefix or module.startswith(prefix + ".") for prefix in ENGINE)


def _said(kinds: list[Any]) -> list[str]:
    return [f"{k.__module__}.{k.__qualname__}" for k in kinds if _engines(k)]


def _namespace(module: types.ModuleType) -> dict[str, Any]:
    """The module's names, with what it imports under `if TYPE_CHECKING:` (annotations name those too)."""
    names = dict(vars(module))
    source = inspect.getsource(module)
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for statement in node.body:
                if isinstance(statement, (ast.Import, ast.ImportFrom)):
                    exec(compile(ast.Module([statement], []), module.__name__, "exec"), names)
    return names


def _kinds(annotation: Any, names: dict[str, Any]) -> list[Any]:
    """Every class an annotation names, its arguments' too."""
    if isinstance(annotation, str):
        annotation = eval(annotation, names)
    found = [annotation] if isinstance(annotation, type) else []
    for arg in typing.get_args(annotation):
        found += _kinds(arg, names) if not isinstance(arg, list) else [k for a in arg for k in _kinds(a, names)]
    return found


def handed_out(module_name: str) -> list[str]:
    """What the module hands the front ends that is the engine's: its public names, what its public
    functions and methods return, and the fields of its public classes."""
    module = importlib.import_module(module_name)
    names = _namespace(module)
    broken = []
    for name, value in vars(module).items():
        if name.startswith("_") or inspect.ismodule(value) or f"{module_name}.{name}" in INSIDE:
            continue
        where = f"{module_name}.{name}"
        if inspect.isclass(value) and _engines(value):
            broken.append(f"{where} is {value.__module__}.{value.__qualname__}")
            continue
        if inspect.isfunction(value) and value.__module__ == module_name:
            broken += [f"{where}() returns {k}" for k in _said(_kinds(value.__annotations__.get("return"), names))]
        if inspect.isclass(value) and value.__module__ == module_name:
            for klass in value.__mro__:
                if klass is not value and not klass.__module__.startswith("workbench."):
                    continue  # object, Protocol: nothing handed out
                own = _namespace(importlib.import_module(klass.__module__))
                for field, annotation in vars(klass).get("__annotations__", {}).items():
                    if not field.startswith("_"):
                        broken += [f"{where}.{field} is {k}" for k in _said(_kinds(annotation, own))]
                for attr, member in vars(klass).items():
                    if attr.startswith("_") and attr != "__enter__":
                        continue
                    function = member.fget if isinstance(member, property) else getattr(member, "__func__", member)
                    if not inspect.isfunction(function):
                        continue
                    returned = function.__annotations__.get("return")
                    broken += [f"{where}.{attr} returns {k}" for k in _said(_kinds(returned, own))]
    return sorted(set(broken))


@pytest.mark.parametrize("module", DOORS)
def test_the_services_hand_out_no_engine_type(module: str) -> None:
    assert handed_out(module) == []


def test_the_check_sees_an_engine_type(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "doorcheck"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "sample.py").write_text(
        "from __future__ import annotations\n"
        "from typing import TYPE_CHECKING\n"
        "from workbench.db import mapping\n"
        "if TYPE_CHECKING:\n"
        "    from workbench.db import service\n"
        "Bound = mapping.BoundQueue\n"
        "def opened() -> list[service.Workbench] | None: ...\n"
        "class Handle:\n"
        "    engine: service.Workbench\n"
        "    @property\n"
        "    def inner(self) -> dict[str, mapping.BoundQueue]: ...\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert handed_out("doorcheck.sample") == [
        "doorcheck.sample.Bound is workbench.db.mapping.BoundQueue",
        "doorcheck.sample.Handle.engine is workbench.db.service.Workbench",
        "doorcheck.sample.Handle.inner returns workbench.db.mapping.BoundQueue",
        "doorcheck.sample.opened() returns workbench.db.service.Workbench",
    ]


def _reachable(obj: Any, path: str, seen: set[int], depth: int = 0) -> list[str]:
    """Where an engine object is among `obj`'s public attributes, items and fields (a few levels down)."""
    if id(obj) in seen or depth > 4 or isinstance(obj, (str, bytes, int, float, bool, type(None))):
        return []
    seen.add(id(obj))
    if _engines(type(obj)):
        return [f"{path}: {type(obj).__module__}.{type(obj).__qualname__}"]
    found: list[str] = []
    if isinstance(obj, dict):
        for key, value in obj.items():
            found += _reachable(value, f"{path}[{key!r}]", seen, depth + 1)
    elif isinstance(obj, (list, tuple, set, frozenset)):
        for i, value in enumerate(obj):
            found += _reachable(value, f"{path}[{i}]", seen, depth + 1)
    elif dataclasses.is_dataclass(obj) or type(obj).__module__.startswith("workbench."):
        for name, value in vars(obj).items() if hasattr(obj, "__dict__") else ():
            if not name.startswith("_"):
                found += _reachable(value, f"{path}.{name}", seen, depth + 1)
    return found


def test_what_the_windows_and_commands_hold_is_no_engine_object(tmp_path: Path) -> None:
    # At run time, on the demo: the open database as the commands get it, the services the windows make
    # from it, and what their calls answer hold nothing of the engine in a public attribute.
    from workbench import demo, opening, services

    wb = opening.open_target(opening.Target(config_path=demo.create(tmp_path / "demo")))
    with wb:
        op, sup = services.Operator(wb, "ann"), services.Supervisor(wb, "sue")
        queue = op.queues[0]
        claim = op.next_item(queue)
        answers = {
            "wb": wb,
            "operator": op,
            "supervisor": sup,
            "opening": op.opening(),
            "claim": claim,
            "layout": op.layout(queue),
            "counts": op.queue_counts(),
            "pick_list": op.pick_list(queue),
            "item_log": op.item_log(queue, claim.lock.key),
            "board": sup.board([queue]),
            "health": sup.health([queue]),
            "clock": op.db_clock(queue),
            "init": wb.init(),
        }
        found = [hit for name, answer in answers.items() for hit in _reachable(answer, name, set())]
    assert found == []


def test_the_windows_and_commands_name_no_engine_attribute() -> None:
    # What used to reach through the handle into the engine, by name (`wb.engine`, `wb.db`, `wb.queue(`).
    root = Path(__file__).resolve().parent.parent / "workbench"
    reach = re.compile(r"\bwb\.(engine|db|queue|supervision|method|counts|audit_table)\b")
    found = [
        f"{path.relative_to(root)}:{n}"
        for folder in ("gui", "cli")
        for path in sorted((root / folder).rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if reach.search(line)
    ]
    assert found == []
