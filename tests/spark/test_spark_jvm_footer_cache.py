"""The driver's footer cache (``FooterCache.java``): a file planned again is not re-parsed, and
a file written again, renamed over or rewritten in place, is read as it is now."""
from __future__ import annotations

import os
import time

import pyarrow as pa
import pytest

import arrowmm
from arrowmm.spark import jar as jvm_jar

pyspark = pytest.importorskip("pyspark", reason="pyspark is in the test extras; install them")

FMT = jvm_jar.JVM_FORMAT


def _write(path, keys, batches=1):
    table = pa.table({"k": pa.array(keys, pa.int64())})
    with arrowmm.new_file(path, table.schema) as w:  # a hidden temporary renamed in: a new inode
        for b in table.to_batches(max_chunksize=max(1, len(keys) // batches)):
            w.write(b)


def _settle(path):
    """Date the file 10 s back, past the cache's settling time, so its footer is cached."""
    t = time.time() - 10
    os.utime(path, (t, t))


def _keys(spark, path, where=None):
    df = spark.read.format(FMT).load(path)
    if where:
        df = df.where(where)
    return sorted(r.k for r in df.collect())


def test_a_file_written_again_is_read_as_it_is_now(spark, tmp_path):
    path = str(tmp_path / "f.arrow")
    _write(path, list(range(10)), batches=2)
    _settle(path)
    assert _keys(spark, path) == list(range(10))
    assert _keys(spark, path, "k >= 5") == list(range(5, 10))  # planned from the cached footer
    _write(path, list(range(100, 130)), batches=3)  # renamed over: new inode, size, batches
    _settle(path)
    assert _keys(spark, path) == list(range(100, 130))
    assert _keys(spark, path, "k >= 125") == list(range(125, 130))


def test_a_file_rewritten_in_place_with_its_old_size_and_time_is_read_again(spark, tmp_path):
    """Same inode, same size, same modification time: only the settling rule tells the cache
    the footer may have changed (it keeps no entry for a file modified in the last 2 s, or
    dated in the future)."""
    path = str(tmp_path / "g.arrow")
    _write(path, [1, 2, 3, 4])
    other = str(tmp_path / "other.arrow")
    _write(other, [7, 8, 9, 10])
    assert os.path.getsize(path) == os.path.getsize(other)
    stamp = time.time_ns() + 3600 * 10**9  # an hour ahead: never "settled" while the test runs
    os.utime(path, ns=(stamp, stamp))
    assert _keys(spark, path) == [1, 2, 3, 4]
    with open(other, "rb") as src, open(path, "r+b") as dst:  # in place: the same inode
        dst.write(src.read())
    os.utime(path, ns=(stamp, stamp))
    assert _keys(spark, path) == [7, 8, 9, 10]


def test_a_settled_file_rewritten_in_place_with_its_time_put_back_is_read_again(spark, tmp_path):
    """As ``cp -p`` or ``rsync --inplace -t`` do: same inode, size and modification time, the
    footer cached long after the file settled; only the change time (which nothing can set
    back) tells the cache."""
    path = str(tmp_path / "h.arrow")
    _write(path, [1, 2, 3, 4])
    other = str(tmp_path / "other.arrow")
    _write(other, [7, 8, 9, 10])
    assert os.path.getsize(path) == os.path.getsize(other)
    stamp = time.time_ns() - 60 * 10**9
    os.utime(path, ns=(stamp, stamp))
    time.sleep(2.5)  # (past the cache's settling time for the change time utime just set)
    assert _keys(spark, path) == [1, 2, 3, 4]
    assert _keys(spark, path, "k >= 3") == [3, 4]  # (cached by now)
    with open(other, "rb") as src, open(path, "r+b") as dst:  # in place: the same inode
        dst.write(src.read())
    os.utime(path, ns=(stamp, stamp))
    assert os.stat(path).st_mtime_ns == stamp
    assert _keys(spark, path) == [7, 8, 9, 10]
    assert _keys(spark, path, "k >= 9") == [9, 10]
