"""Typed arrays and record batches over borrowed memory, and their conversions out
(Python values, numpy, pandas).

``array`` is the face of the array classes (which live in ``base``, ``primitive``, ``nested``,
``encoded`` and ``extension``, named as ``types`` names the modules of their types) and makes
them; ``field_paths`` reads a field inside struct columns as a column of its own; ``batch`` the record
batch, ``provenance`` which memory is borrowed and which was copied; ``numpy_compat``, ``pandas_compat`` and ``scalars``
convert values; ``concat`` joins arrays; ``selection`` takes and filters rows;
``extension`` holds extension arrays and the canonical extension types;
``display`` lays out reprs.
"""
from .array import (Array, BinaryArray, BinaryViewArray, BooleanArray, DictionaryArray,
                    FixedSizeBinaryArray, FixedSizeListArray, ListArray, ListViewArray, MapArray,
                    NullArray, PrimitiveArray, RunEndEncodedArray, StructArray, UnionArray,
                    make_array)
from .batch import RecordBatch
from .extension import (Bool8Array, Bool8Type, ExtensionArray, FixedShapeTensorArray,
                        FixedShapeTensorType, JsonArray, JsonType, OpaqueArray, OpaqueType,
                        UuidArray, UuidType, VariableShapeTensorArray, VariableShapeTensorType, bool8,
                        fixed_shape_tensor, json_, opaque, uuid, variable_shape_tensor)
from . import selection  # noqa: F401  (arrowmm.arrays.selection, as it was)
from .chunked import ChunkedArray
from .table import Table
from .scalars import DayTimeInterval, MonthDayNano

__all__ = [
    "Array", "NullArray", "BooleanArray", "PrimitiveArray", "FixedSizeBinaryArray",
    "BinaryArray", "BinaryViewArray", "ListArray", "ListViewArray", "MapArray",
    "FixedSizeListArray", "StructArray", "UnionArray", "DictionaryArray", "RunEndEncodedArray",
    "make_array", "RecordBatch", "DayTimeInterval", "MonthDayNano", "Table", "ChunkedArray",
    "ExtensionArray", "UuidArray", "JsonArray", "Bool8Array", "FixedShapeTensorArray",
    "OpaqueArray", "UuidType", "JsonType", "Bool8Type", "FixedShapeTensorType", "OpaqueType",
    "uuid", "json_", "bool8", "fixed_shape_tensor", "opaque", "VariableShapeTensorType",
    "VariableShapeTensorArray", "variable_shape_tensor",
]
