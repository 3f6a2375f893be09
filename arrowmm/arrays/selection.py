"""Selecting rows by position (``take``) or by a boolean mask (``filter``), as pyarrow does.

Both copy: the result owns new memory, made by gathering fixed-width values with numpy,
each child of a dense union at the offsets its rows pick, or by joining zero-copy runs of
consecutive rows with ``concat_arrays``.  A null index gives a null row; a null in a mask
drops the row (pyarrow's default ``null_selection_behavior="drop"``).  ``Array.take`` /
``filter`` and the batch's go to ``compute.selection`` (through ``hooks``), whose C kernels
take the flat layouts, lists, maps and structs, and which comes here for the rest (unions,
run-end encoded, views); ``as_indices`` and ``as_mask`` read what users pass for both.
"""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np

from .. import hooks, types as t
from .._core._bitmap import pack_bitmap
from ..errors import ArrowIndexError, ArrowInvalid, ArrowNotImplementedError
from .array import (Array, BooleanArray, FixedSizeBinaryArray, NullArray, PrimitiveArray,
                    imported_array, make_array)
from .concat import concat_arrays
from .provenance import copied_view

__all__ = ["take", "filter_mask", "as_indices", "as_mask", "null_source"]


def _new(data):
    return copied_view(data, "taken")


def as_indices(indices, length: int, nulls_into_empty: bool = False
               ) -> Tuple[np.ndarray, Optional[np.ndarray]]:
    """``indices`` (numpy, list, arrowmm or capsule-exporting integer array) as int64 positions
    checked against ``length``, and a bool mask of null indices (None when there is none).
    Null indices into no rows pass with ``nulls_into_empty`` (the caller takes them from
    ``null_source``); ``ArrowIndexError`` otherwise, as for an index out of bounds."""
    nulls = None
    if not isinstance(indices, Array) and hasattr(indices, "__arrow_c_array__"):
        indices = imported_array(indices)
    if isinstance(indices, Array):
        if not isinstance(indices.type, t.IntType):
            raise ArrowInvalid(f"take: indices must be integers, got a {indices.type} array")
        valid = indices._valid_mask()
        values = np.asarray(indices.values(), dtype=np.int64)
        if valid is not None:
            nulls = ~valid
            values = np.where(valid, values, 0)
    else:
        if isinstance(indices, (list, tuple)) and any(i is None for i in indices):
            nulls = np.array([i is None for i in indices], dtype=bool)
            indices = [0 if i is None else i for i in indices]
        arr = np.asarray(indices)
        if arr.size == 0:
            arr = arr.astype(np.int64)
        if arr.ndim != 1 or arr.dtype.kind not in "iu":
            raise ArrowInvalid(f"take: indices must be a 1-D sequence of integers, got "
                               f"{arr.dtype} with shape {arr.shape}")
        if arr.dtype.kind == "u" and arr.size and int(arr.max()) > np.iinfo(np.int64).max:
            raise ArrowIndexError(f"take: index {int(arr.max())} out of bounds for length "
                                  f"{length}")
        values = arr.astype(np.int64)
    live = values if nulls is None else values[~nulls]
    if live.size:
        lo, hi = int(live.min()), int(live.max())
        if lo < 0 or hi >= length:
            raise ArrowIndexError(f"take: index {lo if lo < 0 else hi} out of bounds for length "
                                  f"{length} (negative indices are not counted from the end, as "
                                  f"in pyarrow)")
    if nulls is not None and not nulls.any():
        nulls = None
    if nulls is not None and length == 0 and not nulls_into_empty:
        raise ArrowIndexError("take: null indices into no rows are not supported here")
    return values, nulls


def null_source(array: Array, nulls: Optional[np.ndarray]) -> Array:
    """What ``take`` reads ``array``'s rows from: ``array`` itself, or when it is empty and
    there are null indices (every index then is null), one null of its type for them all to
    point at (position 0): pyarrow's null rows."""
    if nulls is None or len(array):
        return array
    if isinstance(array.type, t.UnionType):
        raise ArrowNotImplementedError(f"take: null indices into an empty {array.type} array "
                                       f"are not supported")
    return hooks.build_array([None], array.type)


def _foreign_chunks(mask) -> Optional[list]:
    """The chunks of a chunked mask (arrowmm's or pyarrow's ChunkedArray: a ``chunks`` list,
    no ``__arrow_c_array__``), or None for any other mask."""
    if isinstance(mask, Array) or hasattr(mask, "__arrow_c_array__"):
        return None
    chunks = getattr(mask, "chunks", None)
    return chunks if isinstance(chunks, list) else None


def as_mask(mask, length: int) -> np.ndarray:
    """``mask`` (numpy bool, list of bools / None, arrowmm or capsule-exporting boolean array,
    or a chunked array of them) as a numpy bool array of ``length`` with nulls False (they drop
    their row)."""
    if type(mask).__name__ == "Expression" and type(mask).__module__.startswith("pyarrow"):
        raise ArrowInvalid(f"filter: {mask} is a pyarrow.compute.Expression; write the filter "
                           f"with arrowmm.field (arrowmm.field('x') > 1), or pass a boolean mask")
    chunks = _foreign_chunks(mask)
    if chunks is not None:
        parts = [as_mask(c, len(c)) for c in chunks]
        out = np.concatenate(parts) if parts else np.zeros(0, dtype=np.bool_)
        if len(out) != length:
            raise ArrowInvalid(f"filter: the mask has {len(out)} values, the data {length} "
                               f"rows; they must be the same length")
        return out
    if not isinstance(mask, Array) and hasattr(mask, "__arrow_c_array__"):
        mask = imported_array(mask)
    if isinstance(mask, Array):
        if not isinstance(mask.type, t.BoolType):
            raise ArrowInvalid(f"filter: the mask must be boolean, got a {mask.type} array")
        out = mask.values()
        valid = mask._valid_mask()
        if valid is not None:
            out = out & valid
    else:
        if isinstance(mask, (list, tuple)):
            if any(m is not None and not isinstance(m, (bool, np.bool_)) for m in mask):
                raise ArrowInvalid("filter: a mask list must hold only True, False or None")
            mask = np.array([bool(m) for m in mask], dtype=np.bool_)  # ([] too)
        out = np.asarray(mask)
        if out.ndim != 1 or out.dtype != np.bool_:
            raise ArrowInvalid(f"filter: the mask must be a 1-D boolean array, got {out.dtype} "
                               f"with shape {out.shape}")
    if len(out) != length:
        raise ArrowInvalid(f"filter: the mask has {len(out)} values, the data {length} rows; "
                           f"they must be the same length")
    return out


def _runs(values: np.ndarray):
    """(start, length) of each run of consecutive increasing positions in ``values``."""
    if values.size == 0:
        return []
    breaks = np.flatnonzero(np.diff(values) != 1) + 1
    starts = np.concatenate(([0], breaks))
    ends = np.concatenate((breaks, [values.size]))
    return [(int(values[s]), int(e - s)) for s, e in zip(starts.tolist(), ends.tolist())]


def _with_nulls(out: Array, nulls: Optional[np.ndarray]) -> Array:
    """``out`` with the rows where ``nulls`` is True made null."""
    if nulls is None or isinstance(out, NullArray):
        return out
    if out.validity is None and out.null_count == 0 and not out._buffers:
        raise ArrowNotImplementedError(f"take: null indices into a {out.type} array are not "
                                       f"supported")
    if isinstance(out.type, t.UnionType):
        return _union_with_nulls(out, nulls)
    if isinstance(out.type, t.RunEndEncodedType):  # (pyarrow has no take for it at all)
        raise ArrowNotImplementedError(f"take: null indices into a {out.type} array are not "
                                       f"supported (the type has no validity bitmap)")
    valid = out.is_valid() & ~nulls
    bitmap, set_count = pack_bitmap(valid)
    # the bitmap is packed from bit 0: rebuild at offset 0 when the array is not there already
    if out.offset:
        raise ArrowInvalid("take: internal offset")  # (take always returns offset-0 arrays)
    return make_array(out.type, len(out), [_new(bitmap)] + list(out._buffers[1:]), out.children,
                      len(out) - set_count, 0, out.dictionary)


def _union_with_nulls(out: Array, nulls: np.ndarray) -> Array:
    """``out`` (a union ``take`` made, at offset 0) with the rows where ``nulls`` is True
    pointing at a null value of its first child, as pyarrow's take answers a null index (a
    union has no bitmap of its own): for a sparse union that child's slot is made null, a
    dense union's first child gets a null value for each."""
    n = len(out)
    codes = np.array(out.type_codes(), dtype=np.int8)
    codes[nulls] = out.type.type_codes[0]
    children = list(out.children)
    first = children[0]
    if out.type.mode == "sparse":
        first = first.slice(0, n)
        if first.offset or len(first) != n:
            first = concat_arrays([first, first.slice(0, 0)])  # (a copy at offset 0)
        children[0] = _with_nulls(first, nulls)
        buffers = [_new(codes)]
    else:  # (the first child rebuilt in row order: offsets into a child must not decrease)
        offsets = np.array(out.value_offsets(), dtype="<i4")
        rows = np.flatnonzero(codes == out.type.type_codes[0])
        picks = [None if nulls[r] else int(offsets[r]) for r in rows.tolist()]
        children[0] = take(first, picks) if len(first) else \
            hooks.build_array(picks, first.type)  # (all None: only null rows point there)
        offsets[rows] = np.arange(len(rows), dtype="<i4")
        buffers = [_new(codes), _new(offsets)]
    return make_array(out.type, n, buffers, children, 0, 0)


def _dense_union_take(array: Array, values: np.ndarray) -> Array:
    """A dense union's rows at ``values``: each child taken at the offsets of the rows that
    pick it (joining one slice per run of rows would copy the children's used ranges run by
    run).  Type ids and offsets of the rows taken are checked first: they index the children."""
    codes = np.asarray(array.type_codes())[values]
    offsets = np.asarray(array.value_offsets()).astype(np.int64)[values]
    new_offsets = np.empty(len(values), dtype="<i4")
    known = np.zeros(len(values), dtype=bool)
    children = []
    for child, code in zip(array.children, array.type.type_codes):
        rows = np.flatnonzero(codes == code)
        known[rows] = True
        picks = offsets[rows]
        bad = np.flatnonzero((picks < 0) | (picks >= len(child)))
        if bad.size:
            row = int(values[rows[bad[0]]])
            raise ArrowInvalid(f"take of {array.type}: offset[{row}]={int(picks[bad[0]])} >= "
                               f"length {len(child)} of child {code}" if picks[bad[0]] >= 0 else
                               f"take of {array.type}: offset[{row}]={int(picks[bad[0]])} < 0")
        children.append(take(child, picks))
        new_offsets[rows] = np.arange(len(rows), dtype="<i4")
    if not known.all():
        row = int(values[np.flatnonzero(~known)[0]])
        raise ArrowInvalid(f"take of {array.type}: type_id[{row}]={int(array.type_codes()[row])} "
                           f"names no child")
    return make_array(array.type, len(values), [_new(codes.astype(np.int8)), _new(new_offsets)],
                      children, 0, 0)


def take(array: Array, indices) -> Array:
    """The rows of ``array`` at ``indices``, in that order (a copy); a null index, a null row."""
    values, nulls = as_indices(indices, len(array), nulls_into_empty=True)
    array = null_source(array, nulls)
    n = int(values.size)
    if isinstance(array, NullArray):
        return make_array(array.type, n, [], null_count=n)
    if type(array) in (PrimitiveArray, BooleanArray, FixedSizeBinaryArray) and len(array):
        if isinstance(array, BooleanArray):
            data = pack_bitmap(array.values()[values])[0]
        elif isinstance(array, FixedSizeBinaryArray):
            width = array.type.byte_width
            raw = np.frombuffer(array._buffers[1].to_bytes(), dtype=np.uint8) if width else None
            if width:
                rows = raw[array.offset * width:(array.offset + len(array)) * width].reshape(-1, width)
                data = np.ascontiguousarray(rows[values]).reshape(-1)
            else:
                data = np.zeros(0, dtype=np.uint8)
        else:
            data = np.ascontiguousarray(array.values()[values])
        valid = array._valid_mask()
        if valid is not None or nulls is not None:
            keep = np.ones(n, dtype=bool) if valid is None else valid[values]
            if nulls is not None:
                keep &= ~nulls
            bitmap, set_count = pack_bitmap(keep)
            return make_array(array.type, n, [_new(bitmap), _new(data)], null_count=n - set_count)
        return make_array(array.type, n, [None, _new(data)], null_count=0)
    if n == 0:
        out = array.slice(0, 0)
        return concat_arrays([out, out]) if len(array) else out
    if isinstance(array.type, t.UnionType) and array.type.mode == "dense":
        return _with_nulls(_dense_union_take(array, values), nulls)
    pieces = [array.slice(start, count) for start, count in _runs(values)]
    out = concat_arrays(pieces) if len(pieces) > 1 else concat_arrays([pieces[0], array.slice(0, 0)])
    return _with_nulls(out, nulls)


def filter_mask(array: Array, mask) -> Array:
    """The rows of ``array`` where ``mask`` is True (nulls in the mask drop their row)."""
    keep = as_mask(mask, len(array))
    return take(array, np.flatnonzero(keep))

