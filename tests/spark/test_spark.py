"""The arrowmm Spark data sources in a real local Spark session (one session for the module).

The session has the JVM connector's jar, so ``format("arrowmm")`` is the JVM connector and
``format("arrowmm_python")`` the Python data source: the reads and writes run against both
engines (``engine``) and must give the same answers.  Reads are compared with
``spark.createDataFrame`` of the same data (Spark's own conversion); writes are read back by
pyarrow and by Spark.  ``test_without_the_jar_...`` checks that ``arrowmm`` is the Python
source in a session without the jar.
"""
from __future__ import annotations

import datetime
import decimal
import json
import os
import types

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
import arrowmm.spark
from tests.support.spark_support import start_jvm_session

pytest.importorskip("pyspark", reason="pyspark is in the test extras; install them")
from pyspark.sql import functions as F


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    # the JVM connector's jar is on the session: "arrowmm" is the JVM connector
    session = start_jvm_session(str(tmp_path_factory.mktemp("spark")), "local[2,2]")
    yield session
    session.stop()


#: the Python data source's name and the JVM connector's (the jar is on the session)
PY, JVM = "arrowmm_python", "arrowmm"
#: the same cases against both engines
ENGINES = [PY, JVM]


def _rows(df, order=None):
    rows = df.orderBy(*(order or df.columns[:1])).collect()
    return [r.asDict(recursive=True) for r in rows]


def _spark_table(spark, table: pa.Table, order):
    """Spark's own reading of the same data (createDataFrame from Arrow)."""
    return _rows(spark.createDataFrame(table), order)


UTC = datetime.timezone.utc


def _holdable_table(n: int = 6) -> pa.Table:
    """One column of every Arrow type Spark holds as is, nulls included."""
    ids = pa.array(range(n), pa.int64())
    def some(values, type_):
        return pa.array([None if i % 3 == 2 else values[i % len(values)] for i in range(n)], type_)
    return pa.table({
        "id": ids,
        "b": some([True, False], pa.bool_()),
        "i8": some([-128, 127], pa.int8()),
        "i16": some([-3, 30000], pa.int16()),
        "i32": some([-7, 2**31 - 1], pa.int32()),
        "f32": some([1.5, -2.25], pa.float32()),
        "f64": some([float("inf"), 3.25], pa.float64()),
        "dec": some([decimal.Decimal("12345.67"), decimal.Decimal("-0.01")], pa.decimal128(9, 2)),
        "s": some(["héllo", ""], pa.string()),
        "bin": some([b"\x00\xff", b"x"], pa.binary()),
        "d": some([datetime.date(2024, 2, 29), datetime.date(1969, 12, 31)], pa.date32()),
        "ts": some([datetime.datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=UTC),
                    datetime.datetime(1900, 1, 1, tzinfo=UTC)], pa.timestamp("us", "UTC")),
        "ntz": some([datetime.datetime(2024, 1, 2, 3, 4, 5, 6)], pa.timestamp("us")),
        "dur": some([datetime.timedelta(days=1, microseconds=5)], pa.duration("us")),
        "lst": some([[1, None, 3], []], pa.list_(pa.int32())),
        "st": some([{"a": 1, "b": "x"}], pa.struct([("a", pa.int64()), ("b", pa.string())])),
        "mp": some([[("k", 1), ("j", None)]], pa.map_(pa.string(), pa.int64())),
    })


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("writer", ["pyarrow", "arrowmm"])
@pytest.mark.parametrize("fmt", ["file", "stream"])
def test_every_holdable_type_reads_as_spark_reads_it(spark, tmp_path, writer, fmt, engine):
    table = _holdable_table()
    path = str(tmp_path / ("t.arrow" if fmt == "file" else "t.arrows"))
    batches = table.to_batches(max_chunksize=4)
    if writer == "pyarrow":
        opener = pa.ipc.new_file if fmt == "file" else pa.ipc.new_stream
        with opener(path, table.schema) as w:
            for b in batches:
                w.write_batch(b)
    else:
        opener = arrowmm.new_file if fmt == "file" else arrowmm.new_stream
        with opener(path, table.schema) as w:
            for b in batches:
                w.write(b)
    df = spark.read.format(engine).load(path)
    # createDataFrame reads a naive timestamp as the session's local time (TIMESTAMP_LTZ);
    # a file's naive timestamp is wall-clock time, which is Spark's timestamp_ntz
    expected = spark.createDataFrame(table).withColumn("ntz", F.col("ntz").cast("timestamp_ntz"))
    assert df.schema == expected.schema
    assert _rows(df, ["id"]) == _rows(expected, ["id"])


@pytest.mark.parametrize("engine", ENGINES)
def test_columns_spark_cannot_hold_are_named_and_cast_on_request(spark, tmp_path, engine):
    table = pa.table({
        "id": pa.array([1, 2, 3], pa.int64()),
        "u32": pa.array([0, 2**32 - 1, None], pa.uint32()),
        "u64": pa.array([2**64 - 1, 0, 5], pa.uint64()),
        "big": pa.array(["a", None, "c"], pa.large_string()),
        "cat": pa.array(["x", "y", "x"]).dictionary_encode(),
        "ns": pa.array([1_000_000_123_456_789, None, 0], pa.timestamp("ns", "America/New_York")),
        "half": pa.array(np.array([1.5, -2, 0.25], np.float16)),
        "d64": pa.array([86_400_000, 0, None], pa.date64()),
        "fsl": pa.array([[1, 2], [3, 4], None], pa.list_(pa.int16(), 2)),
    })
    path = str(tmp_path / "cast.arrow")
    with pa.ipc.new_file(path, table.schema) as w:
        w.write_table(table)
    if engine == PY:
        with pytest.raises(Exception) as err:
            spark.read.format(engine).load(path).collect()
        message = str(err.value)
        for name in ("u32", "u64", "big", "cat", "ns", "half", "d64", "fsl"):
            assert f"{name}:" in message
        assert "option('cast', 'true')" in message
    else:  # the JVM connector reads them as is, as the Python source does with cast
        assert _rows(spark.read.format(engine).load(path), ["id"]) == \
            _rows(spark.read.format(PY).option("cast", "true").load(path), ["id"])
    df = spark.read.format(engine).option("cast", "true").load(path)
    expected = pa.table({
        "id": table["id"],
        "u32": table["u32"].cast(pa.int64()),
        "u64": table["u64"].cast(pa.decimal128(20, 0)),
        "big": table["big"].cast(pa.string()),
        "cat": table["cat"].cast(pa.string()),
        "ns": table["ns"].cast(pa.timestamp("us", "UTC"), safe=False),
        "half": table["half"].cast(pa.float32()),
        "d64": table["d64"].cast(pa.date32()),
        "fsl": table["fsl"].cast(pa.list_(pa.int16())),
    })
    assert _rows(df, ["id"]) == _spark_table(spark, expected, ["id"])


@pytest.mark.parametrize("engine", ENGINES)
def test_unions_are_refused_even_with_cast(spark, tmp_path, engine):
    table = pa.table({"u": pa.UnionArray.from_sparse(pa.array([0, 1], pa.int8()),
                                                       [pa.array([1, 2]), pa.array(["a", "b"])])})
    path = str(tmp_path / "union.arrow")
    with pa.ipc.new_file(path, table.schema) as w:
        w.write_table(table)
    with pytest.raises(Exception, match="u: .*Spark has no union type"):
        spark.read.format(engine).option("cast", "true").load(path).collect()


def _write_numbered(path, batches: int, rows: int, statistics=True, fmt="file"):
    schema = arrowmm.schema([("x", arrowmm.int64()), ("v", arrowmm.float64()), ("s", arrowmm.string())])
    opener = arrowmm.new_file if fmt == "file" else arrowmm.new_stream
    with opener(path, schema, statistics=statistics) as w:
        for i in range(batches):
            x = np.arange(i * rows, (i + 1) * rows, dtype=np.int64)
            w.write({"x": x, "v": x * 0.5, "s": [f"k{i:03d}"] * rows})


@pytest.mark.parametrize("engine", ENGINES)
def test_a_big_file_spreads_over_tasks_and_small_files_share_one(spark, tmp_path, engine):
    big = str(tmp_path / "big.arrow")
    _write_numbered(big, batches=40, rows=1000)
    batch_bytes = arrowmm.open_file(big).batch_extents()[1][1]  # (batch 0 also holds the stamp)
    df = (spark.read.format(engine).option("maxPartitionBytes", str(batch_bytes * 10))
          .option("openCostInBytes", "1").load(big))
    # the Python source closes a task once it holds maxPartitionBytes; the JVM connector keeps
    # each task within it, as Spark's file sources do (the file's open cost counts too), and
    # cuts the 5 pieces that gives into a multiple of the 2 cores: 6, of even size (5 would
    # run in 3 waves, the last on one core)
    assert df.rdd.getNumPartitions() == {PY: 4, JVM: 6}[engine]
    assert df.count() == 40_000 and df.agg(F.sum("x")).first()[0] == sum(range(40_000))
    sliced = spark.read.format(engine).option("maxRecordsPerBatch", "300").load(big)
    assert sorted(r.x for r in sliced.select("x").collect()) == list(range(40_000))
    small = tmp_path / "small"
    small.mkdir()
    for k in range(12):
        _write_numbered(str(small / f"f{k:02d}.arrow"), batches=1, rows=10)
    df = spark.read.format(engine).load(str(small))
    # 12 files of 4 MiB open cost each: one task for the Python source; the JVM connector, as
    # Spark's file sources, cuts its tasks at total / default parallelism (2 here)
    assert df.rdd.getNumPartitions() == {PY: 1, JVM: 2}[engine]
    assert df.count() == 120
    # globs and lists of paths
    assert spark.read.format(engine).load(str(small / "f0*.arrow")).count() == 100
    assert spark.read.format(engine).load([big, str(small / "f00.arrow")]).count() == 40_010


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("fmt", ["file", "stream"])
def test_filters_skip_batches_and_agree_with_spark(spark, tmp_path, fmt, engine):
    path = str(tmp_path / ("n.arrow" if fmt == "file" else "n.arrows"))
    _write_numbered(path, batches=10, rows=100, fmt=fmt)
    log = str(tmp_path / "batches.log")
    queries = ["x >= 950", "x < 250 AND x > 120", "x IN (5, 777)", "s LIKE 'k00%'",
               "x = 500 OR x = 3", "x IS NULL", "v > 400.0 AND s = 'k009'"]
    plain = spark.read.format(PY).load(path)  # the reference: every batch read, Spark filters
    for q in queries:
        if os.path.exists(log):
            os.unlink(log)
        pruned = (spark.read.format(engine).option("pushdown", "true")
                  .option("batchLog", log).load(path).filter(q))
        got = sorted(r.x for r in pruned.collect())
        want = sorted(r.x for r in plain.filter(q).collect())
        assert got == want, q
        read = open(log).read().splitlines() if os.path.exists(log) else []
        expected_reads = {"x >= 950": 1, "x < 250 AND x > 120": 2, "x IN (5, 777)": 2,
                          "s LIKE 'k00%'": 10, "x = 500 OR x = 3": 10, "x IS NULL": 0,
                          "v > 400.0 AND s = 'k009'": 1}[q]
        if engine == JVM and q == "x = 500 OR x = 3":
            expected_reads = 2  # Spark pushes OR to a JVM source only
        assert len(read) == expected_reads, (q, read)


@pytest.mark.parametrize("engine", ENGINES)
def test_pushdown_is_safe_when_spark_has_it_disabled(spark, tmp_path, engine):
    path = str(tmp_path / "n.arrow")
    _write_numbered(path, batches=3, rows=10)
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "false")
    try:
        df = spark.read.format(engine).option("pushdown", "true").load(path)
        assert df.filter("x > 25").count() == 4
    finally:
        spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")


@pytest.mark.parametrize("engine", ENGINES)
def test_write_then_read_back_with_compression(spark, tmp_path, engine):
    out = str(tmp_path / "out")
    df = spark.range(0, 25_000, numPartitions=3).select(
        F.col("id"), (F.col("id") % 7).alias("m"), F.concat(F.lit("r"), F.col("id").cast("string")).alias("s"))
    df.write.format(engine).mode("overwrite").option("compression", "zstd").save(out)
    names = sorted(os.listdir(out))
    parts = [n for n in names if n.startswith("part-")]
    assert len(parts) == 3 and "_SUCCESS" in names
    assert not [n for n in names if n.startswith(("_", ".")) and n not in ("_SUCCESS", "_arrowmm_log")]
    manifest = json.load(open(os.path.join(out, "_SUCCESS")))
    assert sorted(manifest["files"]) == parts
    table = pa.concat_tables(pa.ipc.open_file(os.path.join(out, n)).read_all() for n in parts)
    assert sorted(table["id"].to_pylist()) == list(range(25_000))
    footer = arrowmm.open_file(os.path.join(out, parts[0]))
    assert "arrowmm:statistics" in footer.footer.metadata
    back = spark.read.format(engine).load(out)
    assert back.count() == 25_000
    assert back.agg(F.sum("m")).first()[0] == sum(i % 7 for i in range(25_000))
    # append adds files; overwrite replaces them
    spark.range(0, 10, numPartitions=1).select("id", (F.col("id") % 7).alias("m"),
                                               F.lit("z").alias("s")).write.format(engine) \
        .mode("append").save(out)
    assert len(json.load(open(os.path.join(out, "_SUCCESS")))["files"]) == 4
    assert spark.read.format(engine).load(out).count() == 25_010
    df.limit(5).write.format(engine).mode("overwrite").save(out)
    assert spark.read.format(engine).load(out).count() == 5
    assert len([n for n in os.listdir(out) if n.startswith("part-")]) == 1


@pytest.mark.parametrize("engine", ENGINES)
def test_a_task_failing_once_leaves_no_duplicate_or_temporary_file(spark, tmp_path, engine):
    out = str(tmp_path / "retry")

    def fail_first_attempt_of_partition_1(batches):
        from pyspark import TaskContext
        ctx = TaskContext.get()
        for b in batches:
            yield b
        if ctx.partitionId() == 1 and ctx.attemptNumber() == 0:
            raise RuntimeError("injected failure")

    df = spark.range(0, 3000, numPartitions=3)
    df.mapInArrow(fail_first_attempt_of_partition_1, df.schema).write.format(engine) \
        .mode("overwrite").save(out)
    names = sorted(os.listdir(out))
    assert [n for n in names if n.startswith("part-")] == sorted(
        json.load(open(os.path.join(out, "_SUCCESS")))["files"])
    assert len([n for n in names if n.startswith("part-")]) == 3
    assert not [n for n in names if n.startswith(("_", ".")) and n not in ("_SUCCESS", "_arrowmm_log")]
    ids = spark.read.format(engine).load(out).select("id").collect()
    assert sorted(r.id for r in ids) == list(range(3000))


APPENDER = """
import sys
from arrowmm.spark.session import local_session
spark = local_session("local[1]", "arrowmm-appender", sys.argv[2])
print("ready", flush=True)
sys.stdin.readline()
for j in range(4):
    start = 1_000_000 + j * 1000
    spark.range(start, start + 50, numPartitions=2).write.format("arrowmm").mode("append").save(sys.argv[1])
print("done", flush=True)
spark.stop()
"""


def test_two_applications_appending_at_once_lose_nothing(spark, tmp_path):
    """Two Spark applications (this session, through the Python source, and one in another
    process, through the JVM connector) append 4 jobs each to one directory at the same time:
    every job commits, every row is read back once, by both engines."""
    import subprocess
    import sys
    out = str(tmp_path / "shared")
    proc = subprocess.Popen([sys.executable, "-c", APPENDER, out, str(tmp_path / "other")],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "ready\n"
        proc.stdin.write("go\n")
        proc.stdin.flush()
        for j in range(4):
            spark.range(j * 1000, j * 1000 + 50, numPartitions=2).write.format("arrowmm_python") \
                .mode("append").save(out)
        assert proc.stdout.readline() == "done\n"
    finally:
        proc.communicate(timeout=600)
    assert proc.returncode == 0
    for engine in ENGINES:
        ids = sorted(r.id for r in spark.read.format(engine).load(out).select("id").collect())
        assert ids == sorted(i for base in (0, 1_000_000) for j in range(4)
                             for i in range(base + j * 1000, base + j * 1000 + 50))
    from arrowmm.spark.files import latest_manifest
    assert latest_manifest(out)["version"] == 8  # 8 jobs, 8 versions after the empty one


@pytest.mark.parametrize("engine", ENGINES)
def test_a_failed_job_leaves_the_previous_data(spark, tmp_path, engine):
    out = str(tmp_path / "keep")
    spark.range(0, 10, numPartitions=1).write.format(engine).mode("overwrite").save(out)
    before = sorted(os.listdir(out))

    def always_fail(batches):
        for b in batches:
            raise RuntimeError("boom")
        yield from ()

    df = spark.range(0, 10, numPartitions=2)
    with pytest.raises(Exception):
        df.mapInArrow(always_fail, df.schema).write.format(engine).mode("overwrite").save(out)
    assert sorted(os.listdir(out)) == before
    assert spark.read.format(engine).load(out).count() == 10


@pytest.mark.parametrize("engine", ENGINES)
def test_a_user_schema_selects_and_casts_columns_by_name(spark, tmp_path, engine):
    path = str(tmp_path / "n.arrow")
    _write_numbered(path, batches=2, rows=5)
    df = spark.read.format(engine).schema("s string, x bigint").load(path)
    rows = sorted((r.s, r.x) for r in df.collect())
    assert rows == sorted((f"k{i // 5:03d}", i) for i in range(10))
    df = spark.read.format(engine).schema("s string, x double").load(path)
    if engine == JVM:  # it casts nothing: it says so, and names the source that casts
        with pytest.raises(Exception, match=r"column 'x' is bigint in the file and double in the "
                                            r"table's schema.*format\('arrowmm_python'\)"):
            df.collect()
        return
    rows = sorted((r.s, r.x) for r in df.collect())
    assert rows == sorted((f"k{i // 5:03d}", float(i)) for i in range(10))


@pytest.mark.parametrize("engine", ENGINES)
def test_sql_temporary_view(spark, tmp_path, engine):
    path = str(tmp_path / "v.arrow")
    _write_numbered(path, batches=2, rows=5)
    spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW arrowmm_v USING {engine} OPTIONS (path '{path}')")
    assert spark.sql("SELECT count(*) AS n, max(x) AS m FROM arrowmm_v").first().asDict() == {"n": 10, "m": 9}


@pytest.mark.parametrize("engine", ENGINES)
def test_streaming_source_picks_up_new_files_and_sink_commits(spark, tmp_path, engine):
    """The Python source streams the files in (the JVM connector has no streaming source yet);
    the sink is ``engine``'s."""
    src, sink, ckpt = tmp_path / "in", tmp_path / "out", tmp_path / "ckpt"
    src.mkdir()
    _write_numbered(str(src / "0001.arrow"), batches=2, rows=5)
    schema = spark.read.format("arrowmm_python").load(str(src)).schema

    def run_once():
        q = (spark.readStream.format("arrowmm_python").schema(schema).load(str(src))
             .writeStream.format(engine).option("checkpointLocation", str(ckpt))
             .trigger(availableNow=True).start(str(sink)))
        q.awaitTermination(120)
        assert q.exception() is None

    run_once()
    assert spark.read.format(engine).load(str(sink)).count() == 10
    _write_numbered(str(src / "0002.arrow"), batches=1, rows=7)
    run_once()
    back = spark.read.format(engine).load(str(sink))
    assert back.count() == 17
    assert sorted(r.x for r in back.collect()) == sorted(list(range(10)) + list(range(7)))
    from arrowmm.spark.files import latest_manifest
    streams = latest_manifest(str(sink))["streams"]
    assert list(streams.values()) == [1]  # one query (keyed by Spark's query id), batches 0, 1
    # a second query into the same sink: its batch 0 is new data, not a replay
    src2, ckpt2 = tmp_path / "in2", tmp_path / "ckpt2"
    src2.mkdir()
    _write_numbered(str(src2 / "0001.arrow"), batches=1, rows=3)
    q = (spark.readStream.format("arrowmm_python").schema(schema).load(str(src2))
         .writeStream.format(engine).option("checkpointLocation", str(ckpt2))
         .trigger(availableNow=True).start(str(sink)))
    q.awaitTermination(120)
    assert q.exception() is None
    assert spark.read.format(engine).load(str(sink)).count() == 20
    streams = latest_manifest(str(sink))["streams"]
    assert sorted(streams.values()) == [0, 1] and str(q.id) in streams
    assert not [n for n in os.listdir(sink) if n.startswith((".", "_")) and n not in ("_SUCCESS", "_arrowmm_log")]


def test_the_main_job_runs_end_to_end(tmp_path):
    """``arrowmm demo``, in its own process (it starts and stops its own session)."""
    import subprocess
    import sys
    proc = subprocess.run([sys.executable, "-m", "arrowmm", "demo", "--rows", "300000",
                           "--folder", str(tmp_path), "--keep"], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "same answer" in proc.stdout and "lazy reader" in proc.stdout
    files = json.load(open(tmp_path / "sensors" / "_SUCCESS"))["files"]
    table = pa.concat_tables(pa.ipc.open_file(tmp_path / "sensors" / n).read_all() for n in files)
    assert table.num_rows == 300_000 and sorted(table["id"].to_pylist()) == list(range(300_000))


def test_with_the_jar_arrowmm_is_the_jvm_connector(spark, tmp_path):
    probe = str(tmp_path / "u32.arrow")
    table = pa.table({"u": pa.array([1, 2], pa.uint32())})
    with pa.ipc.new_file(probe, table.schema) as w:
        w.write_table(table)
    assert sorted(r.u for r in spark.read.format("arrowmm").load(probe).collect()) == [1, 2]
    assert sorted(r.u for r in spark.read.format("arrowmm_jvm").load(probe).collect()) == [1, 2]
    with pytest.raises(Exception, match=r"option\('cast', 'true'\)"):
        spark.read.format("arrowmm_python").load(probe).collect()
    # register() cannot take the name from the JVM connector, and does not fail trying
    arrowmm.spark.register(spark)
    assert spark.read.format("arrowmm").load(probe).count() == 2
    # a streaming read is the JVM's micro-batch stream too, with the Python source's answers
    stream_dir = tmp_path / "stream"
    spark.range(3).selectExpr("id AS u").write.format("arrowmm_python").mode("append") \
        .save(str(stream_dir))
    for name in ("arrowmm", "arrowmm_python"):
        q = (spark.readStream.format(name).schema("u bigint").load(str(stream_dir))
             .writeStream.format("memory").queryName(f"probe_{name}")
             .trigger(availableNow=True).start())
        q.awaitTermination(300)
        assert sorted(r.u for r in spark.table(f"probe_{name}").collect()) == [0, 1, 2], name
        plan = q.lastProgress["sources"][0]["description"]
        assert ("Arrowmm" in plan) == (name == "arrowmm"), plan
    # nested columns: written by the JVM, read back the same by both engines
    nested = spark.range(2).selectExpr("array(id) AS a")
    nested.write.format("arrowmm").mode("overwrite").save(str(tmp_path / "nested"))
    for name in ("arrowmm", "arrowmm_python"):
        assert sorted(r.a for r in spark.read.format(name).load(str(tmp_path / "nested"))
                      .collect()) == [[0], [1]], name


class _Refused(Exception):
    """What Spark raises for a data source it will not register (its error condition)."""

    def __init__(self, condition: str, name: str):
        super().__init__(f"[{condition}] Data source '{name}'")
        self.condition = condition

    def getCondition(self) -> str:
        return self.condition


class _SessionWithJar:
    """What ``register`` touches of a session whose JVM sources (the jar's) include
    ``arrowmm``: Spark refuses a Python source that name, whether or not its own lookup of
    ``pyspark_*`` modules found one (with an editable install it finds none)."""

    def __init__(self, refuse=("arrowmm", "arrowmm_jvm"), condition="DATA_SOURCE_ALREADY_EXISTS"):
        self.refuse, self.condition = refuse, condition
        self.sources, self.settings = {}, {}
        self.dataSource = types.SimpleNamespace(register=self._register)
        self.conf = types.SimpleNamespace(set=self.settings.__setitem__)

    def _register(self, source):
        if source.name() in self.refuse:
            raise _Refused(self.condition, source.name())
        self.sources[source.name()] = source


def test_register_leaves_arrowmm_to_the_jvm_connector_and_registers_arrowmm_python():
    """Issue 35: on a session with the jar, register() raised DATA_SOURCE_ALREADY_EXISTS for
    ``arrowmm`` before it registered ``arrowmm_python``.  Now it registers ``arrowmm_python``,
    keeps off the connector's name, and can be called again; other refusals still raise."""
    from arrowmm.spark.source import ArrowmmPythonDataSource
    session = _SessionWithJar()
    arrowmm.spark.register(session)
    arrowmm.spark.register(session)
    assert session.sources == {"arrowmm_python": ArrowmmPythonDataSource}
    assert session.settings == {"spark.sql.python.filterPushdown.enabled": "true"}
    with pytest.raises(_Refused, match="PYTHON_DATA_SOURCE_ERROR"):
        arrowmm.spark.register(_SessionWithJar(condition="PYTHON_DATA_SOURCE_ERROR"))


def test_a_folder_without_manifest_lists_only_its_arrow_files(tmp_path):
    from arrowmm.spark.files import data_files_in, read_manifest
    (tmp_path / "README.txt").write_text("not arrow")  # starts with a non-zero int32
    (tmp_path / "_hidden.arrow").write_bytes(b"ARROW1")
    schema = arrowmm.schema([("x", arrowmm.int64())])
    with arrowmm.new_file(str(tmp_path / "a.arrow"), schema) as w:
        w.write({"x": [1]})
    with arrowmm.new_stream(str(tmp_path / "b.arrows"), schema, legacy_format=True) as w:
        w.write({"x": [2]})  # pre-0.15 framing: no marker, so only its extension admits it
    assert read_manifest(str(tmp_path)) is None
    assert [os.path.basename(p) for p in data_files_in(str(tmp_path))] == ["a.arrow", "b.arrows"]
    (tmp_path / "_SUCCESS").write_text(json.dumps({"files": ["b.arrows"]}))
    assert [os.path.basename(p) for p in data_files_in(str(tmp_path))] == ["b.arrows"]
    (tmp_path / "_SUCCESS").write_text("{broken")
    with pytest.raises(arrowmm.ArrowInvalid, match="not an arrowmm manifest"):
        data_files_in(str(tmp_path))
