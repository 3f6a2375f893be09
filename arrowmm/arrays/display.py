"""Previews of values, laid out the way pyarrow's ``repr`` lays them out.

An array prints as pyarrow's ``PrettyPrint`` does (one value per line, the first and last
ten when there are more than twenty); a batch prints its schema then one line per column.
Values print as Arrow C++ prints them: ``null``, ``true``, strings in double quotes, binary
as upper-case hex, floats in their shortest form (``1``, ``2.5``, ``1e+20``), a value longer
than 100 characters cut (``(... n chars omitted)``).  Dates, times, timestamps and durations
print from the stored number, not a Python object: every digit the unit has, a time zone's
instants in UTC marked ``Z``, and ``<value out of range: n>`` where Arrow C++ has no date for
the number (a Python ``datetime`` would lose nanoseconds, print ``NaT`` or raise).
"""
from __future__ import annotations

import datetime
import decimal
import math
import uuid

import numpy as np

from .. import types as t
from .scalars import MonthDayNano

__all__ = ["format_value", "format_stored", "array_lines", "inline_values", "preview",
           "shown_values", "WINDOW",
           "ELEMENT_SIZE_LIMIT", "Shown"]

#: values shown from each end of a long array (pyarrow's default window)
WINDOW = 10
#: the longest value printed whole, in characters (bytes of UTF-8), quotes included (Arrow
#: C++'s ``PrettyPrintOptions::element_size_limit``)
ELEMENT_SIZE_LIMIT = 100


class Shown(str):
    """A value already laid out as Arrow C++ prints it (``format_value`` prints it as is)."""

    __slots__ = ()


def _cut(text: str, limit: int) -> str:
    raw = text.encode("utf-8", "surrogateescape")
    if len(raw) <= limit:
        return text
    return (raw[:limit].decode("utf-8", "replace")
            + f" (... {len(raw) - limit} chars omitted)")


def _float(v: float, single: bool = False) -> str:
    """``v`` as Arrow C++ prints a float: the shortest digits that read back to the same
    double (``single``: the same float32), positional from 1e-6 up to below 1e10, else
    ``1.5e+10`` / ``1e-7`` (double-conversion's shortest form, as Arrow sets it)."""
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    sign = "-" if math.copysign(1.0, v) < 0 else ""
    if v == 0:
        return sign + "0"
    exact = decimal.Decimal(str(np.float32(abs(v))) if single else repr(abs(v))).normalize()
    _, digits, exponent = exact.as_tuple()
    magnitude = len(digits) - 1 + exponent  # (v = d.ddd x 10**magnitude)
    if -7 < magnitude < 10:
        return sign + format(exact, "f")
    mantissa = str(digits[0]) + ("." + "".join(map(str, digits[1:])) if len(digits) > 1 else "")
    return f"{sign}{mantissa}e{'+' if magnitude >= 0 else '-'}{abs(magnitude)}"


def format_value(v) -> str:
    """One value as Arrow C++ prints it inside an array."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, float):
        return _float(v)
    if isinstance(v, Shown):
        return str(v)
    if isinstance(v, str):
        return f'"{_cut(v, ELEMENT_SIZE_LIMIT - 2)}"'
    if isinstance(v, (bytes, bytearray, memoryview)):
        return _cut(bytes(v).hex().upper(), ELEMENT_SIZE_LIMIT)
    if isinstance(v, datetime.datetime):
        return v.isoformat(sep=" ")
    if isinstance(v, uuid.UUID):
        return v.bytes.hex().upper()
    if isinstance(v, MonthDayNano):  # (before tuples: it is one)
        return f"{v.months}M{v.days}d{v.nanoseconds}ns"
    if isinstance(v, dict):
        return "{" + ",".join(f"{k}: {format_value(x)}" for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(format_value(x) for x in v) + "]"
    return str(v)


def array_lines(head, tail) -> str:
    """The bracketed, one-per-line body of an array repr."""
    if not head and tail is None:
        return "[]"
    body = ",\n".join(f"  {format_value(v)}" for v in head)
    if tail is not None:  # (pyarrow puts no comma after the ellipsis)
        body += ",\n  ...\n" + ",\n".join(f"  {format_value(v)}" for v in tail)
    return "[\n" + body + "\n]"


def inline_values(head, tail) -> str:
    """The one-line form of a column in a batch repr: ``[1,2,...,29]``."""
    parts = [format_value(v) for v in head]
    if tail is not None:
        parts.append("...")
        parts.extend(format_value(v) for v in tail)
    return "[" + ",".join(parts) + "]"


def preview(array):
    """(head, tail) values of ``array`` for a repr (tail None when all fit)."""
    n = len(array)
    if n <= 2 * WINDOW + 1:  # (pyarrow elides at least two values)
        return shown_values(array), None
    return shown_values(array.slice(0, WINDOW)), shown_values(array.slice(n - WINDOW, WINDOW))


def shown_values(array) -> list:
    """The values of ``array`` to print: Python values, or for the temporal types their stored
    numbers laid out as Arrow C++ lays them out (``Shown``)."""
    dtype = array.type
    if type(dtype) is t.FloatType and dtype.bit_width == 32:  # (its own shortest digits)
        return [None if v is None else Shown(_float(v, single=True)) for v in array.to_pylist()]
    lay_out = _TEMPORAL.get(type(dtype))
    if lay_out is None:
        return array.to_pylist()
    return [None if v is None else Shown(lay_out(dtype, v))
            for v in array.to_pylist(temporal="int")]


# -- the temporal types, from their numbers (Arrow C++'s ``arrow/util/formatting.h``) ----------
_PER_SECOND = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}
_DIGITS = {"s": 0, "ms": 3, "us": 6, "ns": 9}
_DAY_MS = 86_400_000


def _days_from_civil(y: int, m: int, d: int) -> int:
    """Days from 1970-01-01 to y-m-d (proleptic Gregorian; H. Hinnant's algorithm)."""
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    return era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468


def _civil_from_days(z: int):
    """(year, month, day) of day ``z`` from 1970-01-01 (any integer)."""
    z += 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (m <= 2), m, d


#: the days Arrow C++ prints a date for: years -32767 to 32767
_MIN_DAY, _MAX_DAY = _days_from_civil(-32767, 1, 1), _days_from_civil(32767, 12, 31)


def _out_of_range(v: int) -> str:
    return f"<value out of range: {v}>"


def _date_text(days: int) -> str:
    y, m, d = _civil_from_days(days)
    year = f"{y:04d}" if y >= 0 else f"-{-y:04d}"
    return f"{year}-{m:02d}-{d:02d}"


def _time_text(units: int, unit: str) -> str:
    seconds, frac = divmod(units, _PER_SECOND[unit])
    minutes, sec = divmod(seconds, 60)
    text = f"{minutes // 60:02d}:{minutes % 60:02d}:{sec:02d}"
    return text + (f".{frac:0{_DIGITS[unit]}d}" if _DIGITS[unit] else "")


def _timestamp(dtype, v: int) -> str:
    days, units = divmod(v, 86_400 * _PER_SECOND[dtype.unit])
    if not _MIN_DAY <= days <= _MAX_DAY:
        return _out_of_range(v)
    return f"{_date_text(days)} {_time_text(units, dtype.unit)}" + ("Z" if dtype.tz else "")


def _date(dtype, v: int) -> str:
    if dtype.unit == "day":
        return _date_text(v) if _MIN_DAY <= v <= _MAX_DAY else _out_of_range(v)
    if not _MIN_DAY * _DAY_MS <= v < (_MAX_DAY + 1) * _DAY_MS:
        return _out_of_range(v)
    # (the day toward zero, as Arrow C++ casts a date64: -1 ms prints 1970-01-01)
    return _date_text(v // _DAY_MS if v >= 0 else -(-v // _DAY_MS))


def _time(dtype, v: int) -> str:
    if not 0 <= v < 86_400 * _PER_SECOND[dtype.unit]:
        return _out_of_range(v)
    return _time_text(v, dtype.unit)


_TEMPORAL = {
    t.TimestampType: _timestamp,
    t.DateType: _date,
    t.TimeType: _time,
    t.DurationType: lambda dtype, v: str(v),
}


def format_stored(dtype, v: int) -> str:
    """A date, time, timestamp or duration from the number it is stored as (a statistics
    bound), as ``shown_values`` lays it out; any other type's number as it is."""
    lay_out = _TEMPORAL.get(type(dtype))
    return str(v) if lay_out is None else lay_out(dtype, int(v))
