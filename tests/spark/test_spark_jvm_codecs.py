"""Compressed files through the JVM reader (``format("arrowmm_jvm")``), and how a scan is cut.

LZ4 frames are decoded by the connector's own decoder (``Lz4Frame.java``; its JUnit test
covers damaged frames), ZSTD by zstd-jni: both straight into the batch's memory.  Buffers here
are big and compressible, so frames hold many linked 64 KiB blocks (what Arrow C++ and the
``lz4`` package write by default) and nothing is stored raw.  Values are compared with
pyarrow's reading of the same file.
"""
from __future__ import annotations

import struct

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from arrowmm.spark import jar as jvm_jar

pytest.importorskip("pyspark", reason="pyspark is in the test extras; install them")
from pyspark.sql import functions as F

FMT = jvm_jar.JVM_FORMAT
ROWS = 60_000  # 480 KB per int64 buffer: 8 blocks of 64 KiB, linked


def _table(batch: int) -> pa.Table:
    i = np.arange(ROWS, dtype=np.int64) + batch * ROWS
    return pa.table({
        "k": pa.array(i),
        "x": pa.array(np.where(i % 7 == 0, np.nan, (i % 1000) * 0.5)),
        "s": pa.array([None if v % 11 == 0 else f"name-{v % 300}" for v in i.tolist()]),
    })


def _write(path, writer, codec, batches=2):
    tables = [_table(b) for b in range(batches)]
    if writer == "pyarrow":
        options = pa.ipc.IpcWriteOptions(compression=codec)
        with pa.ipc.new_file(str(path), tables[0].schema, options=options) as w:
            for t in tables:
                w.write_table(t)
    else:
        with arrowmm.new_file(str(path), tables[0].schema, compression=codec) as w:
            for t in tables:
                w.write(t)
    return pa.concat_tables(tables)


@pytest.mark.parametrize("writer,codec", [("pyarrow", "lz4"), ("arrowmm", "lz4"),
                                          ("pyarrow", "zstd"), ("arrowmm", "zstd")])
def test_compressed_files_read_as_pyarrow_reads_them(spark, tmp_path, writer, codec):
    path = tmp_path / f"{writer}-{codec}.arrow"
    expected = _write(path, writer, codec)
    assert path.stat().st_size < expected.nbytes / 2  # compressed, not stored raw
    df = spark.read.format(FMT).load(str(path))
    rows = df.orderBy("k").collect()
    assert [r.k for r in rows] == expected["k"].to_pylist()
    got_x = [r.x for r in rows]
    want_x = expected["x"].to_pylist()
    assert all((g == w) or (g != g and w != w) for g, w in zip(got_x, want_x))
    assert [r.s for r in rows] == expected["s"].to_pylist()
    # one column of three: only its buffers are decompressed, and they give the same sum
    assert df.agg(F.sum("k")).first()[0] == sum(expected["k"].to_pylist())


def test_an_lz4_frame_giving_fewer_bytes_than_declared_names_file_batch_and_buffer(
        spark, tmp_path):
    path = tmp_path / "short.arrow"
    with pa.ipc.new_file(str(path), pa.schema([("k", pa.int64())]),
                         options=pa.ipc.IpcWriteOptions(compression="lz4")) as w:
        w.write_table(pa.table({"k": pa.array(np.zeros(ROWS, np.int64))}))
        w.write_table(pa.table({"k": pa.array(np.ones(ROWS, np.int64))}))
    data = path.read_bytes()
    declared = struct.pack("<q", 8 * ROWS)
    at = data.rindex(declared)  # batch 1's data buffer: declare 8 bytes more than it holds
    path.write_bytes(data[:at] + struct.pack("<q", 8 * ROWS + 8) + data[at + 8:])
    with pytest.raises(Exception, match=r"short\.arrow: record batch 1, column 'k', buffer 1 "
                                        r"\(buffer 1\): LZ4 frame gave 480000 bytes, the "
                                        r"prefix declares 480008"):
        spark.read.format(FMT).load(str(path)).agg(F.sum("k")).collect()


def test_a_big_scan_is_cut_into_a_multiple_of_the_cores(spark, tmp_path):
    """20 equal batches that maxPartitionBytes cuts into 5 pieces run in 3 waves on 2 cores,
    the last on one core: the scan is cut into 6 pieces of 3 or 4 batches instead."""
    path = tmp_path / "even.arrow"
    batch = pa.table({"k": pa.array(np.arange(10_000, dtype=np.int64))})
    with arrowmm.new_file(str(path), batch.schema) as w:
        for _ in range(20):
            w.write(batch)
    size = path.stat().st_size  # 4 batches fit a fifth of it: 5 pieces by Spark's rule
    df = (spark.read.format(FMT).option("openCostInBytes", "1")
          .option("maxPartitionBytes", str(size // 5 + 1)).load(str(path)))
    assert df.rdd.getNumPartitions() == 6
    sizes = [r["count"] for r in df.groupBy(F.spark_partition_id()).count().collect()]
    assert sorted(sizes) == [30_000] * 4 + [40_000] * 2, sizes
