"""Reader behaviour: laziness, zero-copy, lifetime, sniffing, real pipes and shared memory."""
import gc
import io
import subprocess
import sys
import textwrap
import weakref
from multiprocessing import shared_memory

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from tests.support.helpers import write_ipc


def _write(path, table, stream=False, chunk=100, **opts):
    return write_ipc(path, table.to_batches(max_chunksize=chunk), schema=table.schema,
                     fmt="stream" if stream else "file", options=pa.ipc.IpcWriteOptions(**opts))


@pytest.fixture
def wide_file(tmp_path):
    rng = np.random.default_rng(0)
    table = pa.table({f"c{i}": rng.random(300) for i in range(20)}
                     | {"s": pa.array([f"v{i}" for i in range(300)])})
    return _write(tmp_path / "wide.arrow", table), table


def test_open_reads_no_batch(wide_file):
    path, table = wide_file
    reader = arrowmm.open_file(path)
    assert reader.num_record_batches == 3
    assert reader.stats.columns_loaded == 0
    assert reader.schema.names == table.schema.names


def test_columns_decode_only_when_touched(wide_file):
    path, _ = wide_file
    reader = arrowmm.open_file(path)
    batch = reader.get_batch(1)
    assert reader.stats.columns_loaded == 0
    assert not any(batch.is_loaded(k) for k in range(batch.num_columns))
    batch.column("c7")
    assert reader.stats.columns_loaded == 1
    assert [batch.is_loaded(k) for k in range(batch.num_columns)].count(True) == 1
    batch.column(7)  # the same column again: cached, not decoded twice
    assert reader.stats.columns_loaded == 1


def test_to_numpy_is_a_view_into_the_mapping(wide_file):
    path, table = wide_file
    reader = arrowmm.open_file(path)
    values = reader.get_batch(2).column("c3").to_numpy()
    start, size = reader._region.address, reader._region.size
    assert start <= values.ctypes.data < start + size
    assert not values.flags.writeable
    np.testing.assert_array_equal(values, table.slice(200, 100).column("c3").to_numpy())
    assert reader.stats.bytes_copied == 0


def test_views_survive_reader_close_and_gc(wide_file):
    path, table = wide_file
    reader = arrowmm.open_file(path)
    batch = reader.get_batch(0)
    column = batch.column("s")
    values = batch.column("c0").to_numpy()
    region_ref = weakref.ref(reader._region)
    reader.close()
    del reader, batch
    gc.collect()
    assert region_ref() is not None  # still mapped: views hold it
    np.testing.assert_array_equal(values, table.slice(0, 100).column("c0").to_numpy())
    assert column.to_pylist() == table.slice(0, 100).column("s").to_pylist()
    del values, column
    gc.collect()
    assert region_ref() is None  # the last view gone: unmapped


def test_closed_reader_refuses_reads(wide_file):
    reader = arrowmm.open_file(wide_file[0])
    reader.close()
    reader.close()  # idempotent
    with pytest.raises(arrowmm.ArrowInvalid, match="closed"):
        reader.get_batch(0)


def test_get_batch_indices(wide_file):
    path, table = wide_file
    with arrowmm.open_file(path) as reader:
        assert reader.get_batch(-1).column("c1").to_pylist() == table.slice(200, 100).column("c1").to_pylist()
        with pytest.raises(IndexError):
            reader.get_batch(3)
        with pytest.raises(IndexError):
            reader.get_batch(-4)
        assert [b.num_rows for b in reader] == [100, 100, 100]


def test_open_from_buffers_is_zero_copy(wide_file):
    path, _ = wide_file
    data = bytearray(path.read_bytes())
    reader = arrowmm.open_file(data)
    values = reader.get_batch(0).column("c2").to_numpy()
    base = np.frombuffer(data, dtype=np.uint8).ctypes.data
    assert base <= values.ctypes.data < base + len(data)


@pytest.mark.parametrize("stream,legacy", [(False, False), (True, False), (True, True)])
def test_open_sniffs_the_format(tmp_path, stream, legacy):
    table = pa.table({"x": list(range(10))})
    path = _write(tmp_path / "t", table, stream=stream, use_legacy_format=legacy)
    with arrowmm.open(path) as reader:
        assert isinstance(reader, arrowmm.StreamReader if stream else arrowmm.FileReader)
        assert [v for b in reader for v in b.column("x").to_pylist()] == list(range(10))
    with open(path, "rb") as f, arrowmm.open(f) as reader:
        assert [v for b in reader for v in b.column("x").to_pylist()] == list(range(10))


def test_read_next_batch_stops(tmp_path):
    path = _write(tmp_path / "s", pa.table({"x": [1, 2, 3]}), stream=True)
    with open(path, "rb") as f:
        reader = arrowmm.open_stream(f)
        assert reader.read_next_batch().column(0).to_pylist() == [1, 2, 3]
        with pytest.raises(StopIteration):
            reader.read_next_batch()


def test_stream_from_a_real_subprocess_pipe():
    """A child process writes a stream to its stdout; we read it incrementally."""
    code = textwrap.dedent("""
        import sys, pyarrow as pa
        s = pa.schema([("i", pa.int64()), ("t", pa.string())])
        with pa.ipc.new_stream(sys.stdout.buffer, s) as w:
            for k in range(50):
                w.write_batch(pa.record_batch([pa.array(range(k, k + 1000)),
                                               pa.array([str(k)] * 1000)], schema=s))
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    try:
        reader = arrowmm.open_stream(proc.stdout)
        total, count = 0, 0
        for batch in reader:
            total += int(batch.column("i").to_numpy().sum())
            assert batch.column("t")[0] == str(count)
            count += 1
    finally:
        proc.stdout.close()
        proc.wait(timeout=60)
    assert count == 50
    assert total == sum(sum(range(k, k + 1000)) for k in range(50))


def test_shared_memory_between_processes(tmp_path):
    """A child writes an IPC file into shared memory; the parent reads it zero-copy."""
    code = textwrap.dedent("""
        import sys, io, numpy as np, pyarrow as pa
        from multiprocessing import shared_memory, resource_tracker
        sink = io.BytesIO()
        t = pa.table({"v": np.arange(100_000, dtype=np.int64)})
        with pa.ipc.new_file(sink, t.schema) as w:
            w.write_table(t, max_chunksize=25_000)
        data = sink.getvalue()
        shm = shared_memory.SharedMemory(create=True, size=len(data))
        resource_tracker.unregister(shm._name, "shared_memory")  # the parent owns it now
        shm.buf[:len(data)] = data
        print(shm.name, len(data))
        shm.close()
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    name, size = out.stdout.split()
    shm = shared_memory.SharedMemory(name=name)
    try:
        reader = arrowmm.open_file(shm.buf[:int(size)])
        values = [reader.get_batch(i).column("v").to_numpy() for i in range(reader.num_record_batches)]
        base = np.frombuffer(shm.buf, dtype=np.uint8).ctypes.data
        assert all(base <= v.ctypes.data < base + shm.size for v in values)
        assert sum(int(v.sum()) for v in values) == sum(range(100_000))
        del values, reader
        gc.collect()
    finally:
        shm.close()
        shm.unlink()


def test_batch_slice_and_conversions(wide_file):
    path, table = wide_file
    batch = arrowmm.open_file(path).get_batch(0)
    sliced = batch.slice(10, 5)
    assert sliced.num_rows == 5
    expected = table.slice(10, 5)
    assert sliced.to_pydict() == expected.to_pydict()
    assert sliced.to_pylist() == expected.to_pylist()
    assert sliced["s"].to_pylist() == expected.column("s").to_pylist()
    with pytest.raises(KeyError):
        batch.column("nope")


def test_file_opened_as_stream_and_recovered(tmp_path):
    """A file read as a stream; a file cut mid-way recovers its complete batches."""
    table = pa.table({"x": list(range(1000))})
    path = _write(tmp_path / "f.arrow", table, chunk=100)
    with arrowmm.open_stream(path) as reader:
        assert sum(b.num_rows for b in reader) == 1000
    data = path.read_bytes()
    cut = tmp_path / "cut.arrow"
    cut.write_bytes(data[:len(data) // 2])
    with pytest.raises(arrowmm.ArrowInvalid):
        arrowmm.open_file(cut)
    with pytest.raises(arrowmm.ArrowInvalid):
        list(arrowmm.open_stream(cut))
    reader = arrowmm.open_stream(cut, recover=True)
    got = [v for b in reader for v in b.column("x").to_pylist()]
    assert 0 < len(got) < 1000 and got == list(range(len(got)))
    assert reader.recovery_error


def test_compressed_buffers_are_counted(tmp_path):
    table = pa.table({"x": np.arange(10_000), "s": [str(i) for i in range(10_000)]})
    path = _write(tmp_path / "z.arrow", table, compression="zstd")
    reader = arrowmm.open_file(path)
    assert reader.get_batch(0).column("x").to_pylist() == list(range(100))
    assert reader.stats.buffers_decompressed > 0


def test_stream_decoder_in_random_chunks(tmp_path):
    table = pa.table({"x": list(range(500)), "s": [str(i) for i in range(500)]})
    data = _write(tmp_path / "s", table, stream=True).read_bytes()
    rng = np.random.default_rng(7)
    decoder = arrowmm.ipc.core.framing.MessageDecoder()
    messages, pos = [], 0
    while pos < len(data):
        step = int(rng.integers(1, 40))
        messages += decoder.feed(data[pos:pos + step])
        pos += step
    decoder.finish()
    assert decoder.eos
    assert [m.kind for m in messages] == ["Schema"] + ["RecordBatch"] * 5


def test_open_maps_a_real_file_object(wide_file):
    """arrowmm.open(f) on a real file maps it rather than reading it into memory."""
    path, table = wide_file
    with open(path, "rb") as f:
        reader = arrowmm.open(f)
        values = reader.get_batch(1).column("c4").to_numpy()
    assert isinstance(reader, arrowmm.FileReader)
    assert reader._region.description == str(path)
    np.testing.assert_array_equal(values, table.slice(100, 100).column("c4").to_numpy())


def test_unbacked_rows_convert_up_to_the_cap(monkeypatch):
    """Rows no buffer backs convert normally, and past MAX_UNBACKED_ROWS raise ArrowInvalid."""
    import arrowmm.arrays.base as arrays  # (where the cap is read)
    batch = arrowmm.record_batch({"n": arrowmm.array([None] * 5)})
    assert batch.column("n").to_pylist() == [None] * 5
    monkeypatch.setattr(arrays, "MAX_UNBACKED_ROWS", 4)
    with pytest.raises(arrowmm.ArrowInvalid, match="5 rows with no data behind them"):
        batch.column("n").to_pylist()
    assert batch.column("n").slice(1).to_pylist() == [None] * 4


@pytest.mark.parametrize("batches", [0, 1, 3])
def test_open_stream_of_a_file_without_end_of_stream_marker(tmp_path, batches):
    """Arrow Go writes IPC files with no end-of-stream marker before the footer: read as a
    stream, such a file ends at its footer (as the file's own index says), not in an error."""
    table = pa.table({"x": np.arange(10, dtype=np.int64), "s": [f"v{i}" for i in range(10)]})
    sink = io.BytesIO()
    with pa.ipc.new_file(sink, table.schema) as w:
        for b in range(batches):
            w.write_table(table.slice(b, 5))
    data = sink.getvalue()
    footer_len = int.from_bytes(data[-10:-6], "little")
    footer_start = len(data) - 10 - footer_len
    assert data[footer_start - 8:footer_start] == b"\xff\xff\xff\xff\x00\x00\x00\x00"
    no_eos = data[:footer_start - 8] + data[footer_start:]  # the footer's offsets still hold
    expected = pa.ipc.open_file(pa.py_buffer(no_eos)).read_all()
    assert expected.num_rows == 5 * batches
    path = tmp_path / "go.arrow"
    path.write_bytes(no_eos)
    for source in (no_eos, str(path)):
        got = list(arrowmm.open_stream(source))
        assert len(got) == batches
        assert [b.to_pydict() for b in got] == [b.to_pydict() for b in expected.to_batches()]
        assert pa.table(arrowmm.open_stream(source)).equals(expected)  # the C stream export
    assert arrowmm.open_file(str(path)).num_record_batches == batches
