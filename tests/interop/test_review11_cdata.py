"""Review 11: the C data interface both ways.

A damaged column leaving through the C interface (the walk of ``ipc.read._batch_walk``, the
loader path ``fill_array``, ``__arrow_c_array__``) gets the checks arrowmm's own reads make;
an imported stream that failed keeps failing; a requested non-nullable child counts only the
nulls it serves; dictionaries of extension values keep the extension; a name the interface
cannot carry is refused.  pyarrow writes the files; one value is then damaged.
"""
from __future__ import annotations

import struct
import subprocess
import sys
import textwrap
import uuid

import pyarrow as pa
import pytest

import arrowmm

# -- damaged files: pyarrow writes them, then one value of a later batch is changed ----------

N = 8  # rows a batch


def _write(path, batches, compression=None):
    options = pa.ipc.IpcWriteOptions(compression=compression)
    with pa.ipc.new_file(path, batches[0].schema, options=options) as w:
        for b in batches:
            w.write_batch(b)
    return bytearray(open(path, "rb").read())


def _strings(path, damage, compression=None):
    """4 batches of "abcd" x 8 (and an int column); batch 2's offsets or bytes damaged."""
    batches = [pa.record_batch({"s": pa.array(["abcd"] * N),
                                "i": pa.array(range(k * N, k * N + N), pa.int64())})
               for k in range(4)]
    data = _write(path, batches, compression)
    offsets = b"".join(struct.pack("<i", 4 * j) for j in range(N + 1))
    pos = -1
    for _ in range(3):
        pos = data.index(offsets, pos + 1)
    if damage == "decreasing":  # 0, 4, 30, 12, ...: first and last intact
        data[pos + 8: pos + 12] = struct.pack("<i", 30)
    else:  # "utf8": the first byte of the batch's values is 0xff
        data[data.index(b"abcd" * N, pos)] = 0xFF
    open(path, "wb").write(data)


def _dictionary(path, bad=100000):
    """3 batches of 16 int32 indices into ["red", "green", "blue"]; in batch 2 index 5 is
    ``bad``."""
    n = 16
    values = pa.array(["red", "green", "blue"])
    batches = [pa.record_batch({"d": pa.DictionaryArray.from_arrays(
        pa.array([(j * 7 + k) % 3 for j in range(n)], pa.int32()), values)}) for k in range(3)]
    data = _write(path, batches)
    pos = data.index(b"".join(struct.pack("<i", (j * 7 + 2) % 3) for j in range(n)))
    data[pos + 20: pos + 24] = struct.pack("<i", bad)
    open(path, "wb").write(data)


def _null_count(path, kind):
    """One batch of 8 values, 2 of them null, whose FieldNode says 1 null."""
    values = [1, None, 3, 4, None, 6, 7, 8] if kind == "int" else \
        ["a", None, "c", "d", None, "f", "g", "h"]
    data = _write(path, [pa.record_batch({"x": pa.array(values)})])
    node = struct.pack("<qq", N, 2)
    assert data.count(node) == 1
    at = data.index(node)
    data[at: at + 16] = struct.pack("<qq", N, 1)
    open(path, "wb").write(data)


def _dense_union(path):
    """A dense union of 16 slots over two 8-value children; slot 6's offset is 1000000."""
    n = 16
    union = pa.UnionArray.from_dense(
        pa.array([j % 2 for j in range(n)], pa.int8()), pa.array([j // 2 for j in range(n)], pa.int32()),
        [pa.array(range(100, 108), pa.int64()), pa.array([f"s{j}" for j in range(8)])])
    data = _write(path, [pa.record_batch({"u": union})])
    pos = data.index(b"".join(struct.pack("<i", j // 2) for j in range(n)))
    data[pos + 24: pos + 28] = struct.pack("<i", 1000000)
    open(path, "wb").write(data)


# (maker, the batch that is damaged, words the error names)
DAMAGED = {
    "decreasing offsets": (lambda p: _strings(p, "decreasing"), 2,
                           ["column 0 ('s')", "offset[3]=12 < offset[2]=30"]),
    "decreasing offsets, zstd": (lambda p: _strings(p, "decreasing", "zstd"), 2,
                                 ["column 0 ('s')", "offset[3]=12 < offset[2]=30"]),
    "decreasing offsets, lz4": (lambda p: _strings(p, "decreasing", "lz4"), 2,
                                ["column 0 ('s')", "offset[3]=12 < offset[2]=30"]),
    "invalid UTF-8": (lambda p: _strings(p, "utf8"), 2,
                      ["column 0 ('s')", "value[0]", "not valid UTF-8"]),
    "dictionary index": (_dictionary, 2, ["column 0 ('d')", "index[5]=100000 out of range"]),
    "int null count": (lambda p: _null_count(p, "int"), 0,
                       ["column 0 ('x')", "null count 1 does not match"]),
    "string null count": (lambda p: _null_count(p, "str"), 0,
                          ["column 0 ('x')", "null count 1 does not match"]),
    "dense union offset": (_dense_union, 0, ["column 0 ('u')", "offset[6]=1000000"]),
}


@pytest.fixture(params=sorted(DAMAGED))
def damaged(request, tmp_path):
    make, batch, words = DAMAGED[request.param]
    path = str(tmp_path / "damaged.arrow")
    make(path)
    return path, batch, words


def test_batch_export_refuses_what_arrowmm_refuses(damaged):
    # pyarrow took the batch unchecked: binary_length [4, 26, -18, ...], an index read as null,
    # a null count that disagrees with the bitmap
    path, i, words = damaged
    r = arrowmm.open_file(path)
    with pytest.raises(arrowmm.ArrowInvalid) as own:
        r.get_batch(i).validate(full=True)
    with pytest.raises(arrowmm.ArrowInvalid) as exported:
        pa.record_batch(r.get_batch(i))
    assert str(exported.value) == str(own.value)
    for word in words:
        assert word in str(exported.value)


def test_column_export_refuses_what_arrowmm_refuses(damaged):
    path, i, words = damaged
    column = arrowmm.open_file(path).get_batch(i).column(0)
    with pytest.raises(arrowmm.ArrowInvalid, match="not valid|out of range|does not match|"
                                                   "must not decrease|offset"):
        pa.array(column)


def test_stream_export_fails_naming_batch_column_and_slot(damaged):
    # the consumer's get_next fails with arrowmm's error; the batches before it came out
    path, i, words = damaged
    with pytest.raises(pa.ArrowInvalid) as err:
        pa.table(arrowmm.open_file(path))
    for word in [f"batch {i}, "] + words:
        assert word in str(err.value)


def test_duckdb_gets_an_error_not_a_null(tmp_path):
    # duckdb returned NULL for row 37 (the index 100000): no value of the file is null
    duckdb = pytest.importorskip("duckdb")
    path = str(tmp_path / "dict.arrow")
    _dictionary(path)
    r = arrowmm.open_file(path)  # noqa: F841  (duckdb scans the local by name)
    with pytest.raises(Exception, match="out of range") as err:
        duckdb.sql("select d from r").fetchall()
    assert "batch 2, column 0 ('d')" in str(err.value)


@pytest.mark.parametrize("damage", ["decreasing", "utf8"])
def test_polars_gets_an_error_not_a_crash(tmp_path, damage):
    # polars died of SIGSEGV on the decreasing offsets, panicked on the bad UTF-8
    pytest.importorskip("polars")
    path = str(tmp_path / "strings.arrow")
    _strings(path, damage)
    code = textwrap.dedent(f"""
        import arrowmm, polars as pl
        try:
            pl.DataFrame(arrowmm.open_file({path!r}))
            print("NO ERROR")
        except Exception as e:
            print("RAISED", e)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    assert proc.stdout.startswith("RAISED") and "batch 2, column 0 ('s')" in proc.stdout, \
        proc.stdout


def test_stream_of_damaged_batches_fails_at_the_damaged_one(tmp_path):
    # a StreamReader's export walks the messages from its position: the same checks
    path = str(tmp_path / "strings.arrow")
    _strings(path, "decreasing")
    r = arrowmm.open_file(path)
    sink = pa.BufferOutputStream()
    batches = [pa.ipc.open_file(path).get_batch(k) for k in range(4)]  # pyarrow reads them raw
    with pa.ipc.new_stream(sink, batches[0].schema) as w:
        for b in batches:
            w.write_batch(b)
    stream = arrowmm.open_stream(sink.getvalue().to_pybytes())
    reader = pa.RecordBatchReader.from_stream(stream)
    assert reader.read_next_batch().num_rows == N
    assert reader.read_next_batch().num_rows == N
    with pytest.raises(pa.ArrowInvalid, match=r"batch 2, column 0 \('s'\).*offset\[3\]=12"):
        reader.read_next_batch()
    del r


def test_damaged_dictionary_values_are_refused(tmp_path):
    # the walk exported a dictionary's values unchecked: its offsets now pass full validation
    # once per dictionary, as the column's own read does
    values = pa.array(["red", "green", "blue"])
    b = pa.record_batch({"d": pa.DictionaryArray.from_arrays(pa.array([0, 1, 2, 0], pa.int32()),
                                                              values)})
    path = str(tmp_path / "values.arrow")
    data = _write(path, [b])
    offsets = struct.pack("<4i", 0, 3, 8, 12)
    at = data.index(offsets)
    data[at + 4: at + 8] = struct.pack("<i", 9)  # 0, 9, 8, 12: decreasing
    open(path, "wb").write(data)
    with pytest.raises(arrowmm.ArrowInvalid, match=r"offset\[2\]=8 < offset\[1\]=9"):
        arrowmm.open_file(path).get_batch(0).column(0).to_pylist()
    with pytest.raises(pa.ArrowInvalid, match=r"batch 0, column 0 \('d'\).*offset\[2\]=8"):
        pa.table(arrowmm.open_file(path))


def test_value_starting_inside_a_character_is_refused(tmp_path):
    # the bytes from the first offset to the last are valid UTF-8, but offset[1] moved into
    # "é": values "\xc3" and "\xa9ab", neither of them UTF-8
    t = pa.table({"s": ["éa", "b", "ü"]})
    path = str(tmp_path / "inside.arrow")
    data = _write(path, t.to_batches())
    assert pa.table(arrowmm.open_file(path)).equals(t)  # (multi-byte values pass)
    at = data.index(struct.pack("<4i", 0, 3, 4, 6))
    data[at + 4: at + 8] = struct.pack("<i", 1)
    open(path, "wb").write(data)
    with pytest.raises(pa.ArrowInvalid, match=r"batch 0, column 0 \('s'\).*value\[0\]"):
        pa.table(arrowmm.open_file(path))


# -- F2: an imported stream that failed keeps failing ---------------------------------------

def _failing_producer():
    schema = pa.schema([("i", pa.int64())])

    def gen():
        yield pa.record_batch({"i": pa.array([1, 2])})
        raise ValueError("boom in producer")

    return pa.RecordBatchReader.from_batches(schema, gen())


def test_imported_stream_error_is_raised_again_by_every_read():
    # after the error pyarrow's producer answers "end": read_all gave an empty table
    r = arrowmm.RecordBatchReader.from_stream(_failing_producer())
    with pytest.raises(arrowmm.ArrowInvalid, match="boom in producer"):
        r.read_all()
    for read in (r.read_all, r.read_next_batch, lambda: list(r), lambda: pa.table(r)):
        with pytest.raises(arrowmm.ArrowInvalid, match="boom in producer"):
            read()


def test_imported_stream_does_not_skip_the_failed_batch():
    # the producer serves the request (int8) and fails on [1000, 2]; the next read gave [3, 4]
    bs = [pa.record_batch({"i": pa.array(v)}) for v in ([1, 2], [1000, 2], [3, 4])]
    src = pa.RecordBatchReader.from_batches(bs[0].schema, bs)
    r = arrowmm.RecordBatchReader.from_stream(src, schema=arrowmm.schema([("i", arrowmm.int8())]))
    assert r.read_next_batch().to_pylist() == [{"i": 1}, {"i": 2}]
    with pytest.raises(arrowmm.ArrowInvalid) as first:
        r.read_next_batch()
    with pytest.raises(arrowmm.ArrowInvalid) as again:
        r.read_next_batch()
    assert str(again.value) == str(first.value)


def test_import_stream_itself_keeps_its_error():
    from arrowmm.interop import _cdata
    stream = _cdata.import_stream(_failing_producer().__arrow_c_stream__())
    assert next(stream).num_rows == 2
    for _ in range(2):
        with pytest.raises(arrowmm.ArrowInvalid, match="boom in producer"):
            next(stream)


def test_cast_stream_error_is_raised_again():
    # the reader casts the producer's batches itself (int64 -> int8 after the producer ignored
    # the request): the cast's generator ended at its error, which read as a clean end
    class Ignores:  # a producer that does not honour requested_schema
        def __init__(self, reader):
            self.reader = reader

        def __arrow_c_stream__(self, requested_schema=None):
            return self.reader.__arrow_c_stream__()

    bs = [pa.record_batch({"i": pa.array(v)}) for v in ([1, 2], [1000, 2], [3, 4])]
    r = arrowmm.RecordBatchReader.from_stream(
        Ignores(pa.RecordBatchReader.from_batches(bs[0].schema, bs)),
        schema=arrowmm.schema([("i", arrowmm.int8())]))
    assert r.read_next_batch().num_rows == 2
    with pytest.raises(arrowmm.ArrowInvalid):
        r.read_next_batch()
    with pytest.raises(arrowmm.ArrowInvalid):
        r.read_all()


def test_from_batches_error_is_raised_again():
    # the third (good) batch vanished: pa.table(reader) exported 0 rows and no error
    sch = arrowmm.schema([("i", arrowmm.int64())])
    good = arrowmm.record_batch({"i": arrowmm.array([1, 2])})
    bad = arrowmm.record_batch({"i": arrowmm.array(["x"])})
    r = arrowmm.RecordBatchReader.from_batches(sch, [good, bad, good])
    assert r.read_next_batch().num_rows == 2
    with pytest.raises(arrowmm.ArrowInvalid, match="batch 1 has schema"):
        r.read_next_batch()
    with pytest.raises(arrowmm.ArrowInvalid, match="batch 1 has schema"):
        pa.table(r)
    with pytest.raises(arrowmm.ArrowInvalid, match="batch 1 has schema"):
        r.read_all()


# -- F3: a requested non-nullable child counts the nulls it serves ---------------------------

def test_non_nullable_child_request_ignores_a_null_outside_the_slice():
    la = arrowmm.array(pa.array([[1, None], [2]]))
    want = pa.list_(pa.field("item", pa.int64(), nullable=False))
    assert pa.array(la.slice(1), type=want).to_pylist() == [[2]]
    with pytest.raises(arrowmm.ArrowInvalid, match="non-nullable but it holds 1 null"):
        pa.array(la, type=want)  # (the null is served here)


def test_non_nullable_child_request_ignores_a_null_under_a_null_struct_slot():
    sa = arrowmm.array(pa.StructArray.from_arrays([pa.array([1, None])], names=["a"],
                                                   mask=pa.array([False, True])))
    assert sa.children[0].null_count == 1  # (the child's null lies under the null slot)
    want = pa.struct([pa.field("a", pa.int64(), nullable=False)])
    assert pa.array(sa, type=want).to_pylist() == [{"a": 1}, None]


def test_non_nullable_grandchild_request_cut_through_a_list():
    la = arrowmm.array(pa.array([[[1, None]], [[2]]]))
    want = pa.list_(pa.list_(pa.field("item", pa.int64(), nullable=False)))
    assert pa.array(la.slice(1), type=want).to_pylist() == [[[2]]]


# -- F4: dictionaries of extension values ----------------------------------------------------

def _uuid_dictionary():
    u = pa.array([uuid.UUID(int=1).bytes, uuid.UUID(int=2).bytes], pa.uuid())
    return pa.DictionaryArray.from_arrays(pa.array([0, 1, 0], pa.int8()), u)


def test_dictionary_of_extension_values_keeps_the_extension_both_ways():
    d = _uuid_dictionary()
    m = arrowmm.array(d)
    assert m.type == arrowmm.dictionary(arrowmm.int8(), arrowmm.uuid())
    back = pa.array(m)
    assert back.type == d.type
    assert back.to_pylist() == d.to_pylist()


def test_dictionary_of_extension_values_schema_exports():
    s = arrowmm.schema([("d", arrowmm.dictionary(arrowmm.int8(), arrowmm.uuid()))])
    assert pa.schema(s) == pa.schema([("d", pa.dictionary(pa.int8(), pa.uuid()))])
    assert arrowmm.schema(pa.schema(s)) == s


# -- F5: a name with a NUL ------------------------------------------------------------------

def test_field_name_with_nul_is_refused_not_cut(tmp_path):
    # the export cut "a\x00b" to "a": two columns named "a"
    t = pa.table({"a\x00b": [1, 2], "a": [3, 4]})
    path = str(tmp_path / "nul.arrow")
    with pa.ipc.new_file(path, t.schema) as w:
        w.write_table(t)
    r = arrowmm.open_file(path)
    assert r.schema.names == ["a\x00b", "a"]
    with pytest.raises(arrowmm.ArrowInvalid, match=r"field 'a\\x00b'.*NUL"):
        r.__arrow_c_schema__()
    with pytest.raises(arrowmm.ArrowInvalid, match="NUL"):
        pa.record_batch(r.get_batch(0))
    with pytest.raises((arrowmm.ArrowInvalid, pa.ArrowInvalid), match="NUL"):
        pa.table(r)
