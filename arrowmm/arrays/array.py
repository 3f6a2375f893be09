"""Typed arrays over ``BufferView``s: values decoded on demand, memory borrowed, never copied.

An ``Array`` is Arrow's ArrayData: a type, a logical ``offset`` and
``length``, buffers in the order of the Arrow C data interface, children and,
for dictionary arrays, the dictionary.  Subclasses add what each layout needs
(``to_numpy``, ``to_pylist``, the structural checks that run whenever an array
is loaded, and the O(n) checks of ``validate(full=True)``).

This module is the face of the array classes and makes them: ``make_array`` picks the class
for a type.  The classes live in the module named as ``types`` names their types' module:
``base`` (``Array`` and what every layout shares), ``primitive`` (null, boolean, fixed-width,
binary and string: offsets and views), ``nested`` (lists, maps, structs and unions),
``encoded`` (dictionary and run-end), ``extension``.

Per-type code is named ``_<kind>_...`` / ``<Kind>Array`` so one grep finds it.
"""
from __future__ import annotations

from typing import Optional

from .. import types as t
from ..errors import ArrowNotImplementedError
from .._core._region import empty_view
from .base import (MAX_UNBACKED_ROWS, Array, exported_array, exported_schema, imported_array,
                   imported_batch, unbacked_rows)
from .encoded import DictionaryArray, RunEndEncodedArray
from .nested import (FixedSizeListArray, ListArray, ListViewArray, MapArray, StructArray,
                     UnionArray)
from .primitive import (BinaryArray, BinaryViewArray, BooleanArray, FixedSizeBinaryArray,
                        NullArray, PrimitiveArray)

__all__ = [
    "Array", "NullArray", "BooleanArray", "PrimitiveArray", "FixedSizeBinaryArray",
    "BinaryArray", "BinaryViewArray", "ListArray", "ListViewArray", "MapArray",
    "FixedSizeListArray", "StructArray", "UnionArray", "DictionaryArray",
    "RunEndEncodedArray", "make_array", "array_class", "imported_array", "exported_schema",
    "exported_array", "imported_batch", "MAX_UNBACKED_ROWS", "unbacked_rows",
]


_ARRAY_CLASS = {
    t.NullType: NullArray, t.BoolType: BooleanArray, t.IntType: PrimitiveArray,
    t.FloatType: PrimitiveArray, t.DecimalType: PrimitiveArray, t.DateType: PrimitiveArray,
    t.TimeType: PrimitiveArray, t.TimestampType: PrimitiveArray, t.DurationType: PrimitiveArray,
    t.IntervalType: PrimitiveArray, t.FixedSizeBinaryType: FixedSizeBinaryArray,
    t.BinaryType: BinaryArray, t.BinaryViewType: BinaryViewArray, t.ListType: ListArray,
    t.ListViewType: ListViewArray, t.FixedSizeListType: FixedSizeListArray, t.StructType: StructArray, t.MapType: MapArray,
    t.UnionType: UnionArray, t.DictionaryType: DictionaryArray,
    t.RunEndEncodedType: RunEndEncodedArray,
}

#: this module's type-keyed tables, for tests/types/test_type_coverage.py
TYPE_TABLES = {"array class": _ARRAY_CLASS}


def array_class(dtype: t.DataType) -> type:
    """The array class of ``dtype``'s layout (one entry a type class, ``_ARRAY_CLASS``)."""
    try:
        return _ARRAY_CLASS[type(dtype)]
    except KeyError:
        raise ArrowNotImplementedError(f"no array class for type {dtype} "
                                       f"({type(dtype).__name__})") from None


def make_array(dtype: t.DataType, length: int, buffers, children=(), null_count: int = -1,
               offset: int = 0, dictionary: Optional[Array] = None) -> Array:
    """Build the array class for ``dtype`` over ``buffers`` (C data interface order)."""
    buffers = [empty_view() if b is None and i > 0 and not isinstance(dtype, t.UnionType) else b
               for i, b in enumerate(buffers)]
    return array_class(dtype)(dtype, length, buffers, children, null_count, offset, dictionary)
