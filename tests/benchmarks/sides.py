"""claim_bench's two sides: this tree's workbench against another tree's (`--reference TREE`) or against a
copy of itself (`--aa`), both built and run alike, so that a this/ref ratio tells the code apart and
nothing else.

What is the same for both sides: the fill (this tree's harness, one `INSERT … SELECT`), the initialisation
(`init`, `attach_all`, `VACUUM ANALYZE`) in a process of the side's own tree, the claimers spawned with the
side's tree first on `sys.path`, the top-up to `--rows` waiting rows before every run. What alternates: which
side's database is built first (from contender to contender) and which side runs first (from round to
round); a contender's two sides run one right after the other, so that both see the same machine.
"""

from __future__ import annotations

import shutil
import statistics
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import TypeVar

THIS_TREE = Path(__file__).resolve().parents[2]  # the checkout this benchmark runs from

K = TypeVar("K", bound=Hashable)


def prepare(tree: str | Path) -> Path:
    """`tree` as a reference: its absolute path, with `workbench/resources` where its workbench finds it
    (a `git archive` has the folder `resources` at the top only; the installed package maps it)."""
    root = Path(tree).resolve()
    if not (root / "workbench" / "__init__.py").is_file():
        raise SystemExit(f"--reference {tree}: no workbench package in it")
    resources = root / "workbench" / "resources"
    if not resources.exists() and (root / "resources").is_dir():
        resources.symlink_to(Path("..") / "resources")
        print(f"reference: linked {resources} -> ../resources (as the installed package has it)", flush=True)
    return root


def copy_of_this_tree(dest: Path) -> Path:
    """This tree's code as it is on disk (uncommitted changes included), copied to `dest` to be the
    reference of an A/A run: the same code, built and run as any reference is. Its bytecode comes along
    (valid for the copied sources, whose times the copy keeps): the reference's first processes would
    otherwise compile every module that this tree's load compiled."""
    ignore = shutil.ignore_patterns(".pytest_cache")
    for folder in ("workbench", "tests", "resources"):
        shutil.copytree(THIS_TREE / folder, dest / folder, ignore=ignore, symlinks=True)
    return prepare(dest)


def build_order(pairs: Sequence[tuple[K, K]]) -> list[K]:
    """Each contender's two sides (this, reference) built one after the other, the side built first
    alternating from contender to contender (which database is created first, its OIDs, what the
    server did just before, fall on both sides alike)."""
    order: list[K] = []
    for number, (this, ref) in enumerate(pairs):
        order += [this, ref] if number % 2 == 0 else [ref, this]
    return order


def schedule(groups: Sequence[Sequence[K]], rounds: int) -> list[list[K]]:
    """The runs of each round. A group is a contender alone or a contender's two sides, run as a
    block; the blocks' order reverses from round to round, a pair's order flips from round to round
    (the pairs starting alternately in the first round). Where the flip would run one database twice in
    a row across two rounds, the first block keeps its order instead: with two or more blocks this keeps
    every side first in half of every four rounds and never repeats a database; with one pair alone
    (ABBA) both sides repeat in turn."""
    orders = [list(group) if number % 2 == 0 else list(group)[::-1] for number, group in enumerate(groups)]
    indexes = list(range(len(groups)))
    out: list[list[K]] = []
    for number in range(rounds):
        visit = indexes if number % 2 == 0 else indexes[::-1]
        if number:
            for at, index in enumerate(visit):
                flipped = orders[index][::-1]
                repeats = at == 0 and len(groups) > 1 and flipped[0] == out[-1][-1]
                if not repeats:
                    orders[index] = flipped
        out.append([key for index in visit for key in orders[index]])
    return out


def ratios(this: Sequence[float], ref: Sequence[float]) -> list[float]:
    """Round by round, this side's figure over the reference's (NaN where the reference's is 0 or NaN)."""
    return [a / b if b and b == b else float("nan") for a, b in zip(this, ref, strict=True)]


def spread(values: Sequence[float]) -> str:
    """Each round's ratio, their median and min–max, as one line's tail."""
    finite = [v for v in values if v == v]
    if not finite:
        return "-"
    each = ", ".join(f"{v:.2f}" for v in values)
    return f"{each}; median {statistics.median(finite):.2f}, min–max {min(finite):.2f}–{max(finite):.2f}"
