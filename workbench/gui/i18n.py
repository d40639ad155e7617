"""The interface language: workbench's own translations and Qt's (standard buttons and dialogs).

The language is, in this order: $WORKBENCH_LANG (tests, screenshots), the user's choice in
View ▸ Language (gui.ini, key view/language), or the first of the system's preferred languages
that workbench speaks, else English. It is installed once, when the QApplication is made; a
new choice takes effect at the next start.

Translations are workbench/i18n/workbench_LANG.qm, built from the .ts sources next to them by
installer/translations.py (README: Languages).
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QLocale, QSettings, QTranslator


def QT_TRANSLATE_NOOP(context: str, text: str) -> str:  # lupdate finds the texts by this name
    """Marks `text` for translation in `context` and returns it unchanged; it is translated where it
    is shown (QCoreApplication.translate(context, text)). PySide6's own returns `object` in its stubs,
    which every translate() call would then have to cast back to str."""
    return text


ENV = "WORKBENCH_LANG"
SETTING = "view/language"
SOURCE_LANGUAGE = "en"  # the texts in the code
# (code, name in the menu): each language under its own name, so anyone can find theirs.
LANGUAGES = (
    ("", QT_TRANSLATE_NOOP("Language", "&System default")),
    ("en", "English"),
    ("de", "Deutsch"),
    ("fr", "Français"),
)

_installed: list[QTranslator] = []
_shown = SOURCE_LANGUAGE  # what install() put in place


def translations_dir() -> Path:
    return Path(str(resources.files("workbench").joinpath("i18n")))


def available() -> list[str]:
    """Languages the interface speaks: English and every workbench_LANG.qm shipped."""
    shipped = sorted(path.stem.removeprefix("workbench_") for path in translations_dir().glob("workbench_*.qm"))
    return [SOURCE_LANGUAGE, *shipped]


def chosen(settings: QSettings | None) -> str:
    """The language asked for ("" = follow the system): $WORKBENCH_LANG, else the user's setting."""
    value = os.environ.get(ENV, "").strip()
    if not value and settings is not None:
        value = str(settings.value(SETTING, "") or "")
    return value


def resolve(language: str = "", system: QLocale | None = None) -> str:
    """The language to show: `language` when workbench speaks it, else the first of the system's
    preferred languages that it speaks (de-AT → de), else English."""
    speaks = available()
    wanted = [language] if language else (system or QLocale.system()).uiLanguages()
    for name in wanted:
        code = name.replace("-", "_").split("_")[0].lower()
        if code in speaks:
            return code
    return SOURCE_LANGUAGE


def qt_translations_dirs() -> list[Path]:
    """Where Qt's own .qm files are: Qt's configured folder, else the one inside the PySide6 package
    (what a bundle carries when Qt's configured path points elsewhere)."""
    import PySide6

    folders = [
        Path(QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)),
        Path(PySide6.__file__).resolve().parent / "Qt" / "translations",
    ]
    return [folder for i, folder in enumerate(folders) if folder not in folders[:i]]


def install(app: QCoreApplication, language: str = "") -> str:
    """Install the translations for `language` ("" = the system's), replacing any installed before;
    returns the language now shown."""
    global _shown  # noqa: PLW0603 - one language per process, set at start-up
    for translator in _installed:
        app.removeTranslator(translator)
    _installed.clear()
    code = _shown = resolve(language)
    # Dates and times in the language shown, unless the system's region already speaks it (de-AT keeps
    # its own formats) or the language is English (the system's region says which English).
    system = region()
    speaks = code != SOURCE_LANGUAGE and QLocale(code).language() != system.language()
    QLocale.setDefault(QLocale(code) if speaks else system)
    if code == SOURCE_LANGUAGE:
        return code
    own = QTranslator(app)
    if own.load(f"workbench_{code}", str(translations_dir())):
        app.installTranslator(own)
        _installed.append(own)
    for folder in qt_translations_dirs():
        qt = QTranslator(app)
        if qt.load(f"qtbase_{code}", str(folder)):
            app.installTranslator(qt)
            _installed.append(qt)
            break
    return code


def region() -> QLocale:
    """The system's locale for dates and numbers; the C locale where the system names no region
    (LANG=C.UTF-8): Qt then reports the language of $LANGUAGE ("en_US") with the C locale's formats
    ("1 12 2026"), which times.py would take for a region's own; the C locale's are written ISO 8601."""
    system = QLocale.system()
    c = QLocale.c()
    if system.dateFormat(QLocale.FormatType.ShortFormat) == c.dateFormat(QLocale.FormatType.ShortFormat):
        return c
    return system


def current() -> str:
    """The language install() put in place (English until it is called)."""
    return _shown


def menu_name(code: str, name: str) -> str:
    """A language's entry in View ▸ Language, with its Alt letter ("System default" is translated;
    languages keep their own name, and its first letter)."""
    return QCoreApplication.translate("Language", name) if code == "" else "&" + name
