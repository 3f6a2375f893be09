"""Dates, times and timestamps written as text exactly as pyarrow's cast to string writes them.

``2023-11-14 22:13:20.123`` (the fraction has the unit's digits: none, 3, 6 or 9), a zone's
offset after a zoned timestamp (``Z`` for ``UTC``, else ``+0530`` / ``-0456``: the offset's
minutes, its seconds dropped), years of four digits with a sign below zero (``-0005``) and
more digits past 9999.  Values whose year falls outside -32767..32767, and times of day outside
the day, are written ``<value out of range: N>``, as pyarrow does.  The text is written in one
pass in C (``_cast.format_temporal``: days to the civil calendar by Howard Hinnant's
algorithm); a zone's offsets come from ``zones`` first.  Null rows are empty.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ._cast import format_temporal
from .zones import zone_offsets

__all__ = ["format_dates", "format_times", "format_timestamps"]

_PER_SECOND = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}
_FRACTION_DIGITS = {"s": 0, "ms": 3, "us": 6, "ns": 9}
_DATE, _TIME, _TIMESTAMP = 1, 2, 0


def _int64(values) -> np.ndarray:
    return np.ascontiguousarray(values, dtype=np.int64)


def format_dates(days: np.ndarray, stored: Optional[np.ndarray] = None,
                 valid: Optional[np.ndarray] = None):
    """``YYYY-MM-DD`` of each count of days since the epoch: (int64 offsets, uint8 data).  A
    day out of range is named by its ``stored`` value (a date64's milliseconds) when given."""
    return format_temporal(_int64(days), valid, _DATE, 1, 0, None, 0,
                           None if stored is None else _int64(stored))


def format_times(values: np.ndarray, unit: str, valid: Optional[np.ndarray] = None):
    """``HH:MM:SS[.fff]`` of each time of day in ``unit``: (int64 offsets, uint8 data)."""
    return format_temporal(_int64(values), valid, _TIME, _PER_SECOND[unit],
                           _FRACTION_DIGITS[unit], None, 0, None)


def format_timestamps(values: np.ndarray, unit: str, tz, valid: Optional[np.ndarray] = None):
    """``YYYY-MM-DD HH:MM:SS[.fff]`` (and the zone's offset for a zoned type) of each count of
    ``unit`` since the epoch, in the zone's wall-clock time: (int64 offsets, uint8 data)."""
    values = _int64(values)
    per_second = _PER_SECOND[unit]
    offsets = None
    if tz and tz != "UTC":
        offsets = _int64(zone_offsets(np.floor_divide(values, per_second), tz))
    return format_temporal(values, valid, _TIMESTAMP, per_second, _FRACTION_DIGITS[unit],
                           offsets, 0 if not tz else 1 if tz == "UTC" else 2, None)
