"""Memory visibility and control: ``reader.memory()`` and ``reader.advise()``.

The resident figure is the kernel's own count for the mapping (``/proc/self/smaps``), so these
tests watch real page-table state: opening touches only the footer's pages, one column of four
brings in about a quarter of the file, ``advise("dontneed")`` gives the pages back, and the
data reads the same afterwards (it comes back from the file).
"""
from __future__ import annotations

import io
import sys

import numpy as np
import pytest

import arrowmm

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="resident bytes come from /proc/self/smaps (Linux)")

ROWS, BATCHES = 1 << 20, 4  # 4 float64 columns x 4M rows: 128 MiB


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    p = tmp_path_factory.mktemp("memory") / "four_columns.arrow"
    schema = arrowmm.schema([(f"c{k}", arrowmm.float64()) for k in range(4)])
    rng = np.random.default_rng(3)
    with arrowmm.new_file(p, schema) as w:
        for _ in range(BATCHES):
            w.write({f"c{k}": rng.random(ROWS) for k in range(4)})
    return p


def _sums(reader, k):
    return [float(reader.get_batch(i).column(k).to_numpy().sum()) for i in range(BATCHES)]


def test_resident_follows_what_is_touched_and_dontneed_gives_it_back(path):
    with arrowmm.open_file(path) as reader:
        size = reader.memory()["mapped"]
        assert size == path.stat().st_size
        assert reader.memory()["resident"] < 1 << 20  # open: footer and schema pages only
        first = _sums(reader, 1)
        one_column = reader.memory()["resident"]
        assert 0.2 * size < one_column < 0.5 * size  # a quarter of the file, not all of it
        for k in range(4):
            _sums(reader, k)
        assert reader.memory()["resident"] > 0.9 * size
        reader.advise("dontneed")
        assert reader.memory()["resident"] < 0.05 * size
        assert _sums(reader, 1) == first  # read again from the file, unchanged
        reader.advise("dontneed", offset=0, length=size // 2)  # a range, widened to pages
        for advice in ("random", "sequential", "willneed", "normal"):
            reader.advise(advice)
        assert reader.memory()["decompressed"] == reader.memory()["realigned"] == 0


def test_decompressed_bytes_are_counted_apart_from_the_mapping(tmp_path):
    p = tmp_path / "lz4.arrow"
    schema = arrowmm.schema([("x", arrowmm.int64())])
    with arrowmm.new_file(p, schema, compression="lz4") as w:
        w.write({"x": np.arange(1 << 18, dtype=np.int64)})
    with arrowmm.open_file(p) as reader:
        assert reader.memory()["decompressed"] == 0
        reader.get_batch(0).column(0).to_numpy()
        assert reader.memory()["decompressed"] == 8 << 18


def test_advice_is_refused_where_it_would_be_wrong(path):
    data = path.read_bytes()
    with arrowmm.open_file(data) as reader:  # memory we don't own as a mapping: no advice
        assert reader.memory()["resident"] is None
        with pytest.raises(arrowmm.ArrowInvalid, match="memory-mapped files"):
            reader.advise("dontneed")
    with arrowmm.open_file(path) as reader:
        with pytest.raises(arrowmm.ArrowInvalid, match="unknown advice"):
            reader.advise("forget")
        with pytest.raises(arrowmm.ArrowInvalid, match="outside"):
            reader.advise("willneed", offset=len(data) + 1)
        with pytest.raises(arrowmm.ArrowInvalid, match="outside"):
            reader.advise("willneed", offset=8, length=len(data))
    with pytest.raises(arrowmm.ArrowInvalid, match="closed"):
        reader.memory()
    sink = io.BytesIO()
    with arrowmm.new_stream(sink, arrowmm.schema([("x", arrowmm.int8())])) as w:
        w.write({"x": [1]})
    stream = arrowmm.open_stream(io.BufferedReader(io.BytesIO(sink.getvalue())))  # through .read()
    with pytest.raises(arrowmm.ArrowInvalid, match="file object"):
        stream.advise("random")
    with pytest.raises(arrowmm.ArrowInvalid, match="file object"):
        stream.memory()


def test_stream_readers_and_shared_segments_take_advice_too(path):
    with arrowmm.open_stream(path) as reader:
        next(iter(reader)).column(0).to_numpy().sum()
        assert reader.memory()["resident"] > 0
        reader.advise("dontneed")
    batch = arrowmm.open_file(path).get_batch(0)
    with arrowmm.shm.share([batch]) as shared:
        reader = shared.open()
        reader.get_batch(0).column(0).to_numpy().sum()
        assert reader.memory()["resident"] >= 8 * ROWS
        reader.advise("random")
