"""Which column a filter pushed to the JVM reader (``format("arrowmm_jvm")``) names, in a real
session (review 23: F2).

Spark names a pushed filter's column as a multi-part identifier: ``s.a`` is field ``a`` of the
struct ``s``, and a top-level column whose name is not a plain identifier comes back-quoted
(```s.a```, ```key x```).  The footer statistics describe top-level columns only, so a nested
field is never judged by them (least of all by those of a column named ``s.a``), and a quoted
top-level name is judged by its own column's.  Skipping is proven with a hostile batch: a read
that touches it raises, so a query that succeeds did not read it.
"""
from __future__ import annotations

import struct

import pyarrow as pa
import pytest

import arrowmm
from arrowmm.spark import jar as jvm_jar

pytest.importorskip("pyspark", reason="pyspark is in the test extras; install them")

FMT = jvm_jar.JVM_FORMAT
HOSTILE = "do not fit in the|starts before the buffer before it ends"


def test_a_nested_field_is_not_judged_by_a_column_named_like_it(spark, tmp_path):
    # the column "s.a" holds 1, 2 (its statistics exclude s.a > 5); field a of s holds 10, 20
    path = str(tmp_path / "nested.arrow")
    arrowmm.write_file(path, pa.table({
        "s": pa.array([{"a": 10}, {"a": 20}], pa.struct([("a", pa.int64())])),
        "s.a": pa.array([1, 2], pa.int64())}), statistics=True)
    df = spark.read.format(FMT).load(path)
    assert sorted(r.s.a for r in df.where("s.a > 5").collect()) == [10, 20]
    assert [r.s.a for r in df.where("s.a = 10").collect()] == [10]
    assert [r.s.a for r in df.where("s.a in (20)").collect()] == [20]
    assert [r["s.a"] for r in df.where("`s.a` > 1").collect()] == [2]


@pytest.mark.parametrize("name", ["key.x", "key x", "1key"])
def test_a_quoted_top_level_name_is_judged_by_its_column(spark, tmp_path, name):
    # batch 0 (keys 0..49) claims a terabyte-long buffer: reading it raises
    batches = [pa.record_batch({name: pa.array(range(start, start + n), pa.int64())})
               for start, n in [(0, 50), (50, 100), (150, 100)]]
    path = tmp_path / "keys.arrow"
    with arrowmm.new_file(str(path), batches[0].schema, statistics=True) as w:
        for b in batches:
            w.write(b)
    data = path.read_bytes()
    pattern = struct.pack("<qq", 0, 8 * 50)
    assert data.count(pattern) == 1
    path.write_bytes(data.replace(pattern, struct.pack("<qq", 0, 1 << 40)))
    df = spark.read.format(FMT).load(str(path))
    with pytest.raises(Exception, match=HOSTILE):
        df.collect()
    column = f"`{name}`"
    assert df.where(f"{column} >= 240").count() == 10
    assert [r[0] for r in df.where(f"{column} = 60").collect()] == [60]
