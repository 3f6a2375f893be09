"""numpy arrays as pyarrow's ``to_numpy(zero_copy_only=False)`` gives them, for the types with no view.

Why this module exists: when a numpy view of an array is impossible (nulls,
bit-packed booleans, nested or variable-width values), users still expect
the array pyarrow would give them, since code that ported from pyarrow
compares with it: integers with nulls become float64 with NaN, booleans
with nulls objects with None, temporal values NaT, lists numpy arrays per
row, structs dicts, maps lists of ``(key, value)`` tuples, dictionary and
run-end encoded arrays their decoded values.  ``pandas_compat`` builds on
these for ``to_pandas``.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from .. import types as t
from .._core._offsets import check_run_ends
from ..errors import ArrowInvalid, ArrowNotImplementedError

__all__ = ["object_array", "with_nulls", "convert"]


def object_array(values) -> np.ndarray:
    """A 1-D object array holding ``values`` as they are (tuples and arrays stay elements)."""
    values = list(values)
    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        out[i] = v
    return out


def with_nulls(values: np.ndarray, valid: Optional[np.ndarray]) -> np.ndarray:
    """``values`` with its null slots (``valid`` False) filled as pyarrow fills them.

    Integers turn into float64 with NaN, floats keep their dtype with NaN,
    datetime64/timedelta64 take NaT, booleans and everything else become
    objects with None.  ``values`` itself is never written.
    """
    if valid is None or valid.all():
        return values
    kind = values.dtype.kind
    if kind in "iu":
        out = values.astype(np.float64)
        out[~valid] = np.nan
    elif kind == "f":
        out = values.copy()
        out[~valid] = np.nan
    elif kind in "mM":
        out = values.copy()
        out[~valid] = np.array("NaT", dtype=values.dtype)
    else:
        out = values.astype(object) if kind != "O" else values.copy()
        out[~valid] = None
    return out


def _python_items(values: np.ndarray) -> list:
    """Elements of a converted child as row values: Python numbers, else the elements as they are."""
    return values.tolist() if values.dtype.kind in "biuf" else list(values)


def _elements(array) -> np.ndarray:
    """Every value of ``array`` converted (what its parent's rows are built from)."""
    return array.to_numpy(zero_copy_only=False)


def _list_rows(array) -> np.ndarray:
    """list / large_list / map offsets -> one numpy array per row (None for null rows)."""
    offs = array.value_offsets().astype(np.int64)
    base = int(offs[0]) if len(offs) else 0
    part = array.children[0].slice(base, int(offs[-1]) - base) if len(offs) else array.children[0]
    if isinstance(array.type, t.MapType):
        values = _map_entries(part)
    else:
        values = _elements(part)
    rows = [values[s - base:e - base] for s, e in zip(offs[:-1].tolist(), offs[1:].tolist())]
    return _rows_with_nulls(rows, array)


def _list_view_rows(array) -> np.ndarray:
    values = _elements(array.children[0])
    offs = array.value_offsets().astype(np.int64).tolist()
    sizes = array.value_sizes().astype(np.int64).tolist()
    return _rows_with_nulls([values[o:o + n] for o, n in zip(offs, sizes)], array)


def _fixed_size_list_rows(array) -> np.ndarray:
    size = array.type.list_size
    values = _elements(array.flatten())
    return _rows_with_nulls([values[i * size:(i + 1) * size] for i in range(len(array))], array)


def _rows_with_nulls(rows: list, array) -> np.ndarray:
    valid = array._valid_mask()
    if valid is not None:
        rows = [r if ok else None for r, ok in zip(rows, valid.tolist())]
    return object_array(rows)


def _struct_rows(array) -> list:
    """Row dicts of a struct array (nulls of the struct itself not applied)."""
    names = [f.name for f in array.type.fields]
    columns = []
    for i in range(len(names)):
        child = array.field(i)
        valid = child._valid_mask()
        items = _python_items(_elements(child))
        if valid is not None:
            items = [v if ok else None for v, ok in zip(items, valid.tolist())]
        columns.append(items)
    return [dict(zip(names, row)) for row in zip(*columns)] if columns else \
        [{} for _ in range(len(array))]


def _map_entries(entries) -> np.ndarray:
    """The ``(key, value)`` tuples of a map's entries struct."""
    pairs = [tuple(row.values()) for row in _struct_rows(entries)]
    return object_array(pairs)


def _decode(values: np.ndarray, positions: np.ndarray, valid: Optional[np.ndarray]) -> np.ndarray:
    """``values[positions]`` with null slots filled (positions under nulls are not read)."""
    if len(values) == 0:
        return with_nulls(np.zeros(len(positions), dtype=np.float64),
                          np.zeros(len(positions), dtype=bool))
    if valid is not None:
        positions = np.where(valid, positions, 0)
    return with_nulls(values[positions], valid)


def convert(array) -> np.ndarray:
    """What pyarrow's ``to_numpy(zero_copy_only=False)`` gives for a null, nested, dictionary or
    run-end encoded array (the array classes convert their own flat types)."""
    dtype = array.type
    if isinstance(dtype, t.NullType):
        return object_array([None] * len(array))
    if isinstance(dtype, (t.MapType, t.ListType)):
        return _list_rows(array)
    if isinstance(dtype, t.ListViewType):
        return _list_view_rows(array)
    if isinstance(dtype, t.FixedSizeListType):
        return _fixed_size_list_rows(array)
    if isinstance(dtype, t.StructType):
        return _rows_with_nulls(_struct_rows(array), array)
    if isinstance(dtype, t.DictionaryType):
        indices = array.indices.values().astype(np.intp)
        valid = array._valid_mask()
        live = indices if valid is None else indices[valid]
        n = len(array.dictionary)
        if live.size and (int(live.min()) < 0 or int(live.max()) >= n):
            bad = int(live.min()) if int(live.min()) < 0 else int(live.max())
            raise ArrowInvalid(f"dictionary index {bad} out of range for a dictionary of {n} values")
        return _decode(_elements(array.dictionary), indices, valid)
    if isinstance(dtype, t.RunEndEncodedType):
        ends = array.run_ends.values()
        check_run_ends(ends, array.offset + len(array), "run ends")
        logical = np.arange(array.offset, array.offset + len(array), dtype=np.int64)
        positions = np.searchsorted(ends, logical, side="right")
        return _decode(_elements(array.values), positions, None)
    raise ArrowNotImplementedError(f"no numpy conversion for {dtype} (pyarrow has none either)")
