"""Thread safety of reads (issue 13): batches, arrays, readers and exports shared between threads.

Each column of the files below has the same type and length as the others, and values no other
column holds (column ``j`` is ``arange(n) * COLS + j``), so a column built from another column's
buffers passes every structural check and is caught only by its values.  The GIL is made to
switch as often as it can (``sys.setswitchinterval(1e-6)``, restored afterwards) so that
interleavings which are rare in real use happen in every run.  Trials start their threads
together at a barrier, on fresh batches, so every first touch races.

Under a CPython with the GIL (the development machine has no free-threaded 3.13t installed),
``test_free_threaded_build`` skips and says so, rather than pretend the module ran without it.
"""
from __future__ import annotations

import io
import sys
import sysconfig
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import arrowmm
from arrowmm import ArrowInvalid

COLS = 8
ROWS = 20_000
CODECS = [None, "lz4", "zstd"]


def _expected(j: int, rows: int = ROWS) -> np.ndarray:
    return np.arange(rows, dtype=np.int64) * COLS + j


def _write(path, codec, batches=1, cols=COLS, rows=ROWS):
    schema = arrowmm.schema([(f"c{j}", arrowmm.int64()) for j in range(cols)])
    with arrowmm.new_file(str(path), schema, compression=codec) as w:
        for b in range(batches):
            w.write({f"c{j}": _expected(j, rows) + b * rows * cols for j in range(cols)})
    return str(path)


@pytest.fixture
def fast_switching():
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


def _race(n_threads, trials, setup, work):
    """``trials`` times: ``state = setup()``, then ``work(state, t)`` in ``n_threads`` threads
    released together; returns the list of (trial, thread, exception) failures."""
    barrier = threading.Barrier(n_threads)
    failures = []

    def run(state, t):
        barrier.wait()
        try:
            work(state, t)
        except BaseException as exc:  # noqa: BLE001 (counted and reported)
            failures.append((trial, t, exc))

    with ThreadPoolExecutor(n_threads) as pool:
        for trial in range(trials):
            state = setup()
            list(pool.map(run, [state] * n_threads, range(n_threads)))
    return failures


def _report(failures):
    return f"{len(failures)} failures, first: {failures[:3]!r}"


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("n_threads", [2, 8])
def test_first_touch_of_different_columns(tmp_path, fast_switching, codec, n_threads):
    """Threads first-touch different columns of one batch: each gets its own values, the
    values stay right afterwards, and every caller of a column gets the same object."""
    path = _write(tmp_path / "t.arrow", codec)
    reader = arrowmm.open_file(path)
    expected = [_expected(j) for j in range(COLS)]
    trials = 150 if n_threads == 2 else 60

    def work(batch, t):
        for j in [(t + s) % COLS for s in range(0, COLS, n_threads)]:
            got = batch.column(j).to_numpy()
            if not np.array_equal(got, expected[j]):
                raise AssertionError(f"column {j}: holds {got[:3]}..., expected {expected[j][:3]}...")

    batches = []

    def setup():
        batches.append(reader.get_batch(0))
        return batches[-1]

    failures = _race(n_threads, trials, setup, work)
    assert not failures, _report(failures)
    for batch in batches:  # what stayed cached on the batch is right too
        for j in range(COLS):
            assert np.array_equal(batch.column(j).to_numpy(), expected[j])
    if codec is not None:  # the file really is compressed (else this repeats the plain case)
        assert reader.stats.buffers_decompressed > 0


@pytest.mark.parametrize("codec", CODECS)
def test_one_column_is_decoded_once(tmp_path, fast_switching, codec):
    """Threads touching the same column at once all get the same Array object."""
    path = _write(tmp_path / "t.arrow", codec)
    reader = arrowmm.open_file(path)
    expected = _expected(3)
    got = {}

    def work(batch, t):
        got[t] = batch.column(3)

    for _ in range(60):
        got.clear()
        failures = _race(4, 1, lambda: reader.get_batch(0), work)
        assert not failures, _report(failures)
        assert len({id(a) for a in got.values()}) == 1
        assert np.array_equal(got[0].to_numpy(), expected)
    assert reader.stats.columns_loaded == 60


@pytest.mark.parametrize("codec", CODECS)
def test_columns_property_races_with_column(tmp_path, fast_switching, codec):
    """``batch.columns`` (which decodes the missing columns together) racing with single-column
    first touches."""
    path = _write(tmp_path / "t.arrow", codec)
    reader = arrowmm.open_file(path)
    expected = [_expected(j) for j in range(COLS)]

    def work(batch, t):
        cols = batch.columns if t == 0 else [batch.column((t * 3) % COLS)]
        if t == 0:
            for j, c in enumerate(cols):
                assert np.array_equal(c.to_numpy(), expected[j]), f"column {j}"
        else:
            j = (t * 3) % COLS
            assert np.array_equal(cols[0].to_numpy(), expected[j]), f"column {j}"

    failures = _race(4, 80, lambda: reader.get_batch(0), work)
    assert not failures, _report(failures)


@pytest.mark.parametrize("codec", CODECS)
def test_export_one_batch_from_four_threads(tmp_path, fast_switching, codec):
    """Four threads export one fresh batch to pyarrow at once (the C walk for plain files,
    decoded columns for compressed ones)."""
    pa = pytest.importorskip("pyarrow", reason="pyarrow is the oracle of the export test")
    path = _write(tmp_path / "t.arrow", codec)
    reader = arrowmm.open_file(path)
    expected = [_expected(j) for j in range(COLS)]

    def work(batch, t):
        if t % 2:
            batch.column(t % COLS)  # half the threads decode a column while others export
        out = pa.record_batch(batch)
        for j in range(COLS):
            got = out.column(j).to_numpy()
            assert np.array_equal(got, expected[j]), f"thread {t}: column {j} holds {got[:3]}"

    failures = _race(4, 60, lambda: reader.get_batch(0), work)
    assert not failures, _report(failures)


@pytest.mark.parametrize("codec", CODECS)
def test_get_batch_from_many_threads(tmp_path, fast_switching, codec):
    """Many threads call ``get_batch`` on one fresh reader (first dictionary read included) and
    read every column of what they get."""
    pa = pytest.importorskip("pyarrow", reason="pyarrow writes the dictionary-encoded file")
    n_batches, rows = 4, 2_000
    path = str(tmp_path / "t.arrow")
    words = np.array([f"w{i}" for i in range(50)], dtype=object)
    tables = []
    for b in range(n_batches):
        cols = {f"c{j}": _expected(j, rows) + b * rows * COLS for j in range(COLS)}
        idx = pa.array(((np.arange(rows) + b) % 50).astype(np.int32))
        cols["d"] = pa.DictionaryArray.from_arrays(idx, pa.array(words))  # one dictionary
        tables.append(pa.record_batch(cols))
    with pa.OSFile(path, "wb") as f:
        opts = pa.ipc.IpcWriteOptions(compression=codec)
        with pa.ipc.new_file(f, tables[0].schema, options=opts) as w:
            for t in tables:
                w.write_batch(t)

    def work(reader, t):
        for i in range(t, t + 2 * n_batches):
            b = i % n_batches
            batch = reader.get_batch(b)
            for j in range(COLS):
                assert np.array_equal(batch.column(j).to_numpy(),
                                      _expected(j, rows) + b * rows * COLS), f"batch {b} column {j}"
            assert batch.column("d").to_pylist() == list(words[(np.arange(rows) + b) % 50])

    failures = _race(6, 40, lambda: arrowmm.open_file(path), work)
    assert not failures, _report(failures)


def test_dictionary_exports_from_threads(tmp_path, fast_switching):
    """Batches with different dictionaries (a stream that replaces its dictionary), exported
    from several threads at once: each export carries its own batch's dictionary."""
    pa = pytest.importorskip("pyarrow", reason="pyarrow writes the file and reads the exports")
    rows = 1_000
    path = str(tmp_path / "d.arrows")
    batches = []
    for b in range(4):
        words = pa.array([f"b{b}-{i}" for i in range(20)])
        idx = pa.array(np.arange(rows, dtype=np.int32) % 20)
        batches.append(pa.record_batch({"d": pa.DictionaryArray.from_arrays(idx, words)}))
    with pa.OSFile(path, "wb") as f:
        with pa.ipc.new_stream(f, batches[0].schema) as w:
            for b in batches:
                w.write_batch(b)
    expected = [b.column(0).to_pylist() for b in batches]

    def setup():
        return list(arrowmm.open_stream(path))

    def work(ours, t):
        for k in range(4):
            b = (t + k) % 4
            got = pa.record_batch(ours[b]).column(0).to_pylist()
            assert got == expected[b], f"batch {b}: {got[:2]}"

    failures = _race(4, 40, setup, work)
    assert not failures, _report(failures)


def _replacing_dictionaries_stream(pa, path, n_batches, rows=200):
    """A stream whose batch ``b`` has its own dictionary (replacements) plus a delta-grown one."""
    expected = []
    grown = [f"g{i}" for i in range(4)]
    with pa.OSFile(path, "wb") as f:
        schema = pa.schema([("d", pa.dictionary(pa.int32(), pa.string())),
                            ("g", pa.dictionary(pa.int32(), pa.string()))])
        opts = pa.ipc.IpcWriteOptions(emit_dictionary_deltas=True)
        with pa.ipc.new_stream(f, schema, options=opts) as w:
            for b in range(n_batches):
                words = pa.array([f"b{b}-{i}" for i in range(10)])
                idx = pa.array((np.arange(rows, dtype=np.int32) + b) % 10)
                grown.append(f"g{b + 4}")
                gidx = pa.array(np.arange(rows, dtype=np.int32) % len(grown))
                batch = pa.record_batch([pa.DictionaryArray.from_arrays(idx, words),
                                         pa.DictionaryArray.from_arrays(gidx, pa.array(grown))],
                                        schema=schema)
                w.write_batch(batch)
                expected.append(batch.to_pydict())
    return expected


def test_indexed_stream_get_batch_from_threads(tmp_path, fast_switching):
    """``IndexedStreamReader.get_batch`` from several threads, in different orders, on a stream
    whose dictionaries are replaced and grown by deltas: each batch gets its own dictionaries."""
    pa = pytest.importorskip("pyarrow", reason="pyarrow writes the stream")
    from arrowmm.ipc.read.indexed import index_stream
    path = str(tmp_path / "d.arrows")
    n = 12
    expected = _replacing_dictionaries_stream(pa, path, n)

    def work(reader, t):
        for k in range(n):
            b = (k * (t + 1) + t) % n if t % 2 else n - 1 - (k + t) % n
            assert reader.get_batch(b).to_pydict() == expected[b], f"batch {b}"

    failures = _race(4, 25, lambda: index_stream(path), work)
    assert not failures, _report(failures)


@pytest.fixture
def switch_at_every_line(fast_switching):
    """Give up the GIL at every line run in ``arrowmm/ipc/`` (a trace function that sleeps 0
    there), in the threads started while the fixture is active: windows of a line or two
    between a check and the store that relies on it, which ``setswitchinterval`` alone
    reaches about once in a thousand runs, are then open in every run."""
    import os
    import time
    here = os.sep + os.path.join("arrowmm", "ipc") + os.sep

    def local(frame, event, arg):
        if event == "line":
            time.sleep(0)
        return local

    def trace(frame, event, arg):
        return local if here in frame.f_code.co_filename else None

    threading.settrace(trace)
    try:
        yield
    finally:
        threading.settrace(None)


def test_dictionary_lookups_race_deltas(switch_at_every_line):
    """A reader's dictionary state applies deltas while other threads look up the dictionaries
    of batches read just before (a stream handing batches to workers, ``IndexedStreamReader``
    between rewinds): every lookup gives the dictionary of its own point of the stream, and the
    state goes on right.  Before the fix a lookup wrote its merged deltas back into the current
    state and could put an older dictionary back in force ("dictionary index 7 out of range for
    a dictionary of 7 values" in later batches); with a switch at every line this test
    failed in each of 3 runs of the old code (deltas lost from the state)."""
    from arrowmm.ipc.core.dictionaries import DictionaryMemo
    schema = arrowmm.schema([arrowmm.field("g", arrowmm.dictionary(arrowmm.int32(), arrowmm.string()))])
    dict_id = schema.field(0).dictionary_id
    n = 300
    wrong = []
    for trial in range(10):
        memo = DictionaryMemo(schema, file_mode=False)
        memo.apply(dict_id, arrowmm.array(["v0"]), False, "first")
        latest = [(1, memo.snapshot())]
        done = threading.Event()

        def apply_deltas():
            try:
                for i in range(1, n):
                    memo.apply(dict_id, arrowmm.array([f"v{i}"]), True, f"delta {i}")
                    latest[0] = (i + 1, memo.snapshot())
            finally:
                done.set()

        def look_up():
            while not done.is_set():
                size, lookup = latest[0]
                got = len(lookup(dict_id))  # (a cheap check keeps the lookups frequent)
                if got != size:
                    wrong.append((trial, size, got))

        threads = [threading.Thread(target=apply_deltas)] + [threading.Thread(target=look_up)
                                                             for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert memo.get(dict_id).to_pylist() == [f"v{i}" for i in range(n)]
        assert latest[0][1](dict_id).to_pylist() == [f"v{i}" for i in range(n)]
    assert not wrong, f"{len(wrong)} wrong lookups, first: {wrong[:3]}"


def test_stream_batches_read_by_workers_while_reading_on(tmp_path, fast_switching):
    """The usual producer/workers shape: one thread reads a stream whose dictionaries are
    replaced and grown by deltas, workers decode each batch it hands over while it reads on."""
    pa = pytest.importorskip("pyarrow", reason="pyarrow writes the stream")
    path = str(tmp_path / "d.arrows")
    n = 40
    expected = _replacing_dictionaries_stream(pa, path, n, rows=50)

    failures = []
    for trial in range(10):
        reader = arrowmm.open_stream(path)
        handed = [None]
        done = threading.Event()

        def produce():
            try:
                for b in range(n):
                    handed[0] = (b, reader.read_next_batch())
            finally:
                done.set()

        def work():
            seen = set()
            while not done.is_set() or len(seen) < n:
                item = handed[0]
                if item is None or item[0] in seen:
                    if done.is_set():
                        break
                    continue
                b, batch = item
                seen.add(b)
                try:
                    assert batch.to_pydict() == expected[b], f"batch {b}"
                except BaseException as exc:  # noqa: BLE001 (counted and reported)
                    failures.append((trial, b, exc))

        threads = [threading.Thread(target=produce)] + [threading.Thread(target=work)
                                                        for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert handed[0][0] == n - 1  # (the producer read every batch)
    assert not failures, _report(failures)


def test_shared_memory_batches(fast_switching):
    """A batch of a shared-memory segment (LZ4), first-touched from several threads."""
    from arrowmm import shm
    if shm.SHM_DIR is None:
        pytest.skip("arrowmm.shm needs /dev/shm (Linux)")
    batch = arrowmm.RecordBatch.from_arrays([arrowmm.array(_expected(j)) for j in range(COLS)],
                                            [f"c{j}" for j in range(COLS)])
    with shm.share(batch, compression="lz4") as shared:
        reader = shared.open()

        def work(b, t):
            for j in range(t, COLS, 4):
                assert np.array_equal(b.column(j).to_numpy(), _expected(j)), f"column {j}"

        failures = _race(4, 60, lambda: reader.get_batch(0), work)
        reader.close()
    assert not failures, _report(failures)


class _Blocking(io.RawIOBase):
    """A stream file object whose reads wait, once armed, until released."""

    def __init__(self, data: bytes):
        self.data = io.BytesIO(data)
        self.armed = False
        self.inside = threading.Event()
        self.release = threading.Event()

    def readable(self):
        return True

    def read(self, n=-1):
        if self.armed:
            self.inside.set()
            self.release.wait(10)
        return self.data.read(n)


def test_stream_reader_has_one_consumer():
    """A second ``read_next_batch`` while one is running raises instead of interleaving; the
    first one then completes, and the stream goes on reading right."""
    sink = io.BytesIO()
    schema = arrowmm.schema([(f"c{j}", arrowmm.int64()) for j in range(COLS)])
    with arrowmm.new_stream(sink, schema) as w:
        for b in range(3):
            w.write({f"c{j}": _expected(j, 100) + b for j in range(COLS)})
    data = sink.getvalue()
    src = _Blocking(data)
    reader = arrowmm.open_stream(src)
    src.armed = True
    results = {}

    def first():
        results["first"] = reader.read_next_batch()

    t = threading.Thread(target=first)
    t.start()
    assert src.inside.wait(10)
    with pytest.raises(ArrowInvalid, match="one consumer at a time"):
        reader.read_next_batch()
    with pytest.raises(ArrowInvalid, match="one consumer at a time"):
        next(iter(reader))
    src.release.set()
    t.join(10)
    assert np.array_equal(results["first"].column(1).to_numpy(), _expected(1, 100))
    rest = list(reader)
    assert [b.column(2).to_numpy()[0] for b in rest] == [2 + 1, 2 + 2]


def test_stream_reader_from_threads_in_turn(tmp_path, fast_switching):
    """Threads sharing a StreamReader: each call either gets the next batch or says there is
    already a consumer; batches come out once each, in order, with their values."""
    path = str(tmp_path / "s.arrows")
    schema = arrowmm.schema([(f"c{j}", arrowmm.int64()) for j in range(COLS)])
    n = 200
    with arrowmm.new_stream(path, schema) as w:
        for b in range(n):
            w.write({f"c{j}": _expected(j, 10) + b * 1000 for j in range(COLS)})
    reader = arrowmm.open_stream(path)
    got, errors, lock = [], [], threading.Lock()

    def consume():
        while True:
            try:
                batch = reader.read_next_batch()
            except StopIteration:
                return
            except ArrowInvalid as exc:
                if "one consumer at a time" not in str(exc):
                    errors.append(exc)
                    return
                continue
            with lock:
                got.append(int(batch.column(0).to_numpy()[0]) // 1000)

    threads = [threading.Thread(target=consume) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert sorted(got) == list(range(n))


def test_free_threaded_build():
    """The stress tests above ran with the GIL; say so when no free-threaded build is in use."""
    if not sysconfig.get_config_var("Py_GIL_DISABLED"):
        pytest.skip(f"CPython {sys.version.split()[0]} has the GIL: the stress tests above ran "
                    f"with it, switching every microsecond; run this module under a "
                    f"free-threaded build (3.13t or later) to test without it")
    assert not sys._is_gil_enabled()
