"""The factory functions, named as pyarrow names them: ``int64()``, ``list_(t)``,
``timestamp("us", tz="UTC")``, ``field(...)``, ``schema(...)``."""
from __future__ import annotations

from .encoded import DictionaryType, RunEndEncodedType
from .fields import Field
from .nested import FixedSizeListType, ListType, MapType, StructType, UnionType
from .primitive import (BinaryType, BoolType, DecimalType, FixedSizeBinaryType, FloatType, IntType,
                        NullType)
from .schema import Schema
from .temporal import DateType, DurationType, IntervalType, TimestampType, TimeType

__all__ = [
    "null", "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16",
    "uint32", "uint64", "float16", "float32", "float64", "string", "utf8", "binary",
    "large_string", "large_binary", "string_view", "binary_view",
    "date32", "date64", "time32", "time64", "timestamp", "duration",
    "month_interval", "day_time_interval", "month_day_nano_interval",
    "decimal32", "decimal64", "decimal128", "decimal256", "fixed_size_binary",
    "list_", "large_list", "list_view", "large_list_view", "fixed_size_list",
    "struct", "map_", "sparse_union", "dense_union", "dictionary",
    "run_end_encoded", "field", "schema",
]


null = NullType
bool_ = BoolType
int8 = lambda: IntType(8, True)  # noqa: E731
int16 = lambda: IntType(16, True)  # noqa: E731
int32 = lambda: IntType(32, True)  # noqa: E731
int64 = lambda: IntType(64, True)  # noqa: E731
uint8 = lambda: IntType(8, False)  # noqa: E731
uint16 = lambda: IntType(16, False)  # noqa: E731
uint32 = lambda: IntType(32, False)  # noqa: E731
uint64 = lambda: IntType(64, False)  # noqa: E731
float16 = lambda: FloatType(16)  # noqa: E731
float32 = lambda: FloatType(32)  # noqa: E731
float64 = lambda: FloatType(64)  # noqa: E731
binary = lambda: BinaryType(False)  # noqa: E731
string = lambda: BinaryType(True)  # noqa: E731
utf8 = string
large_binary = lambda: BinaryType(False, large=True)  # noqa: E731
large_string = lambda: BinaryType(True, large=True)  # noqa: E731
binary_view = lambda: BinaryType(False, view=True)  # noqa: E731
string_view = lambda: BinaryType(True, view=True)  # noqa: E731
date32 = lambda: DateType("day")  # noqa: E731
date64 = lambda: DateType("ms")  # noqa: E731
time32 = lambda unit: TimeType(unit, 32)  # noqa: E731
time64 = lambda unit: TimeType(unit, 64)  # noqa: E731
timestamp = TimestampType
duration = DurationType
month_interval = lambda: IntervalType("YEAR_MONTH")  # noqa: E731
day_time_interval = lambda: IntervalType("DAY_TIME")  # noqa: E731
month_day_nano_interval = lambda: IntervalType("MONTH_DAY_NANO")  # noqa: E731
decimal32 = lambda p, s=0: DecimalType(p, s, 32)  # noqa: E731
decimal64 = lambda p, s=0: DecimalType(p, s, 64)  # noqa: E731
decimal128 = lambda p, s=0: DecimalType(p, s, 128)  # noqa: E731
decimal256 = lambda p, s=0: DecimalType(p, s, 256)  # noqa: E731
fixed_size_binary = FixedSizeBinaryType
list_ = lambda t, list_size=-1: ListType(t) if list_size < 0 else FixedSizeListType(t, list_size)  # noqa: E731
large_list = lambda t: ListType(t, "large_list")  # noqa: E731
list_view = lambda t: ListType(t, "list_view")  # noqa: E731
large_list_view = lambda t: ListType(t, "large_list_view")  # noqa: E731
fixed_size_list = FixedSizeListType
struct = StructType
map_ = MapType
sparse_union = lambda fields, type_codes=None: UnionType("sparse", fields, type_codes)  # noqa: E731
dense_union = lambda fields, type_codes=None: UnionType("dense", fields, type_codes)  # noqa: E731
dictionary = DictionaryType
run_end_encoded = RunEndEncodedType
field = Field
schema = Schema
