"""The selection kernels' two loops against pyarrow.compute.filter: the sparse one (a mask
keeping at most one row in eight, judged eight rows a word at a time) and the dense one
(strings copied 16 bytes at a time without a branch on the mask), at the selectivities on
either side of the switch, lengths that are not a multiple of eight, nulls, sliced arrays,
dictionary and string columns, and input ending where an inaccessible page begins."""
from __future__ import annotations

import numpy as np
import pytest

import arrowmm
from arrowmm import compute
from arrowmm.compute import _kernels

from tests.support.kernel_support import guarded

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")

RNG = np.random.default_rng(2032)
N = 1003  # (not a multiple of eight: the loops' tails)


def _values(dtype, n):
    valid = RNG.random(n) >= 0.2
    if pa.types.is_boolean(dtype):
        vals = (RNG.random(n) < 0.5).tolist()
    elif pa.types.is_integer(dtype):
        vals = RNG.integers(-100 if pa.types.is_signed_integer(dtype) else 0, 100, n).tolist()
    elif pa.types.is_floating(dtype):
        vals = RNG.normal(size=n).tolist()
    elif pa.types.is_dictionary(dtype):
        return pa.array(["d%d" % v for v in RNG.integers(0, 7, n)],
                        mask=~valid).dictionary_encode()
    elif pa.types.is_binary(dtype) or pa.types.is_large_binary(dtype):
        vals = [bytes(RNG.integers(0, 256, RNG.integers(0, 40), dtype=np.uint8)) for _ in range(n)]
    else:  # strings, some longer than 16 bytes (the dense loop's memcpy), some empty
        vals = ["s%d" % RNG.integers(0, 1000) * int(RNG.integers(0, 8)) for _ in range(n)]
    return pa.array([v if ok else None for v, ok in zip(vals, valid)], dtype)


TYPES = [pa.bool_(), pa.int8(), pa.int16(), pa.int64(), pa.float32(), pa.float64(),
         pa.string(), pa.large_string(), pa.binary(), pa.large_binary(),
         pa.dictionary(pa.int32(), pa.string())]
# kept fractions: none, one row, sparse (1%, 12%), just dense (13%), half, all but one
FRACTIONS = [0.0, "one", 0.01, 0.12, 0.13, 0.5, "all-but-one"]


def _mask(n, fraction):
    if fraction == "one":
        m = np.zeros(n, dtype=bool)
        m[n - 1] = True  # (the last row: in the tail the word loop leaves)
        return m
    if fraction == "all-but-one":
        m = np.ones(n, dtype=bool)
        m[0] = False
        return m
    return RNG.random(n) < fraction


@pytest.mark.parametrize("dtype", TYPES, ids=str)
@pytest.mark.parametrize("fraction", FRACTIONS, ids=str)
@pytest.mark.parametrize("offset", [0, 5])
def test_filter_matches_pyarrow_either_side_of_the_sparse_switch(dtype, fraction, offset):
    source = _values(dtype, N + offset).slice(offset)
    mask = _mask(len(source), fraction)
    got = compute.filter(arrowmm.array(source), mask)
    want = pc.filter(source, pa.array(mask))
    mine = pa.array(got)
    assert mine.type == want.type
    assert mine.to_pylist() == want.to_pylist()
    got.validate(full=True)


@pytest.mark.parametrize("fraction", [0.01, 0.5])
def test_a_batch_filtered_by_an_expression_matches_pyarrow(fraction):
    """Every column of a batch through one mask: the predicate's and the others."""
    n = 4099
    x = RNG.random(n)
    x[RNG.random(n) < 0.1] = np.nan
    table = pa.table({"x": pa.array(x, mask=RNG.random(n) < 0.1),
                      "s": _values(pa.string(), n), "b": _values(pa.bool_(), n),
                      "d": _values(pa.dictionary(pa.int32(), pa.string()), n)})
    batch = arrowmm.record_batch(table.to_batches()[0])
    got = pa.record_batch(compute.filter(batch, arrowmm.field("x") > 1 - fraction))
    want = table.filter(pc.field("x") > 1 - fraction).combine_chunks().to_batches()[0]
    assert got.equals(want)


def test_the_sparse_word_loop_reads_no_mask_byte_past_the_end():
    """A mask that ends where an inaccessible page begins, n not a multiple of eight."""
    n = 8 * 512 + 5
    mask = np.zeros(n, dtype=bool)
    mask[[3, 8 * 300 + 1, n - 1]] = True
    values = np.arange(n, dtype=np.int64)
    strings = pa.array(["v%d" % i for i in range(n)])
    with guarded(mask.tobytes()) as view:
        guarded_mask = np.frombuffer(view, dtype=bool)
        got = _kernels.filter_fixed(values, 0, 8, guarded_mask, 3).view(np.int64)
        assert got.tolist() == [3, 8 * 300 + 1, n - 1]
        bits, ones = _kernels.filter_bits(np.full(n // 8 + 1, 0xFF, np.uint8), 0,
                                          guarded_mask, 3)
        assert ones == 3 and bits.tolist() == [0b111]
        offsets = np.frombuffer(strings.buffers()[1], np.int32, count=n + 1)
        new_offsets, data = _kernels.filter_binary(offsets, strings.buffers()[2],
                                                   guarded_mask, 3)
        assert bytes(data) == b"v3v2401v4100" and new_offsets.tolist() == [0, 2, 7, 12]
        del guarded_mask  # (the guard's memory is unmapped when the block ends)


@pytest.mark.parametrize("fraction", [0.01, 0.6])
def test_strings_ending_at_an_inaccessible_page_are_not_overread(fraction):
    """The dense loop copies a short value as 16 bytes: never past the data's end (the last
    values, shorter than 16 bytes, end right where the guard page begins)."""
    n = 2000
    values = ["w%d" % (i % 97) for i in range(n)]
    arr = pa.array(values)
    offsets = np.frombuffer(arr.buffers()[1], np.int32, count=n + 1)
    raw = bytes(arr.buffers()[2])[:offsets[-1]]
    mask = RNG.random(n) < fraction
    mask[-1] = True
    with guarded(raw) as view:
        new_offsets, data = _kernels.filter_binary(offsets, view, mask, int(mask.sum()))
    kept = [v for v, m in zip(values, mask) if m]
    assert bytes(data) == "".join(kept).encode()
    assert np.diff(new_offsets).tolist() == [len(v) for v in kept]


@pytest.mark.parametrize("loop", ["sparse", "dense"])
def test_overlapping_values_are_an_error_not_a_write_past_the_output(loop):
    """Offsets that go back between kept rows (each unkept row in between ends before it
    starts) make kept values overlap: their bytes pass the room the output has (the data's
    ``offsets[-1] - offsets[0]``).  The dense loop checks every row, the sparse one the kept
    rows and the room (as ``take`` does; ``validate(full=True)`` walks every offset):
    either way ArrowInvalid naming a row, never a write past the output."""
    n = 64
    offsets = np.where(np.arange(n + 1) % 2 == 0, 0, 600).astype(np.int32)
    offsets[-1] = 600
    data = np.zeros(600, dtype=np.uint8)
    mask = np.zeros(n, dtype=bool)
    mask[::2] = True  # rows [0, 600): every one the whole data
    if loop == "sparse":
        mask[:] = False
        mask[[0, 8]] = True  # (2 of 64: at most one in eight)
    with pytest.raises(arrowmm.ArrowInvalid, match=r"offsets of row \d+"):
        _kernels.filter_binary(offsets, data, mask, int(mask.sum()))


def test_offsets_past_the_data_are_an_error_in_the_sparse_loop():
    n = 100
    offsets = np.arange(n + 1, dtype=np.int64)
    data = np.zeros(n, dtype=np.uint8)
    offsets[-1] = n + 1  # one byte past the data
    mask = np.zeros(n, dtype=bool)
    mask[[10, 50]] = True
    with pytest.raises(arrowmm.ArrowInvalid, match="within the 100-byte data buffer"):
        _kernels.filter_binary(offsets, data, mask, 2)


@pytest.mark.parametrize("dtype", ["int16", "int8"])
def test_offsets_neither_32_nor_64_bits_wide_are_an_error_naming_their_type(dtype):
    # (filter_binary picks its loop by the offsets' width itself: anything else is refused)
    offsets = np.arange(5, dtype=dtype)
    with pytest.raises(arrowmm.ArrowInvalid, match=f"offsets are int32 or int64, not {dtype}"):
        _kernels.filter_binary(offsets, np.zeros(4, np.uint8), np.ones(4, dtype=bool), 4)


def test_a_mask_of_the_wrong_count_is_an_error():
    mask = np.zeros(100, dtype=bool)
    mask[[1, 2]] = True
    with pytest.raises(arrowmm.ArrowInvalid, match="selects 2 rows, not 3"):
        _kernels.filter_fixed(np.zeros(800, np.uint8), 0, 8, mask, 3)
    with pytest.raises(arrowmm.ArrowInvalid, match="one bool per row"):
        _kernels.filter_fixed(np.zeros(800, np.uint8), 0, 8, mask.reshape(10, 10), 2)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int64", "uint64", "float64", "float32"])
def test_numeric_comparisons_at_the_edges_of_the_type_match_pyarrow(dtype):
    """numpy's comparison loops, handed a scalar of the column's own type, and float32
    compared as double (0.1 as a float32 is not the double 0.1)."""
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        x = np.array([info.min, info.min + 1, 0 if info.min < 0 else 1, info.max - 1,
                      info.max], dtype=dtype)
        scalars = [int(info.min), int(info.max), int(info.max) - 1]
    else:
        x = np.array([0.1, np.nan, -np.inf, np.inf, 0.0, -0.0, 1e300 if dtype == "float64"
                      else 3e38], dtype=dtype)
        scalars = [0.1, 0.0, float("inf"), 1e300]
    source = pa.array(x)
    batch = arrowmm.record_batch({"x": arrowmm.array(source)})
    for value in scalars:
        for op, name in [("==", "equal"), ("!=", "not_equal"), ("<", "less"),
                         ("<=", "less_equal"), (">", "greater"), (">=", "greater_equal")]:
            expr = arrowmm.field("x")._compare(op, value)
            got = pa.record_batch(compute.filter(batch, expr)).column(0)
            scalar = pa.scalar(value, pa.float64() if dtype.startswith("float") else
                               source.type)
            want = pc.filter(source, getattr(pc, name)(source, scalar))
            assert got.to_pylist() == want.to_pylist() or \
                np.array_equal(got.to_numpy(), want.to_numpy(), equal_nan=True), (value, op)


_OPS = [(_kernels.EQ, pc.equal), (_kernels.NE, pc.not_equal), (_kernels.LT, pc.less),
        (_kernels.LE, pc.less_equal), (_kernels.GT, pc.greater), (_kernels.GE, pc.greater_equal)]


def _tied_bytes(n, rng):
    """Values that share long prefixes (ties over the first 8 bytes and past them), with
    bytes above 0x7f (compared unsigned), of lengths 0 to 20."""
    stems = [b"", b"k", b"k01", b"k0100000", b"k01000000", b"\xffk0100", b"k\x80\x00"]
    out = []
    for _ in range(n):
        stem = stems[rng.integers(0, len(stems))]
        tail = bytes(rng.choice([0x00, 0x30, 0x31, 0x7f, 0x80, 0xff],
                                size=rng.integers(0, 13)).astype(np.uint8))
        out.append(stem + tail)
    return out


@pytest.mark.parametrize("large", [False, True])
@pytest.mark.parametrize("offset", [0, 3])
def test_string_comparisons_by_word_match_pyarrow(large, offset):
    """The first 8 bytes compared as one word: ties, prefixes, lengths either side of 8,
    unsigned bytes, sliced arrays, every operator."""
    rng = np.random.default_rng(8)
    values = _tied_bytes(2000, rng)
    arr = pa.array(values, pa.large_binary() if large else pa.binary()).slice(offset)
    width = np.int64 if large else np.int32
    offsets = np.frombuffer(arr.buffers()[1], width, count=len(arr) + 1 + offset)[offset:]
    scalars = [b"", b"k", b"k0100000", b"k01000000", b"k010000000000000000"] + \
        [values[i] for i in rng.integers(0, len(values), 12)]
    for scalar in scalars:
        for op, oracle in _OPS:
            got = _kernels.compare_binary(arr.buffers()[2], offsets, op,
                                          np.frombuffer(scalar, np.uint8))
            want = oracle(arr, pa.scalar(scalar, arr.type)).to_numpy(zero_copy_only=False)
            assert got.tolist() == want.tolist(), (scalar, op)


def test_string_comparisons_read_no_byte_past_the_data():
    """Values ending where an inaccessible page begins: the word compare loads 8 bytes only
    where 8 are left."""
    values = [b"a", b"k0100000", b"k01", b"zz", b"k0100001x", b"k"]
    arr = pa.array(values, pa.binary())
    offsets = np.frombuffer(arr.buffers()[1], np.int32, count=len(values) + 1)
    raw = bytes(arr.buffers()[2])[:offsets[-1]]
    with guarded(raw) as view:
        for scalar in (b"k01", b"k0100000", b"k0100000z"):
            for op, oracle in _OPS:
                got = _kernels.compare_binary(view, offsets, op, np.frombuffer(scalar, np.uint8))
                want = oracle(arr, pa.scalar(scalar, pa.binary())).to_numpy(zero_copy_only=False)
                assert got.tolist() == want.tolist(), (scalar, op)


def test_strided_inputs_are_read_as_their_values():
    """A non-contiguous numpy array given to a selection kernel is copied first (it raised
    ValueError: the kernels take their inputs as one block of bytes)."""
    keep = np.array([True, False] * 10)
    kept = _kernels.pack_mask(keep)
    values = np.arange(40, dtype=np.int64)[::2]
    got = np.frombuffer(_kernels.filter_fixed(values, 0, 8, kept, kept.count), np.int64)
    assert got.tolist() == values[keep].tolist()
    mask = _kernels.mask_from_bits(np.repeat(np.packbits(keep, bitorder="little"), 2)[::2], 0, 20)
    assert mask.count == 10 and np.array_equal(mask.indices(), np.flatnonzero(keep))
