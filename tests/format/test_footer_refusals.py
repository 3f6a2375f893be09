"""Footers pyarrow refuses, or reads otherwise, that arrowmm read as data (found by review):
metadata tables shared between fields, union modes and type-id vectors out of the format,
keys given twice, and a size refusal that read as damage.  Each is checked against pyarrow."""
import io
import struct

import flatbuffers
import pyarrow as pa
import pytest

import arrowmm
from arrowmm.format._fbs import Field as F, Footer as Ft, Int as I, KeyValue as KV, Schema as S
from arrowmm.format._fbs.Footer import Footer
from arrowmm.format._fbs.Union import Union


def _shared_metadata_file(n_fields: int, n_entries: int, name: str = "f") -> bytes:
    b = flatbuffers.Builder(1024)
    key, value, fname = b.CreateString("k"), b.CreateString("v"), b.CreateString(name)
    KV.KeyValueStart(b)
    KV.KeyValueAddKey(b, key)
    KV.KeyValueAddValue(b, value)
    kv = KV.KeyValueEnd(b)
    I.IntStart(b)
    I.IntAddBitWidth(b, 32)
    I.IntAddIsSigned(b, True)
    int32 = I.IntEnd(b)
    md = None
    if n_entries:
        F.FieldStartCustomMetadataVector(b, n_entries)
        for _ in range(n_entries):
            b.PrependUOffsetTRelative(kv)
        md = b.EndVector()
    F.FieldStart(b)
    F.FieldAddName(b, fname)
    F.FieldAddNullable(b, True)
    F.FieldAddTypeType(b, 2)
    F.FieldAddType(b, int32)
    if md is not None:
        F.FieldAddCustomMetadata(b, md)
    field = F.FieldEnd(b)
    S.SchemaStartFieldsVector(b, n_fields)
    for _ in range(n_fields):
        b.PrependUOffsetTRelative(field)
    fields = b.EndVector()
    S.SchemaStart(b)
    S.SchemaAddFields(b, fields)
    schema = S.SchemaEnd(b)
    Ft.FooterStartRecordBatchesVector(b, 0)
    batches = b.EndVector()
    Ft.FooterStart(b)
    Ft.FooterAddVersion(b, 4)
    Ft.FooterAddSchema(b, schema)
    Ft.FooterAddRecordBatches(b, batches)
    b.Finish(Ft.FooterEnd(b))
    footer = bytes(b.Output())
    sink = io.BytesIO()
    with pa.ipc.new_file(sink, pa.schema([pa.field("f", pa.int32(), metadata={"k": "v"})])):
        pass
    real = sink.getvalue()
    head = real[:len(real) - 10 - struct.unpack("<i", real[-10:-6])[0]]
    return head + footer + struct.pack("<i", len(footer)) + b"ARROW1"


def test_metadata_tables_shared_between_fields_are_refused_as_pyarrow_refuses_them():
    # 2,000 fields sharing one 2,000-entry metadata vector: 16 KB that read as 4,000,000
    # entries (a 1 MB footer would have taken hours)
    data = _shared_metadata_file(2000, 2000)
    with pytest.raises(OSError):
        pa.ipc.open_file(pa.BufferReader(data))
    with pytest.raises(arrowmm.ArrowInvalid, match="custom metadata entries"):
        arrowmm.open_file(data)
    assert len(arrowmm.open_file(_shared_metadata_file(4, 2)).schema) == 4  # (within the bytes)


def _dense_union_file(edit) -> bytes:
    """A file of one dense union field (type codes 3, 9), its footer's Union table changed by
    ``edit(data, union table, footer start)``."""
    schema = pa.schema([pa.field("u", pa.union([pa.field("p", pa.int8()),
                                                pa.field("q", pa.bool_())], "dense", [3, 9]))])
    sink = io.BytesIO()
    with pa.ipc.new_file(sink, schema):
        pass
    data = bytearray(sink.getvalue())
    length = struct.unpack("<i", data[-10:-6])[0]
    start = len(data) - 10 - length
    field = Footer.GetRootAs(bytes(data[start:start + length]), 0).Schema().Fields(0)
    union = Union()
    table = field.Type()
    union.Init(table.Bytes, table.Pos)
    edit(data, union, start)
    return bytes(data)


def _dense_union_file_with_mode(mode: int) -> bytes:
    def set_mode(data, union, start):
        at = union._tab.Offset(4)  # (Union.mode, written because Dense is not the default)
        assert at
        data[start + union._tab.Pos + at:start + union._tab.Pos + at + 2] = struct.pack("<h", mode)
    return _dense_union_file(set_mode)


@pytest.mark.parametrize("mode", [2, 5, -1, 0x180])
def test_a_union_mode_neither_sparse_nor_dense_is_refused(mode):
    data = _dense_union_file_with_mode(mode)
    with pytest.raises(arrowmm.ArrowInvalid, match=f"union mode {mode}"):
        arrowmm.open_file(data)  # (it read as a sparse union; pyarrow reads dense_union)
    good = arrowmm.open_file(_dense_union_file_with_mode(1)).schema.field(0).type
    assert str(good) == str(pa.ipc.open_file(pa.BufferReader(_dense_union_file_with_mode(1)))
                            .schema.field(0).type)


def test_empty_type_ids_vector_is_refused():
    def empty_type_ids(data, union, start):
        vector = union._tab.Vector(union._tab.Offset(6))  # (Union.typeIds)
        data[start + vector - 4:start + vector] = struct.pack("<I", 0)
    data = _dense_union_file(empty_type_ids)
    with pytest.raises(pa.ArrowInvalid):
        pa.ipc.open_file(pa.BufferReader(data)).schema
    with pytest.raises(arrowmm.ArrowInvalid):
        arrowmm.open_file(data).schema


def _duplicate_keys_file() -> bytes:
    kv = pa.KeyValueMetadata([(b"a", b"1"), (b"a", b"2"), (b"b", b"")])
    schema = pa.schema([pa.field("x", pa.int32(), metadata=kv),
                        pa.field("y", pa.struct([pa.field("c", pa.int8(), metadata=kv)]))],
                       metadata=kv)
    sink = io.BytesIO()
    with pa.ipc.new_file(sink, schema):
        pass
    return sink.getvalue()


def test_a_metadata_key_given_twice_keeps_its_first_value_as_pyarrow():
    data = _duplicate_keys_file()
    want = pa.ipc.open_file(pa.BufferReader(data)).schema
    got = arrowmm.open_file(data).schema
    assert want.field(0).metadata[b"a"] == b"1"
    assert got.field(0).metadata == {"a": "1", "b": ""}
    assert got.field(1).type.field(0).metadata["a"] == "1"
    assert got.metadata["a"] == "1"


def test_a_limit_refusal_has_no_repair_hint():
    # (a footer read whole and refused for its size is not damage: before, the refusal came
    # with "no append marker: ... its tail is damage ... arrowmm.repair(path, out)")
    from arrowmm.format import footer_cache
    schema = pa.schema([pa.field("s", pa.struct([pa.field(f"c{i}", pa.int8()) for i in range(20)]))])
    sink = io.BytesIO()
    with pa.ipc.new_file(sink, schema):
        pass
    old = arrowmm.set_limits(max_fields=10)
    footer_cache.clear()
    try:
        with pytest.raises(arrowmm.ArrowInvalid, match="max_fields") as caught:
            arrowmm.open_file(sink.getvalue())
        assert "repair" not in str(caught.value) and "damage" not in str(caught.value)
    finally:
        arrowmm.set_limits(**old)
