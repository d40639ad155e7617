"""The supervisor's confirmations: force release, reassign, reopen and move, each with a required reason."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from PySide6.QtCore import QCoreApplication, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QVBoxLayout,
    QWidget,
)

translate = QCoreApplication.translate  # lupdate reads translate(context, text) calls

# Reasons as the audit trail records them (supervisors filter and count them): not translated,
# like the operator's release reasons (dialogs.RELEASE_REASONS).
FORCE_REASONS = ("Holder is absent", "Stuck too long", "Customer escalated", "Shift ended", "Needs another team")


def _placeholder(combo: QComboBox, text: str) -> None:
    """The hint an editable combo box shows while its text is empty: its line edit's."""
    edit = combo.lineEdit()
    assert edit is not None  # an editable QComboBox always has its line edit
    edit.setPlaceholderText(text)


class _ReasonDialog(QDialog):
    """A message, a reason (from a list or typed; required) and a confirm button named for the action."""

    def __init__(self, name: str, title: str, text: str, confirm: str, parent: QWidget | None) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.setWindowTitle(title)
        self.layout_ = QVBoxLayout(self)
        self.message = QLabel(text)
        self.message.setWordWrap(True)
        self.layout_.addWidget(self.message)
        self.form = QFormLayout()
        self.layout_.addLayout(self.form)
        self.reason_box = QComboBox()
        self.reason_box.setObjectName("reason")
        self.reason_box.setEditable(True)
        self.reason_box.addItems(FORCE_REASONS)
        self.reason_box.setCurrentText("")
        _placeholder(self.reason_box, self.tr("required: the holder is shown it"))
        self.form.addRow(self.tr("&Reason:"), self.reason_box)
        self.problem = QLabel("")
        self.problem.setObjectName("dialog_problem")
        self.layout_.addWidget(self.problem)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.confirm = buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.confirm.setText(confirm)
        self.confirm.setObjectName("confirm")
        buttons.accepted.connect(self._on_ok)
        buttons.rejected.connect(self.reject)
        self.layout_.addWidget(buttons)
        # Room for the message and the reason's placeholder in every language (they wrapped and were cut).
        self.setMinimumWidth(460)

    def reason(self) -> str:
        return self.reason_box.currentText().strip()

    def problems(self) -> str:
        return "" if self.reason() else self.tr("Give a reason: the holder sees it, and it goes into the history.")

    @Slot()
    def _on_ok(self) -> None:
        problem = self.problems()
        if problem:
            self.problem.setText(problem)
            return
        self.accept()


# As typed into the audit trail (data: not translated, like FORCE_REASONS).
REOPEN_REASONS = ("Customer says it still fails", "Completed by mistake", "Needs another look")


class ReopenDialog(_ReasonDialog):
    def __init__(self, title: str, key: str, parent: QWidget | None = None) -> None:
        super().__init__("reopen_dialog", "", "", "", parent)
        self.setWindowTitle(self.tr("Reopen"))
        self.message.setText(
            self.tr(
                "Put {0} {1} back to waiting, with the queue's reopen values? It is served "
                "again in its place in the queue."
            ).format(title, key)
        )
        self.confirm.setText(self.tr("Reopen"))
        self.reason_box.clear()
        self.reason_box.addItems(REOPEN_REASONS)
        self.reason_box.setCurrentText("")
        _placeholder(self.reason_box, self.tr("required: kept in the item's history"))

    def problems(self) -> str:
        return "" if self.reason() else self.tr("Give a reason: it goes into the item's history.")


def _items(rows: list[Any], titles: Mapping[str, str]) -> str:
    """The locks' items as people know them: each queue by its title ("Helpdesk cases 7"), not its key."""
    return ", ".join(f"{titles.get(r.queue, r.queue)} {r.key}" for r in rows[:8]) + (" …" if len(rows) > 8 else "")


class ForceReleaseDialog(_ReasonDialog):
    def __init__(self, rows: list[Any], parent: QWidget | None = None, titles: Mapping[str, str] | None = None) -> None:
        super().__init__("force_release_dialog", "", "", "", parent)
        # The texts once the dialog exists: a count (%n) is read by lupdate only in self.tr(), and from
        # a plain name, not a call.
        holders = sorted({r.owner for r in rows})
        items = _items(rows, titles or {})
        count = len(rows)
        self.setWindowTitle(self.tr("Force release"))
        text = self.tr("Take %n item(s) away from {0} and put them back in the queue?", "", count).format(
            ", ".join(holders)
        )
        text += f"\n{items}"
        # Locks workbench did not take: no window of ours to tell, and the other program goes on.
        programs = sorted({r.owner for r in rows if getattr(r, "foreign", False)})
        if not all(getattr(r, "foreign", False) for r in rows):
            text += "\n\n" + self.tr(
                "Their windows say who did it and why within a few seconds; unsaved edits stay with them as a draft."
            )
        if programs:
            text += "\n\n" + self.tr(
                "Held by another program (under {0}): workbench did not take these locks, and that program "
                "is not told. Release them only when it no longer works on them."
            ).format(", ".join(programs))
        self.message.setText(text)
        self.confirm.setText(self.tr("Force release %n item(s)", "", count))


class ReassignDialog(_ReasonDialog):
    """Move one lock, or several (a supervisor's bulk action), to another operator."""

    def __init__(
        self,
        rows: list[Any],
        holders: list[str],
        parent: QWidget | None = None,
        titles: Mapping[str, str] | None = None,
    ) -> None:
        titles = titles or {}
        if len(rows) == 1:
            row = rows[0]
            text = translate(
                "ReassignDialog",
                "Move {0} {1} from {2} to another operator? It is locked to them with "
                "a fresh lock; {2}'s window says who did it and why, and keeps any unsaved edits as a "
                "draft.",
            ).format(titles.get(row.queue, row.queue), row.key, row.owner)
        else:
            items = _items(rows, titles)
            text = translate(
                "ReassignDialog",
                "Move these items from {0} to another operator? Each is locked to "
                "them with a fresh lock; each holder's window says who did it and why, and keeps any "
                "unsaved edits as a draft.",
            ).format(", ".join(sorted({r.owner for r in rows})))
            text += f"\n{items}"
        super().__init__(
            "reassign_dialog",
            translate("ReassignDialog", "Reassign"),
            text,
            translate("ReassignDialog", "Reassign"),
            parent,
        )
        self.user_box = QComboBox()
        self.user_box.setObjectName("to_user")
        self.user_box.setEditable(True)
        self.user_box.addItems(holders)
        self.user_box.setCurrentText("")
        self.form.insertRow(0, self.tr("&To:"), self.user_box)
        self._from = {r.owner for r in rows}

    def to_user(self) -> str:
        return self.user_box.currentText().strip()

    def problems(self) -> str:
        if not self.to_user():
            return self.tr("Name the operator who takes the item over.")
        if {self.to_user()} == self._from:
            return self.tr("{0} already holds it.").format(self.to_user())
        return super().problems()


# As typed into the audit trail (data: not translated, like FORCE_REASONS).
MOVE_REASONS = ("Needs level 2", "Belongs to another team", "Reprioritised", "Wrong category on import")


class MoveDialog(_ReasonDialog):
    """A bulk move: every waiting item nobody holds whose column holds a value gets another value in a
    column (another category, tier, team), with a reason kept in each item's history.

    `load_values(column, done)` reads the values waiting items hold in `column` off the GUI thread and
    calls `done(values)` on it.
    """

    def __init__(
        self,
        title: str,
        fields: list[Any],
        load_values: Callable[[str, Callable[[list[Any]], None]], None],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__("move_dialog", "", "", "", parent)
        self.setWindowTitle(self.tr("Move waiting items"))
        self.message.setText(
            self.tr(
                "Change the waiting items of {0} that nobody holds. Items someone holds, and "
                "finished ones, stay as they are."
            ).format(title)
        )
        self.confirm.setText(self.tr("Move"))
        self.reason_box.clear()
        self.reason_box.addItems(MOVE_REASONS)
        self.reason_box.setCurrentText("")
        _placeholder(self.reason_box, self.tr("required: kept in each item's history"))
        self._fields = {spec.name: spec for spec in fields}
        self._load_values = load_values
        self.where_column = self._columns("where_column", self.tr("Items whose column"))
        self.where_value = self._values("where_value", self.tr("holds the value"))
        self.set_column = self._columns("set_column", self.tr("Column to change"))
        self.set_value = self._values("set_value", self.tr("New value"))
        where = self._pair(self.where_column, self.tr("is"), self.where_value)
        change = self._pair(self.set_column, self.tr("to"), self.set_value)
        self.form.insertRow(0, self.tr("&Items whose:"), where)
        self.form.insertRow(1, self.tr("&Set:"), change)
        for row, box in ((where, self.where_column), (change, self.set_column)):
            label = self.form.labelForField(row)
            if isinstance(label, QLabel):  # the row's label names its column list for a screen reader
                label.setBuddy(box)
            box.setCurrentIndex(max(0, box.findData(self._first_to_move_by())))
        self.where_column.currentIndexChanged.connect(self._where_changed)
        self.set_column.currentIndexChanged.connect(self._set_changed)
        self._where_changed()
        self._set_changed()

    def _first_to_move_by(self) -> str | None:
        """The column offered first: one with a list of values (a category, a team), else a short value; a
        time was offered first ("Opened at is 2026-11-28 22:14:00"), which no move is made by (issue 53)."""
        ranked = sorted(
            self._fields.values(),
            key=lambda spec: (
                not spec.choices,
                spec.kind in ("date", "datetime", "time", "multiline", "decimal", "float"),
                spec.read_only,
            ),
        )
        return ranked[0].name if ranked else None

    def _columns(self, name: str, accessible: str) -> QComboBox:
        box = QComboBox()
        box.setObjectName(name)
        box.setAccessibleName(accessible)
        for spec in self._fields.values():
            box.addItem(spec.label, spec.name)
        return box

    def _values(self, name: str, accessible: str) -> QComboBox:
        box = QComboBox()
        box.setObjectName(name)
        box.setAccessibleName(accessible)
        box.setEditable(True)
        box.setMinimumContentsLength(14)
        return box

    @staticmethod
    def _pair(first: QWidget, word: str, second: QWidget) -> QWidget:
        row = QWidget()
        layout = QHBoxLayout(row)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(first, 1)
        layout.addWidget(QLabel(word))
        layout.addWidget(second, 1)
        return row

    @Slot()
    def _where_changed(self) -> None:
        column = self.where_column.currentData()
        self.where_value.clear()
        if column is None:
            return
        _placeholder(self.where_value, self.tr("Loading…"))

        def show(values: list[Any]) -> None:
            if self.where_column.currentData() != column:
                return  # the supervisor chose another column meanwhile
            typed = self.where_value.currentText()
            self.where_value.clear()
            self.where_value.addItems([str(v) for v in values])
            self.where_value.setCurrentText(typed or (str(values[0]) if values else ""))
            _placeholder(
                self.where_value, self.tr("a value") if values else self.tr("no waiting item has a value here")
            )

        self._load_values(column, show)

    @Slot()
    def _set_changed(self) -> None:
        spec = self._fields.get(self.set_column.currentData())
        self.set_value.clear()
        if spec is not None and spec.choices:
            self.set_value.addItems([str(c) for c in spec.choices])
        self.set_value.setCurrentText("")
        _placeholder(
            self.set_value,
            self.tr("empty: no value") if spec is not None and not spec.required else self.tr("required"),
        )

    def where(self) -> dict[str, str]:
        return {self.where_column.currentData(): self.where_value.currentText().strip()}

    def changes(self) -> dict[str, str]:
        return {self.set_column.currentData(): self.set_value.currentText().strip()}

    def problems(self) -> str:
        if not self.where_value.currentText().strip():
            return self.tr("Say which items: a value of the column they are chosen by.")
        if (
            self.where_column.currentData() == self.set_column.currentData()
            and self.where_value.currentText().strip() == self.set_value.currentText().strip()
        ):
            return self.tr("The new value is the one they have: choose another.")
        return super().problems() and self.tr("Give a reason: it goes into each item's history.")
