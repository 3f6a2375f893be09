"""Filtered scans of compressed files: only the filter's columns, then the output columns of
batches with survivors, are decompressed; the rows are pyarrow.dataset's; a damaged buffer is
an ``ArrowInvalid`` naming its batch and column, and no scan thread outlives a failed scan."""
from __future__ import annotations

import re
import threading

import numpy as np
import pytest

import arrowmm
from arrowmm.dataset.readahead import THREAD_PREFIX
from arrowmm.ipc.core import compression

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")
pads = pytest.importorskip("pyarrow.dataset")

F, P = arrowmm.field, pc.field
ROWS = 1000  # per batch: x and y decompress to 8000 bytes each, s to 4004 + 7000
BATCHES = 12
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def _write(path, batches, schema, codec):
    with pa.ipc.new_file(str(path), schema,
                         options=pa.ipc.IpcWriteOptions(compression=codec)) as w:
        for b in batches:
            w.write_batch(b)


@pytest.fixture(scope="module")
def xys(tmp_path_factory):
    """A ZSTD file of BATCHES batches: ``x``, ``y`` float64 in [0, 1), ``s`` 7-byte strings."""
    rng = np.random.default_rng(7)
    schema = pa.schema([("x", pa.float64()), ("y", pa.float64()), ("s", pa.string())])
    batches = [pa.record_batch([pa.array(rng.random(ROWS)), pa.array(rng.random(ROWS)),
                                pa.array([f"k{v:06d}" for v in rng.integers(0, 10**6, ROWS)])],
                               schema=schema) for _ in range(BATCHES)]
    path = tmp_path_factory.mktemp("compressed") / "xys.arrow"
    _write(path, batches, schema, "zstd")
    return path


@pytest.fixture
def decoded_sizes(monkeypatch):
    """The uncompressed sizes of the buffers the codec decodes (the real codec, counted)."""
    sizes = []
    lock = threading.Lock()
    spec = compression.CODEC["zstd"]

    def counted(payload, declared, what):
        with lock:
            sizes.append(declared)
        return spec.decompress(payload, declared, what)
    monkeypatch.setitem(compression.CODEC, "zstd", spec._replace(decompress=counted))
    return sizes


@pytest.mark.parametrize("use_threads", [True, False])
def test_a_filter_decompresses_only_its_columns_and_the_outputs(xys, decoded_sizes,
                                                                 use_threads):
    # (before: the reader's read-ahead saw x then y asked for and decoded the rest of each
    # batch, s, which the scan never takes: half again the work of a ZSTD x, y filter)
    got = arrowmm.dataset(str(xys)).to_table(filter=F("x") > 0.5, columns=["x", "y"],
                                             use_threads=use_threads)
    want = pads.dataset(str(xys), format="ipc").to_table(filter=P("x") > 0.5,
                                                         columns=["x", "y"])
    assert pa.table(got).equals(want)
    assert sorted(decoded_sizes) == [8 * ROWS] * (2 * BATCHES)


def test_batches_without_survivors_decompress_the_filter_column_only(xys, decoded_sizes):
    x = pa.ipc.open_file(str(xys)).read_all().column("x").to_numpy()
    first = float(x[:ROWS].max())  # (only batch 0 holds a row above the others' maxima?)
    cut = max(float(x[ROWS:].max()), first - 1e-12)
    got = arrowmm.dataset(str(xys)).to_table(filter=F("x") > cut, columns=["x", "y"])
    want = pads.dataset(str(xys), format="ipc").to_table(filter=P("x") > cut,
                                                         columns=["x", "y"])
    assert pa.table(got).equals(want)
    batches_with_rows = sum(1 for b in range(BATCHES) if (x[b * ROWS:(b + 1) * ROWS] > cut).any())
    assert sorted(decoded_sizes) == [8 * ROWS] * (BATCHES + batches_with_rows)


def test_a_string_filter_decompresses_s_and_x_only(xys, decoded_sizes):
    got = arrowmm.dataset(str(xys)).to_table(filter=F("s") < "k100000", columns=["s", "x"])
    want = pads.dataset(str(xys), format="ipc").to_table(filter=P("s") < "k100000",
                                                         columns=["s", "x"])
    assert pa.table(got).equals(want)
    assert 8 * ROWS * 2 not in decoded_sizes
    assert decoded_sizes.count(8 * ROWS) == BATCHES  # (x, every batch has survivors)
    assert decoded_sizes.count(4 * (ROWS + 1)) == BATCHES  # (s's offsets)


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """ZSTD and LZ4 files of batches with nulls, empty batches, a dictionary column and a
    string column; and the table they hold."""
    rng = np.random.default_rng(11)
    schema = pa.schema([("x", pa.float64()), ("i", pa.int32()), ("s", pa.string()),
                        ("d", pa.dictionary(pa.int8(), pa.string())), ("b", pa.bool_())])
    batches = []
    for n in (300, 0, 500, 0, 1, 400):
        batches.append(pa.record_batch([
            pa.array(rng.random(n), mask=rng.random(n) < 0.1),
            pa.array(rng.integers(-9, 9, n), pa.int32(), mask=rng.random(n) < 0.1),
            pa.array([f"v{v}" for v in rng.integers(0, 50, n)], mask=rng.random(n) < 0.1),
            pa.DictionaryArray.from_arrays(
                pa.array(rng.integers(0, 3, n), pa.int8(), mask=rng.random(n) < 0.1),
                pa.array(["red", "green", "blue"])),
            pa.array(rng.random(n) < 0.5, mask=rng.random(n) < 0.1)], schema=schema))
    root = tmp_path_factory.mktemp("mixed")
    paths = {}
    for codec in ("zstd", "lz4"):
        paths[codec] = root / f"{codec}.arrow"
        _write(paths[codec], batches, schema, codec)
    return paths


CASES = [
    (F("x") > 0.5, P("x") > 0.5, ["x", "s", "d"]),  # (about half, nulls dropped)
    (F("x") > 2.0, P("x") > 2.0, ["x", "i"]),  # (no survivor anywhere)
    (F("x").is_null() | (F("x") >= 0.0), P("x").is_null() | (P("x") >= 0.0), None),  # (all)
    (F("s") < "v3", P("s") < "v3", ["d", "x", "b"]),
    (F("d") == "green", P("d") == "green", ["d", "s", "i"]),
    ((F("i") > 0) & (F("s") >= "v2"), (P("i") > 0) & (P("s") >= "v2"), ["b", "s"]),
    (F("b"), P("b"), ["i", "x"]),
]


@pytest.mark.parametrize("codec", ["zstd", "lz4"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_compressed_filters_match_pyarrow_dataset(mixed, codec, case):
    mine, theirs, columns = CASES[case]
    path = str(mixed[codec])
    got = arrowmm.dataset(path).to_table(filter=mine, columns=columns)
    want = pads.dataset(path, format="ipc").to_table(filter=theirs, columns=columns)
    assert pa.table(got).to_pydict() == want.to_pydict()
    assert pa.table(got).schema == want.schema


def _damaged_copy(xys, tmp_path, batch: int, buffer: int):
    """``xys`` with the zstd frame of buffer ``buffer`` (x, y, s offsets, s data: 0-3; empty
    validity buffers have no frame) of batch ``batch`` made unreadable (its magic zeroed)."""
    data = bytearray(xys.read_bytes())
    frames = [m.start() for m in re.finditer(re.escape(ZSTD_MAGIC), bytes(data))]
    assert len(frames) == 4 * BATCHES  # (no stray magic in the seeded data)
    at = frames[4 * batch + buffer]
    data[at:at + 4] = b"\0\0\0\0"
    out = tmp_path / "damaged.arrow"
    out.write_bytes(bytes(data))
    return out


def _scan_threads():
    return [t for t in threading.enumerate() if t.name.startswith(THREAD_PREFIX)]


@pytest.mark.parametrize("use_threads", [True, False])
def test_a_damaged_output_column_names_its_batch_and_column(xys, tmp_path, use_threads):
    bad = _damaged_copy(xys, tmp_path, batch=5, buffer=1)
    with pytest.raises(arrowmm.ArrowInvalid, match=r"record batch 5 .*column 1 \('y'\)"):
        arrowmm.dataset(str(bad)).to_table(filter=F("x") > 0.5, columns=["x", "y"],
                                           use_threads=use_threads)
    assert not _scan_threads()  # (the other parts' workers stopped and were joined)
    # a scan that never takes y reads the same file (the filter column alone is judged)
    got = arrowmm.dataset(str(bad)).to_table(filter=F("x") > 0.5, columns=["x"])
    want = pads.dataset(str(xys), format="ipc").to_table(filter=P("x") > 0.5, columns=["x"])
    assert pa.table(got).equals(want)


def test_a_damaged_filter_column_names_its_batch_and_column(xys, tmp_path):
    bad = _damaged_copy(xys, tmp_path, batch=9, buffer=3)
    with pytest.raises(arrowmm.ArrowInvalid, match=r"record batch 9 .*column 2 \('s'\)"):
        arrowmm.dataset(str(bad)).to_table(filter=F("s") < "k5", columns=["x"])
    assert not _scan_threads()


def test_closing_a_compressed_scan_early_leaves_no_thread(xys):
    batches = arrowmm.dataset(str(xys)).to_batches(filter=F("x") > 0.1, columns=["x", "y"],
                                                    batch_readahead=1)
    first = next(batches)
    assert first.num_rows > 0
    batches.close()
    assert not _scan_threads()
