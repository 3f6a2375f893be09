"""Selecting rows of whole columns in C: ``filter_array`` (by a mask) and ``take_array`` (by
indices), and the same over record batches.

Fixed-width values (numbers, temporals, decimals, fixed-size binary, dictionary indices),
bit-packed booleans, validity bitmaps and binary/string values (offsets and data, 32- or
64-bit) are copied by ``_kernels`` in one pass each; the result owns new memory from offset
0.  Other layouts (lists, structs, maps, unions, run-end encoded, views, extension storage
of those) take ``arrowmm.arrays.selection``'s route: zero-copy runs of rows joined by
``concat_arrays``, slower but correct.  A mask keeping every row returns the array itself.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from .. import types as t
from ..arrays import selection as slow
from ..arrays.array import (Array, BinaryArray, BooleanArray, DictionaryArray,
                            FixedSizeBinaryArray, NullArray, PrimitiveArray, make_array)
from ..arrays.batch import RecordBatch
from ..arrays.provenance import copied_view
from ..errors import ArrowInvalid
from . import _kernels as k

__all__ = ["filter_array", "take_array", "filter_batch", "take_batch", "count_kept"]

_FIXED = (PrimitiveArray, FixedSizeBinaryArray, DictionaryArray)


def _new(data):
    return copied_view(data, "selected")


def count_kept(mask: np.ndarray) -> int:
    return int(np.count_nonzero(mask))


def _checked_bitmap(array: Array):
    """``array``'s validity bitmap (None when no value is null), counted against its null count
    first, its children's too: every route recounts the copied bits, which would turn a
    flipped bit into a valid array whose null reads as its slot's bytes.  (Each array keeps
    its verdict: a batch's columns are counted once.)"""
    for child in array.children:
        _checked_bitmap(child)
    return array._nulls_bitmap()


def _width(array: Array) -> int:
    if type(array) is DictionaryArray:
        return array.type.index_type.byte_width
    return array.type.byte_width


def filter_array(array: Array, mask: np.ndarray, count: Optional[int] = None) -> Array:
    """The rows of ``array`` where ``mask`` (numpy bool, one per row, nulls already False) is
    True; ``count``: how many are (counted when not given)."""
    n = len(array)
    mask = np.ascontiguousarray(mask, dtype=np.bool_)
    if len(mask) != n:
        raise ArrowInvalid(f"filter: the mask has {len(mask)} values, the data {n} rows")
    if count is None:
        count = count_kept(mask)
    if count == n:
        return array
    cls = type(array)
    if cls is NullArray:
        return make_array(array.type, count, [], null_count=count)
    bitmap = _checked_bitmap(array)
    if cls in _FIXED or cls is BooleanArray or cls is BinaryArray:
        validity, nulls = None, 0
        if bitmap is not None:
            bits, ones = k.filter_bits(bitmap, array.offset, mask, count)
            validity, nulls = _new(bits), count - ones
        if cls is BooleanArray:
            data = [_new(k.filter_bits(array._buffers[1], array.offset, mask, count)[0])]
        elif cls is BinaryArray:
            offsets, values = k.filter_binary(np.ascontiguousarray(array.value_offsets()),
                                              array._buffers[2], mask, count)
            data = [_new(offsets), _new(values)]
        else:
            width = _width(array)
            if width == 0:  # (fixed_size_binary(0): no bytes at all)
                data = [_new(np.zeros(0, dtype=np.uint8))]
            else:
                data = [_new(k.filter_fixed(array._buffers[1], array.offset, width, mask,
                                            count))]
        return make_array(array.type, count, [validity] + data, null_count=nulls,
                          dictionary=array.dictionary)
    return slow.filter_mask(array, mask)


def take_array(array: Array, indices) -> Array:
    """The rows of ``array`` at ``indices`` (integers; a null index gives a null row;
    out-of-range ones raise IndexError, as ``Array.take``)."""
    values, nulls = slow.as_indices(indices, len(array))
    return _take(array, np.ascontiguousarray(values, dtype=np.int64), nulls)


def _take(array: Array, values: np.ndarray, nulls: Optional[np.ndarray]) -> Array:
    """``take_array`` of checked positions ``values`` (``nulls``: which are null, or None)."""
    m = len(values)
    cls = type(array)
    if cls is NullArray:
        return make_array(array.type, m, [], null_count=m)
    bitmap = _checked_bitmap(array)
    if cls in _FIXED or cls is BooleanArray or cls is BinaryArray:
        validity, nulls_out = None, 0
        if bitmap is not None or nulls is not None:
            if bitmap is not None:
                keep = np.unpackbits(k.take_bits(bitmap, array.offset, values)[0],
                                     count=m, bitorder="little").view(np.bool_)
            else:
                keep = np.ones(m, dtype=np.bool_)
            if nulls is not None:
                keep &= ~nulls
            bits = np.packbits(keep, bitorder="little")
            nulls_out = m - int(np.count_nonzero(keep))
            validity = _new(bits) if nulls_out else None
        if cls is BooleanArray:
            data = [_new(k.take_bits(array._buffers[1], array.offset, values)[0])]
        elif cls is BinaryArray:
            offsets, data_ = k.take_binary(np.ascontiguousarray(array.value_offsets()),
                                           array._buffers[2], values)
            data = [_new(offsets), _new(data_)]
        else:
            width = _width(array)
            data = [_new(np.zeros(0, dtype=np.uint8))] if width == 0 else \
                [_new(k.take_fixed(array._buffers[1], array.offset, width, values))]
        return make_array(array.type, m, [validity] + data, null_count=nulls_out,
                          dictionary=array.dictionary)
    return slow.take(array, values if nulls is None else
                     [None if z else int(v) for v, z in zip(values.tolist(), nulls.tolist())])


def filter_batch(batch: RecordBatch, mask: np.ndarray, count: Optional[int] = None,
                 schema: Optional[t.Schema] = None) -> RecordBatch:
    """The rows of ``batch`` where ``mask`` is True: every column decoded together first (a
    compressed batch decompresses them on the codec pool), then filtered."""
    if count is None:
        count = count_kept(mask)
    if count == batch.num_rows and schema is None:
        return batch
    if count:
        batch.decode_columns()
    cols = [filter_array(c, mask, count) for c in batch.storage_columns]
    return RecordBatch(batch.schema if schema is None else schema, count, cols,
                       metadata=batch.metadata)


def take_batch(batch: RecordBatch, indices) -> RecordBatch:
    """The rows of ``batch`` at ``indices``."""
    values, nulls = slow.as_indices(indices, batch.num_rows)
    values = np.ascontiguousarray(values, dtype=np.int64)
    batch.decode_columns()
    cols = [_take(c, values, nulls) for c in batch.storage_columns]
    return RecordBatch(batch.schema, len(values), cols, metadata=batch.metadata)
