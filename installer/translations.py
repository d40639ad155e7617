"""Update the interface's translations: workbench/i18n/workbench_LANG.ts (sources) and .qm (built).

    python installer/translations.py            # after texts changed: lupdate the .ts files, lrelease the .qm
    python installer/translations.py --release  # after translating: rebuild the .qm files only
    python installer/translations.py --add es   # start a language: workbench/i18n/workbench_es.ts

Uses pyside6-lupdate and pyside6-lrelease, which come with PySide6. lupdate reads the
tr()/translate()/QT_TRANSLATE_NOOP calls in workbench/gui/*.py, and the templates of
workbench/core/problems.py (the engine's messages, shown translated in context "Problem" by
gui/problem_text.py) from a file written for it at each run; new texts arrive in the .ts as
unfinished (translate them, e.g. in pyside6-linguist), texts gone from the code are dropped.
tests/test_translations.py fails while a .ts has unfinished entries or a .qm is not current.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
I18N = ROOT / "workbench" / "i18n"
GUI = ROOT / "workbench" / "gui"


def sources(root: Path = ROOT) -> list[Path]:
    return sorted((root / "workbench" / "gui").glob("*.py"))


def problem_templates() -> list[str]:
    """core/problems.py's templates, each once: the window translates them in context "Problem". They
    are read from the module itself, so a new message is translatable without being written twice."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))  # run as a script from a checkout
    from workbench.core import problems

    return list(dict.fromkeys(problems.templates().values()))


def _problems_source(folder: Path) -> Path:
    """The templates as QT_TRANSLATE_NOOP calls, the form lupdate reads (core/ cannot import Qt's)."""
    path = folder / "problems_for_lupdate.py"
    lines = [f'QT_TRANSLATE_NOOP("Problem", {json.dumps(text, ensure_ascii=False)})' for text in problem_templates()]
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


def ts_files(folder: Path = I18N) -> list[Path]:
    return sorted(folder.glob("workbench_*.ts"))


def tool(name: str) -> str:
    """pyside6-NAME beside this Python (a virtualenv), else on PATH."""
    here = Path(sys.executable).parent
    for candidate in (here / f"pyside6-{name}", here / f"pyside6-{name}.exe"):
        if candidate.exists():
            return str(candidate)
    found = shutil.which(f"pyside6-{name}")
    if found is None:
        raise SystemExit(f"translations.py: pyside6-{name} not found (it comes with PySide6)")
    return found


def lupdate(ts: list[Path], *, root: Path = ROOT, language: str | None = None) -> None:
    """Bring the .ts files up to date with the code: new texts unfinished, texts gone dropped."""
    with tempfile.TemporaryDirectory() as folder:
        files = [*map(str, sources(root)), str(_problems_source(Path(folder)))]
        command = [tool("lupdate"), *files, "-locations", "none", "-no-obsolete", "-silent"]
        if language:
            command += ["-target-language", language]
        subprocess.run([*command, "-ts", *map(str, ts)], check=True)


def lrelease(ts: Path, qm: Path | None = None) -> Path:
    qm = qm or ts.with_suffix(".qm")
    subprocess.run([tool("lrelease"), "-silent", str(ts), "-qm", str(qm)], check=True)
    return qm


def messages(ts: Path) -> list[dict[str, object]]:
    """Every message of a .ts: context, source, comment, numerus, type (unfinished, obsolete, vanished …)
    and its translations (one, or one per plural form)."""
    found = []
    for context in ET.parse(ts).getroot().iter("context"):
        name = context.findtext("name", "")
        for message in context.iter("message"):
            translation = message.find("translation")
            assert translation is not None
            forms = (
                [f.text or "" for f in translation.iter("numerusform")]
                if message.get("numerus") == "yes"
                else [translation.text or ""]
            )
            found.append(
                {
                    "context": name,
                    "source": message.findtext("source", ""),
                    "comment": message.findtext("comment", ""),
                    "numerus": message.get("numerus") == "yes",
                    "type": translation.get("type", ""),
                    "translations": forms,
                }
            )
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", action="store_true", help="only rebuild the .qm files")
    parser.add_argument("--add", metavar="LANG", help="start a new language (e.g. es)")
    args = parser.parse_args(argv)
    if args.add:
        lupdate([I18N / f"workbench_{args.add}.ts"], language=args.add)
    elif not args.release:
        lupdate(ts_files())
    for ts in ts_files():
        unfinished = sum(1 for m in messages(ts) if m["type"] == "unfinished")
        qm = lrelease(ts)
        print(f"{ts.name}: {unfinished} unfinished; {qm.name} built" if unfinished else f"{ts.name} -> {qm.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
