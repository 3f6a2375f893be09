"""Dates, times, timestamps and durations cast to text (``interop/temporal_text.py``), value for
value against pyarrow's cast: every unit, naive and zoned (UTC, fixed offsets, named zones with
their daylight saving and local mean time), the whole range of years pyarrow writes and what it
writes outside it, nulls and offsets, every string type; dates that are not whole days and
times past a day, which pyarrow writes too, are damage and raise.  Where pyarrow's C++ is wrong
(zoned values past its tz database's last transition, or outside its years), the oracle is
Python's zoneinfo.  About 2 s."""
import datetime as dt
import zoneinfo

import numpy as np
import pyarrow as pa
import pytest

import arrowmm

UNITS = ["s", "ms", "us", "ns"]
PER_SECOND = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}
STRINGS = [pa.string(), pa.large_string(), pa.string_view()]
NAMED = ["America/New_York", "Europe/Dublin", "Asia/Kathmandu", "Africa/Monrovia", "Etc/GMT+5"]


def _mm_type(pa_type):
    return arrowmm.array(pa.nulls(0, pa_type)).type


def _cast(source: pa.Array, target) -> pa.Array:
    return pa.array(arrowmm.array(source).cast(_mm_type(target)))


def _assert_same(source: pa.Array, target=pa.string()):
    want = source.cast(target)
    got = _cast(source, target)
    assert got.type == want.type
    if not got.equals(want):
        diff = [(v, g, w) for v, g, w in zip(source.cast(pa.int64()).to_pylist(), got.to_pylist(),
                                           want.to_pylist()) if g != w]
        pytest.fail(f"{len(diff)} differ, first: {diff[:3]}")


def _random(lo: int, hi: int, n: int = 2000, seed: int = 0) -> list:
    values = np.random.default_rng(seed).integers(lo, hi, n).tolist()
    return values + [0, -1, 1, lo, hi - 1, None]


@pytest.mark.parametrize("unit", UNITS)
@pytest.mark.parametrize("tz", [None, "UTC", "+05:30", "-00:00", "Etc/UTC"])
def test_timestamps_naive_utc_and_fixed_offsets_over_every_year_pyarrow_writes(unit, tz):
    """Years -32767..32767 (four digits, a sign, five digits), and values beyond them written
    ``<value out of range: N>`` (naive: pyarrow's own words for them)."""
    # (pyarrow wraps zoned values past its years, and fails at their ends and near int64's: compare
    # within them)
    top = min((971_890_963_199 - 86_400) * PER_SECOND[unit], 2**62) if tz else 2**63 - 1
    source = pa.array(_random(-top, top), pa.int64()).cast(pa.timestamp(unit, tz))
    for target in STRINGS:
        _assert_same(source, target)


@pytest.mark.parametrize("unit", UNITS)
@pytest.mark.parametrize("tz", NAMED)
def test_timestamps_in_named_zones_until_2037(unit, tz):
    """Daylight saving, local mean time (``-0456``: the offset's seconds dropped) and the
    transitions themselves, in pyarrow's words up to its tz database's last transition."""
    per = PER_SECOND[unit]
    values = _random(-4_000_000_000 * per, 2_100_000_000 * per)
    # around each change of New York's clocks in 2021: the second before, at and after
    for change in (1615705200, 1636264800):
        values += [(change + d) * per for d in (-3601, -3600, -1, 0, 1, 3599, 3600)]
    source = pa.array(values, pa.int64()).cast(pa.timestamp(unit, tz))
    _assert_same(source)


@pytest.mark.parametrize("tz", ["America/New_York", "Europe/Dublin"])
def test_named_zones_keep_daylight_saving_after_2037_as_python_does(tz):
    """pyarrow's C++ stops at the tz database's last listed transition (2037) and writes
    standard time for every later summer; the zone's yearly rule goes on, and arrowmm follows
    it, as Python's zoneinfo (and pyarrow's own ``to_pylist``) do."""
    seconds = [2_500_000_000 + k * 7_776_000 for k in range(40)] + [10**11, 2**36]
    got = _cast(pa.array(seconds, pa.timestamp("s", tz)), pa.string()).to_pylist()
    zone = zoneinfo.ZoneInfo(tz)
    for s, text in zip(seconds, got):
        local = dt.datetime.fromtimestamp(s, zone)
        assert text == local.strftime("%Y-%m-%d %H:%M:%S%z"), (s, text)
    assert any(text.endswith("-0400") or text.endswith("+0100") for text in got)  # (summers)


def test_zoned_values_outside_the_years_are_out_of_range_not_wrapped():
    """pyarrow wraps these around (a value near -2**40 s written as year 32663, or fails to
    format); arrowmm writes what it writes for naive values out of range."""
    values = [-2**40, 2**40, -1_096_193_779_201 - 86_400, 971_890_963_200 + 86_400]
    got = _cast(pa.array(values, pa.timestamp("s", "America/New_York")), pa.string())
    assert got.to_pylist() == [f"<value out of range: {v}>" for v in values]
    assert _cast(pa.array([971_890_963_199], pa.timestamp("s", "UTC")),
                 pa.string()).to_pylist() == ["32767-12-31 23:59:59Z"]


def _in_a_day(unit: str) -> list:
    """Times of day of ``unit``: random, and the first and last of the day."""
    day = 86_400 * PER_SECOND[unit]
    return [v for v in _random(0, day) if v is None or 0 <= v < day]


def _whole_days() -> list:
    """date64 values (ms) of whole days, over the years pyarrow writes."""
    return [None if d is None else d * 86_400_000 for d in _random(-11_000_000, 11_000_000)]


@pytest.mark.parametrize("source", [
    pa.array(_random(-13_000_000, 12_000_000), pa.int32()).cast(pa.date32()),
    pa.array(_whole_days(), pa.int64()).cast(pa.date64()),
    pa.array(_in_a_day("s"), pa.int32()).cast(pa.time32("s")),
    pa.array(_in_a_day("ms"), pa.int32()).cast(pa.time32("ms")),
    pa.array(_in_a_day("us"), pa.int64()).cast(pa.time64("us")),
    pa.array(_in_a_day("ns"), pa.int64()).cast(pa.time64("ns")),
] + [pa.array(_random(-2**63, 2**63 - 1), pa.int64()).cast(pa.duration(u)) for u in UNITS],
    ids=lambda a: str(a.type))
def test_dates_times_and_durations(source):
    for target in STRINGS:
        _assert_same(source, target)


REFUSED = (r"value\[\d\] = -?\d+: (date64\[ms\] value is not a whole number of days|"
           r"time(32|64)\[\w+\] value is outside)")


@pytest.mark.parametrize("values, dtype", [
    ([86_400_000, -1, None], pa.date64()), ([0, -86_400_001], pa.date64()),
    ([86_399_999], pa.date64()), ([0, -1], pa.time32("s")), ([86_400, None], pa.time32("s")),
    ([2**31 - 1], pa.time32("ms")), ([86_400 * 10**6], pa.time64("us")),
    ([-5, 0], pa.time64("ns")),
], ids=lambda v: str(v))
def test_dates_that_are_not_whole_days_and_times_past_a_day_are_refused(values, dtype):
    """pyarrow writes text for these (the day a date64 falls in, toward zero: '1970-01-01' for
    -1 ms; ``<value out of range: N>`` for a time), but they are damage: its own full
    validation refuses them and ``to_pylist`` raises, so a cast must not turn them into text
    that reads as data.  arrowmm raises, naming the slot, safe or not."""
    width = pa.int64() if dtype.bit_width == 64 else pa.int32()
    source = pa.array(values, width).view(dtype)
    with pytest.raises(pa.ArrowInvalid):
        source.validate(full=True)
    mm = arrowmm.array(source)
    for target in STRINGS:
        for safe in (True, False):
            with pytest.raises(arrowmm.ArrowInvalid, match=REFUSED):
                mm.cast(_mm_type(target), safe=safe)


def test_nulls_and_offsets_that_are_not_whole_bytes():
    source = pa.array([1_700_000_000_123, None, -1, 5, None, 0, 7, 86_400_000],
                      pa.timestamp("ms", "Asia/Kathmandu"))
    for start in range(4):
        _assert_same(source.slice(start, 5))
    _assert_same(pa.array([None, None], pa.date32()))
    _assert_same(pa.array([], pa.time64("ns")))


def test_binaries_are_not_targets_and_unknown_zones_are_named():
    for target in (pa.binary(), pa.large_binary(), pa.binary_view()):
        with pytest.raises(pa.ArrowNotImplementedError):
            pa.array([0], pa.date32()).cast(target)
        with pytest.raises(arrowmm.ArrowNotImplementedError, match="Unsupported cast"):
            arrowmm.array(pa.array([0], pa.date32())).cast(_mm_type(target))
    zoned = arrowmm.array([0], type=arrowmm.timestamp("s", tz="Mars/Olympus"))
    with pytest.raises(arrowmm.ArrowInvalid, match="Cannot locate or parse timezone 'Mars/Olympus'"):
        zoned.cast(arrowmm.string())


@pytest.mark.parametrize("tz", ["+0530", "-0000", "+23:59", "-2359"])
def test_fixed_offsets_with_and_without_a_colon(tz):
    _assert_same(pa.array(_random(-10**11, 10**11), pa.int64()).cast(pa.timestamp("s", tz)))


@pytest.mark.parametrize("tz", ["+05:60", "-25:00", "+24:00", "+5:30", "+05", "+0560"])
def test_offsets_pyarrow_cannot_parse_are_refused_the_same_way(tz):
    with pytest.raises(pa.ArrowInvalid, match="Cannot locate or parse timezone"):
        pa.array([0], pa.timestamp("s", tz)).cast(pa.string())
    zoned = arrowmm.array([0], type=arrowmm.timestamp("s", tz=tz))
    for target in (arrowmm.string(), arrowmm.date32()):
        with pytest.raises(arrowmm.ArrowInvalid, match="Cannot locate or parse timezone"):
            zoned.cast(target)
