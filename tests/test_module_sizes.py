"""db/ stays readable at a sitting (issue 49): no module over 600 lines, no function over 80."""

from __future__ import annotations

import ast
from pathlib import Path

DB = Path(__file__).resolve().parent.parent / "workbench" / "db"
MODULE_LINES = 600
FUNCTION_LINES = 80  # signature and docstring included


def long_modules(root: Path) -> list[str]:
    return [
        f"{p.relative_to(root)}: {n} lines"
        for p in sorted(root.rglob("*.py"))
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MODULE_LINES
    ]


def long_functions(root: Path) -> list[str]:
    found = []
    for p in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                n = (node.end_lineno or node.lineno) - start + 1
                if n > FUNCTION_LINES:
                    found.append(f"{p.relative_to(root)}:{node.lineno} {node.name}: {n} lines")
    return found


def test_no_db_module_is_over_600_lines() -> None:
    assert long_modules(DB) == [], "split by what the parts do (docs/develop/architecture.md)"


def test_no_db_function_is_over_80_lines() -> None:
    assert long_functions(DB) == [], "split by transition or step, each part short enough to read at once"


def test_the_counts_see_what_they_look_for(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(FUNCTION_LINES))
    (tmp_path / "long.py").write_text(f"def f():\n{body}\n", encoding="utf-8")
    (tmp_path / "short.py").write_text("def g():\n    return 1\n", encoding="utf-8")
    assert long_functions(tmp_path) == [f"long.py:1 f: {FUNCTION_LINES + 1} lines"]
    assert long_modules(tmp_path) == []
    (tmp_path / "big.py").write_text("x = 1\n" * (MODULE_LINES + 1), encoding="utf-8")
    assert long_modules(tmp_path) == [f"big.py: {MODULE_LINES + 1} lines"]
