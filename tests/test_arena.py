"""The block cache behind decompressed buffers: memory is reused only once nothing views it,
the cache stays within its limit, and decoded columns still report themselves as copies."""
from __future__ import annotations

import gc
import io

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from arrowmm._core import _arena

SIZE = 3 << 20


@pytest.fixture(autouse=True)
def empty_cache():
    _arena.clear_cache()
    limit = _arena.cache_limit()
    yield
    _arena.cache_limit(limit)
    _arena.clear_cache()


def test_freed_block_is_reused_for_the_same_size_class():
    a = _arena.empty(SIZE)
    address = a.ctypes.data
    del a
    assert _arena.cache_info()[0] == 1
    b = _arena.empty(SIZE - 100)  # same size class
    assert b.ctypes.data == address
    assert _arena.cache_info() == (0, 0)


def test_block_viewed_anywhere_is_not_reused():
    a = _arena.empty(SIZE)
    a[:] = 7
    views = [a[10:20].view(np.int16), memoryview(a)[5:9], np.frombuffer(a, np.uint32)[3:]]
    address = a.ctypes.data
    del a
    gc.collect()
    b = _arena.empty(SIZE)
    b[:] = 1
    assert b.ctypes.data != address
    assert views[0].tolist() == [0x0707] * 5 and bytes(views[1]) == b"\x07" * 4
    assert int(views[2][0]) == 0x07070707
    del views
    assert _arena.cache_info()[0] == 1  # the first block, back once its last view went


def test_cache_respects_its_limit():
    _arena.cache_limit(SIZE + (SIZE >> 1))
    blocks = [_arena.empty(SIZE) for _ in range(3)]
    del blocks
    count, nbytes = _arena.cache_info()
    assert count == 1 and nbytes <= _arena.cache_limit()
    _arena.cache_limit(0)
    assert _arena.cache_info() == (0, 0)
    a = _arena.empty(SIZE)
    del a
    assert _arena.cache_info() == (0, 0)


def test_small_requests_do_not_use_blocks():
    a = _arena.empty(100)
    assert a.size == 100 and a.flags.writeable
    assert not isinstance(a.base, memoryview)
    assert _arena.empty(0).size == 0


@pytest.mark.parametrize("codec", ["lz4", "zstd"])
def test_decoded_columns_reuse_blocks_and_stay_correct(codec):
    values = [np.arange(k, k + 500_000, dtype=np.int64) for k in range(3)]
    sink = io.BytesIO()
    table = pa.table({f"c{k}": v for k, v in enumerate(values)})
    with pa.ipc.new_file(sink, table.schema, options=pa.ipc.IpcWriteOptions(compression=codec)) as w:
        w.write_table(table)
    data = sink.getvalue()
    kept = []
    for _ in range(3):  # later rounds decode into the blocks the earlier ones gave back
        with arrowmm.open_file(data) as r:
            batch = r.get_batch(0)
            cols = batch.columns
            assert all(not c.is_zero_copy for c in cols)
            for v, c in zip(values, cols):
                assert np.array_equal(c.to_numpy(), v)
            kept.append(cols[1].to_numpy())  # alive: its block must not be handed out again
    assert _arena.cache_info()[0] >= 1
    assert all(np.array_equal(k, values[1]) for k in kept)
