"""A stream writer of many small batches holds nothing per batch: a stream has no footer, so
the Blocks a file writer lists there are not kept (they grew without bound, ~100 bytes a
batch, in a stream that runs for days)."""
from __future__ import annotations

import tracemalloc

import numpy as np

import arrowmm


class _Discard:
    """A sink that takes every byte and keeps none."""

    def write(self, data):
        return memoryview(data).nbytes


def test_a_long_stream_holds_no_memory_per_batch():
    batch = arrowmm.record_batch({"i": np.arange(8), "s": [f"s{j}" for j in range(8)]})
    with arrowmm.new_stream(_Discard(), batch.schema) as w:
        for _ in range(100):
            w.write(batch)
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            for _ in range(20_000):
                w.write(batch)
            grown = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        assert w.num_record_batches == 20_100
    assert grown < 64 << 10, f"{grown:,} bytes kept for 20,000 batches"
