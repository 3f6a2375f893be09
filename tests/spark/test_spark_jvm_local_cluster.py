"""The JVM connector with executors in their own JVMs (``local-cluster[2,1,1024]``: two
executor processes of one core each) on a real HDFS (issue 30).

What a cluster changes: the jar reaches executors only through ``spark.jars`` (what
``arrowmm.spark.configure`` sets), tasks run in other processes than the driver, and a
storage path must mean the same thing in each.  The session takes 50-80 s to start, so the
module has one and keeps to a few tests.
"""
from __future__ import annotations

import uuid

import pyarrow as pa
import pytest
from tests.support.spark_cluster_support import list_files, new_jvm, storage_session, upload

ROWS = 4000


@pytest.fixture(scope="module")
def spark(tmp_path_factory, hdfs):  # (the cluster starts while the session does)
    session = storage_session(str(tmp_path_factory.mktemp("spark-cluster")),
                              master="local-cluster[2,1,1024]")
    yield session
    new_jvm()


@pytest.fixture
def where(hdfs):
    return f"{hdfs.uri}/cluster/{uuid.uuid4().hex}"


def frame(spark, start=0, rows=ROWS):
    return spark.range(start, start + rows, numPartitions=4).selectExpr(
        "id", "id / 4 AS x", "concat('v', id % 13) AS s")


def rows_of(df):
    return sorted(tuple(r) for r in df.select("id", "x", "s").collect())


def test_executors_are_their_own_processes(spark):
    # the driver's block manager and one per executor JVM
    assert spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() == 3
    assert spark.sparkContext._jsc.sc().getExecutorIds().size() == 2


def test_parquet_round_trip_on_hdfs(spark, where):
    frame(spark).write.parquet(f"{where}/p")
    assert rows_of(spark.read.parquet(f"{where}/p")) == rows_of(frame(spark))


def test_arrowmm_write_and_read_on_hdfs_from_executors(spark, where):
    target = f"{where}/a"
    frame(spark).write.format("arrowmm").save(target)
    files = [n for n in list_files(spark, target) if n.endswith(".arrow")]
    assert len(files) >= 2, files  # one per task, written by the executors into HDFS
    df = spark.read.format("arrowmm").load(target)
    assert rows_of(df) == rows_of(frame(spark))
    assert df.filter("id >= 3990").select("id").count() == 10
    frame(spark, ROWS, 100).write.format("arrowmm").mode("append").save(target)
    assert spark.read.format("arrowmm").load(target).count() == ROWS + 100


def test_pyarrow_file_on_hdfs_read_by_executors(spark, where, tmp_path):
    table = pa.table({"k": pa.array(range(5000), pa.int64()),
                      "v": pa.array([float(i) for i in range(5000)])})
    local = tmp_path / "p.arrow"
    with pa.ipc.new_file(str(local), table.schema) as w:
        for batch in table.to_batches(max_chunksize=1000):
            w.write_batch(batch)
    upload(spark, str(local), f"{where}/in/p.arrow")
    df = spark.read.format("arrowmm").load(f"{where}/in")
    assert sorted(tuple(r) for r in df.collect()) == sorted(
        zip(table.column("k").to_pylist(), table.column("v").to_pylist()))
    assert df.select("v").groupBy().sum("v").first()[0] == sum(table.column("v").to_pylist())
