"""The factory functions, named as pyarrow names them: ``int64()``, ``list_(t)``,
``timestamp("us", tz="UTC")``, ``field(...)``, ``schema(...)``."""
from __future__ import annotations

from .encoded import DictionaryType, RunEndEncodedType
from .fields import Field
from .nested import FixedSizeListType, ListType, ListViewType, MapType, StructType, UnionType
from .primitive import (BinaryType, BinaryViewType, BoolType, DecimalType, FixedSizeBinaryType,
                        FloatType, IntType, NullType)
from .schema import Schema
from .temporal import DateType, DurationType, IntervalType, TimestampType, TimeType

__all__ = [
    "null", "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16",
    "uint32", "uint64", "float16", "float32", "float64", "string", "utf8", "binary",
    "large_string", "large_utf8", "large_binary", "string_view", "binary_view",
    "date32", "date64", "time32", "time64", "timestamp", "duration",
    "month_interval", "day_time_interval", "month_day_nano_interval",
    "decimal32", "decimal64", "decimal128", "decimal256", "fixed_size_binary",
    "list_", "large_list", "list_view", "large_list_view", "fixed_size_list",
    "struct", "map_", "sparse_union", "dense_union", "dictionary",
    "run_end_encoded", "field", "schema",
]


null = NullType
bool_ = BoolType


def int8() -> IntType:
    """The signed 8-bit integer type (``pyarrow.int8()``)."""
    return IntType(8, True)


def int16() -> IntType:
    """The signed 16-bit integer type (``pyarrow.int16()``)."""
    return IntType(16, True)


def int32() -> IntType:
    """The signed 32-bit integer type (``pyarrow.int32()``)."""
    return IntType(32, True)


def int64() -> IntType:
    """The signed 64-bit integer type (``pyarrow.int64()``)."""
    return IntType(64, True)


def uint8() -> IntType:
    """The unsigned 8-bit integer type (``pyarrow.uint8()``)."""
    return IntType(8, False)


def uint16() -> IntType:
    """The unsigned 16-bit integer type (``pyarrow.uint16()``)."""
    return IntType(16, False)


def uint32() -> IntType:
    """The unsigned 32-bit integer type (``pyarrow.uint32()``)."""
    return IntType(32, False)


def uint64() -> IntType:
    """The unsigned 64-bit integer type (``pyarrow.uint64()``)."""
    return IntType(64, False)


def float16() -> FloatType:
    """The IEEE 754 half-precision (16-bit) float type (``pyarrow.float16()``)."""
    return FloatType(16)


def float32() -> FloatType:
    """The IEEE 754 single-precision (32-bit) float type (``pyarrow.float32()``)."""
    return FloatType(32)


def float64() -> FloatType:
    """The IEEE 754 double-precision (64-bit) float type (``pyarrow.float64()``)."""
    return FloatType(64)


def binary() -> BinaryType:
    """Variable-length bytes with 32-bit offsets (``pyarrow.binary()``)."""
    return BinaryType(False)


def string() -> BinaryType:
    """Variable-length UTF-8 text with 32-bit offsets (``pyarrow.string()``, also ``utf8``)."""
    return BinaryType(True)


utf8 = string


def large_binary() -> BinaryType:
    """Variable-length bytes with 64-bit offsets (``pyarrow.large_binary()``)."""
    return BinaryType(False, large=True)


def large_string() -> BinaryType:
    """Variable-length UTF-8 text with 64-bit offsets (``pyarrow.large_string()``, also
    ``large_utf8``)."""
    return BinaryType(True, large=True)


large_utf8 = large_string


def binary_view() -> BinaryViewType:
    """Bytes as 16-byte views, short values inline (``pyarrow.binary_view()``)."""
    return BinaryViewType(False)


def string_view() -> BinaryViewType:
    """UTF-8 text as 16-byte views, short values inline (``pyarrow.string_view()``)."""
    return BinaryViewType(True)


def date32() -> DateType:
    """Days since the UNIX epoch, 32-bit (``pyarrow.date32()``)."""
    return DateType("day")


def date64() -> DateType:
    """Milliseconds since the UNIX epoch, 64-bit (``pyarrow.date64()``)."""
    return DateType("ms")


def time32(unit) -> TimeType:
    """Time of day in ``unit`` ``"s"`` or ``"ms"``, 32-bit (``pyarrow.time32(unit)``)."""
    return TimeType(unit, 32)


def time64(unit) -> TimeType:
    """Time of day in ``unit`` ``"us"`` or ``"ns"``, 64-bit (``pyarrow.time64(unit)``)."""
    return TimeType(unit, 64)


timestamp = TimestampType
duration = DurationType


def month_interval() -> IntervalType:
    """A calendar interval in months (``pyarrow.month_interval()``)."""
    return IntervalType("YEAR_MONTH")


def day_time_interval() -> IntervalType:
    """An interval of days and milliseconds (``DayTimeInterval`` values)."""
    return IntervalType("DAY_TIME")


def month_day_nano_interval() -> IntervalType:
    """An interval of months, days and nanoseconds (``MonthDayNano`` values;
    ``pyarrow.month_day_nano_interval()``)."""
    return IntervalType("MONTH_DAY_NANO")


def decimal32(p, s=0) -> DecimalType:
    """A decimal of precision ``p`` (1-9 digits) and scale ``s`` in 32 bits
    (``pyarrow.decimal32``)."""
    return DecimalType(p, s, 32)


def decimal64(p, s=0) -> DecimalType:
    """A decimal of precision ``p`` (1-18 digits) and scale ``s`` in 64 bits
    (``pyarrow.decimal64``)."""
    return DecimalType(p, s, 64)


def decimal128(p, s=0) -> DecimalType:
    """A decimal of precision ``p`` (1-38 digits) and scale ``s`` in 128 bits
    (``pyarrow.decimal128``)."""
    return DecimalType(p, s, 128)


def decimal256(p, s=0) -> DecimalType:
    """A decimal of precision ``p`` (1-76 digits) and scale ``s`` in 256 bits
    (``pyarrow.decimal256``)."""
    return DecimalType(p, s, 256)


fixed_size_binary = FixedSizeBinaryType


def list_(t, list_size=-1) -> ListType | FixedSizeListType:
    """A list of ``t`` (a type or a field) with 32-bit offsets; with ``list_size`` >= 0, a
    fixed-size list of that many values (``pyarrow.list_``)."""
    return ListType(t) if list_size < 0 else FixedSizeListType(t, list_size)


def large_list(t) -> ListType:
    """A list of ``t`` (a type or a field) with 64-bit offsets (``pyarrow.large_list``)."""
    return ListType(t, "large_list")


def list_view(t) -> ListViewType:
    """A list of ``t`` held as offsets and sizes, 32-bit (``pyarrow.list_view``)."""
    return ListViewType(t)


def large_list_view(t) -> ListViewType:
    """A list of ``t`` held as offsets and sizes, 64-bit (``pyarrow.large_list_view``)."""
    return ListViewType(t, large=True)


fixed_size_list = FixedSizeListType
struct = StructType
map_ = MapType


def sparse_union(fields, type_codes=None) -> UnionType:
    """A sparse union of ``fields``: every child as long as the union
    (``pyarrow.sparse_union``); ``type_codes`` default to 0, 1, ..."""
    return UnionType("sparse", fields, type_codes)


def dense_union(fields, type_codes=None) -> UnionType:
    """A dense union of ``fields``: children hold only their own values, reached through
    offsets (``pyarrow.dense_union``); ``type_codes`` default to 0, 1, ..."""
    return UnionType("dense", fields, type_codes)


dictionary = DictionaryType
run_end_encoded = RunEndEncodedType
field = Field
schema = Schema
