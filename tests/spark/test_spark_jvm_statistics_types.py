"""Statistics version 3's ``types`` in the JVM connector (``format("arrowmm_jvm")``): a document
names the type of every column it describes (pyarrow's string of its storage type), and is used
only when the schema the values are read by gives each the same type.  One damaged footer byte
makes every reader (pyarrow too) read a column as another type: a binary column as a string,
whose bounds the filter then compared as text although they were recorded as hex (it dropped
rows the read holds), or an int32 column as uint32 (the review's finding).  The connector's
writer records the types, which the Python readers take, and takes the Python writers'
(TypeStringsTest, in JUnit, checks every string against pyarrow's).
"""
from __future__ import annotations

import decimal
import hashlib
import json

import numpy as np
import pyarrow as pa
import pyarrow.dataset as pads
import pytest

import arrowmm
from arrowmm.spark import jar as jvm_jar

pytest.importorskip("pyspark", reason="pyspark is in the test extras; install them")

FMT = jvm_jar.JVM_FORMAT
KEY = b"arrowmm:statistics"
#: Two batches of int32 x and binary y: batch 0 holds x -5, -1, 3 (max 3) and y "zz?" (hex
#: 7a7a..), batch 1 x up to 50 and y "9", "99", "999" (hex 39..).
X = [[-5, -1, 3], [-100, 50, 7]]
Y = [[b"zzz", b"zzy", b"zzx"], [b"9", b"99", b"999"]]


def _write_python(path):
    schema = pa.schema([("x", pa.int32()), ("y", pa.binary())])
    with arrowmm.new_file(str(path), schema, statistics=True) as w:
        for x, y in zip(X, Y):
            w.write(pa.record_batch([pa.array(x, pa.int32()), pa.array(y, pa.binary())],
                                    schema=schema))
    return path


def _write_jvm(spark, out):
    rows = [(x, y) for xs, ys in zip(X, Y) for x, y in zip(xs, ys)]
    spark.createDataFrame(rows, "x int, y binary").coalesce(1).write.format(FMT) \
        .option("maxRecordsPerBatch", 3).save(str(out))
    (path,) = out.glob("*.arrow")
    return path


def _one_byte_changed(path, to, before, after, reads_as):
    """Write ``to``: ``path`` with the one footer byte of value ``before`` that, set to
    ``after``, makes the footer's schema read as ``reads_as`` (column name to type string)
    in arrowmm's reader; nothing else changed (the review's way of finding Int.is_signed)."""
    base = path.read_bytes()
    footer_start = len(base) - 10 - int.from_bytes(base[-10:-6], "little")
    found = []
    for pos in range(footer_start, len(base) - 10):
        if base[pos] != before:
            continue
        m = bytearray(base)
        m[pos] = after
        to.write_bytes(bytes(m))
        try:
            with arrowmm.open_file(str(to)) as r:
                if {f.name: str(f.type) for f in r.schema} == reads_as:
                    found.append(bytes(m))
        except arrowmm.ArrowError:
            pass
    assert len(found) == 1, f"{len(found)} footer bytes make the schema {reads_as}"
    to.write_bytes(found[0])
    assert {f.name: str(f.type) for f in pa.ipc.open_file(to).schema} == reads_as  # pyarrow's
    return to


def _read(spark, path, log, where, column="x"):
    """The values of ``column`` the connector returns for ``where``, and the batches it
    read."""
    if log.exists():
        log.unlink()
    df = spark.read.format(FMT).option("batchLog", str(log)).load(str(path)).filter(where)
    values = sorted(r[column] for r in df.collect())
    read = sorted(int(line.split("\t")[1]) for line in log.read_text().splitlines()) \
        if log.exists() else []
    return values, read


def _pyarrow(path, expression, column):
    """pyarrow's full read of ``path`` filtered by ``expression``: ``column``'s values."""
    return sorted(pads.dataset(str(path), format="ipc").to_table(filter=expression)
                  .column(column).to_pylist())


def test_a_column_read_as_another_type_is_not_judged_by_its_old_bounds(spark, tmp_path):
    """Both writers' files.  Intact, their statistics skip batches.  One footer byte makes the
    binary y read as a string (the Field's type_type, Binary 4 -> Utf8 5): its bounds were
    recorded as hex ("7a7a7a"), which the filter then compared as text, and ``y > '5'``
    skipped batch 1 ("393939" < "5") whose "9", "99", "999" it holds (was: 3 rows of 6).  One
    byte makes the int32 x read as uint32 (Int.is_signed, the review's finding; -5 reads as
    4294967291): the filter returns pyarrow's rows (it did before: the connector prunes no
    unsigned column, whose bounds the reader now refuses in any case)."""
    log = tmp_path / "read.log"
    written = {"jvm": _write_jvm(spark, tmp_path / "jvm"),
               "python": _write_python(tmp_path / "python.arrow")}
    for writer, path in written.items():
        doc = json.loads(pa.ipc.open_file(path).metadata[KEY])
        assert doc["types"] == {"x": "int32", "y": "binary"}, writer
        assert _read(spark, path, log, "x > 10") == ([50], [1]), writer  # statistics used
        assert _read(spark, path, log, "y < X'50'", "y") == ([b"9", b"99", b"999"], [1])

        text = _one_byte_changed(path, tmp_path / f"{writer}-string.arrow", 4, 5,
                                 {"x": "int32", "y": "string"})
        expected = _pyarrow(text, pads.field("y") > "5", "y")
        assert expected == ["9", "99", "999", "zzx", "zzy", "zzz"], writer
        values, read = _read(spark, text, log, "y > '5'", "y")
        assert values == expected, writer
        assert read == [0, 1], writer

        unsigned = _one_byte_changed(path, tmp_path / f"{writer}-uint32.arrow", 1, 0,
                                     {"x": "uint32", "y": "binary"})
        expected = _pyarrow(unsigned, pads.field("x") > 10, "x")
        assert expected == [50, 2**32 - 100, 2**32 - 5, 2**32 - 1], writer
        values, read = _read(spark, unsigned, log, "x > 10")
        assert values == expected and read == [0, 1], writer


def test_the_jvm_writers_types_are_taken_by_the_python_readers(spark, tmp_path):
    """The connector's file of several types: its document names each column's pyarrow type,
    and ``arrowmm.dataset`` prunes by it (batch 0's values made to lie, unread)."""
    out = tmp_path / "jvm"
    df = spark.range(0, 200, numPartitions=1).selectExpr(
        "id + 1000 as k", "cast(id as int) as i", "cast(id as short) as h", "cast(id % 100 as byte) as b",
        "cast(id as double) as d", "cast(id as float) as f", "cast(id as string) as s",
        "cast(cast(id as string) as binary) as y", "id % 2 = 0 as t", "cast(id as decimal(10, 2)) as m",
        "cast(id as decimal(30, 2)) as w", "date_add(date'2020-01-01', cast(id as int)) as dt",
        "timestamp_micros(id) as ts", "cast(timestamp_micros(id) as timestamp_ntz) as tn",
        "array(id) as a")
    df.write.format(FMT).option("maxRecordsPerBatch", 100).save(str(out))
    (path,) = out.glob("*.arrow")
    reader = pa.ipc.open_file(path)
    doc = json.loads(reader.metadata[KEY])
    schema = reader.schema
    described = set().union(*(b["columns"] for b in doc["batches"]))
    assert described == set(schema.names) - {"a"}  # every flat column; not the array
    assert doc["types"] == {n: str(schema.field(n).type) for n in described}
    assert doc["types"]["ts"] == "timestamp[us, tz=UTC]" and doc["types"]["tn"] == \
        "timestamp[us]" and doc["types"]["w"] == "decimal128(30, 2)"
    data = path.read_bytes()
    first = np.arange(1000, 1100, dtype="<i8").tobytes()
    assert data.count(first) == 1
    lying = tmp_path / "lying.arrow"
    lying.write_bytes(data.replace(first, np.full(100, 1150, dtype="<i8").tobytes()))
    ds = arrowmm.dataset(str(lying))
    assert ds.to_table(filter=[("k", ">=", 1150)]).column("k").to_pylist() == \
        list(range(1150, 1200))  # batch 0 skipped by its statistics: taken with their types
    assert ds.to_table().column("k").to_pylist()[:100] == [1150] * 100  # (really damaged)


def _three_values(dtype):
    """Three values of ``dtype`` (a flat type)."""
    if pa.types.is_fixed_size_binary(dtype):
        return pa.array([b"abc", b"def", b"ghi"], dtype)
    if pa.types.is_decimal(dtype):
        return pa.array([decimal.Decimal(v) for v in (1, 2, 3)], dtype)
    if dtype == pa.float16():
        return pa.array(np.array([1, 2, 3], np.float16))
    if pa.types.is_boolean(dtype):
        return pa.array([True, False, None])
    if dtype == pa.date64():  # (whole days: the writers refuse a date64 that is not one)
        return pa.array([86_400_000 * k for k in (1, 2, 3)], pa.int64()).cast(dtype)
    if dtype in (pa.string(), pa.large_string(), pa.string_view(), pa.binary(),
                 pa.large_binary(), pa.binary_view()):
        return pa.array(["a", "b", "c"]).cast(dtype)
    return pa.array([1, 2, 3], dtype)


def test_the_python_writers_types_are_taken_by_the_connector(spark, tmp_path):
    """arrowmm's writer's file of a key and a column of every type the connector reads and a
    document describes: every type string is the connector's own, so a filter on the key
    skips batch 0 (one string of another spelling and no batch would be skipped)."""
    log = tmp_path / "read.log"
    columns = {
        "u8": pa.uint8(), "u16": pa.uint16(), "u32": pa.uint32(), "u64": pa.uint64(),
        "i8": pa.int8(), "i16": pa.int16(), "i32": pa.int32(), "h": pa.float16(),
        "f": pa.float32(), "d": pa.float64(), "m": pa.decimal128(10, 2),
        "w": pa.decimal256(38, 3), "dt": pa.date32(), "dl": pa.date64(),
        "ts": pa.timestamp("s"), "tm": pa.timestamp("ms", tz="Europe/Paris"),
        "tu": pa.timestamp("us", tz="UTC"), "tns": pa.timestamp("ns", tz="+01:00"),
        "du": pa.duration("us"), "dn": pa.duration("ns"), "t": pa.bool_(), "s": pa.string(),
        "ls": pa.large_string(), "sv": pa.string_view(), "y": pa.binary(),
        "ly": pa.large_binary(), "bv": pa.binary_view(), "fb": pa.binary(3),
    }
    path = tmp_path / "python.arrow"
    schema = pa.schema([("k", pa.int64()), *columns.items()])
    with arrowmm.new_file(str(path), schema, statistics=True) as w:
        for start in (0, 10):
            arrays = [pa.array(range(start, start + 3), pa.int64())]
            for dtype in columns.values():
                arrays.append(_three_values(dtype))
            w.write(pa.record_batch(arrays, schema=schema))
    doc = json.loads(pa.ipc.open_file(path).metadata[KEY])
    assert set(doc["types"]) == set(schema.names)  # every column described and named
    values, read = _read(spark, path, log, "k > 5", "k")
    assert values == [10, 11, 12] and read == [1]  # (every type string the connector's own)
    # one string changed (its digest made again): the whole document is ignored
    text = pa.ipc.open_file(path).metadata[KEY]
    other = text.replace(b'"u32":"uint32"', b'"u32":"uint64"')
    assert other != text
    digest = pa.ipc.open_file(path).metadata[b"arrowmm:statistics-sha256"]
    changed = path.read_bytes().replace(text, other).replace(
        digest, hashlib.sha256(other).hexdigest().encode())
    damaged = tmp_path / "damaged.arrow"
    damaged.write_bytes(changed)
    values, read = _read(spark, damaged, log, "k > 5", "k")
    assert values == [10, 11, 12] and read == [0, 1]
