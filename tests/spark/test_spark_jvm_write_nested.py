"""Nested columns written by the JVM writer (``df.write.format("arrowmm_jvm")``): struct, array,
map (at any depth, nulls at every level, empty arrays and maps) and the null type, read back
with the same values by pyarrow, arrowmm, the JVM reader and the Python source."""
from __future__ import annotations

import datetime
import decimal
import json
import os

import pyarrow as pa
import pytest

import arrowmm
from arrowmm.spark import jar as jvm_jar

pytest.importorskip("pyspark", reason="pyspark is in the test extras; install them")
from pyspark.sql import Row
from pyspark.sql.types import ArrayType, MapType, StructType

FMT = jvm_jar.JVM_FORMAT
UTC = datetime.timezone.utc

SCHEMA = ("id long, "
          "st struct<a: int, s: string, inner: struct<x: double, d: date>, "
          "sm: map<string, int>>, "
          "arr array<bigint>, "
          "nest array<array<string>>, "
          "mp map<string, bigint>, "
          "ma map<int, array<int>>, "
          "arst array<struct<p: int, q: string, m: decimal(20, 3), t: timestamp>>, "
          "bins array<binary>, "
          "nul void")


def _row(i):
    def pick(*choices):
        return choices[i % len(choices)]
    return (
        i,
        None if i % 5 == 0 else {
            "a": None if i % 3 == 0 else i,
            "s": pick("héllo", None, ""),
            "inner": None if i % 4 == 1 else {"x": pick(1.5, None, float("inf")),
                                              "d": pick(datetime.date(2024, 2, 29), None)},
            "sm": pick({"k": i, "n": None}, None, {}),
        },
        pick(None, [], [i, None, -i], [2**63 - 1]),
        pick([[], None, ["x", None, ""]], None, [], [["日本"]]),
        pick(None, {}, {"a": i, "b": None}),
        pick({1: [1, None], 2: []}, None, {3: None}),
        pick([{"p": i, "q": None, "m": decimal.Decimal("-12345678901234567.891"),
               "t": datetime.datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=UTC)}, None], [],
             [{"p": None, "q": "q", "m": None, "t": None}], None),
        pick([b"\x00\xff", None, b""], None),
        None,
    )


def _plain(value, dtype):
    """One form for Spark's and the Arrow readers' values: structs as dicts, maps as dicts (the
    Arrow readers give (key, value) pairs), by the Spark type."""
    if value is None:
        return None
    if isinstance(dtype, StructType):
        if isinstance(value, Row):
            value = value.asDict()
        elif isinstance(value, tuple):  # a top-level row as given to createDataFrame
            value = dict(zip(dtype.names, value))
        return {f.name: _plain(value[f.name], f.dataType) for f in dtype.fields}
    if isinstance(dtype, ArrayType):
        return [_plain(v, dtype.elementType) for v in value]
    if isinstance(dtype, MapType):
        items = value.items() if isinstance(value, dict) else value
        return {k: _plain(v, dtype.valueType) for k, v in items}
    if isinstance(value, datetime.datetime) and value.tzinfo is None and dtype.typeName() == "timestamp":
        return value.astimezone(UTC)  # Spark hands timestamps out in local time, naive
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    return value


def _rows(rows, schema):
    out = [_plain(r, schema) for r in rows]
    return sorted(out, key=lambda r: r["id"])


def _files(out):
    with open(os.path.join(out, "_SUCCESS")) as f:
        return [os.path.join(out, n) for n in json.load(f)["files"]]


@pytest.mark.parametrize("compression", [None, "zstd"])
def test_nested_columns_written_read_back_everywhere(spark, tmp_path, compression):
    df = spark.createDataFrame([_row(i) for i in range(23)], SCHEMA)
    schema = df.schema
    expected = _rows([_row(i) for i in range(23)], schema)  # what went in, plainly
    out = str(tmp_path / "nested")
    writer = df.repartition(2).write.format(FMT).option("maxRecordsPerBatch", "4")
    if compression:
        writer = writer.option("compression", compression)
    writer.save(out)

    files = _files(out)
    with_pyarrow = pa.concat_tables([pa.ipc.open_file(p).read_all() for p in files])
    assert _rows(with_pyarrow.to_pylist(), schema) == expected
    assert with_pyarrow.schema.field("arr").type == pa.list_(pa.field("element", pa.int64()))
    assert with_pyarrow.schema.field("mp").type == pa.map_(pa.string(), pa.int64())
    assert with_pyarrow.schema.field("nul").type == pa.null()
    assert with_pyarrow.schema.field("st").type.field("inner").type == \
        pa.struct([("x", pa.float64()), ("d", pa.date32())])
    assert sum(pa.ipc.open_file(p).num_record_batches for p in files) >= 6  # 4-row batches

    with_arrowmm = []
    for p in files:
        with_arrowmm += arrowmm.open_file(p).read_all().to_pylist()
    assert _rows(with_arrowmm, schema) == expected

    for fmt in (FMT, "arrowmm_python"):
        back = spark.read.format(fmt).load(out)
        assert [f.dataType for f in back.schema.fields] == [f.dataType for f in schema.fields], fmt
        assert _rows(back.collect(), schema) == expected, fmt
    # nested fields in queries over what was written
    back = spark.read.format(FMT).load(out)
    assert back.where("st.inner.x = 1.5").count() == \
        sum(1 for r in expected if r["st"] and r["st"]["inner"] and r["st"]["inner"]["x"] == 1.5)
    assert back.selectExpr("sum(size(arr))").first()[0] == \
        sum(len(r["arr"]) for r in expected if r["arr"] is not None)  # size(null) is null
    # an append of the same schema lands (the files' Spark schema is the DataFrame's)
    df.write.format(FMT).mode("append").save(out)
    assert spark.read.format(FMT).load(out).count() == 46


def test_deep_and_wide_nesting_and_big_lists(spark, tmp_path):
    rows = [(i, [[{"k": [j for j in range(i % 4)], "v": {str(j): [j] for j in range(i % 3)}}]
                 for _ in range(i % 3)], list(range(i * 300))) for i in range(12)]
    df = spark.createDataFrame(
        rows, "id int, deep array<array<struct<k: array<int>, v: map<string, array<long>>>>>, "
              "big array<int>")
    out = str(tmp_path / "deep")
    df.coalesce(1).write.format(FMT).option("maxRecordsPerBatch", "5").save(out)
    table = pa.concat_tables([pa.ipc.open_file(p).read_all() for p in _files(out)])
    assert _rows(table.to_pylist(), df.schema) == _rows(df.collect(), df.schema)
    assert _rows(spark.read.format(FMT).load(out).collect(), df.schema) == \
        _rows(df.collect(), df.schema)


def test_unwritable_nested_fields_are_named(spark, tmp_path):
    df = spark.range(1).selectExpr("id as k", "named_struct('i', interval 1 day) as s")
    with pytest.raises(Exception, match=r"column `s` of the type \"STRUCT<i: INTERVAL DAY|"
                                        r"column 's\.i': the JVM writer does not write"):
        df.write.format(FMT).save(str(tmp_path / "iv"))
    assert not os.path.exists(tmp_path / "iv" / "_arrowmm_log") or not _files(str(tmp_path / "iv"))
