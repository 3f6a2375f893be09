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
    gc.collect()  # (arrays of earlier tests held in cycles would give their blocks back mid-test)
    _arena.clear_cache()
    limit, resident, idle = _arena.cache_limit(), _arena.cache_resident(), _arena.cache_idle()
    yield
    _arena.cache_limit(limit)
    _arena.cache_resident(resident)
    _arena.cache_idle(idle)
    _arena.clear_cache()


def test_freed_block_is_reused_for_the_same_size_class():
    a = _arena.empty(SIZE)
    address = a.ctypes.data
    del a
    assert _arena.cache_info()[0] == 1
    b = _arena.empty(SIZE - 100)  # same size class
    assert b.ctypes.data == address
    assert _arena.cache_info() == (0, 0)


def test_a_table_of_many_buffers_is_cached_whole():
    # A decoded table of 6 batches of 5 columns gives back ~72 blocks at once: with room for
    # 64, the cache unmapped the rest, and the next decode faulted them in afresh (measured:
    # sys time and 10-20% on a compressed export).  Every block within the byte limit stays.
    blocks = [_arena.empty(_arena.MIN_SIZE + k * 4096) for k in range(300)]
    addresses = sorted(b.ctypes.data for b in blocks)
    sizes = [b.size for b in blocks]
    del blocks
    assert _arena.cache_info()[0] == 300
    again = [_arena.empty(n) for n in sizes]
    assert sorted(b.ctypes.data for b in again) == addresses
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
    cached = _arena.cache_info()[0]  # (blocks of earlier tests' arrays may come back any time)
    del views
    assert _arena.cache_info()[0] == cached + 1  # the first block, back once its last view went


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


# -- the cache's policy: how much, what the kernel may take back, what idle time gives back ---

GiB = 1 << 30


def test_default_limit_follows_physical_memory_within_bounds():
    assert _arena.default_cache_limit(physical=24 * GiB) == 3 * GiB  # an eighth
    assert _arena.default_cache_limit(physical=1 * GiB) == 256 << 20  # at least 256 MiB
    assert _arena.default_cache_limit(physical=256 * GiB) == 4 * GiB  # at most 4 GiB
    assert _arena.default_cache_limit(physical=0) == 256 << 20  # (physical memory unknown)


@pytest.mark.parametrize("text, expected", [("123", 123), ("512m", 512 << 20), ("512MiB", 512 << 20),
                                            ("2g", 2 * GiB), ("64k", 64 << 10), ("0", 0),
                                            (" ", None)])
def test_environment_variable_sets_the_limit(text, expected):
    got = _arena.default_cache_limit(physical=24 * GiB, env=text)
    assert got == (3 * GiB if expected is None else expected)


def test_malformed_environment_variable_is_refused():
    with pytest.raises(ValueError, match="ARROWMM_BLOCK_CACHE='lots'"):
        _arena.default_cache_limit(env="lots")


def test_environment_variable_reaches_a_new_process():
    import os
    import subprocess
    import sys
    env = dict(os.environ, ARROWMM_BLOCK_CACHE="64m")
    out = subprocess.run([sys.executable, "-c", "from arrowmm._core import _arena; "
                          "print(_arena.cache_limit())"], env=env, capture_output=True, text=True,
                         check=True)
    assert int(out.stdout) == 64 << 20


def _lazy_free_kib(addresses) -> int:
    """LazyFree (kB) of the mappings holding ``addresses``, from /proc/self/smaps (adjacent
    anonymous mappings show as one: each counted once)."""
    total, found, inside = 0, set(), False
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()[0]
            if "-" in head and not head.endswith(":"):
                lo, hi = (int(x, 16) for x in head.split("-"))
                held = {a for a in addresses if lo <= a < hi}
                found |= held
                inside = bool(held)
            elif inside and head == "LazyFree:":
                total += int(line.split()[1])
    assert found == set(addresses), "a block's mapping is missing from smaps"
    return total


def test_blocks_beyond_the_resident_part_are_left_to_the_kernel():
    """The first ``cache_resident()`` bytes stay as they are; blocks cached beyond are marked
    MADV_FREE (the kernel's own count, LazyFree in smaps, sees them and not the first), and
    taking one back gives writable memory that holds what is written."""
    import os
    if not os.path.exists("/proc/self/smaps"):
        pytest.skip("/proc/self/smaps (Linux) is needed to see what the kernel counts")
    _arena.cache_limit(16 * SIZE)
    _arena.cache_resident(SIZE)
    blocks = [_arena.empty(SIZE) for _ in range(3)]
    for b in blocks:
        b[:] = 1  # (fault the pages in: only present pages can be lazily freed)
    addresses = [b.ctypes.data for b in blocks]
    assert _lazy_free_kib(addresses) == 0
    del blocks, b
    count, nbytes = _arena.cache_info()
    assert count == 3
    cap = nbytes // 3
    assert _arena.lazily_freed() == 2 * cap  # the first block fits the resident part
    # (the kernel reclaims lazily freed pages only under memory pressure: not within this test
    # on a machine with memory to spare, and then never more than the two blocks marked)
    assert 0 < _lazy_free_kib(addresses) <= 2 * cap // 1024
    reused = _arena.empty(SIZE)
    assert reused.ctypes.data in addresses[1:]  # the newest first
    assert _arena.lazily_freed() == cap
    reused[:] = 5
    assert int(reused.min()) == int(reused.max()) == 5


def test_idle_blocks_are_unmapped():
    import time
    _arena.cache_idle(0.001)
    a = _arena.empty(SIZE)
    del a
    assert _arena.cache_info()[0] == 1
    time.sleep(0.05)  # (not a timing assertion: only makes the block older than 1 ms)
    b = _arena.empty(2 * SIZE)  # another size class: taking it expires the idle one
    assert _arena.cache_info() == (0, 0)
    del b


def test_policy_knobs_refuse_negative_values():
    with pytest.raises(ValueError):
        _arena.cache_resident(-1)
    with pytest.raises(ValueError):
        _arena.cache_idle(-1)
    with pytest.raises(ValueError):
        _arena.cache_idle(float("nan"))
