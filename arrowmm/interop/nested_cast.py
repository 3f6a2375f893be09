"""Casts between nested types, as pyarrow's: a cast of the values inside, the shape kept.

* list, large_list, list views, fixed_size_list and map to list and large_list: the values
  the rows cover (a view's gathered in row order) cast to the target's value type, the offsets
  rebased to 0 (a large_list whose values pass 2**31 - 1 does not fit a list); a map's entries
  cast by position to a struct of two fields (ArrowTypeError for any other target);
* to fixed_size_list: from one of the same size, or from lists (and maps) that all hold that
  many values (a null list of any other length too: its slots are filled with nulls);
* map to map (keys and items cast by position);
* struct to struct by field name, in the target's order (the k-th field of a repeated name
  from the source's k-th): a field the source lacks is all null (an error if the target's
  field is non-nullable), one the target lacks is dropped, and a child with nulls refused for
  a non-nullable field.

pyarrow's list views to lists lose values (a view after a null one comes out empty); arrowmm
gathers them.  Other pairs (to list views, unions, a list to a struct or a map) pyarrow does
not cast either.
"""
from __future__ import annotations

from typing import Callable, Optional

import numpy as np

from .. import types as t
from .._core._region import as_view
from ..arrays.array import Array, make_array
from ..arrays.selection import take
from ..errors import ArrowInvalid, ArrowTypeError
from .from_python import convert, validity_from_mask

__all__ = ["cast_nested"]

_LISTS = (t.ListType, t.FixedSizeListType, t.MapType)


def _validity(array: Array):
    return validity_from_mask(~array.validity_mask() if array.null_count else None)


def _rows_and_values(array: Array):
    """(int64 offsets from 0, the child values they cover) of a list-like array; a list
    view's values gathered in row order (a null view holds none)."""
    if isinstance(array.type, t.FixedSizeListType):
        size = array.type.list_size
        return np.arange(len(array) + 1, dtype=np.int64) * size, array._covered_values()
    if isinstance(array.type, t.ListViewType):
        starts = np.asarray(array.value_offsets(), dtype=np.int64)
        sizes = np.asarray(array.value_sizes(), dtype=np.int64)
        if array.null_count:
            sizes = np.where(array.validity_mask(), sizes, 0)
        offsets = np.zeros(len(array) + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        where = np.repeat(starts - offsets[:-1], sizes) + np.arange(offsets[-1])
        return offsets, take(array.values, where)
    offsets = np.asarray(array.value_offsets(), dtype=np.int64)
    return offsets - offsets[0], array._covered_values()


def _entries(array: Array, values: Array, want, safe: bool, cast: Callable) -> Array:
    """A map's key/value structs cast to ``want``'s value type by position, as pyarrow casts
    a map's entries (the target's own field names, the source's ignored)."""
    target = want.value_field.type
    if not isinstance(target, t.StructType) or len(target.fields) != 2:
        raise ArrowTypeError("Map type must be cast to a list<struct> with exactly two fields.")
    children = [cast(values.field(k), f.type, safe) for k, f in enumerate(target.fields)]
    validity, nulls = _validity(values)
    return make_array(target, len(values), [validity], children=children, null_count=nulls)


def _to_list(array: Array, want, safe: bool, cast: Callable) -> Array:
    offsets, values = _rows_and_values(array)
    if want.offset_dtype.itemsize == 4 and offsets[-1] > np.iinfo(np.int32).max:
        raise ArrowInvalid(f"cannot cast {array.type} to {want}: its {int(offsets[-1])} values "
                           f"overflow 32-bit offsets (cast to large_list)")
    child = _entries(array, values, want, safe, cast) if isinstance(array.type, t.MapType) \
        else cast(values, want.value_field.type, safe)
    validity, nulls = _validity(array)
    return make_array(want, len(array), [validity, as_view(offsets.astype(want.offset_dtype))],
                      children=[child], null_count=nulls)


def _to_fixed_size_list(array: Array, want, safe: bool, cast: Callable) -> Array:
    size = want.list_size
    got = array.type
    if isinstance(got, t.FixedSizeListType):
        if got.list_size != size:
            raise ArrowTypeError(f"Size of FixedSizeList is not the same. input list: {got} "
                                 f"output list: {want}")
        values = array._covered_values()
    else:
        offsets, values = _rows_and_values(array)
        lengths = np.diff(offsets)
        valid = array.validity_mask() if array.null_count else np.ones(len(array), dtype=bool)
        if np.any(valid & (lengths != size)):
            raise ArrowInvalid("ListType can only be casted to FixedSizeListType if the lists "
                               "are all the expected size.")
        if np.any(lengths != size):  # (null lists of another length: their slots are nulls)
            take = np.full(len(array) * size, -1, dtype=np.int64)
            rows = np.flatnonzero(valid)
            take.reshape(len(array), size)[rows] = offsets[:-1][rows, None] + np.arange(size)
            values = _taken(values, take)
    child = cast(values, want.value_field.type, safe)
    validity, nulls = _validity(array)
    return make_array(want, len(array), [validity], children=[child], null_count=nulls)


def _taken(values: Array, where: np.ndarray) -> Array:
    """``values`` at ``where`` (-1: a null), through an int64 index array with nulls."""
    missing = where < 0
    validity, nulls = validity_from_mask(missing if missing.any() else None)
    indices = make_array(t.int64(), len(where), [validity, as_view(np.where(missing, 0, where))],
                         null_count=nulls)
    return take(values, indices)


def _to_struct(array: Array, want, safe: bool, cast: Callable) -> Array:
    got = array.type
    names = [f.name for f in got.fields]
    children = []
    seen: dict = {}
    for field in want.fields:
        # (the k-th target field of a name takes the source's k-th field of that name)
        k = seen[field.name] = seen.get(field.name, -1) + 1
        where = [i for i, name in enumerate(names) if name == field.name]
        if k < len(where):
            child = array.field(where[k])
            if not field.nullable and child.null_count:
                raise ArrowInvalid(f"field '{field.name}' of type {child.type} has nulls. "
                                   f"Can't cast to non-nullable field '{field.name}' of type "
                                   f"{field.type}")
            children.append(cast(child, field.type, safe))
        elif not field.nullable:
            raise ArrowTypeError(f"struct fields don't match: non-nullable out field "
                                 f"`{field.name}` not found in in fields {got}")
        else:
            children.append(convert([None] * len(array), field.type))
    validity, nulls = _validity(array)
    return make_array(want, len(array), [validity], children=children, null_count=nulls)


def cast_nested(array: Array, want, safe: bool, cast: Callable) -> Optional[Array]:
    """``array`` cast to ``want`` when both are nested and pyarrow casts the pair; None for
    the pairs pyarrow refuses.  ``cast`` casts the children (``cast_array``)."""
    got = array.type
    if isinstance(got, (*_LISTS, t.ListViewType)) and isinstance(want, (t.ListType, t.MapType)):
        if isinstance(want, t.MapType) and not isinstance(got, t.MapType):
            return None  # (pyarrow makes maps of maps only)
        return _to_list(array, want, safe, cast)
    if isinstance(got, _LISTS) and isinstance(want, t.FixedSizeListType):
        return _to_fixed_size_list(array, want, safe, cast)
    if isinstance(got, t.StructType) and isinstance(want, t.StructType):
        return _to_struct(array, want, safe, cast)
    return None
