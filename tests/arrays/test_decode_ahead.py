"""Compressed batches decoded together and ahead (``arrowmm.arrays.decode_ahead``,
``RecordBatch.decode_columns``): values equal pyarrow's on every path (exports, ``to_*``,
``columns``), each column decoded once under its lock, read-ahead bounded and only for walks
in order (one column of a wide file decodes that column only), errors named on the caller's
side."""
from __future__ import annotations

import io
import os
import sys
import time
import threading

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from arrowmm.arrays import decode_ahead
from arrowmm.errors import ArrowInvalid
from tests.support.helpers import in_a_forked_child, write_ipc

CODECS = ("lz4", "zstd")


def mixed(rows: int, seed: int = 0) -> pa.RecordBatch:
    rng = np.random.default_rng(seed)
    mask = rng.random(rows) < 0.1
    words = np.array(["a", "bc", "defghijklmno", "pq"], dtype=object)
    lengths = rng.integers(0, 9, rows)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    return pa.record_batch({
        "f64": pa.array(rng.random(rows), mask=mask),
        "i64": pa.array(rng.integers(0, 1 << 40, rows), mask=mask),
        "s": pa.array(words[rng.integers(0, 4, rows)], mask=mask),
        "l": pa.ListArray.from_arrays(pa.array(offsets),
                                      pa.array(rng.integers(0, 99, offsets[-1], dtype=np.int32))),
        "b": pa.array(rng.random(rows) < 0.5, mask=mask),
    })


@pytest.fixture(scope="module", params=CODECS)
def compressed(request, tmp_path_factory):
    """(path, pyarrow table) of a file of 3 compressed batches."""
    table = pa.Table.from_batches([mixed(20_000, s) for s in range(3)])
    path = tmp_path_factory.mktemp("ra") / f"t.{request.param}.arrow"
    write_ipc(path, table, options=pa.ipc.IpcWriteOptions(compression=request.param))
    return path, table


def test_decode_columns_decodes_the_asked_columns_once(compressed):
    path, table = compressed
    with arrowmm.open_file(path) as r:
        b = r.get_batch(1)
        assert b.compression in CODECS
        b.decode_columns(["s", 0, 0])
        assert [b.is_loaded(k) for k in range(5)] == [True, False, True, False, False]
        first = b.column(0)
        b.decode_columns()
        assert b.column(0) is first  # (decoded once: the same Array afterwards)
        assert all(b.is_loaded(k) for k in range(5))
        assert pa.record_batch(b).equals(table.to_batches()[1])
        with pytest.raises(KeyError):
            b.decode_columns(["nope"])
        with pytest.raises(IndexError):
            b.decode_columns([5])


def test_uncompressed_and_built_batches_have_no_compression(tmp_path):
    path = tmp_path / "plain.arrow"
    write_ipc(path, pa.table({"x": [1, 2]}))
    with arrowmm.open_file(path) as r:
        assert r.get_batch(0).compression is None
    built = arrowmm.record_batch({"x": [1, 2]})
    assert built.compression is None
    built.decode_columns()  # (nothing to decode: no error)
    assert built.column(0).to_pylist() == [1, 2]


def test_threads_decoding_together_get_the_same_arrays(compressed):
    path, _ = compressed
    with arrowmm.open_file(path) as r:
        for _ in range(5):
            b = r.get_batch(0)
            barrier = threading.Barrier(4)
            got = [None] * 4

            def work(i):
                barrier.wait()
                if i % 2:
                    b.decode_columns()
                got[i] = [b.column(k) for k in range(5)]

            threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
            for th in threads:
                th.start()
            for th in threads:
                th.join()
            assert all(all(x is y for x, y in zip(g, got[0])) for g in got)


@pytest.mark.parametrize("source", ["path", "stream-map", "stream-fileobj"])
def test_pyarrow_table_of_a_compressed_reader_equals_pyarrows(compressed, tmp_path, source):
    path, table = compressed
    if source == "path":
        reader = arrowmm.open_file(path)
    else:
        spath = tmp_path / "s.arrows"
        write_ipc(spath, table, fmt="stream", options=pa.ipc.IpcWriteOptions(compression="zstd"))
        reader = arrowmm.open_stream(spath if source == "stream-map"
                                     else io.BytesIO(spath.read_bytes()))
        if source == "stream-fileobj":
            reader = arrowmm.open_stream(open(spath, "rb"))
    with reader:
        got = pa.table(reader)
    assert got.equals(table)


def test_to_pandas_pydict_and_columns_of_compressed_batches(compressed):
    pytest.importorskip("pandas")
    path, table = compressed
    with arrowmm.open_file(path) as r:
        assert r.to_pandas().equals(table.to_pandas())
        b = r.get_batch(2)
        assert b.to_pydict() == table.to_batches()[2].to_pydict()
        assert [c.to_pylist() for c in r.get_batch(0).columns] == \
            [c.to_pylist() for c in table.to_batches()[0].columns]


def test_one_column_of_a_fresh_reader_decodes_that_column_only(tmp_path):
    rng = np.random.default_rng(1)
    table = pa.table({f"c{k}": rng.integers(0, 99, 5_000) for k in range(100)})
    path = tmp_path / "wide.arrow"
    write_ipc(path, pa.Table.from_batches(table.to_batches() * 3), options=pa.ipc.IpcWriteOptions(compression="zstd"))
    with arrowmm.open_file(path) as r:
        b = r.get_batch(0)
        assert b.column(57).to_pylist() == table.column(57).to_pylist()
        decode_ahead.drain()
        assert [k for k in range(100) if b.is_loaded(k)] == [57]
        assert r.stats.columns_loaded == 1


@pytest.fixture(scope="module")
def five_batches(tmp_path_factory):
    """(path, pyarrow table) of a zstd file of 5 small batches: room to see the bound."""
    table = pa.Table.from_batches([mixed(2_000, s) for s in range(5)])
    path = tmp_path_factory.mktemp("ra5") / "t5.arrow"
    write_ipc(path, table, options=pa.ipc.IpcWriteOptions(compression="zstd"))
    return path, table


def _held_and_touched(reader, k: int) -> list:
    """Every batch of ``reader``, held, after column ``k`` of the first was touched and the
    read-ahead that started has finished."""
    batches = [reader.get_batch(i) for i in range(reader.num_record_batches)]
    batches[0].column(k)
    decode_ahead.drain()
    return batches


def test_a_column_walked_across_held_batches_is_read_ahead(five_batches):
    path, _ = five_batches
    with arrowmm.open_file(path) as r:
        batches = _held_and_touched(r, 2)
        ahead = decode_ahead.AHEAD
        assert [i for i, b in enumerate(batches) if b.is_loaded(2)] == list(range(ahead + 1))
        assert not any(b.is_loaded(1) for b in batches)  # (the walk goes down column 2 only)


def test_the_read_ahead_follows_the_caller_down_the_column(five_batches):
    # The caller finding its column decoded (the read-ahead's work) sets the thread on the
    # next one, so that the caller's use of this column overlaps that decode.
    path, table = five_batches
    with arrowmm.open_file(path) as r:
        batches = [r.get_batch(i) for i in range(5)]
        for i, b in enumerate(batches):
            assert b.column(2).to_pylist() == table.column(2).chunk(i).to_pylist()
            decode_ahead.drain()
            loaded = [j for j, c in enumerate(batches) if c.is_loaded(2)]
            assert loaded == list(range(min(i + decode_ahead.AHEAD, 4) + 1)), i
        # past the last batch, a walk that went down goes on with the next column from the top
        assert [j for j, c in enumerate(batches) if c.is_loaded(3)] == [0, 1]
        assert not any(c.is_loaded(k) for c in batches for k in (0, 1, 4))
        for i, b in enumerate(batches):
            assert b.column(3).to_pylist() == table.column(3).chunk(i).to_pylist()
        decode_ahead.drain()
        assert r.stats.columns_loaded == 12  # (each decoded once: 5 + 5, and 2 of column 4)


def test_a_column_read_down_part_of_the_file_decodes_nothing_beyond_it(five_batches):
    # (the next column from the top comes only past the file's last batch: a caller handed
    # batches one at a time and reading one column has not reached it)
    path, _ = five_batches
    with arrowmm.open_file(path) as r:
        held = []
        for i in range(3):
            held.append(r.get_batch(i))
            held[-1].column(1)
            decode_ahead.drain()
        assert [(i, k) for i, b in enumerate(held) for k in range(5) if b.is_loaded(k)] == \
            [(0, 1), (1, 1), (2, 1)]


def test_a_column_that_fails_to_decode_is_not_tried_again_and_the_others_still_decode(
        five_batches, monkeypatch):
    # A read-ahead decode that raised went round for ever (the column was neither decoded
    # nor being decoded, so the walk handed it back), each try taking its declared size from
    # the batch's decompression budget until the intact columns failed on the budget too.
    from arrowmm.ipc.read.loader import BatchLoader
    path, table = five_batches
    column, calls = BatchLoader.column, []

    def broken(loader, k, decoded=None):
        calls.append(k)
        if k == 2:
            raise ArrowInvalid("column 2 is broken here")
        return column(loader, k, decoded)

    monkeypatch.setattr(BatchLoader, "column", broken)
    with arrowmm.open_file(path) as r:
        b = r.get_batch(0)
        b.column(0)
        b.column(1)  # (a walk along the batch: the thread takes column 2, then 3)
        decode_ahead.drain()
        time.sleep(0.2)
        decode_ahead.drain()
        assert calls.count(2) == 1  # tried once, by the read-ahead, which stopped there
        with pytest.raises(ArrowInvalid, match="column 2 is broken"):
            b.column(2)  # (the caller's own decode raises it)
        b.column(3)
        decode_ahead.drain()
        assert calls.count(2) == 2  # (the caller's try; the read-ahead left it alone)
        assert b.column(4).to_pylist() == table.column(4).chunk(0).to_pylist()
        assert b.column(3).to_pylist() == table.column(3).chunk(0).to_pylist()


def test_a_failed_decode_tried_again_counts_its_buffers_once(five_batches):
    from arrowmm import limits
    path, table = five_batches
    with arrowmm.open_file(path) as r:
        b = r.get_batch(0)
        spent = []
        with limits.override(max_decompressed_size=100):  # (below the values buffer's size)
            for _ in range(3):
                with pytest.raises(ArrowInvalid, match="max_decompressed_size"):
                    b.column(0)
                spent.append(b._loader._decompressed)
        assert spent[0] == spent[1] == spent[2]  # (it grew with every try)
        assert b.column(0).to_pylist() == table.column(0).chunk(0).to_pylist()
        assert b._loader._decompressed == spent[0]  # (its buffers were counted at the first try)
        b2 = r.get_batch(0)
        assert b2.column(0).to_pylist() == table.column(0).chunk(0).to_pylist()


def test_the_read_ahead_lets_go_of_a_batch_the_caller_drops(compressed, monkeypatch):
    # The thread held the next batch of its walk while it decoded this one: a batch the
    # caller dropped then had one more column decoded, and lived until that was done.
    import gc
    import weakref
    from arrowmm.arrays.batch import RecordBatch
    path, _ = compressed
    gate, inside, log = threading.Event(), threading.Event(), []
    decode = RecordBatch._decode

    def held(self, k, decoded, wait=True):
        if threading.current_thread().name.startswith("arrowmm-decode-ahead"):
            log.append(k)
            if k == 3:
                inside.set()
                gate.wait(10)
        return decode(self, k, decoded, wait)

    monkeypatch.setattr(RecordBatch, "_decode", held)
    with arrowmm.open_file(path) as r:
        b = r.get_batch(0)
        b.column(1)
        b.column(2)  # (along the batch: the thread decodes column 3, then would go on to 4)
        assert inside.wait(10)
        ref = weakref.ref(b)
        del b
        gc.collect()
        gate.set()
        decode_ahead.drain()
        gc.collect()
        assert ref() is None and log == [3]


def test_a_caller_that_would_wait_for_a_decode_in_flight_decodes_the_next_one_itself(
        five_batches, monkeypatch):
    # Column 2 of batch 0 is being decoded by another thread (its lock held here): the
    # caller's column(2) decodes batch 1's column 2 on its own thread rather than wait idle,
    # then waits for batch 0's and gets its right values.
    from arrowmm.ipc.read.loader import BatchLoader
    path, table = five_batches
    with arrowmm.open_file(path) as r:
        b0, b1 = r.get_batch(0), r.get_batch(1)
        column, who = BatchLoader.column, []

        def watched(loader, k, decoded=None):
            who.append((loader is b1._loader, threading.current_thread().name))
            return column(loader, k, decoded)

        monkeypatch.setattr(BatchLoader, "column", watched)
        got = []
        lock = b0._decode_lock(2)
        lock.acquire()
        caller = threading.Thread(target=lambda: got.append(b0.column(2)), name="caller")
        caller.start()
        deadline = time.monotonic() + 10
        while not b1.is_loaded(2) and time.monotonic() < deadline:
            time.sleep(0.001)
        assert b1.is_loaded(2) and not got  # (helped, and still waiting for batch 0's)
        lock.release()
        caller.join(10)
        assert got[0].to_pylist() == table.column(2).chunk(0).to_pylist()
        assert who[0] == (True, "caller")


def test_the_next_batch_decodes_while_the_caller_decodes_this_one(compressed, monkeypatch):
    # The read-ahead of batch 1 starts before batch 0's decode, not after: a walk of one
    # column across batches otherwise ran one decode at a time (the caller waited for the
    # read-ahead, which started the next one only then).  Batch 0's decode waits here until
    # batch 1's has begun: with the hint given after the decode, it would wait in vain.
    from arrowmm.ipc.read.loader import BatchLoader
    path, table = compressed
    with arrowmm.open_file(path) as r:
        b0, b1 = r.get_batch(0), r.get_batch(1)
        started, seen = threading.Event(), []
        column = BatchLoader.column

        def watched(loader, k, decoded=None):
            if loader is b1._loader:
                started.set()
            elif loader is b0._loader:
                seen.append(started.wait(10))
            return column(loader, k, decoded)

        monkeypatch.setattr(BatchLoader, "column", watched)
        assert b0.column(2).to_pylist() == table.column(2).chunk(0).to_pylist()
        decode_ahead.drain()
        assert seen == [True] and b1.is_loaded(2)


def test_the_read_ahead_leaves_a_column_another_thread_is_decoding(compressed):
    path, table = compressed
    with arrowmm.open_file(path) as r:
        b = r.get_batch(0)
        lock = b._decode_lock(1)
        with lock:  # (as if a thread were decoding column 1 now)
            assert b._decode(1, None, False) is None  # the read-ahead's call: no waiting
            assert not b.is_loaded(1)
        assert b.column(1).to_pylist() == table.column(1).chunk(0).to_pylist()


def test_a_walk_down_the_columns_reads_ahead_down_the_column_not_along_the_batch(compressed):
    # Walking column 0 across the batches, then column 1: when batch 0's column 1 comes, its
    # column 0 is decoded too, but the walk goes down, not along: the read-ahead decodes
    # column 1 of batch 1, not column 2 of batch 0 (which it did, and the caller waited).
    path, _ = compressed
    with arrowmm.open_file(path) as r:
        batches = [r.get_batch(i) for i in range(3)]
        for b in batches:
            b.column(0)
            decode_ahead.drain()
        batches[0].column(1)
        decode_ahead.drain()
        assert batches[1].is_loaded(1) and not batches[0].is_loaded(2)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork: POSIX only")
def test_a_child_forked_during_a_read_ahead_decodes_that_column_itself(compressed, monkeypatch):
    # The read-ahead thread holds batch 1's column lock when the process forks; that thread
    # does not exist in the child, whose touch of the column waited for ever on the lock.
    from arrowmm.ipc.read.loader import BatchLoader
    path, table = compressed
    with arrowmm.open_file(path) as r:
        b0, b1 = r.get_batch(0), r.get_batch(1)
        inside, release = threading.Event(), threading.Event()
        column = BatchLoader.column

        def held(loader, k, decoded=None):
            if loader is b1._loader and os.getpid() == parent:
                inside.set()
                release.wait(30)  # (the read-ahead thread, in the parent only)
            return column(loader, k, decoded)

        parent = os.getpid()
        monkeypatch.setattr(BatchLoader, "column", held)
        b0.column(2)  # read-ahead: batch 1's column 2, now held inside its decode
        assert inside.wait(30)
        in_child = in_a_forked_child(  # (no read-ahead thread there)
            lambda: b1.column(2).to_pylist() == table.column(2).chunk(1).to_pylist(),
            then=release.set)
        decode_ahead.drain()
        assert in_child == 0
        assert b1.column(2).to_pylist() == table.column(2).chunk(1).to_pylist()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork: POSIX only")
def test_a_child_forked_while_the_read_ahead_is_busy_reads_ahead_itself(five_batches):
    # The read-ahead's lock and its count of decodes in flight, as a thread of the parent
    # held and left them at the fork: held for ever, or counting decodes that do not run in
    # the child, they hung or refused every read-ahead there.
    path, table = five_batches
    with arrowmm.open_file(path) as r:
        batches = _held_and_touched(r, 0)
        ahead = batches[0]._ahead[0]
        ahead._pending = decode_ahead.MAX_PENDING  # (as if two decodes were in flight)
        with ahead._lock:
            def child():
                batches[2].column(1)  # (a new walk: down column 1 from batch 2)
                decode_ahead.drain()
                return batches[3].is_loaded(1) and \
                    batches[2].column(1).to_pylist() == table.column(1).chunk(2).to_pylist()
            assert in_a_forked_child(child) == 0
        ahead._pending = 0


def test_a_batch_decoded_by_two_threads_at_once_is_decompressed_once(compressed, monkeypatch):
    from arrowmm.ipc.core import compression
    path, _ = compressed
    calls = []
    payload = compression.decompress_payload
    monkeypatch.setattr(compression, "decompress_payload",
                        lambda *a: calls.append(1) or payload(*a))
    with arrowmm.open_file(path) as r:
        r.get_batch(0).decode_columns()
    once = len(calls)
    with arrowmm.open_file(path) as r:
        b = r.get_batch(0)
        start = threading.Barrier(4)

        def decode():
            start.wait(10)
            b.decode_columns()

        threads = [threading.Thread(target=decode) for _ in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(30)
        assert len(calls) == 2 * once and once > 0  # (each buffer once more, not four times)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork: POSIX only")
def test_a_stream_iterated_across_a_fork_goes_on_in_the_child_or_says_why(tmp_path):
    # A stream read from a file object is read ahead by a thread of the iteration's own,
    # which a forked child does not have: continuing the iteration there waited for ever.
    table = pa.Table.from_batches([mixed(5_000, s) for s in range(4)])
    spath = tmp_path / "s.arrows"
    write_ipc(spath, table, fmt="stream", options=pa.ipc.IpcWriteOptions(compression="zstd"))
    with open(spath, "rb") as f:  # the thread idle at the fork: the child goes on
        reader = arrowmm.open_stream(f)
        walk = iter(reader)
        first = next(walk)
        ahead = reader._iteration
        until = time.monotonic() + 30
        while ahead._results.empty() and time.monotonic() < until:
            time.sleep(0.01)  # (until the thread has read batch 1 and waits)
        rest = lambda: [b.to_pydict() for b in walk] == [  # noqa: E731
            b.to_pydict() for b in table.to_batches()[1:]]
        assert first.to_pydict() == table.to_batches()[0].to_pydict()
        assert in_a_forked_child(rest) == 0  # (the parent stops here: the child moved the
        # file offset both share)
    read_fd, write_fd = os.pipe()  # the thread inside a read at the fork: the child is told
    data = spath.read_bytes()
    forked = threading.Event()

    def produce():  # (the first third, then the rest once the child has been forked)
        with open(write_fd, "wb", buffering=0) as w:
            w.write(data[:len(data) // 3])
            forked.wait(60)
            w.write(data[len(data) // 3:])

    producer = threading.Thread(target=produce)
    producer.start()
    try:
        with open(read_fd, "rb") as f:
            reader = arrowmm.open_stream(f)
            walk = iter(reader)
            next(walk)  # (and the thread reads on, until the bytes stop coming)
            until = time.monotonic() + 30
            while reader._iteration._unstarted and time.monotonic() < until:
                time.sleep(0.01)  # (until the thread is inside that read)
            assert in_a_forked_child(lambda: list(walk) is None) == 3  # (ArrowInvalid)
            forked.set()
            assert sum(b.num_rows for b in walk) == table.num_rows - 5_000
    finally:
        forked.set()
        producer.join(60)


def test_columns_walked_in_order_read_the_next_one_ahead(compressed):
    path, _ = compressed
    with arrowmm.open_file(path) as r:
        b = r.get_batch(0)
        b.column(1)
        decode_ahead.drain()
        assert not b.is_loaded(2)  # one column: no pattern yet
        b.column(2)
        decode_ahead.drain()
        assert b.is_loaded(3) and b.is_loaded(4)  # (AHEAD columns ahead: here, to the end)


def test_a_walk_along_a_wide_batch_reads_ahead_within_the_bound(tmp_path):
    rng = np.random.default_rng(3)
    table = pa.table({f"c{k}": rng.integers(0, 99, 2_000) for k in range(20)})
    path = tmp_path / "wide.arrow"
    write_ipc(path, table, options=pa.ipc.IpcWriteOptions(compression="lz4"))
    with arrowmm.open_file(path) as r:
        b = r.get_batch(0)
        for k in (10, 11):
            assert b.column(k).to_pylist() == table.column(k).to_pylist()
        decode_ahead.drain()
        loaded = [k for k in range(20) if b.is_loaded(k)]
        assert loaded == list(range(10, 12 + decode_ahead.AHEAD))


@pytest.fixture
def prefetched(monkeypatch):
    """The columns of each ``BatchLoader.prefetch`` call (several: decoded together on the
    codec pool), with the thread that made it."""
    from arrowmm.ipc.read.loader import BatchLoader
    prefetch, calls = BatchLoader.prefetch, []

    def watched(loader, ks, then=None):
        calls.append((list(ks), threading.current_thread().name))
        return prefetch(loader, ks, then)

    monkeypatch.setattr(BatchLoader, "prefetch", watched)
    return calls


def _ahead(calls):
    return [ks for ks, thread in calls if thread.startswith("arrowmm-decode-ahead") and len(ks) > 1]


def test_columns_0_then_1_have_the_rest_of_the_batch_decoded_together(compressed, prefetched):
    # (issue 34) A walk that takes a batch from its first column has the rest of the batch
    # decoded on the pool, in one go, as pyarrow decodes a batch at get_batch: one column at
    # a time (AHEAD of the caller), the walk in batch order was 1.2-1.3x pyarrow's time.
    path, table = compressed
    with arrowmm.open_file(path) as r:
        b = r.get_batch(0)
        b.column(0)
        decode_ahead.drain()
        assert [k for k in range(5) if b.is_loaded(k)] == [0]  # (one column: lazy)
        b.column(1)
        decode_ahead.drain()
        assert all(b.is_loaded(k) for k in range(5))
        assert _ahead(prefetched) == [[2, 3, 4]]
        assert pa.record_batch(b).equals(table.to_batches()[0])
        assert r.stats.columns_loaded == 5


def test_batch_after_batch_the_next_one_decodes_whole_from_column_0(compressed, prefetched):
    # (issue 34) A walk that took batch 0 to its last column has batch 1 read ahead whole
    # (its columns together, once), beside batch 0's decode; get_batch(1) hands it out.
    path, table = compressed
    with arrowmm.open_file(path) as r:
        b = r.get_batch(0)
        for k in range(5):
            b.column(k)
        decode_ahead.drain()
        b = r.get_batch(1)
        assert all(b.is_loaded(k) for k in range(5))  # (before the caller asks for any)
        assert [ks for ks, _ in prefetched].count([0, 1, 2, 3, 4]) == 1
        b.column(0)
        got = [b.column(k) for k in range(5)]
        assert pa.record_batch(b).equals(table.to_batches()[1])
        assert [b.column(k) for k in range(5)] == got  # (the same Arrays for every caller)


def test_a_walk_in_batch_order_decompresses_each_buffer_once(compressed, monkeypatch):
    from arrowmm.ipc.core import compression
    path, table = compressed
    calls = []
    payload = compression.decompress_payload
    decode_ahead.drain()  # (an earlier test's read-ahead counted nothing here)
    monkeypatch.setattr(compression, "decompress_payload",
                        lambda *a: calls.append(1) or payload(*a))
    with arrowmm.open_file(path) as r:
        whole = r.get_batch(0)
        whole.decode_columns()
        once, charged = len(calls), whole._loader._decompressed
    calls.clear()
    with arrowmm.open_file(path) as r:
        for i in range(3):
            b = r.get_batch(i)
            assert [pa.array(b.column(k)) for k in range(5)] == \
                table.to_batches()[i].columns
            if i == 0:
                assert b._loader._decompressed == charged  # (the budget: each buffer once)
        decode_ahead.drain()
        assert len(calls) == 3 * once and r.stats.columns_loaded == 15


def test_one_column_or_the_first_columns_of_each_batch_stay_lazy(compressed, prefetched):
    # Column 0 of the batch after a whole walk, read alone, decodes the rest of that batch
    # (the walk said batch after batch); a caller that then leaves it after two columns, and
    # a caller that reads one column of a batch, get no more whole batches decoded.
    path, _ = compressed
    with arrowmm.open_file(path) as r:
        b = r.get_batch(2)
        b.column(3)
        decode_ahead.drain()
        assert [k for k in range(5) if b.is_loaded(k)] == [3]
        held = []
        for i in range(3):  # (columns 0 and 1 of each batch)
            held.append(r.get_batch(i))
            held[-1].column(0)
            held[-1].column(1)
            decode_ahead.drain()
        ahead = 2 + decode_ahead.AHEAD
        assert [k for k in range(5) if held[1].is_loaded(k)] == list(range(min(ahead, 5)))
        assert [k for k in range(5) if held[2].is_loaded(k) and k != 3] == \
            [k for k in range(min(ahead, 5)) if k != 3]
        assert len(_ahead(prefetched)) == 1  # (batch 0's rest only)


def test_a_selection_of_the_first_columns_decodes_those_only(compressed, prefetched):
    path, table = compressed
    with arrowmm.open_file(path) as r:
        b = r.get_batch(0)
        got = b.select([0, 1])
        decode_ahead.drain()
        assert [k for k in range(5) if b.is_loaded(k)] == [0, 1]
        assert pa.record_batch(got).equals(table.to_batches()[0].select([0, 1]))


def test_read_ahead_does_not_keep_dropped_batches_alive(compressed):
    import gc
    import weakref
    path, _ = compressed
    with arrowmm.open_file(path) as r:
        b0, b1 = r.get_batch(0), r.get_batch(1)
        ref = weakref.ref(b1)
        del b1
        gc.collect()
        assert ref() is None
        b0.column(0)  # (the next batch is gone: nothing to read ahead, no error)
        decode_ahead.drain()


def test_a_corrupt_compressed_batch_raises_on_the_consumers_side(tmp_path):
    table = pa.Table.from_batches([mixed(20_000, s) for s in range(2)])
    path = tmp_path / "bad.arrow"
    write_ipc(path, table, options=pa.ipc.IpcWriteOptions(compression="zstd"))
    data = bytearray(path.read_bytes())
    with arrowmm.open_file(path) as r:
        off, size = r.batch_extents()[1]
    magic = b"\x28\xb5\x2f\xfd"  # every zstd frame of batch 1 loses its magic number
    hits = 0
    at = data.find(magic, off, off + size)
    while at >= 0:
        data[at:at + 4] = b"\0\0\0\0"
        hits += 1
        at = data.find(magic, at + 4, off + size)
    assert hits
    bad = tmp_path / "bad2.arrow"
    bad.write_bytes(bytes(data))
    with arrowmm.open_file(bad) as r:
        assert r.get_batch(0).columns  # batch 0 still reads
        with pytest.raises(ArrowInvalid, match="batch 1|message"):
            r.get_batch(1).decode_columns()
        with pytest.raises(Exception) as info:
            pa.table(r)
    assert "batch 1" in str(info.value) or "zstd" in str(info.value)


# --- a reader that blocks: a pipe whose producer has gone quiet -------------------------------

HANG = 60  # seconds: generous, it fails only on a hang (the steps take milliseconds)


def _zstd_stream(batches: int) -> bytes:
    sink = io.BytesIO()
    schema = pa.schema([("x", pa.int64())])
    with pa.ipc.new_stream(sink, schema,
                           options=pa.ipc.IpcWriteOptions(compression="zstd")) as w:
        for i in range(batches):
            w.write_batch(pa.record_batch({"x": pa.array(range(i * 1000, (i + 1) * 1000))}))
    return sink.getvalue()


def _read_ahead_threads():
    return [t for t in threading.enumerate() if t.name == "arrowmm-read-ahead"]


def _in_thread(fn):
    """``fn()`` on a thread joined with a timeout: (finished, its result or error)."""
    out = []

    def run():
        try:
            out.append((True, fn()))
        except BaseException as exc:  # noqa: BLE001 (handed to the test)
            out.append((False, exc))
    th = threading.Thread(target=run, daemon=True)
    th.start()
    th.join(HANG)
    return (not th.is_alive()), (out[0] if out else None)


@pytest.fixture
def quiet_pipe():
    """A StreamReader over a pipe holding one compressed batch and no end-of-stream marker,
    whose writer stays open and quiet; the writer is closed (and the read-ahead threads it
    held joined) afterwards, so no thread outlives the test."""
    before = set(_read_ahead_threads())
    r_fd, w_fd = os.pipe()
    os.write(w_fd, _zstd_stream(1)[:-8])  # (the EOS marker is the last 8 bytes)
    reader = arrowmm.open_stream(os.fdopen(r_fd, "rb", buffering=0))
    closed = []

    def close_writer():
        if not closed:
            closed.append(True)
            os.close(w_fd)
    try:
        yield reader, close_writer
    finally:
        close_writer()
        for t in set(_read_ahead_threads()) - before:
            t.join(HANG)
            assert not t.is_alive(), "a read-ahead thread outlived its pipe's writer"
        reader.close()


def test_releasing_a_pipe_export_does_not_wait_for_a_quiet_producer(quiet_pipe):
    reader, close_writer = quiet_pipe
    stream = pa.RecordBatchReader.from_stream(reader)
    assert stream.read_next_batch().column(0).to_pylist() == list(range(1000))
    # (the next batch is being read ahead now, blocked in the pipe's read)
    done, result = _in_thread(stream.close)
    assert done, f"releasing the export hung for {HANG}s on the quiet producer"
    assert result == (True, None)
    close_writer()  # (the read in flight ends: the stream has no more batches)
    done, result = _in_thread(reader.read_next_batch)
    assert done and result[0] is False and isinstance(result[1], StopIteration)


def test_a_batch_read_ahead_for_a_released_export_is_not_skipped():
    for pause in (0, 0.05):
        reader = arrowmm.open_stream(io.BufferedReader(io.BytesIO(_zstd_stream(4))))
        stream = pa.RecordBatchReader.from_stream(reader)
        assert stream.read_next_batch().column(0).to_pylist() == list(range(1000))
        stream.close()
        threading.Event().wait(pause)
        rest = [b.column(0).to_pylist() for b in reader]
        assert rest == [list(range(i * 1000, (i + 1) * 1000)) for i in (1, 2, 3)]


def test_closing_the_decoded_generator_returns_while_the_read_blocks(quiet_pipe):
    reader, _ = quiet_pipe
    gen = reader._decoded_batches()
    assert next(gen).num_rows == 1000
    done, result = _in_thread(gen.close)
    assert done and result == (True, None)
    with pytest.raises(StopIteration):
        next(gen)


def test_an_unrelated_readers_export_is_not_held_up_by_a_blocked_one(quiet_pipe, tmp_path):
    reader, _ = quiet_pipe
    gen = reader._decoded_batches()
    assert next(gen).num_rows == 1000  # (and the next read now blocks on the pipe)
    other = arrowmm.open_stream(io.BufferedReader(io.BytesIO(_zstd_stream(3))))

    def read_other():
        return pa.RecordBatchReader.from_stream(other).read_all().column(0).to_pylist()
    done, result = _in_thread(read_other)
    assert done, f"an unrelated reader's export waited {HANG}s behind a blocked pipe"
    assert result == (True, list(range(3000)))
    path = tmp_path / "z.arrow"
    write_ipc(path, pa.table({"x": pa.array(range(5000))}),
              options=pa.ipc.IpcWriteOptions(compression="lz4"))
    with arrowmm.open_file(path) as f:
        done, result = _in_thread(lambda: f.to_pandas()["x"].tolist())
    assert done and result == (True, list(range(5000)))
    gen.close()


def test_a_finished_export_leaves_no_read_ahead_thread():
    before = set(_read_ahead_threads())
    with arrowmm.open_stream(io.BufferedReader(io.BytesIO(_zstd_stream(3)))) as r:
        got = pa.RecordBatchReader.from_stream(r).read_all()
    assert got.column(0).to_pylist() == list(range(3000))
    for t in set(_read_ahead_threads()) - before:
        t.join(HANG)
        assert not t.is_alive(), "a read-ahead thread outlived a finished export"


def test_take_runs_a_step_the_thread_has_not_started_on_the_consumers_thread():
    # The consumer keeps the GIL (a long switch interval), so the read-ahead thread, woken by
    # ask(), cannot begin the step before take(): take must run it itself, once.
    ran = []

    def step():
        ran.append(threading.get_ident())
        return len(ran)

    ahead = decode_ahead.OneAhead(step, inline=True)
    old = sys.getswitchinterval()
    sys.setswitchinterval(100)
    try:
        ahead.ask()
        got = ahead.take()
    finally:
        sys.setswitchinterval(old)
        ahead.stop()
    assert got == 1
    assert ran == [threading.get_ident()]


def test_steps_shared_between_take_and_the_thread_run_once_each_in_order():
    busy = threading.Lock()
    calls = []

    def step():
        assert busy.acquire(blocking=False), "two steps ran at once"
        try:
            calls.append(threading.get_ident())
            return len(calls) if len(calls) <= 300 else None
        finally:
            busy.release()

    ahead = decode_ahead.OneAhead(step, inline=True)
    got = []
    try:
        ahead.ask()
        while True:
            b = ahead.take()
            if b is None:
                break
            got.append(b)
            ahead.ask()
            if b % 7 == 0:
                time.sleep(0.001)  # (sometimes the thread gets there first)
    finally:
        ahead.stop()
    assert got == list(range(1, 301))
    assert len(calls) == 301


@pytest.mark.parametrize("codec", CODECS)
def test_export_with_steps_run_inline_equals_pyarrows(codec, tmp_path):
    batches = [mixed(3_000, seed) for seed in range(12)]
    path = write_ipc(tmp_path / f"inline.{codec}.arrow", batches,
                     options=pa.ipc.IpcWriteOptions(compression=codec))
    expected = pa.ipc.open_file(pa.memory_map(str(path))).read_all()
    old = sys.getswitchinterval()
    sys.setswitchinterval(100)  # (every step inline)
    try:
        with arrowmm.open_file(path) as r:
            got = pa.table(r)
    finally:
        sys.setswitchinterval(old)
    assert got.equals(expected)
