"""Writes of the JVM connector (``df.write.format("arrowmm_jvm")``) in a real session.

What a job writes is read back by every other reader: pyarrow and arrowmm map the files
(8-byte aligned buffers, arrowmm's per-batch statistics in the footer), the Python data source
and the JVM reader see the same rows; the directory follows ``docs/commit-protocol.md`` (a log
of versioned manifests, ``_SUCCESS`` mirror), so both engines can write into one directory.
"""
from __future__ import annotations

import datetime
import decimal
import json
import os

import pyarrow as pa
import pytest

import arrowmm
from arrowmm.ipc.core.statistics import STATISTICS_KEY
from arrowmm.spark import jar as jvm_jar

pytest.importorskip("pyspark", reason="pyspark is in the test extras; install them")
from pyspark.sql import functions as F


FMT = jvm_jar.JVM_FORMAT
UTC = datetime.timezone.utc


def _log(out):
    names = sorted(n for n in os.listdir(os.path.join(out, "_arrowmm_log")) if n.endswith(".json"))
    return [json.load(open(os.path.join(out, "_arrowmm_log", n))) for n in names]


def _rows(df):
    """Rows as sorted tuples, NaN made comparable (NaN != NaN)."""
    return sorted(tuple("NaN" if isinstance(v, float) and v != v else v for v in r)
                  for r in df.collect())


def _keys(df):
    return sorted(r.k for r in df.select("k").collect())


def _typed(spark, n=40):
    rows = []
    for i in range(n):
        rows.append((i, i % 2 == 0, i - 20, float(i) / 4 if i != 7 else float("nan"),
                     None if i % 5 == 0 else f"s{i:03d}é", bytes([i]),
                     decimal.Decimal(i) / 100, decimal.Decimal(10**20 + i),
                     datetime.date(2024, 1, 1) + datetime.timedelta(days=i),
                     datetime.datetime(2024, 1, 1, tzinfo=UTC) + datetime.timedelta(seconds=i)))
    schema = ("k long, b boolean, i int, f double, s string, bin binary, dec decimal(6,2), "
              "big decimal(38,0), d date, ts timestamp")
    return spark.createDataFrame(rows, schema).repartition(3)


def test_a_write_reads_back_everywhere_with_statistics(spark, tmp_path):
    out = str(tmp_path / "typed")
    df = _typed(spark)
    df.write.format(FMT).option("maxRecordsPerBatch", 7).save(out)
    expected = _rows(df)
    assert _rows(spark.read.format(FMT).load(out)) == expected
    assert _rows(spark.read.format("arrowmm_python").load(out)) == expected
    doc = _log(out)[-1]
    assert doc["operation"] == "append" and len(doc["files"]) == 3
    assert json.load(open(os.path.join(out, "_SUCCESS")))["files"] == doc["files"]
    total = 0
    for name in doc["files"]:
        path = os.path.join(out, name)
        source = pa.memory_map(path)  # pyarrow maps it
        reader = pa.ipc.open_file(source)
        table = reader.read_all()
        stats = json.loads(reader.metadata[STATISTICS_KEY.encode()])
        assert reader.num_record_batches == len(stats["batches"]) >= 2  # 7 rows a batch
        assert stats["columns"] == df.columns
        for i in range(reader.num_record_batches):
            batch = reader.get_batch(i)
            got = stats["batches"][i]
            assert got["rows"] == batch.num_rows
            k = batch.column("k").to_pylist()
            assert got["columns"]["k"] == {"nulls": 0, "min": min(k), "max": max(k)}
            s = [v for v in batch.column("s").to_pylist() if v is not None]
            assert got["columns"]["s"]["nulls"] == batch.num_rows - len(s)
            if s:
                assert (got["columns"]["s"]["min"], got["columns"]["s"]["max"]) == (min(s), max(s))
            assert got["columns"]["f"].get("nan", False) == (7 in k)
        total += table.num_rows
        with arrowmm.open_file(path) as r:  # arrowmm maps it, buffers 8-byte aligned
            for batch in r:
                for col in batch.storage_columns:
                    for buf in col.buffers():
                        if buf is not None and len(buf):
                            assert buf.address % 8 == 0
    assert total == 40


def test_save_modes(spark, tmp_path):
    out = str(tmp_path / "modes")
    spark.range(0, 10).selectExpr("id as k").write.format(FMT).mode("errorifexists").save(out)
    with pytest.raises(Exception, match="PATH_ALREADY_EXISTS"):
        spark.range(0, 10).selectExpr("id as k").write.format(FMT).save(out)
    spark.range(100, 110).selectExpr("id as k").write.format(FMT).mode("ignore").save(out)
    assert _keys(spark.read.format(FMT).load(out)) == list(range(10))
    spark.range(10, 15).selectExpr("id as k").write.format(FMT).mode("append").save(out)
    assert _keys(spark.read.format(FMT).load(out)) == list(range(15))
    before = set(os.listdir(out))
    spark.range(20, 23).selectExpr("id as k").write.format(FMT).mode("overwrite").save(out)
    assert _keys(spark.read.format(FMT).load(out)) == [20, 21, 22]
    log = _log(out)
    assert [d["operation"] for d in log] == ["adopt", "append", "append", "overwrite"]
    assert all(name not in os.listdir(out) for name in log[-1]["removed"])  # deleted
    assert set(log[-1]["removed"]) == {n for n in before if n.startswith("part-")}
    with pytest.raises(Exception, match="cannot append rows of schema"):
        spark.range(3).selectExpr("cast(id as int) as k").write.format(FMT).mode("append").save(out)
    assert _keys(spark.read.format(FMT).load(out)) == [20, 21, 22]


def test_engines_share_a_directory(spark, tmp_path):
    out = str(tmp_path / "shared")
    make = lambda a, b: spark.range(a, b, numPartitions=2).selectExpr("id as k", "id * 0.5 as v")  # noqa: E731
    make(0, 100).write.format("arrowmm_python").mode("overwrite").save(out)   # the Python source
    make(100, 200).write.format(FMT).mode("append").save(out)           # the JVM connector
    make(200, 250).write.format("arrowmm_python").mode("append").save(out)
    for fmt in (FMT, "arrowmm_python"):
        df = spark.read.format(fmt).load(out)
        assert _keys(df) == list(range(250))
        assert df.agg(F.sum("v")).first()[0] == sum(range(250)) * 0.5
    assert [d["version"] for d in _log(out)] == list(range(len(_log(out))))


@pytest.mark.parametrize("codec", ["lz4", "zstd"])
def test_compressed_writes(spark, tmp_path, codec):
    out = str(tmp_path / codec)
    df = _typed(spark)
    df.write.format(FMT).option("compression", codec).save(out)
    for name in _log(out)[-1]["files"]:
        reader = pa.ipc.open_file(os.path.join(out, name))
        assert reader.get_batch(0).num_rows > 0
        assert reader.stats is not None
    assert _rows(spark.read.format(FMT).load(out)) == _rows(df)
    with pytest.raises(Exception, match="option compression: 'snappy' is not one of"):
        df.write.format(FMT).option("compression", "snappy").save(str(tmp_path / "bad"))


def test_empty_and_failed_jobs(spark, tmp_path):
    out = str(tmp_path / "empty")
    spark.range(0).selectExpr("id as k").write.format(FMT).save(out)
    files = _log(out)[-1]["files"]
    assert len(files) == 1  # no rows: one empty file keeps the schema
    assert spark.read.format(FMT).load(out).schema.simpleString() == "struct<k:bigint>"
    assert spark.read.format(FMT).load(out).count() == 0

    def fail(it):
        for b in it:
            raise ValueError("boom")
            yield b
    failing = str(tmp_path / "failing")
    spark.range(0, 10).selectExpr("id as k").write.format(FMT).save(failing)
    df = spark.range(0, 10, numPartitions=2).selectExpr("id as k")
    with pytest.raises(Exception, match="boom"):
        df.mapInArrow(fail, df.schema).write.format(FMT).mode("append").save(failing)
    assert _keys(spark.read.format(FMT).load(failing)) == list(range(10))
    assert sorted(n for n in os.listdir(failing) if not n.startswith("_")) == \
        sorted(_log(failing)[-1]["files"])  # nothing of the failed job is left


def test_unwritable_columns_are_named(spark, tmp_path):
    df = spark.range(1).selectExpr("id as k", "array(interval 1 day) as arr")
    # (Spark refuses interval, variant and time columns itself, naming them, before the
    # connector's own check, which names a nested field as 'arr[]' or 's.f')
    with pytest.raises(Exception, match=r"column `arr` of the type \"ARRAY<INTERVAL DAY>\"|"
                                        r"column 'arr\[\]': the JVM writer does not write"):
        df.write.format(FMT).save(str(tmp_path / "nested"))
    assert not os.path.exists(tmp_path / "nested" / "_arrowmm_log") or \
        _log(str(tmp_path / "nested"))[-1]["files"] == []


_PYTHON_COMMITTER = r"""
import sys, types, uuid
import pyarrow as pa
import arrowmm
from arrowmm.spark.commit import commit_files
out, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    job = uuid.uuid4().hex
    tmp = f"{out}/.arrowmm-{job}-part-0-0-x.arrow"
    with arrowmm.new_file(tmp, arrowmm.schema([("k", arrowmm.int64()), ("v", arrowmm.float64())]),
                          statistics=True) as w:
        w.write({"k": pa.array([10_000 + i], pa.int64()), "v": pa.array([0.5])})
    commit_files(out, [types.SimpleNamespace(tmp=tmp, name=f"part-00000-{job}.arrow", rows=1)],
                 job, overwrite=False)
    print("committed", flush=True)
"""


def test_concurrent_commits_of_both_implementations_all_land(spark, tmp_path):
    import subprocess
    import sys
    out = str(tmp_path / "race")
    spark.range(0, 10, numPartitions=2).selectExpr("id as k", "cast(id as double) / 2 as v") \
        .write.format(FMT).save(out)
    python = subprocess.Popen([sys.executable, "-c", _PYTHON_COMMITTER, out, "30"],
                              stdout=subprocess.PIPE, text=True)
    jvm_jobs = 0
    while python.poll() is None or jvm_jobs < 3:  # JVM appends while Python commits
        spark.range(100 * (jvm_jobs + 1), 100 * (jvm_jobs + 1) + 3, numPartitions=1) \
            .selectExpr("id as k", "cast(id as double) / 2 as v").write.format(FMT).mode("append").save(out)
        jvm_jobs += 1
    assert python.wait() == 0 and python.stdout.read().count("committed") == 30
    keys = sorted(r.k for r in spark.read.format(FMT).load(out).select("k").collect())
    expected = list(range(10)) + [10_000 + i for i in range(30)] + \
        [100 * j + d for j in range(1, jvm_jobs + 1) for d in range(3)]
    assert keys == sorted(expected)  # no lost job, whichever implementation committed it
    log = _log(out)
    assert [d["version"] for d in log if "pruned" not in d] == \
        list(range(len(log)))[-len([d for d in log if "pruned" not in d]):]
    assert len(log) == 1 + 1 + 30 + jvm_jobs  # adopt, the first write, then one per job


def test_streaming_sink_commits_each_micro_batch_once(spark, tmp_path):
    src, out, chk = tmp_path / "in", str(tmp_path / "out"), str(tmp_path / "chk")
    src.mkdir()

    def run():
        q = (spark.readStream.schema("k long").json(str(src)).writeStream.format(FMT)
             .option("checkpointLocation", chk).trigger(availableNow=True).start(out))
        q.awaitTermination()
        return q.id

    (src / "a.json").write_text("".join(json.dumps({"k": k}) + "\n" for k in range(5)))
    query = run()
    (src / "b.json").write_text("".join(json.dumps({"k": k}) + "\n" for k in range(5, 8)))
    assert run() == query  # the same query (one checkpoint) resumed
    assert _keys(spark.read.format(FMT).load(out)) == list(range(8))
    log = _log(out)
    assert log[-1]["streams"] == {query: 1}
    assert all(n.startswith(("batch-00000000-", "batch-00000001-")) for n in log[-1]["files"])
    # Spark replays micro-batch 1 when its commit record is lost: it is not added twice
    os.remove(os.path.join(chk, "commits", "1"))
    if os.path.exists(os.path.join(chk, "commits", ".1.crc")):  # Hadoop's checksum beside it
        os.remove(os.path.join(chk, "commits", ".1.crc"))
    run()
    assert _keys(spark.read.format(FMT).load(out)) == list(range(8))
    assert len(_log(out)) == len(log)
    assert sorted(n for n in os.listdir(out) if not n.startswith("_")) == \
        sorted(log[-1]["files"])  # the replay's own files are gone


def test_batches_are_cut_by_rows_and_by_bytes(spark, tmp_path):
    out = str(tmp_path / "cut")
    df = spark.range(0, 100, numPartitions=1).selectExpr("id as k", "repeat('x', 1000) as s")
    df.write.format(FMT).option("maxBytesPerBatch", "10000").save(out)
    (name,) = _log(out)[-1]["files"]
    reader = pa.ipc.open_file(os.path.join(out, name))
    assert [reader.get_batch(i).num_rows for i in range(reader.num_record_batches)] == [10] * 10
    assert _keys(spark.read.format(FMT).load(out)) == list(range(100))
    with pytest.raises(Exception, match="must be positive"):
        df.write.format(FMT).option("maxRecordsPerBatch", "0").save(str(tmp_path / "zero"))
