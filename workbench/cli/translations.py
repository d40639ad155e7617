"""argparse's messages translated with one look-up of the translation files per language, not one per string."""

from __future__ import annotations

import argparse
import functools
import gettext
import os

# What gettext.find reads to choose the language, in its order.
_LANGUAGE = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")


@functools.cache
def _translation(domain: str, localedir: str | None, language: tuple[str | None, ...]) -> gettext.NullTranslations:
    """What gettext.gettext finds for `domain` on every call (a search of the locale directories,
    ~0.02 ms a string, ~8 ms of the whole parser's 12): found once for each language the
    environment names (`language`: the key only; the command server's child takes its caller's)."""
    del language
    return gettext.translation(domain, localedir, fallback=True)


def _current() -> gettext.NullTranslations:
    # As gettext.gettext: the current domain (argparse never sets one), where it is bound, the language.
    domain = gettext.textdomain()
    return _translation(domain, gettext.bindtextdomain(domain), tuple(os.environ.get(v) for v in _LANGUAGE))


def _gettext(message: str) -> str:
    return _current().gettext(message)


def _ngettext(singular: str, plural: str, n: int) -> str:
    return _current().ngettext(singular, plural, n)


def install() -> None:
    """argparse's `_` and `ngettext` (gettext's, imported by name) with the look-up kept: the same
    text, as no file is added or removed in the locale directories while a command runs."""
    if getattr(argparse, "_", None) is gettext.gettext and getattr(argparse, "ngettext", None) is gettext.ngettext:
        argparse._ = _gettext  # type: ignore[attr-defined]
        argparse.ngettext = _ngettext  # type: ignore[attr-defined]
