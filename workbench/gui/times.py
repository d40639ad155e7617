"""How the windows write a moment: the operator's local time in their locale's format, with the zone
named where a time is compared with other people's (the console's tables, a lost lock)."""

from __future__ import annotations

import datetime as dt

from PySide6.QtCore import QCoreApplication, QDate, QLocale, QTime

from workbench.core import durations
from workbench.gui.i18n import QT_TRANSLATE_NOOP

# By the largest unit (durations.split); {0} the larger number, {1} the smaller one, two digits.
_DURATION_PATTERNS = {
    "d": QT_TRANSLATE_NOOP("Durations", "{0}d{1}h"),
    "h": QT_TRANSLATE_NOOP("Durations", "{0}h{1}m"),
    "m": QT_TRANSLATE_NOOP("Durations", "{0}m{1}s"),
    "s": QT_TRANSLATE_NOOP("Durations", "{0}s"),
}
_WHOLE_PATTERNS = {
    "d": QT_TRANSLATE_NOOP("Durations", "{0}d"),
    "h": QT_TRANSLATE_NOOP("Durations", "{0}h"),
    "m": QT_TRANSLATE_NOOP("Durations", "{0}m"),
    "s": QT_TRANSLATE_NOOP("Durations", "{0}s"),
}


def local(at: dt.datetime) -> dt.datetime:
    """`at` on the operator's clock. A time without zone is the database's local clock (`clock =
    "local"`): it is shown as it is."""
    return at.astimezone() if at.tzinfo is not None else at


def zone(at: dt.datetime | None = None) -> str:
    """The operator's time zone as written at `at` (now if None): "CET", "UTC", "+0530"."""
    return (local(at) if at is not None and at.tzinfo is not None else dt.datetime.now().astimezone()).strftime("%Z")


def _locale() -> QLocale:
    return QLocale()


def _date_format() -> str:
    locale = _locale()
    if locale.language() == QLocale.Language.C:
        return "yyyy-MM-dd"  # the C locale's own ("25 11 2026") reads as neither order
    fmt = locale.dateFormat(QLocale.FormatType.ShortFormat)
    return fmt if "yyyy" in fmt else fmt.replace("yy", "yyyy")  # "25.11.26": which century?


def _time_format(seconds: bool) -> str:
    locale = _locale()
    if locale.language() == QLocale.Language.C:
        return "HH:mm:ss" if seconds else "HH:mm"
    if not seconds:
        return locale.timeFormat(QLocale.FormatType.ShortFormat)
    fmt = locale.timeFormat(QLocale.FormatType.LongFormat)  # "h:mm:ss AP tttt": the zone goes, said apart
    return " ".join(part for part in fmt.split(" ") if not part.startswith("t")).strip()


def moment_format() -> str:
    """moment()'s format as QDateTimeEdit takes it, so a time is typed as it is shown."""
    return f"{_date_format()} {_time_format(False)}"


def clock(at: dt.datetime) -> str:
    """The wall-clock time with seconds ("14:02:10", "2:02:10 PM"): lock times, checks, refreshes."""
    moment = local(at)
    return _locale().toString(QTime(moment.hour, moment.minute, moment.second), _time_format(True))


def moment(at: dt.datetime) -> str:
    """Date and time to the minute ("25.11.2026 14:02"): notes, history, claims."""
    when = local(at)
    locale = _locale()
    return (
        f"{locale.toString(QDate(when.year, when.month, when.day), _date_format())} "
        f"{locale.toString(QTime(when.hour, when.minute), _time_format(False))}"
    )


def date(at: dt.date) -> str:
    """A date in the operator's format ("25.11.2026"): due dates without a time."""
    return _locale().toString(QDate(at.year, at.month, at.day), _date_format())


def day(at: dt.datetime) -> str:
    """A day, short ("25 Nov"): chart axes. The hours are already the operator's (the console's periods)."""
    return _locale().toString(QDate(at.year, at.month, at.day), "d MMM")


def duration(seconds: float) -> str:
    """A duration in the two largest units, as durations.format_duration splits it ("23d09h", "12m05s"),
    with the language's unit names and the locale's digits ("23 Tg. 09 h")."""
    unit, big, small = durations.split(seconds)
    locale = _locale()
    text = QCoreApplication.translate("Durations", _DURATION_PATTERNS[unit]).format(
        locale.toString(big), locale.toString(small).rjust(2, locale.zeroDigit())
    )
    return ("-" if seconds < 0 else "") + text


def span(seconds: float) -> str:
    """A configured length (a queue's longest lock): as duration(), without a smaller unit that is
    zero ("15m", not "15m00s")."""
    unit, big, small = durations.split(seconds)
    if small:
        return duration(seconds)
    return QCoreApplication.translate("Durations", _WHOLE_PATTERNS[unit]).format(_locale().toString(big))


def until_due(seconds: float) -> str:
    """Time to a due time ("in 3h05m"), or past it ("overdue by 2d03h"): lists mark items with it."""
    if seconds < 0:
        return QCoreApplication.translate("Times", "overdue by {0}").format(duration(-seconds))
    return QCoreApplication.translate("Times", "in {0}").format(duration(seconds))


def with_zone(header: str) -> str:
    """A column header naming the zone its times are in: "Claimed at (CET)"."""
    return f"{header} ({zone()})"
