"""The distinct values of a column: ``dictionary_encode``, ``unique`` and ``value_counts``,
as pyarrow's, over the codes ``_hashing`` gives in C.

Numbers, temporals, decimals and fixed-size binaries are keys by their stored bytes (floats
by their bits, as pyarrow: ``-0.0`` and ``0.0`` are two values, NaNs of other bits too),
booleans by their bits, binary and string values (32- or 64-bit offsets) by their bytes, the
null type as all nulls, dictionary arrays by their indices (``unique`` and ``value_counts``
give dictionary values; ``dictionary_encode`` returns them as they are; the chunks of a
column with several dictionaries by their entries' values).  Other types (nested, run-end
encoded, extension types) raise ``ArrowNotImplementedError`` naming the type; views are
hashed by the bytes they point at.  The distinct values are a ``take`` of the column
at each one's first row, so they keep its type.
"""
from __future__ import annotations

from typing import Tuple, Union

import numpy as np

from .. import hooks, types as t
from .._core._bitmap import unpack_bitmap
from ..arrays.array import (Array, BinaryArray, BooleanArray, DictionaryArray,
                            FixedSizeBinaryArray, NullArray, PrimitiveArray, make_array)
from ..arrays.chunked import ChunkedArray
from ..arrays.provenance import copied_view
from ..errors import ArrowInvalid, ArrowNotImplementedError
from . import _hashing
from .selection import take_array

__all__ = ["dictionary_encode", "unique", "value_counts", "hashable", "codes"]

_NULL_ENCODINGS = ("mask", "encode")
_INDEX_TYPE = t.int32()


def hashable(dtype: t.DataType) -> bool:
    """Whether ``codes`` takes values of ``dtype``."""
    return (isinstance(dtype, (t.NullType, t.BoolType, t.BinaryType, t.BinaryViewType,
                               t.FixedWidthType))
            and not isinstance(dtype, (t.DictionaryType, t.ExtensionType)))


def codes(array: Array, encode_nulls: bool) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(indices, firsts, counts)`` of ``array``'s values (see ``_hashing``): int32 codes in
    first-seen order, each code's first row and its number of rows; nulls skipped (index 0)
    unless ``encode_nulls``."""
    cls = type(array)
    n = len(array)
    if cls is NullArray:  # (pyarrow's null type: one null entry, nulls masked or not)
        if n:
            return (np.zeros(n, np.int32), np.zeros(1, np.int64), np.array([n], np.int64))
        return np.zeros(0, np.int32), np.zeros(0, np.int64), np.zeros(0, np.int64)
    if cls is DictionaryArray:  # (by index, as pyarrow: equal entries at two indices are two)
        return codes(array.indices, encode_nulls)
    if isinstance(array.type, t.BinaryViewType):  # (by the bytes the views point at, gathered)
        flat = t.large_string() if array.type.utf8 else t.large_binary()
        return codes(hooks.cast_array(array, flat, True), encode_nulls)
    if not hashable(array.type):
        raise ArrowNotImplementedError(f"dictionary_encode / unique / value_counts: no hash "
                                       f"kernel for values of type {array.type}")
    bitmap = array._nulls_bitmap()
    if cls is BinaryArray:
        return _hashing.hash_binary(np.ascontiguousarray(array.value_offsets()),
                                    array._buffers[2], bitmap, array.offset, encode_nulls)
    if cls is BooleanArray:
        bits = unpack_bitmap(array._buffers[1], array.offset, n).view(np.uint8)
        return _hashing.hash_fixed(bits, 0, 1, n, bitmap, array.offset, encode_nulls)
    if cls in (PrimitiveArray, FixedSizeBinaryArray):
        width = array.type.byte_width
        if width == 0:  # (fixed_size_binary(0): every value is b"")
            return _hashing.hash_fixed(np.zeros(n, np.uint8), 0, 1, n, bitmap, array.offset,
                                       encode_nulls)
        return _hashing.hash_fixed(array._buffers[1], array.offset, width, n, bitmap,
                                   array.offset, encode_nulls)
    raise ArrowNotImplementedError(f"dictionary_encode / unique / value_counts: no hash "
                                   f"kernel for a {cls.__name__} of type {array.type}")


def _encoded_array(array: Array, indices: np.ndarray, dictionary: Array,
                   null_encoding: str) -> Array:
    """The dictionary array of ``indices`` (one per row of ``array``) into ``dictionary``:
    masked where ``array`` is null unless nulls are encoded."""
    want = t.DictionaryType(_INDEX_TYPE, array.type)
    validity, nulls = None, 0
    if null_encoding == "mask":
        valid = array._valid_mask() if type(array) is not NullArray else \
            np.zeros(len(array), np.bool_)
        if valid is not None:
            nulls = len(array) - int(np.count_nonzero(valid))
            if nulls:
                validity = copied_view(np.packbits(valid, bitorder="little"), "encoded")
    return make_array(want, len(array), [validity, copied_view(indices, "encoded")],
                      null_count=nulls, dictionary=dictionary)


def _null_encoding(null_encoding: str) -> str:
    if null_encoding not in _NULL_ENCODINGS:
        raise ArrowInvalid(f"dictionary_encode: null_encoding={null_encoding!r}: expected "
                           f"'mask' or 'encode'")
    return null_encoding


def _whole(data: Union[Array, ChunkedArray], what: str) -> Array:
    """``data``'s values as one array (a ChunkedArray's chunks joined: one table for all)."""
    if isinstance(data, Array):
        return data
    if isinstance(data, ChunkedArray):
        if not data.chunks:
            return _empty(data.type)
        return data.combine_chunks()
    raise ArrowInvalid(f"{what}: expected an arrowmm Array or ChunkedArray, got "
                       f"{type(data).__name__}")


def _empty(dtype: t.DataType) -> Array:
    """An array of ``dtype`` with no rows (a dictionary type's with an empty dictionary)."""
    if isinstance(dtype, t.DictionaryType):
        indices = copied_view(np.zeros(0, dtype.index_type.numpy_dtype), "empty")
        return make_array(dtype, 0, [None, indices], null_count=0,
                          dictionary=_empty(dtype.value_type))
    return make_array(dtype, 0, _empty_buffers(dtype))


def _row_codes(data: Union[Array, ChunkedArray], whole: Array):
    """``codes(whole, True)``; for the chunks of a dictionary column with several dictionaries
    (deltas, replacements, chunks encoded apart), joined into one whose entries may repeat,
    each row keyed by its entry's value, not its index: one value is one entry, as pyarrow's
    unified dictionaries give."""
    if not (isinstance(data, ChunkedArray) and isinstance(whole.type, t.DictionaryType)
            and len({id(c.dictionary) for c in data.chunks}) > 1):
        return codes(whole, True)
    entry_codes = codes(whole.dictionary, True)[0].astype(np.int64)
    indices = whole.indices
    idx = np.asarray(indices.values()).astype(np.int64)
    valid = indices._valid_mask()
    if valid is not None:
        idx = np.where(valid, idx, 0)
    per_row = entry_codes[idx] if len(entry_codes) else np.zeros(len(idx), np.int64)
    validity, nulls = None, 0
    if valid is not None:
        nulls = len(idx) - int(np.count_nonzero(valid))
        validity = copied_view(np.packbits(valid, bitorder="little"), "keyed") if nulls else None
    keyed = make_array(t.int64(), len(idx), [validity, copied_view(per_row, "keyed")],
                       null_count=nulls)
    return codes(keyed, True)


def _empty_buffers(dtype: t.DataType) -> list:
    if isinstance(dtype, t.NullType):
        return []
    if isinstance(dtype, t.BinaryType):
        return [None, copied_view(np.zeros(1, dtype.offset_dtype), "empty"), None]
    return [None, None]


def dictionary_encode(data: Union[Array, ChunkedArray],
                      null_encoding: str = "mask") -> Union[Array, ChunkedArray]:
    """``data`` as a dictionary array (int32 indices) of its distinct values, first seen
    first: pyarrow's ``dictionary_encode``.  A ChunkedArray gives one chunk per non-empty
    chunk, all sharing one dictionary.  ``null_encoding="mask"`` leaves nulls out of the
    dictionary (a null index); ``"encode"`` makes null an entry of its own.  A dictionary
    array is returned as it is.

    Examples
    --------
    >>> import arrowmm
    >>> from arrowmm import compute
    >>> encoded = compute.dictionary_encode(arrowmm.array(["b", None, "a", "b"]))
    >>> encoded.dictionary.to_pylist(), encoded.to_pylist()
    (['b', 'a'], ['b', None, 'a', 'b'])
    """
    null_encoding = _null_encoding(null_encoding)
    whole = _whole(data, "dictionary_encode")
    if isinstance(whole.type, t.DictionaryType):
        return data
    indices, firsts, _ = codes(whole, null_encoding == "encode")
    dictionary = take_array(whole, firsts)
    out = _encoded_array(whole, indices, dictionary, null_encoding)
    if isinstance(data, Array):
        return out
    chunks, at = [], 0
    for chunk in data.chunks:
        if len(chunk):  # (pyarrow's leaves the empty chunks out)
            chunks.append(out.slice(at, len(chunk)))
        at += len(chunk)
    return ChunkedArray(chunks, out.type)


def unique(data: Union[Array, ChunkedArray]) -> Array:
    """The distinct values of ``data``, first seen first, a null among them where there is
    one: pyarrow's ``unique``."""
    whole = _whole(data, "unique")
    _, firsts, _ = _row_codes(data, whole)
    return take_array(whole, firsts)


def value_counts(data: Union[Array, ChunkedArray]) -> Array:
    """The distinct values of ``data`` and how many rows hold each, first seen first (a null
    among them where there is one): a ``struct<values, counts: int64>`` array, pyarrow's
    ``value_counts``."""
    whole = _whole(data, "value_counts")
    _, firsts, counts = _row_codes(data, whole)
    values = take_array(whole, firsts)
    counted = make_array(t.int64(), len(counts), [None, copied_view(counts, "counted")],
                         null_count=0)
    dtype = t.StructType([t.Field("values", whole.type), t.Field("counts", t.int64())])
    return make_array(dtype, len(counts), [None], children=[values, counted], null_count=0)


hooks.fill("dictionary_encode", dictionary_encode)
hooks.fill("unique", unique)
hooks.fill("value_counts", value_counts)
