"""The JVM reader (``format("arrowmm_jvm")``, stage 1 of issue 16) in a real local Spark session.

Reads are compared with Spark's own conversion of pyarrow's reading of the same file
(``spark.createDataFrame``), so both the values and the Spark types are checked.
"""
from __future__ import annotations

import datetime
import decimal
import json
import os
import struct
import subprocess
import sys

import pyarrow as pa
import pytest

import arrowmm
from arrowmm.spark import jar as jvm_jar

pytest.importorskip("pyspark", reason="pyspark is in the test extras; install them")
from pyspark.sql import SparkSession, functions as F

UTC = datetime.timezone.utc
FMT = jvm_jar.JVM_FORMAT


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    from pyspark import SparkContext
    from arrowmm.spark.session import local_session
    jvm_running = SparkContext._gateway is not None  # an earlier test module's session
    session = local_session("local[2]", "arrowmm-jvm-tests", str(tmp_path_factory.mktemp("spark")),
                            jvm=True, **{"spark.default.parallelism": "2"})
    if jvm_running:
        # spark.jars reaches the driver's class path only when the JVM starts; in a JVM that
        # is already running, ADD JAR puts it on this (the calling) thread's class loader
        session.sql(f"ADD JAR '{jvm_jar.jar_path()}'")
    yield session
    session.stop()


def _rows(df, order):
    return [r.asDict() for r in df.orderBy(*order).collect()]


def _every_type_table(n: int = 11) -> pa.Table:
    """One column of every type the JVM reader reads, nulls in every nullable column."""
    def some(values, type_):
        return pa.array([None if i % 4 == 3 else values[i % len(values)] for i in range(n)], type_)
    return pa.table({
        "id": pa.array(range(n), pa.int64()),
        "b": some([True, False, False], pa.bool_()),
        "i8": some([-128, 127], pa.int8()),
        "i16": some([-3, 30000], pa.int16()),
        "i32": some([-7, 2**31 - 1], pa.int32()),
        "i64": some([-2**63, 2**63 - 1], pa.int64()),
        "f32": some([1.5, -2.25], pa.float32()),
        "f64": some([float("inf"), 3.25, -0.0], pa.float64()),
        "dec": some([decimal.Decimal("12345.67"), decimal.Decimal("-0.01")], pa.decimal128(9, 2)),
        "dec38": some([decimal.Decimal("-" + "9" * 28 + ".1234567890"), decimal.Decimal("1E-10")],
                      pa.decimal128(38, 10)),
        "d": some([datetime.date(2024, 2, 29), datetime.date(1969, 12, 31)], pa.date32()),
        "ts": some([datetime.datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=UTC),
                    datetime.datetime(1900, 1, 1, tzinfo=UTC)], pa.timestamp("us", "UTC")),
        "ntz": some([datetime.datetime(2024, 1, 2, 3, 4, 5, 6)], pa.timestamp("us")),
        "s": some(["héllo", "", "日本"], pa.string()),
        "ls": some(["large", "x" * 100], pa.large_string()),
        "bin": some([b"\x00\xff", b"", b"x"], pa.binary()),
        "lbin": some([b"\x01" * 9], pa.large_binary()),
        "nul": pa.nulls(n),
    })


def _expected(spark, table: pa.Table):
    """Spark's own reading of ``table``: large types as their Spark types, a naive timestamp
    as timestamp_ntz (wall-clock time), as the JVM reader maps them."""
    table = table.cast(pa.schema([
        pa.field(f.name, {pa.large_string(): pa.string(), pa.large_binary(): pa.binary()}
                 .get(f.type, f.type)) for f in table.schema])).combine_chunks()
    df = spark.createDataFrame(table)  # (one chunk: an empty chunk ends its conversion early)
    assert df.count() == table.num_rows
    if "ntz" in table.column_names:
        df = df.withColumn("ntz", F.col("ntz").cast("timestamp_ntz"))
    return df


def _write(path, table, writer, batches, **options):
    if writer == "pyarrow":
        opts = pa.ipc.IpcWriteOptions(compression=options.get("compression"))
        with pa.ipc.new_file(path, table.schema, options=opts) as w:
            for b in batches:
                w.write_batch(b)
    else:
        with arrowmm.new_file(path, table.schema, **options) as w:
            for b in batches:
                w.write(b)


@pytest.mark.parametrize("writer,options", [("pyarrow", {}), ("arrowmm", {}),
                                            ("arrowmm", {"legacy_format": True}),
                                            ("pyarrow", {"compression": "zstd"}),
                                            ("arrowmm", {"compression": "lz4"})])
def test_every_type_reads_as_spark_reads_pyarrows_reading(spark, tmp_path, writer, options):
    table = _every_type_table()
    path = str(tmp_path / "t.arrow")
    # sliced batches (offsets into the parent's buffers) and an empty one
    whole = table.combine_chunks().to_batches()[0]
    batches = [whole.slice(0, 4), whole.slice(4, 0), whole.slice(4, 3), whole.slice(7)]
    _write(path, table, writer, batches, **options)
    df = spark.read.format(FMT).load(path)
    expected = _expected(spark, pa.ipc.open_file(path).read_all())
    assert df.schema == expected.schema
    assert _rows(df, ["id"]) == _rows(expected, ["id"])
    assert df.count() == table.num_rows
    # the optimizer's row count, from the batch headers (Spark keeps it with CBO on)
    stats = df._jdf.queryExecution().optimizedPlan().scan().estimateStatistics()
    assert stats.numRows().getAsLong() == table.num_rows


def test_timestamps_in_other_units_and_date64_are_converted(spark, tmp_path):
    table = pa.table({
        "id": pa.array([0, 1, 2]),
        "s": pa.array([1, -1, None], pa.timestamp("s", "UTC")),
        "ms": pa.array([1_001, -1, None], pa.timestamp("ms", "UTC")),
        "ns": pa.array([1_000_001_999, -1, None], pa.timestamp("ns", "UTC")),
        "d64": pa.array([86_400_000 * 3, -1, None], pa.date64()),
    })
    path = str(tmp_path / "units.arrow")
    _write(path, table, "pyarrow", table.to_batches())
    got = _rows(spark.read.format(FMT).load(path), ["id"])
    epoch = datetime.datetime(1970, 1, 1)
    us = datetime.timedelta(microseconds=1)
    assert [r["s"] for r in got] == [epoch + 1_000_000 * us, epoch - 1_000_000 * us, None]
    assert [r["ms"] for r in got] == [epoch + 1_001_000 * us, epoch - 1_000 * us, None]
    # truncated toward zero, as pyarrow's cast and so the Python source reads them
    assert [r["ns"] for r in got] == [epoch + 1_000_001 * us, epoch, None]
    assert [r["d64"] for r in got] == [datetime.date(1970, 1, 4), datetime.date(1970, 1, 1),
                                       None]


def _small(path, start, n=5):
    table = pa.table({"k": pa.array(range(start, start + n), pa.int64()),
                      "v": pa.array([float(i) for i in range(n)])})
    _write(str(path), table, "pyarrow", table.to_batches())


def _keys(df):
    return sorted(r.k for r in df.select("k").collect())


def test_directories_follow_the_log_then_success_then_listing(spark, tmp_path):
    logged = tmp_path / "logged"
    (logged / "_arrowmm_log").mkdir(parents=True)
    for name, start in [("a.arrow", 0), ("b.arrow", 10), ("c.arrow", 20)]:
        _small(logged / name, start)
    (logged / ".arrowmm-job-x.arrow").write_bytes(b"uncommitted")
    for version, files in [(0, ["a.arrow"]), (1, ["a.arrow", "b.arrow"])]:
        doc = {"format": "arrowmm-manifest/1", "version": version, "files": files,
               "removed": [], "streams": {}}
        (logged / "_arrowmm_log" / f"{version:020d}.json").write_text(json.dumps(doc))
    (logged / "_SUCCESS").write_text(json.dumps({"files": ["c.arrow"]}))  # stale: the log wins
    assert _keys(spark.read.format(FMT).load(str(logged))) == list(range(0, 5)) + list(range(10, 15))

    manifest = tmp_path / "manifest"
    manifest.mkdir()
    _small(manifest / "a.arrow", 0)
    _small(manifest / "b.arrow", 10)  # not committed: not read
    (manifest / "_SUCCESS").write_text(json.dumps({"files": ["a.arrow"]}))
    assert _keys(spark.read.format(FMT).load(str(manifest))) == list(range(5))

    plain = tmp_path / "plain"
    plain.mkdir()
    _small(plain / "a.arrow", 0)
    _small(plain / "_hidden.arrow", 100)
    (plain / "notes.txt").write_text("not arrow")
    assert _keys(spark.read.format(FMT).load(str(plain))) == list(range(5))

    # a glob and a list of paths
    assert _keys(spark.read.format(FMT).load(str(tmp_path / "*" / "a.arrow"))) == \
        sorted(list(range(5)) * 3)
    assert _keys(spark.read.format(FMT).load([str(manifest), str(logged / "c.arrow")])) == \
        list(range(5)) + list(range(20, 25))


def test_a_directory_the_python_writer_committed(spark, tmp_path):
    out = str(tmp_path / "written")
    spark.range(0, 1000, numPartitions=2).selectExpr("id as k", "id * 0.5 as v") \
        .write.format("arrowmm_python").mode("overwrite").save(out)
    spark.range(1000, 1100, numPartitions=1).selectExpr("id as k", "id * 0.5 as v") \
        .write.format("arrowmm_python").mode("append").save(out)
    assert _keys(spark.read.format(FMT).load(out)) == list(range(1100))


def test_only_the_selected_columns_are_read(spark, tmp_path):
    table = _every_type_table()
    path = str(tmp_path / "t.arrow")
    _write(path, table, "pyarrow", table.to_batches())
    df = spark.read.format(FMT).load(path).select("i32", "s")
    plan = df._jdf.queryExecution().executedPlan().toString()
    assert "columns struct<i32:int,s:string>" in plan, plan
    assert _rows(df, ["i32", "s"]) == _rows(_expected(spark, table).select("i32", "s"),
                                             ["i32", "s"])
    assert spark.read.format(FMT).load(path).agg(F.sum("i32")).first()[0] == \
        sum(v for v in table["i32"].to_pylist() if v is not None)


def test_big_files_split_and_small_files_pack(spark, tmp_path):
    table = pa.table({"k": pa.array(range(40_000), pa.int64())})
    _write(str(tmp_path / "big.arrow"), table, "pyarrow", table.to_batches(max_chunksize=4_000))
    for i in range(4):
        _small(tmp_path / f"small{i}.arrow", 100_000 + 10 * i)
    big = spark.read.format(FMT).option("maxPartitionBytes", "64k").load(str(tmp_path / "big.arrow"))
    assert big.rdd.getNumPartitions() >= 4
    assert _keys(big) == list(range(40_000))
    small = spark.read.format(FMT).load(str(tmp_path / "small*.arrow"))
    # Spark's rule: each file costs spark.sql.files.openCostInBytes (4 MiB) and a partition
    # holds total / parallelism (2) = 8 MiB: two files each
    assert small.rdd.getNumPartitions() == 2
    assert len(_keys(small)) == 20


def test_differing_schemas_are_refused_naming_the_file(spark, tmp_path):
    _small(tmp_path / "a.arrow", 0)
    other = pa.table({"k": pa.array([1], pa.int32()), "v": pa.array([1.0])})
    _write(str(tmp_path / "b.arrow"), other, "pyarrow", other.to_batches())
    with pytest.raises(Exception, match=r"b\.arrow: its schema struct<k:int,v:double> differs"):
        spark.read.format(FMT).load(str(tmp_path)).collect()


def test_hostile_files_raise_clear_errors(spark, tmp_path):
    n = 1000
    table = pa.table({"x": pa.array(range(n), pa.int64())})
    good = tmp_path / "good.arrow"
    _write(str(good), table, "pyarrow", table.to_batches())
    data = good.read_bytes()

    truncated = tmp_path / "truncated.arrow"
    truncated.write_bytes(data[: len(data) // 2])
    with pytest.raises(Exception, match="truncated or not an Arrow IPC file"):
        spark.read.format(FMT).load(str(truncated)).collect()

    # the data buffer (offset 0, 8000 bytes) claims a terabyte
    pattern = struct.pack("<qq", 0, 8 * n)
    assert data.count(pattern) == 1
    huge = tmp_path / "huge_buffer.arrow"
    huge.write_bytes(data.replace(pattern, struct.pack("<qq", 0, 1 << 40)))
    with pytest.raises(Exception, match=r"column 'x', buffer 1 \(buffer 1\): offset 0 and length "
                                        r"1099511627776 do not fit in the 8000-byte message body"):
        spark.read.format(FMT).load(str(huge)).collect()

    # string offsets that leave the data buffer, or run backwards
    strings = pa.table({"s": pa.array(["a", "bb", "ccc"])})
    _write(str(tmp_path / "s.arrow"), strings, "pyarrow", strings.to_batches())
    data_s = (tmp_path / "s.arrow").read_bytes()
    offsets = struct.pack("<iiii", 0, 1, 3, 6)
    assert data_s.count(offsets) == 1
    for bad, message in [((0, 1, 3, 600), "the last offset 600 is past the 6-byte data buffer"),
                         ((0, 3, 1, 6), "offset 2 is 1, less than offset 1 \\(3\\)"),
                         ((-8, 1, 3, 6), "offset 0 is -8")]:
        hostile = tmp_path / "bad_offsets.arrow"
        hostile.write_bytes(data_s.replace(offsets, struct.pack("<iiii", *bad)))
        with pytest.raises(Exception, match="column 's', offsets buffer: " + message):
            spark.read.format(FMT).load(str(hostile)).collect()

    with pytest.raises(Exception, match="does not exist"):
        spark.read.format(FMT).load(str(tmp_path / "missing.arrow"))
    # the session (and its JVM) is still fine
    assert spark.read.format(FMT).load(str(good)).count() == n


def test_types_not_read_are_refused_naming_the_columns(spark, tmp_path):
    union = pa.UnionArray.from_sparse(pa.array([0], pa.int8()), [pa.array([1]), pa.array(["a"])])
    table = pa.table({"id": [1], "lst": pa.array([[1]], pa.list_(pa.float16())),
                      "un": union, "t": pa.array([1], pa.time64("us"))})
    path = str(tmp_path / "nested.arrow")
    _write(path, table, "pyarrow", table.to_batches())
    with pytest.raises(Exception) as err:
        spark.read.format(FMT).load(path)
    assert "un: Union(Sparse, [0, 1])" in str(err.value)
    assert "t: Time(MICROSECOND, 64)" in str(err.value)
    assert "lst" not in str(err.value)  # list<float16> reads (as array<float>)
    assert "(Spark has no union type)" in str(err.value)


def test_duplicate_column_names_are_refused(spark, tmp_path):
    table = pa.Table.from_arrays([pa.array([1]), pa.array([2])], names=["x", "x"])
    path = str(tmp_path / "dup.arrow")
    _write(path, table, "pyarrow", table.to_batches())
    with pytest.raises(Exception, match="the column name 'x' occurs more than once"):
        spark.read.format(FMT).load(path)


def test_configure_appends_the_jar_to_spark_jars():
    builder = SparkSession.Builder().config("spark.jars", "/opt/other.jar")
    assert jvm_jar.configure(builder) is builder
    assert builder._options["spark.jars"] == f"/opt/other.jar,{jvm_jar.jar_path()}"
    jvm_jar.configure(builder)  # idempotent
    assert builder._options["spark.jars"].count(jvm_jar.jar_path()) == 1
    out = subprocess.run([sys.executable, "-m", "arrowmm.spark", "jar"], capture_output=True,
                         text=True, check=True).stdout.strip()
    assert out == arrowmm.spark.jar_path() and os.path.isfile(out)


def test_the_committed_jar_is_built_from_these_sources():
    assert jvm_jar.jar_digest() == jvm_jar.sources_digest(), (
        f"{jvm_jar.JAR} is stale (its sources changed); rebuild it with: {jvm_jar.REBUILD}")
