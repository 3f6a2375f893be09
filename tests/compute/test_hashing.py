"""``dictionary_encode`` / ``unique`` / ``value_counts`` (``arrowmm.compute.hashing`` over the
``_hashing`` kernels) against pyarrow's, value by value and type by type: seeded random
columns of every type the kernels take, sliced at offsets off a byte, nulls anywhere, empty,
all null, chunked; the float bits pyarrow keeps apart; many distinct values (the table grows
and probes); 64-bit offsets past 2**31; the types refused; and the casts to a dictionary that
now go through the kernels, with a dictionary already written."""
from __future__ import annotations

import struct

import numpy as np
import pytest

import arrowmm
from arrowmm import compute
from arrowmm.arrays.array import make_array
from arrowmm.arrays.provenance import copied_view
from arrowmm.compute import hashing
from arrowmm.errors import ArrowInvalid, ArrowNotImplementedError
from arrowmm.interop.cast import cast_column

pa = pytest.importorskip("pyarrow")

RNG = np.random.default_rng(4913)
NAN_BITS = [0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000001]


def _floats(n):
    pool = np.array([0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, 1e300, 5e-324]
                    + [np.frombuffer(struct.pack("<Q", b), np.float64)[0] for b in NAN_BITS])
    return pool[RNG.integers(0, len(pool), n)]


def _texts(n, kind):
    pool = ["", "a", "ab", "abcdefgh", "abcdefghi", "abcdefgh" * 3, "é", "ß\x00x",
            "abcdefgh" * 3 + "z", "zz"]
    chosen = [pool[i] for i in RNG.integers(0, len(pool), n)]
    return chosen if "string" in kind else [s.encode() for s in chosen]


def _column(dtype, n):
    """``n`` values of ``dtype`` drawn from a few (so most repeat), about a fifth null."""
    mask = RNG.random(n) < RNG.choice([0.0, 0.2, 0.9])
    if pa.types.is_floating(dtype):
        with np.errstate(over="ignore", invalid="ignore"):  # (1e300 as float32: inf)
            values = _floats(n).astype(dtype.to_pandas_dtype())
    elif pa.types.is_integer(dtype):
        info = np.iinfo(dtype.to_pandas_dtype())
        pool = np.array([info.min, info.max, 0, 1, 7], dtype=info.dtype)
        values = pool[RNG.integers(0, len(pool), n)]
    elif pa.types.is_boolean(dtype):
        values = RNG.random(n) < 0.5
    elif pa.types.is_fixed_size_binary(dtype):
        pool = [b"abc", b"abd", b"\x00\x00\x00", b"zzz"]
        values = [pool[i] for i in RNG.integers(0, len(pool), n)]
    elif pa.types.is_decimal(dtype):
        import decimal
        pool = [decimal.Decimal(s) for s in ("1.25", "-1.25", "0.00", "999.99")]
        values = [pool[i] for i in RNG.integers(0, len(pool), n)]
    elif pa.types.is_temporal(dtype):
        pool = np.array([0, -1, 86_400, 10**6, 2**21])
        return pa.array(pool[RNG.integers(0, len(pool), n)], pa.int64(), mask=mask) \
            .cast(pa.int32() if dtype.bit_width == 32 else pa.int64()).cast(dtype)
    elif pa.types.is_null(dtype):
        return pa.nulls(n)
    else:
        values = _texts(n, str(dtype))
    return pa.array(values, dtype, mask=mask)


TYPES = [pa.float16(), pa.int8(), pa.uint8(), pa.int16(), pa.uint16(), pa.int32(), pa.uint32(),
         pa.int64(), pa.uint64(), pa.float32(), pa.float64(), pa.bool_(), pa.string(), pa.large_string(),
         pa.binary(), pa.large_binary(), pa.binary(3), pa.decimal128(5, 2),
         pa.decimal256(40, 2), pa.date32(),
         pa.timestamp("us"), pa.time64("ns"), pa.duration("s"), pa.null()]


def _key(v):
    """A value as pyarrow's hash sees it (floats by their bits; nested by their items)."""
    if isinstance(v, float):
        return ("float", struct.pack("<d", v))
    if isinstance(v, dict):
        return tuple((k, _key(x)) for k, x in v.items())
    return v


def _same(got, want):
    """``got`` (arrowmm) is ``want`` (pyarrow): the same type string, value by value."""
    got = pa.array(got)
    assert str(got.type) == str(want.type)
    if pa.types.is_dictionary(want.type):
        _same(arrowmm.array(got.indices), want.indices)
        _same(arrowmm.array(got.dictionary), want.dictionary)
        return
    assert [_key(v) for v in got.to_pylist()] == [_key(v) for v in want.to_pylist()]


def _check(got, want):
    """The three functions of ``got`` are pyarrow's of ``want``; and so is a cast of text or
    binaries to a dictionary (through the same kernels)."""
    _same(compute.dictionary_encode(got), want.dictionary_encode())
    if pa.types.is_string(want.type) or pa.types.is_large_string(want.type) or \
            pa.types.is_binary(want.type) or pa.types.is_large_binary(want.type):
        _same(got.cast(arrowmm.dictionary(arrowmm.int32(), got.type)),
              want.cast(pa.dictionary(pa.int32(), want.type)))
    _same(compute.dictionary_encode(got, null_encoding="encode"),
          want.dictionary_encode(null_encoding="encode"))
    _same(compute.unique(got), want.unique())
    _same(compute.value_counts(got), want.value_counts())


@pytest.mark.parametrize("dtype", TYPES, ids=str)
def test_random_columns_are_pyarrows(dtype):
    for _ in range(30):
        n = int(RNG.integers(0, 90))
        want = _column(dtype, n)
        _check(arrowmm.array(want), want)
        start = int(RNG.integers(0, n + 1))
        length = int(RNG.integers(0, n - start + 1))
        # (sliced on either side: an offset the import keeps, and one arrowmm cuts)
        _check(arrowmm.array(want).slice(start, length), want.slice(start, length))
        _check(arrowmm.array(want.slice(start, length)), want.slice(start, length))


def test_methods_are_the_compute_functions():
    want = pa.array(["b", None, "a", "b", None])
    got = arrowmm.array(want)
    _same(got.dictionary_encode(), want.dictionary_encode())
    _same(got.dictionary_encode("encode"), want.dictionary_encode("encode"))
    _same(got.unique(), want.unique())
    _same(got.value_counts(), want.value_counts())


def test_float_bits_as_pyarrow_keeps_them():
    bits = [0, 1 << 63] + NAN_BITS + NAN_BITS + [0]
    want = pa.array(np.array(bits, np.uint64).view(np.float64))
    got = compute.unique(arrowmm.array(want))
    assert len(got) == 5  # (0.0, -0.0 and three NaNs)
    assert np.array(got.to_numpy()).view(np.uint64).tolist() == bits[:5]
    _check(arrowmm.array(want), want)


@pytest.mark.parametrize("dtype", [pa.int64(), pa.string(), pa.binary(20)], ids=str)
def test_many_distinct_values_grow_the_table(dtype):
    n = 100_000
    raw = RNG.integers(0, 60_000, n)
    if dtype == pa.int64():
        want = pa.array(raw * 1_000_003, dtype)
    elif dtype == pa.string():
        want = pa.array([f"value-{v}" for v in raw.tolist()], dtype)
    else:
        want = pa.array([v.to_bytes(20, "little") for v in raw.tolist()], dtype)
    _check(arrowmm.array(want), want)


def test_values_of_one_hash_are_told_apart_by_their_bytes():
    # (the kernel seeds a short value's hash with its length: b"", b"\x01", b"\x02\x00" hash
    # alike, so only the length and byte compare keeps them apart; b"" first, at the offset
    # b"\x01" starts at)
    for dtype in (pa.binary(), pa.large_string()):
        texts = ["", "\x01", "\x02\x00", "\x01", "\x03", "\x02\x00", ""]
        want = pa.array([s.encode() for s in texts] if dtype == pa.binary() else texts, dtype)
        _check(arrowmm.array(want), want)
        assert len(compute.unique(arrowmm.array(want))) == 4


def test_empty_and_all_null_columns():
    for want in [pa.array([], pa.string()), pa.array([None] * 9, pa.int64()),
                 pa.array([None] * 3, pa.string()), pa.nulls(0), pa.nulls(5)]:
        _check(arrowmm.array(want), want)


def test_chunked_arrays_share_one_dictionary():
    want = pa.chunked_array([pa.array(["a", None, "b"]), pa.array([], pa.string()),
                             pa.array(["c", "a", None])])
    got = arrowmm.chunked_array([arrowmm.array(c) for c in want.chunks], arrowmm.string())
    encoded, expected = got.dictionary_encode(), want.dictionary_encode()
    assert encoded.num_chunks == expected.num_chunks
    for c, e in zip(encoded.chunks, expected.chunks):
        _same(c, e)
        assert c.dictionary is encoded.chunks[0].dictionary
    _same(got.unique(), want.unique())
    _same(got.value_counts(), want.value_counts())
    _same(compute.unique(got), want.unique())
    none = pa.chunked_array([], pa.string())
    empty = arrowmm.chunked_array([], arrowmm.string())
    assert str(pa.chunked_array(compute.dictionary_encode(empty)).type) == \
        str(none.dictionary_encode().type)
    _same(empty.unique(), none.unique())
    _same(empty.value_counts(), none.value_counts())


def test_dictionary_arrays_hash_their_indices():
    want = pa.DictionaryArray.from_arrays(pa.array([0, 1, 2, None, 1, 0], pa.int8()),
                                          pa.array(["x", "x", None]))
    got = arrowmm.array(want)
    assert compute.dictionary_encode(got) is got
    _same(compute.unique(got), want.unique())
    counts = compute.value_counts(got)
    assert str(pa.array(counts).type) == str(want.value_counts().type)
    assert pa.array(counts).field(1).to_pylist() == want.value_counts().field(1).to_pylist()


def test_64_bit_offsets_past_two_gigabytes():
    # (the 2 GiB between the rows is one null row's, never read: zero pages, no memory)
    far = 2**31 + 2
    data = np.zeros(far + 8, np.uint8)
    data[0:2] = data[far:far + 2] = np.frombuffer(b"ab", np.uint8)
    data[far + 2:far + 4] = np.frombuffer(b"cd", np.uint8)
    offsets = np.array([0, 2, far, far + 2, far + 4], np.int64)
    validity = np.packbits([1, 0, 1, 1], bitorder="little")
    column = make_array(arrowmm.large_binary(), 4,
                        [copied_view(validity, "test"), copied_view(offsets, "test"),
                         copied_view(data, "test")], null_count=1)
    indices, firsts, counts = hashing.codes(column, False)
    assert firsts.tolist() == [0, 3] and counts.tolist() == [2, 1]
    assert indices[[0, 2, 3]].tolist() == [0, 0, 1]
    encoded = compute.dictionary_encode(column)
    assert encoded.dictionary.to_pylist() == [b"ab", b"cd"]
    assert encoded.to_pylist() == [b"ab", None, b"ab", b"cd"]


def test_types_without_a_kernel_are_refused_by_name():
    for got in [arrowmm.array(pa.array([[1], [2]])),
                arrowmm.array(pa.array([{"a": 1}]))]:  # (views are hashed: see
        # tests/compute/test_hashing_chunks_and_views.py)
        for f in (compute.dictionary_encode, compute.unique, compute.value_counts):
            with pytest.raises(ArrowNotImplementedError, match=str(got.type).split("<")[0]):
                f(got)


def test_bad_arguments_raise_arrow_invalid():
    with pytest.raises(ArrowInvalid, match="null_encoding"):
        compute.dictionary_encode(arrowmm.array([1]), null_encoding="drop")
    with pytest.raises(ArrowInvalid, match="list"):
        compute.unique([1, 2])


def test_damaged_offsets_are_named_not_read():
    offsets = np.array([0, 2, 99, 4], np.int32)
    column = make_array(arrowmm.string(), 3,
                        [None, copied_view(offsets, "test"),
                         copied_view(np.zeros(4, np.uint8), "test")], null_count=0)
    with pytest.raises(ArrowInvalid, match="row 1"):
        hashing.codes(column, False)


# ---------------------------------------------------------------- casts to a dictionary

def test_cast_with_an_existing_dictionary_keys_floats_by_their_bits_and_keeps_indices():
    # (the writers' cast=True: entries already written keep their index, new ones follow)
    nan, other_nan = (np.frombuffer(struct.pack("<Q", b), np.float64)[0] for b in NAN_BITS[:2])
    existing = arrowmm.array(np.array([nan, 0.0, 1.0, 0.0]))
    values = arrowmm.array(pa.array([-0.0, other_nan, nan, None, 2.0, 0.0, other_nan]))
    want = arrowmm.dictionary(arrowmm.int16(), arrowmm.float64())
    got = cast_column(values, want, "f", existing)
    assert np.array(got.dictionary.to_numpy()).view(np.uint64).tolist() == \
        [NAN_BITS[0], 0, 0x3FF0000000000000, 0, 1 << 63, NAN_BITS[1], 0x4000000000000000]
    assert pa.array(got).indices.to_pylist() == [4, 5, 0, None, 6, 1, 5]
    fresh = cast_column(values, want, "f")
    _same(fresh, pa.array(values).dictionary_encode().cast(pa.dictionary(pa.int16(),
                                                                            pa.float64())))
    # (text: the first place of a duplicate counts; nothing new sends the same dictionary)
    existing = arrowmm.array(["b", "a", None, "b"])  # (a duplicate: its first place counts)
    values = arrowmm.array(["x", "a", None, "b", "x", "y"])
    want = arrowmm.dictionary(arrowmm.int8(), arrowmm.string())
    got = cast_column(values, want, "f", existing)
    assert got.dictionary.to_pylist() == ["b", "a", None, "b", "x", "y"]
    assert pa.array(got).indices.to_pylist() == [4, 1, None, 0, 4, 5]
    again = cast_column(arrowmm.array(["a", "b"]), want, "f", existing)
    assert again.dictionary is existing
    assert pa.array(again).indices.to_pylist() == [1, 0]
    # (a dictionary array's null entry matches the existing one)
    given = arrowmm.array(pa.DictionaryArray.from_arrays(pa.array([0, 1, 0]),
                                                         pa.array([None, "z"])))
    got = cast_column(given, want, "f", existing)
    assert got.dictionary.to_pylist() == ["b", "a", None, "b", "z"]
    assert pa.array(got).indices.to_pylist() == [2, 4, 2]
