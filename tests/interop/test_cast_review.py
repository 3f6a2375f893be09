"""Review of the number <-> text casts (``interop/_cast.pyx``) against ``pyarrow.compute.cast``
on the values where such code usually goes wrong: shortest float text at the edges (subnormals,
the largest double, 2**53 + 1, the switches to exponent notation, NaN payloads, -0.0), parses
of long and halfway digit strings for every float width (a float32 or float16 parsed through a
double would round twice), every spelling pyarrow refuses, integers one past each width's
edge, booleans, invalid UTF-8 under a binary, string_view values inline and out of line,
slices whose offset is not a whole byte, nulls in every place, empty and chunked arrays, and
``safe=False``, digit strings that wrap an integer accumulator, and 50,000 random bit
patterns both ways.  Where pyarrow raises, arrowmm must raise the same kind (never a value).
About 8 s of CPU."""
from __future__ import annotations

import struct
from decimal import Decimal, getcontext

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import arrowmm

INTS = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(),
        pa.uint64()]
STRINGS = [pa.string(), pa.large_string(), pa.string_view()]


def _mm_type(pa_type):
    return arrowmm.array(pa.nulls(0, pa_type)).type


def _float_bits(array: pa.Array) -> np.ndarray:
    """A float array's values as bit patterns, nulls as 0 (NaN payloads and -0.0 count)."""
    width = array.type.byte_width
    values = np.frombuffer(array.buffers()[1], dtype=f"u{width}")[array.offset:][:len(array)]
    return np.where(np.asarray(array.is_valid()), values, 0)


def _mismatch(source: pa.Array, target, safe: bool = True):
    """None when arrowmm casts ``source`` to ``target`` as pyarrow does (floats bit for bit;
    where pyarrow raises ArrowInvalid arrowmm raises ArrowInvalid), else what differs."""
    try:
        want, want_error = pc.cast(source, target, safe=safe), None
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        want, want_error = None, exc
    try:
        got, got_error = pa.array(arrowmm.array(source).cast(_mm_type(target), safe=safe)), None
    except arrowmm.ArrowError as exc:
        got, got_error = None, exc
    if want_error is not None:
        if got_error is None:
            return f"pyarrow raised {want_error!r}, arrowmm gave {got}"
        if isinstance(want_error, pa.ArrowInvalid) and \
                not isinstance(got_error, arrowmm.ArrowInvalid):
            return f"pyarrow raised {want_error!r}, arrowmm {got_error!r}"
        return None
    if got_error is not None:
        return f"arrowmm raised {got_error!r}, pyarrow gave {want}"
    got.validate(full=True)
    if got.type != want.type:
        return f"type {got.type} != {want.type}"
    if pa.types.is_floating(target):
        if np.asarray(got.is_valid()).tolist() != np.asarray(want.is_valid()).tolist():
            return "validity differs"
        bad = np.flatnonzero(_float_bits(got) != _float_bits(want))
        return None if not bad.size else \
            [(source[int(i)].as_py(), got[int(i)].as_py(), want[int(i)].as_py()) for i in bad[:5]]
    if not got.equals(want):
        return [(i, source[i].as_py(), got[i].as_py(), want[i].as_py())
                for i in range(len(want)) if got[i] != want[i]][:5]
    return None


def _each(values, source_type, target, safe=True):
    """Cast each value alone (an error in one would hide the others in a whole array)."""
    found = []
    for v in values:
        source = pa.array(np.array([v], dtype=source_type.to_pandas_dtype())) \
            if pa.types.is_floating(source_type) else pa.array([v], source_type)
        why = _mismatch(source, target, safe)
        if why is not None:
            found.append((v, str(source_type), str(target), safe, why))
    return found


def _double(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


EDGE_DOUBLES = [
    5e-324, 1e-323, 2.5e-323, 2.2250738585072014e-308, 2.225073858507201e-308,
    1.7976931348623157e308, 9007199254740993.0, 9007199254740992.0, 0.0, -0.0,
    float("inf"), float("nan"), 1e16, 1e15, 9.999999999999998e15, 1e-5, 1e-4, 1e-7, 1e21, 1e22,
    1e23, 0.1, 0.3, 0.1 + 0.2, 1 / 3, 2 / 3, 2.0 ** -1022, 2.0 ** 1023, 2.0 ** 63, 2.0 ** 64,
    123456789012345680.0, 1.2345678901234567e-300, 4.35, 8.41e21, 5.0e-310, 1e100, 1.5e300,
    3.4028235e38, 1.17549435e-38, 1e-45, 16777217.0, 65504.0, 6.1e-5, 5.96e-8, 2049.0]
EDGE_DOUBLES += [-v for v in EDGE_DOUBLES] + [
    _double(b) for b in (0x7FF8000000000001, 0xFFF8000000000000, 0x7FF0000000000001,
                         0xFFF0000000000001)]


@pytest.mark.parametrize("target", STRINGS, ids=str)
def test_edge_floats_to_text(target):
    found = []
    for source_type in (pa.float64(), pa.float32(), pa.float16()):
        with np.errstate(over="ignore"):
            found += _each(EDGE_DOUBLES, source_type, target)
    for int_type in INTS:
        info = np.iinfo(int_type.to_pandas_dtype())
        found += _each([int(info.min), int(info.max), 0], int_type, target)
    found += _each([True, False, None], pa.bool_(), target)
    assert not found, found


SPELLINGS = [
    "9007199254740993", "2.4703282292062327e-324", "2.4703282292062328e-324",
    "4.9406564584124654e-324", "2.2250738585072011e-308", "2.2250738585072012e-308", "1e400",
    "-1e-400", "1e-400", "0x10", "1_000", " 1", "1 ", "+1", "--1", ".5", "5.", "e5", "inf",
    "Infinity", "-Infinity", "+inf", "INF", "nan", "NaN", "-nan", "+nan", "NAN", "infinity",
    "iNf", "nan(0x1)", "\u0661\u0662\u0663", "\uff11\uff12", "1\x002", "1\x00", "", " ", "-",
    "+", ".", "1e", "1e+", "1e-", "1E5", "1.e5", ".e5", "1e5.5", "1,5", "1.5f", "0b1", "\t1",
    "1\n", "-0", "+0", "-0.0", "00", "007", "-.5", "+.5", "- 1", "1e+-5", "true", "false",
    "0.0000000000000000000000000000001e31", "1" + "0" * 400, "0." + "0" * 400 + "1",
    "9007199254740993" + "0" * 300 + "e-300", "1." + "0" * 500 + "1", "0" * 500 + "1",
    "1e0000000000000000000000001", "1e-99999999999999999999", "1e99999999999999999999",
    "1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308",
    str(2 ** 1024 - 2 ** 970), "3.4028235e38", "3.4028236e38", "3.4028235677973366e38",
    "1e-46", "7e-46", "1.4e-45", "65504", "65520", "65519.99", "6e-8", "2.98e-8",
    "2.9802322387695312e-8", "2.9802322387695313e-8", "1.00000005960464477539",
    "1.0000000596046448", "16777217", "33554433"]


@pytest.mark.parametrize("source_type", STRINGS, ids=str)
def test_spellings_to_numbers(source_type):
    found = []
    for target in (pa.float64(), pa.float32(), pa.float16(), pa.int8(), pa.int64(), pa.uint64(),
                   pa.bool_()):
        found += _each(SPELLINGS, source_type, target)
    found += _each(SPELLINGS, source_type, pa.float64(), safe=False)
    found += _each(SPELLINGS, source_type, pa.int32(), safe=False)
    assert not found, found


def test_integer_edges_from_text():
    found = []
    for target in INTS:
        info = np.iinfo(target.to_pandas_dtype())
        lo, hi = int(info.min), int(info.max)
        spellings = [str(lo), str(hi), str(lo - 1), str(hi + 1), "-0", "+0", f"+{hi}",
                     "0" * 30 + str(hi), "-" + "0" * 30 + "1", " 1", "1 ", "0x1F", "1.0", "1e2",
                     "-", "+", "", str(hi * 10), str(2 ** 64), str(2 ** 64 - 1), str(-2 ** 63 - 1),
                     "99999999999999999999999", "\u0661"]
        for safe in (True, False):
            for source_type in (pa.string(), pa.string_view()):
                found += _each(spellings, source_type, target, safe)
    assert not found, found


def test_halfway_decimals_round_once():
    """The exact midpoints between neighbouring floats of each width (and a hair either side),
    written with many digits: a float32 or float16 parsed as a double first rounds twice."""
    getcontext().prec = 2000
    rng = np.random.default_rng(32)
    texts = {64: [], 32: [], 16: []}
    for bits in rng.integers(0, 0x7FF0000000000000, 600, dtype=np.uint64):
        d = _double(int(bits))
        mid = (Decimal(d) + Decimal(float(np.nextafter(d, np.inf)))) / 2
        texts[64] += [str(mid), format(mid, ".17e"), format(mid, ".20e"), format(mid, ".40e")]
    for bits in rng.integers(0, 0x7F800000, 600):
        f = np.frombuffer(struct.pack("<I", int(bits)), np.float32)[0]
        low, high = Decimal(float(f)), Decimal(float(np.nextafter(f, np.float32(np.inf))))
        mid = (low + high) / 2
        texts[32] += [format(mid, f".{p}e") for p in (8, 9, 12, 17, 25)] + [str(mid)]
        texts[32] += [format(mid + low * Decimal("1e-30"), ".45e"),
                      format(mid - low * Decimal("1e-30"), ".45e")]
    for bits in range(0, 0x7BFF, 7):
        h = np.frombuffer(struct.pack("<H", bits), np.float16)[0]
        mid = (Decimal(float(h)) + Decimal(float(np.nextafter(h, np.float16(np.inf))))) / 2
        texts[16] += [str(mid), format(mid, ".6e")]
    for source_type in (pa.string(), pa.string_view()):
        for target, values in ((pa.float64(), texts[64]), (pa.float32(), texts[32] + texts[64]),
                               (pa.float16(), texts[16] + texts[32])):
            assert _mismatch(pa.array(values, source_type), target) is None, (source_type, target)


def test_booleans_from_text():
    found = []
    for source_type in STRINGS + [pa.binary(), pa.binary_view()]:
        found += _each(["true", "false", "1", "0", "TRUE", "True", "FALSE", "fAlSe", "yes", "t",
                        "f", "", " true", "true ", "2", "-1", "01", "1.0"], source_type, pa.bool_())
    assert not found, found


@pytest.mark.parametrize("value", [b"\xff", b"a\xc3", b"\xed\xa0\x80", b"\xc0\x80",
                                   b"\xf4\x90\x80\x80", b"x" * 20 + b"\xff"])
def test_invalid_utf8_refused(value):
    """Binary that is not UTF-8 never becomes a string (pyarrow's safe cast refuses it too),
    nor a number."""
    found = []
    for source_type in (pa.binary(), pa.large_binary(), pa.binary_view()):
        source = pa.array([b"fine", value], source_type)
        for target in STRINGS + [pa.int32(), pa.float64()]:
            why = _mismatch(source, target)
            if why is not None:
                found.append((str(source_type), str(target), why))
    assert not found, found


def test_slices_nulls_views_and_empties():
    rng = np.random.default_rng(8)
    ints = [None if rng.random() < 0.3 else str(int(x)) for x in rng.integers(-100, 100, 200)]
    floats = [None if rng.random() < 0.3 else float(x)
              for x in rng.normal(size=200) * 10.0 ** rng.integers(-30, 30, 200)]
    views = ["1", "123456789012", "1234567890123", "12345678901234567890", "-1.5e10", None,
             "0.000000000000000000000001", "3.14159265358979323846264338327950288"]
    found = []

    def check(source, target):
        why = _mismatch(source, target)
        if why is not None:
            found.append((str(source.type), source.offset, len(source), str(target), why))

    for source_type in STRINGS:
        texts = pa.array(ints, source_type)
        float_texts = pa.array(floats).cast(source_type)
        for offset in (0, 1, 3, 7, 8, 9, 13, 64, 65, 199, 200):
            for length in (0, 1, 5, None):
                for target in (pa.int8(), pa.int64(), pa.float64()):
                    check(texts.slice(offset, length), target)
                check(float_texts.slice(offset, length), pa.float64())
                check(float_texts.slice(offset, length), pa.float32())
        check(pa.array([None] * 10, source_type), pa.int32())
        check(pa.array([], source_type), pa.float64())
    numbers = [pa.array(floats), pa.array(floats, pa.float32()), pa.array(ints).cast(pa.int16()),
               pa.array([True, None, False] * 20)]
    for offset in (0, 1, 3, 7, 9, 13, 65, 199):
        for source in numbers:
            for target in STRINGS:
                check(source.slice(offset), target)
    for target in (pa.float64(), pa.float32(), pa.float16(), pa.int64(), pa.uint64(),
                   pa.string()):
        for offset in range(5):
            check(pa.array(views, pa.string_view()).slice(offset), target)
    assert not found, found


def test_text_under_a_null_is_not_parsed():
    """A null row's bytes are not a number: they must not make the cast fail."""
    plain = pa.array(["abc", "1"])
    hidden = pa.Array.from_buffers(pa.string(), 2, [pa.py_buffer(bytes([0b10])),
                                                    plain.buffers()[1], plain.buffers()[2]],
                                   null_count=1)
    for target in (pa.float64(), pa.int8(), pa.bool_()):
        assert _mismatch(hidden, target) is None
        assert pa.array(arrowmm.array(hidden).cast(_mm_type(target))).to_pylist() == [None, 1]


def test_unsafe_number_casts():
    found = []
    for v in (1.5, -1.5, 1e20, float("nan"), float("inf"), -0.0, 2.0 ** 63, 2.0 ** 64,
              -2.0 ** 63, 255.9, 256.0, -129.0):
        for target in (pa.int8(), pa.uint8(), pa.int32(), pa.int64(), pa.uint64()):
            for safe in (True, False):
                found += _each([v], pa.float64(), target, safe)
                found += _each([str(v)], pa.string(), target, safe)
    for v in (2 ** 53 + 1, 2 ** 63 - 1, -2 ** 63, 2 ** 24 + 1, 2049, 65520, 70000):
        for target in (pa.float16(), pa.float32(), pa.float64()):
            for safe in (True, False):
                found += _each([v], pa.int64(), target, safe)
                found += _each([str(v)], pa.string(), target, safe)
    assert not found, found


def test_chunked_cast_as_pyarrow(tmp_path):
    """A chunked column (an empty chunk between two) casts chunk by chunk, values and errors
    as pyarrow's."""
    path = tmp_path / "chunks.arrow"
    good = pa.chunked_array([pa.array(["1", "2", None]), pa.array([], pa.string()),
                             pa.array(["3.5e1"])])
    table = pa.table({"a": good})
    with pa.ipc.new_file(path, table.schema) as writer:
        for batch in table.to_batches():
            writer.write(batch)
    column = arrowmm.open_file(path).read_all().column("a")
    for mm_type, pa_type in ((arrowmm.float64(), pa.float64()),
                             (arrowmm.float16(), pa.float16())):
        got = pa.chunked_array(column.cast(mm_type))
        assert got.combine_chunks().equals(good.cast(pa_type).combine_chunks())
    with pytest.raises(arrowmm.ArrowInvalid, match="3.5e1"):
        column.cast(arrowmm.int64())


def test_integer_parses_do_not_wrap():
    """Digit strings whose value is a multiple of 2**64 (or of a narrower width's range) give
    a small number when the accumulation wraps: each must fail as in pyarrow, with and
    without leading zeros and signs."""
    spellings = []
    for k in (1, 2, 3, 10, 2 ** 32):
        for d in (-1, 0, 1):
            v = k * 2 ** 64 + d
            spellings += [str(v), f"-{v}", "0" * 10 + str(v), f"+{v}"]
    for bits in (7, 8, 15, 16, 31, 32, 63):
        for d in (-1, 0, 1):
            spellings += [str(2 ** bits + d), f"-{2 ** bits + d}"]
    spellings += ["9" * n for n in range(15, 26)] + ["1" + "0" * n for n in range(15, 26)]
    spellings += ["0" * 40 + "18446744073709551615", "0" * 40 + "18446744073709551616",
                  "-" + "0" * 40 + "9223372036854775808", "-" + "0" * 40 + "9223372036854775809"]
    found = []
    for target in INTS:
        for source_type in (pa.string(), pa.string_view()):
            found += _each(spellings, source_type, target)
    assert not found, found


def test_random_bit_patterns_both_ways():
    """50,000 random doubles (every exponent, NaNs and subnormals among them), floats and
    int64s to each text type and the doubles' text back to each float width, a tenth null,
    whole and sliced: equal to pyarrow's, floats bit for bit."""
    rng = np.random.default_rng(64)
    bits = rng.integers(0, 2 ** 64, 50_000, dtype=np.uint64)
    nulls = rng.random(bits.size) < 0.1
    doubles = pa.array(bits.view(np.float64), mask=nulls)
    sources = [doubles, doubles.slice(3), pa.array(bits.astype(np.uint32).view(np.float32)),
               pa.array(bits.view(np.int64), mask=nulls).slice(7)]
    for source in sources:
        for target in STRINGS:
            assert _mismatch(source, target) is None, (source.type, source.offset, target)
    texts = pc.cast(doubles, pa.string())
    for source_type in (pa.string(), pa.string_view()):
        for target in (pa.float64(), pa.float32(), pa.float16()):
            assert _mismatch(texts.cast(source_type).slice(1), target) is None, \
                (source_type, target)
