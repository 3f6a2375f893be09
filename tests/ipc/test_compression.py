"""Compressed bodies (LZ4 frame, ZSTD): pyarrow's files read equal, arrowmm's read in pyarrow,
levels, raw storage of buffers that don't shrink, lazy and parallel decompression, hostile
buffers, zero-copy reporting and ``allow_copies=False``, Schema.features, metadata V4."""
from __future__ import annotations

import io
import struct
import threading

import numpy as np
import pyarrow as pa
import pytest

from tests.support.writer_support import (CASES, FORMATS, N, assert_batches_equal, messages, to_mm,
                                          write_mm)

import arrowmm
from arrowmm.ipc.core import compression
from arrowmm._core._region import as_view
from arrowmm.errors import ArrowInvalid, ArrowNotImplementedError
from tests.support.helpers import ipc_bytes

CODECS = ("lz4", "zstd")


def all_types_table(nulls=True, n=N) -> pa.Table:
    return pa.table({name: build(n, nulls) for name, build in CASES.items()})


def pa_write(table, fmt, **options) -> bytes:
    return ipc_bytes(table, fmt=fmt, **options)


def pa_read(data, fmt) -> pa.Table:
    return (pa.ipc.open_file(pa.py_buffer(data)) if fmt == "file" else pa.ipc.open_stream(data)).read_all()


def as_pa(batch) -> pa.RecordBatch:
    return pa.record_batch(batch)  # the C data interface: every value, bit for bit


def body_buffers(data: bytes):
    """(position of each buffer of the first record batch in ``data``, its length)."""
    m = next(m for m in messages(data) if m.kind == "RecordBatch")
    return [(m.body.offset + off, size) for off, size in m.header.buffer_records.tolist()]


# -- pyarrow writes, arrowmm reads --------------------------------------------------------------

@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("codec", CODECS)
def test_pyarrow_compressed_every_type_reads_equal(codec, fmt):
    table = all_types_table()
    data = pa_write(table, fmt, compression=codec)
    reader = arrowmm.open(data)
    (batch,) = list(reader)
    assert_batches_equal(as_pa(batch), table.to_batches()[0])
    batch.validate(full=True)
    assert reader.stats.buffers_decompressed > 0
    assert not any(c.is_zero_copy for c in batch.columns if c.type != arrowmm.null())


# -- arrowmm writes, pyarrow reads ---------------------------------------------------------------

@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("codec,level", [("lz4", None), ("lz4", 9), ("zstd", None), ("zstd", 7),
                                         ("zstd", -5)])
def test_arrowmm_compressed_every_type_with_levels_reads_in_pyarrow(codec, level, fmt):
    table = all_types_table()
    (src,) = to_mm(table)
    data = write_mm([src, src.slice(3, 20)], src.schema, fmt, compression=codec, compression_level=level)
    got = pa_read(data, fmt)
    assert_batches_equal(got.to_batches()[0], table.to_batches()[0])
    assert_batches_equal(got.to_batches()[1], table.slice(3, 20).to_batches()[0])
    assert {m.header.compression for m in messages(data) if m.kind == "RecordBatch"} == {codec}
    assert arrowmm.open(data).features == ("COMPRESSED_BODY",) if fmt == "file" else True


def test_levels_change_the_output_and_are_validated(tmp_path):
    x = np.random.default_rng(3).zipf(1.5, 200_000).astype("int64") % 1000
    batch = arrowmm.record_batch({"x": x})
    import lz4.frame
    import zstandard
    reference = {"lz4": lambda raw, level: lz4.frame.compress(raw, compression_level=level,
                                                              block_linked=False),
                 "zstd": lambda raw, level: zstandard.ZstdCompressor(level=level).compress(raw)}
    payloads = set()
    for codec, level in [("lz4", 0), ("lz4", 12), ("zstd", 1), ("zstd", 19), ("zstd", -3)]:
        data = write_mm([batch], batch.schema, "stream", compression=codec, compression_level=level)
        assert pa.ipc.open_stream(data).read_all().column("x").to_numpy().tolist() == x.tolist()
        pos, size = body_buffers(data)[1]
        assert struct.unpack_from("<q", data, pos)[0] == x.nbytes
        payload = data[pos + 8:pos + size]
        assert payload == reference[codec](x.tobytes(), level), (codec, level)  # the level is used
        payloads.add(payload)
    assert len(payloads) == 5
    for codec, level in [("lz4", 17), ("lz4", -1), ("zstd", 23), ("zstd", 1.5), ("zstd", "3"),
                         ("zstd", True), (None, 3)]:
        path = tmp_path / "never.arrow"
        with pytest.raises(ArrowInvalid, match="compression_level"):
            arrowmm.new_file(path, batch.schema, compression=codec, compression_level=level)
        assert not path.exists() and not list(tmp_path.iterdir())


@pytest.mark.parametrize("codec", CODECS)
def test_buffers_that_do_not_shrink_are_stored_raw(codec):
    rng = np.random.default_rng(4)
    noise = rng.integers(0, 2**63, 50_000, dtype=np.int64)  # incompressible
    zeros = np.zeros(50_000, dtype=np.int64)
    batch = arrowmm.record_batch({"noise": noise, "zeros": zeros})
    data = write_mm([batch], batch.schema, "file", compression=codec)
    prefixes = [struct.unpack_from("<q", data, pos)[0] for pos, size in body_buffers(data) if size]
    assert prefixes == [-1, zeros.nbytes]  # validity bitmaps are empty (no nulls)
    got = pa.ipc.open_file(pa.py_buffer(data)).read_all()
    assert got.column("noise").to_numpy().tolist() == noise.tolist()
    assert got.column("zeros").to_numpy().tolist() == zeros.tolist()
    reader = arrowmm.open_file(data, allow_copies=False)  # the raw buffer is borrowed, not copied
    col = reader.get_batch(0).column("noise")
    assert col.is_zero_copy and col.to_numpy().tolist() == noise.tolist()
    with pytest.raises(ArrowInvalid, match=r"'zeros'.*decompressed"):
        reader.get_batch(0).column("zeros")


def test_lz4_frames_have_independent_blocks_and_their_content_size():
    lz4_frame = pytest.importorskip("lz4.frame")
    values = np.arange(300_000, dtype=np.int64) // 7  # several 64 KiB blocks
    batch = arrowmm.record_batch({"v": values})
    data = write_mm([batch], batch.schema, "file", compression="lz4")
    pos, size = [b for b in body_buffers(data) if b[1]][0]
    frame = data[pos + 8:pos + size]
    info = lz4_frame.get_frame_info(frame)
    assert not info["block_linked"] and info["content_size"] == values.nbytes
    assert lz4_frame.decompress(frame) == values.tobytes()


# -- lazy and parallel ----------------------------------------------------------------------------

@pytest.mark.parametrize("codec", CODECS)
def test_one_column_of_a_compressed_file_decompresses_only_that_column(codec, tmp_path):
    n = 10_000
    table = pa.table({f"c{k}": pa.array(np.arange(n, dtype=np.int64) * k) for k in range(100)})
    path = tmp_path / "wide.arrow"
    path.write_bytes(pa_write(table, "file", compression=codec))
    reader = arrowmm.open_file(path)
    batch = reader.get_batch(0)
    assert reader.stats.bytes_decompressed == 0
    assert batch.column("c57").to_numpy().tolist() == (np.arange(n) * 57).tolist()
    assert reader.stats.bytes_decompressed == n * 8  # values only: no validity bitmap
    assert reader.stats.columns_loaded == 1
    assert [batch.is_loaded(k) for k in range(100)].count(True) == 1


@pytest.mark.parametrize("codec", CODECS)
def test_parallel_and_serial_decompression_agree(codec, monkeypatch):
    n = 300_000
    rng = np.random.default_rng(1)
    table = pa.table({"a": rng.integers(0, 1000, n), "b": pa.array([str(i) for i in range(n)]),
                      "c": pa.array(rng.random(n)), "d": pa.array(rng.integers(0, 9, n), pa.int8())})
    data = pa_write(table, "stream", compression=codec)
    calls = []
    real = compression._executor

    def spy():
        calls.append(threading.current_thread().name)
        return real()
    monkeypatch.setattr(compression, "_executor", spy)
    old = compression.parallel_threads()
    try:
        compression.parallel_threads(2)
        (par,) = list(arrowmm.open_stream(data))
        par_cols = par.columns  # the batch's buffers together: enough work for threads
        assert calls, "the thread pool was not used for a batch of several MiB"
        compression.parallel_threads(1)
        calls.clear()
        (ser,) = list(arrowmm.open_stream(data))
        ser_cols = ser.columns
        assert not calls
    finally:
        compression.parallel_threads(old)
    expect = table.to_batches()[0]
    assert_batches_equal(pa.record_batch(par_cols, names=table.column_names), expect)
    assert_batches_equal(pa.record_batch(ser_cols, names=table.column_names), expect)


def test_small_work_stays_serial(monkeypatch):
    monkeypatch.setattr(compression, "_executor", lambda: pytest.fail("threads for a tiny batch"))
    table = pa.table({"a": np.arange(1000), "b": pa.array([str(i) for i in range(1000)])})
    (batch,) = list(arrowmm.open_stream(pa_write(table, "stream", compression="zstd")))
    assert pa.record_batch(batch.columns, names=["a", "b"]).equals(table.to_batches()[0])


def test_writer_compresses_in_parallel_and_output_is_deterministic(monkeypatch):
    rng = np.random.default_rng(2)
    batch = arrowmm.record_batch({k: rng.integers(0, 100, 200_000) for k in "abcd"})
    old = compression.parallel_threads()
    try:
        compression.parallel_threads(2)
        par = write_mm([batch], batch.schema, "file", compression="zstd")
        compression.parallel_threads(1)
        ser = write_mm([batch], batch.schema, "file", compression="zstd")
    finally:
        compression.parallel_threads(old)
    assert par == ser
    got = pa.ipc.open_file(pa.py_buffer(par)).read_all()
    assert all(got.column(k).to_numpy().tolist() == batch.column(k).to_numpy().tolist() for k in "abcd")


# -- hostile buffers -------------------------------------------------------------------------------

def _framed(codec, raw: bytes, declared=None) -> bytes:
    body = pa.compress(raw, codec=codec, asbytes=True)
    return struct.pack("<q", len(raw) if declared is None else declared) + body


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("raw", [bytes(range(256)) * 64, bytes(1 << 20)], ids=["ordinary", "ratio>16"])
def test_malformed_compressed_buffers(codec, raw):
    ok = _framed(codec, raw)
    got = compression.decompress_buffer(as_view(ok), codec, "b")
    assert got.to_bytes() == raw
    body = ok[8:]
    cases = {
        "negative length": struct.pack("<q", -2) + body,
        "bomb": struct.pack("<q", 2**62) + body,
        "one byte less": _framed(codec, raw, len(raw) - 1),
        "one byte more": _framed(codec, raw, len(raw) + 1),
        "garbage frame": struct.pack("<q", len(raw)) + bytes(range(7, 250)) * 3,
        "truncated frame": ok[:8 + len(body) // 2],
        "truncated prefix": ok[:5],
        "prefix only": ok[:8],
        "the other codec": struct.pack("<q", len(raw)) + pa.compress(
            raw, codec="zstd" if codec == "lz4" else "lz4", asbytes=True),
    }
    for label, data in cases.items():
        with pytest.raises(ArrowInvalid):
            compression.decompress_buffer(as_view(data), codec, label)
            pytest.fail(label)


@pytest.mark.parametrize("codec", CODECS)
def test_malformed_buffer_in_a_file_names_the_column(codec):
    table = pa.table({"ok": np.arange(5000), "bad": np.arange(5000) * 3})
    data = bytearray(pa_write(table, "file", compression=codec))
    pos, size = [b for b in body_buffers(bytes(data)) if b[1]][1]
    data[pos:pos + 8] = struct.pack("<q", 5000 * 8 + 8)  # not what the frame holds
    batch = arrowmm.open_file(bytes(data)).get_batch(0)
    assert batch.column("ok").to_numpy().tolist() == list(range(5000))
    with pytest.raises(ArrowInvalid, match=r"column 1 \('bad'\).*values"):
        batch.column("bad")


# -- zero-copy reporting and refusing copies ------------------------------------------------------

def _dict_stream_with_delta() -> bytes:
    sink = io.BytesIO()
    schema = pa.schema([("d", pa.dictionary(pa.int8(), pa.string()))])
    with pa.ipc.new_stream(sink, schema, options=pa.ipc.IpcWriteOptions(emit_dictionary_deltas=True)) as w:
        w.write_batch(pa.record_batch([pa.DictionaryArray.from_arrays([0, 1], ["a", "b"])], schema=schema))
        w.write_batch(pa.record_batch([pa.DictionaryArray.from_arrays([2, 0], ["a", "b", "c"])], schema=schema))
    return sink.getvalue()


def test_is_zero_copy_and_allow_copies(tmp_path):
    table = all_types_table()
    plain = tmp_path / "plain.arrow"
    plain.write_bytes(pa_write(table, "file"))
    reader = arrowmm.open_file(plain, allow_copies=False)
    batch = reader.get_batch(0)
    assert all(c.is_zero_copy for c in batch.columns)
    assert reader.stats.buffers_copied == 0
    for codec in CODECS:
        small = table.select(["bool", "int64"])
        reader = arrowmm.open_file(pa_write(small, "file", compression=codec), allow_copies=False)
        with pytest.raises(ArrowInvalid, match=rf"column 1 \('int64'\): validity bitmap \(buffer 2\): would "
                                               rf"have to be decompressed \({codec}\).*allow_copies=False"):
            reader.get_batch(0).column(1)
        with pytest.raises(ArrowInvalid, match=r"'dictionary'.*decompressed.*allow_copies=False"):
            arrowmm.open_file(pa_write(table, "file", compression=codec), allow_copies=False).get_batch(0)
    # misaligned memory: the buffers start at odd addresses, so they are copied to be aligned
    odd = bytearray(len(plain.read_bytes()) + 1)
    odd[1:] = plain.read_bytes()
    view = memoryview(odd)[1:]
    copied = arrowmm.open_file(view).get_batch(0)
    col = copied.column("int64")
    assert not col.is_zero_copy and col.to_pylist() == table.column("int64").to_pylist()
    from arrowmm.ipc.read.loader import copy_reason
    assert copy_reason(col) == "re-aligned"
    with pytest.raises(ArrowInvalid, match=r"'dictionary'.*aligned memory.*allow_copies=False"):
        arrowmm.open_file(view, allow_copies=False).get_batch(0)  # dictionaries load first
    # a delta dictionary is concatenated: a copy
    stream = _dict_stream_with_delta()
    assert len(list(arrowmm.open_stream(stream))) == 2
    with pytest.raises(ArrowInvalid, match="delta.*allow_copies=False"):
        list(arrowmm.open_stream(stream, allow_copies=False))


def test_is_zero_copy_looks_at_children_and_dictionaries():
    table = pa.table({"l": pa.array([[1, 2], [3]]), "d": pa.array(["x", "y"]).dictionary_encode()})
    (batch,) = list(arrowmm.open_stream(pa_write(table, "stream", compression="zstd")))
    lst, dic = batch.columns
    assert not lst.is_zero_copy and not lst.children[0].is_zero_copy
    assert not dic.is_zero_copy and not dic.dictionary.is_zero_copy
    (plain,) = list(arrowmm.open_stream(pa_write(table, "stream")))
    assert all(c.is_zero_copy for c in plain.columns)


def test_a_dictionary_joined_from_deltas_is_reported_as_a_copy():
    first = pa.record_batch({"d": pa.DictionaryArray.from_arrays(pa.array([0, 1], pa.int32()),
                                                                  pa.array(["x", "y"]))})
    second = pa.record_batch({"d": pa.DictionaryArray.from_arrays(pa.array([2, 0], pa.int32()),
                                                                   pa.array(["x", "y", "z"]))})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, first.schema, options=pa.ipc.IpcWriteOptions(emit_dictionary_deltas=True)) as w:
        w.write_batch(first)
        w.write_batch(second)
    a, b = list(arrowmm.open_stream(sink.getvalue().to_pybytes()))
    assert a.column("d").is_zero_copy  # one dictionary batch: borrowed
    assert not b.column("d").is_zero_copy  # dictionary + delta: joined into new memory
    assert b.column("d").to_pylist() == ["z", "x"]


# -- Schema.features ----------------------------------------------------------------------------------

def test_features_written_and_read():
    table = pa.table({"d": pa.array(["x", "y"]).dictionary_encode(), "i": [1, 2]})
    (src,) = to_mm(table)
    cases = [("stream", {}, ("DICTIONARY_REPLACEMENT",)),
             ("stream", {"compression": "lz4"}, ("DICTIONARY_REPLACEMENT", "COMPRESSED_BODY")),
             ("stream", {"allow_dictionary_replacement": False}, ()),
             ("file", {}, ()),  # files never replace dictionaries
             ("file", {"compression": "zstd"}, ("COMPRESSED_BODY",))]
    for fmt, options, want in cases:
        data = write_mm([src], src.schema, fmt, **options)
        assert arrowmm.open(data).features == want, (fmt, options)
        assert pa_read(data, fmt).equals(table)  # pyarrow reads the declared features
    assert arrowmm.open(pa_write(table, "stream", compression="lz4")).features == ()  # C++ writes none
    plain = write_mm([to_mm(pa.table({"i": [1]}))[0]], arrowmm.schema([("i", arrowmm.int64())]), "stream")
    assert arrowmm.open(plain).features == ()


def test_unknown_feature_is_refused():
    batch = arrowmm.record_batch({"i": [1, 2]})
    data = write_mm([batch], batch.schema, "stream", compression="lz4")
    vector = struct.pack("<Iq", 1, 2)  # features: [COMPRESSED_BODY], in the first message
    assert data.find(vector) < int.from_bytes(data[4:8], "little") + 8
    bad = data.replace(vector, struct.pack("<Iq", 1, 9), 1)
    with pytest.raises(ArrowNotImplementedError, match="feature 9"):
        arrowmm.open_stream(bad)


# -- metadata version V4 ----------------------------------------------------------------------------

V4_TYPES = ["sparse_union", "dense_union", "run_end_encoded<int32, float64>", "struct", "int32",
            "string", "dictionary<string, int16>", "list<int32>"]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("codec", [None, "lz4", "zstd"])
def test_v4_written_by_arrowmm_reads_in_pyarrow(codec, fmt):
    table = pa.table({name: CASES[name](N, True) for name in V4_TYPES})
    (src,) = to_mm(table)
    data = write_mm([src, src.slice(5, 9)], src.schema, fmt, compression=codec, metadata_version="V4")
    msgs = messages(data)
    assert {m.record.version for m in msgs} == {arrowmm.format.MetadataVersion.V4}
    assert pa_read(data, fmt).equals(pa.concat_tables([table, table.slice(5, 9)]))
    # the union and run-end encoded columns carry an (empty) validity slot, as pyarrow's V4 does
    ref = pa_write(table, "stream", metadata_version=pa.ipc.MetadataVersion.V4)
    mine = next(m for m in msgs if m.kind == "RecordBatch")
    theirs = next(m for m in messages(ref) if m.kind == "RecordBatch")
    assert len(mine.header.buffer_records) == len(theirs.header.buffer_records)
    got = list(arrowmm.open(data))
    assert_batches_equal(as_pa(got[1]), table.slice(5, 9).to_batches()[0])
    assert got[0].metadata is None  # the V4 codec key is consumed, not reported


@pytest.mark.parametrize("fmt", FORMATS)
def test_v4_written_by_pyarrow_reads_in_arrowmm(fmt):
    table = pa.table({name: CASES[name](N, True) for name in V4_TYPES})
    data = pa_write(table, fmt, metadata_version=pa.ipc.MetadataVersion.V4)
    assert {m.record.version for m in messages(data)} == {arrowmm.format.MetadataVersion.V4}
    (batch,) = list(arrowmm.open(data))
    assert_batches_equal(as_pa(batch), table.to_batches()[0])


@pytest.mark.parametrize("codec", CODECS)
def test_v4_compressed_the_arrow_0_17_way(codec):
    """Arrow 0.17 named the codec of a V4 message in its custom metadata."""
    table = pa.table({"x": np.arange(1000), "s": pa.array([str(i) for i in range(1000)])})
    sink = io.BytesIO()
    opts = pa.ipc.IpcWriteOptions(metadata_version=pa.ipc.MetadataVersion.V4, compression=codec)
    with pa.ipc.new_stream(sink, table.schema, options=opts) as w:
        w.write_batch(table.to_batches()[0],
                      custom_metadata={"ARROW:experimental_compression": codec.upper(), "k": "v"})
    (batch,) = list(arrowmm.open_stream(sink.getvalue()))
    assert batch.to_pydict() == table.to_pydict()
    assert batch.metadata == {"k": "v"}


def test_metadata_version_is_validated():
    batch = arrowmm.record_batch({"i": [1]})
    for bad in ("V3", "v6", 5, None):
        with pytest.raises(ArrowInvalid, match="metadata_version"):
            arrowmm.new_stream(io.BytesIO(), batch.schema, metadata_version=bad)


@pytest.mark.parametrize("codec", CODECS)
def test_buffers_stored_raw_count_as_zero_copy(codec, tmp_path):
    """A buffer that did not shrink is stored raw (length prefix -1) and read in place: the
    counters (stats, memory()) say no decompression happened for it, and the array says
    zero-copy; the compressed column beside it is counted."""
    n = 50_000
    noise = np.random.default_rng(5).integers(-2**63, 2**63 - 1, n, dtype=np.int64)
    path = tmp_path / "raw.arrow"
    schema = arrowmm.schema([("noise", arrowmm.int64()), ("steps", arrowmm.int64())])
    with arrowmm.new_file(str(path), schema, compression=codec) as w:  # stores noise raw
        w.write({"noise": noise, "steps": np.arange(n, dtype=np.int64)})
    reader = arrowmm.open_file(path)
    batch = reader.get_batch(0)
    column = batch.column("noise")
    assert np.array_equal(column.to_numpy(), noise)
    assert column.is_zero_copy
    assert reader.stats.buffers_decompressed == reader.stats.bytes_decompressed == 0
    assert reader.memory()["decompressed"] == 0
    assert np.array_equal(batch.column("steps").to_numpy(), np.arange(n))
    assert not batch.column("steps").is_zero_copy
    assert reader.stats.buffers_decompressed == 1
    assert reader.stats.bytes_decompressed == reader.memory()["decompressed"] == n * 8


@pytest.mark.parametrize("codec", ["lz4", "zstd"])
def test_an_empty_buffer_stored_as_its_bare_length_prefix_is_empty(codec):
    """Arrow Java compresses an empty buffer to its 8-byte prefix declaring 0, with no codec
    frame after it (pyarrow reads such files); it decompresses to nothing, not to an error."""
    out = compression.decompress_payload(as_view(struct.pack("<q", 0)), codec, "buffer")
    assert bytes(out) == b""
