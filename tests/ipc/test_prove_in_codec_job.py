"""A compressed column is loaded and checked in the codec job that decompressed its last buffer
(``BatchLoader.prefetch(ks, then)``), while its buffers are in the cache, not once the whole
batch is decompressed (45 MB in bench_paths rows 2c and 1b, more than the L3 cache).

So:

* decoded together, each column's check comes right after its own buffers, before the next
  column's (one codec thread), or before the batch's decompression returns (two);
* a damaged column (bad UTF-8, decreasing offsets) checked there still fails its export,
  naming it, also when other columns of its batch were exported first;
* a check that raises inside a codec job fails that column only: the others decode.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from arrowmm.arrays import decode_ahead
from arrowmm.ipc.core import compression
from arrowmm.ipc.read import loader
from tests.ipc.test_prove_decoded import _file, _strings as strings_of

N = 300_000  # rows: 1.2 MB of values a column, enough for the codec pool's threads


def _strings(damage=None):
    return strings_of(damage, N)


@pytest.fixture
def codec_threads():
    """``parallel_threads(n)`` for the test, the process's own number restored after it."""
    old = compression.parallel_threads()
    yield compression.parallel_threads
    compression.parallel_threads(old)


@pytest.fixture
def events(monkeypatch):
    """What the loader does, in order: ("buffer", declared bytes) per buffer decompressed,
    ("check", verdict) per column proved, ("batch decompressed", buffers) when a prefetch's
    decompression of that many buffers returns."""
    seen = []
    decompress, prove, many = (compression.decompress_payload, loader.prove_decoded,
                               loader.decompress_many)

    def decompress_payload(view, codec, what):
        seen.append(("buffer", compression.compressed_size(view)))
        return decompress(view, codec, what)

    def prove_decoded(array):
        verdict = prove(array)
        seen.append(("check", verdict))
        return verdict

    def decompress_many(views, *args, **kwargs):
        out = many(views, *args, **kwargs)
        seen.append(("batch decompressed", len(views)))
        return out

    monkeypatch.setattr(compression, "decompress_payload", decompress_payload)
    monkeypatch.setattr(loader, "prove_decoded", prove_decoded)
    monkeypatch.setattr(loader, "decompress_many", decompress_many)
    return seen


def test_each_column_is_checked_right_after_its_buffers(tmp_path, codec_threads, events):
    codec_threads(1)
    path = _file(tmp_path, {"a": _strings(), "b": _strings(), "c": _strings()})
    with arrowmm.open_file(path) as r:
        batch = r.get_batch(0)
        batch.decode_columns()
        kinds = [e[0] for e in events]
        # (validity, offsets, values, then the column's check; the checks came last, together)
        assert kinds == ["buffer", "buffer", "buffer", "check"] * 3 + ["batch decompressed"]
        assert events[-1] == ("batch decompressed", 9)
        assert [e[1] for e in events if e[0] == "check"] == [True, True, True]
        assert all(pa.array(batch.column(k)).equals(_strings()) for k in range(3))


@pytest.mark.parametrize("codec", ["lz4", "zstd"])
@pytest.mark.parametrize("damage, words", [("utf8", r"value\[7000\].*not valid UTF-8"),
                                           ("offsets", r"offset\[7001\]=3 < offset\[7000\]")])
def test_damaged_column_checked_in_its_codec_job_fails_its_export(tmp_path, codec_threads,
                                                                  events, codec, damage, words):
    codec_threads(2)
    path = _file(tmp_path, {"good": _strings(), "also good": _strings(), "bad": _strings(damage),
                            "i": pa.array(np.arange(N))}, codec)
    with arrowmm.open_file(path) as r:
        batch = r.get_batch(0)
        # columns 0 and 1 in order: the walk takes the batch whole, the rest decodes together
        assert pa.array(batch.column(0)).equals(_strings())
        assert pa.array(batch.column(1)).equals(_strings())
        for _ in range(2):  # (a failed check is no verdict: the next export fails again)
            with pytest.raises(arrowmm.ArrowInvalid, match=words):
                batch.column(2).__arrow_c_array__()
        decode_ahead.drain()
        refused = events.index(("check", False))
        # (refused inside the codec job of columns 2 and 3: 3 + 2 buffers)
        assert ("batch decompressed", 5) in events[refused:]
        assert pa.array(batch.column(3)).equals(pa.array(np.arange(N)))
        with pytest.raises(arrowmm.ArrowInvalid, match=r"column 2 \('bad'\).*" + words):
            pa.record_batch(batch)


def test_damaged_column_decoded_with_its_batch_fails_only_itself(tmp_path, codec_threads,
                                                                 events):
    codec_threads(2)
    path = _file(tmp_path, {"bad": _strings("utf8"), "good": _strings()})
    with arrowmm.open_file(path) as r:
        batch = r.get_batch(0)
        batch.decode_columns()
        assert sorted(e[1] for e in events if e[0] == "check") == [False, True]
        assert events[-1] == ("batch decompressed", 6)
        assert pa.array(batch.column(1)).equals(_strings())
        with pytest.raises(arrowmm.ArrowInvalid, match=r"value\[7000\].*not valid UTF-8"):
            pa.array(batch.column(0))


def test_a_load_that_raises_in_a_codec_job_fails_that_column_only(tmp_path, codec_threads,
                                                                  monkeypatch, events):
    codec_threads(2)
    path = _file(tmp_path, {"a": _strings(), "b": _strings(), "c": _strings()})
    column = loader.BatchLoader.column

    def column_b_raises(self, k, decoded=None):
        if k == 1 and ("raised",) not in events:
            events.append(("raised",))
            raise arrowmm.ArrowInvalid("column 1 raised in its codec job")
        return column(self, k, decoded)

    monkeypatch.setattr(loader.BatchLoader, "column", column_b_raises)
    with arrowmm.open_file(path) as r:
        batch = r.get_batch(0)
        with pytest.raises(arrowmm.ArrowInvalid, match="column 1 raised in its codec job"):
            batch.decode_columns()
        assert events.index(("raised",)) < events.index(("batch decompressed", 9))
        assert batch._columns[0] is not None and batch._columns[2] is not None
        assert not batch._locks  # (every column's lock let go)
        assert all(pa.array(batch.column(k)).equals(_strings()) for k in range(3))
