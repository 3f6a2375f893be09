"""Dates, times and timestamps written as text exactly as pyarrow's cast to string writes them.

``2023-11-14 22:13:20.123`` (the fraction has the unit's digits: none, 3, 6 or 9), a zone's
offset after a zoned timestamp (``Z`` for ``UTC``, else ``+0530`` / ``-0456``: the offset's
minutes, its seconds dropped), years of four digits with a sign below zero (``-0005``) and
more digits past 9999.  Values whose year falls outside -32767..32767, and times of day outside
the day, are written ``<value out of range: N>``, as pyarrow does.  Each is whole-array numpy
arithmetic (days to the civil calendar by Howard Hinnant's algorithm) writing one fixed-width
row of bytes per value; only rows of unusual years or out of range go through Python.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Optional

import numpy as np

from .zones import zone_offsets

__all__ = ["format_dates", "format_times", "format_timestamps"]

_PER_SECOND = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}
_FRACTION_DIGITS = {"s": 0, "ms": 3, "us": 6, "ns": 9}
_LOWEST_DAY = -12_687_428  # -32767-01-01, the first day pyarrow writes
_HIGHEST_DAY = 11_248_737  # 32767-12-31, the last


_PAIRS = np.frombuffer("".join(f"{k:02d}" for k in range(100)).encode(),
                       dtype=np.uint8).reshape(100, 2)  # "00" .. "99"


def _put_digits(rows: np.ndarray, column: int, values: np.ndarray, width: int) -> None:
    """``values`` (0 <= value < 10**width) as ``width`` decimal digits into
    ``rows[:, column:column + width]``, two at a time."""
    values = values.copy()
    end = column + width
    while end - column >= 2:
        rows[:, end - 2:end] = _PAIRS[values % 100]
        values //= 100
        end -= 2
    if end > column:
        rows[:, column] = values + 48


@lru_cache(maxsize=1)
def _clock_table() -> np.ndarray:
    """``HH:MM:SS`` of each second of a day (86,400 rows of 8 bytes)."""
    seconds = np.arange(86_400, dtype=np.int64)
    table = np.empty((86_400, 8), dtype=np.uint8)
    table[:, 0:2] = _PAIRS[seconds // 3600]
    table[:, 3:5] = _PAIRS[seconds // 60 % 60]
    table[:, 6:8] = _PAIRS[seconds % 60]
    table[:, 2] = table[:, 5] = ord(":")
    return table


def _clock(rows: np.ndarray, column: int, seconds: np.ndarray, fraction: np.ndarray,
           digits: int) -> None:
    """``HH:MM:SS`` then ``.`` and ``digits`` of ``fraction`` (when any) from ``column``."""
    rows[:, column:column + 8] = _clock_table()[seconds]
    if digits:
        rows[:, column + 8] = ord(".")
        _put_digits(rows, column + 9, fraction, digits)


def _civil(days: np.ndarray):
    """(year, month, day) of each day since 1970-01-01, proleptic Gregorian (Howard
    Hinnant's ``civil_from_days``)."""
    z = days + 719_468
    era = np.floor_divide(z, 146_097)
    doe = z - era * 146_097
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = np.where(mp < 10, mp + 3, mp - 9)
    year = yoe + era * 400 + (month <= 2)
    return year, month, day


def _date_rows(days: np.ndarray, tail: int):
    """Rows of ``YYYY-MM-DD`` followed by ``tail`` bytes to fill, and the years.  The
    calendar is worked out once per distinct day (over the span of days when it is not much
    longer than the array, else over the distinct ones) and gathered."""
    rows = np.empty((len(days), 10 + tail), dtype=np.uint8)
    if not len(days):
        return rows, days
    lo, hi = int(days.min()), int(days.max())
    if hi - lo <= 4 * len(days) + 4096:
        each, where = np.arange(lo, hi + 1, dtype=np.int64), days - lo
    else:
        each, where = np.unique(days, return_inverse=True)
        where = where.reshape(-1)
    year, month, day = _civil(each)
    table = np.empty((len(each), 10), dtype=np.uint8)
    _put_digits(table, 0, np.clip(year, 0, 9999), 4)
    table[:, 4] = table[:, 7] = ord("-")
    table[:, 5:7] = _PAIRS[month]
    table[:, 8:10] = _PAIRS[day]
    rows[:, :10] = table[where]
    return rows, year[where]


def _assembled(rows: np.ndarray, texts: dict, year: Optional[np.ndarray] = None):
    """(int64 offsets, uint8 data) of one text per row: ``rows`` as they are, but a row in
    ``texts`` is that text instead, and a row whose year is not of four digits has it
    written out in full (its first four bytes replaced)."""
    n, width = rows.shape
    if year is not None:
        odd = np.flatnonzero((year < 0) | (year > 9999)).tolist()
        for i in odd:
            if i not in texts:
                y = int(year[i])
                head = f"-{-y:04d}" if y < 0 else str(y)
                texts[i] = head.encode() + rows[i, 4:].tobytes()
    if not texts:
        return np.arange(n + 1, dtype=np.int64) * width, rows.reshape(-1)
    lengths = np.full(n, width, dtype=np.int64)
    special = np.fromiter(texts, dtype=np.int64, count=len(texts))
    lengths[special] = [len(texts[i]) for i in special.tolist()]
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    data = np.empty(int(offsets[-1]), dtype=np.uint8)
    plain = np.ones(n, dtype=bool)
    plain[special] = False
    starts = offsets[:-1][plain]
    data[starts[:, None] + np.arange(width)] = rows[plain]
    for i in special.tolist():
        data[offsets[i]:offsets[i + 1]] = np.frombuffer(texts[i], dtype=np.uint8)
    return offsets, data


def _out_of_range(values: np.ndarray, bad: np.ndarray) -> dict:
    return {i: f"<value out of range: {int(values[i])}>".encode()
            for i in np.flatnonzero(bad).tolist()}


def format_dates(days: np.ndarray, stored: Optional[np.ndarray] = None):
    """``YYYY-MM-DD`` of each count of days since the epoch (int64): (offsets, data).  A day
    out of range is named by its ``stored`` value (a date64's milliseconds) when given."""
    days = np.asarray(days, dtype=np.int64)
    bad = (days < _LOWEST_DAY) | (days > _HIGHEST_DAY)
    rows, year = _date_rows(np.where(bad, 0, days), 0)
    return _assembled(rows, _out_of_range(days if stored is None else stored, bad), year)


def format_times(values: np.ndarray, unit: str):
    """``HH:MM:SS[.fff]`` of each time of day in ``unit`` (int64): (offsets, data)."""
    values = np.asarray(values, dtype=np.int64)
    per_second, digits = _PER_SECOND[unit], _FRACTION_DIGITS[unit]
    bad = (values < 0) | (values >= 86_400 * per_second)
    good = np.where(bad, 0, values)
    rows = np.empty((len(values), 8 + (digits + 1 if digits else 0)), dtype=np.uint8)
    _clock(rows, 0, good // per_second, good % per_second, digits)
    return _assembled(rows, _out_of_range(values, bad))


def format_timestamps(values: np.ndarray, unit: str, tz):
    """``YYYY-MM-DD HH:MM:SS[.fff]`` (and the zone's offset for a zoned type) of each count of
    ``unit`` since the epoch (int64), in the zone's wall-clock time: (offsets, data)."""
    values = np.asarray(values, dtype=np.int64)
    per_second, digits = _PER_SECOND[unit], _FRACTION_DIGITS[unit]
    per_day = 86_400 * per_second
    days = np.floor_divide(values, per_day)
    within = values - days * per_day
    offsets = None
    if tz:  # (wall-clock time: the offset moves the time of day, and the day with it; no
        # int64 sum that could wrap at the type's ends)
        offsets = zone_offsets(np.floor_divide(values, per_second), tz)
        within = within + offsets * per_second
        days = days + np.floor_divide(within, per_day)
        within = within % per_day
    bad = (days < _LOWEST_DAY) | (days > _HIGHEST_DAY)
    days = np.where(bad, 0, days)
    within = np.where(bad, 0, within)
    suffix = 0 if not tz else 1 if tz == "UTC" else 5
    clock = 9 + (digits + 1 if digits else 0)  # (" HH:MM:SS" and the fraction)
    rows, year = _date_rows(days, clock + suffix)
    rows[:, 10] = ord(" ")
    _clock(rows, 11, within // per_second, within % per_second, digits)
    if suffix == 1:
        rows[:, 10 + clock] = ord("Z")
    elif suffix:
        at = 10 + clock
        rows[:, at] = np.where(offsets < 0, ord("-"), ord("+"))
        minutes = np.abs(offsets) // 60
        _put_digits(rows, at + 1, minutes // 60, 2)
        _put_digits(rows, at + 3, minutes % 60, 2)
    return _assembled(rows, _out_of_range(values, bad), year)
