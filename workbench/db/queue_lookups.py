"""An operator's lookups on one queue: a column whose value is a key of another table (search, resolve, check)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa

from workbench.core import errors, models
from workbench.db import audit as audit_mod
from workbench.db import connect, lookups, mapping
from workbench.db import names as names_mod


class QueueLookups:
    """The lookups of workqueue.WorkQueue: what a picker offers and what a Save may store."""

    db: connect.Database
    q: mapping.BoundQueue
    trail: audit_mod.AuditTrail
    name: str

    def has_lookup(self, column: str) -> bool:
        """Is `column` (in any case) a lookup of this queue?"""
        try:
            return bool(self.q.lookups) and names_mod.resolve_name(column, self.q.lookups) is not None
        except names_mod.AmbiguousName:
            return False

    def lookup(self, column: str) -> lookups.Lookup:
        """The lookup of `column` (its name in any case); InvalidValue when it has none."""
        name = names_mod.resolve_name(column, self.q.lookups) if self.q.lookups else None
        if name is None:
            having = ", ".join(self.q.lookups) or "none"
            raise errors.InvalidValue(
                f"{column}: not a lookup of queue {self.name} (its lookups: {having})", column=column
            )
        return self.q.lookups[name]

    def lookup_search(self, column: str, text: str, limit: int = lookups.SEARCH_LIMIT) -> list[models.Choice]:
        """The related rows a picker offers for `text`: display starting with it first, then containing it."""
        found = self.lookup(column)
        return self.db.read(lambda conn: found.search(conn, text, limit))

    def lookup_search_start(
        self, column: str, text: str, limit: int = lookups.SEARCH_LIMIT
    ) -> tuple[list[models.Choice], bool]:
        """What a picker shows at once for `text`, and whether lookup_search_inside may add rows."""
        found = self.lookup(column)
        return self.db.read(lambda conn: found.search_start(conn, text, limit))

    def lookup_search_inside(self, column: str, text: str, limit: int = lookups.SEARCH_LIMIT) -> list[models.Choice]:
        """The related rows containing `text` but not starting with it (after lookup_search_start)."""
        found = self.lookup(column)
        return self.db.read(lambda conn: found.search_inside(conn, text, limit))

    def lookup_resolve(self, column: str, keys: list[Any]) -> dict[Any, models.Choice]:
        """The related rows of these keys, by key (the form shows a stored key as its display text)."""
        found = self.lookup(column)
        return self.db.read(lambda conn: found.resolve(conn, keys))

    def lookup_value(self, column: str, raw: Any) -> Any:
        """What the command line's `--set col=TEXT` stores in a lookup column: TEXT when it is a key of
        the related table, else the key of the one row whose display is TEXT (whatever the case);
        InvalidValue names the candidates when several rows have it, or says none does."""
        found = self.lookup(column)
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            return raw

        def pick(conn: sa.Connection) -> Any:
            as_key = found.resolve(conn, [raw])
            if as_key:  # the key as the related table writes it (MariaDB's collation matches "acme" to "Acme")
                return next(iter(as_key.values())).key
            named = found.named(conn, str(raw))
            if len(named) == 1:
                return named[0].key
            if named:
                listed = "; ".join(f"{c.key} = {c.text}" for c in named)
                raise errors.InvalidValue(
                    f"{found.field}: {len(named)}{'+' if len(named) >= 10 else ''} rows of {found.label} "
                    f"are named '{raw}': {listed}; give the key instead",
                    column=found.field,
                )
            near = found.search(conn, str(raw), 5)
            hint = f"; similar: {', '.join(c.text for c in near)}" if near else ""
            raise errors.InvalidValue(
                f"{found.field}: no row of {found.label} has the key or the {found.display.name} '{raw}'{hint}",
                column=found.field,
            )

        return self.db.read(pick)

    def _check_lookups(self, values: Mapping[str, Any]) -> None:
        """Refuse a lookup value its related table does not have (before the write: one short read)."""
        looked_up = {name: v for name, v in values.items() if name in self.q.lookups}
        if looked_up:
            self.db.read(lambda conn: lookups.check_values(conn, self.q.lookups, looked_up))
