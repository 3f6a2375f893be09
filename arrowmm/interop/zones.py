"""UTC offsets of a time zone at many instants at once, for the casts that need wall-clock time
(timestamps to dates, times and text).

Python's ``zoneinfo`` answers one instant at a time, in years 1 to 9999 only.  Offsets change
only at a zone's transitions, and no zone of the tz database has two within two days of each
other (checked over every zone here), so a UTC day whose first and last second share an offset
has it throughout: one pair of lookups per distinct day, and one per value only on the days a
transition falls on.  Instants outside ``datetime``'s years are
moved by whole 400-year Gregorian cycles (146,097 days, a whole number of weeks) into them:
zones use their first offset (local mean time) before their first transition and a yearly
rule after their last, both of which repeat with that cycle, so the offset is exact.
"""
from __future__ import annotations

import datetime as _dt
import re
import zoneinfo
from functools import lru_cache

import numpy as np

from ..errors import ArrowInvalid

__all__ = ["zone_offsets", "fixed_offset"]

_FIXED_OFFSET = re.compile(r"^([+-])([01]\d|2[0-3]):?([0-5]\d)\Z")  # (pyarrow's: +HH:MM, +HHMM)
_OFFSET_LIKE = re.compile(r"^[+-]\d")
_CYCLE_S = 146_097 * 86_400  # 400 Gregorian years
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
# instants zoneinfo takes with a day to spare either side (years 1 and 9999)
_LOWEST_S = int((_dt.datetime(1, 1, 2, tzinfo=_dt.timezone.utc) - _EPOCH).total_seconds())
_HIGHEST_S = int((_dt.datetime(9999, 12, 30, tzinfo=_dt.timezone.utc) - _EPOCH).total_seconds())


def fixed_offset(tz: str):
    """The offset in seconds of a ``+HH:MM`` / ``-HHMM`` zone, None for a named zone;
    ArrowInvalid (pyarrow's words) for an offset out of range or misspelled (``+05:60``)."""
    m = _FIXED_OFFSET.match(tz)
    if m is None:
        if _OFFSET_LIKE.match(tz):
            raise ArrowInvalid(f"Cannot locate or parse timezone '{tz}'")
        return None
    return (int(m.group(2)) * 3600 + int(m.group(3)) * 60) * (-1 if m.group(1) == "-" else 1)


#: Files ``zoneinfo`` opens that pyarrow's tz database leaves out: the leap-second zones
#: (``zoneinfo`` ignores their leap seconds, so their wall clocks would be wrong), their
#: ``posix/`` copies, and two files that name no place.
_NOT_IN_TZDB_PREFIXES = ("right/", "posix/")
_NOT_IN_TZDB_NAMES = frozenset({"posixrules", "Factory"})


@lru_cache(maxsize=64)
def _zone(tz: str) -> zoneinfo.ZoneInfo:
    """The zone named ``tz``; ArrowInvalid (pyarrow's words) where pyarrow cannot locate it."""
    if tz.startswith(_NOT_IN_TZDB_PREFIXES) or tz in _NOT_IN_TZDB_NAMES:
        raise ArrowInvalid(f"Cannot locate or parse timezone '{tz}': {tz} not found in "
                           f"timezone database")
    try:
        return zoneinfo.ZoneInfo(tz)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError) as exc:
        raise ArrowInvalid(f"Cannot locate or parse timezone '{tz}': {exc}") from None


def _offset_at(zone: zoneinfo.ZoneInfo, second: int) -> int:
    if second < _LOWEST_S:
        second += -((second - _LOWEST_S) // _CYCLE_S) * _CYCLE_S
    elif second > _HIGHEST_S:
        second -= -((_HIGHEST_S - second) // _CYCLE_S) * _CYCLE_S
    offset = (_EPOCH + _dt.timedelta(seconds=second)).astimezone(zone).utcoffset()
    return int(offset.total_seconds())


@lru_cache(maxsize=64)
def _transitions(tz: str):
    """(UTC instants of the zone's listed transitions, the offset from each, the offset
    before the first) from the pure-Python ``zoneinfo`` reader's tables, or None where they
    cannot be had (the instants after the last follow the zone's rule: the per-day path)."""
    try:
        from zoneinfo import _zoneinfo
        zone = _zoneinfo.ZoneInfo.no_cache(tz)
        instants = np.asarray(zone._trans_utc, dtype=np.int64)
        after = np.asarray([int(i.utcoff.total_seconds()) for i in zone._ttinfos],
                           dtype=np.int64)
        before = int(zone._tti_before.utcoff.total_seconds()) if zone._tti_before else \
            (int(after[0]) if after.size else None)
    except Exception:  # noqa: BLE001  (a private table of the standard library: its absence
        return None    # costs speed, not correctness)
    if before is None or instants.size != after.size:
        return None
    return instants, after, before


def zone_offsets(seconds: np.ndarray, tz: str) -> np.ndarray:
    """The UTC offset (int64 seconds) of zone ``tz`` at each of ``seconds`` since the epoch;
    ArrowInvalid (pyarrow's words) for a zone the tz database does not know.  Instants up to
    the zone's last listed transition are looked up in its table of transitions (a binary
    search); later ones, which follow the zone's yearly rule, per distinct day."""
    fixed = fixed_offset(tz)
    if fixed is not None:
        return np.full(len(seconds), fixed, dtype=np.int64)
    if tz == "UTC":
        return np.zeros(len(seconds), dtype=np.int64)
    zone = _zone(tz)
    seconds = np.asarray(seconds, dtype=np.int64)
    table = _transitions(tz)
    if table is not None and table[0].size:
        instants, after, before = table
        index = np.searchsorted(instants, seconds, side="right") - 1
        offsets = np.where(index < 0, before, after[np.maximum(index, 0)])
        late = seconds > instants[-1]
        if late.any():
            offsets[late] = _offsets_by_day(zone, seconds[late])
        return offsets
    return _offsets_by_day(zone, seconds)


def _offsets_by_day(zone: zoneinfo.ZoneInfo, seconds: np.ndarray) -> np.ndarray:
    """``zoneinfo``'s offsets at ``seconds``: a pair of lookups per distinct UTC day, one per
    value on the days with a transition."""
    days, where = np.unique(np.floor_divide(seconds, 86_400), return_inverse=True)
    where = where.reshape(-1)
    first = np.array([_offset_at(zone, d * 86_400) for d in days.tolist()], dtype=np.int64)
    last = np.array([_offset_at(zone, d * 86_400 + 86_399) for d in days.tolist()],
                    dtype=np.int64)
    offsets = first[where]
    changing = np.flatnonzero(first != last)  # (days with a transition in them)
    if changing.size:
        rows = np.flatnonzero(np.isin(where, changing))
        offsets[rows] = [_offset_at(zone, s) for s in seconds[rows].tolist()]
    return offsets
