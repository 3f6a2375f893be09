"""Which record batches a Spark filter can match, judged from arrowmm's per-batch statistics.

For each pushed filter and batch the verdict is ``NONE`` (no row can match:
the batch is skipped), ``ALL`` (every row matches) or ``SOME``.  A filter
whose verdict is ``ALL`` on every batch that is still read is fully applied
by skipping alone, so Spark need not evaluate it again; any other filter is
handed back to Spark, which checks it row by row (skipping still applies).

Semantics follow Spark's: comparisons with null are never true; NaN equals
NaN and is greater than every other float; strings and binaries compare by
bytes.  Columns whose values Spark sees changed by a cast (nanosecond
timestamps truncated to microseconds, date64) are never judged.  ``Not`` skips a
batch only where its child is ALL (a row whose child is NULL fails both), and is
never judged ALL.  Date and timestamp literals before 1582-10-17 are not judged:
Spark hands them over through the hybrid Julian calendar, so 1582-10-05..14
arrive as 1582-10-15 (and a day's margin covers time zones).  Decimal literals of 28 or more
significant digits are not judged either: pyspark rebuilds a literal in the worker's decimal
context (``Decimal(unscaled) * 10 ** -scale``, 28 digits), so it may arrive rounded.
"""
from __future__ import annotations

import datetime
import decimal
import math
from typing import Optional

from .. import types as t

__all__ = ["NONE", "SOME", "ALL", "verdict", "prunable"]

NONE, SOME, ALL = "none", "some", "all"
_EPOCH = datetime.datetime(1970, 1, 1)
_EPOCH_UTC = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_NS_PER = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}
#: literals before this day may have been changed by Spark's Julian round trip (see above)
_EXACT_FROM = datetime.date(1582, 10, 17)
#: the precision of the decimal context pyspark's literals are rebuilt in (see above)
_LITERAL_DIGITS = 28


class _Unknown(Exception):
    """A value or statistic this module cannot compare exactly: the verdict is SOME."""


def prunable(dtype: t.DataType) -> bool:
    """Whether statistics of ``dtype`` columns describe exactly what Spark sees."""
    if isinstance(dtype, (t.TimestampType, t.DurationType)):
        return dtype.unit != "ns"
    if isinstance(dtype, t.DateType):
        return dtype.unit == "day"
    return isinstance(dtype, (t.BoolType, t.IntType, t.FloatType, t.DecimalType, t.BinaryType,
                              t.BinaryViewType, t.FixedSizeBinaryType))


def verdict(flt, dtype: t.DataType, stats: Optional[dict], rows: Optional[int]) -> str:
    """NONE, SOME or ALL: how many rows of a batch with these statistics ``flt`` can match."""
    if stats is None or rows is None or not prunable(dtype):
        return SOME
    nulls = stats.get("nulls")
    if not isinstance(nulls, int) or not 0 <= nulls <= rows:
        return SOME
    name = type(flt).__name__
    if name == "Not":  # no row passes where every row's child is true
        return NONE if verdict(flt.child, dtype, stats, rows) == ALL else SOME
    if name == "IsNull":
        return NONE if nulls == 0 else ALL if nulls == rows else SOME
    if name == "IsNotNull":
        return NONE if nulls == rows else ALL if nulls == 0 else SOME
    if name not in _JUDGES:
        return SOME
    if name == "EqualNullSafe" and flt.value is None:
        return NONE if nulls == 0 else ALL if nulls == rows else SOME
    if nulls == rows:
        return NONE  # comparisons with null are never true
    try:
        lo = _stat(dtype, stats.get("min"))
        hi = _stat(dtype, stats.get("max"))
        nan = bool(stats.get("nan"))
        out = _JUDGES[name](flt, dtype, lo, hi, nan)
    except (_Unknown, TypeError, ValueError, ArithmeticError):
        return SOME
    return SOME if out == ALL and nulls else out


# -- values in a common, exact domain ------------------------------------------------------------
def _stat(dtype, raw):
    """A statistic as a Python value comparable with ``_value``'s (None when absent)."""
    if raw is None:
        return None
    if isinstance(dtype, t.FloatType):
        if raw in ("inf", "-inf"):
            return float(raw)
        if not isinstance(raw, (int, float)):
            raise _Unknown
        return float(raw)
    if isinstance(dtype, t.DecimalType):
        if not isinstance(raw, int) or isinstance(raw, bool):
            raise _Unknown
        # built from its digits, exactly: scaleb rounds to the context's precision (28 digits
        # by default), and a rounded bound skips batches that hold matches
        return decimal.Decimal(f"{raw}E{-dtype.scale}")
    if isinstance(dtype, (t.TimestampType, t.DurationType)):
        return int(raw) * _NS_PER[dtype.unit]
    if isinstance(dtype, (t.BinaryType, t.BinaryViewType)) and dtype.utf8:
        if not isinstance(raw, str):
            raise _Unknown
        return raw
    if isinstance(dtype, (t.BinaryType, t.BinaryViewType, t.FixedSizeBinaryType)):
        return bytes.fromhex(raw)
    if not isinstance(raw, int):
        raise _Unknown
    return raw


def _value(dtype, v):
    """A filter literal in the statistics' domain (``_Unknown`` if it can't be compared)."""
    if v is None:
        raise _Unknown
    if isinstance(v, decimal.Decimal) and v.is_finite() and \
            len(v.as_tuple().digits) >= _LITERAL_DIGITS:
        raise _Unknown  # (perhaps rounded by pyspark: see above)
    if isinstance(dtype, t.BoolType):
        if not isinstance(v, bool):
            raise _Unknown
        return int(v)
    if isinstance(dtype, (t.IntType, t.DecimalType)):
        if isinstance(v, bool) or not isinstance(v, (int, float, decimal.Decimal)):
            raise _Unknown
        if isinstance(v, float) and math.isnan(v):
            raise _Unknown
        return decimal.Decimal(v) if isinstance(dtype, t.DecimalType) else v
    if isinstance(dtype, t.FloatType):
        if isinstance(v, bool) or not isinstance(v, (int, float, decimal.Decimal)):
            raise _Unknown
        v = float(v)
        if math.isnan(v):
            raise _Unknown
        return v
    if isinstance(dtype, t.DateType):
        if isinstance(v, datetime.datetime) or not isinstance(v, datetime.date):
            raise _Unknown
        if v < _EXACT_FROM:
            raise _Unknown
        return (v - _EPOCH.date()).days
    if isinstance(dtype, t.TimestampType):
        if not isinstance(v, datetime.datetime):
            raise _Unknown
        if (v.tzinfo is not None) != (dtype.tz is not None):
            raise _Unknown
        if v.date() < _EXACT_FROM:
            raise _Unknown
        delta = v - (_EPOCH_UTC if v.tzinfo is not None else _EPOCH)
        return _delta_ns(delta)
    if isinstance(dtype, t.DurationType):
        if not isinstance(v, datetime.timedelta):
            raise _Unknown
        return _delta_ns(v)
    if isinstance(dtype, (t.BinaryType, t.BinaryViewType)) and dtype.utf8:
        if not isinstance(v, str):
            raise _Unknown
        return v
    if isinstance(dtype, (t.BinaryType, t.BinaryViewType, t.FixedSizeBinaryType)):
        if not isinstance(v, (bytes, bytearray)):
            raise _Unknown
        return bytes(v)
    raise _Unknown


def _delta_ns(delta: datetime.timedelta) -> int:
    return ((delta.days * 86400 + delta.seconds) * 10**6 + delta.microseconds) * 1000


# -- one judge per filter kind: (filter, type, min, max, has NaN) -> verdict -----------------------
def _need(*bounds):
    if any(b is None for b in bounds):
        raise _Unknown


def _equal(flt, dtype, lo, hi, nan):
    v = _value(dtype, flt.value)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        return NONE
    _need(lo, hi)
    return ALL if lo == hi == v and not nan else SOME


def _greater(flt, dtype, lo, hi, nan, strict=True):
    v = _value(dtype, flt.value)
    if nan:
        return SOME  # NaN is greater than every number
    _need(lo, hi)
    if hi < v or (strict and hi == v):
        return NONE
    return ALL if lo > v or (not strict and lo == v) else SOME


def _less(flt, dtype, lo, hi, nan, strict=True):
    v = _value(dtype, flt.value)
    if lo is not None and (lo > v or (strict and lo == v)):
        return NONE  # NaN rows never compare less
    _need(lo, hi)
    return ALL if not nan and (hi < v or (not strict and hi == v)) else SOME


def _in(flt, dtype, lo, hi, nan):
    values = [_value(dtype, x) for x in flt.value if x is not None]
    if not values:
        return NONE  # x IN (NULL, ...) is never true
    _need(lo, hi)
    if all(v < lo or v > hi for v in values):
        return NONE
    return ALL if lo == hi and lo in values and not nan else SOME


def _starts_with(flt, dtype, lo, hi, nan):
    utf8 = isinstance(dtype, (t.BinaryType, t.BinaryViewType)) and dtype.utf8
    if not utf8 or not isinstance(flt.value, str):
        raise _Unknown
    p = flt.value
    if hi is not None and hi < p:
        return NONE  # every value sorts before the prefix: none starts with it
    if lo is not None and lo[:len(p)] > p:
        return NONE  # every value sorts after all strings with the prefix
    _need(lo, hi)
    return ALL if lo.startswith(p) and hi.startswith(p) else SOME


_JUDGES = {
    "EqualTo": _equal,
    "EqualNullSafe": _equal,
    "GreaterThan": _greater,
    "GreaterThanOrEqual": lambda f, d, lo, hi, nan: _greater(f, d, lo, hi, nan, strict=False),
    "LessThan": _less,
    "LessThanOrEqual": lambda f, d, lo, hi, nan: _less(f, d, lo, hi, nan, strict=False),
    "In": _in,
    "StringStartsWith": _starts_with,
}
