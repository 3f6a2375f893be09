"""One column of many uncompressed IPC batches gathered in C (``arrays.gather``,
``_core._gather``): ``to_pandas`` over many small batches gives pyarrow's frame for every
type (gathered or not), the gathered Array equals the concatenation of the per-batch columns,
and anything the gather cannot vouch for (sliced, compressed, built batches, few batches,
corrupt offsets) goes through the per-batch path, which names the error."""
from __future__ import annotations

import numpy as np
import pytest

import pyarrow as pa
import pandas as pd
import arrowmm
from arrowmm.arrays.gather import MIN_BATCHES, gathered_column

from tests.interop.test_cdata import NAMES, _table
from tests.arrays.test_pandas import _check

SKIP = ("time64ns", "sparse_union", "dense_union")  # (as test_pandas: not converted alike)
CONVERTIBLE = [n for n in NAMES if n not in SKIP]


def _small_batches(table: pa.Table, rows: int = 1) -> list:
    table = table.combine_chunks()
    return [b for b in table.to_batches(max_chunksize=rows)]


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    """Every type of the C data tests, in batches of one row (plus a copy with 3-row batches
    concatenated, so the bit offsets of validity and booleans fall mid-byte)."""
    table = _table().select(CONVERTIBLE)
    table = pa.concat_tables([table] * 6)
    path = tmp_path_factory.mktemp("gather") / "many.arrow"
    with pa.ipc.new_file(path, table.schema) as w:
        for b in _small_batches(table, 1) + _small_batches(table, 3):
            w.write_batch(b)
    return path


@pytest.fixture(scope="module")
def frames(many):
    want = pa.ipc.open_file(many).read_all().to_pandas()
    with arrowmm.open_file(many) as reader:
        assert reader.num_record_batches >= MIN_BATCHES
        got = reader.to_pandas()
    return got, want


@pytest.mark.parametrize("name", CONVERTIBLE)
def test_to_pandas_of_many_small_batches_matches_pyarrow(frames, name):
    got, want = frames
    _check(got[[name]], want[[name]])


def test_whole_frame_of_many_small_batches_through_read_all(many, frames):
    with arrowmm.open_file(many) as reader:
        whole = reader.read_all()
    pd.testing.assert_frame_equal(whole.to_pandas(), frames[1])


@pytest.mark.parametrize("name", ["int8", "int64", "float64", "float16", "bool", "decimal256",
                                  "string", "large_string", "binary", "timestamp_ms_tz",
                                  "month_day_nano", "fixed_size_binary", "list", "large_list"])
def test_gathered_column_equals_the_concatenated_batches(many, name):
    with arrowmm.open_file(many) as reader:
        k = reader.schema.names.index(name)
        batches = list(reader)
        got = gathered_column(batches, k)
        assert got is not None, f"{name}: a plain column of uncompressed batches is gathered"
        want = pa.chunked_array([pa.array(b.column(k)) for b in batches]).combine_chunks()
    assert got.null_count == want.null_count
    assert pa.array(got).equals(want)


def test_what_the_gather_leaves_to_the_per_batch_path(many, tmp_path):
    with arrowmm.open_file(many) as reader:
        k = reader.schema.names.index("int64") if "int64" in reader.schema.names else 0
        batches = list(reader)
    assert gathered_column(batches[:MIN_BATCHES - 1], k) is None  # (few batches)
    assert gathered_column([b.slice(0, b.num_rows) for b in batches[:1]] * MIN_BATCHES, k) \
        is not None  # (a whole slice is still the batch)
    sliced = [b.slice(1) if b.num_rows > 1 else b.slice(0, 0) for b in batches]
    assert gathered_column(sliced, k) is None
    built = [arrowmm.record_batch({"x": np.arange(3)}) for _ in range(MIN_BATCHES)]
    assert gathered_column(built, 0) is None
    t = pa.table({"x": np.arange(4 * MIN_BATCHES), "s": [str(i) for i in range(4 * MIN_BATCHES)]})
    path = tmp_path / "zstd.arrow"
    with pa.ipc.new_file(path, t.schema, options=pa.ipc.IpcWriteOptions(compression="zstd")) as w:
        for b in t.to_batches(max_chunksize=4):
            w.write_batch(b)
    with arrowmm.open_file(path) as reader:
        zb = list(reader)
        assert gathered_column(zb, 0) is None and gathered_column(zb, 1) is None
        pd.testing.assert_frame_equal(reader.to_pandas(), t.to_pandas())


def _string_offsets_at(path, batch: int):
    """File position of batch ``batch``'s string offsets (column 0), as the message says."""
    with arrowmm.open_file(path) as reader:
        nodes, buffers, body, length, node_starts, buffer_starts = \
            reader.get_batch(batch).gather_base()
        offset, size = buffers.get(buffer_starts[0] + 1)
        return body.offset + offset, size


@pytest.mark.parametrize("bad", ["decreasing", "past_data"])
def test_corrupt_offsets_in_one_batch_raise_as_before(tmp_path, bad):
    words = [f"w{i}" for i in range(8 * MIN_BATCHES)]
    t = pa.table({"s": words})
    path = tmp_path / "s.arrow"
    with pa.ipc.new_file(path, t.schema) as w:
        for b in t.to_batches(max_chunksize=8):
            w.write_batch(b)
    at, size = _string_offsets_at(path, 5)
    raw = bytearray(path.read_bytes())
    offsets = np.frombuffer(raw, np.int32, 9, at).copy()
    if bad == "decreasing":
        offsets[3], offsets[4] = offsets[4], offsets[3]
    else:
        offsets[8] = 1 << 20
    raw[at:at + 36] = offsets.tobytes()
    path.write_bytes(bytes(raw))
    with arrowmm.open_file(path) as reader:
        with pytest.raises(arrowmm.ArrowInvalid, match="offset"):
            reader.to_pandas()


def test_many_batches_with_nulls_at_every_bit_position(tmp_path):
    rng = np.random.default_rng(7)
    n = 5 * 97
    t = pa.table({"i": pa.array(rng.integers(0, 100, n), mask=rng.random(n) < 0.3),
                  "b": pa.array(rng.random(n) < 0.5, mask=rng.random(n) < 0.2),
                  "s": pa.array([f"v{x}" for x in rng.integers(0, 50, n)], mask=rng.random(n) < 0.1),
                  "f": rng.random(n),
                  "ls": pa.array([None if x % 11 == 0 else [f"x{y}" for y in range(x % 4)]
                                  for x in range(n)], pa.list_(pa.string())),
                  "lb": pa.array([None if x % 7 == 0 else [bool(y % 3) if y % 5 else None
                                                           for y in range(x % 6)]
                                  for x in range(n)], pa.large_list(pa.bool_())),
                  "ll": pa.array([[[x % 100]] for x in range(n)], pa.list_(pa.list_(pa.int8())))})
    path = tmp_path / "bits.arrow"
    sizes = [1, 2, 3, 5, 7, 8, 9, 13]
    with pa.ipc.new_file(path, t.schema) as w:
        at, j = 0, 0
        while at < n:
            m = min(sizes[j % len(sizes)], n - at)
            w.write_batch(t.slice(at, m).to_batches()[0])
            at, j = at + m, j + 1
    with arrowmm.open_file(path) as reader:
        got = reader.to_pandas()
    pd.testing.assert_frame_equal(got, t.to_pandas())


def test_lists_of_plain_values_are_gathered_and_lists_of_lists_are_not(tmp_path):
    n = 4 * MIN_BATCHES
    t = pa.table({"ls": pa.array([[f"x{y}" for y in range(x % 4)] if x % 5 else None
                                  for x in range(n)], pa.list_(pa.string())),
                  "ll": pa.array([[[x % 100]] for x in range(n)], pa.list_(pa.list_(pa.int8())))})
    path = tmp_path / "lists.arrow"
    with pa.ipc.new_file(path, t.schema) as w:
        for b in t.to_batches(max_chunksize=3):
            w.write_batch(b)
    with arrowmm.open_file(path) as reader:
        batches = list(reader)
        got = gathered_column(batches, 0)
        assert gathered_column(batches, 1) is None
    assert got is not None
    assert pa.array(got).equals(t.column("ls").combine_chunks())


def test_a_file_readers_to_pandas_reads_plain_messages_in_c(many, monkeypatch):
    # The messages are read by _batch_walk.file_batch_parts, not batch by batch: get_batch is
    # called only for the columns the gather leaves to the per-batch path.
    gatherable = [n for n in CONVERTIBLE if n in ("int64", "float64", "bool", "string", "list")]
    want = pa.ipc.open_file(many).read_all().select(gatherable).to_pandas()
    calls = []
    with arrowmm.open_file(many) as reader:
        get_batch = reader.get_batch
        monkeypatch.setattr(reader, "get_batch", lambda i: calls.append(i) or get_batch(i),
                            raising=False)
        got = reader.to_pandas()
        assert calls, "the dictionary and struct columns still read their batches"
        calls.clear()
        projected = arrowmm.RecordBatchReader.from_batches(reader.schema, list(reader))
    pd.testing.assert_frame_equal(got[gatherable], want)
    pd.testing.assert_frame_equal(projected.to_pandas(), got)


def test_a_file_of_small_plain_columns_reads_no_batch_object(tmp_path, monkeypatch):
    t = pa.table({"i": pa.array(range(10 * MIN_BATCHES), pa.int64()),
                  "s": [f"s{i}" for i in range(10 * MIN_BATCHES)]})
    path = tmp_path / "plain.arrow"
    with pa.ipc.new_file(path, t.schema) as w:
        for b in t.to_batches(max_chunksize=10):
            w.write_batch(b)
    with arrowmm.open_file(path) as reader:
        monkeypatch.setattr(reader, "get_batch", None, raising=False)  # (never called)
        got = reader.to_pandas()
    pd.testing.assert_frame_equal(got, t.to_pandas())


def test_a_message_that_is_not_plain_sends_the_file_through_its_batches(tmp_path):
    t = pa.table({"i": pa.array(range(4 * MIN_BATCHES), pa.int64())})
    path = tmp_path / "meta.arrow"
    with pa.ipc.new_file(path, t.schema) as w:
        for j, b in enumerate(t.to_batches(max_chunksize=4)):
            w.write_batch(b, custom_metadata={"j": str(j)} if j == 3 else None)
    with arrowmm.open_file(path) as reader:
        got = reader.to_pandas()
    pd.testing.assert_frame_equal(got, t.to_pandas())


def test_a_node_longer_than_its_batch_raises_through_the_per_batch_path(tmp_path):
    t = pa.table({"i": pa.array(range(4 * MIN_BATCHES), pa.int64())})
    path = tmp_path / "node.arrow"
    with pa.ipc.new_file(path, t.schema) as w:
        for b in t.to_batches(max_chunksize=4):
            w.write_batch(b)
    raw = bytearray(path.read_bytes())
    words = np.frombuffer(raw, np.int64, len(raw) // 8)
    nodes = np.flatnonzero((words[:-1] == 4) & (words[1:] == 0))  # (FieldNode{4, 0}: one a batch)
    assert len(nodes) == 4 * MIN_BATCHES // 4
    at = 8 * int(nodes[7])
    raw[at:at + 8] = np.int64(5).tobytes()  # (batch 7's column claims 5 rows of its 4)
    path.write_bytes(bytes(raw))
    with arrowmm.open_file(path) as reader:
        with pytest.raises(arrowmm.ArrowInvalid, match="record batch 7"):
            reader.to_pandas()


def test_threads_converting_one_reader_at_once_get_the_same_frame(many):
    import threading
    want = pa.ipc.open_file(many).read_all().to_pandas()
    got, errors = [], []
    with arrowmm.open_file(many) as reader:
        table = reader.read_all()

        def convert(i):
            try:
                got.append(reader.to_pandas() if i % 2 else table.to_pandas())
            except Exception as exc:  # noqa: BLE001 (reported below)
                errors.append(exc)
        threads = [threading.Thread(target=convert, args=(i,)) for i in range(6)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    assert not errors
    assert len(got) == 6
    for frame in got:
        pd.testing.assert_frame_equal(frame, want)
