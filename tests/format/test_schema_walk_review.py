"""Review of the schema walk (``format/_schema_walk.pyx``) on what pyarrow writes and on what
it does not: a wide schema of every kind of field, repeated past the walk's memo slots, whose
fields differ only in nullability, metadata, ordering or index type (the memos must not merge
them); nesting to the limit and past it; field tables shared between parents (a legal
flatbuffer pyarrow reads, and one whose sharing describes 2**30 fields); and a few thousand
footers with one byte flipped or cut short, read in a child process so that a crash or a hang
is caught: each gives an ``ArrowError`` or the very schema the Python reader
(``decode._field_from_fb``) gives.  About 10 s of CPU."""
from __future__ import annotations

import io
import struct
import subprocess
import sys
import textwrap

import pyarrow as pa
import pytest

import arrowmm
from arrowmm.format._fbs.Footer import Footer

BASE_TYPES = [
    pa.int8(), pa.uint64(), pa.float16(), pa.float32(), pa.string(), pa.large_binary(),
    pa.string_view(), pa.bool_(), pa.timestamp("us", "UTC"), pa.timestamp("ns", "+01:00"),
    pa.timestamp("s"), pa.date32(), pa.date64(), pa.time32("ms"), pa.time64("ns"),
    pa.duration("us"), pa.decimal128(10, 3), pa.decimal128(10, 4), pa.decimal256(40, 5),
    pa.month_day_nano_interval(), pa.binary(7), pa.binary(8)]
INDEX_TYPES = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(),
               pa.uint32(), pa.uint64()]


def _file(schema: pa.Schema) -> bytes:
    sink = io.BytesIO()
    with pa.ipc.new_file(sink, schema):
        pass
    return sink.getvalue()


def _footer_span(data: bytes):
    """(start, length) of the footer flatbuffer of an IPC file's bytes."""
    length = struct.unpack("<i", data[-10:-6])[0]
    return len(data) - 10 - length, length


def _wide_fields():
    """Fields of every kind, in pairs that differ in one thing only."""
    fields = [pa.field("null", pa.null())]
    names = ["x", "", "\u00fc\u540d", "x"]  # (duplicate, empty and non-ASCII names)
    for k, dtype in enumerate(BASE_TYPES):
        for nullable in (True, False):
            for metadata in (None, {"a": "1"}, {"a": "2"}, {"": ""}, {"k": ""}, {"\u00fc": "\u00e9"}):
                fields.append(pa.field(names[(k + len(fields)) % 4], dtype, nullable, metadata))
            fields += [
                pa.field("s", pa.struct([pa.field("a", dtype, nullable)])),
                pa.field("s", pa.struct([pa.field("a", dtype, not nullable)])),
                pa.field("s", pa.struct([pa.field("a", dtype, nullable, {"m": "1"})])),
                pa.field("s", pa.struct([pa.field("b", dtype, nullable)])),
                pa.field("l", pa.list_(pa.field("item", dtype, nullable))),
                pa.field("l", pa.large_list(pa.field("item", dtype, nullable))),
                pa.field("l", pa.list_view(pa.field("item", dtype, nullable))),
                pa.field("l", pa.list_(pa.field("item", dtype, nullable), 3)),
                pa.field("l", pa.list_(pa.field("item", dtype, nullable), 4)),
                pa.field("ss", pa.struct([pa.field("s", pa.struct([pa.field("a", dtype,
                                                                             nullable)]))]))]
    for index in INDEX_TYPES:
        for ordered in (False, True):
            for value in (pa.string(), pa.int64(), pa.large_string()):
                dtype = pa.dictionary(index, value, ordered)
                fields += [pa.field("d", dtype), pa.field("ld", pa.list_(dtype)),
                           pa.field("sd", pa.struct([pa.field("a", dtype)]))]
    for keys_sorted in (False, True):
        fields += [
            pa.field("m", pa.map_(pa.string(), pa.int32(), keys_sorted=keys_sorted)),
            pa.field("m", pa.map_(pa.string(), pa.field("value", pa.int32(), False),
                                  keys_sorted=keys_sorted)),
            pa.field("m", pa.map_(pa.dictionary(pa.int8(), pa.string()), pa.int32(),
                                  keys_sorted=keys_sorted))]
    for mode in ("sparse", "dense"):
        for codes in (None, [5, 7], [7, 5]):
            fields.append(pa.field("u", pa.union([pa.field("a", pa.int8()),
                                                  pa.field("b", pa.string())], mode, codes)))
    fields += [
        pa.field("ree", pa.run_end_encoded(pa.int32(), pa.string())),
        pa.field("ree", pa.run_end_encoded(pa.int16(), pa.string())),
        pa.field("uuid", pa.uuid()), pa.field("json", pa.json_(pa.string())),
        pa.field("t", pa.fixed_shape_tensor(pa.float32(), [2, 3])),
        pa.field("t", pa.fixed_shape_tensor(pa.float32(), [3, 2])),
        pa.field("ext", pa.int32(), metadata={"ARROW:extension:name": "review.unknown",
                                              "ARROW:extension:metadata": "x"}),
        pa.field("ext", pa.int32(), metadata={"ARROW:extension:name": "review.unknown",
                                              "ARROW:extension:metadata": "y"}),
        pa.field("wide", pa.struct([pa.field(f"c{k}", pa.int8()) for k in range(5)])),
        pa.field("wide", pa.struct([pa.field(f"c{k}", pa.int8()) for k in range(5)][::-1]))]
    return fields


def _as_pyarrow_dict(metadata):
    return {k.decode(): v.decode() for k, v in metadata.items()} if metadata else None


def test_wide_schema_of_every_kind_as_pyarrow():
    """Three copies of ~900 fields (past the memos' 256 slots, so entries are evicted and made
    again): the schema pyarrow reads, field by field, metadata, nullability and dictionary
    index types included."""
    schema = pa.schema(_wide_fields() * 3, metadata={"top": "x", "": ""})
    data = _file(schema)
    want = pa.ipc.open_file(pa.BufferReader(data)).schema
    got = arrowmm.open_file(data).schema
    assert pa.schema(got).equals(want, check_metadata=True)
    assert len(got) == len(want) > 2500
    for i, (mine, theirs) in enumerate(zip(got, want)):
        assert (mine.name, str(mine.type), mine.nullable) == \
            (theirs.name, str(theirs.type), theirs.nullable), i
        assert mine.metadata == _as_pyarrow_dict(theirs.metadata), i
        if pa.types.is_dictionary(theirs.type):
            assert str(mine.type.index_type) == str(theirs.type.index_type), i
            assert mine.type.ordered == theirs.type.ordered, i


def test_fields_that_differ_are_not_merged():
    """Children alike but for one thing, repeated: each keeps its own."""
    pairs = [
        (pa.field("a", pa.int8(), True), pa.field("a", pa.int8(), False)),
        (pa.field("a", pa.int8(), metadata={"k": "1"}), pa.field("a", pa.int8(),
                                                                 metadata={"k": "2"})),
        (pa.field("a", pa.dictionary(pa.int8(), pa.string(), False)),
         pa.field("a", pa.dictionary(pa.int8(), pa.string(), True))),
        (pa.field("a", pa.dictionary(pa.int8(), pa.string())),
         pa.field("a", pa.dictionary(pa.uint8(), pa.string()))),
        (pa.field("a", pa.timestamp("s", "UTC")), pa.field("a", pa.timestamp("s", "utc"))),
        (pa.field("a", pa.decimal128(9, 2)), pa.field("a", pa.decimal128(9, 3)))]
    fields = []
    for _ in range(150):
        for one, other in pairs:
            fields += [pa.field("s", pa.struct([one])), pa.field("s", pa.struct([other]))]
    data = _file(pa.schema(fields))
    got = arrowmm.open_file(data).schema
    want = pa.ipc.open_file(pa.BufferReader(data)).schema
    assert pa.schema(got).equals(want, check_metadata=True)
    def described(field):
        return field.name, str(field.type), field.nullable, field.metadata

    for i in range(0, len(fields), 2):
        first, second = got.field(i).type.field(0), got.field(i + 1).type.field(0)
        assert described(first) != described(second), i
        assert first.metadata == _as_pyarrow_dict(want.field(i).type.field(0).metadata), i


def _nested(depth: int) -> pa.DataType:
    dtype = pa.int8()
    for k in range(depth):
        dtype = pa.struct([pa.field("c", dtype)]) if k % 2 else pa.list_(dtype)
    return dtype


def test_nesting_up_to_and_past_the_limit():
    """Nesting within ``limits.max_nesting`` (64) reads as pyarrow; beyond it (where pyarrow
    still reads, up to its verifier's depth) ``ArrowInvalid`` naming the limit."""
    data = _file(pa.schema([pa.field("f", _nested(60))]))
    want = pa.ipc.open_file(pa.BufferReader(data)).schema
    assert pa.schema(arrowmm.open_file(data).schema).equals(want)
    for depth in (65, 100, 500):
        with pytest.raises(arrowmm.ArrowInvalid, match="max_nesting"):
            arrowmm.open_file(_file(pa.schema([pa.field("f", _nested(depth))])))


def _shared_children(depth: int) -> bytes:
    """A file whose field f is ``depth`` structs of children (x, y), each y rewritten to point
    at x's table: legal sharing, which describes 2**depth leaves in a few hundred bytes."""
    dtype = pa.int8()
    for _ in range(depth):
        dtype = pa.struct([pa.field("x", dtype), pa.field("y", pa.int8())])
    data = bytearray(_file(pa.schema([pa.field("f", dtype)])))
    start, length = _footer_span(data)
    field = Footer.GetRootAs(bytes(data[start:start + length]), 0).Schema().Fields(0)
    while field.ChildrenLength() == 2:
        table = field._tab
        vector = table.Vector(table.Offset(14))  # (Field.children)
        x_at, y_slot = table.Indirect(vector), vector + 4
        data[start + y_slot:start + y_slot + 4] = struct.pack("<I", x_at - y_slot)
        field = field.Children(0)
    return bytes(data)


def test_shared_field_tables():
    data = _shared_children(6)
    want = pa.ipc.open_file(pa.BufferReader(data)).schema
    got = arrowmm.open_file(data).schema
    assert pa.schema(got).equals(want, check_metadata=True)
    assert str(got.field(0).type).count("x: int8") == 2 ** 6
    with pytest.raises(arrowmm.ArrowInvalid, match="more fields than its"):
        arrowmm.open_file(_shared_children(30))


_DAMAGE_WORKER = textwrap.dedent('''
    import struct, sys
    import arrowmm
    from arrowmm.format import decode, footer_cache

    data = sys.stdin.buffer.read()
    length = struct.unpack("<i", data[-10:-6])[0]
    start = len(data) - 10 - length
    walk = decode.schema_fields

    def python_reader(data_, start_, n, field_cls, types, make_type, other, budget, md_cap):
        return tuple(other(i) for i in range(n))

    def described(field):
        return (field.name, str(field.type), field.nullable, field.metadata,
                field.dictionary_id)

    def read(buf, fields):
        footer_cache.clear()
        decode.schema_fields = fields
        try:
            schema = arrowmm.open_file(buf).schema
            return "schema", [described(f) for f in schema], schema.metadata
        except arrowmm.ArrowError as exc:
            return "error", type(exc).__name__
        except BaseException as exc:
            return "other", repr(exc)
        finally:
            decode.schema_fields = walk

    def cases():
        for offset in range(length):
            for xor in (0x01, 0xFF):
                buf = bytearray(data)
                buf[start + offset] ^= xor
                yield f"byte {offset} ^ {xor:#x}", bytes(buf)
        for cut in range(0, length, 7):
            footer = data[start:start + cut]
            yield f"footer cut to {cut}", data[:start] + footer + struct.pack("<i", cut) + data[-6:]

    for name, buf in cases():
        print("CASE", name, flush=True)
        got, want = read(buf, walk), read(buf, python_reader)
        if got[0] == "other" or got != want:
            print("FOUND", name, "walk:", got, "python reader:", want, flush=True)
    print("END", flush=True)
''')


def test_damaged_footers_error_or_read_as_the_python_reader():
    fields = [
        pa.field("a", pa.int32(), metadata={"k": "v"}),
        pa.field("b", pa.struct([pa.field("x", pa.string()), pa.field("y", pa.list_(pa.float64()))])),
        pa.field("d", pa.dictionary(pa.int16(), pa.string(), True)),
        pa.field("m", pa.map_(pa.string(), pa.int64())),
        pa.field("u", pa.union([pa.field("p", pa.int8()), pa.field("q", pa.bool_())], "dense",
                               [3, 9])),
        pa.field("t", pa.timestamp("ms", "Europe/Paris")), pa.field("dec", pa.decimal128(12, 3)),
        pa.field("ree", pa.run_end_encoded(pa.int32(), pa.utf8())),
        pa.field("lv", pa.large_list_view(pa.int16()), False),
        pa.field("s", pa.struct([pa.field("a", pa.int8())])),
        pa.field("s", pa.struct([pa.field("a", pa.int8())])),
        pa.field("\u00fc", pa.binary(5))]
    data = _file(pa.schema(fields, metadata={"sch": "md"}))
    assert _footer_span(data)[1] > 1000
    # (a generous guard against a hang, not a timing: the cases take ~6 s of CPU)
    run = subprocess.run([sys.executable, "-c", _DAMAGE_WORKER], input=data,
                         capture_output=True, timeout=600)
    out = run.stdout.decode("utf-8", "replace")
    last = [line for line in out.splitlines() if line.startswith("CASE")][-1:]
    assert run.returncode == 0 and out.rstrip().endswith("END"), \
        (run.returncode, last, run.stderr.decode("utf-8", "replace")[-2000:])
    assert out.count("CASE") > 2500
    found = [line for line in out.splitlines() if line.startswith("FOUND")]
    assert not found, found[:5]
