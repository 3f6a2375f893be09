"""Footer statistics that are not the file's own are never used by the JVM connector
(``format("arrowmm_jvm")``): a digit of the footer's document damaged, or the document copied by
pyarrow's ``new_file(..., metadata=reader.metadata)`` into a file of other values.  Both used to
read as silently missing rows (batches skipped by bounds that are not theirs, a limit cut by row
counts that are not theirs); now such a file is read whole and answers as pyarrow.dataset does,
while a good file still skips batches (seen in the ``batchLog`` of the batches read).  The
connector's own writer writes statistics the same way: bound, and used by its reader.
"""
from __future__ import annotations

import hashlib
import json

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads
import pytest

import arrowmm
from arrowmm.ipc.core.statistics import decode_file_statistics
from arrowmm.spark import jar as jvm_jar

pytest.importorskip("pyspark", reason="pyspark is in the test extras; install them")

FMT = jvm_jar.JVM_FORMAT
KEY, DIGEST, STAMP = b"arrowmm:statistics", b"arrowmm:statistics-sha256", b"arrowmm:statistics-id"


def _keys(start, sizes):
    """Batches of consecutive int64 keys ``k`` from ``start``, of the given sizes."""
    out = []
    for n in sizes:
        out.append(pa.record_batch({"k": pa.array(range(start, start + n), pa.int64())}))
        start += n
    return out


def _write_arrowmm(path, batches):
    with arrowmm.new_file(str(path), batches[0].schema, statistics=True) as w:
        for b in batches:
            w.write(b)


def _read(spark, path, log, where):
    """The keys the JVM connector returns for ``where``, and the batches it read (the log)."""
    if log.exists():
        log.unlink()
    df = spark.read.format(FMT).option("batchLog", str(log)).load(str(path)).filter(where)
    keys = sorted(r.k for r in df.collect())
    read = sorted(int(line.split("\t")[1]) for line in log.read_text().splitlines()) \
        if log.exists() else []
    return keys, read


def _pyarrow(path, expression):
    table = pads.dataset(str(path), format="ipc").to_table(filter=expression)
    return sorted(table.column("k").to_pylist())


def test_a_good_file_skips_and_a_flipped_digit_costs_a_full_read_not_rows(spark, tmp_path):
    path, log = tmp_path / "keys.arrow", tmp_path / "read.log"
    _write_arrowmm(path, _keys(0, [100] * 4))  # batch 3 holds 300..399
    keys, read = _read(spark, path, log, "k >= 350")
    assert keys == list(range(350, 400)) and read == [3]  # its statistics skip batches 0-2
    data = path.read_bytes()
    assert data.count(b'"max":399') == 1
    damaged = tmp_path / "damaged.arrow"
    damaged.write_bytes(data.replace(b'"max":399', b'"max":199'))  # batch 3 now "ends" at 199
    expected = _pyarrow(damaged, pc.field("k") >= 350)
    assert expected == list(range(350, 400))
    keys, read = _read(spark, damaged, log, "k >= 350")
    assert keys == expected  # (was []: batch 3 skipped by the damaged bound)
    assert read == [0, 1, 2, 3]  # every batch read, Spark filters
    assert spark.read.format(FMT).load(str(damaged)).filter("k >= 350").count() == 50


def test_statistics_pyarrow_copied_onto_other_values_are_not_used(spark, tmp_path):
    source, copy, log = tmp_path / "a.arrow", tmp_path / "copy.arrow", tmp_path / "read.log"
    _write_arrowmm(source, _keys(0, [100] * 4))
    metadata = pa.ipc.open_file(source).metadata
    assert KEY in metadata and DIGEST in metadata  # intact, and describing 0..399 in 4 x 100
    other = _keys(1000, [50] * 4)  # the same layout (4 batches of k), other values and rows
    with pa.ipc.new_file(copy, other[0].schema, metadata=metadata) as w:
        for b in other:
            w.write_batch(b)
    assert pa.ipc.open_file(copy).metadata == metadata
    expected = _pyarrow(copy, pc.field("k") >= 1100)
    assert expected == list(range(1100, 1200))
    keys, read = _read(spark, copy, log, "k >= 1100")
    assert keys == expected and read == [0, 1, 2, 3]  # (was []: every batch "below" 400)
    df = spark.read.format(FMT).load(str(copy))
    assert df.filter("k >= 1100").count() == 100
    # a pushed limit counts rows by the statistics when they are the file's: here 100 a batch,
    # which would keep 2 batches (100 rows) for a limit of 150
    assert df.limit(150).count() == 150
    assert df.count() == 200
    # an old writer's document (version 1: no digest, no id) over the same other values, as
    # copies made before version 2 carry: not trusted either
    v1 = json.dumps({"version": 1, "columns": ["k"], "batches": [
        {"rows": 100, "columns": {"k": {"nulls": 0, "min": 100 * i, "max": 100 * i + 99}}}
        for i in range(4)]}, separators=(",", ":"))
    old = tmp_path / "v1.arrow"
    with pa.ipc.new_file(old, other[0].schema, metadata={KEY: v1}) as w:
        for b in other:
            w.write_batch(b)
    keys, read = _read(spark, old, log, "k >= 1100")
    assert keys == expected and read == [0, 1, 2, 3]
    assert spark.read.format(FMT).load(str(old)).limit(150).count() == 150


def test_the_jvm_writers_statistics_are_bound_and_used(spark, tmp_path):
    out, log = tmp_path / "written", tmp_path / "read.log"
    spark.range(0, 400, numPartitions=1).selectExpr("id as k") \
        .write.format(FMT).option("maxRecordsPerBatch", 100).save(str(out))
    (path,) = out.glob("*.arrow")
    reader = pa.ipc.open_file(path)
    text = reader.metadata[KEY]
    doc = json.loads(text)
    assert doc["version"] == 2 and reader.num_record_batches == len(doc["batches"]) == 4
    assert reader.metadata[DIGEST].decode() == hashlib.sha256(text).hexdigest()
    stamps = [reader.get_batch_with_custom_metadata(i).custom_metadata
              for i in range(reader.num_record_batches)]
    assert stamps[0] == {STAMP: doc["id"].encode()} and stamps[1:] == [None] * 3
    assert reader.read_all().column("k").to_pylist() == list(range(400))
    with arrowmm.open_file(str(path)) as r:  # the Python readers' check takes it too
        assert decode_file_statistics(r.footer.metadata, lambda: r.batch_metadata(0)) == doc
    keys, read = _read(spark, path, log, "k < 50")
    assert keys == list(range(50)) and read == [0]
