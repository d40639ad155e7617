"""Database passwords: from the environment or the OS keyring, never from a file; logs never show them."""

from __future__ import annotations

import dataclasses
import os

from workbench import logs

SERVICE = "workbench"
PASSWORD_ENV = "WORKBENCH_DB_PASSWORD"
# Backends that are not a secure store: "fail" and "null" store nothing, and keyrings.alt's
# plain-text file would put the password in a file, which is exactly what we promise not to do.
_NOT_SECURE = ("keyring.backends.fail", "keyring.backends.null", "keyrings.alt.file")


# Why a password cannot be remembered on a computer without a password store; the GUI says it in
# the user's language (gui/connect_dialog.py), so it is one name, not a sentence matched by text.
NO_PASSWORD_STORE = (
    "no OS password store (Windows Credential Manager, macOS "
    "Keychain or a Secret Service such as GNOME Keyring) is available on this computer"
)


@dataclasses.dataclass(frozen=True)
class KeyringStatus:
    available: bool
    name: str  # the backend's name, for the user
    reason: str  # when not available: why, in words a user understands


def keyring_status() -> KeyringStatus:
    """Is there an OS credential store to keep passwords in?"""
    try:
        import keyring
        from keyring.backends import chainer
    except Exception as exc:  # noqa: BLE001 - a broken keyring install must not stop the app
        return KeyringStatus(False, "none", f"the keyring package cannot be loaded ({exc})")
    backend = keyring.get_keyring()
    backends = list(backend.backends) if isinstance(backend, chainer.ChainerBackend) else [backend]
    usable = [b for b in backends if not type(b).__module__.startswith(_NOT_SECURE)]
    if usable:
        return KeyringStatus(True, ", ".join(_name(b) for b in usable), "")
    return KeyringStatus(
        False,
        _name(backend),
        NO_PASSWORD_STORE,
    )


def _name(backend: object) -> str:
    return str(getattr(backend, "name", type(backend).__name__))


def from_environment() -> str | None:
    """The password a script supplies in WORKBENCH_DB_PASSWORD (documented for cron jobs)."""
    value = os.environ.get(PASSWORD_ENV)
    if value:
        logs.register_secret(value)
    return value or None


def lookup(credential_id: str) -> str | None:
    """The stored password for one login, or None (also when there is no keyring to ask)."""
    env = from_environment()
    if env is not None:
        return env
    if not keyring_status().available:
        return None
    import keyring

    try:
        value = keyring.get_password(SERVICE, credential_id)
    except keyring.errors.KeyringError:
        return None  # locked or refused: the caller asks the user instead
    if value:
        logs.register_secret(value)
    return value or None


def store(credential_id: str, password: str) -> None:
    """Keep a password in the OS keyring; raises CredentialStoreError when that is not possible."""
    from workbench.core import errors

    logs.register_secret(password)
    status = keyring_status()
    if not status.available:
        raise errors.CredentialStoreError(f"cannot remember the password: {status.reason}")
    import keyring

    try:
        keyring.set_password(SERVICE, credential_id, password)
    except keyring.errors.KeyringError as exc:
        raise errors.CredentialStoreError(f"the OS password store refused to keep the password ({exc})") from None


def forget(credential_id: str) -> bool:
    """Remove a stored password; False when none was stored."""
    if not keyring_status().available:
        return False
    import keyring

    try:
        keyring.delete_password(SERVICE, credential_id)
    except keyring.errors.PasswordDeleteError:
        return False
    except keyring.errors.KeyringError:
        return False
    return True
