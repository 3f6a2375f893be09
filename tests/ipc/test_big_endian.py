"""Big-endian files: every type with multi-byte values reads as the little-endian original.

Two independent producers: (1) a big-endian stream built here by hand from pyarrow's arrays,
swapping each buffer with numpy according to the Arrow layout written out below (offsets,
views, run ends, union offsets, intervals, decimals, float16 ...) and setting the schema's
endianness to Big; (2) arrowmm's ``endianness="big"`` writer.  arrowmm must read both as the
original values (and count the swaps, and report the columns as copies); pyarrow, which swaps
big-endian input to native where it can, must read them too.
"""
from __future__ import annotations

import struct

import numpy as np
import pyarrow as pa
import pytest

from tests.support.writer_support import CASES, FORMATS, N, assert_batches_equal, to_mm, write_mm

import arrowmm
from arrowmm import types as t
from arrowmm.format import encode_batch_message, encode_schema_message

# Nested dictionaries need dictionary batches inside dictionary batches: the writer tests cover
# them; the hand-built stream keeps to top-level dictionaries.
HAND_CASES = [c for c in CASES if c not in ("list<dictionary>", "struct<dictionary>",
                                            "dictionary<struct<dictionary>>")]


# -- the hand-made big-endian encoder ----------------------------------------------------------

def _swap_ints(buf: bytes, width: int) -> bytes:
    if width == 1 or not buf:
        return buf
    return np.frombuffer(buf, dtype=f"<u{width}").astype(f">u{width}").tobytes()


def _swap_whole(buf: bytes, width: int) -> bytes:  # decimals: one integer of `width` bytes
    return np.frombuffer(buf, dtype=np.uint8).reshape(-1, width)[:, ::-1].tobytes()


def _swap_mdn(buf: bytes) -> bytes:
    le = np.dtype([("m", "<i4"), ("d", "<i4"), ("n", "<i8")])
    return np.frombuffer(buf, dtype=le).astype(le.newbyteorder(">")).tobytes()


def _swap_views(buf: bytes) -> bytes:
    views = np.frombuffer(buf, dtype=np.uint8).reshape(-1, 16).copy()
    lengths = views[:, 0:4].copy().view("<i4").ravel()
    views[:, 0:4] = views[:, 0:4][:, ::-1]
    long = lengths > 12  # long views: (length, prefix, buffer index, offset); short: inline bytes
    views[long, 8:12] = views[long, 8:12][:, ::-1]
    views[long, 12:16] = views[long, 12:16][:, ::-1]
    return views.tobytes()


def _bytes(buf, start, size) -> bytes:
    return b"" if buf is None or size == 0 else buf.to_pybytes()[start:start + size]


def _value_swap(ty):
    """How the values buffer of a fixed-width type is swapped."""
    if pa.types.is_decimal(ty):
        return lambda b: _swap_whole(b, ty.byte_width)
    if ty == pa.month_day_nano_interval():
        return _swap_mdn
    if pa.types.is_fixed_size_binary(ty):
        return lambda b: b
    return lambda b: _swap_ints(b, ty.bit_width // 8)


class BigEndianEncoder:
    """Nodes, big-endian buffers and variadic counts of pyarrow arrays, in IPC order."""

    def __init__(self):
        self.nodes, self.buffers, self.variadic = [], [], []

    def add(self, arr: pa.Array):
        assert arr.offset == 0
        if isinstance(arr, pa.ExtensionArray):
            arr = arr.storage
        ty, n, bufs = arr.type, len(arr), arr.buffers()
        union_or_ree = pa.types.is_union(ty) or pa.types.is_run_end_encoded(ty)
        self.nodes.append((n, 0 if union_or_ree else arr.null_count))
        if pa.types.is_null(ty):
            return
        if pa.types.is_run_end_encoded(ty):
            self.add(arr.run_ends)
            self.add(arr.values)
            return
        if pa.types.is_union(ty):
            self.buffers.append(_bytes(bufs[1], 0, n))
            if ty.mode == "dense":
                self.buffers.append(_swap_ints(_bytes(bufs[2], 0, 4 * n), 4))
            for i in range(ty.num_fields):
                self.add(arr.field(i))
            return
        self.buffers.append(_bytes(bufs[0], 0, (n + 7) // 8) if arr.null_count else b"")
        if pa.types.is_boolean(ty):
            self.buffers.append(_bytes(bufs[1], 0, (n + 7) // 8))
        elif pa.types.is_dictionary(ty):
            w = ty.index_type.bit_width // 8
            self.buffers.append(_swap_ints(_bytes(bufs[1], 0, w * n), w))
        elif pa.types.is_binary_view(ty) or pa.types.is_string_view(ty):
            self.buffers.append(_swap_views(_bytes(bufs[1], 0, 16 * n)))
            self.variadic.append(len(bufs) - 2)
            self.buffers.extend(b.to_pybytes() for b in bufs[2:])
        elif (pa.types.is_binary(ty) or pa.types.is_string(ty) or pa.types.is_large_binary(ty)
              or pa.types.is_large_string(ty)):
            w = 8 if pa.types.is_large_binary(ty) or pa.types.is_large_string(ty) else 4
            offsets = _bytes(bufs[1], 0, w * (n + 1))
            end = int(np.frombuffer(offsets, f"<i{w}")[-1]) if n else 0
            self.buffers += [_swap_ints(offsets, w), _bytes(bufs[2], 0, end)]
        elif pa.types.is_list_view(ty) or pa.types.is_large_list_view(ty):
            w = 8 if pa.types.is_large_list_view(ty) else 4
            self.buffers += [_swap_ints(_bytes(bufs[1], 0, w * n), w), _swap_ints(_bytes(bufs[2], 0, w * n), w)]
            self.add(arr.values)
        elif pa.types.is_list(ty) or pa.types.is_large_list(ty) or pa.types.is_map(ty):
            w = 8 if pa.types.is_large_list(ty) else 4
            self.buffers.append(_swap_ints(_bytes(bufs[1], 0, w * (n + 1)), w))
            self.add(arr.values)
        elif pa.types.is_fixed_size_list(ty):
            self.add(arr.values)
        elif pa.types.is_struct(ty):
            for i in range(ty.num_fields):
                self.add(arr.field(i))
        else:
            width = ty.byte_width
            self.buffers.append(_value_swap(ty)(_bytes(bufs[1], 0, width * n)))

    def message(self, length, dictionary_id=None) -> bytes:
        body, layout, pos = b"", [], 0
        for buf in self.buffers:
            layout += [pos, len(buf)]
            pad = b"\x00" * (-len(buf) % 8)
            body += buf + pad
            pos += len(buf) + len(pad)
        meta = encode_batch_message(length, np.array(self.nodes, dtype=np.int64).ravel(),
                                    np.array(layout, dtype=np.int64), len(body),
                                    variadic=self.variadic or None, dictionary_id=dictionary_id)
        return _frame(meta) + body


def _frame(flatbuffer: bytes) -> bytes:
    pad = -(8 + len(flatbuffer)) % 8
    return b"\xff\xff\xff\xff" + struct.pack("<i", len(flatbuffer) + pad) + flatbuffer + b"\x00" * pad


def hand_made_big_endian_stream(table: pa.Table) -> bytes:
    (mm_batch,) = to_mm(table)  # the schema, with the dictionary ids a reader assigns
    schema = t.Schema(mm_batch.schema.fields, mm_batch.schema.metadata, "big")
    out = _frame(encode_schema_message(schema))
    (batch,) = table.to_batches()
    for f, col in zip(schema.fields, batch.columns):
        if isinstance(f.type, t.DictionaryType):
            enc = BigEndianEncoder()
            enc.add(col.dictionary)
            out += enc.message(len(col.dictionary), f.dictionary_id)
    enc = BigEndianEncoder()
    for col in batch.columns:
        enc.add(col)
    return out + enc.message(batch.num_rows) + b"\xff\xff\xff\xff\x00\x00\x00\x00"


# -- tests -----------------------------------------------------------------------------------------

def _table(cases, nulls=True):
    return pa.table({c: CASES[c](N, nulls) for c in cases})


@pytest.mark.parametrize("nulls", [False, True], ids=["no-nulls", "nulls"])
def test_hand_made_big_endian_stream_reads_as_the_original(nulls):
    table = _table(HAND_CASES, nulls)
    data = hand_made_big_endian_stream(table)
    reader = arrowmm.open_stream(data)
    assert reader.schema.endianness == "big"
    (batch,) = list(reader)
    batch.validate(full=True)  # before handing the buffers to pyarrow
    assert_batches_equal(pa.record_batch(batch), table.to_batches()[0])
    assert reader.stats.buffers_swapped > 0
    multi_byte = [c for c in HAND_CASES if c not in ("null", "bool", "int8", "uint8")
                  and not c.startswith("fixed_size_binary") and c != "extension<arrow.uuid>"]
    for name in multi_byte:
        assert not batch.column(name).is_zero_copy, name  # swapped: a copy, and reported as one
    assert batch.column("bool").is_zero_copy and batch.column("int8").is_zero_copy
    with pytest.raises(arrowmm.ArrowInvalid, match="byte-swapped.*allow_copies=False"):
        list(arrowmm.open_stream(data, allow_copies=False))[0].column("int16")


def test_hand_made_big_endian_stream_reads_in_pyarrow():
    """The oracle agrees that the hand-made stream holds the original values (for the types
    pyarrow can swap: not views, list views, run-end encoded)."""
    cases = [c for c in HAND_CASES if "view" not in c and "run_end" not in c]
    table = _table(cases)
    got = pa.ipc.open_stream(hand_made_big_endian_stream(table)).read_all()
    assert_batches_equal(got.to_batches()[0], table.to_batches()[0])


@pytest.mark.parametrize("fmt", FORMATS)
def test_arrowmm_big_endian_writer_every_type(fmt):
    table = _table(list(CASES))
    (src,) = to_mm(table)
    data = write_mm([src, src.slice(3, 20)], src.schema, fmt, endianness="big")
    reader = arrowmm.open(data)
    assert reader.schema.endianness == "big"
    got = list(reader)
    for batch in got:
        batch.validate(full=True)
    assert_batches_equal(pa.record_batch(got[0]), table.to_batches()[0])
    assert_batches_equal(pa.record_batch(got[1]), table.slice(3, 20).to_batches()[0])
    assert reader.stats.buffers_swapped > 0
    supported = [c for c in CASES if "view" not in c and "run_end" not in c]
    part = table.select(supported)
    (src,) = to_mm(part)
    data = write_mm([src], src.schema, fmt, endianness="big")
    theirs = (pa.ipc.open_file(pa.py_buffer(data)) if fmt == "file" else pa.ipc.open_stream(data)).read_all()
    assert_batches_equal(theirs.to_batches()[0], part.to_batches()[0])


def test_arrowmm_big_endian_output_matches_the_hand_made_buffers():
    """Both producers lay out the same big-endian bytes for each buffer."""
    table = _table(HAND_CASES)
    (src,) = to_mm(table)
    mine = arrowmm.open_stream(write_mm([src], src.schema, "stream", endianness="big"))
    hand = arrowmm.open_stream(hand_made_big_endian_stream(table))
    from arrowmm.ipc.core.framing import read_message_at, message_end
    from arrowmm._core._region import Region

    def batch_buffers(data):
        region, pos, out = Region(data), 0, []
        while True:
            msg = read_message_at(region, pos, 0)
            if msg is None:
                return out
            pos = message_end(msg)
            if msg.kind == "RecordBatch":
                return [msg.body.slice(o, n).to_bytes() for o, n in msg.header.buffer_records.tolist()]

    assert mine.schema.endianness == hand.schema.endianness == "big"
    a = batch_buffers(write_mm([src], src.schema, "stream", endianness="big"))
    b = batch_buffers(hand_made_big_endian_stream(table))
    assert len(a) == len(b)
    for i, (x, y) in enumerate(zip(a, b)):
        assert x == y or (not y and not x.strip(b"\x00")), i  # empty validity may be written either way


def test_a_copy_of_a_big_endian_file_is_written_native_unless_asked(tmp_path):
    """A reader's schema keeps the file's order, but its values are native: a writer given it
    writes native order, as pyarrow's (review 27: F2: it wrote big-endian again, swapping every
    buffer back, and pyarrow cannot read big-endian views); ``endianness="big"`` still writes
    big-endian, and appending keeps the file's order."""
    source, copy, one_call = (str(tmp_path / name) for name in ("be.arrow", "copy.arrow", "w.arrow"))
    x = np.arange(3, dtype=np.int64)
    with arrowmm.new_file(source, arrowmm.schema([("x", arrowmm.int64())]), endianness="big") as w:
        w.write({"x": x})
    with arrowmm.open_file(source) as reader:
        assert reader.schema.endianness == "big"
        views = arrowmm.array(["a", "b", "c"], type=arrowmm.string_view())
        schema = reader.schema.append(arrowmm.field("s", arrowmm.string_view()))
        with arrowmm.new_file(copy, schema) as w:
            w.write(arrowmm.record_batch({"x": reader.get_batch(0).column("x"), "s": views}))
        arrowmm.write_file(one_call, reader.read_all())
        with arrowmm.new_stream(str(tmp_path / "be.arrows"), reader.schema, endianness="big") as w:
            w.write(reader.get_batch(0))
    for path in (copy, one_call):
        with arrowmm.open_file(path) as r:
            assert r.schema.endianness == "little"
            assert r.read_all().column("x").to_pylist() == [0, 1, 2]
            assert r.stats.buffers_swapped == 0
        assert pa.ipc.open_file(path).read_all().column("x").to_pylist() == [0, 1, 2]
    assert pa.ipc.open_file(copy).read_all().column("s").to_pylist() == ["a", "b", "c"]
    assert arrowmm.open_stream(str(tmp_path / "be.arrows")).schema.endianness == "big"
    with arrowmm.append_file(source) as w:
        w.write({"x": x + 3})
    with arrowmm.open_file(source) as r:
        assert r.schema.endianness == "big"
        assert r.read_all().column("x").to_pylist() == [0, 1, 2, 3, 4, 5]
    assert pa.ipc.open_file(source).read_all().column("x").to_pylist() == [0, 1, 2, 3, 4, 5]
