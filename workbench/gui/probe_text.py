"""Test connection's answer in the user's language and plain words, chosen from what the probe found."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QCoreApplication, QLocale

from workbench.config import profiles


def explain(result: Any, profile: profiles.Profile) -> str:
    """One or two sentences for `result` (a probe.ProbeResult) of a test of `profile`.

    The probe's own message is English and the driver's words are the server's: both belong in
    the details (see details()), never here.
    """
    port = profile.effective_port
    server = f"{profile.host}:{port}" if port else profile.host
    if result.ok:
        if profile.is_file:
            return QCoreApplication.translate("ProbeText", "Opened the database file {0}.").format(profile.path)
        if profile.windows_auth:
            return QCoreApplication.translate("ProbeText", "Connected to {0} on {1} with your Windows account.").format(
                result.server_version, server
            )
        return QCoreApplication.translate("ProbeText", "Connected to {0} on {1} as {2}.").format(
            result.server_version, server, profile.user
        )
    problem, reason = result.problem, result.reason
    if problem == "login":
        return _login(reason, profile)
    if problem == "unreachable":
        return _unreachable(reason, profile, server)
    if problem == "database":
        return QCoreApplication.translate(
            "ProbeText", "The server has no database called “{0}”. Check the database name."
        ).format(profile.database)
    if problem == "permission":
        if profile.windows_auth:
            return QCoreApplication.translate(
                "ProbeText",
                "The server knows your Windows account but does not let it use the database “{0}”. "
                "Ask the database administrator for access.",
            ).format(profile.database)
        return QCoreApplication.translate(
            "ProbeText",
            "The server knows the user {0} but does not let them use the database “{1}”. Ask the "
            "database administrator for access.",
        ).format(profile.user, profile.database)
    if problem == "file":
        return _file(reason, profile.path)
    if problem == "driver":
        return _driver(reason, profile)
    return QCoreApplication.translate(
        "ProbeText",
        "The connection failed for a reason workbench cannot put in plain words; Details shows what the database said.",
    )


def details(result: Any) -> str:
    """What the probe found in its own (English) words and the driver's first line: for Details and support."""
    return "\n".join(part for part in (result.message, result.detail) if part)


def _login(reason: str, profile: profiles.Profile) -> str:
    if reason == "no_password":
        return QCoreApplication.translate("ProbeText", "The server needs a password for {0}: enter it above.").format(
            profile.user
        )
    if reason == "not_allowed":
        if profile.windows_auth:
            return QCoreApplication.translate(
                "ProbeText",
                "The server does not let your Windows account connect from this computer. Ask the "
                "database administrator to allow it.",
            )
        return QCoreApplication.translate(
            "ProbeText",
            "The server does not let {0} connect from this computer. Ask the database administrator to allow it.",
        ).format(profile.user)
    if profile.windows_auth:
        return QCoreApplication.translate(
            "ProbeText", "The server refused your Windows account. Ask the database administrator for a login."
        )
    return QCoreApplication.translate(
        "ProbeText", "The server refused the login: wrong password, or no user called {0}. Check both (Caps Lock?)."
    ).format(profile.user)


def _unreachable(reason: str, profile: profiles.Profile, server: str) -> str:
    if reason == "refused":
        return QCoreApplication.translate(
            "ProbeText",
            "The server {0} refused the connection. Check the server name and port, and that the "
            "database server is running.",
        ).format(server)
    if reason == "unknown_host":
        return QCoreApplication.translate(
            "ProbeText", "There is no server called “{0}”. Check the spelling of the server name."
        ).format(profile.host)
    if reason == "timeout":
        return QCoreApplication.translate(
            "ProbeText",
            "The server {0} did not answer within {1} s. Check the server name and port, and your network (VPN?).",
        ).format(server, QLocale().toString(profile.connect_timeout))
    return QCoreApplication.translate(
        "ProbeText",
        "The server {0} cannot be reached. Check the server name and port, your network, and that "
        "the database server is running.",
    ).format(server)


def _file(reason: str, path: str) -> str:
    if reason == "missing":
        return QCoreApplication.translate("ProbeText", "There is no database file at {0}. Check the path.").format(path)
    if reason == "folder":
        return QCoreApplication.translate(
            "ProbeText", "{0} is a folder, not a database file. Choose the file itself."
        ).format(path)
    if reason == "not_database":
        return QCoreApplication.translate(
            "ProbeText", "{0} is not a SQLite database, or it is damaged. Check the path, or restore a backup."
        ).format(path)
    if reason == "read_only":
        return QCoreApplication.translate(
            "ProbeText",
            "You may not write to {0} or its folder, and workbench needs to. Ask for write access, "
            "or use a copy you may change.",
        ).format(path)
    return QCoreApplication.translate(
        "ProbeText", "The database file {0} cannot be opened. Check that you may read and write it."
    ).format(path)


def _driver(reason: str, profile: profiles.Profile) -> str:
    if reason == "odbc_driver":
        if profile.odbc_driver:
            return QCoreApplication.translate(
                "ProbeText",
                "The ODBC driver “{0}” is not installed on this computer. Choose an installed one, "
                "or ask your IT department to install it.",
            ).format(profile.odbc_driver)
        return QCoreApplication.translate("ProbeText", "No ODBC driver is chosen. Choose one of the installed drivers.")
    if reason == "module":
        return QCoreApplication.translate(
            "ProbeText",
            "This copy of workbench lacks the part that talks to {0}. Ask your IT department to "
            "install it; Details says which.",
        ).format(profiles.KIND_LABELS[profile.kind])
    return QCoreApplication.translate(
        "ProbeText", "workbench cannot talk to this database with the chosen driver. Choose another driver."
    )
