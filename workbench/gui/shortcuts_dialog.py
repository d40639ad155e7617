"""Help ▸ Keyboard shortcuts: every action's keys, changed by the user (a key twice is refused), and
the single-key mode."""

from __future__ import annotations

from PySide6.QtCore import Slot
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QKeySequenceEdit,
    QLabel,
    QLineEdit,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from workbench.gui import a11y, hotkeys


class ShortcutsDialog(QDialog):
    """One row per action with an editor for its key; OK stays off while the keymap has a problem."""

    def __init__(
        self,
        keymap: hotkeys.Keymap,
        outcomes: list[str],
        parent: QWidget | None = None,
        *,
        reserved: hotkeys.Reserved | None = None,
    ) -> None:
        super().__init__(parent)
        self.reserved = reserved or hotkeys.Reserved()  # the window's menu letters and fixed keys
        self.setObjectName("shortcuts_dialog")
        self.setWindowTitle(self.tr("Keyboard shortcuts"))
        layout = QVBoxLayout(self)
        intro = QLabel(
            self.tr(
                "Click a key and press the new combination; the × clears it. Tab and Shift+Tab "
                "move between fields; Enter opens the selected item in lists. In a note box, Ctrl+Return "
                "sends the note: beside the form it adds the note, in the Release, Defer and Complete "
                "dialogs it confirms the dialog."
            )
        )
        intro.setObjectName("intro")
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.action_names = list(hotkeys.DEFAULTS)
        self.table = QTableWidget(len(self.action_names), 2)
        self.table.setObjectName("shortcuts_table")
        self.table.setAccessibleName(self.tr("Keyboard shortcuts"))
        self.table.setHorizontalHeaderLabels([self.tr("Does"), self.tr("Keys")])
        self.table.verticalHeader().setVisible(False)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.editors: dict[str, QKeySequenceEdit] = {}
        for row, action in enumerate(self.action_names):
            text = hotkeys.describe_action(action, outcomes)
            item = QTableWidgetItem(text)
            item.setToolTip(text)
            self.table.setItem(row, 0, item)
            editor = QKeySequenceEdit(QKeySequence(keymap.keys.get(action, "")))
            editor.setObjectName(f"keys_{action}")
            editor.setMaximumSequenceLength(1)  # one chord: sequences would delay every other key
            editor.setClearButtonEnabled(True)
            name = self.tr("Keys for: {0}").format(text.split(":")[0])
            editor.setAccessibleName(name)
            inner = editor.findChild(QLineEdit)  # what takes the focus, so what a screen reader names
            if inner is not None:
                inner.setAccessibleName(name)
                a11y.clear_button(inner, self.tr("the keys for {0}").format(text.split(":")[0]))
            editor.keySequenceChanged.connect(self._check)
            self.table.setCellWidget(row, 1, editor)
            self.editors[action] = editor
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Fixed)
        self.table.setColumnWidth(1, 190)
        self.table.resizeRowsToContents()
        layout.addWidget(self.table, 1)
        self.single_key = QCheckBox(
            self.tr(
                "Single keys: N for Next item, 1 to 9 for the outcomes (only while the cursor is not in a text field)"
            )
        )
        self.single_key.setObjectName("single_key")
        self.single_key.setChecked(keymap.single_key)
        layout.addWidget(self.single_key)
        self.problem = QLabel()
        self.problem.setObjectName("shortcut_problem")
        self.problem.setProperty("role", "field-error")
        self.problem.setWordWrap(True)
        self.problem.setVisible(False)
        layout.addWidget(self.problem)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok
            | QDialogButtonBox.StandardButton.Cancel
            | QDialogButtonBox.StandardButton.RestoreDefaults
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        restore = self.buttons.button(QDialogButtonBox.StandardButton.RestoreDefaults)
        restore.setObjectName("restore_defaults")
        restore.clicked.connect(self.restore_defaults)
        layout.addWidget(self.buttons)
        self.resize(720, 560)

    def keymap(self) -> hotkeys.Keymap:
        """The keymap as the dialog shows it now."""
        chosen = {
            action: hotkeys.normal(editor.keySequence().toString(QKeySequence.SequenceFormat.PortableText))
            for action, editor in self.editors.items()
        }
        return hotkeys.Keymap(chosen, self.single_key.isChecked())

    @Slot()
    def restore_defaults(self) -> None:
        for action, editor in self.editors.items():
            editor.setKeySequence(QKeySequence(hotkeys.DEFAULTS[action]))
        self.single_key.setChecked(False)

    @Slot()
    def _check(self) -> None:
        problem = self.keymap().problem(self.reserved)
        self.problem.setText(problem or "")
        self.problem.setVisible(problem is not None)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(problem is None)
