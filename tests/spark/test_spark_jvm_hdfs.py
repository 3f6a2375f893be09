"""The JVM connector on a real HDFS (issue 30): a MiniDFSCluster (``hdfs_support``) and one
session in its own JVM for the module.

Parquet's round trip proves the cluster and the session's HDFS client; the rest is what the
issue asks of ``format("arrowmm")`` there: writes land in HDFS (listed and read back with the
HDFS client, parsed by pyarrow), a pyarrow-written file uploaded to HDFS reads as pyarrow reads
it, projection, append, overwrite, and two writers at once losing no row.
"""
from __future__ import annotations

import threading
import time
import uuid

import pyarrow as pa
import pytest
from tests.support.spark_cluster_support import (
    frame,
    list_files,
    new_jvm,
    read_bytes,
    rows_of,
    storage_session,
    upload,
)
from tests.support.spark_support import NothingNew


@pytest.fixture(scope="module")
def spark(tmp_path_factory, hdfs):  # (the cluster starts while the session does)
    session = storage_session(str(tmp_path_factory.mktemp("spark-hdfs")))
    yield session
    new_jvm()


@pytest.fixture
def where(hdfs):
    """A new folder in HDFS for one test."""
    return f"{hdfs.uri}/tests/{uuid.uuid4().hex}"


def test_parquet_round_trip_proves_the_cluster(spark, where):
    frame(spark).write.parquet(f"{where}/p")
    assert rows_of(spark.read.parquet(f"{where}/p")) == rows_of(frame(spark))
    parts = [name for name in list_files(spark, f"{where}/p") if name.endswith(".parquet")]
    assert parts, list_files(spark, f"{where}/p")


def test_arrowmm_write_lands_in_hdfs_and_reads_back(spark, where):
    target = f"{where}/a"
    with NothingNew(spark):
        frame(spark).write.format("arrowmm").save(target)
    assert rows_of(spark.read.format("arrowmm").load(target)) == rows_of(frame(spark))
    # the bytes are in HDFS: its own client lists Arrow files there, which pyarrow reads
    arrow = sorted(name for name in list_files(spark, target) if name.endswith(".arrow"))
    assert arrow, list_files(spark, target)
    tables = [pa.ipc.open_file(pa.BufferReader(read_bytes(spark, f"{target}/{name}"))).read_all()
              for name in arrow]
    found = sorted(row for t in tables for row in zip(*(t.column(c).to_pylist()
                                                        for c in ("id", "x", "s"))))
    assert found == rows_of(frame(spark))


def test_pyarrow_file_uploaded_to_hdfs_reads_as_pyarrow_reads_it(spark, where, tmp_path):
    table = pa.table({"k": pa.array(range(1000), pa.int64()),
                      "v": pa.array([i / 4 for i in range(1000)], pa.float64()),
                      "t": pa.array([None if i % 5 == 0 else f"t{i}" for i in range(1000)]),
                      "small": pa.array([i % 100 for i in range(1000)], pa.int32())})
    local = tmp_path / "pyarrow.arrow"
    with pa.ipc.new_file(str(local), table.schema) as w:
        for batch in table.to_batches(max_chunksize=300):
            w.write_batch(batch)
    upload(spark, str(local), f"{where}/in/pyarrow.arrow")
    assert list_files(spark, f"{where}/in") == {"pyarrow.arrow": local.stat().st_size}
    for path in (f"{where}/in/pyarrow.arrow", f"{where}/in"):
        df = spark.read.format("arrowmm").load(path)
        assert df.columns == ["k", "v", "t", "small"]
        expected = sorted(zip(*(table.column(c).to_pylist() for c in df.columns)))
        assert sorted(tuple(r) for r in df.collect()) == expected


def test_projection_reads_the_selected_column(spark, where):
    target = f"{where}/proj"
    frame(spark).write.format("arrowmm").save(target)
    df = spark.read.format("arrowmm").load(target).select("s")
    assert df.columns == ["s"]
    assert sorted((r.s is None, r.s) for r in df.collect()) == sorted(
        (r.s is None, r.s) for r in frame(spark).select("s").collect())
    assert "columns struct<s:string>" in df._jdf.queryExecution().executedPlan().toString()


def test_append_then_overwrite(spark, where):
    target = f"{where}/grow"
    frame(spark, 0, 1000).write.format("arrowmm").save(target)
    frame(spark, 1000, 500).write.format("arrowmm").mode("append").save(target)
    assert rows_of(spark.read.format("arrowmm").load(target)) == rows_of(frame(spark, 0, 1500))
    frame(spark, 5000, 200).write.format("arrowmm").mode("overwrite").save(target)
    assert rows_of(spark.read.format("arrowmm").load(target)) == rows_of(frame(spark, 5000, 200))


def test_two_writers_at_once_lose_no_row(spark, where):
    target = f"{where}/race"
    frame(spark, 0, 10).write.format("arrowmm").save(target)
    errors = []

    def append(start):
        try:
            frame(spark, start, 2000).write.format("arrowmm").mode("append").save(target)
        except Exception as exc:  # noqa: BLE001  (reported below, beside the other writer)
            errors.append(exc)

    writers = [threading.Thread(target=append, args=(start,)) for start in (100_000, 200_000)]
    for w in writers:
        w.start()
    for w in writers:
        w.join()
    assert errors == []
    expected = rows_of(frame(spark, 0, 10)) + rows_of(frame(spark, 100_000, 2000)) + rows_of(
        frame(spark, 200_000, 2000))
    assert rows_of(spark.read.format("arrowmm").load(target)) == sorted(expected)


def _numbered_file(path, batches: int, rows: int) -> None:
    """An IPC file of ``batches`` batches of ``rows`` rows: ``k`` numbered from 0, ``v = k/4``."""
    schema = pa.schema([("k", pa.int64()), ("v", pa.float64())])
    with pa.ipc.new_file(str(path), schema) as w:
        for b in range(batches):
            k = pa.array(range(b * rows, (b + 1) * rows), pa.int64())
            w.write_batch(pa.record_batch([k, pa.array([i / 4 for i in k.to_pylist()])],
                                          schema=schema))


def test_batches_read_whole_and_a_projection_read_the_same_values(spark, where, tmp_path):
    """A task reads its first batch whole on HDFS (header, body and the next header in one
    read) when every column is selected, and the buffers it selects otherwise: both give the
    file's values, over many batches and tasks."""
    local = tmp_path / "many.arrow"
    _numbered_file(local, batches=9, rows=700)
    upload(spark, str(local), f"{where}/many.arrow")
    df = (spark.read.format("arrowmm").option("maxPartitionBytes", "20k")
          .load(f"{where}/many.arrow"))
    assert df.rdd.getNumPartitions() > 1
    assert sorted(tuple(r) for r in df.collect()) == [(k, k / 4) for k in range(9 * 700)]
    assert sorted(r.v for r in df.select("v").collect()) == [k / 4 for k in range(9 * 700)]


def test_a_file_replaced_after_planning_fails_the_task(spark, where, tmp_path):
    """A task opens its HDFS file (the block locations carry the length), then checks its inode
    id against the planned one: a file replaced by a longer or a shorter one after the query was
    planned still fails the task, naming the file, and is never read at the planned footer's
    offsets."""
    planned, longer, shorter = (tmp_path / n for n in ("planned.arrow", "longer.arrow",
                                                       "shorter.arrow"))
    _numbered_file(planned, batches=3, rows=500)
    _numbered_file(longer, batches=4, rows=500)
    _numbered_file(shorter, batches=2, rows=500)
    for replacement, rows in ((longer, 2000), (shorter, 1000)):
        path = f"{where}/{replacement.stem}/f.arrow"
        upload(spark, str(planned), path)
        query = spark.read.format("arrowmm").load(path)
        query._jdf.queryExecution().toRdd()  # planned: the footer read, the partitions made
        upload(spark, str(replacement), path)
        with pytest.raises(Exception, match="changed since the query was planned"):
            query.collect()  # (the same query execution: no new plan)
        assert spark.read.format("arrowmm").load(path).count() == rows  # planned again: read


def _stats_file(path, low: int) -> list[int]:
    """An arrowmm file with statistics, 4 batches of 250 int64 ``k`` from ``low`` (and a
    float64 ``x``): files of lows with as many digits have one length and one layout, only
    their values and statistics differ.  Returns the ``k`` that ``STATS_FILTER`` keeps."""
    import arrowmm
    k = list(range(low, low + 1000))
    table = pa.table({"k": pa.array(k, pa.int64()), "x": pa.array([float(i) for i in k])})
    with arrowmm.new_file(str(path), table.schema, statistics=True) as w:
        for batch in table.to_batches(max_chunksize=250):
            w.write_batch(batch)
    return [v for v in k if v < 1250 or v >= 2000]


STATS_FILTER = "k < 1250 OR k >= 2000"  # v1 (1000..1999): batch 0 kept; v2 (2000..): all


def test_a_file_replaced_by_one_of_its_length_after_planning_fails_the_task(spark, where,
                                                                             tmp_path):
    """HDFS has no ETag: a file's version is its inode id, taken with the listing and checked
    when the task opens the file.  Before, the task checked only the length, and read the new
    file's bytes at the old footer's Blocks under the old statistics (250 rows 2000..2249,
    neither file's answer)."""
    v1, v2 = tmp_path / "v1.arrow", tmp_path / "v2.arrow"
    _stats_file(v1, 1000)
    expected_v2 = _stats_file(v2, 2000)
    assert v1.stat().st_size == v2.stat().st_size
    upload(spark, str(v1), f"{where}/t.arrow")
    query = spark.read.format("arrowmm").load(where).filter(STATS_FILTER).select("k")
    query._jdf.queryExecution().toRdd()  # planned: v1's footer and statistics
    upload(spark, str(v2), f"{where}/t.arrow")  # a new inode, the same length
    with pytest.raises(Exception, match=r"t\.arrow: changed since the query was planned "
                                        r"\(version inode:\d+, inode:\d+ when planned\)"):
        query.collect()  # (the same query execution: no new plan)
    again = spark.read.format("arrowmm").load(where).filter(STATS_FILTER).select("k")
    assert sorted(r.k for r in again.collect()) == expected_v2


def test_a_file_rewritten_with_its_length_and_time_kept_is_not_served_a_cached_footer(
        spark, where, tmp_path):
    """The footer cache keys an HDFS file by its inode id too: a client sets modification
    times (``setTimes``: ``hdfs dfs -cp -p``, ``distcp -pt``), so a file rewritten with its
    length and time kept matched the old entry, and v1's statistics pruned v2's batches."""
    from tests.support.spark_cluster_support import hadoop_fs
    v1, v2 = tmp_path / "v1.arrow", tmp_path / "v2.arrow"
    expected_v1 = _stats_file(v1, 1000)
    expected_v2 = _stats_file(v2, 2000)
    uri = f"{where}/t.arrow"
    fs = hadoop_fs(spark, uri)
    path = spark._jvm.org.apache.hadoop.fs.Path(uri)
    settled = int(time.time() * 1000) - 60_000  # over two seconds old: the footer is cached

    def query():
        df = spark.read.format("arrowmm").load(where).filter(STATS_FILTER).select("k")
        return sorted(r.k for r in df.collect())

    upload(spark, str(v1), uri)
    fs.setTimes(path, settled, -1)
    assert query() == expected_v1
    upload(spark, str(v2), uri)
    fs.setTimes(path, settled, -1)
    status = fs.getFileStatus(path)
    assert (status.getLen(), status.getModificationTime()) == (v1.stat().st_size, settled)
    assert query() == expected_v2


def test_the_python_side_reads_and_writes_hdfs_through_webhdfs(spark, where, hdfs):
    # arrowmm's own readers and writers take fsspec URLs; WebHDFS serves HDFS without a JVM in
    # the Python process: a file written there is the one Spark reads from hdfs://, and a
    # directory the connector wrote reads back as its rows
    import arrowmm
    web = where.replace(hdfs.uri, hdfs.webhdfs)
    arrowmm.write_file(f"{web}/py/part.arrow", {"id": list(range(500)),
                                                "s": [f"s{i}" for i in range(500)]})
    got = spark.read.format("arrowmm").load(f"{where}/py")
    assert sorted((r.id, r.s) for r in got.collect()) == [(i, f"s{i}") for i in range(500)]
    with arrowmm.open_file(f"{web}/py/part.arrow") as reader:
        assert reader.read_all().column("s").to_pylist() == [f"s{i}" for i in range(500)]
    frame(spark).write.format("arrowmm").save(f"{where}/jvm")
    table = arrowmm.dataset(f"{web}/jvm").to_table()
    found = sorted(zip(*(table.column(c).to_pylist() for c in ("id", "x", "s"))))
    assert found == rows_of(frame(spark))
