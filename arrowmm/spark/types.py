"""Arrow types of a file, as Spark types: what Spark holds as is, what it holds after a cast.

Spark's Python data sources accept a batch only when its Arrow schema equals
``to_arrow_schema(spark_schema, timezone="UTC")`` (see ``conform``).  Types
in ``EXACT`` reach Spark without a copy.  The rest need the ``cast`` option:
they are converted in the task (a copy of that column only), or raise an
error naming the column when Spark has no type for them at all.
"""
from __future__ import annotations

from typing import List, Optional

from .. import types as t
from ..errors import ArrowInvalid, ArrowNotImplementedError

__all__ = ["SparkTypeError", "spark_schema", "spark_type", "type_table", "as_nullable",
           "type_difference", "unwritable_columns", "names_equal_ignoring_case", "with_collations", "COLLATION_KEY"]

#: Field-metadata key under which both engines record a string field's collation (Spark's
#: name, e.g. ``UTF8_LCASE``), so it reads back ``string collate ...``; a field without the
#: key is a plain (UTF8_BINARY) ``string``.
COLLATION_KEY = "arrowmm.spark.collation"


class SparkTypeError(ArrowNotImplementedError):
    """A column whose Arrow type Spark cannot hold (as is, or at all)."""


def spark_schema(schema: t.Schema, cast: bool = False):
    """The Spark ``StructType`` for an arrowmm schema.

    Every column Spark cannot hold is named in one error, with the reason and
    whether ``option("cast", "true")`` would help.
    """
    from pyspark.sql import types as st
    problems: List[str] = []
    fields = []
    for f in schema:
        dtype = _field_type(f, cast, f.name, problems)
        if dtype is not None:
            fields.append(st.StructField(f.name, dtype, f.nullable))
    if problems:
        hint = "" if cast else ("\n(columns marked 'cast' read with "
                                 "spark.read.format('arrowmm').option('cast', 'true'))")
        raise SparkTypeError("these columns have Arrow types Spark cannot hold:\n  "
                             + "\n  ".join(problems) + hint)
    return st.StructType(fields)


def spark_type(dtype: t.DataType, cast: bool = False, name: str = "column"):
    """The Spark type of one Arrow type (``SparkTypeError`` when there is none)."""
    problems: List[str] = []
    out = _convert(dtype, cast, name, problems)
    if problems:
        raise SparkTypeError("; ".join(problems))
    return out


def _field_type(field: t.Field, cast: bool, path: str, problems: List[str]):
    """The Spark type of ``field``: its Arrow type's, with the collation its metadata records."""
    dtype = _convert(field.storage_type, cast, path, problems)
    collation = (field.metadata or {}).get(COLLATION_KEY)
    if collation is None or dtype is None:
        return dtype
    from pyspark.sql import types as st
    if not isinstance(dtype, st.StringType):
        problems.append(f"{path}: {field.type} ({COLLATION_KEY} {collation!r} on a field that "
                        f"is not a string)")
        return None
    return st.StringType(collation)


def _convert(dtype: t.DataType, cast: bool, path: str, problems: List[str]):
    from pyspark.sql import types as st

    def needs_cast(target, what=None):
        if cast:
            return target
        problems.append(f"{path}: {dtype} (cast: read as {what or target.simpleString()})")
        return None

    def unsupported(why):
        problems.append(f"{path}: {dtype} ({why})")
        return None

    if isinstance(dtype, t.NullType):
        return st.NullType()
    if isinstance(dtype, t.BoolType):
        return st.BooleanType()
    if isinstance(dtype, t.IntType):
        if dtype.signed:
            return {8: st.ByteType, 16: st.ShortType, 32: st.IntegerType, 64: st.LongType}[dtype.bit_width]()
        target = {8: st.ShortType(), 16: st.IntegerType(), 32: st.LongType(),
                  64: st.DecimalType(20, 0)}[dtype.bit_width]
        return needs_cast(target)
    if isinstance(dtype, t.FloatType):
        if dtype.bit_width == 16:
            return needs_cast(st.FloatType())
        return st.FloatType() if dtype.bit_width == 32 else st.DoubleType()
    if isinstance(dtype, t.DecimalType):
        if dtype.precision > 38:
            return unsupported("Spark decimals hold at most 38 digits")
        target = st.DecimalType(dtype.precision, dtype.scale)
        return target if dtype.bit_width == 128 else needs_cast(target)
    if isinstance(dtype, t.DateType):
        return st.DateType() if dtype.unit == "day" else needs_cast(st.DateType())
    if isinstance(dtype, t.TimestampType):
        target = st.TimestampType() if dtype.tz else st.TimestampNTZType()
        if dtype.unit == "us":
            return target  # another time zone is a metadata-only change (same instants)
        what = target.simpleString() + (" (truncated to microseconds)" if dtype.unit == "ns" else "")
        return needs_cast(target, what)
    if isinstance(dtype, t.DurationType):
        target = st.DayTimeIntervalType(st.DayTimeIntervalType.DAY, st.DayTimeIntervalType.SECOND)
        return target if dtype.unit == "us" else needs_cast(target)
    if isinstance(dtype, t.TimeType):
        return unsupported("Spark's Python data sources have no time-of-day type; "
                           "read it as integers with a user-given schema")
    if isinstance(dtype, t.IntervalType):
        return unsupported("Spark has no Arrow interval type")
    if isinstance(dtype, t.BinaryType):
        target = st.StringType() if dtype.utf8 else st.BinaryType()
        return needs_cast(target) if dtype.large else target
    if isinstance(dtype, t.BinaryViewType):
        return needs_cast(st.StringType() if dtype.utf8 else st.BinaryType())
    if isinstance(dtype, t.FixedSizeBinaryType):
        return needs_cast(st.BinaryType())
    if isinstance(dtype, (t.ListType, t.ListViewType)):
        child = dtype.value_field
        element = _field_type(child, cast, f"{path}.{child.name}", problems)
        if element is None:
            return None
        target = st.ArrayType(element, child.nullable)
        return target if dtype.kind == "list" else needs_cast(target)
    if isinstance(dtype, t.FixedSizeListType):
        child = dtype.value_field
        element = _field_type(child, cast, f"{path}.{child.name}", problems)
        return None if element is None else needs_cast(st.ArrayType(element, child.nullable))
    if isinstance(dtype, t.MapType):
        key, item = dtype.key_field, dtype.item_field
        k = _field_type(key, cast, f"{path}.key", problems)
        v = _field_type(item, cast, f"{path}.value", problems)
        return None if k is None or v is None else st.MapType(k, v, item.nullable)
    if isinstance(dtype, t.StructType):
        fields = []
        for child in dtype.children:
            c = _field_type(child, cast, f"{path}.{child.name}", problems)
            if c is not None:
                fields.append(st.StructField(child.name, c, child.nullable))
        return st.StructType(fields) if len(fields) == len(dtype.children) else None
    if isinstance(dtype, t.DictionaryType):
        values = _convert(dtype.value_type, cast, f"{path} (dictionary values)", problems)
        return None if values is None else needs_cast(values, f"{values.simpleString()}, decoded")
    if isinstance(dtype, t.UnionType):
        return unsupported("Spark has no union type")
    if isinstance(dtype, t.RunEndEncodedType):
        return unsupported("Spark has no run-end encoded type")
    raise ArrowInvalid(f"{path}: unexpected Arrow type {dtype}")  # pragma: no cover


def as_nullable(dtype):
    """Spark type ``dtype`` with every level nullable (fields, array elements, map values), as
    Spark's file sources declare a table's schema: another file of the table may hold nulls
    where the first has none, and a column Spark is told is NOT NULL reads no null."""
    from pyspark.sql import types as st
    if isinstance(dtype, st.StructType):
        return st.StructType([st.StructField(f.name, as_nullable(f.dataType), True, f.metadata)
                              for f in dtype.fields])
    if isinstance(dtype, st.ArrayType):
        return st.ArrayType(as_nullable(dtype.elementType), True)
    if isinstance(dtype, st.MapType):
        return st.MapType(as_nullable(dtype.keyType), as_nullable(dtype.valueType), True)
    return dtype


def type_difference(have, want, path: str = "") -> Optional[str]:
    """Where Spark types ``have`` and ``want`` differ, nullability and field metadata aside
    (``a.b: int vs bigint``, ``columns [a, b] vs [b, a]``), or None when they do not."""
    from pyspark.sql import types as st
    where = path or "columns"
    if isinstance(have, st.StructType) and isinstance(want, st.StructType):
        if have.names != want.names:
            return f"{where} {have.names} vs {want.names}"
        for a, b in zip(have.fields, want.fields):
            found = type_difference(a.dataType, b.dataType, f"{path}.{a.name}" if path else a.name)
            if found:
                return found
        return None
    if isinstance(have, st.ArrayType) and isinstance(want, st.ArrayType):
        return type_difference(have.elementType, want.elementType, f"{where}.element")
    if isinstance(have, st.MapType) and isinstance(want, st.MapType):
        return (type_difference(have.keyType, want.keyType, f"{where}.key")
                or type_difference(have.valueType, want.valueType, f"{where}.value"))
    if have != want:
        return f"{where}: {have.simpleString()} vs {want.simpleString()}"
    return None


def unwritable_columns(schema) -> List[str]:
    """The columns (at any depth) of Spark schema ``schema`` whose type would not read back as
    itself, each with why; the writer refuses them rather than write another type."""
    from pyspark.sql import types as st
    problems: List[str] = []
    plain = (st.NullType, st.BooleanType, st.ByteType, st.ShortType, st.IntegerType,
             st.LongType, st.FloatType, st.DoubleType, st.DecimalType, st.StringType,
             st.CharType, st.VarcharType, st.BinaryType, st.DateType, st.TimestampType,
             st.TimestampNTZType)
    for path, dtype in _each_type(schema):
        if isinstance(dtype, (st.StructType, st.ArrayType, st.MapType)):
            continue
        if isinstance(dtype, st.DayTimeIntervalType):
            if (dtype.startField, dtype.endField) != (st.DayTimeIntervalType.DAY,
                                                      st.DayTimeIntervalType.SECOND):
                problems.append(f"{path}: {dtype.simpleString()} (it would read back as "
                                f"interval day to second; cast it to that)")
        elif not isinstance(dtype, plain):
            problems.append(f"{path}: {dtype.simpleString()} (no Arrow type of arrowmm's "
                            f"reads back as it)")
    return problems


def names_equal_ignoring_case(schema) -> List[str]:
    """The sibling names (at any depth) of Spark schema ``schema`` equal ignoring case, each
    as ``path: [names]``: Spark resolves names ignoring case unless ``spark.sql.caseSensitive``
    is set, and neither column could then be selected (Parquet's writes refuse them)."""
    from pyspark.sql import types as st
    found: List[str] = []
    for path, dtype in _each_type(schema):
        if isinstance(dtype, st.StructType):
            seen: dict = {}
            for f in dtype.fields:
                seen.setdefault(f.name.lower(), []).append(f.name)
            found.extend(f"{path or 'columns'}: {names}" for names in seen.values() if len(names) > 1)
    return found


def _each_type(dtype, path: str = ""):
    """``(path, type)`` of Spark type ``dtype`` and of every type inside it, depth first (a
    struct's fields by name, then ``element``, ``key``, ``value``)."""
    from pyspark.sql import types as st
    yield path, dtype
    if isinstance(dtype, st.StructType):
        for f in dtype.fields:
            yield from _each_type(f.dataType, f"{path}.{f.name}" if path else f.name)
    elif isinstance(dtype, st.ArrayType):
        yield from _each_type(dtype.elementType, f"{path}.element")
    elif isinstance(dtype, st.MapType):
        yield from _each_type(dtype.keyType, f"{path}.key")
        yield from _each_type(dtype.valueType, f"{path}.value")


def with_collations(arrow_schema, schema):
    """pyarrow schema ``arrow_schema`` (Spark's for Spark schema ``schema``) with each string
    field of a non-default collation, at any depth, recording it under ``COLLATION_KEY``; None
    when ``schema`` has no such field (the batches are written as Spark gives them)."""
    import pyarrow as pa
    from pyspark.sql import types as st
    marked = [False]

    def field(f, dtype):
        t_ = f.type
        if isinstance(dtype, st.StringType) and not dtype.isUTF8BinaryCollation():
            marked[0] = True
            return f.with_metadata({**(f.metadata or {}), COLLATION_KEY: dtype.collation})
        if isinstance(dtype, st.ArrayType) and pa.types.is_list(t_):
            return f.with_type(pa.list_(field(t_.value_field, dtype.elementType)))
        if isinstance(dtype, st.MapType) and pa.types.is_map(t_):
            return f.with_type(pa.map_(field(t_.key_field, dtype.keyType),
                                       field(t_.item_field, dtype.valueType)))
        if isinstance(dtype, st.StructType) and pa.types.is_struct(t_):
            return f.with_type(pa.struct([field(t_.field(i), c.dataType)
                                          for i, c in enumerate(dtype.fields)]))
        return f

    out = pa.schema([field(f, c.dataType) for f, c in zip(arrow_schema, schema.fields)],
                    arrow_schema.metadata)
    return out if marked[0] else None


def type_table() -> List[tuple]:
    """(Arrow type, Spark type, how) rows of the README's mapping table, computed from the code."""
    import arrowmm as am
    rows = []
    samples = [am.bool_(), am.int8(), am.int16(), am.int32(), am.int64(), am.uint8(), am.uint16(),
               am.uint32(), am.uint64(), am.float16(), am.float32(), am.float64(),
               am.decimal128(10, 2), am.decimal256(38, 4), am.date32(), am.date64(),
               am.timestamp("us", "UTC"), am.timestamp("us"), am.timestamp("ns", "Europe/Paris"),
               am.duration("us"), am.duration("s"), am.string(), am.large_string(), am.string_view(),
               am.binary(), am.large_binary(), am.fixed_size_binary(4), am.list_(am.int32()),
               am.large_list(am.int32()), am.list_view(am.int32()), am.list_(am.int32(), 3),
               am.struct([("a", am.int64())]), am.map_(am.string(), am.int64()),
               am.dictionary(am.int32(), am.string()), am.null(), am.time64("us"),
               am.month_day_nano_interval(), am.decimal256(76, 0)]
    for dtype in samples:
        try:
            rows.append((str(dtype), spark_type(dtype, False).simpleString(), "as is"))
        except SparkTypeError:
            try:
                rows.append((str(dtype), spark_type(dtype, True).simpleString(), "cast"))
            except SparkTypeError as exc:
                rows.append((str(dtype), "-", str(exc).split(f"{dtype} (", 1)[-1][:-1]))
    return rows

