"""A temporal filter value in a column's stored unit, exactly: one conversion for the row
kernels (``predicate``) and for pruning by footer statistics (``arrowmm.dataset.filters``),
so that the two can never disagree on which rows a temporal filter keeps."""
from __future__ import annotations

import datetime
from fractions import Fraction

import numpy as np

from .. import types as t
from ..errors import ArrowInvalid

__all__ = ["stored_units", "TEMPORAL"]

#: The column types whose values ``stored_units`` converts (each stored as an integer count).
TEMPORAL = (t.TimestampType, t.DateType, t.TimeType, t.DurationType)

_EPOCH = datetime.datetime(1970, 1, 1)
_EPOCH_UTC = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_EPOCH_DATE = datetime.date(1970, 1, 1)
_NS_PER = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}
_NS_PER_DAY = 86_400 * 10**9
#: Nanoseconds in one of each fixed-length numpy datetime64 / timedelta64 unit (years and
#: months are not fixed: a datetime64 in them is first made days, exactly).
_NUMPY_NS = {"W": 7 * _NS_PER_DAY, "D": _NS_PER_DAY, "h": 3600 * 10**9, "m": 60 * 10**9,
             "s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1, "ps": Fraction(1, 10**3),
             "fs": Fraction(1, 10**6), "as": Fraction(1, 10**9)}


def _numpy_ns(value, where: str) -> Fraction:
    """A numpy datetime64 (since the epoch) or timedelta64 in nanoseconds, exactly, from its
    own unit: never through datetime64[ns], which wraps outside the years 1677-2262."""
    unit, count = np.datetime_data(value.dtype)
    if unit in ("Y", "M") and isinstance(value, np.datetime64):
        days = value.astype("datetime64[D]")
        if days.astype(value.dtype) != value:  # (past the int64 range of days)
            raise ArrowInvalid(f"{where}: {value!r} has no exact value in days")
        value, unit, count = days, "D", 1
    if unit not in _NUMPY_NS:
        raise ArrowInvalid(f"{where}: {value!r} has no fixed-length unit ({unit!r}) to compare "
                           f"with")
    return Fraction(int(value.astype(np.int64)) * count) * _NUMPY_NS[unit]


def _datetime_ns(value: datetime.datetime) -> int:
    """A datetime (naive: as if UTC) in nanoseconds since the epoch; a pandas Timestamp's
    nanoseconds too."""
    aware = value.tzinfo is not None and value.utcoffset() is not None
    # datetime's own subtraction: a pandas Timestamp's gives a Timedelta already holding the
    # nanoseconds, which would count them twice with ``nanosecond`` below
    delta = datetime.datetime.__sub__(value, _EPOCH_UTC if aware else
                                      _EPOCH.replace(tzinfo=value.tzinfo))
    return _timedelta_ns(delta) + int(getattr(value, "nanosecond", 0) or 0)


def _timedelta_ns(value: datetime.timedelta) -> int:
    us = (value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds
    return us * 1000 + int(getattr(value, "nanoseconds", 0) or 0)


def _kind_error(dtype, what: str, value, where: str) -> ArrowInvalid:
    return ArrowInvalid(f"{where}: a {dtype} column compares with {what}, got "
                        f"{type(value).__name__} {value!r}")


def stored_units(dtype, value, where: str) -> Fraction:
    """``value`` as an exact fraction of ``dtype``'s stored unit; ArrowInvalid naming
    ``where`` when it is not a value of that kind, or a naive value for a zoned column (and
    back).  A timestamp column takes a datetime, a numpy.datetime64 or a date (its midnight,
    UTC for a zoned column, as pyarrow casts it); a date column a date or a datetime (exact:
    2020-01-01 01:00 is after the date 2020-01-01); a time column a datetime.time; a duration
    column a timedelta or numpy.timedelta64.  numpy's NaT is a null: ``Expression`` makes it
    None before it gets here.

    >>> import datetime, arrowmm
    >>> stored_units(arrowmm.timestamp("ms"), datetime.datetime(1970, 1, 1, 0, 0, 1, 500), "x")
    Fraction(2001, 2)
    """
    if isinstance(dtype, (t.TimestampType, t.DateType)):
        if isinstance(value, np.datetime64):
            if getattr(dtype, "tz", None):
                raise ArrowInvalid(f"{where}: {dtype} has a time zone, numpy.datetime64 has none")
            ns = _numpy_ns(value, where)
        elif isinstance(value, datetime.datetime):
            aware = value.tzinfo is not None and value.utcoffset() is not None
            if isinstance(dtype, t.TimestampType) and aware != bool(dtype.tz):
                raise ArrowInvalid(f"{where}: cannot compare {dtype} with a "
                                   f"{'time-zone-aware' if aware else 'naive'} datetime")
            ns = _datetime_ns(value)
        elif isinstance(value, datetime.date):
            ns = (value - _EPOCH_DATE).days * _NS_PER_DAY
        else:
            what = "a datetime" if isinstance(dtype, t.TimestampType) else "a datetime.date"
            raise _kind_error(dtype, what, value, where)
        if isinstance(dtype, t.DateType):
            return Fraction(ns, _NS_PER_DAY if dtype.unit == "day" else 10**6)
        return Fraction(ns, _NS_PER[dtype.unit])
    if isinstance(dtype, t.TimeType):
        if not isinstance(value, datetime.time):
            raise _kind_error(dtype, "a datetime.time", value, where)
        if value.tzinfo is not None:
            raise ArrowInvalid(f"{where}: cannot compare {dtype} (no time zone) with a "
                               f"time-zone-aware time {value!r}")
        us = (value.hour * 3600 + value.minute * 60 + value.second) * 1_000_000 + \
            value.microsecond
        return Fraction(us * 1000, _NS_PER[dtype.unit])
    if isinstance(dtype, t.DurationType):
        if isinstance(value, np.timedelta64):
            ns = _numpy_ns(value, where)
        elif isinstance(value, datetime.timedelta):
            ns = _timedelta_ns(value)
        else:
            raise _kind_error(dtype, "a datetime.timedelta", value, where)
        return Fraction(ns, _NS_PER[dtype.unit])
    raise ArrowInvalid(f"{where}: {dtype} is not a temporal type")
