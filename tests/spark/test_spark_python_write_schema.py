"""Schemas of the Python data source's writes (``format("arrowmm_python")``) in a real session.

A directory's table schema is nullable at every level, as Spark's file sources declare it;
files that differ only in nullability read together; an append of another schema is refused
before any task writes; a type that would read back as another (VARIANT) is refused at write;
a collated string keeps its collation (field metadata ``arrowmm.spark.collation``, shared with
the JVM connector).  Review 7, findings 1 to 5, 8 and 9.
"""
from __future__ import annotations

import os
import threading

import pyarrow as pa
import pytest

import arrowmm

pytest.importorskip("pyspark", reason="pyspark is in the test extras; install them")

PY = "arrowmm_python"
#: the key both engines record a collation under (a contract between them: spelled out here)
COLLATION = b"arrowmm.spark.collation"


def _ids(df):
    return sorted((r[0] for r in df.collect()), key=lambda v: (v is not None, v))


def _not_null(spark):
    return spark.range(0, 3, 1, 1)  # id bigint NOT NULL: 0, 1, 2


def _with_null(spark):
    return spark.sql("select cast(null as bigint) id union all select 10L id").coalesce(1)


def _visible(out):
    return sorted(n for n in os.listdir(out) if not n.startswith(("_", ".")))


def test_a_directory_reads_nullable_at_every_level(spark, tmp_path):
    """Nulls appended to a column first written NOT NULL are seen (Spark told NOT NULL folds
    ``id is null`` to false), nested levels too."""
    out = str(tmp_path / "out")
    _not_null(spark).write.format(PY).mode("overwrite").save(out)
    _with_null(spark).write.format(PY).mode("append").save(out)
    df = spark.read.format(PY).load(out)
    assert df.filter("id is null").count() == 1
    nested = str(tmp_path / "nested")
    spark.range(2).selectExpr("id", "array(id) a", "map(id, id) m", "named_struct('x', id) s") \
        .write.format(PY).mode("overwrite").save(nested)
    schema = spark.read.format(PY).load(nested).schema
    assert schema.simpleString() == "struct<id:bigint,a:array<bigint>,m:map<bigint,bigint>," \
                                    "s:struct<x:bigint>>"
    assert [f.nullable for f in schema.fields] == [True] * 4
    assert schema["a"].dataType.containsNull and schema["m"].dataType.valueContainsNull
    assert schema["s"].dataType["x"].nullable


def test_files_differing_only_in_nullability_read_together(spark, tmp_path):
    """A nullable column appended to by NOT NULL rows, and ``array(id)`` appended to by
    ``array(id, null)``: the appends are accepted and the directories read (as Parquet's)."""
    out = str(tmp_path / "out")
    _with_null(spark).write.format(PY).mode("overwrite").save(out)
    _not_null(spark).write.format(PY).mode("append").save(out)
    assert _ids(spark.read.format(PY).load(out)) == [None, 0, 1, 2, 10]
    assert spark.read.format(PY).load(out).selectExpr("count(id)").first()[0] == 4
    nested = str(tmp_path / "nested")
    spark.range(2).selectExpr("id", "array(id) a").write.format(PY).mode("overwrite").save(nested)
    spark.range(2).selectExpr("id", "array(id, null) a").write.format(PY).mode("append") \
        .save(nested)
    rows = sorted(str(r) for r in spark.read.format(PY).load(nested).collect())
    assert rows == ["Row(id=0, a=[0, None])", "Row(id=0, a=[0])",
                    "Row(id=1, a=[1, None])", "Row(id=1, a=[1])"]


def test_files_of_other_types_are_refused_saying_where(spark, tmp_path):
    """Two files whose nested types differ: the refusal names the place and both types."""
    out = tmp_path / "mixed"
    out.mkdir()
    for name, values in (("a.arrow", pa.array([[1]], pa.list_(pa.int64()))),
                         ("b.arrow", pa.array([[1]], pa.list_(pa.int32())))):
        arrowmm.write_file(str(out / name), pa.table({"a": values}))
    with pytest.raises(Exception, match=r"at a\.element: int vs bigint"):
        spark.read.format(PY).load(str(out)).collect()


@pytest.mark.parametrize("columns", [
    ["cast(id as int) id", "cast(id as string) s"],        # another type
    ["id", "cast(id as string) s", "id as extra"],          # an extra column
    ["id"],                                                 # a missing column
    ["id", "cast(id as string) t"],                         # a renamed column
    ["cast(id as string) s", "id"],                         # reordered
])
def test_an_append_of_another_schema_is_refused_before_any_task(spark, tmp_path, columns):
    out = str(tmp_path / "out")
    spark.range(3).selectExpr("id", "cast(id as string) s").write.format(PY) \
        .mode("overwrite").save(out)
    before = _visible(out)
    with pytest.raises(Exception, match=r"cannot append rows of schema .* to a directory whose "
                                        r"files have struct<id:bigint,s:string> \(.*\.arrow; "
                                        r"differs at .*\); write with mode\('overwrite'\)"):
        spark.range(3).selectExpr(*columns).write.format(PY).mode("append").save(out)
    assert _visible(out) == before
    assert _ids(spark.read.format(PY).load(out).select("id")) == [0, 1, 2]


@pytest.mark.parametrize("columns, named", [("1 as a, 2 as A", "columns: ['a', 'A']"),
                                             ("1 as a, 2 as a", "columns: ['a', 'a']"),
                                             ("array(named_struct('x', 1, 'X', 2)) as l",
                                              "l.element: ['x', 'X']")])
def test_names_equal_ignoring_case_are_refused_naming_them(spark, tmp_path, columns, named):
    """A session resolving names ignoring case (the default) could select neither column;
    Parquet's writes refuse them too.  The Python source cannot see the session's setting."""
    out = str(tmp_path / "out")
    with pytest.raises(Exception, match="equal ignoring case") as refused:
        spark.sql(f"select {columns}").write.format(PY).mode("overwrite").save(out)
    assert named in str(refused.value)
    assert not os.path.exists(out) or not _visible(out)


def test_variant_and_other_types_that_read_back_otherwise_are_refused(spark, tmp_path):
    out = str(tmp_path / "out")
    src = spark.sql("select id, named_struct('v', parse_json('{\"a\": 1}')) s, "
                    "interval 3 hours h from range(2)")
    with pytest.raises(Exception, match=r"s\.v: variant .*\n.*h: interval hour"):
        src.write.format(PY).mode("overwrite").save(out)
    assert not os.path.exists(out)


def test_collated_strings_keep_their_collation(spark, tmp_path):
    out = str(tmp_path / "out")
    src = spark.sql("select id, cast(concat('A', id) as string collate UTF8_LCASE) c, "
                    "array(cast('X' as string collate UNICODE_CI)) a, "
                    "named_struct('k', cast('Y' as string collate UTF8_LCASE), 'p', 'z') s, "
                    "'plain' p from range(3)")
    src.write.format(PY).mode("overwrite").save(out)
    back = spark.read.format(PY).load(out)
    assert back.schema.simpleString() == src.schema.simpleString()
    assert back.filter("c = 'a0'").count() == 1
    pushed = spark.read.format(PY).option("pushdown", "true").load(out)  # (bytes differ: no skip)
    assert pushed.filter("c = 'a0' or c >= 'a2'").count() == 2
    files = [os.path.join(out, n) for n in _visible(out)]
    schema = pa.ipc.open_file(files[0]).schema
    assert schema.field("c").metadata == {COLLATION: b"UTF8_LCASE"}
    assert schema.field("a").type.value_field.metadata == {COLLATION: b"UNICODE_CI"}
    assert schema.field("s").type.field("k").metadata == {COLLATION: b"UTF8_LCASE"}
    assert not schema.field("s").type.field("p").metadata and not schema.field("p").metadata


def test_writes_from_another_thread(spark, tmp_path):
    """Spark looks a registered Python source up through the JVM thread's active session, which
    a Python thread other than the session's maker has none of."""
    out = str(tmp_path / "out")
    result = {}

    def append():
        try:
            spark.range(3).write.format(PY).mode("append").save(out)
            result["ok"] = True
        except Exception as exc:  # noqa: BLE001  (reported below)
            result["error"] = str(exc)[:500]

    worker = threading.Thread(target=append)
    worker.start()
    worker.join()
    assert result.get("ok"), result.get("error")
    assert _ids(spark.read.format(PY).load(out)) == [0, 1, 2]


def test_a_catalog_table_is_refused_saying_why_and_what_works(spark, tmp_path):
    """Spark hands a Python data source no catalog table's LOCATION or OPTIONS (options are
    empty), so neither INSERT nor SELECT can find the directory: both say so and what works."""
    location = tmp_path / "loc"
    spark.sql("drop table if exists t_python")
    spark.sql(f"create table t_python (id bigint, s string) using {PY} location '{location}'")
    try:
        why = r"no path: use {}\. A catalog table .* CREATE TEMPORARY VIEW .* OPTIONS \(path"
        with pytest.raises(Exception, match=why.format(r"df\.write\.format\('arrowmm_python'\)"
                                                       r"\.save\(path\)")):
            spark.sql("insert into t_python values (1, 'a')")
        with pytest.raises(Exception, match=why.format(r"spark\.read\.format\('arrowmm_python'\)"
                                                       r"\.load\(path\)")):
            spark.table("t_python").collect()
    finally:
        spark.sql("drop table if exists t_python")
    spark.range(2).selectExpr("id", "'a' s").write.format(PY).mode("append").save(str(location))
    spark.sql(f"create or replace temporary view v_python using {PY} options (path '{location}')")
    assert _ids(spark.table("v_python")) == [0, 1]


def test_a_write_without_a_path_says_save_path(spark):
    with pytest.raises(Exception, match=r"no path: use df\.write\.format\('arrowmm_python'\)"
                                        r"\.save\(path\)"):
        spark.range(1).write.format(PY).mode("append").save()
