"""Stored Arrow values -> the Python objects pyarrow's ``to_pylist()`` gives.

Works on whole numpy arrays at once; each function takes the values of one
array (already sliced) and returns a list.  With ``temporal="int"``, dates,
times, timestamps and durations stay as the stored integer counts (exact for
every value, including those Python's ``datetime`` cannot hold).
"""
from __future__ import annotations

import datetime as _dt
from collections import namedtuple
from decimal import Decimal
from functools import lru_cache

import numpy as np

from .. import types as t
from ..errors import ArrowInvalid

__all__ = ["MonthDayNano", "DayTimeInterval", "fixed_width_to_list"]

#: pyarrow's ``MonthDayNano`` is a namedtuple with these fields; values compare equal.
MonthDayNano = namedtuple("MonthDayNano", ["months", "days", "nanoseconds"])
DayTimeInterval = namedtuple("DayTimeInterval", ["days", "milliseconds"])

_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
_EPOCH = _dt.datetime(1970, 1, 1)
_EPOCH_UTC = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
# datetime.datetime's and timedelta's ranges, in whole seconds from the epoch (integer
# arithmetic: total_seconds() is a float and rounds datetime.max up to year 10000)
_SECOND = _dt.timedelta(seconds=1)
_MIN_S = (_dt.datetime.min - _EPOCH) // _SECOND
_MAX_S = (_dt.datetime.max - _EPOCH) // _SECOND
_MIN_TD_S = _dt.timedelta.min // _SECOND
_MAX_TD_S = _dt.timedelta.max // _SECOND


def _with_nulls(values: list, valid) -> list:
    if valid is None:
        return values
    return [v if ok else None for v, ok in zip(values, valid.tolist())]


def _first_valid(bad: np.ndarray, valid) -> int:
    """The first slot where ``bad`` holds and the value is not null."""
    return int(np.flatnonzero(bad if valid is None else bad & valid)[0])


def _pandas():
    try:
        import pandas
    except ImportError:
        return None
    return pandas


def _check_range(ints: np.ndarray, unit: str, lo_s: int, hi_s: int, what: str):
    if ints.size == 0:
        return
    per = _PER_SECOND[unit]
    lo, hi = int(ints.min()), int(ints.max())
    if lo < lo_s * per or hi > hi_s * per + (per - 1):
        bad = lo if lo < lo_s * per else hi
        raise ArrowInvalid(f"{what} value {bad} [{unit}] is outside the range of Python's "
                           f"datetime; use to_pylist(temporal='int') or to_numpy()")


def _ns_exact(ints: np.ndarray) -> bool:
    return not np.any(ints % 1000)


@lru_cache(maxsize=64)
def _tzinfo(tz: str):
    """pyarrow's choice: ``+HH:MM`` -> ``datetime.timezone``, names -> ``zoneinfo.ZoneInfo``."""
    if tz[:1] in "+-" and len(tz) == 6 and tz[3] == ":":
        sign = -1 if tz[0] == "-" else 1
        return _dt.timezone(sign * _dt.timedelta(hours=int(tz[1:3]), minutes=int(tz[4:6])))
    try:
        import zoneinfo
        return zoneinfo.ZoneInfo(tz)
    except Exception as exc:  # noqa: BLE001  (unknown zone names, missing tz database)
        if tz in ("UTC", "utc", "Z"):
            return _dt.timezone.utc
        raise ArrowInvalid(f"cannot resolve time zone {tz!r}: {exc}") from None


def _timestamps(ints: np.ndarray, valid, dtype: t.TimestampType) -> list:
    unit = dtype.unit
    live = ints if valid is None else ints[valid]
    if unit == "ns" and (not _ns_exact(live) or _pandas() is not None):
        pd = _pandas()  # as pyarrow: pandas.Timestamp for every ns value when pandas is there
        if pd is None:
            raise ArrowInvalid("timestamp[ns] values with nanoseconds cannot be Python datetimes "
                               "(install pandas for pandas.Timestamp, or use temporal='int')")
        safe = ints if valid is None else np.where(valid, ints, 0)
        try:
            ts = [pd.Timestamp(v, unit="ns", tz="UTC").tz_convert(dtype.tz) if dtype.tz
                  else pd.Timestamp(v, unit="ns") for v in safe.tolist()]
        except (ValueError, OverflowError) as exc:  # past pandas' range in local time
            raise ArrowInvalid(f"a {dtype} value cannot be a pandas.Timestamp ({exc}); "
                               f"use to_pylist(temporal='int')") from None
        return _with_nulls(ts, valid)
    _check_range(live, unit, _MIN_S, _MAX_S, str(dtype))
    safe = ints if valid is None else np.where(valid, ints, 0)
    as_us = safe.astype(f"datetime64[{unit}]").astype("datetime64[us]")
    naive = as_us.tolist()
    if dtype.tz:
        tz = _tzinfo(dtype.tz)
        try:
            naive = [d.replace(tzinfo=_dt.timezone.utc).astimezone(tz) for d in naive]
        except OverflowError:  # within datetime's range in UTC, not in local time
            raise ArrowInvalid(f"a {dtype} value is outside the range of Python's datetime in "
                               f"time zone {dtype.tz}; use to_pylist(temporal='int')") from None
    return _with_nulls(naive, valid)


def _durations(ints: np.ndarray, valid, dtype: t.DurationType) -> list:
    unit = dtype.unit
    live = ints if valid is None else ints[valid]
    if unit == "ns" and (not _ns_exact(live) or _pandas() is not None):
        pd = _pandas()  # as pyarrow: pandas.Timedelta for every ns value when pandas is there
        if pd is None:
            raise ArrowInvalid("duration[ns] values with nanoseconds cannot be Python timedeltas "
                               "(install pandas for pandas.Timedelta, or use temporal='int')")
        return _with_nulls([pd.Timedelta(int(v), unit="ns") for v in ints.tolist()], valid)
    _check_range(live, unit, _MIN_TD_S, _MAX_TD_S, str(dtype))
    safe = ints if valid is None else np.where(valid, ints, 0)
    per_us = 10**6 // _PER_SECOND[unit] if unit != "ns" else 1
    limit = (2**63 - 1) // per_us
    if live.size and (int(live.min()) < -limit or int(live.max()) > limit):
        # beyond int64 microseconds (numpy would wrap) or numpy's NaT (-2**63), not beyond
        # timedelta: Python converts (ns values here are not whole microseconds: handled above)
        key = {"s": "seconds", "ms": "milliseconds", "us": "microseconds"}[unit]
        return _with_nulls([_dt.timedelta(**{key: v}) for v in safe.tolist()], valid)
    return _with_nulls(safe.astype(f"timedelta64[{unit}]").astype("timedelta64[us]").tolist(), valid)


def _dates(ints: np.ndarray, valid, dtype: t.DateType) -> list:
    unit = "D" if dtype.unit == "day" else "ms"
    live = ints if valid is None else ints[valid]
    lo, hi = _dt.date.min.toordinal() - 719163, _dt.date.max.toordinal() - 719163
    if dtype.unit == "ms":
        lo, hi = lo * 86_400_000, hi * 86_400_000 + 86_399_999
    if live.size and (int(live.min()) < lo or int(live.max()) > hi):
        raise ArrowInvalid(f"{dtype} value outside the range of Python's date; use temporal='int'")
    safe = ints if valid is None else np.where(valid, ints, 0)
    days = safe.astype(f"datetime64[{unit}]").astype("datetime64[D]")
    if dtype.unit == "ms":
        # a time of day would be dropped by the cut to a date: the value is damaged (pyarrow's
        # full validation refuses it); the days back in ms show it (null slots are 0 here)
        cut = np.flatnonzero(days.astype("datetime64[ms]").view(np.int64) != safe)
        if cut.size:
            slot = int(cut[0])
            raise ArrowInvalid(f"{dtype} value[{slot}] = {int(ints[slot])} ms is not a whole "
                               f"number of days")
    return _with_nulls(days.tolist(), valid)


def _times(ints: np.ndarray, valid, dtype: t.TimeType) -> list:
    per = _PER_SECOND[dtype.unit]
    live = ints if valid is None else ints[valid]
    if live.size and (int(live.min()) < 0 or int(live.max()) >= 86400 * per):
        raise ArrowInvalid(f"{dtype} value outside [0, 24h) cannot be a Python time; use temporal='int'")
    if dtype.unit == "ns" and not _ns_exact(live) and _pandas() is None:
        # pyarrow raises here too; with pandas importable it truncates to microseconds (below)
        raise ArrowInvalid("time64[ns] values with nanoseconds cannot be Python times; use temporal='int'")
    safe = (ints if valid is None else np.where(valid, ints, 0)).astype(np.int64)
    micros = safe * (1_000_000 // per) if per <= 1_000_000 else safe // 1000
    out = [(_EPOCH + _dt.timedelta(microseconds=m)).time() for m in micros.tolist()]
    return _with_nulls(out, valid)


def _decimals(raw: np.ndarray, valid, dtype: t.DecimalType) -> list:
    if dtype.bit_width <= 64:
        ints = raw.tolist()
    else:
        width = dtype.byte_width
        data = raw.tobytes()
        ints = [int.from_bytes(data[i:i + width], "little", signed=True)
                for i in range(0, len(data), width)]
    bound = 10 ** dtype.precision - 1
    if ints and (max(ints) > bound or min(ints) < -bound):  # (a null slot's bytes, or damage)
        past = np.array([not -bound <= v <= bound for v in ints])
        if valid is None or (past & valid).any():
            slot = _first_valid(past, valid)
            raise ArrowInvalid(f"{dtype} value[{slot}] = {ints[slot]} (unscaled) does not fit "
                               f"in precision {dtype.precision}")
    exp = -dtype.scale
    out = [Decimal((0 if v >= 0 else 1, tuple(int(c) for c in str(abs(v))), exp)) for v in ints]
    return _with_nulls(out, valid)


def _intervals(raw: np.ndarray, valid, dtype: t.IntervalType) -> list:
    if dtype.unit == "YEAR_MONTH":
        return _with_nulls(raw.tolist(), valid)
    if dtype.unit == "DAY_TIME":
        return _with_nulls([DayTimeInterval(*v) for v in raw.tolist()], valid)
    return _with_nulls([MonthDayNano(*v) for v in raw.tolist()], valid)


def fixed_width_to_list(values: np.ndarray, valid, dtype: t.DataType, temporal: str) -> list:
    """Python values of a fixed-width array (``values`` already sliced, ``valid`` bool or None)."""
    if temporal not in ("python", "int"):
        raise ArrowInvalid(f"temporal must be 'python' or 'int', got {temporal!r}")
    if isinstance(dtype, t.DecimalType):
        return _decimals(values, valid, dtype)
    if isinstance(dtype, t.IntervalType):
        return _intervals(values, valid, dtype)
    if temporal == "python":
        if isinstance(dtype, t.TimestampType):
            return _timestamps(values, valid, dtype)
        if isinstance(dtype, t.DateType):
            return _dates(values, valid, dtype)
        if isinstance(dtype, t.TimeType):
            return _times(values, valid, dtype)
        if isinstance(dtype, t.DurationType):
            return _durations(values, valid, dtype)
    return _with_nulls(values.tolist(), valid)
