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
from helpers import ipc_bytes


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
    assert after == max(before, min(arrowmm.ipc.reader.PIPE_BUFFER, limit))


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
