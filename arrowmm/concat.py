"""Concatenation of arrays of one type (delta dictionaries are appended this way).

The result owns new memory: concatenation is the one operation that must copy.
"""
from __future__ import annotations

from typing import List

import numpy as np

from . import types as t
from ._bitmap import pack_bitmap
from ._region import as_view
from .array import (Array, BinaryArray, BooleanArray, FixedSizeBinaryArray, FixedSizeListArray,
                    ListArray, NullArray, PrimitiveArray, StructArray, make_array)
from .errors import ArrowInvalid, ArrowNotImplementedError

__all__ = ["concat_arrays"]


def _validity(arrays: List[Array]):
    if not any(a.null_count for a in arrays):
        return None, 0
    bits = np.concatenate([a.is_valid() for a in arrays])
    bitmap, set_count = pack_bitmap(bits)
    return as_view(bitmap), len(bits) - set_count


def _offsets_and_ranges(arrays, dtype):
    """Rebased offsets for all arrays and the (start, stop) value range of each."""
    parts, ranges, base = [np.zeros(1, dtype=dtype.offset_dtype)], [], 0
    for a in arrays:
        offs = a.value_offsets().astype(np.int64)
        lo, hi = int(offs[0]), int(offs[-1])
        parts.append((offs[1:] - lo + base).astype(dtype.offset_dtype))
        ranges.append((lo, hi))
        base += hi - lo
    if base > np.iinfo(dtype.offset_dtype).max:
        raise ArrowInvalid(f"concatenated {dtype} needs offsets past {np.iinfo(dtype.offset_dtype).max}")
    return as_view(np.concatenate(parts)), ranges


def concat_arrays(arrays: List[Array]) -> Array:
    """One array holding the values of ``arrays`` in order."""
    if not arrays:
        raise ArrowInvalid("concat_arrays needs at least one array")
    if len(arrays) == 1:
        return arrays[0]
    dtype = arrays[0].type
    for a in arrays[1:]:
        if a.type != dtype:
            raise ArrowInvalid(f"cannot concatenate {dtype} with {a.type}")
    length = sum(len(a) for a in arrays)
    cls = type(arrays[0])
    if cls is NullArray:
        return make_array(dtype, length, [], null_count=length)
    validity, nulls = _validity(arrays)
    if cls is PrimitiveArray:
        data = np.concatenate([a.values() for a in arrays])
        return make_array(dtype, length, [validity, as_view(data)], null_count=nulls)
    if cls is FixedSizeBinaryArray:
        width = dtype.byte_width
        data = b"".join(a._buffers[1].to_bytes()[a.offset * width:(a.offset + len(a)) * width]
                        for a in arrays)
        return make_array(dtype, length, [validity, as_view(data)], null_count=nulls)
    if cls is BooleanArray:
        bitmap, _ = pack_bitmap(np.concatenate([a.values() for a in arrays]))
        return make_array(dtype, length, [validity, as_view(bitmap)], null_count=nulls)
    if cls is BinaryArray:
        offsets, ranges = _offsets_and_ranges(arrays, dtype)
        data = b"".join(a._buffers[2].slice(lo, hi - lo).to_bytes() for a, (lo, hi) in zip(arrays, ranges))
        return make_array(dtype, length, [validity, offsets, as_view(data)], null_count=nulls)
    if cls is ListArray or (issubclass(cls, ListArray) and not dtype_is_view(dtype)):
        offsets, ranges = _offsets_and_ranges(arrays, dtype)
        child = concat_arrays([a.children[0].slice(lo, hi - lo) for a, (lo, hi) in zip(arrays, ranges)])
        return make_array(dtype, length, [validity, offsets], [child], null_count=nulls)
    if cls is FixedSizeListArray:
        child = concat_arrays([a.flatten() for a in arrays])
        return make_array(dtype, length, [validity], [child], null_count=nulls)
    if cls is StructArray:
        children = [concat_arrays([a.field(i) for a in arrays]) for i in range(len(dtype.fields))]
        return make_array(dtype, length, [validity], children, null_count=nulls)
    raise ArrowNotImplementedError(f"concatenating {dtype} arrays is not supported yet")


def dtype_is_view(dtype) -> bool:
    return isinstance(dtype, t.ListType) and dtype.view
