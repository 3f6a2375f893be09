"""The Arrow C data / stream interfaces (arrowmm.interop._cdata): export, import, lifetime, hostile input.

pyarrow is the oracle: it writes the IPC files, reads them itself, and the
arrays arrowmm exports from its own read of the same files must be ``equals``
to pyarrow's.  polars and duckdb consume the same exports.  Hostile C structs
are built with ctypes.
"""
from __future__ import annotations

import ctypes
import datetime
import decimal
import errno
import gc
import sys
import threading

import numpy as np
import pytest

import pyarrow as pa
import arrowmm
from arrowmm.interop import _cdata
from arrowmm import types as t
from arrowmm.errors import ArrowInvalid, ArrowNotImplementedError

# -- the columns every test runs over ------------------------------------------------------

N6 = [0, 1, None, 3, 4, 5]
D = decimal.Decimal
LONG = "a value longer than twelve bytes"


def _dict(values, index=pa.int32(), ordered=False):
    arr = pa.array(values).dictionary_encode()
    return pa.DictionaryArray.from_arrays(arr.indices.cast(index), arr.dictionary, ordered=ordered)


def _columns():
    ts = [datetime.datetime(2020, 1, 2, 3, 4, 5, 6000), None] * 3
    dense = pa.UnionArray.from_dense(
        pa.array([5, 2, 5, 2, 5, 5], pa.int8()), pa.array([0, 0, 1, 1, 2, 3], pa.int32()),
        [pa.array([1, None, 3, 4]), pa.array(["a", "b"])], ["x", "y"], [5, 2])
    sparse = pa.UnionArray.from_sparse(
        pa.array([0, 1, 0, 1, 0, 1], pa.int8()), [pa.array(N6, pa.int16()), pa.array(list("abcdef"))],
        ["p", "q"])
    struct = pa.StructArray.from_arrays(
        [pa.array(N6), pa.array(["a", None, "c", "d", LONG, "f"]), _dict(list("xyxyzz"))],
        ["n", "s", "d"], mask=pa.array([False, False, False, True, False, False]))
    return {
        "null": pa.array([None] * 6, pa.null()),
        "bool": pa.array([True, False, None, True, True, False]),
        **{name: pa.array(N6, getattr(pa, name)()) for name in
           ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")},
        "float16": pa.array(np.array([1.5, 2, 3, 4, 5, 6], np.float16)),
        "float32": pa.array([1.5, None, 3, 4, 5, 6], pa.float32()),
        "float64": pa.array([1.5, None, -3, 4, 5, float("inf")]),
        "decimal32": pa.array([D("1.25"), None, D("-3.5"), D(0), D("9.99"), D(1)], pa.decimal32(7, 2)),
        "decimal64": pa.array([D("1.25"), None] * 3, pa.decimal64(15, 2)),
        "decimal128": pa.array([D("12345678901234.567"), None] * 3, pa.decimal128(30, 3)),
        "decimal256": pa.array([D("1.25"), None] * 3, pa.decimal256(50, 2)),
        "date32": pa.array([datetime.date(2020, 1, 2), None] * 3, pa.date32()),
        "date64": pa.array([datetime.date(2020, 1, 2), None] * 3, pa.date64()),
        "time32s": pa.array([1, None, 3, 4, 5, 6], pa.time32("s")),
        "time32ms": pa.array([1, None, 3, 4, 5, 6], pa.time32("ms")),
        "time64us": pa.array([1, None, 3, 4, 5, 6], pa.time64("us")),
        "time64ns": pa.array([1000, None, 3000, 4, 5, 6], pa.time64("ns")),
        "timestamp_s": pa.array(ts, pa.timestamp("s")),
        "timestamp_ms_tz": pa.array(ts, pa.timestamp("ms", "Europe/Paris")),
        "timestamp_us_utc": pa.array(ts, pa.timestamp("us", "UTC")),
        "timestamp_ns": pa.array(ts, pa.timestamp("ns")),
        **{f"duration_{u}": pa.array(N6, pa.duration(u)) for u in ("s", "ms", "us", "ns")},
        "month_day_nano": pa.array([pa.MonthDayNano([1, 2, 3]), None] * 3, pa.month_day_nano_interval()),
        "binary": pa.array([b"a", None, b"", b"\x00\xff", b"e", b"f"]),
        "string": pa.array(["a", None, "", "\u00e9t\u00e9", "e", "f"]),
        "large_binary": pa.array([b"a", None, b"", b"d", b"e", b"f"], pa.large_binary()),
        "large_string": pa.array(["a", None, "", "d", "e", "f"], pa.large_string()),
        "binary_view": pa.array([b"x", None, LONG.encode(), b"", b"y", (LONG * 2).encode()],
                                pa.binary_view()),
        "string_view": pa.array(["x", None, LONG, "", "y", LONG * 2], pa.string_view()),
        "fixed_size_binary": pa.array([b"abc", None, b"def", b"ghi", b"jkl", b"mno"], pa.binary(3)),
        "list": pa.array([[1], None, [], [2, 3], [4], [5, None]], pa.list_(pa.int32())),
        "large_list": pa.array([["a"], None, [], ["b", None], ["c"], []], pa.large_list(pa.string())),
        "list_view": pa.array([[1], None, [2, 3], [], [4], [5]], pa.list_view(pa.int16())),
        "large_list_view": pa.array([[1], None, [2, 3], [], [4], [5]], pa.large_list_view(pa.int16())),
        "fixed_size_list": pa.array([[1, 2], None, [3, None], [5, 6], [7, 8], [9, 0]],
                                    pa.list_(pa.int8(), 2)),
        "struct": struct,
        "map": pa.array([[("a", 1)], None, [], [("b", 2), ("c", None)], [("d", 4)], []],
                        pa.map_(pa.string(), pa.int32())),
        "sparse_union": sparse,
        "dense_union": dense,
        "dictionary": _dict(["x", "y", None, "x", "z", "y"]),
        "dictionary_ordered_int8": _dict([3, 1, None, 3, 2, 2], pa.int8(), ordered=True),
        "list_of_dictionary": pa.ListArray.from_arrays(pa.array([0, 1, 1, 3, 4, 5, 6], pa.int32()),
                                                       _dict(list("abcaba"))),
        "run_end_encoded": pa.RunEndEncodedArray.from_arrays(pa.array([2, 4, 6], pa.int32()),
                                                             pa.array(["a", None, LONG])),
        "run_end_encoded_int16": pa.RunEndEncodedArray.from_arrays(pa.array([1, 6], pa.int16()),
                                                                   pa.array([1.5, 2.5])),
    }


COLUMNS = _columns()
NAMES = list(COLUMNS)
EXT_META = {"ARROW:extension:name": "arrowmm.test", "ARROW:extension:metadata": "m"}


def _table():
    fields = [pa.field(n, a.type, metadata=EXT_META if n == "int64" else None)
              for n, a in COLUMNS.items()]
    return pa.table(list(COLUMNS.values()), schema=pa.schema(fields, metadata={"origin": "test"}))


def _reversed(arr):
    try:
        return arr.take(pa.array([5, 4, 3, 2, 1, 0]))
    except pa.ArrowNotImplementedError:  # no take kernel for this type
        return arr


@pytest.fixture(scope="module")
def ipc_file(tmp_path_factory):
    """An IPC file with every column, two batches (the second a reversed take)."""
    table = _table()
    path = tmp_path_factory.mktemp("cdata") / "all.arrow"
    second = pa.record_batch([_reversed(c.combine_chunks()) for c in table.columns],
                             schema=table.schema)
    with pa.ipc.new_file(path, table.schema) as w:
        w.write_table(table)
        w.write_batch(second)
    return path


@pytest.fixture(scope="module")
def expected(ipc_file):
    return pa.ipc.open_file(ipc_file).read_all()


@pytest.fixture()
def reader(ipc_file):
    with arrowmm.open_file(ipc_file) as r:
        yield r


def _expected_column(expected, name, batch=0):
    return expected.to_batches()[batch].column(name)


# -- export: pyarrow reads what arrowmm exports -------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_export_column_equals_pyarrow_read(reader, expected, name):
    for k in range(2):
        got = pa.array(reader.get_batch(k).column(name))
        want = _expected_column(expected, name, k)
        assert got.type == want.type
        got.validate(full=True)
        assert got.equals(want), name


@pytest.mark.parametrize("name", NAMES)
def test_export_sliced_column(reader, expected, name):
    col = reader.get_batch(0).column(name)
    want = _expected_column(expected, name)
    for offset, length in [(1, 4), (2, 4), (5, 1), (6, 0), (0, 0)]:
        got = pa.array(col.slice(offset, length))
        got.validate(full=True)
        assert got.equals(want.slice(offset, length)), (name, offset, length)


def test_export_record_batch_keeps_schema_and_metadata(reader, expected):
    batch = reader.get_batch(0)
    got = pa.record_batch(batch)
    want = expected.to_batches()[0]
    assert got.schema.equals(want.schema, check_metadata=True)
    assert got.schema.metadata == {b"origin": b"test"}
    assert got.schema.field("int64").metadata == {k.encode(): v.encode() for k, v in EXT_META.items()}
    assert got.equals(want)
    for offset, length in [(1, 4), (3, 3), (6, 0)]:
        sliced = pa.record_batch(batch.slice(offset, length))
        sliced.validate(full=True)
        assert sliced.equals(want.slice(offset, length))


def test_table_from_file_reader_stream(reader, expected):
    got = pa.table(reader)
    assert got.schema.equals(expected.schema, check_metadata=True)
    assert got.num_rows == 12 and got.equals(expected)


def test_table_from_stream_reader(tmp_path, expected):
    path = tmp_path / "s.arrows"
    with pa.ipc.new_stream(path, expected.schema) as w:
        w.write_table(expected)
    with arrowmm.open_stream(path) as r:
        got = pa.RecordBatchReader.from_stream(r).read_all()
    assert got.equals(expected)


def test_export_schema_of_reader_batch_field_type(reader, expected):
    assert pa.schema(reader).equals(expected.schema, check_metadata=True)
    assert pa.schema(reader.schema).equals(expected.schema, check_metadata=True)
    f = reader.schema.field("int64")
    assert pa.field(f).equals(expected.schema.field("int64"), check_metadata=True)
    assert pa.DataType._import_from_c_capsule(f.type.__arrow_c_schema__()) == pa.int64()


def test_polars_reads_the_exports(reader, expected):
    pl = pytest.importorskip("polars")
    names = ["bool", "int64", "float64", "string", "large_string", "string_view", "list",
             "struct", "date32", "timestamp_us_utc", "decimal128", "dictionary"]
    batch = reader.get_batch(0).select(names)
    want = pl.from_arrow(expected.select(names).slice(0, 6))
    assert pl.DataFrame(batch).equals(want)
    assert pl.from_arrow(batch).struct.unnest().equals(want)
    assert pl.DataFrame(reader.get_batch(1).select(names)).equals(
        pl.from_arrow(expected.select(names).slice(6, 6)))
    assert pl.Series(batch.column("int64")).to_list() == N6


def test_duckdb_reads_the_exports(tmp_path, expected):
    duckdb = pytest.importorskip("duckdb")
    names = ["int64", "string", "string_view", "list", "struct", "decimal128", "dictionary",
             "timestamp_us_utc", "map", "bool"]
    path = tmp_path / "duck.arrow"
    with pa.ipc.new_file(path, expected.select(names).schema) as w:
        w.write_table(expected.select(names))
    with arrowmm.open_file(path) as reader:
        tbl = pa.table(reader)  # noqa: F841  (duckdb finds it by name)
        want = expected.select(names)  # noqa: F841
        query = ("select sum(int64), count(string), max(string_view), sum(len(list)), "
                 "count(distinct dictionary), min(struct.s), epoch_us(max(timestamp_us_utc)) from {}")
        got = duckdb.sql(query.format("tbl")).fetchall()
        assert got == duckdb.sql(query.format("want")).fetchall()
        assert got[0][:5] == (26, 10, "y", 12, 3)
        direct = reader  # noqa: F841  (scanned through __arrow_c_stream__)
        got = duckdb.sql("select * from direct").arrow().read_all()
        assert got.num_rows == 12
        assert got.equals(duckdb.sql("select * from want").arrow().read_all())


# -- zero copy, lifetime, reference counts --------------------------------------------------

def test_export_is_zero_copy(reader):
    arr = pa.array(reader.get_batch(0).column("int64"))
    addr = arr.buffers()[1].address
    region = reader._region
    assert region.address <= addr < region.address + region.size
    batch = pa.record_batch(reader.get_batch(1))
    addr = batch.column("string").buffers()[2].address
    assert region.address <= addr < region.address + region.size


def test_export_outlives_reader_and_batch(ipc_file, expected):
    reader = arrowmm.open_file(ipc_file)
    batch = reader.get_batch(0)
    arr = pa.array(batch.column("string_view"))
    rb = pa.record_batch(batch)
    reader.close()
    del reader, batch
    gc.collect()
    assert arr.equals(_expected_column(expected, "string_view"))
    assert rb.equals(expected.to_batches()[0])


def test_refcount_returns_after_consumer_release(reader):
    batch = reader.get_batch(0)
    for name in ("int64", "struct", "dictionary", "string_view", "run_end_encoded"):
        col = batch.column(name)
        before = sys.getrefcount(col)
        consumed = pa.array(col)
        assert sys.getrefcount(col) == before + 1
        del consumed
        gc.collect()
        assert sys.getrefcount(col) == before
        capsules = col.__arrow_c_array__()  # never consumed: the capsule destructor releases
        del capsules
        assert sys.getrefcount(col) == before
    # an exported batch holds the message body (its struct, and each column the walk exported
    # without decoding it), not the batch object
    body = batch._loader.body
    before, batch_before = sys.getrefcount(body), sys.getrefcount(batch)
    rb = pa.record_batch(batch)
    assert sys.getrefcount(body) > before and sys.getrefcount(batch) == batch_before
    del rb
    gc.collect()
    assert sys.getrefcount(body) == before


def test_release_without_gil_from_another_thread(reader, expected):
    """A consumer may call release on any thread, without the GIL (ctypes drops it)."""
    col = reader.get_batch(0).column("large_list")
    before = sys.getrefcount(col)
    capsules = col.__arrow_c_array__()
    src = CArray.from_address(_capi.PyCapsule_GetPointer(capsules[1], _ARRAY_NAME))
    moved = CArray.from_buffer_copy(src)  # move the struct out, as a consumer does
    src.release = None
    del capsules
    assert sys.getrefcount(col) == before + 1
    release = ctypes.CFUNCTYPE(None, ctypes.POINTER(CArray))(moved.release)
    thread = threading.Thread(target=release, args=(ctypes.pointer(moved),))
    thread.start()
    thread.join()
    assert moved.release is None
    assert sys.getrefcount(col) == before
    holder = [pa.array(col)]
    thread = threading.Thread(target=holder.clear)
    thread.start()
    thread.join()
    assert sys.getrefcount(col) == before


def test_requested_schema(reader):
    col = reader.get_batch(0).column("int64")
    same = pa.int64().__arrow_c_schema__()
    schema_capsule, _ = col.__arrow_c_array__(same)
    assert pa.DataType._import_from_c_capsule(schema_capsule) == pa.int64()
    before = sys.getrefcount(col)
    with pytest.raises(NotImplementedError):  # (a pair pyarrow does not cast either)
        col.__arrow_c_array__(pa.struct([("a", pa.int32())]).__arrow_c_schema__())
    assert sys.getrefcount(col) == before
    as_text = pa.Array._import_from_c_capsule(*col.__arrow_c_array__(pa.string().__arrow_c_schema__()))
    assert as_text.equals(pa.array(col).cast(pa.string()))  # (cast on request, as pyarrow)
    batch = reader.get_batch(0).select(["int64"])
    batch.__arrow_c_array__(pa.schema([("int64", pa.int64())]).__arrow_c_schema__())
    with pytest.raises(ArrowNotImplementedError):
        batch.__arrow_c_array__(pa.schema([("int64", pa.month_day_nano_interval())]).__arrow_c_schema__())
    with pytest.raises(ArrowInvalid, match="names columns"):  # other columns: not the same data
        reader.__arrow_c_stream__(pa.schema([("x", pa.int8())]).__arrow_c_schema__())


# -- export: format strings, flags, metadata (read back with ctypes) -----------------------

class CSchema(ctypes.Structure):
    pass


CSchema._fields_ = [("format", ctypes.c_char_p), ("name", ctypes.c_char_p),
                    ("metadata", ctypes.c_void_p), ("flags", ctypes.c_int64),
                    ("n_children", ctypes.c_int64), ("children", ctypes.POINTER(ctypes.POINTER(CSchema))),
                    ("dictionary", ctypes.POINTER(CSchema)), ("release", ctypes.c_void_p),
                    ("private_data", ctypes.c_void_p)]


class CArray(ctypes.Structure):
    pass


CArray._fields_ = [("length", ctypes.c_int64), ("null_count", ctypes.c_int64),
                   ("offset", ctypes.c_int64), ("n_buffers", ctypes.c_int64),
                   ("n_children", ctypes.c_int64), ("buffers", ctypes.POINTER(ctypes.c_void_p)),
                   ("children", ctypes.POINTER(ctypes.POINTER(CArray))),
                   ("dictionary", ctypes.POINTER(CArray)), ("release", ctypes.c_void_p),
                   ("private_data", ctypes.c_void_p)]

_capi = ctypes.pythonapi
_capi.PyCapsule_GetPointer.restype = ctypes.c_void_p
_capi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capi.PyCapsule_New.restype = ctypes.py_object
_capi.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_SCHEMA_NAME, _ARRAY_NAME = b"arrow_schema", b"arrow_array"


def _c_schema(capsule) -> CSchema:
    """The struct inside ``capsule`` (keep the capsule alive while reading it)."""
    return CSchema.from_address(_capi.PyCapsule_GetPointer(capsule, _SCHEMA_NAME))


FORMATS = [
    (t.null(), "n"), (t.bool_(), "b"), (t.int8(), "c"), (t.uint8(), "C"), (t.int16(), "s"),
    (t.uint16(), "S"), (t.int32(), "i"), (t.uint32(), "I"), (t.int64(), "l"), (t.uint64(), "L"),
    (t.float16(), "e"), (t.float32(), "f"), (t.float64(), "g"),
    (t.decimal128(10, 2), "d:10,2"), (t.decimal256(40, 3), "d:40,3,256"),
    (t.decimal32(5, 1), "d:5,1,32"), (t.decimal64(12, 0), "d:12,0,64"),
    (t.fixed_size_binary(4), "w:4"), (t.binary(), "z"), (t.large_binary(), "Z"),
    (t.binary_view(), "vz"), (t.string(), "u"), (t.large_string(), "U"), (t.string_view(), "vu"),
    (t.date32(), "tdD"), (t.date64(), "tdm"), (t.time32("s"), "tts"), (t.time32("ms"), "ttm"),
    (t.time64("us"), "ttu"), (t.time64("ns"), "ttn"), (t.timestamp("us", "UTC"), "tsu:UTC"),
    (t.timestamp("s"), "tss:"), (t.timestamp("ns", "+01:00"), "tsn:+01:00"),
    (t.duration("s"), "tDs"), (t.duration("ms"), "tDm"), (t.duration("us"), "tDu"),
    (t.duration("ns"), "tDn"), (t.month_interval(), "tiM"), (t.day_time_interval(), "tiD"),
    (t.month_day_nano_interval(), "tin"), (t.list_(t.int32()), "+l"),
    (t.large_list(t.int32()), "+L"), (t.list_view(t.int8()), "+vl"),
    (t.large_list_view(t.int8()), "+vL"), (t.fixed_size_list(t.int8(), 3), "+w:3"),
    (t.struct([("a", t.int8()), ("b", t.string())]), "+s"), (t.map_(t.string(), t.int8()), "+m"),
    (t.dense_union([("x", t.int8()), ("y", t.string())], [5, 2]), "+ud:5,2"),
    (t.sparse_union([("x", t.int8()), ("y", t.string())]), "+us:0,1"),
    (t.run_end_encoded(t.int32(), t.string()), "+r"),
    (t.dictionary(t.int16(), t.string()), "s"),
]


@pytest.mark.parametrize("dtype, fmt", FORMATS, ids=[f for _, f in FORMATS])
def test_format_string_and_type_round_trip(dtype, fmt):
    capsule = _cdata.export_schema(dtype)
    assert _c_schema(capsule).format.decode() == fmt
    assert pa.DataType._import_from_c_capsule(_cdata.export_schema(dtype)) is not None
    assert _cdata.import_type(capsule) == dtype
    assert _cdata.import_type(_cdata.export_schema(t.field("f", dtype))) == dtype


def test_flags_names_children_dictionary():
    dtype = t.dictionary(t.int8(), t.string(), ordered=True)
    capsule = _cdata.export_schema(t.field("d", dtype, nullable=False))
    s = _c_schema(capsule)
    assert (s.name, s.format, s.flags) == (b"d", b"c", 1)  # ordered, not nullable
    assert s.dictionary.contents.format == b"u" and s.n_children == 0
    assert pa.field(_Schema(capsule)).type == pa.dictionary(pa.int8(), pa.string(), ordered=True)
    capsule = _cdata.export_schema(t.map_(t.string(), t.int8(), keys_sorted=True))
    s = _c_schema(capsule)
    assert s.flags == 2 | 4
    entries = s.children[0].contents
    assert (entries.name, entries.format, entries.flags, entries.n_children) == (b"entries", b"+s", 0, 2)
    assert [entries.children[i].contents.name for i in range(2)] == [b"key", b"value"]
    assert entries.children[0].contents.flags == 0 and entries.children[1].contents.flags == 2


def test_metadata_encoding():
    field = t.field("f", t.int8(), metadata={"a": "bc", "\u00e9": ""})
    capsule = _cdata.export_schema(field)
    s = _c_schema(capsule)
    want = (b"\x02\x00\x00\x00" + b"\x01\x00\x00\x00a" + b"\x02\x00\x00\x00bc"
            + b"\x02\x00\x00\x00\xc3\xa9" + b"\x00\x00\x00\x00")
    assert ctypes.string_at(s.metadata, len(want)) == want
    assert _cdata.import_field(_cdata.export_schema(field)) == field
    capsule = _cdata.export_schema(t.field("g", t.int8()))
    assert _c_schema(capsule).metadata is None
    schema = t.schema([field, ("x", t.string())], metadata={"k": "v"})
    capsule = _cdata.export_schema(schema)
    s = _c_schema(capsule)
    assert (s.format, s.flags, s.n_children) == (b"+s", 0, 2)
    assert _cdata.import_schema(_cdata.export_schema(schema)) == schema


def test_every_schema_round_trips_through_pyarrow(expected):
    mm = _cdata.import_schema(expected.schema.__arrow_c_schema__())
    assert pa.schema(mm).equals(expected.schema, check_metadata=True)
    assert mm.field("int64").metadata == EXT_META and mm.metadata == {"origin": "test"}


# -- import: arrowmm reads what pyarrow exports ---------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_import_array_round_trip(name):
    arr = COLUMNS[name]
    for piece in (arr, arr.slice(1, 4), arr.slice(6, 0)):
        got = _cdata.import_array(*piece.__arrow_c_array__())
        got.validate(full=True)
        assert len(got) == len(piece)
        if name in ("time64ns", "duration_ns"):  # Python objects cannot hold nanoseconds
            assert got.to_pylist(temporal="int") == piece.view(pa.int64()).to_pylist()
        else:
            assert got.to_pylist() == piece.to_pylist(), name
        assert pa.array(got).equals(piece)


def test_import_is_zero_copy_and_keeps_foreign_memory_alive():
    arr = pa.array(np.arange(1000, dtype=np.int64))
    got = _cdata.import_array(*arr.__arrow_c_array__())
    assert got._buffers[1].address == arr.buffers()[1].address
    del arr
    gc.collect()
    assert got.to_numpy()[-1] == 999


def test_import_batch_and_stream():
    table = _table()
    batch = table.to_batches()[0]
    got = _cdata.import_batch(*batch.__arrow_c_array__())
    assert got.schema == _cdata.import_schema(batch.schema.__arrow_c_schema__())
    assert pa.record_batch(got).equals(batch)
    got = _cdata.import_batch(*batch.slice(2, 3).__arrow_c_array__())
    assert got.num_rows == 3 and pa.record_batch(got).equals(batch.slice(2, 3))
    stream = _cdata.import_stream(pa.table({"x": [1, 2, 3]}).__arrow_c_stream__())
    assert stream.schema.names == ["x"]
    assert [b.to_pydict() for b in stream] == [{"x": [1, 2, 3]}]
    assert list(stream) == []


def test_arrowmm_stream_round_trip_and_errors(reader, expected):
    stream = _cdata.import_stream(reader.__arrow_c_stream__())
    assert stream.schema == reader.schema
    assert pa.Table.from_batches([pa.record_batch(b) for b in stream]).equals(expected)

    def failing(exc):
        yield reader.get_batch(0)
        raise exc

    for exc, err in [(ValueError("bad value"), ArrowInvalid),
                     (OSError(errno.EACCES, "no access"), OSError),
                     (RuntimeError("boom"), OSError),
                     (NotImplementedError("todo"), ArrowNotImplementedError)]:
        stream = _cdata.import_stream(_cdata.export_stream(reader.schema, failing(exc)))
        next(stream)
        with pytest.raises(err, match=str(exc.args[-1])):
            next(stream)
        with pytest.raises(err):  # errors are sticky
            next(stream)
    with pytest.raises(pa.ArrowInvalid, match="bad value"):
        pa.table(_PyStream(reader.schema, failing(ValueError("bad value"))))
    with pytest.raises(OSError, match="boom"):
        pa.table(_PyStream(reader.schema, failing(RuntimeError("boom"))))
    with pytest.raises(pa.ArrowInvalid, match="differs from the stream schema"):
        pa.table(_PyStream(t.schema([("x", t.int8())]), iter([reader.get_batch(0)])))


class _PyStream:
    def __init__(self, schema, batches):
        self.schema, self.batches = schema, batches

    def __arrow_c_stream__(self, requested_schema=None):
        return _cdata.export_stream(self.schema, self.batches, requested_schema)


def test_stream_holds_iterator_until_released(reader):
    batch = reader.get_batch(0)
    before = sys.getrefcount(batch)
    capsule = _cdata.export_stream(reader.schema, iter([batch]))
    assert sys.getrefcount(batch) == before + 1  # the iterator's list, held by the stream
    body = batch._loader.body
    body_before = sys.getrefcount(body)
    table = pa.table(_Capsule(capsule))
    del capsule
    gc.collect()
    assert sys.getrefcount(batch) == before  # the stream (and its iterator) released
    assert sys.getrefcount(body) > body_before  # the exported arrays, held by pyarrow
    n = table.num_rows
    del table
    gc.collect()
    assert n == 6
    assert sys.getrefcount(body) == body_before


class _Schema:
    def __init__(self, capsule):
        self.capsule = capsule

    def __arrow_c_schema__(self):
        return self.capsule


class _Capsule:
    def __init__(self, capsule):
        self.capsule = capsule

    def __arrow_c_stream__(self, requested_schema=None):
        return self.capsule


# -- hostile imports: ArrowInvalid, never a crash ------------------------------------------

_RELEASED = []
_SCHEMA_RELEASE = ctypes.CFUNCTYPE(None, ctypes.POINTER(CSchema))(
    lambda p: setattr(p.contents, "release", None))
_ARRAY_RELEASE = ctypes.CFUNCTYPE(None, ctypes.POINTER(CArray))(
    lambda p: (_RELEASED.append(1), setattr(p.contents, "release", None)))


def _schema_capsule(fmt, children=(), keep=None, **fields):
    keep = [] if keep is None else keep
    s = CSchema(format=fmt, name=b"f", flags=2,
                release=ctypes.cast(_SCHEMA_RELEASE, ctypes.c_void_p).value, **fields)
    if children:
        ptrs = (ctypes.POINTER(CSchema) * len(children))(*[ctypes.pointer(c) for c in children])
        s.children, s.n_children = ptrs, len(children)
        keep.append(ptrs)
    keep.append(s)
    return _capi.PyCapsule_New(ctypes.addressof(s), _SCHEMA_NAME, None), keep


@pytest.mark.parametrize("fmt, n_children", [
    (b"zz!", 0), (b"", 0), (b"+w:abc", 1), (b"d:1", 0), (b"d:99,2", 0), (b"d:5,2,48", 0),
    (b"+l", 0), (b"+s", -1), (b"+ud:0,1", 1), (b"+ud:0,0", 2), (b"+ud:0,200", 2), (b"i", 1),
    (b"tsx:", 0), (b"w:-1", 0), (b"+m", 1), (b"+r", 2), (b"\xff", 0),
])
def test_hostile_schema_raises_arrow_invalid(fmt, n_children):
    keep = []
    kids = [CSchema(format=b"u", name=b"c", release=ctypes.cast(_SCHEMA_RELEASE, ctypes.c_void_p).value)
            for _ in range(max(n_children, 0))]
    capsule, keep = _schema_capsule(fmt, kids, keep)
    if n_children < 0:
        keep[-1].n_children = n_children
    with pytest.raises(ArrowInvalid):
        _cdata.import_field(capsule)


def test_hostile_schema_other_faults():
    capsule, keep = _schema_capsule(b"l")
    keep[-1].format = None
    with pytest.raises(ArrowInvalid, match="NULL format"):
        _cdata.import_field(capsule)
    capsule, keep = _schema_capsule(b"l", metadata=ctypes.cast(ctypes.c_char_p(b"\xff\xff\xff\xff"),
                                                                ctypes.c_void_p).value)
    with pytest.raises(ArrowInvalid, match="negative entry count"):
        _cdata.import_field(capsule)
    capsule, keep = _schema_capsule(b"l")
    keep[-1].release = None
    with pytest.raises(ArrowInvalid, match="released"):
        _cdata.import_field(capsule)
    capsule, keep = _schema_capsule(b"l", dictionary=ctypes.pointer(CSchema(format=b"u")))
    with pytest.raises(ArrowInvalid):  # the dictionary schema is released (NULL release)
        _cdata.import_field(capsule)
    with pytest.raises(ArrowInvalid, match="arrow_schema"):
        _cdata.import_field(pa.array([1]).__arrow_c_array__()[1])
    with pytest.raises(ArrowInvalid):
        _cdata.import_field(b"not a capsule")
    nested = CSchema(format=b"i", release=ctypes.cast(_SCHEMA_RELEASE, ctypes.c_void_p).value)
    keep = [nested]
    for _ in range(100):
        nested = CSchema(format=b"+l", n_children=1, children=(ctypes.POINTER(CSchema) * 1)(
            ctypes.pointer(nested)), release=ctypes.cast(_SCHEMA_RELEASE, ctypes.c_void_p).value)
        keep.append(nested)
    with pytest.raises(ArrowInvalid, match="max_nesting=64"):
        _cdata.import_field(_capi.PyCapsule_New(ctypes.addressof(nested), _SCHEMA_NAME, None))
    with arrowmm.limits.override(max_nesting=128):  # the limit, not a cap of its own, decides
        field = _cdata.import_field(_capi.PyCapsule_New(ctypes.addressof(nested), _SCHEMA_NAME, None))
    depth, dtype = 0, field.type
    while dtype.children:
        depth, dtype = depth + 1, dtype.children[0].type
    assert depth == 100 and dtype == arrowmm.int32()


def _array_capsule(length=3, offset=0, null_count=0, n_buffers=2, buffers=None, keep=None):
    data = (ctypes.c_int64 * 8)(*range(8))
    bufs = (ctypes.c_void_p * max(n_buffers, 1))(
        *(buffers if buffers is not None else [None] + [ctypes.addressof(data)] * (n_buffers - 1)))
    a = CArray(length=length, offset=offset, null_count=null_count, n_buffers=n_buffers,
               buffers=bufs, release=ctypes.cast(_ARRAY_RELEASE, ctypes.c_void_p).value)
    keep.extend([data, bufs, a])
    return _capi.PyCapsule_New(ctypes.addressof(a), _ARRAY_NAME, None)


@pytest.mark.parametrize("kwargs, fmt", [
    (dict(length=-1), b"l"), (dict(offset=-2), b"l"), (dict(null_count=5), b"l"),
    (dict(null_count=-3), b"l"), (dict(n_buffers=3), b"l"), (dict(n_buffers=1), b"l"),
    (dict(n_buffers=2, buffers=[None, None]), b"l"), (dict(n_buffers=2), b"+s"),
    (dict(n_buffers=3, buffers=[None, None, None]), b"vu"), (dict(length=2 ** 62), b"l"),
    (dict(n_buffers=2), b"n"),  # a null array has no buffers (0, or 1 legacy validity)
])
def test_hostile_array_raises_and_releases(kwargs, fmt):
    keep = []
    capsule = _array_capsule(keep=keep, **kwargs)
    schema, _ = _schema_capsule(fmt)
    released = len(_RELEASED)
    with pytest.raises(ArrowInvalid):
        _cdata.import_array(schema, capsule)
    gc.collect()
    assert len(_RELEASED) == released + 1  # the moved struct was released exactly once
    with pytest.raises(ArrowInvalid, match="already consumed"):
        _cdata.import_array(schema, capsule)


def _live_schema(fmt, **fields):
    return CSchema(format=fmt, name=b"c", flags=2,
                   release=ctypes.cast(_SCHEMA_RELEASE, ctypes.c_void_p).value, **fields)


def test_hostile_array_structure():
    keep = []
    # a struct that declares a child but gives no children array
    capsule = _array_capsule(n_buffers=1, buffers=[None], keep=keep)
    keep[-1].n_children = 1
    schema, _ = _schema_capsule(b"+s", [_live_schema(b"l")], keep)
    with pytest.raises(ArrowInvalid, match="NULL buffers or children"):
        _cdata.import_array(schema, capsule)
    # a dictionary-encoded schema whose array has no dictionary
    capsule = _array_capsule(keep=keep)
    schema, _ = _schema_capsule(b"i", (), keep, dictionary=ctypes.pointer(_live_schema(b"u")))
    with pytest.raises(ArrowInvalid, match="without a dictionary"):
        _cdata.import_array(schema, capsule)
    # a string view whose variadic sizes buffer holds a negative size
    sizes = (ctypes.c_int64 * 1)(-5)
    views = (ctypes.c_int64 * 8)()
    capsule = _array_capsule(length=1, n_buffers=4, keep=keep, buffers=[
        None, ctypes.addressof(views), ctypes.addressof(views), ctypes.addressof(sizes)])
    schema, _ = _schema_capsule(b"vu", (), keep)
    with pytest.raises(ArrowInvalid, match="variadic data buffer 0 has size -5"):
        _cdata.import_array(schema, capsule)
    # a struct batch with top-level nulls
    bits = (ctypes.c_uint8 * 1)(0b101)
    child = CArray(length=3, n_buffers=2, buffers=(ctypes.c_void_p * 2)(
        None, ctypes.addressof(views)), release=ctypes.cast(_ARRAY_RELEASE, ctypes.c_void_p).value)
    capsule = _array_capsule(null_count=1, n_buffers=1, buffers=[ctypes.addressof(bits)], keep=keep)
    keep[-1].n_children, keep[-1].children = 1, (ctypes.POINTER(CArray) * 1)(ctypes.pointer(child))
    schema, _ = _schema_capsule(b"+s", [_live_schema(b"l")], keep)
    with pytest.raises(ArrowInvalid, match="struct array with 1 null"):
        _cdata.import_batch(schema, capsule)
    del keep
    gc.collect()


def test_hostile_offsets_caught_by_validation():
    keep = []
    offsets = (ctypes.c_int32 * 4)(0, 5, 2, 3)  # decreasing
    data = ctypes.create_string_buffer(b"abcdef")
    capsule = _array_capsule(length=3, n_buffers=3, buffers=[None, ctypes.addressof(offsets),
                                                                 ctypes.addressof(data)], keep=keep)
    schema, _ = _schema_capsule(b"u")
    got = _cdata.import_array(schema, capsule)  # cheap checks pass (first 0, last 3)
    with pytest.raises(ArrowInvalid):
        got.validate(full=True)
    del got
    keep = []
    offsets = (ctypes.c_int32 * 4)(4, 5, 6, 3)
    capsule = _array_capsule(length=3, n_buffers=3, buffers=[None, ctypes.addressof(offsets),
                                                                 ctypes.addressof(data)], keep=keep)
    with pytest.raises(ArrowInvalid, match="offsets"):
        _cdata.import_array(schema, capsule)


def test_export_rejects_non_arrowmm_objects():
    with pytest.raises(ArrowInvalid):
        _cdata.export_schema(pa.int64())
    with pytest.raises(ArrowInvalid):
        _cdata.export_stream(pa.schema([]), iter([]))
