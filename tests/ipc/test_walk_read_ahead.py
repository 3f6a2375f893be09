"""The read-ahead of a walk on a fresh reader: a caller that reads single columns, batches out
of order, decodes those columns only, however its decodes overlap; and a caller waiting for a
column of batch 0 still being decoded gets it then, without decoding batch 1 on its own
thread first (review 21: F2; a read-ahead tried today did that, 10x slower for a walk of a
few columns, and was reverted)."""
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


@pytest.fixture(scope="module")
def small_then_big(tmp_path_factory):
    """A ZSTD file of a 20,000-row batch, then a 200,000-row one."""
    rng = np.random.default_rng(0)

    def batch(n):
        return pa.record_batch({f"c{j}": pa.array(rng.integers(0, 1000, n)) for j in range(5)})
    path = tmp_path_factory.mktemp("ahead") / "t.arrow"
    table = pa.Table.from_batches([batch(20_000), batch(200_000)])
    write_ipc(path, table, options=pa.ipc.IpcWriteOptions(compression="zstd"))
    return path


def test_a_column_of_batch_0_being_decoded_does_not_wait_for_batch_1(small_then_big,
                                                                    monkeypatch):
    # batch 0's rest is decoding on the read-ahead thread (held 0.2 s here, as a big buffer
    # would be) when the caller asks for column 2; the thread that reads batch 1 ahead is late
    # (0.5 s): the caller's wait is its column's, not batch 1's whole decode on its thread
    # (which is held here, so a caller doing it never comes back)
    prefetch = BatchLoader.prefetch
    run_rest = decode_ahead.ReadAhead._run_rest
    first = []
    on_caller, release = threading.Event(), threading.Event()

    def held(self, ks, then=None):
        name = threading.current_thread().name
        if first and self is first[0] and name.startswith("arrowmm-decode-ahead"):
            time.sleep(0.2)
        elif first and self is not first[0] and name == "waiter":
            on_caller.set()
            release.wait(WAIT)
        return prefetch(self, ks, then)

    def late_rest(self, rest):
        if rest.index == 1:
            time.sleep(0.5)
        return run_rest(self, rest)

    monkeypatch.setattr(BatchLoader, "prefetch", held)
    monkeypatch.setattr(decode_ahead.ReadAhead, "_run_rest", late_rest)
    with arrowmm.open_file(small_then_big) as reader:
        batch = reader.get_batch(0)
        first.append(batch._loader)
        batch.column(0)
        batch.column(1)
        got = {}
        waiter = threading.Thread(target=lambda: got.setdefault(2, batch.column(2)),
                                  name="waiter")
        waiter.start()
        try:
            waiter.join(3.0)
            returned = not waiter.is_alive()
        finally:
            release.set()
            waiter.join(WAIT)
        decode_ahead.drain()
    assert returned, f"column 2 waited for batch 1 (decoded on the caller: {on_caller.is_set()})"
    assert not on_caller.is_set()
    assert len(got[2]) == 20_000


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


_CUT_AFTER_CLOSE = """
import os, sys
import arrowmm
path = sys.argv[1]
for round in range(int(sys.argv[2])):
    os.system(f"cp {path}.orig {path}")
    reader = arrowmm.open_file(path)
    batches = [reader.get_batch(0)]
    batches[0].column(0), batches[0].column(1)  # (a walk in batch order: the rest read ahead)
    reader.close()
    os.truncate(path, 0)  # (the user rewrites the file it closed; its batches live on)
print("alive", flush=True)
"""


def test_a_file_cut_once_its_reader_closed_kills_no_read_ahead(tmp_path):
    """``close`` stops the read-ahead and waits for the decodes under way: the file may then
    be cut or rewritten.  A read-ahead still decoding the rest of a batch from the mapping
    died of SIGBUS, with the process (a CI run did, in a test that rewrote a file it had
    read), although the caller closed the reader and touched none of its batches again."""
    table = pa.Table.from_batches([_batch(400_000, s) for s in range(3)])
    path = tmp_path / "cut.arrow"
    write_ipc(str(path) + ".orig", table, options=pa.ipc.IpcWriteOptions(compression="zstd"))
    out = subprocess.run([sys.executable, "-c", _CUT_AFTER_CLOSE, str(path), "20"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout == "alive\n", (out.returncode, out.stderr[-2000:])


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_walks_and_closes_a_reader_opened_before_the_fork(tmp_path):
    """The after-fork hook remakes the read-ahead's lock as the condition ``close`` waits on
    (review 25: it made a plain lock, and a forked worker's column read or ``close`` raised
    AttributeError)."""
    table = pa.Table.from_batches([_batch(20_000, s) for s in range(3)])
    path = str(tmp_path / "fork.arrow")
    write_ipc(path, table, options=pa.ipc.IpcWriteOptions(compression="zstd"))
    reader = arrowmm.open_file(path)
    reader.get_batch(0).column(0)  # (the reader's read-ahead exists before the fork)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            b0, b1 = reader.get_batch(0), reader.get_batch(1)
            b1.decode_columns()
            ok = all(pa.array(b0.column(k)).equals(table.column(k).chunk(0)) for k in range(5))
            reader.close()
            code = 0 if ok else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    reader.close()
    assert os.waitstatus_to_exitcode(status) == 0
