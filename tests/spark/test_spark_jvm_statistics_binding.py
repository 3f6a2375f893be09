"""Footer statistics that are not the file's own are never used by the JVM connector
(``format("arrowmm_jvm")``): a digit of the footer's document damaged, the document copied by
pyarrow's ``new_file(..., metadata=reader.metadata)`` into a file of other values, or two footer
Blocks swapped (statistics version 3: each entry records its batch's Block).  These used to
read as silently missing rows (batches skipped by bounds that are not theirs, a limit cut by row
counts that are not theirs); now such a file is read whole and answers as pyarrow does,
while a good file still skips batches (seen in the ``batchLog`` of the batches read).  The
connector's own writer writes statistics the same way: bound, and used by its reader and by
the Python readers (``arrowmm.dataset``), which the Python writers' are by the connector.
"""
from __future__ import annotations

import hashlib
import json
import struct

import numpy as np
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


def _write_jvm(spark, out):
    """The JVM connector's file of keys 0..399 in four batches of 100; its path."""
    spark.range(0, 400, numPartitions=1).selectExpr("id as k") \
        .write.format(FMT).option("maxRecordsPerBatch", 100).save(str(out))
    (path,) = out.glob("*.arrow")
    return path


def _footer_blocks(path):
    """The footer's record batch Blocks as (offset, metaDataLength, bodyLength) tuples."""
    with arrowmm.open_file(str(path)) as r:
        return [tuple(b) for b in r.footer.record_batches.tolist()]


def _swap_footer_blocks(path, to, i, j):
    """Write ``to``: ``path`` with footer Blocks ``i`` and ``j`` swapped in place (24-byte
    structs in the footer flatbuffer: offset int64, metaDataLength int32, 4 bytes of padding,
    bodyLength int64); nothing else changes, the statistics document and its digest included."""
    data = bytearray(path.read_bytes())
    footer_start = len(data) - 10 - struct.unpack_from("<i", data, len(data) - 10)[0]
    blocks = _footer_blocks(path)

    def at(block):
        found = [k for k in range(footer_start, len(data) - 10 - 23, 8)
                 if struct.unpack_from("<qi", data, k) == block[:2]
                 and struct.unpack_from("<q", data, k + 16)[0] == block[2]]
        assert len(found) == 1, (block, found)
        return found[0]

    a, b = at(blocks[i]), at(blocks[j])
    data[a:a + 24], data[b:b + 24] = data[b:b + 24], data[a:a + 24]
    to.write_bytes(bytes(data))
    swapped = list(blocks)
    swapped[i], swapped[j] = blocks[j], blocks[i]
    assert _footer_blocks(to) == swapped


def test_swapped_footer_blocks_give_the_rows_of_a_full_read(spark, tmp_path):
    """Blocks 1 and 2 (batches of keys 100..199 and 200..299, the same size) swapped in the
    footer: every reader reads 200..299 as batch 1, while entry 1 of the document still says
    100..199.  Version 2 skipped batch 1 for ``k >= 200 AND k < 300`` and returned no row (the
    stamp is batch 0's, which did not move); version 3 sees that entry 1 records another Block
    and reads every batch."""
    log = tmp_path / "read.log"
    written = {"jvm": _write_jvm(spark, tmp_path / "jvm"), "python": tmp_path / "python.arrow"}
    _write_arrowmm(written["python"], _keys(0, [100] * 4))
    for writer, path in written.items():
        blocks = _footer_blocks(path)
        assert blocks[1][1:] == blocks[2][1:], (writer, blocks)  # equal sizes: only order moves
        keys, read = _read(spark, path, log, "k >= 200 AND k < 300")
        assert keys == list(range(200, 300)) and read == [2], writer  # a good file still skips
        swapped = tmp_path / f"{writer}-swapped.arrow"
        _swap_footer_blocks(path, swapped, 1, 2)
        table = pa.ipc.open_file(swapped).read_all()  # pyarrow reads in the footer's order
        assert table.column("k").to_pylist()[100:110] == list(range(200, 210))
        expected = sorted(table.filter((pc.field("k") >= 200) & (pc.field("k") < 300))
                          .column("k").to_pylist())
        assert expected == list(range(200, 300))
        keys, read = _read(spark, swapped, log, "k >= 200 AND k < 300")
        assert keys == expected, writer  # (was []: batch 1 skipped by entry 1's 100..199)
        assert read == [0, 1, 2, 3], writer
        df = spark.read.format(FMT).load(str(swapped))
        assert df.filter("k >= 200 AND k < 300").count() == 100
        with arrowmm.open_file(str(swapped)) as r:  # the Python readers refuse it too
            assert decode_file_statistics(r.footer.metadata, lambda: r.batch_metadata(0),
                                          r.footer.record_batches, r.schema) is None


def test_the_jvm_writers_statistics_are_bound_and_used(spark, tmp_path):
    log = tmp_path / "read.log"
    path = _write_jvm(spark, tmp_path / "written")
    reader = pa.ipc.open_file(path)
    text = reader.metadata[KEY]
    doc = json.loads(text)
    assert doc["version"] == 3 and reader.num_record_batches == len(doc["batches"]) == 4
    assert reader.metadata[DIGEST].decode() == hashlib.sha256(text).hexdigest()
    # each entry records its batch's footer Block, as the footer holds it
    assert [tuple(b["block"]) for b in doc["batches"]] == _footer_blocks(path)
    assert [b["rows"] for b in doc["batches"]] == [100] * 4
    stamps = [reader.get_batch_with_custom_metadata(i).custom_metadata
              for i in range(reader.num_record_batches)]
    assert stamps[0] == {STAMP: doc["id"].encode()} and stamps[1:] == [None] * 3
    assert reader.read_all().column("k").to_pylist() == list(range(400))
    with arrowmm.open_file(str(path)) as r:  # the Python readers' check takes it too
        assert decode_file_statistics(r.footer.metadata, lambda: r.batch_metadata(0),
                                      r.footer.record_batches, r.schema) == doc
    keys, read = _read(spark, path, log, "k < 50")
    assert keys == list(range(50)) and read == [0]
    # arrowmm.dataset prunes by them: batch 0's values made to lie (350s), its statistics
    # (0..99) untouched; a filter k >= 300 skips batch 0 unread, so the lie never shows
    data = path.read_bytes()
    first = np.arange(100, dtype="<i8").tobytes()
    assert data.count(first) == 1
    lying = tmp_path / "lying.arrow"
    lying.write_bytes(data.replace(first, np.full(100, 350, dtype="<i8").tobytes()))
    ds = arrowmm.dataset(str(lying))
    assert ds.to_table(filter=[("k", ">=", 300)]).column("k").to_pylist() == \
        list(range(300, 400))
    assert ds.to_table().column("k").to_pylist()[:100] == [350] * 100  # (really damaged)


def test_a_python_append_to_a_jvm_file_keeps_the_statistics_bound(spark, tmp_path):
    """arrowmm.append_file on the JVM writer's file: the old entries keep their blocks, the new
    ones record theirs; the connector uses the whole document (a filter reads only the new
    batch)."""
    log = tmp_path / "read.log"
    path = _write_jvm(spark, tmp_path / "written")
    with arrowmm.append_file(str(path)) as w:
        w.write(pa.record_batch({"k": pa.array(range(1000, 1100), pa.int64())},
                                schema=pa.schema([pa.field("k", pa.int64(), nullable=False)])))
    doc = json.loads(pa.ipc.open_file(path).metadata[KEY])
    assert [tuple(b["block"]) for b in doc["batches"]] == _footer_blocks(path)
    assert len(doc["batches"]) == 5
    keys, read = _read(spark, path, log, "k >= 1000")
    assert keys == list(range(1000, 1100)) and read == [4]
    keys, read = _read(spark, path, log, "k < 50")
    assert keys == list(range(50)) and read == [0]


def test_statistics_added_to_a_pyarrow_file_are_used_by_the_connector(spark, tmp_path):
    """``arrowmm.add_statistics`` re-encodes batch 0's header with the stamp, so every later
    message moves: its document records the Blocks of the file it writes, and the connector
    skips by it."""
    source, dest, log = tmp_path / "pyarrow.arrow", tmp_path / "stats.arrow", tmp_path / "r.log"
    batches = _keys(0, [100] * 4)
    with pa.ipc.new_file(source, batches[0].schema) as w:
        for b in batches:
            w.write_batch(b)
    arrowmm.add_statistics(str(source), str(dest))
    doc = json.loads(pa.ipc.open_file(dest).metadata[KEY])
    blocks = _footer_blocks(dest)
    assert [tuple(b["block"]) for b in doc["batches"]] == blocks != _footer_blocks(source)
    keys, read = _read(spark, dest, log, "k >= 350")
    assert keys == list(range(350, 400)) and read == [3]
    keys, read = _read(spark, source, log, "k >= 350")  # (pyarrow's own file: read whole)
    assert keys == list(range(350, 400)) and read == [0, 1, 2, 3]
