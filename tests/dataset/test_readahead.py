"""A dataset scan on a small thread pool (issue 18, item 3): the order is the sequential
scan's (and pyarrow.dataset's), memory is bounded, a file's error reaches the caller naming
the file, and closing the iterator early leaves no thread behind."""
import gc
import glob
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads
import pytest

import arrowmm
from arrowmm import ArrowInvalid
from arrowmm.dataset.readahead import THREAD_PREFIX, ordered_readahead

fsspec = None
try:
    import fsspec
except ImportError:  # (the fsspec case below says it is skipped)
    pass


def _scan_threads():
    return [t for t in threading.enumerate() if t.name.startswith(THREAD_PREFIX)]


@pytest.fixture
def many(tmp_path):
    """12 files of 1..5 batches of 1..40 rows, written with statistics."""
    root = tmp_path / "many"
    root.mkdir()
    schema = arrowmm.schema([("x", arrowmm.int64()), ("s", arrowmm.string())])
    rng = np.random.default_rng(7)
    start = 0
    for f in range(12):
        with arrowmm.new_file(str(root / f"part-{f:02d}.arrow"), schema, statistics=True) as w:
            for _ in range(int(rng.integers(1, 6))):
                n = int(rng.integers(1, 41))
                w.write({"x": list(range(start, start + n)),
                         "s": [f"f{f}" if k % 3 else None for k in range(n)]})
                start += n
    return str(root)


def test_threaded_scan_keeps_the_sequential_order_and_pyarrows(many):
    ds = arrowmm.dataset(many)
    pa_ds = pads.dataset(many, format="ipc")
    for flt, expr in ((None, None), ([("x", ">=", 100)], pc.field("x") >= 100),
                      ([[("x", "<", 30)], [("s", "==", "f7")]],
                       (pc.field("x") < 30) | (pc.field("s") == "f7"))):
        want = pa_ds.to_table(filter=expr)
        threaded = pa.table(ds.to_table(filter=flt))
        sequential = pa.table(ds.to_table(filter=flt, use_threads=False))
        assert threaded.equals(want) and sequential.equals(want)
        # tight bounds: one batch ahead, two files at once
        tight = [b.column("x").to_pylist() for b in
                 ds.to_batches(filter=flt, batch_readahead=1, fragment_readahead=2)]
        assert sum(tight, []) == want.column("x").to_pylist()
    assert ds.count_rows() == pa_ds.count_rows() == ds.count_rows(use_threads=False)
    assert pa.table(ds).equals(pa_ds.to_table())
    assert not _scan_threads()


def test_order_is_kept_when_later_parts_finish_first():
    def part(k):
        def make():
            for i in range(5):
                time.sleep(0.002 * ((7 - k) % 4))  # (later parts are quicker)
                yield (k, i)
        return make
    parts = [(f"part {k}", part(k)) for k in range(8)]
    got = list(ordered_readahead(parts, fragment_readahead=4, batch_readahead=2))
    assert got == [(k, i) for k in range(8) for i in range(5)]


def test_read_ahead_is_bounded():
    lock = threading.Lock()
    made = [0]

    def part(k):
        def make():
            for i in range(50):
                with lock:
                    made[0] += 1
                yield (k, i)
        return make
    parts = [(f"part {k}", part(k)) for k in range(6)]
    fragments, batches = 3, 4
    taken = 0
    most_ahead = 0
    for item in ordered_readahead(parts, fragment_readahead=fragments, batch_readahead=batches):
        taken += 1
        time.sleep(0.0005)  # (a slow consumer: the workers run ahead as far as they may)
        with lock:
            most_ahead = max(most_ahead, made[0] - taken)
    assert taken == 300
    # each running part holds at most the list handed over and the one it fills, and the
    # caller up to one list it has taken
    assert most_ahead <= fragments * 2 * batches + batches, most_ahead
    assert not _scan_threads()


def test_an_error_reaches_the_caller_in_order_naming_the_part():
    def good(k):
        return lambda: iter([k, k])

    def bad():
        yield "first"
        raise ArrowInvalid("bad bytes")

    def worse():
        raise ValueError("not arrow at all")
        yield  # noqa

    got = []
    with pytest.raises(ArrowInvalid, match=r"^part 2: bad bytes$"):
        for item in ordered_readahead([("part 0", good(0)), ("part 1", good(1)),
                                       ("part 2", bad), ("part 3", good(3))]):
            got.append(item)
    assert got == [0, 0, 1, 1, "first"]  # (everything before the error, in order)
    with pytest.raises(ValueError, match="not arrow at all") as info:
        list(ordered_readahead([("part 0", good(0)), ("other part", worse)]))
    assert "(while scanning other part)" in info.value.__notes__
    with pytest.raises(ArrowInvalid, match=r"^part 2: bad bytes$"):  # (sequential: the same)
        list(ordered_readahead([("part 0", good(0)), ("part 2", bad)], fragment_readahead=0))
    assert not _scan_threads()


def test_a_damaged_file_is_named_after_the_files_before_it(many, tmp_path):
    files = sorted(glob.glob(f"{many}/*.arrow"))
    victim = files[5]
    data = open(victim, "rb").read()
    with open(victim, "wb") as f:
        f.write(data[:-20])  # (the footer's end is gone: the head still sniffs as a file)
    ds = arrowmm.dataset(many)
    rows_before = sum(arrowmm.open_file(p).num_rows for p in files[:5])
    seen = 0
    with pytest.raises(ArrowInvalid) as info:
        for b in ds.to_batches():
            seen += b.num_rows
    assert victim in str(info.value)
    assert seen == rows_before
    assert not _scan_threads()


def test_closing_the_scan_early_leaves_no_threads(many):
    ds = arrowmm.dataset(many)
    assert not _scan_threads()
    it = ds.to_batches(batch_readahead=1, fragment_readahead=3)
    assert not _scan_threads()  # (nothing starts before the first next())
    first = next(it)
    assert first.column("x").to_pylist()[0] == 0
    assert _scan_threads()  # (the workers are reading ahead)
    it.close()
    assert not _scan_threads()
    for b in ds.to_batches(batch_readahead=1):  # leaving a for loop, then dropping it
        break
    del b
    gc.collect()
    assert not _scan_threads()
    assert ds.head(3).column("x").to_pylist() == [0, 1, 2]
    assert not _scan_threads()


def test_a_threaded_scan_of_files_read_by_ranges(many):
    if fsspec is None:
        pytest.skip("fsspec is not installed: the filesystem scan is not tested")
    mem = fsspec.filesystem("memory")
    try:
        for p in sorted(glob.glob(f"{many}/*.arrow")):
            mem.pipe_file("/ra/" + p.rsplit("/", 1)[1], open(p, "rb").read())
        remote = arrowmm.dataset("memory://ra")
        want = pads.dataset(many, format="ipc").to_table(filter=pc.field("x") >= 50)
        assert pa.table(remote.to_table(filter=[("x", ">=", 50)])).equals(want)
        assert remote.count_rows() == pads.dataset(many, format="ipc").count_rows()
    finally:
        mem.rm("/ra", recursive=True)
    assert not _scan_threads()


def test_one_dataset_scanned_from_many_threads_at_once(many):
    """A Dataset looks immutable, so it is shared: concurrent threaded scans (each with its
    own workers) give pyarrow's answers."""
    ds = arrowmm.dataset(many)
    pa_ds = pads.dataset(many, format="ipc")
    cases = [None, [("x", ">=", 100)], [("x", "<", 30)], [("s", "==", "f3")]]
    exprs = [None, pc.field("x") >= 100, pc.field("x") < 30, pc.field("s") == "f3"]
    want = [pa_ds.to_table(filter=e) for e in exprs]

    def scan(i):
        return pa.table(ds.to_table(filter=cases[i % 4], batch_readahead=2))
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(scan, range(16)))
    for i, table in enumerate(got):
        assert table.equals(want[i % 4]), i
    assert not _scan_threads()


def test_a_c_stream_released_early_leaves_no_threads(many):
    ds = arrowmm.dataset(many)
    reader = pa.RecordBatchReader.from_stream(ds)
    first = reader.read_next_batch()
    assert first.column("x").to_pylist()[0] == 0
    reader.close()  # (releases the C stream: the scan's generator is dropped)
    del reader
    gc.collect()
    assert not _scan_threads()
