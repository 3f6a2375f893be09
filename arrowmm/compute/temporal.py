"""A date or datetime filter value in a column's stored unit, exactly: one conversion for the
row kernels (``predicate``) and for pruning by footer statistics (``arrowmm.dataset.filters``),
so that the two can never disagree on which rows a temporal filter keeps."""
from __future__ import annotations

import datetime
from fractions import Fraction

import numpy as np

from .. import types as t
from ..errors import ArrowInvalid

__all__ = ["stored_units"]

_EPOCH = datetime.datetime(1970, 1, 1)
_EPOCH_UTC = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_EPOCH_DATE = datetime.date(1970, 1, 1)
_NS_PER = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}


def stored_units(dtype, value, where: str) -> Fraction:
    """``value`` (a datetime or numpy.datetime64 for a timestamp column, a date for a date
    column) as an exact fraction of ``dtype``'s stored unit; ArrowInvalid naming ``where``
    when it is not a value of that kind, or a naive value for a zoned column (and back).

    >>> import datetime, arrowmm
    >>> stored_units(arrowmm.timestamp("ms"), datetime.datetime(1970, 1, 1, 0, 0, 1, 500), "x")
    Fraction(2001, 2)
    """
    if isinstance(dtype, t.TimestampType):
        if isinstance(value, np.datetime64):
            if dtype.tz:
                raise ArrowInvalid(f"{where}: {dtype} has a time zone, numpy.datetime64 has none")
            ns = int(value.astype("datetime64[ns]").astype(np.int64))
        elif isinstance(value, datetime.datetime):
            aware = value.tzinfo is not None and value.utcoffset() is not None
            if aware != bool(dtype.tz):
                raise ArrowInvalid(f"{where}: cannot compare {dtype} with a "
                                   f"{'time-zone-aware' if aware else 'naive'} datetime")
            delta = value - (_EPOCH_UTC if aware else _EPOCH.replace(tzinfo=value.tzinfo))
            us = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
            ns = us * 1000 + int(getattr(value, "nanosecond", 0) or 0)
        else:
            raise ArrowInvalid(f"{where}: a {dtype} column compares with a datetime, got "
                               f"{type(value).__name__} {value!r}")
        return Fraction(ns, _NS_PER[dtype.unit])
    if isinstance(value, datetime.datetime) or not isinstance(value, datetime.date):
        raise ArrowInvalid(f"{where}: a {dtype} column compares with a datetime.date, got "
                           f"{type(value).__name__} {value!r}")
    days = (value - _EPOCH_DATE).days
    return Fraction(days if dtype.unit == "day" else days * 86_400_000)
