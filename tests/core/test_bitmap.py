"""arrowmm._core._bitmap against np.unpackbits / np.packbits (bitorder='little') references."""
import contextlib
import mmap
import tempfile

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arrowmm._core import _bitmap
from arrowmm.errors import ArrowInvalid
from tests.support.kernel_support import guarded

# A bounds-check hit inside a noexcept kernel (ARROWMM_DEBUG=1 build) is only
# reported as "unraisable"; make that fail the test.
pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
SETTINGS = settings(deadline=None, max_examples=150)


def ref_bits(buf, off, n):
    return np.unpackbits(np.frombuffer(bytes(buf), np.uint8), bitorder="little")[off:off + n].astype(bool)


@contextlib.contextmanager
def readonly_buffers(data):
    """``data`` as bytes, memoryview, read-only numpy arrays and a read-only mmap."""
    copy = np.frombuffer(data, np.uint8).copy()
    copy.setflags(write=False)
    bufs = [data, memoryview(data), np.frombuffer(data, np.uint8), copy]
    with tempfile.TemporaryFile() as f:
        m = None
        if data:
            f.write(data)
            f.flush()
            m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            bufs.append(m)
        yield bufs
        if m is not None:
            m.close()  # BufferError here would mean a kernel leaked a buffer export


@st.composite
def bitmaps(draw):
    off = draw(st.integers(0, 70))
    n = draw(st.integers(0, 300))
    size = (off + n + 7) // 8 + draw(st.integers(0, 9))
    data = draw(st.one_of(
        st.binary(min_size=size, max_size=size),
        st.integers(0, 2**32 - 1).map(
            lambda seed: np.random.default_rng(seed).integers(0, 256, size, np.uint8).tobytes()),
        st.sampled_from([b"\xff" * size, b"\x00" * size])))
    return data, off, n


@SETTINGS
@given(bitmaps())
def test_unpack_matches_numpy(case):
    data, off, n = case
    want = ref_bits(data, off, n)
    with readonly_buffers(data) as bufs:
        for buf in bufs:
            got = _bitmap.unpack_bitmap(buf, off, n)
            assert got.dtype == np.bool_ and got.shape == (n,)
            np.testing.assert_array_equal(got, want)


@SETTINGS
@given(bitmaps())
def test_count_matches_numpy(case):
    data, off, n = case
    want = int(ref_bits(data, off, n).sum())
    with readonly_buffers(data) as bufs:
        for buf in bufs:
            assert _bitmap.count_set_bits(buf, off, n) == want


@SETTINGS
@given(bitmaps())
def test_slice_repacks_at_offset_zero(case):
    data, off, n = case
    want = ref_bits(data, off, n)
    with readonly_buffers(data) as bufs:
        for buf in bufs:
            got = _bitmap.slice_bitmap(buf, off, n)
            assert got.dtype == np.uint8 and got.shape == ((n + 7) // 8,)
            bits = np.unpackbits(got, bitorder="little")
            np.testing.assert_array_equal(bits[:n].astype(bool), want)
            assert not bits[n:].any(), "pad bits must be zero"


@SETTINGS
@given(bitmaps())
def test_kernels_never_read_past_the_buffer(case):
    data, off, n = case
    data = data[:(off + n + 7) // 8]  # exactly the bytes holding the wanted bits
    want = ref_bits(data, off, n)
    packed = np.packbits(want, bitorder="little")
    with guarded(data) as buf:
        np.testing.assert_array_equal(_bitmap.unpack_bitmap(buf, off, n), want)
        assert _bitmap.count_set_bits(buf, off, n) == int(want.sum())
        np.testing.assert_array_equal(_bitmap.slice_bitmap(buf, off, n), packed)
        np.testing.assert_array_equal(_bitmap.bitmap_and(buf, off, buf, off, n), packed)
    with guarded(want.view(np.uint8).tobytes()) as vals:
        got, count = _bitmap.pack_bitmap(np.frombuffer(vals, np.uint8))
        np.testing.assert_array_equal(got, packed)
        assert count == int(want.sum())


@SETTINGS
@given(st.lists(st.integers(0, 255), max_size=300), st.booleans())
def test_pack_matches_packbits(values, as_bool):
    arr = np.array(values, dtype=np.uint8)
    if as_bool:
        arr = arr.astype(bool)
    arr.setflags(write=False)
    bitmap, count = _bitmap.pack_bitmap(arr)
    want = np.packbits(arr != 0, bitorder="little")
    assert bitmap.dtype == np.uint8
    np.testing.assert_array_equal(bitmap, want)
    assert count == int(np.count_nonzero(arr))


def test_pack_nonzero_bytes_count_as_one():
    # Bytes with only the high bit, or only low bits, set must all pack to 1.
    arr = np.array([0x80, 0, 0x01, 0x7F, 0, 0xFF, 0x40, 0, 0x10], dtype=np.uint8)
    bitmap, count = _bitmap.pack_bitmap(arr)
    assert bitmap.tolist() == [0b01101101, 0b1]
    assert count == 6


def test_pack_other_inputs():
    strided = np.arange(40, dtype=np.uint8)[::2] % 3
    bitmap, count = _bitmap.pack_bitmap(strided)
    np.testing.assert_array_equal(bitmap, np.packbits(strided != 0, bitorder="little"))
    assert count == int(np.count_nonzero(strided))
    ints = np.array([0, 256, -1, 0, 7], dtype=np.int64)  # wider ints: nonzero = 1
    assert _bitmap.pack_bitmap(ints)[0].tolist() == [0b10110]
    assert _bitmap.pack_bitmap([True, False, True])[0].tolist() == [0b101]
    empty, count = _bitmap.pack_bitmap(np.zeros(0, bool))
    assert empty.shape == (0,) and count == 0
    with pytest.raises(TypeError, match="1-D"):
        _bitmap.pack_bitmap(np.zeros((2, 2), bool))


@SETTINGS
@given(bitmaps(), st.integers(0, 70), st.binary(min_size=48, max_size=48))
def test_bitmap_and_matches_numpy(case, b_off, b_data):
    a_data, a_off, n = case
    b_data = b_data * ((b_off + n) // (8 * 48) + 1)
    want = ref_bits(a_data, a_off, n) & ref_bits(b_data, b_off, n)
    a = np.frombuffer(a_data, np.uint8)
    got = _bitmap.bitmap_and(a, a_off, b_data, b_off, n)
    assert got.shape == ((n + 7) // 8,)
    bits = np.unpackbits(got, bitorder="little")
    np.testing.assert_array_equal(bits[:n].astype(bool), want)
    assert not bits[n:].any()


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 17])
def test_bitmap_and_with_none_means_all_valid(n):
    data = bytes([0b10110101, 0b01011110, 0xFF])
    ones = _bitmap.bitmap_and(None, 0, None, 0, n)
    assert np.unpackbits(ones, bitorder="little").sum() == n
    for got in (_bitmap.bitmap_and(None, 0, data, 3, n), _bitmap.bitmap_and(data, 3, None, 5, n)):
        np.testing.assert_array_equal(got, _bitmap.slice_bitmap(data, 3, n))


@pytest.mark.parametrize("off", [0, 1, 5, 8, 63])
def test_large_bitmaps_cross_word_loops(off):
    rng = np.random.default_rng(off)
    n = 100_003
    data = rng.integers(0, 256, (off + n + 7) // 8, dtype=np.uint8)
    want = ref_bits(data.tobytes(), off, n)
    assert _bitmap.count_set_bits(data, off, n) == int(want.sum())
    np.testing.assert_array_equal(_bitmap.unpack_bitmap(data, off, n), want)
    np.testing.assert_array_equal(
        _bitmap.slice_bitmap(data, off, n), np.packbits(want, bitorder="little"))
    np.testing.assert_array_equal(_bitmap.pack_bitmap(want)[0], np.packbits(want, bitorder="little"))


def test_any_buffer_dtype_is_read_as_bytes():
    arr = np.array([0x0102030405060708], dtype=np.int64)
    arr.setflags(write=False)
    raw = arr.tobytes()
    np.testing.assert_array_equal(_bitmap.unpack_bitmap(arr, 3, 50), ref_bits(raw, 3, 50))
    with pytest.raises(TypeError, match="contiguous"):
        _bitmap.count_set_bits(np.zeros(16, np.uint8)[::2], 0, 8)


FUNCS = {
    "unpack": lambda buf, off, n: _bitmap.unpack_bitmap(buf, off, n),
    "count": lambda buf, off, n: _bitmap.count_set_bits(buf, off, n),
    "slice": lambda buf, off, n: _bitmap.slice_bitmap(buf, off, n),
    "and_a": lambda buf, off, n: _bitmap.bitmap_and(buf, off, b"\xff" * 64, 0, n),
    "and_b": lambda buf, off, n: _bitmap.bitmap_and(b"\xff" * 64, 0, buf, off, n),
}


@pytest.mark.parametrize("fn", FUNCS.values(), ids=FUNCS.keys())
@pytest.mark.parametrize("off", [0, 3, 8, 13])
def test_exact_fit_passes_one_more_bit_fails(fn, off):
    buf = b"\xff" * 5
    n = 40 - off
    fn(buf, off, n)  # bits [off, 40) fit exactly
    with pytest.raises(ArrowInvalid, match=rf"bit_offset {off} \+ length {n + 1} = 41 bits needed, "
                                           r"buffer holds 5 bytes \(40 bits\)"):
        fn(buf, off, n + 1)
    with pytest.raises(ArrowInvalid, match=rf"bit_offset {off + 41}"):
        fn(buf, off + 41, 0)  # even a zero-length read must start inside the buffer


@pytest.mark.parametrize("fn", FUNCS.values(), ids=FUNCS.keys())
def test_hostile_offsets_and_lengths(fn):
    with pytest.raises(ArrowInvalid, match=r"bit_offset=-1 < 0"):
        fn(b"\xff", -1, 1)
    with pytest.raises(ArrowInvalid, match=r"length=-3 < 0"):
        fn(b"\xff", 0, -3)
    big = 2**63 - 8
    with pytest.raises(ArrowInvalid, match="bits needed"):
        fn(b"\xff" * 8, 8, big)  # bit_offset + length overflows int64
    with pytest.raises(ArrowInvalid, match="bits needed"):
        fn(b"", big, big)
