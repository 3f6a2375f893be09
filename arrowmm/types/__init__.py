"""Arrow data types, fields and schemas: frozen, hashable, printed as pyarrow prints them.

Each type also knows its physical layout (``buffer_count``, ``byte_width``),
which is the plan the loader follows when it walks a record batch.

The face of the package; one module per concept below it:

``base``
    ``DataType`` and the fixed-width base.
``primitive``, ``temporal``
    the flat types; dates, times, timestamps, durations, intervals.
``nested``, ``encoded``
    lists, structs, maps, unions; dictionary and run-end-encoded types.
``extension``
    ``ExtensionType`` and the registry reads recognise extensions by.
``fields``, ``schema``
    ``Field`` and ``Schema``.
``factories``
    ``int64()``, ``list_(...)``, ``field(...)``: the functions named as pyarrow names them.
``aliases``
    ``type_for_alias("int64")``: types named by strings, as pyarrow takes them.
"""
from . import factories
from .aliases import ensure_type, type_for_alias
from .base import DataType, FixedWidthType
from .encoded import DictionaryType, RunEndEncodedType
from .extension import (EXTENSION_METADATA, EXTENSION_NAME, ExtensionType, extension_type_of,
                        register_extension_type, unregister_extension_type)
# (before the factories: to a type checker the submodule ``schema`` this imports is bound
# here, and the factory ``schema`` must be the later binding)
from .schema import Schema
from .factories import (binary, binary_view, bool_, date32, date64, day_time_interval, decimal32,
                        decimal64, decimal128, decimal256, dense_union, dictionary, duration,
                        field, fixed_size_binary, fixed_size_list, float16, float32, float64,
                        int8, int16, int32, int64, large_binary, large_list, large_list_view,
                        large_string, list_, list_view, map_, month_day_nano_interval,
                        month_interval, null, run_end_encoded, schema, sparse_union, string,
                        string_view, struct, time32, time64, timestamp, uint8, uint16, uint32,
                        uint64, utf8, large_utf8)
from .fields import Field
from .nested import FixedSizeListType, ListType, ListViewType, MapType, StructType, UnionType
from .primitive import (BinaryType, BinaryViewType, BoolType, DecimalType, FixedSizeBinaryType,
                        FloatType, IntType, NullType)
from .temporal import DateType, DurationType, IntervalType, TimestampType, TimeType
from .unify import unify_schemas

__all__ = [
    "DataType", "FixedWidthType", "NullType", "BoolType", "IntType", "FloatType", "DecimalType",
    "DateType", "TimeType", "TimestampType", "DurationType", "IntervalType",
    "BinaryType", "BinaryViewType", "FixedSizeBinaryType", "ListType", "ListViewType",
    "FixedSizeListType",
    "StructType", "MapType", "UnionType", "DictionaryType", "RunEndEncodedType",
    "Field", "Schema",
    "ExtensionType", "register_extension_type", "unregister_extension_type",
    "extension_type_of", "EXTENSION_NAME", "EXTENSION_METADATA", "type_for_alias", "ensure_type",
    "unify_schemas",
    *factories.__all__,
]
