"""Typed arrays and record batches over borrowed memory, and their conversions out
(Python values, numpy, pandas).

``array`` holds the array classes, ``batch`` the record batch, ``provenance`` which memory
is borrowed and which was copied; ``numpy_compat``, ``pandas_compat`` and ``scalars``
convert values; ``concat`` joins arrays.
"""
from .array import (Array, BinaryArray, BinaryViewArray, BooleanArray, DictionaryArray,
                    FixedSizeBinaryArray, FixedSizeListArray, ListArray, ListViewArray, MapArray,
                    NullArray, PrimitiveArray, RunEndEncodedArray, StructArray, UnionArray,
                    make_array)
from .batch import RecordBatch
from .chunked import ChunkedArray
from .table import Table
from .scalars import DayTimeInterval, MonthDayNano

__all__ = [
    "Array", "NullArray", "BooleanArray", "PrimitiveArray", "FixedSizeBinaryArray",
    "BinaryArray", "BinaryViewArray", "ListArray", "ListViewArray", "MapArray",
    "FixedSizeListArray", "StructArray", "UnionArray", "DictionaryArray", "RunEndEncodedArray",
    "make_array", "RecordBatch", "DayTimeInterval", "MonthDayNano", "Table", "ChunkedArray",
]
