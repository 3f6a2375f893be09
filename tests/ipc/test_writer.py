"""arrowmm's IPC writers (``new_file`` / ``new_stream``), with pyarrow as the reading oracle.

Every type, with and without nulls, in both formats: arrowmm batches (read from pyarrow's
output) sliced at odd row offsets are written by arrowmm, and pyarrow must read back exactly
the sliced source.  Then the options (compression, alignment, legacy framing), custom metadata
at every level, dictionaries (deltas, replacement, refusal), schema mismatches, determinism.
Sinks, crash safety, copies and the gold files are in test_writer_io.py; generated data in
test_writer_hypothesis.py.
"""
from __future__ import annotations

import datetime
import io
import math

import numpy as np
import pyarrow as pa
import pytest

from tests.support import writer_support as ws
from tests.support.helpers import assert_batch_matches, ipc_bytes
from tests.support.writer_support import (CASES, FORMATS, N, SLICES, assert_batches_equal,
                                          case_table, dictionary_messages, messages, open_writer,
                                          pa_read_bytes, to_mm, write_mm)

import arrowmm


def _check_roundtrip(table, fmt, slices=SLICES, **options):
    """arrowmm writes slices of ``table`` (as arrowmm batches); pyarrow and arrowmm read them."""
    (src,) = to_mm(table)
    data = write_mm([src.slice(o, n) for o, n in slices], src.schema, fmt, **options)
    schema, got, _ = pa_read_bytes(data, fmt)
    assert schema.equals(table.schema, check_metadata=True), f"{schema}\n!=\n{table.schema}"
    assert len(got) == len(slices)
    (full,) = table.combine_chunks().to_batches()
    for (o, n), batch in zip(slices, got):
        want = full.slice(o, n)
        batch.validate(full=True)
        assert_batches_equal(batch, want, f"slice({o}, {n})")
    back = arrowmm.open(data)
    again = list(back)
    assert len(again) == len(got)
    for mine, theirs in zip(again, got):
        assert_batch_matches(mine, theirs, deep=False)
    return data


# -- every type ------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("nulls", [False, True], ids=["no-nulls", "nulls"])
@pytest.mark.parametrize("case", list(CASES))
def test_every_type_sliced(case, nulls, fmt):
    _check_roundtrip(case_table(case, nulls), fmt)


@pytest.mark.parametrize("codec", ["lz4", "zstd"])
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("case", list(CASES))
def test_every_type_compressed(case, fmt, codec):
    data = _check_roundtrip(case_table(case, True), fmt, slices=((0, None), (3, 17), (5, 0)),
                            compression=codec)
    codecs = {m.header.compression for m in messages(data) if m.kind == "RecordBatch"}
    assert codecs == {codec}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("unit", ["month", "day_time"])
@pytest.mark.parametrize("nulls", [False, True], ids=["no-nulls", "nulls"])
def test_interval_months_and_day_time(unit, nulls, fmt):
    """pyarrow can neither build nor wrap these columns: it reads the file and writes it back
    itself, and arrowmm reads that the same as what it wrote (sliced at odd offsets)."""
    arr = ws.interval_array(unit, N, nulls)
    batch = arrowmm.RecordBatch.from_arrays([arr], ["iv"])
    slices = [(0, None), (3, 9), (N - 1, 1), (2, 0)]
    data = write_mm([batch.slice(o, n) for o, n in slices], batch.schema, fmt)
    schema, batches, _ = pa_read_bytes(data, fmt)
    assert str(schema.field(0).type) == str(arr.type)
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, schema) as w:
        for b in batches:
            b.validate(full=True)
            w.write_batch(b)
    again = list(arrowmm.open_stream(sink.getvalue()))
    assert [b.num_rows for b in again] == [N, 9, 1, 0]
    for (o, n), b in zip(slices, again):
        assert b.column(0).to_pylist() == arr.slice(o, n).to_pylist()


@pytest.mark.parametrize("fmt", FORMATS)
def test_zero_batches(fmt):
    tables = {case: case_table(case, True) for case in CASES}
    schema = pa.schema([pa.field(f"{k}", t.schema.field(0).type) for k, t in enumerate(tables.values())])
    mm_schema = arrowmm.open_file(_pa_file_bytes(schema)).schema
    data = write_mm([], mm_schema, fmt)
    got_schema, got, _ = pa_read_bytes(data, fmt)
    assert got == [] and got_schema.equals(schema, check_metadata=True)
    assert list(arrowmm.open(data)) == []


def _pa_file_bytes(schema, batches=()):
    return ipc_bytes(list(batches), schema=schema)


@pytest.mark.parametrize("fmt", FORMATS)
def test_many_types_in_one_batch_and_empty_batches(fmt):
    cols = {case: CASES[case](N, True) for case in CASES}
    table = pa.table(cols)
    _check_roundtrip(table, fmt, slices=((0, 0), (7, 13), (0, 0), (11, None), (N, 0)))


@pytest.mark.parametrize("fmt", FORMATS)
def test_pyarrow_schema_and_batches_accepted(fmt):
    table = case_table("struct", True)
    (src,) = to_mm(table)
    sink = io.BytesIO()
    with open_writer(sink, table.schema, fmt) as w:  # a pyarrow schema, through the C interface
        w.write_batch(src)
        if hasattr(arrowmm, "record_batch"):
            w.write(table.to_batches()[0])  # anything arrowmm.record_batch() accepts
            w.write(table)  # a stream producer
            w.write({"c": table.column("c").to_pylist(), "i": list(range(N))})
            w.write_table(pa.concat_tables([table.slice(0, 10), table.slice(10)]))  # 2 batches
            size = len(sink.getvalue())
            with pytest.raises(arrowmm.ArrowInvalid):
                w.write({"c": table.column("c").to_pylist(), "j": list(range(N))})
            assert len(sink.getvalue()) == size
    _, got, _ = pa_read_bytes(sink.getvalue(), fmt)
    assert [b.num_rows for b in got] == ([N] * 4 + [10, N - 10] if hasattr(arrowmm, "record_batch") else [N])
    for b in got[:4]:
        assert_batches_equal(b, table.to_batches()[0])
    assert_batches_equal(got[-1], table.to_batches()[0].slice(10))


@pytest.mark.skipif(not hasattr(arrowmm, "record_batch"), reason="needs arrowmm.record_batch")
@pytest.mark.parametrize("fmt", FORMATS)
def test_dictionary_ids_assigned_at_every_depth(fmt):
    """Batches imported through the C data interface carry no dictionary ids: the writer gives
    one to every dictionary, however deep (here inside two lists and a dictionary's values)."""
    deep = pa.array([[["a", None]], [], None, [["b"], []]],
                    pa.large_list(pa.large_list(pa.dictionary(pa.int8(), pa.string()))))
    table = pa.table({"deep": deep, "dd": CASES["dictionary<struct<dictionary>>"](4, True),
                      "s": CASES["struct<dictionary>"](4, True)})
    batch = arrowmm.record_batch(table.to_batches()[0])
    data = write_mm([batch, batch.slice(1, 2)], batch.schema, fmt)
    assert sorted({i for i, _, _ in dictionary_messages(data)}) == [0, 1, 2, 3]
    _, got, _ = pa_read_bytes(data, fmt)
    assert_batches_equal(got[0], table.to_batches()[0])
    assert_batches_equal(got[1], table.to_batches()[0].slice(1, 2))


def _empty_offsets_array(dtype):
    """A length-0 array of ``dtype`` whose offsets buffer is empty (the IPC format allows it)."""
    from arrowmm._core._region import empty_view
    from arrowmm.arrays.array import make_array
    if isinstance(dtype, arrowmm.BinaryType):
        return make_array(dtype, 0, [None, empty_view(), empty_view()])
    child = dtype.children[0].type
    kids = [_empty_offsets_array(f.type) if f.type.children or isinstance(f.type, arrowmm.BinaryType)
            else make_array(f.type, 0, [None, empty_view()]) for f in child.children]
    inner = make_array(child, 0, [None] if kids else [None, empty_view()], children=kids)
    return make_array(dtype, 0, [None, empty_view()], children=[inner])


@pytest.mark.parametrize("fmt", FORMATS)
def test_empty_arrays_with_empty_offsets_buffers(fmt):
    types = [arrowmm.string(), arrowmm.large_binary(), arrowmm.list_(arrowmm.int32()),
             arrowmm.large_list(arrowmm.int8()), arrowmm.map_(arrowmm.string(), arrowmm.int8())]
    batch = arrowmm.RecordBatch.from_arrays([_empty_offsets_array(ty) for ty in types],
                                            [f"c{k}" for k in range(len(types))])
    data = write_mm([batch], batch.schema, fmt)
    _, (got,), _ = pa_read_bytes(data, fmt)
    got.validate(full=True)
    assert got.num_rows == 0 and [str(c.type) for c in got.columns] == [str(ty) for ty in types]


def test_more_buffers_than_one_writev_takes(tmp_path):
    """A batch of 700 string columns (2100 buffers) goes out in several writev calls."""
    table = pa.table({f"c{k}": CASES["string"](N, True) for k in range(700)})
    (src,) = to_mm(table)
    with arrowmm.new_file(tmp_path / "wide.arrow", src.schema) as w:
        w.write(src.slice(3, 20))
    got = pa.ipc.open_file(str(tmp_path / "wide.arrow")).get_batch(0)
    assert_batches_equal(got, table.to_batches()[0].slice(3, 20))


# -- options ---------------------------------------------------------------------------------

def _check_aligned(data, fmt, alignment):
    """Every body and every buffer of ``data`` starts at a multiple of ``alignment``."""
    msgs = messages(data)
    for m in msgs:
        assert m.body.offset % alignment == 0, (m.kind, m.body.offset)
        if m.kind in ("RecordBatch", "DictionaryBatch"):
            header = m.header if m.kind == "RecordBatch" else m.header.data
            offsets = header.buffer_records["offset"]
            assert all(int(o) % alignment == 0 for o in offsets), (m.kind, offsets)
    reader = arrowmm.open_file(data) if fmt == "file" else arrowmm.open_stream(data)
    base = reader._region.address  # the start of the mapping (here: of the bytes object)
    addresses = []
    for batch in reader:
        for col in batch.columns:
            stack = [col]
            while stack:
                a = stack.pop()
                addresses += [b.address - base for b in a._buffers if b is not None and b.size]
                stack.extend(a.children)
                if a.dictionary is not None:
                    stack.append(a.dictionary)
    assert addresses
    assert all(x % alignment == 0 for x in addresses), addresses
    return addresses, msgs


@pytest.mark.parametrize("fmt", FORMATS)
def test_alignment_8_and_64(fmt):
    table = pa.table({case: CASES[case](N, True) for case in
                      ("int8", "bool", "string", "dictionary<string, int8>", "list<int32>",
                       "binary_view", "struct", "dense_union")})
    (src,) = to_mm(table)
    batches = [src.slice(3, 11), src, src.slice(1, 1)]
    sizes, starts = {}, {}
    for alignment in (8, 64):
        data = write_mm(batches, src.schema, fmt, alignment=alignment)
        addresses, msgs = _check_aligned(data, fmt, alignment)
        starts[alignment] = addresses + [m.body.offset for m in msgs]
        sizes[alignment] = len(data)
        _, got, _ = pa_read_bytes(data, fmt)
        assert [b.num_rows for b in got] == [11, N, 1]
        assert got[0].equals(table.slice(3, 11).to_batches()[0])
    assert any(x % 64 for x in starts[8]), "alignment=8 laid everything out on 64 bytes anyway"
    assert sizes[8] < sizes[64]


@pytest.mark.parametrize("alignment", [0, 3, 12, 128, -8])
def test_bad_alignment_is_refused_before_anything_is_created(tmp_path, alignment):
    schema = arrowmm.schema([("x", arrowmm.int64())])
    for opener in (arrowmm.new_file, arrowmm.new_stream):
        with pytest.raises(arrowmm.ArrowInvalid):
            opener(tmp_path / "out.arrow", schema, alignment=alignment)
    assert list(tmp_path.iterdir()) == []


def test_bad_compression_is_refused():
    schema = arrowmm.schema([("x", arrowmm.int64())])
    sink = io.BytesIO()
    with pytest.raises(arrowmm.ArrowInvalid):
        arrowmm.new_stream(sink, schema, compression="snappy")
    assert sink.getvalue() == b""


@pytest.mark.parametrize("fmt", FORMATS)
def test_legacy_format(fmt):
    table = pa.table({"d": CASES["dictionary<string, int16>"](N, True), "s": CASES["string"](N, True)})
    (src,) = to_mm(table)
    data = write_mm([src, src.slice(5, 9)], src.schema, fmt, legacy_format=True)
    body = data[8:] if fmt == "file" else data
    assert body[:4] != b"\xff\xff\xff\xff" and b"\xff\xff\xff\xff" not in data[:16]
    assert all(m.legacy_prefix for m in messages(data))
    end = len(data) - 10 - int.from_bytes(data[-10:-6], "little") if fmt == "file" else len(data)
    assert data[end - 4:end] == b"\x00\x00\x00\x00" and data[end - 8:end - 4] != b"\xff\xff\xff\xff"
    reader = pa.ipc.open_file(pa.py_buffer(data)) if fmt == "file" else pa.ipc.open_stream(data)
    assert reader.read_all().equals(pa.concat_tables([table, table.slice(5, 9)]))
    if fmt == "stream":  # the stream reader also takes the legacy framing over a file object
        got = list(arrowmm.open_stream(io.BytesIO(data)))
        assert [b.to_pylist() for b in got] == [table.to_pylist(), table.slice(5, 9).to_pylist()]
    assert [b.to_pylist() for b in arrowmm.open(data)] == \
        [table.to_pylist(), table.slice(5, 9).to_pylist()]


# -- custom metadata -------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", FORMATS)
def test_custom_metadata_schema_field_and_batch(fmt):
    inner = pa.field("leaf", pa.int32(), metadata={"leaf": "deep"})
    schema = pa.schema([pa.field("a", pa.list_(inner), metadata={"field": "a"}),
                        pa.field("b", pa.string(), False, metadata={"k": "v", "empty": ""})],
                       metadata={"origin": "schema", "é": "ü"})
    table = pa.table({"a": [[1], [2, 3], []], "b": ["x", "y", "z"]}, schema=schema)
    (src,) = to_mm(table)
    sink = io.BytesIO()
    with open_writer(sink, src.schema, fmt, metadata={"extra": "1", "origin": "writer"}) as w:
        w.write(src, metadata={"batch": "0"})
        w.write(src.slice(1), custom_metadata={b"bytes-key": b"bytes-value"})  # pyarrow's name
        w.write(src)  # no metadata
        w.write_batch(src, metadata={})
    data = sink.getvalue()
    got_schema, got, mds = pa_read_bytes(data, fmt)
    if fmt == "file":  # metadata= is the footer's, the schema keeps its own (as pyarrow)
        assert got_schema.metadata == {b"origin": b"schema", "é".encode(): "ü".encode()}
        assert pa.ipc.open_file(pa.py_buffer(data)).metadata == {b"origin": b"writer", b"extra": b"1"}
        assert arrowmm.open_file(data).metadata == {"origin": "writer", "extra": "1"}
    else:  # a stream has no footer: the schema message carries both
        assert got_schema.metadata == {b"origin": b"writer", "é".encode(): "ü".encode(), b"extra": b"1"}
    assert got_schema.field("a").metadata == {b"field": b"a"}
    assert got_schema.field("a").type.value_field.metadata == {b"leaf": b"deep"}
    assert got_schema.field("b").metadata == {b"k": b"v", b"empty": b""}
    assert not got_schema.field("b").nullable
    assert mds == [{"batch": "0"}, {"bytes-key": "bytes-value"}, None, None]
    if fmt == "stream":
        r = pa.ipc.open_stream(data)
        assert r.read_next_batch_with_custom_metadata().custom_metadata == {b"batch": b"0"}
    assert [b.metadata or None for b in arrowmm.open(data)] == mds
    # metadata read from a message is written again when the batch is re-written
    again = write_mm(list(arrowmm.open(data)), arrowmm.open(data).schema, fmt)
    assert pa_read_bytes(again, fmt)[2] == mds


@pytest.mark.parametrize("given, written", [({"k": "\udcff"}, {b"k": b"\xff"}),
                                            ({b"\xff": "v"}, {b"\xff": b"v"}),
                                            ({"k": b"\xfe\x00"}, {b"k": b"\xfe\x00"})])
def test_metadata_that_is_not_utf8_is_written_as_its_bytes(tmp_path, given, written):
    """Bytes, and str holding bytes as lone surrogates (``surrogateescape``), are written as
    those bytes, as pyarrow writes them, in schemas, fields and batches; a surrogate that
    stands for no byte is refused before anything is written."""
    schema = arrowmm.schema([("x", arrowmm.int64())])
    with arrowmm.new_file(tmp_path / "t.arrow", schema, metadata=given):
        pass
    assert pa.ipc.open_file(tmp_path / "t.arrow").metadata == written  # (the footer's)
    for where in (schema.with_metadata(given),
                  arrowmm.schema([arrowmm.field("x", arrowmm.int64(), metadata=given)])):
        sink = io.BytesIO()
        with arrowmm.new_stream(sink, where):
            pass
        read = pa_read_bytes(sink.getvalue(), "stream")[0]
        assert written in (read.metadata, read.field("x").metadata)
    (src,) = to_mm(pa.table({"x": [1, 2]}))
    sink = io.BytesIO()
    with arrowmm.new_stream(sink, src.schema) as w:
        size = len(sink.getvalue())
        with pytest.raises(arrowmm.ArrowInvalid, match="stands for no byte"):
            w.write(src, metadata={"k": "\ud800"})
        assert len(sink.getvalue()) == size
        w.write(src, metadata=given)
    pairs = list(pa.ipc.open_stream(sink.getvalue()).iter_batches_with_custom_metadata())
    assert [dict(m) for _, m in pairs] == [written]
    with pytest.raises(arrowmm.ArrowInvalid, match="stands for no byte"):
        arrowmm.new_file(tmp_path / "u.arrow", schema, metadata={"\ud800": "v"})
    assert not (tmp_path / "u.arrow").exists()


def test_metadata_that_is_not_utf8_reads_and_writes_back_byte_for_byte(tmp_path):
    """pyarrow writes any bytes as metadata keys and values (and reads them as bytes): they
    read as lone surrogates (``surrogateescape``) and go back out as the same bytes through
    the IPC writers and the C data interface (they were refused, the refusal blaming
    damage)."""
    schema = pa.schema([pa.field("x", pa.int64(), metadata={b"fm": b"\xff\x00", b"\xfek": b"v"})],
                       metadata={b"k\xff": b"v\xfe", b"ok": b"fine"})
    path = tmp_path / "a.arrow"
    with pa.ipc.new_file(path, schema) as w:
        w.write_table(pa.table({"x": [1, 2]}, schema=schema))
    reader = arrowmm.open_file(path)
    assert reader.schema.metadata == {"k\udcff": "v\udcfe", "ok": "fine"}
    assert reader.schema.field("x").metadata == {"fm": "\udcff\x00", "\udcfek": "v"}
    assert pa.schema(reader.schema).equals(schema, check_metadata=True)
    for fmt in ("file", "stream"):
        sink = io.BytesIO()
        (arrowmm.write_file if fmt == "file" else arrowmm.write_stream)(sink, reader.read_all())
        assert pa_read_bytes(sink.getvalue(), fmt)[0].equals(schema, check_metadata=True)
    mine = arrowmm.schema([("x", arrowmm.int64())], metadata={b"\xff": b"\xfe"})
    assert pa.schema(mine).metadata == {b"\xff": b"\xfe"}


@pytest.mark.parametrize("fmt", FORMATS)
def test_extension_fields_through_metadata(fmt):
    ext = {"ARROW:extension:name": "my.tagged", "ARROW:extension:metadata": "{\"v\": 1}"}
    schema = pa.schema([pa.field("u", pa.uuid()), pa.field("t", pa.int32(), metadata=ext)])
    table = pa.table({"u": CASES["extension<arrow.uuid>"](N, True), "t": pa.array(range(N), pa.int32())},
                     schema=schema)
    data = _check_roundtrip(table, fmt, slices=((0, None), (3, 5)))
    got_schema = pa_read_bytes(data, fmt)[0]
    assert got_schema.field("u").type == pa.uuid()
    assert got_schema.field("t").metadata == {k.encode(): v.encode() for k, v in ext.items()}


# -- dictionaries ----------------------------------------------------------------------------

def _dict_batch(values, indices, index_type=pa.int32(), value_type=pa.string()):
    arr = pa.DictionaryArray.from_arrays(pa.array(indices, index_type), pa.array(values, value_type))
    return pa.record_batch([arr, pa.array(range(len(indices)))], names=["d", "n"])


def _mm_each(pa_batches):
    """One arrowmm batch per pyarrow batch, each from its own file (distinct dictionary objects)."""
    return [to_mm(b)[0] for b in pa_batches]


@pytest.mark.parametrize("fmt", FORMATS)
def test_dictionary_deltas_when_the_dictionary_only_grows(fmt):
    grown = ["a", "b", None, "d", "e", None, "g", "h", "i", None, "k"]  # deltas at odd offsets
    steps = [(["a"], [0, 0]), (["a"], [0]), (["a", "b"], [1, 0]), (grown[:3], [2, 1, None]),
             (grown[:3], [0]), (grown, [10, 9, 5, 3]), (grown, [6])]
    pa_batches = [_dict_batch(v, i) for v, i in steps]
    data = write_mm(_mm_each(pa_batches), to_mm(pa_batches[0])[0].schema, fmt, emit_dictionary_deltas=True)
    assert dictionary_messages(data) == [(0, False, 1), (0, True, 1), (0, True, 1), (0, True, 8)]
    _, got, _ = pa_read_bytes(data, fmt)
    assert [b.column(0).to_pylist() for b in got] == [b.column(0).to_pylist() for b in pa_batches]
    table = (pa.ipc.open_file if fmt == "file" else pa.ipc.open_stream)(pa.py_buffer(data)).read_all()
    assert table.column("d").to_pylist() == sum((b.column(0).to_pylist() for b in pa_batches), [])
    assert [b.column(0).to_pylist() for b in arrowmm.open(data)] == \
        [b.column(0).to_pylist() for b in pa_batches]


def test_dictionary_replacement_in_streams():
    pa_batches = [_dict_batch(["a", "b"], [0, 1]), _dict_batch(["b", "a"], [0, 1]),
                  _dict_batch(["b"], [0]), _dict_batch(["b", "x"], [1])]
    data = write_mm(_mm_each(pa_batches), to_mm(pa_batches[0])[0].schema, "stream",
                    emit_dictionary_deltas=True)
    assert dictionary_messages(data) == [(0, False, 2), (0, False, 2), (0, False, 1), (0, True, 1)]
    _, got, _ = pa_read_bytes(data, "stream")
    for mine, want in zip(got, pa_batches):
        assert mine.column(0).to_pylist() == want.column(0).to_pylist()
        assert mine.column(0).dictionary.equals(want.column(0).dictionary)


@pytest.mark.parametrize("fmt, options", [("stream", {"allow_dictionary_replacement": False}),
                                          ("file", {})], ids=["stream-no-replacement", "file"])
def test_dictionary_replacement_refused_writes_nothing(tmp_path, fmt, options):
    first, grown, changed = _mm_each([_dict_batch(["a"], [0]), _dict_batch(["a", "b"], [1]),
                                      _dict_batch(["z", "b"], [0])])
    path = tmp_path / "out"
    with open_writer(path, first.schema, fmt, emit_dictionary_deltas=True, **options) as w:
        w.write(first)
        w.write(grown)
        size = _size(w, path)
        with pytest.raises(arrowmm.ArrowInvalid, match="dictionary 0"):
            w.write(changed)
        assert _size(w, path) == size
        w.write(grown)
    _, got, _ = pa_read_bytes(path.read_bytes(), fmt)
    assert [b.column(0).to_pylist() for b in got] == [["a"], ["b"], ["b"]]
    assert [b.column(0).to_pylist() for b in arrowmm.open(str(path))] == [["a"], ["b"], ["b"]]


def _size(writer, path):
    """Bytes written so far (the file writer to a path writes to a temporary beside it)."""
    import os
    return os.fstat(writer._sink.fd).st_size if writer._sink.fd is not None else path.stat().st_size


@pytest.mark.parametrize("fmt", FORMATS)
def test_nested_dictionary_deltas(fmt):
    """A dictionary inside a list grows: deltas, as for a top-level one."""
    def batch(values, inner_indices):
        kid = pa.DictionaryArray.from_arrays(pa.array(inner_indices, pa.int8()), pa.array(values))
        offsets = pa.array([0, 1, len(inner_indices)], pa.int32())
        return pa.record_batch([pa.ListArray.from_arrays(offsets, kid)], names=["l"])
    pa_batches = [batch(["p"], [0, 0]), batch(["p", "q"], [1, 0, 1]), batch(["p", "q", "r"], [2, 2])]
    data = write_mm(_mm_each(pa_batches), to_mm(pa_batches[0])[0].schema, fmt, emit_dictionary_deltas=True)
    assert dictionary_messages(data) == [(0, False, 1), (0, True, 1), (0, True, 1)]
    _, got, _ = pa_read_bytes(data, fmt)
    assert [b.to_pylist() for b in got] == [b.to_pylist() for b in pa_batches]


def _outer(inner_values, inner_indices, outer_indices):
    inner = pa.DictionaryArray.from_arrays(pa.array(inner_indices, pa.int8()), pa.array(inner_values))
    values = pa.StructArray.from_arrays([inner], ["i"])
    return pa.record_batch([pa.DictionaryArray.from_arrays(pa.array(outer_indices, pa.int32()), values)],
                           names=["o"])


def test_dictionary_holding_a_replaced_dictionary_is_resent():
    """The outer dictionary decodes the same, but its inner dictionary was replaced: readers
    that resolve the inner dictionary when they load the outer one need the outer again."""
    pa_batches = [_outer(["u", "v"], [0, 1], [0, 1, 0]), _outer(["v", "u"], [1, 0], [1, 0])]
    data = write_mm(_mm_each(pa_batches), to_mm(pa_batches[0])[0].schema, "stream")
    assert [(i, d) for i, d, _ in dictionary_messages(data)] == [(1, False), (0, False), (1, False),
                                                                 (0, False)]
    _, got, _ = pa_read_bytes(data, "stream")
    assert [b.to_pylist() for b in got] == [b.to_pylist() for b in pa_batches]
    assert [b.to_pylist() for b in arrowmm.open(data)] == [b.to_pylist() for b in pa_batches]


def test_dictionary_holding_a_dictionary_is_replaced_not_extended():
    """pyarrow refuses deltas of a dictionary that holds a dictionary: streams re-send it whole,
    files (which cannot replace) refuse the batch and write nothing for it."""
    pa_batches = [_outer(["u", "v"], [0, 1], [0, 1]), _outer(["u", "v"], [0, 1, 1], [2, 0])]
    mm = _mm_each(pa_batches)
    data = write_mm(mm, mm[0].schema, "stream")
    assert all(not delta for _, delta, _ in dictionary_messages(data))
    _, got, _ = pa_read_bytes(data, "stream")
    assert [b.to_pylist() for b in got] == [b.to_pylist() for b in pa_batches]
    sink = io.BytesIO()
    with arrowmm.new_file(sink, mm[0].schema) as w:
        w.write(mm[0])
        size = len(sink.getvalue())
        with pytest.raises(arrowmm.ArrowInvalid):
            w.write(mm[1])
        assert len(sink.getvalue()) == size
    _, got, _ = pa_read_bytes(sink.getvalue(), "file")
    assert [b.to_pylist() for b in got] == [pa_batches[0].to_pylist()]


@pytest.mark.parametrize("fmt", FORMATS)
def test_equal_float_dictionaries_with_nan_are_not_changes(fmt):
    values = [1.5, float("nan"), None, -0.0]
    pa_batches = [_dict_batch(values, [0, 1], value_type=pa.float64()),
                  _dict_batch(values, [1, 3, 2], value_type=pa.float64())]
    data = write_mm(_mm_each(pa_batches), to_mm(pa_batches[0])[0].schema, fmt)
    assert dictionary_messages(data) == [(0, False, 4)]
    _, got, _ = pa_read_bytes(data, fmt)
    assert ws.bits_view(got[1].column(0).dictionary).equals(ws.bits_view(pa_batches[1].column(0).dictionary))


def test_negative_zero_dictionary_is_a_change():
    pa_batches = [_dict_batch([0.0, 1.0], [0], value_type=pa.float32()),
                  _dict_batch([-0.0, 1.0], [0], value_type=pa.float32())]
    data = write_mm(_mm_each(pa_batches), to_mm(pa_batches[0])[0].schema, "stream")
    assert [d for _, d, _ in dictionary_messages(data)] == [False, False]
    _, got, _ = pa_read_bytes(data, "stream")
    assert math.copysign(1, got[1].column(0).to_pylist()[0]) == -1


def _union_dictionary_batch(type_id, children):
    """A dictionary of one sparse union value, of child ``type_id``."""
    values = pa.UnionArray.from_sparse(pa.array([type_id], pa.int8()), children)
    return pa.record_batch([pa.DictionaryArray.from_arrays(pa.array([0], pa.int8()), values)],
                           names=["u"])


#: two dictionaries of one union value each, in other children, whose Python values are equal
#: (True == 1; a date32 as an int is its day number)
UNION_VALUES_IN_OTHER_CHILDREN = {
    "bool True, int8 1": ([pa.array([True]), pa.array([0], pa.int8())],
                          [pa.array([False]), pa.array([1], pa.int8())]),
    "date32 day 5, int32 5": (
        [pa.array([datetime.date(1970, 1, 6)], pa.date32()), pa.array([0], pa.int32())],
        [pa.array([None], pa.date32()), pa.array([5], pa.int32())]),
}


@pytest.mark.parametrize("case", UNION_VALUES_IN_OTHER_CHILDREN)
def test_union_dictionary_whose_value_moved_to_another_child_is_a_change(case):
    """A union's type codes are part of its values (review 28: F1): the stream re-sends the
    dictionary and reads back the second value, the file refuses it and writes nothing."""
    first, second = UNION_VALUES_IN_OTHER_CHILDREN[case]
    pa_batches = [_union_dictionary_batch(0, first), _union_dictionary_batch(1, second)]
    mm = _mm_each(pa_batches)
    data = write_mm(mm, mm[0].schema, "stream")
    assert [d for _, d, _ in dictionary_messages(data)] == [False, False]
    _, got, _ = pa_read_bytes(data, "stream")
    assert got[1].column(0).dictionary.type_codes.to_pylist() == [1]
    assert [type(v) for v in got[1].column(0).to_pylist()] == [int]
    assert got[1].column(0).to_pylist() == pa_batches[1].column(0).to_pylist()
    sink = io.BytesIO()
    with arrowmm.new_file(sink, mm[0].schema) as w:
        w.write(mm[0])
        size = len(sink.getvalue())
        with pytest.raises(arrowmm.ArrowInvalid, match="dictionary 0"):
            w.write(mm[1])
        assert len(sink.getvalue()) == size


def test_changed_dictionary_of_structs_with_repeated_field_names_is_replaced():
    """Structs compare child by child, by index: repeated names are no obstacle (review 28:
    F2, to_pylist refused them: "cannot convert ... to dicts")."""
    def batch(first):
        values = pa.StructArray.from_arrays([pa.array([first], pa.int8()), pa.array([2], pa.int8())],
                                            names=["a", "a"])
        return pa.record_batch([pa.DictionaryArray.from_arrays(pa.array([0], pa.int8()), values)],
                               names=["s"])
    pa_batches = [batch(1), batch(1), batch(3)]
    mm = _mm_each(pa_batches)
    data = write_mm(mm, mm[0].schema, "stream")
    assert [d for _, d, _ in dictionary_messages(data)] == [False, False]
    _, got, _ = pa_read_bytes(data, "stream")
    assert [b.column(0).dictionary.field(0).to_pylist() for b in got] == [[1], [1], [3]]


# -- refusals --------------------------------------------------------------------------------

def _mismatched_batches():
    base = pa.table({"x": pa.array([1, 2], pa.int64()), "s": ["a", "b"]})
    yield "names", pa.table({"y": pa.array([1, 2], pa.int64()), "s": ["a", "b"]})
    yield "types", pa.table({"x": pa.array([1, 2], pa.int32()), "s": ["a", "b"]})
    yield "nullable", base.cast(pa.schema([pa.field("x", pa.int64(), False), pa.field("s", pa.string())]))
    yield "fewer", base.select(["x"])
    yield "more", base.append_column("z", pa.array([0, 0]))
    yield "order", base.select(["s", "x"])
    yield "child", pa.table({"x": pa.array([1, 2], pa.int64()), "s": pa.array([["a"], ["b"]])})


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("kind, table", list(_mismatched_batches()),
                         ids=lambda x: x if isinstance(x, str) else "")
def test_schema_mismatch_writes_nothing(fmt, kind, table):
    good = to_mm(pa.table({"x": pa.array([1, 2], pa.int64()), "s": ["a", "b"]}))[0]
    bad = to_mm(table)[0]
    sink = io.BytesIO()
    with open_writer(sink, good.schema, fmt) as w:
        w.write(good)
        size = len(sink.getvalue())
        with pytest.raises(arrowmm.ArrowInvalid):
            w.write(bad)
        assert len(sink.getvalue()) == size
        if hasattr(arrowmm, "record_batch"):
            with pytest.raises(arrowmm.ArrowInvalid):
                w.write(table.to_batches()[0])
            assert len(sink.getvalue()) == size
        w.write(good)
    _, got, _ = pa_read_bytes(sink.getvalue(), fmt)
    assert len(got) == 2


def test_write_after_close_is_refused():
    (src,) = to_mm(pa.table({"x": [1]}))
    sink = io.BytesIO()
    w = arrowmm.new_stream(sink, src.schema)
    w.close()
    w.close()  # idempotent
    size = len(sink.getvalue())
    with pytest.raises(arrowmm.ArrowInvalid):
        w.write(src)
    assert len(sink.getvalue()) == size


# -- determinism -----------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("options", [{}, {"compression": "zstd"}, {"compression": "lz4", "alignment": 8},
                                     {"legacy_format": True}], ids=["plain", "zstd", "lz4-8", "legacy"])
def test_same_batches_give_the_same_bytes(tmp_path, fmt, options):
    cases = ("dictionary<string, int8>", "list<dictionary>", "string_view", "struct", "float64")
    table = pa.table({c: CASES[c](N, True) for c in cases}, metadata={"m": "1"})
    outputs = []
    for k in range(2):
        src = to_mm(table)[0]
        batches = [src.slice(3, 20), src, src.slice(1, 1)]
        meta = [{"a": "1"}, None, {"b": "2"}]
        outputs.append(write_mm(batches, src.schema, fmt, meta, **options))
        with open_writer(tmp_path / f"out{k}", src.schema, fmt, **options) as w:
            for b, md in zip(batches, meta):
                w.write(b, metadata=md)
    assert outputs[0] == outputs[1]
    assert (tmp_path / "out0").read_bytes() == (tmp_path / "out1").read_bytes() == outputs[0]


def test_file_footer_has_no_stray_bytes():
    """The 4 padding bytes of each footer Block are zero (not uninitialised memory)."""
    src = to_mm(pa.table({"d": CASES["dictionary<string, int8>"](N, True)}))[0]
    for _ in range(3):
        data = write_mm([src] * 40, src.schema, "file")
        footer = arrowmm.open_file(data).footer
        for blocks in (footer.record_batches, footer.dictionaries):
            raw = np.frombuffer(blocks.tobytes(), np.uint8).reshape(-1, 24)
            assert len(raw) and not raw[:, 12:16].any()


def test_a_schema_encoded_again_from_the_cache_gives_the_same_bytes():
    """A schema's encoding is kept by identity (a file encodes it in its first message and its
    footer; writers of many files of one schema again each time): the bytes are those of an
    encoding from scratch, for every field kind, and features (compression) are part of it."""
    from arrowmm.format import encode
    ext = pa.array([b"0123456789abcdef"], pa.binary(16))
    table = pa.table({
        "d": pa.array(["a", "b"]).dictionary_encode(),
        "l": pa.array([[{"x": 1}], None], pa.list_(pa.struct([("x", pa.int64())]))),
        "m": pa.array([{"k": 1}, None], pa.map_(pa.string(), pa.int32())),
        "u": pa.ExtensionArray.from_storage(pa.uuid(), pa.concat_arrays([ext, ext])),
        "t": pa.array([1, 2], pa.timestamp("us", "Europe/Paris")),
    }).replace_schema_metadata({"owner": "me"})
    batch = arrowmm.record_batch(table.to_batches()[0])
    schema = batch.schema

    def written(**options):
        sink = io.BytesIO()
        with arrowmm.new_file(sink, schema, **options) as w:
            w.write_batch(batch)
        return sink.getvalue()

    encode._SCHEMA_TAILS.clear()
    encode._TEMPLATES.clear()
    fresh = written()
    assert written() == written() == fresh  # (from the cache, twice)
    compressed = written(compression="zstd")
    encode._SCHEMA_TAILS.clear()
    encode._TEMPLATES.clear()
    assert written(compression="zstd") == compressed
    assert compressed != fresh
    for data in (fresh, compressed):
        got = pa.ipc.open_file(data).read_all()
        got.validate(full=True)
        assert got.equals(table)
