"""Concatenation of arrays of one type (delta dictionaries are appended this way).

The result owns new memory: concatenation is the one operation that must copy.
"""
from __future__ import annotations

from typing import List

import numpy as np

from .. import types as t
from .._core._bitmap import pack_bitmap
from .._core._offsets import (check_binary_views, check_dictionary_indices, check_list_view,
                              check_run_ends)
from .._core._region import BufferView
from .extension import ExtensionArray
from .provenance import copied_view
from .array import Array, make_array
from ..errors import ArrowInvalid, ArrowNotImplementedError

__all__ = ["concat_arrays"]


def _new(data) -> BufferView:
    """Memory this module made (a concatenation): marked as a copy for ``Array.is_zero_copy``."""
    return copied_view(data, "concatenated")


def _validity(arrays: List[Array]):
    if not any(a.null_count for a in arrays):
        return None, 0
    bits = np.concatenate([a.is_valid() for a in arrays])
    bitmap, set_count = pack_bitmap(bits)
    return _new(bitmap), len(bits) - set_count


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
    return _new(np.concatenate(parts)), ranges


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
    if isinstance(arrays[0], ExtensionArray):  # the storages joined, viewed as the extension
        return type(arrays[0])(dtype, concat_arrays([a.storage for a in arrays]))
    length = sum(len(a) for a in arrays)
    concat = _CONCAT.get(type(dtype))
    if concat is None:
        raise ArrowNotImplementedError(f"concatenating {dtype} arrays is not supported yet")
    if concat is _null_concat:
        return _null_concat(arrays, dtype, length, None, length)
    validity, nulls = _validity(arrays)
    return concat(arrays, dtype, length, validity, nulls)


def _null_concat(arrays, dtype, length, validity, nulls):
    return make_array(dtype, length, [], null_count=length)


def _primitive_concat(arrays, dtype, length, validity, nulls):
    data = np.concatenate([a.values() for a in arrays])
    return make_array(dtype, length, [validity, _new(data)], null_count=nulls)


def _fixed_size_binary_concat(arrays, dtype, length, validity, nulls):
    width = dtype.byte_width
    data = b"".join(a._buffers[1].to_bytes()[a.offset * width:(a.offset + len(a)) * width]
                    for a in arrays)
    return make_array(dtype, length, [validity, _new(data)], null_count=nulls)


def _bool_concat(arrays, dtype, length, validity, nulls):
    bitmap, _ = pack_bitmap(np.concatenate([a.values() for a in arrays]))
    return make_array(dtype, length, [validity, _new(bitmap)], null_count=nulls)


def _binary_concat(arrays, dtype, length, validity, nulls):
    offsets, ranges = _offsets_and_ranges(arrays, dtype)
    data = b"".join(a._buffers[2].slice(lo, hi - lo).to_bytes() for a, (lo, hi) in zip(arrays, ranges))
    return make_array(dtype, length, [validity, offsets, _new(data)], null_count=nulls)


def _list_concat(arrays, dtype, length, validity, nulls):
    """Lists and maps: offsets rebased, the used child ranges appended."""
    offsets, ranges = _offsets_and_ranges(arrays, dtype)
    child = concat_arrays([a.children[0].slice(lo, hi - lo) for a, (lo, hi) in zip(arrays, ranges)])
    return make_array(dtype, length, [validity, offsets], [child], null_count=nulls)


def _fixed_size_list_concat(arrays, dtype, length, validity, nulls):
    child = concat_arrays([a._covered_values() for a in arrays])
    return make_array(dtype, length, [validity], [child], null_count=nulls)


def _struct_concat(arrays, dtype, length, validity, nulls):
    children = [concat_arrays([a.field(i) for a in arrays]) for i in range(len(dtype.fields))]
    return make_array(dtype, length, [validity], children, null_count=nulls)


def _fits(values: np.ndarray, dtype, what: str) -> np.ndarray:
    """``values`` (int64) cast to ``dtype``, refusing values the type cannot hold."""
    info = np.iinfo(dtype)
    if values.size and (int(values.min()) < info.min or int(values.max()) > info.max):
        raise ArrowInvalid(f"concatenated {what} reach {int(values.max())}, past {np.dtype(dtype)}")
    return values.astype(dtype)


def _binary_view_concat(arrays, dtype, length, validity, nulls):
    """Views copied; long views' data buffer indices shifted past earlier arrays' buffers."""
    views, data = [], []
    for i, a in enumerate(arrays):
        if not a._fully_valid:  # an index past its own buffers would name the next input's
            check_binary_views(a._views(), len(a), a.validity if a.null_count else None,
                               a.offset, list(a._buffers[2:]), False, f"concat_arrays input {i}")
        if len(a):
            v = np.frombuffer(a._views(), dtype="<i4").reshape(len(a), 4).copy()
            v[v[:, 0] > 12, 2] += len(data)
            views.append(v.ravel())
        data.extend(a._buffers[2:])
    raw = np.concatenate(views) if views else np.empty(0, "<i4")
    return make_array(dtype, length, [validity, _new(raw)] + data, null_count=nulls)


def _list_view_concat(arrays, dtype, length, validity, nulls):
    """Each array's used child range appended; offsets rebased (empty views point at 0)."""
    offsets, sizes, kids, base = [], [], [], 0
    for i, a in enumerate(arrays):
        # every view, null slots' too (they are copied): a negative size was dropped as empty
        check_list_view(a.value_offsets(), a.value_sizes(), len(a), len(a.children[0]), None,
                        a.offset, f"concat_arrays input {i}")
        offs, size = a.value_offsets().astype(np.int64), a.value_sizes().astype(np.int64)
        used = size > 0
        lo = int(offs[used].min()) if used.any() else 0
        hi = int((offs + size)[used].max()) if used.any() else 0
        offsets.append(np.where(used, offs - lo + base, 0))
        sizes.append(np.where(used, size, 0))
        kids.append(a.children[0].slice(lo, hi - lo))
        base += hi - lo
    width = dtype.offset_dtype
    buffers = [validity, _new(_fits(np.concatenate(offsets), width, f"{dtype} offsets")),
               _new(np.concatenate(sizes).astype(width))]
    return make_array(dtype, length, buffers, [concat_arrays(kids)], null_count=nulls)


def _union_concat(arrays, dtype, length, validity, nulls):
    """Type ids appended; sparse children appended slot by slot; of dense ones, the range of
    each child its slots use, their offsets shifted onto it."""
    for i, a in enumerate(arrays):
        if not a._fully_valid:  # a dense offset past its own child would read the next input's
            a._check_full(f"concat_arrays input {i}")
    ids = np.concatenate([a.type_codes() for a in arrays])
    n_kids = len(dtype.fields)
    if dtype.mode == "sparse":
        children = [concat_arrays([a.field(k) for a in arrays]) for k in range(n_kids)]
        return make_array(dtype, length, [_new(ids)], children, null_count=0)
    parts, pieces, base = [], [[] for _ in range(n_kids)], np.zeros(n_kids, dtype=np.int64)
    for a in arrays:
        codes, offs = a.type_codes(), a.value_offsets().astype(np.int64)
        shifted = offs.copy()
        for k, code in enumerate(dtype.type_codes):
            # (only the child range this input's slots use: a slice of a dense union keeps its
            # whole children, and take/filter join one slice per run of rows)
            mine = codes == code
            used = offs[mine]
            lo, hi = (int(used.min()), int(used.max()) + 1) if len(used) else (0, 0)
            shifted[mine] += base[k] - lo
            base[k] += hi - lo
            pieces[k].append(a.children[k].slice(lo, hi - lo))
        parts.append(shifted)
    offsets = _fits(np.concatenate(parts), np.dtype("<i4"), "dense union offsets")
    children = [concat_arrays(pieces[k]) for k in range(n_kids)]
    return make_array(dtype, length, [_new(ids), _new(offsets)], children, null_count=0)


def _dictionary_concat(arrays, dtype, length, validity, nulls):
    """Dictionaries appended, indices shifted by the earlier dictionaries' lengths; inputs that
    share one dictionary object (the batches of a file or stream between two dictionary
    messages) keep it once."""
    parts, base, placed = [], 0, {}
    for i, a in enumerate(arrays):
        # an index past its own dictionary would be shifted into the next one
        check_dictionary_indices(a.indices.values(), a.validity if a.null_count else None,
                                 a.offset, len(a.dictionary), f"concat_arrays input {i}")
        idx = a.indices.values().astype(np.int64)
        at = placed.get(id(a.dictionary))
        if at is None:
            at = placed[id(a.dictionary)] = base
            base += len(a.dictionary)
        parts.append(np.where(a.is_valid(), idx + at, 0))
    indices = _fits(np.concatenate(parts), dtype.index_type.numpy_dtype, "dictionary indices")
    seen = set()  # (each dictionary once, in the order first met: as ``placed`` counted them)
    dictionary = concat_arrays([a.dictionary for a in arrays
                                if id(a.dictionary) not in seen and not seen.add(id(a.dictionary))])
    return make_array(dtype, length, [validity, _new(indices)], null_count=nulls,
                      dictionary=dictionary)


def _run_end_encoded_concat(arrays, dtype, length, validity, nulls):
    """The runs each array shows (clipped to its slice) appended, run ends shifted."""
    ends, values, base = [], [], 0
    for i, a in enumerate(arrays):
        if not len(a):
            continue
        # searchsorted over run ends that do not increase finds other rows' runs
        check_run_ends(a.children[0].values(), a.offset + len(a), f"concat_arrays input {i}")
        run_ends = a.children[0].values().astype(np.int64)
        first = int(np.searchsorted(run_ends, a.offset, side="right"))
        last = int(np.searchsorted(run_ends, a.offset + len(a) - 1, side="right"))
        ends.append(np.minimum(run_ends[first:last + 1], a.offset + len(a)) - a.offset + base)
        values.append(a.children[1].slice(first, last - first + 1))
        base += len(a)
    if not values:
        return arrays[0]
    run_ends = _fits(np.concatenate(ends), dtype.run_end_type.numpy_dtype, "run ends")
    run_ends = make_array(dtype.run_end_type, len(run_ends), [None, _new(run_ends)], null_count=0)
    return make_array(dtype, length, [], [run_ends, concat_arrays(values)], null_count=0)


#: how arrays of each type class are joined
_CONCAT = {
    t.NullType: _null_concat, t.BoolType: _bool_concat, t.IntType: _primitive_concat,
    t.FloatType: _primitive_concat, t.DecimalType: _primitive_concat,
    t.DateType: _primitive_concat, t.TimeType: _primitive_concat,
    t.TimestampType: _primitive_concat, t.DurationType: _primitive_concat,
    t.IntervalType: _primitive_concat, t.FixedSizeBinaryType: _fixed_size_binary_concat,
    t.BinaryType: _binary_concat, t.BinaryViewType: _binary_view_concat,
    t.ListType: _list_concat, t.MapType: _list_concat, t.ListViewType: _list_view_concat,
    t.FixedSizeListType: _fixed_size_list_concat, t.StructType: _struct_concat,
    t.UnionType: _union_concat, t.DictionaryType: _dictionary_concat,
    t.RunEndEncodedType: _run_end_encoded_concat,
}

#: this module's type-keyed tables, for tests/types/test_type_coverage.py
TYPE_TABLES = {"concatenation": _CONCAT}
