"""The next batch read ahead of a walk in batch order (``decode_ahead.ReadAhead._read_next``,
issue 34): a walk that has taken whole batches has the next one made and decoded beside the
current one, handed out by ``get_batch``; one batch at most beyond the walk, let go when the
walk stops, its damage raised for the column that holds it, and a caller that reads a column
at a time stays lazy."""
from __future__ import annotations

import gc
import weakref

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from arrowmm.arrays import decode_ahead
from arrowmm.errors import ArrowInvalid
from tests.support.helpers import write_ipc

MAGIC = {"zstd": b"\x28\xb5\x2f\xfd", "lz4": b"\x04\x22\x4d\x18"}  # (each codec's frame magic)


def _batch(rows: int, seed: int) -> pa.RecordBatch:
    rng = np.random.default_rng(seed)
    mask = rng.random(rows) < 0.1
    lengths = rng.integers(0, 9, rows)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    return pa.record_batch({
        "f64": pa.array(rng.random(rows), mask=mask),
        "i64": pa.array(rng.integers(0, 1 << 40, rows), mask=mask),
        "s": pa.array(np.array(["a", "bc", "defghijklmno"], dtype=object)[rng.integers(0, 3, rows)],
                      mask=mask),
        "l": pa.ListArray.from_arrays(pa.array(offsets),
                                      pa.array(rng.integers(0, 99, offsets[-1], dtype=np.int32))),
    })


@pytest.fixture(scope="module", params=sorted(MAGIC))
def four_batches(request, tmp_path_factory):
    """(path, pyarrow table, codec) of a file of 4 compressed batches."""
    table = pa.Table.from_batches([_batch(20_000, s) for s in range(4)])
    path = tmp_path_factory.mktemp("next") / f"t.{request.param}.arrow"
    write_ipc(path, table, options=pa.ipc.IpcWriteOptions(compression=request.param))
    return path, table, request.param


def _loaded(batch) -> list:
    return [k for k in range(batch.num_columns) if batch.is_loaded(k)]


def test_a_walk_in_batch_order_has_the_next_batch_read_ahead_and_a_column_walk_none(four_batches):
    path, table, _ = four_batches
    with arrowmm.open_file(path) as r:
        # one column down the batches (the lazy path): no batch is read ahead, no other column
        held = [r.get_batch(i) for i in range(4)]
        for b in held:
            b.column(2)
        decode_ahead.drain()
        for b in held:  # (past the last batch a walk down goes on with the next column)
            assert set(_loaded(b)) <= {2, 3}
        del held, b
    with arrowmm.open_file(path) as r:
        b = r.get_batch(0)
        for k in range(4):
            b.column(k)
        decode_ahead.drain()
        nxt = r.get_batch(1)
        assert _loaded(nxt) == [0, 1, 2, 3]  # (read ahead, before the caller asks)
        assert _loaded(r.get_batch(2)) == []  # (one batch beyond the walk, no more)
        assert r.stats.columns_loaded == 8  # (each column of the two batches decoded once)
        assert pa.record_batch(nxt).equals(table.to_batches()[1])


def test_a_long_walk_holds_at_most_the_next_batch_beyond_its_own(four_batches):
    path, table, _ = four_batches
    with arrowmm.open_file(path) as r:
        for i in range(4):
            b = r.get_batch(i)
            got = [pa.array(b.column(k)) for k in range(4)]
            assert got == table.to_batches()[i].columns
            decode_ahead.drain()
            gc.collect()
            assert sorted(r._ahead._batches.keys()) == [j for j in (i, i + 1) if j < 4]
        assert r.stats.columns_loaded == 16


def test_the_batch_read_ahead_is_let_go_when_the_walk_stops(four_batches):
    path, table, _ = four_batches
    with arrowmm.open_file(path) as r:
        b = r.get_batch(0)
        for k in range(4):
            b.column(k)
        decode_ahead.drain()
        ahead = weakref.ref(r._ahead._next.held)  # (batch 1, read ahead, never asked for)
        assert ahead().num_rows == 20_000
        del b  # (the walk stops at batch 0)
        gc.collect()
        assert ahead() is None
        again = r.get_batch(1)  # (made anew, lazy)
        assert _loaded(again) == []
        assert pa.record_batch(again).equals(table.to_batches()[1])
        # a reader closed with a batch read ahead lets it go too
        b = r.get_batch(2)
        for k in range(4):
            b.column(k)
        decode_ahead.drain()
        ahead = weakref.ref(r._ahead._next.held)
    gc.collect()
    assert ahead() is None


def test_damage_in_a_batch_read_ahead_is_raised_for_its_column_only(four_batches, tmp_path):
    path, table, codec = four_batches
    data = bytearray(path.read_bytes())
    with arrowmm.open_file(path) as r:
        off, size = r.batch_extents()[1]
    at = data.find(MAGIC[codec], off, off + size)  # (batch 1's first compressed buffer)
    assert at > 0
    data[at:at + 4] = b"\0\0\0\0"
    bad = tmp_path / f"bad.{codec}.arrow"
    bad.write_bytes(bytes(data))
    with arrowmm.open_file(bad) as r:
        b = r.get_batch(0)
        for k in range(4):  # (the walk over batch 0 has batch 1 read ahead: nothing raised)
            b.column(k)
        decode_ahead.drain()
        b = r.get_batch(1)
        good = _loaded(b)
        assert len(good) == 3  # (the three undamaged columns, read ahead)
        broken = ({0, 1, 2, 3} - set(good)).pop()
        for k in good:
            assert pa.array(b.column(k)).equals(table.to_batches()[1].column(k))
        for _ in range(2):  # (raised to each caller that asks for it, by name)
            with pytest.raises(ArrowInvalid, match="record batch 1"):
                b.column(broken)
        assert pa.record_batch(r.get_batch(2)).equals(table.to_batches()[2])


def test_the_export_of_a_file_decodes_the_next_batch_beside_this_one_on_the_callers_side(
        four_batches):
    # (issue 34) pyarrow.table(reader): each batch decoded whole, the next one read ahead on
    # the read-ahead lanes (two batches at once), without a reading thread of the export's
    # own (a mapped file's reads never block): a batch decoded alone left a core idle.
    import threading
    path, table, _ = four_batches
    before = {t.ident for t in threading.enumerate() if t.name == "arrowmm-read-ahead"}
    with arrowmm.open_file(path) as r:
        stream = pa.RecordBatchReader.from_stream(r)
        first = stream.read_next_batch()
        assert {t.ident for t in threading.enumerate() if t.name == "arrowmm-read-ahead"} \
            <= before  # (no reading thread of the export's own, even while it is open)
        decode_ahead.drain()
        gc.collect()
        assert sorted(r._ahead._batches.keys()) == [0, 1]  # (this batch and the next only)
        assert r.stats.columns_loaded == 8
        rest = stream.read_all()
        assert r.stats.columns_loaded == 16  # (each column once)
    assert pa.Table.from_batches([first, *rest.to_batches()]).equals(table)
    assert {t.ident for t in threading.enumerate() if t.name == "arrowmm-read-ahead"} <= before
