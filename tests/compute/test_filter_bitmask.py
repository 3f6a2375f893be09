"""The selection kernels walk a mask packed as bits (``_kernels.Mask``, 64 rows a word),
made once per filter by ``pack_mask``: the packing and its count, the words that are all
kept (one copy), all dropped (skipped), a few kept (their set bits) or many (the branch-free
loops), bit offsets that are not a multiple of eight, a mask of 1,000,003 rows taken at an
offset, and masks that do not fit the data."""
from __future__ import annotations

import numpy as np
import pytest

import arrowmm
from arrowmm import compute
from arrowmm.compute import _kernels

from tests.support.kernel_support import guarded

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")

RNG = np.random.default_rng(3405)


def _words_mask(n):
    """A mask of ``n`` rows whose 64-row words are, in turn, all kept, all dropped, a few
    kept (3), many kept (40 of 64), and random: every branch of the word loops."""
    mask = np.zeros(n, dtype=bool)
    for w in range((n + 63) // 64):
        rows = np.arange(w * 64, min(n, w * 64 + 64))
        kind = w % 5
        if kind == 0:
            mask[rows] = True
        elif kind == 2:
            mask[RNG.choice(rows, min(3, len(rows)), replace=False)] = True
        elif kind == 3:
            mask[RNG.choice(rows, min(40, len(rows)), replace=False)] = True
        elif kind == 4:
            mask[rows] = RNG.random(len(rows)) < 0.5
    return mask


@pytest.mark.parametrize("n", [0, 1, 63, 64, 65, 127, 1000, 1_000_003])
def test_pack_mask_matches_packbits_and_counts(n):
    mask = RNG.random(n) < 0.3
    raw = mask.view(np.uint8).copy()
    raw[raw == 1] = RNG.choice([1, 2, 128, 255], int(mask.sum()))  # (any nonzero byte keeps)
    kept = _kernels.pack_mask(raw.view(np.bool_))
    assert len(kept) == n and kept.count == int(mask.sum())
    want = np.packbits(mask, bitorder="little")
    got = kept.words.view(np.uint8)[:len(want)]
    assert got.tolist() == want.tolist()
    assert not kept.words[(n + 63) // 64:].any() if n else kept.words.tolist() == [0]
    assert kept.indices().tolist() == np.flatnonzero(mask).tolist()
    with pytest.raises(ValueError):
        kept.words[0] = 1  # (read-only: the kernels' count stays true)


@pytest.mark.parametrize("kept", [False, True])
def test_pack_mask_counts_long_runs_of_one_value(kept):
    """Thousands of words alike: the count's per-byte tallies are summed before they wrap."""
    n = 64 * 5000 + 9
    packed = _kernels.pack_mask(np.full(n, kept))
    assert packed.count == (n if kept else 0)
    assert len(packed.indices()) == packed.count


def test_pack_mask_reads_no_byte_past_the_end():
    n = 64 * 40 + 7
    mask = np.zeros(n, dtype=bool)
    mask[[0, 64 * 39 + 63, n - 1]] = True
    with guarded(mask.tobytes()) as view:
        guarded_mask = np.frombuffer(view, dtype=bool)
        kept = _kernels.pack_mask(guarded_mask)
        del guarded_mask
    assert kept.count == 3 and kept.indices().tolist() == [0, 64 * 39 + 63, n - 1]


@pytest.mark.parametrize("width", [1, 2, 4, 8, 3, 16])
@pytest.mark.parametrize("start", [0, 5])
def test_filter_fixed_over_every_kind_of_word(width, start):
    n = 64 * 23 + 11
    values = RNG.integers(0, 256, (n + start) * width, dtype=np.uint8)
    for mask in (_words_mask(n), RNG.random(n) < 0.05):
        kept = _kernels.pack_mask(mask)
        got = _kernels.filter_fixed(values, start, width, kept, kept.count)
        want = values.reshape(-1, width)[start:][mask].reshape(-1)
        assert got.tolist() == want.tolist()


@pytest.mark.parametrize("bit_offset", [0, 3, 8, 13])
def test_filter_bits_at_bit_offsets_not_a_multiple_of_eight(bit_offset):
    """Whole kept words are copied 64 bits at once, from any source bit to any output bit:
    a few rows kept before them put the output at a bit that is not a byte's first."""
    n = 64 * 17 + 9
    bits = RNG.random(n + bit_offset) < 0.5
    bitmap = np.packbits(bits, bitorder="little")
    for mask in (_words_mask(n), ~_words_mask(n), RNG.random(n) < 0.05):
        kept = _kernels.pack_mask(mask)
        got, ones = _kernels.filter_bits(bitmap, bit_offset, kept, kept.count)
        want = bits[bit_offset:][mask]
        assert np.unpackbits(got, count=kept.count, bitorder="little").tolist() == \
            want.astype(np.uint8).tolist()
        assert ones == int(want.sum())
        assert got.size == (kept.count + 7) // 8


def test_filter_bits_reads_no_bitmap_byte_past_the_end():
    """The last whole kept word's 64 bits end at the bitmap's last bit, mid-byte."""
    n, bit_offset = 64 * 8, 5
    bits = RNG.random(n + bit_offset) < 0.5
    mask = np.ones(n, dtype=bool)
    mask[:3] = False
    with guarded(np.packbits(bits, bitorder="little").tobytes()) as view:
        got, ones = _kernels.filter_bits(view, bit_offset, _kernels.pack_mask(mask), n - 3)
    want = bits[bit_offset + 3:]
    assert ones == int(want.sum())
    assert np.unpackbits(got, count=n - 3, bitorder="little").tolist() == \
        want.astype(np.uint8).tolist()


@pytest.mark.parametrize("dtype", [pa.string(), pa.large_string(), pa.bool_(), pa.int32(),
                                   pa.dictionary(pa.int8(), pa.string())], ids=str)
@pytest.mark.parametrize("fraction", [0.01, 0.6])
def test_a_mask_of_1000003_rows_at_offset_5_matches_pyarrow(dtype, fraction):
    """Values at offset 3 (their validity's bits start mid-byte), a mask with nulls taken
    at offset 5 of a longer one (a null drops its row): as pyarrow filters them."""
    n = 1_000_003
    keys = RNG.integers(0, 1000, n + 3)
    valid = RNG.random(n + 3) >= 0.1
    if pa.types.is_boolean(dtype):
        source = pa.array(keys % 2 == 0, mask=~valid)
    elif pa.types.is_integer(dtype):
        source = pa.array(keys, pa.int32(), mask=~valid)
    else:
        source = pa.array(np.char.add("v", keys.astype(str)).astype(object), pa.string(),
                          mask=~valid)
        source = source.cast(dtype.value_type).dictionary_encode() \
            if pa.types.is_dictionary(dtype) else source.cast(dtype)
    source = source.slice(3)
    mask = pa.array(RNG.random(n + 5) < fraction, mask=RNG.random(n + 5) < 0.2).slice(5)
    got = compute.filter(arrowmm.array(source), arrowmm.array(mask))
    want = pc.filter(source, mask)
    assert pa.array(got).equals(want)
    got.validate(full=True)


def test_all_kept_and_none_kept():
    source = arrowmm.array(pa.array(["a", None, "ccc"] * 30, pa.large_string()))
    assert compute.filter(source, np.ones(90, dtype=bool)) is source
    none = compute.filter(source, np.zeros(90, dtype=bool))
    assert len(none) == 0 and pa.array(none).type == pa.large_string()
    kept = _kernels.pack_mask(np.ones(90, dtype=bool))
    offsets, data = _kernels.filter_binary(np.asarray(source.value_offsets()),
                                           source._buffers[2], kept, 90)
    assert bytes(data) == b"accc" * 30 and offsets[-1] == 120


def test_a_packed_mask_that_does_not_fit_is_an_error():
    from arrowmm.compute.selection import filter_array, filter_batch
    array = arrowmm.array(pa.array([1, 2, 3, 4]))
    kept = _kernels.pack_mask(np.array([True, False, True]))
    with pytest.raises(arrowmm.ArrowInvalid, match="mask has 3 values, the data 4 rows"):
        filter_array(array, kept)
    with pytest.raises(arrowmm.ArrowInvalid, match="selects 2 rows, not 3"):
        filter_array(array.slice(1), kept, 3)
    with pytest.raises(arrowmm.ArrowInvalid, match="selects 2 rows, not 1"):
        _kernels.filter_fixed(np.zeros(24, np.uint8), 0, 8, kept, 1)
    batch = arrowmm.record_batch(pa.record_batch({"x": [1, 2, 3], "s": ["a", "b", "c"]}))
    got = filter_batch(batch, kept)
    assert pa.record_batch(got).to_pydict() == {"x": [1, 3], "s": ["a", "c"]}
