"""Vtables and field alignment as FlatBuffers' verifier (which pyarrow runs on every footer and
message) checks them, in footers and stream messages: a vtable of odd byte size, a vtable
running past the metadata, an int16 or int64 field at an address not a multiple of its size
(Footer.version read as 13312 from an odd byte) were read before as if whole.  Each mutant
here is refused by pyarrow as a verification failure and must be ``ArrowInvalid`` naming the
table, the field and the byte; a differential loop over single-byte mutants of a footer and
of a dictionary stream's messages holds the rest."""
import struct

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

import arrowmm


# -- a few steps through a flatbuffer, to find what to damage ------------------------------

def _u32(buf, at: int) -> int:
    return struct.unpack_from("<I", buf, at)[0]


def _vtable(buf, table: int) -> int:
    return table - struct.unpack_from("<i", buf, table)[0]


def _field_entry(buf, table: int, slot: int) -> int:
    """Byte position of the vtable entry (voffset) of field ``slot`` of ``table``."""
    return _vtable(buf, table) + 4 + 2 * slot


def _follow(buf, table: int, slot: int) -> int:
    """The position the offset in field ``slot`` of ``table`` points to."""
    at = table + struct.unpack_from("<H", buf, _field_entry(buf, table, slot))[0]
    return at + _u32(buf, at)


def _file(compression=None) -> bytes:
    t = pa.table({"x": pa.array([1, 2, 3], pa.int64()), "s": pa.array(["a", None, "c"]),
                  "d": pa.array(["p", "q", "p"]).dictionary_encode()})
    sink = pa.BufferOutputStream()
    with ipc.new_file(sink, t.schema, options=ipc.IpcWriteOptions(compression=compression)) as w:
        w.write_table(t)
    return sink.getvalue().to_pybytes()


def _footer_start(data: bytes) -> int:
    return len(data) - 10 - struct.unpack_from("<i", data, len(data) - 10)[0]


def _stream() -> bytes:
    """A stream of a schema, a dictionary, a record batch, a delta dictionary and another batch."""
    a = pa.record_batch({"d": pa.array(["x", "y"]).dictionary_encode(),
                         "n": pa.array([1, 2], pa.int64())})
    b = pa.record_batch({"d": pa.DictionaryArray.from_arrays(pa.array([2, 0], pa.int32()),
                                                             pa.array(["x", "y", "z"])),
                         "n": pa.array([3, 4], pa.int64())})
    sink = pa.BufferOutputStream()
    with ipc.new_stream(sink, a.schema, options=ipc.IpcWriteOptions(emit_dictionary_deltas=True)) as w:
        w.write_batch(a)
        w.write_batch(b)
    return sink.getvalue().to_pybytes()


def _messages(data: bytes) -> list:
    """(metadata start, metadata size) of each message of a stream (continuation framing)."""
    out, at = [], 0
    while at + 8 <= len(data):
        size = struct.unpack_from("<i", data, at + 4)[0]
        if size == 0:
            break
        meta = at + 8
        message = meta + _u32(data, meta)
        entry = _field_entry(data, message, 3)  # bodyLength: absent (0) in a schema message
        voffset = struct.unpack_from("<H", data, entry)[0] if entry < _vtable(data, message) + \
            struct.unpack_from("<H", data, _vtable(data, message))[0] else 0
        out.append((meta, size))
        at = meta + size + (struct.unpack_from("<q", data, message + voffset)[0] if voffset else 0)
    return out


def _pyarrow_refuses_as_unverified(read) -> bool:
    try:
        read()
    except Exception as error:  # noqa: BLE001 (pyarrow raises several kinds; only these count)
        return "Verification" in str(error) or "Invalid flatbuffers message" in str(error)
    return False


def _read_file_pyarrow(data: bytes):
    ipc.open_file(data).read_all()


def _read_stream_pyarrow(data: bytes):
    ipc.open_stream(data).read_all()


def _read_file(data: bytes):
    return arrowmm.open_file(data).read_all().to_pylist()


def _read_stream(data: bytes):
    return arrowmm.open_stream(data).read_all().to_pylist()


# -- the mutants the review found, and their kin (each read as data before) ----------------

def _one_column_file() -> bytes:
    t = pa.table({"x": pa.array([1, 2, 3], pa.int64())})
    sink = pa.BufferOutputStream()
    with ipc.new_file(sink, t.schema) as w:
        w.write_table(t)
    return sink.getvalue().to_pybytes()


def _footer_mutant(what: str) -> bytes:
    data = bytearray(_one_column_file())
    fs = _footer_start(bytes(data))
    footer = fs + _u32(data, fs)
    vtable = _vtable(data, footer)
    schema = _follow(data, footer, 1)
    field = _follow(data, schema, 1) + 4
    field += _u32(data, field)
    if what == "odd vtable size":  # (the review's: 12 -> 127)
        data[vtable] = 0x7F
    elif what == "vtable past the metadata":  # 12 -> 32524
        data[vtable + 1] = 0x7F
    elif what == "misaligned int16 field":  # (the review's: Footer.version's voffset 6 -> 7)
        struct.pack_into("<H", data, vtable + 4, 7)
    elif what == "misaligned schema int16 field":  # Schema.endianness at an odd byte
        struct.pack_into("<H", data, _field_entry(data, schema, 0), 1)
    elif what == "odd field vtable size":  # 16 -> 11
        data[_vtable(data, field)] -= 5
    return bytes(data)


@pytest.mark.parametrize("what, match", [
    ("odd vtable size", r"Footer table at byte 16: its vtable's byte size 127 is odd"),
    ("vtable past the metadata", r"Footer table at byte 16: its vtable's byte size 32524 runs "
                                 r"past the \d+-byte metadata"),
    ("misaligned int16 field", r"Footer.version at byte 23: an address not a multiple of 2"),
    ("misaligned schema int16 field", r"Schema.endianness at byte \d+: an address not a "
                                      r"multiple of 2"),
    ("odd field vtable size", r"schema field 0: Field table at byte \d+: its vtable's byte "
                              r"size 11 is odd"),
])
def test_a_footer_the_verifier_refuses_is_refused_naming_table_field_and_byte(what, match):
    data = _footer_mutant(what)
    assert _pyarrow_refuses_as_unverified(lambda: _read_file_pyarrow(data))
    with pytest.raises(arrowmm.ArrowInvalid, match=match):
        _read_file(data)


def _stream_mutant(what: str) -> bytes:
    data = bytearray(_stream())
    (schema_meta, _), (dict_meta, _) = _messages(bytes(data))[:2]

    def table(meta, *slots):  # the table reached from the message's root by ``slots``
        buf = memoryview(data)[meta:]
        pos = _u32(buf, 0)
        for slot in slots:
            pos = _follow(buf, pos, slot)
        return meta + pos

    schema = table(schema_meta, 2)
    fields = schema + struct.unpack_from("<H", data, _field_entry(data, schema, 1))[0]
    fields += _u32(data, fields)
    first_field = fields + 4 + _u32(data, fields + 4)
    second_field = fields + 8 + _u32(data, fields + 8)
    if what == "odd field vtable size":  # 16 -> 11
        data[_vtable(data, second_field)] -= 5
    elif what == "odd schema vtable size":  # 8 -> 7
        data[_vtable(data, schema)] -= 1
    elif what == "misaligned offset field":  # Field.dictionary's voffset 16 -> 1: an odd byte
        struct.pack_into("<H", data, _field_entry(data, first_field, 4), 1)
    elif what == "misaligned int64 field":  # DictionaryBatch.id (absent: 0) put at an odd byte
        batch = table(dict_meta, 2)
        struct.pack_into("<H", data, _field_entry(data, batch, 0), 33)
    return bytes(data)


@pytest.mark.parametrize("what, match", [
    ("odd field vtable size", r"schema field 1: Field table at byte \d+: its vtable's byte "
                              r"size 11 is odd"),
    ("odd schema vtable size", r"Schema table at byte \d+: its vtable's byte size 7 is odd"),
    ("misaligned offset field", r"schema field 0: Field.dictionary at byte \d+: an address not "
                                r"a multiple of 4"),
    ("misaligned int64 field", r"DictionaryBatch.id at byte 81: an address not a multiple of 8"),
])
def test_a_stream_message_the_verifier_refuses_is_refused(what, match):
    data = _stream_mutant(what)
    assert _pyarrow_refuses_as_unverified(lambda: _read_stream_pyarrow(data))
    with pytest.raises(arrowmm.ArrowInvalid, match=match):
        _read_stream(data)


def test_the_seeds_read_as_pyarrow_reads_them():
    data, stream = _file("zstd"), _stream()
    assert _read_file(data) == ipc.open_file(data).read_all().to_pylist()
    assert _read_stream(stream) == ipc.open_stream(stream).read_all().to_pylist()


# -- differential: whatever pyarrow refuses as unverified, arrowmm refuses ------------------

def _single_byte_mutants(data: bytes, start: int, end: int):
    for i in range(start, end):
        for value in sorted({data[i] ^ 0x01, data[i] ^ 0x80, 0xFF}):
            mutant = bytearray(data)
            mutant[i] = value
            yield i, value, bytes(mutant)


def _differential(data: bytes, start: int, end: int, read_pyarrow, read) -> tuple:
    refused, read_anyway = 0, []
    for i, value, mutant in _single_byte_mutants(data, start, end):
        if not _pyarrow_refuses_as_unverified(lambda: read_pyarrow(mutant)):
            continue
        refused += 1
        try:
            read(mutant)
        except arrowmm.ArrowError:
            continue
        read_anyway.append((i, data[i], value))
    return refused, read_anyway


def test_footer_mutants_the_verifier_refuses_are_refused():
    data = _file()
    refused, read_anyway = _differential(data, _footer_start(data), len(data) - 10,
                                         _read_file_pyarrow, _read_file)
    assert refused > 300  # (the loop exercises something real)
    assert read_anyway == [], "(byte, was, now) pyarrow refuses and arrowmm read"


def test_stream_schema_and_dictionary_mutants_the_verifier_refuses_are_refused():
    data = _stream()
    (schema_meta, schema_size), (dict_meta, dict_size) = _messages(data)[:2]
    refused, read_anyway = _differential(data, schema_meta, schema_meta + schema_size,
                                         _read_stream_pyarrow, _read_stream)
    more, more_read = _differential(data, dict_meta, dict_meta + dict_size,
                                    _read_stream_pyarrow, _read_stream)
    assert refused + more > 200
    assert read_anyway + more_read == [], "(byte, was, now) pyarrow refuses and arrowmm read"
