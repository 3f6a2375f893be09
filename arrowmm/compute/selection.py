"""Selecting rows of whole columns in C: ``filter_array`` (by a mask) and ``take_array`` (by
indices), and the same over record batches.

Fixed-width values (numbers, temporals, decimals, fixed-size binary, dictionary indices),
bit-packed booleans, validity bitmaps and binary/string values (offsets and data, 32- or
64-bit) are copied by ``_kernels`` in one pass each; the result owns new memory from offset
0.  Lists, maps, fixed-size lists and structs take their rows' validity and their child at
the positions the rows cover, layer by layer.  Other layouts (unions, run-end encoded, views,
extension storage of those) take ``arrowmm.arrays.selection``'s route.  A mask keeping every
row returns the array itself.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from .. import hooks, types as t
from ..arrays import selection as slow
from ..arrays.array import (Array, BinaryArray, BooleanArray, DictionaryArray,
                            FixedSizeBinaryArray, FixedSizeListArray, ListArray, MapArray,
                            NullArray, PrimitiveArray, StructArray, imported_array, make_array)
from ..arrays.batch import RecordBatch
from ..arrays.provenance import CopiedMemory
from .._core._region import as_view
from ..errors import ArrowInvalid
from . import _kernels as k

__all__ = ["filter_array", "take_array", "filter_batch", "take_batch", "count_kept",
           "selection_of", "packed_mask"]

_FIXED = (PrimitiveArray, FixedSizeBinaryArray, DictionaryArray)


class _Selected(CopiedMemory):
    """The new memory of a selection's result (``copy_reason``: "selected")."""

    reason = "selected"


def _new(data: np.ndarray):
    """A view over a kernel's output (a 1-D array), marked as a copy: ``copied_view`` less
    the conversions a kernel's output needs none of (measured 1.6 -> 0.5-0.9 us a buffer,
    three a batch of a string and a float64 column)."""
    return as_view(data.view(np.uint8, _Selected), description="selected buffer")


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


def selection_of(mask, n: int):
    """What a user passes as a filter's mask, for ``n`` rows: a ``Mask`` read straight from
    the bits of a boolean array (arrowmm's, or one exporting ``__arrow_c_array__``: the
    ``pyarrow.compute.greater(...)`` habit; its nulls drop their row), else
    ``arrays.selection.as_mask``'s bools (numpy, lists, chunked masks)."""
    if not isinstance(mask, (Array, np.ndarray, list, tuple)) and \
            hasattr(mask, "__arrow_c_array__") and not hasattr(mask, "chunks"):
        mask = imported_array(mask)
    if type(mask) is BooleanArray and len(mask) == n:
        bits = mask._nulls_bitmap()  # (its null count checked against the bitmap first)
        return k.mask_from_bits(mask._buffers[1], mask.offset, n, bits,
                                mask.offset if bits is not None else 0)
    return slow.as_mask(mask, n)


def packed_mask(mask, n: int, count: Optional[int] = None) -> k.Mask:
    """``mask`` (a ``_kernels.Mask``, bools one per row with nulls already False, or anything
    ``selection_of`` takes) packed once for every kernel, checked to be ``n`` rows long and,
    when ``count`` is given, to keep that many."""
    if not isinstance(mask, k.Mask) and not (isinstance(mask, np.ndarray)
                                             and mask.dtype == np.bool_ and mask.ndim == 1):
        mask = selection_of(mask, n)  # (which refuses what is no mask: ints, 2-D, ...)
    if not isinstance(mask, k.Mask):
        mask = k.pack_mask(np.ascontiguousarray(mask, dtype=np.bool_))
    if len(mask) != n:
        raise ArrowInvalid(f"filter: the mask has {len(mask)} values, the data {n} rows")
    if count is not None and mask.count != count:
        raise ArrowInvalid(f"filter: the mask selects {mask.count} rows, not {count}")
    return mask


def filter_array(array: Array, mask, count: Optional[int] = None) -> Array:
    """The rows of ``array`` where ``mask`` (numpy bool, one per row, nulls already False, or
    a ``_kernels.Mask``) is True; ``count``: how many are (counted when not given)."""
    n = len(array)
    kept = packed_mask(mask, n, count)
    count = kept.count
    if count == n:
        return array
    cls = type(array)
    if cls is NullArray:
        return make_array(array.type, count, [], null_count=count)
    bitmap = _checked_bitmap(array)
    if cls in _FIXED or cls is BooleanArray or cls is BinaryArray:
        validity, nulls = None, 0
        if bitmap is not None:
            bits, ones = k.filter_bits(bitmap, array.offset, kept, count)
            validity, nulls = _new(bits), count - ones
        if cls is BooleanArray:
            data = [_new(k.filter_bits(array._buffers[1], array.offset, kept, count)[0])]
        elif cls is BinaryArray:
            array.sound_offsets(f"filter of {array.type}")  # (every offset, once)
            offsets, values = k.filter_binary(np.ascontiguousarray(array.value_offsets()),
                                              array._buffers[2], kept, count)
            data = [_new(offsets), _new(values)]
        else:
            width = _width(array)
            if width == 0:  # (fixed_size_binary(0): no bytes at all)
                data = [_new(np.zeros(0, dtype=np.uint8))]
            else:
                data = [_new(k.filter_fixed(array._buffers[1], array.offset, width, kept,
                                            count))]
        return make_array(array.type, count, [validity] + data, null_count=nulls,
                          dictionary=array.dictionary)
    if cls in (ListArray, MapArray, FixedSizeListArray, StructArray):
        return _take_nested(array, kept.indices(), None, bitmap)
    return slow.take(array, kept.indices())


def take_array(array: Array, indices) -> Array:
    """The rows of ``array`` at ``indices`` (integers; a null index gives a null row;
    out-of-range ones raise IndexError, as ``Array.take``)."""
    values, nulls = slow.as_indices(indices, len(array), nulls_into_empty=True)
    return _take(slow.null_source(array, nulls), np.ascontiguousarray(values, dtype=np.int64),
                 nulls)


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
            array.sound_offsets(f"take of {array.type}")
            offsets, data_ = k.take_binary(np.ascontiguousarray(array.value_offsets()),
                                           array._buffers[2], values)
            data = [_new(offsets), _new(data_)]
        else:
            width = _width(array)
            data = [_new(np.zeros(0, dtype=np.uint8))] if width == 0 else \
                [_new(k.take_fixed(array._buffers[1], array.offset, width, values))]
        return make_array(array.type, m, [validity] + data, null_count=nulls_out,
                          dictionary=array.dictionary)
    if cls in (ListArray, MapArray, FixedSizeListArray, StructArray):
        return _take_nested(array, values, nulls, bitmap)
    return slow.take(array, values if nulls is None else
                     [None if z else int(v) for v, z in zip(values.tolist(), nulls.tolist())])


def _refuse_offsets(array: Array, row: int, start: int, end: int) -> None:
    """ArrowInvalid naming the offset of ``row`` (a list's) that is outside its child or below
    the one before it."""
    size = len(array.children[0])
    at, value = (row, start) if not 0 <= start <= size else (row + 1, end)
    why = f"lies outside the {size}-element child" if not 0 <= value <= size else \
        f"is below offset[{row}] = {start}"
    raise ArrowInvalid(f"{array.type} offsets: offset[{at}] = {value} {why} (slot {row})")


def _take_nested(array: Array, values: np.ndarray, nulls: Optional[np.ndarray],
                 bitmap) -> Array:
    """``_take`` of a list, map, fixed-size list or struct: the rows' validity, and the child
    taken at the positions the rows cover (lists: their ranges end to end, offsets rebuilt),
    by ``_take`` again: one pass per layer, no Python per row."""
    m = len(values)
    if nulls is not None:
        values = np.where(nulls, 0, values)  # (a null row covers nothing)
    keep = None
    if bitmap is not None:
        keep = np.unpackbits(k.take_bits(bitmap, array.offset, values)[0], count=m,
                             bitorder="little").view(np.bool_)
    if nulls is not None:
        keep = ~nulls if keep is None else keep & ~nulls
    nulls_out = 0 if keep is None else m - int(np.count_nonzero(keep))
    validity = _new(np.packbits(keep, bitorder="little")) if nulls_out else None
    cls = type(array)
    if cls is StructArray:
        need = array.offset + len(array)
        short = [i for i, c in enumerate(array.children) if len(c) < need]
        if short:
            raise ArrowInvalid(f"{array.type}: child {short[0]} has "
                               f"{len(array.children[short[0]])} values, the struct needs {need}")
        children = [_take(array.field(i), values, None) for i in range(len(array.children))]
        return make_array(array.type, m, [validity], children, null_count=nulls_out)
    child = array.children[0]
    if cls is FixedSizeListArray:
        size = array.type.list_size
        if len(child) < (array.offset + len(array)) * size:
            need = (array.offset + len(array)) * size
            raise ArrowInvalid(f"{array.type}: its child has {len(child)} values, "
                               f"{len(array)} lists of {size} need {need}")
        starts = (values + array.offset) * size
        picks = (starts[:, None] + np.arange(size, dtype=np.int64)).reshape(-1)
        return make_array(array.type, m, [validity], [_take(child, picks, None)],
                          null_count=nulls_out)
    offsets = np.ascontiguousarray(array.value_offsets())
    new_offsets, picks, bad = k.take_list_ranges(offsets, values, nulls, len(child))
    if bad >= 0:  # (the rows taken first, by name: their ranges are what is read)
        row = int(values[bad])
        _refuse_offsets(array, row, int(offsets[row]), int(offsets[row + 1]))
    # then every offset: a row's own two can look sound while the next one shows the damage
    # (0, 7, 5: row 0 would take 7 values where 3 were written); checked once per array
    array.sound_offsets(f"take of {array.type}")
    total = int(new_offsets[-1])
    out_offsets = new_offsets.astype(array.type.offset_dtype) \
        if total <= np.iinfo(array.type.offset_dtype).max else None
    if out_offsets is None:
        raise ArrowInvalid(f"take of {array.type}: the rows hold {total} values, past its "
                           f"offsets' range")
    return make_array(array.type, m, [validity, _new(out_offsets)], [_take(child, picks, None)],
                      null_count=nulls_out)


def filter_batch(batch: RecordBatch, mask: np.ndarray, count: Optional[int] = None,
                 schema: Optional[t.Schema] = None) -> RecordBatch:
    """The rows of ``batch`` where ``mask`` is True: every column decoded together first (a
    compressed batch decompresses them on the codec pool), then filtered."""
    kept = packed_mask(mask, batch.num_rows, count)  # (once for every column)
    count = kept.count
    if count == batch.num_rows and schema is None:
        return batch
    cols = [filter_array(c, kept, count) for c in batch.storage_columns]  # (decoded together)
    return RecordBatch(batch.schema if schema is None else schema, count, cols,
                       metadata=batch.metadata)


def take_batch(batch: RecordBatch, indices) -> RecordBatch:
    """The rows of ``batch`` at ``indices``."""
    values, nulls = slow.as_indices(indices, batch.num_rows, nulls_into_empty=True)
    values = np.ascontiguousarray(values, dtype=np.int64)
    batch.decode_columns()
    cols = [_take(slow.null_source(c, nulls), values, nulls) for c in batch.storage_columns]
    return RecordBatch(batch.schema, len(values), cols, metadata=batch.metadata)


hooks.fill("take_array", take_array)
hooks.fill("filter_array", filter_array)
