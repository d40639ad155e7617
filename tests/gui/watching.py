"""Counts a window's reads of who holds its lost item (the lost banner's watch), for waiting on them."""

from __future__ import annotations

from typing import Any

from workbench.gui import main_window


def holder_reads(window: main_window.MainWindow) -> list[Any]:
    """The window's reads of who holds a lost item from now on (each draft_view.Holder), each added once
    the window has taken it in: a wait for N more of them is a wait for N more turns of the watch."""
    reads: list[Any] = []
    check_holder = window.drafts.check_holder

    def counted(queue: str, key: Any, done: Any) -> None:
        def read(holder: Any) -> None:
            done(holder)
            reads.append(holder)

        check_holder(queue, key, read)

    window.drafts.check_holder = counted  # type: ignore[method-assign]
    return reads
