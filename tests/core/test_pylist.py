"""arrowmm._core._pylist against plain Python slicing/decoding (and pyarrow's to_pylist)."""
import mmap
import struct
import tempfile

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arrowmm._core import _pylist
from arrowmm.errors import ArrowInvalid

pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
SETTINGS = settings(deadline=None, max_examples=150)


def make_validity(valid, off):
    pre = np.random.default_rng(off).integers(0, 2, off).astype(bool)
    v = np.packbits(np.concatenate([pre, np.asarray(valid, bool)]), bitorder="little")
    v.setflags(write=False)
    return v


@st.composite
def validities(draw, n):
    if draw(st.booleans()):
        return None, 0, [True] * n
    off = draw(st.integers(0, 70))
    valid = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    return make_validity(valid, off), off, valid


def ro_array(values, dtype):
    a = np.array(values, dtype)
    a.setflags(write=False)
    return a


def decodes(b):
    try:
        b.decode()
        return True
    except UnicodeDecodeError:
        return False


values_st = st.lists(st.one_of(st.binary(max_size=20), st.text(max_size=15).map(str.encode)),
                     max_size=80)


# ---------------------------------------------------------------- strings / binaries

@SETTINGS
@given(values_st, st.sampled_from([np.int32, np.int64]), st.integers(0, 5), st.data())
def test_strings_and_binaries_match_reference(values, dtype, start, data):
    n = len(values)
    validity, off, valid = data.draw(validities(n))
    blob = b"!" * start + b"".join(values) + b"?"  # offsets need not start at 0
    offsets = ro_array(np.cumsum([start] + [len(v) for v in values]), dtype)
    want = [v if ok else None for v, ok in zip(values, valid)]
    assert _pylist.binaries_to_list(blob, offsets, n, validity, off) == want
    bad = next((i for i, v in enumerate(want) if v is not None and not decodes(v)), None)
    if bad is None:
        assert _pylist.strings_to_list(blob, offsets, n, validity, off) == \
            [None if v is None else v.decode() for v in want]
    else:
        with pytest.raises(ArrowInvalid, match=rf"string value\[{bad}\] \(data\[{offsets[bad]}:"
                                               rf"{offsets[bad + 1]}\]\) is not valid UTF-8"):
            _pylist.strings_to_list(blob, offsets, n, validity, off)


def test_strings_from_read_only_buffers():
    text = "héllo wörld ☃ \U0001F600"
    words = text.split(" ")
    blob = text.replace(" ", "").encode()
    offsets = np.cumsum([0] + [len(w.encode()) for w in words]).astype(np.int32)
    with tempfile.TemporaryFile() as f:
        f.write(blob)
        f.flush()
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            for buf in (blob, memoryview(blob), np.frombuffer(blob, np.uint8), m):
                assert _pylist.strings_to_list(buf, offsets, 4) == words
                assert _pylist.binaries_to_list(buf, offsets, 4) == [w.encode() for w in words]


def test_bad_utf8_names_slot_and_byte():
    blob = b"ok" + b"ab\xe2\x82"  # second value ends inside a euro sign
    with pytest.raises(ArrowInvalid, match=r"value\[1\] \(data\[2:6\]\) is not valid UTF-8: "
                                           r"unexpected end of data at byte 2 of the value"):
        _pylist.strings_to_list(blob, np.array([0, 2, 6]), 2)
    # the same bytes under a null slot are never decoded
    assert _pylist.strings_to_list(blob, np.array([0, 2, 6]), 2, make_validity([1, 0], 3), 3) == ["ok", None]


@pytest.mark.parametrize("fn", [_pylist.strings_to_list, _pylist.binaries_to_list])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_var_offsets_are_bounds_checked(fn, dtype):
    blob = b"abcdef"
    cases = [([0, 3, 7], 1, "value[1] spans offset[1]=3 .. offset[2]=7 (need 0 <= offset[1] <= offset[2] <= data size 6)"),
             ([-1, 3], 0, "value[0] spans offset[0]=-1 .. offset[1]=3"),
             ([0, 4, 2, 6], 1, "value[1] spans offset[1]=4 .. offset[2]=2"),
             ([0, 2**31 - 1], 0, f"offset[1]={2**31 - 1}")]
    for offs, _, text in cases:
        with pytest.raises(ArrowInvalid) as info:
            fn(blob, np.array(offs, dtype), len(offs) - 1)
        assert text in str(info.value)
    # a bad slot under a null is refused too (pyarrow's full validation does): it is never
    # dereferenced, but the damage would shift a neighbour's value
    with pytest.raises(ArrowInvalid, match=r"offset\[1\]=3 .. offset\[2\]=99"):
        fn(blob, np.array([0, 3, 99], dtype), 2, make_validity([1, 0], 0), 0)
    with pytest.raises(ArrowInvalid, match=r"2 offsets for length 2 \(need length\+1=3\)"):
        fn(blob, np.array([0, 1], dtype), 2)
    with pytest.raises(ArrowInvalid, match="length=-2 < 0"):
        fn(blob, np.array([0, 1], dtype), -2)
    with pytest.raises(ArrowInvalid, match=r"bit_offset 7 \+ length 2 = 9 bits needed"):
        fn(blob, np.array([0, 1, 2], dtype), 2, b"\xff", 7)
    assert fn(b"", np.zeros(0, dtype), 0) == []
    empty = "" if fn is _pylist.strings_to_list else b""
    assert fn(b"", np.zeros(3, dtype), 2) == [empty, empty]
    with pytest.raises(TypeError):
        fn(blob, np.array([0, 1], np.uint64), 1)


# ---------------------------------------------------------------- fixed-size binary

@SETTINGS
@given(st.integers(0, 6), st.integers(0, 60), st.integers(0, 4), st.data())
def test_fixed_binaries_match_reference(width, n, extra, data):
    blob = data.draw(st.binary(min_size=width * n + extra, max_size=width * n + extra))
    validity, off, valid = data.draw(validities(n))
    want = [blob[i * width:(i + 1) * width] if valid[i] else None for i in range(n)]
    assert _pylist.fixed_binaries_to_list(np.frombuffer(blob, np.uint8), width, n, validity, off) == want


def test_fixed_binaries_bounds():
    with pytest.raises(ArrowInvalid, match=r"length 4 \* byte_width 3 = 12 bytes needed, data holds 11"):
        _pylist.fixed_binaries_to_list(b"x" * 11, 3, 4)
    with pytest.raises(ArrowInvalid, match=r"length 2 \* byte_width 4611686018427387904 ="):
        _pylist.fixed_binaries_to_list(b"x" * 11, 2**62, 2)  # product overflows int64
    with pytest.raises(ArrowInvalid, match="byte_width=-1 < 0"):
        _pylist.fixed_binaries_to_list(b"x", -1, 1)
    with pytest.raises(ArrowInvalid, match="length=-1 < 0"):
        _pylist.fixed_binaries_to_list(b"x", 1, -1)
    assert _pylist.fixed_binaries_to_list(b"", 0, 3) == [b"", b"", b""]
    assert _pylist.fixed_binaries_to_list(b"abcd", 2, 2, make_validity([0, 1], 9), 9) == [None, b"cd"]


# ---------------------------------------------------------------- views

def build_views(values, nbuf=2):
    """Arrow BinaryView layout for ``values`` (bytes, or None for a null slot)."""
    bufs = [bytearray() for _ in range(nbuf)]
    views = bytearray()
    for k, v in enumerate(values):
        if v is None:
            views += b"\xff" * 16  # garbage under a null slot must be ignored
        elif len(v) <= 12:
            views += struct.pack("<i", len(v)) + v.ljust(12, b"\0")
        else:
            b = k % nbuf
            bufs[b] += b"#"
            views += struct.pack("<i4sii", len(v), v[:4], b, len(bufs[b]))
            bufs[b] += v
    return bytes(views), [bytes(b) for b in bufs]


@SETTINGS
@given(st.lists(st.one_of(st.none(), st.binary(max_size=30), st.text(max_size=20).map(str.encode)),
                max_size=60), st.integers(1, 3), st.integers(0, 70))
def test_views_match_reference(values, nbuf, off):
    views, bufs = build_views(values, nbuf)
    validity = make_validity([v is not None for v in values], off)
    assert _pylist.views_to_list(views, len(values), validity, off, bufs, False) == values
    bad = next((i for i, v in enumerate(values) if v is not None and not decodes(v)), None)
    if bad is None:
        assert _pylist.views_to_list(views, len(values), validity, off, bufs, True) == \
            [None if v is None else v.decode() for v in values]
    else:
        with pytest.raises(ArrowInvalid, match=rf"string value\[{bad}\] \(view\[{bad}\]\) is not valid"):
            _pylist.views_to_list(views, len(values), validity, off, bufs, True)


def test_views_match_pyarrow():
    pa = pytest.importorskip("pyarrow")
    vals = ["a", None, "hello world, long enough", "x" * 13, "é" * 9, "", "twelve bytes"] * 4
    for typ, utf8 in ((pa.string_view(), True), (pa.binary_view(), False)):
        arr = pa.array(vals if utf8 else [None if v is None else v.encode() for v in vals], typ).slice(2, 21)
        validity, views, *bufs = arr.buffers()
        got = _pylist.views_to_list(memoryview(views)[16 * arr.offset:], len(arr), validity,
                                    arr.offset, bufs, utf8)
        assert got == arr.to_pylist()


def set_field(views, slot, field, value):
    out = bytearray(views)
    struct.pack_into("<i", out, 16 * slot + 4 * field, value)
    return bytes(out)


@pytest.mark.parametrize("field,value,text", [
    (0, -5, "view[1] size=-5 < 0"),
    (2, 2, "view[1] buffer_index=2 out of range for 2 variadic buffers"),
    (2, -1, "view[1] buffer_index=-1 out of range"),
    (3, -1, "view[1] offset=-1 size=16 outside variadic buffer 1 of length 17"),
    (3, 2, "view[1] offset=2 size=16 outside variadic buffer 1 of length 17"),
    (3, 2**31 - 1, f"view[1] offset={2**31 - 1} size=16 outside"),
    (0, 2**31 - 1, f"view[1] offset=1 size={2**31 - 1} outside"),
])
def test_views_are_bounds_checked(field, value, text):
    views, bufs = build_views([b"inline", b"0123456789abcdef"])
    assert _pylist.views_to_list(views, 2, None, 0, bufs, False)[1] == b"0123456789abcdef"
    with pytest.raises(ArrowInvalid) as info:
        _pylist.views_to_list(set_field(views, 1, field, value), 2, None, 0, bufs, False)
    assert text in str(info.value)
    # the same hostile header under a null slot is never used
    got = _pylist.views_to_list(set_field(views, 1, field, value), 2, make_validity([1, 0], 0), 0, bufs, True)
    assert got == ["inline", None]


def test_views_arguments():
    views, bufs = build_views([b"a", b"b" * 20])
    with pytest.raises(ArrowInvalid, match=r"views buffer holds 31 bytes, length 2 needs 16\*2 = 32"):
        _pylist.views_to_list(views[:-1], 2, None, 0, bufs, False)
    with pytest.raises(ArrowInvalid, match=r"bit_offset 7 \+ length 2 = 9 bits"):
        _pylist.views_to_list(views, 2, b"\xff", 7, bufs, False)
    with pytest.raises(ArrowInvalid, match="length=-1"):
        _pylist.views_to_list(views, -1, None, 0, bufs, False)
    with pytest.raises(TypeError):  # a non-buffer among the variadic buffers
        _pylist.views_to_list(views, 2, None, 0, [bufs[0], 5], False)
    ro = [np.frombuffer(b, np.uint8) for b in bufs]
    assert _pylist.views_to_list(np.frombuffer(views, np.uint8), 2, None, 0, ro, True) == ["a", "b" * 20]


# ---------------------------------------------------------------- plain values

DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint64, np.float32, np.float64]


@SETTINGS
@given(st.sampled_from(DTYPES), st.integers(0, 300), st.data())
def test_values_match_tolist(dtype, n, data):
    arr = np.random.default_rng(n).integers(0, 100, n).astype(dtype)
    arr.setflags(write=False)
    validity, off, valid = data.draw(validities(n))
    want = [x if ok else None for x, ok in zip(arr.tolist(), valid)]
    got = _pylist.values_to_list(arr, validity, off)
    assert got == want
    assert all(type(g) is type(w) for g, w in zip(got, want))


def test_values_all_valid_bytes_and_errors():
    arr = np.arange(64, dtype=np.int32)
    validity = np.full(8, 0xFF, np.uint8)
    validity[3] = 0xF7  # slot 27 null, others valid
    got = _pylist.values_to_list(arr, validity, 0)
    assert got[27] is None and got.count(None) == 1
    assert _pylist.values_to_list(arr[1:], validity, 1)[26] is None  # same bit, sliced
    assert _pylist.values_to_list(arr) == list(range(64))
    with pytest.raises(ArrowInvalid, match=r"bit_offset 1 \+ length 64 = 65 bits needed"):
        _pylist.values_to_list(arr, validity, 1)
    with pytest.raises(TypeError):
        _pylist.values_to_list(arr.reshape(8, 8))
    with pytest.raises(TypeError):
        _pylist.values_to_list([1, 2, 3])
