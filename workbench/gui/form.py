"""The edit form, generated from the queue's field specs: one editor per column, errors at the field."""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

from PySide6.QtCore import QCoreApplication, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from workbench import fieldspec
from workbench.core import errors
from workbench.gui import problem_text
from workbench.gui.i18n import QT_TRANSLATE_NOOP
from workbench.gui.lookup_field import LookupEdit, LookupSource

_PLACEHOLDERS = {  # translated where shown
    "integer": QT_TRANSLATE_NOOP("RecordForm", "a whole number"),
    "decimal": QT_TRANSLATE_NOOP("RecordForm", "a number, e.g. 12.50"),
    "float": QT_TRANSLATE_NOOP("RecordForm", "a number"),
    # The formats the fields accept (fieldspec.validate): the same in every language.
    "date": "YYYY-MM-DD",
    "datetime": "YYYY-MM-DD HH:MM",
    "time": "HH:MM",
}
_NUMERIC = ("integer", "decimal", "float")
_ORIGIN_WIDTH = 260  # px beside an editor for "As imported: …"; longer values are elided
# What a field edits its value with (_Field._make_editor): set() and raw() tell them apart.
Editor = QCheckBox | QComboBox | QPlainTextEdit | QLineEdit  # a LookupEdit is a QLineEdit


def display(value: Any) -> str:
    """How a stored value reads in a text editor."""
    if value is None:
        return ""
    if isinstance(value, dt.datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S" if value.second or value.microsecond else "%Y-%m-%d %H:%M")
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    return str(value)


class _Field:
    """One editor, its label and its error line."""

    def __init__(self, spec: fieldspec.FieldSpec, on_change: Any, lookups: LookupSource | None = None) -> None:
        self.spec, self.lookups = spec, lookups
        self._choices_shown = 0
        self.error = QLabel()
        self.error.setObjectName(f"error_{spec.name}")
        self.error.setProperty("role", "field-error")
        self.error.setWordWrap(True)
        # An editable field keeps a line for its message, shown or not: a message appearing would
        # otherwise grow the form, bring a scrollbar and push its last fields out of view.
        if not spec.read_only:
            self.error.setMinimumHeight(self.error.fontMetrics().lineSpacing())
            keep = self.error.sizePolicy()
            keep.setRetainSizeWhenHidden(True)
            self.error.setSizePolicy(keep)
        self.error.setVisible(False)
        # The value before anyone changed it here (from the audit trail): what was imported. Beside the
        # editor, one line at most (the whole value in its tooltip), so that it does not grow the form.
        self.origin = QLabel()
        self.origin.setObjectName(f"origin_{spec.name}")
        self.origin.setProperty("role", "field-origin")
        self.origin.setMaximumWidth(_ORIGIN_WIDTH)
        self.origin.setVisible(False)
        self.editor = self._make_editor(on_change)
        self.editor.setObjectName(f"field_{spec.name}")
        if spec.help:
            self.editor.setToolTip(spec.help)

    def _make_editor(self, on_change: Any) -> Editor:
        spec = self.spec
        if spec.kind == "boolean":
            box = QCheckBox()
            box.setTristate(not spec.required)
            box.stateChanged.connect(on_change)
            return box
        if spec.kind == "choice" and not spec.read_only:
            combo = QComboBox()
            if not spec.required:
                combo.addItem("", None)
            for choice in spec.choices:
                combo.addItem(str(choice), choice)
            self._choices_shown = combo.count()  # set() adds a stored value outside them, for one item
            combo.currentIndexChanged.connect(on_change)
            return combo
        if spec.lookup is not None:  # a row of another table: searched there, its display text shown
            picker = LookupEdit(spec, self.lookups)
            picker.setReadOnly(spec.read_only)
            picker.textEdited.connect(on_change)
            return picker
        if spec.kind == "multiline":
            text = QPlainTextEdit()
            text.setTabChangesFocus(True)  # Tab moves on, as everywhere else in the form
            text.setMinimumHeight(72)
            text.setReadOnly(spec.read_only)
            text.textChanged.connect(on_change)
            return text
        line = QLineEdit()
        line.setReadOnly(spec.read_only)
        if spec.max_length:
            line.setMaxLength(spec.max_length)
        if spec.kind in _PLACEHOLDERS and not spec.read_only:
            line.setPlaceholderText(QCoreApplication.translate("RecordForm", _PLACEHOLDERS[spec.kind]))
        if spec.kind in _NUMERIC:
            line.setAlignment(Qt.AlignmentFlag.AlignRight)
        line.textEdited.connect(on_change)
        return line

    def set(self, value: Any) -> None:
        editor = self.editor
        editor.blockSignals(True)
        try:
            if isinstance(editor, QCheckBox):
                if value is None:
                    editor.setCheckState(
                        Qt.CheckState.PartiallyChecked if editor.isTristate() else Qt.CheckState.Unchecked
                    )
                else:
                    editor.setChecked(bool(value))
            elif isinstance(editor, QComboBox):
                while editor.count() > self._choices_shown:  # the last item's stray value (the form is reused)
                    editor.removeItem(editor.count() - 1)
                index = editor.findData(value)
                if index < 0 and value is not None:  # a stored value outside the choices: show it
                    editor.addItem(display(value), value)
                    index = editor.count() - 1
                editor.setCurrentIndex(max(index, 0))
            elif isinstance(editor, QPlainTextEdit):
                editor.setPlainText(display(value))
            elif isinstance(editor, LookupEdit):
                editor.set_key(value)
            else:
                editor.setText(display(value))
                editor.setCursorPosition(0)
        finally:
            editor.blockSignals(False)

    def raw(self) -> Any:
        """What the user entered: text (None when empty and the column allows NULL), bool, or a choice."""
        editor = self.editor
        if isinstance(editor, QCheckBox):
            state = editor.checkState()
            return None if state == Qt.CheckState.PartiallyChecked else state == Qt.CheckState.Checked
        if isinstance(editor, QComboBox):
            return editor.currentData()
        if isinstance(editor, LookupEdit):
            return editor.key()
        text = editor.toPlainText() if isinstance(editor, QPlainTextEdit) else editor.text()
        if text.strip() == "" and (self.spec.kind not in ("text", "multiline") or not self.spec.required):
            return None
        return text

    def show_error(self, message: str | None) -> None:
        self.error.setText(message or "")
        self.error.setVisible(bool(message))
        self.set_state("invalid", bool(message))

    def set_state(self, name: str, on: bool) -> None:
        """A style property (invalid, changed, locked: see workbench.qss), re-polished only when it flips."""
        if bool(self.editor.property(name)) != on:
            self.editor.setProperty(name, on)
            self.editor.style().unpolish(self.editor)
            self.editor.style().polish(self.editor)


class RecordForm(QWidget):
    """Shows one item; collects and checks the user's edits.

    Signals:
        edited(): the user changed a value (not emitted when the form is filled by code).
    """

    edited = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("record_form")
        self._fields: dict[str, _Field] = {}
        self._base: dict[str, Any] = {}
        self._editable = True
        self._lookups: LookupSource | None = None  # where lookup fields search (set_lookups)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        self._scroll = QScrollArea()
        self._scroll.setWidgetResizable(True)
        self._scroll.setFrameShape(QFrame.Shape.NoFrame)
        self._scroll.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # no Tab stop of its own: a field scrolls into view
        outer.addWidget(self._scroll)
        self._body = QWidget()
        self._layout = QFormLayout(self._body)
        self._layout.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self._scroll.setWidget(self._body)

    # -- building ------------------------------------------------------------------------------

    def set_lookups(self, source: LookupSource | None) -> None:
        """Where the next set_specs' lookup fields search their related tables (the window's service)."""
        self._lookups = source

    def set_specs(self, specs: list[fieldspec.FieldSpec]) -> None:
        while self._layout.rowCount():
            self._layout.removeRow(0)
        self._fields = {}
        for spec in specs:
            if spec.hidden:
                continue
            field = _Field(spec, self._on_change, self._lookups)
            self._fields[spec.name] = field
            required = spec.required and not spec.read_only
            label = QLabel(spec.label + (" *" if required else ""))
            label.setBuddy(field.editor)
            # A screen reader names the field by its label, without the "*", and says it is required.
            field.editor.setAccessibleName(spec.label)
            if required:
                field.editor.setAccessibleDescription(self.tr("Required"))
            cell = QWidget()
            column = QVBoxLayout(cell)
            column.setContentsMargins(0, 0, 0, 0)
            column.setSpacing(2)
            beside = QHBoxLayout()
            beside.setContentsMargins(0, 0, 0, 0)
            beside.addWidget(field.editor, 1)
            beside.addWidget(field.origin, 0, Qt.AlignmentFlag.AlignTop)
            column.addLayout(beside)
            column.addWidget(field.error)
            self._layout.addRow(label, cell)
        self._apply_editable()

    def names(self) -> list[str]:
        """The fields' columns, top to bottom."""
        return list(self._fields)

    def field(self, name: str) -> QWidget:
        return self._fields[name].editor

    def has_field(self, name: str) -> bool:
        """Is `name` on the form (not hidden)?"""
        return name in self._fields

    def error_text(self, name: str) -> str:
        field = self._fields[name]
        return field.error.text() if field.error.isVisibleTo(self) else ""

    # -- values -----------------------------------------------------------------------------------

    def show_item(self, item: dict[str, Any], draft: dict[str, Any] | None = None) -> None:
        """Fill the form from the row as read; then lay the user's unsaved draft over it."""
        self._base = {name: item.get(name) for name in self._fields}
        for name, field in self._fields.items():
            field.set(item.get(name))
            field.show_error(None)
            field.origin.setVisible(False)
        for name, value in (draft or {}).items():
            if name in self._fields and not self._fields[name].spec.read_only:
                self._fields[name].set(value)
        self._mark_changed()
        self._scroll.verticalScrollBar().setValue(0)

    def show_origins(self, imported: dict[str, Any]) -> None:
        """Beside each field someone changed: the value it had before (as imported), while it differs."""
        for name, field in self._fields.items():
            was = display(imported[name]) if name in imported else None
            # A field imported empty shows nothing: "(empty)" beside it told nothing and narrowed its box.
            differs = bool(was) and was != display(self._base.get(name))
            if differs:
                text = self.tr("As imported: {0}").format(was)
                metrics = field.origin.fontMetrics()
                field.origin.setText(metrics.elidedText(text, Qt.TextElideMode.ElideRight, _ORIGIN_WIDTH))
                field.origin.setToolTip(text)
            field.origin.setVisible(differs)

    def base(self) -> dict[str, Any]:
        return dict(self._base)

    def rebase(self, saved: dict[str, Any]) -> None:
        """These values are now stored: they stop counting as changes. Editors are left alone, so
        anything typed while the save was on its way is still an (unsaved, journalled) change."""
        for name, value in saved.items():
            if name in self._base:
                self._base[name] = value
        self._mark_changed()

    def changes(self) -> dict[str, Any]:
        """Editable fields whose value differs from the row as read (raw, unchecked)."""
        result = {}
        for name, field in self._fields.items():
            if field.spec.read_only:
                continue
            raw = field.raw()
            if not _same(raw, self._base.get(name)):
                result[name] = raw
        return result

    def checked_changes(self) -> dict[str, Any] | None:
        """The changes as typed values, or None after showing what to fix at each bad field."""
        result, problems = {}, {}
        for name, raw in self.changes().items():
            try:
                result[name] = fieldspec.validate(self._fields[name].spec, raw)
            except errors.InvalidValue as exc:
                problems[name] = problem_text.problem(exc)
        for name, field in self._fields.items():
            field.show_error(problems.get(name))
        if problems:
            self._show_first(problems)
            return None
        return result

    def show_errors(self, problems: dict[str, str]) -> None:
        """Show errors the database reported, at their fields."""
        for name, field in self._fields.items():
            field.show_error(problems.get(name))
        if any(name in self._fields for name in problems):
            self._show_first(problems)

    def _show_first(self, problems: dict[str, str]) -> None:
        """Scroll the first field with a problem into view, its message under it, and put the cursor there
        (a field further down the form would otherwise say what to fix where nobody sees it)."""
        field = self._fields[next(name for name in self._fields if name in problems)]
        field.editor.setFocus()

        def scroll() -> None:
            self._scroll.ensureWidgetVisible(field.error)
            self._scroll.ensureWidgetVisible(field.editor)

        # Once the shown messages are laid out and the scroll range has grown for them.
        QTimer.singleShot(0, self, scroll)  # not after the form is gone

    def set_editable(self, editable: bool) -> None:
        self._editable = editable
        self._apply_editable()

    def _apply_editable(self) -> None:
        for field in self._fields.values():
            enabled = self._editable and not field.spec.read_only
            editor = field.editor
            if isinstance(editor, (QLineEdit, QPlainTextEdit)):
                editor.setReadOnly(not enabled)  # still selectable and copyable
                field.set_state("locked", not enabled)
            else:
                editor.setEnabled(enabled)

    def focus_first_editable(self) -> None:
        """Where the operator starts typing: the first empty required field, else the first empty
        field, else the first editable one (so Next → type → Complete needs no Tabs)."""
        editable = [f for f in self._fields.values() if not f.spec.read_only]
        empty = [f for f in editable if _same(f.raw(), None)]
        for field in [f for f in empty if f.spec.required] + empty + editable:
            field.editor.setFocus()
            return

    def _on_change(self, *_: Any) -> None:
        self._mark_changed()
        self.edited.emit()

    def _mark_changed(self) -> None:
        """Fields that differ from the row as read are marked, so the user sees what Save will write."""
        changed = self.changes()
        for name, field in self._fields.items():
            field.set_state("changed", name in changed)


def _same(raw: Any, base: Any) -> bool:
    """Is the entered value the stored one? Text is compared as the editor showed the stored value."""
    if raw is None:
        return base is None or display(base) == ""
    if isinstance(raw, str):
        return raw == display(base)
    return bool(raw == base)
