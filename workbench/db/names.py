"""The one rule every configured table and column name is found by, whatever case the database keeps."""

from __future__ import annotations

from collections.abc import Iterable


class AmbiguousName(ValueError):
    """A name written in a case none of the database's names has, and two or more differ from it only in case."""

    def __init__(self, name: str, matches: list[str]) -> None:
        self.name, self.matches = name, sorted(matches)
        super().__init__(
            f"'{name}' is not there as written, and {' and '.join(repr(m) for m in self.matches)} "
            "differ from it only in case: write the name exactly as one of them"
        )


def resolve_name(name: str, names: Iterable[str]) -> str | None:
    """The one rule every configured table and column name is found by: the name as written, else the one
    name that differs from it only in case; None when there is neither, AmbiguousName when several differ
    only in case.

    One config serves every database: PostgreSQL folds unquoted names to lower case (`tblqueue`,
    `lockuser`), SQL Server, MariaDB and SQLite keep them as the script wrote them (`tblQueue`, `LockUser`).
    """
    names = list(names)
    if name in names:
        return name
    folded = [n for n in names if n.casefold() == name.casefold()]
    if len(folded) > 1:
        raise AmbiguousName(name, folded)
    return folded[0] if folded else None
