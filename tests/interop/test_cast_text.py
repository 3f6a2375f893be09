"""The number <-> text casts of ``interop/_cast.pyx`` (issue 32) against pyarrow's cast, value
for value and bit for bit: the shortest text of every kind of double and float (random bit
patterns, subnormals, powers of two, the edges of the fixed notation), every half float,
integers of every width; the parse grammar on a grid of spellings and on random strings
(hypothesis), correct rounding of long and extreme decimals, every text type as the source,
nulls and offsets that are not whole bytes, and hostile views refused.  About 10 s on a
loaded 2-core machine (the hypothesis test half of it)."""
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import arrowmm
from arrowmm.arrays.array import make_array
from arrowmm._core._region import as_view

INTS = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(),
        pa.uint64()]
NUMBERS = INTS + [pa.float16(), pa.float32(), pa.float64(), pa.bool_()]
TEXTS = [pa.string(), pa.large_string(), pa.string_view(), pa.binary(), pa.large_binary(),
         pa.binary_view()]


def _mm_type(pa_type):
    return arrowmm.array(pa.nulls(0, pa_type)).type


def _bits(array: pa.Array) -> np.ndarray:
    """The values of a float array as their bit patterns, nulls as 0 (so NaN's sign and
    -0.0 count, and equal arrays compare equal)."""
    width = array.type.byte_width
    values = np.frombuffer(array.buffers()[1], dtype=f"u{width}")[array.offset:][:len(array)]
    return np.where(array.is_valid().to_numpy(zero_copy_only=False), values, 0)


def same_cast(source: pa.Array, target):
    """Cast ``source`` in both libraries: equal values (floats bit for bit), or the same error
    type and message."""
    try:
        want = source.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        kind = arrowmm.ArrowInvalid if isinstance(exc, pa.ArrowInvalid) else \
            arrowmm.ArrowNotImplementedError
        with pytest.raises(kind) as got:
            arrowmm.array(source).cast(_mm_type(target))
        if kind is arrowmm.ArrowInvalid:
            assert str(got.value) == str(exc)
        return
    got = pa.array(arrowmm.array(source).cast(_mm_type(target)))
    got.validate(full=True)
    assert got.type == want.type
    if pa.types.is_floating(target):
        assert (got.is_valid().to_pylist() == want.is_valid().to_pylist())
        mismatch = np.flatnonzero(_bits(got) != _bits(want))
        assert not mismatch.size, [(source[int(i)], got[int(i)], want[int(i)])
                                   for i in mismatch[:5]]
    else:
        if not got.equals(want):
            diff = [(source[i], got[i], want[i]) for i in range(len(want)) if got[i] != want[i]]
            raise AssertionError(diff[:5])


def _doubles(rng, n):
    edges = [0.0, -0.0, 1e16, 1e-7, 1e-6, 1e-5, 0.1, 1e9, 1e10, 123456789.0, 1234567890.0,
             9999999999.0, 5e-324, 2.2250738585072014e-308, 2.225073858507201e-308,
             1.7976931348623157e308, np.nan, -np.nan, np.inf, -np.inf, 1e21, 1e22, 1e23,
             2.0**53, 2.0**53 + 2, 2.0**63, 0.3, 1 / 3, 9007199254740993.0, 5e-7, 1.25e-6]
    powers = np.ldexp(1.0, np.arange(-1074, 1024))
    return np.concatenate([rng.integers(0, 2**64, n, dtype=np.uint64).view(np.float64),
                           edges, powers, -powers, rng.standard_normal(n) * 1e3,
                           np.round(rng.standard_normal(n) * 1e3, 2)])


def test_doubles_are_written_as_pyarrow_writes_them():
    """Shortest round-trip digits with pyarrow's switch between fixed and exponent notation,
    random bit patterns (every exponent, subnormals), powers of two, -0.0, NaN, inf."""
    values = pa.array(_doubles(np.random.default_rng(1), 8_000))
    for target in (pa.string(), pa.large_string(), pa.string_view()):
        same_cast(values, target)


def test_floats_and_half_floats_are_written_as_pyarrow_writes_them():
    rng = np.random.default_rng(2)
    with np.errstate(over="ignore"):
        floats = np.concatenate([
            rng.integers(0, 2**32, 30_000, dtype=np.uint32).view(np.float32),
            np.ldexp(np.float32(1), np.arange(-149, 128)).astype(np.float32),  # (powers of two:
            -np.ldexp(np.float32(1), np.arange(-149, 128)).astype(np.float32),  # lopsided gaps)
            _doubles(rng, 100).astype(np.float32),
            (rng.standard_normal(10_000) * 1000).astype(np.float32)])
    same_cast(pa.array(floats), pa.string())
    every_half = np.arange(2**16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    same_cast(pa.array(every_half), pa.string())
    same_cast(pa.array(every_half), pa.string_view())


@pytest.mark.parametrize("target", INTS, ids=str)
def test_integers_are_written_and_read_back_as_pyarrow(target):
    rng = np.random.default_rng(3)
    info = np.iinfo(target.to_pandas_dtype())
    values = np.concatenate([rng.integers(0, 2**64, 5_000, dtype=np.uint64),
                             np.array([info.min, info.max, 0, 1], dtype=np.int64).view(np.uint64)
                             if info.min < 0 else np.array([info.max, 0, 1], dtype=np.uint64)])
    numbers = pa.array(values).cast(target, safe=False)
    for text in (pa.string(), pa.string_view()):
        same_cast(numbers, text)
        same_cast(numbers.cast(text), target)


SPELLINGS = [
    "1", " 1", "1 ", "+1", "-1", "-0", "+0", "0x1F", "0X1f", "-0x1", "0x", "0x-1", "0x0000ff",
    "0x00000000000000001", "0xffffffffffffffff", "0x10000000000000000", "0x7fffffffffffffff",
    "1e3", "1E3", "1.5", ".5", "5.", "1e", "1e+", "1e+3", "1e-3", "1e0001", "1.e5", ".e5", "e5",
    ".", "+.", "-.e1", "+-1", "--1", "1e+-3", "1.5e3.2", "1ee3", "1.2.3", "1_000", "1,5", "",
    "nan", "NaN", "-nan", "+nan", "nan()", "nan(abc_1)", "nan(", "nan(a b)", "nan(-)", "-nan(x)",
    "nanq", "inf", "-inf", "+inf", "Inf", "INF", "infinity", "-Infinity", "infinit", "infx",
    "+inf ", "0x1p3", "1d", "\u0661", "00012", "0" * 50 + "1", "1" * 400, "0." + "0" * 800 + "1",
    "1e-400", "1e309", "-1e309", "1e99999999999999999999", "4.9e-324", "2.4703282292062328e-324",
    "2.4703282292062327e-324", "1.7976931348623158e308", "1.7976931348623159e308",
    "9223372036854775807", "9223372036854775808", "-9223372036854775808",
    "-9223372036854775809", "18446744073709551615", "18446744073709551616", "127", "128",
    "-128", "-129", "255", "256", "65535", "65536", "2147483648", "4294967295", "4294967296",
    "true", "TRUE", "True", "tRuE", "false", "FALSE", "t", "f", "yes", "0", "1", "2", "10",
    "\t1", "1\x00", "12\n", "1.000488281251", "65519.99", "65520", "2.9802322387695313e-08",
    "3.4028235677973366e38", "3.4028235677973367e38", "1.1754943e-38", "1.4e-45", "7e-46",
]


@pytest.mark.parametrize("target", NUMBERS, ids=str)
def test_the_parse_grammar_is_pyarrows(target):
    """Each spelling alone (the error names it) and all together (the last bad one named)."""
    for text in SPELLINGS:
        same_cast(pa.array([text]), target)
    same_cast(pa.array(SPELLINGS), target)


@pytest.mark.parametrize("source", TEXTS, ids=str)
def test_every_text_type_parses_with_nulls_and_offsets(source):
    """Offsets of 32 and 64 bits and views (inline and in data buffers), nulls over bad text,
    and slices whose offset is and is not a whole byte of the validity bitmap."""
    rng = np.random.default_rng(4)
    values = [None if k % 7 == 3 else str(v) for k, v in
              enumerate(rng.integers(-10**15, 10**15, 500).tolist())]
    values[3] = "not a number, but null"
    mask = np.array([v is None or k == 3 for k, v in enumerate(values)])
    texts = pa.array(values, pa.string(), mask=mask).cast(source)
    for target in (pa.int64(), pa.float64(), pa.float32(), pa.float16(), pa.bool_()):
        for part in (texts, texts.slice(8), texts.slice(13), texts.slice(100, 50)):
            same_cast(part, target)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.text(alphabet="0123456789+-.eExXaAfFnNiItyu()_ ", max_size=12),
                min_size=1, max_size=5))
def test_random_spellings_parse_as_pyarrow(texts):
    source = pa.array(texts)
    for target in (pa.int8(), pa.uint32(), pa.int64(), pa.float64(), pa.float32(),
                   pa.float16(), pa.bool_()):
        same_cast(source, target)


def test_long_and_extreme_decimals_round_as_pyarrow():
    """Correct rounding where Clinger's fast path does not apply (more than 19 digits, large
    exponents, halfway cases, subnormals), to double, float and half float."""
    rng = np.random.default_rng(5)
    doubles = _doubles(rng, 3_000)
    texts = [f"{m}e{e}" for m, e in zip(rng.integers(0, 10**18, 3_000).tolist(),
                                         rng.integers(-340, 320, 3_000).tolist())]
    texts += [f"%.{p}e" % x for p, x in zip(rng.integers(0, 30, len(doubles)).tolist(),
                                           doubles.tolist())]
    texts += ["0." + "0" * int(k) + str(m) for k, m in
              zip(rng.integers(0, 40, 300), rng.integers(0, 10**18, 300))]
    texts += [repr(float(np.float32(x))) + "0" * 25 + "1" for x in rng.standard_normal(300)]
    source = pa.array(texts)
    for target in (pa.float64(), pa.float32(), pa.float16()):
        same_cast(source, target)


def test_views_that_point_outside_their_data_are_refused():
    """A view whose buffer index or offset falls outside the data (a hostile file) is an
    ArrowInvalid naming the view, never a read out of bounds (the cast's full validation of
    its input finds it first)."""
    views = np.zeros((2, 16), dtype=np.uint8)
    views[:, :4] = np.array([20, 20], "<i4").view(np.uint8).reshape(2, 4)
    views[:, 4:8] = ord("1")  # (the prefixes: the first 4 bytes of the data)
    views[1, 8:12] = np.array([3], "<i4").view(np.uint8)  # (buffer 3 of 1)
    data = as_view(np.frombuffer(b"1" * 20, dtype=np.uint8))
    array = make_array(arrowmm.string_view(), 2, [None, as_view(views.reshape(-1)), data])
    with pytest.raises(arrowmm.ArrowInvalid, match=r"view\[1\]"):
        array.cast(arrowmm.int64())
    views[1, 8:12] = 0
    views[1, 12:] = np.array([5], "<i4").view(np.uint8)  # (20 bytes from 5 of 20)
    array = make_array(arrowmm.string_view(), 2, [None, as_view(views.reshape(-1)), data])
    with pytest.raises(arrowmm.ArrowInvalid, match=r"view\[1\]"):
        array.cast(arrowmm.float64())


@pytest.mark.parametrize("source", INTS, ids=str)
def test_integers_to_half_floats_are_checked_as_pyarrow(source):
    """pyarrow's safe check of an integer cast to float16 is the float32 one (from up to 32
    bits) or the float64 one (64 bits): 2049 rounds to 2048, 65520 overflows to inf."""
    info = np.iinfo(source.to_pandas_dtype())
    values = [v for v in [2049, 4097, 65519, 65520, 2**24, 2**24 + 1, 2**53, 2**53 + 1,
                          -2049, -(2**24) - 1, -(2**53) - 1, info.max, info.min]
              if info.min <= v <= info.max]
    for v in values:
        same_cast(pa.array([v, None, 1], source), pa.float16())


@pytest.mark.parametrize("source", [pa.float16(), pa.float32(), pa.float64()], ids=str)
def test_floats_to_integers_are_checked_in_one_pass_as_pyarrow(source):
    """The first inexact or out-of-range value named, NaN under a null ignored."""
    for target in INTS:
        info = np.iinfo(target.to_pandas_dtype())
        for bad in (0.5, -1.0, float(info.max) * 2 + 2, float("nan"), float("inf"), -0.0,
                    float(info.min), 2.0**63, 2.0**64 - 2048):
            with np.errstate(over="ignore"):
                vals = np.array([3.0, bad, 7.0, np.nan], dtype=source.to_pandas_dtype())
            same_cast(pa.array(vals, mask=np.array([False, False, False, True])), target)
