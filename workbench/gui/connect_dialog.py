"""The connection dialog (first run, new and edit) with Test connection, and the password prompt."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, Qt, QTimer, Slot
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from workbench import credentials
from workbench.config import profiles
from workbench.core import errors
from workbench.gui import a11y, dialogs, dispatch, probe_text, problem_text
from workbench.gui.i18n import QT_TRANSLATE_NOOP

DRIVER_LABELS = {
    "pymysql": QT_TRANSLATE_NOOP("ConnectionDialog", "PyMySQL (built in)"),
    "odbc": QT_TRANSLATE_NOOP("ConnectionDialog", "ODBC driver"),
}


class ConnectionDialog(QDialog):
    """Describe one connection: database kind, server, login, where the queue settings come from.

    `choice` after exec(): "save" (profile(), password(), remember() tell what) or "demo".
    """

    def __init__(
        self,
        profile: profiles.Profile | None = None,
        *,
        first_run: bool = False,
        taken_names: set[str] | None = None,
        message: str = "",
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("connection_dialog")
        self.setWindowTitle(
            self.tr("Connect to a database") if profile is None else self.tr("Connection: {0}").format(profile.name)
        )
        self.choice = ""
        self._original = profile.name if profile else None
        self._taken = (taken_names or set()) - ({profile.name} if profile else set())
        self._dispatcher = dispatch.Dispatcher(self, threads=1)
        self._testing: int | None = None
        self._keyring = credentials.keyring_status()
        layout = QVBoxLayout(self)
        if first_run:
            intro = QLabel(
                self.tr(
                    "workbench works a queue of records in your organisation's database. Describe "
                    "the connection once; your IT department can tell you the server and database "
                    "names."
                )
            )
            intro.setWordWrap(True)
            intro.setObjectName("intro")
            layout.addWidget(intro)

        # Each Alt letter has one owner in every state of the dialog (rows come and go with the database):
        # the rows keep their letters; the buttons and options below take free ones (tests/gui/test_mnemonics.py).
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.name = self._line("name", self.tr("e.g. Helpdesk (office)"))
        form.addRow(self.tr("Profile &name:"), self.name)
        self.kind = QComboBox()
        self.kind.setObjectName("kind")
        for kind in profiles.KINDS:
            self.kind.addItem(profiles.KIND_LABELS[kind], kind)
        form.addRow(self.tr("&Database:"), self.kind)

        self.host = self._line("host", self.tr("server name or address"))
        self.port = QSpinBox()
        self.port.setObjectName("port")
        self.port.setAccessibleName(self.tr("Port"))  # beside the server, in its row
        self.port.setRange(1, 65535)
        host_row = QHBoxLayout()
        host_row.addWidget(self.host, 1)
        host_row.addWidget(QLabel(self.tr("Port:")))
        host_row.addWidget(self.port)
        self._host_row = self._row(form, self.tr("&Server:"), host_row, self.host)
        self.database = self._line("database", self.tr("database name"))
        self._database_row = self._row(form, self.tr("Database na&me:"), self.database)
        self.windows_auth = QCheckBox(self.tr("Log in with my &Windows account"))
        self.windows_auth.setObjectName("windows_auth")
        self._windows_row = self._row(form, "", self.windows_auth)
        self.user = self._line("user", self.tr("database login"))
        self._user_row = self._row(form, self.tr("&User:"), self.user)
        self.password_edit = QLineEdit()
        self.password_edit.setObjectName("password")
        self.password_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.remember = QCheckBox(self.tr("&Remember in the OS password store"))
        self.remember.setObjectName("remember")
        password_box = QVBoxLayout()
        password_box.setContentsMargins(0, 0, 0, 0)
        password_box.addWidget(self.password_edit)
        password_box.addWidget(self.remember)
        self._password_row = self._row(form, self.tr("&Password:"), password_box, self.password_edit)
        _describe_keyring(self.remember, self._keyring)
        self.driver = QComboBox()
        self.driver.setObjectName("driver")
        self._driver_row = self._row(form, self.tr("Dri&ver:"), self.driver)
        self.odbc_driver = QComboBox()
        self.odbc_driver.setObjectName("odbc_driver")
        self.odbc_driver.setEditable(True)
        self._odbc_row = self._row(form, self.tr("&ODBC driver:"), self.odbc_driver)
        self.encrypt = QCheckBox(self.tr("&Encrypt the connection"))
        self.encrypt.setObjectName("encrypt")
        self.trust_cert = QCheckBox(self.tr("Trust the server's certi&ficate (self-signed)"))
        self.trust_cert.setObjectName("trust_server_certificate")
        tls = QVBoxLayout()
        tls.setContentsMargins(0, 0, 0, 0)
        tls.addWidget(self.encrypt)
        tls.addWidget(self.trust_cert)
        self._tls_row = self._row(form, self.tr("Security:"), tls, self.encrypt)
        self.path = self._line("path", self.tr("the .db file"))
        self.path.setAccessibleName(self.tr("SQLite database file"))  # its label names the row, with Browse
        self._path_row = self._row(
            form, self.tr("&File:"), self._with_browse(self.path, self._browse_database), self.path
        )

        self.from_file = QRadioButton(self.tr("From a queue &config file:"))
        self.from_file.setObjectName("source_file")
        self.from_db = QRadioButton(self.tr("Pu&blished in the database by a supervisor"))
        self.from_db.setObjectName("source_database")
        group = QButtonGroup(self)
        group.addButton(self.from_file)
        group.addButton(self.from_db)
        self.config = self._line("config", "workbench.toml")
        self.config.setAccessibleName(self.tr("Queue config file"))
        source = QVBoxLayout()
        source.setContentsMargins(0, 0, 0, 0)
        source.addWidget(self.from_file)
        self._config_row = self._with_browse(self.config, self._browse_config)
        source.addWidget(self._config_row)
        source.addWidget(self.from_db)
        self._row(form, self.tr("Queue settings:"), source, self.from_file)
        layout.addLayout(form)

        self.test_result = QLabel(message)
        self.test_result.setObjectName("test_result")
        self.test_result.setWordWrap(True)
        self.test_result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.test_result.setMinimumHeight(48)
        dialogs.set_state(self.test_result, "fail" if message else "")
        layout.addWidget(self.test_result)
        # The probe's diagnosis and the driver's own words, for whoever helps: out of the way until asked for.
        self.details_button = QToolButton()
        self.details_button.setObjectName("test_details_button")
        self.details_button.setText(self.tr("Details"))
        self.details_button.setAccessibleName(self.tr("Show the database's own message"))
        self.details_button.setCheckable(True)
        self.details_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.details_button.setArrowType(Qt.ArrowType.RightArrow)
        self.details_button.setAutoRaise(True)
        self.details_button.setVisible(False)
        self.details = QLabel()
        self.details.setObjectName("test_details")
        self.details.setWordWrap(True)
        self.details.setTextFormat(Qt.TextFormat.PlainText)  # a driver's text may hold anything
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details.setVisible(False)
        self.details_button.toggled.connect(self._show_details)
        layout.addWidget(self.details_button)
        layout.addWidget(self.details)

        row = QHBoxLayout()
        self.test_button = QPushButton(self.tr("&Test connection"))
        self.test_button.setObjectName("test_connection")
        self.test_button.clicked.connect(self.test_connection)
        row.addWidget(self.test_button)
        self.demo_button: QPushButton | None = None
        if first_run:
            self.demo_button = QPushButton(self.tr("Open the demo &instead"))
            self.demo_button.setObjectName("open_demo")
            self.demo_button.clicked.connect(self._on_demo)
            row.addWidget(self.demo_button)
        row.addStretch(1)
        buttons = QDialogButtonBox()
        self.save_button = buttons.addButton(self.tr("S&ave and connect"), QDialogButtonBox.ButtonRole.AcceptRole)
        self.save_button.setObjectName("save_connection")
        self.save_button.setDefault(True)
        buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._on_save)
        buttons.rejected.connect(self.reject)
        row.addWidget(buttons)
        layout.addLayout(row)

        self.kind.currentIndexChanged.connect(self._on_kind)
        self.driver.currentIndexChanged.connect(self._show_rows)
        self.windows_auth.toggled.connect(self._show_rows)
        self.from_file.toggled.connect(self._show_rows)
        self._fill(profile or profiles.Profile(name="", kind="postgresql"))
        self.setMinimumWidth(560)

    # -- building ---------------------------------------------------------------------------------

    def _line(self, name: str, placeholder: str) -> QLineEdit:
        edit = QLineEdit()
        edit.setObjectName(name)
        edit.setPlaceholderText(placeholder)
        return edit

    def _row(self, form: QFormLayout, label: str, field: Any, buddy: QWidget | None = None) -> Any:
        text = QLabel(label)
        text.setBuddy(buddy or field)
        form.addRow(text, field)
        self._form = form
        return field

    def _with_browse(self, edit: QLineEdit, slot: Any) -> QWidget:
        box = QWidget()
        row = QHBoxLayout(box)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(edit, 1)
        button = QPushButton(self.tr("Browse…"))
        button.setObjectName(f"browse_{edit.objectName()}")
        button.clicked.connect(slot)
        row.addWidget(button)
        return box

    def _fill(self, p: profiles.Profile) -> None:
        self.name.setText(p.name)
        self.kind.setCurrentIndex(profiles.KINDS.index(p.kind))
        self._on_kind()
        self.host.setText(p.host)
        if p.port is not None:
            self.port.setValue(p.port)
        self.database.setText(p.database)
        self.user.setText(p.user)
        self.path.setText(p.path)
        if p.odbc_driver:
            self.odbc_driver.setCurrentText(p.odbc_driver)
        index = self.driver.findData(p.effective_driver)
        if index >= 0:
            self.driver.setCurrentIndex(index)
        self.encrypt.setChecked(p.encrypt)
        self.trust_cert.setChecked(p.trust_server_certificate)
        self.windows_auth.setChecked(p.windows_auth)
        self.from_db.setChecked(p.source == "database")
        self.from_file.setChecked(p.source != "database")
        self.config.setText(p.config)
        self._shown = p  # its fields the form does not show are kept as they are
        self._show_rows()

    @Slot()
    def _on_kind(self) -> None:
        kind = self.kind.currentData()
        self.driver.blockSignals(True)
        self.driver.clear()
        for driver in profiles.DRIVERS[kind]:
            label = DRIVER_LABELS.get(driver)
            self.driver.addItem(QCoreApplication.translate("ConnectionDialog", label) if label else driver, driver)
        self.driver.blockSignals(False)
        self.port.setValue(profiles.DEFAULT_PORTS.get(kind, 1))
        from workbench.services import admin

        drivers = list(admin.odbc_drivers())
        # The drivers that fit this database first; any installed driver may still be chosen.
        words = {
            "sqlserver": ("sql server", "freetds"),
            "mariadb": ("mariadb", "mysql"),
            "mysql": ("mysql", "mariadb"),
        }.get(kind, ())
        fitting = [d for d in drivers if any(w in d.lower() for w in words)]
        current = self.odbc_driver.currentText()
        self.odbc_driver.clear()
        self.odbc_driver.addItems(fitting + [d for d in drivers if d not in fitting])
        self.odbc_driver.setCurrentText(current if current in drivers else (fitting[0] if fitting else ""))
        self._show_rows()

    @Slot()
    def _show_rows(self) -> None:
        kind = self.kind.currentData()
        server = kind != "sqlite"
        sqlserver = kind == "sqlserver"
        odbc = sqlserver or self.driver.currentData() == "odbc"
        windows = sqlserver and self.windows_auth.isChecked()
        for row, visible in (
            (self._host_row, server),
            (self._database_row, server),
            (self._windows_row, sqlserver),
            (self._user_row, server and not windows),
            (self._password_row, server and not windows),
            (self._driver_row, server and len(profiles.DRIVERS[kind]) > 1),
            (self._odbc_row, odbc),
            (self._tls_row, sqlserver),
            (self._path_row, not server),
        ):
            self._form.setRowVisible(row, visible)
        self._config_row.setEnabled(self.from_file.isChecked())
        if odbc and self.odbc_driver.count() == 0:
            self.odbc_driver.setPlaceholderText(self.tr("no ODBC driver is installed"))
        self.adjustSize()

    @Slot()
    def _browse_database(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self,
            self.tr("SQLite database"),
            self.path.text(),
            self.tr("SQLite databases (*.db *.sqlite *.sqlite3);;All files (*)"),
        )
        if path:
            self.path.setText(path)

    @Slot()
    def _browse_config(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, self.tr("Queue config file"), self.config.text(), self.tr("workbench config (*.toml);;All files (*)")
        )
        if path:
            self.config.setText(path)
            self.from_file.setChecked(True)

    # -- results ---------------------------------------------------------------------------------

    def profile(self) -> profiles.Profile:
        """The profile as filled in (not yet checked)."""
        kind = self.kind.currentData()
        server = kind != "sqlite"
        default_port = profiles.DEFAULT_PORTS.get(kind)
        driver = self.driver.currentData() or ""
        return profiles.Profile(
            name=self.name.text().strip(),
            kind=kind,
            driver="" if driver == profiles.DRIVERS[kind][0] else driver,
            host=self.host.text().strip() if server else "",
            port=None if not server or self.port.value() == default_port else self.port.value(),
            database=self.database.text().strip() if server else "",
            user=self.user.text().strip() if server and not self.windows_auth.isChecked() else "",
            path=self.path.text().strip() if not server else "",
            odbc_driver=self.odbc_driver.currentText().strip() if (kind == "sqlserver" or driver == "odbc") else "",
            encrypt=self.encrypt.isChecked() if kind == "sqlserver" else True,
            trust_server_certificate=self.trust_cert.isChecked() if kind == "sqlserver" else False,
            windows_auth=self.windows_auth.isChecked() if kind == "sqlserver" else False,
            source="file" if self.from_file.isChecked() else "database",
            config=self.config.text().strip() if self.from_file.isChecked() else "",
            options=dict(self._shown.options),
            schema=self._shown.schema,
            connect_timeout=self._shown.connect_timeout,
            statement_timeout=self._shown.statement_timeout,
            pooler=self._shown.pooler,  # kept, as the timeouts: set in profiles.toml, not here
        )

    def password(self) -> str | None:
        return self.password_edit.text() or None

    def remembers(self) -> bool:
        return self.remember.isEnabled() and self.remember.isChecked()

    def _checked(self, *, for_test: bool) -> profiles.Profile | None:
        """The profile, or None after showing what to fix (and moving the cursor there)."""
        profile = self.profile()
        if for_test:  # the name does not matter to a connection test
            profile = dataclasses.replace(profile, name="test")
        if for_test and not profile.config and profile.source == "file":
            profile = dataclasses.replace(profile, config="-")  # the file does not matter to a connection test
        try:
            profiles.check(profile)
            if not for_test and profile.name in self._taken:
                raise errors.ConfigError(self.tr("another profile has this name; choose another"), key="name")
            if not for_test and profile.source == "file" and not Path(profile.config).expanduser().is_file():
                raise errors.ConfigError(self.tr("there is no file {0}").format(profile.config), key="config")
            if not for_test and profile.kind == "sqlite" and not Path(profile.path).expanduser().is_file():
                raise errors.ConfigError(self.tr("there is no file {0}").format(profile.path), key="path")
        except errors.ConfigError as exc:
            field = _FIELD_NAMES.get(str(exc.key))
            self._show(
                f"{QCoreApplication.translate('ConnectionDialog', field) if field else exc.key}: "
                f"{problem_text.config_problem(exc)}",
                "fail",
            )
            widget = self.findChild(QWidget, str(exc.key).split(".")[0])
            if widget is not None:
                widget.setFocus()
            return None
        return profile

    def _show(self, text: str, state: str, details: str = "") -> None:
        self.test_result.setText(text)
        self.test_result.setToolTip(details)
        # A screen reader reads the tooltip as the answer's description: the details are the probe's
        # English and the driver's line, so it is told where to find them, in the user's language.
        self.test_result.setAccessibleDescription(
            self.tr("“Details” shows the database's own message.") if details else ""
        )
        self.details.setText(details)
        self.details_button.setVisible(bool(details))
        if not details:
            self.details_button.setChecked(False)
        self.details.setVisible(bool(details) and self.details_button.isChecked())
        dialogs.set_state(self.test_result, state)
        self._grow()

    def _grow(self) -> None:
        # A long answer (its details, a longer language, a larger scale) needs more lines: grow the
        # dialog rather than squeeze the form above it.
        layout = self.layout()
        assert layout is not None  # __init__ gave the dialog its layout
        needed = (
            layout.totalHeightForWidth(self.width()) if layout.hasHeightForWidth() else layout.totalSizeHint().height()
        )
        if needed > self.height():
            self.resize(self.width(), needed)

    @Slot(bool)
    def _show_details(self, shown: bool) -> None:
        self.details_button.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)
        self.details.setVisible(shown)
        self._grow()

    @Slot()
    def test_connection(self) -> None:
        """Try the connection off the GUI thread and say exactly what failed."""
        profile = self._checked(for_test=True)
        if profile is None:
            return
        from workbench import opening
        from workbench.services import admin

        password = self.password() or (opening.password_for(profile) if profile.needs_password else None)
        url = profile.url()
        self._show(self.tr("Testing the connection to {0}…").format(profile.describe()), "busy")
        self.test_button.setEnabled(False)

        def done(result: Any) -> None:
            self._testing = None
            self.test_button.setEnabled(True)
            # Plain words in the user's language; the English diagnosis and the driver's line under Details.
            self._show(
                probe_text.explain(result, profile),
                "ok" if result.ok else "fail",
                "" if result.ok else probe_text.details(result),
            )

        def failed(exc: BaseException) -> None:
            self._testing = None
            self.test_button.setEnabled(True)
            self._show(
                self.tr("The test itself failed; Details shows the error."), "fail", f"{type(exc).__name__}: {exc}"
            )

        self._testing = self._dispatcher.call(
            lambda: admin.check_connection(url, password=password, connect_timeout=profile.connect_timeout),
            done,
            failed,
        )

    @Slot()
    def _on_save(self) -> None:
        if self._checked(for_test=False) is None:
            return
        self.choice = "save"
        self.accept()

    @Slot()
    def _on_demo(self) -> None:
        self.choice = "demo"
        self.accept()

    def done(self, result: int) -> None:
        if self._testing is not None:
            self._dispatcher.cancel(self._testing)  # a test still running reports to no one
        super().done(result)

    @property
    def original_name(self) -> str | None:
        return self._original


_FIELD_NAMES = {  # translated where shown (context ConnectionDialog)
    "name": QT_TRANSLATE_NOOP("ConnectionDialog", "Profile name"),
    "kind": QT_TRANSLATE_NOOP("ConnectionDialog", "Database"),
    "host": QT_TRANSLATE_NOOP("ConnectionDialog", "Server"),
    "port": QT_TRANSLATE_NOOP("ConnectionDialog", "Port"),
    "database": QT_TRANSLATE_NOOP("ConnectionDialog", "Database name"),
    "user": QT_TRANSLATE_NOOP("ConnectionDialog", "User"),
    "odbc_driver": QT_TRANSLATE_NOOP("ConnectionDialog", "ODBC driver"),
    "path": QT_TRANSLATE_NOOP("ConnectionDialog", "File"),
    "config": QT_TRANSLATE_NOOP("ConnectionDialog", "Queue config file"),
    "windows_auth": QT_TRANSLATE_NOOP("ConnectionDialog", "Windows account"),
    "source": QT_TRANSLATE_NOOP("ConnectionDialog", "Queue settings"),
    "driver": QT_TRANSLATE_NOOP("ConnectionDialog", "Driver"),
}


def _describe_keyring(box: QCheckBox, status: credentials.KeyringStatus) -> None:
    if status.available:
        box.setChecked(True)
        box.setToolTip(
            QCoreApplication.translate("ConnectionDialog", "Kept in {0}; never written to a file.").format(status.name)
        )
    else:
        box.setChecked(False)
        box.setEnabled(False)
        box.setText(QCoreApplication.translate("ConnectionDialog", "Cannot remember it here: asked each time"))
        reason = status.reason
        if reason == credentials.NO_PASSWORD_STORE:  # the engine's English, said in the user's language
            reason = QCoreApplication.translate(
                "ConnectionDialog",
                "no OS password store (Windows Credential Manager, macOS Keychain or a "
                "Secret Service such as GNOME Keyring) is available on this computer",
            )
        box.setToolTip(
            QCoreApplication.translate(
                "ConnectionDialog", "Not remembered: {0}. The password is never written to a file."
            ).format(reason)
        )


class PasswordDialog(QDialog):
    """Ask for a profile's password (again, after a refused login, with the server's answer)."""

    def __init__(self, profile: profiles.Profile, message: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("password_dialog")
        self.setWindowTitle(self.tr("workbench: password"))
        layout = QVBoxLayout(self)
        text = self.tr("Password for <b>{0}</b> on {1} (profile {2}):").format(
            _html(profile.user), _html(profile.host), _html(profile.name)
        )
        label = QLabel(text)
        label.setWordWrap(True)
        layout.addWidget(label)
        if message:
            problem = QLabel(message)
            problem.setObjectName("password_problem")
            problem.setWordWrap(True)
            dialogs.set_state(problem, "fail")
            layout.addWidget(problem)
        self.edit = QLineEdit()
        self.edit.setObjectName("password")
        self.edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.edit.setAccessibleName(self.tr("Password for {0} on {1}").format(profile.user, profile.host))
        # Why it is asked again is said at once, as an alert (assertive), and read again with the field
        # when it has the focus: the red line above it is not read by a screen reader (issue 53).
        self.edit.setAccessibleDescription(message)
        self.problem_text = message
        self.announcer = a11y.Announcer(self)
        label.setBuddy(self.edit)
        layout.addWidget(self.edit)
        self.remember = QCheckBox(self.tr("&Remember in the OS password store"))
        self.remember.setObjectName("remember")
        _describe_keyring(self.remember, credentials.keyring_status())
        layout.addWidget(self.remember)
        if not self.remember.isEnabled():
            note = QLabel(self.remember.toolTip())
            note.setObjectName("keyring_note")
            note.setWordWrap(True)
            layout.addWidget(note)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText(self.tr("Connect"))
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.edit.setFocus()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self.problem_text:  # once the window is on the screen, which a screen reader then knows of
            QTimer.singleShot(200, self, self._say_problem)  # not called once the dialog is gone

    def _say_problem(self) -> None:
        self.announcer.announce(self.edit, self.problem_text, assertive=True)

    def password(self) -> str:
        return self.edit.text()

    def remembers(self) -> bool:
        return self.remember.isEnabled() and self.remember.isChecked()


def _html(text: str) -> str:
    from html import escape

    return escape(text)
