"""Read-ahead of plain stream iteration over file objects (``StreamReader._batches_read_ahead``):
the batches come in order, none skipped or repeated, whatever the consumer does between them
(stops early, reads directly, exports, iterates again, closes), errors arrive where the stream
breaks, and stopping never waits for a quiet producer.  Real pipes and subprocesses throughout."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from arrowmm.errors import ArrowInvalid
from tests.support.helpers import ipc_bytes

HANG = 60  # seconds: only a hang (a bug) gets anywhere near this


def batches(n: int = 6, rows: int = 20_000):
    rng = np.random.default_rng(17)
    return [pa.record_batch({"i": pa.array(np.arange(rows) + k * rows),
                             "s": pa.array([f"v{j % 31}" for j in range(rows)],
                                           mask=rng.random(rows) < 0.1)}) for k in range(n)]


@pytest.fixture(scope="module")
def stream():
    bs = batches()
    return ipc_bytes(pa.Table.from_batches(bs), fmt="stream"), bs


def first_values(got):
    return [int(b.column("i").to_numpy()[0]) for b in got]


class Pipe:
    """A real pipe fed by a subprocess (``cat`` of its stdin), the test writing into it."""

    def __init__(self, data: bytes = b"", close: bool = True):
        self.proc = subprocess.Popen([sys.executable, "-c",
                                      "import sys, shutil; "
                                      "shutil.copyfileobj(sys.stdin.buffer, sys.stdout.buffer, 1 << 16)"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        self.out = self.proc.stdout
        self.writer = None
        if data:
            self.feed(data, close)

    def feed(self, data: bytes, close: bool = True):
        def write():
            try:
                self.proc.stdin.write(data)
                if close:
                    self.proc.stdin.close()
            except (BrokenPipeError, ValueError):
                pass
        self.writer = threading.Thread(target=write, daemon=True)
        self.writer.start()

    def finish(self):
        self.out.close()  # (what is left unread is dropped: the copy ends on a broken pipe)
        if self.writer is not None:
            self.writer.join(HANG)
        if not self.proc.stdin.closed:
            self.proc.stdin.close()
        self.proc.wait(HANG)


def ahead_threads():
    return [t for t in threading.enumerate() if t.name == "arrowmm-read-ahead"]


def join_ahead_threads():
    for t in ahead_threads():
        t.join(HANG)
    assert not ahead_threads()


def test_iterating_a_pipe_gives_every_batch_in_order(stream):
    data, bs = stream
    pipe = Pipe(data)
    try:
        with arrowmm.open_stream(pipe.out) as r:
            got = [b for b in r]
    finally:
        pipe.finish()
    assert len(got) == len(bs)
    for b, expected in zip(got, bs):
        assert pa.record_batch(b).equals(expected)
    join_ahead_threads()  # (the iteration's thread ends with it)


def test_a_batch_read_ahead_is_handed_out_next_after_a_break(stream):
    data, bs = stream
    pipe = Pipe(data)
    try:
        with arrowmm.open_stream(pipe.out) as r:
            for b in r:
                first = b
                break
            second = r.read_next_batch()  # (the iteration had read it ahead: not skipped)
            rest = list(r)
    finally:
        pipe.finish()
    assert first_values([first, second] + rest) == [k * 20_000 for k in range(len(bs))]


def test_direct_reads_and_a_live_iterator_interleave_in_order(stream):
    data, bs = stream
    pipe = Pipe(data)
    got = []
    try:
        with arrowmm.open_stream(pipe.out) as r:
            it = iter(r)
            got.append(next(it))
            got.append(r.read_next_batch())  # takes over from the iteration's read-ahead
            got.append(next(it))             # the iterator goes on, reading in turn
            it2 = iter(r)                    # a second iteration takes over from the first
            got.append(next(it2))
            got.append(next(it))
            got.extend(it2)
            assert list(it) == []
    finally:
        pipe.finish()
    assert first_values(got) == [k * 20_000 for k in range(len(bs))]


def test_an_export_after_a_partial_iteration_starts_at_the_next_batch(stream):
    data, bs = stream
    pipe = Pipe(data)
    try:
        with arrowmm.open_stream(pipe.out) as r:
            it = iter(r)
            first = next(it)
            table = pa.table(r)
    finally:
        pipe.finish()
    assert pa.record_batch(first).equals(bs[0])
    assert table.equals(pa.Table.from_batches(bs[1:]))


def test_an_error_mid_stream_arrives_after_the_complete_batches(stream):
    data, bs = stream
    one = len(ipc_bytes(pa.Table.from_batches(bs[:3]), fmt="stream")) - 8  # (no EOS marker)
    pipe = Pipe(data[:one + 5000])  # cut inside the fourth batch
    got = []
    try:
        with arrowmm.open_stream(pipe.out) as r:
            with pytest.raises(ArrowInvalid, match="truncated"):
                for b in r:
                    got.append(b)
    finally:
        pipe.finish()
    assert first_values(got) == [0, 20_000, 40_000]
    join_ahead_threads()


def test_a_bad_message_read_ahead_is_raised_when_the_iteration_stopped_before_it(stream):
    """The read-ahead met the bad message while the consumer still held the batch before it,
    and the consumer then stopped: the error is kept and raised by the next read (never the
    batch after the bad message, as if it were not there)."""
    data, bs = stream
    schema_only = ipc_bytes(pa.Table.from_batches(bs[:0], schema=bs[0].schema),
                            fmt="stream")[:-8]
    one = ipc_bytes(pa.Table.from_batches(bs[:1]), fmt="stream")[len(schema_only):-8]
    rest = ipc_bytes(pa.Table.from_batches(bs[1:3]), fmt="stream")[len(schema_only):]
    bad = schema_only + one + schema_only + rest  # a second schema message after batch 0
    for resume in ("read_next_batch", "iterate"):
        pipe = Pipe(bad)
        try:
            with arrowmm.open_stream(pipe.out) as r:
                for b in r:
                    first = b
                    time.sleep(0.5)  # (the read-ahead meets the bad message meanwhile)
                    break
                join_ahead_threads()
                with pytest.raises(ArrowInvalid, match="second schema message"):
                    r.read_next_batch() if resume == "read_next_batch" else list(r)
        finally:
            pipe.finish()
        assert pa.record_batch(first).equals(bs[0])


def test_a_direct_read_then_a_closed_iterator_leave_only_batches(stream):
    """A direct read takes over from a live iteration, then the iterator is closed: the next
    reads and an export give the stream's batches (the take-over's marker is never one)."""
    data, bs = stream
    for then in ("read_next_batch", "export"):
        pipe = Pipe(data)
        try:
            with arrowmm.open_stream(pipe.out) as r:
                it = iter(r)
                first = next(it)
                second = r.read_next_batch()
                it.close()
                if then == "read_next_batch":
                    third = r.read_next_batch()
                    assert isinstance(third, arrowmm.RecordBatch)
                    rest = [third] + list(r)
                else:
                    rest = pa.table(r).to_batches()
        finally:
            pipe.finish()
        got = [first, second]
        assert first_values(got) == [0, 20_000]
        assert pa.Table.from_batches([pa.record_batch(b) for b in rest]).equals(
            pa.Table.from_batches(bs[2:])), then


def test_a_consumer_error_stops_the_read_ahead(stream):
    data, bs = stream
    pipe = Pipe(data)
    try:
        with arrowmm.open_stream(pipe.out) as r:
            with pytest.raises(ZeroDivisionError):
                for b in r:
                    1 / 0
            rest = list(r)
    finally:
        pipe.finish()
    assert first_values(rest) == [k * 20_000 for k in range(1, len(bs))]
    join_ahead_threads()


def test_head_and_slice_read_no_batch_past_the_rows_they_return(stream):
    data, bs = stream
    pipe = Pipe(data)
    try:
        with arrowmm.open_stream(pipe.out) as r:
            assert r.head(20_000).num_rows == 20_000
            assert not ahead_threads()
            assert first_values([r.read_next_batch()]) == [20_000]
    finally:
        pipe.finish()


def blocked_in_read():
    """Wait until the read-ahead thread is inside a read of the pipe."""
    for _ in range(HANG * 100):
        frames = sys._current_frames()
        for t in ahead_threads():
            frame = frames.get(t.ident)
            while frame is not None:
                if frame.f_code.co_name in ("_read_body", "_read_message"):
                    return
                frame = frame.f_back
        threading.Event().wait(0.01)
    raise AssertionError("the read-ahead thread never reached a read")


def test_stopping_and_closing_never_wait_for_a_quiet_producer(stream):
    """The producer writes the schema and one batch and then stays quiet: the read-ahead
    blocks on the pipe, yet breaking out of the loop and closing the reader return; closing
    wakes the read in flight, and the file the reader opened itself is closed once that read
    has left it, while the producer is still quiet."""
    data, bs = stream
    one = len(ipc_bytes(pa.Table.from_batches(bs[:1]), fmt="stream")) - 8
    r_fd, w_fd = os.pipe()
    path = f"/proc/self/fd/{r_fd}"
    writer = os.fdopen(w_fd, "wb", buffering=0)
    fed = threading.Thread(target=writer.write, args=(data[:one],), daemon=True)
    fed.start()
    reader = arrowmm.open_stream(path)  # (a FIFO path: the reader opens its own file object)
    owned = reader._owned
    done = threading.Event()

    def consume():
        it = iter(reader)
        assert next(it).num_rows == 20_000
        blocked_in_read()  # the second batch is being read ahead, blocked on the quiet pipe
        it.close()  # (as a loop's ``break`` does)
        reader.close()
        done.set()

    th = threading.Thread(target=consume, daemon=True)
    th.start()
    assert done.wait(HANG), "stopping or closing waited for the quiet producer"
    join_ahead_threads()  # (close() woke its read: nothing more was written)
    assert owned.closed
    fed.join(HANG)
    writer.close()
    os.close(r_fd)


def test_iteration_over_a_region_reads_in_turn(stream):
    data, bs = stream
    with arrowmm.open_stream(data) as r:
        it = iter(r)
        assert first_values([next(it)]) == [0]
        assert not ahead_threads()  # (a region needs no thread)
        assert first_values(list(it)) == [k * 20_000 for k in range(1, len(bs))]


def test_compressed_batches_stay_lazy_when_iterated(stream):
    _, bs = stream
    data = ipc_bytes(pa.Table.from_batches(bs), fmt="stream", compression="zstd")
    pipe = Pipe(data)
    try:
        with arrowmm.open_stream(pipe.out) as r:
            got = list(r)
    finally:
        pipe.finish()
    assert all(c is None for b in got for c in b._columns)  # (nothing decoded ahead)
    assert pa.Table.from_batches([pa.record_batch(b) for b in got]).equals(
        pa.Table.from_batches(bs))
