"""Plain fixed-width columns of uncompressed batches load without the walk
(``BatchLoader.column``'s fast path, ``SchemaPlan.fixed_columns``): values, nulls, slices and
counts equal the walk's and pyarrow's, and anything unusual goes to the walk, which names it
(the hostile-input sweeps of test_hostile.py mutate these columns too)."""
from __future__ import annotations

import datetime
import decimal

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from arrowmm.errors import ArrowInvalid
from tests.support.helpers import ipc_bytes, write_ipc


def fixed_table(n: int = 1000) -> pa.Table:
    rng = np.random.default_rng(5)
    mask = rng.random(n) < 0.2
    return pa.table({
        "i8": pa.array(rng.integers(-100, 100, n).astype(np.int8), mask=mask),
        "u64": pa.array(rng.integers(0, 1 << 62, n).astype(np.uint64)),
        "f32": pa.array(rng.random(n).astype(np.float32), mask=mask),
        "f64": pa.array(rng.random(n)),
        "d32": pa.array([datetime.date(2020, 1, 1 + i % 28) for i in range(n)], pa.date32()),
        "ts": pa.array(rng.integers(0, 1 << 40, n), pa.timestamp("us", "UTC"), mask=mask),
        "dur": pa.array(rng.integers(0, 1 << 30, n), pa.duration("ms")),
        "t64": pa.array(rng.integers(0, 86_400 * 10**6, n), pa.time64("us")),
        "dec": pa.array([decimal.Decimal(i) / 100 for i in range(n)], pa.decimal128(10, 2)),
        "s": pa.array([str(i) for i in range(n)]),  # (not fixed: the walk)
    })


def test_fixed_columns_are_planned_for_plain_fixed_width_types_only(tmp_path):
    path = write_ipc(tmp_path / "t.arrow", fixed_table(10))
    with arrowmm.open_file(path) as r:
        plan = r._plan(r.version)
        kinds = [None if spec is None else spec[1] for spec in plan.fixed_columns]
        assert kinds[:-1] == [f.type for f in r.schema.fields[:-1]]
        assert kinds[-1] is None


def test_values_nulls_and_counts_equal_pyarrow(tmp_path):
    table = fixed_table()
    path = write_ipc(tmp_path / "t.arrow", table)
    with arrowmm.open_file(path) as r:
        b = r.get_batch(0)
        for k in range(table.num_columns):
            col = b.column(k)
            assert col.null_count == table.column(k).null_count
            assert pa.array(col).equals(table.column(k).chunk(0))
            assert col.is_zero_copy
        assert r.stats.columns_loaded == table.num_columns
        assert r.stats.bytes_copied == 0
        sl = r.get_batch(0).slice(17, 300)
        assert pa.record_batch(sl).equals(table.to_batches()[0].slice(17, 300))


def test_a_stream_in_memory_and_the_same_columns_from_threads(tmp_path):
    table = fixed_table(5000)
    with arrowmm.open_stream(ipc_bytes(table, fmt="stream")) as r:
        b = r.read_next_batch()
    import threading
    got = []
    threads = [threading.Thread(target=lambda: got.append([b.column(k) for k in range(10)]))
               for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert all(all(x is y for x, y in zip(g, got[0])) for g in got)  # decoded once each


def test_a_column_whose_node_disagrees_goes_to_the_walk_which_names_it(tmp_path):
    # a batch of 3 rows whose int64 column's node says 2 rows: the fast path declines, and
    # the walk's error names the column
    good = pa.record_batch({"x": pa.array([1, 2, 3], pa.int64())})
    short = pa.record_batch({"x": pa.array([1, 2], pa.int64())})
    data = bytearray(ipc_bytes(good, fmt="stream"))
    # the field node (length 3, nulls 0) sits in the record batch's metadata: find and patch it
    node = np.array([3, 0], dtype="<i8").tobytes()
    at = data.find(node)
    assert at > 0 and short.num_rows == 2
    data[at:at + 8] = np.array([2], dtype="<i8").tobytes()
    with arrowmm.open_stream(bytes(data)) as r:
        b = r.read_next_batch()
        with pytest.raises(ArrowInvalid, match=r"column 0 \('x'\).*length 2 differs"):
            b.column(0)


def test_threads_racing_on_first_touch_get_one_array_counted_once(tmp_path):
    # plain columns are built without the column's lock (RecordBatch._publish keeps the first):
    # every thread must get the same Array, and the reader must count each column once
    import threading
    table = fixed_table(2000)
    path = write_ipc(tmp_path / "t.arrow", pa.Table.from_batches(table.to_batches() * 20))
    n_threads, fixed = 6, table.num_columns - 1
    with arrowmm.open_file(path) as r:
        for i in range(r.num_record_batches):
            b = r.get_batch(i)
            barrier = threading.Barrier(n_threads)
            got = [None] * n_threads

            def touch(t):
                barrier.wait()
                got[t] = [b.column(k) for k in range(fixed)]
            threads = [threading.Thread(target=touch, args=(t,)) for t in range(n_threads)]
            for th in threads:
                th.start()
            for th in threads:
                th.join()
            assert all(x is y for g in got for x, y in zip(g, got[0]))
            assert pa.array(got[0][3]).equals(table.column(3).chunk(0))
        assert r.stats.columns_loaded == fixed * r.num_record_batches


def test_plain_columns_after_a_view_column_load_through_the_walk(tmp_path):
    # a string_view column's variadic buffers shift the buffers of the columns after it
    table = pa.table({"v": pa.array(["short", "a longer string value", None], pa.string_view()),
                      "x": pa.array([1.5, None, 3.5]), "y": pa.array([7, 8, 9], pa.int32())})
    path = write_ipc(tmp_path / "t.arrow", table)
    with arrowmm.open_file(path) as r:
        b = r.get_batch(0)
        assert pa.array(b.column("y")).equals(table.column("y").chunk(0))
        assert pa.array(b.column("x")).equals(table.column("x").chunk(0))
        assert b.column("v").to_pylist() == ["short", "a longer string value", None]


def test_buffer_views_stay_out_of_the_cyclic_collector_and_still_release_the_file(tmp_path):
    # (a wide batch makes a view or two per column: the collector traversing them cost a
    # third of taking 100 columns to numpy with a few batches alive; see BufferView)
    import gc
    import weakref
    path = write_ipc(tmp_path / "t.arrow", fixed_table(100))
    r = arrowmm.open_file(path)
    col = r.get_batch(0).column("f64")
    view = col._buffers[1]
    assert not gc.is_tracked(view)
    region = weakref.ref(view.region)
    values = col.to_numpy()
    r.close()
    del r, col, view
    gc.collect()
    assert region() is not None and values[3] == fixed_table(100).column("f64")[3].as_py()
    del values
    gc.collect()
    assert region() is None  # (the last view gone: the mapping goes with it)


def test_a_batch_header_and_its_batch_add_little_to_the_cyclic_collector(tmp_path):
    # (read_all() of 5,000 small batches made 8 tracked objects a batch; the collector's
    # passes over them cost as much as the read itself: the header's two struct vectors and
    # the batch's bound plain-column method are no longer among them)
    import gc
    path = write_ipc(tmp_path / "t.arrow", pa.Table.from_batches(
        fixed_table(10).to_batches() * 50))
    with arrowmm.open_file(path) as r:
        batches = r.read_all().to_batches()
        assert len(batches) == 50
        for b in batches[:3]:
            header = b._loader.header
            assert not gc.is_tracked(header.nodes) and not gc.is_tracked(header.buffers)
            assert b._plain is b._loader or b._plain is None
        assert pa.table(r.read_all()).equals(
            pa.Table.from_batches(fixed_table(10).to_batches() * 50))
        assert all(pa.array(c).equals(e.chunk(0)) for c, e in zip(batches[7].columns,
                                                                   fixed_table(10).columns))
