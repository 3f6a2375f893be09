"""arrowmm's writers against the outside world: sinks, crashes, copies, pyarrow's and Arrow C++'s files.

* sinks: paths, ``io.BytesIO``, pipes read by a thread, socket files (each batch reaches the
  reader before the next is written), raw files that take a few bytes per ``write``;
* crash safety: an exception inside ``with new_file(path)``, a failing ``close``, a writer
  process SIGKILLed between batches or in the middle of one (synchronised through its stdout,
  never by timing): nothing under the target name, and the temporary file beside it recovers
  exactly the batches completed before the kill;
* no copies: a ~200 MB mapped batch is written with a few MB of Python allocations at most;
* pyarrow's streams and files (deltas, compression, batch metadata) and every Arrow C++ 21 gold
  file, read by arrowmm and written again, read back in pyarrow equal to the original.
"""
from __future__ import annotations

import io
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import tracemalloc
from pathlib import Path
from queue import Empty, Queue

import numpy as np
import pyarrow as pa
import pytest

from tests.support import integration_json as ij
from tests.support.helpers import assert_batch_matches
from tests.support.writer_support import (CASES, FORMATS, N, assert_batches_equal,
                                          dictionary_messages, open_writer, pa_read_bytes, to_mm,
                                          write_mm)

import arrowmm
import arrowmm.ipc.write.writer


def _sample(n_batches=5, rows=N):
    """pyarrow batches whose dictionary grows (deltas), with strings, nulls and a struct."""
    out = []
    for k in range(n_batches):
        words = [f"w{j}" for j in range(k + 2)]
        d = pa.DictionaryArray.from_arrays(pa.array([(i + k) % len(words) for i in range(rows)], pa.int16()),
                                           pa.array(words))
        out.append(pa.record_batch({"d": d, "s": CASES["string"](rows, True),
                                    "n": pa.array(range(k, k + rows)), "st": CASES["struct"](rows, True)}))
    return out


def _temporaries(folder):
    return sorted(p for p in Path(folder).iterdir() if p.name.endswith(".arrowmm-tmp"))


# -- sinks -----------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("as_str", [True, False], ids=["str", "Path"])
def test_path_sink(tmp_path, fmt, as_str):
    src = _sample()
    mm = to_mm(src)
    path = tmp_path / f"out.{fmt}"
    with open_writer(str(path) if as_str else path, mm[0].schema, fmt, emit_dictionary_deltas=True) as w:
        for b in mm:
            w.write(b)
    assert _temporaries(tmp_path) == []
    _, got, _ = pa_read_bytes(path.read_bytes(), fmt)
    for a, b in zip(got, src, strict=True):
        assert_batches_equal(a, b)
    reader = arrowmm.open(str(path))
    for a, b in zip(reader, src, strict=True):
        assert_batch_matches(a, b, deep=False)


def test_file_permissions_follow_the_umask(tmp_path):
    mm = to_mm(_sample(1))
    with arrowmm.new_file(tmp_path / "out.arrow", mm[0].schema) as w:
        w.write(mm[0])
    (tmp_path / "plain").write_bytes(b"")
    mode = stat.S_IMODE((tmp_path / "out.arrow").stat().st_mode)
    assert mode == stat.S_IMODE((tmp_path / "plain").stat().st_mode), oct(mode)


def test_existing_file_is_replaced_only_on_close(tmp_path):
    path = tmp_path / "out.arrow"
    path.write_bytes(b"old contents")
    mm = to_mm(_sample(2))
    w = arrowmm.new_file(path, mm[0].schema, emit_dictionary_deltas=True)
    w.write(mm[0])
    assert path.read_bytes() == b"old contents"
    w.write(mm[1])
    w.close()
    assert pa.ipc.open_file(str(path)).num_record_batches == 2
    assert _temporaries(tmp_path) == []


def _consume(reader_file, out: Queue):
    """Read a stream in a thread; each batch (or the error) goes to ``out`` as it arrives."""
    def run():
        try:
            with arrowmm.open_stream(reader_file) as r:
                for b in r:
                    out.put(b.to_pylist())
            out.put(StopIteration)
        except Exception as exc:  # noqa: BLE001  (reported to the test through the queue)
            out.put(exc)
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("buffering", [0, -1], ids=["raw-writev", "buffered"])
def test_pipe_sink_read_by_a_thread(buffering):
    big = pa.record_batch({"x": pa.array(np.arange(300_000)),
                           "s": pa.array(["p" * (i % 50) for i in range(300_000)])})
    src = [big, big.slice(7, 1001), _sample(1)[0].select([1, 2]).rename_columns(["s", "x"]).select([1, 0])]
    src = [b.cast(big.schema) for b in src]
    mm = to_mm(src)
    r, w = os.pipe()
    got = Queue()
    thread = _consume(os.fdopen(r, "rb"), got)
    with os.fdopen(w, "wb", buffering=buffering) as sink:
        with arrowmm.new_stream(sink, mm[0].schema) as writer:  # > 64 KiB: partial pipe writes
            for b in mm:
                writer.write(b)
    results = [got.get(timeout=60) for _ in range(len(src) + 1)]
    thread.join(10)
    assert results[-1] is StopIteration, results[-1]
    assert results[:-1] == [b.to_pylist() for b in src]


def test_socket_sink_delivers_each_batch_before_the_next():
    mm = to_mm(_sample(4))
    a, b = socket.socketpair()
    got = Queue()
    thread = _consume(b.makefile("rb"), got)
    sink = a.makefile("wb")
    with arrowmm.new_stream(sink, mm[0].schema) as w:
        for k, batch in enumerate(mm):
            w.write(batch)
            try:  # the reader must see this batch while the writer is still open
                assert got.get(timeout=20) == batch.to_pylist(), f"batch {k}"
            except Empty:
                pytest.fail(f"batch {k} did not reach the reader: the writer did not flush it")
    assert got.get(timeout=20) is StopIteration  # end-of-stream flushed by close()
    sink.close()
    a.close()
    thread.join(10)
    b.close()


class _Trickle(io.RawIOBase):
    """A raw file whose ``write`` takes at most 7 bytes, as a non-blocking socket may."""

    def __init__(self):
        self.data = bytearray()

    def writable(self):
        return True

    def write(self, b):
        chunk = bytes(memoryview(b)[:7])
        self.data += chunk
        return len(chunk)


@pytest.mark.parametrize("fmt", FORMATS)
def test_short_writes_are_resumed(fmt):
    src = _sample(3)
    mm = to_mm(src)
    sink = _Trickle()
    with open_writer(sink, mm[0].schema, fmt, emit_dictionary_deltas=True) as w:
        for b in mm:
            w.write(b)
    assert bytes(sink.data) == write_mm(mm, mm[0].schema, fmt, emit_dictionary_deltas=True)
    _, got, _ = pa_read_bytes(bytes(sink.data), fmt)
    assert [b.to_pylist() for b in got] == [b.to_pylist() for b in src]


# -- crash safety ----------------------------------------------------------------------------

def test_exception_inside_with_leaves_nothing(tmp_path):
    mm = to_mm(_sample(2))
    path = tmp_path / "out.arrow"
    with pytest.raises(RuntimeError, match="boom"):
        with arrowmm.new_file(path, mm[0].schema) as w:
            w.write(mm[0])
            assert len(_temporaries(tmp_path)) == 1
            raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []
    path.write_bytes(b"keep me")
    with pytest.raises(arrowmm.ArrowInvalid):
        with arrowmm.new_file(path, mm[0].schema) as w:
            w.write(to_mm(pa.table({"other": [1]}))[0])  # schema mismatch inside with
    assert path.read_bytes() == b"keep me" and _temporaries(tmp_path) == []


def test_failing_close_leaves_nothing(tmp_path, monkeypatch):
    mm = to_mm(_sample(1))

    def broken_footer(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(arrowmm.ipc.write.writer, "encode_footer", broken_footer)
    w = arrowmm.new_file(tmp_path / "out.arrow", mm[0].schema)
    w.write(mm[0])
    with pytest.raises(OSError, match="disk full"):
        w.close()
    w.close()
    assert list(tmp_path.iterdir()) == []


def test_fsync_syncs_the_file_and_its_folder(tmp_path, monkeypatch):
    synced = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(stat.S_ISDIR(os.fstat(fd).st_mode)), real(fd)))
    mm = to_mm(_sample(1))
    with arrowmm.new_file(tmp_path / "out.arrow", mm[0].schema, fsync=True) as w:
        w.write(mm[0])
    assert synced == [False, True]
    assert pa.ipc.open_file(str(tmp_path / "out.arrow")).num_record_batches == 1


_CHILD = r"""
import os, sys
import arrowmm
target, source, n, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
src = arrowmm.open_file(source)
w = arrowmm.new_file(target, src.schema)
for i in range(n):
    w.write(src.get_batch(i))
    print("wrote", i, flush=True)
if mode == "torn":  # the next message reaches the file half written, then the kill comes
    def torn(fd, views):
        data = b"".join(bytes(v) for v in views)
        os.write(fd, data[: len(data) // 2])
        print("torn", flush=True)
        sys.stdin.read()
    os.writev = torn
    w.write(src.get_batch(n))
print("waiting", flush=True)
sys.stdin.read()
"""


@pytest.mark.parametrize("mode", ["between", "torn"])
@pytest.mark.parametrize("n", [0, 1, 4])
def test_killed_writer_leaves_a_recoverable_temporary(tmp_path, n, mode):
    src = _sample(6)
    source = tmp_path / "source.arrow"
    with pa.ipc.new_file(str(source), src[0].schema,
                         options=pa.ipc.IpcWriteOptions(emit_dictionary_deltas=True)) as w:
        for b in src:
            w.write_batch(b)
    out = tmp_path / "out"
    out.mkdir()
    target = out / "data.arrow"
    proc = subprocess.Popen([sys.executable, "-c", _CHILD, str(target), str(source), str(n), mode],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        lines = []
        while not lines or lines[-1] not in ("waiting", "torn"):
            line = proc.stdout.readline()
            assert line, f"writer process ended early (exit {proc.wait()}): {lines}"
            lines.append(line.strip())
        assert lines[:-1] == [f"wrote {i}" for i in range(n)]
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdin.close()
        proc.stdout.close()
    assert not target.exists()
    (tmp,) = _temporaries(out)
    assert tmp.name.startswith(".data.arrow.")
    reader = arrowmm.open_stream(str(tmp), recover=True)
    got = list(reader)
    assert len(got) == n, reader.recovery_error
    for a, b in zip(got, src):
        assert_batch_matches(a, b, deep=False)
    assert (reader.recovery_error is not None) == (mode == "torn")
    with pytest.raises(arrowmm.ArrowInvalid):  # and it is no IPC file
        arrowmm.open_file(str(tmp))


# -- no copies -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def big_file(tmp_path_factory):
    """~220 MB IPC file: 5M rows of int64 (with nulls), float64 and 24-byte strings."""
    n, width = 5_000_000, 24
    rng = np.random.default_rng(0)
    ints = pa.array(np.arange(n, dtype=np.int64), mask=rng.random(n) < 0.1)
    floats = pa.array(rng.random(n))
    offsets = pa.py_buffer(np.arange(0, (n + 1) * width, width, dtype=np.int32))
    strings = pa.StringArray.from_buffers(n, offsets, pa.py_buffer(b"0123456789abcdefghijklmn" * n))
    path = tmp_path_factory.mktemp("big") / "big.arrow"
    batch = pa.record_batch([ints, floats, strings], names=["i", "f", "s"])
    with pa.ipc.new_file(str(path), batch.schema) as w:
        w.write_batch(batch)
    return path


@pytest.mark.parametrize("fmt", FORMATS)
def test_writing_a_mapped_batch_copies_nothing(tmp_path, big_file, fmt):
    assert big_file.stat().st_size > 200 * 2**20
    reader = arrowmm.open_file(str(big_file))
    out = tmp_path / f"copy.{fmt}"
    tracemalloc.start()
    try:
        batch = reader.get_batch(0)
        with open_writer(out, reader.schema, fmt) as w:
            w.write(batch)
            w.write(batch.slice(8 * 1001, 4096 * 8))  # byte-aligned slice: views, no re-basing
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    print(f"peak Python allocations while writing: {peak / 2**20:.2f} MB")
    assert peak < 3 * 2**20, f"peak Python allocations {peak / 2**20:.1f} MB while writing"
    with pa.memory_map(str(out)) as source, pa.memory_map(str(big_file)) as original:
        mine = pa.ipc.open_file(source) if fmt == "file" else pa.ipc.open_stream(source)
        theirs = pa.ipc.open_file(original).get_batch(0)
        first, second = list(mine) if fmt == "stream" else [mine.get_batch(0), mine.get_batch(1)]
        assert first.equals(theirs)
        assert second.equals(theirs.slice(8 * 1001, 4096 * 8))


# -- pyarrow's output and the gold files -----------------------------------------------------

@pytest.mark.parametrize("dst", FORMATS)
@pytest.mark.parametrize("codec", [None, "lz4", "zstd"])
def test_pyarrow_stream_with_deltas_rewritten(dst, codec):
    src = _sample(4)
    options = pa.ipc.IpcWriteOptions(compression=codec, emit_dictionary_deltas=True)
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, src[0].schema.with_metadata({"s": "1"}), options=options) as w:
        for k, b in enumerate(src):
            w.write_batch(b, custom_metadata={"k": str(k)})
    for source in (sink.getvalue(), io.BytesIO(sink.getvalue())):
        reader = arrowmm.open_stream(source)
        data = write_mm(list(reader), reader.schema, dst, compression=codec, emit_dictionary_deltas=True)
        assert dictionary_messages(data) == [(0, False, 2)] + [(0, True, 1)] * 3
        schema, got, mds = pa_read_bytes(data, dst)
        assert schema.metadata == {b"s": b"1"}
        assert mds == [{"k": str(k)} for k in range(4)]
        for a, b in zip(got, src, strict=True):
            assert_batches_equal(a, b.replace_schema_metadata({"s": "1"}))


def _gold_dir():
    if not ij.GOLD_DIR.is_dir():
        pytest.skip(f"gold files folder is absent: {ij.GOLD_DIR}")
    return ij.GOLD_DIR


def _pa_batches(path, fmt):
    r = pa.ipc.open_file(str(path)) if fmt == "file" else pa.ipc.open_stream(str(path))
    return r.schema, ([r.get_batch(i) for i in range(r.num_record_batches)] if fmt == "file" else list(r))


def _mm_values(array):
    """``to_pylist(temporal="int")``, children one by one for structs pyarrow/dicts can't hold."""
    try:
        return array.to_pylist(temporal="int")
    except arrowmm.ArrowInvalid:
        return [_mm_values(array.field(k)) for k in range(len(array.type.fields))]


@pytest.mark.parametrize("src_fmt", FORMATS)
@pytest.mark.parametrize("dst", FORMATS)
@pytest.mark.parametrize("case", ij.GOLD_CASES)
def test_gold_files_rewritten(case, dst, src_fmt):
    gold = _gold_dir()
    path = ij.gold_path(case, "arrow_file" if src_fmt == "file" else "stream", gold)
    reader = arrowmm.open_file(str(path)) if src_fmt == "file" else arrowmm.open_stream(str(path))
    batches = list(reader)
    data = write_mm(batches, reader.schema, dst)
    want_schema, want = _pa_batches(path, src_fmt)
    got_schema, got, _ = pa_read_bytes(data, dst)
    assert got_schema.equals(want_schema, check_metadata=True)
    assert len(got) == len(want)
    for k, (a, b) in enumerate(zip(got, want)):
        a.validate(full=True)
        if not a.equals(b):  # NaNs differ under equals(): compare the float bits instead
            assert_batches_equal(a, b, f"batch {k}")
    again = list(arrowmm.open(data))
    assert [[_mm_values(c) for c in b.columns] for b in again] == \
        [[_mm_values(c) for c in b.columns] for b in batches]
