"""The schema a JVM connector write leaves and a read gives back (review 7: 1, 2, 3, 6, 7, 9).

A directory's columns are nullable at every level when read (appends may add nulls: Spark's
file sources say the same, ``asNullable``); appends and reads compare schemas without
nullability and name the column that differs; a collated string keeps its collation through
the field metadata key ``arrowmm.spark.collation``; ``partitionBy`` is refused; catalog tables
``USING arrowmm`` read and write their location.
"""
from __future__ import annotations

import os

import pyarrow as pa
import pytest

from arrowmm.spark import jar as jvm_jar

pytest.importorskip("pyspark", reason="pyspark is in the test extras; install them")

FMT = jvm_jar.FORMAT  # "arrowmm": the JVM connector in a session with its jar
COLLATION_KEY = b"arrowmm.spark.collation"


def _not_null(spark):
    return spark.range(0, 3, 1, 1)  # id bigint NOT NULL: 0, 1, 2


def _with_null(spark):
    return spark.sql("select cast(null as bigint) id union all select 10L id").coalesce(1)


def _sorted(values):
    return sorted(values, key=lambda v: (v is not None, v))


def _arrow_files(out):
    return sorted(os.path.join(out, n) for n in os.listdir(out) if n.endswith(".arrow"))


# --- review 7: 1 ---------------------------------------------------------------------------------
def test_nulls_appended_to_a_not_null_column_read_back_as_nulls(spark, tmp_path):
    out = str(tmp_path / "out")
    _not_null(spark).write.format(FMT).mode("overwrite").save(out)
    _with_null(spark).write.format(FMT).mode("append").save(out)
    df = spark.read.format(FMT).load(out)
    assert df.schema["id"].nullable
    assert _sorted(r.id for r in df.collect()) == [None, 0, 1, 2, 10]
    assert spark.read.format(FMT).load(out).filter("id is null").count() == 1
    assert spark.read.format(FMT).load(out).selectExpr("count(id)").first()[0] == 4
    given = spark.read.format(FMT).schema("id bigint not null").load(out)  # cannot vouch for it
    assert given.schema["id"].nullable
    assert _sorted(r.id for r in given.collect()) == [None, 0, 1, 2, 10]


def test_every_level_of_a_read_schema_is_nullable(spark, tmp_path):
    """A file whose fields are all NOT NULL (nested too) still reads as nullable everywhere."""
    field = pa.field
    schema = pa.schema([
        field("a", pa.list_(field("item", pa.int64(), False)), False),
        field("m", pa.map_(pa.string(), field("value", pa.int64(), False)), False),
        field("s", pa.struct([field("x", pa.int64(), False)]), False),
    ])
    table = pa.table({"a": [[1]], "m": [[("k", 2)]], "s": [{"x": 3}]}, schema=schema)
    path = str(tmp_path / "f.arrow")
    with pa.ipc.new_file(path, schema) as w:
        w.write_table(table)
    got = spark.read.format(FMT).load(path).schema
    assert [f.nullable for f in got.fields] == [True, True, True]
    assert got["a"].dataType.containsNull
    assert got["m"].dataType.valueContainsNull
    assert got["s"].dataType["x"].nullable


# --- review 7: 3 and 6 ---------------------------------------------------------------------------
def test_appends_differing_only_in_nested_nullability_are_read(spark, tmp_path):
    out = str(tmp_path / "out")
    spark.range(2).selectExpr("id", "array(id) a", "named_struct('x', id) s") \
        .write.format(FMT).mode("overwrite").save(out)
    spark.range(2).selectExpr("id", "array(id, null) a",
                              "named_struct('x', cast(null as bigint)) s") \
        .write.format(FMT).mode("append").save(out)
    rows = sorted(str(r) for r in spark.read.format(FMT).load(out).collect())
    assert rows == ["Row(id=0, a=[0, None], s=Row(x=None))", "Row(id=0, a=[0], s=Row(x=0))",
                    "Row(id=1, a=[1, None], s=Row(x=None))", "Row(id=1, a=[1], s=Row(x=1))"]


def test_files_differing_only_in_nested_nullability_are_read(spark, tmp_path):
    """Files another writer made (pyarrow here), one with list<item not null>, one without."""
    for i, nullable in enumerate((False, True)):
        schema = pa.schema([pa.field("a", pa.list_(pa.field("item", pa.int64(), nullable)))])
        values = [[i]] if not nullable else [[i, None]]
        with pa.ipc.new_file(str(tmp_path / f"part-{i}.arrow"), schema) as w:
            w.write_table(pa.table({"a": values}, schema=schema))
    rows = sorted(str(r.a) for r in spark.read.format(FMT).load(str(tmp_path)).collect())
    assert rows == ["[0]", "[1, None]"]


def test_a_refused_append_names_the_column_that_differs(spark, tmp_path):
    out = str(tmp_path / "out")
    spark.range(2).selectExpr("id", "array(id) a").write.format(FMT).mode("overwrite").save(out)
    with pytest.raises(Exception) as refused:
        spark.range(2).selectExpr("id", "array(cast(id as int)) a") \
            .write.format(FMT).mode("append").save(out)
    message = str(refused.value)
    assert "column 'a'" in message and "array<int>" in message and "array<bigint>" in message


def test_a_refused_read_names_the_column_that_differs(spark, tmp_path):
    for i, type_ in enumerate((pa.int64(), pa.int32())):
        schema = pa.schema([pa.field("id", pa.int64()), pa.field("a", pa.list_(type_))])
        with pa.ipc.new_file(str(tmp_path / f"part-{i}.arrow"), schema) as w:
            w.write_table(pa.table({"id": [i], "a": [[i]]}, schema=schema))
    with pytest.raises(Exception) as refused:
        spark.read.format(FMT).load(str(tmp_path)).collect()
    message = str(refused.value)
    assert "column 'a'" in message and "array<int>" in message and "array<bigint>" in message


# --- review 7: 7 ---------------------------------------------------------------------------------
def test_partition_by_is_refused_before_any_task(spark, tmp_path):
    out = str(tmp_path / "out")
    df = spark.range(4).selectExpr("id % 2 as k", "id")
    with pytest.raises(Exception, match="partitionBy"):
        df.write.format(FMT).partitionBy("k").mode("overwrite").save(out)
    assert not os.path.exists(out)
    with pytest.raises(Exception, match="PARTITIONED BY"):
        spark.sql(f"create table t_jvm_parted (k bigint, id bigint) using {FMT} "
                  f"partitioned by (k) location '{out}'")
    assert not spark.catalog.tableExists("t_jvm_parted")


# --- names equal ignoring case --------------------------------------------------------------------
@pytest.mark.parametrize("columns", ["1 as a, 2 as A", "named_struct('x', 1, 'X', 2) as s"])
def test_names_equal_ignoring_case_are_refused_as_parquet_refuses_them(spark, tmp_path, columns):
    """In a case-insensitive session (Spark's default) neither column would be readable by
    name; Parquet's writes refuse them, naming the column, and so does the connector."""
    out = str(tmp_path / "out")
    df = spark.sql(f"select {columns}")
    with pytest.raises(Exception, match="COLUMN_ALREADY_EXISTS") as refused:
        df.write.format(FMT).mode("overwrite").save(out)
    assert "`a`" in str(refused.value) or "`x`" in str(refused.value)
    assert not [n for n in os.listdir(out) if n.endswith(".arrow")] if os.path.exists(out) else True
    spark.conf.set("spark.sql.caseSensitive", "true")
    try:  # a case-sensitive session tells them apart, as Parquet's writes do there
        df.write.format(FMT).mode("overwrite").save(out)
        assert spark.read.format(FMT).load(out).collect() == df.collect()
    finally:
        spark.conf.unset("spark.sql.caseSensitive")


# --- review 7: 2 ---------------------------------------------------------------------------------
def test_collated_strings_keep_their_collation_at_every_depth(spark, tmp_path):
    out = str(tmp_path / "out")
    src = spark.sql("select id, cast(concat('A', id) as string collate UTF8_LCASE) c, "
                    "array(cast('X' as string collate UNICODE_CI)) a, "
                    "named_struct('x', cast('Y' as string collate UTF8_LCASE)) s, "
                    "map('K', cast('V' as string collate UNICODE_CI)) m, "
                    "cast('plain' as string) p from range(3)")
    # one row per batch: the byte-wise statistics of each batch must not skip 'A0' for 'a0'
    src.coalesce(1).write.format(FMT).option("maxRecordsPerBatch", "1").save(out)
    back = spark.read.format(FMT).load(out)
    for name in ("c", "a", "s", "m", "p"):  # (simpleString: collations shown, nullability not)
        assert back.schema[name].dataType.simpleString() == \
            src.schema[name].dataType.simpleString(), back.schema[name]
    assert back.filter("c = 'a0'").count() == 1  # compared case-insensitively
    assert back.filter("c = 'a0'").select("id").first()[0] == 0
    field = pa.ipc.open_file(_arrow_files(out)[0]).schema.field("c")
    assert field.metadata == {COLLATION_KEY: b"UTF8_LCASE"}
    item = pa.ipc.open_file(_arrow_files(out)[0]).schema.field("a").type.value_field
    assert item.metadata == {COLLATION_KEY: b"UNICODE_CI"}
    plain = pa.ipc.open_file(_arrow_files(out)[0]).schema.field("p")
    assert not plain.metadata


def test_a_collation_recorded_by_another_writer_is_read(spark, tmp_path):
    """The key is the engines' shared contract: a file any writer made with it reads collated."""
    schema = pa.schema([pa.field("c", pa.string(), metadata={COLLATION_KEY: b"UTF8_LCASE"})])
    path = str(tmp_path / "f.arrow")
    with pa.ipc.new_file(path, schema) as w:
        for value in ("A0", "b"):
            w.write_table(pa.table({"c": [value]}, schema=schema))
    back = spark.read.format(FMT).load(path)
    assert back.schema["c"].dataType.collation == "UTF8_LCASE"
    assert back.filter("c = 'a0'").count() == 1


def test_an_unknown_collation_is_named(spark, tmp_path):
    schema = pa.schema([pa.field("c", pa.string(), metadata={COLLATION_KEY: b"NO_SUCH"})])
    path = str(tmp_path / "f.arrow")
    with pa.ipc.new_file(path, schema) as w:
        w.write_table(pa.table({"c": ["a"]}, schema=schema))
    with pytest.raises(Exception, match="c: string with collation 'NO_SUCH'"):
        spark.read.format(FMT).load(path).collect()


# --- review 7: 9 ---------------------------------------------------------------------------------
def test_a_table_using_arrowmm_takes_inserts_and_reads_them(spark, tmp_path):
    location = str(tmp_path / "loc")
    spark.sql("drop table if exists t_jvm_insert")
    spark.sql(f"create table t_jvm_insert (id bigint, s string) using {FMT} "
              f"location '{location}'")
    try:
        assert spark.table("t_jvm_insert").count() == 0  # no file yet
        spark.sql("insert into t_jvm_insert values (1, 'a')")
        spark.sql("insert into t_jvm_insert values (2, 'b')")
        assert sorted(tuple(r) for r in spark.table("t_jvm_insert").collect()) == \
            [(1, "a"), (2, "b")]
        assert sorted(tuple(r) for r in spark.read.format(FMT).load(location).collect()) == \
            [(1, "a"), (2, "b")]
        spark.sql("insert overwrite t_jvm_insert values (3, 'c')")
        assert [tuple(r) for r in spark.sql("select * from t_jvm_insert").collect()] == [(3, "c")]
    finally:
        spark.sql("drop table if exists t_jvm_insert")
    # a table over files already there takes their schema
    spark.sql(f"create table t_jvm_insert using {FMT} location '{location}'")
    try:
        assert spark.table("t_jvm_insert").schema.simpleString() == "struct<id:bigint,s:string>"
        assert [tuple(r) for r in spark.table("t_jvm_insert").collect()] == [(3, "c")]
    finally:
        spark.sql("drop table if exists t_jvm_insert")


def test_save_as_table_with_a_path_reads_back(spark, tmp_path):
    location = str(tmp_path / "loc")
    spark.sql("drop table if exists t_jvm_saved")
    try:
        spark.range(3).write.format(FMT).option("path", location).saveAsTable("t_jvm_saved")
        assert sorted(r.id for r in spark.table("t_jvm_saved").collect()) == [0, 1, 2]
        spark.range(3, 5).write.format(FMT).mode("append").saveAsTable("t_jvm_saved")
        spark.range(5, 6).write.insertInto("t_jvm_saved")
        assert sorted(r.id for r in spark.table("t_jvm_saved").collect()) == [0, 1, 2, 3, 4, 5]
        spark.range(7, 8).write.format(FMT).mode("overwrite").option("path", location) \
            .saveAsTable("t_jvm_saved")
        assert [r.id for r in spark.table("t_jvm_saved").collect()] == [7]
    finally:
        spark.sql("drop table if exists t_jvm_saved")


def test_a_write_without_a_path_asks_for_save_path(spark, tmp_path):
    with pytest.raises(Exception, match=r"save\(path\)"):
        spark.range(3).write.format(FMT).mode("append").save()
    with pytest.raises(Exception, match="needs a location"):
        spark.range(3).write.format(FMT).saveAsTable("t_jvm_managed")
    assert not spark.catalog.tableExists("t_jvm_managed")
