"""Metadata damage that FlatBuffers' verifier (which pyarrow runs) refuses, and arrowmm read as
data before: a codec byte of 0xff (read as "no compression": the frames came back as values),
an endianness that is neither Little nor Big, a zeroed offset (the file read as empty), a
string whose length no longer reaches its NUL (a column renamed, metadata cut short), and a
buffer moved off the format's 8-byte grid (values shifted by a byte).  Each must be
``ArrowInvalid`` (or ``ArrowError``), never values."""
import io
import struct

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

import arrowmm


def _file_bytes(batch, **options) -> bytearray:
    sink = io.BytesIO()
    with ipc.new_file(sink, batch.schema, options=ipc.IpcWriteOptions(**options)) as w:
        w.write_batch(batch)
    return bytearray(sink.getvalue())


def _codec_byte_set_to_0xff(data: bytes, read_pa) -> bytes:
    """``data`` with the BodyCompression codec byte (ZSTD = 1) set to 0xff: the one byte whose
    0xff pyarrow refuses as an unsupported codec."""
    for i in range(len(data)):
        if data[i] != 1:
            continue
        probe = bytearray(data)
        probe[i] = 0xFF
        try:
            read_pa(bytes(probe))
        except pa.ArrowInvalid as error:
            if "Unsupported codec" in str(error):
                return bytes(probe)
        except (OSError, pa.ArrowException):  # (other bytes: other damage)
            pass
    raise AssertionError("no codec byte found")


ZSTD_BATCH = pa.record_batch({"x": pa.array([1, 2, 3, 4], pa.int64())})


def test_a_codec_byte_of_0xff_in_a_stream_is_no_codec_not_no_compression():
    sink = io.BytesIO()
    with ipc.new_stream(sink, ZSTD_BATCH.schema,
                        options=ipc.IpcWriteOptions(compression="zstd")) as w:
        w.write_batch(ZSTD_BATCH)
    damaged = _codec_byte_set_to_0xff(
        sink.getvalue(), lambda d: ipc.open_stream(pa.py_buffer(d)).read_all())
    with pytest.raises(arrowmm.ArrowError, match="unknown compression codec 255"):
        arrowmm.open_stream(damaged).read_all().column("x").to_pylist()


def test_a_codec_byte_of_0xff_in_a_file_is_no_codec_not_no_compression():
    data = bytes(_file_bytes(ZSTD_BATCH, compression="zstd"))
    damaged = _codec_byte_set_to_0xff(
        data, lambda d: ipc.open_file(pa.py_buffer(d)).read_all())
    with pytest.raises(arrowmm.ArrowError, match="unknown compression codec 255"):
        arrowmm.open_file(damaged).read_all().column("x").to_pylist()


def test_an_endianness_neither_little_nor_big_is_refused(tmp_path):
    path = tmp_path / "be.arrow"
    with arrowmm.new_file(path, arrowmm.schema([("x", arrowmm.int32())]),
                          endianness="big") as writer:
        writer.write({"x": [1, 2, 3]})
    good = path.read_bytes()
    footer_len = int.from_bytes(good[-10:-6], "little")
    damaged = None
    for i in range(len(good) - 10 - footer_len, len(good) - 10):  # the Endianness byte
        if good[i] != 1:
            continue
        probe = bytearray(good)
        probe[i] = 0
        try:
            if arrowmm.open_file(bytes(probe)).schema.endianness == "little":
                damaged = bytearray(good)
                damaged[i] = 3
                break
        except arrowmm.ArrowInvalid:
            continue
    assert damaged is not None
    with pytest.raises(arrowmm.ArrowInvalid, match="endianness 3 is neither Little"):
        arrowmm.open_file(bytes(damaged))


def test_a_zeroed_offset_to_the_footer_s_batches_is_refused_not_read_as_no_batches():
    schema = pa.schema([("x", pa.int64())])
    sink = io.BytesIO()
    with ipc.new_file(sink, schema) as w:
        w.write_batch(pa.record_batch({"x": pa.array([1, 2])}))
        w.write_batch(pa.record_batch({"x": pa.array([3, 4])}))
    data = bytearray(sink.getvalue())
    footer = len(data) - 10 - struct.unpack_from("<i", data, len(data) - 10)[0]
    table = footer + struct.unpack_from("<I", data, footer)[0]
    vtable = table - struct.unpack_from("<i", data, table)[0]
    record_batches = struct.unpack_from("<H", data, vtable + 4 + 2 * 3)[0]   # field 3
    assert record_batches
    assert arrowmm.open_file(bytes(data)).num_record_batches == 2
    data[table + record_batches:table + record_batches + 4] = bytes(4)
    with pytest.raises(OSError, match="Verification"):
        ipc.open_file(pa.py_buffer(bytes(data)))
    with pytest.raises(arrowmm.ArrowInvalid, match="zero or unaligned"):
        arrowmm.open_file(bytes(data))


def test_a_field_name_whose_length_misses_its_nul_is_refused():
    data = _file_bytes(pa.record_batch({"price": pa.array([1.5, 2.5])}))
    at = data.rfind(b"\x05\x00\x00\x00price\x00")   # the footer's copy (the last one)
    assert at > 0
    data[at] = 2
    with pytest.raises(OSError, match="Verification"):
        ipc.open_file(pa.py_buffer(bytes(data)))
    with pytest.raises(arrowmm.ArrowInvalid):
        arrowmm.open_file(bytes(data))


def test_a_metadata_value_whose_length_misses_its_nul_is_refused():
    schema = pa.schema([("x", pa.int64())], metadata={"key": "value-that-matters"})
    data = _file_bytes(pa.record_batch({"x": pa.array([1])}, schema=schema))
    at = data.rfind(b"\x12\x00\x00\x00value-that-matters\x00")
    assert at > 0
    data[at] = 5
    with pytest.raises(OSError, match="Verification"):
        ipc.open_file(pa.py_buffer(bytes(data)))
    with pytest.raises(arrowmm.ArrowInvalid, match="does not end with the NUL"):
        arrowmm.open_file(bytes(data))


def test_a_buffer_off_the_8_byte_grid_is_refused_as_pyarrow_refuses_it(tmp_path):
    path = tmp_path / "x.arrow"
    with arrowmm.new_file(path, arrowmm.schema([("x", arrowmm.int64())])) as writer:
        writer.write({"x": [1, 2, 3, 4]})
    good = path.read_bytes()
    damaged = None
    for at in range(0, len(good) - 16, 8):     # the data Buffer: offset 0, length 32
        if struct.unpack_from("<qq", good, at) == (0, 32):
            probe = bytearray(good)
            struct.pack_into("<q", probe, at, 1)
            try:
                ipc.open_file(pa.py_buffer(bytes(probe))).read_all()
            except pa.ArrowInvalid as error:
                if "aligned" in str(error):
                    damaged = bytes(probe)
                    break
    assert damaged is not None
    for read in (lambda r: r.get_batch(0).column("x").to_pylist(),
                 lambda r: r.read_all().column("x").to_pylist(),
                 lambda r: pa.table(r).column("x").to_pylist()):
        with arrowmm.open_file(damaged) as reader:  # (through pyarrow: its ArrowInvalid)
            with pytest.raises((arrowmm.ArrowInvalid, pa.ArrowInvalid),
                               match="not a multiple of 8"):
                read(reader)
    with pytest.raises(arrowmm.ArrowInvalid, match="not a multiple of 8"):
        arrowmm.open_stream(damaged).read_all()


def test_a_footer_block_pointing_at_another_batch_s_message_is_refused(tmp_path):
    # (review, session 42) a damaged Block[1].offset (in the review one flipped bit, 512 ->
    # 768) points record batch 1 at record batch 2's message: pyarrow reads batch 2's rows
    # twice and batch 1's never, without a word; two blocks over the same bytes are damage
    path = tmp_path / "a.arrow"
    with arrowmm.new_file(path, arrowmm.schema([("x", arrowmm.int64())])) as w:
        for base in (1, 10, 100):
            w.write({"x": [base, base + 1, base + 2]})
    with arrowmm.open_file(path) as r:
        blocks = r.footer.record_batches.tolist()
    assert blocks[1][1:] == blocks[2][1:]
    data = bytearray(path.read_bytes())
    at = data.rindex(blocks[1][0].to_bytes(8, "little"))
    data[at:at + 8] = blocks[2][0].to_bytes(8, "little")
    path.write_bytes(bytes(data))
    assert ipc.open_file(str(path)).read_all().column("x").to_pylist()[3:6] == [100, 101, 102]
    with pytest.raises(arrowmm.ArrowInvalid, match="record batch 1 .* and record batch 2 .* "
                                                   "overlap"):
        arrowmm.open_file(path)
    # what the file holds is still there: repair walks the messages, not the footer
    fixed = tmp_path / "fixed.arrow"
    arrowmm.repair(path, fixed)
    assert arrowmm.open_file(fixed).read_all().column("x").to_pylist() == \
        [1, 2, 3, 10, 11, 12, 100, 101, 102]
