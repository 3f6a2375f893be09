"""Interchange proofs: every type reaches pyarrow, polars and duckdb as pyarrow reads it, zero-copy,
with the mapping released once every consumer lets go; ``RecordBatchReader`` over foreign streams;
``requested_schema`` as the PyCapsule interface specifies it.

The oracle is pyarrow reading the same file itself (the Arrow project's gold integration files
cover every type the reader supports: views, run-end encoded, unions, dictionaries, extension
types as field metadata, intervals, decimals of every width).
"""
from __future__ import annotations

import ctypes
import gc
import weakref

import numpy as np
import pytest

import pyarrow as pa
import arrowmm
from arrowmm import types as t
from arrowmm.errors import ArrowInvalid, ArrowNotImplementedError

from tests.support.integration_json import GOLD_CASES, GOLD_DIR, gold_path

pytestmark = pytest.mark.skipif(not GOLD_DIR.is_dir(), reason=f"gold files absent: {GOLD_DIR}")


#: types pyarrow reads into tables but has no Python ``Array`` class for (KeyError on access)
_NO_PYTHON_ARRAY = ("month_interval", "day_time_interval")


def _pyarrow_reads(case):
    return pa.ipc.open_file(gold_path(case, "arrow_file")).read_all()


def _in(region, address):
    return region.address <= address < region.address + region.size


# -- every type: pyarrow sees what it reads itself -------------------------------------------

@pytest.mark.parametrize("case", GOLD_CASES)
def test_pyarrow_consumes_every_type(case):
    want = _pyarrow_reads(case)
    oracle = pa.ipc.open_file(gold_path(case, "arrow_file"))
    with arrowmm.open_file(gold_path(case, "arrow_file")) as reader:
        got = pa.table(reader)
        got.validate(full=True)
        assert got.schema.equals(want.schema, check_metadata=True)
        assert got.equals(want)
        for k, batch in enumerate(reader):  # batch by batch, and each column as an array
            rb = pa.record_batch(batch)
            assert rb.equals(oracle.get_batch(k))
            for i in range(batch.num_columns):
                if str(rb.schema.field(i).type) in _NO_PYTHON_ARRAY:
                    continue  # pyarrow has no Python array class to compare with
                want_col = rb.column(i)
                if isinstance(want_col, pa.ExtensionArray) and \
                        not isinstance(batch.column(i), arrowmm.ExtensionArray):
                    want_col = want_col.storage  # unregistered: the array is its storage
                assert pa.array(batch.column(i)).equals(want_col)
    with arrowmm.open_stream(gold_path(case, "stream")) as reader:
        assert pa.RecordBatchReader.from_stream(reader).read_all().equals(want)


class _StreamOnly:
    """Only the PyCapsule stream protocol: consumers take the same path for both producers."""

    def __init__(self, source):
        self.source = source

    def __arrow_c_stream__(self, requested_schema=None):
        return self.source.__arrow_c_stream__(requested_schema)


def _outcome(consume, source):
    """``consume(source)``, or the failure's type and message (polars panics on types it lacks,
    e.g. day_time intervals, with a BaseException: caught too, so both sides can be compared)."""
    try:
        return consume(_StreamOnly(source))
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # noqa: BLE001
        return (type(exc).__name__, str(exc).split("\n")[0])


@pytest.mark.parametrize("case", GOLD_CASES)
def test_polars_consumes_every_type(case):
    pl = pytest.importorskip("polars")
    want = _outcome(pl.DataFrame, _pyarrow_reads(case))
    with arrowmm.open_file(gold_path(case, "arrow_file")) as reader:
        got = _outcome(pl.DataFrame, reader)
    if isinstance(want, tuple):  # polars lacks the type: the same failure from both producers
        assert got == want
    else:
        assert not isinstance(got, tuple), f"polars reads pyarrow's stream but fails on ours: {got}"
        assert got.schema == want.schema
        if case not in ("decimal32", "decimal64"):  # polars 2.1 misreads these (as 16-byte
            assert got.equals(want)                   # values) from any producer, and crashes in
                                                      # DataFrame.equals on them


def _duckdb_rows(duckdb, source):
    con = duckdb.connect()
    try:
        return con.from_arrow(source).fetchall()
    finally:
        con.close()


@pytest.mark.parametrize("case", GOLD_CASES)
def test_duckdb_consumes_every_type(case):
    duckdb = pytest.importorskip("duckdb")
    want = _outcome(lambda src: _duckdb_rows(duckdb, src), _pyarrow_reads(case))
    with arrowmm.open_file(gold_path(case, "arrow_file")) as reader:
        got = _outcome(lambda src: _duckdb_rows(duckdb, src), reader)
    assert got == want


# -- zero copy, by address ---------------------------------------------------------------------

# (interval: pyarrow gives Python no access to month_interval / day_time_interval buffers)
@pytest.mark.parametrize("case", [c for c in GOLD_CASES if "no_batches" not in c and c != "interval"])
def test_every_pyarrow_buffer_lies_in_the_mapping(case):
    """Every non-empty buffer pyarrow holds after importing lies inside the file mapping."""
    with arrowmm.open_file(gold_path(case, "arrow_file")) as reader:
        region = reader._region
        table = pa.table(reader)
    checked = 0
    for f, column in zip(table.schema, table.columns):
        if str(f.type) in _NO_PYTHON_ARRAY:
            continue  # no Python access to these buffers (the table equality test covers them)
        for chunk in column.chunks:
            for buf in _all_buffers(chunk):
                if buf is not None and buf.size:
                    assert _in(region, buf.address), f"{case}: buffer at {buf.address:#x} copied"
                    checked += 1
    assert checked or table.num_rows == 0


def _all_buffers(arr):
    out = list(arr.buffers())
    if isinstance(arr, pa.DictionaryArray):
        out += _all_buffers(arr.dictionary)
    return out


def test_numpy_views_of_imported_and_exported_data_lie_in_the_mapping(tmp_path):
    path = tmp_path / "n.arrow"
    table = pa.table({"i": np.arange(1000, dtype=np.int64), "f": np.linspace(0, 1, 1000),
                      "s": [str(i) for i in range(1000)]})
    with pa.ipc.new_file(path, table.schema) as w:
        w.write_table(table)
    reader = arrowmm.open_file(path)
    region, batch = reader._region, reader.get_batch(0)
    for view in (batch.column("i").to_numpy(), np.asarray(batch.column("f"), copy=False),
                 batch.column("s").offsets, batch.column("s").values,
                 pa.array(batch.column("i")).to_numpy()):  # pyarrow's own view of our export
        assert _in(region, view.__array_interface__["data"][0])


# -- lifetime and leaks --------------------------------------------------------------------------

@pytest.mark.parametrize("consumer", ["pyarrow", "polars", "pyarrow-batch", "numpy"])
def test_mapping_released_when_the_consumer_lets_go(consumer):
    path = gold_path("primitive", "arrow_file")
    want = _pyarrow_reads("primitive")
    reader = arrowmm.open_file(path)
    region = weakref.ref(reader._region)
    if consumer == "pyarrow":
        held = pa.table(reader)
    elif consumer == "polars":
        pl = pytest.importorskip("polars")
        held = pl.DataFrame(reader.get_batch(0))
    elif consumer == "pyarrow-batch":
        held = pa.record_batch(reader.get_batch(0))
    else:
        held = reader.get_batch(0).column(0).to_numpy(zero_copy_only=False)
    reader.close()
    del reader
    gc.collect()
    if consumer in ("pyarrow", "pyarrow-batch"):
        assert region() is not None  # the consumer's buffers keep the mapping
        got = held if consumer == "pyarrow" else pa.Table.from_batches([held])
        assert got.slice(0, held.num_rows).equals(want.slice(0, held.num_rows))
        del got
    del held
    gc.collect()
    assert region() is None


def test_unconsumed_capsules_release_their_structs():
    reader = arrowmm.open_file(gold_path("nested", "arrow_file"))
    region = weakref.ref(reader._region)
    batch = reader.get_batch(0)
    capsules = [batch.__arrow_c_array__(), batch.column(0).__arrow_c_array__(),
                reader.__arrow_c_stream__(), batch.__arrow_c_schema__()]
    reader.close()
    del reader, batch
    gc.collect()
    assert region() is not None  # the capsules' structs hold the batch (and so the mapping)
    del capsules
    gc.collect()
    assert region() is None


class _Stream(ctypes.Structure):
    _fields_ = [("get_schema", ctypes.c_void_p), ("get_next", ctypes.c_void_p),
                ("get_last_error", ctypes.c_void_p), ("release", ctypes.c_void_p),
                ("private_data", ctypes.c_void_p)]


class _Array(ctypes.Structure):
    _fields_ = [("length", ctypes.c_int64), ("null_count", ctypes.c_int64),
                ("offset", ctypes.c_int64), ("n_buffers", ctypes.c_int64),
                ("n_children", ctypes.c_int64), ("buffers", ctypes.c_void_p),
                ("children", ctypes.c_void_p), ("dictionary", ctypes.c_void_p),
                ("release", ctypes.c_void_p), ("private_data", ctypes.c_void_p)]


_capi = ctypes.pythonapi
_capi.PyCapsule_GetPointer.restype = ctypes.c_void_p
_capi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capi.PyCapsule_New.restype = ctypes.py_object
_capi.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class CountedProducer:
    """A C producer whose release callback counts its calls: pyarrow's struct moved into a ctypes
    struct whose ``release`` counts, then calls pyarrow's own (so nothing leaks)."""

    def __init__(self, capsule, name: bytes, struct):
        src = struct.from_address(_capi.PyCapsule_GetPointer(capsule, name))
        self.struct = struct.from_buffer_copy(src)
        src.release = None  # moved: the source capsule's destructor now does nothing
        self.released = 0
        proto = ctypes.CFUNCTYPE(None, ctypes.POINTER(struct))
        original = proto(self.struct.release)

        def release(ptr):
            self.released += 1
            ptr.contents.release = ctypes.cast(original, ctypes.c_void_p).value
            original(ptr)  # pyarrow's release marks the struct released (release = NULL)

        self._keep = (capsule, original, proto(release))
        self.struct.release = ctypes.cast(self._keep[2], ctypes.c_void_p).value
        self.capsule = _capi.PyCapsule_New(ctypes.addressof(self.struct), name, None)


def test_stream_import_releases_exactly_once():
    table = pa.table({"x": np.arange(10), "s": list("abcdefghij")}).to_batches(max_chunksize=4)
    producer = CountedProducer(pa.Table.from_batches(table).__arrow_c_stream__(),
                               b"arrow_array_stream", _Stream)
    with arrowmm.RecordBatchReader.from_stream(producer.capsule) as reader:
        first = reader.read_next_batch()
        assert producer.released == 0
    assert producer.released == 1 and reader.closed
    reader.close()
    del reader
    gc.collect()
    assert producer.released == 1
    assert first.to_pydict() == {"x": [0, 1, 2, 3], "s": list("abcd")}  # outlives the stream
    with pytest.raises(ArrowInvalid, match="already consumed"):
        arrowmm.RecordBatchReader.from_stream(producer.capsule)
    producer = CountedProducer(pa.table({"x": [1]}).__arrow_c_stream__(), b"arrow_array_stream",
                               _Stream)
    reader = arrowmm.RecordBatchReader.from_stream(producer.capsule)
    assert [b.num_rows for b in reader] == [1]
    del reader  # exhausted, then collected: still exactly once
    gc.collect()
    assert producer.released == 1


def test_array_import_releases_exactly_once_and_frees_pyarrow_memory():
    before = pa.total_allocated_bytes()
    arr = pa.array(range(1_000_000), pa.int64())  # in pyarrow's pool (numpy input would be wrapped)
    assert pa.total_allocated_bytes() >= before + 8_000_000
    schema_capsule, array_capsule = arr.__arrow_c_array__()
    producer = CountedProducer(array_capsule, b"arrow_array", _Array)
    mm = arrowmm.interop._cdata.import_array(schema_capsule, producer.capsule)
    address = arr.buffers()[1].address
    del arr, schema_capsule, array_capsule
    gc.collect()
    assert mm._buffers[1].address == address  # no copy: the same memory
    assert producer.released == 0 and mm.to_numpy()[-1] == 999_999
    assert pa.total_allocated_bytes() >= before + 8_000_000  # still held for arrowmm
    view = mm.slice(10, 5).to_numpy()
    del mm
    gc.collect()
    assert producer.released == 0 and view.tolist() == [10, 11, 12, 13, 14]  # the view holds it
    del view
    gc.collect()
    assert producer.released == 1
    assert pa.total_allocated_bytes() == before


# -- RecordBatchReader ---------------------------------------------------------------------------

def test_reader_from_pyarrow_wraps_its_buffers():
    table = pa.table({"x": np.arange(6), "s": list("abcdef")}).slice(1, 4)
    with arrowmm.RecordBatchReader.from_stream(table) as reader:
        assert reader.schema == t.schema([("x", t.int64()), ("s", t.string())])
        batches = list(reader)
    assert [b.to_pydict() for b in batches] == [{"x": [1, 2, 3, 4], "s": list("bcde")}]
    col = batches[0].column("x")
    assert col._buffers[1].address == table.column("x").chunks[0].buffers()[1].address
    with pytest.raises(ArrowInvalid, match="closed"):
        reader.read_next_batch()


def test_reader_over_an_arrowmm_reader_is_zero_copy_and_exports_again():
    with arrowmm.open_file(gold_path("nested", "arrow_file")) as source:
        region = source._region
        reader = arrowmm.RecordBatchReader.from_stream(source)
        first = reader.read_next_batch()
        assert all(b is None or not b.size or _in(region, b.address) for b in first.column(0).buffers())
        rest = pa.table(reader)  # exports the batches not read yet
    want = _pyarrow_reads("nested")
    assert pa.record_batch(first).equals(want.to_batches()[0])
    assert rest.equals(want.slice(first.num_rows))


def test_reader_from_polars_and_duckdb():
    pl = pytest.importorskip("polars")
    duckdb = pytest.importorskip("duckdb")
    frame = pl.DataFrame({"a": [1, 2, None], "b": ["x", "y", "z"]})
    table = arrowmm.RecordBatchReader.from_stream(frame).read_all()
    assert isinstance(table, arrowmm.Table) and table.num_rows == 3
    assert table.column("a").to_pylist() == [1, 2, None]
    rel = duckdb.sql("select range::INTEGER as r from range(5)")
    with arrowmm.RecordBatchReader.from_stream(rel) as reader:
        assert [v for b in reader for v in b.column("r").to_pylist()] == [0, 1, 2, 3, 4]


def test_reader_schema_request_and_from_batches_checks():
    table = pa.table({"x": [1, 2]})
    got = arrowmm.RecordBatchReader.from_stream(table, schema=t.schema([("x", t.int64())]))
    assert got.read_all().to_pydict() == {"x": [1, 2]}
    cast = arrowmm.RecordBatchReader.from_stream(_NoCast(table), schema=t.schema([("x", t.utf8())]))
    assert cast.schema == t.schema([("x", t.utf8())])  # (the producer ignored it: cast, as pyarrow)
    assert cast.read_all().to_pydict() == {"x": ["1", "2"]}
    with pytest.raises(ArrowInvalid, match="not the requested"):  # (other columns)
        arrowmm.RecordBatchReader.from_stream(_NoCast(table), schema=t.schema([("y", t.int32())]))
    with pytest.raises(ArrowInvalid, match="__arrow_c_stream__"):
        arrowmm.RecordBatchReader.from_stream([1, 2])
    batch = arrowmm.record_batch({"x": [1]})
    reader = arrowmm.RecordBatchReader.from_batches(t.schema([("y", t.int64())]), [batch])
    with pytest.raises(ArrowInvalid, match="batch 0 has schema"):
        reader.read_all()


class _NoCast:
    def __init__(self, table):
        self.table = table

    def __arrow_c_stream__(self, requested_schema=None):
        return self.table.__arrow_c_stream__()  # a producer that ignores requests (allowed)


# -- requested_schema ------------------------------------------------------------------------

def _import_array(capsules):
    return pa.Array._import_from_c_capsule(*capsules)


def test_requested_schema_same_layout_is_served_as_asked():
    col = arrowmm.array([[1, 2], [3]], t.list_(t.int64()))
    wanted = pa.list_(pa.field("element", pa.int64(), nullable=False))
    got = _import_array(col.__arrow_c_array__(wanted.__arrow_c_schema__()))
    assert got.type == wanted and got.to_pylist() == [[1, 2], [3]]
    batch = arrowmm.record_batch({"x": [1, 2], "l": [[1], []]})
    req = pa.schema([pa.field("x", pa.int64(), False), ("l", pa.list_(pa.field("e", pa.int64())))],
                    metadata={"k": "v"})
    rb = pa.RecordBatch._import_from_c_capsule(*batch.__arrow_c_array__(req.__arrow_c_schema__()))
    assert rb.schema.equals(req, check_metadata=True) and rb.column(1).to_pylist() == [[1], []]
    stream = arrowmm.RecordBatchReader.from_batches(batch.schema, [batch, batch])
    got = pa.RecordBatchReader._import_from_c_capsule(stream.__arrow_c_stream__(req.__arrow_c_schema__()))
    assert got.schema.equals(req, check_metadata=True) and got.read_all().num_rows == 4


def test_requested_schema_refusals():
    col = arrowmm.array([1, None, 300])
    with pytest.raises(ArrowNotImplementedError, match="Unsupported cast"):
        col.__arrow_c_array__(pa.list_(pa.int32()).__arrow_c_schema__())
    with pytest.raises(ArrowInvalid, match="300"):  # (cast safely, as pyarrow: 300 is no int8)
        col.__arrow_c_array__(pa.int8().__arrow_c_schema__())
    got = pa.Array._import_from_c_capsule(*col.__arrow_c_array__(pa.int16().__arrow_c_schema__()))
    assert got.type == pa.int16() and got.to_pylist() == [1, None, 300]
    with pytest.raises(ArrowInvalid, match="non-nullable"):
        col.__arrow_c_array__(pa.field("x", pa.int64(), nullable=False).__arrow_c_schema__())
    batch = arrowmm.record_batch({"x": [1, None], "y": ["a", "b"]})
    for req, err in [(pa.schema([("x", pa.int64())]), ArrowInvalid),
                     (pa.schema([("y", pa.string()), ("x", pa.int64())]), ArrowInvalid),
                     (pa.schema([("x", pa.int64()), ("y", pa.list_(pa.int8()))]),
                      ArrowNotImplementedError),
                     (pa.int64(), ArrowInvalid)]:
        with pytest.raises(err):
            batch.__arrow_c_array__(req.__arrow_c_schema__())
    req = pa.schema([pa.field("x", pa.int64(), False), ("y", pa.string())])
    stream = arrowmm.RecordBatchReader.from_batches(batch.schema, [batch])
    got = pa.RecordBatchReader._import_from_c_capsule(stream.__arrow_c_stream__(req.__arrow_c_schema__()))
    with pytest.raises(pa.ArrowInvalid, match="non-nullable"):  # found when the batch is pulled
        got.read_all()


def test_a_request_for_other_types_is_served_by_casting_as_pyarrow_does(tmp_path):
    """A consumer asking for other types gets the data cast (pyarrow's ``__arrow_c_array__`` and
    ``__arrow_c_stream__`` cast too): arrays, batches, streams, and a lazy batch of a file whose
    columns were never decoded; a value that does not fit fails as pyarrow's safe cast."""
    table = pa.table({"x": [1, None, 3], "y": ["a", "b", None], "z": [1.5, 2.0, None]})
    path = tmp_path / "t.arrow"
    with pa.ipc.new_file(path, table.schema) as w:
        w.write_table(table)
    req = pa.schema([("x", pa.float64()), ("y", pa.large_string()), ("z", pa.string())])
    want = table.cast(req)
    reader = arrowmm.open_file(path)
    lazy = reader.get_batch(0)
    got = pa.RecordBatch._import_from_c_capsule(*lazy.__arrow_c_array__(req.__arrow_c_schema__()))
    assert pa.Table.from_batches([got]).equals(want)
    stream = pa.RecordBatchReader._import_from_c_capsule(reader.__arrow_c_stream__(req.__arrow_c_schema__()))
    assert stream.read_all().equals(want)
    column = lazy.column("x")
    got = pa.Array._import_from_c_capsule(*column.__arrow_c_array__(pa.string().__arrow_c_schema__()))
    assert got.equals(table.column("x").chunk(0).cast(pa.string()))
    small = pa.schema([("x", pa.int8()), ("y", pa.string()), ("z", pa.float64())])
    assert pa.RecordBatch._import_from_c_capsule(*lazy.__arrow_c_array__(small.__arrow_c_schema__())) \
        .to_pydict() == table.cast(small).to_pydict()
    big = arrowmm.record_batch({"x": [1, 300], "y": ["a", "b"], "z": [1.0, 2.0]})
    with pytest.raises(ArrowInvalid, match="300"):
        big.__arrow_c_array__(small.__arrow_c_schema__())
