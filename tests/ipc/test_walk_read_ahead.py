"""The read-ahead of a walk in batch order on a fresh reader (issue 34): a walk that takes
batch 0 whole and finds a column still being decoded has batch 1 read and decoded then, not
once it reaches batch 0's last column; a caller that reads single columns, batches out of
order, decodes those columns only, however its decodes overlap."""
from __future__ import annotations

import threading
import time

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from arrowmm.arrays import decode_ahead
from arrowmm.ipc.read.loader import BatchLoader
from tests.support.helpers import write_ipc

WAIT = 10.0  # seconds a step may take on a loaded machine before the test gives up


def _batch(rows: int, seed: int) -> pa.RecordBatch:
    rng = np.random.default_rng(seed)
    offsets = np.concatenate([[0], np.cumsum(rng.integers(0, 6, rows))]).astype(np.int32)
    return pa.record_batch({
        "f64": pa.array(rng.random(rows), mask=rng.random(rows) < 0.1),
        "i64": pa.array(rng.integers(0, 1 << 40, rows)),
        "s": pa.array(np.array(["a", "bc", "dé"], dtype=object)[rng.integers(0, 3, rows)]),
        "l": pa.ListArray.from_arrays(pa.array(offsets),
                                      pa.array(rng.integers(0, 99, offsets[-1], dtype=np.int32))),
        "b": pa.array(rng.random(rows) < 0.5),
    })


@pytest.fixture(scope="module", params=["lz4", "zstd"])
def three_batches(request, tmp_path_factory):
    """(path, pyarrow table) of a file of 3 compressed batches of 5 columns."""
    table = pa.Table.from_batches([_batch(20_000, s) for s in range(3)])
    path = tmp_path_factory.mktemp("walk") / f"t.{request.param}.arrow"
    write_ipc(path, table, options=pa.ipc.IpcWriteOptions(compression=request.param))
    return path, table


def _loaded(batch) -> list:
    return [k for k in range(batch.num_columns) if batch.is_loaded(k)]


def _until(test) -> bool:
    end = time.monotonic() + WAIT
    while not test():
        if time.monotonic() > end:
            return False
        time.sleep(0.005)
    return True


def test_a_walk_waiting_for_the_rest_of_batch_0_has_batch_1_decoded_meanwhile(
        three_batches, monkeypatch):
    # Batch 0's rest (columns 2-4, claimed once columns 0 then 1 were asked for) is held on
    # its read-ahead thread; the caller asking for column 2 would wait for it.  Batch 1 is
    # read and decoded whole in that time (before: only at batch 0's last column).
    path, table = three_batches
    held, started, release = [], threading.Event(), threading.Event()
    prefetch = BatchLoader.prefetch

    def held_prefetch(self, ks, then=None):
        if held and self is held[0] and \
                threading.current_thread().name.startswith("arrowmm-decode-ahead"):
            started.set()
            release.wait(WAIT)
        return prefetch(self, ks, then)

    monkeypatch.setattr(BatchLoader, "prefetch", held_prefetch)
    with arrowmm.open_file(path) as r:
        b = r.get_batch(0)
        held.append(b._loader)
        b.column(0)
        b.column(1)
        assert started.wait(WAIT)  # (the rest of batch 0 is in flight, held)
        got = {}
        waiter = threading.Thread(target=lambda: got.setdefault(2, b.column(2)))
        waiter.start()
        try:
            ahead = r._ahead
            assert _until(lambda: ahead._next is not None and ahead._next.index == 1 and
                          ahead._next.held is not None and
                          len(_loaded(ahead._next.held)) == 5)
            assert not b.is_loaded(2) and 2 not in got  # (batch 0's column 2 still waited for)
            assert sorted(ahead._batches.keys()) == [0, 1]  # (one batch beyond the walk)
        finally:
            release.set()
            waiter.join(WAIT)
        assert pa.array(got[2]).equals(table.column(2).chunk(0))
        decode_ahead.drain()
        assert r.stats.columns_loaded == 10  # (each column of the two batches decoded once)
        nxt = r.get_batch(1)
        assert _loaded(nxt) == [0, 1, 2, 3, 4]  # (the batch read ahead, handed out)
        assert pa.record_batch(b).equals(table.to_batches()[0])
        assert pa.record_batch(nxt).equals(table.to_batches()[1])


def test_single_columns_of_batches_out_of_order_decode_those_columns_only(
        three_batches, monkeypatch):
    # The lazy promise: one column costs its own buffers, whatever else is asked.  Here two
    # threads ask for the same column at once (the second finds it being decoded, as a walk
    # waiting for a read-ahead does) in batches taken out of order: no other column and no
    # other batch is decoded.
    path, table = three_batches
    with arrowmm.open_file(path) as r:
        r.get_batch(0).column(3)
        per_column = r.stats.buffers_decompressed
    assert per_column > 0
    slow, entered = [], threading.Event()
    column = BatchLoader.column

    def slow_column(self, k, decoded=None):
        if slow and self is slow[0]:
            entered.set()
            time.sleep(0.2)  # (long enough for the second thread to find it in flight)
        return column(self, k, decoded)

    monkeypatch.setattr(BatchLoader, "column", slow_column)
    with arrowmm.open_file(path) as r:
        for i in (2, 0, 1):
            b = r.get_batch(i)
            slow[:] = [b._loader]
            entered.clear()
            first = threading.Thread(target=b.column, args=(3,))
            first.start()
            assert entered.wait(WAIT)
            again = b.column(3)  # (in flight on the other thread: waited for)
            first.join(WAIT)
            assert pa.array(again).equals(table.column(3).chunk(i))
            decode_ahead.drain()
            assert _loaded(b) == [3]
        assert r.stats.columns_loaded == 3
        assert r.stats.buffers_decompressed == 3 * per_column
        assert r._ahead._next is None  # (no batch read ahead)
