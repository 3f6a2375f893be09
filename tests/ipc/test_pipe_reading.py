"""Streams read from pipes and other file objects: bodies read with big ``readinto`` calls into
aligned buffers of their own (no copy through Python ``read``), every batch keeping its
memory while referenced, cut-short and killed writers reported, file objects without
``readinto`` still read, and the pipe's buffer widened on Linux."""
from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import threading

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from arrowmm.errors import ArrowInvalid
from tests.support.helpers import ipc_bytes


def batches(n: int = 4, rows: int = 50_000):
    rng = np.random.default_rng(7)
    return [pa.record_batch({"x": pa.array(rng.integers(0, 1 << 40, rows)),
                             "s": pa.array([f"v{i % 97}" for i in range(rows)], mask=rng.random(rows) < 0.1),
                             "f": pa.array(rng.random(rows))}) for _ in range(n)]


@pytest.fixture(scope="module")
def stream_bytes():
    bs = batches()
    return ipc_bytes(pa.Table.from_batches(bs), fmt="stream"), pa.Table.from_batches(bs)


def _cat(data: bytes):
    """A real pipe: a subprocess writing ``data`` to its stdout."""
    return subprocess.Popen([sys.executable, "-c",
                             "import sys; sys.stdout.buffer.write(sys.stdin.buffer.read())"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def _feed(proc, data: bytes):
    def write():
        proc.stdin.write(data)
        proc.stdin.close()
    th = threading.Thread(target=write)
    th.start()
    return th


def test_batches_read_from_a_pipe_keep_their_memory(stream_bytes):
    data, table = stream_bytes
    proc = _cat(data)
    writer = _feed(proc, data)
    try:
        with arrowmm.open_stream(proc.stdout) as r:
            held = list(r)  # every batch kept: none may share (or reuse) another's memory
    finally:
        writer.join()
        proc.stdout.close()
        proc.wait()
    assert len(held) == 4
    for b, expected in zip(held, table.to_batches()):
        assert pa.record_batch(b).equals(expected)
        x = b.column("x").to_numpy()
        assert x.ctypes.data % 8 == 0  # bodies land in aligned memory: the columns are views
        assert b.column("x").is_zero_copy
    addresses = {b.column("x").to_numpy().ctypes.data for b in held}
    assert len(addresses) == 4


def test_a_body_buffer_is_reused_only_once_nothing_views_it(stream_bytes):
    data, table = stream_bytes
    proc = _cat(data)
    writer = _feed(proc, data)
    seen = []
    try:
        with arrowmm.open_stream(proc.stdout) as r:
            for b in r:
                x = b.column("x").to_numpy()
                seen.append(x)  # a view kept alive: its body must stay as it was
                del b
    finally:
        writer.join()
        proc.stdout.close()
        proc.wait()
    for x, expected in zip(seen, table.to_batches()):
        assert np.array_equal(x, expected.column("x").to_numpy())


class ReadOnly:
    """A file object with ``read`` only (no ``readinto``)."""

    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def read(self, n=-1):
        n = len(self.data) - self.pos if n < 0 else n
        out = self.data[self.pos:self.pos + min(n, 1000)]  # (short reads, as a socket gives)
        self.pos += len(out)
        return out


def test_a_file_object_without_readinto_still_reads(stream_bytes):
    data, table = stream_bytes
    with arrowmm.open_stream(ReadOnly(data)) as r:
        assert pa.table(r).equals(table)


def test_a_stream_cut_inside_a_body_is_reported(stream_bytes):
    data, _ = stream_bytes
    with arrowmm.open_stream(pa.BufferReader(data[:len(data) // 2])) as r:
        with pytest.raises(ArrowInvalid, match="stream truncated inside message .* body"):
            list(r)


def test_a_killed_writer_ends_in_an_error_naming_the_cut(stream_bytes):
    data, _ = stream_bytes
    first_batch_end = len(ipc_bytes(pa.Table.from_batches(batches()[:1]), fmt="stream")) - 8
    cut = first_batch_end + 100_000  # well inside the second batch's body
    code = ("import sys, time; sys.stdout.buffer.write(sys.stdin.buffer.read()); "
            "sys.stdout.buffer.flush(); time.sleep(600)")
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE)
    proc.stdin.write(data[:cut])
    proc.stdin.close()
    try:
        with arrowmm.open_stream(proc.stdout) as r:
            first = r.read_next_batch()
            assert first.num_rows == 50_000
            os.kill(proc.pid, signal.SIGKILL)
            with pytest.raises(ArrowInvalid, match="stream truncated inside message 2 .*body"):
                r.read_next_batch()
            assert first.column("x").to_numpy().size == 50_000  # still readable
    finally:
        proc.kill()
        proc.stdout.close()
        proc.wait()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="F_SETPIPE_SZ is Linux's")
def test_reading_a_pipe_widens_its_buffer(stream_bytes):
    import fcntl
    data, table = stream_bytes
    rfd, wfd = os.pipe()
    before = fcntl.fcntl(rfd, 1032)  # F_GETPIPE_SZ
    writer = threading.Thread(target=lambda: (os.write(wfd, data[:8]), None))
    writer.start()
    writer.join()
    reader_file = os.fdopen(rfd, "rb")

    def rest():
        view = memoryview(data)[8:]
        while view:
            view = view[os.write(wfd, view):]
        os.close(wfd)
    th = threading.Thread(target=rest)
    th.start()
    try:
        with arrowmm.open_stream(reader_file) as r:
            after = fcntl.fcntl(rfd, 1032)
            assert pa.table(r).equals(table)
    finally:
        th.join()
        reader_file.close()
    limit = int(open("/proc/sys/fs/pipe-max-size").read())
    assert after == max(before, min(arrowmm.ipc.read.file_reader.PIPE_BUFFER, limit))


class RawReadOnly(io.RawIOBase):
    """An io.RawIOBase that defines ``read`` only: its inherited ``readinto`` raises."""

    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def readable(self):
        return True

    def read(self, n=-1):
        n = len(self.data) - self.pos if n < 0 else n
        out = self.data[self.pos:self.pos + n]
        self.pos += len(out)
        return out


def test_a_raw_io_subclass_without_readinto_still_reads(stream_bytes):
    data, table = stream_bytes
    with arrowmm.open_stream(RawReadOnly(data)) as r:
        assert pa.table(r).equals(table)


def test_body_buffers_are_reused_only_when_nothing_references_them(stream_bytes):
    data, table = stream_bytes
    expected = table.to_batches()
    with arrowmm.open_stream(pa.BufferReader(data)) as r:  # (a file object: bodies are read)
        first = r.read_next_batch()
        x0 = first.column("x").to_numpy()
        kept = x0.copy()
        del first  # x0 still views batch 0's body: that buffer must not be reused
        second = r.read_next_batch()
        third = r.read_next_batch()
        del second  # nothing references batch 1's body now: batch 3 may reuse it
        fourth = r.read_next_batch()
        assert np.array_equal(x0, kept)  # batch 0's memory untouched by later reads
        assert pa.record_batch(third).equals(expected[2])
        assert pa.record_batch(fourth).equals(expected[3])
        assert not np.shares_memory(x0, fourth.column("x").to_numpy())
        assert not np.shares_memory(third.column("x").to_numpy(), fourth.column("x").to_numpy())


# -- timeout= and close() from another thread -----------------------------------------------------

def _schema_end(data: bytes) -> int:
    """Bytes of ``data``'s stream up to its first batch (the schema message)."""
    with arrowmm.open_stream(data) as r:
        return r._first_pos


def _writer(wfd: int, data: bytes) -> threading.Thread:
    """A thread writing ``data`` to the pipe ``wfd`` (which may fill up)."""
    def write():
        view = memoryview(data)
        while view:
            view = view[os.write(wfd, view):]
    th = threading.Thread(target=write)
    th.start()
    return th


def test_a_timeout_on_a_pipe_raises_and_reading_again_goes_on(stream_bytes):
    """A batch half written: the wait for its other half times out naming the source and
    the bytes awaited; once they come, reading again goes on where it stopped."""
    data, table = stream_bytes
    half = _schema_end(data) + 300_000  # inside the first batch's body
    rfd, wfd = os.pipe()
    first = _writer(wfd, data[:half])
    with os.fdopen(rfd, "rb") as f, arrowmm.open_stream(f, timeout=0.2) as r:
        with pytest.raises(TimeoutError, match=r"BufferedReader: no bytes came in 0.2 s while "
                                               r"waiting for [\d,]+ bytes \(timeout=0.2"):
            r.read_next_batch()
        first.join()
        rest = _writer(wfd, data[half:])
        try:
            assert pa.Table.from_batches([pa.record_batch(b) for b in r]).equals(table)
        finally:
            rest.join()
            os.close(wfd)


def test_a_timeout_on_a_socket_bounds_the_wait_for_the_first_bytes():
    """``arrowmm.open`` waits for the first bytes to tell the format: the timeout bounds that
    wait too, and the bytes that come later read as the stream."""
    data = ipc_bytes(pa.Table.from_batches(batches(2, 1000)), fmt="stream")
    a, b = __import__("socket").socketpair()
    with a, b, b.makefile("rb") as f:
        with pytest.raises(TimeoutError, match=r"no bytes came in 0.1 s while waiting for 6 "
                                               r"bytes"):
            arrowmm.open(f, timeout=0.1)
        a.sendall(data[:100])
        with pytest.raises(TimeoutError, match="no bytes came in 0.1 s"):
            arrowmm.open(f, timeout=0.1)  # (the schema message is cut: its reading times out)
        f2 = b.makefile("rb")
        a.sendall(data)
        with f2, arrowmm.open(f2, timeout=5) as r:
            assert r.read_all().num_rows == 2000


def test_bytes_the_file_object_had_buffered_are_read_first():
    """A buffered pipe whose buffer already holds the whole stream (someone peeked) while the
    writer stays open: every batch comes out of that buffer, nothing waits for the pipe."""
    table = pa.Table.from_batches(batches(2, 100))
    data = ipc_bytes(table, fmt="stream")
    assert len(data) < io.DEFAULT_BUFFER_SIZE
    rfd, wfd = os.pipe()
    os.write(wfd, data)
    with os.fdopen(rfd, "rb") as f:
        assert f.peek(1)  # (the whole stream now sits in f's buffer, the pipe is empty)
        with arrowmm.open_stream(f, timeout=0.5) as r:
            assert pa.Table.from_batches([pa.record_batch(b) for b in r]).equals(table)
    os.close(wfd)


def test_a_timeout_needs_a_source_that_can_be_polled(stream_bytes):
    data, table = stream_bytes
    with pytest.raises(ArrowInvalid, match=r"ReadOnly: timeout= needs a pipe, socket or device "
                                           r"read through its file descriptor.*has no file "
                                           r"descriptor"):
        arrowmm.open_stream(ReadOnly(data), timeout=1)
    with arrowmm.open_stream(data, timeout=0) as r:  # a buffer never waits: no effect
        assert pa.table(r).equals(table)
    with pytest.raises(ArrowInvalid, match="timeout must be None or a finite number"):
        arrowmm.open_stream(data, timeout=-1)


def _blocked_read(read):
    """``read()`` on a thread of its own; (thread, what it returned or raised)."""
    out = {}

    def run():
        try:
            out["value"] = read()
        except BaseException as exc:  # noqa: BLE001 (inspected by the test)
            out["error"] = exc
    th = threading.Thread(target=run, daemon=True)
    th.start()
    return th, out


@pytest.mark.parametrize("kind", ["pipe", "socket"])
def test_close_from_another_thread_wakes_a_blocked_read(kind, stream_bytes):
    data, _ = stream_bytes
    schema_only = data[:_schema_end(data)]
    if kind == "pipe":
        rfd, wfd = os.pipe()
        os.write(wfd, schema_only)
        f, keep = os.fdopen(rfd, "rb"), wfd
        release = lambda: os.close(keep)  # noqa: E731
    else:
        import socket
        a, b = socket.socketpair()
        a.sendall(schema_only)
        f = b.makefile("rb")
        release = lambda: (a.close(), b.close())  # noqa: E731
    try:
        r = arrowmm.open_stream(f)
        th, out = _blocked_read(r.read_next_batch)
        th.join(0.3)
        assert th.is_alive()  # waiting for a batch that does not come
        r.close()
        th.join(5)
        assert not th.is_alive(), "close() did not wake the read"
        assert isinstance(out.get("error"), ArrowInvalid)
        assert "the reader was closed while waiting for" in str(out["error"])
        with pytest.raises(ArrowInvalid, match="closed"):
            r.read_next_batch()
    finally:
        release()
        f.close()


def test_close_ends_the_read_ahead_of_an_iteration(stream_bytes):
    """An iteration reads the next batch on a thread of its own: close() wakes that read too
    (before, the thread stayed blocked on the pipe for as long as the writer kept it open)."""
    data, _ = stream_bytes
    end_of_first = len(ipc_bytes(pa.Table.from_batches(batches()[:1]), fmt="stream")) - 8
    rfd, wfd = os.pipe()
    writer = _writer(wfd, data[:end_of_first])

    def ahead_threads():
        return [t for t in threading.enumerate() if t.name == "arrowmm-read-ahead"]
    before = set(ahead_threads())
    f = os.fdopen(rfd, "rb")
    try:
        r = arrowmm.open_stream(f)
        it = iter(r)
        assert next(it).num_rows == 50_000  # the second batch is now read ahead, and waits
        writer.join()
        mine = [t for t in ahead_threads() if t not in before]
        assert len(mine) == 1 and mine[0].is_alive()
        mine[0].join(0.3)  # (time for it to be inside its read of the pipe)
        r.close()
        mine[0].join(5)
        assert not mine[0].is_alive(), "the read-ahead thread is still blocked in its read"
        with pytest.raises(ArrowInvalid, match="closed"):
            next(it)
    finally:
        os.close(wfd)  # (first: a read still blocked on the pipe ends, and f can close)
        f.close()
