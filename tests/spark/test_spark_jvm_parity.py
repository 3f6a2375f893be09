"""The JVM connector reads what the Python data source reads, with the same Spark types and
values: IPC streams (``.arrows``, any file whose first bytes start a stream), unsigned
integers, float16, decimal256, fixed_size_binary, durations, dictionaries replaced or
extended between a stream's batches.  Each case is read by both engines in one session and
compared row by row (the Python source with ``option("cast", "true")``, which the JVM needs not).
"""
from __future__ import annotations

import decimal
import struct

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from arrowmm.spark import jar as jvm_jar

pyspark = pytest.importorskip("pyspark", reason="pyspark is in the test extras; install them")

JVM = jvm_jar.JVM_FORMAT
PY = "arrowmm_python"


def _both(spark, path, **options):
    """(JVM rows, Python rows, JVM schema, Python schema) of one load."""
    out = []
    for fmt, extra in ((JVM, {}), (PY, {"cast": "true"})):
        df = spark.read.format(fmt).options(**options, **extra).load(path)
        out.append((sorted(map(tuple, df.collect()), key=repr), df.schema))
    return out[0][0], out[1][0], out[0][1], out[1][1]


def _widened_table() -> pa.Table:
    return pa.table({
        "id": pa.array([1, 2, 3, 4], pa.int64()),
        "u8": pa.array([255, 0, None, 7], pa.uint8()),
        "u16": pa.array([65535, 0, None, 7], pa.uint16()),
        "u32": pa.array([0, 2**32 - 1, None, 7], pa.uint32()),
        "u64": pa.array([2**64 - 1, 0, 5, None], pa.uint64()),
        "half": pa.array(np.array([1.5, -2, 6.1e-5, np.inf], np.float16)),
        "d256": pa.array([decimal.Decimal("-" + "9" * 36 + ".5"), None, 1, 2], pa.decimal256(38, 1)),
        "fsb": pa.array([b"ab", None, b"\x00\xff", b"zz"], pa.binary(2)),
        "dur_ns": pa.array([1, -1500, None, 10**15], pa.duration("ns")),
        "dur_s": pa.array([1, -2, None, 86_400], pa.duration("s")),
        "dur_us": pa.array([1, -2, None, 3], pa.duration("us")),
        "ns": pa.array([1_000_000_123_456_789, -1500, 0, None], pa.timestamp("ns", "UTC")),
        "d64ms": pa.array([86_400_000, -86_400_000, None, 0], pa.date64()),
        "cat": pa.array(["x", "y", "x", None]).dictionary_encode(),
        "ucat": pa.DictionaryArray.from_arrays(pa.array([0, 1, None, 0], pa.uint16()),
                                               pa.array([7, 8], pa.uint8())),
        "lh": pa.array([[1.0, None], [], None, [2.5]], pa.list_(pa.float16())),
        "su": pa.array([{"u": 1}, None, {"u": 255}, {"u": None}], pa.struct([("u", pa.uint8())])),
        "sv": pa.array(["short", None, "a value longer than twelve bytes", "日本語のテキストです"],
                       pa.string_view()),
        "bv": pa.array([b"\x00" * 13, b"", None, b"twelve bytes"], pa.binary_view()),
    })


@pytest.mark.parametrize("fmt", ["file", "stream", "legacy stream", "zstd file"])
def test_widened_types_read_as_the_python_source_reads_them(spark, tmp_path, fmt):
    table = _widened_table()
    path = str(tmp_path / ("t.arrow" if fmt.endswith("file") else "t.arrows"))
    if fmt.endswith("file"):
        options = pa.ipc.IpcWriteOptions(compression="zstd" if fmt == "zstd file" else None)
        with pa.ipc.new_file(path, table.schema, options=options) as w:
            w.write_table(table, max_chunksize=3)
    else:
        options = pa.ipc.IpcWriteOptions(use_legacy_format=fmt == "legacy stream")
        with pa.ipc.new_stream(path, table.schema, options=options) as w:
            w.write_table(table, max_chunksize=3)
    jvm, py, jvm_schema, py_schema = _both(spark, path)
    assert jvm_schema == py_schema
    assert jvm_schema["u64"].dataType.simpleString() == "decimal(20,0)"
    assert jvm == py
    assert len(jvm) == table.num_rows
    row = {r[0]: r for r in jvm}[1]
    assert row[4] == decimal.Decimal(2**64 - 1)  # uint64's top value, not -1


@pytest.mark.parametrize("writer", ["pyarrow", "arrowmm"])
def test_streams_split_into_batch_ranges_and_agree(spark, tmp_path, writer):
    path = str(tmp_path / "many.arrows")
    schema = arrowmm.schema([("x", arrowmm.int64()), ("s", arrowmm.string())])
    batches = [{"x": np.arange(i * 100, (i + 1) * 100, dtype=np.int64),
                "s": [f"k{i}"] * 100} for i in range(12)]
    if writer == "arrowmm":
        with arrowmm.new_stream(path, schema, compression="zstd", statistics=True) as w:
            for b in batches:
                w.write(b)
    else:
        with pa.ipc.new_stream(path, pa.schema([("x", pa.int64()), ("s", pa.string())]),
                               options=pa.ipc.IpcWriteOptions(compression="lz4")) as w:
            for b in batches:
                w.write_batch(pa.record_batch(b))
    df = spark.read.format(JVM).option("maxPartitionBytes", "1").load(path)
    assert df.rdd.getNumPartitions() > 1  # ranges of record batches, by byte offset
    assert sorted(r.x for r in df.collect()) == list(range(1200))
    jvm, py, _, _ = _both(spark, path, maxPartitionBytes="3000")
    assert jvm == py
    log = tmp_path / "read.log"
    df = spark.read.format(JVM).option("batchLog", str(log)).load(path).filter("x >= 1150")
    assert df.count() == 50
    if writer == "arrowmm":  # its per-message statistics skip the other 11 batches
        assert [line.split("\t")[1:] for line in log.read_text().splitlines()] == [["11", "100"]]
    else:  # no statistics: every batch is read, Spark filters
        assert len(log.read_text().splitlines()) == 12
    assert spark.read.format(JVM).load(path).limit(7).count() == 7
    # a folder of streams and files, as the Python source finds them
    with pa.ipc.new_file(str(tmp_path / "f.arrow"), pa.schema([("x", pa.int64()),
                                                               ("s", pa.string())])) as w:
        w.write_batch(pa.record_batch({"x": [5000], "s": ["file"]}))
    jvm, py, _, _ = _both(spark, str(tmp_path))
    assert jvm == py and len(jvm) == 1201


def test_a_stream_of_only_a_schema_reads_as_no_rows(spark, tmp_path):
    path = str(tmp_path / "empty.arrows")
    with pa.ipc.new_stream(path, pa.schema([("x", pa.int64()), ("u", pa.uint8())])):
        pass
    jvm, py, jvm_schema, py_schema = _both(spark, path)
    assert jvm == py == [] and jvm_schema == py_schema
    assert jvm_schema.simpleString() == "struct<x:bigint,u:smallint>"


def test_stream_dictionaries_replaced_and_extended_between_batches(spark, tmp_path):
    def batch(indices, values):
        return pa.record_batch({"k": pa.DictionaryArray.from_arrays(
            pa.array(indices, pa.int8()), pa.array(values))})
    replaced = str(tmp_path / "replaced.arrows")
    first, second = batch([0, 1, 0], ["a", "b"]), batch([1, 0], ["c", "d"])
    with pa.ipc.new_stream(replaced, first.schema) as w:
        for b in (first, second, first):
            w.write_batch(b)
    deltas = str(tmp_path / "deltas.arrows")
    with pa.ipc.new_stream(deltas, first.schema,
                           options=pa.ipc.IpcWriteOptions(emit_dictionary_deltas=True)) as w:
        w.write_batch(first)
        w.write_batch(batch([2, 0], ["a", "b", "z"]))
    for path, expected in ((replaced, ["a", "b", "a", "d", "c", "a", "b", "a"]),
                           (deltas, ["a", "b", "a", "z", "a"])):
        for split in ("1", "1000000"):  # each batch its own task (dictionaries before it), or one
            df = spark.read.format(JVM).option("maxPartitionBytes", split).load(path)
            got = [r.k for r in df.collect()]
            assert got == expected, (path, split)
            assert got == [r.k for r in spark.read.format(PY).option("cast", "true")
                           .option("maxPartitionBytes", split).load(path).collect()]


def test_hostile_streams_raise_clear_errors(spark, tmp_path):
    table = pa.table({"x": pa.array(range(100), pa.int64())})
    good = tmp_path / "good.arrows"
    with pa.ipc.new_stream(str(good), table.schema) as w:
        w.write_table(table)
    data = good.read_bytes()
    cases = {
        # cut inside the record batch's body: its declared body runs past the end
        "cut.arrows": (data[: len(data) - 100], r"stream message 1 at byte \d+: body length 800 "
                                                r"does not fit"),
        # a metadata length larger than the file
        "meta.arrows": (data[:4] + struct.pack("<i", 1 << 30) + data[8:],
                        "stream message 0 at byte 0: metadata length 1073741824 does not fit"),
        # a record batch where the schema must come
        "noschema.arrows": (data[data.index(b"\xff\xff\xff\xff", 8):],
                            "a stream starts with its schema, not a RecordBatch message"),
    }
    # the data buffer claims a terabyte: checked against the body as in files
    pattern = struct.pack("<qq", 0, 800)
    assert data.count(pattern) == 1
    cases["huge.arrows"] = (data.replace(pattern, struct.pack("<qq", 0, 1 << 40)),
                            r"do not fit in the 800-byte message body")
    for name, (payload, message) in cases.items():
        (tmp_path / name).write_bytes(payload)
        with pytest.raises(Exception, match=message):
            spark.read.format(JVM).load(str(tmp_path / name)).collect()
    assert spark.read.format(JVM).load(str(good)).count() == 100  # the session is still fine


def test_hostile_views_raise_and_nested_views_are_refused(spark, tmp_path):
    table = pa.table({"v": pa.array(["x" * 20, "y"], pa.string_view())})
    good = tmp_path / "views.arrow"
    with pa.ipc.new_file(str(good), table.schema) as w:
        w.write_table(table)
    data = good.read_bytes()
    view = struct.pack("<i4sii", 20, b"xxxx", 0, 0)  # length, prefix, buffer 0, offset 0
    assert data.count(view) == 1
    for bad, message in [(struct.pack("<i4sii", 20, b"xxxx", 3, 0), "data buffer 3"),
                         (struct.pack("<i4sii", 20, b"xxxx", 0, 16), "at offset 16"),
                         (struct.pack("<i4sii", -5, b"xxxx", 0, 0), "has length -5")]:
        (tmp_path / "bad.arrow").write_bytes(data.replace(view, bad))
        with pytest.raises(Exception, match="column 'v', views buffer: value 0 .*" + message):
            spark.read.format(JVM).load(str(tmp_path / "bad.arrow")).collect()
    nested = pa.table({"l": pa.array([["a"]], pa.list_(pa.string_view()))})
    path = str(tmp_path / "nested_view.arrow")
    with pa.ipc.new_file(path, nested.schema) as w:
        w.write_table(nested)
    with pytest.raises(Exception, match=r"l\.item: a view inside a nested column .*arrowmm_python"):
        spark.read.format(JVM).load(path)
    assert spark.read.format(PY).option("cast", "true").load(path).first().l == ["a"]


def test_decimal32_is_refused_naming_the_python_fallback(spark, tmp_path):
    table = pa.table({"d": pa.array([decimal.Decimal("1.5")], pa.decimal32(3, 1))})
    path = str(tmp_path / "d32.arrow")
    with pa.ipc.new_file(path, table.schema) as w:
        w.write_table(table)
    with pytest.raises(Exception, match=r"decimal32 or decimal64 column.*format\('arrowmm_python'\)"):
        spark.read.format(JVM).load(path)
    assert spark.read.format(PY).option("cast", "true").load(path).first().d == decimal.Decimal("1.5")
