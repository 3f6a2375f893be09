"""The ceilings of ``benchmarks/bench_machine.py`` do the work they stand for: the compressed
buffers it finds in a pyarrow-written file are all of them and decode to pyarrow's values, a
decompression that comes out short or long is refused, and the page-cache and pipe readers
read every byte (a ceiling that skipped work would make every reader look slow).  About 5 s
on a loaded machine."""
from __future__ import annotations

import bench_machine as machine  # (benchmarks/ is on pytest's pythonpath)
import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")


def _write(path, codec, batches=3, rows=20_000):
    ints = np.arange(batches * rows, dtype=np.int64)
    floats = np.round(np.linspace(0, 1000, batches * rows), 2)
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(
            sink, pa.schema({"i": pa.int64(), "f": pa.float64(), "s": pa.string()}),
            options=pa.ipc.IpcWriteOptions(compression=codec)) as w:
        for b in range(batches):
            part = slice(b * rows, (b + 1) * rows)
            w.write_batch(pa.record_batch({"i": ints[part], "f": floats[part],
                                           "s": [f"v{k % 97}" for k in range(rows)]}))
    return ints, floats


@pytest.mark.parametrize("codec", ["zstd", "lz4"])
def test_every_compressed_buffer_is_found_and_decodes_to_pyarrows_values(tmp_path, codec):
    path = tmp_path / f"f.{codec}.arrow"
    ints, floats = _write(path, codec)
    bufs = machine.compressed_buffers(path)
    assert bufs.codec == codec
    decoded = [bytes(out) for out in machine.decompressor(bufs, 2).outputs]
    assert [len(d) for d in decoded] == bufs.sizes
    # (each batch's int and float data buffers, and its string offsets and bytes, are there)
    want = pa.ipc.open_file(pa.memory_map(str(path))).read_all()
    for column in want.columns:
        for chunk in column.chunks:
            for buf in chunk.buffers():
                if buf is not None and buf.size:
                    assert buf.to_pybytes() in decoded
    assert bufs.raw == 0  # (none of these buffers was worth storing uncompressed)
    assert ints[:20_000].tobytes() in decoded and floats[-20_000:].tobytes() in decoded
    for threads in (1, 2):
        assert machine.decompressor(bufs, threads)() == bufs.decoded == sum(bufs.sizes)


@pytest.mark.parametrize("codec", ["zstd", "lz4"])
@pytest.mark.parametrize("off_by", [1, -1])
def test_a_decompression_of_another_size_is_refused(tmp_path, codec, off_by):
    path = tmp_path / "f.arrow"
    _write(path, codec)
    bufs = machine.compressed_buffers(path)
    bufs.sizes[0] += off_by  # (as if a frame held a byte less, or more, than declared)
    with pytest.raises(ValueError, match="decoded to"):
        machine.decompressor(bufs, 2)


def test_files_without_compressed_buffers_are_refused(tmp_path):
    plain = tmp_path / "plain.arrow"
    _write(plain, None)
    with pytest.raises(ValueError, match="no compressed record batch"):
        machine.compressed_buffers(plain)
    other = tmp_path / "other.bin"
    other.write_bytes(b"PAR1" + bytes(100))
    with pytest.raises(ValueError, match="not an Arrow IPC file"):
        machine.compressed_buffers(other)


def test_the_page_cache_and_pipe_readers_read_every_byte(tmp_path):
    path = tmp_path / "bytes.bin"
    path.write_bytes(np.random.default_rng(0).bytes(3 << 20))
    assert machine.file_reader(path)() == 3 << 20
    assert machine.memcpy(1 << 20)() == 1 << 20
    assert machine.raw_pipe(path) > 0  # (it raises when the pipe gives another count)
