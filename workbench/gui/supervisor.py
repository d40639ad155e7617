"""The supervisor console: lock board with force-release and reassign, queue health, operators, history, charts."""

from __future__ import annotations

import csv
import datetime as dt
import gc
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, QLocale, QSettings, Qt, QTimer, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from workbench import services
from workbench.core import errors, models
from workbench.gui import (
    a11y,
    board_model,
    board_view,
    charts,
    dialogs,
    dispatch,
    hotkeys,
    problem_text,
    relay_link,
    supervisor_dialogs,
    times,
)
from workbench.gui.i18n import QT_TRANSLATE_NOOP
from workbench.gui.item_log import event_text

ALL = board_model.ALL  # the queue filter's "all queues"
# (the period's name in the picker, days, how chart titles say it); translated where shown.
PERIODS = (
    (QT_TRANSLATE_NOOP("SupervisorWindow", "Today"), 0, QT_TRANSLATE_NOOP("SupervisorWindow", "today")),
    (QT_TRANSLATE_NOOP("SupervisorWindow", "Last 7 days"), 7, QT_TRANSLATE_NOOP("SupervisorWindow", "last 7 days")),
    (QT_TRANSLATE_NOOP("SupervisorWindow", "Last 30 days"), 30, QT_TRANSLATE_NOOP("SupervisorWindow", "last 30 days")),
)
SIZE_SAMPLE = 25  # rows measured per column when the board's columns are sized to their contents
SUMMARY = board_model.COLUMNS.index("Summary")


class SupervisorWindow(QMainWindow):
    """Reads through the dispatcher only; a refresh never blocks the window and keeps the selection."""

    def __init__(
        self,
        wb: services.Workbench,
        user: str,
        *,
        refresh_seconds: int = 5,
        changes_seconds: float | None = None,
        board_seconds: float | None = None,
        settings: QSettings | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        # Every refresh of thousands of locks leaves thousands of new objects for the garbage
        # collector, whose full passes then scan every object of the process with all threads
        # stopped (64-189 ms with 10,000 locks' rows on a loaded machine, 3-20 ms after this).
        # What is alive now (modules, Qt wrappers, the engine) mostly stays for the process's
        # life: collected first, then frozen, it is left out of those passes, which then scan
        # little more than the board's rows. (The price: an object alive at the opening that
        # later dies in a reference cycle, e.g. a widget the operator window replaces, is not
        # reclaimed.)
        gc.collect()
        gc.freeze()
        # The open database (services' door: an engine a test opened itself is put behind one) and the
        # queue settings it was opened with: all the window holds of it.
        self.wb, self.user, self.settings = services.Workbench.of(wb), user, settings
        self.config = config = self.wb.config
        self.service = services.Supervisor(self.wb, user)  # every database call goes through it, off this thread
        self.titles = {name: q.title for name, q in config.queues.items()}
        # Whom each queue hands its escalated items to (the Escalated tab says it): its group, or None.
        self.escalate_to = {name: q.escalate_to for name, q in config.queues.items()}
        self.setObjectName("supervisor_window")
        self.setWindowTitle(self.tr("workbench supervisor — {0}").format(user))
        self.dispatcher = dispatch.Dispatcher(self, threads=2)
        self._refreshing = False
        self._again = False
        self.last_refresh_ms = 0.0
        self._said, self._said_at = "", 0.0  # what an action reported, kept before refreshes for a while
        self.model = board_model.BoardModel(warn_seconds=float(config.app.warn_before), titles=self.titles)
        self._sized = False  # the board's columns are sized to their contents once, at the first locks
        self.relay_label = QLabel("")  # where changes come from, shown when the config names a change relay
        self.relay_label.setObjectName("relay_label")
        self.relay_label.setVisible(False)
        self._build(refresh_seconds)
        self._timer = QTimer(self)
        self._timer.timeout.connect(self._on_timer)
        self._timer.start(refresh_seconds * 1000)
        # The change feed: a claim, a release or a Complete anywhere reaches the board within about a
        # second (`[app] changes_every`), only the items it names read again.
        # changes_seconds: how often (None: `[app] changes_every`; 0: never, the timer alone refreshes).
        # With the feed on, the timer reads the whole board only every `[app] board_every` (board_seconds):
        # at 1,000 windows through PgBouncer the 5 s whole-board reloads were 42 % of the server's statement
        # time, and what they would catch the feed names, or the board's own clock shows (time left, expired).
        self._board_every = float(config.app.board_every if board_seconds is None else board_seconds)
        self._board_at = -math.inf  # time.monotonic() of the last whole-board read asked for
        self._feed_ok = False  # the feed's last look answered: the board is kept current by it
        self._clock = QTimer(self)  # the times left count down between reads (BoardModel.tick)
        self._clock.timeout.connect(self._tick)
        self._clock.start(1000)
        self._looking = False
        self._page: Any = None  # the board shown (a BoardPage): the feed's changes update it
        self._changes = QTimer(self)
        self._changes.timeout.connect(self._look_for_changes)
        every = config.app.changes_every if changes_seconds is None else changes_seconds
        # With a change relay (`[app] relay`) the console also looks when woken about its queues.
        self.relay: relay_link.RelayLink | None = None
        self.notices: relay_link.RelayLink | None = None  # no relay: the database's notices, where it sends them
        if every > 0:
            self._changes.setInterval(int(every * 1000))
            self._look_for_changes()  # the first look marks where the feed starts
            if config.app.relay:
                from workbench.services import relay_client

                client = relay_client.RelayClient(config.app.relay, user, config.queues, every=True)
                # It keeps its own look every `changes_every` (a few consoles cost the server little; woken
                # only, its board waited for the relay's read, the wake-up and the gap: later than polling);
                # a wake-up half an interval after its last look makes the next one sooner.
                self.relay = relay_link.RelayLink(
                    self.dispatcher,
                    client,
                    self._changes,
                    self._look_for_changes,
                    every,
                    self,
                    least_gap=every / 2,
                )
                self.relay.state_changed.connect(self._on_relay)
                self.relay.start()
            elif config.app.listen and (notices := self.service.notice_client(every=True)) is not None:
                # No relay, PostgreSQL reached directly: the database's notice of a change in its queues makes
                # the next look sooner, as a relay's wake-up would (no round trip here: it connects on start).
                self.notices = relay_link.RelayLink(
                    self.dispatcher,
                    notices,
                    self._changes,
                    self._look_for_changes,
                    every,
                    self,
                    least_gap=every / 2,
                    what="notices",
                )
                self.notices.start()
            else:
                self._changes.start()
        self.resize(1100, 680)

    @Slot()
    def _look_for_changes(self) -> bool:
        if self._looking:
            return False  # one in flight (the relay's link asks again)
        self._looking = True

        def done(events: list[Any]) -> None:
            self._looking, self._feed_ok = False, True
            if events and self.tabs.currentIndex() == 0:
                self._refresh_changed(events)

        def failed(_exc: BaseException) -> None:
            # The refreshes say when the database is unreachable; the timer reads the whole board again.
            self._looking, self._feed_ok = False, False

        self.dispatcher.call(self.service.changes, done, failed, quiet=True)
        return True

    # -- building ---------------------------------------------------------------------------------

    def _build(self, refresh_seconds: int) -> None:
        central = QWidget()
        outer = QVBoxLayout(central)
        bar = QHBoxLayout()
        self.queue_filter = QComboBox()
        self.queue_filter.setObjectName("queue_filter")
        self.queue_filter.addItem(self.tr("All queues"), ALL)
        for name, queue in self.config.queues.items():
            self.queue_filter.addItem(queue.title, name)
        self.holder_filter = QLineEdit()
        self.holder_filter.setObjectName("holder_filter")
        self.holder_filter.setPlaceholderText(self.tr("Filter by holder"))
        a11y.clear_button(self.holder_filter, self.tr("the holder filter"))
        self.interval = QSpinBox()
        self.interval.setObjectName("refresh_interval")
        self.interval.setRange(2, 600)
        self.interval.setSuffix(self.tr(" s"))
        self.interval.setValue(refresh_seconds)
        self.interval.setToolTip(
            self.tr(
                "How often the tab shown is read again. The lock board shows claims and releases as they happen "
                "and counts the time left itself: it is read whole every {0}, or with Refresh."
            ).format(times.duration(float(self.config.app.board_every)))
        )
        self.refresh_button = QPushButton(self.tr("Refresh"))
        self.refresh_button.setObjectName("refresh_button")
        self.status = QLabel(self.tr("Loading…"))
        self.status.setObjectName("refresh_status")
        self.period = QComboBox()
        self.period.setObjectName("stats_period")
        self.period.setToolTip(self.tr("The period of the operators' figures and the charts"))
        for name, days, _in_title in PERIODS:
            self.period.addItem(QCoreApplication.translate("SupervisorWindow", name), days)
        # Labels are the controls' buddies, so that a screen reader names each control by its label.
        for text, control in ((self.tr("Queue:"), self.queue_filter), (self.tr("Period:"), self.period)):
            label = QLabel(text)
            label.setBuddy(control)
            bar.addWidget(label)
            bar.addWidget(control)
        self.holder_filter.setAccessibleName(self.tr("Filter by holder"))
        bar.addWidget(self.holder_filter, 1)
        every = QLabel(self.tr("Refresh every"))
        every.setBuddy(self.interval)
        self.interval.setAccessibleName(self.tr("Refresh every"))
        bar.addWidget(every)
        bar.addWidget(self.interval)
        bar.addWidget(self.refresh_button)
        outer.addLayout(bar)
        self.tabs = QTabWidget()
        self.tabs.setObjectName("supervisor_tabs")
        self.tabs.addTab(self._board_tab(), self.tr("Lock board"))
        self.tabs.addTab(self._health_tab(), self.tr("Queue health"))
        self.tabs.addTab(self._operators_tab(), self.tr("Operators"))
        self.tabs.addTab(self._history_tab(), self.tr("Item history"))
        self.charts = charts.ChartsPanel()
        self.tabs.addTab(self.charts, self.tr("Charts"))
        self.tabs.addTab(self._escalated_tab(), self.tr("Escalated"))
        outer.addWidget(self.tabs, 1)
        self.setCentralWidget(central)
        self.statusBar().addWidget(self.status, 1)
        self.statusBar().addPermanentWidget(self.relay_label)
        self.period.currentIndexChanged.connect(lambda _i: self.refresh())
        self.queue_filter.currentIndexChanged.connect(self._on_filter)
        self.holder_filter.textChanged.connect(self._on_filter)
        self.interval.valueChanged.connect(lambda s: self._timer.setInterval(s * 1000))
        self.refresh_button.clicked.connect(self.refresh)
        self.tabs.currentChanged.connect(lambda _i: self.refresh())
        # The operator window's Quit keys (Ctrl+Q, or the user's own choice) close the console too; the
        # platform's Quit binding as well where it has one (none on Windows, hence not that alone).
        keymap = hotkeys.Keymap.load(self.settings) if self.settings is not None else hotkeys.Keymap()
        close = QAction(self.tr("Close"), self)
        close.setObjectName("close_action")
        close.setShortcuts([*keymap.sequences("quit"), *QKeySequence.keyBindings(QKeySequence.StandardKey.Quit)])
        close.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        close.triggered.connect(self.close)
        self.addAction(close)

    def _board_tab(self) -> QWidget:
        page = QWidget()
        layout = QVBoxLayout(page)
        self.board = board_view.BoardView(SUMMARY, whole=(board_model.TIME_LEFT, board_model.DUE))
        self.board.widest = {c: board_model.BoardModel.widest(c) for c in self.board.whole}
        self.board.setObjectName("lock_board")
        self.board.setAccessibleName(self.tr("Lock board"))
        a11y.leave_with_tab(self.board)  # Tab reaches Force release and Reassign below it
        self.board.setModel(self.model)
        self.board.setSortingEnabled(True)
        self.board.sortByColumn(board_model.AGE, Qt.SortOrder.DescendingOrder)  # oldest locks first
        self.board.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.board.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.board.setAlternatingRowColors(False)  # the colours mean something here
        self.board.verticalHeader().setVisible(False)
        self.board.setWordWrap(False)  # one line a lock: a long summary elides, its tooltip has it all
        # Time to due: only where some queue names a due column.
        self.board.setColumnHidden(board_model.DUE, not any(q.due for q in self.config.queues.values()))
        # Sized from a sample of rows, at the first locks (see _show_board) and when the view changes size
        # (BoardView), never at a refresh: that measured every cell again for every refreshed row.
        self.board.horizontalHeader().setResizeContentsPrecision(SIZE_SAMPLE)  # rows measured per column
        layout.addWidget(self.board, 1)
        # Said when the board lists only the oldest locks of a queue with very many.
        self.board_note = QLabel()
        self.board_note.setObjectName("board_note")
        self.board_note.setWordWrap(True)
        self.board_note.setVisible(False)
        layout.addWidget(self.board_note)
        actions = QHBoxLayout()
        self.force_button = QPushButton(self.tr("Force release…"))
        self.force_button.setObjectName("force_release_button")
        self.reassign_button = QPushButton(self.tr("Reassign…"))
        self.reassign_button.setObjectName("reassign_button")
        self.history_button = QPushButton(self.tr("History"))
        self.history_button.setObjectName("board_history_button")
        self.export_button = QPushButton(self.tr("Export CSV…"))
        self.export_button.setObjectName("export_board")
        self.legend = QLabel(self.tr("Yellow: expires soon · Red: expired, back in the pool on the next claim"))
        self.legend.setObjectName("board_legend")
        for button in (self.force_button, self.reassign_button, self.history_button):
            actions.addWidget(button)
        actions.addStretch(1)
        actions.addWidget(self.legend)
        actions.addWidget(self.export_button)
        layout.addLayout(actions)
        self.force_button.clicked.connect(self.force_release)
        self.reassign_button.clicked.connect(self.reassign)
        self.history_button.clicked.connect(self._history_of_selected)
        self.export_button.clicked.connect(lambda: self._export(self.model.csv_rows(), "lock-board.csv"))
        self.board.selectionModel().selectionChanged.connect(lambda *_: self._set_actions())
        self._set_actions()
        return page

    def _health_tab(self) -> QWidget:
        page = QWidget()
        layout = QVBoxLayout(page)
        self.health = _table(
            "queue_health",
            [
                self.tr("Queue"),
                self.tr("Waiting"),
                self.tr("Locked"),
                self.tr("Expired locks"),
                self.tr("Completed today"),
                self.tr("Oldest waiting"),
                self.tr("Overdue"),
                self.tr("Releases today"),
                self.tr("Expiries today"),
                self.tr("Force releases today"),
            ],
        )
        # A click chooses a queue (its whole row), the one Move waiting items… works on; a refresh keeps
        # that queue chosen wherever its row sorts to (see _show_health).
        self.health.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.health.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        layout.addWidget(self.health, 1)
        bar = QHBoxLayout()
        bar.addStretch(1)
        self.move_button = QPushButton(self.tr("Move waiting items…"))
        self.move_button.setObjectName("move_button")
        self.move_button.setToolTip(
            self.tr("Change a column of the selected queue's waiting items nobody holds, e.g. another category or tier")
        )
        self.move_button.clicked.connect(self.move_items)
        bar.addWidget(self.move_button)
        layout.addLayout(bar)
        layout.addWidget(QLabel(self.tr("Why items were released today:")))
        self.reasons = _table("release_reasons", [self.tr("Queue"), self.tr("Reason"), self.tr("Times")])
        self.health.setAccessibleName(self.tr("Queue health"))
        self.reasons.setAccessibleName(self.tr("Why items were released today:"))
        layout.addWidget(self.reasons, 1)
        return page

    def _operators_tab(self) -> QWidget:
        page = QWidget()
        layout = QVBoxLayout(page)
        bar = QHBoxLayout()
        bar.addStretch(1)
        export = QPushButton(self.tr("Export CSV…"))
        export.setObjectName("export_operators")
        export.clicked.connect(lambda: self._export(_table_rows(self.operators), "operators.csv"))
        bar.addWidget(export)
        layout.addLayout(bar)
        self.operators: QTableWidget = _table(
            "operator_stats",
            [
                self.tr("Queue"),
                self.tr("Operator"),
                self.tr("Completed"),
                self.tr("Median handle time"),
                self.tr("90th percentile"),
                self.tr("Releases"),
                self.tr("Expiries"),
                self.tr("Force-released"),
                self.tr("Accepted"),
                self.tr("Sent back"),
            ],
        )
        for column in (8, 9):  # four eyes: how the operator's reviewed work fared
            header = self.operators.horizontalHeaderItem(column)
            assert header is not None  # _table gave every column its header item
            header.setToolTip(
                self.tr("Of this operator's work reviewed in the period (a dash: the queue is not reviewed)")
            )
        self.operators.setAccessibleName(self.tr("Operators"))
        layout.addWidget(self.operators, 1)
        return page

    def _escalated_tab(self) -> QWidget:
        """The items operators handed to a supervisor and nobody took up yet (Take: the selected one is the
        supervisor's to work; a double click: its history, where Reopen puts it back to work)."""
        page = QWidget()
        layout = QVBoxLayout(page)
        self.escalated = _table(
            "escalated_items",
            [
                self.tr("Queue"),
                self.tr("Item"),
                self.tr("Waiting for"),
                self.tr("Escalated by"),
                times.with_zone(self.tr("When")),
                self.tr("Reason"),
            ],
            sortable=False,  # newest first, as listed; a row is its entry of _escalated_rows
        )
        self._escalated_rows: list[models.Event] = []
        self.escalated.setAccessibleName(self.tr("Escalated items"))
        waiting_for = self.escalated.horizontalHeaderItem(2)
        if waiting_for is not None:
            waiting_for.setToolTip(
                self.tr("Whom the item was handed to: the queue's escalate_to group (and supervisors), or supervisors")
            )
        self.escalated.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.escalated.cellDoubleClicked.connect(self._history_of_escalated)
        layout.addWidget(self.escalated, 1)
        bar = QHBoxLayout()
        self.take_button = QPushButton(self.tr("Take"))
        self.take_button.setObjectName("take_button")
        self.take_button.setToolTip(
            self.tr("Take the selected item to work it: it is yours, with a fresh lock, as after a claim")
        )
        self.take_button.setEnabled(False)  # until an item is selected
        self.take_button.clicked.connect(self.take)
        self.escalated.itemSelectionChanged.connect(
            lambda: self.take_button.setEnabled(bool(self.escalated.selectionModel().selectedRows()))
        )
        bar.addStretch(1)
        bar.addWidget(self.take_button)
        layout.addLayout(bar)
        return page

    @Slot()
    def take(self) -> None:
        """Take the escalated item selected (the table's take); then list the escalated items again."""
        chosen = self.escalated.selectionModel().selectedRows()
        if not chosen or not 0 <= chosen[0].row() < len(self._escalated_rows):
            return
        escalated = self._escalated_rows[chosen[0].row()]
        name, key = escalated.queue, escalated.key

        def done(_: Any) -> None:
            self._say(self.tr("{0} {1} is yours now: work it in the workbench window.").format(self.titles[name], key))
            self.refresh()

        def failed(exc: BaseException) -> None:
            QMessageBox.warning(self, "workbench", self.tr("Not taken: {0}").format(self._text_of(exc)))
            self.refresh()

        self.take_button.setEnabled(False)
        self.dispatcher.call(lambda: self.service.take(name, key), done, failed)

    def _show_escalated(self, found: list[Any]) -> None:
        self._escalated_rows = found
        rows = [
            [self.titles[e.queue], e.key, self._waiting_for(e.queue), e.actor, times.moment(e.at), e.reason or ""]
            for e in found
        ]
        _fill(self.escalated, rows)

    def _waiting_for(self, queue: str) -> str:
        """Whom `queue`'s escalated items wait for, as the Escalated tab says it: its escalate_to group's
        name, or Supervisors where it names none (the config's: no database call)."""
        group = self.escalate_to.get(queue)
        return group if group is not None else self.tr("Supervisors")

    def _history_of_escalated(self, row: int, _column: int) -> None:
        if not 0 <= row < len(self._escalated_rows):
            return
        escalated = self._escalated_rows[row]
        self.history_queue.setCurrentIndex(self.history_queue.findData(escalated.queue))
        self.history_key.setText(escalated.key)
        self.tabs.setCurrentIndex(3)
        self.show_history()

    def _history_tab(self) -> QWidget:
        page = QWidget()
        layout = QVBoxLayout(page)
        bar = QHBoxLayout()
        self.history_queue = QComboBox()
        self.history_queue.setObjectName("history_queue")
        for name, queue in self.config.queues.items():
            self.history_queue.addItem(queue.title, name)
        self.history_key = QLineEdit()
        self.history_key.setObjectName("history_key")
        self.history_key.setPlaceholderText(self.tr("Item key"))
        self.history_key.setAccessibleName(self.tr("Item key"))
        self.history_queue.setAccessibleName(self.tr("Queue"))
        show = QPushButton(self.tr("Show"))
        show.setObjectName("history_show")
        export = QPushButton(self.tr("Export CSV…"))
        export.setObjectName("export_history")
        self.reopen_button = QPushButton(self.tr("Reopen…"))
        self.reopen_button.setObjectName("reopen_button")
        self.reopen_button.setToolTip(self.tr("Put a finished item back to waiting (the queue's on_reopen values)"))
        queue_label = QLabel(self.tr("Queue:"))
        queue_label.setBuddy(self.history_queue)  # names the list box for a screen reader
        bar.addWidget(queue_label)
        bar.addWidget(self.history_queue)
        bar.addWidget(self.history_key, 1)
        bar.addWidget(show)
        bar.addWidget(self.reopen_button)
        bar.addWidget(export)
        layout.addLayout(bar)
        # In the order they happened: not sortable (two events in one second would swap places).
        self.history = _table(
            "item_history",
            [
                times.with_zone(self.tr("When")),
                self.tr("Event"),
                self.tr("By"),
                self.tr("Holder"),
                self.tr("Reason / outcome"),
            ],
            sortable=False,
        )
        self.history.setAccessibleName(self.tr("Item history"))
        layout.addWidget(self.history, 1)
        show.clicked.connect(self.show_history)
        self.reopen_button.clicked.connect(self.reopen)
        self.history_key.returnPressed.connect(self.show_history)
        export.clicked.connect(lambda: self._export(_table_rows(self.history), "history.csv"))
        return page

    # -- refreshing -------------------------------------------------------------------------------

    def _queues(self) -> list[str]:
        chosen = self.queue_filter.currentData()
        return list(self.config.queues) if chosen == ALL else [chosen]

    @Slot()
    def _on_timer(self) -> None:
        """The timer's turn: the visible tab read again, the lock board only when the feed cannot keep it
        current (off, failing, or `board_every` since its last whole read); Refresh reads it at once."""
        if (
            self.tabs.currentIndex() == 0
            and self._feed_ok
            and self._page is not None
            and time.monotonic() - self._board_at < self._board_every
        ):
            return
        self.refresh()

    @Slot()
    def _tick(self) -> None:
        if self.tabs.currentIndex() == 0 and self.isVisible():
            self.model.tick()

    @Slot()
    def refresh(self) -> None:
        """Reload what the visible tab shows (one refresh at a time; a slow database never piles them up)."""
        if self._refreshing:
            self._again = True  # e.g. the tab changed meanwhile: load it once this answer is in
            return
        self._refreshing, self._again = True, False
        tab = self.tabs.currentIndex()
        names = list(self.config.queues)
        days = self.period.currentData()
        period = QCoreApplication.translate("SupervisorWindow", PERIODS[max(0, self.period.currentIndex())][2])
        chosen = self._queues()  # the queue filter: every tab but the board (which filters its rows itself)
        started = time.monotonic()
        if tab == 0:
            self._board_at = started

        def work() -> Any:
            if tab == 0:
                return self.service.board(names)
            if tab == 1:
                return self.service.health(chosen)
            if tab == 2:
                return self.service.operator_stats(chosen, days)
            if tab == 4:
                hours, handled, opened = self.service.activity(chosen, days)
                return charts.merge_hours(hours), handled, charts.merge_open(opened)
            if tab == 5:
                return self.service.escalated(chosen)
            return None

        def done(result: Any) -> None:
            self._refreshing = False
            if result is not None:
                if tab == 4:
                    hours, handled, opened = result
                    self.charts.show_data(hours, handled, period, opened)
                elif tab == 5:
                    self._show_escalated(result)
                else:
                    (self._show_board, self._show_health, self._show_operators)[tab](result)
            # What the supervisor waited for: the database and the update of the table, not only the former.
            self.last_refresh_ms = (time.monotonic() - started) * 1000
            if result is not None:
                self.status.setText(
                    self._lead()
                    + self.tr("Refreshed {0} ({1:.0f} ms)").format(times.clock(dt.datetime.now()), self.last_refresh_ms)
                )
            self._follow_up()

        def failed(exc: BaseException) -> None:
            self._refreshing = False
            self.status.setText(
                self.tr(
                    "Could not refresh: {0} — trying again in {1} s; the figures shown are from the last refresh"
                ).format(exc, self.interval.value())
            )
            self._follow_up()

        if tab == 3:
            self._refreshing = False
            return
        self.dispatcher.call(work, done, failed)

    def _refresh_changed(self, events: list[Any]) -> None:
        """Bring the board up to date with the feed's changes: only the items they name are read again
        (a full reload of a thousand locks every second would cost the server more than all the windows'
        looks). While another refresh runs, a full one follows it."""
        if self._refreshing or self._page is None:
            self.refresh()
            return
        self._refreshing = True
        page, names, started = self._page, list(self.config.queues), time.monotonic()

        def done(updated: Any) -> None:
            self._refreshing = False
            if self.tabs.currentIndex() == 0:
                self._show_board(updated)
                self.last_refresh_ms = (time.monotonic() - started) * 1000
                self.status.setText(
                    self._lead()
                    + self.tr("Refreshed {0} ({1:.0f} ms)").format(times.clock(dt.datetime.now()), self.last_refresh_ms)
                )
            self._follow_up()

        def failed(_exc: BaseException) -> None:
            self._refreshing = False  # the timer's full refresh says when the database is unreachable
            self._board_at = -math.inf  # and reads the whole board at its next turn: this change was missed
            self._follow_up()

        self.dispatcher.call(lambda: self.service.board_changed(page, events, names), done, failed)

    # An action's report ("2 item(s) reassigned to carla.") is followed at once by the refresh it
    # triggers; were the refresh's "Refreshed 10:31" to replace it, the supervisor would not see it.
    _SAID_SECONDS = 20.0

    def _say(self, text: str) -> None:
        """Report what an action did; the refreshes of the next moments keep it in front."""
        self._said, self._said_at = text, time.monotonic()
        self.status.setText(text)

    def _lead(self) -> str:
        fresh = self._said and time.monotonic() - self._said_at < self._SAID_SECONDS
        return self._said + " · " if fresh else ""

    def _follow_up(self) -> None:
        if self._again:
            self._again = False
            self.refresh()

    def _show_board(self, page: Any) -> None:
        self._page = page
        rows = page.rows
        self.model.update(rows)
        self.board_note.setVisible(page.left_out > 0)
        if page.left_out > 0:
            self.board_note.setText(
                self.tr(
                    "Showing the oldest {0} of {1} locks: the board lists at most {2} per queue. Force release "
                    "and reassign work on the locks shown; `workbench board QUEUE --limit N` lists more."
                ).format(
                    QLocale().toString(len(rows)),
                    QLocale().toString(page.total),
                    QLocale().toString(services.BOARD_ROWS),
                )
            )
        if not self._sized and rows:
            self._sized = True
            self.board.fit()
        self._set_actions()

    def _show_health(self, health: list[Any]) -> None:
        chosen = self._health_queue()
        _fill(
            self.health,
            [
                [
                    self.titles[h.queue],
                    h.waiting,
                    h.locked,
                    h.expired_locks,
                    h.completed_today,
                    _age(h.oldest_waiting_age_seconds),
                    "—" if h.overdue is None else h.overdue,
                    h.releases_today,
                    h.expiries_today,
                    h.force_releases_today,
                ]
                for h in health
            ],
        )
        _fill(
            self.reasons,
            [[self.titles[h.queue], reason, count] for h in health for reason, count in h.release_reasons_today],
        )
        # The queue chosen before stays chosen, by its name: its row may have sorted elsewhere.
        self.health.clearSelection()
        for r in range(self.health.rowCount()):
            cell = self.health.item(r, 0)
            if chosen is not None and cell is not None and cell.text() == self.titles[chosen]:
                self.health.selectRow(r)

    def _show_operators(self, per_queue: list[tuple[str, list[Any]]]) -> None:
        _fill(
            self.operators,
            [
                [
                    self.titles[name],
                    s.operator,
                    s.completed,
                    _age(s.median_handle_seconds),
                    _age(s.p90_handle_seconds),
                    s.releases,
                    s.expiries,
                    s.force_released,
                    _count(s.accepted),
                    _count(s.sent_back),
                ]
                for name, stats in per_queue
                for s in stats
            ],
        )

    @Slot()
    def _on_filter(self) -> None:
        self.model.set_filter(self.holder_filter.text(), self.queue_filter.currentData())
        self._set_actions()
        if self.tabs.currentIndex() in (1, 2, 4):  # read per queue: read again for the queues chosen
            self.refresh()

    # -- actions ------------------------------------------------------------------------------------

    def selected_rows(self) -> list[Any]:
        rows = {i.row() for i in self.board.selectionModel().selectedRows()}
        return [self.model.row_at(r) for r in sorted(rows)]

    def _set_actions(self) -> None:
        count = len(self.selected_rows())
        self.force_button.setEnabled(count >= 1)
        self.reassign_button.setEnabled(count >= 1)
        self.history_button.setEnabled(count == 1)

    @Slot()
    def force_release(self) -> None:
        rows = self.selected_rows()
        if not rows:
            return
        dialog = supervisor_dialogs.ForceReleaseDialog(rows, self, self.titles)
        if not dialogs.ask(dialog):
            return
        reason = dialog.reason()
        self._act(
            rows,
            lambda r: self.service.force_release(r.queue, r.key, reason),
            lambda n: self.tr("%n item(s) released.", "", n),
        )

    @Slot()
    def reassign(self) -> None:
        rows = self.selected_rows()
        if not rows:
            return
        owners = {r.owner for r in rows}
        queues = sorted({r.queue for r in rows})

        def ask(known: list[str]) -> None:
            # Whoever holds a lock now, and whoever has worked these queues (the audit trail's claims);
            # the box stays editable for someone new.
            offered = {r.owner for r in self.model.rows} | set(known)
            holders = sorted(offered - (owners if len(owners) == 1 else set()))
            dialog = supervisor_dialogs.ReassignDialog(rows, holders, self, self.titles)
            if not dialogs.ask(dialog):
                return
            to_user, reason = dialog.to_user(), dialog.reason()
            moving = [r for r in rows if r.owner != to_user]  # those they hold already stay as they are
            self._act(
                moving,
                lambda r: self.service.reassign(r.queue, r.key, to_user, reason),
                lambda n: self.tr("%n item(s) reassigned to {0}.", "", n).format(to_user),
            )

        self.dispatcher.call(lambda: self.service.operators(queues), ask, lambda _exc: ask([]))

    def _text_of(self, exc: BaseException) -> str:
        """An error as the supervisor reads it: in their language where workbench knows the message."""
        return problem_text.message(exc, self.titles) if isinstance(exc, errors.WorkbenchError) else str(exc)

    def _act(self, rows: list[Any], action: Any, done_text: Callable[[int], str]) -> None:
        """Run `action` for each row off the GUI thread; report what happened to each, then refresh."""

        def work() -> list[tuple[Any, str | None]]:
            outcome: list[tuple[Any, str | None]] = []
            for row in rows:
                try:
                    action(row)
                    outcome.append((row, None))
                except errors.LockLost as exc:  # meanwhile completed, released or expired
                    outcome.append((row, self._text_of(exc)))  # it names the item
            return outcome

        def done(outcome: list[tuple[Any, str | None]]) -> None:
            problems = [message for _row, message in outcome if message]
            good = len(outcome) - len(problems)
            self._say(
                done_text(good) + (" " + self.tr("%n not: see the message.", "", len(problems)) if problems else "")
            )
            if problems:
                QMessageBox.information(
                    self, "workbench", self.tr("These items had changed meanwhile:") + "\n" + "\n".join(problems)
                )
            self._after_action()

        def failed(exc: BaseException) -> None:
            QMessageBox.warning(self, "workbench", self.tr("Nothing more was done: {0}").format(self._text_of(exc)))
            self._after_action()

        self.dispatcher.call(work, done, failed)

    def _after_action(self) -> None:
        """The items acted on, shown as they are now: the feed names them (the audit trail has the
        action), so a look now reads only them again; without the feed, the whole board."""
        if self.tabs.currentIndex() == 0 and self._feed_ok and self._page is not None:
            self._look_for_changes()
        else:
            self.refresh()

    @Slot()
    def _history_of_selected(self) -> None:
        rows = self.selected_rows()
        if len(rows) == 1:
            self.history_queue.setCurrentIndex(self.history_queue.findData(rows[0].queue))
            self.history_key.setText(str(rows[0].key))
            self.tabs.setCurrentIndex(3)
            self.show_history()

    @Slot()
    def show_history(self) -> None:
        """Load the history of the item the supervisor named in the tab."""
        self._said = ""  # another item, or the same one looked at again: the last report is done with
        self._load_history()

    def _load_history(self) -> None:
        name, key = self.history_queue.currentData(), self.history_key.text().strip()
        if not key:
            return

        def done(log: Any) -> None:
            _fill(
                self.history,
                [
                    [times.moment(e.at), self.tr("Note"), e.author, "", e.text]
                    if isinstance(e, models.Note)
                    else [times.moment(e.at), *event_text(e), e.owner or "", e.reason or e.outcome or ""]
                    for e in log.in_order()
                ],
            )
            count = self.tr("%n event(s) for {0} {1}", "", len(log.events)).format(self.titles[name], key)
            self.status.setText(self._lead() + count + " · " + self.tr("%n note(s)", "", len(log.notes)))

        def failed(exc: BaseException) -> None:
            _fill(self.history, [])
            self.status.setText(self._text_of(exc))

        self.dispatcher.call(lambda: self.service.item_log(name, key), done, failed)

    def _health_queue(self) -> str | None:
        """The queue of the selected Queue health row (None: no row selected)."""
        rows = self.health.selectionModel().selectedRows()
        if not rows:
            return None
        title = str(self.health.model().index(rows[0].row(), 0).data())
        return next((name for name, t in self.titles.items() if t == title), None)

    def _chosen_queue(self) -> str | None:
        """The queue of the selected Queue health row, or the one the Queue: filter shows."""
        chosen = self._health_queue() or self.queue_filter.currentData()
        return None if chosen == ALL else str(chosen)

    @Slot()
    def move_items(self) -> None:
        """Ask which waiting items get which value, with a reason; move them; say how many moved."""
        name = self._chosen_queue()
        if name is None:
            # Said in a box: the status line is overwritten by the next refresh within seconds.
            QMessageBox.information(
                self,
                self.tr("Move waiting items"),
                self.tr("Choose a queue first: select its row here, or pick it under Queue:."),
            )
            return

        loads: list[int] = []  # the dialog's reads of a column's values, dropped once it is answered

        def load_values(column: str, done: Callable[[list[Any]], None]) -> None:
            loads.append(
                self.dispatcher.call(lambda: self.service.waiting_values(name, column), done, lambda _exc: done([]))
            )

        def moved(keys: list[Any]) -> None:
            self._say(self.tr("%n waiting item(s) of {0} moved.", "", len(keys)).format(self.titles[name]))
            self.refresh()

        def failed(exc: BaseException) -> None:
            QMessageBox.warning(self, "workbench", self.tr("Nothing moved: {0}").format(self._text_of(exc)))

        def ask(fields: list[Any]) -> None:
            dialog = supervisor_dialogs.MoveDialog(self.titles[name], fields, load_values, self)
            answered = dialogs.ask(dialog)
            for call in loads:  # values arriving after this would fill a deleted dialog's lists
                self.dispatcher.cancel(call)
            if not answered:
                return
            # Read now: the dialog is deleted before the count below comes back.
            where, changes, reason, title = dialog.where(), dialog.changes(), dialog.reason(), dialog.windowTitle()
            labels = {spec.name: spec.label for spec in fields}

            def confirm(count: int) -> None:
                # How many change, said before they change (a move is not undone in one step).
                if count == 0:
                    QMessageBox.information(
                        self, title, self.tr("No waiting item nobody holds matches: nothing to move.")
                    )
                    return
                change = ", ".join(f"{labels.get(c, c)} = {v or '—'}" for c, v in changes.items())
                question = self.tr("Set {0} on %n waiting item(s) of {1}?", "", count).format(change, self.titles[name])
                answer = QMessageBox.question(self, title, question)
                if answer == QMessageBox.StandardButton.Yes:
                    self.dispatcher.call(lambda: self.service.move(name, changes, reason, where=where), moved, failed)

            self.dispatcher.call(lambda: self.service.count_movable(name, where), confirm, failed)

        self.dispatcher.call(lambda: self.service.movable(name), ask, failed)

    @Slot()
    def reopen(self) -> None:
        """Reopen the item named in the history tab, with a reason; then show its history again."""
        name, key = self.history_queue.currentData(), self.history_key.text().strip()
        if not key:
            self.status.setText(self.tr("Type the key of the item to reopen."))
            return
        dialog = supervisor_dialogs.ReopenDialog(self.titles[name], key, self)
        if not dialogs.ask(dialog):
            return
        reason = dialog.reason()

        def done(_: Any) -> None:
            self._say(self.tr("{0} {1} waits again.").format(self.titles[name], key))
            self._load_history()

        def failed(exc: BaseException) -> None:
            QMessageBox.warning(self, "workbench", self.tr("Not reopened: {0}").format(self._text_of(exc)))

        self.dispatcher.call(lambda: self.service.reopen(name, key, reason), done, failed)

    def _export(self, rows: list[list[str]], suggested: str) -> None:
        path, _ = QFileDialog.getSaveFileName(self, self.tr("Export CSV"), suggested, self.tr("CSV files (*.csv)"))
        if path:
            write_csv(Path(path), rows)
            self._say(self.tr("Saved %n row(s) to {0}", "", len(rows) - 1).format(path))

    @Slot(bool)
    def _on_relay(self, connected: bool) -> None:
        """The change relay wakes the console, or it is away and the console looks for changes itself."""
        self.relay_label.setText(
            self.tr("Changes: relay") if connected else self.tr("Relay unreachable — looking for changes itself")
        )
        dialogs.set_state(self.relay_label, "up" if connected else "slow")
        self.relay_label.setVisible(True)

    def closeEvent(self, event: Any) -> None:
        self._timer.stop()
        self._changes.stop()
        for link in (self.relay, self.notices):
            if link is not None:
                link.stop()
        super().closeEvent(event)


def write_csv(path: Path, rows: list[list[Any]]) -> None:
    # utf-8-sig: Excel, where supervisors open these, reads the accents right only with the BOM.
    with path.open("w", newline="", encoding="utf-8-sig") as handle:
        csv.writer(handle).writerows(rows)


class Seconds(float):
    """A duration in a table cell: shown as people read it, sorted and exported as seconds."""


def _age(seconds: float | None) -> Seconds | str:
    return "—" if seconds is None else Seconds(seconds)


def _count(value: int | None) -> int | str:
    """A count that only some queues have (reviews): a dash where the queue has none."""
    return "—" if value is None else value


def _table(name: str, headers: list[str], *, sortable: bool = True) -> QTableWidget:
    table = QTableWidget(0, len(headers))
    table.setObjectName(name)
    table.setHorizontalHeaderLabels(headers)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    a11y.leave_with_tab(table)
    table.verticalHeader().setVisible(False)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    table.horizontalHeader().setStretchLastSection(True)
    table.setSortingEnabled(sortable)
    table.setProperty("sortable", sortable)
    return table


def _fill(table: QTableWidget, rows: list[list[Any]]) -> None:
    table.setSortingEnabled(False)  # filling a sorted table moves rows under the loop
    table.setRowCount(len(rows))
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            item = _SortedItem()
            if isinstance(value, Seconds):
                item.setData(Qt.ItemDataRole.DisplayRole, times.duration(value))
                item.setData(Qt.ItemDataRole.UserRole, round(float(value)))
            else:
                item.setData(Qt.ItemDataRole.DisplayRole, value if isinstance(value, (int, float)) else str(value))
            table.setItem(r, c, item)
    table.setSortingEnabled(bool(table.property("sortable")))


class _SortedItem(QTableWidgetItem):
    """A cell that sorts a duration by its seconds, not by its text ("2d03h" after "45m")."""

    def __lt__(self, other: QTableWidgetItem) -> bool:
        mine, theirs = self.data(Qt.ItemDataRole.UserRole), other.data(Qt.ItemDataRole.UserRole)
        if isinstance(mine, int) and isinstance(theirs, int):
            return mine < theirs
        # Not super().__lt__: PySide6 would call this method again (endless recursion).
        a, b = self.data(Qt.ItemDataRole.DisplayRole), other.data(Qt.ItemDataRole.DisplayRole)
        if isinstance(a, (int, float)) and isinstance(b, (int, float)):
            return a < b
        return str(a) < str(b)


def _table_rows(table: QTableWidget) -> list[list[Any]]:
    """A table as CSV rows, header first: durations as whole seconds, their header saying so."""
    columns, rows = range(table.columnCount()), range(table.rowCount())

    def cell(r: int, c: int) -> Any:
        item = table.item(r, c)
        if item is None:
            return ""
        seconds = item.data(Qt.ItemDataRole.UserRole)
        return seconds if isinstance(seconds, int) else item.text()

    timed = {c for c in columns for r in rows if isinstance(cell(r, c), int)}  # cell() gives a duration's seconds
    unit = " " + QCoreApplication.translate("Supervisor", "(s)")
    headers = [
        str(table.model().headerData(c, Qt.Orientation.Horizontal)) + (unit if c in timed else "") for c in columns
    ]
    return [headers, *[[cell(r, c) for c in columns] for r in rows]]
