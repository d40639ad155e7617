"""The ways a write or a claim runs are named only by the modules that implement them (issue 49).

The ways (db/enforcement.py chooses among them when a queue is bound): SQL Server's procedures, PostgreSQL's
trusted functions, the PL/pgSQL claim function, the prepared one statement, MySQL/MariaDB's batches, two
steps. An operation states what it does and runs it by the way its queue was bound with; it never asks which
way that is. So each way's names (below: its modules, classes, functions and attributes, as the code
names them, not as comments and docstrings mention them) appear only in its own modules, in
enforcement.py, which chooses, and in the backend (or lock shape) that offers it.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "workbench"


@dataclasses.dataclass(frozen=True)
class Variant:
    modules: frozenset[str]  # the way's modules: an import of one, or a name bound by it, names the way
    names: frozenset[str]  # identifiers and attribute names that are the way's
    owners: dict[str, str]  # file (under workbench/) -> why it may name the way


_SCRIPT = ("parts", "operator", "script")
_CHOOSES = "chooses the queue's ways when it is bound"
VARIANTS: dict[str, Variant] = {
    "SQL Server's procedures": Variant(
        frozenset(
            {"workbench.db.procedures", *(f"workbench.db.rules.mssql_{m}" for m in ("parts", "operator", "script"))}
        ),
        frozenset(
            {
                "procedures",
                "Procedures",
                "_procedures",
                "by_procedures",
                "writes_by_procedures",
                "procedures_of",
                "ProceduresOf",
                "ProceduresRevoked",
                "_ByProcedures",
                "for_user",
                "calls",
                "Calls",
                "Own",
                "OWN",
                "edits_json",
            }
        ),
        {
            "db/procedures.py": "the way: the queue's operations as calls of its procedures",
            "db/rules/mssql_operator.py": "the procedures' script (an operator's)",
            "db/rules/mssql_script.py": "the procedures' script (undo, a supervisor's, the script)",
            "db/enforcement.py": _CHOOSES,
            "db/backends/mssql.py": "offers it: SQL Server under `workbench grants`",
            "db/backends/base.py": "says what every backend answers: that it offers none",
            # The procedures build on the guarded writes, which build on enforcement.py: the one who binds a
            # queue hands the finder of its procedures in (enforcement.of(…, procedures.of)), and `workbench
            # grants` the script's writer to SQL Server's backend (backends.base.Scripts).
            "db/service.py": "binds each queue: hands its Enforcement the finder of the procedures",
            "services/admin.py": "`workbench grants`: hands SQL Server's backend the script's writer",
        },
    ),
    "PostgreSQL's trusted functions": Variant(
        frozenset({"workbench.db.trusted", "workbench.db.rules.pg_trusted"}),
        frozenset(
            {
                "TrustedComplete",
                "trusted_next",
                "trusted_complete",
                "function_gone",
                "callable_next",
                "callable_complete",
                "next_call",
                "complete_call",
                "is_missing_function",
                "TrustedClaim",
            }
        ),
        {
            "db/trusted.py": "the way of a Complete",
            "db/claims/pg_trusted.py": "the way of a claim",
            "db/rules/pg_trusted.py": "the functions as `workbench grants` makes them",
            "db/rules/pg_names.py": "the functions' names and calls, rendered",
            "db/pg_grants.py": "`workbench grants` installs them",
            "db/enforcement.py": _CHOOSES,
            "db/claims/pg_next.py": "chooses the way of PostgreSQL's Next item",
        },
    ),
    "the PL/pgSQL claim function": Variant(
        frozenset({"workbench.db.claims.pg_function"}),
        frozenset({"FunctionCall"}),
        {
            "db/claims/pg_function.py": "the way",
            "db/claims/pg_next.py": "chooses the way of PostgreSQL's Next item",
        },
    ),
    "the prepared one statement": Variant(
        frozenset({"workbench.db.fastpath", "workbench.db.one_statement"}),
        frozenset(
            {
                "FastStatement",
                "HeldConnections",
                "SetupRefused",
                "OneStatement",
                "one_statement",
                "one_statement_of",
                "one_statement_writes",
            }
        ),
        {
            "db/fastpath.py": "the prepared statement on libpq",
            "db/batches.py": "MySQL/MariaDB's batches run on the same fast pool (fastpath.HeldConnections)",
            "db/one_statement.py": "the way of a write",
            "db/claims/postgresql.py": "the way of a claim: the one statement, prepared",
            "db/enforcement.py": _CHOOSES,
            "db/backends/postgresql.py": "offers it",
            "db/backends/base.py": "says what every backend answers: that it offers none, the fast pool",
            # The trusted Complete function's body is the Complete's one statement.
            "db/pg_grants.py": "`workbench grants` makes the trusted Complete of its one statement",
            # The other PostgreSQL ways run their calls as prepared statements too.
            "db/trusted.py": "runs the trusted Complete as a prepared statement",
            "db/claims/pg_trusted.py": "runs the trusted claim as a prepared statement",
            "db/claims/pg_function.py": "runs the function's call as a prepared statement",
        },
    ),
    "MySQL/MariaDB's batches": Variant(
        frozenset({"workbench.db.batches", "workbench.db.batch_writes"}),
        frozenset(
            {
                "FinishBatch",
                "BatchConnections",
                "BatchedComplete",
                "finish_batch",
                "_finish_batch",
                "REMEMBER_CHANGED",
                "sends_batches",
                "_sends_batches",
            }
        ),
        {
            "db/batches.py": "several prepared statements in one round trip",
            "db/batch_writes.py": "the way of a Complete",
            "db/claims/batched.py": "the way of a claim",
            "db/enforcement.py": _CHOOSES,
            "db/backends/mysql.py": "offers it (through PyMySQL)",
        },
    ),
    "two steps": Variant(
        frozenset({"workbench.db.two_steps"}),
        frozenset({"TwoSteps"}),
        {"db/two_steps.py": "the way", "db/enforcement.py": _CHOOSES},
    ),
}


@dataclasses.dataclass(frozen=True)
class Names:
    """What one file names, gathered in one walk of its tree (then asked once per way)."""

    imports: list[tuple[frozenset[str], str, int]]  # (the modules an import names, the name it binds, its line)
    used: dict[str, set[int]]  # identifier or attribute name -> the lines it is on


def names_in(tree: ast.AST) -> Names:
    """The imports and the names of `tree`: an identifier, an attribute, a definition's or an argument's name."""
    imports: list[tuple[frozenset[str], str, int]] = []
    used: dict[str, set[int]] = {}
    for node in ast.walk(tree):
        name = None
        if isinstance(node, ast.Import):
            for alias in node.names:
                imports.append((frozenset({alias.name}), alias.asname or alias.name, node.lineno))
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                modules = frozenset({node.module, f"{node.module}.{alias.name}"})
                imports.append((modules, alias.asname or alias.name, node.lineno))
        elif isinstance(node, ast.Name):
            name = node.id
        elif isinstance(node, ast.Attribute):
            name = node.attr
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            name = node.name
        elif isinstance(node, (ast.arg, ast.keyword)):
            name = node.arg
        if name is not None:
            used.setdefault(name, set()).add(node.lineno)
    return Names(imports, used)


def _named(tree: ast.AST | Names, variant: Variant) -> set[int]:
    """The lines of `tree` that name `variant`: an import of its modules, a name bound by one, an
    identifier or attribute of its own."""
    names = tree if isinstance(tree, Names) else names_in(tree)
    bound: set[str] = set()
    lines: set[int] = set()
    for modules, name, line in names.imports:
        if modules & variant.modules:
            lines.add(line)
            bound.add(name)
    for name in variant.names | bound:
        lines.update(names.used.get(name, ()))
    return lines


def outside() -> dict[str, dict[str, list[int]]]:
    """Per way: each file outside its owners that names it, and the lines."""
    found: dict[str, dict[str, list[int]]] = {}
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        names = names_in(ast.parse(path.read_text(encoding="utf-8"), str(path)))  # one walk for all the ways
        for way, variant in VARIANTS.items():
            if rel in variant.owners:
                continue
            lines = _named(names, variant)
            if lines:
                found.setdefault(way, {})[rel] = sorted(lines)
    return found


def count() -> dict[str, int]:
    """Lines naming a way outside its owners, per file (a line naming two ways counts once)."""
    per_file: dict[str, set[int]] = {}
    for files in outside().values():
        for rel, lines in files.items():
            per_file.setdefault(rel, set()).update(lines)
    return {rel: len(lines) for rel, lines in sorted(per_file.items())}


def test_variant_names_appear_only_in_their_own_modules() -> None:
    found = outside()
    where = [
        f"workbench/{rel}:{line} names {way}"
        for way, files in found.items()
        for rel, lines in files.items()
        for line in lines
    ]
    assert where == [], (
        "state the operation and let the way its queue was bound with run it (db/writes.py, db/enforcement.py), "
        "or, where the file is the way's own, add it with a reason to VARIANTS' owners:\n" + "\n".join(where)
    )


def test_the_count_sees_what_it_looks_for() -> None:
    sample = ast.parse(
        "from workbench.db import batches, procedures as p\n"
        "x = p.of(1)\n"
        "def f(calls):\n"
        "    return calls.run()  # procedures in a comment\n"
        "y = 'trusted_next'\n"
        "z = e.trusted_next()\n"
    )
    assert _named(sample, VARIANTS["SQL Server's procedures"]) == {1, 2, 3, 4}
    assert _named(sample, VARIANTS["MySQL/MariaDB's batches"]) == {1}
    assert _named(sample, VARIANTS["PostgreSQL's trusted functions"]) == {6}
    # Every owner named is there and names its way: the list allows nothing it does not need.
    for variant in VARIANTS.values():
        for rel in variant.owners:
            assert _named(ast.parse((ROOT / rel).read_text(encoding="utf-8")), variant), rel


if __name__ == "__main__":
    for rel, n in count().items():
        print(f"{n:4d}  workbench/{rel}")
    print(f"{sum(count().values()):4d}  lines in {len(count())} files")
