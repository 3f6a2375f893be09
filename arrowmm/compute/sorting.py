"""Sort indices of a table's rows by one or more columns, as ``pyarrow.compute.sort_indices``
orders them: stable, nulls last, NaN after every number (and before nulls) in either order
(``at_start``: nulls, then NaN, then the numbers).

Each key becomes a rank per row (numpy's stable sort over the column's values; strings and
binary through their Python values, one object per row; decimal128 / decimal256 by their
64-bit words), then ``numpy.lexsort`` orders the rows by (null, NaN, rank) of each key in
turn.  Numbers, decimals, booleans, temporals, strings, binary and fixed-size binary sort,
and dictionary-encoded columns of those by their values (as pyarrow's
``RecordBatch.sort_by`` and ``array_sort_indices`` do: a row whose index or whose value is
null is a null row); a null column keeps its order; a struct sorts by its fields in order,
each as a key of its own (a null field last in either order, a null struct null in every
field), as pyarrow's; other types raise ``ArrowNotImplementedError`` (``ArrowTypeError``
for a table's or batch's columns, as pyarrow's).
"""
from __future__ import annotations

from typing import List, Sequence, Tuple

import numpy as np

from .. import types as t
from ..arrays.array import (Array, BinaryArray, BinaryViewArray, BooleanArray, DictionaryArray,
                            FixedSizeBinaryArray, NullArray, PrimitiveArray, StructArray)
from ..arrays.concat import concat_arrays
from ..errors import ArrowInvalid, ArrowNotImplementedError, ArrowTypeError
from .predicate import _checked, _validity

__all__ = ["sort_keys", "key_columns", "sort_indices"]

_ORDERS = ("ascending", "descending")
_PLACEMENTS = ("at_start", "at_end")


def sort_keys(sorting, null_placement=None) -> List[Tuple[str, str, str]]:
    """``sorting`` (a column name, or a list of ``(name, "ascending" | "descending")``, with a
    third item ``"at_start" | "at_end"`` where its nulls go, as pyarrow's ``SortOptions``) as
    a list of ``(name, order, null placement)``, checked; ``null_placement`` (default: each
    key's, else ``"at_end"``) overrides every key's, as pyarrow's does."""
    if null_placement is not None and null_placement not in _PLACEMENTS:
        raise ArrowInvalid(f"sort_by: null_placement {null_placement!r} is not 'at_start' "
                           f"or 'at_end'")
    if isinstance(sorting, str):
        return [(sorting, "ascending", null_placement or "at_end")]
    if not isinstance(sorting, (list, tuple)) or not sorting:
        raise ArrowInvalid(f"sort_by: expected a column name or a non-empty list of "
                           f"(name, order) pairs, got {sorting!r}")
    out = []
    for key in sorting:
        if isinstance(key, str):
            raise ArrowInvalid(f"sort_by: {key!r} in a list needs an order: (name, "
                               f"'ascending' or 'descending')")
        if not isinstance(key, (list, tuple)) or len(key) not in (2, 3) or \
                not isinstance(key[0], str):
            raise ArrowInvalid(f"sort_by: {key!r} is not a (name, order) pair or a (name, "
                               f"order, null placement) triple")
        if key[1] not in _ORDERS:
            raise ArrowInvalid(f"sort_by: order {key[1]!r} of {key[0]!r} is not 'ascending' "
                               f"or 'descending'")
        placement = key[2] if len(key) == 3 else "at_end"
        if placement not in _PLACEMENTS:
            raise ArrowInvalid(f"sort_by: null placement {placement!r} of {key[0]!r} is not "
                               f"'at_start' or 'at_end'")
        out.append((key[0], key[1], null_placement or placement))
    return out


def key_columns(names: Sequence[str], keys: Sequence[Tuple[str, str, str]]) -> List[int]:
    """The position of each key's name in ``names`` (a schema's, or a struct's fields'): one
    column of that name, or ``ArrowInvalid`` naming the key and the columns there are
    (pyarrow's error type)."""
    names = list(names)
    out = []
    for name, _, _ in keys:
        found = [i for i, n in enumerate(names) if n == name]
        if len(found) != 1:
            why = "is not a column" if not found else f"names {len(found)} columns"
            raise ArrowInvalid(f"sort_by: sort key {name!r} {why}; the columns are {names}")
        out.append(found[0])
    return out


def _key_values(array: Array, name: str):
    """(values to rank, or None for all null; NaN flags or None) of one column."""
    dtype = array.type
    if type(array) is PrimitiveArray and isinstance(dtype, (t.IntType, t.FloatType, t.DateType,
                                                            t.TimeType, t.TimestampType,
                                                            t.DurationType)):
        x = array.values()
        if isinstance(dtype, t.FloatType):
            x = x.astype(np.float64)
            nan = np.isnan(x)
            return np.where(nan, 0.0, x), nan if nan.any() else None
        return x, None
    if type(array) is PrimitiveArray and isinstance(dtype, t.DecimalType):
        if dtype.byte_width <= 8:  # (the unscaled ints: one scale per column)
            return array.values(), None
        return _wide_ranks(array.values(), dtype.byte_width // 8), None
    if type(array) is BooleanArray:
        return array.values(), None
    if type(array) in (BinaryArray, BinaryViewArray):
        return _objects(array, "" if dtype.utf8 else b""), None
    if type(array) is FixedSizeBinaryArray:
        return _objects(array, b""), None
    if type(array) is NullArray:
        return np.zeros(len(array), dtype=np.int8), None
    raise ArrowNotImplementedError(f"sort_by: column {name!r} is {dtype}: sorting supports "
                                   f"numbers, decimals, booleans, temporals, strings, binary, "
                                   f"null and structs of them")


def _wide_ranks(raw: np.ndarray, words: int) -> np.ndarray:
    """Dense ranks of little-endian two's-complement integers of ``words`` 64-bit words
    (decimal128 / decimal256 unscaled values): ordered by their top word, signed, then the
    lower ones, unsigned, in one ``numpy.lexsort``."""
    n = len(raw)
    w = np.ascontiguousarray(raw).view("<u8").reshape(n, words)
    keys = [w[:, i] for i in range(words - 1)] + [w[:, words - 1].view("<i8")]
    order = np.lexsort(keys)
    ranked = w[order]
    new = np.ones(n, dtype=bool)
    if n > 1:
        new[1:] = (ranked[1:] != ranked[:-1]).any(axis=1)
    out = np.empty(n, dtype=np.int64)
    out[order] = np.cumsum(new) - 1
    return out


def _objects(array: Array, empty) -> np.ndarray:
    """The Python values as an object array, a null as ``empty`` (null rows tie anyway)."""
    objs = np.empty(len(array), dtype=object)
    objs[:] = [empty if v is None else v for v in array.to_pylist()]
    return objs


def _dictionary_key(array: DictionaryArray, name: str):
    """(rank of each row's value, None, validity or None) of a dictionary column: its
    dictionary's values ranked once, each row taking its index's rank; a null index or a
    null value is a null row.  NaN ranks as the greatest value, so that it comes first in a
    descending sort, as pyarrow ranks a dictionary's values (a plain float column has its
    NaN last in either order)."""
    dictionary = array.dictionary
    values, nan = _key_values(dictionary, name)
    rank = _ranks(values)
    if nan is not None:
        rank = np.where(nan, rank.max() + 1, rank)
    idx = array.indices.values().astype(np.int64)
    valid = _validity(array)
    live = idx if valid is None else idx[valid]
    if len(live) and (live.min() < 0 or live.max() >= len(dictionary)):
        bad = live[(live < 0) | (live >= len(dictionary))][0]
        raise ArrowInvalid(f"sort_by: column {name!r}: dictionary index {bad} is outside its "
                           f"{len(dictionary)}-value dictionary")
    if valid is not None:
        idx = np.where(valid, idx, 0)  # (a null slot's index is not a position)
    if not len(dictionary):
        return np.zeros(len(idx), dtype=np.int64), None, valid
    return rank[idx], None, array.logical_validity()


def _ranks(values: np.ndarray) -> np.ndarray:
    """Each value's rank among the distinct values (equal values, equal ranks)."""
    order = np.argsort(values, kind="stable")
    ranked = values[order]
    if len(ranked):
        new = np.empty(len(ranked), dtype=bool)
        new[0] = True
        new[1:] = ranked[1:] != ranked[:-1]
        dense = np.cumsum(new) - 1
    else:
        dense = np.zeros(0, dtype=np.int64)
    out = np.empty(len(values), dtype=np.int64)
    out[order] = dense
    return out


def sort_indices(columns: Sequence[Array], keys: Sequence[Tuple[str, str, str]],
                 outer=None, *, table: bool = False) -> np.ndarray:
    """The row order (int64 positions) sorting ``columns`` (one whole array per key, in the
    order of ``keys``) as ``keys`` say; ``outer`` (the fields of a struct array: where it is
    not null) makes a null struct null in every key.  A key type that does not sort raises
    ``ArrowNotImplementedError``, or with ``table`` (a table's or batch's columns)
    ``ArrowTypeError``, as pyarrow's array and table sorts do."""
    sort_by: list = []  # numpy.lexsort's keys: the last is the primary one
    n = len(columns[0]) if columns else 0
    for array, (name, order, placement) in zip(columns, keys):
        # (ranks are of stored ints: a value to_pylist refuses would sort as another)
        _checked(array, name, "sort_by")
        try:
            sort_by.append(_key_parts(array, name, order, placement == "at_start", outer))
        except ArrowNotImplementedError as exc:
            if not table:
                raise
            raise ArrowTypeError(str(exc)) from None
    flat = []
    for parts in reversed(sort_by):
        flat.extend(parts)
    if not flat:
        return np.arange(n, dtype=np.int64)
    return np.lexsort(flat).astype(np.int64)


def _key_parts(array: Array, name: str, order: str, nulls_first: bool, outer=None) -> list:
    """One key's numpy.lexsort keys, the least significant first: (rank, NaN flag, null flag);
    ``nulls_first`` puts the nulls, then NaN, before the numbers (pyarrow's ``at_start``).
    A struct's are its fields' in turn, the first field the most significant; a null struct
    is null in every field (``outer``: the rows the structs around hold), as pyarrow's sort
    flattens it."""
    if type(array) is StructArray:
        valid = array.logical_validity()
        if outer is not None:
            valid = outer if valid is None else valid & outer
        parts = []
        for i in reversed(range(array.type.num_fields)):
            parts.extend(_key_parts(array.field(i), f"{name}.{array.type.field(i).name}",
                                    order, nulls_first, valid))
        return parts
    if type(array) is DictionaryArray:
        rank, nan, valid = _dictionary_key(array, name)
    else:
        values, nan = _key_values(array, name)
        rank = _ranks(values)
        valid = array.logical_validity()
    if outer is not None:
        valid = outer if valid is None else valid & outer
    if order == "descending":
        rank = (rank.max() if len(rank) else 0) - rank
    parts = [rank]
    if nan is not None:
        rank[nan] = 0  # (NaN rows tie, so they stay in their order)
        is_nan = nan if valid is None else nan & valid
        # NaN after the numbers in either order (before them, after the nulls, at_start)
        parts.append((~is_nan if nulls_first else is_nan).astype(np.int8))
    if valid is not None:
        rank[~valid] = 0  # (null rows tie too: a null slot's bytes are not a value)
        parts.append((valid if nulls_first else ~valid).astype(np.int8))
    return parts


def whole(chunks: Sequence[Array]) -> Array:
    """One array of ``chunks`` (the chunk itself when there is one)."""
    if len(chunks) == 1:
        return chunks[0]
    return concat_arrays(list(chunks))
