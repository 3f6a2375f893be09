"""Streaming reads of a directory: ``spark.readStream.format("arrowmm_jvm")`` (the JVM
``MicroBatchStream``) and ``format("arrowmm_python")`` (the Python source), same rules, same answers.

Each test runs real streaming queries in a local Spark session: files are committed into the
source directory by batch jobs between triggers, and every query writes into an arrowmm sink,
whose rows are then compared with everything committed to the source (each row exactly once).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pyarrow as pa
import pytest

import arrowmm
from arrowmm.spark import jar as jvm_jar

pyspark = pytest.importorskip("pyspark", reason="pyspark is in the test extras; install them")

FMT = jvm_jar.JVM_FORMAT
ENGINES = [FMT, jvm_jar.PYTHON_FORMAT]


def _append(spark, directory, keys, fmt=FMT):
    """One batch job appending rows ``k`` = ``keys`` (file names are random per job)."""
    spark.createDataFrame([(k, float(k) / 2) for k in keys], "k long, v double") \
        .repartition(1).write.format(fmt).mode("append").save(str(directory))


def _write_table(path, table):
    with arrowmm.new_file(path, table.schema) as w:
        w.write(table)


def _keys(spark, directory):
    return sorted(r.k for r in spark.read.format(FMT).load(str(directory)).select("k").collect())


def _stream(spark, engine, src, sink, ckpt, **options):
    reader = spark.readStream.format(engine).schema("k long, v double")
    for key, value in options.items():
        reader = reader.option(key, value)
    q = (reader.load(str(src)).writeStream.format(FMT).option("checkpointLocation", str(ckpt))
         .trigger(availableNow=True).start(str(sink)))
    q.awaitTermination(300)
    assert q.exception() is None
    return q


def _committed_batches(sink):
    log = os.path.join(sink, "_arrowmm_log")
    if not os.path.isdir(log):
        return -1
    names = sorted(n for n in os.listdir(log) if n.endswith(".json"))
    try:
        with open(os.path.join(log, names[-1])) as f:
            streams = json.load(f).get("streams", {})
    except (OSError, ValueError, IndexError):
        return -1
    return max(streams.values(), default=-1)


@pytest.mark.parametrize("engine", ENGINES)
def test_files_committed_between_triggers_are_read_once_each(spark, tmp_path, engine):
    src, sink, ckpt = tmp_path / "in", tmp_path / "out", tmp_path / "ckpt"
    expected = []
    for run in range(4):
        # jobs of both writers commit between triggers; their files' names are random, so
        # name order is not arrival order: the commit log's order is what the stream follows
        for job in range(2):
            keys = list(range(100 * run + 10 * job, 100 * run + 10 * job + 3 + run))
            _append(spark, src, keys, fmt=FMT if job == 0 else jvm_jar.PYTHON_FORMAT)
            expected += keys
        # a file dropped in without a commit is never read
        _write_table(str(src / f"stray-{run}.arrow"),
                     pa.table({"k": pa.array([-1], pa.int64()), "v": [0.0]}))
        q = _stream(spark, engine, src, sink, ckpt)
        assert _keys(spark, sink) == sorted(expected)
    assert _committed_batches(str(sink)) == 3  # one micro-batch a trigger, resumed each time
    assert q.lastProgress["sources"][0]["endOffset"] is not None
    # nothing new: a restart reads nothing again
    _stream(spark, engine, src, sink, ckpt)
    assert _keys(spark, sink) == sorted(expected)


@pytest.mark.parametrize("engine", ENGINES)
def test_max_files_per_trigger_cuts_micro_batches(spark, tmp_path, engine):
    src, sink, ckpt = tmp_path / "in", tmp_path / "out", tmp_path / "ckpt"
    for i in range(5):
        _append(spark, src, [i])
    q = _stream(spark, engine, src, sink, ckpt, maxFilesPerTrigger="2")
    assert _keys(spark, sink) == list(range(5))
    assert _committed_batches(str(sink)) == 2  # 2 + 2 + 1 files
    assert [p["numInputRows"] for p in q.recentProgress if p["numInputRows"]] == [2, 2, 1]
    with pytest.raises(Exception, match="maxFilesPerTrigger"):
        _stream(spark, engine, src, sink, tmp_path / "ckpt2", maxFilesPerTrigger="0")


@pytest.mark.parametrize("engine", ENGINES)
def test_a_directory_without_a_manifest_is_read_in_name_order(spark, tmp_path, engine):
    src, sink, ckpt = tmp_path / "in", tmp_path / "out", tmp_path / "ckpt"
    src.mkdir()

    def put(name, keys):  # moved in complete, as the legacy layout expects
        tmp = str(tmp_path / (name + ".tmp"))
        _write_table(tmp, pa.table({"k": pa.array(keys, pa.int64()),
                                          "v": pa.array([0.5] * len(keys))}))
        os.rename(tmp, str(src / name))

    put("0001.arrow", [1, 2])
    put("0002.arrow", [3])
    _stream(spark, engine, src, sink, ckpt)
    put("0003.arrow", [4, 5])
    _stream(spark, engine, src, sink, ckpt)
    assert _keys(spark, sink) == [1, 2, 3, 4, 5]


@pytest.mark.parametrize("engine", ENGINES)
def test_an_overwritten_source_stops_the_query_naming_the_file(spark, tmp_path, engine):
    src, sink, ckpt = tmp_path / "in", tmp_path / "out", tmp_path / "ckpt"
    _append(spark, src, [1, 2])
    _stream(spark, engine, src, sink, ckpt)
    spark.createDataFrame([(9, 0.0)], "k long, v double").write.format(FMT) \
        .mode("overwrite").save(str(src))
    reader = spark.readStream.format(engine).schema("k long, v double").load(str(src))
    q = (reader.writeStream.format(FMT).option("checkpointLocation", str(ckpt))
         .trigger(availableNow=True).start(str(sink)))
    with pytest.raises(Exception, match="no longer lists"):
        q.awaitTermination(300)
    assert _keys(spark, sink) == [1, 2]  # nothing guessed


_CHILD = textwrap.dedent("""
    import sys, time
    from arrowmm.spark.session import local_session
    engine, src, sink, ckpt, folder = sys.argv[1:6]
    spark = local_session("local[1]", "arrowmm-stream-child", folder, jvm=True)
    q = (spark.readStream.format(engine).schema("k long, v double")
         .option("maxFilesPerTrigger", "1").load(src)
         .writeStream.format("{fmt}").option("checkpointLocation", ckpt)
         .trigger(processingTime="10 milliseconds").start(sink))
    q.awaitTermination()
""")


@pytest.mark.parametrize("engine", ENGINES)
def test_a_killed_query_restarted_from_its_checkpoint_neither_skips_nor_repeats(
        spark, tmp_path, engine):
    src, sink, ckpt = tmp_path / "in", tmp_path / "out", tmp_path / "ckpt"
    expected = []
    for i in range(6):
        keys = [10 * i, 10 * i + 1]
        _append(spark, src, keys)
        expected += keys
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD.format(fmt=FMT), engine, str(src), str(sink), str(ckpt),
         str(tmp_path / "child")],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 300
        while _committed_batches(str(sink)) < 1:  # killed mid-stream, after some batches
            assert child.poll() is None, child.stderr.read().decode(errors="replace")[-3000:]
            assert time.monotonic() < deadline, "the child query committed nothing in 300 s"
            time.sleep(0.05)
        child.send_signal(signal.SIGKILL)
        child.wait()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stderr.close()
    done = _committed_batches(str(sink))
    assert done < 5, "the child finished before it was killed: nothing was interrupted"
    _append(spark, src, [99])  # and one more file arrives while the query is down
    expected.append(99)
    _stream(spark, engine, src, sink, ckpt, maxFilesPerTrigger="1")
    assert _keys(spark, sink) == sorted(expected)
    assert _committed_batches(str(sink)) == 6  # batches 0..6: one file each, none twice


def test_offsets_of_older_checkpoints_read_no_file_twice(tmp_path):
    """An offset written before the arrival rule (``{"last": name}``: every file whose name
    sorts at or before it was read) resumes without reading those files again, and the next
    offset follows commit order (the Python source's reader, driven as Spark drives it)."""
    import types
    from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxFiles
    from arrowmm.spark.commit import commit_files
    from arrowmm.spark.source import ArrowmmStreamReader
    directory = tmp_path / "d"
    directory.mkdir()

    def commit(name, key):
        tmp = str(directory / f".tmp-{name}")
        _write_table(tmp, pa.table({"k": pa.array([key], pa.int64()), "v": [0.5]}))
        commit_files(str(directory), [types.SimpleNamespace(tmp=tmp, name=name, rows=1)],
                     name, overwrite=False)

    for name, key in (("z.arrow", 1), ("a.arrow", 2), ("m.arrow", 3), ("b.arrow", 4)):
        commit(name, key)
    reader = ArrowmmStreamReader({"path": str(directory)}, None)

    def files(start, end):
        return sorted(os.path.basename(p[0]) for part in reader.partitions(start, end)
                      for p in part.pieces)

    legacy = {"last": "m.arrow"}  # the name rule read a, b and m, not z
    end = reader.latestOffset(legacy, ReadMaxFiles(1))
    assert end == {"last": "b.arrow", "order": "arrival"}  # reaches the files it read
    assert files(legacy, end) == ["z.arrow"]
    commit("c.arrow", 5)
    nxt = reader.latestOffset(end, ReadAllAvailable())
    assert files(end, nxt) == ["c.arrow"]
    assert reader.latestOffset(nxt, ReadAllAvailable()) == nxt  # nothing new
