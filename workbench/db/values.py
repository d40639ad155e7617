"""Turn user input (CLI text or form values) into values a column accepts, or say what to fix."""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import sqlalchemy as sa

from workbench.core import errors, problems

_FLOAT_MAX = decimal.Decimal("1.7976931348623157e308")  # the largest double
_TRUE = {"true", "t", "yes", "y", "1", "on"}
_FALSE = {"false", "f", "no", "n", "0", "off"}


def _fail(column: sa.Column[Any], problem: str, *args: Any) -> errors.InvalidValue:
    return errors.InvalidValue.at(column.name, problem, *args)


def python_type(column: sa.Column[Any]) -> type | None:
    try:
        return column.type.python_type
    except NotImplementedError:
        return None


def coerce(column: sa.Column[Any], raw: Any) -> Any:
    """`raw` converted for `column`; strings are parsed, typed values are checked."""
    kind = column.type
    if isinstance(raw, str) and "\x00" in raw:
        # SQLite and MariaDB would store it and cut the text short in other programs; PostgreSQL refuses it.
        raise _fail(column, problems.NUL)
    if raw is None or (isinstance(raw, str) and raw == "" and not isinstance(kind, sa.String)):
        if not column.nullable:
            raise _fail(column, problems.NOT_NULL)
        return None
    if isinstance(kind, sa.Boolean):
        return _boolean(column, raw)
    if isinstance(kind, sa.Integer):
        return _integer(column, raw)
    if isinstance(kind, (sa.Numeric, sa.Float)):  # SQLAlchemy 2.1: Float no longer extends Numeric
        return _number(column, raw)
    if isinstance(kind, sa.DateTime):
        return _datetime(column, raw)
    if isinstance(kind, sa.Date):
        return _date(column, raw)
    if isinstance(kind, sa.Time):
        return _time(column, raw)
    if isinstance(kind, sa.Enum):
        value = str(raw)
        if kind.enums and value not in kind.enums:
            raise _fail(column, problems.NOT_ENUM, repr(value), ", ".join(kind.enums))
        return value
    if isinstance(kind, sa.String):
        return _string(column, raw)
    if isinstance(kind, (sa.LargeBinary, sa.PickleType)):
        raise _fail(column, problems.BINARY)
    return raw


def _boolean(column: sa.Column[Any], raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, int) and raw in (0, 1):
        return bool(raw)
    text = str(raw).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise _fail(column, problems.NOT_BOOLEAN, repr(raw))


def _integer(column: sa.Column[Any], raw: Any) -> int:
    if isinstance(raw, bool):
        return int(raw)  # legacy flags stored as 0/1 integers
    if isinstance(raw, int):
        value = raw
    elif isinstance(raw, float) and raw.is_integer():
        value = int(raw)
    else:
        text = str(raw).strip()
        try:
            value = int(text)
        except ValueError:
            raise _fail(column, problems.NOT_WHOLE, repr(raw)) from None
    # Plain INTEGER is 32-bit on most servers but 64-bit on SQLite; the server reports that overflow.
    # No database has whole numbers wider than 64 bits (SQLite's driver cannot even send one).
    limit = 2**63
    for base, bound in ((sa.SmallInteger, 2**15), (sa.BigInteger, 2**63)):
        if isinstance(column.type, base):
            limit = bound
            break
    if not -limit <= value < limit:
        raise _fail(column, problems.OUT_OF_RANGE, value)
    return value


def _number(column: sa.Column[Any], raw: Any) -> Any:
    kind = column.type
    assert isinstance(kind, (sa.Numeric, sa.Float))
    try:
        value = decimal.Decimal(str(raw).strip()) if not isinstance(raw, decimal.Decimal) else raw
    except decimal.InvalidOperation:
        raise _fail(column, problems.NOT_NUMBER, repr(raw)) from None
    if not value.is_finite():
        raise _fail(column, problems.NOT_FINITE, repr(raw))
    if (isinstance(kind, sa.Float) or not kind.asdecimal) and abs(value) > _FLOAT_MAX:
        raise _fail(column, problems.TOO_LARGE, raw)
    if not isinstance(kind, sa.Float) and kind.precision is not None:
        scale = kind.scale or 0
        if value.adjusted() >= kind.precision - scale:  # before quantize, which fails on huge values
            raise _fail(column, problems.TOO_MANY_DIGITS, raw, kind.precision - scale)
        with decimal.localcontext() as context:
            context.prec = max(context.prec, kind.precision + 1)  # NUMERIC(38, …) has more than 28 digits
            quantized = value.quantize(decimal.Decimal(1).scaleb(-scale))
        if quantized != value:
            raise _fail(column, problems.TOO_MANY_DECIMALS, raw, scale)
        digits = len(quantized.as_tuple().digits) if quantized else 0
        exponent = quantized.as_tuple().exponent
        # "n", "N" and "F" (NaN, sNaN, infinity) are refused before; a finite value has a number here.
        integer_digits = max(digits - scale, 0) if isinstance(exponent, int) and exponent < 0 else digits
        if integer_digits > kind.precision - scale:
            raise _fail(column, problems.TOO_MANY_DIGITS, raw, kind.precision - scale)
        value = quantized
    if isinstance(kind, sa.Float) or not kind.asdecimal:
        return float(value)
    return value


def _datetime(column: sa.Column[Any], raw: Any) -> dt.datetime:
    if isinstance(raw, dt.datetime):
        return raw
    if isinstance(raw, dt.date):
        return dt.datetime.combine(raw, dt.time())
    try:
        return dt.datetime.fromisoformat(str(raw).strip())
    except ValueError:
        raise _fail(column, problems.NOT_DATETIME, repr(raw)) from None


def _date(column: sa.Column[Any], raw: Any) -> dt.date:
    if isinstance(raw, dt.datetime):
        return raw.date()
    if isinstance(raw, dt.date):
        return raw
    try:
        return dt.date.fromisoformat(str(raw).strip())
    except ValueError:
        raise _fail(column, problems.NOT_DATE, repr(raw)) from None


def _time(column: sa.Column[Any], raw: Any) -> dt.time:
    if isinstance(raw, dt.time):
        return raw
    try:
        return dt.time.fromisoformat(str(raw).strip())
    except ValueError:
        raise _fail(column, problems.NOT_TIME, repr(raw)) from None


def _string(column: sa.Column[Any], raw: Any) -> str:
    if isinstance(raw, (dict, list, bytes)):
        raise _fail(column, problems.NOT_TEXT)
    value = raw if isinstance(raw, str) else str(raw)
    length = getattr(column.type, "length", None)
    if length and len(value) > length:
        raise _fail(column, problems.TOO_LONG, length, len(value))
    return value
