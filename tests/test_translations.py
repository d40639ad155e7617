"""The translations are complete and current (issue 17): every .ts entry translated, none obsolete,
every text of the code in every .ts, placeholders kept, and each .qm built from its .ts as it is now."""

from __future__ import annotations

import ast
import re
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "installer"))

import translations  # noqa: E402 - installer/translations.py, once installer/ is on sys.path

TS_FILES = translations.ts_files()
LANGUAGES = [ts.stem.removeprefix("workbench_") for ts in TS_FILES]
PLACEHOLDER = re.compile(r"\{[^{}]*\}|%n|%L?\d")


def test_german_and_french_are_there() -> None:
    assert {"de", "fr"} <= set(LANGUAGES)
    for ts in TS_FILES:
        qm = ts.with_suffix(".qm")
        assert qm.is_file(), f"{qm.name} is missing: run python installer/translations.py"


@pytest.mark.parametrize("ts", TS_FILES, ids=LANGUAGES)
def test_every_entry_is_translated(ts: Path) -> None:
    problems = []
    for m in translations.messages(ts):
        where = f"{m['context']}: {m['source']!r}"
        if m["type"]:
            problems.append(f"{where} is {m['type']}")
        forms = m["translations"]
        assert isinstance(forms, list)
        if not forms or not all(f.strip() for f in forms):
            problems.append(f"{where} has an empty translation")
            continue
        wanted = sorted(PLACEHOLDER.findall(str(m["source"])))
        for form in forms:
            got = sorted(PLACEHOLDER.findall(form))
            # A plural form for exactly one may say "one" instead of %n.
            if got != wanted and sorted([*got, "%n"]) != wanted:
                problems.append(f"{where}: placeholders {got} in {form!r}, expected {wanted}")
            if "&" in str(m["source"]).replace("&&", "") and "&" not in form:
                problems.append(f"{where}: the keyboard mnemonic (&) is missing in {form!r}")
    assert not problems, f"{ts.name}:\n" + "\n".join(problems)


def _texts_in_code() -> dict[tuple[str, str], bool]:
    """(context, source) of every literal tr(), translate() and QT_TRANSLATE_NOOP() in workbench/gui, and
    whether it is given a count (%n: plural forms)."""
    found: dict[tuple[str, str], bool] = {}

    def literal(node: ast.AST) -> str | None:
        return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None

    def visit(node: ast.AST, cls: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, child.name)
                continue
            if isinstance(child, ast.Call):
                func, args = child.func, child.args
                name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
                counted = len(args) + len(child.keywords)
                if name == "tr" and isinstance(func, ast.Attribute) and args and literal(args[0]) is not None:
                    found[(cls, literal(args[0]) or "")] = counted >= 3
                elif (
                    name in ("translate", "QT_TRANSLATE_NOOP")
                    and len(args) >= 2
                    and literal(args[0]) is not None
                    and literal(args[1]) is not None
                ):
                    found[(literal(args[0]) or "", literal(args[1]) or "")] = counted >= 4
            visit(child, cls)

    for path in translations.sources():
        visit(ast.parse(path.read_text("utf-8")), "")
    for template in translations.problem_templates():  # core/problems.py's, shown by gui/problem_text.py
        found[("Problem", template)] = False
    return found


@pytest.mark.parametrize("ts", TS_FILES, ids=LANGUAGES)
def test_every_text_of_the_code_is_in_the_ts(ts: Path) -> None:
    """Also catches a call lupdate misreads: it skips translate() with a count given as len(rows), and
    reads no count (no plural forms) from translate() at all, only from self.tr(text, "", n)."""
    known = {(str(m["context"]), str(m["source"])): bool(m["numerus"]) for m in translations.messages(ts)}
    code = _texts_in_code()
    missing = sorted(set(code) - set(known))
    assert not missing, f"{ts.name} lacks (run installer/translations.py, then translate):\n" + "\n".join(
        f"{c}: {s!r}" for c, s in missing
    )
    singular = sorted(key for key, counted in code.items() if counted and not known[key])
    assert not singular, (
        "given a count, but without plural forms in the .ts (count only through self.tr):\n"
        + "\n".join(f"{c}: {s!r}" for c, s in singular)
    )


@pytest.mark.parametrize("ts", TS_FILES, ids=LANGUAGES)
def test_the_ts_is_current_with_the_code(ts: Path, tmp_path: Path) -> None:
    """lupdate over the code adds nothing to the .ts and drops nothing from it."""
    copy = tmp_path / ts.name
    shutil.copy(ts, copy)
    translations.lupdate([copy])
    before = translations.messages(ts)
    after = translations.messages(copy)
    added = [f"{m['context']}: {m['source']!r}" for m in after if m not in before]
    dropped = [f"{m['context']}: {m['source']!r}" for m in before if m not in after]
    assert not added and not dropped, (
        f"{ts.name} is not current (run installer/translations.py):\n"
        f"new or changed: {added}\ngone from the code: {dropped}"
    )


@pytest.mark.parametrize("ts", TS_FILES, ids=LANGUAGES)
def test_the_qm_is_built_from_the_ts(ts: Path, tmp_path: Path) -> None:
    built = translations.lrelease(ts, tmp_path / ts.with_suffix(".qm").name)
    assert built.read_bytes() == ts.with_suffix(".qm").read_bytes(), (
        f"{ts.with_suffix('.qm').name} is out of date: run python installer/translations.py --release"
    )
