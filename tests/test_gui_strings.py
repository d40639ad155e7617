"""Every user-visible string of the desktop GUI goes through Qt's translation system (issue 17).

The modules of workbench/gui are parsed, not imported: a string literal, an f-string or a string
built with + that is handed straight to a Qt call that shows text (setText, QLabel(...), addAction,
QMessageBox.warning, setHorizontalHeaderLabels …) bypasses tr() and fails this test; so does an
f-string inside tr() or QCoreApplication.translate() (lupdate cannot read it). Text defined apart
from where it is shown (tables of labels, column names) is marked with QT_TRANSLATE_NOOP and
translated where it is shown.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

GUI = Path(__file__).resolve().parents[1] / "workbench" / "gui"

# Methods whose string arguments are shown to the user.
SHOWS_TEXT = {
    "setText",
    "setWindowTitle",
    "setToolTip",
    "setStatusTip",
    "setWhatsThis",
    "setPlaceholderText",
    "addAction",
    "addMenu",
    "addTab",
    "insertTab",
    "setTabText",
    "setTabToolTip",
    "setHeaderLabels",
    "setHorizontalHeaderLabels",
    "setVerticalHeaderLabels",
    "addRow",
    "insertRow",
    "setTitle",
    "setTitleText",
    "showMessage",
    "setLabelText",
    "setCancelButtonText",
    "setSuffix",
    "setPrefix",
    "setSpecialValueText",
    "addButton",
    "setInformativeText",
    "setDetailedText",
    "addItem",
    "addItems",
    "insertItem",
    "insertItems",
    "information",
    "warning",
    "critical",
    "question",
    "about",
    "getOpenFileName",
    "getSaveFileName",
    "getExistingDirectory",
    "getText",
    "getItem",
    "setAccessibleName",
    "setAccessibleDescription",
    "setFormat",
    "show_text",
    "setCurrentText",
}
# Widgets and objects whose constructor takes the text to show.
TEXT_CONSTRUCTORS = {
    "QLabel",
    "QPushButton",
    "QToolButton",
    "QCheckBox",
    "QRadioButton",
    "QGroupBox",
    "QAction",
    "QMenu",
    "QMessageBox",
    "QProgressDialog",
    "QBarSet",
    "QTableWidgetItem",
    "QListWidgetItem",
    "QTreeWidgetItem",
    "QCommandLinkButton",
    "QErrorMessage",
    "QInputDialog",
}
TRANSLATORS = {"tr", "translate", "QT_TRANSLATE_NOOP", "QT_TR_NOOP"}
# Literal text that is the same in every language: the product's name, punctuation, units of keys.
NOT_TRANSLATED = {"workbench"}


def _is_text(value: str) -> bool:
    return any(c.isalpha() for c in value) and value not in NOT_TRANSLATED


def _bare_text(node: ast.AST) -> ast.AST | None:
    """The part of an argument that is text written in the source and not translated, if any."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node if _is_text(node.value) else None
    if isinstance(node, ast.JoinedStr):
        literal = "".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
        return node if _is_text(literal) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
        return _bare_text(node.left) or _bare_text(node.right)
    if isinstance(node, ast.IfExp):
        return _bare_text(node.body) or _bare_text(node.orelse)
    if isinstance(node, (ast.List, ast.Tuple)):
        return next((found for element in node.elts if (found := _bare_text(element)) is not None), None)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("format", "join"):
        # "…{0}".format(x) is still untranslated text; tr("…{0}").format(x) is fine.
        return _bare_text(node.func.value)
    return None


def _name(func: ast.AST) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""


def _is_logging(func: ast.AST) -> bool:
    """log.warning(…), logging.getLogger(…).info(…): the log file, for whoever reads it (English)."""
    if not isinstance(func, ast.Attribute):
        return False
    receiver = func.value
    return (isinstance(receiver, ast.Name) and receiver.id in ("log", "logger", "logging")) or (
        isinstance(receiver, ast.Call) and _name(receiver.func) == "getLogger"
    )


def violations(source: str, filename: str = "<source>") -> list[str]:
    """Where `source` shows text that bypasses tr(): "file:line: call(…text…)"."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if not isinstance(node, ast.Call):
            continue
        name = _name(node.func)
        args = [*node.args, *(k.value for k in node.keywords)]
        if name in TRANSLATORS:
            for arg in args:
                if isinstance(arg, ast.JoinedStr) or (isinstance(arg, ast.BinOp) and _bare_text(arg) is not None):
                    found.append(
                        f"{filename}:{node.lineno}: {name}() of an f-string or a built string: {ast.unparse(arg)[:70]}"
                    )
            continue
        if (name in SHOWS_TEXT or name in TEXT_CONSTRUCTORS) and not _is_logging(node.func):
            for arg in args:
                bare = _bare_text(arg)
                if bare is not None:
                    found.append(
                        f"{filename}:{node.lineno}: {name}() shows untranslated text: {ast.unparse(bare)[:70]}"
                    )
    return found


def test_every_shown_string_goes_through_tr() -> None:
    problems = [
        problem for path in sorted(GUI.glob("*.py")) for problem in violations(path.read_text("utf-8"), path.name)
    ]
    assert not problems, "text shown without tr():\n" + "\n".join(problems)


@pytest.mark.parametrize(
    "line",
    [
        'label = QLabel("Queue:")',
        'self.button.setText(f"Lock on {key}")',
        'self.setWindowTitle("workbench supervisor — " + user)',
        'box.addButton("Try again", QMessageBox.ButtonRole.AcceptRole)',
        'QMessageBox.critical(None, "workbench: configuration problem", str(exc))',
        'table.setHorizontalHeaderLabels(["Queue", "Item"])',
        'menu.addAction("&Reload queue settings")',
        'self.statusBar().showMessage("Saved." if ok else "Not saved.", 4000)',
        'edit.setPlaceholderText("Item key {0}".format(n))',
        'text = self.tr(f"You hold {n} items")',
        'text = QCoreApplication.translate("Ctx", "Lock on " + key)',
    ],
)
def test_the_check_finds_untranslated_text(line: str) -> None:
    assert violations(line), line


@pytest.mark.parametrize(
    "line",
    [
        'label = QLabel(self.tr("Queue:"))',
        'self.button.setText(self.tr("Lock on {0}").format(key))',
        'self.setWindowTitle("workbench")',
        "box.addButton(QMessageBox.StandardButton.Cancel)",
        'combo.addItem("", None)',
        'QMessageBox.critical(None, "workbench", str(exc))',
        'table.setHorizontalHeaderLabels([QCoreApplication.translate("Board", c) for c in COLUMNS])',
        'self.timer_label.setText("")',
        'text = QCoreApplication.translate("Ctx", "Lock on {key}").format(key=key)',
        'text = self.tr("%n item(s)", "", n)',
        'log.warning("closing: %s", notice)',
    ],
)
def test_the_check_passes_translated_text(line: str) -> None:
    assert not violations(line), line


# Sentences in workbench/gui that are deliberately not translated.
PROSE_KEPT = {
    # Release and force-release reasons are written to the audit trail, where supervisors filter and
    # count them: the same words for every operator (dialogs.RELEASE_REASONS, supervisor_dialogs).
    "Needs information from the customer",
    "Not my area",
    "Waiting for someone else",
    "Cannot finish now",
    "Holder is absent",
    "Stuck too long",
    "Customer escalated",
    "Shift ended",
    "Needs another team",
    "closed without changes",
    "released when closing",
    "left without changes",
    "released when leaving",
    "Customer calls back",
    "Waiting for a reply",
    "Waiting for parts",
    "Try again later",  # dialogs.DEFER_REASONS
    "Customer says it still fails",
    "Completed by mistake",
    "Needs another look",  # supervisor_dialogs.REOPEN_REASONS
    "Needs level 2",
    "Belongs to another team",
    "Wrong category on import",  # supervisor_dialogs.MOVE_REASONS
    "given back to undo the previous Complete",  # session.UNDO_RELEASE
    # Key names and input formats, the same in every language.
    "Tab / Shift+Tab",
    "YYYY-MM-DD HH:MM",
    # Matched against ODBC driver names, never shown.
    "sql server",
}
# Calls whose string arguments are not shown (or are translated, or go to the log).
NOT_SHOWN = {
    "setObjectName",
    "setProperty",
    "value",
    "setValue",
    "QKeySequence",
    "setShortcut",
    "getattr",
    "startswith",
    "removeprefix",
    "strftime",
    "findChild",
    "findData",
    "joinpath",
    "environ",
    "get",
}
PROSE = re.compile(r"[A-Za-z]{2,}[,.:;!?]?\s+\W*[A-Za-z]{2,}")  # two words, apart


def prose_outside_tr(source: str, filename: str = "<source>") -> list[str]:
    """Sentences (two words or more) written anywhere in `source` outside tr(), docstrings and the log:
    catches text that reaches the screen through a variable."""
    tree = ast.parse(source, filename)
    skip: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        first = body[0] if isinstance(body, list) and body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
            skip.add(id(first.value))  # a docstring
        if isinstance(node, ast.Call) and (_name(node.func) in TRANSLATORS | NOT_SHOWN or _is_logging(node.func)):
            skip.update(id(sub) for sub in ast.walk(node))
    return [
        f"{filename}:{node.lineno}: {node.value[:70]!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in skip
        and PROSE.search(node.value)
        and node.value not in PROSE_KEPT
    ]


def test_no_sentence_bypasses_tr() -> None:
    problems = [
        problem for path in sorted(GUI.glob("*.py")) for problem in prose_outside_tr(path.read_text("utf-8"), path.name)
    ]
    assert not problems, "sentences outside tr():\n" + "\n".join(problems)


def test_the_sentence_check_finds_text_in_a_variable() -> None:
    source = 'def f(label):\n    text = f"Lock on {key}: expired"\n    label.setText(text)\n'
    assert prose_outside_tr(source)
    assert not prose_outside_tr('def f(label):\n    text = self.tr("Lock on {0}: expired")\n')
