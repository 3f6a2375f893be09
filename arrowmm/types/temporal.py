"""The types of time: dates, times of day, timestamps, durations and intervals."""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..errors import ArrowInvalid
from .base import FixedWidthType, native_dtype

__all__ = ["DateType", "TimeType", "TimestampType", "DurationType", "IntervalType",
           "TIME_UNITS", "check_unit"]


TIME_UNITS = ("s", "ms", "us", "ns")


def check_unit(unit, allowed=TIME_UNITS):
    if unit not in allowed:
        raise ArrowInvalid(f"time unit must be one of {allowed}, got {unit!r}")
    return unit


class DateType(FixedWidthType):
    """Calendar dates: days (``date32()``, unit ``"day"``) or milliseconds
    (``date64()``, unit ``"ms"``) since the UNIX epoch."""
    __slots__ = ()

    def __init__(self, unit: str = "day"):
        super().__init__(check_unit(unit, ("day", "ms")))

    unit = property(lambda self: self._key[1])
    bit_width = property(lambda self: 32 if self._key[1] == "day" else 64)
    byte_width = property(lambda self: 4 if self._key[1] == "day" else 8)
    numpy_dtype = property(lambda self: native_dtype("i4" if self._key[1] == "day" else "i8"))

    def __str__(self):
        return "date32[day]" if self.unit == "day" else "date64[ms]"


class TimeType(FixedWidthType):
    """Time of day in ``unit``: ``"s"`` or ``"ms"`` in 32 bits (``time32``), ``"us"`` or
    ``"ns"`` in 64 (``time64``)."""
    __slots__ = ()

    def __init__(self, unit: str, bit_width: Optional[int] = None):
        check_unit(unit)
        if bit_width is None:
            bit_width = 32 if unit in ("s", "ms") else 64
        if (bit_width == 32) != (unit in ("s", "ms")) or bit_width not in (32, 64):
            raise ArrowInvalid(f"time{bit_width} cannot have unit {unit!r}")
        super().__init__(unit, bit_width)

    unit = property(lambda self: self._key[1])
    bit_width = property(lambda self: self._key[2])
    byte_width = property(lambda self: self._key[2] // 8)
    numpy_dtype = property(lambda self: native_dtype(f"i{self._key[2] // 8}"))

    def __str__(self):
        return f"time{self.bit_width}[{self.unit}]"


class TimestampType(FixedWidthType):
    """Instants as 64-bit counts of ``unit`` (``"s"``, ``"ms"``, ``"us"``, ``"ns"``) since
    the UNIX epoch, with an optional time zone ``tz`` (``timestamp(unit, tz=None)``, as
    ``pyarrow.timestamp``)."""
    __slots__ = ()
    byte_width = 8
    numpy_dtype = native_dtype("i8")

    def __init__(self, unit: str, tz: Optional[str] = None):
        super().__init__(check_unit(unit), tz or None)

    unit = property(lambda self: self._key[1])
    tz = property(lambda self: self._key[2])

    def __str__(self):
        return f"timestamp[{self.unit}, tz={self.tz}]" if self.tz else f"timestamp[{self.unit}]"


class DurationType(FixedWidthType):
    """Elapsed time as a 64-bit count of ``unit`` (``duration(unit)``, as
    ``pyarrow.duration``)."""
    __slots__ = ()
    byte_width = 8
    numpy_dtype = native_dtype("i8")

    def __init__(self, unit: str):
        super().__init__(check_unit(unit))

    unit = property(lambda self: self._key[1])

    def __str__(self):
        return f"duration[{self.unit}]"


class IntervalType(FixedWidthType):
    """Calendar intervals: ``"YEAR_MONTH"`` (months), ``"DAY_TIME"`` (days and
    milliseconds) or ``"MONTH_DAY_NANO"``; made by ``month_interval()``,
    ``day_time_interval()`` and ``month_day_nano_interval()``."""
    __slots__ = ()
    _INFO = {
        "YEAR_MONTH": ("month_interval", 4, np.dtype("<i4")),
        "DAY_TIME": ("day_time_interval", 8, np.dtype([("days", "<i4"), ("milliseconds", "<i4")])),
        "MONTH_DAY_NANO": ("month_day_nano_interval", 16,
                           np.dtype([("months", "<i4"), ("days", "<i4"), ("nanoseconds", "<i8")])),
    }

    def __init__(self, unit: str):
        if unit not in self._INFO:
            raise ArrowInvalid(f"interval unit must be one of {tuple(self._INFO)}, got {unit!r}")
        super().__init__(unit)

    unit = property(lambda self: self._key[1])
    byte_width = property(lambda self: self._INFO[self._key[1]][1])
    numpy_dtype = property(lambda self: self._INFO[self._key[1]][2])

    def __str__(self):
        return self._INFO[self.unit][0]
