"""A boolean array given as a filter's mask (pyarrow's habit: ``t.filter(pc.greater(...))``)
is read from its bits (``_kernels.mask_from_bits``): not unpacked to a byte a row and packed
again.  Same rows as pyarrow's filter, at every bit offset, length and null pattern."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import arrowmm
from arrowmm import ArrowInvalid
from arrowmm.compute import _kernels as k

RNG = np.random.default_rng(7)


def _bools(n: int, nulls: bool) -> pa.Array:
    values = RNG.random(n) < 0.4
    return pa.array(values, mask=(RNG.random(n) < 0.2) if nulls else None)


@pytest.mark.parametrize("nulls", [False, True])
@pytest.mark.parametrize("offset", [0, 1, 7, 8, 13, 64, 65])
@pytest.mark.parametrize("n", [0, 1, 63, 64, 65, 200, 1_000])
def test_the_mask_is_the_arrays_true_and_valid_rows(n, offset, nulls):
    source = _bools(n + offset, nulls).slice(offset)
    ours = arrowmm.array(source)
    bits = ours._nulls_bitmap()
    mask = k.mask_from_bits(ours._buffers[1], ours.offset, n, bits,
                            ours.offset if bits is not None else 0)
    expected = np.flatnonzero(pc.fill_null(source, False).to_numpy(zero_copy_only=False))
    assert len(mask) == n and mask.count == len(expected)
    assert mask.indices().tolist() == expected.tolist()
    # (the last word's bits past the end are clear: the kernels may read whole words)
    if n % 64:
        assert int(mask.words[-1]) >> (n % 64) == 0


@pytest.mark.parametrize("mask_offset", [0, 3, 64])
@pytest.mark.parametrize("values_offset", [0, 5])
def test_filter_with_a_pyarrow_or_arrowmm_mask_is_pyarrows(mask_offset, values_offset):
    n = 1_003
    values = pa.array([None if i % 11 == 0 else f"s{i}" for i in range(n + values_offset)])
    values = values.slice(values_offset)
    mask = _bools(n + mask_offset, True).slice(mask_offset)
    expected = values.filter(mask).to_pylist()
    ours = arrowmm.array(values)
    assert ours.filter(mask).to_pylist() == expected
    assert ours.filter(arrowmm.array(mask)).to_pylist() == expected
    assert arrowmm.compute.filter(ours, mask).to_pylist() == expected
    batch = arrowmm.record_batch({"s": ours})
    assert batch.filter(mask).column(0).to_pylist() == expected


def test_a_mask_of_another_length_or_type_raises_as_before():
    ours = arrowmm.array([1, 2, 3])
    with pytest.raises(ArrowInvalid, match="same length|values, the data"):
        ours.filter(pa.array([True, False]))
    with pytest.raises(ArrowInvalid, match="boolean"):
        ours.filter(pa.array([1, 0, 1]))


def test_a_bitmap_shorter_than_the_mask_is_refused():
    with pytest.raises(ArrowInvalid, match="needs 2 bytes"):
        k.mask_from_bits(np.zeros(1, np.uint8), 0, 9)
