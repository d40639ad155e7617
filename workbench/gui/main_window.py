"""The operator window: queue picker, Next item, the edit form with its actions, resume panel, lock timer."""

from __future__ import annotations

import functools
import itertools
import logging
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QCoreApplication, QLocale, QSettings, Qt, QTimer, Slot
from PySide6.QtGui import QAction, QActionGroup, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QApplication,
    QComboBox,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMainWindow,
    QMessageBox,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QSystemTrayIcon,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from workbench import fieldspec
from workbench.core import durations, errors, models
from workbench.gui import (
    a11y,
    dialogs,
    draft_view,
    hotkeys,
    i18n,
    item_log,
    journal_status,
    lookup_field,
    problem_text,
    quit_guard,
    resume,
    session,
    source_view,
    theme,
    times,
)
from workbench.gui import form as form_mod

log = logging.getLogger("workbench.gui")

START, RESUME, ITEM = 0, 1, 2
JOURNAL_DELAY_MS = 150  # journal soon after the last keystroke; flushed before every action
SLOW_MS = 3000  # a database call running this long is shown as "waiting for the database"


class MainWindow(QMainWindow):
    """Drives one OperatorSession. Every database call is the session's; this class never blocks."""

    def __init__(self, sess: session.OperatorSession, settings: QSettings) -> None:
        super().__init__()
        self.session, self.settings = sess, settings
        self.setObjectName("main_window")
        self._specs: dict[str, list[fieldspec.FieldSpec]] = {}
        self._form_for: tuple[str, int] | None = None  # the queue (and its specs' id) the form's fields are for
        self._prebuild = QTimer(self)  # a child: gone with the window, never fires into a deleted one
        self._prebuild.setSingleShot(True)
        self._prebuild.setInterval(0)
        self._prebuild.timeout.connect(self._prebuild_form)
        self._item_draft_dirty = False
        self._tray: QSystemTrayIcon | None = None
        self._opening_draft: tuple[str, Any] | None = None  # a resume entry whose lock is gone, being reopened
        # While the open item is being left (its release or save on the way to the database): the
        # item, and what follows once it is done, in the order asked for (another queue, then Next).
        self._leaving: tuple[tuple[str, Any], list[Callable[[], None]]] | None = None
        self.keymap = hotkeys.Keymap.load(settings)
        self._outcome_actions: dict[str, QAction] = {}  # "outcome1"… for the shown queue
        self._holder_told: tuple[str | None, bool] = (None, False)  # who held a lost item when last said
        self.announcer = a11y.Announcer(self)  # what a screen reader is told without the focus moving
        self._build()
        self._connect()
        self._restore_state()
        self._update_title()
        self._set_actions()

    # -- building ------------------------------------------------------------------------------------

    def _build(self) -> None:
        central = QWidget()
        outer = QVBoxLayout(central)
        bar = QHBoxLayout()
        self.queue_picker = QComboBox()
        self.queue_picker.setObjectName("queue_picker")
        self.queue_picker.setAccessibleName(self.tr("Queue"))
        for name, queue in self.session.config.queues.items():
            self.queue_picker.addItem(queue.title, name)
        # Narrows Next item to one value of a column the queue offers (`filter_by`), e.g. a message type.
        self.filter_box = QComboBox()
        self.filter_box.setObjectName("filter_box")
        self.filter_box.setAccessibleName(self.tr("Narrow Next item"))
        self.filter_box.setToolTip(self.tr("Next item serves only items with this value"))
        self.filter_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        # A screen reader says a list box's value, not its accessible name: its label (the buddy, a
        # "labelled by" relation over AT-SPI) is what names it. Shown and hidden with the box.
        self.queue_label = _buddy(self.tr("Queue:"), self.queue_picker, "queue_label")
        self.filter_label = _buddy(self.tr("Only:"), self.filter_box, "filter_label")
        self._show_queue_picker(self.queue_picker.count() > 1)
        self._show_filter_box(False)
        self.next_button = QPushButton(self.tr("Next item"))
        self.next_button.setObjectName("next_button")
        self.next_button.setEnabled(False)  # until the queues are open (_on_ready), or the retries begin
        self.pick_button = QPushButton(self.tr("Pick…"))
        self.pick_button.setObjectName("pick_button")
        self.mine_button = QPushButton(self.tr("My unfinished items"))
        self.mine_button.setObjectName("mine_button")
        bar.addWidget(self.queue_label)
        bar.addWidget(self.queue_picker)
        bar.addWidget(self.filter_label)
        bar.addWidget(self.filter_box)
        bar.addWidget(self.next_button)
        bar.addWidget(self.pick_button)
        bar.addStretch(1)
        bar.addWidget(self.mine_button)
        outer.addLayout(bar)
        self.journal_status: journal_status.JournalStatus | None = None
        if self.session.journal is not None:  # above every page: it matters before an item is open too
            self.journal_status = journal_status.JournalStatus(
                self.session.journal, self.session.settings.retry_interval, self
            )
            outer.addWidget(self.journal_status.banner)
        # Above every page too: Completes a database switch undid (see session.completions_lost).
        self.switch_banner = dialogs.Banner("switch_banner", "warning")
        self.switch_mine_button = QPushButton(self.tr("My unfinished items"))
        self.switch_mine_button.setObjectName("switch_mine_button")
        self.switch_close_button = QPushButton(self.tr("Dismiss"))
        self.switch_close_button.setObjectName("switch_close_button")
        self.switch_banner.add_button(self.switch_mine_button)
        self.switch_banner.add_button(self.switch_close_button)
        self.switch_close_button.clicked.connect(lambda: self.switch_banner.setVisible(False))
        outer.addWidget(self.switch_banner)
        # Above every page too: an item a supervisor handed to this user (session.handed_over).
        self.handed_banner = dialogs.Banner("handed_banner", "info")
        self.handed_open_button = QPushButton(self.tr("Open it"))
        self.handed_open_button.setObjectName("handed_open_button")
        self.handed_close_button = QPushButton(self.tr("Dismiss"))
        self.handed_close_button.setObjectName("handed_close_button")
        self.handed_banner.add_button(self.handed_open_button)
        self.handed_banner.add_button(self.handed_close_button)
        self.handed_close_button.clicked.connect(lambda: self.handed_banner.setVisible(False))
        self.handed_open_button.clicked.connect(self._open_handed)
        self._handed: tuple[str, str] | None = None  # (queue, key as the trail writes it) the banner offers
        outer.addWidget(self.handed_banner)

        self.stack = QStackedWidget()
        self.message_label = QLabel()
        self.message_label.setObjectName("message_label")
        self.message_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message_label.setWordWrap(True)
        self.stack.addWidget(self._build_start_page())
        self.resume_panel = resume.ResumePanel()
        self.stack.addWidget(self.resume_panel)
        self.stack.addWidget(self._build_item_page())
        outer.addWidget(self.stack, 1)
        self.setCentralWidget(central)

        self.connection_label = QLabel(self.tr("Connecting…"))
        self.connection_label.setObjectName("connection_label")
        self.timer_label = QLabel("")
        self.timer_label.setObjectName("timer_label")
        # A fixed name: a label without one is renamed (and re-read by a screen reader) at every
        # second's new text. The time left is its text, read on demand; the warning is announced.
        self.timer_label.setAccessibleName(self.tr("Lock timer"))
        self.statusBar().addWidget(self.connection_label, 1)
        # Where changes come from when the config names a change relay: shown only then.
        self.relay_label = QLabel("")
        self.relay_label.setObjectName("relay_label")
        self.relay_label.setAccessibleName(self.tr("Change relay"))
        self.relay_label.setVisible(False)
        self.statusBar().addPermanentWidget(self.relay_label)
        self.statusBar().addPermanentWidget(self.timer_label)
        self._build_menus()
        # Not _show_message: the start's one read brings the counts (session.start), and a second
        # read now would only wait for the engine that call is opening.
        self.message_label.setText(self.tr("Opening the queues…"))
        self.stack.setCurrentIndex(START)

    def _build_item_page(self) -> QWidget:
        page = QWidget()
        layout = QVBoxLayout(page)
        self.item_title = QLabel()
        self.item_title.setObjectName("item_title")
        self.item_title.setWordWrap(True)
        layout.addWidget(self.item_title)
        self.warning_banner = dialogs.Banner("warning_banner", "warning")
        self.warning_extend = QPushButton(self.tr("Extend"))
        self.warning_extend.setObjectName("warning_extend")
        self.warning_banner.add_button(self.warning_extend)
        layout.addWidget(self.warning_banner)
        self.lost_banner = dialogs.Banner("lost_banner", "lost")
        self.reclaim_button = QPushButton(self.tr("Claim again and reapply my edits"))
        self.reclaim_button.setObjectName("reclaim_button")
        self.compare_button = QPushButton(self.tr("View my draft…"))
        self.compare_button.setObjectName("compare_button")
        self.discard_button = QPushButton(self.tr("Discard my edits"))
        self.discard_button.setObjectName("discard_button")
        for button in (self.reclaim_button, self.compare_button, self.discard_button):
            self.lost_banner.add_button(button)
        layout.addWidget(self.lost_banner)
        self.info_banner = dialogs.Banner("info_banner", "info")
        layout.addWidget(self.info_banner)
        self.sent_back_banner = dialogs.Banner("sent_back_banner", "warning")  # why a reviewer returned it
        layout.addWidget(self.sent_back_banner)
        self.form = form_mod.RecordForm()
        # The item's notes and history beside the form; the splitter keeps the form the wider part.
        self.item_log = item_log.ItemLogPanel()
        self.item_split = QSplitter(Qt.Orientation.Horizontal)
        self.item_split.setObjectName("item_split")
        self.item_split.setChildrenCollapsible(False)
        # The scanned document (or source text) between them, for queues that name a `source` column.
        self.source_pane = source_view.SourcePane()
        self.source_pane.setVisible(False)
        self.item_split.addWidget(self.form)
        self.item_split.addWidget(self.source_pane)
        self.item_split.addWidget(self.item_log)
        self.item_split.setStretchFactor(0, 3)
        self.item_split.setStretchFactor(1, 3)
        self.item_split.setStretchFactor(2, 1)
        # In proportion: the form gets seven tenths, or with a document beside it the two share most.
        self.item_split.setSizes([700, 0, 300])
        layout.addWidget(self.item_split, 1)
        actions = QHBoxLayout()
        self.release_button = QPushButton(self.tr("Release…"))
        self.release_button.setObjectName("release_button")
        self.defer_button = QPushButton(self.tr("Defer…"))
        self.defer_button.setObjectName("defer_button")
        self.escalate_button = QPushButton(self.tr("Escalate…"))
        self.escalate_button.setObjectName("escalate_button")
        self.extend_button = QPushButton(self.tr("Extend"))
        self.extend_button.setObjectName("extend_button")
        self.save_button = QPushButton(self.tr("Save"))
        self.save_button.setObjectName("save_button")
        actions.addWidget(self.release_button)
        actions.addWidget(self.defer_button)
        actions.addWidget(self.escalate_button)
        actions.addWidget(self.extend_button)
        actions.addStretch(1)
        actions.addWidget(self.save_button)
        self._outcome_box = QHBoxLayout()
        actions.addLayout(self._outcome_box)
        layout.addLayout(actions)
        self.complete_buttons: dict[str, QPushButton] = {}
        return page

    def _build_menus(self) -> None:
        self.named_actions: dict[str, QAction] = {}
        item_menu = self.menuBar().addMenu(self.tr("&Item"))
        view_menu = self.menuBar().addMenu(self.tr("&View"))
        help_menu = self.menuBar().addMenu(self.tr("&Help"))
        handlers = {
            "next": self.next_item,
            "save": self.save,
            "complete": lambda: self.complete(None),
            "release": self.release,
            "defer": self.defer,
            "escalate": self.escalate,
            "undo": self.undo_complete,
            "extend": self.extend,
            "check": self.check,
            "resume": self.show_resume,
            "pick": self.pick,
            "queue": self._focus_queue,
            "shortcuts": self.show_shortcuts,
            "quit": self.close,
        }
        menus = {"resume": view_menu, "pick": view_menu, "queue": view_menu, "shortcuts": help_menu}  # else Item
        for hotkey in hotkeys.HOTKEYS:
            action = QAction(hotkeys.menu_text(hotkey), self)
            action.setStatusTip(hotkeys.describe(hotkey))
            action.setObjectName(f"action_{hotkey.action}")
            action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            action.triggered.connect(handlers[hotkey.action])
            menus.get(hotkey.action, item_menu).addAction(action)
            self.named_actions[hotkey.action] = action
        follow = QAction(self.tr("&Open the next item after Complete"), self)
        follow.setObjectName("action_next_after_complete")
        follow.setCheckable(True)
        follow.setChecked(self.session.settings.next_after_complete)
        follow.toggled.connect(self._set_next_after_complete)
        escalations = QAction(self.tr("Items you &escalated…"), self)
        escalations.setObjectName("action_escalations")
        escalations.setStatusTip(self.tr("The items you handed to a supervisor, and what became of each"))
        escalations.triggered.connect(self.session.load_escalations)
        view_menu.addAction(escalations)
        self.named_actions["escalations"] = escalations
        view_menu.addSeparator()
        view_menu.addAction(follow)
        self.named_actions["next_after_complete"] = follow
        self._build_language_menu(view_menu)
        self._build_appearance_menu(view_menu)
        # F10 opens the menu bar, as on Windows and in GNOME (Qt on Linux has only the Alt+letter keys).
        menu_key = QAction(self.tr("Menu bar"), self)
        menu_key.setObjectName("action_menu_bar")
        menu_key.setShortcut(QKeySequence(Qt.Key.Key_F10))
        menu_key.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        menu_key.triggered.connect(self._open_menu_bar)
        self.addAction(menu_key)
        self.check_keymap()
        about = QAction(self.tr("&About workbench"), self)
        about.triggered.connect(self._about)
        help_menu.addAction(about)

    @Slot()
    def _open_menu_bar(self) -> None:
        """The first menu opened, the arrow keys move on to the others."""
        first = next((a for a in self.menuBar().actions() if a.isVisible() and a.isEnabled()), None)
        if first is not None:
            self.menuBar().setActiveAction(first)

    def _build_language_menu(self, view_menu: Any) -> None:
        """View ▸ Language: the system's language or one chosen by the user, used from the next start."""
        self.language_menu = self._choice_menu(
            view_menu,
            self.tr("&Language"),
            "language",
            i18n.SETTING,
            [(code, i18n.menu_name(code, name)) for code, name in i18n.LANGUAGES],
            self._set_language,
        )

    def _build_appearance_menu(self, view_menu: Any) -> None:
        """View ▸ Appearance: the system's colours (light, dark, high contrast) or the user's choice."""
        self.appearance_menu = self._choice_menu(
            view_menu,
            self.tr("&Appearance"),
            "appearance",
            theme.SETTING,
            [(code, QCoreApplication.translate("Theme", name)) for code, name in theme.APPEARANCES],
            self._set_appearance,
        )

    def _choice_menu(
        self, parent: Any, title: str, name: str, setting: str, choices: list[tuple[str, str]], choose: Any
    ) -> Any:
        """A submenu of exclusive choices ("" = the system's), the user's stored one checked."""
        menu = parent.addMenu(title)
        menu.setObjectName(f"{name}_menu")
        group = QActionGroup(menu)
        chosen = str(self.settings.value(setting, "") or "")
        for code, text in choices:
            action = QAction(text, menu)
            action.setObjectName(f"{name}_{code or 'system'}")
            action.setCheckable(True)
            action.setChecked(code == chosen)
            action.setActionGroup(group)
            action.triggered.connect(lambda _checked=False, c=code: choose(c))
            menu.addAction(action)
        return menu

    def _set_appearance(self, code: str) -> None:
        """Store the choice (per user) and show it at once."""
        self.settings.setValue(theme.SETTING, code)
        self.settings.sync()
        installed = theme.installed()
        if installed is not None:
            installed.set_choice(code)

    def _set_language(self, code: str) -> None:
        """Store the choice (per user); the window's texts change when workbench starts next time."""
        if code == str(self.settings.value(i18n.SETTING, "") or ""):
            return
        self.settings.setValue(i18n.SETTING, code)
        self.settings.sync()
        if i18n.resolve(code) == i18n.current():
            return  # already shown in that language
        box = QMessageBox(
            QMessageBox.Icon.Information,
            self.tr("Language"),
            self.tr("The new language is used the next time workbench starts."),
            QMessageBox.StandardButton.Ok,
            self,
        )
        box.setObjectName("language_notice")
        box.finished.connect(box.deleteLater)
        box.open()

    def _connect(self) -> None:
        s = self.session
        s.ready.connect(self._on_ready)
        s.claimed.connect(self._on_claimed)
        s.nothing_to_do.connect(self._on_nothing)
        s.saved.connect(self._on_saved)
        s.completed.connect(self._on_completed)
        s.released.connect(self._on_released)
        s.deferred.connect(self._on_deferred)
        s.escalated.connect(self._on_escalated)
        s.escalations_loaded.connect(self._show_escalations)
        s.extended.connect(self._on_extended)
        s.tick.connect(self._on_tick)
        s.expiry_warning.connect(self._on_warning)
        s.lock_lost.connect(self._on_lost)
        s.failed.connect(self._on_failed)
        s.connection_changed.connect(self._on_connection)
        s.relay_changed.connect(self._on_relay)
        s.mine_loaded.connect(lambda locks: self._fill_resume(locks, only_queue=True))
        s.open_items_loaded.connect(self._on_open_items)
        s.counts_loaded.connect(self._on_counts)
        s.filter_choices_loaded.connect(self._on_filter_choices)
        self.filter_box.activated.connect(self._on_filter_picked)
        s.item_log_loaded.connect(self.item_log.show_log)
        s.item_log_loaded.connect(self._show_sent_back)
        s.source_loaded.connect(self.source_pane.show_source)
        s.completions_lost.connect(self._on_completions_lost)
        s.handed_over.connect(self._on_handed_over)
        s.item_log_loaded.connect(lambda log: self.form.show_origins(log.as_imported()))
        self.item_log.note_written.connect(s.add_note)
        s.dispatcher.busy_changed.connect(self._on_busy)
        self._slow_timer = QTimer(self)
        self._slow_timer.setSingleShot(True)
        self._slow_timer.setInterval(SLOW_MS)
        self._slow_timer.timeout.connect(self._on_slow)
        self.queue_picker.currentIndexChanged.connect(self._on_queue_picked)
        self.next_button.clicked.connect(self.next_item)
        self.pick_button.clicked.connect(self.pick)
        self.mine_button.clicked.connect(self.show_resume)
        self.switch_mine_button.clicked.connect(self.show_resume)
        self.save_button.clicked.connect(self.save)
        self.release_button.clicked.connect(self.release)
        self.defer_button.clicked.connect(self.defer)
        self.escalate_button.clicked.connect(self.escalate)
        self.extend_button.clicked.connect(self.extend)
        self.warning_extend.clicked.connect(self.extend)
        self.reclaim_button.clicked.connect(self._reclaim)
        self.compare_button.clicked.connect(self._compare)
        self.discard_button.clicked.connect(self._discard)
        self.resume_panel.open_requested.connect(self._open_from_resume)
        self.drafts = draft_view.DraftAccess(self.session, self)
        self.drafts.discarded.connect(self._on_draft_discarded)
        self.resume_panel.draft_requested.connect(self.drafts.open)
        self.quit_guard = quit_guard.QuitGuard(self, self.session, lambda: bool(self.form.changes()))
        self.resume_panel.refresh_requested.connect(self.session.start)
        self.form.edited.connect(self._on_form_edited)
        self._journal_timer = QTimer(self)
        self._journal_timer.setSingleShot(True)
        self._journal_timer.setInterval(JOURNAL_DELAY_MS)
        self._journal_timer.timeout.connect(self._write_journal)

    # -- state ---------------------------------------------------------------------------------------

    def _restore_state(self) -> None:
        geometry = self.settings.value("window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        else:
            self.resize(980, 720)
        queue = self.settings.value("session/queue")
        index = self.queue_picker.findData(queue) if queue else -1
        if index >= 0:
            self.queue_picker.setCurrentIndex(index)
            self.session.queue_name = queue

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.quit_guard.state == "idle":
            self._write_journal()  # once, before the guard decides (not again after it released the item)
            if self.journal_status is not None and not self.journal_status.may_close(self):
                event.ignore()  # edits held only in memory and the user chose to stay
                return
        if not self.quit_guard.may_close():
            event.ignore()  # the guard releases or asks first, then closes the window itself
            return
        self.drafts.unwatch()
        if self.journal_status is not None:
            self.journal_status.stop()
        self.session.stop()
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("session/queue", self.session.queue_name)
        self.settings.sync()
        super().closeEvent(event)

    def _set_next_after_complete(self, on: bool) -> None:
        self.session.settings.next_after_complete = on
        self.settings.setValue("session/next_after_complete", on)

    def _queue_config(self, name: str | None = None) -> Any:
        return self.session.config.queues[name or self.session.queue_name]

    def _update_title(self) -> None:
        self.setWindowTitle(self.tr("workbench — {0} — {1}").format(self._queue_config().title, self.session.user))

    def _set_actions(self) -> None:
        current = self.session.current
        has_item = current is not None
        for button in (
            self.save_button,
            self.release_button,
            self.defer_button,
            self.escalate_button,
            self.extend_button,
            *self.complete_buttons.values(),
        ):
            button.setEnabled(has_item)
        for name in ("save", "complete", "release", "extend"):
            self.named_actions[name].setEnabled(has_item)
        self.pick_button.setVisible(self._queue_config().allow_pick)
        allow_defer = self._queue_config(current.queue if current is not None else None).allow_defer
        self.defer_button.setVisible(allow_defer)
        self.named_actions["defer"].setEnabled(has_item and allow_defer)
        escalates = self.session.can_escalate(current.queue if current is not None else self.session.queue_name)
        self.escalate_button.setVisible(escalates)  # only where the queue has on_escalate
        self.named_actions["escalate"].setEnabled(has_item and escalates)
        self.named_actions["undo"].setEnabled(self.session.undo_seconds_left() > 0)

    def _show_queue_picker(self, shown: bool) -> None:
        self.queue_picker.setVisible(shown)
        self.queue_label.setVisible(shown)

    def _show_filter_box(self, shown: bool) -> None:
        self.filter_box.setVisible(shown)
        self.filter_label.setVisible(shown)

    def _show_message(self, text: str) -> None:
        self.message_label.setText(text)
        self.stack.setCurrentIndex(START)
        self.session.load_counts()  # what waits now, per queue

    def _build_start_page(self) -> QWidget:
        """The message, and per queue how many items wait and how many are the user's."""
        page = QWidget()
        page.setObjectName("start_page")
        layout = QVBoxLayout(page)
        layout.addStretch(1)
        layout.addWidget(self.message_label)
        self.counts_table = QTableWidget(0, 5)
        self.counts_table.setObjectName("queue_counts")
        self.counts_table.setAccessibleName(self.tr("Queues: waiting items, yours and overdue ones"))
        self.counts_table.setHorizontalHeaderLabels(
            [self.tr("Queue"), self.tr("Waiting"), self.tr("Yours"), self.tr("Overdue"), self.tr("Deferred")]
        )
        self.counts_table.verticalHeader().setVisible(False)
        self.counts_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.counts_table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.counts_table.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        for policy in (self.counts_table.setHorizontalScrollBarPolicy, self.counts_table.setVerticalScrollBarPolicy):
            policy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # sized to its figures (_on_counts): never scrolled
        self.counts_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.counts_table.setVisible(False)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.counts_table)
        row.addStretch(1)
        layout.addLayout(row)
        layout.addStretch(1)
        return page

    @Slot(list)
    def _on_counts(self, counts: list[Any]) -> None:
        table = self.counts_table
        table.setRowCount(len(counts))
        for r, count in enumerate(counts):
            waiting = (
                self.tr("more than {0}").format(QLocale().toString(dialogs.waiting_cap()))
                if count.more_than
                else QLocale().toString(count.waiting)
            )
            overdue = (
                "—"
                if count.overdue is None
                else self.tr("more than {0}").format(QLocale().toString(dialogs.waiting_cap()))
                if count.overdue_more_than
                else QLocale().toString(count.overdue)
            )
            texts = (count.title, waiting, QLocale().toString(count.mine), overdue, QLocale().toString(count.deferred))
            for c, text in enumerate(texts):
                item = QTableWidgetItem(text)
                if c:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                table.setItem(r, c, item)
        # The overdue column only where a queue names its due column.
        table.setColumnHidden(3, all(count.overdue is None for count in counts))
        # Deferred items are not waiting (Next does not serve them yet): counted apart, where there are any.
        table.setColumnHidden(4, all(not count.deferred for count in counts))
        table.setVisible(bool(counts))
        table.resizeColumnsToContents()
        frame = 2 * table.frameWidth()
        header = table.horizontalHeader()
        height = header.sizeHint().height() + sum(table.rowHeight(r) for r in range(len(counts))) + frame
        # Every column shown, Deferred too when it appears (it was left out: "Overdu…" cut, scroll bars).
        width = sum(header.sectionSize(c) for c in range(table.columnCount()) if not table.isColumnHidden(c)) + frame
        table.setFixedSize(width, height)  # just the figures, centred under the message

    # -- commands ------------------------------------------------------------------------------------

    @Slot()
    def next_item(self) -> None:
        def go() -> None:
            self._opening_draft = None
            self.next_button.setEnabled(False)
            self.session.next_item()
            self._ensure_form(self.session.queue_name)  # while the claim is on its way

        self._leave_item(go)

    @Slot()
    def pick(self) -> None:
        if self._queue_config().allow_pick:
            self.session.load_open_items()

    @Slot()
    def save(self) -> None:
        changes = self._checked_changes()
        if changes is None:
            return
        if not changes:
            self.statusBar().showMessage(self.tr("Nothing to save: no field was changed."), 4000)
            return
        self.session.save(changes)

    def complete(self, outcome: str | None) -> None:
        changes = self._checked_changes()
        if changes is None:
            return
        # A note typed beside the form and not added yet goes with the Complete (kept in the box
        # until the item is done, so a refused Complete loses nothing).
        note = self.item_log.pending()
        cur = self.session.current
        name = outcome or (self._queue_config(cur.queue).outcomes[0].name if cur is not None else "")
        if self.session.needs_note(name):
            label = next((o.label for o in self._queue_config().outcomes if o.name == name), name)
            dialog = dialogs.NoteDialog(
                self.tr("Complete as “{0}”").format(label),
                self.tr(
                    "This queue needs a note with this outcome: say what was done, for whoever looks at {0} later."
                ).format(self._item_label()),
                self,
                note=note,
            )
            if not dialogs.ask(dialog):
                return
            note = dialog.text()
        self._set_busy_item(True)
        self.session.complete(outcome, changes, note)

    @Slot()
    def release(self) -> None:
        cur = self.session.current
        if cur is None:
            return
        self._write_journal()
        reasons = tuple(r.label for r in self._queue_config(cur.queue).release_reasons)
        dialog = dialogs.ReleaseDialog(
            self._item_label(),
            bool(self.form.changes()),
            self,
            note_required=self.session.needs_note("release"),
            reasons=reasons,
            note=self.item_log.pending(),
        )
        if dialogs.ask(dialog):
            self.session.release(dialog.text(), dialog.note())

    @Slot()
    def defer(self) -> None:
        cur = self.session.current
        if cur is None:
            return
        self._write_journal()
        dialog = dialogs.DeferDialog(
            self._item_label(),
            bool(self.form.changes()),
            self,
            note_required=self.session.needs_note("defer"),
            note=self.item_log.pending(),
        )
        if dialogs.ask(dialog):
            self.session.defer(dialog.when(), dialog.text(), dialog.note())

    @Slot()
    def escalate(self) -> None:
        cur = self.session.current
        if cur is None or not self.session.can_escalate(cur.queue):
            return
        self._write_journal()
        dialog = dialogs.NoteDialog(
            self.tr("Escalate"),
            self.tr("Hand {0} to a supervisor: say why. Your lock is given up; the history keeps the reason.").format(
                self._item_label()
            ),
            self,
            label=self.tr("&Reason:"),
            name="escalate_dialog",
        )
        if dialogs.ask(dialog):
            self.session.escalate(dialog.text())

    @Slot()
    def undo_complete(self) -> None:
        """Take back the last Complete: the item opens again, yours. An open item you have not worked on
        goes back to the queue first; one you have worked on must be finished or released first."""
        if self.session.undo_seconds_left() <= 0:
            return
        if self.session.current is not None and self.quit_guard.touched():
            QMessageBox.information(
                self,
                self.tr("Undo Complete"),
                self.tr("Save and complete, or release, the item you have open first; then undo."),
            )
            return
        self.session.undo_complete()

    @Slot()
    def extend(self) -> None:
        self.session.extend()

    @Slot()
    def check(self) -> None:
        self.session.check_now()
        self.session.refresh_mine()

    @Slot()
    def show_resume(self) -> None:
        """The unfinished items, also while one is open (it stays open and locked: choosing it in
        the list comes back to it; choosing another leaves it as Next item would)."""
        self._write_journal()  # the form's edits are on disk before the form is out of sight
        self.stack.setCurrentIndex(RESUME)
        self.resume_panel.focus_list()
        self.session.refresh_mine()

    @Slot()
    def show_shortcuts(self) -> None:
        """Help ▸ Keyboard shortcuts: the user may change them; kept in their own settings."""
        from workbench.gui import shortcuts_dialog  # opened from the Help menu: not on the first screen

        labels = [o.label for o in self._queue_config().outcomes]
        dialog = shortcuts_dialog.ShortcutsDialog(self.keymap, labels, self, reserved=self.reserved_keys())
        if dialogs.ask(dialog) == QDialog.DialogCode.Accepted:
            self.keymap = dialog.keymap()
            self.keymap.save(self.settings)
            self._apply_keymap()

    def reserved_keys(self) -> hotkeys.Reserved:
        """The keys this window has fixed, as it is now: Alt+letter of each menu title in the language shown
        (another menu, as the launcher's Connection menu, counts once added), and every other action's key."""
        menus = {
            key: hotkeys.plain(action.text())
            for action in self.menuBar().actions()
            if (key := hotkeys.mnemonic_key(action.text()))
        }
        mapped = {id(a) for name, a in self.named_actions.items() if name in hotkeys.DEFAULTS}
        mapped |= {id(a) for a in self._outcome_actions.values()}
        fixed = {
            hotkeys.normal(sequence.toString(QKeySequence.SequenceFormat.PortableText)): hotkeys.plain(a.text())
            for a in self.findChildren(QAction)
            if id(a) not in mapped
            for sequence in a.shortcuts()
        }
        return hotkeys.Reserved(menus=menus, actions=fixed)

    def check_keymap(self) -> None:
        """Fall back to the default keys when the user's clash with the window's fixed ones (a menu's letter
        changes with the language; a settings file may be edited by hand), then give the actions their keys."""
        problem = self.keymap.problem(self.reserved_keys())
        if problem:
            log.warning("keyboard shortcuts ignored: %s", problem)
            self.keymap = hotkeys.Keymap(single_key=self.keymap.single_key)
        self._apply_keymap()

    def _apply_keymap(self) -> None:
        """Give every action the keys of the user's keymap (menus and tooltips show them)."""
        for name, action in self.named_actions.items():
            if name in hotkeys.DEFAULTS:
                action.setShortcuts(self.keymap.sequences(name))
        for name, action in self._outcome_actions.items():
            action.setShortcuts(self.keymap.sequences(name))
        self.next_button.setToolTip(self.tr("Claim the next waiting item ({0})").format(self.keymap.shown("next")))
        for i, button in enumerate(self.complete_buttons.values()):
            keys = [self.keymap.shown("complete")] if i == 0 else []
            keys.append(self.keymap.shown(hotkeys.outcome_action(i + 1)) if i < hotkeys.OUTCOMES else "")
            shown = ", ".join(k for k in keys if k)
            label = button.text()
            button.setToolTip(
                self.tr("Complete as “{0}” ({1})").format(label, shown)
                if shown
                else self.tr("Complete as “{0}”").format(label)
            )

    def _focus_queue(self) -> None:
        if self.queue_picker.isVisible():
            self.queue_picker.setFocus()
            self.queue_picker.showPopup()

    def _about(self) -> None:
        from workbench import __version__

        QMessageBox.about(
            self,
            self.tr("About workbench"),
            self.tr("workbench {0}\nConfiguration: {1}").format(__version__, self.session.config.path),
        )

    def _checked_changes(self) -> dict[str, Any] | None:
        self._write_journal()
        if self.session.current is None:
            return None
        return self.form.checked_changes()

    def _leave_item(self, then: Callable[[], None], cancelled: Callable[[], None] | None = None) -> None:
        """Leave the open item for another (Next item, Pick…, another queue, the resume panel), as
        closing the window does: an untouched item goes back to the queue, about a touched one the
        operator is asked (keep it locked, save it, give it back); then `then` runs, or `cancelled`
        when the operator stays. A note typed for the item and not added yet is added to it."""
        self._write_journal()
        cur = self.session.current
        if self._leaving is not None:
            item, queued = self._leaving
            if cur is not None and (cur.queue, cur.lock.key) == item:
                queued.append(then)  # already being left: this follows, once, not a second release
                return
            self._leaving = None  # it was closed meanwhile (lost, or the release was refused)
        if cur is None:
            then()
            return
        typed = self.item_log.take_pending()
        if typed is not None:
            self.session.add_note(typed)
        if not self.quit_guard.touched():
            self.session.release(quit_guard.LEFT_UNTOUCHED, then=self._left(cur, then))
            return
        changes = self.form.changes()
        box = QMessageBox(
            QMessageBox.Icon.Question,
            self.tr("Leave this item?"),
            self.tr("You are working on {0}.").format(self._item_label()),
            QMessageBox.StandardButton.NoButton,
            self,
        )
        box.setObjectName("leave_dialog")
        keep = box.addButton(self.tr("&Keep it locked"), QMessageBox.ButtonRole.AcceptRole)
        keep.setObjectName("leave_keep")
        save = None
        if changes:
            save = box.addButton(self.tr("&Save and keep it locked"), QMessageBox.ButtonRole.AcceptRole)
            save.setObjectName("leave_save")
        release = box.addButton(
            self.tr("&Give it back") if not changes else self.tr("&Give it back, discarding my edits"),
            QMessageBox.ButtonRole.DestructiveRole,
        )
        release.setObjectName("leave_release")
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        cancel.setObjectName("leave_cancel")
        box.setDefaultButton(save or keep)
        box.setEscapeButton(cancel)
        follow = functools.partial(self._follow_leave, box, cur, bool(changes), [keep, save, release])
        follow()
        # The lock may run out, be taken, be claimed again or extended while the question waits: its text
        # follows the lock, read every second and at once on the session's news (issue 53).
        ticker = QTimer(box)
        ticker.timeout.connect(follow)
        ticker.start(1000)
        news = (self.session.lock_lost, self.session.claimed, self.session.extended, self.session.saved)
        for signal in news:
            signal.connect(follow)
        try:
            box.exec()
        finally:
            ticker.stop()
            for signal in news:
                signal.disconnect(follow)
        clicked = box.clickedButton()
        box.deleteLater()  # one question, its answer read: deleted as dialogs.ask deletes its dialogs
        if clicked is keep:
            then()
        elif save is not None and clicked is save:
            checked = self.form.checked_changes()
            if checked is None:  # a field is wrong: it is shown there; the operator stays
                if cancelled is not None:
                    cancelled()
                return
            self.session.save(checked, then=self._left(cur, then))
        elif clicked is release:
            self.session.release(quit_guard.LEFT_RELEASED, then=self._left(cur, then))
        elif cancelled is not None:
            cancelled()

    def _follow_leave(
        self, box: QMessageBox, cur: Any, changes: bool, buttons: list[QAbstractButton | None], *_news: Any
    ) -> None:
        """The "Leave this item?" text as the lock is now: yours until its expiry (extended or claimed again:
        the new one), or lost, with who holds it; keeping or giving back a lost lock is not offered."""
        now = self.session.current
        held = now is not None and (now.queue, now.lock.key) == (cur.queue, cur.lock.key) and now.remaining() > 0
        if held and now is not None:
            until = times.clock(now.lock.expires_at)
            text = (
                self.tr(
                    "Keep it locked: it stays yours until {0}; your unsaved edits wait in your unfinished items "
                    "(Ctrl+L)."
                ).format(until)
                if changes
                else self.tr("Keep it locked: it stays yours until {0}.").format(until)
            )
        else:
            lost = self.session.lost
            if lost is not None and (lost.queue, lost.key) == (cur.queue, cur.lock.key):
                text = draft_view.lost_sentence(lost, self._short_label(lost.queue, lost.key))
                text += " " + draft_view.holder_hint(lost, self.session.user)
            else:
                text = self.tr("Your lock on {0} has run out.").format(self._short_label(cur.queue, cur.lock.key))
            if changes:
                text += " " + self.tr("Your edits are kept as a draft.")
        for button in buttons:
            if button is not None:
                button.setEnabled(held)
        if text != box.informativeText():
            if box.informativeText() and not held:  # a screen reader is told, not left reading the old text
                self.announcer.announce(box, text, assertive=True)
            box.setInformativeText(text)

    def _left(self, cur: Any, then: Callable[[], None]) -> Callable[[], None]:
        """Note that `cur` is being left (`then` to follow); returns what runs once the database answered."""
        queued = [then]
        self._leaving = ((cur.queue, cur.lock.key), queued)

        def done() -> None:
            self._leaving = None
            for follow in queued:
                follow()

        return done

    # -- session events --------------------------------------------------------------------------------

    @Slot(list)
    def _on_ready(self, locks: list[models.Lock]) -> None:
        self._on_connection(True, "")
        self.session.load_filter_choices()
        entries = self._fill_resume(locks, only_queue=False)
        if self.session.current is not None:
            return
        self.next_button.setEnabled(True)
        self._prebuild.start()  # once this screen is shown: the form, so the first Next item only fills it in
        if entries:
            self.stack.setCurrentIndex(RESUME)
            self.resume_panel.focus_list()  # so Enter reopens the selected item
        else:
            self._show_message(
                self.tr("Press Next item ({0}) to start on {1}.").format(
                    self.keymap.shown("next"), self._queue_config().title
                )
            )
            self.next_button.setFocus()

    def _fill_resume(self, locks: list[models.Lock], *, only_queue: bool) -> list[resume.Entry]:
        journal = self.session.journal
        drafts = journal.drafts(self.session.database, owner=self.session.user) if journal else []
        draft_keys = {(d.queue, d.key) for d in drafts}
        queues = self.session.config.queues
        summaries, due = self.session.summaries, self.session.due_times
        entries = [
            resume.Entry(
                queues[lock.queue].title,
                lock.queue,
                lock.key,
                summaries.get((lock.queue, lock.key), ""),
                lock,
                (lock.queue, lock.key) in draft_keys,
                durations.seconds_between(lock.db_now, due.get((lock.queue, lock.key))),
            )
            for lock in locks
        ]
        held = {(lock.queue, lock.key) for lock in locks}
        entries += [
            resume.Entry(queues[d.queue].title, d.queue, d.key, summaries.get((d.queue, d.key), ""), None, True)
            for d in drafts
            if (d.queue, d.key) not in held and d.queue in queues
        ]
        if only_queue:
            entries = [e for e in entries if e.queue == self.session.queue_name]
        self.resume_panel.set_entries(entries)
        return entries

    @Slot(object, object)
    def _on_claimed(self, claim: models.Claim, draft: Any) -> None:
        self._opening_draft = None
        self.drafts.unwatch()
        queue = self.session.queue_name
        self._ensure_form(queue)
        self.form.show_item(dict(claim.item), draft.values if draft is not None else None)
        self.form.set_editable(True)
        self.lost_banner.setVisible(False)
        self.warning_banner.setVisible(False)
        if draft is not None:
            self.info_banner.show_text(
                self.tr("Your unsaved edits from before were restored. Save or Complete to keep them.")
            )
        else:
            self.info_banner.setVisible(False)
        title = self.tr("{0} (resumed)").format(self._item_label()) if claim.resumed else self._item_label()
        self.item_title.setText(title + self._due_text(queue, claim))
        # The focus goes to a field (read by the screen reader); which item opened is told besides.
        self.announcer.announce(self.item_title, self.tr("Opened {0}").format(self.item_title.text()))
        self.stack.setCurrentIndex(ITEM)
        self.next_button.setEnabled(True)
        self._set_actions()
        self.item_log.clear()
        self.sent_back_banner.setVisible(False)
        self.session.load_item_log()
        self._update_title()  # a resumed item may be of another queue than the one picked before
        self._show_source_pane(queue)
        self.form.focus_first_editable()
        if draft is not None:
            self._write_journal()  # journal again under the new lock token

    def _show_sent_back(self, log: Any) -> None:
        """A reviewer sent the open item back: say who and why above the form (not only in the history)."""
        cur = self.session.current
        review = self._queue_config(log.queue).review
        found = log.sent_back(review.by, review.send_back) if review is not None else None
        if cur is None or (cur.queue, cur.lock.key) != (log.queue, log.key) or found is None:
            self.sent_back_banner.setVisible(False)
            return
        reviewer, note = found
        self.sent_back_banner.show_text(
            self.tr("Sent back by {0} in review: {1}").format(reviewer, note)
            if note
            else self.tr("Sent back by {0} in review.").format(reviewer)
        )

    def _show_source_pane(self, queue: str) -> None:
        """Beside the form for a queue with a `source` column, loading the open item's document."""
        wanted = self.session.has_source(queue)
        if wanted and not self.source_pane.isVisible():
            self.source_pane.setVisible(True)
            self.item_split.setSizes([450, 450, 250])
        elif not wanted:
            self.source_pane.setVisible(False)
        if wanted:
            self.source_pane.show_loading()
            self.session.load_source()

    @Slot()
    def _prebuild_form(self) -> None:
        self._ensure_form(self.session.queue_name)

    def _ensure_form(self, queue: str) -> None:
        """The form's fields and outcome buttons for `queue`, built once per queue layout: Next item then
        only fills in values (built while the first claim is on its way, or right after the start)."""
        specs = self.session.specs.get(queue)  # computed off the GUI thread by session.start()
        if specs is None or self._form_for == (queue, id(specs)):
            return
        self._form_for = (queue, id(specs))
        self._specs[queue] = specs
        self.form.set_lookups(lookup_field.DispatchedLookups(self.session.dispatcher, self.session.operator, queue))
        self.form.set_specs(self._specs[queue])
        while self._outcome_box.count():
            item = self._outcome_box.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        self.complete_buttons = {}
        self._outcome_actions = {}
        for i, outcome in enumerate(self._queue_config(queue).outcomes):
            button = QPushButton(outcome.label)
            button.setObjectName("complete_button" if i == 0 else f"complete_button_{outcome.name}")
            button.setProperty("role", "primary" if i == 0 else "outcome")
            button.clicked.connect(lambda _=False, name=outcome.name: self.complete(name))
            self._outcome_box.addWidget(button)
            self.complete_buttons[outcome.name] = button
            if i < hotkeys.OUTCOMES:
                action = QAction(self)
                action.setObjectName(f"action_{hotkeys.outcome_action(i + 1)}")
                action.triggered.connect(lambda _=False, name=outcome.name: self.complete(name))
                button.addAction(action)
                self._outcome_actions[hotkeys.outcome_action(i + 1)] = action
        self._apply_keymap()
        self._order_tabs()
        self._set_actions()  # built before a claim: its outcome buttons wait for the item

    def _order_tabs(self) -> None:
        """Tab goes through the fields, then along the action row as it reads, left to right (Release,
        Defer, Extend, Save, Complete), then on to the notes beside the form: a keyboard user meets the
        buttons where the eye does. Qt's own order follows when each widget was made: the outcome buttons,
        made with each queue's form, came right after the last field and Save ten stops later."""
        names = self.form.names()
        if not names:
            return
        chain = [
            self.form.field(names[-1]),
            self.release_button,
            self.defer_button,
            self.escalate_button,
            self.extend_button,
            self.save_button,
            *self.complete_buttons.values(),
            self.item_log.entries,
            self.item_log.note,
            self.item_log.add_button,
        ]
        for before, after in itertools.pairwise(chain):
            QWidget.setTabOrder(before, after)

    def _due_text(self, queue: str, claim: models.Claim) -> str:
        """ " · due in 3h05m" or " · overdue by 2d04h" (on the database clock), or nothing."""
        seconds = self.session.due_seconds(queue, claim)
        if seconds is None:
            return ""
        if seconds < 0:
            return " · " + self.tr("overdue by {0}").format(times.duration(-seconds))
        return " · " + self.tr("due in {0}").format(times.duration(seconds))

    @Slot(list)
    def _on_completions_lost(self, locks: list[models.Lock]) -> None:
        """The database switched servers and lost Completes this window confirmed: say so plainly."""
        items = ", ".join(self._short_label(lock.queue, lock.key) for lock in locks)
        self.switch_banner.show_text(
            self.tr(
                "The database switched to another server, which does not have %n Complete(s) you made just before: "
                "{0}. Still locked to you: open them from My unfinished items and complete them again.",
                "",
                len(locks),
            ).format(items)
        )

    @Slot(object)
    def _on_handed_over(self, event: models.Event) -> None:
        """A supervisor gave this user an item: say who and which, offer to open it (announced, and a
        system notification when the window is not in front)."""
        label = self._short_label(event.queue, event.key)
        previous = (event.detail or {}).get("reassigned_from")
        if previous:
            text = self.tr("{0} handed you {1} (it was {2}'s). It is locked to you now.").format(
                event.actor, label, previous
            )
        else:
            text = self.tr("{0} handed you {1}. It is locked to you now.").format(event.actor, label)
        self._handed = (event.queue, event.key)
        self.handed_banner.show_text(text)
        self.announcer.announce(self.handed_banner, text, assertive=True)
        if not self.isActiveWindow():
            self._notify(self.tr("Item handed to you"), text)

    @Slot()
    def _open_handed(self) -> None:
        if self._handed is None:
            return
        queue, text_key = self._handed
        self.handed_banner.setVisible(False)
        # The trail writes keys as text; the resume panel (filled again when it was handed) has the key as
        # the table holds it.
        entry = next((e for e in self.resume_panel.entries() if (e.queue, str(e.key)) == (queue, text_key)), None)
        self._open_from_resume(queue, entry.key if entry is not None else text_key)

    def _short_label(self, queue: str, key: Any) -> str:
        return f"{self._queue_config(queue).title} {key}"

    def _item_label(self) -> str:
        cur = self.session.current
        if cur is None:
            return ""
        item = cur.claim.item
        summary = next(
            (
                str(item[name])
                for name in self.session.list_columns.get(cur.queue, [])
                if item.get(name) not in (None, "")
            ),
            "",
        )
        return f"{self._queue_config(cur.queue).title} {cur.lock.key}" + (f" — {summary}" if summary else "")

    @Slot(str)
    def _on_nothing(self, message: str) -> None:
        self.next_button.setEnabled(True)
        if self._refused_draft_item(message):
            return
        if self.session.current is None:
            self._show_message(self.tr("Nothing to do right now. {0}.").format(message[0].upper() + message[1:]))
        else:
            self.statusBar().showMessage(message, 6000)

    @Slot(object, dict)
    def _on_saved(self, lock: models.Lock, saved: dict[str, Any]) -> None:
        self.form.rebase(saved)
        self._write_journal()  # anything typed meanwhile is still unsaved
        self.info_banner.setVisible(False)
        self.statusBar().showMessage(
            self.tr("Saved. Your lock runs until {0}.").format(times.clock(lock.expires_at)), 5000
        )

    @Slot(object)
    def _on_completed(self, done: models.Completion) -> None:
        self.warning_banner.setVisible(False)
        self.timer_label.setText("")
        left = self.session.undo_seconds_left()
        self.statusBar().showMessage(
            self.tr("Completed {0} ({1}). Undo: {2}").format(done.key, done.outcome, self.keymap.shown("undo"))
            if left > 0
            else self.tr("Completed {0} ({1}).").format(done.key, done.outcome),
            6000,
        )
        if left > 0:  # the action goes grey once the queue's undo time is over
            QTimer.singleShot(int(left * 1000) + 50, self._set_actions)
        self._set_actions()
        if not self.session.settings.next_after_complete:
            self._show_message(
                self.tr("Completed {0}. Press Next item ({1}) for the next one.").format(
                    done.key, self.keymap.shown("next")
                )
            )

    @Slot()
    def _on_released(self) -> None:
        self.timer_label.setText("")
        self._set_actions()
        self._show_message(
            self.tr("Released. Press Next item ({0}) for the next one.").format(self.keymap.shown("next"))
        )

    @Slot(list)
    def _show_escalations(self, rows: list[Any]) -> None:
        def describe(event: models.Event) -> str:
            what, who = item_log.event_text(event)
            when = times.moment(event.at)
            if who:
                return self.tr("{0} by {1} at {2}").format(what, who, when)
            return self.tr("{0} at {1}").format(what, when)

        dialogs.ask(dialogs.EscalationsDialog(rows, describe, self))

    @Slot()
    def _on_escalated(self) -> None:
        self.timer_label.setText("")
        self._set_actions()
        self._show_message(
            self.tr("Handed to a supervisor. Press Next item ({0}) for the next one.").format(self.keymap.shown("next"))
        )

    @Slot(object)
    def _on_deferred(self, deferral: models.Deferral) -> None:
        self.timer_label.setText("")
        self._set_actions()
        self._show_message(
            self.tr(
                "Deferred until {0}: it comes back to you first then. Press Next item ({1}) for the next one."
            ).format(times.moment(deferral.until), self.keymap.shown("next"))
        )

    @Slot(object)
    def _on_extended(self, lock: models.Lock) -> None:
        self.warning_banner.setVisible(False)
        self.statusBar().showMessage(self.tr("Lock extended until {0}.").format(times.clock(lock.expires_at)), 4000)

    @Slot(float)
    def _on_tick(self, left: float) -> None:
        cur = self.session.current
        if cur is None:
            return
        warn = self.session.settings.warn_at(self.session.lock_seconds(cur.queue))
        state = "critical" if left < 60 else "soon" if left <= warn else "ok"
        text = self.tr("expired") if left <= 0 else self.tr("{0} left").format(times.duration(left))
        self.timer_label.setText(self.tr("Lock on {0}: {1}").format(cur.lock.key, text))
        if self.timer_label.property("state") != state:
            dialogs.set_state(self.timer_label, state)
        if self.warning_banner.isVisible():
            self.warning_banner.label.setText(self._warning_text(left))  # counts down with the timer

    def _warning_text(self, left: float) -> str:
        return self.tr(
            "Your lock on {0} runs out in {1}. Extend it to keep working, or your edits stay here as a draft."
        ).format(self._item_label(), times.duration(max(0.0, left)))

    @Slot(float)
    def _on_warning(self, left: float) -> None:
        text = self._warning_text(left)
        if not self.warning_banner.isVisible():  # once: the banner's countdown is not re-announced
            self.announcer.announce(self.warning_banner, text)
        self.warning_banner.show_text(text)
        if not self.isActiveWindow():
            self._notify(self.tr("Lock about to expire"), text)

    @Slot(object)
    def _on_lost(self, exc: errors.LockLost) -> None:
        self._write_journal()
        focused = QApplication.focusWidget()
        on_page = focused is not None and self.stack.currentIndex() == ITEM and self.stack.isAncestorOf(focused)
        self.form.set_editable(False)
        self.warning_banner.setVisible(False)
        self.info_banner.setVisible(False)
        self.timer_label.setText("")
        kept = bool(self.form.changes())
        head = draft_view.lost_sentence(exc, self._short_label(exc.queue, exc.key))
        text = f"{head} {draft_view.holder_hint(exc, self.session.user)}"
        text += " " + (self.tr("Your edits are kept as a draft.") if kept else self.tr("You had no unsaved edits."))
        self.lost_banner.show_text(text)
        self.announcer.announce(self.lost_banner, text, assertive=True)
        self.reclaim_button.setText(self.tr("Claim again and reapply my edits") if kept else self.tr("Claim again"))
        self.reclaim_button.setVisible(exc.cause not in ("completed",) and exc.holder is None)
        self._holder_told = (exc.holder, self.reclaim_button.isVisibleTo(self.lost_banner))
        self.compare_button.setVisible(kept)
        self.discard_button.setVisible(kept)
        self._set_actions()
        self._keep_focus_on_item(on_page)
        if not self.isActiveWindow():
            self._notify(self.tr("Lock lost"), text)
        # Who holds it goes stale (someone may claim it a minute later): read it again, now and then.
        self.drafts.watch(exc.queue, exc.key, self.session.settings.check_interval, self._on_holder)

    def _keep_focus_on_item(self, was_on_page: bool) -> None:
        """After a loss the buttons go grey (and a disabled field lets go of the focus): Qt would pass the
        focus on along the chain, up to the queue picker. It stays on the form, else goes to the banner."""
        focused = QApplication.focusWidget()
        kept = focused is not None and focused.isEnabled() and self.form.isAncestorOf(focused)
        if not was_on_page or kept:
            return
        target = next(
            (b for b in (self.reclaim_button, self.compare_button) if b.isVisibleTo(self.lost_banner)),
            self.lost_banner.label,
        )
        target.setFocus(Qt.FocusReason.OtherFocusReason)

    def _lost_text(self, lost: errors.LockLost, now: str) -> str:
        head = draft_view.lost_sentence(lost, self._short_label(lost.queue, lost.key))
        kept = (
            self.tr(
                "Your edits are kept as a draft: “View my draft…” shows them beside the current values, "
                "to copy or discard."
            )
            if self.compare_button.isVisible()
            else self.tr("You had no unsaved edits.")
        )
        return f"{head} {now} {kept}"

    def _on_holder(self, holder: draft_view.Holder) -> None:
        """A fresh read of who holds the lost item: the banner says it, and offers Claim again only if free."""
        lost = self.session.lost
        if lost is None or self.session.current is not None:
            self.drafts.unwatch()
            return
        lock = holder.view.lock if holder.view is not None else None
        if lock is not None and not lock.expired and lock.owner == self.session.user:
            # Given back to this user (a supervisor reassigned it to them): nothing is lost any more,
            # the button opens it with the kept edits laid over it.
            kept = self.compare_button.isVisible()
            text = self.tr("{0} is yours again: you hold it until {1}. Carry on where you left off.").format(
                self._short_label(lost.queue, lost.key), times.clock(lock.expires_at)
            )
            if self.lost_banner.label.text() != text:  # told once, not at every later read
                self.announcer.announce(self.lost_banner, text)
            self.lost_banner.show_text(text)
            self.reclaim_button.setText(self.tr("Carry on with my edits") if kept else self.tr("Carry on"))
            self.reclaim_button.setVisible(True)
            return
        self.reclaim_button.setText(
            self.tr("Claim again and reapply my edits") if self.compare_button.isVisible() else self.tr("Claim again")
        )
        now = draft_view.now_sentence(holder)
        self.lost_banner.show_text(self._lost_text(lost, now))
        if holder.view is None:  # unknown (database unreachable): leave the button as it was
            return
        self.reclaim_button.setVisible(holder.free)
        # Someone took it (Claim again has gone), or it came free again: said at once, not a silent
        # change of the banner a blind operator is not reading (issue 53); a later read that finds the
        # same holder is not said again.
        told = (lock.owner if lock is not None and not lock.expired else None, holder.free)
        if told != self._holder_told:
            self._holder_told = told
            self.announcer.announce(
                self.lost_banner, f"{self._short_label(lost.queue, lost.key)}: {now}", assertive=True
            )

    def _refused_draft_item(self, message: str) -> bool:
        """Claiming an item back for its draft was refused (someone else holds it): say who, keep the draft
        in view, never blank the form."""
        lost, opening, self._opening_draft = self.session.lost, self._opening_draft, None
        if self.session.current is None and lost is not None and self.stack.currentIndex() == ITEM:
            self.lost_banner.show_text(self._lost_text(lost, message[0].upper() + message[1:] + "."))
            self.reclaim_button.setVisible(False)
            self.drafts.watch(lost.queue, lost.key, self.session.settings.check_interval, self._on_holder)
            return True
        if opening is not None and self.session.current is None:
            self.statusBar().showMessage(
                message[0].upper()
                + message[1:]
                + ". "
                + self.tr("Your draft is kept: it is shown beside the current values."),
                10_000,
            )
            self.stack.setCurrentIndex(RESUME)
            self.drafts.open(*opening)
            return True
        return False

    @Slot(object)
    def _on_failed(self, exc: errors.WorkbenchError) -> None:
        column = getattr(exc, "column", None)
        if isinstance(exc, errors.InvalidValue) and column:
            self.form.show_errors({column: problem_text.problem(exc)})
        self._opening_draft = None
        self._set_busy_item(False)
        self.next_button.setEnabled(True)
        text = self._failure_text(exc)
        self.statusBar().showMessage(text, 8000)
        if self.stack.currentIndex() == ITEM:
            self.info_banner.show_text(text)

    def _failure_text(self, exc: errors.WorkbenchError) -> str:
        """The error in the user's language where it is one workbench knows (English otherwise)."""
        cur = self.session.current
        if isinstance(exc, errors.ExtendLimitReached) and cur is not None:
            limit = self._queue_config(cur.queue).max_lock_seconds
            if limit is not None:  # said on the user's clock, not in the database's time
                text = self.tr("The lock cannot be extended beyond {0}: this queue allows at most {1} per lock.")
                return text.format(times.clock(cur.lock.expires_at), times.span(limit))
        return problem_text.message(exc, self.session.titles)

    @Slot(bool, str)
    def _on_connection(self, reachable: bool, message: str) -> None:
        if reachable:
            login = self.session.wb.database_login()
            if login and login != self.session.user:  # e.g. working as ann through a shared login
                text = self.tr("Connected as {0} (database login {1}) — {2}").format(
                    self.session.user, login, self._database_label()
                )
            else:
                text = self.tr("Connected as {0} — {1}").format(self.session.user, self._database_label())
            self.connection_label.setText(text)
            self.connection_label.setToolTip("")
            dialogs.set_state(self.connection_label, "up")
        else:
            wait = self.session.retry_delay()
            # Short enough for a narrow window's status bar; what the driver said is in the tooltip.
            self.connection_label.setText(
                self.tr("Database unreachable — reconnecting (next try in {0:.0f} s); your work here is kept.").format(
                    wait
                )
            )
            self.connection_label.setToolTip(message)
            dialogs.set_state(self.connection_label, "down")
            self.next_button.setEnabled(True)

    @Slot(bool)
    def _on_relay(self, connected: bool) -> None:
        """The change relay wakes the window, or it is away and the window looks for changes itself."""
        if connected:
            self.relay_label.setText(self.tr("Changes: relay"))
            self.relay_label.setToolTip(self.tr("The change relay tells this window at once when its items change."))
        else:
            self.relay_label.setText(self.tr("Relay unreachable — looking for changes itself"))
            self.relay_label.setToolTip(
                self.tr("The change relay does not answer: this window looks for changes itself until it is back.")
            )
        dialogs.set_state(self.relay_label, "up" if connected else "slow")
        self.relay_label.setVisible(True)

    @Slot(bool)
    def _on_busy(self, busy: bool) -> None:
        self._set_actions()
        if busy:
            self._slow_timer.start()
            return
        self._slow_timer.stop()
        if self.connection_label.property("state") == "slow":
            self._on_connection(self.session.reachable, "")

    @Slot()
    def _on_slow(self) -> None:
        if self.session.reachable:  # unreachable already says more than "waiting"
            self.connection_label.setText(self.tr("Waiting for the database… (your work here is kept)"))
            dialogs.set_state(self.connection_label, "slow")

    @Slot(object)
    def _on_open_items(self, found: Any) -> None:
        dialog = dialogs.PickDialog(found, self)
        if dialogs.ask(dialog) and dialog.chosen() is not None:
            chosen = dialog.chosen()
            cur = self.session.current
            if cur is not None and (cur.queue, cur.lock.key) == (self.session.queue_name, chosen):
                return  # the item already open
            self._leave_item(lambda: self.session.open_item(chosen))

    # -- lost lock, drafts -----------------------------------------------------------------------------

    def _reclaim(self) -> None:
        lost = self.session.lost
        if lost is not None:
            self.session.open_item(lost.key, lost.queue)

    def _compare(self) -> None:
        lost = self.session.lost
        if lost is not None:
            self._write_journal()  # the view reads the journal: it must hold what the form shows
            self.drafts.open(lost.queue, lost.key)

    def _discard(self) -> None:
        lost = self.session.lost
        if lost is not None:
            self._write_journal()
            self.drafts.discard(lost.queue, lost.key)

    def _on_draft_discarded(self, queue: str, key: Any) -> None:
        self.resume_panel.set_entries(draft_view.without_draft(self.resume_panel.entries(), queue, key))
        if self.session.current is None and self.session.lost is None and self.stack.currentIndex() == ITEM:
            self.drafts.unwatch()  # the lost item's page: its draft is gone, nothing is left to show
            self.lost_banner.setVisible(False)
            self._show_message(
                self.tr("Edits discarded. Press Next item ({0}) for the next one.").format(self.keymap.shown("next"))
            )

    def _open_from_resume(self, queue: str, key: Any) -> None:
        cur = self.session.current
        if cur is not None and (cur.queue, cur.lock.key) == (queue, key):
            self.stack.setCurrentIndex(ITEM)  # the open item itself: back to its form as it was
            return
        self.stack.setCurrentIndex(ITEM)  # the open item's edits are journalled from its page
        self._leave_item(lambda: self._open_entry(queue, key), cancelled=lambda: None)

    def _open_entry(self, queue: str, key: Any) -> None:
        entry = next((e for e in self.resume_panel.entries() if (e.queue, e.key) == (queue, key)), None)
        lock_gone = entry is not None and (entry.lock is None or entry.lock.expired)
        self._opening_draft = (queue, key) if entry is not None and entry.has_draft and lock_gone else None
        index = self.queue_picker.findData(queue)
        if index >= 0:
            self.queue_picker.blockSignals(True)
            self.queue_picker.setCurrentIndex(index)
            self.queue_picker.blockSignals(False)
        self.session.open_item(key, queue)

    # -- form, journal, notifications ------------------------------------------------------------------

    @Slot()
    def _on_form_edited(self) -> None:
        self.session.note_activity()
        self._journal_timer.start()

    @Slot()
    def _write_journal(self) -> None:
        self._journal_timer.stop()
        if self.session.current is None and self.session.lost is None:
            return
        if self.stack.currentIndex() != ITEM:
            return
        self.session.record_draft(self.form.changes(), self.form.base())

    def _set_busy_item(self, busy: bool) -> None:
        for button in self.complete_buttons.values():
            button.setEnabled(not busy and self.session.current is not None)

    def _on_queue_picked(self, index: int) -> None:
        name = self.queue_picker.itemData(index)
        if not name:
            return
        cur = self.session.current
        if cur is None or cur.queue == name:
            self._switch_queue(name)
            return
        previous = self.queue_picker.findData(cur.queue)

        def stay() -> None:
            self.queue_picker.blockSignals(True)
            self.queue_picker.setCurrentIndex(previous)
            self.queue_picker.blockSignals(False)

        self._leave_item(lambda: self._switch_queue(name), cancelled=stay)

    def _switch_queue(self, name: str) -> None:
        self.session.set_queue(name)
        self._update_title()
        self._set_actions()
        self.session.load_filter_choices()

    @Slot(str, object)
    def _on_filter_choices(self, queue: str, found: dict[str, list[Any]]) -> None:
        """Offer the values waiting items hold, per column the queue may be narrowed by."""
        if queue != self.session.queue_name:
            return  # an answer for a queue the operator has left
        fields = self._queue_config(queue).fields

        def offer(column: str, value: Any) -> None:
            field = fields.get(column)
            label = field.label if field is not None and field.label else column
            self.filter_box.addItem(self.tr("{0}: {1}").format(label, value), (column, value))

        chosen = self.session.narrow
        self.filter_box.clear()
        self.filter_box.addItem(self.tr("Any item"), None)
        for column, values in found.items():
            for value in values:
                offer(column, value)
        if chosen:  # the value chosen before stays chosen, offered even when no item holds it now
            column, value = next(iter(chosen.items()))
            if self.filter_box.findData((column, value)) < 0:
                offer(column, value)
            self.filter_box.setCurrentIndex(self.filter_box.findData((column, value)))
        self._show_filter_box(bool(found))

    @Slot(int)
    def _on_filter_picked(self, index: int) -> None:
        data = self.filter_box.itemData(index)
        self.session.narrow = {data[0]: data[1]} if data else {}

    def _notify(self, title: str, text: str) -> None:
        """A system notification when the window is not in front (where the desktop offers one)."""
        if not QSystemTrayIcon.isSystemTrayAvailable():
            QApplication.alert(self)
            return
        if self._tray is None:
            self._tray = QSystemTrayIcon(self.windowIcon(), self)
            self._tray.show()
        self._tray.showMessage(title, text, QSystemTrayIcon.MessageIcon.Warning, 15000)

    def _database_label(self) -> str:
        return self.session.wb.database_label()


def _buddy(text: str, control: QWidget, name: str) -> QLabel:
    """The visible label that names `control` for a screen reader (a "labelled by" relation)."""
    label = QLabel(text)
    label.setObjectName(name)
    label.setBuddy(control)
    return label
