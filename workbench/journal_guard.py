"""The journal as the window uses it: a disk that is full or read-only never stops the work (no Qt here).

The database is the primary store; the journal is the safety net for edits not yet saved. So a
journal write that fails must not drop the Save or Complete it came with, nor claim the edits
are on disk. GuardedJournal catches the failure, keeps the unwritten drafts (and removals) in
memory, reports one Problem, and writes them out as soon as the disk takes them again.
"""

from __future__ import annotations

import dataclasses
import errno
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from workbench import journal as journal_mod

log = logging.getLogger("workbench.journal")


@dataclasses.dataclass(frozen=True)
class Problem:
    """Why the journal cannot be written: what failed, where, and the system's reason."""

    action: str  # "open", "read", "write" or "remove"
    directory: Path
    reason: str  # the system's own words, e.g. "No space left on device"
    errno: int | None

    def advice(self) -> str:
        """What the user can do about it: "space", "permissions", "file" (a file where a folder
        should be) or "disk" (anything else)."""
        if self.errno in (errno.ENOSPC, errno.EDQUOT):
            return "space"
        if self.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            return "permissions"
        if self.errno in (errno.ENOTDIR, errno.EEXIST):
            return "file"
        return "disk"


def _problem(action: str, directory: Path, exc: OSError) -> Problem:
    return Problem(action, directory, exc.strerror or str(exc), exc.errno)


# One pending operation per item: the draft to write, or None for "remove its file".
_Pending = dict[str, journal_mod.Draft | None]


class GuardedJournal:
    """Journal's interface, but save/discard never raise OSError: they return False, keep the
    operation in memory (so load/drafts still see it) and retry it on the next call or retry()."""

    def __init__(
        self, directory: Path, on_problem: Callable[[Problem | None], None] | None = None, *, owner: str | None = None
    ) -> None:
        self.directory = Path(directory)
        # The user whose drafts are kept here: those still in the parent folder, where every user's
        # drafts were kept before, are moved in when the folder opens (journal.adopt).
        self.owner = owner
        self.on_problem = on_problem  # called with the new problem, or None once it is solved
        self.problem: Problem | None = None
        self._journal: journal_mod.Journal | None = None
        self._pending: _Pending = {}
        self._open()

    # -- the Journal interface ---------------------------------------------------------------------

    def save(self, draft: journal_mod.Draft) -> bool:
        """Write the draft; False if it is only held in memory for now (see `problem`)."""
        journal_mod.check(draft)  # a draft that cannot be journalled raises TypeError here, as before
        self._pending[journal_mod.entry_name(draft.database, draft.queue, draft.key)] = draft
        return self.retry()

    def discard(self, database: str, queue: str, key: Any) -> bool:
        """Remove the item's draft; False if the removal is only noted in memory for now."""
        self._pending[journal_mod.entry_name(database, queue, key)] = None
        return self.retry()

    def load(self, database: str, queue: str, key: Any) -> journal_mod.Draft | None:
        name = journal_mod.entry_name(database, queue, key)
        if name in self._pending:
            return self._pending[name]  # newer than the file, if any
        if self._journal is None:
            return None
        try:
            return self._journal.load(database, queue, key)
        except OSError as exc:
            self._set_problem(_problem("read", self.directory, exc))
            return None

    def drafts(
        self, database: str | None = None, queue: str | None = None, owner: str | None = None
    ) -> list[journal_mod.Draft]:
        found: list[journal_mod.Draft] = []
        if self._journal is not None:
            try:
                found = self._journal.drafts(database, queue, owner)
            except OSError as exc:
                self._set_problem(_problem("read", self.directory, exc))
        found = [d for d in found if journal_mod.entry_name(d.database, d.queue, d.key) not in self._pending]
        found += [
            d
            for d in self._pending.values()
            if d is not None
            and (database is None or d.database == database)
            and (queue is None or d.queue == queue)
            and (owner is None or d.owner == owner)
        ]
        found.sort(key=journal_mod.updated_at, reverse=True)
        return found

    # -- failures ----------------------------------------------------------------------------------

    def unwritten(self) -> list[journal_mod.Draft]:
        """Drafts that exist only in memory: closing the program now would lose them."""
        return [d for d in self._pending.values() if d is not None]

    def retry(self) -> bool:
        """Write out everything held in memory; True when the journal is fully on disk again."""
        for _attempt in range(2):
            if self._journal is None and not self._open():
                return False
            failed = self._flush()
            if failed is None:
                self._set_problem(None)
                return True
            action, exc = failed
            if exc.errno == errno.ENOENT:
                self._journal = None  # the folder itself went away: make it again, once, now
                continue
            break
        self._set_problem(_problem(action, self.directory, exc))
        return False

    def _flush(self) -> tuple[str, OSError] | None:
        """Write the pending operations in order; the first failure (action, error), or None."""
        assert self._journal is not None
        for name, draft in list(self._pending.items()):
            try:
                if draft is None:
                    self._journal.discard_entry(name)
                else:
                    self._journal.save(draft)
            except OSError as exc:
                return ("remove" if draft is None else "write"), exc
            del self._pending[name]
        return None

    def _open(self) -> bool:
        try:
            self._journal = journal_mod.Journal(self.directory)
        except OSError as exc:
            self._set_problem(_problem("open", self.directory, exc))
            return False
        if self.owner is not None:
            try:
                journal_mod.adopt(self.directory.parent, self._journal, self.owner)
            except OSError as exc:  # they stay where they are, for the next start to try again
                log.warning("journal: could not move %s's drafts from %s: %s", self.owner, self.directory.parent, exc)
        return True

    def _set_problem(self, problem: Problem | None) -> None:
        if problem == self.problem:
            return
        if problem is not None:
            log.warning("journal: %s failed in %s: %s", problem.action, problem.directory, problem.reason)
        elif self.problem is not None:
            log.info("journal: %s is writable again", self.directory)
        self.problem = problem
        if self.on_problem is not None:
            self.on_problem(problem)
