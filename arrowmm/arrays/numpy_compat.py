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

__all__ = ["object_array", "with_nulls", "checked_list_offsets", "convert"]


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


def _python_items(child, elements) -> list:
    """A struct field's values as pyarrow puts them in struct rows and map entries: each
    converted element as numpy gives it to Python (numbers; datetime, date or timedelta, the
    integer for nanoseconds), a zoned timestamp's ``to_pylist`` value, else the elements as
    they are (strings, an array per list, dicts)."""
    dtype = child.type
    if isinstance(dtype, t.TimestampType) and dtype.tz and dtype.unit != "ns":
        return child.to_pylist()
    values = elements(child)
    return values.tolist() if values.dtype.kind in "biufmM" else list(values)


def _elements(array) -> np.ndarray:
    """Every value of ``array`` converted (what its parent's rows are built from); a
    fixed-size list's as one array per list, as pyarrow's, not its own 2-D view."""
    if isinstance(array.type, t.FixedSizeListType):
        return convert(array, _elements)
    return array.to_numpy(zero_copy_only=False)


def checked_list_offsets(array) -> np.ndarray:
    """``array.value_offsets()`` (a list or map) once every offset, null slots' included, lies
    within the child and none is below its predecessor: rows are Python or numpy slices,
    which would clamp a damaged offset into a row that never was."""
    offs = array.value_offsets()
    size = len(array.children[0])
    outside = np.flatnonzero((offs < 0) | (offs > size))
    drops = np.flatnonzero(offs[1:] < offs[:-1]) + 1
    if outside.size or drops.size:
        at = min(int(k[0]) for k in (outside, drops) if k.size)
        why = (f"lies outside the {size}-element child" if outside.size and outside[0] == at
               else f"is below offset[{at - 1}] = {int(offs[at - 1])}")
        raise ArrowInvalid(f"{array.type} offsets: offset[{at}] = {int(offs[at])} {why} (slot "
                           f"{max(at - 1, 0)}; a null slot's offsets are checked too)")
    return offs


def _list_rows(array, elements) -> np.ndarray:
    """list / large_list offsets -> one numpy array per row; map offsets -> one list of
    ``(key, value)`` tuples per row, as pyarrow gives them (None for null rows)."""
    offs = checked_list_offsets(array).astype(np.int64)
    if isinstance(array.type, t.MapType):
        # every entry, as pyarrow converts a map's whole keys and items (a null item outside a
        # slice still turns the slice's integer items into floats)
        pairs = _map_entries(array.children[0], elements)
        rows = [pairs[s:e].tolist() for s, e in zip(offs[:-1].tolist(), offs[1:].tolist())]
        return _rows_with_nulls(rows, array)
    base = int(offs[0])
    values = elements(array.children[0].slice(base, int(offs[-1]) - base))
    rows = [values[s - base:e - base] for s, e in zip(offs[:-1].tolist(), offs[1:].tolist())]
    return _rows_with_nulls(rows, array)


def _list_view_rows(array, elements) -> np.ndarray:
    """One numpy array per view, split from ``flatten()``: it checks every view (a slice would
    clamp one outside the child) and holds only the non-null views' values, which are what
    pyarrow converts (a null no view covers must not turn integers into floats)."""
    values = elements(array.flatten())
    sizes = array.value_sizes().astype(np.int64)
    valid = array._valid_mask()
    ends = np.cumsum(sizes if valid is None else np.where(valid, sizes, 0)).tolist()
    return _rows_with_nulls([values[s:e] for s, e in zip([0] + ends[:-1], ends)], array)


def _fixed_size_list_rows(array, elements) -> np.ndarray:
    size = array.type.list_size
    values = elements(array._covered_values())
    return _rows_with_nulls([values[i * size:(i + 1) * size] for i in range(len(array))], array)


def _rows_with_nulls(rows: list, array) -> np.ndarray:
    valid = array._valid_mask()
    if valid is not None:
        rows = [r if ok else None for r, ok in zip(rows, valid.tolist())]
    return object_array(rows)


def _struct_rows(array, elements) -> list:
    """Row dicts of a struct array (nulls of the struct itself not applied)."""
    names = [f.name for f in array.type.fields]
    columns = []
    for i in range(len(names)):
        child = array.field(i)
        valid = child._valid_mask()
        items = _python_items(child, elements)
        if valid is not None:
            items = [v if ok else None for v, ok in zip(items, valid.tolist())]
        columns.append(items)
    return [dict(zip(names, row)) for row in zip(*columns)] if columns else \
        [{} for _ in range(len(array))]


def _map_entries(entries, elements) -> np.ndarray:
    """The ``(key, value)`` tuples of a map's entries struct."""
    pairs = [tuple(row.values()) for row in _struct_rows(entries, elements)]
    return object_array(pairs)


def _decode(values: np.ndarray, positions: np.ndarray, valid: Optional[np.ndarray]) -> np.ndarray:
    """``values[positions]`` with null slots filled (positions under nulls are not read); no
    values (every slot null, or none) give the values' own null dtype, as pyarrow's do."""
    if len(values) == 0:
        return with_nulls(np.zeros(len(positions), dtype=values.dtype),
                          np.zeros(len(positions), dtype=bool))
    if valid is not None:
        positions = np.where(valid, positions, 0)
    return with_nulls(values[positions], valid)


def convert(array, elements=_elements) -> np.ndarray:
    """What pyarrow's ``to_numpy(zero_copy_only=False)`` gives for a null, nested, dictionary or
    run-end encoded array (the array classes convert their own flat types); ``elements``
    converts a nested array's children (``to_pandas`` passes its own, which follows its
    options)."""
    dtype = array.type
    if isinstance(dtype, t.NullType):
        return object_array([None] * len(array))
    if isinstance(dtype, (t.MapType, t.ListType)):
        return _list_rows(array, elements)
    if isinstance(dtype, t.ListViewType):
        return _list_view_rows(array, elements)
    if isinstance(dtype, t.FixedSizeListType):
        return _fixed_size_list_rows(array, elements)
    if isinstance(dtype, t.StructType):
        return _rows_with_nulls(_struct_rows(array, elements), array)
    if isinstance(dtype, t.DictionaryType):
        values_type = dtype.value_type
        values_type = getattr(values_type, "storage_type", values_type)
        if values_type.children or isinstance(values_type, t.IntervalType):
            # nested values pyarrow's to_numpy refuses to decode, and intervals: the Python
            # values, as an interval array's own to_numpy gives them
            return object_array(array.to_pylist())
        indices = array.indices.values().astype(np.intp)
        valid = array._valid_mask()
        live = indices if valid is None else indices[valid]
        n = len(array.dictionary)
        if live.size and (int(live.min()) < 0 or int(live.max()) >= n):
            bad = int(live.min()) if int(live.min()) < 0 else int(live.max())
            raise ArrowInvalid(f"dictionary index {bad} out of range for a dictionary of {n} values")
        if not array.dictionary.null_count:
            try:  # (each distinct value converted once)
                return _decode(_elements(array.dictionary), indices, valid)
            except ArrowInvalid:
                pass  # a value numpy cannot hold (time64[ns] with nanoseconds): used ones only
        # decoded first, as pyarrow's: a value no index reaches neither raises nor, when null,
        # turns integers into floats; damage raises wherever it lies (take would copy it)
        array.dictionary.validate(True, "dictionary")
        return _elements(array.dictionary.take(array.indices))  # (a null index: a null)
    if isinstance(dtype, t.RunEndEncodedType):
        ends = array.run_ends.values()
        check_run_ends(ends, array.offset + len(array), "run ends")
        logical = np.arange(array.offset, array.offset + len(array), dtype=np.int64)
        positions = np.searchsorted(ends, logical, side="right")
        # only the runs the slice covers are converted: a null in a run outside it must not
        # turn its integers into floats (pyarrow converts the slice's runs)
        first = int(positions[0]) if len(positions) else 0
        used = int(positions[-1]) + 1 - first if len(positions) else 0
        if first + used > len(array.values):
            raise ArrowInvalid(f"run-end encoded array: slot {array.offset + len(array) - 1} lies "
                               f"in run {first + used - 1}, past the {len(array.values)} values")
        return _decode(_elements(array.values.slice(first, used)), positions - first, None)
    raise ArrowNotImplementedError(f"no numpy conversion for {dtype} (pyarrow has none either)")
